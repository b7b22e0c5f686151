//! `neli-lab diff BASE.json HEAD.json` (scenarios/README.md, "Comparing two
//! runs"): the figures of two explore reports compared against thresholds.
//! BASE is one real `explore --format json`; each HEAD is that report with
//! per-seed figures edited, so every regression here is deterministic.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::formats::assert_valid_junit;
use crate::{fixture, lab, scratch, stderr, stdout};

/// The base report, made once for every test of this file:
/// tiny-pause (failover p99 3315 ms, gap p99 2564 ms, overlap 0) and
/// tiny-random, seeds 2..=6.
fn base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = scratch("diff_base");
        let o = lab(&[
            "explore",
            &fixture("tiny-pause"),
            &fixture("tiny-random"),
            "--seeds",
            "5",
            "--start",
            "2",
            "--format",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let path = dir.join("base.json");
        std::fs::write(&path, &o.stdout).expect("write base report");
        path
    })
}

fn base_str() -> &'static str {
    base().to_str().expect("utf-8 path")
}

/// The base report edited by `f`, written to `dir/name`.
fn head(dir: &Path, name: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(base()).unwrap()).unwrap();
    f(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Applies `f` to `field` of every seed of the scenario at `index` that has it.
fn scale(v: &mut Value, index: usize, field: &str, f: impl Fn(u64) -> u64) {
    for r in v["scenarios"][index]["results"].as_array_mut().unwrap() {
        if let Some(x) = r[field].as_u64() {
            r[field] = f(x).into();
        }
    }
}

fn diff(args: &[&str]) -> std::process::Output {
    let o = lab(&[&["diff"], args].concat());
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    o
}

// A report compared with itself passes in every format: every figure of
// every scenario shown, the default thresholds named.
#[test]
fn identical_reports_pass() {
    let o = diff(&[base_str(), base_str()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("thresholds gap.p99=10%, failover.p99=10%"), "{out}");
    assert!(out.contains("tiny-pause (5 seed(s))") && out.contains("tiny-random (5 seed(s))"), "{out}");
    assert!(out.contains("failover.p99  3315  3315  0"), "{out}");
    assert!(out.contains("verdict   PASS"), "{out}");
    assert!(!out.contains("regressed:"), "{out}");

    let json = diff(&[base_str(), base_str(), "--format", "json"]);
    assert_eq!(json.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(v["schema"], "neli-lab/diff/1");
    assert_eq!(v["passed"], true);
    assert_eq!((&v["start"], &v["seeds"]), (&Value::from(2), &Value::from(5)));
    assert_eq!(v["thresholds"], serde_json::json!(["gap.p99=10%", "failover.p99=10%"]));
    let figures: Vec<&str> =
        v["scenarios"][0]["figures"].as_array().unwrap().iter().map(|f| f["figure"].as_str().unwrap()).collect();
    assert_eq!(figures.len(), 10, "{figures:?}");
    assert_eq!(figures[0], "violations");
    assert!(figures.contains(&"overlap.p50") && figures.contains(&"failover.max"), "{figures:?}");

    let xml = diff(&[base_str(), base_str(), "--format", "junit"]);
    assert_eq!(xml.status.code(), Some(0));
    assert_valid_junit(&stdout(&xml), "diff_identical");
}

// Failover 25 % slower in HEAD against the default 10 %: exit 1 naming the
// scenario, the figure, both values and the threshold, in every format.
#[test]
fn a_figure_worse_beyond_its_threshold_fails_naming_it() {
    let dir = scratch("diff_worse");
    let h = head(&dir, "head.json", |v| scale(v, 0, "failover_max_ms", |x| x * 5 / 4));
    let o = diff(&[base_str(), &h]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("regressed: tiny-pause failover.p99 3315ms -> 4143ms (+25.0% > 10%)"), "{out}");
    assert!(out.contains("verdict   FAIL (1 figure(s)"), "{out}");
    assert!(!out.contains("regressed: tiny-random"), "{out}");

    let json = diff(&[base_str(), &h, "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(v["passed"], false);
    assert_eq!(v["regressions"], serde_json::json!(["tiny-pause failover.p99 3315ms -> 4143ms (+25.0% > 10%)"]));
    let f = v["scenarios"][0]["figures"].as_array().unwrap().iter().find(|f| f["figure"] == "failover.p99").unwrap();
    assert_eq!((&f["base"], &f["head"], &f["change"]), (&Value::from(3315), &Value::from(4143), &Value::from(828)));
    assert_eq!(f["verdict"], "regressed");
    // With stdout going to a file, stderr still names what regressed.
    assert!(stderr(&json).contains("regressed: tiny-pause failover.p99"), "{}", stderr(&json));

    let xml = diff(&[base_str(), &h, "--format", "junit"]);
    assert_eq!(xml.status.code(), Some(1));
    assert!(stdout(&xml).contains("tiny-pause failover.p99 3315ms -&gt; 4143ms"), "{}", stdout(&xml));
    assert_valid_junit(&stdout(&xml), "diff_worse");
}

// A rise within the threshold passes; a wider threshold admits a larger one;
// figures nobody set a threshold for are shown, never judged.
#[test]
fn a_rise_within_the_threshold_passes() {
    let dir = scratch("diff_within");
    let h = head(&dir, "head.json", |v| scale(v, 0, "failover_max_ms", |x| x * 105 / 100));
    let o = diff(&[base_str(), &h]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("failover.p99  3315  3480  +165 (+5.0%)  10%"), "{}", stdout(&o));

    let h = head(&dir, "head25.json", |v| scale(v, 0, "failover_max_ms", |x| x * 5 / 4));
    let o = diff(&[base_str(), &h, "--max-regress", "failover.p99=30%"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("thresholds failover.p99=30%"), "{}", stdout(&o));
    // The gap's p99 doubled, but only overlap is judged here.
    let h = head(&dir, "gap.json", |v| scale(v, 0, "gap_max_ms", |x| x * 2));
    let o = diff(&[base_str(), &h, "--max-regress", "overlap.max=0ms"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

// `Nms`/`Ns` limit the rise in ms; over a BASE of 0 a relative threshold
// lets nothing through (and says so) unless an absolute one is given too.
#[test]
fn absolute_thresholds() {
    let dir = scratch("diff_absolute");
    let h = head(&dir, "gap.json", |v| scale(v, 0, "gap_max_ms", |x| x + 300));
    let pass = diff(&[base_str(), &h, "--max-regress", "gap.p99=500ms"]);
    assert_eq!(pass.status.code(), Some(0), "{}", stdout(&pass));
    let pass = diff(&[base_str(), &h, "--max-regress", "gap.p99=1s"]);
    assert_eq!(pass.status.code(), Some(0), "{}", stdout(&pass));
    let fail = diff(&[base_str(), &h, "--max-regress", "gap.p99=200ms"]);
    assert_eq!(fail.status.code(), Some(1), "{}", stdout(&fail));
    assert!(
        stdout(&fail).contains("regressed: tiny-pause gap.p99 2564ms -> 2864ms (+300ms > 200ms)"),
        "{}",
        stdout(&fail)
    );
    // Both kinds for one figure: worse only beyond both.
    let pass = diff(&[base_str(), &h, "--max-regress", "gap.p99=5%,gap.p99=1s"]);
    assert_eq!(pass.status.code(), Some(0), "{}", stdout(&pass));

    // Overlap is 0 in BASE: 40 ms in HEAD exceeds any percentage.
    let h = head(&dir, "overlap.json", |v| v["scenarios"][1]["results"][0]["overlap_total_ms"] = 40.into());
    let fail = diff(&[base_str(), &h, "--max-regress", "overlap.max=10%"]);
    assert_eq!(fail.status.code(), Some(1), "{}", stdout(&fail));
    let out = stdout(&fail);
    assert!(out.contains("regressed: tiny-random overlap.max 0ms -> 40ms (BASE 0: any rise exceeds 10%)"), "{out}");
    assert!(out.contains("BASE 0: a relative threshold lets no rise through"), "{out}");
    let pass = diff(&[base_str(), &h, "--max-regress", "overlap.max=10%,overlap.max=50ms"]);
    assert_eq!(pass.status.code(), Some(0), "{}", stdout(&pass));
}

// One more violating seed regresses whatever the thresholds say.
#[test]
fn more_violating_seeds_always_regress() {
    let dir = scratch("diff_violations");
    let h = head(&dir, "head.json", |v| {
        v["scenarios"][1]["results"][3]["violations"] = serde_json::json!(["overlap: m0 and m1 led at once"]);
    });
    let o = diff(&[base_str(), &h, "--max-regress", "gap.max=100%"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("regressed: tiny-random violations 0 -> 1 violating seed(s)"), "{}", stdout(&o));
    // Fewer is fine: HEAD as BASE, BASE as HEAD.
    let o = diff(&[&h, base_str(), "--max-regress", "gap.max=100%"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

// Bad input exits 2 with an `error:` naming what is at fault, and nothing on stdout.
#[test]
fn bad_input_exits_2_naming_the_thing() {
    let dir = scratch("diff_bad");
    let refused = |args: &[&str], needles: &[&str]| {
        let o = diff(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}{}", stdout(&o), stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: expected {n:?} in: {err}");
        }
    };
    let b = base_str();

    let missing = dir.join("missing.json");
    let missing = missing.to_str().unwrap();
    refused(&[b, missing], &[&format!("{missing}: cannot read")]);

    let junk = dir.join("junk.json");
    std::fs::write(&junk, "figures: none").unwrap();
    let junk = junk.to_str().unwrap();
    refused(&[junk, b], &[&format!("{junk}: not JSON")]);

    let gate = head(&dir, "gate.json", |v| v["schema"] = "neli-lab/gate/1".into());
    refused(&[b, &gate], &[&format!("{gate}: schema \"neli-lab/gate/1\", expected \"neli-lab/explore/2\"")]);
    let no_schema = dir.join("no-schema.json");
    std::fs::write(&no_schema, "{\"seeds\": 5}").unwrap();
    let no_schema = no_schema.to_str().unwrap();
    refused(&[no_schema, b], &[&format!("{no_schema}: no \"schema\" field")]);
    let hollow = dir.join("hollow.json");
    std::fs::write(&hollow, "{\"schema\": \"neli-lab/explore/2\"}").unwrap();
    let hollow = hollow.to_str().unwrap();
    refused(&[b, hollow], &[&format!("{hollow}: not an explore JSON report")]);

    refused(
        &[b, b, "--max-regress", "gap.p95=10%"],
        &["unknown figure \"gap.p95\"", "overlap.p50, overlap.p99, overlap.max, gap.p50, gap.p99", "failover.max"],
    );
    refused(&[b, b, "--max-regress", "violations=0%"], &["unknown figure \"violations\""]);
    refused(&[b, b, "--max-regress", "gap.p99=ten%"], &["malformed threshold \"gap.p99=ten%\"", "FIGURE.STAT=N%"]);
    refused(&[b, b, "--max-regress", "gap.p99=5"], &["malformed threshold \"gap.p99=5\"", "has no unit", "Nms"]);
    refused(&[b, b, "--max-regress", "gap.p99"], &["malformed threshold \"gap.p99\""]);

    let renamed = head(&dir, "renamed.json", |v| v["scenarios"][1]["name"] = "other".into());
    refused(
        &[b, &renamed],
        &[
            "different scenarios",
            &format!("missing in HEAD {renamed}: tiny-random"),
            &format!("missing in BASE {b}: other"),
        ],
    );
    let fewer = head(&dir, "fewer.json", |v| {
        v["scenarios"].as_array_mut().unwrap().remove(0);
    });
    refused(&[b, &fewer], &[&format!("missing in HEAD {fewer}: tiny-pause"), &format!("missing in BASE {b}: none")]);

    let range = head(&dir, "range.json", |v| v["seeds"] = 6.into());
    refused(
        &[b, &range],
        &[
            "different seed ranges",
            &format!("{b} has --start 2 --seeds 5"),
            &format!("{range} has --start 2 --seeds 6"),
        ],
    );
    let start = head(&dir, "start.json", |v| v["start"] = 0.into());
    refused(&[&start, b], &[&format!("{start} has --start 0 --seeds 5"), &format!("{b} has --start 2 --seeds 5")]);
    let cut = head(&dir, "cut.json", |v| {
        v["scenarios"][0]["results"].as_array_mut().unwrap().pop();
    });
    refused(&[b, &cut], &["tiny-pause: the reports ran different seeds", "5 seed(s), 2..=6", "4 seed(s), 2..=5"]);

    let shard = head(&dir, "shard.json", |v| v["shard"] = serde_json::json!({"index": 2, "of": 3}));
    refused(&[b, &shard], &[&format!("{shard}: shard 2/3 of a sharded explore"), "merge"]);
}
