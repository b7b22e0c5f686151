//! Test your own service under the simulator's faults: your application
//! code (handlers, work loop, downstream writes) runs unmodified in every
//! member process of a scenario, on the real `neli::Neli` driver over a
//! simulated Kafka and clock, writing to a simulated downstream store that
//! fences by stamp; the run is judged by neli's oracles and by your own
//! invariants over its typed [`History`].
//!
//! ```
//! use std::time::Duration;
//!
//! use neli::downstream::Downstream;
//! use neli::{Clock, Pulse};
//! use neli_sim::app::SimMember;
//! use neli_sim::harness::Harness;
//!
//! // The service: leads, and writes `tick` once a round, stamped with its token.
//! async fn service(m: SimMember) {
//!     let SimMember { mut neli, clock, store, .. } = m;
//!     loop {
//!         match neli.pulse(Duration::from_millis(100)).await {
//!             Ok(Pulse::Finished(_)) => return,
//!             Ok(Pulse::Running { .. }) => {}
//!             Err(_) => {
//!                 clock.sleep(Duration::from_millis(100)).await;
//!                 continue;
//!             }
//!         }
//!         // One read: the lease, and its stamp to fence the write with.
//!         if let Some(lease) = neli.lease(0) {
//!             let _ = store.write("tick", b"", lease.stamp()).await;
//!         }
//!     }
//! }
//!
//! # fn main() -> Result<(), neli_sim::ScenarioError> {
//! let report = Harness::shipped("leader-pause")?
//!     .app(service)
//!     .invariant("only the leader writes", |h| {
//!         match h.writes().find(|w| !h.held(&w.member, 0, w.sent_at)) {
//!             Some(w) => Err(format!("{} wrote at {} ms without a lease", w.member, w.sent_at)),
//!             None => Ok(()),
//!         }
//!     })
//!     .seeds(0..3)
//!     .run();
//! println!("{report}");
//! report.assert_passed();
//! # Ok(())
//! # }
//! ```
//!
//! A failing seed is reported with its violations and a one-line
//! reproduction: `NELI_SIM_SEED=<seed>` reruns exactly that seed from your
//! own `cargo test`. An application that panics fails its seed (rule
//! `application`); one that blocks its thread (a loop with no `.await`) is
//! stopped after the seed's wall-clock budget and fails it, naming the seed.
//!
//! What `neli-lab explore` does for neli's own scenarios the harness does
//! for a team's service (README.md, "Testing your own service"):
//! seeds on every core ([`Harness::jobs`]; the report is in seed order
//! whatever the threads), a moving start ([`Start::Auto`]), shards for a CI
//! matrix, a regressions folder replayed first ([`Harness::regressions`]),
//! shrinking of failing seeds ([`Harness::shrink`]), reports as text, JSON,
//! JUnit, Markdown and HTML ([`Harness::report_to`]), a determinism check
//! ([`Harness::check_determinism`]) and [`Harness::ablate`], which says
//! whether your invariants can fail at all. Each is also set from the
//! environment (`NELI_SIM_SEEDS`, `NELI_SIM_START`, `NELI_SIM_JOBS`,
//! `NELI_SIM_SHARD`, `NELI_SIM_REGRESSIONS`, `NELI_SIM_SHRINK`,
//! `NELI_SIM_REPORT`, `NELI_SIM_CHECK_DETERMINISM`, `NELI_SIM_REPLAY`:
//! [`settings`]), so a CI job tunes a test without editing it.

mod ablate;
mod determinism;
mod keep;
mod page;
mod pool;
mod report;
pub mod settings;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::app::{AppFn, AppSetup, SimMember, StoreMode};
use crate::history::History;
use crate::scenario::{Dur, Fault, FaultKind, Scenario, ScenarioError, Target, Trigger, schedule};
use crate::verdict::{Rule, Violation};
use crate::world::{RunReport, run_materialized};

pub use ablate::{Ablation, Weakening, WeakeningRow};
pub use report::{Failure, Replayed, Report, ShrunkRepro};
pub use settings::{BadSetting, SEED_ENV, Settings, Start};

/// How long one seed may take on the wall clock by default.
pub const DEFAULT_SEED_BUDGET: Duration = Duration::from_secs(120);

