//! Counters, gauges and health (neli/KAFKA.md, "Metrics and health"): the
//! core gives every fence its cause; the driver's metrics (read back through
//! a recorder of metrics-util's registry, one per election) and
//! `Control::counters` follow the election on the in-memory fake broker;
//! `Control::health` turns false when pulses stop. Time is tokio's paused
//! clock, so nothing waits for real time.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::registry::{AtomicStorage, Registry};
use neli::core::{CoreConfig, FenceCause, Heartbeat, Member, Output, Record};
use neli::metrics::{self as m, ElectionCounters};
use neli::testing::FakeCluster;
use neli::{BrokerError, Config, Membership, Mode, Neli, State, SystemClock};
use neli::{Event, Time};
use tokio::sync::Notify;

type FakeNeli = Neli<neli::testing::FakeBroker<SystemClock>, SystemClock>;

const T: Duration = Duration::from_millis(1000);
const P: Duration = Duration::from_millis(50);

// --- the core: every Fenced carries its cause ---

fn ms(v: u64) -> Time {
    Time::from_millis(v)
}

/// The core's outputs carried out at `now` on a healthy broker: writes read
/// back at once, proofs accepted; returns the events with their causes.
fn run(m: &mut Member, now: Time, offset: &mut u64) -> Vec<(Event, Option<FenceCause>)> {
    let mut events = Vec::new();
    let mut written = Vec::new();
    while let Some((out, cause)) = m.poll_output_with_cause() {
        match out {
            Output::Produce { partition, payload } => {
                written.push(Record { partition, offset: *offset, timestamp: None, payload });
                *offset += 1;
            }
            Output::ConfirmMembership { generation } => m.handle_membership(now, generation, now, true),
            Output::LeaveGroup { .. } => {}
            Output::Event(e) => events.push((e, cause)),
        }
    }
    for r in written {
        m.handle_record(now, &r);
        events.extend(run(m, now, offset));
    }
    events
}

/// A member leading every role of `partitions` partitions (one role each).
fn leading(partitions: u32) -> (Member, u64) {
    let mut cfg = CoreConfig::exclusive("me", T);
    (cfg.roles, cfg.partitions) = (partitions, partitions);
    let mut m = Member::new(cfg);
    let mut offset = 0;
    let all: Vec<u32> = (0..partitions).collect();
    m.handle_assigned(ms(0), 1, &all);
    let acquired = run(&mut m, ms(5), &mut offset);
    assert_eq!(acquired.len(), partitions as usize, "{acquired:?}");
    (m, offset)
}

/// The events queued, with their causes (nothing carried out).
fn events(m: &mut Member) -> Vec<(Event, Option<FenceCause>)> {
    std::iter::from_fn(|| m.poll_output_with_cause())
        .filter_map(|(out, cause)| match out {
            Output::Event(e) => Some((e, cause)),
            _ => None,
        })
        .collect()
}

#[test]
fn every_fence_carries_its_cause_in_order_and_nothing_else_has_one() {
    let fenced = |role| Event::Fenced { role };
    let (mut m, _) = leading(1);
    m.handle_lost(ms(10), &[0]);
    assert_eq!(events(&mut m), vec![(fenced(0), Some(FenceCause::AssignmentLost))]);

    let (mut m, _) = leading(1);
    m.handle_membership(ms(10), 1, ms(10), false);
    assert_eq!(events(&mut m), vec![(fenced(0), Some(FenceCause::MembershipRejected))]);

    let (mut m, _) = leading(1);
    // The lease is the heartbeat's send time (0 ms) + T.
    m.handle_timeout(ms(1000));
    assert_eq!(events(&mut m), vec![(fenced(0), Some(FenceCause::LeaseExpired))]);

    let (mut m, _) = leading(1);
    m.handle_revoked(ms(10), &[0]);
    assert_eq!(events(&mut m), vec![(Event::Revoked { role: 0 }, None)]);

    // Two fences of different causes queued before the driver drains: each
    // keeps its own, in order, also when drained with `poll_output`
    // in between.
    let (mut m, _) = leading(2);
    m.handle_lost(ms(10), &[1]);
    m.handle_timeout(ms(1000));
    let first = std::iter::from_fn(|| m.poll_output()).find(|o| matches!(o, Output::Event(_)));
    assert_eq!(first, Some(Output::Event(fenced(1))));
    assert_eq!(events(&mut m), vec![(fenced(0), Some(FenceCause::LeaseExpired))]);
}

