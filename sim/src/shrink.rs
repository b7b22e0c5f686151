//! Minimising a failing run. The seed stays fixed (it drives the runtime's
//! message delays and the members' clock origins); what shrinks is the
//! scenario: first whole faults are dropped, then the remaining `[random]`
//! schedule is simplified along its proptest value tree (with at most half
//! of the run budget), then greedy passes run until nothing more helps:
//! drop faults, halve fault durations, cut the run length, drop members. A
//! candidate counts as failing only if it shows a violation of the same
//! class as the original (an overlap stays an overlap; a user invariant
//! stays that invariant), so shrinking cannot wander to another bug.
//!
//! How a candidate runs is the caller's: `neli-lab shrink` runs the
//! built-in application ([`shrink`]), the harness runs the team's own
//! application and invariants ([`shrink_with`]).

use crate::scenario::{Dur, Host, TimedFault, schedule};
use crate::verdict::{Rule, Violation};
use crate::{Scenario, run_scenario};

/// The outcome of a shrink.
#[derive(Debug, Clone)]
pub struct Shrunk {
    pub scenario: Scenario,
    /// The rule the shrunk scenario still breaks (its first violation's).
    pub class: Rule,
    pub violations: Vec<Violation>,
    pub runs: u32,
}

/// Runs one candidate (a scenario whose faults are all written out) at
/// the shrink's seed and says what it broke.
pub type RunCandidate<'a> = &'a mut dyn FnMut(&Scenario) -> Vec<Violation>;

struct Judge<'a> {
    seed: u64,
    class: Rule,
    runs: u32,
    budget: u32,
    run: RunCandidate<'a>,
}

impl Judge<'_> {
    fn fails(&mut self, s: &Scenario) -> Option<Vec<Violation>> {
        if self.runs >= self.budget {
            return None;
        }
        self.runs += 1;
        let violations = (self.run)(s);
        violations.iter().any(|v| v.rule == self.class).then_some(violations)
    }
}

fn faults(s: &Scenario) -> Vec<TimedFault> {
    s.timed_faults().cloned().collect()
}

fn set_faults(s: &Scenario, fs: Vec<TimedFault>) -> Scenario {
    let mut base = s.clone();
    base.faults.clear();
    schedule::with_faults(&base, fs)
}

fn names_member_beyond(f: &TimedFault, n: u32) -> bool {
    f.fault.hosts().into_iter().any(|(_, h)| matches!(h, Host::Member(i) if i >= n))
}

fn fault_end(f: &TimedFault) -> u64 {
    f.at.ms() + f.fault.duration().map_or(0, Dur::ms)
}

/// Shrinks `s` (as given, `[random]` included) failing with `seed` under
/// the built-in application; `None` if it does not fail. `budget` bounds
/// the simulation runs.
pub fn shrink(s: &Scenario, seed: u64, budget: u32) -> Option<Shrunk> {
    shrink_with(s, seed, budget, &mut |c| run_scenario(c, seed).violations)
}

/// [`shrink`], with `run` running each candidate (at `seed`) and returning
/// its violations: the harness passes one that runs the team's application
/// and invariants. `run` is called at most `budget` times.
pub fn shrink_with(s: &Scenario, seed: u64, budget: u32, run: RunCandidate<'_>) -> Option<Shrunk> {
    let materialized = schedule::materialize(s, seed);
    let first = run(&materialized);
    let class = first.first()?.rule.clone();
    let mut j = Judge { seed, class, runs: 1, budget, run };
    let mut best = Best { scenario: materialized, violations: first };
    drop_whole_faults(s, &mut j, &mut best);
    // Phase 2: greedy passes to a fixpoint.
    let mut changed = true;
    while changed && j.runs < j.budget {
        changed = drop_faults(&mut j, &mut best);
        changed |= halve_durations(&mut j, &mut best);
        changed |= cut_run(&mut j, &mut best);
        changed |= fewer_members(&mut j, &mut best);
    }
    Some(Shrunk { scenario: best.scenario, class: j.class, violations: best.violations, runs: j.runs })
}

/// The smallest failing scenario so far and how it failed.
struct Best {
    scenario: Scenario,
    violations: Vec<Violation>,
}

