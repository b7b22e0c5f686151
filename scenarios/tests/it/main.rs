//! neli-lab's integration tests: the CLI's subcommands (exit codes, output
//! shape, determinism, replay snapshots), the broken-variant story
//! (explore fails, shrink gives a smaller scenario that still fails) and
//! bad scenario files.

mod ablation;
mod artifacts;
mod bad_input;
mod broken_variant;
mod check_flags;
mod ci_files;
mod ci_output;
mod cli;
mod cli_habits;
mod defaults;
mod diff;
mod doc_facts;
mod formats;
mod gate;
mod library;
mod merge;
mod mutation_gate;
mod outside_repo;
mod progress;
mod readme;
mod replay_sweep;

use std::path::PathBuf;

// Property names come from the model's catalog, never copied.
pub use neli_models::property::{ONE_LEADER, SEND_TIME};
use std::process::{Command, Output};

/// Runs `neli-lab` with `args`; scenario names resolve in the repo's `scenarios/`.
/// `check`'s random walks, seed 1, on a bound far past the exhaustive ones:
/// the walk that found a candidate keeping an older term's evidence across
/// a new generation (docs/benchmarks-log.md, "Random walks").
pub const WIDE_WALK: [&str; 20] = [
    "check",
    "--members",
    "3",
    "--ticks",
    "30",
    "--pauses",
    "2",
    "--isolations",
    "2",
    "--clock-steps",
    "2",
    "--crashes",
    "1",
    "--heartbeat-timeout",
    "2",
    "--session-timeout",
    "6",
    "--simulate",
    "--seed",
    "1",
];

pub fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .args(args)
        .env("NELI_LAB_SCENARIOS", env!("CARGO_MANIFEST_DIR"))
        // As `cargo run` starts it, so reproduction lines read `cargo run
        // --release -p neli-lab -- …` whichever target directory built it
        // (scenarios/README.md, "Reproduction lines"); outside_repo.rs runs it bare.
        .env("CARGO", env!("CARGO"))
        .env("CARGO_PKG_NAME", "neli-lab")
        .output()
        .expect("neli-lab runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A test fixture scenario's path, as a string for the command line.
pub fn fixture(name: &str) -> String {
    format!("{}/tests/it/fixtures/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("neli-lab").join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}
