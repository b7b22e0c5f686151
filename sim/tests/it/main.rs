//! neli-sim's integration tests: determinism, trace snapshots, one test per
//! docs/background.md, Hazards (the recommended configuration survives it; a broken
//! variant is flagged), scenario-file errors and the swarm.

mod ablation_reuse;
mod determinism;
mod fuzz_corpus;
mod harness;
mod harness_runs;
mod hazards;
mod oracle;
mod outside;
mod overlap;
mod packaged;
mod profiles;
mod protocols;
mod rules;
mod runtime;
mod scenario_files;
mod snapshots;
mod swarm;

use neli_sim::{Rule, RunReport, Scenario, run_scenario};

/// Parses a test's story (a file under `scenarios/`, read in with
/// `include_str!`) and keeps a copy under `target/neli-sim-scenarios/` so a
/// failure can be reproduced with one command.
pub fn scenario(toml: &str) -> Scenario {
    let s = Scenario::parse(toml, "<test>").unwrap_or_else(|e| panic!("test scenario invalid: {e}"));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/neli-sim-scenarios");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(format!("{}.toml", s.name)), toml);
    s
}

/// The one-line command that replays `s` with `seed`.
pub fn repro(s: &Scenario, seed: u64) -> String {
    format!("cargo run -p neli-sim --example run -- target/neli-sim-scenarios/{}.toml --seed {seed}", s.name)
}

/// Runs `s` with `seed`; on violations prints the trace tail and a one-line
/// reproduction command, then fails.
pub fn assert_survives(s: &Scenario, seed: u64) -> RunReport {
    let r = run_scenario(s, seed);
    if !r.passed() {
        for line in r.trace.iter().rev().take(40).rev() {
            eprintln!("{line}");
        }
        panic!("scenario {} seed {seed} violated: {:?}\nreproduce: {}", s.name, r.violations, repro(s, seed));
    }
    r
}

/// Some seed in `seeds` makes the oracles flag `s` with one of `rules`.
pub fn assert_flagged(s: &Scenario, seeds: std::ops::Range<u64>, rules: &[Rule]) -> RunReport {
    for seed in seeds.clone() {
        let r = run_scenario(s, seed);
        if r.violations.iter().any(|v| rules.contains(&v.rule)) {
            return r;
        }
    }
    panic!("no seed in {seeds:?} made the oracles report any of {rules:?} for broken scenario {}", s.name);
}
