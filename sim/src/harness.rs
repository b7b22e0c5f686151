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

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::app::{AppFn, AppSetup, SimMember, StoreMode};
use crate::history::History;
use crate::scenario::{FaultKind, Scenario, ScenarioError, schedule};
use crate::verdict::{Rule, Violation};
use crate::world::{RunReport, run_materialized};

/// The environment variable that reruns one seed: `NELI_SIM_SEED=17`.
pub const SEED_ENV: &str = "NELI_SIM_SEED";

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
    app: Option<AppFn>,
    store: StoreMode,
    invariants: Vec<(String, Invariant)>,
    seeds: Vec<u64>,
    budget: Duration,
    test: Option<String>,
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
            app: None,
            store: StoreMode::default(),
            invariants: Vec::new(),
            seeds: (0..100).collect(),
            budget: DEFAULT_SEED_BUDGET,
            test,
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

    /// The seeds to run (default `0..100`). `NELI_SIM_SEED` overrides them.
    pub fn seeds(mut self, seeds: impl IntoIterator<Item = u64>) -> Harness {
        self.seeds = seeds.into_iter().collect();
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

    /// Runs one seed and judges it (the oracles, then the invariants).
    /// Panics only if the harness cannot run at all (see [`Harness::run`]).
    pub fn run_seed(&self, seed: u64) -> RunReport {
        let scenario = schedule::materialize(&self.scenario, seed);
        let setup = self.app.clone().map(|app| AppSetup { app, store: self.store });
        let mut report = run_materialized(&scenario, seed, setup.as_ref());
        for (name, check) in &self.invariants {
            let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&report.history)));
            let failed = match judged {
                Ok(Ok(())) => continue,
                Ok(Err(what)) => format!("invariant {name}: {what}"),
                Err(payload) => format!("invariant {name} panicked: {}", crate::app::panic_text(&*payload)),
            };
            report.violations.push(Violation::new(Rule::Invariant(name.clone()), failed));
        }
        report
    }

    /// Runs every seed (or only `NELI_SIM_SEED`'s), each on a thread of its
    /// own under the seed's wall-clock budget, and reports.
    pub fn run(&self) -> Report {
        let mut report = Report {
            scenario: self.scenario.name.clone(),
            seeds: Vec::new(),
            failures: Vec::new(),
            error: None,
            only_seed: false,
            warnings: Vec::new(),
        };
        if !cfg!(tokio_unstable) {
            report.warnings.push(UNSEEDED_TOKIO.to_owned());
        }
        let seeds = match seeds_from(std::env::var(SEED_ENV).ok().as_deref(), &self.seeds) {
            Ok((seeds, only)) => {
                report.only_seed = only;
                seeds
            }
            Err(e) => {
                report.error = Some(e.to_string());
                return report;
            }
        };
        if let Some(why) = self.refusal() {
            report.error = Some(why);
            return report;
        }
        for seed in seeds {
            report.seeds.push(seed);
            let (failed, trace) = match self.run_within_budget(seed) {
                Ok(r) if r.passed() => continue,
                Ok(r) => (r.violations, r.trace),
                Err(why) => (vec![Violation::new(Rule::App, why)], Vec::new()),
            };
            report.failures.push(Failure { seed, violations: failed, reproduce: self.reproduce(seed), trace });
        }
        report
    }

    fn run_within_budget(&self, seed: u64) -> Result<RunReport, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let me = self.clone();
        let spawned = std::thread::Builder::new().name(format!("neli-sim seed {seed}")).spawn(move || {
            let _ = tx.send(me.run_seed(seed));
        });
        if let Err(e) = spawned {
            return Err(format!("seed {seed}: cannot start its thread: {e}"));
        }
        match rx.recv_timeout(self.budget) {
            Ok(r) => Ok(r),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(format!(
                "application: seed {seed} did not finish within its wall-clock budget of {:?}: an application that never yields to the runtime (a loop with no .await) blocks the simulation; its thread is left behind",
                self.budget
            )),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                Err(format!("seed {seed}: its run ended without a report (a panic outside the simulation)"))
            }
        }
    }

    /// The command that reruns `seed` alone.
    fn reproduce(&self, seed: u64) -> String {
        match &self.test {
            Some(test) => format!("{SEED_ENV}={seed} cargo test {test} -- --exact"),
            None => format!("{SEED_ENV}={seed} <the command that ran this harness>"),
        }
    }
}

/// The seeds to run: `NELI_SIM_SEED`'s value (`env`) alone if it is set
/// (and `true`: one seed chosen), else `seeds`; an error names a value that
/// is not a seed.
pub fn seeds_from(env: Option<&str>, seeds: &[u64]) -> Result<(Vec<u64>, bool), NotASeed> {
    match env {
        None => Ok((seeds.to_vec(), false)),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(seed) => Ok((vec![seed], true)),
            Err(_) => Err(NotASeed(v.to_owned())),
        },
    }
}

/// `NELI_SIM_SEED`'s value is not a seed ([`seeds_from`]); the text names
/// the variable, the value and what a seed is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{SEED_ENV}={0:?} is not a seed (a whole number from 0 to 2^64 - 1)")]
pub struct NotASeed(pub String);

/// A failing seed.
#[derive(Debug, Clone)]
pub struct Failure {
    pub seed: u64,
    pub violations: Vec<Violation>,
    /// The one-line command that reruns exactly this seed.
    pub reproduce: String,
    /// The run's trace (empty if it never finished).
    pub trace: Vec<String>,
}

/// What a harness run found.
#[derive(Debug, Clone)]
pub struct Report {
    pub scenario: String,
    /// The seeds run, in order.
    pub seeds: Vec<u64>,
    pub failures: Vec<Failure>,
    /// Why nothing ran (a bad `NELI_SIM_SEED`, a fault kind a harness
    /// application cannot take), if so.
    pub error: Option<String>,
    /// `NELI_SIM_SEED` chose the one seed run.
    pub only_seed: bool,
    /// What may make the verdict less than it seems (printed first).
    pub warnings: Vec<String>,
}

impl Report {
    /// Every seed ran and passed.
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.failures.is_empty() && !self.seeds.is_empty()
    }

    /// Panics with the report unless it passed: the last line of a test.
    pub fn assert_passed(&self) {
        assert!(self.passed(), "{self}");
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        if let Some(e) = &self.error {
            return writeln!(f, "harness {}: cannot run: {e}", self.scenario);
        }
        let which = if self.only_seed { format!(" ({SEED_ENV})") } else { String::new() };
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        writeln!(
            f,
            "harness {}: {} seed(s){which}, {} failed: {verdict}",
            self.scenario,
            self.seeds.len(),
            self.failures.len()
        )?;
        for x in self.failures.iter().take(5) {
            writeln!(f, "seed {}:", x.seed)?;
            for v in x.violations.iter().take(5) {
                writeln!(f, "  {v}")?;
            }
            writeln!(f, "  reproduce: {}", x.reproduce)?;
        }
        if self.failures.len() > 5 {
            let rest: Vec<String> = self.failures[5..].iter().map(|x| x.seed.to_string()).collect();
            writeln!(f, "also failing: seeds {}", rest.join(", "))?;
        }
        Ok(())
    }
}
