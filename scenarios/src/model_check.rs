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

use neli::core::UnsafeVariant;
use neli_models::election::property::{self, Expectation, PropertyInfo};
use neli_models::{
    ElectionModel, ElectionModelCfg, Faults, GroupProtocol, counterexample_to_scenario, cut_at_violation, format_path,
};
use neli_sim::scenario::{BrokerId, Dur, FaultKind};
use stateright::report::{ReportData, ReportDiscovery, Reporter};
use stateright::{Checker, Model};

use crate::report::{self, CheckReplay, CheckVerdict, PropertyKind, PropertyOutcome, Replay};

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

/// The election mode `check` explores (`--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One role on partition 0 (goNELI parity).
    Exclusive,
    /// Roles `0..R` on `R` partitions, one leader at a time for each role.
    MultiRole,
    /// Roles `0..R` on `R` partitions, overlap allowed (`T > S`, NELI §4).
    NonExclusive,
}

impl Mode {
    /// Members when `--members` is not given: three in exclusive mode, where
    /// it takes a third member to see a handover race a returning member;
    /// two in the multi-role modes, whose state space three would take
    /// minutes to exhaust (docs/benchmarks-log.md, "check's defaults").
    pub fn default_members(self) -> u8 {
        match self {
            Mode::Exclusive => 3,
            Mode::MultiRole | Mode::NonExclusive => 2,
        }
    }

    /// Isolations when `--isolations` is not given (the asymmetric partition,
    /// hazard 3): one in exclusive mode, none in the multi-role modes.
    pub fn default_isolations(self) -> u8 {
        match self {
            Mode::Exclusive => 1,
            Mode::MultiRole | Mode::NonExclusive => 0,
        }
    }

    /// (T, S) in ticks when the flags are not given: T < S where one leader
    /// per role is promised, T > S where overlap is allowed (that is what
    /// makes a mode non-exclusive).
    pub fn default_timeouts(self) -> (u8, u8) {
        match self {
            Mode::Exclusive | Mode::MultiRole => (2, 4),
            Mode::NonExclusive => (5, 3),
        }
    }
}

/// What the user asked for, flag by flag (`None`: the flag was not given).
#[derive(Debug, Clone)]
pub struct Request {
    /// `None`: the mode's default ([`Mode::default_members`]).
    pub members: Option<u8>,
    pub mode: Mode,
    pub roles: Option<u32>,
    /// T and S in ticks; `None`: the mode's default ([`Mode::default_timeouts`]).
    pub heartbeat_timeout: Option<u8>,
    pub session_timeout: Option<u8>,
    pub grace: u8,
    pub ticks: u8,
    pub membership_proof: bool,
    /// Incremental (cooperative-sticky) assignment (`--assignment`).
    pub incremental: bool,
    /// The group protocol (`--group-protocol`).
    pub protocol: GroupProtocol,
    /// `None`: 1 under the consumer protocol, else 0 (`--heartbeat-failures`).
    pub heartbeat_failures: Option<u8>,
    /// Static members replaced by a new process with the same instance id
    /// while the old one runs on (`--static-replacements`; classic only).
    pub static_replacements: u8,
    pub variant: UnsafeVariant,
    /// The coordinator hands a moving partition on without waiting for its
    /// old owner's revocation (`--variant skip-revoked-barrier`).
    pub skip_revoked_barrier: bool,
    pub pauses: u8,
    pub crashes: u8,
    /// `None`: the mode's default ([`Mode::default_isolations`]).
    pub isolations: Option<u8>,
    pub clock_steps: u8,
    pub max_skew: Option<u8>,
    pub log_losses: u8,
    pub threads: usize,
}

/// Roles (and partitions) in multi-role modes when `--roles` is not given.
pub const DEFAULT_ROLES: u32 = 2;

