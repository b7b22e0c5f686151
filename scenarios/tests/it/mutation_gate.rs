//! The harness as one test command, so mutation testing can ask it whether a
//! mutant of the election rules is caught (scripts/mutants.sh, issue 11):
//! every shipped scenario over `NELI_GATE_SEEDS` seeds (default 30), also
//! with each layer of the lease off (`--ablate`: the heartbeat rules carry
//! weight where the proof is off), and `check` with its defaults in each of
//! the three modes and seed 1 of `check --simulate` on a wide bound must
//! pass; `check --variant X` for each unsafe lease variant and every broken
//! scenario must fail. On the unmutated code all of that holds; a
//! mutant that breaks any of it is "caught by the harness".

use crate::{lab, stdout};

/// Broken scenarios that fail only because of their `variant` line.
const VARIANT_ONLY: [&str; 3] = ["receipt-time-lease", "foreign-record-counts", "garbage-counts"];

fn seeds() -> String {
    std::env::var("NELI_GATE_SEEDS").unwrap_or_else(|_| "30".into())
}

#[test]
#[ignore = "the mutation gate, about a minute in a release build; scripts/mutants.sh runs it, and by hand: cargo test --release -p neli-scenarios --test it mutation_gate -- --include-ignored"]
fn the_harness_passes_explore_all_and_check() {
    // Cheapest first, and explore stops at its first failing scenario: a
    // caught mutant costs seconds, so a whole mutation run fits a session
    // (BENCHMARKS.md, "Mutation testing").
    let seeds = seeds();
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
