//! Kafka 4's consumer group protocol (KIP-848) against the classic one
//! (docs/background.md, "Group protocols"). Under the consumer protocol the
//! client never expires its own session and an accepted commit renews
//! nothing, so a member whose group heartbeats fail while its membership
//! proofs still go through keeps a lease proven moments before the
//! coordinator fences it and hands partition 0 on at once: T < S no longer
//! separates the two leases. A grace G >= T on the successor does.

use neli_models::{ElectionAction, ElectionState, Faults, GroupProtocol};
use stateright::{Checker, Model};

use crate::{ONE_LEADER, check, counterexample, hunt, reachable, small};

fn heartbeats_fail() -> Faults {
    Faults { heartbeat_failures: 1, ..Faults::default() }
}

#[test]
fn consumer_protocol_without_grace_gives_two_leaders() {
    let mut cfg = small(heartbeats_fail());
    cfg.protocol = GroupProtocol::Consumer;
    assert_eq!(cfg.grace, 0);
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    assert_eq!(path.last_state().leaders(0).len(), 2);
}

/// The same fault under the classic protocol: the client expires its own
/// session S after its last heartbeat answer, and each accepted proof
/// renews the session at the coordinator, so nothing is handed on while
/// the lease can still hold.
#[test]
fn classic_protocol_with_failing_heartbeats_keeps_one_leader() {
    let (model, checker) = check(small(heartbeats_fail()));
    checker.assert_no_discovery(ONE_LEADER);
    assert!(model.cfg.grace == 0);
}

/// The rule: the successor leads only G >= T after it was handed the
/// partition: its predecessor's lease ends by its last accepted proof's send
/// time + T, and that proof was accepted before the fence that handed the
/// partition on. Also with a clock that steps a tick.
#[test]
fn consumer_protocol_with_grace_t_keeps_one_leader() {
    for clock_steps in [0, 1] {
        let mut cfg = small(Faults { clock_steps, max_skew: clock_steps, ..heartbeats_fail() });
        cfg.protocol = GroupProtocol::Consumer;
        cfg.grace = cfg.heartbeat_timeout;
        let (_model, checker) = check(cfg);
        checker.assert_no_discovery(ONE_LEADER);
    }
}

/// Static membership under the classic protocol: a new process with the
/// leader's instance id takes its partitions in the same generation,
/// without a rebalance and without the old session expiring, while the
/// old process is paused with a proven lease. With G = 0 the new process
/// leads while the old one, resumed, still holds its lease.
#[test]
fn static_replacement_without_grace_gives_two_leaders() {
    let cfg = small(Faults { pauses: 1, static_replacements: 1, ..Faults::default() });
    assert_eq!((cfg.grace, cfg.protocol), (0, GroupProtocol::Classic));
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    let leaders = path.last_state().leaders(0);
    assert_eq!(leaders.len(), 2, "{leaders:?}");
    // One of them is the spare process that took over an instance id.
    assert!(leaders.iter().any(|((slot, _), _)| *slot == model.cfg.members), "{leaders:?}");
}

/// The same rule as the consumer protocol's: the replacement leads only
/// G >= T after it was handed the partition, and the replaced leader's
/// lease ends by its last accepted proof's send time + T, sent before the
/// replacement (its later proofs are refused).
#[test]
fn static_replacement_with_grace_t_keeps_one_leader() {
    for faults in [
        Faults { pauses: 1, static_replacements: 1, ..Faults::default() },
        Faults { isolations: 1, static_replacements: 1, ..Faults::default() },
        Faults { clock_steps: 1, max_skew: 1, static_replacements: 1, ..Faults::default() },
    ] {
        let mut cfg = small(faults);
        cfg.grace = cfg.heartbeat_timeout;
        let (_model, checker) = check(cfg);
        checker.assert_no_discovery(ONE_LEADER);
        checker.assert_any_discovery(crate::ELECTED);
    }
}