#[test]
fn fence_causes_have_the_label_values_the_docs_name() {
    let labels: Vec<&str> = FenceCause::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(labels, ["assignment_lost", "membership_rejected", "lease_expired"]);
}

// --- the driver's metrics on the fake cluster ---

/// A recorder of one election's metrics (metrics-util's registry with
/// atomic storage): counters and gauges as they stand.
#[derive(Clone)]
struct Recorded(Arc<Registry<Key, AtomicStorage>>);

impl Recorder for Recorded {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        self.0.get_or_create_counter(key, |c| Counter::from_arc(c.clone()))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        self.0.get_or_create_gauge(key, |g| Gauge::from_arc(g.clone()))
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        self.0.get_or_create_histogram(key, |h| Histogram::from_arc(h.clone()))
    }
}

/// Whether `key` is `name` with exactly `labels` besides `group`.
fn is(key: &Key, name: &str, labels: &[(&str, &str)]) -> bool {
    let mut have: Vec<(&str, &str)> =
        key.labels().map(|l| (l.key(), l.value())).filter(|(k, _)| *k != "group").collect();
    let mut want = labels.to_vec();
    have.sort();
    want.sort();
    key.name() == name && have == want
}

impl Recorded {
    fn new() -> Recorded {
        Recorded(Arc::new(Registry::atomic()))
    }

    fn counter(&mut self, name: &str, labels: &[(&str, &str)]) -> u64 {
        let mut found = None;
        self.0.visit_counters(|k, c| {
            if is(k, name, labels) {
                found = Some(c.load(Ordering::SeqCst));
            }
        });
        found.unwrap_or_else(|| panic!("{name} {labels:?} is not registered"))
    }

    fn samples(&mut self, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
        let mut found = None;
        self.0.visit_histograms(|k, h| {
            if is(k, name, labels) {
                found = Some(h.data());
            }
        });
        found.unwrap_or_else(|| panic!("{name} {labels:?} is not registered"))
    }

    fn gauge(&mut self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let mut found = None;
        self.0.visit_gauges(|k, g| {
            if is(k, name, labels) {
                found = Some(f64::from_bits(g.load(Ordering::SeqCst)));
            }
        });
        found.unwrap_or_else(|| panic!("{name} {labels:?} is not registered"))
    }
}

fn config(name: &str, mode: Mode) -> Config {
    Config::builder()
        .group("metrics")
        .name(name)
        .heartbeat_timeout(T)
        .close_timeout(Duration::from_secs(2))
        .mode(mode)
        .build()
        .expect("valid test config")
}

async fn member(cluster: &FakeCluster, name: &str, mode: Mode) -> (FakeNeli, Recorded) {
    let clock = SystemClock::new();
    let mut neli =
        Neli::new(&config(name, mode), cluster.broker(name, clock.clone()), clock).await.expect("member starts");
    let recorded = Recorded::new();
    neli.set_metrics_recorder(&recorded);
    (neli, recorded)
}

/// Pulses (and lets P pass after each, so a failing broker does not spin
/// on the paused clock) until `done` holds; false after `rounds`.
async fn pulse_until(n: &mut FakeNeli, rounds: usize, mut done: impl FnMut(&FakeNeli) -> bool) -> bool {
    for _ in 0..rounds {
        let _ = n.pulse(P).await;
        if done(n) {
            return true;
        }
        tokio::time::sleep(P).await;
    }
    false
}

const ROLE0: &[(&str, &str)] = &[("role", "0")];

fn fences(cause: &'static str) -> [(&'static str, &'static str); 2] {
    [("role", "0"), ("cause", cause)]
}

