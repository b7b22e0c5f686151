//! How the model drives a member: it runs the real core for one step and
//! carries out its outputs (the driver an application of the sans-IO core
//! would be), delivers the member's messages, and tells members between
//! steps what a client library's background threads would.

use std::sync::Arc;

use neli::core::{Heartbeat, Member, Output};
use neli::{Event, Stamp, Time};

use super::state::{Callback, ElectionState, Msg, Slot, UNKNOWN_LOG};
use super::{ElectionModel, GroupProtocol};

impl ElectionModel {
    /// Runs `f` on member `i`'s core, named for the step, then carries out
    /// its outputs; the core is anonymous again afterwards (see [`Slot`](super::Slot)).
    pub(super) fn run(&self, s: &mut ElectionState, i: usize, f: impl FnOnce(&mut Member, Time)) {
        if s.slots[i].core.is_none() {
            return;
        }
        let now = Time::from_millis(s.local(i));
        let key = (i as u8, s.slots[i].inc);
        let Some(mut shared) = s.slot_mut(i).core.take() else {
            return;
        };
        let core = Arc::make_mut(&mut shared);
        core.rename(self.name(key));
        let ended: Vec<(u32, Stamp)> =
            core.leading_roles().filter(|(_, l)| !l.is_live_at(now)).map(|(r, l)| (r, l.stamp())).collect();
        f(core, now);
        // An ended term stays ended, whatever input comes next: evidence or
        // a proof read after the end must not revive it under its token
        // (docs/background.md, "Protocol semantics").
        s.term_revived |= ended.iter().any(|&(role, stamp)| core.lease(role, now).is_some_and(|l| l.stamp() == stamp));
        while let Some(output) = core.poll_output() {
            match output {
                Output::Produce { partition, payload } => {
                    let hb = Heartbeat::decode(&payload).expect("the core writes valid heartbeats");
                    s.slot_mut(i)
                        .outbox
                        .push(Msg::Produce { partition, hb: (hb.role, hb.term, hb.sent_at.as_millis()) });
                }
                Output::ConfirmMembership { generation } => {
                    s.slot_mut(i).outbox.push(Msg::Commit { generation, sent_at: now.as_millis() })
                }
                Output::Event(Event::Acquired { role, token }) => {
                    s.token_misreported |=
                        core.leading_roles().find(|(r, _)| *r == role).map(|(_, l)| l.token) != Some(token);
                    let window = u16::from(self.cfg.heartbeat_timeout) + u16::from(self.cfg.faults.max_skew);
                    let unknown_log = s.log_lost_at.is_some_and(|at| u16::from(s.now) < u16::from(at) + window);
                    let epoch = if unknown_log { UNKNOWN_LOG } else { s.log_epoch };
                    let last = &mut s.last_acquired[role as usize];
                    s.token_regressed |=
                        epoch != UNKNOWN_LOG && last.is_some_and(|(e, t, _)| e == epoch && t >= token.0);
                    s.handover |= last.is_some_and(|(_, _, k)| k != key);
                    *last = Some((epoch, token.0, key));
                    if self.cfg.faults.log_losses > 0 {
                        // What the member reports: (its own log epoch, token).
                        let own = (core.log_epoch(), token.0);
                        let before = s.slot_mut(i).acquired.insert(role, (epoch, own.0, own.1));
                        s.own_token_regressed |= before.is_some_and(|(_, e, t)| (e, t) >= own);
                    }
                }
                Output::Event(_) | Output::LeaveGroup { .. } => {}
            }
        }
        core.rename(String::new());
        let slot = Arc::make_mut(&mut s.slots[i]);
        for p in core.assigned() {
            let end = s.logs[*p as usize].0 + s.logs[*p as usize].1.len() as u64;
            slot.read.entry(*p).or_insert(end);
        }
        slot.read.retain(|p, _| core.assigned().contains(p));
        // Facts about an ownership that ended cannot justify a later lease
        // (and kept would split states the core no longer tells apart).
        let cfg = core.config();
        slot.own_read.retain(|role, _| core.assigned().contains(&cfg.partition_of(*role)));
        if core.assigned().is_empty() {
            slot.proof_sent = None;
        }
        slot.set_core(Some(shared));
        self.judge_lease_rules(s, i);
        if self.cfg.faults.message_delay == 0 {
            while !s.slots[i].outbox.is_empty() {
                self.deliver(s, i, 0);
            }
        }
    }

