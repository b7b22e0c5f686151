//! What each action does, one function per action (`ElectionModel::next_state`
//! dispatches to them). A step changes `s`, a copy of the state before it
//! that still shares every slot, the coordinator and the logs: it takes
//! what it changes through `slot_mut`, `coord_mut` and `logs_mut`.

use std::sync::Arc;

use neli::Time;
use neli::core::{Heartbeat, Member, Record};

use super::ElectionModel;
use super::state::{Callback, ElectionState, GroupMember, Key};

impl ElectionModel {
    /// The global clock advances one tick (a member's clock with it, or,
    /// with `slow`, all but that member's); the coordinator renews the
    /// sessions of the members it hears from and expires the others.
    pub(super) fn tick(&self, last: &ElectionState, s: &mut ElectionState, slow: Option<u8>) {
        let calm = !s.faults_active();
        for role in 0..self.cfg.roles {
            let counter = &mut s.calm_leaderless[role as usize];
            *counter = if calm && last.leader_count(role) == 0 { counter.saturating_add(1) } else { 0 };
        }
        s.now += 1;
        if (0..last.slots.len()).any(|i| Self::runs(last, i) && !last.slots[i].outbox.is_empty()) {
            s.used.message_delay += 1;
        }
        if let Some(m) = slow {
            s.slot_mut(m as usize).offset -= 1;
            s.used.clock_steps += 1;
        }
        let now = s.now;
        let mut expired = Vec::new();
        let rebalance = s.coord.rebalance;
        for (k, gm) in s.coord_mut().members.iter_mut() {
            let slot = &last.slots[k.0 as usize];
            let heard = !slot.paused && !slot.isolated && !slot.heartbeats_failing;
            if slot.inc == k.1 && slot.core.is_some() && heard && slot.in_group {
                gm.expiry = now + self.cfg.session_timeout;
            } else if gm.expiry <= now {
                expired.push(*k);
            }
            if rebalance.is_some_and(|d| d <= now) && !gm.rejoined {
                expired.push(*k);
            }
        }
        if !expired.is_empty() {
            for k in &expired {
                s.coord_mut().members.remove(k);
            }
            // Starts a rebalance unless one is on (its timeout then
            // completes it without the stragglers).
            self.start_rebalance(s, None);
        }
    }

    pub(super) fn join(&self, s: &mut ElectionState, m: u8) {
        let k = key(s, m);
        // A joining member owns nothing (it comes back after Lost
        // or a restart), so under incremental assignment it claims nothing.
        let expiry = s.now + self.cfg.session_timeout;
        s.coord_mut().members.insert(k, GroupMember::joined(expiry));
        // A JoinGroup answered is contact with the coordinator, also while
        // the member's heartbeats fail (for everyone else this changes
        // nothing: settling sets it to the same instant).
        let contact = self.contact(s.local(m as usize));
        let slot = s.slot_mut(m as usize);
        (slot.in_group, slot.coord_ok) = (true, contact);
        self.start_rebalance(s, Some(k));
    }

    /// The rebalance completes with deal number `number`: a new generation,
    /// and each member's assignment queued as a callback where its answer
    /// arrives (`Self::answer_arrives`).
    pub(super) fn sync(&self, s: &mut ElectionState, number: u32) {
        s.coord_mut().generation += 1;
        s.coord_mut().rebalance = None;
        let keys: Vec<Key> = s.coord.members.keys().copied().collect();
        let dealt = self.dealt(s, number);
        for (k, partitions) in keys.iter().zip(dealt) {
            if !Self::answer_arrives(s, *k) {
                continue;
            }
            let (generation, late) = (s.coord.generation, !self.hears_coordinator(&s.slots[usize::from(k.0)]));
            let slot = s.slot_mut(k.0 as usize);
            if late {
                // A member hears only the newest of the answers it could
                // not hear (under the consumer protocol, the assignment
                // the coordinator holds when a heartbeat gets through).
                slot.callbacks.retain(|c| !c.is_late());
            }
            slot.callbacks.push_back(Callback::Assigned { generation, partitions, late });
        }
    }

    /// Whether the coordinator's answer to member `k`'s join reaches a
    /// process that will act on it: the incarnation that joined (a restarted
    /// process is a new member) and still runs, and that is still in the
    /// group by its own account (a classic client whose own session ran
    /// out has dropped that join and ignores its answer; it joins again).
    /// A paused member's answer waits for it, as in its socket; so does the
    /// answer to a member that cannot hear the coordinator (cut off, or
    /// under the consumer protocol with its heartbeats failing), which it
    /// can take only once it hears it again, and never after its join is
    /// over (`Callback::Assigned`'s `late`). Otherwise the
    /// coordinator still counts the partitions as dealt to it, and they move
    /// on when its session ends or it joins again (models/README.md, "What
    /// a member hears of a rebalance").
    fn answer_arrives(s: &ElectionState, k: Key) -> bool {
        let slot = &s.slots[usize::from(k.0)];
        slot.inc == k.1 && slot.core.is_some() && slot.in_group
    }

