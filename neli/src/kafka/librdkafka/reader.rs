//! [`KafkaReader`]: the election topic read as an observer reads it,
//! without joining any group: partitions are assigned, never subscribed.
//! librdkafka assigns partitions only to a consumer with a `group.id` (none
//! fails with "Unknown group"), so the reader names `<group>.watch`, the
//! group `neli watch` always used, and never joins it: no JoinGroup, no
//! offsets committed; the election's own group never hears of it.
//!
//! One dedicated thread owns the consumer. It looks at the cluster's topic
//! list every [`TOPIC_CHECK_INTERVAL`] (every [`WAITING_LOOK`] while it reads
//! nothing), all topics and never one by name (naming a deleted topic
//! crashed librdkafka against tansu), and:
//! - the end marker listed: the election was ended (terminal);
//! - the topic listed: reads every partition from its end (again after it
//!   was gone: the listing refreshed the topic id);
//! - the topic missing: stops fetching it at once (a client fetching a topic
//!   tansu deleted crashes), and reports a lost log by the members' rule
//!   ([`crate::log_watch`]). It never creates or recreates the topic: an
//!   observer takes no part, it waits for a member to do so.
//!
//! When librdkafka reports every broker down it stops fetching too, and
//! starts again at the end once a listing shows the topic: a broker back
//! without its data may list the topic under a new id (neli/KAFKA.md,
//! "Broker restart with state loss").

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::{mpsc, oneshot};

use super::admin::reachable;
use super::settings::base_config;
use super::{broker_err, classify};
use crate::broker::BrokerError;
use crate::config::{Config, ResolvedConfig};
use crate::core::Record;
use crate::driver::Error;
use crate::kafka::{TOPIC_CHECK_INTERVAL, end_marker_topic};
use crate::log_watch::{LogWatch, Look};
use crate::observer::{ReaderEvent, TopicReader};
use crate::secrets::Redactor;

/// How often the reader looks for the topic while it reads nothing (not
/// found yet, gone, or every broker down).
pub const WAITING_LOOK: Duration = Duration::from_millis(250);
/// Bound on one look at the cluster's topic list.
const LOOK_LIMIT: Duration = Duration::from_secs(2);
/// How long one consumer poll waits; bounds how late a stop is noticed.
const POLL_SLICE: Duration = Duration::from_millis(20);

type Tx = mpsc::UnboundedSender<Result<ReaderEvent, BrokerError>>;

/// The Kafka [`TopicReader`]: every partition of the election topic from
/// its end, assigned, never subscribed, so it joins no group and takes no
/// part in the election. [`crate::kafka::observe`] builds one and starts an
/// [`crate::observer::Observer`] on it.
///
/// - **Group id.** librdkafka assigns partitions only to a consumer with a
///   `group.id` (without one, assigning fails with "Unknown group"), so the
///   reader names [`observer_group`] (`<group>.watch`, what `neli watch`
///   always used) and never joins it: no JoinGroup, no offsets committed.
///   With Kafka ACLs, the observer's principal needs Describe on that group
///   (librdkafka looks its coordinator up) and Read on the election topic.
/// - **Topic.** Never created: the reader looks at the cluster's topic list
///   every [`WAITING_LOOK`] until a member created the topic, then every
///   [`crate::kafka::TOPIC_CHECK_INTERVAL`]. Each look asks for all topics, never
///   one by name (naming a deleted topic crashed librdkafka against tansu).
/// - **End, loss, outage.** The end marker listed ends the reader
///   ([`ReaderEvent::ElectionEnded`]). The topic missing stops its fetching at
///   once (a client fetching a topic tansu deleted crashes) and, by the
///   members' rule ([`crate::log_watch`]), reports a lost log; reading starts
///   again at the end once the topic is listed again. librdkafka reporting
///   every broker down stops fetching too, until a look lists the topic
///   (which also refreshes its topic id).
pub struct KafkaReader {
    events: mpsc::UnboundedReceiver<Result<ReaderEvent, BrokerError>>,
    pending_error: Option<BrokerError>,
    stop: Arc<AtomicBool>,
    stopped: Option<oneshot::Receiver<()>>,
}