impl Request {
    /// What `neli-lab check --mode MODE` asks for with no other flag (the
    /// gate runs these).
    pub fn defaults(mode: Mode) -> Request {
        Request {
            members: None,
            mode,
            roles: None,
            heartbeat_timeout: None,
            session_timeout: None,
            grace: 0,
            ticks: 8,
            membership_proof: true,
            incremental: false,
            protocol: GroupProtocol::Classic,
            heartbeat_failures: None,
            static_replacements: 0,
            variant: UnsafeVariant::default(),
            skip_revoked_barrier: false,
            pauses: 1,
            crashes: 0,
            isolations: None,
            clock_steps: 0,
            max_skew: None,
            log_losses: 0,
            threads: DEFAULT_THREADS,
        }
    }
}

impl Mode {
    /// Every mode, in the order the gate checks them.
    pub const ALL: [Mode; 3] = [Mode::Exclusive, Mode::MultiRole, Mode::NonExclusive];

    /// The mode as `--mode` spells it.
    pub fn flag(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::MultiRole => "multi-role",
            Mode::NonExclusive => "non-exclusive",
        }
    }
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
) -> Result<report::Check, String> {
    let cfg = req.config()?;
    let bounds = describe(&cfg, search, req.threads);
    let t0 = std::time::Instant::now();
    let s = check(cfg, req.threads, search, limits, budget_text, out)?;
    Ok(s.report(bounds, t0.elapsed().as_secs_f64(), sim_seeds))
}

impl Request {
    /// The model configuration, or why a flag would have no effect or no
    /// meaning (each message names the flag): every flag `check` accepts
    /// changes what is explored, or is refused.
    pub fn config(&self) -> Result<ElectionModelCfg, String> {
        let members = self.members.unwrap_or(self.mode.default_members());
        if members == 0 {
            return Err("--members 0: need at least 1 member".into());
        }
        let (t, s) = self.timeouts()?;
        if self.threads == 0 {
            return Err("--threads 0: need at least 1 checker thread".into());
        }
        let roles = self.roles()?;
        let max_skew = self.max_skew()?;
        self.refuse_inert_group_flags()?;
        let mut c = ElectionModelCfg::exclusive(members);
        c.roles = roles;
        c.partitions = roles;
        c.exclusive = self.mode != Mode::NonExclusive;
        c.heartbeat_timeout = t;
        c.session_timeout = s;
        c.grace = self.grace;
        c.heartbeat_interval = (t / 2).max(1);
        c.max_ticks = self.ticks;
        c.membership_proof = self.membership_proof;
        c.incremental = self.incremental;
        c.protocol = self.protocol;
        c.variant = self.variant;
        c.skip_revoked_barrier = self.skip_revoked_barrier;
        c.faults = self.faults(max_skew);
        Ok(c)
    }

    /// T and S in ticks, after the mode's defaults, or why they are refused.
    fn timeouts(&self) -> Result<(u8, u8), String> {
        let (default_t, default_s) = self.mode.default_timeouts();
        let (t, s) = (self.heartbeat_timeout.unwrap_or(default_t), self.session_timeout.unwrap_or(default_s));
        if t == 0 {
            return Err("--heartbeat-timeout 0: must be at least 1 tick".into());
        }
        if s == 0 {
            return Err("--session-timeout 0: must be at least 1 tick".into());
        }
        if self.mode == Mode::NonExclusive && t <= s {
            return Err(format!(
                "--mode non-exclusive needs T > S (that is what lets leases overlap), got --heartbeat-timeout {t} \
                 and --session-timeout {s} ticks: raise T or lower S, or use --mode multi-role"
            ));
        }
        Ok((t, s))
    }

    /// The number of roles (and partitions), or why `--roles` is refused.
    fn roles(&self) -> Result<u32, String> {
        match (self.mode, self.roles) {
            (Mode::Exclusive, Some(r)) => Err(format!(
                "--roles {r} has no effect in --mode exclusive (one role on partition 0); use --mode multi-role or non-exclusive"
            )),
            (Mode::Exclusive, None) => Ok(1),
            (_, Some(0)) => Err("--roles 0: need at least 1 role".into()),
            (_, r) => Ok(r.unwrap_or(DEFAULT_ROLES)),
        }
    }

