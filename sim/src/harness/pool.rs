//! Running a harness's seeds: across threads (each seed's simulation is
//! single-threaded and deterministic; threads share only a work counter
//! and results go back in seed order, so the report never depends on the
//! number of threads), each under its wall-clock budget, then the
//! failures shrunk and kept.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::report::{self, Failure, Replayed, Report, ShrunkRepro};
use super::{Harness, Plan, determinism, keep, settings};
use crate::scenario::{Scenario, schedule};
use crate::verdict::{Rule, Violation};
use crate::world::RunReport;

/// Most seeds one run takes; more is a job for shards.
pub const MAX_SEEDS: u64 = 100_000_000;

/// How many failing seeds one run shrinks (the first ones, in seed order):
/// each may take the whole shrink budget.
pub const MAX_SHRUNK: usize = 3;

/// A seed's run, or why it has none (it overran its budget).
pub(super) type Outcome = Result<RunReport, String>;

impl Harness {
    /// Everything [`Harness::run`] does once the plan is made.
    pub(super) fn run_planned(&self, plan: &Plan, report: &mut Report) {
        let kept_dir = plan.regressions.as_ref().map(|d| d.join(self.folder_name()));
        if let (Some(dir), None) = (&kept_dir, &plan.replay) {
            match keep::load(dir) {
                Ok(loaded) => report.regressions = self.replay_kept(&loaded, plan.jobs),
                Err(e) => {
                    report.error = Some(e);
                    return;
                }
            }
        }
        let outcomes = self.run_seeds(&plan.scenario, &plan.seeds, plan.jobs, plan.check_determinism);
        for (seed, outcome) in plan.seeds.iter().copied().zip(outcomes) {
            let reproduce = self.reproduce(seed, plan);
            match outcome {
                Ok(r) if r.passed() => {}
                Ok(r) => {
                    let detailed = report.failures.len() < report::DETAILED_FAILURES;
                    report.failures.push(Failure::of(&plan.scenario, seed, r, reproduce, detailed));
                }
                Err(why) => report.failures.push(Failure::without_run(seed, Violation::new(Rule::App, why), reproduce)),
            }
        }
        if let Some(budget) = plan.shrink {
            for f in report.failures.iter_mut().take(MAX_SHRUNK) {
                f.shrunk = self.shrink_seed(&plan.scenario, f.seed, budget);
            }
        }
        if let (Some(dir), None) = (&kept_dir, &plan.replay) {
            match keep::write_new(dir, &plan.scenario, &report.failures, self.test.as_deref()) {
                Ok(written) => report.kept = written,
                Err(e) => report.error = Some(e),
            }
            // A shrunk reproduction is the kept file: replay names it.
            for f in &mut report.failures {
                if let Some(path) = report.kept.iter().find(|p| keep::is_file_of(p, &plan.scenario.name, f.seed)) {
                    f.kept = Some(path.clone());
                    if let Some(s) = &mut f.shrunk {
                        s.reproduce = self.replay_line(path);
                    }
                }
            }
        }
    }

    /// Runs `seeds` of `scenario` on `jobs` threads; the outcomes in seed order.
    pub(super) fn run_seeds(&self, scenario: &Scenario, seeds: &[u64], jobs: usize, twice: bool) -> Vec<Outcome> {
        on_threads(seeds, jobs, |seed| self.outcome(scenario, *seed, twice))
    }

    /// One seed; with `twice`, run again and judged different if it is.
    fn outcome(&self, scenario: &Scenario, seed: u64, twice: bool) -> Outcome {
        let mut first = self.run_within_budget(scenario, seed)?;
        if twice {
            let second = self.run_within_budget(scenario, seed)?;
            if let Some(why) = determinism::difference(&first, &second) {
                first.violations.push(Violation::new(Rule::Nondeterministic, format!("nondeterministic: {why}")));
            }
        }
        Ok(first)
    }

