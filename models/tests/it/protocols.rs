//! Kafka 4's consumer group protocol (KIP-848) against the classic one
//! (docs/background.md, "Group protocols"). Under the consumer protocol the
//! client never expires its own session and an accepted commit renews
//! nothing, so a member whose group heartbeats fail while its membership
//! proofs still go through keeps a lease proven moments before the
//! coordinator fences it and hands partition 0 on at once: T < S no longer
//! separates the two leases. A grace G >= T on the successor does.

use neli_models::{Faults, GroupProtocol};
use stateright::Checker;

use crate::{ONE_LEADER, check, counterexample, hunt, small};

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
