//! `neli-lab gate`: both halves of the harness, one verdict (README.md, the
//! main job). The
//! gate always runs every shipped scenario; these tests point it at a
//! scenario directory of fixtures and a small model bound to stay cheap.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::formats::assert_valid_junit;
use crate::{scratch, stderr, stdout};

/// A scenario directory holding copies of the fixtures `names`.
fn scenario_dir(test: &str, names: &[&str]) -> PathBuf {
    let dir = scratch(test).join("scenarios");
    std::fs::create_dir_all(&dir).expect("scenario dir");
    for n in names {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/it/fixtures/{n}.toml"));
        std::fs::copy(&from, dir.join(format!("{n}.toml"))).expect("copy fixture");
    }
    dir
}

fn gate(dir: &Path, format: &str) -> Output {
    let out = dir.parent().expect("scratch").join("check-out");
    Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        // Seeds 2 and 3: random-broken overlaps on seed 2.
        .args(["gate", "--seeds", "2", "--start", "2", "--ablate-seeds", "1", "--ticks", "4", "--sim-seeds", "0"])
        .args(["--format", format])
        .arg("--out")
        .arg(out)
        .env("NELI_LAB_SCENARIOS", dir)
        .output()
        .expect("neli-lab runs")
}

// Both halves hold: exit 0, the explore table and the three checks in one
// report, and a last line naming each half's result.
#[test]
fn the_gate_passes_when_both_halves_hold() {
    let dir = scenario_dir("gate_pass", &["tiny-pause"]);
    let o = gate(&dir, "text");
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("\ntiny-pause "), "{text}");
    for mode in ["exclusive", "multi-role", "non-exclusive"] {
        assert!(text.contains(&format!("\ncheck --mode {mode}\n")), "{text}");
    }
    assert!(
        text.ends_with(
            "\ngate      PASS (explore pass, check exclusive pass, check multi-role pass, check non-exclusive pass)\n"
        ),
        "{text}"
    );

    let j = gate(&dir, "json");
    assert_eq!(j.status.code(), Some(0), "{}", stderr(&j));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("one JSON document");
    assert_eq!(v["schema"], "neli-lab/gate/1");
    assert_eq!(v["passed"], true);
    assert_eq!(v["explore"]["schema"], "neli-lab/explore/2");
    let modes: Vec<&str> = v["checks"].as_array().unwrap().iter().map(|c| c["mode"].as_str().unwrap()).collect();
    assert_eq!(modes, ["exclusive", "multi-role", "non-exclusive"]);
    assert!(v["checks"].as_array().unwrap().iter().all(|c| c["report"]["passed"] == true), "{v}");

    let x = gate(&dir, "junit");
    assert_eq!(x.status.code(), Some(0), "{}", stderr(&x));
    let xml = stdout(&x);
    // One testsuite per half: the simulator's and one check per mode.
    assert_eq!(xml.matches("<testsuite ").count(), 4, "{xml}");
    assert!(xml.contains("name=\"neli-lab check non-exclusive\""), "{xml}");
    assert_valid_junit(&xml, "gate_junit");
}

// The simulator half fails (a scenario that overlaps on purpose): the gate
// fails, whatever the model says, and says which half.
#[test]
fn the_gate_fails_when_the_simulator_half_does() {
    let dir = scenario_dir("gate_fail", &["tiny-pause", "random-broken"]);
    let o = gate(&dir, "text");
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("\ngate      FAIL (explore FAIL, check exclusive pass"), "{text}");
    assert!(text.contains("reproduce"), "{text}");
}

// Fewer seeds than the ablations' default of 50: the ablated runs cover
// every seed instead of the gate refusing to start; an --ablate-seeds
// above --seeds is still refused, naming both.
#[test]
fn a_gate_with_few_seeds_ablates_all_of_them() {
    let dir = scenario_dir("gate_few_seeds", &["tiny-pause"]);
    let out = dir.parent().expect("scratch").join("check-out");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_neli-lab"))
            .args(["gate", "--seeds", "2", "--ticks", "4", "--sim-seeds", "0", "--format", "json", "--out"])
            .arg(&out)
            .args(extra)
            .env("NELI_LAB_SCENARIOS", &dir)
            .output()
            .expect("neli-lab runs")
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let rows = v["explore"]["scenarios"].as_array().expect("explore rows");
    let ablated: Vec<&serde_json::Value> = rows.iter().filter(|r| r["without"].is_string()).collect();
    assert!(!ablated.is_empty(), "the gate ablates: {v}");
    assert!(ablated.iter().all(|r| r["summary"]["seeds"] == 2), "each ablated row ran both seeds: {v}");

    let none = Command::new(env!("CARGO_BIN_EXE_neli-lab")).args(["gate", "--seeds", "0"]).output().expect("runs");
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(stderr(&none).contains("--seeds 0: nothing to run"), "names the flag given: {}", stderr(&none));

    let refused = run(&["--ablate-seeds", "3"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--ablate-seeds 3: at most --seeds (2)"), "{}", stderr(&refused));
}
