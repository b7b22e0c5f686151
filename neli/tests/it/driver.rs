//! The async driver on the in-memory fake broker. Time is tokio's paused
//! clock (auto-advancing) or a manual clock, so no test waits for real time.

use std::sync::Arc;
use std::time::Duration;

use neli::testing::FakeCluster;
use neli::{BrokerError, Clock, Config, Error, Event, ManualClock, Neli, Outcome, Pulse, State, SystemClock};
use tokio::sync::Notify;
use tokio_stream::StreamExt;

pub(crate) type FakeNeli = Neli<neli::testing::FakeBroker<SystemClock>, SystemClock>;

pub(crate) fn config(name: &str) -> Config {
    Config::builder()
        .group("g")
        .name(name)
        .heartbeat_timeout(Duration::from_millis(1000))
        .close_timeout(Duration::from_secs(2))
        .build()
        .expect("valid test config")
}

pub(crate) async fn member(cluster: &FakeCluster, name: &str) -> FakeNeli {
    let clock = SystemClock::new();
    Neli::new(&config(name), cluster.broker(name, clock.clone()), clock).await.expect("member starts")
}

const P: Duration = Duration::from_millis(50);

/// Pulses every member `rounds` times, round robin.
async fn pulse_all(members: &mut [&mut FakeNeli], rounds: usize) {
    for _ in 0..rounds {
        for m in members.iter_mut() {
            let _ = m.pulse(P).await.expect("pulse");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_lone_member_leads_with_a_token() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    let status = a.control().status();
    pulse_all(&mut [&mut a], 2).await;
    assert!(a.is_leader());
    assert!(a.token().is_some());
    assert_eq!(status.borrow().leading.get(&0).map(|l| l.token), a.token());
}

#[tokio::test(start_paused = true)]
async fn three_members_elect_exactly_one_leader() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut b, mut c) = (member(&cluster, "a").await, member(&cluster, "b").await, member(&cluster, "c").await);
    pulse_all(&mut [&mut a, &mut b, &mut c], 4).await;
    let leaders: Vec<bool> = [&a, &b, &c].iter().map(|m| m.is_leader()).collect();
    assert_eq!(leaders, vec![true, false, false], "partition 0 went to 'a' and only 'a' leads");
}

#[tokio::test(start_paused = true)]
async fn closing_the_leader_hands_over_with_a_larger_token() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut b) = (member(&cluster, "a").await, member(&cluster, "b").await);
    pulse_all(&mut [&mut a, &mut b], 3).await;
    let first = a.token().expect("a leads");
    let mut events = a.control().events();
    a.close().await.expect("clean close");
    assert_eq!(a.state(), State::Closed);
    assert_eq!(events.next().await, Some(Event::Revoked { role: 0 }));
    pulse_all(&mut [&mut b], 3).await;
    assert!(b.is_leader());
    assert!(b.token().expect("b leads") > first);
}

#[tokio::test(start_paused = true)]
async fn a_revoked_handler_holds_the_handover_until_it_returns() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    let release = Arc::new(Notify::new());
    let r = release.clone();
    a.on_event(move |event, _| {
        let r = r.clone();
        async move {
            if matches!(event, Event::Revoked { .. }) {
                r.notified().await;
            }
        }
    });
    let a = a.background();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(a.is_leader());
    // "0z" sorts first, so the rebalance moves partition 0 away from "a".
    let _z = member(&cluster, "0z").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let acked = |c: &FakeCluster| c.calls().iter().any(|l| l == "a ack_revoked [0]");
    assert!(!acked(&cluster), "partition released before the Revoked handler finished");
    release.notify_one();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(acked(&cluster));
    a.close().await.expect("close");
}

