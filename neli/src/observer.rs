//! Who leads, from anywhere: an [`Observer`] follows the election topic's
//! heartbeats without joining the group and reports, per role, who leads,
//! with which fencing token, and until when the leader claims its lease.
//!
//! Every heartbeat says whether its sender held a live lease of its role
//! when it sent it, and with which token (heartbeat version 2,
//! [`crate::core::Heartbeat`]): the observer reports the core's own answer,
//! it decides nothing itself. A claim starts at the first heartbeat that
//! makes it ([`Update::Acquired`]) and ends when its holder's heartbeats stop
//! claiming it, another claim of the role is read, or nothing renews it for
//! T, counted on the observer's clock from the newest heartbeat's receipt
//! ([`Update::Ended`]). That is at or after the member's own lease end: a
//! heartbeat is received after it was sent.
//!
//! The observer reads through a [`TopicReader`]: every partition of the
//! election topic from its end, assigned, not subscribed, so watching never
//! takes part in the election. `neli::kafka::observe` (feature `kafka`) reads Kafka (what
//! `neli watch` runs on); [`crate::testing::FakeCluster::reader`] reads the
//! in-memory fake cluster.
//!
//! ```
//! use std::time::Duration;
//! use futures::StreamExt;
//! use neli::observer::{Observer, Update};
//! use neli::{Config, Neli, SystemClock, testing::FakeCluster};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() -> Result<(), neli::Error> {
//! let config = Config::builder().group("billing-cron").heartbeat_timeout(Duration::from_secs(1));
//! let clock = SystemClock::new();
//! let cluster = FakeCluster::new(1);
//! // Any configuration of the election will do (only T matters). With
//! // Kafka: `let observer = neli::kafka::observe(&config).await?;`
//! let observer = Observer::new(&config.clone().build()?, cluster.reader(clock.clone()), clock.clone())?;
//! let mut updates = observer.updates();
//! let member_config = config.name("worker-1").build()?;
//! let broker = cluster.broker("worker-1", clock.clone());
//! let member = Neli::new(&member_config, broker, clock).await?.background();
//!
//! let Some(Update::Acquired(leader)) = updates.next().await else { panic!("a leader") };
//! assert_eq!(leader.member, "worker-1");
//! assert_eq!(Some(leader.token), member.token()); // the token the member's core handed out
//! assert_eq!(observer.leader(0).map(|l| l.token), Some(leader.token));
//! member.close().await?;
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_util::sync::CancellationToken;

use crate::broker::BrokerError;
use crate::clock::Clock;
use crate::config::Config;
use crate::core::{Heartbeat, Record, Time, Token};
use crate::driver::{Error, Outcome};

/// What an observer reads the election topic through: every partition,
/// from the end, without joining the group. Implementations:
/// `neli::kafka::KafkaReader` (feature `kafka`) and
/// [`crate::testing::FakeReader`].
pub trait TopicReader: Send + 'static {
    /// Events since the last call, in order; waits up to `timeout` for the
    /// first one. A fatal error ends the observer; a retriable one is
    /// logged and reading goes on.
    fn poll(&mut self, timeout: Duration) -> impl Future<Output = Result<Vec<ReaderEvent>, BrokerError>> + Send;
    /// Stops reading and releases the reader's resources, bounded (a hung
    /// client is abandoned, not awaited).
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}

/// What a [`TopicReader`] read, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReaderEvent {
    /// The reader (re)started reading every partition of the election topic
    /// at its end: when the topic is first found, and again after it was
    /// recreated.
    Reading {
        /// The election topic's partition count.
        partitions: u32,
    },
    /// A record of the election topic.
    Record(Record),
    /// The election log was lost (the topic vanished without an end marker:
    /// a broker restarted without its data), by the rule members use
    /// ([`crate::log_watch`]). Fencing tokens restart with the new log.
    LogLost,
    /// The election was ended (`neli end`): terminal.
    ElectionEnded,
}

