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
use neli_sim::{Rule, Scenario, ScenarioError, Violation, run_scenario};

use crate::schedule;

/// The outcome of a shrink.
#[derive(Debug, Clone)]
pub struct Shrunk {
    pub scenario: Scenario,
    /// The rule the shrunk scenario still breaks (its first violation's).
    pub class: Rule,
    pub violations: Vec<Violation>,
    pub runs: u32,
}

struct Judge<'a> {
    seed: u64,
    class: Rule,
    runs: u32,
    budget: u32,
    bar: &'a ProgressBar,
}

impl Judge<'_> {
    fn fails(&mut self, s: &Scenario) -> Option<Vec<Violation>> {
        if self.runs >= self.budget {
            return None;
        }
        self.runs += 1;
        self.bar.inc(1);
        let r = run_scenario(s, self.seed);
        r.violations.iter().any(|v| v.rule == self.class).then_some(r.violations)
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
    let class = first.violations.first()?.rule.clone();
    let mut j = Judge { seed, class, runs: 1, budget, bar };
    let mut best = Best { scenario: schedule::materialize(s, seed), violations: first.violations.clone() };
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

/// A shrunk scenario as the file `shrink` writes, checked to parse and
/// fail deterministically when read back, with the line `shrink` prints
/// about it.
pub struct ShrunkFile {
    pub text: String,
    pub summary: String,
}

/// Why a shrunk scenario cannot be written: the file would not reproduce
/// the failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShrinkFileError {
    #[error(transparent)]
    Unwritable(#[from] ScenarioError),
    #[error("internal: shrunk scenario does not parse: {0}")]
    DoesNotParse(ScenarioError),
    #[error("internal: the shrunk scenario does not fail deterministically")]
    NotDeterministic,
}

/// The file of `shrunk`, the result of shrinking `original` (given as
/// `arg`) at `seed`; an error if the file would not reproduce the failure.
pub fn to_file(original: &Scenario, arg: &str, seed: u64, shrunk: &Shrunk) -> Result<ShrunkFile, ShrinkFileError> {
    let before = schedule::materialize(original, seed);
    let mut sc = shrunk.scenario.clone();
    sc.name = format!("{}-shrunk", original.name);
    sc.description = format!("{} seed {seed}, shrunk: {}", original.name, shrunk.class);
    sc.seed = Some(seed);
    let header = vec![
        format!("shrunk by: {} shrink {arg} --seed {seed} ({} runs)", crate::repro(), shrunk.runs),
        format!("fails with: {}", shrunk.violations.first().map(ToString::to_string).unwrap_or_default()),
    ];
    let text = sc.to_toml(&header)?;
    let check = Scenario::parse(&text, "<shrunk>").map_err(ShrinkFileError::DoesNotParse)?;
    let (r1, r2) = (run_scenario(&check, seed), run_scenario(&check, seed));
    if r1.passed() || r1.trace != r2.trace {
        return Err(ShrinkFileError::NotDeterministic);
    }
    let summary = format!(
        "shrunk {} seed {seed} in {} runs: faults {} -> {}, duration {} -> {}, members {} -> {} (still: {})",
        original.name,
        shrunk.runs,
        before.faults.len(),
        sc.faults.len(),
        before.duration,
        sc.duration,
        before.election.members,
        sc.election.members,
        shrunk.class
    );
    Ok(ShrunkFile { text, summary })
}