#[tokio::test(start_paused = true)]
async fn a_blocking_fenced_handler_does_not_stall_the_loop() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    a.on_event(|event, _| async move {
        if matches!(event, Event::Fenced { .. }) {
            std::future::pending::<()>().await;
        }
    });
    pulse_all(&mut [&mut a], 2).await;
    assert!(a.is_leader());
    cluster.evict("a");
    // Each pulse still completes although the Fenced handler never returns.
    let pulses = tokio::time::timeout(Duration::from_secs(5), async {
        for _ in 0..5 {
            let _ = a.pulse(P).await.expect("pulse");
        }
    });
    assert!(pulses.await.is_ok());
    assert!(!a.is_leader());
}

#[tokio::test(start_paused = true)]
async fn retriable_errors_are_survived_and_fatal_errors_stick() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    cluster.fail_next("a", BrokerError::retriable("request timed out"));
    assert!(a.pulse(P).await.is_ok());
    cluster.fail_next("a", BrokerError::fatal("SASL authentication failed"));
    let first = a.pulse(P).await.unwrap_err();
    assert_eq!(first, Error::Broker(BrokerError::fatal("SASL authentication failed")));
    assert_eq!(a.pulse(P).await.unwrap_err(), first, "fatal errors are sticky");
    assert_eq!(a.resign().await.unwrap_err(), first, "every call returns it");
    assert_eq!(a.control().end(), Some(Err(first)));
}

// A pulsed election that is ended says so as an outcome, not an error, on
// that pulse and every later one; `close()` afterwards does not change why
// it finished.
#[tokio::test(start_paused = true)]
async fn pulse_reports_an_ended_election_as_its_outcome() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    pulse_all(&mut [&mut a], 2).await;
    assert!(a.is_leader());
    cluster.end_election();
    assert_eq!(a.pulse(P).await, Ok(Pulse::Finished(Outcome::ElectionEnded)));
    assert!(!a.is_leader() && a.token().is_none());
    assert_eq!(a.close().await, Ok(()));
    assert_eq!(a.pulse(P).await, Ok(Pulse::Finished(Outcome::ElectionEnded)));
    assert_eq!(a.control().end(), Some(Ok(Outcome::ElectionEnded)));
}

#[tokio::test(start_paused = true)]
async fn background_reports_the_first_fatal_error() {
    let cluster = FakeCluster::new(1);
    let a = member(&cluster, "a").await.background();
    cluster.fail_next("a", BrokerError::fatal("topic authorization failed"));
    let control = a.control();
    let outcome = a.await;
    assert_eq!(outcome, Err(Error::Broker(BrokerError::fatal("topic authorization failed"))));
    assert_eq!(control.error(), Some(Error::Broker(BrokerError::fatal("topic authorization failed"))));
    assert_eq!(control.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn close_is_bounded_when_the_broker_hangs() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    pulse_all(&mut [&mut a], 2).await;
    cluster.hang_close("a");
    let started = tokio::time::Instant::now();
    assert_eq!(a.close().await, Err(Error::CloseTimedOut(Duration::from_secs(2))));
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert_eq!(a.state(), State::Closed);
    assert_eq!(a.pulse(P).await, Ok(Pulse::Finished(Outcome::Closed)));
    assert_eq!(a.resign().await, Err(Error::Finished(Outcome::Closed)));
}

#[tokio::test(start_paused = true)]
async fn state_goes_live_closing_closed() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    let mut status = a.control().status();
    assert_eq!(a.state(), State::Live);
    a.close().await.expect("close");
    let mut seen = vec![];
    while status.has_changed().unwrap_or(false) {
        seen.push(status.borrow_and_update().state);
    }
    assert_eq!(seen.last(), Some(&State::Closed));
    assert_eq!(a.close().await, Ok(()), "closing twice is fine");
}

#[tokio::test(start_paused = true)]
async fn a_handler_that_calls_close_does_not_deadlock() {
    // goNELI deadlocks when its barrier calls Close().
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    a.on_event(|event, control| async move {
        if matches!(event, Event::Acquired { .. }) {
            control.close();
        }
    });
    let outcome = tokio::time::timeout(Duration::from_secs(10), a.background()).await;
    assert_eq!(outcome.expect("loop ended"), Ok(Outcome::Closed));
}

