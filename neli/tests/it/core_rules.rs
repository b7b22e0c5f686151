//! Named scenarios for the sans-IO core: goNELI's behaviours and the new
//! lease rules. Each test injects one fault where it happens in the story.

use neli::core::{CoreConfig, FenceCause, Heartbeat, Member, Output, UnsafeVariant};
use neli::{Event, Token};

use crate::core_loop::{Loop, dur, ms};

fn elected() -> Loop {
    let mut l = Loop::exclusive();
    l.assign(ms(0), 1, &[0]);
    l.read_back(ms(5));
    assert!(l.member.is_leader(0, ms(5)));
    l.take_events();
    l
}

#[test]
fn assignment_of_partition_0_leads_once_own_heartbeat_is_read_back() {
    let mut l = Loop::exclusive();
    l.assign(ms(0), 1, &[0]);
    // Assigned is not leading: the log has not proven reachable yet.
    assert!(!l.member.is_leader(0, ms(0)));
    l.read_back(ms(5));
    assert_eq!(l.take_events(), vec![Event::Acquired { role: 0, token: Token(0) }]);
    assert_eq!(l.member.lease(0, ms(5)).map(|l| l.until), Some(ms(1000)), "lease = own heartbeat send time + T");
}

#[test]
fn assignment_without_partition_0_never_leads() {
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.partitions = 2; // topic created with 2 partitions, exclusive role on 0
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[1]);
    l.run_healthy(ms(0), ms(3000), 100);
    assert!(l.take_events().is_empty());
    assert!(l.log.is_empty() && l.next_offset == 0, "no heartbeats for roles we cannot hold");
}

#[test]
fn revoking_other_partitions_emits_nothing() {
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.partitions = 2;
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0, 1]);
    l.read_back(ms(5));
    l.take_events();
    l.member.handle_revoked(ms(10), &[1]);
    l.drain(ms(10));
    assert!(l.take_events().is_empty());
    assert!(l.member.is_leader(0, ms(10)));
}

#[test]
fn revoking_partition_0_is_an_orderly_revoke() {
    let mut l = elected();
    l.member.handle_revoked(ms(10), &[0]);
    l.drain(ms(10));
    assert_eq!(l.take_events(), vec![Event::Revoked { role: 0 }]);
    assert!(!l.member.is_leader(0, ms(10)));
}

#[test]
fn lost_assignment_is_fenced_not_revoked() {
    let mut l = elected();
    l.member.handle_lost(ms(10), &[0]);
    l.drain(ms(10));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
}

#[test]
fn heartbeat_timeout_fences_at_send_time_plus_t() {
    let mut l = elected();
    // The log becomes unreachable: heartbeats are produced but never read.
    l.tick(ms(999));
    l.log.clear();
    assert!(l.take_events().is_empty());
    l.tick(ms(1000));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
}

#[test]
fn lease_expires_without_any_further_input() {
    // A stalled loop must not keep a stale "true" (goNELI keeps a flag).
    let l = elected();
    assert!(l.member.is_leader(0, ms(999)));
    assert!(!l.member.is_leader(0, ms(1000)));
}

#[test]
fn heartbeat_after_fence_reacquires_with_a_larger_token() {
    let mut l = elected();
    l.log.clear();
    l.tick(ms(1000));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
    l.tick(ms(1250)); // next heartbeat goes out
    l.read_back(ms(1260));
    let events = l.take_events();
    let [Event::Acquired { token, .. }] = events[..] else { panic!("expected one Acquired, got {events:?}") };
    assert!(token > Token(0), "token {token} must exceed the previous term's 0");
}

#[test]
fn foreign_records_do_not_extend_the_lease() {
    let mut l = elected();
    let stranger = Heartbeat { role: 0, term: 1, seq: 9, sent_at: ms(900), lease: None, name: "stranger".into() };
    l.log.clear();
    for at in [300, 600, 900] {
        let r = l.foreign(0, stranger.encode());
        l.member.handle_record(ms(at), &r);
    }
    assert_eq!(l.member.counters().foreign, 3);
    l.tick(ms(1000));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
}

#[test]
fn garbage_records_are_ignored_and_counted() {
    let mut l = elected();
    for bytes in [&b""[..], b"NELI", b"\xff\x00garbage", b"NELI\x01short"] {
        let r = l.foreign(0, bytes.to_vec());
        l.member.handle_record(ms(10), &r);
    }
    assert_eq!(l.member.counters().undecodable, 4);
    assert!(l.take_events().is_empty());
    assert_eq!(l.member.lease(0, ms(10)).map(|l| l.until), Some(ms(1000)));
}

