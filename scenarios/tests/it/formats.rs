//! `--format text|json|junit` and the exit codes CI reads (0 pass, 1
//! violation, 2 bad input; scenarios/README.md, "Output formats and exit
//! codes").

use crate::ONE_LEADER;
use std::path::Path;
use std::process::Command;

use crate::{fixture, lab, scratch, stderr, stdout};

/// Validates `xml` against the repo's JUnit schema with xmllint. Without
/// xmllint the test fails under `CI=true` (.ci/run installs it) and is
/// otherwise reported and skipped.
pub fn assert_valid_junit(xml: &str, test: &str) {
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/junit.xsd");
    let file = scratch(test).join("report.xml");
    std::fs::write(&file, xml).expect("write report");
    match Command::new("xmllint").arg("--noout").arg("--schema").arg(&xsd).arg(&file).output() {
        Ok(o) => assert!(
            o.status.success(),
            "JUnit output does not validate against {}:\n{}\n{xml}",
            xsd.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "xmllint not found ({e}); CI must validate JUnit output (apt-get install libxml2-utils)"
            );
            eprintln!("skipping JUnit schema validation: xmllint not found ({e}); apt-get install libxml2-utils");
        }
    }
}

// A passing explore in JSON carries the build, the range, the shard, the
// table row and every seed's figures; the text output is unchanged by the
// option's existence (it is the default).
#[test]
fn explore_json_carries_build_range_table_and_seeds() {
    let f = fixture("tiny-pause");
    let o = lab(&["explore", &f, "--seeds", "3", "--start", "4", "--format", "json", "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    assert_eq!(v["schema"], "neli-lab/explore/2");
    assert!(v["build"].as_str().unwrap().starts_with("neli-lab 0.0.0 commit "), "{v}");
    assert_eq!((v["start"].as_u64(), v["seeds"].as_u64()), (Some(4), Some(3)));
    assert_eq!((v["shard"]["index"].as_u64(), v["shard"]["of"].as_u64()), (Some(1), Some(1)));
    let s = &v["scenarios"][0];
    assert_eq!(s["name"], "tiny-pause");
    assert_eq!(s["summary"]["seeds"], 3);
    assert_eq!(s["summary"]["violations"], 0);
    let seeds: Vec<u64> = s["results"].as_array().unwrap().iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, vec![4, 5, 6]);
    assert!(s["failing"].as_array().unwrap().is_empty());
    // The documented schema (scenarios/README.md): these keys, no others.
    let keys = |v: &serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let sorted = |mut k: Vec<&str>| -> Vec<String> {
        k.sort_unstable();
        k.into_iter().map(String::from).collect()
    };
    assert_eq!(
        keys(&v),
        sorted(vec![
            "schema",
            "build",
            "start",
            "seeds",
            "shard",
            "jobs",
            "wall_s",
            "time_budget",
            "merged_shards",
            "scenarios"
        ])
    );
    assert_eq!(keys(s), sorted(vec!["name", "arg", "wall_s", "summary", "failing", "results"]));
    assert_eq!(keys(&s["summary"]), sorted(vec!["seeds", "violations", "overlap", "gap", "failover"]));
    assert_eq!(
        keys(&s["results"][0]),
        sorted(vec![
            "seed",
            "violations",
            "overlap_total_ms",
            "gap_max_ms",
            "failover_max_ms",
            "leader_at_end",
            "simulated_ms",
            "interruptions",
            "leader_changes"
        ])
    );
    let text = stdout(&lab(&["explore", &f, "--seeds", "3", "--start", "4", "--jobs", "1"]));
    let explicit = stdout(&lab(&["explore", &f, "--seeds", "3", "--start", "4", "--jobs", "1", "--format", "text"]));
    let strip = |s: &str| s.lines().filter(|l| !l.starts_with("explored ")).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&text), strip(&explicit));
    assert!(text.starts_with("build     neli-lab ") && text.contains("verdict   PASS"), "{text}");
}

