//! The observer (`neli::observer`) on the in-memory fake cluster: it reports
//! the leader and token the members' own status shows, without joining the
//! group. Time is tokio's paused clock, so waits take no real time; every
//! wait's limit comes from the configuration and says what it waited for.

use std::time::Duration;

use futures::{FutureExt, StreamExt};
use neli::core::Heartbeat;
use neli::observer::{Counters, EndReason, Observer, Update};
use neli::testing::FakeCluster;
use neli::{Background, Config, Explanation, Neli, Outcome, SystemClock};
use neli::{Time, Token};
use tokio::time::Instant;
use tokio_stream::wrappers::UnboundedReceiverStream;

const T: Duration = Duration::from_secs(1);

fn config(name: &str) -> Config {
    Config::builder()
        .group("observed")
        .name(name)
        .heartbeat_timeout(T)
        .close_timeout(Duration::from_secs(2))
        .build()
        .expect("valid test config")
}

fn bounds() -> Explanation {
    config("any").explain().expect("valid test config")
}

/// A member leads on the fake within T: its first heartbeat comes back at
/// once, the proof is accepted at once, and fresh own evidence is what it
/// waits for.
fn first_lead() -> Duration {
    bounds().heartbeat_timeout
}

/// The observer reports a lease once a heartbeat claims it: the first one
/// the member sends after it acquired, within one heartbeat interval, read
/// within the driver's poll after that (another interval at most).
fn seen() -> Duration {
    bounds().heartbeat_interval * 2
}

async fn member(cluster: &FakeCluster, name: &str) -> Background {
    let clock = SystemClock::new();
    Neli::new(&config(name), cluster.broker(name, clock.clone()), clock).await.expect("member starts").background()
}

fn observer(cluster: &FakeCluster) -> Observer {
    let clock = SystemClock::new();
    Observer::new(&config("observer"), cluster.reader(clock.clone()), clock).expect("observer starts")
}