impl KafkaReader {
    /// Checks that the cluster answers (within `connect_timeout`; a
    /// configuration it refuses, such as a failed TLS handshake, fails at
    /// once) and starts reading. The topic need not exist yet: reading
    /// starts when it appears ([`ReaderEvent::Reading`]).
    pub async fn connect(config: &Config, connect_timeout: Duration) -> Result<KafkaReader, Error> {
        let cfg = config.resolve()?;
        reachable(&cfg, connect_timeout).await?;
        let redactor = Arc::new(cfg.redactor());
        let (tx, events) = mpsc::unbounded_channel();
        let outage = Arc::new(AtomicBool::new(false));
        let context = ReaderContext { redactor: redactor.clone(), events: tx.clone(), outage: outage.clone() };
        let consumer: BaseConsumer<ReaderContext> = reader_config(&cfg)
            .create_with_context(context)
            .map_err(|e| broker_err(&redactor, "create the observer's client", &e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let (done, stopped) = oneshot::channel();
        let mut follow = Follow {
            consumer,
            topic: cfg.topic.clone(),
            marker: end_marker_topic(&cfg.topic),
            events: tx,
            outage,
            watch: LogWatch::default(),
            reading: None,
            seen: false,
        };
        {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("neli-kafka-observe".into())
                .spawn(move || {
                    follow.run(&stop);
                    // Told before the client is destroyed (librdkafka may
                    // take its time): close never waits for that.
                    let _ = done.send(());
                    drop(follow);
                })
                .map_err(|e| BrokerError::fatal(format!("cannot start the observer's thread: {e}")))?;
        }
        tracing::debug!(topic = %cfg.topic, "observer reading without a consumer group");
        Ok(KafkaReader { events, pending_error: None, stop, stopped: Some(stopped) })
    }
}

impl TopicReader for KafkaReader {
    async fn poll(&mut self, timeout: Duration) -> Result<Vec<ReaderEvent>, BrokerError> {
        if let Some(e) = self.pending_error.take() {
            return Err(e);
        }
        let first = match tokio::time::timeout(timeout, self.events.recv()).await {
            Ok(Some(item)) => item,
            Ok(None) => return Err(BrokerError::fatal("the observer's Kafka thread stopped")),
            Err(_) => return Ok(Vec::new()),
        };
        let mut out = Vec::new();
        super::drain(first, &mut self.events, &mut self.pending_error, &mut out)?;
        Ok(out)
    }

    async fn close(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(stopped) = self.stopped.take() {
            // The thread notices within one poll slice or one look; a hung
            // librdkafka is abandoned after that.
            let _ = tokio::time::timeout(LOOK_LIMIT + Duration::from_secs(1), stopped).await;
        }
    }
}

impl Drop for KafkaReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The group id a [`KafkaReader`] names and never joins: `<group>.watch`.
pub fn observer_group(group: &str) -> String {
    format!("{group}.watch")
}

/// The user's client properties, without the membership's: a group id that
/// is never joined, nothing committed.
fn reader_config(cfg: &ResolvedConfig) -> ClientConfig {
    let mut c = base_config(cfg);
    for group_only in ["session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"] {
        c.remove(group_only);
    }
    c.set("group.id", observer_group(&cfg.group_id))
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "false")
        .set("auto.offset.reset", "latest");
    if !cfg.kafka_config.contains_key("fetch.wait.max.ms") {
        // As for members: a broker that does not wake a waiting fetch would
        // otherwise delay every heartbeat by 500 ms.
        let wait = crate::config::read_back_wait(cfg.heartbeat_timeout);
        c.set("fetch.wait.max.ms", wait.as_millis().to_string());
    }
    if !cfg.kafka_config.contains_key("client.id") {
        c.set("client.id", format!("neli-observer-{}", cfg.name));
    }
    c
}

/// The reader's client context: librdkafka's logs and errors redacted, an
/// outage of every broker noted, fatal errors forwarded.
struct ReaderContext {
    redactor: Arc<Redactor>,
    events: Tx,
    outage: Arc<AtomicBool>,
}

impl ClientContext for ReaderContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        super::client::log_librdkafka(&self.redactor, level, fac, log_message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::AllBrokersDown) {
            self.outage.store(true, Ordering::SeqCst);
        }
        let e = BrokerError { kind: classify(&error), message: self.redactor.redact(&format!("{error}: {reason}")) };
        if e.is_fatal() {
            let _ = self.events.send(Err(e));
        } else {
            tracing::debug!(error = %e.message, "observer: librdkafka client error");
        }
    }
}

impl ConsumerContext for ReaderContext {}

/// The reader thread's state.
struct Follow {
    consumer: BaseConsumer<ReaderContext>,
    topic: String,
    marker: String,
    events: Tx,
    outage: Arc<AtomicBool>,
    watch: LogWatch,
    /// The partition count while reading (assigned), `None` while not.
    reading: Option<u32>,
    /// The topic was listed at least once: a topic not created yet is no
    /// lost log.
    seen: bool,
}