/// The counters the metrics show are the ones `Control::counters` answers.
fn assert_same(c: &ElectionCounters, r: &mut Recorded) {
    let role = c.role(0);
    assert_eq!(r.counter(m::ACQUISITIONS, ROLE0), role.acquisitions);
    assert_eq!(r.counter(m::REVOCATIONS, ROLE0), role.revocations);
    for cause in FenceCause::ALL {
        assert_eq!(r.counter(m::FENCES, &fences(cause.as_str())), role.fences.of(cause), "{cause}");
    }
    assert_eq!(r.counter(m::RESIGNS, &[]), c.resigns);
    assert_eq!(r.counter(m::MEMBERSHIP_PROOFS, &[("outcome", "accepted")]), c.proofs.accepted);
    assert_eq!(r.counter(m::MEMBERSHIP_PROOFS, &[("outcome", "rejected")]), c.proofs.rejected);
    assert_eq!(r.counter(m::MEMBERSHIP_PROOFS, &[("outcome", "undetermined")]), c.proofs.undetermined);
    assert_eq!(r.counter(m::HEARTBEATS_SENT, &[]), c.records.heartbeats_sent);
    assert_eq!(r.counter(m::OWN_HEARTBEATS, &[]), c.records.own_heartbeats);
    assert_eq!(r.counter(m::RECORDS_IGNORED, &[("reason", "foreign")]), c.records.foreign);
    assert_eq!(r.counter(m::RECORDS_IGNORED, &[("reason", "undecodable")]), c.records.undecodable);
    assert_eq!(r.counter(m::RECORDS_IGNORED, &[("reason", "stale_term")]), c.records.stale_term);
    assert_eq!(r.counter(m::BROKER_ERRORS, &[("kind", "fatal")]), c.broker_errors.fatal);
    assert_eq!(r.counter(m::BROKER_ERRORS, &[("kind", "retriable")]), c.broker_errors.retriable);
}

/// Gauges of a member that does not lead role 0.
fn assert_follower_gauges(r: &mut Recorded) {
    assert_eq!(r.gauge(m::LEADER, ROLE0), 0.0);
    assert_eq!(r.gauge(m::LEASE_REMAINING, ROLE0), 0.0);
    assert_eq!(r.gauge(m::FENCING_TOKEN, ROLE0), -1.0);
}

/// Gauges of the leader of role 0 right after a pulse.
fn assert_leader_gauges(a: &FakeNeli, r: &mut Recorded) {
    let token = a.token().expect("leads");
    assert_eq!(r.gauge(m::LEADER, ROLE0), 1.0);
    assert_eq!(r.gauge(m::FENCING_TOKEN, ROLE0), token.0 as f64);
    let left = r.gauge(m::LEASE_REMAINING, ROLE0);
    assert!(left > 0.0 && left <= T.as_secs_f64(), "lease remaining {left} s, T = {T:?}");
}