/// Why a build without `--cfg tokio_unstable` is warned about.
const UNSEEDED_TOKIO: &str = "neli-sim was built without --cfg tokio_unstable, so tokio's scheduler is not seeded and a seed may not replay byte for byte: add a .cargo/config.toml with [build] rustflags = [\"--cfg\", \"tokio_unstable\"] (examples/invoices has one)";

type Invariant = Arc<dyn Fn(&History) -> Result<(), String> + Send + Sync>;

/// A harness run: a scenario, your application in every member process,
/// your invariants, and the seeds to run. Built with chained calls, run
/// with [`Harness::run`].
#[derive(Clone)]
pub struct Harness {
    scenario: Scenario,
    /// A fault added in code that broke a scenario rule: reported by `run`.
    refused: Option<String>,
    app: Option<AppFn>,
    store: StoreMode,
    invariants: Vec<(String, Invariant)>,
    seeds: Vec<u64>,
    start: Option<Start>,
    budget: Duration,
    test: Option<String>,
    jobs: Option<usize>,
    shard: Option<(u64, u64)>,
    regressions: Option<PathBuf>,
    shrink: Option<u32>,
    reports: Vec<PathBuf>,
    check_determinism: bool,
}

impl Harness {
    /// A harness over `scenario`, with the built-in application until
    /// [`Harness::app`] replaces it, seeds `0..100`.
    pub fn new(scenario: Scenario) -> Harness {
        // The test that builds it names the reproduction (cargo runs each
        // test on a thread named after it).
        let test = std::thread::current().name().filter(|n| *n != "main").map(str::to_owned);
        Harness {
            scenario,
            refused: None,
            app: None,
            store: StoreMode::default(),
            invariants: Vec::new(),
            seeds: (0..100).collect(),
            start: None,
            budget: DEFAULT_SEED_BUDGET,
            test,
            jobs: None,
            shard: None,
            regressions: None,
            shrink: None,
            reports: Vec::new(),
            check_determinism: false,
        }
    }

    /// A harness over the shipped scenario `name` (`leader-pause`, `swarm`;
    /// `neli_sim::shipped::names()` lists them).
    pub fn shipped(name: &str) -> Result<Harness, ScenarioError> {
        crate::shipped::get(name).map(Harness::new)
    }