#[tokio::test(start_paused = true)]
async fn ending_the_election_stops_every_member() {
    let cluster = FakeCluster::new(1);
    let a = member(&cluster, "a").await.background();
    let b = member(&cluster, "b").await.background();
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.end_election();
    assert_eq!(a.await, Ok(Outcome::ElectionEnded));
    assert_eq!(b.await, Ok(Outcome::ElectionEnded));
}

#[tokio::test(start_paused = true)]
async fn resign_lets_another_member_take_over() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut b) = (member(&cluster, "a").await, member(&cluster, "b").await);
    pulse_all(&mut [&mut a, &mut b], 3).await;
    assert!(a.is_leader());
    a.resign().await.expect("resign");
    assert!(!a.is_leader());
    pulse_all(&mut [&mut a, &mut b], 3).await;
    assert!(b.is_leader() && !a.is_leader());
    assert_eq!(cluster.owner(0).as_deref(), Some("b"));
}

#[tokio::test]
async fn leadership_lapses_on_the_clock_alone() {
    // A stalled loop: nothing is polled after the lease is granted.
    let cluster = FakeCluster::new(1);
    let clock = ManualClock::default();
    let mut a = Neli::new(&config("a"), cluster.broker("a", clock.clone()), clock.clone()).await.expect("start");
    let _ = a.pulse(P).await.expect("pulse"); // assigned, heartbeat written
    let _ = a.pulse(P).await.expect("pulse"); // heartbeat read back
    assert!(a.is_leader());
    let control = a.control();
    clock.advance(Duration::from_millis(999));
    assert!(a.is_leader() && control.is_leader());
    clock.advance(Duration::from_millis(1));
    assert!(!a.is_leader() && !control.is_leader());
}

#[tokio::test(start_paused = true)]
async fn events_stream_sees_every_transition_in_order() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    let mut events = a.control().events();
    pulse_all(&mut [&mut a], 2).await;
    cluster.evict("a");
    pulse_all(&mut [&mut a], 1).await;
    let first = events.next().await;
    assert!(matches!(first, Some(Event::Acquired { role: 0, .. })), "{first:?}");
    assert_eq!(events.next().await, Some(Event::Fenced { role: 0 }));
}

#[tokio::test(start_paused = true)]
async fn invalid_config_is_refused_before_touching_the_broker() {
    let cluster = FakeCluster::new(1);
    let clock = SystemClock::new();
    let mut bad = config("a");
    bad.heartbeat_timeout = Duration::from_secs(20);
    bad.kafka_config.insert("session.timeout.ms".into(), "3000".into());
    let err = Neli::new(&bad, cluster.broker("a", clock.clone()), clock.clone()).await.err().expect("refused");
    assert!(err.to_string().contains("must be below session.timeout.ms"), "{err}");
    assert!(cluster.calls().is_empty());
    let _ = clock.now();
}

// Closing is best effort against a broker that hiccups: a retriable error
// while leaving is not the application's problem, a fatal one is reported.
#[tokio::test(start_paused = true)]
async fn close_survives_a_retriable_broker_error_and_reports_a_fatal_one() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    pulse_all(&mut [&mut a], 2).await;
    cluster.fail_next("a", BrokerError::retriable("leave timed out"));
    assert_eq!(a.close().await, Ok(()));
    assert_eq!(a.state(), State::Closed);
    let mut b = member(&cluster, "b").await;
    pulse_all(&mut [&mut b], 2).await;
    cluster.fail_next("b", BrokerError::fatal("group authorization failed"));
    assert_eq!(b.close().await, Err(Error::Broker(BrokerError::fatal("group authorization failed"))));
    assert_eq!(b.state(), State::Closed);
}