#[tokio::test(start_paused = true)]
async fn counters_and_gauges_follow_acquire_foreign_records_outage_resign_and_eviction() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut r) = member(&cluster, "a", Mode::Exclusive).await;
    let control = a.control();
    // Registered at zero before anything happened.
    assert_eq!(r.counter(m::ACQUISITIONS, ROLE0), 0);
    assert!(pulse_until(&mut a, 5, |a| a.is_leader()).await, "a lone member leads");
    assert_eq!(control.counters().role(0).acquisitions, 1);
    assert_leader_gauges(&a, &mut r);
    assert_eq!(r.gauge(m::LOG_EPOCH, &[]), 0.0);
    let c = control.counters();
    assert!(c.proofs.accepted >= 1 && c.records.heartbeats_sent >= 1 && c.records.own_heartbeats >= 1, "{c:?}");
    assert_same(&c, &mut r);

    // A stranger's heartbeat and garbage: ignored, and counted.
    let stranger = Heartbeat { role: 0, term: 1, seq: 1, sent_at: Time::ZERO, lease: None, name: "stranger".into() };
    cluster.write(0, stranger.encode());
    cluster.write(0, b"not a heartbeat".to_vec());
    assert!(pulse_until(&mut a, 5, |a| a.control().counters().records.undecodable == 1).await);
    let c = control.counters();
    assert_eq!((c.records.foreign, c.records.undecodable), (1, 1));
    assert!(a.is_leader(), "foreign records change nothing");
    assert_same(&c, &mut r);

    // A broker outage longer than T: every call fails (retriable) until
    // the lease runs out (fenced: lease_expired); then it leads again.
    const FAILURES: u64 = 100;
    for _ in 0..FAILURES {
        cluster.fail_next("a", BrokerError::retriable("request timed out"));
    }
    assert!(pulse_until(&mut a, 200, |a| !a.is_leader()).await, "the outage fences the leader");
    assert_follower_gauges(&mut r);
    assert!(
        pulse_until(&mut a, 400, |a| a.control().counters().broker_errors.retriable == FAILURES && a.is_leader()).await,
        "leads again once the outage is over: {:?}",
        control.counters()
    );
    let c = control.counters();
    assert_eq!(c.role(0).fences.lease_expired, 1, "{c:?}");
    assert_eq!(c.role(0).fences.total(), 1, "{c:?}");
    assert_eq!(c.role(0).acquisitions, 2);
    assert_leader_gauges(&a, &mut r);
    assert_same(&c, &mut r);

    // Resign: revoked, out for the hold-off (2 S + T), then it leads again.
    a.resign().await.expect("resign");
    let _ = a.pulse(P).await.expect("pulse");
    let c = control.counters();
    assert_eq!((c.resigns, c.role(0).revocations), (1, 1), "{c:?}");
    assert_follower_gauges(&mut r);
    assert_same(&c, &mut r);
    let hold_off = neli::rules::resign_hold_off(3 * T, T);
    let rounds = (hold_off + 2 * T).as_millis() as usize / P.as_millis() as usize;
    assert!(pulse_until(&mut a, rounds, |a| a.is_leader()).await, "leads again after the hold-off {hold_off:?}");
    assert_eq!(control.counters().role(0).acquisitions, 3);

    // Evicted: the assignment is lost (fenced: assignment_lost).
    cluster.evict("a");
    assert!(pulse_until(&mut a, 5, |a| !a.is_leader()).await);
    let c = control.counters();
    assert_eq!(c.role(0).fences.assignment_lost, 1, "{c:?}");
    assert_follower_gauges(&mut r);
    assert_same(&c, &mut r);
    a.close().await.expect("close");
    assert_same(&control.counters(), &mut r);
}

// A proof the coordinator cannot judge (a rebalance in progress) is
// counted as undetermined: it neither renews nor ends the lease. A rejected
// one is counted as rejected, and fences with that cause.
#[tokio::test(start_paused = true)]
async fn membership_proofs_are_counted_by_answer() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut r) = member(&cluster, "a", Mode::Exclusive).await;
    let control = a.control();
    assert!(pulse_until(&mut a, 5, |a| a.is_leader()).await, "a lone member leads");
    let before = control.counters().proofs;
    assert_eq!(before.rejected, 0);
    cluster.answer_next("a", Membership::Undetermined);
    cluster.answer_next("a", Membership::Undetermined);
    assert!(pulse_until(&mut a, 20, |a| a.control().counters().proofs.undetermined == 2).await);
    let c = control.counters();
    assert_eq!((c.proofs.undetermined, c.proofs.rejected), (2, 0), "{c:?}");
    assert!(c.proofs.accepted >= before.accepted, "{c:?}");
    assert_eq!(c.role(0).fences.total(), 0, "two undetermined answers within the lease fence nobody: {c:?}");
    assert!(a.is_leader());
    assert_same(&c, &mut r);

    cluster.answer_next("a", Membership::Rejected);
    assert!(pulse_until(&mut a, 20, |a| a.control().counters().proofs.rejected == 1).await);
    let c = control.counters();
    assert_eq!((c.proofs.rejected, c.role(0).fences.membership_rejected), (1, 1), "{c:?}");
    assert_same(&c, &mut r);
    a.close().await.expect("close");
}