impl Best {
    /// Keeps `cand` if it fails the same way; true if it did.
    fn try_(&mut self, j: &mut Judge, cand: Scenario) -> bool {
        match j.fails(&cand) {
            Some(v) => {
                (self.scenario, self.violations) = (cand, v);
                true
            }
            None => false,
        }
    }
}

type DrawnTree = Option<Box<dyn proptest::strategy::ValueTree<Value = Vec<TimedFault>>>>;

/// Phase 1: drop whole faults, the scenario's own and the drawn ones, then
/// walk the drawn schedule's value tree with the dropped ones kept out (the
/// vector has a fixed length, so indices stay put).
fn drop_whole_faults(s: &Scenario, j: &mut Judge, best: &mut Best) {
    let own: Vec<TimedFault> = faults(&{
        let mut t = s.clone();
        t.random = None;
        t
    });
    let mut tree: DrawnTree = schedule::tree(s, j.seed);
    let drawn_len = tree.as_ref().map_or(0, |t| t.current().len());
    let mut keep = vec![true; own.len() + drawn_len];
    let build = |keep: &[bool], drawn: &[TimedFault]| -> Scenario {
        let fs: Vec<TimedFault> =
            own.iter().chain(drawn.iter()).zip(keep).filter(|(_, k)| **k).map(|(f, _)| f.clone()).collect();
        set_faults(s, fs)
    };
    for i in (0..keep.len()).rev() {
        keep[i] = false;
        let drawn = tree.as_ref().map(|t| t.current()).unwrap_or_default();
        if !best.try_(j, build(&keep, &drawn)) {
            keep[i] = true;
        }
    }
    if let Some(t) = tree.as_mut() {
        // Leave half of what is left for phase 2.
        let stop = j.runs + (j.budget - j.runs) / 2;
        let mut more = t.simplify();
        while more && j.runs < stop {
            more = if best.try_(j, build(&keep, &t.current())) { t.simplify() } else { t.complicate() };
        }
    }
}

/// Drop faults, latest first.
fn drop_faults(j: &mut Judge, best: &mut Best) -> bool {
    let mut changed = false;
    let mut i = best.scenario.faults.len();
    while i > 0 {
        i -= 1;
        let mut fs = faults(&best.scenario);
        fs.remove(i);
        let cand = set_faults(&best.scenario, fs);
        changed |= best.try_(j, cand);
    }
    changed
}

/// Halve durations (not below 100 ms).
fn halve_durations(j: &mut Judge, best: &mut Best) -> bool {
    let mut changed = false;
    for i in 0..best.scenario.faults.len() {
        loop {
            let mut fs = faults(&best.scenario);
            let Some(d) = fs[i].fault.duration_mut() else { break };
            let half = d.0 / 2;
            if half < 100 {
                break;
            }
            *d = Dur(half);
            let cand = set_faults(&best.scenario, fs);
            if !best.try_(j, cand) {
                break;
            }
            changed = true;
        }
    }
    changed
}

/// Cut the run: to just after the last fault, else by halves.
fn cut_run(j: &mut Judge, best: &mut Best) -> bool {
    let mut changed = false;
    let floor = faults(&best.scenario).iter().map(fault_end).max().unwrap_or(0) + 1000;
    for target in [floor, (best.scenario.duration.ms() + floor) / 2] {
        if target < best.scenario.duration.ms() {
            let mut cand = best.scenario.clone();
            cand.duration = Dur(target as i64);
            changed |= best.try_(j, cand);
        }
    }
    changed
}

/// Fewer members: drop the highest ones and faults naming them.
fn fewer_members(j: &mut Judge, best: &mut Best) -> bool {
    let mut changed = false;
    while best.scenario.election.members > 1 {
        let n = best.scenario.election.members - 1;
        let mut cand = best.scenario.clone();
        cand.election.members = n;
        let fs: Vec<TimedFault> = faults(&best.scenario).into_iter().filter(|f| !names_member_beyond(f, n)).collect();
        cand = set_faults(&cand, fs);
        if !best.try_(j, cand) {
            break;
        }
        changed = true;
    }
    changed
}
