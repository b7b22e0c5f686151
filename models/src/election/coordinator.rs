//! The abstract classic-protocol group coordinator's behaviour: when it
//! starts a rebalance and how a rebalance deals partitions (every order of
//! the members is a possible deal, eager or cooperative-sticky). Its member
//! table, part of every state, is `state::Coordinator`.

use std::collections::BTreeMap;

use super::ElectionModel;
use super::state::{ElectionState, GroupMember, Key};

impl GroupMember {
    pub(super) fn joined(expiry: u8) -> GroupMember {
        GroupMember { expiry, rejoined: true, owned: Vec::new(), owned_generation: 0 }
    }
}

impl ElectionModel {
    /// Membership changed: enter PreparingRebalance; everyone but `joiner` must rejoin.
    pub(super) fn start_rebalance(&self, s: &mut ElectionState, joiner: Option<Key>) {
        if s.coord.members.is_empty() {
            if s.coord.rebalance.is_some() {
                s.coord_mut().rebalance = None;
            }
        } else if s.coord.rebalance.is_none() {
            let deadline = s.now + self.cfg.session_timeout;
            let coord = s.coord_mut();
            coord.rebalance = Some(deadline);
            for (k, m) in coord.members.iter_mut() {
                m.rejoined = Some(*k) == joiner;
            }
        }
    }

    /// What deal number `number` gives each member of the coordinator's
    /// table, in the table's order.
    pub(super) fn dealt(&self, s: &ElectionState, number: u32) -> Vec<Vec<u32>> {
        let n = s.coord.members.len();
        if self.cfg.incremental {
            let order = deal(n, n, number as usize);
            let claims: Vec<(&[u32], u64)> =
                s.coord.members.values().map(|m| (&m.owned[..], m.owned_generation)).collect();
            sticky_deal(&claims, self.cfg.partitions, &order, !self.cfg.skip_revoked_barrier)
        } else {
            let order = deal(n, self.cfg.partitions as usize, number as usize);
            (0..n).map(|idx| (0..self.cfg.partitions).filter(|p| order[*p as usize % n] == idx).collect()).collect()
        }
    }

    /// How many deals a rebalance of `members` members can make: eager, one
    /// per order of the shares ([`deal_count`]); incremental, one per order
    /// of all members (ties in [`sticky_deal`] may involve every member).
    pub(super) fn deal_count(&self, members: usize) -> usize {
        let shares = if self.cfg.incremental { members } else { self.cfg.partitions as usize };
        deal_count(members, shares)
    }

    /// Deal number `number` of a rebalance of `members` members, as the
    /// member index (into the coordinator's sorted member list) that gets
    /// each share `j < min(partitions, members)` when nobody owns anything
    /// (the first generation): partition `p` goes to share `p mod n`.
    pub fn shares(&self, members: usize, number: usize) -> Vec<usize> {
        if self.cfg.incremental {
            let mut order = deal(members, members, number);
            order.truncate((self.cfg.partitions as usize).min(members));
            order
        } else {
            deal(members, self.cfg.partitions as usize, number)
        }
    }
}

/// How many different assignments a rebalance of `members` members over
/// `partitions` partitions can deal (see [`deal`]): `n! / (n - k)!` with
/// `k = min(partitions, n)`.
pub fn deal_count(members: usize, partitions: usize) -> usize {
    let k = partitions.min(members);
    (members - k + 1..=members).fold(1usize, |a, b| a.saturating_mul(b))
}

/// Deal number `number` (lexicographic order): the member index (into the
/// coordinator's sorted member list) that gets the `j`-th share, for
/// `j < min(partitions, members)`; partition `p` goes to share `p mod n`
/// (NELI's `j mod M` dealing).
///
/// Every order of the members is a possible deal, because member ids are
/// arbitrary (random in Kafka), so which member sorts first is not a fact
/// of the system. A rotation of one fixed order (what this model dealt
/// before) made member names matter in multi-role mode with 3 or more
/// members: renaming two members could produce an assignment no rotation
/// deals, so the set of reachable states was not closed under renaming and
/// the symmetry reduction ([`representative`](super::representative)) was
/// unsound there. With every order the reachable states are closed under
/// renaming (pinned by `models/tests/it/symmetry.rs`). With one partition,
/// or two members, the deals are exactly the old rotations.
pub fn deal(members: usize, partitions: usize, number: usize) -> Vec<usize> {
    let k = partitions.min(members);
    let (mut rest, mut left): (Vec<usize>, usize) = ((0..members).collect(), number);
    let mut out = Vec::with_capacity(k);
    for j in 0..k {
        // Deals with this prefix: (n - j - 1)! / (n - k)!
        let block: usize = (members - k + 1..members - j).product();
        out.push(rest.remove(left / block));
        left %= block;
    }
    out
}

/// Cooperative-sticky dealing (librdkafka's group leader, as the
/// simulator's `sticky_assignment` deals): `claims[i]` is what member `i`
/// (into the coordinator's sorted member list) owns and the generation it
/// got it in. A partition stays with the member that claims it in the
/// newest generation (two claims of one generation cancel each other);
/// unowned partitions go, in order, to the least loaded member; then
/// partitions move from the most to the least loaded member until the loads
/// differ by at most one. Ties between equally loaded members go to the
/// member earlier in `order` (every order is a possible deal, as in
/// [`deal`], so the reachable states stay closed under renaming).
///
/// With `withhold`, a partition whose owner changes is dealt to nobody this
/// time: its owner's assignment lacks it, so the owner revokes it (the
/// Revoked barrier) and rejoins, and the next rebalance deals it as
/// unowned. Without, it goes to its new owner at once (the unsafe
/// `skip_revoked_barrier` coordinator).
pub fn sticky_deal(claims: &[(&[u32], u64)], partitions: u32, order: &[usize], withhold: bool) -> Vec<Vec<u32>> {
    let mut owner: BTreeMap<u32, (u64, Option<usize>)> = BTreeMap::new();
    for (i, (owned, generation)) in claims.iter().enumerate() {
        for &p in owned.iter().filter(|p| **p < partitions) {
            match owner.get(&p) {
                Some((g, _)) if g > generation => {}
                Some((g, _)) if g == generation => {
                    owner.insert(p, (*g, None));
                }
                _ => {
                    owner.insert(p, (*generation, Some(i)));
                }
            }
        }
    }
    let owner: BTreeMap<u32, usize> = owner.into_iter().filter_map(|(p, (_, o))| o.map(|o| (p, o))).collect();
    let mut target: Vec<Vec<u32>> = vec![Vec::new(); claims.len()];
    for (p, o) in &owner {
        target[*o].push(*p);
    }
    let rank = |i: usize| order.iter().position(|o| *o == i).unwrap_or(usize::MAX);
    let least = |t: &[Vec<u32>]| (0..t.len()).min_by_key(|i| (t[*i].len(), rank(*i))).expect("a group has members");
    for p in (0..partitions).filter(|p| !owner.contains_key(p)) {
        let to = least(&target);
        target[to].push(p);
    }
    loop {
        let most = (0..target.len()).min_by_key(|i| (std::cmp::Reverse(target[*i].len()), rank(*i))).expect("members");
        let to = least(&target);
        if target[most].len() <= target[to].len() + 1 {
            break;
        }
        let p = target[most].pop().expect("the most loaded member has a partition");
        target[to].push(p);
    }
    for (i, ps) in target.iter_mut().enumerate() {
        if withhold {
            ps.retain(|p| owner.get(p).is_none_or(|o| *o == i));
        }
        ps.sort_unstable();
    }
    target
}