// The acquisition's phases, each once per acquisition: evidence (the
// assignment to the own heartbeat read back), the proof's round trip, the
// lease after the evidence; a member that never leads times none.
#[tokio::test(start_paused = true)]
async fn taking_a_role_times_its_evidence_proof_and_lease_phases() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut ra) = member(&cluster, "a", Mode::Exclusive).await;
    let (mut b, mut rb) = member(&cluster, "b", Mode::Exclusive).await;
    assert!(pulse_until(&mut a, 5, |a| a.is_leader()).await, "the first member leads");
    for _ in 0..5 {
        let _ = b.pulse(P).await;
    }
    assert!(!b.is_leader());
    let phase = |p: &'static str| [("phase", p)];
    let (evidence, lease) =
        (ra.samples(m::ACQUISITION_PHASE, &phase("evidence")), ra.samples(m::ACQUISITION_PHASE, &phase("lease")));
    assert_eq!((evidence.len(), lease.len()), (1, 1), "one acquisition, one sample each: {evidence:?} {lease:?}");
    let proofs = ra.samples(m::ACQUISITION_PHASE, &phase("proof"));
    assert!(!proofs.is_empty(), "the membership proof (on by default) is timed while acquiring");
    assert!(evidence.iter().chain(&lease).chain(&proofs).all(|s| s.is_finite() && *s >= 0.0 && *s < T.as_secs_f64()));
    for p in ["evidence", "proof", "lease"] {
        assert!(rb.samples(m::ACQUISITION_PHASE, &phase(p)).is_empty(), "a follower times no {p} phase");
    }
    a.close().await.expect("close");
    b.close().await.expect("close");
}

#[tokio::test(start_paused = true)]
async fn closing_the_leader_counts_a_revocation() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut r) = member(&cluster, "a", Mode::Exclusive).await;
    let control = a.control();
    assert!(pulse_until(&mut a, 5, |a| a.is_leader()).await);
    a.close().await.expect("close");
    assert_eq!(control.counters().role(0).revocations, 1);
    assert_follower_gauges(&mut r);
    assert_same(&control.counters(), &mut r);
}

#[tokio::test(start_paused = true)]
async fn a_fatal_error_is_counted_and_the_election_is_no_longer_alive() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut r) = member(&cluster, "a", Mode::Exclusive).await;
    let control = a.control();
    assert!(pulse_until(&mut a, 5, |a| a.is_leader()).await);
    cluster.fail_next("a", BrokerError::fatal("SASL authentication failed"));
    assert!(a.pulse(P).await.is_err());
    assert_eq!(control.counters().broker_errors.fatal, 1);
    assert_eq!(r.counter(m::BROKER_ERRORS, &[("kind", "fatal")]), 1);
    let health = control.health();
    assert!(health.finished && !health.is_alive(), "{health:?}");
}

#[tokio::test(start_paused = true)]
async fn every_role_has_its_own_gauges_and_counters() {
    let cluster = FakeCluster::new(2);
    let mode = Mode::MultiRole { roles: 2, partitions: 2, exclusive: true };
    let (mut a, mut r) = member(&cluster, "a", mode).await;
    assert!(pulse_until(&mut a, 5, |a| a.is_leader_of(0) && a.is_leader_of(1)).await, "a lone member leads both");
    for role in ["0", "1"] {
        assert_eq!(r.gauge(m::LEADER, &[("role", role)]), 1.0, "role {role}");
        assert_eq!(r.counter(m::ACQUISITIONS, &[("role", role)]), 1, "role {role}");
    }
    let tokens: Vec<f64> = ["0", "1"].iter().map(|role| r.gauge(m::FENCING_TOKEN, &[("role", role)])).collect();
    assert_eq!(tokens, [0, 1].map(|role| a.control().lease(role).expect("leads").token.0 as f64));
    a.close().await.expect("close");
}

#[tokio::test(start_paused = true)]
async fn refreshing_the_gauges_shows_a_lease_that_ended_since_the_last_pulse() {
    let cluster = FakeCluster::new(1);
    let (mut a, mut r) = member(&cluster, "a", Mode::Exclusive).await;
    assert!(pulse_until(&mut a, 5, |a| a.is_leader()).await);
    assert_leader_gauges(&a, &mut r);
    // No pulse for longer than T: the lease has ended on the member's clock.
    tokio::time::advance(T + P).await;
    a.control().refresh_metrics();
    assert_follower_gauges(&mut r);
    a.close().await.expect("close");
}

