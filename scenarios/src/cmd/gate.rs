//! `neli-lab gate`: the correctness gate CI runs, both halves of the
//! harness with one verdict: every shipped scenario on the simulator with
//! layer ablation (`explore --all --ablate`), then the exhaustive model check
//! in every mode at its defaults (`check --mode …`).

use std::path::PathBuf;
use std::process::ExitCode;

use super::fail;
use crate::model_check::{self, Limits, Mode, Request, Search};
use crate::plan;
use crate::report::{self, Format};

#[derive(clap::Args, Debug)]
pub struct GateArgs {
    /// Seeds per scenario.
    #[arg(long, default_value_t = 200)]
    seeds: u64,
    /// The first seed, or `auto` (drawn from the clock, printed).
    #[arg(long, default_value = "0", value_name = "SEED|auto")]
    start: super::Start,
    /// Seeds of each ablated run (the first of the range), at most --seeds
    /// [default: 50, or --seeds when that is fewer].
    #[arg(long, value_name = "N")]
    ablate_seeds: Option<u64>,
    /// Threads for the simulator, 1 or more (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = super::Threads::PER_CORE)]
    jobs: Option<usize>,
    /// The model checks' bound on the global clock, in ticks (check's
    /// default); lower only to make the gate cheaper, e.g. in its own tests.
    #[arg(long, default_value_t = 8)]
    ticks: u8,
    /// Seeds of the simulator tried on each model counterexample.
    #[arg(long, default_value_t = 20)]
    sim_seeds: u64,
    /// Where counterexample scenario files go.
    #[arg(long, default_value = "target/neli-lab/check")]
    out: PathBuf,
    /// Output: text, one JSON document, JUnit XML (a testsuite per half), JSON Lines or Markdown.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Seeds of each ablated run unless `--ablate-seeds` says otherwise (or
/// `--seeds` is fewer): the main job's figure (CONTRIBUTING.md, "The gate and layer ablation").
pub const DEFAULT_ABLATE_SEEDS: u64 = 50;

pub fn run(a: GateArgs) -> ExitCode {
    if a.seeds == 0 {
        // Refused by its own name, before the ablations' default is
        // derived from it.
        return fail(crate::parallel::SeedFlagError::NoSeeds);
    }
    let req = plan::Request {
        names: Vec::new(),
        all: true,
        start: a.start.resolve(false),
        start_auto: a.start.is_auto(),
        seeds: a.seeds,
        shard: None,
        ablate: true,
        ablate_seeds: Some(a.ablate_seeds.unwrap_or(DEFAULT_ABLATE_SEEDS.min(a.seeds))),
        jobs: a.jobs,
        time_budget: None,
        fail_fast: false,
    };
    let prepared = match req.prepare() {
        Ok(p) => p,
        Err(err) => return fail(err),
    };
    let (explore, _, _) = prepared.run();
    if crate::interrupt::requested() {
        print!("{}", explore.render(a.format));
        eprintln!("neli-lab: interrupted during the simulator half: no verdict");
        return ExitCode::from(crate::interrupt::EXIT);
    }
    let mut checks = Vec::new();
    for mode in Mode::ALL {
        eprintln!("neli-lab gate: check --mode {}", mode.flag());
        let req = Request { ticks: a.ticks, ..Request::defaults(mode) };
        let r = model_check::run(&req, Search::BfsSymmetry, Limits::default(), "", a.sim_seeds, &a.out);
        match r {
            Ok(r) => checks.push((mode.flag().to_owned(), r)),
            Err(err) => return fail(format!("check --mode {}: {err}", mode.flag())),
        }
    }
    let g = report::Gate::new(explore, checks);
    print!("{}", g.render(a.format));
    ExitCode::from(g.exit_code())
}