#[test]
fn buffered_own_heartbeats_do_not_revive_a_paused_leader() {
    // docs/background.md, Hazards, hazard 1: the leader is paused 0.3 s..5 s; its own heartbeats sat in
    // the fetch buffer and are drained on resume.
    let mut l = elected();
    l.tick(ms(250));
    l.tick(ms(300));
    let buffered = std::mem::take(&mut l.log);
    l.tick(ms(5000));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
    for r in &buffered {
        l.member.handle_record(ms(5001), r);
    }
    l.drain(ms(5001));
    assert!(l.take_events().is_empty(), "stale evidence must not re-acquire");
    assert!(l.member.counters().expired_on_arrival >= 1);
}

#[test]
fn a_lease_that_ended_in_a_stall_is_not_revived_by_heartbeats_read_after_it() {
    // docs/background.md, "Protocol semantics": a lease is over at its end.
    // The loop stalls from 300 ms to 1100 ms with the heartbeat sent at
    // 250 ms unread: the lease ended at 1000 ms (the heartbeat read at 5 ms
    // + T), and that heartbeat, still fresh, must not bring it back.
    let mut l = elected();
    l.tick(ms(250));
    let unread = std::mem::take(&mut l.log);
    for r in &unread {
        l.member.handle_record(ms(1100), r);
    }
    l.drain(ms(1100));
    let events = l.take_events();
    assert_eq!(events.first(), Some(&Event::Fenced { role: 0 }), "the ended term is fenced first: {events:?}");
    assert_ne!(l.member.token(0, ms(1100)), Some(Token(0)), "the ended term's token 0 leads again: {events:?}");
    let again = events.iter().find_map(|e| match e {
        Event::Acquired { token, .. } => Some(*token),
        _ => None,
    });
    assert!(again.is_none_or(|t| t > Token(0)), "a new term has a new token: {events:?}");
}

#[test]
fn a_lease_that_ended_with_its_proof_is_not_revived_by_a_later_proof() {
    // The coordinator is cut off from 0 ms: heartbeats still come back, the
    // lease ends with the last accepted proof (sent at 0 ms) + T. A proof
    // accepted afterwards starts nothing under the old token.
    let mut l = elected();
    l.coordinator_reachable = false;
    l.run_healthy(ms(250), ms(750), 250);
    assert!(l.take_events().is_empty());
    // The loop next runs at 1100 ms, when a proof sent at 1050 ms comes back.
    l.member.handle_membership(ms(1100), 1, ms(1050), true);
    l.drain(ms(1100));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
    assert!(!l.member.is_leader(0, ms(1100)), "the term ended at 1000 ms");
}

#[test]
fn a_partition_taken_from_a_leader_whose_lease_already_ended_is_a_fence() {
    // The loop stalled past the lease's end (1000 ms) and the next thing it
    // hears is the revocation: the term is over, so there is no orderly
    // handover to run (docs/background.md, "Protocol semantics").
    for take in [Member::handle_revoked, Member::handle_lost] {
        let mut l = elected();
        take(&mut l.member, ms(1100), &[0]);
        l.drain(ms(1100));
        assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
    }
    let mut l = elected();
    l.member.handle_revoked(ms(999), &[0]);
    l.drain(ms(999));
    assert_eq!(l.take_events(), vec![Event::Revoked { role: 0 }], "a live lease is handed over in order");
}

#[test]
fn receipt_time_variant_is_revived_by_buffered_heartbeats() {
    // The broken goNELI behaviour, kept for the harness to catch.
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.unsafe_variant = UnsafeVariant { lease_from_receipt: true, ..Default::default() };
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0]);
    l.read_back(ms(5));
    l.tick(ms(250));
    let buffered = std::mem::take(&mut l.log);
    l.tick(ms(5000));
    l.take_events();
    for r in &buffered {
        l.member.handle_record(ms(5001), r);
    }
    l.drain(ms(5001));
    assert!(matches!(l.take_events()[..], [Event::Acquired { .. }]));
}

#[test]
fn heartbeats_from_an_older_generation_are_stale() {
    let mut l = elected();
    l.tick(ms(250));
    let old = std::mem::take(&mut l.log);
    // A rebalance hands partition 0 back to us in generation 2 without an
    // intervening revoke (cooperative-like): old-term records are ignored.
    l.assign(ms(260), 2, &[0]);
    for r in &old {
        l.member.handle_record(ms(270), r);
    }
    assert_eq!(l.member.counters().stale_term, 1);
}

