//! `neli-lab explore`: many seeds of many scenarios (the main job), with
//! layer ablation, shards, a time budget and artifacts of failing seeds.

use super::{SeedRange, fail, verdict_code};
use crate::report::{self, Format};
use crate::{plan, regressions};
use std::path::PathBuf;
use std::process::ExitCode;

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
    /// Output: text tables, one JSON document (input to `merge` and
    /// `diff`), JUnit XML, JSON Lines (a header line naming the build, a
    /// line per seed as each scenario finishes, then a summary line) or a
    /// Markdown summary.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// For every failing seed write DIR/<scenario>-seed<N>.toml (fails
    /// under `run`), .trace.txt, .svg (timeline) and .history.jsonl
    /// (the typed history, as `run --history` writes it).
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
    /// Kept failures: replay every scenario file in DIR before any new
    /// seed (one failing again is a regression), then write each new
    /// failing seed there as `<scenario>-seed<N>.toml`. Commit the
    /// directory (`neli-regressions/` by convention).
    #[arg(long, value_name = "DIR")]
    regressions: Option<PathBuf>,
    /// With --regressions: shrink each new failing seed before keeping it.
    #[arg(long, requires = "regressions")]
    shrink: bool,
}

impl ExploreArgs {
    fn request(&self) -> plan::Request {
        plan::Request {
            names: self.scenarios.clone(),
            all: self.all,
            start: self.range.start.resolve(self.shard.is_some()),
            start_auto: self.range.start.is_auto(),
            seeds: self.range.seeds,
            shard: self.shard.clone(),
            ablate: self.ablate,
            ablate_seeds: self.ablate_seeds,
            jobs: self.range.jobs,
            time_budget: self.time_budget.clone(),
            fail_fast: self.fail_fast,
        }
    }
}

pub fn run(a: ExploreArgs) -> ExitCode {
    let prepared = match a.request().prepare() {
        Ok(p) => p,
        Err(err) => return fail(err),
    };
    if let Some(dir) = &a.artifacts
        && let Err(err) = std::fs::create_dir_all(dir)
    {
        return fail(format!("--artifacts {}: cannot create: {err}", dir.display()));
    }
    if a.format == Format::Jsonl {
        // The build before any verdict: a killed job's lines still name it.
        print!("{}", report::jsonl_header(crate::BUILD));
    }
    let kept = match &a.regressions {
        Some(dir) => match regressions::load(dir) {
            Ok(kept) => kept,
            Err(err) => return fail(err),
        },
        None => Vec::new(),
    };
    if let Some(dir) = &a.regressions {
        eprintln!("neli-lab: replaying {} kept failure(s) from {} first", kept.len(), dir.display());
    }
    let replayed = regressions::replay(&kept);
    let mut prepared = prepared;
    if a.format == Format::Jsonl {
        for r in &replayed {
            print!("{}", report::regression_line(r));
        }
        prepared.opts.on_row = Some(stream_row);
    }
    let seeds = prepared.opts.seeds.len();
    let (mut r, groups, _) = prepared.run();
    r.regressions = replayed;
    match a.format {
        // The seed lines were streamed as each scenario finished.
        Format::Jsonl => print!("{}", r.jsonl_summary()),
        f => print!("{}", r.render(f)),
    }
    if let Some(dir) = &a.artifacts
        && let Err(err) = write_artifacts(dir, &groups, &r)
    {
        return fail(err);
    }
    if let Some(dir) = &a.regressions {
        match regressions::keep(dir, &groups, &r, a.shrink) {
            Ok(files) if files.is_empty() => {}
            Ok(files) => eprintln!(
                "neli-lab: kept {} new failing seed(s) in {}{}: commit them",
                files.len(),
                dir.display(),
                if a.shrink { " (shrunk)" } else { "" }
            ),
            Err(err) => return fail(err),
        }
    }
    if crate::interrupt::requested() {
        let ran: usize = r.scenarios.iter().map(|s| s.results.len()).sum();
        let planned = seeds * plan::rows(&groups).count();
        eprintln!("neli-lab: interrupted after {ran} of {planned} run(s): the summary above covers only those");
        return ExitCode::from(crate::interrupt::EXIT);
    }
    verdict_code(!r.failed())
}

/// `--format jsonl`: a row's seeds, printed as they finish.
fn stream_row(row: &plan::Row, results: &[crate::stats::SeedResult]) {
    use std::io::Write;
    let lines = report::seed_lines(
        &row.entry.scenario.name,
        &row.entry.arg,
        row.layer.map(|l| l.to_string()),
        row.must_fail,
        row.may_fail,
        results,
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(lines.as_bytes());
    let _ = out.flush();
}

/// The failing seeds of rows that must pass, as files to look into (a run
/// that must fail and did is not one).
fn write_artifacts(
    dir: &std::path::Path,
    groups: &[plan::Group],
    r: &report::Explore,
) -> Result<(), crate::artifacts::ArtifactError> {
    let mut written = 0;
    let mut indexed = Vec::new();
    for (row, sr) in plan::rows(groups).zip(&r.scenarios).filter(|(_, sr)| !sr.expect_fail && !sr.may_fail) {
        for f in &sr.failing {
            written += crate::artifacts::write_failing_seed(dir, &row.entry.arg, &row.entry.scenario, f.seed)?.len();
            indexed.push(crate::artifacts::Indexed {
                name: &row.entry.scenario.name,
                seed: f.seed,
                violations: &f.violations,
                reproduce: &f.reproduce,
                shrink: &f.shrink,
            });
        }
    }
    let summary = vec![
        ("build".to_owned(), crate::BUILD.to_owned()),
        ("scenarios".to_owned(), r.scenarios.len().to_string()),
        ("failing seeds".to_owned(), indexed.len().to_string()),
    ];
    let index = crate::artifacts::write_index(dir, summary, &indexed)?;
    eprintln!("wrote {} artifact file(s) to {} (open {})", written + 1, dir.display(), index.display());
    Ok(())
}