/// Who leads one role, as read from the leader's own heartbeats.
///
/// Two clocks meet here. `sent_at` and `lease_end` are on the **member's**
/// monotonic clock, whose origin is the member's own: they say how long the
/// lease runs (`lease_end - sent_at` is T) but are not instants on the
/// observer's clock, nor on any other member's. `since` and `last_seen` are
/// on the **observer's** clock; [`LeaderView::expires_at`] carries the
/// member's claim over to it, which is only approximate: the member's lease
/// ended up to the heartbeat's transit time earlier (plus clock drift).
///
/// ```
/// use std::time::Duration;
/// use neli::observer::LeaderView;
/// use neli::{Time, Token};
///
/// let view = LeaderView {
///     role: 0,
///     member: "worker-1".into(),
///     token: Token(42),
///     log_epoch: 0,
///     term: 3,
///     sent_at: Time::from_millis(90_000),     // the member's clock
///     lease_end: Time::from_millis(95_000),   // sent_at + T, T = 5 s
///     since: Time::from_millis(1_000),        // the observer's clock
///     last_seen: Time::from_millis(7_000),
/// };
/// assert_eq!(view.expires_at(), Time::from_millis(12_000));
/// assert!(view.is_live_at(Time::from_millis(11_999)));
/// assert!(!view.is_live_at(Time::from_millis(12_000)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LeaderView {
    /// The role led.
    pub role: u32,
    /// The leader's instance name (`Config::name`), as its heartbeats carry it.
    pub member: String,
    /// The term's fencing token, as the leader's core handed it out.
    pub token: Token,
    /// How many times this observer saw the election log lost since it
    /// started (the heartbeat does not carry the member's own count): tokens
    /// restart with every new log, so order on `(log_epoch, token)`. It agrees
    /// with a member that saw the same losses; a member that started later,
    /// or found a loss by itself, may count differently (neli/KAFKA.md,
    /// "Fencing tokens after a broker lost its log").
    pub log_epoch: u64,
    /// The group generation the leader holds the role's partition in.
    pub term: u64,
    /// When the newest heartbeat of this claim was sent, on the member's clock.
    pub sent_at: Time,
    /// The lease end that heartbeat claims: `sent_at` + T, on the member's
    /// clock. The member's own lease ends at or before it (it also needs the
    /// heartbeat read back and, with the membership proof, a proof accepted).
    /// Comparable with the observer's clock only through
    /// [`LeaderView::expires_at`].
    pub lease_end: Time,
    /// When the observer first read this claim, on the observer's clock.
    pub since: Time,
    /// When the observer last read a heartbeat of this claim, on the
    /// observer's clock.
    pub last_seen: Time,
}

impl LeaderView {
    /// The claimed token with the log epoch the observer counted for it:
    /// what to compare with a member's [`Lease::stamp`](crate::Lease::stamp).
    pub fn stamp(&self) -> crate::Stamp {
        crate::Stamp { log_epoch: self.log_epoch, token: self.token }
    }

    /// The member's claim carried over to the observer's clock: `last_seen`
    /// plus the claimed lease's length (`lease_end - sent_at`, i.e. T). The
    /// observer reports the claim until then unless a heartbeat renews it.
    /// Approximate: the member's own lease ended up to the heartbeat's
    /// transit time earlier, so this is at or after the member's end (up to
    /// clock drift).
    pub fn expires_at(&self) -> Time {
        self.last_seen + self.lease_end.saturating_since(self.sent_at)
    }

    /// Whether the observer still reports the claim at `now` on its clock:
    /// before [`LeaderView::expires_at`].
    pub fn is_live_at(&self, now: Time) -> bool {
        now < self.expires_at()
    }
}

/// Why the observer stopped reporting a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EndReason {
    /// The holder's heartbeat of the role claims no lease any more.
    Released,
    /// Another claim of the role was read (another member, or the same
    /// member in a new term with a new token): an [`Update::Acquired`] follows.
    Superseded,
    /// No heartbeat renewed the claim for T on the observer's clock.
    Silent,
}

