//! The subcommands' exit codes and output shape.

use crate::ONE_LEADER;
use crate::{fixture, lab, scratch, stderr, stdout};

// `list` names every shipped scenario with its description and marks the
// deliberately broken ones, so `explore --all` is known to skip them.
#[test]
fn list_shows_shipped_and_broken_scenarios() {
    let o = lab(&["list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for name in [
        "leader-pause",
        "zombie-heartbeats",
        "isolate-coordinator",
        "clock-skew",
        "poll-stall",
        "socket-drops",
        "broker-restart",
        "rebalance-storm",
        "foreign-writer",
        "close-during-rebalance",
        "rolling-restart",
        "multi-role-scale",
        "continuous-availability",
    ] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name} missing:\n{out}");
    }
    assert!(out.contains("lease-from-receipt (broken on purpose)"), "{out}");
    assert!(!out.contains("INVALID"), "{out}");
}

// A passing run prints the verdict and the three figures and exits 0; the
// timeline is an SVG with a row per member and the pause as a fault band.
#[test]
fn run_passes_and_draws_a_timeline() {
    let dir = scratch("run_passes");
    let svg = dir.join("t.svg");
    let o = lab(&["run", &fixture("tiny-pause"), "--seed", "1", "--timeline", svg.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.starts_with("build     neli-lab ") && out.contains("\nscenario  tiny-pause seed 1\n"), "{out}");
    for key in ["overlap ", "gap ", "failover ", "verdict   PASS"] {
        assert!(out.contains(key), "{key} missing:\n{out}");
    }
    let picture = std::fs::read_to_string(&svg).expect("timeline written");
    assert!(picture.starts_with("<svg") && picture.trim_end().ends_with("</svg>"));
    for row in [">m0<", ">m1<", ">m2<", "pause m", "lease of role 0", "told it leads role 0"] {
        assert!(picture.contains(row), "{row} missing from the timeline");
    }
}

// `run --history FILE` writes the run's typed history as JSON Lines: a
// versioned header, then every event in time order; it reads back, and its
// holds are the run's (the failing seed's overlap shows as two holders).
#[test]
fn run_writes_its_typed_history_as_json_lines() {
    let dir = scratch("run_history");
    let file = dir.join("h.jsonl");
    let o = lab(&["run", "lease-longer-than-session", "--seed", "1", "--history", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = std::fs::read_to_string(&file).expect("history written");
    assert!(text.starts_with(r#"{"history":1,"scenario":"lease-longer-than-session","seed":1,"#), "{text}");
    let h = neli_sim::History::from_jsonl(&text).expect("the history reads back");
    let at: Vec<u64> = h.entries.iter().map(|e| e.at()).collect();
    assert!(at.windows(2).all(|w| w[0] <= w[1]), "entries in time order");
    for kind in [
        r#""event":"acquired""#,
        r#""event":"held""#,
        r#""event":"fault""#,
        r#""event":"started""#,
        r#""event":"write""#,
    ] {
        assert!(text.contains(kind), "{kind} missing");
    }
    let overlap = h.holds().find(|x| h.holders(x.role, x.at).len() > 1);
    assert!(overlap.is_some(), "the failing seed's overlap: two holders at once");
    assert_eq!(h.to_jsonl(), text, "the history round-trips byte for byte");
    let bad = neli_sim::History::from_jsonl(&text.replacen(r#""history":1"#, r#""history":99"#, 1));
    assert_eq!(bad.as_ref().err(), Some(&neli_sim::history::HistoryError::Version(99)), "{bad:?}");
    let text = bad.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("line 1") && text.contains("version 99"), "{text}");
}

// A violated expectation exits 1 and prints a one-line reproduction.
#[test]
fn run_fails_with_exit_1_and_a_reproduction_line() {
    let o = lab(&["run", "lease-longer-than-session", "--seed", "1"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("verdict   FAIL"), "{out}");
    assert!(out.contains("violation overlap"), "{out}");
    assert!(
        out.contains("reproduce: cargo run --release -p neli-lab -- run lease-longer-than-session --seed 1"),
        "{out}"
    );
}

// `run --trace` prints the trace lines between the header and the figures.
#[test]
fn run_trace_prints_events() {
    let o = lab(&["run", &fixture("tiny-pause"), "--seed", "2", "--trace"]);
    let out = stdout(&o);
    assert!(out.contains(" Acquired role=0 token="), "{out}");
    assert!(out.contains(" sim pause m"), "{out}");
}

// The same seed replays byte for byte, and the trace is what it was when
// this snapshot was taken (a change is a behaviour change to review).
#[test]
fn replay_is_identical_and_matches_snapshot() {
    let a = lab(&["replay", &fixture("tiny-pause"), "--seed", "3"]);
    let b = lab(&["replay", &fixture("tiny-pause"), "--seed", "3"]);
    assert_eq!(a.stdout, b.stdout, "replay differs between runs");
    assert_eq!(a.status.code(), Some(0));
    insta::assert_snapshot!("replay_tiny_pause_seed3", stdout(&a));
}

// Random schedules are drawn from the seed through proptest strategies:
// the same seed replays identically, another seed draws other faults.
#[test]
fn replay_of_random_faults_is_deterministic_per_seed() {
    let a = stdout(&lab(&["replay", &fixture("tiny-random"), "--seed", "5"]));
    let b = stdout(&lab(&["replay", &fixture("tiny-random"), "--seed", "5"]));
    let c = stdout(&lab(&["replay", &fixture("tiny-random"), "--seed", "6"]));
    assert_eq!(a, b);
    let faults = |s: &str| -> Vec<String> { s.lines().filter(|l| l.contains(" sim ")).map(str::to_owned).collect() };
    assert!(!faults(&a).is_empty(), "{a}");
    assert_ne!(faults(&a), faults(&c));
    insta::assert_snapshot!("replay_tiny_random_seed5", a);
}

fn table(out: &str) -> String {
    out.lines().filter(|l| !l.starts_with("explored ")).collect::<Vec<_>>().join("\n")
}

// Explore prints one summary row per scenario and the verdict; threads do
// not change the figures.
#[test]
fn explore_summarises_and_threads_do_not_change_results() {
    let f = fixture("tiny-pause");
    let one = lab(&["explore", &f, "--seeds", "3", "--jobs", "1"]);
    let two = lab(&["explore", &f, "--seeds", "3", "--jobs", "2"]);
    assert_eq!(one.status.code(), Some(0), "{}", stdout(&one));
    let out = stdout(&one);
    assert!(out.contains("scenario    seeds  violations  overlap  gap"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("tiny-pause  3      0 ")), "{out}");
    assert!(out.contains("verdict   PASS"));
    assert_eq!(table(&out), table(&stdout(&two)));
}

// Shards split the seeds: 2/2 of 5 seeds from 10 runs 11 and 13.
#[test]
fn explore_shard_runs_its_share_and_rejects_nonsense() {
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "5", "--start", "10", "--shard", "2/2"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("x 2 seed(s) from 10, shard 2/2"), "{}", stdout(&o));
    let bad = lab(&["explore", &fixture("tiny-pause"), "--seeds", "5", "--shard", "3/2"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--shard \"3/2\": need 1 <= i <= n"), "{}", stderr(&bad));
}

// Tune writes the CSV and the chart and names the safe region: T=1s < S=3s
// is safe and recommended.
#[test]
fn tune_writes_csv_chart_and_recommendation() {
    let dir = scratch("tune");
    let o = lab(&[
        "tune",
        &fixture("tiny-pause"),
        "--heartbeat-timeout",
        "1s,500ms",
        "--session-timeout",
        "3s",
        "--seeds",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("safe region: "), "{out}");
    assert!(out.contains("recommended: T="), "{out}");
    let csv = std::fs::read_to_string(dir.join("tune.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.starts_with("heartbeat_timeout_ms,session_timeout_ms,grace_ms,"));
    assert!(csv.contains("\n1000,3000,0,2,"), "{csv}");
    let svg = std::fs::read_to_string(dir.join("tune.svg")).expect("svg");
    assert!(svg.starts_with("<svg") && svg.contains("T=500ms S=3s"));
    let bad = lab(&[
        "tune",
        &fixture("tiny-pause"),
        "--heartbeat-timeout",
        "1 s",
        "--session-timeout",
        "3s",
        "--seeds",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--heartbeat-timeout"), "{}", stderr(&bad));
}

// Bench reports seeds/s and simulated seconds per wall second.
#[test]
fn bench_reports_rates() {
    let o = lab(&["bench", &fixture("tiny-pause"), "--seeds", "2", "--jobs", "1"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("threads  wall s  seeds/s  simulated s per wall s"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("1 ") && l.trim_end().ends_with('x')), "{out}");
}

// The model checker passes the recommended configuration and, for goNELI's
// lease-from-receipt without membership proof, reports the two-leader
// counterexample and writes it as a scenario file the simulator loads.
#[test]
fn check_passes_recommended_and_writes_counterexamples() {
    let ok = lab(&["check", "--members", "2", "--ticks", "6"]);
    let out = stdout(&ok);
    assert_eq!(ok.status.code(), Some(0), "{out}{}", stderr(&ok));
    assert!(out.contains(&format!("holds     {ONE_LEADER}")), "{out}");
    assert!(out.contains("verdict   PASS"), "{out}");
    let plain = lab(&["check", "--members", "2", "--ticks", "5", "--no-symmetry"]);
    assert_eq!(plain.status.code(), Some(0), "{}", stdout(&plain));
    let sym = lab(&["check", "--members", "2", "--ticks", "5"]);
    assert_eq!(sym.status.code(), Some(0), "{}", stdout(&sym));
    let dir = scratch("check");
    let bad = lab(&[
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
    ]);
    let out = stdout(&bad);
    assert_eq!(bad.status.code(), Some(1), "{out}");
    assert!(out.contains(&format!("VIOLATED  {ONE_LEADER}")), "{out}");
    let file = dir.join("check-at-most-one-leader-per-role.toml");
    let s = neli_sim::Scenario::load(&file).expect("the counterexample is a valid scenario");
    assert_eq!(s.election.members, 2);
    assert!(!s.faults.is_empty());
    assert!(out.contains(&format!("run {}", file.display())), "{out}");
    // Aimed at the leader, the pause resumed where the model resumed it and
    // the application asking between pulses, the simulator shows it too.
    assert!(out.contains("replay    REPRODUCED by the simulator with seed "), "{out}");
    assert!(!out.contains("NOT REPRODUCED"), "{out}");
    // The model path is written too and replays step by step on the core.
    let path = std::fs::read_to_string(dir.join("check-at-most-one-leader-per-role.path")).expect("the path file");
    assert!(path.starts_with("# neli-lab "), "{path}");
    let mut cfg = neli_models::ElectionModelCfg::exclusive(2);
    (cfg.session_timeout, cfg.max_ticks, cfg.membership_proof) = (4, 8, false);
    cfg.variant.lease_from_receipt = true;
    cfg.faults.pauses = 1;
    neli_models::replay_path(&cfg.into_model(), &path).expect("the written path replays on the core");
}

// An installed neli-lab (`cargo install --path scenarios`) finds the shipped
// scenarios without the source tree: they are embedded at build time and used
// when the directory it was built from is gone, or on request. Same list,
// same runs as from the files.
#[test]
fn embedded_scenarios_match_the_files() {
    let embedded = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_neli-lab"))
            .args(args)
            .env("NELI_LAB_SCENARIOS", "embedded")
            .output()
            .expect("neli-lab runs")
    };
    let files = lab(&["list"]);
    let inside = embedded(&["list"]);
    assert!(inside.status.success(), "{}", stderr(&inside));
    assert_eq!(stdout(&inside), stdout(&files), "the embedded list is the shipped list");
    let a = lab(&["run", "leader-pause", "--seed", "3"]);
    let b = embedded(&["run", "leader-pause", "--seed", "3"]);
    assert_eq!(a.status.code(), b.status.code());
    assert_eq!(stdout(&a), stdout(&b), "the embedded scenario runs the same");
    let broken = embedded(&["run", "lease-longer-than-session", "--seed", "1"]);
    assert_eq!(broken.status.code(), Some(1), "broken/ is embedded too: {}", stdout(&broken));
    let missing = embedded(&["run", "no-such-scenario"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("among the embedded ones"), "{}", stderr(&missing));
}

// Ctrl-C during `explore`: the seeds in flight finish, the summary covers
// what ran (and says so), and the exit status is 130, not a verdict.
#[test]
fn interrupted_explore_prints_a_partial_summary_and_exits_130() {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .args(["explore", "swarm", "--seeds", "100000", "--jobs", "1"])
        .env("NELI_LAB_SCENARIOS", env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("neli-lab starts");
    // The handler is installed first thing in main; by now seeds are running.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(sent.success());
    let out = child.wait_with_output().expect("neli-lab ends");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("swarm") && stdout.contains("verdict"), "a summary of what ran: {stdout}");
    assert!(stderr.contains("interrupted after") && stderr.contains("of 100000 run(s)"), "{stderr}");
}

// --fail-fast stops after the first scenario that must pass and failed:
// the broken one runs, the passing one after it does not, and stderr says so.
#[test]
fn explore_fail_fast_stops_at_the_first_failing_scenario() {
    let broken = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("broken/receipt-time-lease.toml");
    let broken = broken.to_str().expect("utf-8 path");
    let o = lab(&["explore", broken, &fixture("tiny-pause"), "--seeds", "2", "--fail-fast"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("receipt-time-lease ")), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("tiny-pause ")), "the scenario after the failing one ran:\n{out}");
    assert!(
        stderr(&o)
            .contains("--fail-fast: stopped after receipt-time-lease failed; 1 scenario run(s) after it not started"),
        "{}",
        stderr(&o)
    );
    // Without it, both run.
    let all = lab(&["explore", broken, &fixture("tiny-pause"), "--seeds", "2"]);
    assert!(stdout(&all).lines().any(|l| l.starts_with("tiny-pause ")), "{}", stdout(&all));
}
