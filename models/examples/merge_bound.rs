//! How much two candidate reductions of the election model could merge, on
//! the consumer-protocol base of `check` (3 members, T = 2, S = 4, G = 3,
//! 8 ticks, a pause, an isolation and a heartbeat failure), plus the fault
//! kinds named on the command line (`log`, `clock`, `crash`). Usage:
//! `cargo run --release -p neli-models --example merge_bound -- [log] [clock] [crash] [last-tick]`.
//!
//! It walks every reachable state once (depth first, one thread, members
//! interchangeable as in `check`) and prints:
//! - how many states remain when the fault budget spent is not told apart:
//!   a bound on what subsuming a state by one with less budget spent (and
//!   otherwise equal) could save;
//! - how many states remain when the global clock is not told apart, and
//!   how many each tick holds: what a reduction of time, which merges a
//!   state with a later copy of itself, could merge;
//! - with `last-tick`, the count when pauses, isolations and heartbeat
//!   failures are not started in the last tick (where no tick follows for
//!   them to delay anything; a measure, not a reduction `check` makes).
//!
//! BENCHMARKS.md, "Model checker at scale", gives the figures and why
//! neither reduction reaches the thirty times the 10 minutes need.

use std::collections::HashSet;

use neli_models::election::canonical_fingerprint;
use neli_models::{ElectionAction, ElectionModelCfg, Faults, GroupProtocol};
use stateright::Model;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |word: &str| args.iter().any(|a| a == word);
    let mut c = ElectionModelCfg::exclusive(3);
    (c.heartbeat_timeout, c.session_timeout, c.grace, c.heartbeat_interval, c.max_ticks) = (2, 4, 3, 1, 8);
    c.protocol = GroupProtocol::Consumer;
    c.faults = Faults { pauses: 1, isolations: 1, heartbeat_failures: 1, ..Faults::default() };
    c.faults.log_losses = u8::from(has("log"));
    (c.faults.clock_steps, c.faults.max_skew) = if has("clock") { (1, 1) } else { (0, 0) };
    c.faults.crashes = u8::from(has("crash"));
    let last_tick = has("last-tick");
    let model = c.into_model();

    let mut seen: HashSet<u64> = HashSet::new();
    let mut without_budget: HashSet<u64> = HashSet::new();
    let mut without_clock: HashSet<u64> = HashSet::new();
    let mut per_tick = vec![0u64; usize::from(model.cfg.max_ticks) + 1];
    let mut stack = model.init_states();
    let mut actions = Vec::new();
    while let Some(s) = stack.pop() {
        if !seen.insert(canonical_fingerprint(&s)) {
            continue;
        }
        per_tick[usize::from(s.now)] += 1;
        let mut unspent = s.clone();
        unspent.used = Faults::default();
        without_budget.insert(canonical_fingerprint(&unspent));
        let mut timeless = s.clone();
        timeless.now = 0;
        without_clock.insert(canonical_fingerprint(&timeless));
        if seen.len().is_multiple_of(10_000_000) {
            eprintln!("{} states", seen.len());
        }
        let last = s.now >= model.cfg.max_ticks;
        model.actions(&s, &mut actions);
        for a in actions.drain(..) {
            if last_tick && last && starts_a_delaying_fault(&a) {
                continue;
            }
            stack.extend(model.next_state(&s, a));
        }
    }
    let ratio = seen.len() as f64 / without_budget.len() as f64;
    println!("faults {:?}{}", model.cfg.faults, if last_tick { ", none started in the last tick" } else { "" });
    println!("unique states {}; without the budget spent {} (x{ratio:.3})", seen.len(), without_budget.len());
    println!("without the global clock {}; per tick {per_tick:?}", without_clock.len());
}

/// The faults that keep a member (or its heartbeats) from the coordinator
/// until they heal.
fn starts_a_delaying_fault(a: &ElectionAction) -> bool {
    matches!(a, ElectionAction::Pause(_) | ElectionAction::Isolate(_) | ElectionAction::HeartbeatsFail(_))
}
