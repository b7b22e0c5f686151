//! The rdkafka backend against librdkafka's mock cluster, in process.
//! Crashes and pauses need child processes: see `kafka_tansu`.

use std::time::{Duration, Instant};

use neli::Event;
use neli::Time;
use neli::core::Heartbeat;
use rdkafka::types::RDKafkaRespErr;

use crate::support::{budget, history, leaders, mock_election, mock_election_with, retry, wait_for};

const T: Duration = Duration::from_secs(1);
const S: Duration = Duration::from_secs(3);
/// A session long enough to tell a handover from a session expiry, and to
/// leave a resign's hold-off slack on a loaded machine.
const LONG_S: Duration = Duration::from_secs(6);

/// Back to one leader after a fault healed: the faulty sessions expire (S,
/// checked every 1 s by the mock), every member rejoins in one rebalance
/// (held S - 1 s) after a retry, and the new leader needs fresh evidence (T).
fn recovery() -> Duration {
    budget(S + Duration::from_secs(1) + S + retry(S) + T)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_members_elect_exactly_one_leader() {
    let (_mock, members, _) = mock_election(3, T, S).await;
    // Sampled for 3 leases: the election is stable and never shows two leaders.
    let start = Instant::now();
    while start.elapsed() < 3 * T {
        assert_eq!(leaders(&members).len(), 1, "exactly one leader at every sample:{}", history(&members, start));
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn closing_the_leader_hands_over_fast() {
    let (_mock, mut members, _) = mock_election(3, T, S).await;
    let old = leaders(&members)[0];
    let old_token = members[old].bg.as_ref().unwrap().token().unwrap();
    let closed_at = Instant::now();
    let outcome = members[old].bg.take().unwrap().close().await;
    assert_eq!(outcome, Ok(neli::Outcome::Closed));
    // Close leaves the group: the next leader needs one rebalance (held
    // S - 1 s by the mock) and fresh evidence, not a session timeout. How
    // fast that is, is measured by `examples/failover_bench` (BENCHMARKS.md),
    // not asserted here.
    let limit = budget(S + retry(S) + T);
    assert!(wait_for(limit, || leaders(&members).len() == 1).await, "someone takes over within {limit:?}");
    eprintln!("graceful handover took {:?}", closed_at.elapsed());
    let new = leaders(&members)[0];
    assert_ne!(new, old);
    assert!(members[new].bg.as_ref().unwrap().token().unwrap() > old_token, "fencing tokens increase");
}

/// Dropping the leader's `Background` closes the election as
/// `close()` does (Revoked, then the client leaves the group), so the
/// other member takes over after one rebalance, not after the dropped
/// leader's session expired. S is long enough to tell the two apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dropping_the_leaders_background_hands_over_without_a_session_timeout() {
    let (_mock, mut members, _) = mock_election(2, T, LONG_S).await;
    let old = leaders(&members)[0];
    let dropped_at = Instant::now();
    drop(members[old].bg.take());
    // The leave starts a rebalance (held S - 1 s by the mock), a retry,
    // then fresh evidence (T): the bound of `closing_the_leader_hands_over_fast`.
    let limit = budget(LONG_S + retry(LONG_S) + T);
    assert!(
        wait_for(limit, || leaders(&members).len() == 1).await,
        "the other member leads within {limit:?}:{}",
        history(&members, dropped_at)
    );
    let took = dropped_at.elapsed();
    // Had the dropped leader stayed in the group, its session would have
    // had to expire first (S), then the same rebalance (S - 1 s) and T.
    let after_expiry = LONG_S + (LONG_S - Duration::from_secs(1)) + T;
    eprintln!(
        "handover after dropping the leader's Background: {took:?} (S {LONG_S:?}; a session expiry needs {after_expiry:?})"
    );
    assert!(took < after_expiry, "took {took:?}: as long as a session expiry ({after_expiry:?})");
    assert!(members[old].saw_after(dropped_at, |e| matches!(e, Event::Revoked { .. })).is_some(), "orderly Revoked");
}

/// A resigned leader stays out of the group for its hold-off
/// (`neli::rules::resign_hold_off`, 2 S + T) and may be elected again after
/// it. A handover needs one rebalance (held S - 1 s by the mock), a retry
/// (S / 2) and fresh evidence (T), about 5 s at S = 6 s; the mock sometimes
/// runs a second rebalance (10 s), which the hold-off of 13 s still covers
/// (at S = 3 s a loaded run needed more than the 7 s hold-off and the
/// resigned member came back). On a loaded machine the wait is the budget
/// of that hold-off, and what the resigned member must not do is lead again
/// before its hold-off ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resigning_leader_hands_over_and_stays_out() {
    let (_mock, members, _) = mock_election(3, T, LONG_S).await;
    let old = leaders(&members)[0];
    let resigned_at = Instant::now();
    members[old].bg.as_ref().unwrap().resign();
    let hold_off = neli::rules::resign_hold_off(LONG_S, T);
    let limit = budget(hold_off);
    assert!(
        wait_for(limit, || leaders(&members).iter().any(|i| *i != old)).await,
        "another member leads within {limit:?} (the resigned member's hold-off {hold_off:?}, S {LONG_S:?}, T {T:?}):{}",
        history(&members, resigned_at)
    );
    eprintln!("resign handover took {:?} (hold-off {hold_off:?})", resigned_at.elapsed());
    // Orderly, not a failover: the resigned member was told Revoked, never Fenced.
    assert!(members[old].saw_after(resigned_at, |e| matches!(e, Event::Revoked { .. })).is_some(), "orderly Revoked");
    assert!(members[old].saw_after(resigned_at, |e| matches!(e, Event::Fenced { .. })).is_none(), "not fenced");
    assert_eq!(leaders(&members).len(), 1, "the resigned member does not lead too");
    if let Some(again) = members[old].saw_after(resigned_at, |e| matches!(e, Event::Acquired { .. })) {
        assert!(
            again >= resigned_at + hold_off,
            "the resigned member led again {:?} after resigning, inside its hold-off of {hold_off:?}:{}",
            again - resigned_at,
            history(&members, resigned_at)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn foreign_records_change_nothing() {
    let (mock, members, topic) = mock_election(3, T, S).await;
    let leader = leaders(&members)[0];
    let token = members[leader].bg.as_ref().unwrap().token();
    let since = Instant::now();
    // Garbage, and a well-formed heartbeat from a stranger claiming role 0.
    let stranger = Heartbeat {
        role: 0,
        term: 1_000_000,
        seq: 1,
        sent_at: Time::from_millis(u64::MAX / 2),
        lease: Some(neli::Token(u64::MAX)),
        name: "stranger".into(),
    };
    for _ in 0..20 {
        mock.write(&topic, 0, b"\x00garbage\xff").unwrap();
        mock.write(&topic, 0, &stranger.encode()).unwrap();
    }
    tokio::time::sleep(2 * T).await;
    // Own evidence only: the leader, its token and the followers are untouched.
    assert_eq!(leaders(&members), vec![leader]);
    assert_eq!(members[leader].bg.as_ref().unwrap().token(), token);
    for m in &members {
        assert!(m.saw_after(since, |_| true).is_none(), "{} saw no transition:{}", m.name, history(&members, since));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn broker_down_fences_the_leader_within_the_lease_and_it_recovers() {
    let (mock, members, _) = mock_election(3, T, S).await;
    let leader = leaders(&members)[0];
    let down_at = Instant::now();
    mock.broker_down(1);
    // The lease is counted from heartbeats sent before the outage: it lapses
    // within T. `is_leader` compares the lease end with the clock, so a check
    // made late (a loaded machine) is as exact as one made on time.
    tokio::time::sleep_until((down_at + T + Duration::from_millis(300)).into()).await;
    assert!(leaders(&members).is_empty(), "fenced within T:{}", history(&members, down_at));
    assert!(
        wait_for(budget(T), || members[leader].saw_after(down_at, |e| matches!(e, Event::Fenced { .. })).is_some())
            .await
    );
    mock.broker_up(1);
    assert!(wait_for(recovery(), || leaders(&members).len() == 1).await, "a leader again after recovery");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rejected_membership_fences_the_leader_and_it_recovers() {
    let (mock, members, _) = mock_election(3, T, S).await;
    let leader = leaders(&members)[0];
    let since = Instant::now();
    // The coordinator stops counting the leader: heartbeats and membership
    // commits answer ILLEGAL_GENERATION.
    mock.fail_heartbeats(50, RDKafkaRespErr::RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION);
    mock.fail_commits(50, RDKafkaRespErr::RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION);
    let fenced = wait_for(budget(T), || {
        members[leader].saw_after(since, |e| matches!(e, Event::Fenced { .. } | Event::Revoked { .. })).is_some()
    })
    .await;
    assert!(fenced, "the leader stops within the heartbeat timeout");
    mock.clear_errors();
    assert!(wait_for(recovery(), || leaders(&members).len() == 1).await, "a leader again after recovery");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleted_topic_ends_the_election_for_every_member() {
    let (mock, mut members, topic) = mock_election(3, T, S).await;
    // What `neli end` does: marker first, then the deletion (by hand here:
    // the mock has neither CreateTopics nor DeleteTopics).
    mock.create_topic(&neli::kafka::end_marker_topic(&topic), 1).expect("marker");
    mock.hide_topic(&topic);
    // Leader and followers alike stop with the distinct, non-error outcome.
    for m in &mut members {
        let bg = m.bg.take().unwrap();
        // The topic watcher looks every second and needs two looks.
        let limit = budget(Duration::from_secs(3));
        let outcome = tokio::time::timeout(limit, bg).await.unwrap_or_else(|_| panic!("members stop within {limit:?}"));
        assert_eq!(outcome, Ok(neli::Outcome::ElectionEnded), "{}", m.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_topic_lost_without_an_end_marker_does_not_end_the_election() {
    // A broker restart with memory storage loses the topic too; that must
    // not look like `neli end` (the member tries to recreate it instead).
    let (mock, mut members, topic) = mock_election(3, T, S).await;
    mock.hide_topic(&topic);
    // Every member says the log (and with it the token sequence) restarted;
    // the watcher looks every second and needs two looks.
    let limit = budget(Duration::from_secs(3));
    let epochs = || -> Vec<u64> {
        members.iter().map(|m| m.bg.as_ref().unwrap().control().status().borrow().log_epoch).collect()
    };
    assert!(
        wait_for(limit, || epochs() == vec![1, 1, 1]).await,
        "log_epoch 1 everywhere within {limit:?}: {:?}",
        epochs()
    );
    let bg = members[0].bg.take().unwrap();
    let waited = tokio::time::timeout(Duration::from_secs(5), bg).await;
    assert!(waited.is_err(), "member stopped although nobody ended the election: {:?}", waited.ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn round_trips_longer_than_the_lease_leave_no_leader_until_they_heal() {
    let (mock, members, _) = mock_election(3, T, S).await;
    // Every request now takes longer than T: a heartbeat is stale by the
    // time it is read back, so it can never extend a lease.
    mock.round_trip_time(1, T + Duration::from_millis(500));
    assert!(wait_for(budget(2 * T), || leaders(&members).is_empty()).await, "slow round trips fence the leader");
    mock.round_trip_time(1, Duration::ZERO);
    assert!(wait_for(recovery(), || leaders(&members).len() == 1).await, "a leader again once healed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leader_cut_off_from_the_coordinator_only_is_fenced_within_the_lease() {
    // Hazard 3 (docs/background.md, Hazards): the partition leader (broker 1) stays reachable,
    // the group coordinator (broker 2) does not. The leader still reads its
    // own heartbeats back, but cannot prove membership any more. (With
    // `membership_proof(false)` this test fails: the lease is renewed forever.)
    let (mock, members, _) = mock_election_with(3, 3, T, S, |mock, group, topic| {
        mock.partition_leader(topic, 0, 1);
        mock.coordinator(group, 2);
    })
    .await;
    let down_at = Instant::now();
    mock.broker_down(2);
    // Exact whenever it runs: `is_leader` compares the lease end with the clock.
    tokio::time::sleep_until((down_at + T + Duration::from_millis(500)).into()).await;
    assert!(
        leaders(&members).is_empty(),
        "fenced within T although its heartbeats still come back:{}",
        history(&members, down_at)
    );
    mock.broker_up(2);
    assert!(wait_for(recovery(), || leaders(&members).len() == 1).await, "a leader again after recovery");
}