    /// Runs `app` in every member process instead of the built-in
    /// application: called once per process start (again after a crash and
    /// restart) with that process's [`SimMember`]; the process stops when it
    /// returns.
    pub fn app<F, Fut>(mut self, app: F) -> Harness
    where
        F: Fn(SimMember) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.app = Some(Arc::new(move |m| Box::pin(app(m))));
        self
    }

    /// How the downstream store judges writes (default: fenced).
    pub fn store(mut self, mode: StoreMode) -> Harness {
        self.store = mode;
        self
    }

    /// Adds an invariant: `check` gets each run's history and says what is
    /// wrong (`Err`) or nothing. A failing or panicking invariant fails the
    /// seed with rule `invariant <name>`.
    pub fn invariant<F>(mut self, name: &str, check: F) -> Harness
    where
        F: Fn(&History) -> Result<(), String> + Send + Sync + 'static,
    {
        self.invariants.push((name.to_owned(), Arc::new(check)));
        self
    }

    /// Adds a fault at `at` to the scenario, checked by the rules of a
    /// scenario file's `[[faults]]` ([`Scenario::fault`]); a fault that
    /// breaks one makes [`Harness::run`] report it instead of running.
    ///
    /// ```
    /// use neli_sim::harness::Harness;
    /// use neli_sim::scenario::{Dur, Fault, Host};
    /// let h = Harness::shipped("leader-pause")
    ///     .unwrap()
    ///     .fault(Dur::from_secs(20), Fault::Partition { a: Host::Leader, b: Host::Broker(0), duration: Dur::from_secs(3) });
    /// assert_eq!(h.scenario().faults.len(), 2);
    /// ```
    pub fn fault(self, at: Dur, fault: Fault) -> Harness {
        self.extended(|s| s.fault(at, fault))
    }

    /// The scenario as `extend` makes it, or, if that breaks a rule, the
    /// scenario unchanged and the first such refusal kept for [`Harness::run`].
    fn extended(mut self, extend: impl FnOnce(Scenario) -> Result<Scenario, ScenarioError>) -> Harness {
        match extend(self.scenario.clone()) {
            Ok(s) => self.scenario = s,
            Err(e) => self.refused = self.refused.or(Some(e.to_string())),
        }
        self
    }

    /// Adds a fault aimed at a moment of the protocol: armed at `at`, it
    /// starts at member `of`'s next `on` (its own target's if `of` is
    /// `None`), checked as [`Harness::fault`]'s are ([`Scenario::fault_on`]).
    ///
    /// ```
    /// use neli_sim::harness::Harness;
    /// use neli_sim::scenario::{Dur, Fault, Target, Trigger};
    /// // Stall m1's loop right after its membership proof is accepted.
    /// let stall = Fault::StallPoll { target: Target::Member(1), duration: Dur::from_millis(800) };
    /// let h = Harness::shipped("leader-pause").unwrap().fault_on(Dur::from_secs(0), Trigger::ProofAccepted, None, stall);
    /// assert_eq!(h.scenario().faults.len(), 2);
    /// ```
    pub fn fault_on(self, at: Dur, on: Trigger, of: Option<Target>, fault: Fault) -> Harness {
        self.extended(|s| s.fault_on(at, on, of, fault))
    }

    /// Draws `faults` more faults per seed from `kinds`, each lasting at
    /// most `max_duration` ([`Scenario::random_faults`]).
    pub fn random_faults(self, faults: u32, kinds: &[FaultKind], max_duration: Dur) -> Harness {
        self.extended(|s| s.random_faults(faults, kinds, max_duration))
    }

    /// The seeds to run (default `0..100`). `NELI_SIM_SEED` overrides them;
    /// `NELI_SIM_SEEDS` (how many) and `NELI_SIM_START` (from where) make
    /// them a range.
    pub fn seeds(mut self, seeds: impl IntoIterator<Item = u64>) -> Harness {
        self.seeds = seeds.into_iter().collect();
        self
    }

    /// Runs as many seeds as [`Harness::seeds`] gave, from `start` on
    /// ([`Start::Auto`]: new seeds each run, the start printed in the
    /// report's header, each reproduction naming its own seed).
    /// `NELI_SIM_START` overrides it.
    pub fn start(mut self, start: Start) -> Harness {
        self.start = Some(start);
        self
    }

    /// How many threads run seeds (default: the machine's parallelism;
    /// each seed's simulation is single-threaded and deterministic, and the
    /// report is in seed order whatever the threads); 0 is taken as 1.
    /// `NELI_SIM_JOBS` overrides it (1 or more: 0 there is an error).
    pub fn jobs(mut self, jobs: usize) -> Harness {
        self.jobs = Some(jobs.max(1));
        self
    }

    /// Runs only shard `index` of `of` (1-based): every `of`-th seed from
    /// the `index`-th, for a CI matrix. `NELI_SIM_SHARD=i/n` overrides it.
    pub fn shard(mut self, index: u64, of: u64) -> Harness {
        self.shard = Some((index, of));
        self
    }

    /// Keeps failures in `dir` (one folder per test inside it): every
    /// scenario file there is replayed first, at its own seed, and each
    /// new failing seed is written there (shrunk with [`Harness::shrink`]),
    /// in the format `neli-lab explore --regressions` writes. Commit the
    /// folder. `NELI_SIM_REGRESSIONS` sets it.
    pub fn regressions(mut self, dir: impl AsRef<Path>) -> Harness {
        self.regressions = Some(dir.as_ref().to_owned());
        self
    }

    /// Shrinks the first failing seeds (up to 3: their
    /// faults, their durations, the run's length, the members), spending at
    /// most `budget` simulation runs on each and one more to check that the
    /// shrunk scenario replays; the report carries it and the line that
    /// replays it (the other failures are kept unshrunk).
    /// `NELI_SIM_SHRINK=1` sets it and `NELI_SIM_SHRINK=0` switches it off
    /// (the variable wins over the code).
    pub fn shrink(mut self, budget: u32) -> Harness {
        self.shrink = Some(budget.max(1));
        self
    }

    /// Also writes the report to `path`, in the format its extension names:
    /// `.txt`, `.json`, `.xml` (JUnit), `.md`, `.html` (one self-contained
    /// page: each failing seed's reproduction, and the timeline and history
    /// of the first 20). `NELI_SIM_REPORT` adds more.
    pub fn report_to(mut self, path: impl AsRef<Path>) -> Harness {
        self.reports.push(path.as_ref().to_owned());
        self
    }

    /// Runs each seed twice and fails a seed whose two runs differ, naming
    /// the first history entry that differs and what usually causes it.
    /// `NELI_SIM_CHECK_DETERMINISM=1` sets it and `=0` switches it off (the
    /// variable wins over the code).
    pub fn check_determinism(mut self, on: bool) -> Harness {
        self.check_determinism = on;
        self
    }

    /// How long one seed may take on the wall clock before it is stopped
    /// and reported as failed (default [`DEFAULT_SEED_BUDGET`]).
    pub fn seed_budget(mut self, budget: Duration) -> Harness {
        self.budget = budget;
        self
    }

    /// The scenario this harness runs.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// What makes this harness unable to run, if anything.
    fn refusal(&self) -> Option<String> {
        if let Some(why) = &self.refused {
            return Some(why.clone());
        }
        if self.app.is_some() {
            // Broken on purpose inside the built-in application's own
            // handler; a harness application has its own handlers.
            let kinds = self
                .scenario
                .timed_faults()
                .map(|f| f.fault.kind())
                .chain(self.scenario.random.iter().filter(|r| r.faults > 0).flat_map(|r| r.kinds.iter().copied()));
            for kind in kinds {
                if kind == FaultKind::CloseAndWaitInHandler {
                    return Some(format!(
                        "scenario {}: fault kind {} acts inside the built-in application's Revoked handler; a harness application has its own handlers (drop the fault, or run without .app())",
                        self.scenario.name,
                        kind.name()
                    ));
                }
            }
        }
        if self.seeds.is_empty() {
            return Some("no seeds to run: .seeds() was given an empty range".into());
        }
        None
    }

    /// Runs one seed of the harness's scenario and judges it (the oracles,
    /// then the invariants), on the calling thread.
    pub fn run_seed(&self, seed: u64) -> RunReport {
        self.judge(&schedule::materialize(&self.scenario, seed), seed)
    }

    /// Runs `scenario` (its faults written out) at `seed` with this
    /// harness's application, store and invariants.
    fn judge(&self, scenario: &Scenario, seed: u64) -> RunReport {
        let setup = self.app.clone().map(|app| AppSetup { app, store: self.store });
        let mut report = run_materialized(scenario, seed, setup.as_ref());
        for (name, check) in &self.invariants {
            let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&report.history)));
            let failed = match judged {
                Ok(Ok(())) => continue,
                Ok(Err(what)) => format!("invariant {name}: {what}"),
                Err(payload) => format!("invariant {name} panicked: {}", crate::rt::panic_text(&*payload)),
            };
            report.violations.push(Violation::new(Rule::Invariant(name.clone()), failed));
        }
        report
    }

    /// Runs the seeds (or what the `NELI_SIM_*` variables choose: a kept
    /// regressions folder first), on [`Harness::jobs`] threads, each seed
    /// under its wall-clock budget, and reports in seed order; writes the
    /// report files asked for.
    pub fn run(&self) -> Report {
        match Settings::from_env() {
            Ok(env) => self.run_with(&env),
            Err(e) => {
                let mut report = Report::empty(&self.scenario.name, self.test.clone());
                report.error = Some(e.to_string());
                report
            }
        }
    }

    /// [`Harness::run`] with `env` in place of the `NELI_SIM_*` variables
    /// (a test of a CI setting, without touching the process environment).
    pub fn run_with(&self, env: &Settings) -> Report {
        let mut report = Report::empty(&self.scenario.name, self.test.clone());
        if !cfg!(tokio_unstable) {
            report.warnings.push(UNSEEDED_TOKIO.to_owned());
        }
        let plan = match self.ready(env) {
            Ok(plan) => plan,
            Err(e) => {
                report.error = Some(e);
                return report;
            }
        };
        plan.describe(&mut report);
        self.run_planned(&plan, &mut report);
        page::write_reports(&mut report, &plan.reports);
        report
    }
}

