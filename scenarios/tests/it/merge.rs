//! Shards that add up (scenarios/README.md, "Sharding and merge"): `explore
//! --shard i/n --format json` on n machines plus `neli-lab merge` prints what
//! one run over all seeds prints and exits the same way.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::{fixture, lab, scratch, stderr, stdout};

const SEEDS: &str = "10";
const START: &str = "3";

fn spawn_shard(i: u32, n: u32, scenarios: &[String], out: &Path) -> Child {
    let file = std::fs::File::create(out).expect("shard report file");
    Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .arg("explore")
        .args(scenarios)
        .args(["--seeds", SEEDS, "--start", START, "--shard", &format!("{i}/{n}"), "--format", "json"])
        .env("NELI_LAB_SCENARIOS", env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::from(file))
        .stderr(Stdio::null())
        .spawn()
        .expect("neli-lab starts")
}

/// Runs 4 shards as separate processes at once; returns their report files.
fn four_shards(dir: &Path, scenarios: &[String]) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = (1..=4).map(|i| dir.join(format!("shard-{i}.json"))).collect();
    let children: Vec<Child> = files.iter().zip(1..).map(|(f, i)| spawn_shard(i, 4, scenarios, f)).collect();
    for mut c in children {
        let status = c.wait().expect("shard finishes");
        assert!(matches!(status.code(), Some(0 | 1)), "a shard failed to run: {status}");
    }
    files
}

/// Every line but `explored …`, the one naming wall time, threads and shards.
fn without_timing(s: &str) -> String {
    s.lines().filter(|l| !l.starts_with("explored ")).map(|l| format!("{l}\n")).collect()
}

// Four shards run as separate processes, merged, give byte for byte the
// table, verdict and failing seeds of one run over all seeds (only the
// `explored` timing line differs, and it says it was merged), and the same
// exit code; merging in another order changes nothing.
#[test]
fn four_shards_merge_to_the_single_run() {
    let dir = scratch("merge");
    let scenarios = vec![fixture("tiny-pause"), fixture("random-broken")];
    let files = four_shards(&dir, &scenarios);
    let mut args: Vec<String> = vec!["explore".into()];
    args.extend(scenarios.iter().cloned());
    args.extend(["--seeds", SEEDS, "--start", START].map(String::from));
    let one = lab(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(one.status.code(), Some(1), "random-broken fails some seed: {}", stdout(&one));

    let paths: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let merged = lab(&[&["merge"], paths.as_slice()].concat());
    assert_eq!(merged.status.code(), one.status.code(), "{}", stderr(&merged));
    assert_eq!(without_timing(&stdout(&merged)), without_timing(&stdout(&one)));
    assert!(stdout(&merged).contains(", merged from 4 shard(s) "), "{}", stdout(&merged));
    assert!(stdout(&one).contains("verdict   FAIL"), "{}", stdout(&one));

    let reversed: Vec<&str> = paths.iter().rev().copied().collect();
    let again = lab(&[&["merge"], reversed.as_slice()].concat());
    assert_eq!(without_timing(&stdout(&again)), without_timing(&stdout(&one)));

    // The merged JSON carries every seed once, in order, and equals the
    // single run's JSON in everything but wall time, threads and shard count.
    let json = lab(&[&["merge", "--format", "json"], paths.as_slice()].concat());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let single = lab(&[args.iter().map(String::as_str).collect::<Vec<_>>(), vec!["--format", "json"]].concat());
    let w: serde_json::Value = serde_json::from_slice(&single.stdout).expect("JSON");
    let results = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| serde_json::json!([s["name"], s["arg"], s["summary"], s["failing"], s["results"]]))
            .collect()
    };
    assert_eq!(results(&v), results(&w));
    assert_eq!(
        (&v["build"], &v["start"], &v["seeds"], &v["shard"]),
        (&w["build"], &w["start"], &w["seeds"], &w["shard"])
    );
    assert_eq!(v["merged_shards"], 4);
    let seeds: Vec<u64> =
        v["scenarios"][1]["results"].as_array().unwrap().iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, (3..13).collect::<Vec<u64>>());
}

// Merge refuses inconsistent inputs with exit 2 naming the file: a missing
// shard, a duplicate shard, another seed range, another scenario set,
// another build, and a file that is not a report.
#[test]
fn merge_refuses_inconsistent_shards_naming_the_file() {
    let dir = scratch("merge_bad");
    let scenarios = vec![fixture("tiny-pause")];
    let files = four_shards(&dir, &scenarios);
    let p: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let refused = |args: &[&str], needle: &str| {
        let o = lab(&[&["merge"], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        assert!(o.stdout.is_empty(), "{}", stdout(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: expected {needle:?} in: {}", stderr(&o));
    };
    refused(&[p[0], p[1], p[2]], "shard(s) 4/4 missing");
    refused(&[p[0], p[1], p[2], p[3], p[1]], &format!("{}: shard 2/4 given twice", p[1]));

    let edit = |name: &str, f: &dyn Fn(&mut serde_json::Value)| -> String {
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[3]).unwrap()).unwrap();
        f(&mut v);
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let range = edit("range.json", &|v| v["seeds"] = 11.into());
    refused(&[p[0], p[1], p[2], &range], &format!("{range}: seed range --start 3 --seeds 11 differs"));
    let set = edit("set.json", &|v| v["scenarios"][0]["name"] = "other".into());
    refused(&[p[0], p[1], p[2], &set], &format!("{set}: scenario list"));
    let build = edit("build.json", &|v| v["build"] = "neli-lab 0.0.0 commit 0000000 clean".into());
    refused(&[p[0], p[1], p[2], &build], &format!("{build}: build"));
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"schema\": 1}").unwrap();
    let junk = junk.to_str().unwrap();
    refused(&[p[0], junk], &format!("{junk}: not an explore JSON report"));
    refused(&[], "give the shard reports");
}
