//! The model check behind `neli-lab check` (and `gate`'s second half): runs
//! the stateright election model of `neli-models` (the real
//! `neli::core::Member` against an abstract coordinator and log, exhaustive
//! BFS within bounds) with a progress line and a verdict per property; each
//! counterexample is written as a scenario file that `neli-lab run` replays
//! on the simulator.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::io::Write;
use std::path::{Path, PathBuf};

use neli_models::election::property::{self, Expectation, PropertyInfo};
use neli_models::{
    ElectionModel, ElectionModelCfg, GroupProtocol, counterexample_to_scenario, cut_at_violation, format_path,
};
use neli_sim::ScenarioError;
use neli_sim::scenario::{BrokerId, Dur, FaultKind};
use stateright::report::{ReportData, ReportDiscovery, Reporter};
use stateright::{Checker, Model};

use crate::report::{self, CheckReplay, CheckVerdict, PropertyKind, PropertyOutcome};

mod memory;
mod replay;
mod request;

use replay::replay_counterexample;
pub use replay::same_guarantee;

pub use request::{
    DEFAULT_MAX_STATES, DEFAULT_ROLES, DEFAULT_SIMULATE_STATES, DEFAULT_THREADS, FlagError, Limits, Mode, Request,
    Search,
};

/// Progress on stderr: once a second on a terminal, once per
/// [`crate::progress::every`] elsewhere, and when done.
struct Progress(Option<std::time::Instant>);

