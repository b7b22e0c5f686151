//! Incremental (cooperative-sticky) assignment: a rebalance keeps a
//! partition with its owner, so its leader keeps leading through it, and a
//! partition that must move is revoked from its owner alone (the Revoked
//! barrier) and handed on only in the next rebalance
//! (docs/cooperative-rebalance.md). A coordinator that hands it on at once
//! gives two leaders.

use std::collections::BTreeSet;

use neli_models::bfs::SymmetricBfs;
use neli_models::election::{Callback, sticky_deal};
use neli_models::{ElectionModelCfg, Faults, counterexample_to_scenario, cut_at_violation};
use neli_sim::scenario::AssignmentName;
use stateright::{Checker, HasDiscoveries};

use crate::safe::assert_safe;
use crate::{ONE_LEADER, check, reachable, small};

fn incremental(faults: Faults) -> ElectionModelCfg {
    let mut cfg = small(faults);
    cfg.incremental = true;
    cfg
}

/// The smallest configuration in which balancing moves a led partition:
/// 2 members, 2 roles on 2 partitions, one pause. The pause (past `S` = 4
/// ticks) leaves one member owning both partitions; when the other comes
/// back, one of them must move to it.
fn balancing(ticks: u8) -> ElectionModelCfg {
    let mut cfg = incremental(Faults { pauses: 1, ..Faults::default() });
    (cfg.roles, cfg.partitions, cfg.max_ticks) = (2, 2, ticks);
    cfg
}

/// The dealing rules, as the simulator's `sticky_assignment` pins them:
/// the owner keeps its partition whoever sorts first, the newest claim
/// wins, equal claims cancel, and a partition that must move is withheld
/// from both members (or, skipping the barrier, handed over at once).
#[test]
fn sticky_dealing_keeps_owners_and_withholds_what_moves() {
    let nothing: &[u32] = &[];
    // Member 1 owns partition 0; member 0 comes first in the order but gets nothing.
    assert_eq!(sticky_deal(&[(nothing, 0), (&[0], 3)], 1, &[0, 1], true), vec![vec![], vec![0]]);
    assert_eq!(sticky_deal(&[(&[0], 2), (&[0], 3)], 1, &[0, 1], true), vec![vec![], vec![0]], "newest claim");
    assert_eq!(sticky_deal(&[(&[0], 3), (&[0], 3)], 1, &[1, 0], true), vec![vec![], vec![0]], "cancelled, dealt anew");
    // Nothing owned: partition p goes to the (p mod n)-th member of the order.
    assert_eq!(sticky_deal(&[(nothing, 0), (nothing, 0)], 2, &[1, 0], true), vec![vec![1], vec![0]]);
    // Member 0 owns both: one moves to member 1, withheld this time.
    assert_eq!(sticky_deal(&[(&[0, 1], 2), (nothing, 0)], 2, &[0, 1], true), vec![vec![0], vec![]]);
    assert_eq!(sticky_deal(&[(&[0, 1], 2), (nothing, 0)], 2, &[0, 1], false), vec![vec![0], vec![1]]);
    // Next time member 0 claims only what it kept, and member 1 gets the rest.
    assert_eq!(sticky_deal(&[(&[0], 3), (nothing, 0)], 2, &[0, 1], true), vec![vec![0], vec![1]]);
}

/// The recommended exclusive configuration under incremental assignment,
/// 3 members, a pause and a coordinator isolation: the owner keeps
/// partition 0 through every rebalance it survives (no revocation, the
/// lease, token and membership proof carried over), and a handover still
/// happens when the owner is the one that goes.
#[test]
fn incremental_exclusive_survives_a_pause_and_an_isolation() {
    let mut cfg = incremental(Faults { pauses: 1, isolations: 1, ..Faults::default() });
    (cfg.members, cfg.max_ticks) = (3, 5);
    assert_eq!(assert_safe(cfg), 349_592);
}

