//! Progress off a terminal (scenarios/README.md, "Progress"): the tests'
//! stderr is a pipe, as in CI logs, so what they see is what a CI log gets.

use std::process::Command;

use crate::{fixture, stderr, stdout};

fn explore(every: Option<&str>, seeds: &str) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_neli-lab"));
    c.args(["explore", &fixture("tiny-pause"), "--seeds", seeds, "--jobs", "1"]);
    c.env("NELI_LAB_SCENARIOS", env!("CARGO_MANIFEST_DIR")).env_remove("NELI_LAB_PROGRESS_EVERY");
    if let Some(e) = every {
        c.env("NELI_LAB_PROGRESS_EVERY", e);
    }
    c.output().expect("neli-lab runs")
}

// A short run in a log prints nothing on stderr: no bar, no escape codes.
#[test]
fn quiet_off_a_terminal() {
    let o = explore(None, "3");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stderr(&o), "", "stderr must stay empty in a log");
}

// A run longer than the interval prints summary lines with counts, rate and
// ETA, on stderr only; stdout is the same as without them.
#[test]
fn one_summary_line_per_interval_off_a_terminal() {
    let o = explore(Some("100ms"), "12");
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert!(!lines.is_empty(), "no progress line in a run longer than the interval");
    for l in &lines {
        assert!(l.starts_with("progress tiny-pause: ") && l.contains("/12 seeds, ") && l.contains(" eta "), "{l}");
    }
    assert!(!err.contains('\u{1b}'), "escape codes in a log: {err:?}");
    assert!(!stdout(&o).contains("progress"), "{}", stdout(&o));
}

// `shrink` counts its simulation runs against the budget in the same way.
#[test]
fn shrink_reports_runs_off_a_terminal() {
    let o = Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .args(["shrink", "lease-from-receipt", "--seed", "2", "--budget", "60"])
        .env("NELI_LAB_SCENARIOS", env!("CARGO_MANIFEST_DIR"))
        // A line every millisecond: a release build shrinks this in a few
        // runs and well under 100 ms, and the test is about the line's form.
        .env("NELI_LAB_PROGRESS_EVERY", "1ms")
        .output()
        .expect("neli-lab runs");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.lines().any(|l| l.starts_with("progress shrink lease-from-receipt: ") && l.contains("/60 runs, ")),
        "{err}"
    );
    assert!(stdout(&o).starts_with("# shrunk by: "), "{}", stdout(&o));
}
