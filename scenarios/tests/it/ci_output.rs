//! What a CI job needs from `explore` beyond one document at the
//! end: fresh seeds each night (`--start auto`), failures kept and replayed
//! first (`--regressions`), a line per seed as it finishes (`--format
//! jsonl`) and a summary for the step page (`--format markdown`)
//! (scenarios/README.md, "Output formats and exit codes").

use std::path::{Path, PathBuf};

use crate::{fixture, lab, scratch, stderr, stdout};

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON value ({e}): {l}"))).collect()
}

fn tomls(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the regressions directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

// A header line naming the build, one line per seed, in seed order, then
// the summary line; the lines are the ones `merge --format jsonl` prints
// from the JSON report of the same seeds, so a stream cut short holds
// exactly the seeds that finished, and which build ran them.
#[test]
fn jsonl_prints_a_header_a_line_per_seed_then_the_summary() {
    let f = fixture("tiny-pause");
    let o = lab(&["explore", &f, "--seeds", "3", "--start", "4", "--format", "jsonl", "--jobs", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines.len(), 5, "a header, three seeds and a summary: {lines:?}");
    let (h, schema) = (&lines[0], Some("neli-lab/explore-jsonl/2"));
    assert_eq!((h["type"].as_str(), h["schema"].as_str()), (Some("header"), schema), "{h}");
    assert_eq!(h["build"].as_str(), Some(neli_lab::BUILD), "{h}");
    assert_eq!(h["commit"].as_str(), Some(env!("NELI_LAB_COMMIT")), "{h}");
    assert_eq!(h["tree"].as_str(), Some(env!("NELI_LAB_TREE")), "{h}");
    let lines = &lines[1..];
    for (l, seed) in lines[..3].iter().zip(4..) {
        assert_eq!((l["type"].as_str(), l["scenario"].as_str()), (Some("seed"), Some("tiny-pause")));
        assert_eq!(l["seed"].as_u64(), Some(seed));
        assert_eq!(l["passed"], true);
        assert!(l["gap_max_ms"].is_u64() && l.get("reproduce").is_none(), "{l}");
    }
    let s = &lines[3];
    assert_eq!((s["type"].as_str(), s["schema"].as_str()), (Some("summary"), schema));
    assert_eq!(s["build"], h["build"], "the last line names the build too");
    assert_eq!((s["start"].as_u64(), s["seeds"].as_u64(), s["passed"].as_bool()), (Some(4), Some(3), Some(true)));
    assert_eq!(s["scenarios"][0]["violations"], 0);
    // The same seeds through the JSON report and merge.
    let dir = scratch("jsonl_lines");
    let json = lab(&["explore", &f, "--seeds", "3", "--start", "4", "--format", "json"]);
    std::fs::write(dir.join("r.json"), &json.stdout).unwrap();
    let m = lab(&["merge", dir.join("r.json").to_str().unwrap(), "--format", "jsonl"]);
    let merged: Vec<String> = stdout(&m).lines().map(String::from).collect();
    let streamed: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(merged[..4], streamed[..4], "merge prints the header and seed lines explore streamed");
}

// A failing seed's line says so and carries its reproduction; the summary
// line's verdict is the exit code's.
#[test]
fn jsonl_failing_seeds_carry_their_reproduction() {
    let o = lab(&["explore", "broken/lease-from-receipt.toml", "--seeds", "2", "--format", "jsonl"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    let failing: Vec<_> = lines.iter().filter(|l| l["type"] == "seed" && l["passed"] == false).collect();
    assert!(!failing.is_empty(), "{lines:?}");
    for l in failing {
        let repro = l["reproduce"].as_str().expect("a reproduction");
        assert!(repro.ends_with(&format!("run broken/lease-from-receipt.toml --seed {}", l["seed"])), "{repro}");
        assert!(!l["violations"].as_array().unwrap().is_empty());
    }
    assert_eq!(lines.last().unwrap()["passed"], false);
}

// The Markdown summary: a heading with the verdict, the table (pipes in a
// cell escaped), and each failing seed with its reproduction.
#[test]
fn markdown_summarises_verdict_table_and_failures() {
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "2", "--format", "markdown"]);
    assert_eq!(o.status.code(), Some(0));
    let md = stdout(&o);
    assert!(md.starts_with("### neli-lab explore: PASS\n"), "{md}");
    assert!(md.contains("| scenario | seeds | violations | overlap (ms) | gap (ms) | failover (ms) |\n|---|"), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| tiny-pause | 2 | 0 | ")), "{md}");
    let o = lab(&["explore", "broken/lease-from-receipt.toml", "--seeds", "2", "--format", "markdown"]);
    assert_eq!(o.status.code(), Some(1));
    let md = stdout(&o);
    assert!(md.starts_with("### neli-lab explore: FAIL\n"), "{md}");
    assert!(md.contains("**Failing seeds** (2):"), "{md}");
    assert!(md.contains("- seed 0 of `broken/lease-from-receipt.toml`: "), "{md}");
    assert!(
        md.contains("  - reproduce: `cargo run --release -p neli-lab -- run broken/lease-from-receipt.toml --seed 0`"),
        "{md}"
    );
    // `run` and `check` summarise the same way.
    let o = lab(&["run", &fixture("tiny-pause"), "--seed", "1", "--format", "markdown"]);
    let md = stdout(&o);
    assert!(md.starts_with("### neli-lab run tiny-pause seed 1: PASS\n") && md.contains("| figure | value |"), "{md}");
    assert!(md.contains("Broker: kafka (modelled from Apache Kafka"), "{md}");
    let o = lab(&["check", "--members", "2", "--ticks", "4", "--sim-seeds", "0", "--format", "markdown"]);
    let md = stdout(&o);
    assert!(md.starts_with("### neli-lab check: PASS\n"), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| at most one leader per role | always | holds |")), "{md}");
}

// Two nightly runs with `--start auto` draw their own first seeds, print
// them (header and JSON) and explore disjoint ranges; a bad --start is
// refused naming the value.
#[test]
fn start_auto_runs_explore_disjoint_seeds() {
    let f = fixture("tiny-pause");
    let run = || {
        let o = lab(&["explore", &f, "--seeds", "3", "--start", "auto", "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(v["start_auto"], true, "{v}");
        let seeds: Vec<u64> =
            v["scenarios"][0]["results"].as_array().unwrap().iter().map(|r| r["seed"].as_u64().unwrap()).collect();
        assert_eq!(seeds[0], v["start"].as_u64().unwrap());
        seeds
    };
    let (a, b) = (run(), run());
    assert!(a.iter().all(|s| !b.contains(s)), "two --start auto runs shared seeds: {a:?} {b:?}");
    let o = lab(&["explore", &f, "--seeds", "1", "--start", "auto"]);
    let out = stdout(&o);
    let start = out.split(" from ").nth(1).and_then(|t| t.split(' ').next()).expect("the explored line");
    assert!(out.contains(&format!("(drawn by --start auto; these seeds again: --start {start})")), "{out}");
    let o = lab(&["explore", &f, "--seeds", "1", "--start", "tomorrow"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("\"tomorrow\" is neither a seed"), "{}", stderr(&o));
}

// A failure found once is kept, replayed before any new seed by the next
// run, and reported as a regression when it fails again; a passing run
// adds nothing to the directory.
#[test]
fn a_kept_failure_is_replayed_first_and_reported_as_a_regression() {
    let dir = scratch("regressions").join("neli-regressions");
    let d = dir.to_str().unwrap();
    let first = lab(&["explore", "broken/lease-from-receipt.toml", "--seeds", "2", "--regressions", d]);
    assert_eq!(first.status.code(), Some(1));
    assert!(stderr(&first).contains("kept 2 new failing seed(s)"), "{}", stderr(&first));
    let kept = tomls(&dir);
    let names: Vec<String> = kept.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["lease-from-receipt-seed0.toml", "lease-from-receipt-seed1.toml"]);
    // The next night: other seeds of a scenario that passes, but the kept
    // failures come first and fail again.
    let next = lab(&["explore", &fixture("tiny-pause"), "--seeds", "2", "--start", "50", "--regressions", d]);
    assert_eq!(next.status.code(), Some(1), "{}", stdout(&next));
    assert!(stderr(&next).contains("replaying 2 kept failure(s)"), "{}", stderr(&next));
    let out = stdout(&next);
    assert!(out.contains("regressions: 2 kept failure(s) replayed first, 2 fail again"), "{out}");
    assert!(out.contains("verdict   FAIL (2 regression(s))"), "{out}");
    assert!(out.contains(&format!("REGRESSION {} (seed 0, kept earlier) fails again: ", kept[0].display())), "{out}");
    let json = lab(&["explore", &fixture("tiny-pause"), "--seeds", "1", "--regressions", d, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(v["regressions"].as_array().unwrap().len(), 2);
    assert_eq!(v["regressions"][1]["seed"], 1);
    assert_eq!(v["regressions"][1]["passed"], false);
    assert_eq!(tomls(&dir).len(), 2, "a passing scenario keeps nothing new");
    // Once fixed (here: the file says the recommended variant), it passes.
    let text = std::fs::read_to_string(&kept[0]).unwrap();
    std::fs::write(&kept[0], text.replace("variant = \"lease-from-receipt\"", "variant = \"recommended\"")).unwrap();
    std::fs::remove_file(&kept[1]).unwrap();
    let fixed = lab(&["explore", &fixture("tiny-pause"), "--seeds", "1", "--regressions", d]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stdout(&fixed));
    assert!(stdout(&fixed).contains("regressions: 1 kept failure(s) replayed first, 0 fail again"));
}

// With --shrink the kept file is the minimal scenario; a kept file that
// does not parse or names no seed is refused naming it; --shrink needs
// --regressions.
#[test]
fn kept_failures_are_shrunk_on_request_and_bad_ones_refused() {
    let dir = scratch("regressions_shrink");
    let d = dir.to_str().unwrap();
    let o = lab(&["explore", &fixture("random-broken"), "--seeds", "6", "--regressions", d, "--shrink"]);
    assert_eq!(o.status.code(), Some(1));
    let kept = tomls(&dir);
    assert!(!kept.is_empty());
    let text = std::fs::read_to_string(&kept[0]).unwrap();
    assert!(
        text.contains("# shrunk by: cargo run --release -p neli-lab -- shrink ") && !text.contains("[random]"),
        "{text}"
    );
    assert!(stderr(&o).contains("(shrunk): commit them"), "{}", stderr(&o));
    std::fs::write(dir.join("zz-no-seed.toml"), "name = \"x\"\nduration = \"5s\"\n[election]\nmembers = 1\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n").unwrap();
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "1", "--regressions", d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("zz-no-seed.toml: no `seed`"), "{}", stderr(&o));
    std::fs::write(dir.join("zz-no-seed.toml"), "name = \"x\"\nbogus = 1\n").unwrap();
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "1", "--regressions", d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("zz-no-seed.toml:2"), "{}", stderr(&o));
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "1", "--shrink"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--regressions"), "{}", stderr(&o));
}