impl<M: Model> Reporter<M> for Progress {
    fn report_checking(&mut self, d: ReportData) {
        if !crate::progress::due(&mut self.0, d.done) {
            return;
        }
        let _ = writeln!(
            std::io::stderr(),
            "{} states={} unique={} depth={} {:.1}s",
            if d.done { "done    " } else { "checking" },
            d.total_states,
            d.unique_states,
            d.max_depth,
            d.duration.as_secs_f64()
        );
    }
    fn report_discoveries(&mut self, _: &M, _: BTreeMap<&'static str, ReportDiscovery<M>>)
    where
        M::Action: Debug + PartialEq,
        M::State: Debug + Hash + PartialEq,
    {
    }
}

/// Why `check` refused a request or could not write what it found: the
/// flag or the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Flag(#[from] FlagError),
    #[error("{}: cannot create: {source}", dir.display())]
    CreateDir { dir: PathBuf, source: std::io::Error },
    #[error("{}: cannot write: {source}", file.display())]
    Write { file: PathBuf, source: std::io::Error },
    #[error("internal: property {name:?} is not in the model's catalog")]
    NotCatalogued { name: &'static str },
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// `check` of `req` with `search` and `limits`, with the simulator trying
/// each counterexample on `sim_seeds` seeds: the report, or why the request
/// is refused. `budget_text` is the `--time-budget` as given.
pub fn run(
    req: &Request,
    search: Search,
    limits: Limits,
    budget_text: &str,
    sim_seeds: u64,
    out: &Path,
) -> Result<report::Check, CheckError> {
    let cfg = req.config()?;
    let bounds = describe(&cfg, search, req.threads);
    let t0 = std::time::Instant::now();
    let s = check(cfg, req.threads, search, limits, budget_text, out)?;
    Ok(s.report(bounds, t0.elapsed().as_secs_f64(), sim_seeds))
}

/// The bounds actually explored, for the header: every field of the model
/// configuration that `check` can set, after defaults.
pub fn describe(cfg: &ElectionModelCfg, search: Search, threads: usize) -> String {
    let threads = if matches!(search, Search::Simulate { .. }) { 1 } else { threads };
    let mode = match (cfg.roles == 1 && cfg.partitions == 1, cfg.exclusive) {
        (true, _) => "exclusive".to_owned(),
        (false, true) => format!("multi-role exclusive, {} roles on {} partitions", cfg.roles, cfg.partitions),
        (false, false) => format!("non-exclusive, {} roles on {} partitions", cfg.roles, cfg.partitions),
    };
    let variant = match (cfg.variant.lease_from_receipt, cfg.variant.any_record_counts, cfg.skip_revoked_barrier) {
        (false, false, false) => "recommended",
        (true, false, false) => "lease-from-receipt",
        (false, true, false) => "any-record-counts",
        (false, false, true) => "skip-revoked-barrier",
        _ => "several unsafe variants",
    };
    let assignment = if cfg.incremental { "cooperative-sticky" } else { "range" };
    let f = &cfg.faults;
    let search = match search {
        Search::Bfs => "BFS".to_owned(),
        Search::Dfs => "DFS".to_owned(),
        Search::BfsSymmetry => "BFS + symmetry".to_owned(),
        Search::DfsSymmetry => "DFS + symmetry".to_owned(),
        Search::Simulate { seed } => format!("random walks (stateright's simulation, not exhaustive), seed {seed}"),
    };
    // Named only when not classic / not zero, so the classic header reads as it always did.
    let protocol = match cfg.protocol {
        GroupProtocol::Classic => "",
        GroupProtocol::Consumer => ", group protocol consumer (KIP-848)",
    };
    let hb =
        if f.heartbeat_failures > 0 { format!(", heartbeat failures {}", f.heartbeat_failures) } else { String::new() };
    let hb =
        if f.static_replacements > 0 { format!("{hb}, static replacements {}", f.static_replacements) } else { hb };
    format!(
        "model     {} members, {mode}, T={} S={} G={} heartbeat interval {} (ticks), {} ticks, membership proof {}, assignment {assignment}, variant {variant}{protocol}\n\
         faults    pauses {}, crashes {}, isolations {}, clock steps {} (max skew {}), log losses {}{hb}\n\
         search    {search}, {threads} thread(s)",
        cfg.members,
        cfg.heartbeat_timeout,
        cfg.session_timeout,
        cfg.grace,
        cfg.heartbeat_interval,
        cfg.max_ticks,
        if cfg.membership_proof { "on" } else { "off" },
        f.pauses,
        f.crashes,
        f.isolations,
        f.clock_steps,
        f.max_skew,
        f.log_losses,
    )
}

/// What the search found for one property: a counterexample or an
/// example, and the files it was written to.
#[derive(Debug, Clone)]
pub struct PropertyFinding {
    /// The property, as the model's catalog describes it.
    pub info: &'static PropertyInfo,
    /// For an `always` property: the counterexample; for `sometimes`: an example.
    pub found: Option<String>,
    pub file: Option<PathBuf>,
    /// Why the written scenario does not load in the simulator, if it does not.
    pub file_error: Option<String>,
    /// The counterexample as a model path (`neli_models::replay_path` replays it).
    pub path_file: Option<PathBuf>,
}

impl PropertyFinding {
    /// An `always` property (a discovery is a counterexample).
    pub fn always(&self) -> bool {
        self.info.expectation == Expectation::Always
    }

    /// A counterexample of an `always` property.
    pub fn violated(&self) -> bool {
        self.always() && self.found.is_some()
    }
}

pub struct Summary {
    pub states: usize,
    pub unique: usize,
    pub depth: usize,
    pub findings: Vec<PropertyFinding>,
    /// Which limit ended the search before the state space was exhausted
    /// (`--max-states 1000 reached`): the result is then partial, a
    /// property that "holds" only held in the states explored.
    pub stopped: Option<String>,
    /// The process's peak resident memory and the `--memory-limit`.
    pub memory: MemoryUse,
    /// Exhaustive (and how sure), partial, or random walks ([`coverage`]).
    pub coverage: String,
}

/// Peak resident memory of a check and its limit, in bytes (`None` where
/// the kernel does not say, or no limit).
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryUse {
    pub peak: Option<u64>,
    pub limit: Option<u64>,
}

impl Summary {
    /// A finished search in which the model's vacuity witness (a leader is
    /// elected) was never witnessed: every safety property then holds
    /// trivially, so the check proves nothing (a core whose `is_leader`
    /// never answers true passed `check` this way).
    pub fn vacuous(&self) -> bool {
        self.stopped.is_none() && self.findings.iter().any(|o| o.info.is_vacuity_witness() && o.found.is_none())
    }

    /// What the search proved: a violation fails whether or not the search
    /// finished; a finished search is vacuous, then passes; a stopped one
    /// without a violation is incomplete.
    pub fn verdict(&self) -> CheckVerdict {
        match (self.findings.iter().any(PropertyFinding::violated), &self.stopped) {
            (true, _) => CheckVerdict::Fail,
            (false, None) if self.vacuous() => CheckVerdict::Vacuous,
            (false, Some(_)) => CheckVerdict::Incomplete,
            (false, None) => CheckVerdict::Pass,
        }
    }

    /// The report of this search over `bounds` (from [`describe`]) that
    /// took `wall_s`, with the simulator's replay of each counterexample
    /// on `sim_seeds` seeds.
    pub fn report(&self, bounds: String, wall_s: f64, sim_seeds: u64) -> report::Check {
        let verdict = self.verdict();
        let properties = self
            .findings
            .iter()
            .map(|o| {
                let kind = if o.always() { PropertyKind::Always } else { PropertyKind::Sometimes };
                let file = o.file.as_ref().map(|f| f.display().to_string());
                let replay = if o.violated() { replay_counterexample(o, sim_seeds) } else { None };
                report::CheckProperty {
                    property: o.info.name.into(),
                    kind,
                    outcome: PropertyOutcome::of(kind, o.found.is_some(), self.stopped.is_some()),
                    path: if o.always() { o.found.clone() } else { None },
                    scenario: file.clone(),
                    path_file: o.path_file.as_ref().map(|p| p.display().to_string()),
                    replay: replay.map(|r| CheckReplay::of(r, file.as_deref().unwrap_or_default())),
                }
            })
            .collect();
        report::Check {
            schema: report::CHECK_SCHEMA.into(),
            build: crate::BUILD.into(),
            bounds,
            states: self.states as u64,
            unique: self.unique as u64,
            depth: self.depth as u64,
            wall_s,
            passed: verdict == CheckVerdict::Pass,
            stopped: self.stopped.clone(),
            peak_memory: self.memory.peak,
            memory_limit: self.memory.limit,
            coverage: (!self.coverage.is_empty()).then(|| self.coverage.clone()),
            properties,
            verdict,
        }
    }
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// Simulated time the group needs to form (members start, join, rebalance,
/// first heartbeat): the model's tick 0 is an already formed group. The
/// members start together, so the first generation forms after the
/// broker's initial rebalance delay, once extended where the broker extends
/// it (Apache Kafka: docs/background.md, "The kafka profile"); the model's
/// tick 0 is that moment, before any member has polled its assignment, so
/// faults land half a second after it.
pub fn settle_ms(s: &neli_sim::Scenario) -> i64 {
    let b = s.cluster.broker();
    let formed = if b.initial_delay_extends {
        (2 * b.initial_delay_ms).min(b.initial_delay_ms.max(s.election.max_poll_ms()))
    } else {
        b.initial_delay_ms
    };
    i64::try_from(formed + b.rebalance_pause_ms).unwrap_or(i64::MAX / 2) + 500
}

/// The model's scenario, adapted so the simulator accepts and replays it:
/// a coordinator isolation needs the coordinator and the partition leader
/// on two brokers, and every fault moves by [`settle_ms`] so that it hits a
/// formed group (the run grows by as much), except one aimed at the moment
/// of the first assignment (`on`, tick 0), which the group's forming brings.
/// Returns the scenario file's text.
fn adapt(replay: neli_models::Replay) -> Result<String, ScenarioError> {
    let neli_models::Replay { mut scenario, mut notes } = replay;
    if scenario.timed_faults().any(|f| f.fault.kind() == FaultKind::IsolateCoordinator) {
        scenario.cluster.brokers = 2;
        scenario.cluster.partition_leader = BrokerId(1);
    }
    let settle = settle_ms(&scenario);
    scenario.duration = Dur(scenario.duration.0 + settle);
    for f in &mut scenario.faults {
        let f = f.get_mut();
        // A fault aimed at the model's first assignment waits for the
        // simulator's, which comes while the group forms.
        if f.on.is_some() && f.at.0 == 0 {
            continue;
        }
        f.at = Dur(f.at.0 + settle);
    }
    notes.push(format!(
        "written by neli-lab check from a neli-models counterexample; faults moved by {settle}ms so the group has formed (one aimed at the first assignment waits for it)"
    ));
    scenario.to_toml(&notes)
}

/// Runs the check within `limits`; counterexamples go to `out` as
/// scenario files. `budget_text` is the `--time-budget` as given, for the
/// summary.
pub fn check(
    cfg: ElectionModelCfg,
    threads: usize,
    search: Search,
    limits: Limits,
    budget_text: &str,
    out: &Path,
) -> Result<Summary, CheckError> {
    let model: ElectionModel = cfg.into_model();
    let builder = model.clone().checker().threads(threads.max(1)).target_state_count(limits.max_states);
    let t0 = std::time::Instant::now();
    let watch = Watch { deadline: limits.time_budget.map(|b| t0 + b), memory: limits.memory };
    let ours = |depth_first: bool| {
        let b = neli_models::bfs::SymmetricBfs::builder(model.clone())
            .threads(threads.max(1))
            .target_state_count(limits.max_states)
            .symmetry_fn(neli_models::election::canonical_fingerprint);
        if depth_first { b.depth_first() } else { b }.spawn()
    };
    let stop_ours = |c: &neli_models::bfs::SymmetricBfs<ElectionModel>| c.stop();
    let (mut s, halt) = match search {
        Search::Bfs => drive(&model, builder.spawn_bfs(), watch, out, None)?,
        Search::Dfs => drive(&model, builder.spawn_dfs(), watch, out, None)?,
        Search::BfsSymmetry => drive(&model, ours(false), watch, out, Some(&stop_ours))?,
        Search::DfsSymmetry => drive(&model, ours(true), watch, out, Some(&stop_ours))?,
        Search::Simulate { seed } => {
            let walks = builder.threads(1).spawn_simulation(seed, stateright::UniformChooser);
            drive(&model, walks, watch, out, None)?
        }
    };
    s.stopped = match (halt, search) {
        (Some(Halt::Budget), _) => Some(format!("--time-budget {budget_text} reached")),
        (Some(Halt::Memory { resident }), _) => Some(format!(
            "--memory-limit {} reached ({} resident)",
            report::show_bytes(limits.memory.unwrap_or_default()),
            report::show_bytes(resident)
        )),
        // Random walks never exhaust the bounds, whatever stopped them.
        (None, Search::Simulate { seed }) => Some(format!("--simulate: random walks from seed {seed}")),
        (None, _) => limits.states_reached(s.states),
    };
    s.memory = MemoryUse { peak: memory::peak(), limit: limits.memory };
    s.coverage = coverage(search, s.unique, s.stopped.is_some());
    Ok(s)
}

/// What a search covered, for the verdict: the searches keep each visited
/// state as a 64-bit fingerprint (hash compaction, in `neli_models::bfs`
/// and in stateright's own), so an exhaustive search can skip a state whose
/// fingerprint collides with another's; with n states the chance that any
/// collides is at most n^2 / 2^65 (the birthday bound).
pub fn coverage(search: Search, unique: usize, stopped: bool) -> String {
    if stopped {
        return "partial: the search stopped before the bounds were exhausted".into();
    }
    if let Search::Simulate { .. } = search {
        return "random walks: what they found, never a proof".into();
    }
    let n = unique as f64;
    format!(
        "exhaustive within the bounds, up to 64-bit fingerprint collisions: P(a state skipped) <= n^2/2^65 = {:.1e}",
        n * n / 2f64.powi(65)
    )
}

/// What `drive` watches besides the search: the `--time-budget`'s end and
/// the `--memory-limit`.
#[derive(Clone, Copy)]
struct Watch {
    deadline: Option<std::time::Instant>,
    memory: Option<u64>,
}

/// Which watched limit ended a search before it was done.
enum Halt {
    Budget,
    Memory { resident: u64 },
}

/// Waits for the search with a progress line, until it is done or a
/// watched limit is reached, which ends it early. A search that can be
/// stopped (`stop`: `neli_models::bfs`'s) is stopped and joined before the
/// summary is taken, so that it grows no further; stateright's own look
/// at its timeout comes only when a checker thread runs out of queued
/// work (never with one thread), so those are left running and the
/// summary is taken from the states explored so far (`neli-lab check`
/// prints and exits right after).
fn drive<C: Checker<ElectionModel>>(
    model: &ElectionModel,
    checker: C,
    watch: Watch,
    out: &Path,
    stop: Option<&dyn Fn(&C)>,
) -> Result<(Summary, Option<Halt>), CheckError> {
    let t0 = std::time::Instant::now();
    let mut progress = Progress(Some(t0));
    let line = |c: &C, done| ReportData {
        total_states: c.state_count(),
        unique_states: c.unique_state_count(),
        max_depth: c.max_depth(),
        duration: t0.elapsed(),
        done,
    };
    loop {
        if checker.is_done() {
            let checker = checker.join();
            Reporter::<ElectionModel>::report_checking(&mut progress, line(&checker, true));
            return Ok((summarise(model, &checker, out)?, None));
        }
        let halt = if watch.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            Some(Halt::Budget)
        } else {
            let resident = watch.memory.and_then(|limit| memory::resident().filter(|r| *r >= limit));
            resident.map(|resident| Halt::Memory { resident })
        };
        if let Some(halt) = halt {
            let checker = match stop {
                Some(stop) => {
                    stop(&checker);
                    while !checker.is_done() {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    checker.join()
                }
                None => checker,
            };
            Reporter::<ElectionModel>::report_checking(&mut progress, line(&checker, true));
            return Ok((summarise(model, &checker, out)?, Some(halt)));
        }
        Reporter::<ElectionModel>::report_checking(&mut progress, line(&checker, false));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn summarise(model: &ElectionModel, checker: &impl Checker<ElectionModel>, out: &Path) -> Result<Summary, CheckError> {
    let mut findings = Vec::new();
    for p in model.properties() {
        let info = property::info(p.name).ok_or(CheckError::NotCatalogued { name: p.name })?;
        let always = info.expectation == Expectation::Always;
        let mut o = PropertyFinding { info, found: None, file: None, file_error: None, path_file: None };
        if let Some(path) = checker.discovery(p.name) {
            if always {
                let path = cut_at_violation(model, &path, p.name);
                o.found = Some(format_path(model, &path));
                let name = format!("check-{}", slug(p.name));
                let text = adapt(counterexample_to_scenario(model, &name, &path).showing(p.name, &model.cfg))?;
                std::fs::create_dir_all(out).map_err(|source| CheckError::CreateDir { dir: out.to_owned(), source })?;
                let file = out.join(format!("{name}.toml"));
                std::fs::write(&file, &text).map_err(|source| CheckError::Write { file: file.clone(), source })?;
                o.file_error =
                    neli_sim::Scenario::parse(&text, &file.display().to_string()).err().map(|e| e.to_string());
                o.file = Some(file);
                // The model path itself, replayable step by step on the core
                // (`neli_models::replay_path`), tied to its build and model.
                let steps = format!("# {}\n# {:?}\n{}", crate::BUILD, model.cfg, format_path(model, &path));
                let path_file = out.join(format!("{name}.path"));
                std::fs::write(&path_file, steps)
                    .map_err(|source| CheckError::Write { file: path_file.clone(), source })?;
                o.path_file = Some(path_file);
            } else {
                o.found = Some(format_path(model, &path));
            }
        }
        findings.push(o);
    }
    Ok(Summary {
        states: checker.state_count(),
        unique: checker.unique_state_count(),
        depth: checker.max_depth(),
        findings,
        stopped: None,
        memory: MemoryUse::default(),
        coverage: String::new(),
    })
}

#[cfg(test)]
mod tests;