#[test]
fn grace_delays_acquisition() {
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.grace = dur(400);
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0]);
    l.read_back(ms(5));
    assert!(l.take_events().is_empty());
    assert_eq!(l.member.poll_timeout(), Some(ms(250)), "next heartbeat comes before grace ends");
    l.run_healthy(ms(250), ms(399), 50);
    assert!(l.take_events().is_empty());
    l.tick(ms(400));
    assert!(matches!(l.take_events()[..], [Event::Acquired { .. }]));
}

#[test]
fn lease_is_bounded_by_membership_proof() {
    // docs/background.md, Hazards, hazard 3: the member still reads its own heartbeats but can no longer
    // prove to the coordinator that it is a member.
    let mut l = elected();
    l.coordinator_reachable = false;
    let mut now = ms(250);
    while now < ms(1500) {
        l.tick(now);
        l.read_back(now);
        now = now + dur(50);
    }
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
    assert!(!l.member.is_leader(0, ms(1000)), "last proof was sent at 0 ms, T = 1000 ms");
}

#[test]
fn rejected_membership_fences_immediately() {
    let mut l = elected();
    l.member.handle_membership(ms(100), 1, ms(100), false);
    l.drain(ms(100));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
    assert_eq!(l.member.generation(), None);
}

#[test]
fn resign_revokes_leaves_and_ignores_the_old_generation() {
    let mut l = elected();
    l.member.resign(ms(100));
    l.drain(ms(100));
    assert_eq!(l.take_events(), vec![Event::Revoked { role: 0 }]);
    assert!(l.left_group);
    l.assign(ms(110), 1, &[0]);
    l.run_healthy(ms(110), ms(500), 50);
    assert!(l.take_events().is_empty(), "a late assignment of the resigned generation is ignored");
    l.assign(ms(600), 2, &[0]);
    l.read_back(ms(601));
    assert!(matches!(l.take_events()[..], [Event::Acquired { .. }]));
}

#[test]
fn close_revokes_and_ignores_later_input() {
    let mut l = elected();
    assert!(!l.member.is_closed());
    l.member.close(ms(100));
    assert!(l.member.is_closed());
    l.drain(ms(100));
    assert_eq!(l.take_events(), vec![Event::Revoked { role: 0 }]);
    l.assign(ms(200), 2, &[0]);
    l.run_healthy(ms(200), ms(600), 50);
    assert!(l.take_events().is_empty());
    assert_eq!(l.member.poll_timeout(), None);
}

#[test]
fn multi_role_assigns_roles_by_j_mod_m() {
    // Reference: NELI §4 — role j lives on partition j mod M.
    let cfg = CoreConfig { roles: 4, partitions: 2, ..CoreConfig::exclusive("me", dur(1000)) };
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[1]);
    l.read_back(ms(5));
    let mut acquired: Vec<u32> = l.take_events().iter().map(Event::role).collect();
    acquired.sort();
    assert_eq!(acquired, vec![1, 3]);
    assert!(l.member.is_leader(3, ms(5)) && !l.member.is_leader(2, ms(5)));
}

#[test]
fn early_timeouts_change_nothing() {
    let mut l = elected();
    let deadline = l.member.poll_timeout().expect("a leader has a deadline");
    l.member.handle_timeout(deadline - dur(1));
    assert!(l.member.poll_output().is_none());
    assert_eq!(l.member.poll_timeout(), Some(deadline));
    assert_eq!(l.member.lease(0, deadline - dur(1)).map(|l| l.until), Some(ms(1000)));
}

#[test]
fn heartbeats_carry_identity_term_sequence_and_send_time() {
    let mut m = Member::new(CoreConfig::exclusive("host_1_2", dur(1000)));
    m.handle_assigned(ms(42), 7, &[0]);
    let Some(Output::Produce { partition: 0, payload }) = m.poll_output() else { panic!("expected a heartbeat") };
    let hb = Heartbeat::decode(&payload).expect("own heartbeat decodes");
    assert_eq!(hb, Heartbeat { role: 0, term: 7, seq: 1, sent_at: ms(42), lease: None, name: "host_1_2".into() });
    assert_eq!(m.poll_output(), Some(Output::ConfirmMembership { generation: 7 }));
}