// A failing explore in JSON lists each failing seed with its violations and
// reproduction command, and exits 1 like the text form.
#[test]
fn explore_json_lists_failing_seeds_with_reproduction() {
    let o = lab(&["explore", &fixture("random-broken"), "--seeds", "3", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let failing = v["scenarios"][0]["failing"].as_array().expect("failing list");
    assert!(!failing.is_empty(), "{v}");
    for f in failing {
        let seed = f["seed"].as_u64().unwrap();
        assert!(!f["violations"].as_array().unwrap().is_empty());
        assert!(f["reproduce"].as_str().unwrap().ends_with(&format!("random-broken.toml --seed {seed}")), "{f}");
    }
}

// JUnit output validates against the JUnit schema, passing and failing;
// a failing scenario's <failure message> names the seed, the violation
// and the reproduction command.
#[test]
fn explore_junit_validates_against_the_schema() {
    let ok = lab(&["explore", &fixture("tiny-pause"), "--seeds", "2", "--format", "junit"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let xml = stdout(&ok);
    assert!(xml.contains("<testcase name=\"tiny-pause\"") && !xml.contains("<failure"), "{xml}");
    assert_valid_junit(&xml, "junit_pass");

    let bad = lab(&["explore", &fixture("tiny-pause"), &fixture("random-broken"), "--seeds", "3", "--format", "junit"]);
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    let xml = stdout(&bad);
    assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
    let failure = xml.lines().find(|l| l.contains("<failure message=")).expect("a failure element");
    assert!(failure.contains("; reproduce: cargo run --release -p neli-lab -- run "), "{failure}");
    assert!(failure.contains("random-broken.toml --seed "), "{failure}");
    assert_valid_junit(&xml, "junit_fail");
}

// Exit code 2 for bad input in every format, with the offending flag or
// value named on stderr and nothing half-written on stdout.
#[test]
fn bad_input_exits_2_in_every_format() {
    for format in ["text", "json", "junit"] {
        let o = lab(&["explore", "no-such-scenario", "--seeds", "1", "--format", format]);
        assert_eq!(o.status.code(), Some(2), "{format}");
        assert!(stderr(&o).contains("no-such-scenario"), "{}", stderr(&o));
        assert!(o.stdout.is_empty(), "{format}: {}", stdout(&o));
    }
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "1", "--format", "yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--format"), "{}", stderr(&o));
}

// `--time-budget` stops starting seeds once the budget is spent: every
// scenario runs the same first seeds (a chunk of 8 per thread before the
// clock is first looked at), the summary line says how many of how many
// ran, the JSON names the budget, and a budget that is not reached changes
// nothing. A budget without a unit is bad input.
#[test]
fn explore_time_budget_runs_a_prefix_and_says_so() {
    let args = ["explore", &fixture("tiny-pause"), &fixture("tiny-random"), "--seeds", "1000", "--jobs", "1"];
    let o = lab(&[&args[..], &["--time-budget", "1ms"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("x 8 seed(s) from 0 on 1 thread(s) in "), "{out}");
    assert!(out.contains("(time budget 1ms reached: 8 of 1000 seed(s) ran)"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("tiny-random  8 ")), "{out}");
    let j = lab(&[&args[..], &["--time-budget", "1ms", "--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("JSON");
    assert_eq!(v["time_budget"], "1ms");
    assert_eq!(v["scenarios"][1]["results"].as_array().unwrap().len(), 8);

    let roomy = lab(&["explore", &fixture("tiny-pause"), "--seeds", "3", "--time-budget", "10m"]);
    assert_eq!(roomy.status.code(), Some(0));
    assert!(stdout(&roomy).contains("x 3 seed(s) from 0 on ") && !stdout(&roomy).contains("time budget"));

    let bad = lab(&["explore", &fixture("tiny-pause"), "--seeds", "3", "--time-budget", "10"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--time-budget \"10\""), "{}", stderr(&bad));
}

// `run --format json` carries the build, seed, verdict, figures and the
// reproduction command (and the trace with --trace); `--format junit` is one
// valid testcase whose failure message names the seed, the violation and the
// reproduction. Exit codes are those of the text form.
#[test]
fn run_json_and_junit() {
    let o = lab(&["run", &fixture("tiny-pause"), "--seed", "2", "--trace", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!((v["schema"].as_str(), v["scenario"].as_str()), (Some("neli-lab/run/2"), Some("tiny-pause")));
    assert_eq!((v["seed"].as_u64(), v["passed"].as_bool()), (Some(2), Some(true)));
    assert!(v["build"].as_str().unwrap().starts_with("neli-lab "));
    assert!(v["figures"]["gap_max_ms"].as_u64().unwrap() > 0, "{v}");
    assert!(v["trace"].as_array().unwrap().iter().any(|l| l.as_str().unwrap().contains(" Acquired role=0 token=")));

    let bad = lab(&["run", "lease-longer-than-session", "--seed", "1", "--format", "junit"]);
    assert_eq!(bad.status.code(), Some(1));
    let xml = stdout(&bad);
    assert!(
        xml.contains("<failure message=\"seed 1: overlap: ")
            && xml.contains("; reproduce: cargo run --release -p neli-lab -- run lease-longer-than-session --seed 1\""),
        "{xml}"
    );
    assert_valid_junit(&xml, "run_junit");
    let j = lab(&["run", "lease-longer-than-session", "--seed", "1", "--format", "json"]);
    assert_eq!(j.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("JSON");
    assert_eq!(v["passed"].as_bool(), Some(false));
    assert!(v["violations"][0].as_str().unwrap().starts_with("overlap"), "{v}");
}

// `tune --format junit` has one testcase per configuration: a configuration
// validation refuses is skipped, a safe one passes. `--format json` lists
// the configurations with the safe region and the recommendation.
#[test]
fn tune_junit_one_testcase_per_configuration() {
    let dir = scratch("tune_junit");
    let args =
        ["tune", &fixture("tiny-pause"), "--heartbeat-timeout", "1s,4s", "--session-timeout", "3s", "--seeds", "2"];
    let o = lab(&[&args[..], &["--out", dir.to_str().unwrap(), "--format", "junit"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let xml = stdout(&o);
    assert!(xml.contains("tests=\"2\" failures=\"0\"") && xml.contains("disabled=\"1\""), "{xml}");
    assert!(xml.contains("<testcase name=\"T=1s S=3s\"") && xml.contains("<testcase name=\"T=4s S=3s\""), "{xml}");
    assert!(xml.contains("<skipped message=\"T=4s S=3s: rejected by neli&apos;s config validation\"/>"), "{xml}");
    assert_valid_junit(&xml, "tune_junit");
    let j = lab(&[&args[..], &["--out", dir.to_str().unwrap(), "--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("JSON");
    assert_eq!(v["schema"], "neli-lab/tune/1");
    assert_eq!(v["recommended"], "T=1s S=3s");
    assert_eq!(v["configs"].as_array().unwrap().len(), 2);
    assert_eq!(v["configs"][1]["valid"].as_bool(), Some(false));
}

// A configuration neli's validation accepts but that overlaps (goNELI's
// lease-from-receipt at T=1s S=3s, seed 19) is a violation: exit 1 in every
// format, a JUnit failure naming the seed, the violation and a reproduction
// command whose scenario file (written to --out) fails under `run`.
#[test]
fn tune_valid_but_unsafe_configuration_fails_with_a_reproduction() {
    let dir = scratch("tune_unsafe");
    let args = [
        "tune",
        "lease-from-receipt",
        "--heartbeat-timeout",
        "1s",
        "--session-timeout",
        "3s",
        "--seeds",
        "1",
        // A seed on which the resumed leader's lease overlaps its successor's.
        "--start",
        "19",
        "--out",
        dir.to_str().unwrap(),
    ];
    let text = lab(&args);
    assert_eq!(text.status.code(), Some(1), "{}", stdout(&text));
    assert!(stdout(&text).contains("OVERLAPS"), "{}", stdout(&text));
    let o = lab(&[&args[..], &["--format", "junit"]].concat());
    assert_eq!(o.status.code(), Some(1));
    let xml = stdout(&o);
    assert_valid_junit(&xml, "tune_unsafe_junit");
    let file = dir.join("lease-from-receipt-t1s-s3s.toml");
    assert!(xml.contains("seed 19: overlap") && xml.contains(&format!("run {} --seed 19", file.display())), "{xml}");
    let run = lab(&["run", file.to_str().unwrap(), "--seed", "19"]);
    assert_eq!(run.status.code(), Some(1), "{}", stdout(&run));
}

// `check --format junit` has one testcase per property; goNELI's
// lease-from-receipt without membership proof fails "at most one leader per
// role" with the counterexample file, the simulator's replay and the
// reproduction in the message; valid against the schema; exit 1. The JSON
// form names the build, the bounds and each property's outcome.
#[test]
fn check_junit_and_json_name_the_counterexample() {
    let dir = scratch("check_formats");
    let args = [
        "check",
        "--members",
        "2",
        "--isolations",
        "0",
        "--variant",
        "lease-from-receipt",
        "--no-membership-proof",
        "--sim-seeds",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ];
    let o = lab(&[&args[..], &["--format", "junit"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let xml = stdout(&o);
    assert_valid_junit(&xml, "check_junit");
    let file = dir.join("check-at-most-one-leader-per-role.toml");
    let failure = xml.lines().find(|l| l.contains("<failure message=")).expect("a failure");
    assert!(failure.contains(&format!("VIOLATED: {ONE_LEADER}; counterexample ")), "{failure}");
    assert!(failure.contains("; simulator: reproduced with seed "), "{failure}");
    assert!(
        failure.contains(&format!("; reproduce: cargo run --release -p neli-lab -- run {} --seed ", file.display())),
        "{failure}"
    );

    let j = lab(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(j.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("JSON");
    assert_eq!((v["schema"].as_str(), v["passed"].as_bool()), (Some("neli-lab/check/1"), Some(false)));
    assert!(v["build"].as_str().unwrap().starts_with("neli-lab ") && v["states"].as_u64().unwrap() > 0);
    let p =
        v["properties"].as_array().unwrap().iter().find(|p| p["outcome"] == "violated").expect("a violated property");
    assert_eq!(p["replay"]["result"], "reproduced");

    let ok = lab(&["check", "--members", "2", "--ticks", "5", "--format", "junit"]);
    assert_eq!(ok.status.code(), Some(0));
    assert!(stdout(&ok).contains("failures=\"0\""), "{}", stdout(&ok));
    let bad = lab(&["check", "--members", "0", "--format", "json"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(bad.stdout.is_empty(), "{}", stdout(&bad));
}