/// A clock that panics once armed: a bug inside the election task itself
/// (a `Broker` or `Clock` implementation's), not in a handler, which runs
/// on a task of its own.
#[derive(Clone)]
struct ArmedClock {
    inner: SystemClock,
    armed: Arc<std::sync::atomic::AtomicBool>,
}

impl Clock for ArmedClock {
    fn now(&self) -> neli::Time {
        if self.armed.load(std::sync::atomic::Ordering::SeqCst) {
            std::panic::panic_any("clock bug");
        }
        self.inner.now()
    }
    fn sleep(&self, duration: Duration) -> impl std::future::Future<Output = ()> + Send {
        self.inner.sleep(duration)
    }
}

/// A panic inside the election task is the application's bug: awaiting or
/// closing the `Background` handle resumes it instead of reporting an
/// ordinary close.
#[tokio::test(start_paused = true)]
async fn a_panic_in_the_background_task_reaches_whoever_awaits_it() {
    use futures::FutureExt;
    let cluster = FakeCluster::new(1);
    let armed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clock = ArmedClock { inner: SystemClock::new(), armed: armed.clone() };
    let a = Neli::new(&config("a"), cluster.broker("a", clock.clone()), clock).await.expect("member starts");
    let a = a.background();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(a.is_leader());
    armed.store(true, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let closed = std::panic::AssertUnwindSafe(a.close()).catch_unwind().await;
    let payload = closed.expect_err("closing the handle must resume the task's panic");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"clock bug"));
}

/// The session timeout of the handover tests: long, so that a handover
/// that waited for the old leader's session to expire is told apart from a
/// graceful one by a wide margin.
const LONG_S: Duration = Duration::from_secs(30);

fn long_session_config(name: &str) -> Config {
    Config::builder()
        .group("g")
        .name(name)
        .heartbeat_timeout(Duration::from_millis(1000))
        .session_timeout(LONG_S)
        .close_timeout(Duration::from_secs(2))
        .build()
        .expect("valid test config")
}

async fn long_session_member(cluster: &FakeCluster, name: &str) -> FakeNeli {
    let clock = SystemClock::new();
    Neli::new(&long_session_config(name), cluster.broker(name, clock.clone()), clock).await.expect("member starts")
}

/// A cluster that expires a member's session after `LONG_S` without a
/// broker call, as a coordinator does.
/// `a` pulsed until it leads, `b` beside it in the background.
async fn a_leads_beside_b(cluster: &FakeCluster) -> (FakeNeli, neli::Background) {
    let mut a = long_session_member(cluster, "a").await;
    let b = long_session_member(cluster, "b").await.background();
    for _ in 0..10 {
        let _ = a.pulse(P).await.expect("pulse");
    }
    assert!(a.is_leader(), "a leads");
    (a, b)
}

fn expiring_cluster() -> FakeCluster {
    FakeCluster::new(1).session_timeout(LONG_S)
}

/// The graceful handover time of `long_session_config`, from the
/// configuration: the loop sees the drop or the cancellation at its next
/// pulse (the poll interval), then `Explanation::handover` (the group
/// heartbeat + G + T); the fake's rebalances add no delay of their own.
/// Far below S, so meeting it shows no session had to expire.
fn graceful_handover() -> Duration {
    let config = long_session_config("a");
    let bound = config.min_poll_interval + config.explain().expect("valid").handover;
    assert!(bound * 4 < LONG_S, "the bound {bound:?} tells a graceful handover from a session timeout of {LONG_S:?}");
    bound
}

