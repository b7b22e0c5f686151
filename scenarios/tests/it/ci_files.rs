//! The CI and Kubernetes files that cannot run here are linted here: they
//! parse as YAML, have the structure GitHub Actions and Kubernetes need
//! (README.md, "The gate in your CI"), and every `neli-lab` flag they use
//! exists.

use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

use crate::{lab, stdout};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf()
}

fn load(rel: &str) -> (String, Vec<Yaml>) {
    let text = std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{rel}: not YAML: {e}"));
    assert!(!docs.is_empty(), "{rel}: empty");
    (text, docs)
}

fn steps<'a>(job: &'a Yaml, rel: &str) -> &'a Vec<Yaml> {
    job["steps"].as_vec().unwrap_or_else(|| panic!("{rel}: job without steps"))
}

fn uses(steps: &[Yaml], action: &str) -> bool {
    steps.iter().any(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(action)))
}

fn runs(steps: &[Yaml]) -> String {
    steps.iter().filter_map(|s| s["run"].as_str()).collect::<Vec<_>>().join("\n")
}

/// Every `--flag` on a `neli-lab SUBCOMMAND` command line (with `\`
/// continuations; comments aside) of `text` is one that subcommand's `--help` lists.
fn assert_flags_exist(rel: &str, text: &str) {
    let joined = text.replace("\\\n", " ");
    let mut seen = 0;
    for line in joined.lines().filter(|l| !l.trim_start().starts_with('#')) {
        for sub in ["explore", "merge"] {
            let Some(at) = line.find(&format!("neli-lab {sub} ")) else { continue };
            let help = stdout(&lab(&[sub, "--help"]));
            for flag in line[at..].split_whitespace().filter(|w| w.starts_with("--")) {
                seen += 1;
                let flag = flag.split('=').next().unwrap_or(flag);
                let listed = help.lines().any(|l| l.trim_start().split([' ', ',']).next() == Some(flag));
                assert!(listed, "{rel}: `neli-lab {sub} {flag}` does not exist:\n{help}");
            }
        }
    }
    assert!(seen > 0, "{rel}: no neli-lab command line found");
}

// The CI workflow checks out, caches cargo and runs `.ci/run`.
#[test]
fn ci_workflow_runs_ci_run_with_caching() {
    let rel = ".github/workflows/ci.yml";
    let (_, docs) = load(rel);
    let w = &docs[0];
    assert!(!w["on"].is_badvalue(), "{rel}: no triggers");
    let jobs = w["jobs"].as_hash().expect("jobs");
    assert_eq!(jobs.len(), 1, "{rel}");
    let job = jobs.values().next().unwrap();
    assert!(job["runs-on"].as_str().is_some(), "{rel}: runs-on");
    let s = steps(job, rel);
    assert!(uses(s, "actions/checkout@") && uses(s, "Swatinem/rust-cache@"), "{rel}: checkout and cache");
    assert!(runs(s).lines().any(|l| l.trim() == "bash .ci/run"), "{rel}: must run bash .ci/run");
}