/// What one run does, from the builder's calls and the environment.
#[derive(Debug, Clone)]
struct Plan {
    scenario: Scenario,
    seeds: Vec<u64>,
    /// The first seed when the seeds are a range from a start.
    start: Option<u64>,
    start_auto: bool,
    shard: Option<(u64, u64)>,
    only_seed: bool,
    replay: Option<PathBuf>,
    jobs: usize,
    regressions: Option<PathBuf>,
    shrink: Option<u32>,
    reports: Vec<PathBuf>,
    check_determinism: bool,
}

impl Plan {
    fn describe(&self, report: &mut Report) {
        report.seeds.clone_from(&self.seeds);
        report.start = self.start;
        report.start_auto = self.start_auto;
        report.shard = self.shard;
        report.only_seed = self.only_seed;
        report.jobs = self.jobs;
        report.replayed_file = self.replay.clone();
        report.check_determinism = self.check_determinism;
    }
}

impl Harness {
    /// The plan for `env`, or why this harness cannot run.
    fn ready(&self, env: &Settings) -> Result<Plan, String> {
        let plan = self.plan(env)?;
        match self.refusal() {
            Some(why) => Err(why),
            None => Ok(plan),
        }
    }

    fn plan(&self, env: &Settings) -> Result<Plan, String> {
        let mut plan = Plan {
            scenario: self.scenario.clone(),
            seeds: self.seeds.clone(),
            start: None,
            start_auto: false,
            shard: env.shard.or(self.shard),
            only_seed: false,
            replay: env.replay.clone(),
            jobs: env.jobs.or(self.jobs).unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)),
            regressions: env.regressions.clone().or_else(|| self.regressions.clone()),
            shrink: env.shrink.unwrap_or(self.shrink),
            reports: self.reports.iter().chain(&env.reports).cloned().collect(),
            check_determinism: env.check_determinism.unwrap_or(self.check_determinism),
        };
        if let Some(file) = &env.replay {
            let s = Scenario::load(file).map_err(|e| format!("{}: {e}", settings::REPLAY_ENV))?;
            let Some(seed) = s.seed else {
                return Err(format!(
                    "{}={}: the file names no `seed` (a kept regression or a shrunk reproduction does)",
                    settings::REPLAY_ENV,
                    file.display()
                ));
            };
            (plan.scenario, plan.seeds, plan.only_seed, plan.shard) = (s, vec![seed], true, None);
            return Ok(plan);
        }
        if let Some(seed) = env.seed {
            (plan.seeds, plan.only_seed, plan.shard) = (vec![seed], true, None);
            return Ok(plan);
        }
        let count = env.seeds.unwrap_or(self.seeds.len() as u64);
        let start = env.start.or(self.start);
        if start.is_some() || env.seeds.is_some() {
            let first = match start {
                Some(s) => s.resolve(plan.shard.is_some()),
                None => self.seeds.first().copied().unwrap_or(0),
            };
            let end = first
                .checked_add(count)
                .ok_or_else(|| format!("start {first} + {count} seeds goes past the largest seed {}", u64::MAX))?;
            if count > pool::MAX_SEEDS {
                return Err(format!("{count} seeds in one run: at most {}; split them with shards", pool::MAX_SEEDS));
            }
            (plan.seeds, plan.start, plan.start_auto) =
                ((first..end).collect(), Some(first), start == Some(Start::Auto));
        }
        if let Some((index, of)) = plan.shard {
            if index == 0 || index > of {
                return Err(format!("shard {index}/{of}: need 1 <= i <= n"));
            }
            let all = std::mem::take(&mut plan.seeds);
            plan.seeds = all.iter().copied().skip((index - 1) as usize).step_by(of as usize).collect();
            if plan.seeds.is_empty() {
                return Err(format!("shard {index}/{of}: none of the {} seeds falls in this shard", all.len()));
            }
        }
        Ok(plan)
    }
}