    /// The skew bound. A clock step moves one member's clock by one tick,
    /// so N steps can reach a skew of at most N: the bound defaults to
    /// that, and a bound that could never bind (or forbids every step) is
    /// refused.
    fn max_skew(&self) -> Result<u8, String> {
        match (self.clock_steps, self.max_skew) {
            (0, None) => Ok(0),
            (0, Some(k)) => {
                Err(format!("--max-skew {k} has no effect without clock steps: add --clock-steps N (N >= 1)"))
            }
            (n, None) => Ok(n),
            (_, Some(0)) => Err("--max-skew 0 forbids every clock step: use at least 1, or drop --clock-steps".into()),
            (n, Some(k)) if k > n => Err(format!(
                "--max-skew {k} has no effect: --clock-steps {n} one-tick steps reach a skew of at most {n}"
            )),
            (_, Some(k)) => Ok(k),
        }
    }

    /// Refuses the group flags that the chosen protocol or assignment
    /// would ignore.
    fn refuse_inert_group_flags(&self) -> Result<(), String> {
        if self.static_replacements > 0 && self.protocol == GroupProtocol::Consumer {
            return Err(format!(
                "--static-replacements {} has no effect with --group-protocol consumer: its coordinator refuses an \
                 instance id still in use (UNRELEASED_INSTANCE_ID), so no replacement happens; use the classic protocol",
                self.static_replacements
            ));
        }
        if self.skip_revoked_barrier && !self.incremental {
            return Err("--variant skip-revoked-barrier has no effect with --assignment range (eager: every \
                 rebalance revokes everything before it deals): add --assignment cooperative-sticky"
                .into());
        }
        Ok(())
    }

    /// The fault budgets, after the mode's and the protocol's defaults.
    fn faults(&self, max_skew: u8) -> Faults {
        Faults {
            pauses: self.pauses,
            crashes: self.crashes,
            isolations: self.isolations.unwrap_or(self.mode.default_isolations()),
            clock_steps: self.clock_steps,
            max_skew,
            log_losses: self.log_losses,
            heartbeat_failures: self.heartbeat_failures.unwrap_or(if self.protocol == GroupProtocol::Consumer {
                1
            } else {
                0
            }),
            static_replacements: self.static_replacements,
            ..Faults::default()
        }
    }
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
            properties,
            verdict,
        }
    }
}

/// What the simulator makes of a counterexample's scenario file: the model
/// abstracts time and the coordinator, so say whether the simulator shows
/// the same failure within `sim_seeds` seeds.
fn replay_counterexample(o: &PropertyFinding, sim_seeds: u64) -> Option<Replay> {
    let f = o.file.as_ref()?;
    if let Some(e) = &o.file_error {
        return Some(Replay::LoadError(e.clone()));
    }
    let sc = neli_sim::Scenario::load(f);
    let hit = sc.ok().and_then(|sc| {
        (0..sim_seeds).find_map(|seed| crate::run(&sc, seed).violations.first().map(|v| (seed, v.to_string())))
    });
    Some(match hit {
        Some((seed, v)) => Replay::Reproduced(seed, v),
        None if sim_seeds == 0 => Replay::NotTried,
        None => Replay::NotReproduced(sim_seeds),
    })
}

/// Generated states `check` stops at unless `--max-states` says otherwise:
/// enough for every bound in docs/benchmarks-log.md (the largest, all four fault
/// kinds with 3 members and 10 ticks, generates 103 M; `--dfs` holds its
/// 52 M unique states in 2.4 GB), and well below what fills the 24 GiB
/// these machines have.
pub const DEFAULT_MAX_STATES: usize = 250_000_000;

/// States `check --simulate` walks unless `--max-states` says otherwise.
pub const DEFAULT_SIMULATE_STATES: usize = 1_000_000;

