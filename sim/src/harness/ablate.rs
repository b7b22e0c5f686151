//! Can your invariants fail at all? The harness reruns the team's service
//! with neli weakened, one way at a time (a safety layer off, an unsafe
//! variant of the lease rule, no acquisition grace where one is needed;
//! docs/background.md, "Layer ablation"), and counts the seeds each of the
//! team's invariants fails. A weakening under which neli's own oracles see
//! two leaders, and which none of the invariants notices, means the
//! invariants would not notice that bug in production either (that fails
//! the ablation); an invariant that fails under no weakening checks
//! nothing neli can break (that is reported).

use std::fmt;
use std::time::Duration;

use super::Harness;
use crate::scenario::{Dur, Layer, Scenario, Variant};
use crate::verdict::Rule;

/// One way to weaken neli for an ablation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weakening {
    /// A safety layer off (`Scenario::without`).
    Without(Layer),
    /// The lease counted from when evidence was received, not sent, and
    /// no membership proof: goNELI's rules (the proof would mask the
    /// variant, docs/background.md "Layer ablation").
    LeaseFromReceipt,
    /// Any record on the partition extends the lease, not only the
    /// member's own, and no membership proof.
    AnyRecordCounts,
    /// No acquisition grace, where the scenario has one.
    NoGrace,
}

impl Weakening {
    /// Every weakening that changes `s`, in a fixed order.
    pub fn all_for(s: &Scenario) -> Vec<Weakening> {
        let mut out: Vec<Weakening> = Layer::ALL.into_iter().filter(|l| s.has(*l)).map(Weakening::Without).collect();
        if s.election.variant == Variant::Recommended {
            out.extend([Weakening::LeaseFromReceipt, Weakening::AnyRecordCounts]);
        }
        if s.election.grace.0 > 0 {
            out.push(Weakening::NoGrace);
        }
        out
    }

    /// `s` weakened this way (marked unchecked: unsafe on purpose).
    pub fn apply(self, s: &Scenario) -> Scenario {
        let mut w = match self {
            Weakening::Without(layer) => s.without(layer).unwrap_or_else(|| s.clone()),
            _ => s.clone(),
        };
        match self {
            Weakening::LeaseFromReceipt => {
                (w.election.variant, w.election.membership_proof) = (Variant::LeaseFromReceipt, false);
            }
            Weakening::AnyRecordCounts => {
                (w.election.variant, w.election.membership_proof) = (Variant::AnyRecordCounts, false);
            }
            Weakening::NoGrace => w.election.grace = Dur(0),
            Weakening::Without(_) => {}
        }
        w.election.unchecked = Some(format!("ablation: {self}, unsafe on purpose"));
        w
    }
}

impl fmt::Display for Weakening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Weakening::Without(layer) => write!(f, "without {layer}"),
            Weakening::LeaseFromReceipt => f.write_str("lease from receipt, no proof"),
            Weakening::AnyRecordCounts => f.write_str("any record counts, no proof"),
            Weakening::NoGrace => f.write_str("no grace"),
        }
    }
}

/// One row of the table: how many seeds failed, by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeakeningRow {
    /// `as written`, or the weakening.
    pub name: String,
    /// Seeds in which neli's oracles saw two leaders (rule `overlap`).
    pub two_leaders: usize,
    /// For each of those seeds, in seed order, its longest overlap in ms.
    pub overlaps_ms: Vec<u64>,
    /// Seeds each invariant failed, in the order they were added.
    pub caught: Vec<usize>,
}

/// The table of an ablation: the scenario as written, then each weakening.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ablation {
    pub scenario: String,
    pub seeds: usize,
    pub invariants: Vec<String>,
    pub rows: Vec<WeakeningRow>,
    /// Why nothing ran, if so.
    pub error: Option<String>,
    /// Overlaps no longer than this are left out ([`Ablation::reaction`]).
    pub reaction: Duration,
}

impl Ablation {
    /// For a service that does nothing within `reaction` of taking a term:
    /// two leaders for no longer than that give it no time to act, so no
    /// invariant of it can see them, and a weakening that gives only such
    /// overlaps fails nothing (the table still counts them and says so).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use neli_sim::harness::Harness;
    ///
    /// // `harness` runs the team's service with its invariants; the service
    /// // renders for 100 ms before it sends anything.
    /// fn invariants_can_fail(harness: &Harness) {
    ///     let table = harness.ablate().reaction(Duration::from_millis(100));
    ///     println!("{table}");
    ///     table.assert_invariants_can_fail();
    /// }
    /// ```
    pub fn reaction(mut self, reaction: Duration) -> Ablation {
        self.reaction = reaction;
        self
    }

    /// Weakenings under which neli saw two leaders (for longer than the
    /// [`Ablation::reaction`] in some seed) and no invariant failed.
    pub fn uncaught(&self) -> Vec<&WeakeningRow> {
        self.rows.iter().skip(1).filter(|r| self.acted_in(r) && r.caught.iter().all(|c| *c == 0)).collect()
    }

    /// Weakenings that gave two leaders, each time for no longer than the
    /// [`Ablation::reaction`], and no invariant failed.
    pub fn too_short(&self) -> Vec<&WeakeningRow> {
        let short = |r: &&WeakeningRow| r.two_leaders > 0 && !self.acted_in(r) && r.caught.iter().all(|c| *c == 0);
        self.rows.iter().skip(1).filter(short).collect()
    }