/// How long until `cond` holds (paused time, checked every 10 ms), or
/// `None` once `limit` passed.
async fn time_until(limit: Duration, mut cond: impl FnMut() -> bool) -> Option<Duration> {
    let start = tokio::time::Instant::now();
    while start.elapsed() <= limit {
        if cond() {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

fn closes_of(cluster: &FakeCluster, name: &str) -> usize {
    cluster.calls().iter().filter(|l| **l == format!("{name} close")).count()
}

/// Two members in the background on an expiring cluster; "a" (first by
/// name) leads.
async fn a_leads(cluster: &FakeCluster, a: FakeNeli) -> (neli::Background, neli::Background) {
    let (a, b) = (a.background(), long_session_member(cluster, "b").await.background());
    assert!(time_until(Duration::from_secs(2), || a.is_leader()).await.is_some(), "a leads");
    (a, b)
}

// Dropping the handle closes the election (`Background`: the handle owns
// it). Before, dropping it detached the task, and the process
// led on with nobody doing the work (on this cluster, forever: the task
// kept polling, so its session never expired).
#[tokio::test(start_paused = true)]
async fn dropping_the_leaders_background_hands_over_within_the_graceful_handover_time() {
    let cluster = expiring_cluster();
    let (a, b) = a_leads(&cluster, long_session_member(&cluster, "a").await).await;
    let control = a.control();
    let mut events = a.events();
    drop(a);
    let bound = graceful_handover();
    let took = time_until(3 * LONG_S, || b.is_leader()).await.expect("b leads at all");
    eprintln!("handover after dropping the leader's Background: {took:?} (bound {bound:?}, S {LONG_S:?})");
    assert!(took <= bound, "b led {took:?} after the drop, beyond the graceful handover time {bound:?}");
    assert_eq!(events.next().await, Some(Event::Revoked { role: 0 }), "an orderly close");
    assert_eq!(control.end(), Some(Ok(Outcome::Closed)));
    assert_eq!(control.state(), State::Closed);
    assert_eq!(closes_of(&cluster, "a"), 1, "closed through the client: {:?}", cluster.calls());
    assert!(!cluster.calls().contains(&"evict a".to_owned()), "no session expired");
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_token_hands_over_within_the_graceful_handover_time() {
    let cluster = expiring_cluster();
    let token = neli::CancellationToken::new();
    let a = long_session_member(&cluster, "a").await.background_until(token.clone());
    let b = long_session_member(&cluster, "b").await.background();
    assert!(time_until(Duration::from_secs(2), || a.is_leader()).await.is_some(), "a leads");
    token.cancel();
    let bound = graceful_handover();
    let took = time_until(3 * LONG_S, || b.is_leader()).await.expect("b leads at all");
    eprintln!("handover after cancelling the leader's token: {took:?} (bound {bound:?}, S {LONG_S:?})");
    assert!(took <= bound, "b led {took:?} after the cancellation, beyond the graceful handover time {bound:?}");
    assert_eq!(a.await, Ok(Outcome::Closed), "awaiting the handle says how it ended");
    assert_eq!(closes_of(&cluster, "a"), 1, "{:?}", cluster.calls());
    assert!(b.is_leader() && b.state() == State::Live, "b is untouched by a's token");
}

// The baseline the bounds above are told apart from: a member that stops
// without leaving (a crash: nothing runs, nothing is dropped) is replaced
// only once its session expired.
#[tokio::test(start_paused = true)]
async fn a_leader_that_stops_without_leaving_is_replaced_only_after_the_session_timeout() {
    let cluster = expiring_cluster();
    let (a, b) = a_leads_beside_b(&cluster).await;
    std::mem::forget(a);
    let took = time_until(3 * LONG_S, || b.is_leader()).await.expect("b leads once a's session expired");
    eprintln!("takeover after the leader stopped without leaving: {took:?} (S {LONG_S:?})");
    assert!(took >= LONG_S - P, "b led {took:?} after a stopped, before a's session could expire");
    assert!(cluster.calls().contains(&"evict a".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_background_still_waits_for_the_revoked_handler() {
    let cluster = expiring_cluster();
    let mut a = long_session_member(&cluster, "a").await;
    let release = Arc::new(Notify::new());
    let r = release.clone();
    a.on_event(move |event, _| {
        let r = r.clone();
        async move {
            if matches!(event, Event::Revoked { .. }) {
                r.notified().await;
            }
        }
    });
    let (a, b) = a_leads(&cluster, a).await;
    drop(a);
    // Below the close timeout (2 s): the handler holds the handover.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(closes_of(&cluster, "a"), 0, "left the group before the Revoked handler returned");
    assert!(!b.is_leader());
    release.notify_one();
    let took = time_until(3 * LONG_S, || b.is_leader()).await.expect("b leads at all");
    assert!(took <= graceful_handover(), "b led {took:?} after the handler returned");
    assert_eq!(closes_of(&cluster, "a"), 1);
}

// A handler that never returns holds a dropped election no longer than a
// `close()`: the close timeout, then the client is dropped (and leaves).
#[tokio::test(start_paused = true)]
async fn a_dropped_background_with_a_hung_revoked_handler_is_released_after_the_close_timeout() {
    let cluster = expiring_cluster();
    let mut a = long_session_member(&cluster, "a").await;
    a.on_event(|event, _| async move {
        if matches!(event, Event::Revoked { .. }) {
            std::future::pending::<()>().await;
        }
    });
    let (a, b) = a_leads(&cluster, a).await;
    let control = a.control();
    drop(a);
    let close_timeout = long_session_config("a").close_timeout;
    let took = time_until(3 * LONG_S, || b.is_leader()).await.expect("b leads at all");
    eprintln!("handover after dropping a leader whose Revoked handler hangs: {took:?}");
    assert!(took >= close_timeout, "the handler was not waited for: {took:?}");
    assert!(took <= close_timeout + graceful_handover(), "b led {took:?} after the drop");
    assert_eq!(control.state(), State::Closed);
}

// `Background::close` after the token was cancelled waits for the close
// under way; nothing is closed twice.
#[tokio::test(start_paused = true)]
async fn closing_after_cancelling_closes_once() {
    let cluster = expiring_cluster();
    let token = neli::CancellationToken::new();
    let a = long_session_member(&cluster, "a").await.background_until(token.clone());
    assert!(time_until(Duration::from_secs(2), || a.is_leader()).await.is_some(), "a leads");
    token.cancel();
    assert_eq!(a.close().await, Ok(Outcome::Closed));
    assert_eq!(closes_of(&cluster, "a"), 1, "{:?}", cluster.calls());
}

// The future that awaits the handle owns the election as the handle did:
// dropped before the election ended (a timeout around it), it closes it.
#[tokio::test(start_paused = true)]
async fn dropping_the_future_that_awaits_the_handle_closes_the_election() {
    let cluster = expiring_cluster();
    let (a, b) = a_leads(&cluster, long_session_member(&cluster, "a").await).await;
    let control = a.control();
    assert!(tokio::time::timeout(Duration::from_millis(200), a).await.is_err(), "still running");
    let took = time_until(3 * LONG_S, || b.is_leader()).await.expect("b leads at all");
    assert!(took <= graceful_handover(), "b led {took:?} after the future was dropped");
    assert_eq!(control.end(), Some(Ok(Outcome::Closed)));
}

// A `Neli` dropped unclosed cannot await its handler or its leave, but
// its leases end at once for every handle, subscribers hear `Revoked`, and
// its client leaves the group as it is dropped.
#[tokio::test(start_paused = true)]
async fn dropping_an_unclosed_neli_ends_its_leases_and_leaves_the_group() {
    let cluster = expiring_cluster();
    let (a, b) = a_leads_beside_b(&cluster).await;
    let control = a.control();
    let mut events = control.events();
    drop(a);
    assert!(!control.is_leader() && control.token().is_none(), "no handle leads on a dropped election");
    assert_eq!(control.state(), State::Closed);
    assert_eq!(control.end(), Some(Ok(Outcome::Closed)));
    assert_eq!(events.next().await, Some(Event::Revoked { role: 0 }));
    assert!(cluster.calls().contains(&"a dropped".to_owned()), "{:?}", cluster.calls());
    let took = time_until(3 * LONG_S, || b.is_leader()).await.expect("b leads at all");
    eprintln!("handover after dropping the leader's Neli: {took:?} (S {LONG_S:?})");
    assert!(took <= graceful_handover(), "b led {took:?} after the drop");
}

// A `Background` awaited after the runtime that ran its loop shut down (a
// runtime per test, a handle kept past it): the loop was cancelled with its
// runtime, and awaiting the handle says the election ended, not a panic
// about a task that never panicked.
#[test]
fn a_background_whose_runtime_shut_down_reports_the_election_closed() {
    let cluster = FakeCluster::new(1);
    let runtime = || tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let first = runtime();
    let handle = first.block_on(async { member(&cluster, "a").await.background() });
    drop(first);
    let outcome = runtime().block_on(handle.into_future());
    assert!(matches!(outcome, Err(Error::Finished(Outcome::Closed))), "{outcome:?}");
}

/// The driver's log lines while `f` runs on a current-thread runtime.
fn logged(f: impl std::future::Future<Output = ()>) -> String {
    let lines = crate::log_lines::Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish();
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("a runtime");
    tracing::subscriber::with_default(subscriber, || runtime.block_on(f));
    lines.text()
}

// The warning that the election log was lost (tokens restart: compare
// (log_epoch, token) downstream) is said once per loss, and never when no
// log was lost: operators page on it.
#[test]
fn the_lost_log_warning_is_said_once_per_loss_and_never_without_one() {
    const WARNING: &str = "the election log was lost or truncated";
    let cluster = FakeCluster::new(1);
    let quiet = logged(async {
        let mut a = member(&cluster, "a").await;
        pulse_all(&mut [&mut a], 40).await;
        assert!(a.is_leader());
        a.close().await.expect("close");
    });
    assert_eq!(quiet.matches(WARNING).count(), 0, "{quiet}");
    let cluster = FakeCluster::new(1);
    let lost = logged(async {
        let mut a = member(&cluster, "a").await;
        pulse_all(&mut [&mut a], 20).await;
        cluster.lose_log();
        pulse_all(&mut [&mut a], 40).await;
        a.close().await.expect("close");
    });
    assert_eq!(lost.matches(WARNING).count(), 1, "{lost}");
}

// A `Revoked` handler that never returns, met by the running loop (a
// rebalance, before any close): `close()` cannot start the close, and gives
// up after twice the close timeout (`Background::close`), saying how long
// it waited.
#[tokio::test(start_paused = true)]
async fn closing_a_loop_stuck_in_a_revoked_handler_gives_up_after_twice_the_close_timeout() {
    let cluster = expiring_cluster();
    let mut a = long_session_member(&cluster, "a").await;
    let stuck = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let in_handler = stuck.clone();
    a.on_event(move |event, _| {
        let in_handler = in_handler.clone();
        async move {
            if matches!(event, Event::Revoked { .. }) {
                in_handler.store(true, std::sync::atomic::Ordering::SeqCst);
                std::future::pending::<()>().await;
            }
        }
    });
    let a = a.background();
    assert!(time_until(Duration::from_secs(2), || a.is_leader()).await.is_some(), "a leads");
    let _b = long_session_member(&cluster, "b").await.background();
    let revoked = time_until(LONG_S, || stuck.load(std::sync::atomic::Ordering::SeqCst)).await;
    assert!(revoked.is_some(), "b's join revoked a's partition within {LONG_S:?}");
    let close_timeout = long_session_config("a").close_timeout;
    let started = tokio::time::Instant::now();
    let closed = a.close().await;
    eprintln!("close of a loop stuck in its Revoked handler: {closed:?} after {:?}", started.elapsed());
    assert_eq!(closed, Err(Error::CloseTimedOut(close_timeout * 2)));
    assert_eq!(started.elapsed(), close_timeout * 2);
}