/// A change in who leads, in the order the observer read it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Update {
    /// A claim the observer did not report before: `member` leads `role`
    /// with `token`, no earlier than the member's own `Acquired`.
    Acquired(LeaderView),
    /// A claim ended; the view as last seen.
    Ended {
        /// The claim as last read.
        view: LeaderView,
        /// Why it ended.
        reason: EndReason,
    },
    /// The election log was lost ([`ReaderEvent::LogLost`]); the observer's
    /// log epoch is now `log_epoch`.
    LogLost {
        /// The observer's new log epoch.
        log_epoch: u64,
    },
    /// The election was ended: the last update; the stream ends after it.
    /// Every claim ends with it (no [`Update::Ended`] of its own):
    /// [`Observer::current`] is empty from then on.
    ElectionEnded,
}

/// Records the observer read and ignored, by reason, and heartbeats it used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// Heartbeats read and taken into account.
    pub heartbeats: u64,
    /// Records that are no heartbeat this build reads (a foreign writer's
    /// bytes, a future format version): ignored.
    pub undecodable: u64,
    /// Heartbeats on a partition other than their role's (`role mod
    /// partitions`): ignored, as members ignore them.
    pub misplaced: u64,
}

/// Where the observer's state lives between reads: the sans-IO part, fed
/// reader events and time.
#[derive(Debug, Clone)]
struct Tracker {
    t: Duration,
    partitions: Option<u32>,
    leaders: BTreeMap<u32, LeaderView>,
    log_epoch: u64,
    counters: Counters,
    ended: bool,
}

impl Tracker {
    fn new(t: Duration) -> Tracker {
        Tracker {
            t,
            partitions: None,
            leaders: BTreeMap::new(),
            log_epoch: 0,
            counters: Counters::default(),
            ended: false,
        }
    }

    fn handle(&mut self, now: Time, event: ReaderEvent, out: &mut Vec<Update>) {
        if self.ended {
            return;
        }
        match event {
            ReaderEvent::Reading { partitions } => self.partitions = Some(partitions),
            ReaderEvent::Record(record) => match Heartbeat::decode(&record.payload) {
                Err(_) => self.counters.undecodable += 1,
                Ok(hb) if self.partitions.is_some_and(|n| hb.role % n.max(1) != record.partition) => {
                    self.counters.misplaced += 1;
                }
                Ok(hb) => {
                    self.counters.heartbeats += 1;
                    self.heartbeat(now, hb, out);
                }
            },
            ReaderEvent::LogLost => {
                self.log_epoch += 1;
                for view in self.leaders.values_mut() {
                    view.log_epoch = self.log_epoch;
                }
                out.push(Update::LogLost { log_epoch: self.log_epoch });
            }
            ReaderEvent::ElectionEnded => {
                // Nobody leads an ended election; `neli watch` prints the end only.
                self.leaders.clear();
                self.ended = true;
                out.push(Update::ElectionEnded);
            }
        }
    }

    fn heartbeat(&mut self, now: Time, hb: Heartbeat, out: &mut Vec<Update>) {
        let role = hb.role;
        let Some(token) = hb.lease else {
            if self.leaders.get(&role).is_some_and(|v| v.member == hb.name) {
                let view = self.leaders.remove(&role).expect("checked above");
                out.push(Update::Ended { view, reason: EndReason::Released });
            }
            return;
        };
        let lease_end = hb.sent_at + self.t;
        if let Some(view) = self.leaders.get_mut(&role)
            && view.member == hb.name
            && view.token == token
        {
            view.term = hb.term;
            view.sent_at = hb.sent_at;
            view.lease_end = lease_end;
            view.last_seen = now;
            return;
        }
        if let Some(view) = self.leaders.remove(&role) {
            out.push(Update::Ended { view, reason: EndReason::Superseded });
        }
        let view = LeaderView {
            role,
            member: hb.name,
            token,
            log_epoch: self.log_epoch,
            term: hb.term,
            sent_at: hb.sent_at,
            lease_end,
            since: now,
            last_seen: now,
        };
        self.leaders.insert(role, view.clone());
        out.push(Update::Acquired(view));
    }

    /// Ends the claims nothing renewed for T.
    fn expire(&mut self, now: Time, out: &mut Vec<Update>) {
        let silent: Vec<u32> = self.leaders.values().filter(|v| !v.is_live_at(now)).map(|v| v.role).collect();
        for role in silent {
            if let Some(view) = self.leaders.remove(&role) {
                out.push(Update::Ended { view, reason: EndReason::Silent });
            }
        }
    }

