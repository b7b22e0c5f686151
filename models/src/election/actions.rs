//! The model's actions and when each is enabled: first the work running
//! members must do within the tick, then the tick itself, then faults.
//! What each action does is in `steps.rs`, one function per action.

use super::ElectionModel;
use super::state::{Callback, ElectionState};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElectionAction {
    Tick {
        slow: Option<u8>,
    },
    Join(u8),
    /// The rebalance completes. Eager: partition `p` goes to the `p mod n`-th
    /// member of deal number `deal` (see [`deal`](super::deal)). Incremental: deal number
    /// `deal` is an order of all members that breaks ties in [`sticky_deal`](super::sticky_deal).
    Sync {
        deal: u32,
    },
    Poll(u8),
    Read(u8, u32),
    Timeout(u8),
    Send(u8, u8),
    Lose(u8, u8),
    Pause(u8),
    Resume(u8),
    Crash(u8),
    Restart(u8),
    Isolate(u8),
    Heal(u8),
    HeartbeatsFail(u8),
    HeartbeatsHeal(u8),
    /// A new process takes over member `m`'s static instance id
    /// (`Faults::static_replacements`).
    Replace(u8),
    ClockFast(u8),
    Foreign,
    LogLoss,
}

impl ElectionAction {
    /// Whether the action is (or heals) a fault: the liveness counters
    /// count only ticks without one.
    pub(super) fn is_fault(&self) -> bool {
        use ElectionAction::*;
        !matches!(self, Tick { slow: None } | Join(_) | Sync { .. } | Poll(_) | Read(..) | Timeout(_) | Send(..))
    }
}

impl ElectionModel {
    /// Whether `i` can run: alive and not paused.
    pub(super) fn runs(s: &ElectionState, i: usize) -> bool {
        s.slots[i].core.is_some() && !s.slots[i].paused
    }

    /// Every action enabled in `s`, in the order the searches expand them.
    pub(super) fn enabled(&self, s: &ElectionState, out: &mut Vec<ElectionAction>) {
        use ElectionAction::*;
        let (f, u) = (&self.cfg.faults, &s.used);
        self.urgent(s, out);
        // Faults other than pauses strike between ticks (when all work is
        // done): a pause is the one fault whose timing inside a tick matters
        // (it freezes a member mid-work), and this keeps the space small.
        let quiescent = out.is_empty();
        let in_flight = (0..s.slots.len()).any(|i| Self::runs(s, i) && !s.slots[i].outbox.is_empty());
        if quiescent && s.now < self.cfg.max_ticks && (!in_flight || u.message_delay < f.message_delay) {
            out.push(Tick { slow: None });
            for (i, slot) in s.slots.iter().enumerate() {
                if u.clock_steps < f.clock_steps && i16::from(slot.offset) > -i16::from(f.max_skew) {
                    out.push(Tick { slow: Some(i as u8) });
                }
            }
        }
        for (i, slot) in s.slots.iter().enumerate() {
            let m = i as u8;
            match (&slot.core, slot.paused) {
                (None, _) if slot.spare => {}
                (None, _) => out.push(Restart(m)),
                (Some(_), true) => out.push(Resume(m)),
                (Some(_), false) if u.pauses < f.pauses => out.push(Pause(m)),
                _ => {}
            }
            if f.message_delay > 0 && Self::runs(s, i) {
                let n = if f.reorder { slot.outbox.len() } else { slot.outbox.len().min(1) };
                (0..n as u8).for_each(|k| out.push(Send(m, k)));
                if u.losses < f.losses {
                    (0..n as u8).for_each(|k| out.push(Lose(m, k)));
                }
            }
            if !quiescent {
                continue;
            }
            if slot.core.is_some() && u.crashes < f.crashes {
                out.push(Crash(m));
            }
            if slot.isolated {
                out.push(Heal(m));
            } else if u.isolations < f.isolations {
                out.push(Isolate(m));
            }
            if slot.heartbeats_failing {
                out.push(HeartbeatsHeal(m));
            } else if u.heartbeat_failures < f.heartbeat_failures && slot.core.is_some() {
                out.push(HeartbeatsFail(m));
            }
            if u.clock_steps < f.clock_steps && i16::from(slot.offset) < i16::from(f.max_skew) {
                out.push(ClockFast(m));
            }
            if u.static_replacements < f.static_replacements && self.replaceable(s, i) {
                out.push(Replace(m));
            }
        }
        if quiescent && u.foreign_writes < f.foreign_writes {
            out.push(Foreign);
        }
        if quiescent && u.log_losses < f.log_losses {
            out.push(LogLoss);
        }
    }

    /// Whether a new process may take over slot `i`'s static instance id
    /// now: under the classic protocol (the consumer protocol refuses an
    /// instance id still in use, UNRELEASED_INSTANCE_ID), while the group is
    /// stable (a replacement during a rebalance rebalances) and the member
    /// holds partitions with nothing queued, and a spare process is left.
    fn replaceable(&self, s: &ElectionState, i: usize) -> bool {
        let slot = &s.slots[i];
        self.cfg.protocol == super::GroupProtocol::Classic
            && s.coord.rebalance.is_none()
            && s.coord.members.contains_key(&(i as u8, slot.inc))
            && slot.callbacks.is_empty()
            && slot.core().is_some_and(|c| !c.assigned().is_empty())
            && s.slots.iter().any(|sl| sl.spare)
    }

    /// Work a running member must do before the clock may advance.
    fn urgent(&self, s: &ElectionState, out: &mut Vec<ElectionAction>) {
        let c = &s.coord;
        if c.rebalance.is_some() && !c.members.is_empty() && c.members.values().all(|m| m.rejoined) {
            let count = self.deal_count(c.members.len()).min(u32::MAX as usize);
            (0..count as u32).for_each(|deal| out.push(ElectionAction::Sync { deal }));
        }
        for i in 0..s.slots.len() {
            let (slot, m) = (&s.slots[i], i as u8);
            if slot.core.is_none() || slot.paused {
                continue;
            }
            if !slot.in_group && slot.callbacks.is_empty() && !slot.isolated && !slot.replaced {
                out.push(ElectionAction::Join(m));
            }
            // A rejoin needs the coordinator; an answer sent while the
            // member could not hear it waits until it can.
            let pollable = match slot.callbacks.front() {
                None => false,
                Some(Callback::Rejoin) => !slot.isolated,
                Some(Callback::Assigned { late: true, .. }) => self.hears_coordinator(slot),
                Some(_) => true,
            };
            if pollable {
                out.push(ElectionAction::Poll(m));
            }
            for (&p, &r) in &slot.read {
                let (base, recs) = &s.logs[p as usize];
                if slot.assigned(p) && r < base + recs.len() as u64 {
                    out.push(ElectionAction::Read(m, p));
                }
            }
            if slot.timeout().is_some_and(|t| t.as_millis() <= s.local(i)) {
                out.push(ElectionAction::Timeout(m));
            }
            if self.cfg.faults.message_delay == 0 && !slot.outbox.is_empty() {
                out.push(ElectionAction::Send(m, 0));
            }
        }
    }
}