/// Multi-role under incremental assignment: with the barrier, the
/// configuration that catches the barrier-skipping coordinator passes, at a
/// deeper bound too, and the partition that moves really is withheld
/// first: some reachable state has a member told to give up a partition it
/// still holds (checked on every reachable state, the safe bound's).
#[test]
fn incremental_multi_role_hands_a_moving_partition_on_after_the_barrier() {
    assert_eq!(assert_safe(balancing(6)), 67_958);
    let model = balancing(5).into_model();
    let seen = reachable(&model);
    let withheld = seen
        .iter()
        .filter(|s| {
            s.slots.iter().any(|slot| {
                slot.callbacks.iter().any(|cb| match cb {
                    Callback::Assigned { partitions, .. } => {
                        slot.core().is_some_and(|c| c.assigned().iter().any(|p| !partitions.contains(p)))
                    }
                    _ => false,
                })
            })
        })
        .count();
    println!("{} reachable states, {withheld} with a withheld partition about to be revoked", seen.len());
    assert!(withheld > 0, "no rebalance ever moved a partition: the barrier was never exercised");
}

/// The barrier-skipping coordinator (`skip_revoked_barrier`): a moving
/// partition goes to its new owner in the rebalance that tells its old
/// owner to revoke it. The new owner reads its own heartbeat and leads
/// while the old owner, not yet having polled its assignment, still leads
/// on a lease and membership proof that incremental assignment rightly
/// carries across generations: two leaders of one role. The smallest bound
/// is `S` = 4 ticks (the pause must outlast the session); breadth first
/// without symmetry gives the shortest path.
#[test]
fn skipping_the_revoked_barrier_gives_two_leaders() {
    let mut cfg = balancing(3);
    cfg.skip_revoked_barrier = true;
    let (_, checker) = check(cfg.clone());
    checker.assert_no_discovery(ONE_LEADER); // 3 ticks: no member is evicted, nothing moves
    cfg.max_ticks = 4;
    let model = cfg.clone().into_model();
    let until = HasDiscoveries::AnyOf(BTreeSet::from([ONE_LEADER]));
    let bfs = SymmetricBfs::builder(model.clone()).finish_when(until).spawn().join();
    let path = bfs.discovery(ONE_LEADER).expect("two leaders");
    let path = cut_at_violation(&model, &path, ONE_LEADER);
    println!("{}", neli_models::format_path(&model, &path));
    let last = path.last_state();
    let role = (0..2).find(|r| last.leader_count(*r) == 2).expect("a role with two leaders");
    // The same role on a partition that moved: its old owner still holds it
    // in its core, with the assignment that takes it away not yet polled.
    let old_owner = last.leaders(role).into_iter().find(|((m, _), _)| {
        last.slots[*m as usize]
            .callbacks
            .iter()
            .any(|cb| matches!(cb, Callback::Assigned { partitions, .. } if !partitions.contains(&role)))
    });
    assert!(old_owner.is_some(), "one leader is the old owner, told to revoke");
    assert_eq!(path.into_actions().len(), 25);
    // With the barrier the same bound is safe.
    cfg.skip_revoked_barrier = false;
    let (_, checker) = check(cfg);
    checker.assert_no_discovery(ONE_LEADER);
}

/// A counterexample under incremental assignment replays in the simulator
/// with `assignment = "cooperative-sticky"`, and the model's coordinator
/// that skips the barrier with the simulator's that does
/// (`revoked_barrier = false`).
#[test]
fn an_incremental_counterexample_writes_a_cooperative_sticky_scenario() {
    let mut cfg = balancing(4);
    cfg.skip_revoked_barrier = true;
    let model = cfg.into_model();
    let until = HasDiscoveries::AnyOf(BTreeSet::from([ONE_LEADER]));
    let bfs = SymmetricBfs::builder(model.clone()).finish_when(until).spawn().join();
    let path = cut_at_violation(&model, &bfs.discovery(ONE_LEADER).expect("two leaders"), ONE_LEADER);
    let replay = counterexample_to_scenario(&model, "model-skip-revoked-barrier", &path);
    assert_eq!(replay.scenario.election.assignment, AssignmentName::CooperativeSticky);
    assert!(!replay.scenario.cluster.revoked_barrier);
    let text = replay.scenario.to_toml(&replay.notes).expect("writable");
    assert!(text.contains("assignment = \"cooperative-sticky\""), "{text}");
    assert!(text.contains("revoked_barrier = false"), "{text}");
    let back = neli_sim::Scenario::parse(&text, "<model>").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.election.assignment, AssignmentName::CooperativeSticky);
    assert!(!back.cluster.revoked_barrier, "the file keeps the unsafe coordinator");
}