/// Waits (tokio's paused time) until `f` answers, at most `limit`; the
/// panic says what was waited for and what `state` showed last.
async fn within<V>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<V>, state: impl Fn() -> String) -> V {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}; last seen: {}", state());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// (name, token, log epoch) of the one member whose own status shows a
/// live lease of role 0; `None` unless exactly one does.
fn leading(members: &[(&str, &Background)]) -> Option<(String, Token, u64)> {
    let live: Vec<(String, Token, u64)> = members
        .iter()
        .filter_map(|(name, bg)| {
            let token = bg.token()?;
            let status = bg.status().borrow().clone();
            // `token()` reads the status the driver published: the same lease.
            assert_eq!(status.leading.get(&0).map(|l| l.token), Some(token), "{name}'s status and token agree");
            Some((name.to_string(), token, status.log_epoch))
        })
        .collect();
    match live.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// What the observer reports for role 0, as (name, token, log epoch).
fn observed(o: &Observer) -> Option<(String, Token, u64)> {
    o.leader(0).map(|v| (v.member, v.token, v.log_epoch))
}

/// The updates received so far, without waiting.
fn drain(updates: &mut UnboundedReceiverStream<Update>) -> Vec<Update> {
    let mut out = Vec::new();
    while let Some(Some(u)) = updates.next().now_or_never() {
        out.push(u);
    }
    out
}

#[tokio::test(start_paused = true)]
async fn the_observer_reports_the_members_leader_and_token_after_an_election_and_after_a_handover() {
    let cluster = FakeCluster::new(1);
    let obs = observer(&cluster);
    let mut updates = obs.updates();
    let a = member(&cluster, "a").await;
    let b = member(&cluster, "b").await;
    let members = || [("a", &a), ("b", &b)];
    let status = || format!("status {:?}, observer {:?}", leading(&members()), obs.current());

    let first = within(first_lead(), "one member leading by its own status", || leading(&members()), status).await;
    let reported =
        within(seen(), "the observer to report the status' leader", || observed(&obs).filter(|o| *o == first), status)
            .await;
    assert_eq!(reported, first);
    let view = obs.leader(0).expect("reported");
    assert_eq!(view.lease_end, view.sent_at + T, "the claim is the heartbeat's send time + T, on the member's clock");
    assert!(
        matches!(drain(&mut updates).as_slice(), [Update::Acquired(v)] if (v.member.as_str(), v.token) == (first.0.as_str(), first.1))
    );

    // Handover: the leader closes (Revoked, leave); the other member leads
    // within the graceful handover time.
    let (old, other) = if first.0 == "a" { (a, b) } else { (b, a) };
    let other_name = if first.0 == "a" { "b" } else { "a" };
    assert_eq!(old.close().await, Ok(Outcome::Closed));
    let members = || [(other_name, &other)];
    let status = || format!("status {:?}, observer {:?}", leading(&members()), obs.current());
    let limit = bounds().handover;
    let second = within(limit, "the other member leading by its own status", || leading(&members()), status).await;
    assert!(second.1 > first.1, "tokens increase: {second:?} after {first:?}");
    let reported =
        within(seen(), "the observer to report the new leader", || observed(&obs).filter(|o| *o == second), status)
            .await;
    assert_eq!(reported, second);
    let kinds: Vec<String> = drain(&mut updates)
        .iter()
        .map(|u| match u {
            Update::Acquired(v) => format!("acquired {} {}", v.member, v.token),
            Update::Ended { view, .. } => format!("ended {} {}", view.member, view.token),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [format!("ended {} {}", first.0, first.1), format!("acquired {} {}", second.0, second.1)],
        "the old claim ends, then the new one starts"
    );
    assert_eq!(obs.counters().undecodable + obs.counters().misplaced, 0);
    other.close().await.expect("close");
    assert_eq!(obs.close().await, Ok(Outcome::Closed));
}

fn claim(name: &str, token: u64, sent_ms: u64) -> Vec<u8> {
    Heartbeat {
        role: 0,
        term: 1,
        seq: sent_ms,
        sent_at: Time::from_millis(sent_ms),
        lease: Some(Token(token)),
        name: name.into(),
    }
    .encode()
}

#[tokio::test(start_paused = true)]
async fn a_claim_nothing_renews_ends_t_after_it_was_read_and_foreign_records_are_counted_not_reported() {
    let cluster = FakeCluster::new(2);
    let obs = observer(&cluster);
    let mut updates = obs.updates();
    within(seen(), "the observer reading the topic", || obs.partitions(), || format!("{obs:?}")).await;
    cluster.write(0, b"not a heartbeat".to_vec());
    // Role 0 belongs on partition 0 of 2.
    cluster.write(1, claim("elsewhere", 1, 0));
    cluster.write(0, claim("ghost", 40, 123_456));
    let read_at = Instant::now();
    let Some(Update::Acquired(view)) = updates.next().await else { panic!("the ghost's claim is reported") };
    assert_eq!((view.member.as_str(), view.token, view.lease_end), ("ghost", Token(40), Time::from_millis(124_456)));
    assert_eq!(obs.counters(), Counters { heartbeats: 1, undecodable: 1, misplaced: 1 });
    let Some(Update::Ended { view, reason }) = updates.next().await else { panic!("the ghost's claim ends") };
    assert_eq!((view.member.as_str(), reason), ("ghost", EndReason::Silent));
    let after = read_at.elapsed();
    assert!(after >= T && after < T + Duration::from_millis(20), "ended {after:?} after it was read, T = {T:?}");
    assert!(obs.current().is_empty());
}

#[tokio::test(start_paused = true)]
async fn after_a_lost_log_the_observer_and_the_members_agree_on_log_epoch_and_token() {
    let cluster = FakeCluster::new(1);
    // Offsets well above what the new log will reach, so that restarted
    // tokens show.
    for _ in 0..50 {
        cluster.write(0, b"padding".to_vec());
    }
    let obs = observer(&cluster);
    let a = member(&cluster, "a").await;
    let b = member(&cluster, "b").await;
    let members = || [("a", &a), ("b", &b)];
    let status = || format!("status {:?}, observer {:?}", leading(&members()), obs.current());
    let first = within(first_lead(), "a leading by its own status", || leading(&members()), status).await;
    assert_eq!(first.0, "a", "partition 0 goes to the first name");
    within(seen(), "the observer to report a's lease", || observed(&obs).filter(|o| *o == first), status).await;
    cluster.lose_log();
    // The leader goes on with its term's token, in log epoch 1.
    let after = within(seen(), "a's status in log epoch 1", || leading(&members()).filter(|l| l.2 == 1), status).await;
    assert_eq!(after.1, first.1, "the term's token stays");
    within(seen(), "the observer in log epoch 1, agreeing", || observed(&obs).filter(|o| *o == after), status).await;
    assert_eq!(obs.log_epoch(), 1);
    // A new term in the new log: its token restarted (lower); the log
    // epoch is what orders it after the old one.
    a.resign();
    let limit = bounds().handover;
    let next =
        within(limit, "b leading by its own status", || leading(&members()).filter(|l| l.0 == "b"), status).await;
    assert!(next.1 < first.1 && next.2 == 1, "tokens restarted with the log: {next:?} after {first:?}");
    within(seen(), "the observer to report b's lease", || observed(&obs).filter(|o| *o == next), status).await;
    a.close().await.expect("close");
    b.close().await.expect("close");
}

#[tokio::test(start_paused = true)]
async fn an_ended_election_ends_the_observer_and_dropping_it_closes_its_reader() {
    let cluster = FakeCluster::new(1);
    let obs = observer(&cluster);
    let mut updates = obs.updates();
    let a = member(&cluster, "a").await;
    let status = || format!("observer {:?}", obs.current());
    within(first_lead() + seen(), "the observer to report a leader", || obs.leader(0), status).await;
    cluster.end_election();
    let rest: Vec<Update> = updates.by_ref().collect().await;
    assert!(matches!(rest.as_slice(), [Update::Acquired(_), Update::ElectionEnded]), "{rest:?}");
    assert_eq!(obs.end(), Some(Ok(Outcome::ElectionEnded)));
    assert!(obs.current().is_empty(), "nobody leads an ended election");
    assert_eq!(a.await, Ok(Outcome::ElectionEnded));
    assert!(cluster.calls().contains(&"reader 0 closed".to_string()), "{:?}", cluster.calls());

    let dropped = observer(&cluster);
    drop(dropped);
    within(
        seen(),
        "the dropped observer's reader to be closed",
        || cluster.calls().contains(&"reader 1 closed".to_string()).then_some(()),
        || format!("{:?}", cluster.calls()),
    )
    .await;
}
