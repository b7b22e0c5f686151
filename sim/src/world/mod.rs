//! One simulated run: [`World::build`] sets up the hosts on the
//! simulator's runtime (`crate::rt`; ARCHITECTURE.md, "The simulator's runtime": broker
//! hosts, member hosts running the real `neli::Neli` driver, an optional
//! foreign writer), [`World::play`] runs the fault timeline between
//! simulation steps (`apply.rs` holds what each fault kind does), and
//! [`World::finish`] hands the recording to the oracles. A run is a pure
//! function of (scenario, seed, code).

mod apply;
mod foreign;
pub(crate) mod member;

use std::time::Duration;

use crate::oracle::Figures;
use crate::scenario::{FaultKind, Scenario, schedule};
use crate::verdict::{Rule, Violation};
use apply::World;

/// The version of the simulator's timing model: the same scenario and seed
/// give another run under another model. 2: events happen at the
/// millisecond they are due (ARCHITECTURE.md, "The simulator's runtime");
/// 1 was turmoil's 10 ms ticks.
pub const TIMING_MODEL: u32 = 2;

/// How often the simulator's own polling loops look (the coordinator's
/// group check, a member's control requests, the spare's start), and the
/// wait after an election ends before its status is judged.
pub const TICK: Duration = Duration::from_millis(10);
/// Default link delay range: seeds draw different delays, so they explore
/// different message orders.
pub const MIN_LATENCY: Duration = Duration::from_millis(1);
pub const MAX_LATENCY: Duration = Duration::from_millis(25);

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub scenario: String,
    pub seed: u64,
    /// One line per event: `  12.345s m1 Acquired role=0 token=17`.
    pub trace: Vec<String>,
    /// The faults as they were played: start, end, hosts hit (resolved),
    /// and the trace line's text.
    pub faults: Vec<PlayedFault>,
    pub figures: Figures,
    /// Broken guarantees; empty for a passing run.
    pub violations: Vec<crate::verdict::Violation>,
    /// The run as typed events (`history`): what the timeline draws,
    /// `neli-lab run --history` writes and a harness's invariants judge.
    pub history: crate::history::History,
    /// The layers whose setting made a difference (`Log::acted`).
    pub acted: std::collections::BTreeSet<crate::scenario::Layer>,
}

/// A fault as played: when it started and ended (global ms; an instant
/// fault ends where it starts), the hosts it hit and how the trace names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayedFault {
    pub kind: FaultKind,
    pub start: u64,
    pub end: u64,
    pub hosts: Vec<String>,
    pub label: String,
}

impl RunReport {
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Runs `scenario` with `seed` and judges it. A `[random]` table is drawn
/// first (`scenario::schedule`, the generator every command shares). Never
/// panics on a scenario that passed validation: a panic inside the
/// simulated code (the driver, the core) ends the run with a violation
/// that quotes it, so `explore` names the seed instead of dying.
pub fn run_scenario(scenario: &Scenario, seed: u64) -> RunReport {
    let scenario = schedule::materialize(scenario, seed);
    run_materialized(&scenario, seed, None)
}

/// Runs an already drawn scenario, with a harness application in every
/// member process instead of the built-in one if `app` says so.
pub(crate) fn run_materialized(scenario: &Scenario, seed: u64, app: Option<&crate::app::AppSetup>) -> RunReport {
    let mut world = World::build(scenario, seed, app);
    let played = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.play(scenario.duration.ms())));
    let stopped = played.unwrap_or_else(|payload| {
        let what = crate::rt::panic_text(&*payload);
        Some(Violation::new(Rule::Panicked, format!("the simulation panicked: {what}")))
    });
    world.finish(scenario, seed, stopped)
}