    /// Runs `scenario` at `seed` on a thread of its own and waits at most
    /// the seed budget for it.
    fn run_within_budget(&self, scenario: &Scenario, seed: u64) -> Outcome {
        let (tx, rx) = std::sync::mpsc::channel();
        let (me, scenario) = (self.clone(), schedule::materialize(scenario, seed));
        let spawned = std::thread::Builder::new().name(format!("neli-sim seed {seed}")).spawn(move || {
            let _ = tx.send(me.judge(&scenario, seed));
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

    /// Replays each kept file at its seed, on `jobs` threads.
    fn replay_kept(&self, loaded: &[(std::path::PathBuf, Scenario, u64)], jobs: usize) -> Vec<Replayed> {
        on_threads(loaded, jobs, |(path, s, seed)| Replayed {
            file: path.clone(),
            seed: *seed,
            violations: match self.run_within_budget(s, *seed) {
                Ok(r) => r.violations,
                Err(why) => vec![Violation::new(Rule::App, why)],
            },
            reproduce: self.replay_line(path),
        })
    }

    /// The failing `seed` shrunk with this harness's application and
    /// invariants, checked to fail again when read back from its file.
    fn shrink_seed(&self, scenario: &Scenario, seed: u64, budget: u32) -> Option<ShrunkRepro> {
        let mut run = |c: &Scenario| match self.run_within_budget(c, seed) {
            Ok(r) => r.violations,
            Err(why) => vec![Violation::new(Rule::App, why)],
        };
        let shrunk = crate::shrink::shrink_with(scenario, seed, budget, &mut run)?;
        let mut file = shrunk.scenario.clone();
        file.seed = Some(seed);
        let header = vec![
            format!("seed {seed} of {}, shrunk in {} runs by the harness", scenario.name, shrunk.runs),
            format!("fails with: {}", shrunk.violations.first().map(ToString::to_string).unwrap_or_default()),
        ];
        let toml = file.to_toml(&header).ok()?;
        let back = Scenario::parse(&toml, "<shrunk>").ok()?;
        let again = run(&back);
        let replays = again.iter().any(|v| v.rule == shrunk.class);
        Some(ShrunkRepro {
            class: shrunk.class.class(),
            runs: shrunk.runs,
            faults: back.faults.len(),
            duration_ms: back.duration.ms(),
            members: back.election.members,
            replays,
            toml,
            reproduce: format!("{}=<that file> {}", settings::REPLAY_ENV, self.rerun_command()),
        })
    }

    /// The folder of this harness's kept failures inside a regressions
    /// directory: the test's name (`::` as `-`), else the scenario's.
    fn folder_name(&self) -> String {
        let id = self.test.as_deref().unwrap_or(&self.scenario.name);
        id.replace("::", "-")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect()
    }

    /// The command that reruns this test (`cargo test NAME -- --exact`).
    fn rerun_command(&self) -> String {
        match &self.test {
            Some(test) => format!("cargo test {test} -- --exact"),
            None => "<the command that ran this harness>".to_owned(),
        }
    }

    /// The command that reruns `seed` alone.
    fn reproduce(&self, seed: u64, plan: &Plan) -> String {
        match &plan.replay {
            Some(file) => self.replay_line(file),
            None => format!("{}={seed} {}", settings::SEED_ENV, self.rerun_command()),
        }
    }

    /// The command that replays one scenario file at its seed.
    fn replay_line(&self, file: &std::path::Path) -> String {
        format!("{}={} {}", settings::REPLAY_ENV, file.display(), self.rerun_command())
    }
}

/// `f` of each item on `jobs` threads that share only a work counter; the
/// results in the items' order, whatever the threads.
fn on_threads<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { return };
                    let r = f(item);
                    out.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(r);
                }
            });
        }
    });
    let done = out.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    // A thread returns only once the counter is past the end, and a panic
    // inside `f` propagates out of the scope: every slot is filled.
    done.into_iter().flatten().collect()
}
