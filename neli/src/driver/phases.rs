//! How long a member takes from being dealt a role to leading it, in the
//! phases the member itself sees (neli/KAFKA.md, "Metrics and health",
//! `neli_acquisition_phase_seconds`): the assignment, the first own
//! heartbeat read back after it (the evidence), and the lease. What comes
//! before the assignment (the coordinator noticing a leave or an expiry,
//! the survivors hearing of it, the rebalance) happens in the group client
//! and the broker; `scripts/handover-phases.py` splits a whole handover from
//! the members' logs.

use std::time::Duration;

use crate::core::{Member, Time};
use crate::metrics::Phase;

/// The marks of the acquisition under way, if any.
#[derive(Debug, Default)]
pub(super) struct AcquisitionClock {
    /// When the member was dealt a role it did not lead, and how many own
    /// heartbeats it had read by then.
    assigned: Option<(Time, u64)>,
    /// When it first read an own heartbeat after that.
    evidence: Option<Time>,
}

impl AcquisitionClock {
    /// `partitions` were assigned, before `core` handles them: the wait
    /// starts if they carry a role the member does not lead.
    pub(super) fn assigned(&mut self, now: Time, core: &Member, partitions: &[u32]) {
        let cfg = core.config();
        let waiting =
            (0..cfg.roles).any(|role| partitions.contains(&cfg.partition_of(role)) && !core.is_leader(role, now));
        self.mark(now, waiting, core.counters().own_heartbeats);
    }

    /// An assignment arrived; `waiting` says whether it holds a role the
    /// member does not lead. A later assignment during the same wait keeps
    /// the first mark: the wait began there.
    fn mark(&mut self, now: Time, waiting: bool, own_heartbeats: u64) {
        if !waiting {
            *self = AcquisitionClock::default();
        } else if self.assigned.is_none() {
            self.assigned = Some((now, own_heartbeats));
        }
    }

    /// Records were read: the evidence phase ends with the first own
    /// heartbeat read after the assignment.
    pub(super) fn read(&mut self, now: Time, own_heartbeats: u64) -> Option<(Phase, Duration)> {
        let (at, before) = self.assigned?;
        if self.evidence.is_some() || own_heartbeats <= before {
            return None;
        }
        self.evidence = Some(now);
        Some((Phase::Evidence, now.saturating_since(at)))
    }

    /// A membership proof came back after `took`: a phase of its own while
    /// an acquisition is under way, nothing otherwise.
    pub(super) fn proved(&self, took: Duration) -> Option<(Phase, Duration)> {
        self.assigned.map(|_| (Phase::Proof, took))
    }

    /// A role was acquired: the lease phase, and the wait is over.
    pub(super) fn acquired(&mut self, now: Time) -> Option<(Phase, Duration)> {
        let evidence = self.evidence.or(self.assigned.map(|(at, _)| at));
        *self = AcquisitionClock::default();
        evidence.map(|at| (Phase::Lease, now.saturating_since(at)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn an_acquisition_is_timed_from_its_first_assignment_through_evidence_to_lease() {
        let mut c = AcquisitionClock::default();
        c.mark(at(100), true, 7);
        c.mark(at(150), true, 7);
        assert_eq!(c.read(at(160), 7), None, "no own heartbeat read yet");
        assert_eq!(c.read(at(180), 8), Some((Phase::Evidence, Duration::from_millis(80))));
        assert_eq!(c.read(at(200), 9), None, "only the first evidence ends the phase");
        assert_eq!(c.proved(Duration::from_millis(3)), Some((Phase::Proof, Duration::from_millis(3))));
        assert_eq!(c.acquired(at(230)), Some((Phase::Lease, Duration::from_millis(50))));
        assert_eq!(c.proved(Duration::from_millis(3)), None, "a proof after the lease is no phase");
        assert_eq!(c.acquired(at(300)), None, "a second role of the same wait has no marks");
    }

    #[test]
    fn each_phase_indexes_its_own_histogram() {
        for (i, phase) in Phase::ALL.into_iter().enumerate() {
            assert_eq!(phase as usize, i, "{phase:?}");
        }
    }

    #[test]
    fn an_assignment_without_a_role_to_take_ends_the_wait() {
        let mut c = AcquisitionClock::default();
        c.mark(at(100), true, 0);
        c.mark(at(120), false, 0);
        assert_eq!(c.proved(Duration::from_millis(3)), None);
        assert_eq!(c.read(at(130), 1), None);
    }
}