// The nightly workflow: a matrix of shards whose explore names the matrix
// size in `--shard i/n`, writes JSON and artifacts and uploads them; a merge
// job that needs it, downloads them, writes JUnit and exits with the verdict.
#[test]
fn nightly_workflow_shards_uploads_and_merges() {
    let rel = ".github/workflows/nightly-explore.yml";
    let (text, docs) = load(rel);
    let w = &docs[0];
    assert!(w["on"]["schedule"].as_vec().is_some_and(|v| v[0]["cron"].as_str().is_some()), "{rel}: schedule");
    let explore = &w["jobs"]["explore"];
    let shards: Vec<i64> = explore["strategy"]["matrix"]["shard"]
        .as_vec()
        .unwrap_or_else(|| panic!("{rel}: matrix.shard"))
        .iter()
        .map(|v| v.as_i64().expect("shard numbers"))
        .collect();
    assert_eq!(shards, (1..=shards.len() as i64).collect::<Vec<_>>(), "{rel}: shards 1..=n");
    assert_eq!(
        explore["strategy"]["fail-fast"].as_bool(),
        Some(false),
        "{rel}: one failing shard must not cancel the rest"
    );
    let s = steps(explore, rel);
    let run = runs(s);
    assert!(run.contains(&format!("--shard \"${{{{ matrix.shard }}}}/{}\"", shards.len())), "{rel}: {run}");
    for flag in ["explore --all", "--format json", "--artifacts", "--start auto", "--regressions neli-regressions"] {
        assert!(run.contains(flag), "{rel}: explore without {flag}");
    }
    assert!(uses(s, "actions/upload-artifact@") && uses(s, "Swatinem/rust-cache@"), "{rel}: upload and cache");
    let merge = &w["jobs"]["merge"];
    assert_eq!(merge["needs"].as_str(), Some("explore"), "{rel}: merge needs explore");
    let s = steps(merge, rel);
    assert!(uses(s, "actions/download-artifact@") && uses(s, "actions/upload-artifact@"), "{rel}");
    let run = runs(s);
    assert!(run.contains("neli-lab merge shards/shard-*.json --format junit"), "{rel}: JUnit");
    assert!(run.lines().any(|l| l.trim().ends_with("neli-lab merge shards/shard-*.json")), "{rel}: verdict");
    assert_flags_exist(rel, &text);
}

// The Kubernetes Indexed Job: one shard per completion index over as many
// completions as shards, results on a shared volume; the merge Job mounts
// the same claim and merges.
#[test]
fn kubernetes_indexed_job_and_merge_job() {
    let rel = "docs/kubernetes/explore-job.yaml";
    let (text, docs) = load(rel);
    let pvc = docs.iter().find(|d| d["kind"].as_str() == Some("PersistentVolumeClaim")).expect("a claim");
    let claim = pvc["metadata"]["name"].as_str().expect("claim name");
    assert_eq!(pvc["spec"]["accessModes"][0].as_str(), Some("ReadWriteMany"), "{rel}: shards share the volume");
    let job = docs.iter().find(|d| d["kind"].as_str() == Some("Job")).expect("a Job");
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"), "{rel}");
    let n = spec["completions"].as_i64().expect("completions");
    assert_eq!(spec["parallelism"].as_i64(), Some(n), "{rel}");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    let c = &pod["containers"][0];
    let script = c["args"][0].as_str().expect("the shard script");
    assert!(script.contains("i=$((JOB_COMPLETION_INDEX + 1))"), "{rel}: {script}");
    assert!(script.contains(&format!("--shard \"$i/{n}\"")) && script.contains("--format json"), "{rel}: {script}");
    assert!(script.contains("> \"/results/shard-$i.json\""), "{rel}: {script}");
    assert!(script.contains("--start auto") && script.contains("--regressions /tmp/kept"), "{rel}");
    let mount = c["volumeMounts"][0]["name"].as_str().expect("a mount");
    let vol = &pod["volumes"][0];
    assert_eq!(vol["name"].as_str(), Some(mount));
    assert_eq!(vol["persistentVolumeClaim"]["claimName"].as_str(), Some(claim));
    assert_flags_exist(rel, &text);

    let rel = "docs/kubernetes/explore-merge-job.yaml";
    let (text, docs) = load(rel);
    let m = &docs[0];
    assert_eq!((m["kind"].as_str(), m["apiVersion"].as_str()), (Some("Job"), Some("batch/v1")));
    let pod = &m["spec"]["template"]["spec"];
    assert_eq!(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as_str(), Some(claim), "{rel}");
    assert!(
        pod["containers"][0]["args"][0].as_str().is_some_and(|a| a.contains("neli-lab merge /results/shard-*.json"))
    );
    assert_flags_exist(rel, &text);
}
