//! What each `neli-lab` command found, as one value per command
//! ([`Explore`], [`Run`], [`Tune`], [`Check`], [`Gate`], [`Diff`]) rendered in the three forms it
//! prints (`--format`): text for a person, JSON for tools (and `merge`),
//! JUnit XML for CI test reports. Rendering all three from one value is what
//! keeps them from disagreeing. The JSON schemas and the exit codes are
//! documented in `scenarios/README.md` ("Output formats and exit codes").

mod check_report;
mod diff_report;
mod explore_report;
mod gate_report;

mod markdown;
mod run_report;
mod shard_merge;
mod thresholds;
mod tune_report;

pub use check_report::*;
pub use diff_report::*;
pub use explore_report::*;
pub use gate_report::*;
pub use neli_sim::junit::{Case, CaseFailure, document, junit, suite};
pub use run_report::*;
pub use shard_merge::{MergeError, merge};
pub use thresholds::*;
pub use tune_report::*;

/// The output form of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tables for a person (the default).
    Text,
    /// One JSON document (`scenarios/README.md`, "JSON").
    Json,
    /// JUnit XML (`explore`: one testcase per scenario; each command's
    /// `--format` help says what its testcases are).
    Junit,
    /// JSON Lines: `explore` prints a header line naming the build, one
    /// line per finished seed as each scenario finishes, then a summary
    /// line; other commands print their JSON document on one line
    /// (`scenarios/README.md`, "JSON Lines").
    Jsonl,
    /// A Markdown summary for a CI step page: verdict, table, failures
    /// with their reproduction.
    Markdown,
}

/// A report as one line of JSON: `--format jsonl` of a command that has
/// no per-seed lines.
fn one_line(report: &impl serde::Serialize) -> String {
    let mut s = serde_json::to_string(report).expect("a report serialises");
    s.push('\n');
    s
}

/// A report as pretty JSON with a trailing newline: the one JSON form of
/// every report.
fn pretty_json(report: &impl serde::Serialize) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("a report serialises");
    s.push('\n');
    s
}