// A leader's heartbeats name the token of its live lease; a candidate's and
// a fenced member's name none. `neli watch` reports leadership from them,
// so what it shows is the core's own answer.
#[test]
fn heartbeats_name_the_senders_lease_token() {
    let mut l = elected();
    l.log.clear();
    l.tick(ms(250));
    let hb = Heartbeat::decode(&l.log.last().expect("a heartbeat at 250 ms").payload).expect("decodes");
    assert_eq!(hb.lease, Some(Token(0)));
    // Fenced (nothing read back for T): the next heartbeat claims no lease.
    l.log.clear();
    l.tick(ms(1000));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
    l.tick(ms(1250));
    let hb = Heartbeat::decode(&l.log.last().expect("a heartbeat at 1250 ms").payload).expect("decodes");
    assert_eq!(hb.lease, None);
}

#[test]
fn acquiring_needs_membership_proven_after_the_evidence_was_read() {
    // Found by neli-models in non-exclusive mode (T > S): a member resumed
    // from a pause drains its pre-pause heartbeat, still fresh, and its
    // pre-pause proof, still within T; it is no longer a member, and leading
    // on that would hand out an older token next to its successor.
    let mut l = Loop::exclusive();
    l.coordinator_reachable = false;
    l.assign(ms(0), 1, &[0]);
    let (g, sent_before) = (l.pending_membership.remove(0), ms(0));
    l.read_back(ms(10));
    assert_eq!(l.pending_membership, vec![1], "reading fresh evidence asks for a new proof at once");
    l.member.handle_membership(ms(20), g, sent_before, true);
    l.drain(ms(20));
    assert!(l.take_events().is_empty(), "a proof sent before the evidence was read does not count");
    l.member.handle_membership(ms(30), g, ms(10), true);
    l.drain(ms(30));
    assert!(matches!(l.take_events()[..], [Event::Acquired { .. }]));
}

#[test]
fn candidate_evidence_of_an_older_term_does_not_survive_a_new_generation() {
    // Found by `neli-lab check --simulate`: a candidate cut off
    // from the coordinator read its own generation-1 heartbeat at offset 0,
    // but its proof never came back; the group moved on without it, somebody
    // else led with a higher token, and it was assigned partition 0 again in
    // generation 3 with no Lost in between. Its old evidence is not
    // current-term: it must lead only on a generation-3 heartbeat.
    let mut l = Loop::exclusive();
    l.coordinator_reachable = false;
    l.assign(ms(0), 1, &[0]);
    l.read_back(ms(5));
    assert!(!l.member.is_leader(0, ms(5)), "no proof yet");
    // Another member's term takes offsets 1..=9 meanwhile.
    l.next_offset = 10;
    l.coordinator_reachable = true;
    l.member.handle_assigned(ms(20), 3, &[0]);
    l.drain(ms(20));
    let acquired = l.take_events();
    assert!(
        !acquired.contains(&Event::Acquired { role: 0, token: Token(0) }),
        "led on generation-1 evidence in generation 3: {acquired:?}"
    );
    l.read_back(ms(25));
    assert_eq!(l.take_events(), vec![Event::Acquired { role: 0, token: Token(10) }], "the new term's own heartbeat");
}

fn incremental() -> Loop {
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.incremental = true;
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0]);
    l.read_back(ms(5));
    l.take_events();
    l
}

#[test]
fn incremental_a_kept_partition_keeps_the_leader_its_token_and_its_lease() {
    // cooperative-sticky: a follower joined; the leader keeps partition 0 in
    // generation 2, with no proof of generation 2 yet (its commit waits).
    let mut l = incremental();
    l.coordinator_reachable = false;
    l.member.handle_assigned(ms(100), 2, &[0]);
    l.drain(ms(100));
    assert!(l.take_events().is_empty(), "no Revoked, no Fenced");
    assert_eq!(l.member.token(0, ms(100)), Some(Token(0)));
    assert!(l.member.is_leader(0, ms(900)), "the generation-1 proof (sent at 0 ms) still bounds the lease");
    assert!(!l.member.is_leader(0, ms(1000)), "and only it: T after its send time");
}

#[test]
fn eager_a_new_generation_needs_a_new_proof() {
    let mut l = elected();
    l.coordinator_reachable = false;
    l.member.handle_assigned(ms(100), 2, &[0]);
    l.drain(ms(100));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }], "an eager member gave everything back in between");
}

