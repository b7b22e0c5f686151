//! `neli-lab explore`: many seeds of many scenarios (the main job), with
//! layer ablation, shards, a time budget and artifacts of failing seeds.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use super::{SeedRange, fail, jobs, verdict_code};
use crate::report::{self, Format};
use crate::{catalog, explore, plan};

/// `explore`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ExploreArgs {
    /// Scenario names or paths.
    scenarios: Vec<String>,
    /// Every shipped scenario (not those under broken/).
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    range: SeedRange,
    /// Run only every n-th seed, starting with the i-th (1-based): `--shard 2/4`.
    #[arg(long, value_name = "i/n")]
    shard: Option<String>,
    /// Output: text tables, one JSON document (input to `merge`) or JUnit XML.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// For every failing seed write DIR/<scenario>-seed<N>.toml (fails
    /// under `run`), .trace.txt and .svg (timeline).
    #[arg(long, value_name = "DIR")]
    artifacts: Option<PathBuf>,
    /// Stop starting seeds after this long (`10m`, `90s`, `1h`): seeds run
    /// in order, every scenario the same ones; the summary says how many.
    #[arg(long, value_name = "DURATION")]
    time_budget: Option<String>,
    /// Layer ablation: also run each scenario once per layer of the lease
    /// with that layer off (`<name>-without-<layer>`). Each must pass,
    /// unless the scenario lists the layer in `expect.fails_without`:
    /// then it must fail in some seed.
    #[arg(long)]
    ablate: bool,
    /// With --ablate: run the ablated scenarios on only the first N
    /// seeds of the range (default: all of them), to keep the cost down.
    #[arg(long, value_name = "N", requires = "ablate")]
    ablate_seeds: Option<u64>,
    /// Stop after the first scenario (or ablated run) with a failing
    /// seed that must pass: the summary covers the scenarios run so
    /// far. For a quick red/green, e.g. in mutation testing.
    #[arg(long)]
    fail_fast: bool,
}

/// What the flags ask for, each refused by name if it cannot be run.
struct Planned {
    groups: Vec<plan::Group>,
    opts: plan::Options,
    shard: report::Shard,
    ablate_seeds: Option<u64>,
}

fn plan_of(a: &ExploreArgs) -> Result<Planned, String> {
    let names = plan::scenario_names(a.all, a.scenarios.clone())?;
    let (index, of) = a.shard.as_deref().map(explore::parse_shard).transpose()?.unwrap_or((1, 1));
    let entries = names.iter().map(|n| catalog::load(n).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
    let ablate_seeds = plan::ablation_seeds(a.ablate_seeds, a.range.seeds)?;
    let seeds = explore::shard_seeds(a.range.start, a.range.seeds, index, of)?;
    let budget = a.time_budget.as_deref().map(explore::parse_budget).transpose()?;
    if let Some(dir) = &a.artifacts {
        std::fs::create_dir_all(dir).map_err(|err| format!("--artifacts {}: cannot create: {err}", dir.display()))?;
    }
    let opts = plan::Options {
        seeds,
        ablation_end: ablate_seeds.map_or(u64::MAX, |n| a.range.start.saturating_add(n)),
        jobs: jobs(a.range.jobs),
        budget,
        fail_fast: a.fail_fast,
    };
    Ok(Planned { groups: plan::groups(entries, a.ablate), opts, shard: report::Shard { index, of }, ablate_seeds })
}

pub fn run(a: ExploreArgs) -> ExitCode {
    let Planned { mut groups, opts, shard, ablate_seeds } = match plan_of(&a) {
        Ok(p) => p,
        Err(err) => return fail(err),
    };
    let bar = crate::progress::bar(opts.runs(&groups));
    let t0 = Instant::now();
    let ended = plan::run(&mut groups, &opts, &bar);
    bar.finish_and_clear();
    if let Some((name, not_run)) = &ended.fail_fast {
        eprintln!("neli-lab: --fail-fast: stopped after {name} failed; {not_run} scenario run(s) after it not started");
    }
    let header = report::Explore {
        schema: report::SCHEMA.into(),
        build: crate::BUILD.into(),
        start: a.range.start,
        seeds: a.range.seeds,
        shard,
        jobs: opts.jobs,
        wall_s: t0.elapsed().as_secs_f64(),
        time_budget: if ended.by_budget { a.time_budget.clone() } else { None },
        merged_shards: 0,
        interrupted: crate::interrupt::requested(),
        ablate_seeds,
        scenarios: Vec::new(),
    };
    let r = plan::report(&groups, header);
    print!("{}", r.render(a.format));
    if let Some(dir) = &a.artifacts
        && let Err(err) = write_artifacts(dir, &groups, &r)
    {
        return fail(err);
    }
    if crate::interrupt::requested() {
        let ran: usize = r.scenarios.iter().map(|s| s.results.len()).sum();
        let rows = plan::rows(&groups).count();
        eprintln!(
            "neli-lab: interrupted after {ran} of {} run(s): the summary above covers only those",
            opts.seeds.len() * rows
        );
        return ExitCode::from(crate::interrupt::EXIT);
    }
    verdict_code(!r.failed())
}

/// The failing seeds of rows that must pass, as files to look into (a run
/// that must fail and did is not one).
fn write_artifacts(dir: &std::path::Path, groups: &[plan::Group], r: &report::Explore) -> Result<(), String> {
    let mut written = 0;
    for (row, sr) in plan::rows(groups).zip(&r.scenarios).filter(|(_, sr)| !sr.expect_fail && !sr.may_fail) {
        for f in &sr.failing {
            written += crate::artifacts::write_failing_seed(dir, &row.entry.arg, &row.entry.scenario, f.seed)?.len();
        }
    }
    eprintln!("wrote {written} artifact file(s) to {}", dir.display());
    Ok(())
}
