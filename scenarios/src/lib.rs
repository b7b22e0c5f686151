//! neli-lab's library: finding scenario files, running seeds across threads,
//! shrinking failing schedules, sweeping timings and drawing SVG pictures.
//! The `neli-lab` binary (`src/main.rs`) declares the commands and
//! dispatches to [`cmd`], one module per command.

pub mod artifacts;
pub mod catalog;
pub mod cmd;
pub mod interrupt;
pub mod invocation;
pub mod model_check;
pub mod parallel;
pub mod plan;
pub mod progress;
pub mod regressions;
pub mod report;
pub mod shrinker;
pub mod stats;
pub use neli_sim::svg;
pub mod sweep;

pub use neli_sim::schedule;
use neli_sim::{RunReport, Scenario, run_scenario};

/// The build this binary was made from, e.g. `neli-lab 0.0.0 commit
/// 47402fb… clean` (`dirty` when the tree differed from the commit; see
/// `scenarios/build.rs`). The first line of `check`, `explore` and `run`
/// (`replay`'s on stderr, its stdout being the trace alone).
pub const BUILD: &str =
    concat!("neli-lab ", env!("CARGO_PKG_VERSION"), " commit ", env!("NELI_LAB_COMMIT"), " ", env!("NELI_LAB_TREE"));

/// What `neli-lab --version` prints after the program name.
pub const VERSION: &str =
    concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("NELI_LAB_COMMIT"), ", ", env!("NELI_LAB_TREE"), ")");

/// The header line naming the build: `build     neli-lab 0.0.0 commit … clean`.
pub fn build_line() -> String {
    format!("build     {BUILD}")
}

/// The command prefix of every reproduction line: how this program was
/// run ([`invocation`]).
pub fn repro() -> &'static str {
    invocation::repro()
}

/// Runs `s` with `seed`; its `[random]` table is drawn by
/// [`schedule::materialize`] (inside [`run_scenario`]), the generator
/// `shrink` also walks, so what runs is what `shrink` minimises.
pub fn run(s: &Scenario, seed: u64) -> RunReport {
    run_scenario(s, seed)
}

pub use neli_sim::oracle::secs;
