//! `neli-lab`'s commands, one file each: its flags (clap) and the few lines
//! that hand them to the library and print the report it returns. Nothing
//! here decides a verdict, a plan or a refusal; `src/main.rs` only
//! dispatches.

pub mod bench;
pub mod check;
pub mod diff;
pub mod explore;
pub mod gate;
pub mod list;
pub mod merge;
pub mod run;
pub mod shrink;
pub mod tune;

use std::process::ExitCode;

/// A refused input: the message on stderr, exit 2.
pub fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// Exit 0 when `passed`, else 1.
pub fn verdict_code(passed: bool) -> ExitCode {
    if passed { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// Worker threads: `--jobs`, else the number of cores.
pub fn jobs(j: Option<usize>) -> usize {
    j.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1)
}

/// The seeds of a multi-seed command and the threads that run them.
#[derive(clap::Args, Debug, Clone)]
pub struct SeedRange {
    /// How many seeds per scenario (or per configuration).
    #[arg(long)]
    pub seeds: u64,
    /// The first seed, or `auto`: one drawn from the clock (printed, so the
    /// run can be repeated), so that nightly runs explore new seeds.
    #[arg(long, default_value = "0", value_name = "SEED|auto")]
    pub start: Start,
    /// Threads (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// A file a command could not write, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot write: {source}", path.display())]
pub struct WriteError {
    pub path: std::path::PathBuf,
    pub source: std::io::Error,
}

/// Writes `body` to `path`, or says which file could not be written.
pub fn write(path: &std::path::Path, body: impl AsRef<[u8]>) -> Result<(), WriteError> {
    std::fs::write(path, body).map_err(|source| WriteError { path: path.to_owned(), source })
}

/// `--start`: a seed, or `auto` (the harness's own `Start`: the same
/// rule for `explore` and a team's harness test).
pub use neli_sim::harness::Start;