    /// Holds every lease slot `i`'s core reports to the rules the core
    /// promises, each on its own (docs/background.md, "Per-rule oracles"):
    /// with the other layers on, a lease that breaks one of them may still
    /// never overlap another, and the end-result properties would pass.
    fn judge_lease_rules(&self, s: &mut ElectionState, i: usize) {
        let slot = &s.slots[i];
        let t = u64::from(self.cfg.heartbeat_timeout);
        let (mut send_time, mut proof_cap) = (false, false);
        for role in 0..self.cfg.roles {
            let Some((until, _)) = slot.lease(role) else { continue };
            let until = until.as_millis();
            send_time |= slot.own_read.get(&role).is_none_or(|sent| until > sent + t);
            proof_cap |= self.cfg.membership_proof && slot.proof_sent.is_none_or(|sent| until > sent + t);
        }
        s.send_time_broken |= send_time;
        s.proof_cap_broken |= proof_cap;
    }

    /// Delivers message `idx` of slot `i`'s outbox: a heartbeat to its
    /// partition's log, a membership proof to the coordinator.
    pub(super) fn deliver(&self, s: &mut ElectionState, i: usize, idx: usize) {
        let key = (i as u8, s.slots[i].inc);
        match s.slot_mut(i).outbox.remove(idx) {
            Msg::Produce { partition, hb: (role, term, sent_at) } => {
                s.logs_mut()[partition as usize].1.push(Some((role, term, sent_at, key)))
            }
            // An isolated member's commit times out: the driver tells the core nothing.
            Msg::Commit { .. } if s.slots[i].isolated => {}
            Msg::Commit { generation, sent_at } => {
                let expiry = s.now + self.cfg.session_timeout;
                let accepted = s.coord.generation == generation && s.coord.members.contains_key(&key);
                // Classic: an accepted commit renews the session; the
                // consumer protocol renews it only on heartbeats.
                let renews = self.cfg.protocol == GroupProtocol::Classic;
                if accepted && renews && s.coord.members[&key].expiry != expiry {
                    s.coord_mut().members.get_mut(&key).expect("a member of the group").expiry = expiry;
                }
                if accepted && s.slots[i].proof_sent.is_none_or(|p| p < sent_at) {
                    s.slot_mut(i).proof_sent = Some(sent_at);
                }
                let sent = Time::from_millis(sent_at);
                self.run(s, i, |core, now| core.handle_membership(now, generation, sent, accepted));
            }
        }
    }

    /// What members learn from background group heartbeats, then cleanup:
    /// log prefixes nobody can read any more, and the resource monitor.
    pub(super) fn settle(&self, s: &mut ElectionState) {
        self.hear_coordinator(s);
        for p in 0..s.logs.len() {
            let readers = s.slots.iter().filter_map(|sl| sl.read.get(&(p as u32)).copied());
            let end = s.logs[p].0 + s.logs[p].1.len() as u64;
            let keep_from = readers.min().unwrap_or(end);
            if keep_from > s.logs[p].0 {
                let (base, recs) = &mut s.logs_mut()[p];
                recs.drain(..(keep_from - *base) as usize);
                *base = keep_from;
            }
        }
        // Outside exclusive mode the resource property is vacuous (see
        // `property::properties`): tracking its monitor would only split states.
        let roles = if self.cfg.exclusive { self.cfg.roles } else { 0 };
        for role in 0..roles {
            for i in 0..s.slots.len() {
                // A paused process writes nothing: its token reaches the
                // downstream only if it still leads once it resumes.
                if s.slots[i].paused {
                    continue;
                }
                let Some(token) = s.leads(i, role) else {
                    continue;
                };
                // A downstream that orders on (log epoch, token), as
                // neli/KAFKA.md asks, with the epoch the leader acquired in
                // (known here; best effort for a real member).
                let epoch = s.slots[i].acquired.get(&role).map_or(0, |(e, _, _)| *e);
                if epoch == UNKNOWN_LOG {
                    continue;
                }
                let newest = &mut s.resource[role as usize];
                s.resource_regressed |= newest.is_some_and(|n| (epoch, token) < n);
                *newest = Some(newest.map_or((epoch, token), |n| n.max((epoch, token))));
            }
        }
    }

