//! The async driver on the in-memory fake broker. Time is tokio's paused
//! clock (auto-advancing) or a manual clock, so no test waits for real time.

use std::sync::Arc;
use std::time::Duration;

use neli::testing::FakeCluster;
use neli::{BrokerError, Clock, Config, Error, Event, ManualClock, Neli, Outcome, Pulse, State, SystemClock};
use tokio::sync::Notify;
use tokio_stream::StreamExt;

type FakeNeli = Neli<neli::testing::FakeBroker<SystemClock>, SystemClock>;

fn config(name: &str) -> Config {
    Config::builder()
        .group("g")
        .name(name)
        .heartbeat_timeout(Duration::from_millis(1000))
        .close_timeout(Duration::from_secs(2))
        .build()
        .expect("valid test config")
}

async fn member(cluster: &FakeCluster, name: &str) -> FakeNeli {
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
