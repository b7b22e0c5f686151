//! `neli-lab`'s commands, one file each: its flags (clap) and the few lines
//! that hand them to the library and print the report it returns. Nothing
//! here decides a verdict, a plan or a refusal; `src/main.rs` only
//! dispatches.

pub mod bench;
pub mod check;
pub mod completions;
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

/// The parser of a thread-count flag (`--jobs`, `check --threads`): 1 or
/// more. 0 is refused, naming the flag and the value, with clap's exit 2,
/// rather than quietly run on one thread.
#[derive(Clone, Copy, Debug)]
pub struct Threads {
    /// The count when the flag is left out; `None`: one per core.
    default: Option<usize>,
}

impl Threads {
    /// `--jobs`: one thread per core when left out.
    pub const PER_CORE: Threads = Threads { default: None };
    /// `check --threads`: the checker's default when left out.
    pub const CHECKER: Threads = Threads { default: Some(crate::model_check::DEFAULT_THREADS) };

    /// `text` as a thread count for `flag`, or why not.
    pub fn count(self, flag: &str, text: &str) -> Result<usize, String> {
        let otherwise = match self.default {
            None => "leave it out for one per core".to_owned(),
            Some(n) => format!("leave it out for the default, {n}"),
        };
        match text.trim().parse::<usize>() {
            Ok(0) => Err(format!("{flag} 0: at least 1 thread ({otherwise})")),
            Ok(n) => Ok(n),
            Err(_) => {
                Err(format!("{flag} {text:?}: not a thread count; write a whole number, 1 or more ({otherwise})"))
            }
        }
    }
}

impl clap::builder::TypedValueParser for Threads {
    type Value = usize;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<usize, clap::Error> {
        let flag = arg.and_then(clap::Arg::get_long).map_or_else(|| "threads".to_owned(), |l| format!("--{l}"));
        self.count(&flag, &value.to_string_lossy())
            .map_err(|msg| clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{msg}\n")).with_cmd(cmd))
    }
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
    /// Threads, 1 or more (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = Threads::PER_CORE)]
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