#[test]
fn incremental_lost_clears_the_proof() {
    let mut l = incremental();
    l.coordinator_reachable = false;
    l.member.handle_lost(ms(100), &[0]);
    l.drain(ms(100));
    assert_eq!(l.take_events(), vec![Event::Fenced { role: 0 }]);
    // Assigned again in a later generation: the old membership's proof does
    // not count, so no lease until a new proof is accepted.
    l.member.handle_assigned(ms(200), 3, &[0]);
    l.drain(ms(200));
    l.read_back(ms(205));
    assert!(l.take_events().is_empty(), "no proof of the new membership yet");
    assert!(!l.member.is_leader(0, ms(205)));
}

// The driver sleeps until `poll_timeout`. A deadline left out of it is acted
// on only at the next one it does give (a heartbeat, up to an interval
// later): Fenced and Acquired would come late. The harness cannot see that
// (the published lease, which the application asks, still ends on time),
// so these pin it (docs/benchmarks-log.md, "Harness power": the core under cargo-mutants).
#[test]
fn the_next_deadline_is_the_lease_end_when_it_comes_before_the_next_heartbeat() {
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.heartbeat_interval = dur(300);
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0]);
    l.read_back(ms(5));
    assert!(matches!(l.take_events()[..], [Event::Acquired { .. }]));
    // Heartbeats go out at 300, 600 and 900 but none is read back.
    for t in [300, 600, 900] {
        l.tick(ms(t));
    }
    assert_eq!(l.member.poll_timeout(), Some(ms(1000)), "the lease ends before the heartbeat due at 1200");
    l.tick(ms(1000));
    assert!(matches!(l.take_events()[..], [Event::Fenced { role: 0 }]));
}

#[test]
fn the_next_deadline_is_the_grace_end_when_it_comes_before_the_next_heartbeat() {
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.grace = dur(100);
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0]);
    l.read_back(ms(5));
    assert!(l.take_events().is_empty());
    assert_eq!(l.member.poll_timeout(), Some(ms(100)), "grace ends before the heartbeat due at 250");
}

// Edges the core-and-driver mutation run found unjudged (docs/mutation.md; BENCHMARKS.md,
// "Mutation testing: the core and the driver"): each test below is what a weakened
// line would get wrong.

#[test]
fn tokens_and_fence_causes_print_as_their_values() {
    // Log lines and the `cause` label of neli_fences_total read these.
    assert_eq!(Token(42).to_string(), "42");
    let shown: Vec<(String, &str)> = FenceCause::ALL.iter().map(|c| (c.to_string(), c.as_str())).collect();
    assert_eq!(
        shown,
        vec![
            ("assignment_lost".to_owned(), "assignment_lost"),
            ("membership_rejected".to_owned(), "membership_rejected"),
            ("lease_expired".to_owned(), "lease_expired"),
        ]
    );
}

#[test]
fn exclusive_defaults_send_four_heartbeats_per_lease() {
    let cfg = CoreConfig::exclusive("me", dur(1000));
    assert_eq!(cfg.heartbeat_interval, dur(250));
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0]);
    l.run_healthy(ms(0), ms(999), 1);
    assert_eq!(l.member.counters().heartbeats_sent, 4, "at 0, 250, 500 and 750 ms");
}

#[test]
fn partitions_the_topic_does_not_have_are_not_assigned() {
    // A client (or a topic grown behind the election's back) hands over a
    // partition beyond the configured count: nothing may be derived from it.
    let mut l = Loop::exclusive();
    l.assign(ms(0), 1, &[0, 1, 7]);
    assert_eq!(l.member.assigned().iter().copied().collect::<Vec<_>>(), vec![0]);
}

/// A candidate with a grace, whose proofs the test answers by hand.
fn waiting_candidate(grace: u64) -> Loop {
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.grace = dur(grace);
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0]);
    l
}

#[test]
fn a_repeated_assignment_of_the_same_generation_keeps_the_candidates_evidence() {
    // The same generation reported twice (a rebalance callback repeated):
    // the own heartbeat read at 5 ms is still this term's evidence.
    let mut l = waiting_candidate(500);
    l.read_back(ms(5));
    l.assign(ms(100), 1, &[0]);
    l.log.clear(); // the heartbeat the repeat sent is never read back
    l.tick(ms(500));
    assert_eq!(l.take_events(), vec![Event::Acquired { role: 0, token: Token(0) }]);
}

