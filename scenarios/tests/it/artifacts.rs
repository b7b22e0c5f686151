//! `explore --artifacts DIR` (scenarios/README.md, "Artifacts"): every
//! failing seed leaves a scenario file that `run` fails on, its trace and
//! its timeline, named `<scenario>-seed<N>.*` for a readable CI artifact list.

use std::path::Path;
use std::process::Command;

use crate::{lab, scratch, stderr, stdout};

// The "done when": `explore --all --format junit --artifacts out/`
// over broken scenarios (one with explicit faults, one with `[random]`
// faults drawn from the seed) leaves, per failing seed, a scenario file that
// `neli-lab run` fails on, a trace and an SVG, and nothing for passing seeds.
#[test]
fn explore_artifacts_reproduce_every_failing_seed() {
    let dir = scratch("artifacts");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (from, to) in [
        ("broken/lease-from-receipt.toml", "lease-from-receipt.toml"),
        ("tests/it/fixtures/random-broken.toml", "random-broken.toml"),
    ] {
        std::fs::copy(root.join(from), scenarios.join(to)).unwrap();
    }
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .args(["explore", "--all", "--seeds", "6", "--format", "junit", "--artifacts"])
        .arg(&out)
        .env("NELI_LAB_SCENARIOS", &scenarios)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let xml = stdout(&o);
    assert!(xml.contains("tests=\"2\" failures=\"2\""), "{xml}");

    let mut tomls: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    tomls.sort();
    assert!(tomls.len() >= 2, "one file per failing seed expected: {tomls:?}");
    assert!(tomls.iter().any(|p| p.file_name().unwrap().to_string_lossy().starts_with("random-broken-seed")));
    for toml in &tomls {
        let stem = toml.file_stem().unwrap().to_string_lossy().into_owned();
        let seed = stem.rsplit("-seed").next().unwrap();
        // The failure message lists this seed.
        assert!(xml.contains(&format!("seed {seed}: ")), "{stem} not in the JUnit report:\n{xml}");
        // The file fails under `run` with its own seed, with no [random] left.
        let text = std::fs::read_to_string(toml).unwrap();
        assert!(text.contains(&format!("\nseed = {seed}\n")) && !text.contains("[random]"), "{text}");
        let run = lab(&["run", toml.to_str().unwrap()]);
        assert_eq!(run.status.code(), Some(1), "{stem}: {}", stdout(&run));
        let svg = std::fs::read_to_string(out.join(format!("{stem}.svg"))).expect("an SVG per failing seed");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        let trace = std::fs::read_to_string(out.join(format!("{stem}.trace.txt"))).expect("a trace per failing seed");
        assert!(trace.contains(" Acquired role=0 token=") && trace.contains("violation "), "{trace}");
        // Both reproductions replay the failing run byte for byte: the
        // command the report prints (scenario name and seed; a [random]
        // scenario draws its faults again) and the written file.
        let name = stem.rsplit_once("-seed").unwrap().0;
        assert!(xml.contains(&format!("run {name} --seed {seed}")), "no reproduction line for {stem}:\n{xml}");
        let by_name = Command::new(env!("CARGO_BIN_EXE_neli-lab"))
            .args(["run", name, "--seed", seed, "--trace"])
            .env("NELI_LAB_SCENARIOS", &scenarios)
            .output()
            .unwrap();
        let by_file = lab(&["run", toml.to_str().unwrap(), "--trace"]);
        let want = trace_lines(&trace);
        assert!(want.len() > 10, "{trace}");
        assert_eq!(trace_lines(&stdout(&by_name)), want, "{stem}: the printed command replays another run");
        assert_eq!(trace_lines(&stdout(&by_file)), want, "{stem}: the written file replays another run");
    }
    // Exactly four files per failing seed (the history is checked by
    // `cli::run_writes_its_typed_history_as_json_lines`), and one index page
    // with a section per failing seed, its timeline and its reproduction.
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 4 * tomls.len() + 1);
    let index = std::fs::read_to_string(out.join("index.html")).expect("an index page");
    assert_eq!(index.matches("<section class=\"failure\"").count(), tomls.len(), "{index}");
    assert_eq!(index.matches("<div class=\"timeline\"><svg").count(), tomls.len(), "{index}");
    for toml in &tomls {
        let stem = toml.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(index.contains(&format!("id=\"{stem}\"")), "{stem} not on the index page");
    }
    for toml in &tomls {
        let history = toml.with_extension("history.jsonl");
        let text = std::fs::read_to_string(&history).unwrap_or_else(|e| panic!("{}: {e}", history.display()));
        assert!(neli_sim::History::from_jsonl(&text).is_ok_and(|h| !h.entries.is_empty()), "{}", history.display());
    }
}

/// The trace lines of a report (`  12.345s m1 Acquired role=0 token=17`).
fn trace_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            let at = l.trim_start().split(' ').next().unwrap_or("");
            at.strip_suffix('s').and_then(|t| t.split_once('.')).is_some_and(|(s, ms)| {
                !s.is_empty()
                    && s.bytes().all(|b| b.is_ascii_digit())
                    && ms.len() == 3
                    && ms.bytes().all(|b| b.is_ascii_digit())
            })
        })
        .collect()
}

// An artifacts path that cannot be a directory is bad input: exit 2 naming the flag.
#[test]
fn explore_artifacts_into_a_file_is_refused() {
    let dir = scratch("artifacts_bad");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = lab(&["explore", "lease-from-receipt", "--seeds", "1", "--artifacts", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("--artifacts"), "{}", stderr(&o));
}

// `run --artifacts DIR` leaves the same three files for a failing run (and
// none for a passing one), so a CI job that reruns one seed gets them too.
#[test]
fn run_artifacts_only_for_a_failing_run() {
    let dir = scratch("run_artifacts");
    let o = lab(&["run", "lease-longer-than-session", "--seed", "1", "--artifacts", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    for ext in ["toml", "trace.txt", "svg", "history.jsonl"] {
        assert!(dir.join(format!("lease-longer-than-session-seed1.{ext}")).exists(), "{ext} missing");
    }
    let again = lab(&["run", dir.join("lease-longer-than-session-seed1.toml").to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1), "{}", stdout(&again));
    let pass = scratch("run_artifacts_pass");
    let ok = lab(&["run", &crate::fixture("tiny-pause"), "--seed", "1", "--artifacts", pass.to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(std::fs::read_dir(&pass).unwrap().count(), 0);
}
