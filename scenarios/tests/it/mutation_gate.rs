//! The harness as one test command, so mutation testing can ask it whether a
//! mutant of the election rules is caught (scripts/mutants.sh; docs/background.md,
//! "Why the harness notices a weakened rule"):
//! every shipped scenario over `NELI_GATE_SEEDS` seeds (default 30), also
//! with each layer of the lease off (`--ablate`: the heartbeat rules carry
//! weight where the proof is off), and `check` with its defaults in each of
//! the three modes and seed 1 of `check --simulate` on a wide bound must
//! pass; `check --variant X` for each unsafe lease variant and every broken
//! scenario must fail. On the unmutated code all of that holds; a
//! mutant that breaks any of it is "caught by the harness".

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::stdout;

/// Broken scenarios that fail only because of their `variant` line.
const VARIANT_ONLY: [&str; 3] = ["receipt-time-lease", "foreign-record-counts", "garbage-counts"];

fn seeds() -> String {
    std::env::var("NELI_GATE_SEEDS").unwrap_or_else(|_| "30".into())
}

/// How long the whole gate may take (`NELI_GATE_TIMEOUT` seconds; default
/// 1200, several times its time on 2 cores). scripts/mutants.sh sets it
/// below cargo-mutants' own per-mutant timeout: a mutant that makes
/// `neli-lab` spin (a zero-length timer, a model step that never ends)
/// then fails the gate, and its `neli-lab` is killed here, instead of
/// outliving cargo-mutants' timeout in a process group of its own.
fn gate_budget() -> Duration {
    let secs = match std::env::var("NELI_GATE_TIMEOUT") {
        Err(_) => 1200,
        Ok(v) => match v.parse::<u64>() {
            Ok(secs) if secs > 0 => secs,
            _ => panic!("NELI_GATE_TIMEOUT must be a positive number of seconds, got {v:?}"),
        },
    };
    Duration::from_secs(secs)
}

/// `neli-lab args`, killed once `deadline` passes (the test then fails,
/// naming the command and the budget it ran out of).
fn lab_until(args: &[&str], deadline: Instant) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .args(args)
        .env("NELI_LAB_SCENARIOS", env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("neli-lab runs");
    // Drained while it runs, so a full pipe never stalls it.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes).unwrap_or_default()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let status = loop {
        if let Some(status) = child.try_wait().expect("neli-lab's status") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "neli-lab {} did not finish within the gate's budget of {:?} (NELI_GATE_TIMEOUT): killed",
                args.join(" "),
                gate_budget()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output { status, stdout: out.join().expect("stdout reader"), stderr: err.join().expect("stderr reader") }
}

#[test]
#[ignore = "the mutation gate, about a minute in a release build; scripts/mutants.sh runs it, and by hand: cargo test --release -p neli-lab --test it mutation_gate -- --include-ignored"]
fn the_harness_passes_explore_all_and_check() {
    // Cheapest first, and explore stops at its first failing scenario: a
    // caught mutant costs seconds, so a whole mutation run fits a session
    // (docs/benchmarks-log.md, "Mutation testing").
    let seeds = seeds();
    let deadline = Instant::now() + gate_budget();
    let lab = |args: &[&str]| lab_until(args, deadline);
    // `check` with its defaults in each mode: non-exclusive mode is the one
    // where a resumed member drains still-fresh heartbeats (T > S), so only
    // it needs the proof to be newer than the evidence.
    for mode in ["non-exclusive", "multi-role", "exclusive"] {
        let check = lab(&["check", "--mode", mode, "--sim-seeds", "0"]);
        let out = stdout(&check);
        assert!(check.status.success(), "check --mode {mode} failed ({}):\n{out}", check.status);
        assert!(out.contains("verdict   PASS"), "check --mode {mode} printed no PASS verdict:\n{out}");
    }
    // Random walks far past the exhaustive bound, 1.5 s: a path no
    // exhaustive default bound and no shipped scenario reaches.
    let walk = [&crate::WIDE_WALK[..], &["--sim-seeds", "0"]].concat();
    let o = lab(&walk);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "check --simulate --seed 1 must find nothing (exit 3, INCOMPLETE):\n{out}");
    assert!(!out.contains("VIOLATED"), "check --simulate --seed 1 found a violation:\n{out}");
    // Each unsafe lease variant with `check`'s defaults, proof on: the
    // overlap properties cannot see them (the proof caps the lease), the
    // model's send-time property can, so a switch that stops turning a
    // variant on is noticed by the model as well as by the simulator.
    for variant in ["lease-from-receipt", "any-record-counts"] {
        let check = lab(&["check", "--variant", variant, "--sim-seeds", "0"]);
        let out = stdout(&check);
        assert_eq!(check.status.code(), Some(1), "check --variant {variant} must fail:\n{out}");
        assert!(out.contains("VIOLATED  send-time"), "check --variant {variant}: no send-time violation:\n{out}");
    }
    // A scenario that must fail is a test too: each broken configuration
    // (scenarios/broken/) must still be caught. Those broken only by their
    // unsafe variant must also pass with variant = "recommended", or they do
    // not test the switch that turns the variant on.
    let broken = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("broken");
    let mut files: Vec<_> = std::fs::read_dir(&broken)
        .expect("scenarios/broken")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no broken scenarios in {}", broken.display());
    let twins = crate::scratch("mutation_gate");
    for file in files {
        let name = file.file_stem().expect("a file name").to_string_lossy().into_owned();
        let path = file.display().to_string();
        let o = lab(&["explore", &path, "--seeds", &seeds]);
        assert_eq!(o.status.code(), Some(1), "{path} must fail in one of {seeds} seeds:\n{}", stdout(&o));
        if VARIANT_ONLY.contains(&name.as_str()) {
            let text = std::fs::read_to_string(&file).expect("a broken scenario");
            let line = text.lines().find(|l| l.starts_with("variant = ")).expect("a variant line");
            let twin = twins.join(format!("{name}.toml"));
            std::fs::write(&twin, text.replace(line, "variant = \"recommended\"")).expect("write the twin");
            let o = lab(&["explore", twin.to_str().expect("utf-8 path"), "--seeds", &seeds]);
            assert_eq!(o.status.code(), Some(0), "{path} with variant = \"recommended\" must pass:\n{}", stdout(&o));
        }
    }
    let explore = lab(&["explore", "--all", "--seeds", &seeds, "--ablate", "--fail-fast"]);
    let out = stdout(&explore);
    assert!(
        explore.status.success(),
        "explore --all --seeds {seeds} --ablate failed ({}):\n{}",
        explore.status,
        out.lines()
            .filter(|l| l.contains(" of ") || l.contains("must fail") || l.starts_with("verdict"))
            .take(8)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(out.contains("verdict   PASS"), "explore printed no PASS verdict:\n{out}");
}

/// A `neli-lab` still running at the gate's deadline is killed and the gate
/// fails naming it, instead of waiting for it (a spinning mutant's run
/// outlived cargo-mutants' timeout before). The bound here (pause,
/// isolation, clock step and log loss together) runs far past the instant
/// deadline given.
#[test]
fn a_gate_run_past_its_deadline_is_killed_and_named() {
    let args =
        ["check", "--members", "3", "--ticks", "10", "--clock-steps", "1", "--log-losses", "1", "--sim-seeds", "0"];
    let run = std::panic::catch_unwind(|| lab_until(&args, Instant::now()));
    let panic = run.expect_err("a run past its deadline must fail the gate");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("did not finish within the gate's budget"), "{message}");
    assert!(message.contains("--log-losses 1"), "the message must name the command: {message}");
}