#[test]
fn the_token_is_the_newest_own_heartbeat_read_before_acquiring() {
    // Evidence documents "the freshest one's log offset as token".
    let mut l = waiting_candidate(500);
    l.read_back(ms(5)); // offset 0, sent at 0
    l.tick(ms(250));
    l.read_back(ms(255)); // offset 1, sent at 250
    l.tick(ms(500));
    assert_eq!(l.take_events(), vec![Event::Acquired { role: 0, token: Token(1) }]);
    assert_eq!(l.member.lease(0, ms(500)).map(|l| l.until), Some(ms(1250)));
}

#[test]
fn own_heartbeats_read_at_one_instant_ask_for_one_proof() {
    let mut l = waiting_candidate(500);
    l.coordinator_reachable = false;
    l.tick(ms(250));
    let before = l.pending_membership.len();
    l.read_back(ms(255)); // two own heartbeats, one read
    assert_eq!(l.pending_membership.len(), before + 1, "one proof per first read, not one per record");
}

#[test]
fn a_membership_answer_for_another_generation_changes_nothing() {
    // A late answer to a proof of a generation the member has since left
    // must neither fence nor extend the current one.
    let mut l = elected();
    l.member.handle_membership(ms(10), 7, ms(10), false);
    l.drain(ms(10));
    assert!(l.take_events().is_empty());
    assert!(l.member.is_leader(0, ms(10)));
    assert_eq!(l.member.counters().membership_rejected, 0);
}

#[test]
fn a_proof_that_ends_at_this_very_instant_grants_no_lease() {
    // The proof sent at 250 ms is answered at 1250 ms, the instant it ends:
    // the evidence is fresh, but a lease of length zero is no lease.
    let mut l = waiting_candidate(0);
    l.coordinator_reachable = false;
    let mut now = 5;
    while now < 1250 {
        l.tick(ms(now));
        l.read_back(ms(now));
        now += 5;
    }
    assert!(l.take_events().is_empty(), "no proof answered yet");
    l.member.handle_membership(ms(1250), 1, ms(250), true);
    l.drain(ms(1250));
    assert!(l.take_events().is_empty(), "no Acquired for a lease that ends as it starts");
    assert!(!l.member.is_leader(0, ms(1250)));
}

#[test]
fn each_fence_reports_its_own_cause() {
    let mut l = elected();
    l.member.handle_lost(ms(10), &[0]);
    let first = l.member.poll_output_with_cause();
    assert_eq!(first, Some((Output::Event(Event::Fenced { role: 0 }), Some(FenceCause::AssignmentLost))));
    l.drain(ms(10));
    l.assign(ms(20), 2, &[0]);
    l.read_back(ms(25));
    assert!(matches!(l.take_events()[..], [Event::Acquired { .. }]));
    l.log.clear();
    l.member.handle_timeout(ms(1020));
    let mut outputs = Vec::new();
    while let Some(o) = l.member.poll_output_with_cause() {
        outputs.push(o);
    }
    let fences: Vec<_> = outputs.into_iter().filter(|(o, _)| matches!(o, Output::Event(_))).collect();
    assert_eq!(fences, vec![(Output::Event(Event::Fenced { role: 0 }), Some(FenceCause::LeaseExpired))]);
}

#[test]
fn ignored_records_and_rejections_are_counted_by_reason() {
    let mut cfg = CoreConfig::exclusive("me", dur(1000));
    cfg.roles = 2;
    cfg.partitions = 2;
    let mut l = Loop::with(cfg);
    l.assign(ms(0), 1, &[0]);
    l.read_back(ms(5));
    let own = |role, term| Heartbeat { role, term, seq: 99, sent_at: ms(5), lease: None, name: "me".into() };
    // Role 1 lives on partition 1: on partition 0 it is misplaced, and a
    // role the election does not have is misplaced anywhere.
    for (partition, hb) in [(0, own(1, 1)), (1, own(5, 1)), (1, own(1, 1)), (0, own(0, 9))] {
        let r = l.foreign(partition, hb.encode());
        l.member.handle_record(ms(10), &r);
    }
    l.member.handle_membership(ms(20), 1, ms(20), false);
    l.drain(ms(20));
    let c = l.member.counters();
    assert_eq!(
        (c.heartbeats_sent, c.own_heartbeats, c.misplaced, c.while_unassigned, c.stale_term, c.membership_rejected),
        (1, 2, 2, 1, 1, 1),
        "{c:?}"
    );
}