    fn next_expiry(&self) -> Option<Time> {
        self.leaders.values().map(LeaderView::expires_at).min()
    }
}

/// What the observer task publishes for the handle.
#[derive(Debug, Clone, Default)]
struct Snapshot {
    leaders: BTreeMap<u32, LeaderView>,
    log_epoch: u64,
    counters: Counters,
    partitions: Option<u32>,
}

type Now = Arc<dyn Fn() -> Time + Send + Sync>;

struct Shared {
    snapshot: Mutex<Snapshot>,
    /// `None` once the observer finished: new subscribers get an ended stream.
    subscribers: Mutex<Option<Vec<mpsc::UnboundedSender<Update>>>>,
    end: Mutex<Option<Result<Outcome, Error>>>,
    now: Now,
}

impl Shared {
    fn snapshot(&self) -> Snapshot {
        self.snapshot.lock().expect("observer snapshot lock").clone()
    }

    /// The snapshot first, then the updates: a subscriber that reads an
    /// update and asks [`Observer::current`] sees it there.
    fn publish(&self, tracker: &Tracker, updates: Vec<Update>) {
        *self.snapshot.lock().expect("observer snapshot lock") = Snapshot {
            leaders: tracker.leaders.clone(),
            log_epoch: tracker.log_epoch,
            counters: tracker.counters,
            partitions: tracker.partitions,
        };
        if updates.is_empty() {
            return;
        }
        if let Some(subscribers) = self.subscribers.lock().expect("observer subscribers lock").as_mut() {
            for update in updates {
                subscribers.retain(|tx| tx.send(update.clone()).is_ok());
            }
        }
    }

    /// Records how the observer ended and ends every update stream.
    fn finish(&self, end: Result<Outcome, Error>) {
        self.end.lock().expect("observer end lock").get_or_insert(end);
        self.subscribers.lock().expect("observer subscribers lock").take();
    }
}

/// How long the observer waits after a retriable reader error.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// Follows an election without joining it and reports who leads each role.
/// See the [module docs](self) for an example.
///
/// The observer runs on a task of its own (so [`Observer::new`] needs a
/// tokio runtime); the handle reads what it published. Dropping the handle
/// stops the task, which closes the reader.
pub struct Observer {
    shared: Arc<Shared>,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Observer {
    /// Starts following the election `config` describes through `reader`,
    /// timing claims on `clock`. Only the lease length T
    /// (`heartbeat_timeout`) matters here: the roles are those the
    /// heartbeats name. Refuses a configuration members would refuse.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (it spawns the observer's task).
    pub fn new<R: TopicReader, C: Clock>(config: &Config, reader: R, clock: C) -> Result<Observer, Error> {
        let cfg = config.resolve()?;
        let now: Now = {
            let clock = clock.clone();
            Arc::new(move || clock.now())
        };
        let shared = Arc::new(Shared {
            snapshot: Mutex::new(Snapshot::default()),
            subscribers: Mutex::new(Some(Vec::new())),
            end: Mutex::new(None),
            now,
        });
        let cancel = CancellationToken::new();
        let tracker = Tracker::new(cfg.heartbeat_timeout);
        let task = tokio::spawn(run(reader, clock, tracker, shared.clone(), cancel.clone()));
        Ok(Observer { shared, cancel, task: Some(task) })
    }

    /// Every role's leader the observer reports now: claims read from
    /// heartbeats and not yet ended ([`LeaderView::is_live_at`] the
    /// observer's clock now), by role.
    pub fn current(&self) -> BTreeMap<u32, LeaderView> {
        let now = (self.shared.now)();
        let mut leaders = self.shared.snapshot().leaders;
        leaders.retain(|_, v| v.is_live_at(now));
        leaders
    }

    /// The leader of `role` the observer reports now, if any.
    pub fn leader(&self, role: u32) -> Option<LeaderView> {
        self.current().remove(&role)
    }

    /// Every update from now on, in order; the stream ends when the
    /// observer does (election ended, closed, or a fatal error: see
    /// [`Observer::end`]). Unbounded: nothing is dropped.
    pub fn updates(&self) -> UnboundedReceiverStream<Update> {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Some(subscribers) = self.shared.subscribers.lock().expect("observer subscribers lock").as_mut() {
            subscribers.push(tx);
        }
        UnboundedReceiverStream::new(rx)
    }

    /// How many times the observer saw the election log lost since it
    /// started (see [`LeaderView::log_epoch`]).
    pub fn log_epoch(&self) -> u64 {
        self.shared.snapshot().log_epoch
    }

    /// Heartbeats used and records ignored so far.
    pub fn counters(&self) -> Counters {
        self.shared.snapshot().counters
    }

    /// The election topic's partition count once the reader reads it
    /// (`None` before: the topic was not found yet).
    pub fn partitions(&self) -> Option<u32> {
        self.shared.snapshot().partitions
    }

    /// How the observer ended, once it has: `Ok(Outcome::ElectionEnded)`,
    /// `Ok(Outcome::Closed)` (closed or dropped), or the reader's fatal error.
    pub fn end(&self) -> Option<Result<Outcome, Error>> {
        self.shared.end.lock().expect("observer end lock").clone()
    }

    /// Stops following and closes the reader; returns how the observer
    /// ended (`Ok(Outcome::Closed)` unless it had ended before).
    pub async fn close(mut self) -> Result<Outcome, Error> {
        self.cancel.cancel();
        if let Some(task) = self.task.take()
            && let Err(e) = task.await
            && e.is_panic()
        {
            std::panic::resume_unwind(e.into_panic());
        }
        self.end().unwrap_or(Ok(Outcome::Closed))
    }
}

impl Drop for Observer {
    /// Stops the task; it closes the reader on its own.
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer").field("current", &self.current()).field("end", &self.end()).finish()
    }
}