// --- health ---

#[tokio::test(start_paused = true)]
async fn health_turns_false_when_pulses_stop_and_true_when_they_resume() {
    let cluster = FakeCluster::new(1);
    let (mut a, _r) = member(&cluster, "a", Mode::Exclusive).await;
    let control = a.control();
    let cfg = a.config().clone();
    let bound = m::liveness_bound(cfg.min_poll_interval, cfg.heartbeat_timeout);
    assert_eq!(bound, Duration::from_millis(100) + T, "the default poll interval + T");
    assert!(pulse_until(&mut a, 5, |a| a.is_leader()).await);
    let health = control.health();
    assert!(health.is_alive(), "{health}");
    assert_eq!((health.bound, health.last_pulse_age, health.state), (bound, Duration::ZERO, State::Live));
    assert!(health.to_string().starts_with("alive: last pulse 0ms ago (bound 1100ms)"), "{health}");
    // The loop stops pulsing: alive up to the bound, not a moment later.
    tokio::time::advance(bound).await;
    assert!(control.health().is_alive(), "{}", control.health());
    tokio::time::advance(Duration::from_millis(1)).await;
    let health = control.health();
    assert!(!health.is_alive(), "{health}");
    assert_eq!(health.last_pulse_age, bound + Duration::from_millis(1));
    assert_eq!(health.to_string(), "not alive: last pulse 1101ms ago, over the bound 1100ms");
    // It pulses again: alive again.
    let _ = a.pulse(P).await.expect("pulse");
    assert!(control.health().is_alive(), "{}", control.health());
    a.close().await.expect("close");
    let health = control.health();
    assert!(!health.is_alive() && health.finished && health.state == State::Closed, "{health:?}");
    assert_eq!(health.to_string(), "not alive: the election is Closed");
}

#[tokio::test(start_paused = true)]
async fn a_background_loop_stays_alive_and_one_waiting_for_its_revoked_handler_too() {
    let cluster = FakeCluster::new(1);
    let (mut a, _r) = member(&cluster, "a", Mode::Exclusive).await;
    let release = std::sync::Arc::new(Notify::new());
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
    tokio::time::sleep(10 * T).await;
    assert!(a.is_leader());
    let health = a.health();
    assert!(health.is_alive() && health.last_pulse_age <= health.bound, "{health}");
    // "0z" sorts first: the rebalance moves partition 0 away, and the loop
    // waits for the Revoked handler, far longer than the bound.
    let (mut z, _) = member(&cluster, "0z", Mode::Exclusive).await;
    tokio::time::sleep(5 * T).await;
    let health = a.health();
    assert!(health.in_revoked_handler.is_some_and(|w| w >= 4 * T), "{health:?}");
    assert!(health.last_pulse_age > health.bound && health.is_alive(), "{health}");
    assert!(health.to_string().starts_with("alive: waiting for the Revoked handler for"), "{health}");
    release.notify_one();
    tokio::time::sleep(T).await;
    let health = a.health();
    assert!(health.in_revoked_handler.is_none() && health.last_pulse_age <= health.bound, "{health}");
    z.close().await.expect("close");
    a.close().await.expect("close");
}

#[test]
fn the_catalog_is_the_table_in_kafka_md() {
    let doc = include_str!("../../KAFKA.md");
    for metric in m::CATALOG {
        let labels = metric.labels.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ");
        let row = format!("| `{}` | {} |", metric.name, metric.kind);
        let line = doc.lines().find(|l| l.starts_with(&row)).unwrap_or_else(|| panic!("no row {row} in KAFKA.md"));
        assert!(line.contains(&labels), "{}: labels {labels} in {line}", metric.name);
    }
    assert!(m::CATALOG.iter().all(|m| m.name.starts_with("neli_")));
    let units = m::CATALOG.iter().filter(|m| m.unit.is_some());
    assert!(units.clone().all(|m| m.name.ends_with("_seconds")), "a unit in every name");
    assert!(m::CATALOG.iter().filter(|m| m.kind == "counter").all(|m| m.name.ends_with("_total")));
}