/// What one look found.
enum Found {
    Ended,
    Other,
}

impl Follow {
    fn run(&mut self, stop: &AtomicBool) {
        let mut next_look = Instant::now();
        while !stop.load(Ordering::SeqCst) {
            if self.outage.swap(false, Ordering::SeqCst) && self.reading.is_some() {
                tracing::info!(topic = %self.topic, "observer: every broker is down; reading again once the topic is listed");
                self.stop_reading();
                next_look = Instant::now() + WAITING_LOOK;
            }
            if Instant::now() >= next_look {
                if let Found::Ended = self.look() {
                    tracing::info!(topic = %self.topic, "observer: the election was ended");
                    self.stop_reading();
                    let _ = self.events.send(Ok(ReaderEvent::ElectionEnded));
                    return;
                }
                let every = if self.reading.is_some() { TOPIC_CHECK_INTERVAL } else { WAITING_LOOK };
                next_look = Instant::now() + every;
            }
            if self.reading.is_none() {
                std::thread::sleep(POLL_SLICE);
                continue;
            }
            match self.consumer.poll(POLL_SLICE) {
                None => {}
                Some(Ok(m)) => {
                    if m.topic() != self.topic {
                        continue;
                    }
                    let (Ok(partition), Ok(offset)) = (u32::try_from(m.partition()), u64::try_from(m.offset())) else {
                        continue;
                    };
                    let record = Record {
                        partition,
                        offset,
                        timestamp: m.timestamp().to_millis().and_then(|t| u64::try_from(t).ok()),
                        payload: m.payload().unwrap_or_default().to_vec(),
                    };
                    let _ = self.events.send(Ok(ReaderEvent::Record(record)));
                }
                Some(Err(e)) => {
                    let e = BrokerError {
                        kind: classify(&e),
                        message: self.consumer.context().redactor.redact(&format!("observer: {e}")),
                    };
                    if e.is_fatal() {
                        let _ = self.events.send(Err(e));
                    } else {
                        tracing::debug!(error = %e.message, "observer: consumer error");
                    }
                }
            }
        }
        self.stop_reading();
    }

    /// One look at the cluster's topic list (all topics: it also refreshes
    /// the client's topic ids).
    fn look(&mut self) -> Found {
        let md = match self.consumer.client().fetch_metadata(None, LOOK_LIMIT) {
            Ok(md) => md,
            Err(e) => {
                let text = self.consumer.context().redactor.redact(&e.to_string());
                tracing::debug!(error = %text, "observer: metadata request failed");
                return Found::Other;
            }
        };
        let listed = |name: &str| md.topics().iter().find(|t| t.name() == name && t.error().is_none());
        // The same signal members stop on: `neli end` creates the marker
        // before it deletes the topic.
        if listed(&self.marker).is_some() {
            return Found::Ended;
        }
        match listed(&self.topic).map(|t| t.partitions().len()).filter(|n| *n > 0) {
            Some(n) => {
                self.seen = true;
                self.watch.look(Look::Present);
                if self.reading.is_none() {
                    let partitions = u32::try_from(n).unwrap_or(u32::MAX);
                    self.start_reading(partitions);
                }
            }
            None => {
                // Never fetch a topic that is gone.
                self.stop_reading();
                if self.seen && self.watch.look(Look::Missing).lost {
                    tracing::warn!(topic = %self.topic, "observer: the election log was lost (the topic vanished without an end marker)");
                    let _ = self.events.send(Ok(ReaderEvent::LogLost));
                }
            }
        }
        Found::Other
    }

    fn start_reading(&mut self, partitions: u32) {
        let mut tpl = TopicPartitionList::new();
        for p in 0..partitions {
            if let Ok(p) = i32::try_from(p) {
                let _ = tpl.add_partition_offset(&self.topic, p, Offset::End);
            }
        }
        match self.consumer.assign(&tpl) {
            Ok(()) => {
                self.reading = Some(partitions);
                tracing::debug!(topic = %self.topic, partitions, "observer: reading every partition from its end");
                let _ = self.events.send(Ok(ReaderEvent::Reading { partitions }));
            }
            Err(e) => {
                let text = self.consumer.context().redactor.redact(&e.to_string());
                tracing::debug!(error = %text, "observer: assign failed; trying again at the next look");
            }
        }
    }

    fn stop_reading(&mut self) {
        if self.reading.take().is_some() {
            let _ = self.consumer.unassign();
        }
    }
}