    /// Some overlap of `r` was longer than the reaction.
    fn acted_in(&self, r: &WeakeningRow) -> bool {
        r.overlaps_ms.iter().any(|ms| u128::from(*ms) > self.reaction.as_millis())
    }

    /// Invariants that failed under no weakening (and not as written).
    pub fn idle(&self) -> Vec<&str> {
        let idle = |i: usize| self.rows.iter().all(|r| r.caught[i] == 0);
        self.invariants.iter().enumerate().filter(|(i, _)| idle(*i)).map(|(_, n)| n.as_str()).collect()
    }

    /// No weakening broke neli here: the scenario cannot tell whether the
    /// invariants can fail.
    pub fn nothing_broke(&self) -> bool {
        self.rows.iter().skip(1).all(|r| r.two_leaders == 0)
    }

    /// Every weakening that gives two leaders is caught by an invariant
    /// (and some weakening does). An invariant that catches none is
    /// reported ([`Ablation::idle`]) but does not fail it: it may be there
    /// for the service's own mistakes, which no weakening of neli makes.
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.uncaught().is_empty() && !self.nothing_broke()
    }

    /// Panics with the table and what is wrong unless [`Ablation::passed`].
    pub fn assert_invariants_can_fail(&self) {
        assert!(self.passed(), "{self}");
    }
}

impl fmt::Display for Ablation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(e) = &self.error {
            return writeln!(f, "ablation of {}: cannot run: {e}", self.scenario);
        }
        writeln!(f, "ablation of {}: seeds failed of {} per row", self.scenario, self.seeds)?;
        let mut header = vec!["weakening".to_owned(), "neli: two leaders".to_owned()];
        header.extend(self.invariants.iter().cloned());
        let mut table = vec![header];
        for r in &self.rows {
            let mut row = vec![r.name.clone(), r.two_leaders.to_string()];
            row.extend(r.caught.iter().map(ToString::to_string));
            table.push(row);
        }
        let widths: Vec<usize> =
            (0..table[0].len()).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
        for row in &table {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
            writeln!(f, "  {}", cells.join("  ").trim_end())?;
        }
        for r in self.uncaught() {
            writeln!(
                f,
                "NOT CAUGHT: {} gives two leaders in {} seed(s), for at most {} ms, and none of your invariants fails",
                r.name,
                r.two_leaders,
                r.overlaps_ms.iter().max().copied().unwrap_or(0)
            )?;
        }
        for r in self.too_short() {
            writeln!(
                f,
                "TOO SHORT TO ACT IN: {} gives two leaders in {} seed(s), for at most {} ms, within the service's reaction of {} ms",
                r.name,
                r.two_leaders,
                r.overlaps_ms.iter().max().copied().unwrap_or(0),
                self.reaction.as_millis()
            )?;
        }
        for name in self.idle() {
            writeln!(
                f,
                "CATCHES NOTHING: invariant {name:?} fails under no weakening of neli (it may still catch your service's own mistakes: check that a wrong variant of your service fails it)"
            )?;
        }
        if self.nothing_broke() {
            writeln!(
                f,
                "NOTHING TO CATCH: no weakening gives two leaders in this scenario; ablate one with faults (leader-pause)"
            )?;
        }
        writeln!(
            f,
            "verdict: {}",
            match (self.passed(), self.reaction.as_millis()) {
                (false, _) => "FAIL".to_owned(),
                (true, 0) => "every weakening that gives two leaders is caught".to_owned(),
                (true, ms) => format!("every weakening that gives two leaders for longer than {ms} ms is caught"),
            }
        )
    }
}

impl Harness {
    /// Runs the harness's seeds once as written and once per
    /// [`Weakening`] that applies to its scenario, with the team's
    /// application and invariants, and tables the seeds each invariant
    /// failed against those in which neli's oracles saw two leaders.
    pub fn ablate(&self) -> Ablation {
        let invariants: Vec<String> = self.invariants.iter().map(|(n, _)| n.clone()).collect();
        let mut out = Ablation {
            scenario: self.scenario.name.clone(),
            seeds: 0,
            invariants,
            rows: Vec::new(),
            error: None,
            reaction: Duration::ZERO,
        };
        let plan = match super::Settings::from_env().map_err(|e| e.to_string()).and_then(|env| self.ready(&env)) {
            Ok(plan) => plan,
            Err(e) => {
                out.error = Some(e);
                return out;
            }
        };
        out.seeds = plan.seeds.len();
        let mut runs = vec![("as written".to_owned(), plan.scenario.clone())];
        runs.extend(Weakening::all_for(&plan.scenario).into_iter().map(|w| (w.to_string(), w.apply(&plan.scenario))));
        for (name, s) in runs {
            let outcomes = self.run_seeds(&s, &plan.seeds, plan.jobs, false);
            let mut row =
                WeakeningRow { name, two_leaders: 0, overlaps_ms: Vec::new(), caught: vec![0; out.invariants.len()] };
            for r in outcomes.iter().flatten() {
                if r.violations.iter().any(|v| v.rule == Rule::Overlap) {
                    row.two_leaders += 1;
                    row.overlaps_ms.push(r.figures.overlap_max_ms);
                }
                for (i, inv) in out.invariants.iter().enumerate() {
                    row.caught[i] += usize::from(r.violations.iter().any(|v| v.rule == Rule::Invariant(inv.clone())));
                }
            }
            out.rows.push(row);
        }
        out
    }
}