/// Under the consumer protocol a duplicate instance id is refused
/// (UNRELEASED_INSTANCE_ID), so the model offers no replacement there.
#[test]
fn static_replacement_is_a_classic_protocol_fault_only() {
    let mut cfg = small(Faults { static_replacements: 1, ..Faults::default() });
    cfg.protocol = GroupProtocol::Consumer;
    cfg.grace = cfg.heartbeat_timeout;
    let replaced = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = replaced.clone();
    let model = cfg.into_model();
    let checker = model
        .checker()
        .visitor(move |path: stateright::Path<ElectionState, ElectionAction>| {
            if path.last_state().slots.iter().any(|s| s.replaced) {
                seen.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        })
        .spawn_bfs()
        .join();
    checker.assert_no_discovery(ONE_LEADER);
    checker.assert_any_discovery(crate::ELECTED);
    assert!(!replaced.load(std::sync::atomic::Ordering::SeqCst), "no reachable state has a replaced member");
}

/// The grace must also cover the clocks running apart: with a pause and
/// one tick of clock skew, G = T gives two leaders under static
/// replacement (the replaced leader's slowed clock keeps its lease a tick
/// longer), and G = T + 1 tick does not (the library asks T + 10 %).
#[test]
fn static_replacement_needs_the_skew_on_top_of_t() {
    let faults = Faults { pauses: 1, clock_steps: 1, max_skew: 1, static_replacements: 1, ..Faults::default() };
    let mut cfg = small(faults);
    // The overlap shows by tick 5; fewer ticks keep the debug build quick.
    cfg.max_ticks = 6;
    cfg.grace = cfg.heartbeat_timeout;
    let (model, checker) = hunt(cfg.clone(), ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    assert_eq!(path.last_state().leaders(0).len(), 2);
    cfg.grace = cfg.heartbeat_timeout + 1;
    let (_model, checker) = check(cfg);
    checker.assert_no_discovery(ONE_LEADER);
    checker.assert_any_discovery(crate::ELECTED);
}

/// Under the consumer protocol the client has no session expiry of its own,
/// so nothing reads when a member last heard the coordinator, and the model
/// keeps no such time: states that differ only in it are one state. Under
/// the classic protocol the same run keeps it (the client expires its
/// session S after it), so the test is not vacuous.
#[test]
fn consumer_protocol_states_keep_no_last_contact_time() {
    let faults = Faults { pauses: 1, isolations: 1, ..heartbeats_fail() };
    for protocol in [GroupProtocol::Classic, GroupProtocol::Consumer] {
        let mut cfg = small(faults);
        cfg.protocol = protocol;
        let states = reachable(&cfg.into_model());
        let kept = states.iter().any(|s: &ElectionState| s.slots.iter().any(|slot| slot.coord_ok != 0));
        assert_eq!(kept, protocol == GroupProtocol::Classic, "{protocol:?}: a last-contact time kept in some state");
    }
}

/// A rebalance's answer to a member that cannot hear the coordinator (cut
/// off, or under the consumer protocol with its heartbeats failing, since
/// KIP-848 hands assignments out in heartbeat answers) waits until it can:
/// in no reachable state is such an answer polled, none waits behind the
/// end of its join (`Lost`), and once the member hears the coordinator it
/// is an ordinary answer (models/README.md, "What a member hears of a
/// rebalance"). Under the classic protocol failing heartbeats hold no
/// answer back (SyncGroup is its own request). Taking an answer at once
/// would also let a cooperative member give up a moving partition earlier
/// than its client can.
#[test]
fn an_answer_the_member_cannot_hear_waits_until_it_can() {
    use neli_models::election::Callback;
    let late = |s: &ElectionState, i: usize| s.slots[i].callbacks.front().is_some_and(Callback::is_late);
    // A crash and restart start the rebalance that deals the other member
    // while it cannot hear the coordinator.
    for (protocol, faults, some_wait) in [
        (GroupProtocol::Classic, Faults { isolations: 1, crashes: 1, ..Faults::default() }, true),
        (GroupProtocol::Classic, Faults { heartbeat_failures: 1, crashes: 1, ..Faults::default() }, false),
        (GroupProtocol::Consumer, Faults { heartbeat_failures: 1, crashes: 1, ..Faults::default() }, true),
    ] {
        let mut cfg = small(faults);
        (cfg.protocol, cfg.max_ticks, cfg.grace) = (protocol, 6, 3);
        let model = cfg.into_model();
        let mut waiting = 0;
        for s in reachable(&model) {
            for (i, slot) in s.slots.iter().enumerate() {
                let queued_late = slot.callbacks.iter().any(Callback::is_late);
                assert!(
                    !(queued_late && slot.callbacks.contains(&Callback::Lost)),
                    "{protocol:?}: an answer waits behind the end of its join: {slot:?}"
                );
                if !late(&s, i) {
                    continue;
                }
                waiting += 1;
                let unheard = slot.isolated || (protocol == GroupProtocol::Consumer && slot.heartbeats_failing);
                assert!(unheard, "{protocol:?}: late only while unheard: {slot:?}");
                let mut actions = Vec::new();
                model.actions(&s, &mut actions);
                assert!(
                    !actions.contains(&ElectionAction::Poll(i as u8)),
                    "{protocol:?}: an unheard answer is polled: {slot:?}"
                );
                let heal =
                    if slot.isolated { ElectionAction::Heal(i as u8) } else { ElectionAction::HeartbeatsHeal(i as u8) };
                if actions.contains(&heal) && !slot.paused {
                    let healed = model.next_state(&s, heal).expect("heals");
                    assert!(!late(&healed, i), "{protocol:?}: still late once heard");
                    let mut after = Vec::new();
                    model.actions(&healed, &mut after);
                    assert!(after.contains(&ElectionAction::Poll(i as u8)), "{protocol:?}: polled once heard");
                }
            }
        }
        assert_eq!(waiting > 0, some_wait, "{protocol:?} {faults:?}: {waiting} states with an answer waiting");
    }
}
