//! Fingerprints: each core and each slot is hashed once, when a step changes
//! it, and a state hashes as one 64-bit digest of those, so the checkers
//! feed their hashers one word per state.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use neli::core::Member;

use crate::election::state::{ElectionState, GroupMember, Key, Slot};

/// The hasher of every fingerprint the model keeps: fixed keys, so a state
/// has the same fingerprint in every run and on every thread, and 64 bits
/// of good quality, since two states with one fingerprint are one state to
/// the checker.
fn hasher() -> ahash::AHasher {
    use std::hash::BuildHasher;
    ahash::RandomState::with_seeds(0x6e65_6c69, 0x6d6f_6465, 0x6c73, 0x5eed).build_hasher()
}

/// What [`Slot::core_fp`] keeps of a running core; never 0, which stands
/// for no core.
pub(super) fn core_fingerprint(core: &Member) -> u64 {
    let mut h = hasher();
    core.hash(&mut h);
    h.finish() | 1
}

impl Slot {
    /// The slot's fields hashed (with the core by its fingerprint): what
    /// `Slot::fp` keeps.
    pub(crate) fn fingerprint(&self) -> u64 {
        let mut h = hasher();
        self.core_fp.hash(&mut h);
        (self.inc, self.offset, self.paused, self.isolated, self.heartbeats_failing, self.in_group, self.coord_ok)
            .hash(&mut h);
        (self.spare, self.replaced).hash(&mut h);
        (&self.callbacks, &self.read, &self.outbox, &self.acquired, &self.own_read, self.proof_sent).hash(&mut h);
        h.finish()
    }

    /// A 64-bit hash of the anonymous core, computed once when a step
    /// changes the core instead of on every hash of every state that
    /// shares it. Equal cores have equal fingerprints (it is their derived
    /// `Hash`), so hashing a slot by it keeps `Hash` consistent with `Eq`.
    pub fn core_fp(&self) -> u64 {
        self.core_fp
    }
}

impl Hash for Slot {
    /// Every field, through the slot's fingerprint (see `Slot::fp`).
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fp);
    }
}

impl Hash for ElectionState {
    /// One 64-bit digest of every field, slots by their fingerprints: the
    /// checkers hash each state they generate, and a digest costs them one
    /// word instead of the state's every byte.
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.digest());
    }
}

impl ElectionState {
    pub(super) fn digest(&self) -> u64 {
        let mut identity = [0u8; 256];
        identity.iter_mut().enumerate().for_each(|(i, p)| *p = i as u8);
        self.digest_renamed(&identity[..self.slots.len()])
    }

    /// The digest of `rename_members(self, perm)`, without building it.
    pub(super) fn digest_renamed(&self, perm: &[u8]) -> u64 {
        // A slot written to after `seal` would be hashed by a stale
        // fingerprint and silently merged with another state; the tests
        // (debug builds) would see it here.
        debug_assert!(self.slots.iter().all(|slot| slot.fp == slot.fingerprint()), "a slot changed after seal");
        let map = |k: &Key| (perm[usize::from(k.0)], k.1);
        let mut h = hasher();
        self.now.hash(&mut h);
        let mut order = [0usize; 256];
        perm.iter().enumerate().for_each(|(old, new)| order[usize::from(*new)] = old);
        order[..perm.len()].iter().for_each(|old| h.write_u64(self.slots[*old].fp));
        // The coordinator's table in the order of the renamed keys.
        (self.coord.generation, self.coord.rebalance).hash(&mut h);
        let mut members: Vec<(Key, &GroupMember)> = self.coord.members.iter().map(|(k, m)| (map(k), m)).collect();
        members.sort_unstable_by_key(|(k, _)| *k);
        members.hash(&mut h);
        for (base, recs) in self.logs.iter() {
            (base, recs.len()).hash(&mut h);
            recs.iter().for_each(|r| r.map(|(role, term, sent, writer)| (role, term, sent, map(&writer))).hash(&mut h));
        }
        (self.used, self.log_epoch, self.log_lost_at).hash(&mut h);
        self.last_acquired.iter().for_each(|l| l.map(|(e, t, k)| (e, t, map(&k))).hash(&mut h));
        (&self.resource, &self.calm_leaderless).hash(&mut h);
        let flags = [
            self.token_regressed,
            self.own_token_regressed,
            self.resource_regressed,
            self.send_time_broken,
            self.proof_cap_broken,
            self.handover,
            self.token_misreported,
        ];
        flags.hash(&mut h);
        h.finish()
    }

    /// Brings the fingerprint of every slot a step changed up to date (a
    /// slot still shared with `before` is unchanged). Every change to a
    /// slot happens inside a step, before this: the fields are public to
    /// read, and a slot written to afterwards would keep a stale
    /// fingerprint (debug builds assert against that when hashing).
    pub(crate) fn seal(&mut self, before: &ElectionState) {
        for (slot, old) in self.slots.iter_mut().zip(&before.slots) {
            if !Arc::ptr_eq(slot, old) {
                let fp = slot.fingerprint();
                Arc::make_mut(slot).fp = fp;
            }
        }
    }
}