    /// What a slot keeps as its last contact with the coordinator when it
    /// hears it at `local`: the local time under the classic protocol,
    /// whose client expires its own session S after it; under the consumer
    /// protocol nothing reads it (the client has no session expiry of its
    /// own), so it is always 0 and never splits two states.
    pub(super) fn contact(&self, local: u64) -> u64 {
        match self.cfg.protocol {
            GroupProtocol::Classic => local,
            GroupProtocol::Consumer => 0,
        }
    }

    /// Whether `slot` hears the coordinator's answers to its join: not cut
    /// off from it, and under the consumer protocol, where an assignment
    /// comes in a heartbeat's answer, not with its heartbeats failing.
    pub(super) fn hears_coordinator(&self, slot: &Slot) -> bool {
        !(slot.isolated || (self.cfg.protocol == GroupProtocol::Consumer && slot.heartbeats_failing))
    }

    /// What each running member's background group heartbeat tells it:
    /// contact (or its loss), eviction, a rebalance to rejoin.
    fn hear_coordinator(&self, s: &mut ElectionState) {
        for i in 0..s.slots.len() {
            let local = s.local(i);
            let key = (i as u8, s.slots[i].inc);
            let slot = &s.slots[i];
            let late_heard = self.hears_coordinator(slot) && slot.callbacks.iter().any(Callback::is_late);
            if slot.core.is_none() || slot.paused {
                // A classic answer that waited for the link now waits in
                // the paused member's socket; a consumer-protocol one comes
                // only in answer to a heartbeat, which a paused member
                // does not send.
                if late_heard && self.cfg.protocol == GroupProtocol::Classic {
                    s.slot_mut(i).callbacks.iter_mut().for_each(arrive);
                }
                continue;
            }
            // Decided on the shared slot; copied only if something changes.
            // Heartbeats carry what the member hears: failing ones tell it nothing.
            let hears = !slot.isolated && !slot.heartbeats_failing;
            let coord_ok = if hears { self.contact(local) } else { slot.coord_ok };
            let known = s.coord.members.get(&key);
            let evicted = hears && known.is_none();
            // Only the classic client expires its own session.
            let timed_out =
                self.cfg.protocol == GroupProtocol::Classic && local >= coord_ok + u64::from(self.cfg.session_timeout);
            let callback = if slot.in_group && (evicted || timed_out) {
                Some(Callback::Lost)
            } else if slot.in_group
                && hears
                && known.is_some_and(|m| !m.rejoined)
                && !slot.callbacks.contains(&Callback::Rejoin)
            {
                Some(Callback::Rejoin)
            } else {
                None
            };
            if coord_ok == slot.coord_ok && callback.is_none() && !late_heard {
                continue;
            }
            let slot = s.slot_mut(i);
            slot.coord_ok = coord_ok;
            if callback == Some(Callback::Lost) && (timed_out || self.cfg.protocol == GroupProtocol::Consumer) {
                // The join that answer belongs to is over before the member
                // could hear it: its own session ran out, or (consumer
                // protocol) the heartbeat that gets through is answered
                // with the fence instead of an assignment. A classic member
                // evicted while cut off hears the late answer with the
                // heal, before its next heartbeat brings the eviction
                // (models/README.md, "What a member hears of a rebalance").
                slot.callbacks.retain(|c| !c.is_late());
            } else if late_heard {
                // An answer that waited for the link is an ordinary one
                // once the member hears the coordinator (two states, one
                // behaviour).
                slot.callbacks.iter_mut().for_each(arrive);
            }
            if let Some(cb) = callback {
                slot.in_group &= cb != Callback::Lost;
                slot.callbacks.push_back(cb);
            }
        }
    }
}

/// A waiting rebalance answer has reached its member: an ordinary one.
fn arrive(c: &mut Callback) {
    if let Callback::Assigned { late, .. } = c {
        *late = false;
    }
}
