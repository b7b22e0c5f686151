//! Symmetry reduction over members: members are interchangeable up to their
//! names, so the searches visit one representative per renaming, and key
//! their visited sets by its fingerprint without building it.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::election::state::{Coordinator, ElectionState, Key, LogRec};

/// Symmetry reduction over members: a canonical renaming of member slots.
///
/// Members are interchangeable up to their names (`m{slot}.{inc}`), which
/// appear in the coordinator's table, the logs and the token monitor (the
/// cores are anonymous between steps and outboxes name no member, see
/// [`Slot`](crate::election::Slot)). Slots are ordered by a key that ignores their own index (the
/// core's fingerprint, the rest of the slot, and the slot's entry in the
/// coordinator's table), and every name is rewritten with the same
/// permutation, so the representative is a state of the same system up to
/// renaming and every property (which only counts leaders and compares
/// tokens) has the same value on it. Ties keep index order, which costs
/// reduction, never soundness. No core is copied: slots move as they are.
pub fn representative(s: &ElectionState) -> ElectionState {
    match canonical_renaming(s) {
        Some(perm) => rename_members(s, &perm[..s.slots.len()]),
        None => s.clone(),
    }
}

/// The fingerprint of `s`'s [`representative`], computed without building
/// it: what the breadth-first search keys its visited set by, so that a
/// generated state costs no copy of a state (pinned equal to hashing the
/// representative by `models/tests/it/symmetry.rs`).
pub fn canonical_fingerprint(s: &ElectionState) -> u64 {
    match canonical_renaming(s) {
        Some(perm) => s.digest_renamed(&perm[..s.slots.len()]),
        None => s.digest(),
    }
}

/// The renaming that takes `s` to its representative (slot `i` becomes
/// `perm[i]`), or `None` if `s` is its own representative.
fn canonical_renaming(s: &ElectionState) -> Option<[u8; 256]> {
    let n = s.slots.len();
    let key = |i: usize| {
        let slot = &s.slots[i];
        let mut h = Mix::default();
        h.write_u64(slot.fp);
        s.coord.members.get(&(i as u8, slot.inc)).hash(&mut h);
        h.finish()
    };
    let mut perm = [0u8; 256];
    let mut keyed: [(u64, usize); 8] = [(0, 0); 8];
    if n > keyed.len() {
        let mut order: Vec<(u64, usize)> = (0..n).map(|i| (key(i), i)).collect();
        order.sort_unstable();
        order.iter().enumerate().for_each(|(new, (_, old))| perm[*old] = new as u8);
        return Some(perm);
    }
    for (i, k) in keyed.iter_mut().enumerate().take(n) {
        *k = (key(i), i);
    }
    let keyed = &mut keyed[..n];
    keyed.sort_unstable();
    if keyed.iter().enumerate().all(|(new, (_, old))| new == *old) {
        return None;
    }
    keyed.iter().enumerate().for_each(|(new, (_, old))| perm[*old] = new as u8);
    Some(perm)
}

/// `s` with member slot `i` renamed to slot `perm[i]` everywhere a member is
/// named: the slots themselves (moved, not copied), the coordinator's
/// table, heartbeats in the logs, and the token monitor. `perm` must be a
/// permutation of `0..members`.
pub fn rename_members(s: &ElectionState, perm: &[u8]) -> ElectionState {
    let n = s.slots.len();
    assert_eq!(perm.len(), n, "a permutation of every member slot");
    let map = |k: Key| (perm[k.0 as usize], k.1);
    let mut out = s.clone();
    for (old, &new) in perm.iter().enumerate() {
        out.slots[new as usize] = Arc::clone(&s.slots[old]);
    }
    let members = s.coord.members.iter().map(|(k, v)| (map(*k), v.clone())).collect();
    out.coord = Arc::new(Coordinator { generation: s.coord.generation, rebalance: s.coord.rebalance, members });
    let moved = |rec: &LogRec| rec.is_some_and(|r| map(r.3) != r.3);
    if s.logs.iter().any(|(_, recs)| recs.iter().any(moved)) {
        for (_, recs) in Arc::make_mut(&mut out.logs).iter_mut() {
            for rec in recs.iter_mut().flatten() {
                rec.3 = map(rec.3);
            }
        }
    }
    for last in out.last_acquired.iter_mut().flatten() {
        last.2 = map(last.2);
    }
    out
}

/// A fast, non-cryptographic hasher for ordering slots in
/// [`representative`]: a collision only leaves two slots in index order
/// (less reduction), so speed matters more than quality here.
#[derive(Default)]
struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