    /// Member `m` polls its next callback; `None` if it has none.
    pub(super) fn poll(&self, s: &mut ElectionState, m: u8) -> Option<()> {
        let i = m as usize;
        let k = key(s, m);
        let assigned = |core: &Member| core.assigned().iter().copied().collect::<Vec<u32>>();
        match s.slot_mut(i).callbacks.pop_front()? {
            Callback::Assigned { generation, partitions, .. } if self.cfg.incremental => {
                // The cooperative client: revoke only what moves
                // (the Revoked barrier), then hand the core the full
                // set; having revoked, rejoin, so that the next
                // rebalance can hand the partition on.
                let core = s.slots[i].core().map_or_else(Vec::new, assigned);
                let revoked: Vec<u32> = core.into_iter().filter(|p| !partitions.contains(p)).collect();
                self.run(s, i, |core, now| {
                    if !revoked.is_empty() {
                        core.handle_revoked(now, &revoked);
                    }
                    core.handle_assigned(now, generation, &partitions)
                });
                if !revoked.is_empty() && !s.slots[i].callbacks.contains(&Callback::Rejoin) {
                    s.slot_mut(i).callbacks.push_back(Callback::Rejoin);
                }
            }
            Callback::Assigned { generation, partitions, .. } => {
                self.run(s, i, |core, now| core.handle_assigned(now, generation, &partitions))
            }
            Callback::Rejoin if self.cfg.incremental => {
                // Keep everything; claim it with the generation it came in.
                let owned = s.slots[i].core().map_or_else(Vec::new, assigned);
                let owned_generation = s.slots[i].core().and_then(Member::generation).unwrap_or(0);
                let rebalancing = s.coord.rebalance.is_some();
                match s.coord_mut().members.get_mut(&k) {
                    Some(gm) => {
                        (gm.owned, gm.owned_generation, gm.rejoined) = (owned, owned_generation, true);
                        if !rebalancing {
                            self.start_rebalance(s, Some(k));
                        }
                    }
                    None => s.slot_mut(i).in_group = false,
                }
            }
            Callback::Rejoin => {
                self.run(s, i, |core, now| core.handle_revoked(now, &assigned(core)));
                match s.coord_mut().members.get_mut(&k) {
                    Some(gm) => gm.rejoined = true,
                    None => s.slot_mut(i).in_group = false,
                }
            }
            Callback::Lost => self.run(s, i, |core, now| core.handle_lost(now, &assigned(core))),
        }
        Some(())
    }

    /// Member `m` reads the next record of partition `p`.
    pub(super) fn read(&self, s: &mut ElectionState, m: u8, p: u32) {
        let i = m as usize;
        let offset = s.slots[i].read[&p];
        let (base, recs) = &s.logs[p as usize];
        let key = key(s, m);
        let rec = recs[(offset - base) as usize];
        let payload = match rec {
            Some((role, term, sent_at, writer)) => {
                let sent_at = Time::from_millis(sent_at);
                Heartbeat { role, term, seq: 0, sent_at, lease: None, name: self.name(writer) }.encode()
            }
            None => b"not a heartbeat".to_vec(),
        };
        let slot = s.slot_mut(i);
        slot.read.insert(p, offset + 1);
        if let Some((role, _, sent_at, writer)) = rec
            && writer == key
            && slot.own_read.get(&role).is_none_or(|s| *s < sent_at)
        {
            slot.own_read.insert(role, sent_at);
        }
        let record = Record { partition: p, offset, timestamp: None, payload };
        self.run(s, i, |core, now| core.handle_record(now, &record));
    }

    pub(super) fn timeout(&self, s: &mut ElectionState, m: u8) {
        self.run(s, m as usize, |core, now| core.handle_timeout(now));
    }

    /// Message `k` of member `m`'s outbox arrives.
    pub(super) fn send(&self, s: &mut ElectionState, m: u8, k: u8) {
        self.deliver(s, m as usize, k as usize);
    }

    /// Message `k` of member `m`'s outbox is lost.
    pub(super) fn lose(s: &mut ElectionState, m: u8, k: u8) {
        s.slot_mut(m as usize).outbox.remove(k as usize);
        s.used.losses += 1;
    }

