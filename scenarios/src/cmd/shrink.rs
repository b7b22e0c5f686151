//! `neli-lab shrink`: a failing run minimised into a scenario file that
//! still fails the same way.

use std::path::PathBuf;
use std::process::ExitCode;

use neli_sim::scenario::Layer;

use super::{fail, write};
use crate::invocation::quote;
use crate::{catalog, repro, shrinker};

#[derive(clap::Args, Debug)]
pub struct ShrinkArgs {
    scenario: String,
    #[arg(long)]
    seed: u64,
    /// Where to write the shrunk scenario (default: stdout).
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// At most this many simulation runs (at least 1: with none, nothing
    /// could be tried).
    #[arg(long, default_value_t = 300)]
    budget: u32,
    /// Shrink the run with this layer switched off, as `run --without`.
    #[arg(long, value_name = "LAYER", value_parser = Layer::parse)]
    without: Option<Layer>,
}

pub fn run(a: ShrinkArgs) -> ExitCode {
    if a.budget == 0 {
        return fail(
            "--budget 0: shrinking needs at least one simulation run (the first re-runs the failing seed); give --budget 1 or more",
        );
    }
    let e = match catalog::load_without(&a.scenario, a.without) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    let b = crate::progress::bar_of(u64::from(a.budget), "runs");
    b.set_prefix(format!("shrink {}", e.scenario.name));
    let shrunk = shrinker::shrink_with_progress(&e.scenario, a.seed, a.budget, &b);
    b.finish_and_clear();
    let Some(s) = shrunk else {
        eprintln!("{} seed {} does not fail: nothing to shrink", e.scenario.name, a.seed);
        return ExitCode::from(1);
    };
    let file = match shrinker::to_file(&e.scenario, &a.scenario, a.seed, &s) {
        Ok(f) => f,
        Err(err) => return fail(err),
    };
    eprintln!("{}", file.summary);
    match a.out {
        Some(path) => {
            if let Err(err) = write(&path, file.text) {
                return fail(err);
            }
            eprintln!("wrote {}; reproduce: {} run {}", path.display(), repro(), quote(&path.display().to_string()));
        }
        None => print!("{}", file.text),
    }
    ExitCode::SUCCESS
}
