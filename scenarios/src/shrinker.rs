//! `neli-lab shrink`: the simulator's shrinker (`neli_sim::shrink`) with a
//! progress bar, and the file `shrink` writes, checked to replay.

use indicatif::ProgressBar;
use neli_sim::{Scenario, ScenarioError, run_scenario};

use crate::schedule;
pub use neli_sim::shrink::{Shrunk, shrink};

/// [`shrink`], ticking `bar` once per simulation run (its length is the
/// budget, so its ETA is an upper bound).
pub fn shrink_with_progress(s: &Scenario, seed: u64, budget: u32, bar: &ProgressBar) -> Option<Shrunk> {
    neli_sim::shrink::shrink_with(s, seed, budget, &mut |c| {
        bar.inc(1);
        run_scenario(c, seed).violations
    })
}

/// A shrunk scenario as the file `shrink` writes, checked to parse and
/// fail deterministically when read back, with the line `shrink` prints
/// about it.
pub struct ShrunkFile {
    pub text: String,
    pub summary: String,
}

/// Why a shrunk scenario cannot be written: the file would not reproduce
/// the failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShrinkFileError {
    #[error(transparent)]
    Unwritable(#[from] ScenarioError),
    #[error("internal: shrunk scenario does not parse: {0}")]
    DoesNotParse(ScenarioError),
    #[error("internal: the shrunk scenario does not fail deterministically")]
    NotDeterministic,
}

/// The file of `shrunk`, the result of shrinking `original` (given as
/// `arg`) at `seed`; an error if the file would not reproduce the failure.
pub fn to_file(original: &Scenario, arg: &str, seed: u64, shrunk: &Shrunk) -> Result<ShrunkFile, ShrinkFileError> {
    let before = schedule::materialize(original, seed);
    let mut sc = shrunk.scenario.clone();
    sc.name = format!("{}-shrunk", original.name);
    sc.description = format!("{} seed {seed}, shrunk: {}", original.name, shrunk.class);
    sc.seed = Some(seed);
    let header = vec![
        format!("shrunk by: {} shrink {arg} --seed {seed} ({} runs)", crate::repro(), shrunk.runs),
        format!("fails with: {}", shrunk.violations.first().map(ToString::to_string).unwrap_or_default()),
    ];
    let text = sc.to_toml(&header)?;
    let check = Scenario::parse(&text, "<shrunk>").map_err(ShrinkFileError::DoesNotParse)?;
    let (r1, r2) = (run_scenario(&check, seed), run_scenario(&check, seed));
    if r1.passed() || r1.trace != r2.trace {
        return Err(ShrinkFileError::NotDeterministic);
    }
    let summary = format!(
        "shrunk {} seed {seed} in {} runs: faults {} -> {}, duration {} -> {}, members {} -> {} (still: {})",
        original.name,
        shrunk.runs,
        before.faults.len(),
        sc.faults.len(),
        before.duration,
        sc.duration,
        before.election.members,
        sc.election.members,
        shrunk.class
    );
    Ok(ShrunkFile { text, summary })
}
