//! Bad scenario files: every error names the file, the line, the field and
//! what was expected, and exits 2 without a panic.

use crate::{lab, scratch, stderr};

const GOOD: &str = "name = \"x\"\nduration = \"10s\"\n\n[election]\nmembers = 3\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n";

/// Writes `text` as `<test>/bad.toml`, runs it, returns (path, stderr).
fn run_bad(test: &str, text: &str) -> (String, String) {
    let path = scratch(test).join("bad.toml");
    std::fs::write(&path, text).expect("write");
    let p = path.to_str().unwrap().to_owned();
    let o = lab(&["run", &p]);
    assert_eq!(o.status.code(), Some(2), "bad file must exit 2: {}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    (p, err)
}

// A misspelt field (sesion_timeout) is named with its line and the fields
// that would have been accepted.
#[test]
fn misspelt_field_names_file_line_and_expected_fields() {
    let (p, err) = run_bad("misspelt", &GOOD.replace("session_timeout", "sesion_timeout"));
    assert!(err.starts_with(&format!("error: {p}:7:")), "{err}");
    assert!(err.contains("sesion_timeout") && err.contains("session_timeout"), "{err}");
}

// A duration without a valid unit says which units are allowed.
#[test]
fn duration_without_unit_is_explained() {
    let (p, err) = run_bad("unit", &GOOD.replace("\"10s\"", "\"10 secs\""));
    assert!(err.starts_with(&format!("error: {p}:2:")), "{err}");
    assert!(err.contains("unit must be ms, s or m"), "{err}");
}

// An unknown fault kind lists the kinds there are.
#[test]
fn unknown_fault_kind_lists_kinds() {
    let text = format!("{GOOD}\n[[faults]]\nat = \"1s\"\nkind = \"nap\"\ntarget = \"m0\"\n");
    let (p, err) = run_bad("kind", &text);
    assert!(err.starts_with(&format!("error: {p}:11:")), "{err}");
    assert!(err.contains("nap") && err.contains("pause"), "{err}");
}

// A fault aimed at a member that does not exist names the member range.
#[test]
fn target_outside_the_members_names_the_range() {
    let text = format!("{GOOD}\n[[faults]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"m7\"\nduration = \"1s\"\n");
    let (p, err) = run_bad("target", &text);
    assert!(err.starts_with(&format!("error: {p}:9:")), "{err}");
    assert!(err.contains("\"m7\"") && err.contains("m0..m2"), "{err}");
}

// A missing required field is named.
#[test]
fn missing_required_field_is_named() {
    let (p, err) = run_bad("missing", &GOOD.replace("heartbeat_timeout = \"1s\"\n", ""));
    assert!(err.starts_with(&format!("error: {p}:")), "{err}");
    assert!(err.contains("heartbeat_timeout"), "{err}");
}

// A scenario name that is not shipped points at `list`.
#[test]
fn unknown_scenario_name_points_at_list() {
    let o = lab(&["run", "no-such-scenario"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no-such-scenario: no scenario of that name"), "{}", stderr(&o));
    assert!(stderr(&o).contains("neli-lab list"));
}

// `list` over a directory with a broken file shows it as INVALID with the
// reason and exits 2.
#[test]
fn list_flags_an_invalid_file() {
    let dir = scratch("list_invalid");
    std::fs::write(dir.join("ok.toml"), GOOD).expect("write");
    std::fs::write(dir.join("bad.toml"), GOOD.replace("members = 3", "members = \"three\"")).expect("write");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .arg("list")
        .env("NELI_LAB_SCENARIOS", &dir)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("bad  ") && out.contains("INVALID: ") && out.contains("bad.toml:5:"), "{out}");
}

// A command that does no work never says PASS: zero seeds, an empty shard
// and an empty scenario directory exit 2 with the reason.
#[test]
fn explore_with_nothing_to_run_exits_2_with_the_reason() {
    let o = lab(&["explore", "leader-pause", "--seeds", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--seeds 0: nothing to run"), "{}", stderr(&o));
    let o = lab(&["explore", "leader-pause", "--seeds", "2", "--shard", "3/4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no seed of the 2 from"), "{}", stderr(&o));
    let empty = scratch("empty-scenario-dir");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .args(["explore", "--all", "--seeds", "1"])
        .env("NELI_LAB_SCENARIOS", empty.join("does-not-exist"))
        .output()
        .expect("neli-lab runs");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--all: no scenario files in"), "{}", stderr(&o));
}

// The largest range split into as many shards is one seed per shard, run at
// once (it used to walk the whole range and never end).
#[test]
fn a_huge_range_in_as_many_shards_runs_one_seed() {
    let max = u64::MAX.to_string();
    let fixture = crate::fixture("tiny-pause");
    let o = lab(&["explore", &fixture, "--seeds", &max, "--shard", &format!("1/{max}")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(crate::stdout(&o).contains("x 1 seed(s)"), "{}", crate::stdout(&o));
}
