//! What `explore` runs, and the loop that runs it: every scenario, each
//! followed by its copies with one layer of the lease switched off (layer
//! ablation, docs/background.md "Layer ablation"), over a range of seeds,
//! within an optional time budget, stopping early with `--fail-fast`.
//!
//! A scenario and its ablations form a [`Group`]: the ablated runs reuse
//! the results of the scenario as written for the same seeds
//! ([`crate::parallel::explore_without`]), so the group runs them in order.

use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use neli_sim::ScenarioError;
use neli_sim::scenario::Layer;

use crate::catalog::{self, Entry};
use crate::parallel::{self, SeedFlagError};
use crate::report::{self, ScenarioResults};
use crate::stats::SeedResult;

/// Why `explore` refuses what it was asked to run: the flag or the
/// scenario at fault (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("--all: no scenario files in {} (set NELI_LAB_SCENARIOS to a directory of *.toml scenarios)", dir.display())]
    NoScenarioFiles { dir: std::path::PathBuf },
    #[error("give scenario names or --all, not both")]
    NamesAndAll,
    #[error("give scenario names or --all")]
    NoNames,
    #[error("--ablate-seeds 0: give at least 1")]
    NoAblationSeeds,
    #[error("--ablate-seeds {ablate}: at most --seeds ({seeds})")]
    MoreAblationSeeds { ablate: u64, seeds: u64 },
    #[error(transparent)]
    Seeds(#[from] SeedFlagError),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// The scenario names `explore` was given: `names`, or with `--all` every
/// shipped scenario; refuses both, neither, or an empty scenario directory.
pub fn scenario_names(all: bool, names: Vec<String>) -> Result<Vec<String>, PlanError> {
    match (all, names.is_empty()) {
        (true, true) => match catalog::names()? {
            v if v.is_empty() => Err(PlanError::NoScenarioFiles { dir: catalog::dir() }),
            v => Ok(v),
        },
        (false, false) => Ok(names),
        (true, false) => Err(PlanError::NamesAndAll),
        (false, true) => Err(PlanError::NoNames),
    }
}

/// `--ablate-seeds` against `--seeds`: `None` when the ablated runs cover
/// every seed (not given, or equal to `--seeds`).
pub fn ablation_seeds(ablate_seeds: Option<u64>, seeds: u64) -> Result<Option<u64>, PlanError> {
    match ablate_seeds {
        Some(0) => Err(PlanError::NoAblationSeeds),
        Some(n) if n > seeds => Err(PlanError::MoreAblationSeeds { ablate: n, seeds }),
        Some(n) if n < seeds => Ok(Some(n)),
        _ => Ok(None),
    }
}

/// One row of the report: a scenario as written or with a layer off, and
/// what it found so far.
pub struct Row {
    pub entry: Entry,
    /// The layer switched off (`None`: the scenario as written).
    pub layer: Option<Layer>,
    /// The scenario needs the layer (`[expect] fails_without`): this row must fail.
    pub must_fail: bool,
    /// The scenario may need the layer: this row may fail.
    pub may_fail: bool,
    pub results: Vec<SeedResult>,
    pub wall_s: f64,
}

impl Row {
    fn new(entry: Entry, layer: Option<Layer>, must_fail: bool, may_fail: bool) -> Row {
        Row { entry, layer, must_fail, may_fail, results: Vec::new(), wall_s: 0.0 }
    }

    /// A row that must pass has a failing seed (what `--fail-fast` stops on).
    fn failed_must_pass(&self) -> bool {
        !self.must_fail && !self.may_fail && self.results.iter().any(|r| !r.violations.is_empty())
    }

    /// This row as the report shows it.
    pub fn report(&self) -> ScenarioResults {
        ScenarioResults::new(&self.entry.scenario.name, &self.entry.arg, self.wall_s, self.results.clone())
            .expecting_failure(self.must_fail)
            .allowing_failure(self.may_fail)
            .ablating(self.layer)
    }
}

/// A scenario as written (`rows[0]`) and its ablated copies.
pub struct Group {
    pub rows: Vec<Row>,
}

/// The groups `explore` runs for `entries`: with `ablate`, each scenario is
/// followed by one row per layer it has on.
pub fn groups(entries: Vec<Entry>, ablate: bool) -> Vec<Group> {
    entries
        .into_iter()
        .map(|e| {
            let ablated: Vec<Row> = if ablate {
                Layer::ALL
                    .into_iter()
                    .filter_map(|l| {
                        let (needs, may_need) = (e.scenario.needs(l), e.scenario.may_need(l));
                        e.without(l).map(|a| Row::new(a, Some(l), needs, may_need))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let mut rows = vec![Row::new(e, None, false, false)];
            rows.extend(ablated);
            Group { rows }
        })
        .collect()
}

/// How the seeds are run.
pub struct Options {
    /// The seeds of this shard, in order.
    pub seeds: Vec<u64>,
    /// Ablated rows run only seeds below this one (`--ablate-seeds`).
    pub ablation_end: u64,
    pub jobs: usize,
    /// Stop starting seeds once this much wall time has passed.
    pub budget: Option<Duration>,
    pub fail_fast: bool,
    /// Called with each row's new results as soon as a chunk of it ends
    /// (`--format jsonl` streams them), in row order, seeds in order.
    pub on_row: Option<fn(&Row, &[SeedResult])>,
}

impl Options {
    /// Runs every row will make: what the progress bar counts to.
    pub fn runs(&self, groups: &[Group]) -> u64 {
        let ablated = self.seeds.iter().filter(|s| **s < self.ablation_end).count();
        let rows: usize = groups
            .iter()
            .flat_map(|g| &g.rows)
            .map(|r| if r.layer.is_some() { ablated } else { self.seeds.len() })
            .sum();
        rows as u64
    }

    /// Seeds per look at the clock: with a budget every row runs the same
    /// chunk before the clock is looked at, so all of them stop after the
    /// same seed; without one, one pass.
    fn chunk(&self) -> usize {
        if self.budget.is_some() { parallel::budget_chunk(self.jobs) } else { self.seeds.len().max(1) }
    }
}

/// How a run of the plan ended.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Ended {
    /// The time budget stopped it before every seed ran.
    pub by_budget: bool,
    /// `--fail-fast` stopped it after this row (its name), with this many
    /// rows after it not started.
    pub fail_fast: Option<(String, usize)>,
}

/// Runs `groups` over the seeds of `opts`; afterwards each row holds its
/// results. With `--fail-fast` the rows after the failing one are dropped.
pub fn run(groups: &mut Vec<Group>, opts: &Options, bar: &ProgressBar) -> Ended {
    let t0 = Instant::now();
    let mut ended = Ended::default();
    for (k, seeds) in opts.seeds.chunks(opts.chunk()).enumerate() {
        if k > 0 && opts.budget.is_some_and(|d| t0.elapsed() >= d) {
            ended.by_budget = true;
            break;
        }
        if crate::interrupt::requested() {
            break;
        }
        // The ablated rows' seeds are the first `--ablate-seeds` of the
        // range: with the shard's stride, a prefix of every chunk.
        let ablation: Vec<u64> = seeds.iter().copied().filter(|s| *s < opts.ablation_end).collect();
        if let Some(at) = run_chunk(groups, seeds, &ablation, opts, bar) {
            ended.fail_fast = Some(truncate_after(groups, at));
            break;
        }
    }
    ended
}

/// One chunk of seeds through every row; `Some((group, row))` when
/// `--fail-fast` stops at that row.
fn run_chunk(
    groups: &mut [Group],
    seeds: &[u64],
    ablation: &[u64],
    opts: &Options,
    bar: &ProgressBar,
) -> Option<(usize, usize)> {
    for (gi, g) in groups.iter_mut().enumerate() {
        let base_from = g.rows[0].results.len();
        for ri in 0..g.rows.len() {
            let ts = Instant::now();
            let (base, rest) = g.rows.split_at_mut(1);
            let results = match ri {
                0 => {
                    bar.set_prefix(base[0].entry.scenario.name.clone());
                    parallel::explore(&base[0].entry.scenario, seeds, opts.jobs, bar)
                }
                _ => {
                    let row = &rest[ri - 1];
                    bar.set_prefix(row.entry.scenario.name.clone());
                    let layer = row.layer.expect("rows after the first run with a layer off");
                    let this_chunk = &base[0].results[base_from..];
                    parallel::explore_without(&row.entry.scenario, layer, ablation, this_chunk, opts.jobs, bar)
                }
            };
            let row = &mut g.rows[ri];
            let from = row.results.len();
            row.results.extend(results);
            row.wall_s += ts.elapsed().as_secs_f64();
            if let Some(emit) = opts.on_row {
                emit(row, &row.results[from..]);
            }
            if opts.fail_fast && row.failed_must_pass() {
                return Some((gi, ri));
            }
        }
    }
    None
}

/// Drops the rows after `(group, row)`; returns that row's name and how
/// many rows were dropped.
fn truncate_after(groups: &mut Vec<Group>, (gi, ri): (usize, usize)) -> (String, usize) {
    let later_groups: usize = groups[gi + 1..].iter().map(|g| g.rows.len()).sum();
    groups.truncate(gi + 1);
    let g = &mut groups[gi];
    let not_run = later_groups + g.rows.len() - ri - 1;
    g.rows.truncate(ri + 1);
    (g.rows[ri].entry.scenario.name.clone(), not_run)
}

/// The rows of `groups` as the report lists them: each scenario, then its
/// ablations.
pub fn rows(groups: &[Group]) -> impl Iterator<Item = &Row> {
    groups.iter().flat_map(|g| &g.rows)
}

/// The report of `groups` after [`run`]; `header` carries everything but
/// the rows.
pub fn report(groups: &[Group], header: report::Explore) -> report::Explore {
    report::Explore { scenarios: rows(groups).map(Row::report).collect(), ..header }
}

/// What `explore` (or the gate's explore half) was asked to run, flag by flag.
#[derive(Debug, Clone)]
pub struct Request {
    /// Scenario names or paths (empty with `all`).
    pub names: Vec<String>,
    /// Every shipped scenario (`--all`).
    pub all: bool,
    pub start: u64,
    /// `start` was drawn from the clock (`--start auto`).
    pub start_auto: bool,
    pub seeds: u64,
    /// `--shard i/n` as given.
    pub shard: Option<String>,
    /// Layer ablation (`--ablate`) on the first `ablate_seeds` seeds.
    pub ablate: bool,
    pub ablate_seeds: Option<u64>,
    /// Threads (`None`: one per core).
    pub jobs: Option<usize>,
    /// `--time-budget` as given.
    pub time_budget: Option<String>,
    pub fail_fast: bool,
}

/// A [`Request`] checked and loaded: the groups to run and how.
pub struct Prepared {
    pub groups: Vec<Group>,
    pub opts: Options,
    req: Request,
    shard: report::Shard,
    ablate_seeds: Option<u64>,
}

impl Request {
    /// Loads the scenarios and checks every flag, or says which one is
    /// refused and why (exit 2).
    pub fn prepare(self) -> Result<Prepared, PlanError> {
        let names = scenario_names(self.all, self.names.clone())?;
        let (index, of) = self.shard.as_deref().map(parallel::parse_shard).transpose()?.unwrap_or((1, 1));
        let entries = names.iter().map(|n| catalog::load(n)).collect::<Result<Vec<_>, _>>()?;
        let ablate_seeds = ablation_seeds(self.ablate_seeds, self.seeds)?;
        let seeds = parallel::shard_seeds(self.start, self.seeds, index, of)?;
        let budget = self.time_budget.as_deref().map(parallel::parse_budget).transpose()?;
        let opts = Options {
            seeds,
            ablation_end: ablate_seeds.map_or(u64::MAX, |n| self.start.saturating_add(n)),
            jobs: self.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1),
            budget,
            fail_fast: self.fail_fast,
            on_row: None,
        };
        let groups = groups(entries, self.ablate);
        Ok(Prepared { groups, opts, shard: report::Shard { index, of }, ablate_seeds, req: self })
    }
}

impl Prepared {
    /// Runs the plan with a progress bar on stderr; the report, and how
    /// the run ended.
    pub fn run(mut self) -> (report::Explore, Vec<Group>, Ended) {
        let bar = crate::progress::bar(self.opts.runs(&self.groups));
        let t0 = Instant::now();
        let ended = run(&mut self.groups, &self.opts, &bar);
        bar.finish_and_clear();
        if let Some((name, not_run)) = &ended.fail_fast {
            eprintln!(
                "neli-lab: --fail-fast: stopped after {name} failed; {not_run} scenario run(s) after it not started"
            );
        }
        let header = report::Explore {
            schema: report::SCHEMA.into(),
            build: crate::BUILD.into(),
            start: self.req.start,
            start_auto: self.req.start_auto,
            seeds: self.req.seeds,
            shard: self.shard,
            jobs: self.opts.jobs,
            wall_s: t0.elapsed().as_secs_f64(),
            time_budget: if ended.by_budget { self.req.time_budget.clone() } else { None },
            merged_shards: 0,
            interrupted: crate::interrupt::requested(),
            ablate_seeds: self.ablate_seeds,
            regressions: Vec::new(),
            scenarios: Vec::new(),
        };
        (report(&self.groups, header), self.groups, ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Entry {
        catalog::load(name).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn names_or_all_but_not_both_nor_neither() {
        assert_eq!(scenario_names(false, vec!["a".into()]), Ok(vec!["a".to_owned()]));
        assert!(scenario_names(true, vec!["a".into()]).unwrap_err().to_string().contains("not both"));
        assert!(scenario_names(false, vec![]).unwrap_err().to_string().contains("--all"));
        assert!(!scenario_names(true, vec![]).unwrap().is_empty());
    }

    #[test]
    fn ablation_seeds_are_a_prefix_of_the_range() {
        assert_eq!(ablation_seeds(None, 200), Ok(None));
        assert_eq!(ablation_seeds(Some(200), 200), Ok(None));
        assert_eq!(ablation_seeds(Some(50), 200), Ok(Some(50)));
        assert!(ablation_seeds(Some(0), 200).unwrap_err().to_string().starts_with("--ablate-seeds 0"));
        assert!(ablation_seeds(Some(201), 200).unwrap_err().to_string().contains("at most --seeds (200)"));
    }

    #[test]
    fn each_scenario_is_followed_by_one_row_per_layer_it_has_on() {
        let g = groups(vec![entry("leader-pause"), entry("short-pause")], true);
        assert_eq!(g.len(), 2);
        for group in &g {
            assert_eq!(group.rows[0].layer, None);
            let layers: Vec<Layer> = group.rows[1..].iter().filter_map(|r| r.layer).collect();
            assert_eq!(layers.len(), group.rows.len() - 1);
            assert!(!layers.is_empty());
        }
        assert!(groups(vec![entry("leader-pause")], false)[0].rows.len() == 1);
    }

    #[test]
    fn fail_fast_keeps_the_rows_up_to_the_failing_one() {
        let mut g = groups(vec![entry("leader-pause"), entry("short-pause")], true);
        let total: usize = g.iter().map(|g| g.rows.len()).sum();
        let first_len = g[0].rows.len();
        let (name, not_run) = truncate_after(&mut g, (0, 1));
        assert_eq!(name, g[0].rows[1].entry.scenario.name);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].rows.len(), 2);
        assert_eq!(not_run, total - 2);
        assert!(first_len >= 2);
    }

    #[test]
    fn a_budget_stops_every_row_after_the_same_seed() {
        let mut g = groups(vec![entry("leader-pause"), entry("short-pause")], false);
        let opts = Options {
            seeds: (0..40).collect(),
            ablation_end: u64::MAX,
            jobs: 1,
            budget: Some(Duration::from_millis(1)),
            fail_fast: false,
            on_row: None,
        };
        let ended = run(&mut g, &opts, &ProgressBar::hidden());
        assert!(ended.by_budget);
        let ran: Vec<usize> = rows(&g).map(|r| r.results.len()).collect();
        assert_eq!(ran, vec![parallel::budget_chunk(1); 2], "one chunk each, then the budget");
    }
}
