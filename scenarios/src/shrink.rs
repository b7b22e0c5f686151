//! Minimising a failing run. The seed stays fixed (it drives turmoil's
//! message delays and the members' clock origins); what shrinks is the
//! scenario: first whole faults are dropped, then the remaining `[random]`
//! schedule is simplified along its proptest value tree (with at most half
//! of the run budget), then greedy passes run until nothing more helps —
//! drop faults, halve fault durations, cut the run length, drop members. A candidate counts as
//! failing only if it shows a violation of the same class as the original
//! (an overlap stays an overlap), so shrinking cannot wander to another bug.

use indicatif::ProgressBar;
use neli_sim::scenario::{Dur, Host, TimedFault};
use neli_sim::{Scenario, run_scenario};

use crate::{schedule, violation_class};

/// The outcome of a shrink.
#[derive(Debug, Clone)]
pub struct Shrunk {
    pub scenario: Scenario,
    pub class: String,
    pub violations: Vec<String>,
    pub runs: u32,
}

struct Judge<'a> {
    seed: u64,
    class: String,
    runs: u32,
    budget: u32,
    bar: &'a ProgressBar,
}

impl Judge<'_> {
    fn fails(&mut self, s: &Scenario) -> Option<Vec<String>> {
        if self.runs >= self.budget {
            return None;
        }
        self.runs += 1;
        self.bar.inc(1);
        let r = run_scenario(s, self.seed);
        r.violations.iter().any(|v| violation_class(v) == self.class).then_some(r.violations)
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

/// Shrinks `s` (as given, `[random]` included) failing with `seed`; `None`
/// if it does not fail. `budget` bounds the simulation runs.
pub fn shrink(s: &Scenario, seed: u64, budget: u32) -> Option<Shrunk> {
    shrink_with_progress(s, seed, budget, &ProgressBar::hidden())
}

/// [`shrink`], ticking `bar` once per simulation run (its length is the
/// budget, so its ETA is an upper bound).
pub fn shrink_with_progress(s: &Scenario, seed: u64, budget: u32, bar: &ProgressBar) -> Option<Shrunk> {
    let first = run_scenario(&schedule::materialize(s, seed), seed);
    let class = violation_class(first.violations.first()?).to_owned();
    let mut j = Judge { seed, class, runs: 1, budget, bar };
    let mut violations = first.violations.clone();
    let mut best = schedule::materialize(s, seed);
    // Phase 1: drop whole faults, the scenario's own and the drawn ones,
    // then walk the drawn schedule's value tree with the dropped ones kept
    // out (the vector has a fixed length, so indices stay put).
    let own: Vec<TimedFault> = faults(&{
        let mut t = s.clone();
        t.random = None;
        t
    });
    let mut tree = schedule::tree(s, seed);
    let drawn_len = tree.as_ref().map_or(0, |t| t.current().len());
    let mut keep = vec![true; own.len() + drawn_len];
    let build = |keep: &[bool], drawn: &[TimedFault]| -> Scenario {
        let fs: Vec<TimedFault> =
            own.iter().chain(drawn.iter()).zip(keep).filter(|(_, k)| **k).map(|(f, _)| f.clone()).collect();
        set_faults(s, fs)
    };
    let drawn_now = |tree: &Option<Box<dyn proptest::strategy::ValueTree<Value = Vec<TimedFault>>>>| {
        tree.as_ref().map(|t| t.current()).unwrap_or_default()
    };
    for i in (0..keep.len()).rev() {
        keep[i] = false;
        let cand = build(&keep, &drawn_now(&tree));
        match j.fails(&cand) {
            Some(v) => (best, violations) = (cand, v),
            None => keep[i] = true,
        }
    }
    if let Some(t) = tree.as_mut() {
        // Leave half of what is left for phase 2.
        let stop = j.runs + (j.budget - j.runs) / 2;
        let mut more = t.simplify();
        while more && j.runs < stop {
            let cand = build(&keep, &t.current());
            if let Some(v) = j.fails(&cand) {
                best = cand;
                violations = v;
                more = t.simplify();
            } else {
                more = t.complicate();
            }
        }
    }
    // Phase 2: greedy passes to a fixpoint.
    let mut changed = true;
    while changed && j.runs < j.budget {
        changed = false;
        // Drop faults, latest first.
        let mut i = best.faults.len();
        while i > 0 {
            i -= 1;
            let mut fs = faults(&best);
            fs.remove(i);
            let cand = set_faults(&best, fs);
            if let Some(v) = j.fails(&cand) {
                (best, violations, changed) = (cand, v, true);
            }
        }
        // Halve durations (not below 100 ms).
        for i in 0..best.faults.len() {
            loop {
                let mut fs = faults(&best);
                let Some(d) = fs[i].fault.duration_mut() else { break };
                let half = d.0 / 2;
                if half < 100 {
                    break;
                }
                *d = Dur(half);
                let cand = set_faults(&best, fs);
                match j.fails(&cand) {
                    Some(v) => (best, violations, changed) = (cand, v, true),
                    None => break,
                }
            }
        }
        // Cut the run: to just after the last fault, else by halves.
        let floor = faults(&best).iter().map(fault_end).max().unwrap_or(0) + 1000;
        for target in [floor, (best.duration.ms() + floor) / 2] {
            if target < best.duration.ms() {
                let mut cand = best.clone();
                cand.duration = Dur(target as i64);
                if let Some(v) = j.fails(&cand) {
                    (best, violations, changed) = (cand, v, true);
                }
            }
        }
        // Fewer members: drop the highest ones and faults naming them.
        while best.election.members > 1 {
            let n = best.election.members - 1;
            let mut cand = best.clone();
            cand.election.members = n;
            let fs: Vec<TimedFault> = faults(&best).into_iter().filter(|f| !names_member_beyond(f, n)).collect();
            cand = set_faults(&cand, fs);
            match j.fails(&cand) {
                Some(v) => (best, violations, changed) = (cand, v, true),
                None => break,
            }
        }
    }
    Some(Shrunk { scenario: best, class: j.class, violations, runs: j.runs })
}
