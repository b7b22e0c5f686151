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

/// `--start`: a seed, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Seed(u64),
    /// Drawn from the clock when the command starts.
    Auto,
}

impl std::str::FromStr for Start {
    type Err = String;
    fn from_str(text: &str) -> Result<Start, String> {
        if text == "auto" {
            return Ok(Start::Auto);
        }
        text.parse().map(Start::Seed).map_err(|_| format!("{text:?} is neither a seed (0 to {}) nor `auto`", u64::MAX))
    }
}

impl Start {
    /// The first seed: the one given, or for `auto` the microseconds since
    /// the Unix epoch. A run of N seeds takes far longer than N
    /// microseconds, so runs started one after another never share a seed;
    /// the number stays far from `u64::MAX` (2^51 today), so start + seeds
    /// cannot overflow. A shard (`sharded`) takes the first microsecond of
    /// the UTC day instead, so that every shard of one night draws the same
    /// range (and `merge` accepts them) while each night's differs.
    pub fn resolve(self, sharded: bool) -> u64 {
        const DAY_US: u64 = 86_400_000_000;
        match self {
            Start::Seed(s) => s,
            Start::Auto => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX / 2));
                if sharded { now - now % DAY_US } else { now }
            }
        }
    }

    pub fn is_auto(self) -> bool {
        self == Start::Auto
    }
}
