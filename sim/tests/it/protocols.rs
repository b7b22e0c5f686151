//! Kafka 4's consumer group protocol in the simulator
//! (docs/background.md, "Group protocols"): with `group_protocol =
//! "consumer"` the client never expires its own session and a commit
//! renews none. A leader whose heartbeats fail keeps proving its lease
//! until the coordinator evicts it, S after its last answered heartbeat,
//! and hands partition 0 on at once: with G = 0 the successor leads beside
//! it (what `neli-lab check --group-protocol consumer` finds in the model);
//! a grace G = T on the successor separates the leases. Under the classic
//! protocol the same fault ends in the client's own session expiry.

use neli_sim::Rule;

use crate::{assert_flagged, assert_survives, scenario};

#[test]
fn consumer_protocol_without_grace_gives_two_leaders_when_heartbeats_fail() {
    let s = scenario(include_str!("scenarios/consumer-heartbeats-fail.toml"));
    let r = assert_flagged(&s, 0..10, &[Rule::Overlap]);
    assert!(r.trace.iter().any(|l| l.contains("evicted (session timeout)")), "the coordinator evicted the leader");
    assert!(!r.trace.iter().any(|l| l.contains("session timed out on the client")), "no client-side expiry");
}

#[test]
fn consumer_protocol_with_the_grace_keeps_one_leader() {
    let s = scenario(include_str!("scenarios/consumer-heartbeats-fail-grace.toml"));
    for seed in 0..10 {
        let r = assert_survives(&s, seed);
        assert!(r.trace.iter().any(|l| l.contains("evicted (session timeout)")), "seed {seed}: the fault bit");
    }
}

#[test]
fn classic_protocol_leader_with_failing_heartbeats_expires_its_own_session() {
    let s = scenario(include_str!("scenarios/classic-heartbeats-fail.toml"));
    for seed in 0..10 {
        let r = assert_survives(&s, seed);
        let lost = r.trace.iter().any(|l| l.contains("assignment lost (session timed out on the client)"));
        assert!(lost, "seed {seed}: the client gives its assignment up");
    }
}

/// Static membership (classic protocol): a new process with the frozen
/// leader's instance id takes its place and partition 0 in the same
/// generation, without a rebalance; with G = 0 it leads beside the lease
/// the old leader proved before it froze (what `neli-lab check
/// --static-replacements 1` finds in the model).
#[test]
fn static_replacement_without_grace_gives_two_leaders() {
    let s = scenario(include_str!("scenarios/static-replace.toml"));
    let r = assert_flagged(&s, 0..10, &[Rule::Overlap]);
    assert!(
        r.trace.iter().any(|l| l.contains("static member m") && l.contains("replaces")),
        "the coordinator replaced it"
    );
    assert!(!r.trace.iter().any(|l| l.contains("rebalance (member joined)") && l.contains("after generation 2")));
}

#[test]
fn static_replacement_with_the_grace_keeps_one_leader() {
    let s = scenario(include_str!("scenarios/static-replace-grace.toml"));
    for seed in 0..10 {
        let r = assert_survives(&s, seed);
        assert!(r.trace.iter().any(|l| l.contains("replaces")), "seed {seed}: the replacement happened");
        let fenced = r.trace.iter().any(|l| l.contains("FENCED_INSTANCE_ID"));
        assert!(fenced, "seed {seed}: the old process learns it was fenced by a newer instance");
    }
}