    pub(super) fn pause(s: &mut ElectionState, m: u8) {
        s.slot_mut(m as usize).paused = true;
        s.used.pauses += 1;
    }

    pub(super) fn resume(s: &mut ElectionState, m: u8) {
        s.slot_mut(m as usize).paused = false;
    }

    /// Member `m`'s process dies with everything it held.
    pub(super) fn crash(s: &mut ElectionState, m: u8) {
        let slot = s.slot_mut(m as usize);
        slot.set_core(None);
        (slot.paused, slot.in_group) = (false, false);
        slot.callbacks.clear();
        slot.read.clear();
        slot.outbox.clear();
        slot.acquired.clear();
        slot.own_read.clear();
        slot.proof_sent = None;
        slot.heartbeats_failing = false;
        s.used.crashes += 1;
    }

    /// A new incarnation of member `m` starts, outside the group.
    pub(super) fn restart(&self, s: &mut ElectionState, m: u8) {
        let inc = s.slots[m as usize].inc + 1;
        let contact = self.contact(s.local(m as usize));
        let slot = s.slot_mut(m as usize);
        slot.set_core(Some(Arc::new(Member::new(self.core_config()))));
        (slot.inc, slot.coord_ok) = (inc, contact);
    }

    /// Member `m` loses the coordinator but still reaches the partition leader.
    pub(super) fn isolate(s: &mut ElectionState, m: u8) {
        s.slot_mut(m as usize).isolated = true;
        s.used.isolations += 1;
    }

    pub(super) fn heal(s: &mut ElectionState, m: u8) {
        s.slot_mut(m as usize).isolated = false;
    }

    /// Member `m`'s group heartbeats start failing; its commits still go through.
    pub(super) fn heartbeats_fail(s: &mut ElectionState, m: u8) {
        s.slot_mut(m as usize).heartbeats_failing = true;
        s.used.heartbeat_failures += 1;
    }

    pub(super) fn heartbeats_heal(s: &mut ElectionState, m: u8) {
        s.slot_mut(m as usize).heartbeats_failing = false;
    }

    /// A spare process takes over member `m`'s static instance id: the
    /// coordinator moves `m`'s entry to it unchanged (same generation, same
    /// session) and hands it `m`'s partitions without a rebalance; `m` is
    /// no member any more and learns it only from its next answer.
    pub(super) fn replace(&self, s: &mut ElectionState, m: u8) {
        let Some(j) = s.slots.iter().position(|sl| sl.spare) else { return };
        let old = key(s, m);
        let partitions: Vec<u32> =
            s.slots[m as usize].core().map_or_else(Vec::new, |c| c.assigned().iter().copied().collect());
        let Some(entry) = s.coord_mut().members.remove(&old) else { return };
        let new = (j as u8, s.slots[j].inc);
        s.coord_mut().members.insert(new, entry);
        let generation = s.coord.generation;
        let contact = self.contact(s.local(j));
        let spare = s.slot_mut(j);
        spare.set_core(Some(Arc::new(Member::new(self.core_config()))));
        (spare.spare, spare.in_group, spare.coord_ok) = (false, true, contact);
        let late = !self.hears_coordinator(spare);
        spare.callbacks.push_back(Callback::Assigned { generation, partitions, late });
        s.slot_mut(m as usize).replaced = true;
        s.used.static_replacements += 1;
    }

    /// Member `m`'s clock jumps one tick ahead.
    pub(super) fn clock_fast(s: &mut ElectionState, m: u8) {
        s.slot_mut(m as usize).offset += 1;
        s.used.clock_steps += 1;
    }

    /// A stranger writes a garbage record to partition 0.
    pub(super) fn foreign(s: &mut ElectionState) {
        s.logs_mut()[0].1.push(None);
        s.used.foreign_writes += 1;
    }

    /// The partition leader restarts without its data.
    pub(super) fn log_loss(s: &mut ElectionState) {
        // A fresh, empty log per partition; consumers whose position
        // is past its end start again from its beginning.
        for log in s.logs_mut().iter_mut() {
            *log = (0, Vec::new());
        }
        for i in 0..s.slots.len() {
            if s.slots[i].read.values().any(|r| *r != 0) {
                s.slot_mut(i).read.values_mut().for_each(|r| *r = 0);
            }
        }
        s.log_epoch += 1;
        s.log_lost_at = Some(s.now);
        s.used.log_losses += 1;
    }
}

/// The incarnation in slot `m`.
fn key(s: &ElectionState, m: u8) -> Key {
    (m, s.slots[m as usize].inc)
}