/// Limits on one search. The checker may pass `max_states` by a few
/// states per thread before it notices.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_states: usize,
    pub time_budget: Option<std::time::Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_states: DEFAULT_MAX_STATES, time_budget: None }
    }
}

impl Limits {
    /// Whether a finished search reached `--max-states` (the time budget
    /// is kept by [`drive`]). A search that ended exactly at the limit is
    /// reported as stopped: a partial result is never presented as a proof.
    fn states_reached(&self, states: usize) -> Option<String> {
        (states >= self.max_states).then(|| format!("--max-states {} reached", self.max_states))
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
fn adapt(replay: neli_models::Replay) -> Result<String, String> {
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
    scenario.to_toml(&notes).map_err(|e| e.to_string())
}

/// How `check` searches the state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// Breadth first: shortest counterexamples (the default).
    Bfs,
    /// Depth first, every state (faster, longer counterexamples).
    Dfs,
    /// Breadth first with members interchangeable (`neli_models::bfs`, level
    /// by level: shortest counterexamples on a sixth of the states with 3
    /// members; sound in every mode, see `neli_models::election::deal`).
    BfsSymmetry,
    /// Depth first with members interchangeable (stateright's DFS).
    DfsSymmetry,
    /// Random walks from the initial state until `--max-states` states
    /// (stateright's simulation checker, on one thread so that a seed gives
    /// one result): deeper than the exhaustive bounds reach, never a proof.
    Simulate { seed: u64 },
}

/// Threads `check` uses unless `--threads` says otherwise.
pub const DEFAULT_THREADS: usize = 2;

impl Search {
    /// The search `--simulate`, `--no-symmetry` (`symmetry` false), `--dfs`,
    /// `--seed` and `--threads` ask for, or the flag that would change
    /// nothing (each refusal names it): every flag `check` accepts changes
    /// what is explored.
    pub fn from_flags(
        simulate: bool,
        symmetry: bool,
        dfs: bool,
        seed: Option<u64>,
        threads: usize,
    ) -> Result<Search, String> {
        let search = match (simulate, symmetry, dfs, seed) {
            (true, false, _, _) => {
                return Err("--no-symmetry has no effect with --simulate (random walks merge no states)".into());
            }
            (true, _, true, _) => return Err("--dfs has no effect with --simulate (random walks)".into()),
            (true, _, _, seed) => Search::Simulate { seed: seed.unwrap_or(0) },
            (false, _, _, Some(s)) => {
                return Err(format!("--seed {s} has no effect without --simulate (the search is exhaustive)"));
            }
            (false, true, true, None) => Search::DfsSymmetry,
            (false, true, false, None) => Search::BfsSymmetry,
            (false, false, true, None) => Search::Dfs,
            (false, false, false, None) => Search::Bfs,
        };
        if simulate && threads != DEFAULT_THREADS {
            return Err(format!(
                "--threads {threads} has no effect with --simulate (one thread, so a seed gives one result)"
            ));
        }
        Ok(search)
    }
}

impl Limits {
    /// The limits `--max-states` and `--time-budget` ask for (`None`: not
    /// given) for `search`, or why a value is refused.
    pub fn from_flags(max_states: Option<usize>, search: Search, time_budget: Option<&str>) -> Result<Limits, String> {
        let simulate = matches!(search, Search::Simulate { .. });
        let max_states = match max_states {
            Some(0) => return Err(format!("--max-states 0: must be at least 1 (the default is {DEFAULT_MAX_STATES})")),
            Some(n) => n,
            None if simulate => DEFAULT_SIMULATE_STATES,
            None => DEFAULT_MAX_STATES,
        };
        let time_budget = time_budget.map(crate::parallel::parse_budget).transpose()?;
        Ok(Limits { max_states, time_budget })
    }
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
) -> Result<Summary, String> {
    let model: ElectionModel = cfg.into_model();
    let builder = model.clone().checker().threads(threads.max(1)).target_state_count(limits.max_states);
    let t0 = std::time::Instant::now();
    let deadline = limits.time_budget.map(|b| t0 + b);
    let (mut s, timed_out) = match search {
        Search::Bfs => drive(&model, builder.spawn_bfs(), deadline, out)?,
        Search::Dfs => drive(&model, builder.spawn_dfs(), deadline, out)?,
        Search::BfsSymmetry => {
            let bfs = neli_models::bfs::SymmetricBfs::builder(model.clone())
                .threads(threads.max(1))
                .target_state_count(limits.max_states)
                .symmetry_fn(neli_models::election::canonical_fingerprint);
            drive(&model, bfs.spawn(), deadline, out)?
        }
        Search::DfsSymmetry => {
            let dfs = neli_models::bfs::SymmetricBfs::builder(model.clone())
                .depth_first()
                .threads(threads.max(1))
                .target_state_count(limits.max_states)
                .symmetry_fn(neli_models::election::canonical_fingerprint);
            drive(&model, dfs.spawn(), deadline, out)?
        }
        Search::Simulate { seed } => {
            let walks = builder.threads(1).spawn_simulation(seed, stateright::UniformChooser);
            drive(&model, walks, deadline, out)?
        }
    };
    s.stopped = match search {
        _ if timed_out => Some(format!("--time-budget {budget_text} reached")),
        // Random walks never exhaust the bounds, whatever stopped them.
        Search::Simulate { seed } => Some(format!("--simulate: random walks from seed {seed}")),
        _ => limits.states_reached(s.states),
    };
    Ok(s)
}

/// Waits for the search with a progress line, until it is done or the
/// deadline passes; true if the deadline stopped it. stateright looks at
/// its own timeout only when a checker thread runs out of queued work
/// (never with one thread), so the deadline is kept here: on it, the
/// summary is taken from the states explored so far and the checker's
/// threads are left running until the process exits (`neli-lab check`
/// prints and exits right after).
fn drive<C: Checker<ElectionModel>>(
    model: &ElectionModel,
    checker: C,
    deadline: Option<std::time::Instant>,
    out: &Path,
) -> Result<(Summary, bool), String> {
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
            return Ok((summarise(model, &checker, out)?, false));
        }
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            Reporter::<ElectionModel>::report_checking(&mut progress, line(&checker, true));
            return Ok((summarise(model, &checker, out)?, true));
        }
        Reporter::<ElectionModel>::report_checking(&mut progress, line(&checker, false));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn summarise(model: &ElectionModel, checker: &impl Checker<ElectionModel>, out: &Path) -> Result<Summary, String> {
    let mut findings = Vec::new();
    for p in model.properties() {
        let info = property::info(p.name)
            .ok_or_else(|| format!("internal: property {:?} is not in the model's catalog", p.name))?;
        let always = info.expectation == Expectation::Always;
        let mut o = PropertyFinding { info, found: None, file: None, file_error: None, path_file: None };
        if let Some(path) = checker.discovery(p.name) {
            if always {
                let path = cut_at_violation(model, &path, p.name);
                o.found = Some(format_path(model, &path));
                let name = format!("check-{}", slug(p.name));
                let text = adapt(counterexample_to_scenario(model, &name, &path))?;
                std::fs::create_dir_all(out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
                let file = out.join(format!("{name}.toml"));
                std::fs::write(&file, &text).map_err(|e| format!("{}: cannot write: {e}", file.display()))?;
                o.file_error =
                    neli_sim::Scenario::parse(&text, &file.display().to_string()).err().map(|e| e.to_string());
                o.file = Some(file);
                // The model path itself, replayable step by step on the core
                // (`neli_models::replay_path`), tied to its build and model.
                let steps = format!("# {}\n# {:?}\n{}", crate::BUILD, model.cfg, format_path(model, &path));
                let path_file = out.join(format!("{name}.path"));
                std::fs::write(&path_file, steps).map_err(|e| format!("{}: cannot write: {e}", path_file.display()))?;
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
    })
}

#[cfg(test)]
#[path = "model_check_tests.rs"]
mod tests;