async fn run<R: TopicReader, C: Clock>(
    mut reader: R,
    clock: C,
    mut tracker: Tracker,
    shared: Arc<Shared>,
    cancel: CancellationToken,
) {
    let end = loop {
        let wait = tracker.next_expiry().map_or(tracker.t, |at| at.saturating_since(clock.now()));
        let polled = tokio::select! {
            biased;
            _ = cancel.cancelled() => break Ok(Outcome::Closed),
            polled = reader.poll(wait) => polled,
        };
        let now = clock.now();
        let mut updates = Vec::new();
        match polled {
            Ok(events) => {
                for event in events {
                    tracker.handle(now, event, &mut updates);
                }
            }
            Err(e) if e.is_fatal() => break Err(Error::Broker(e)),
            Err(e) => {
                tracing::debug!(error = %e, "observer: retriable reader error");
                tokio::select! {
                    _ = cancel.cancelled() => break Ok(Outcome::Closed),
                    _ = clock.sleep(RETRY_PAUSE) => {}
                }
            }
        }
        // Heartbeats first: one read at the deadline renews the claim.
        tracker.expire(now, &mut updates);
        shared.publish(&tracker, updates);
        if tracker.ended {
            break Ok(Outcome::ElectionEnded);
        }
    };
    tracing::debug!(?end, "observer stopping");
    // No claim stays reported once nothing reads the topic any more.
    tracker.leaders.clear();
    shared.publish(&tracker, Vec::new());
    shared.finish(end);
    reader.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(1);

    fn hb(role: u32, name: &str, lease: Option<u64>, sent_ms: u64) -> ReaderEvent {
        let hb = Heartbeat {
            role,
            term: 1,
            seq: sent_ms,
            sent_at: Time::from_millis(sent_ms),
            lease: lease.map(Token),
            name: name.into(),
        };
        ReaderEvent::Record(Record { partition: 0, offset: 0, timestamp: None, payload: hb.encode() })
    }

    fn feed(tracker: &mut Tracker, now_ms: u64, events: Vec<ReaderEvent>) -> Vec<Update> {
        let mut out = Vec::new();
        let now = Time::from_millis(now_ms);
        for e in events {
            tracker.handle(now, e, &mut out);
        }
        tracker.expire(now, &mut out);
        out
    }

    fn kinds(updates: &[Update]) -> Vec<String> {
        updates
            .iter()
            .map(|u| match u {
                Update::Acquired(v) => format!("acquired {} {}", v.member, v.token),
                Update::Ended { view, reason } => format!("ended {} {} {reason:?}", view.member, view.token),
                Update::LogLost { log_epoch } => format!("log lost {log_epoch}"),
                Update::ElectionEnded => "election ended".into(),
            })
            .collect()
    }

    #[test]
    fn a_claim_is_reported_once_renewed_silently_and_ended_by_its_holder() {
        let mut t = Tracker::new(T);
        assert!(feed(&mut t, 0, vec![hb(0, "a", None, 100)]).is_empty(), "a candidate claims nothing");
        assert_eq!(kinds(&feed(&mut t, 10, vec![hb(0, "a", Some(7), 200)])), ["acquired a 7"]);
        assert!(feed(&mut t, 20, vec![hb(0, "a", Some(7), 450)]).is_empty(), "a renewal is no update");
        let v = &t.leaders[&0];
        assert_eq!(
            (v.sent_at, v.lease_end, v.since, v.last_seen),
            (Time::from_millis(450), Time::from_millis(1450), Time::from_millis(10), Time::from_millis(20))
        );
        // Another member's non-claiming heartbeat ends nothing.
        assert!(feed(&mut t, 30, vec![hb(0, "b", None, 5)]).is_empty());
        assert_eq!(kinds(&feed(&mut t, 40, vec![hb(0, "a", None, 700)])), ["ended a 7 Released"]);
        assert!(t.leaders.is_empty());
    }

    #[test]
    fn another_claim_supersedes_and_silence_ends_a_claim_after_t_on_the_observers_clock() {
        let mut t = Tracker::new(T);
        feed(&mut t, 0, vec![hb(0, "a", Some(7), 5_000)]);
        assert_eq!(kinds(&feed(&mut t, 10, vec![hb(0, "b", Some(9), 3)])), ["ended a 7 Superseded", "acquired b 9"]);
        assert_eq!(kinds(&feed(&mut t, 20, vec![hb(0, "b", Some(11), 4)])), ["ended b 9 Superseded", "acquired b 11"]);
        assert_eq!(t.next_expiry(), Some(Time::from_millis(1_020)));
        assert!(feed(&mut t, 1_019, vec![]).is_empty());
        assert_eq!(kinds(&feed(&mut t, 1_020, vec![])), ["ended b 11 Silent"]);
        assert_eq!(t.next_expiry(), None);
    }

    #[test]
    fn foreign_and_misplaced_records_are_counted_and_ignored() {
        let mut t = Tracker::new(T);
        let garbage = ReaderEvent::Record(Record { partition: 0, offset: 0, timestamp: None, payload: b"hi".to_vec() });
        // Role 1 of 2 partitions belongs on partition 1; `hb` puts it on 0.
        let misplaced = hb(1, "a", Some(3), 0);
        let out = feed(&mut t, 0, vec![ReaderEvent::Reading { partitions: 2 }, garbage, misplaced]);
        assert!(out.is_empty());
        assert_eq!(t.counters, Counters { heartbeats: 0, undecodable: 1, misplaced: 1 });
        assert_eq!(kinds(&feed(&mut t, 0, vec![hb(0, "a", Some(3), 0)])), ["acquired a 3"]);
        assert_eq!(t.counters.heartbeats, 1);
    }

    #[test]
    fn a_lost_log_moves_every_claim_to_the_new_epoch_and_an_end_clears_them() {
        let mut t = Tracker::new(T);
        feed(&mut t, 0, vec![hb(0, "a", Some(7), 0), hb(1, "b", Some(8), 0)]);
        assert_eq!(kinds(&feed(&mut t, 5, vec![ReaderEvent::LogLost])), ["log lost 1"]);
        assert!(t.leaders.values().all(|v| v.log_epoch == 1));
        // The leader goes on with its term's token on the new log: no change.
        assert!(feed(&mut t, 6, vec![hb(0, "a", Some(7), 10)]).is_empty());
        assert_eq!(
            kinds(&feed(&mut t, 7, vec![ReaderEvent::ElectionEnded, hb(0, "c", Some(1), 0)])),
            ["election ended"]
        );
        assert!(t.leaders.is_empty() && t.ended);
    }
}
