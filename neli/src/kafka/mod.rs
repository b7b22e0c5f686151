//! The production [`Broker`]: Kafka through `rdkafka` (librdkafka).
//!
//! [`connect`] is all most users need:
//!
//! ```no_run
//! # #[tokio::main] async fn main() -> Result<(), neli::Error> {
//! let config = neli::Config::builder().bootstrap_servers("127.0.0.1:9092").group("billing-cron").build()?;
//! let mut neli = neli::kafka::connect(&config).await?;
//! if neli.pulse(std::time::Duration::from_millis(100)).await?.is_leader() { /* lead */ }
//! neli.close().await
//! # }
//! ```
//!
//! Choices worth knowing:
//! - **Topic.** Created when missing (1 partition in exclusive mode, `M` in
//!   multi-role mode) asking for `message.timestamp.type=LogAppendTime`; what
//!   the broker actually keeps is read back ([`KafkaBroker::timestamp_type`])
//!   and logged. It is diagnostic only: the lease is always counted from the
//!   heartbeat's own send time on the member's monotonic clock, because tansu
//!   and the librdkafka mock ignore LogAppendTime and broker time is not
//!   comparable with a monotonic clock anyway (docs/background.md, Protocol semantics).
//! - **Group protocol.** Classic by default, with incremental
//!   `cooperative-sticky` or eager `range` ([`crate::Assignment`],
//!   neli/KAFKA.md); or Kafka 4's consumer protocol
//!   ([`crate::GroupProtocol::Consumer`]: the broker assigns, with `uniform`
//!   or `range`, and sets the session timeout, whose value for the group is
//!   read with DescribeConfigs and logged). Either way a revocation is a
//!   barrier. Our rebalance callback forwards `Revoked` and
//!   blocks librdkafka's poll thread until the driver calls
//!   [`Broker::ack_revoked`], i.e. until the application's Revoked handler
//!   has finished; only then is the partition unassigned. A *lost*
//!   assignment (session timeout, eviction) becomes [`BrokerEvent::Lost`].
//! - **Membership proof.** A synchronous offset commit carrying the
//!   consumer's current generation and member id, which the coordinator
//!   rejects for an evicted member or an old generation. Under eager `range`
//!   librdkafka sends it; under `cooperative-sticky` neli sends it on a
//!   connection of its own (`kafka/wire`, secured like librdkafka's from the
//!   same TLS and SASL properties), so a JoinGroup held
//!   on librdkafka's coordinator connection does not hold the proof back.
//! - **Offsets.** Assignments start at the log end: only fresh heartbeats
//!   matter and a restarted member never replays history.
//! - **Ending.** [`end_election`] first creates an end marker topic
//!   (`<topic>.ended`, [`end_marker_topic`]), waits [`END_GRACE`] and then
//!   deletes the election topic; every member sees the marker in its next
//!   metadata check (every [`TOPIC_CHECK_INTERVAL`]) and stops with
//!   [`BrokerEvent::ElectionEnded`] while the topic still exists. A topic that vanishes *without* a
//!   marker means the broker lost its state (a restart with memory storage):
//!   the member recreates the topic and the election carries on. A member
//!   that creates a missing election topic at startup removes a leftover
//!   marker: a new election begins.
//! - **Observing.** [`observe`] follows an election without joining it
//!   ([`crate::observer`]): a [`KafkaReader`] assigns itself every
//!   partition from the end, never subscribes, and stops on the end marker.
//! - **Bounded close.** All blocking librdkafka work runs on dedicated
//!   threads; `close` waits for them at most as long as the driver's close
//!   timeout lets it, and a hung librdkafka is abandoned, never awaited.

mod client;
mod errors;
pub mod mock;
mod reader;
mod wire;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::{mpsc, oneshot};

use crate::broker::{Broker, BrokerError, BrokerEvent, Membership};
use crate::clock::SystemClock;
use crate::config::{Config, GroupProtocol, ResolvedConfig};
use crate::driver::{Error, Neli};
use crate::observer::Observer;
use crate::secrets::Redactor;
use client::{ElectionContext, ProduceContext, Shared};
pub use errors::classify;
pub use reader::{KafkaReader, WAITING_LOOK, observer_group};

/// How long [`KafkaBroker::new`] waits for the cluster to answer at all.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How often each member checks that the election topic still exists.
pub const TOPIC_CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// How long `end_election` waits between creating the end marker and
/// deleting the topic: members notice the marker within two checks.
pub const END_GRACE: Duration = Duration::from_secs(3);

/// Validates `config`, connects to Kafka (creating the election topic when
/// missing) and joins the election.
pub async fn connect(config: &Config) -> Result<Neli<KafkaBroker, SystemClock>, Error> {
    let broker = KafkaBroker::new(config).await?;
    Neli::new(config, broker, SystemClock::new()).await
}

/// Follows the election `config` describes without joining it: an
/// [`Observer`] reading every partition of the election topic through a
/// [`KafkaReader`] (assigned, never joining a group; it never creates the
/// topic: reading starts once a member has), waiting up to
/// [`DEFAULT_CONNECT_TIMEOUT`] for the cluster to answer. What `neli watch`
/// runs on; [`KafkaReader::connect`] takes another timeout.
///
/// ```no_run
/// use futures::StreamExt;
/// use neli::observer::Update;
///
/// # #[tokio::main] async fn main() -> Result<(), neli::Error> {
/// // The members' configuration, or one with the same servers, group and T.
/// let config = neli::Config::builder().bootstrap_servers("kafka:9092").group("billing-cron").build()?;
/// let observer = neli::kafka::observe(&config).await?;
/// let mut updates = observer.updates();
/// while let Some(update) = updates.next().await {
///     match update {
///         Update::Acquired(l) => {
///             println!("{} leads role {} with token {} (log epoch {})", l.member, l.role, l.token, l.log_epoch)
///         }
///         Update::Ended { view: l, reason } => println!("{} no longer leads role {} ({reason:?})", l.member, l.role),
///         _ => {}
///     }
///     // From any task, at any time: `observer.leader(0)`, `observer.current()`.
/// }
/// # Ok(()) }
/// ```
pub async fn observe(config: &Config) -> Result<Observer, Error> {
    let reader = KafkaReader::connect(config, DEFAULT_CONNECT_TIMEOUT).await?;
    Observer::new(config, reader, SystemClock::new())
}

/// Ends the election: deletes its topic. Every member observes it and stops
/// with `Outcome::ElectionEnded`. Gives up after `timeout`.
pub async fn end_election(config: &Config, timeout: Duration) -> Result<(), Error> {
    let cfg = config.resolve()?;
    let redactor = cfg.redactor();
    let admin = admin_client(&cfg)?;
    reachable(&cfg, timeout).await?;
    let opts = AdminOptions::new().operation_timeout(Some(timeout));
    // The marker goes first: a member that sees the topic gone must be able
    // to tell an ended election from a broker that lost its state.
    let marker = end_marker_topic(&cfg.topic);
    let new = NewTopic::new(&marker, 1, TopicReplication::Fixed(-1));
    let created = tokio::time::timeout(timeout, admin.create_topics([&new], &opts))
        .await
        .map_err(|_| BrokerError::fatal(format!("creating end marker '{marker}' got no answer within {timeout:?}")))?
        .map_err(|e| broker_err(&redactor, "create end marker", &e))?;
    for r in created {
        if let Err((topic, code)) = r
            && code != RDKafkaErrorCode::TopicAlreadyExists
        {
            return Err(BrokerError::fatal(format!("cannot create end marker '{topic}': {code}")).into());
        }
    }
    // Members check for the marker every TOPIC_CHECK_INTERVAL; let them stop
    // before the topic disappears under their fetches.
    tokio::time::sleep(END_GRACE).await;
    let results = tokio::time::timeout(timeout, admin.delete_topics(&[cfg.topic.as_str()], &opts))
        .await
        .map_err(|_| BrokerError::fatal(format!("deleting topic '{}' got no answer within {timeout:?}", cfg.topic)))?
        .map_err(|e| broker_err(&redactor, "delete topic", &e))?;
    for r in results {
        if let Err((topic, code)) = r
            && code != RDKafkaErrorCode::UnknownTopicOrPartition
        {
            return Err(BrokerError::fatal(format!("cannot delete election topic '{topic}': {code}")).into());
        }
    }
    Ok(())
}

/// The topic whose existence marks `topic`'s election as ended.
pub fn end_marker_topic(topic: &str) -> String {
    format!("{topic}.ended")
}

/// The broker's timestamp type for the election topic, as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimestampType {
    /// The broker stamps records as it appends them (what neli asks for).
    LogAppendTime,
    /// Records keep the producer's timestamp.
    CreateTime,
    /// The broker did not say (DescribeConfigs unsupported or failed).
    Unknown,
}

/// The rdkafka implementation of [`Broker`]. See the module docs.
pub struct KafkaBroker {
    topic: String,
    partitions: u32,
    timestamp_type: Arc<Mutex<TimestampType>>,
    consumer: Option<Arc<BaseConsumer<ElectionContext>>>,
    producer: Option<Arc<ThreadedProducer<ProduceContext>>>,
    shared: Arc<Shared>,
    events: mpsc::UnboundedReceiver<Result<BrokerEvent, BrokerError>>,
    acks: std_mpsc::Sender<()>,
    pending_error: Option<BrokerError>,
    poller: Option<JoinHandle<()>>,
    watcher_stop: Arc<AtomicBool>,
    commit_in_flight: Arc<AtomicBool>,
    /// Every librdkafka text in an error passes through it.
    redactor: Arc<Redactor>,
    call_timeout: Duration,
    /// cooperative-sticky: partitions are kept through rebalances, and so is
    /// the membership proof (docs/cooperative-rebalance.md, "Proof").
    incremental: bool,
    /// The proof's own coordinator connection, under cooperative-sticky
    /// with settings it speaks (docs/cooperative-rebalance.md, "One
    /// coordinator connection"); otherwise the proof goes through librdkafka.
    proof: Option<Arc<OwnProof>>,
}

/// What the proof's own connection needs besides the consumer.
struct OwnProof {
    group: String,
    conn: Mutex<wire::ProofConnection>,
    /// Set once the broker turned out unable to take it (no common protocol
    /// version): from then on the proof goes through librdkafka.
    unusable: AtomicBool,
    /// Set at the coordinator's first answer on this connection, which is
    /// logged once (the tests read it: the proof did not fall back).
    answered: AtomicBool,
    /// `security.protocol` as configured (`PLAINTEXT` when unset), for that line.
    protocol: String,
}

/// Clears the in-flight flag when the commit worker finishes (or panics).
struct InFlight(Arc<AtomicBool>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl KafkaBroker {
    /// Connects, ensures the election topic exists and starts the poll
    /// thread. Fails with a fatal error naming the bootstrap servers if the
    /// cluster does not answer within [`DEFAULT_CONNECT_TIMEOUT`].
    pub async fn new(config: &Config) -> Result<KafkaBroker, Error> {
        KafkaBroker::with_connect_timeout(config, DEFAULT_CONNECT_TIMEOUT).await
    }

    /// [`KafkaBroker::new`], waiting up to `connect_timeout` for the
    /// cluster to answer.
    pub async fn with_connect_timeout(config: &Config, connect_timeout: Duration) -> Result<KafkaBroker, Error> {
        let cfg = config.resolve()?;
        let redactor = Arc::new(cfg.redactor());
        let (tx, events) = mpsc::unbounded_channel();
        reachable(&cfg, connect_timeout).await?;
        let partitions = ensure_topic(&cfg, connect_timeout).await?;
        tracing::info!(topic = %cfg.topic, partitions, "election topic ready");
        // Diagnostic only, so it never delays joining (the mock does not
        // answer DescribeConfigs at all).
        let timestamp_type = Arc::new(Mutex::new(TimestampType::Unknown));
        {
            let (cfg, slot) = (cfg.clone(), timestamp_type.clone());
            tokio::spawn(async move {
                let found = read_timestamp_type(&cfg, Duration::from_secs(5)).await;
                tracing::info!(topic = %cfg.topic, timestamp_type = ?found, "broker timestamp type (the lease uses heartbeat send time regardless)");
                *slot.lock().expect("timestamp lock") = found;
            });
        }
        if cfg.group_protocol == GroupProtocol::Consumer {
            let cfg = cfg.clone();
            tokio::spawn(async move {
                let found = read_group_session(&cfg, Duration::from_secs(5)).await;
                report_group_session(&cfg, found);
            });
        }

        let (acks, ack_rx) = std_mpsc::channel();
        let shared = Arc::new(Shared {
            topic: cfg.topic.clone(),
            events: tx.clone(),
            generation: AtomicU64::new(0),
            last_generation: AtomicU64::new(0),
            leaving: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            acks: Mutex::new(Some(ack_rx)),
            outage: AtomicBool::new(false),
            redactor: redactor.clone(),
        });
        let consumer: BaseConsumer<ElectionContext> = consumer_config(&cfg)
            .create_with_context(ElectionContext { shared: shared.clone() })
            .map_err(|e| broker_err(&redactor, "create consumer", &e))?;
        let producer: ThreadedProducer<ProduceContext> = producer_config(&cfg)
            .create_with_context(ProduceContext { events: tx.clone(), redactor: redactor.clone() })
            .map_err(|e| broker_err(&redactor, "create producer", &e))?;
        let consumer = Arc::new(consumer);
        let producer = Arc::new(producer);
        let poller = {
            let (consumer, shared) = (consumer.clone(), shared.clone());
            std::thread::Builder::new()
                .name("neli-kafka-poll".into())
                .spawn(move || client::poll_loop(consumer, shared))
                .map_err(|e| BrokerError::fatal(format!("cannot start the poll thread: {e}")))?
        };
        let watcher_stop = Arc::new(AtomicBool::new(false));
        {
            let (producer, stop, topic) = (producer.clone(), watcher_stop.clone(), cfg.topic.clone());
            let recreate = {
                let (cfg, timeout) = (cfg.clone(), connect_timeout);
                move || recreate_topic(&cfg, timeout)
            };
            std::thread::Builder::new()
                .name("neli-kafka-topic".into())
                .spawn(move || watch_topic(producer, topic, stop, tx, recreate))
                .map_err(|e| BrokerError::fatal(format!("cannot start the topic watcher: {e}")))?;
        }
        let incremental = cfg.core(partitions).incremental;
        // Under the consumer protocol no JoinGroup holds librdkafka's
        // coordinator connection (heartbeats carry the membership), so the
        // proof goes through librdkafka's commit, with the member epoch.
        let proof = own_proof(&cfg, incremental && cfg.group_protocol == GroupProtocol::Classic);
        Ok(KafkaBroker {
            topic: cfg.topic.clone(),
            partitions,
            timestamp_type,
            consumer: Some(consumer),
            producer: Some(producer),
            shared,
            events,
            acks,
            pending_error: None,
            poller: Some(poller),
            watcher_stop,
            commit_in_flight: Arc::new(AtomicBool::new(false)),
            redactor,
            call_timeout: cfg.heartbeat_timeout.max(Duration::from_secs(1)),
            incremental,
            proof,
        })
    }

    /// What the broker keeps as the topic's timestamp type (diagnostic;
    /// `Unknown` until the broker answered, or if it does not).
    pub fn timestamp_type(&self) -> TimestampType {
        self.timestamp_type.lock().expect("timestamp lock").clone()
    }

    fn consumer(&self) -> Result<Arc<BaseConsumer<ElectionContext>>, BrokerError> {
        self.consumer.clone().ok_or_else(|| BrokerError::fatal("the Kafka client is closed"))
    }

    /// Runs blocking librdkafka work off the async runtime, bounded.
    ///
    /// A plain thread, not `spawn_blocking`: some librdkafka calls (a
    /// synchronous commit to a coordinator that never answers) block without
    /// a timeout, and a runtime waits for its blocking tasks when it shuts
    /// down, so one stuck call would hang the whole process on exit.
    async fn blocking<T: Send + 'static>(
        &self,
        what: &str,
        f: impl FnOnce() -> Result<T, BrokerError> + Send + 'static,
    ) -> Result<T, BrokerError> {
        let (tx, rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("neli-kafka-call".into())
            .spawn(move || {
                let _ = tx.send(f());
            })
            .map_err(|e| BrokerError::retriable(format!("{what}: cannot start a worker thread: {e}")))?;
        match tokio::time::timeout(self.call_timeout, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(BrokerError::retriable(format!("{what}: worker failed"))),
            Err(_) => Err(BrokerError::retriable(format!("{what}: no answer within {:?}", self.call_timeout))),
        }
    }
}

impl Broker for KafkaBroker {
    async fn subscribe(&mut self) -> Result<(), BrokerError> {
        self.shared.leaving.store(false, Ordering::SeqCst);
        let (consumer, topic, redactor) = (self.consumer()?, self.topic.clone(), self.redactor.clone());
        self.blocking("subscribe", move || {
            consumer.subscribe(&[topic.as_str()]).map_err(|e| broker_err(&redactor, "subscribe", &e))
        })
        .await
    }

    async fn poll(&mut self, timeout: Duration) -> Result<Vec<BrokerEvent>, BrokerError> {
        if let Some(e) = self.pending_error.take() {
            return Err(e);
        }
        let mut out = Vec::new();
        let first = match tokio::time::timeout(timeout, self.events.recv()).await {
            Ok(Some(item)) => item,
            Ok(None) => return Err(BrokerError::fatal("the Kafka client threads stopped")),
            Err(_) => return Ok(out),
        };
        drain(first, &mut self.events, &mut self.pending_error, &mut out)?;
        Ok(out)
    }

    async fn produce(&mut self, partition: u32, payload: Vec<u8>) -> Result<(), BrokerError> {
        let partition = i32::try_from(partition).map_err(|_| BrokerError::fatal("partition out of range"))?;
        let record: BaseRecord<'_, (), Vec<u8>> = BaseRecord::to(&self.topic).partition(partition).payload(&payload);
        let producer = self.producer.as_ref().ok_or_else(|| BrokerError::fatal("the Kafka client is closed"))?;
        // Enqueue only: delivery is proven by reading the heartbeat back.
        producer.send(record).map_err(|(e, _)| broker_err(&self.redactor, "produce", &e))
    }

    async fn confirm_membership(&mut self, generation: u64) -> Result<Membership, BrokerError> {
        let incremental = self.incremental;
        // What a generation other than the client's current one means: under
        // eager rebalancing the member gave everything back since; under
        // incremental rebalancing a newer one means the client moved on with
        // its partitions (the driver learns of it at its next poll).
        let verdict = move |current: u64| {
            if current == 0 {
                Some(Membership::Rejected)
            } else if current == generation {
                None
            } else if incremental && current > generation {
                Some(Membership::Undetermined)
            } else {
                Some(Membership::Rejected)
            }
        };
        if let Some(v) = verdict(self.shared.generation.load(Ordering::SeqCst)) {
            return Ok(v);
        }
        // At most one commit in flight: a coordinator that never answers must
        // not collect one stuck thread per heartbeat interval.
        if self.commit_in_flight.swap(true, Ordering::SeqCst) {
            return Err(BrokerError::retriable("membership commit: the previous one is still unanswered"));
        }
        let in_flight = InFlight(self.commit_in_flight.clone());
        let (consumer, shared) = (self.consumer()?, self.shared.clone());
        let redactor = self.redactor.clone();
        let (proof, topic) = (self.proof.clone(), self.topic.clone());
        self.blocking("membership commit", move || {
            let _in_flight = in_flight;
            let assignment = consumer.assignment().map_err(|e| broker_err(&redactor, "assignment", &e))?;
            if assignment.count() == 0 {
                return Ok(Membership::Rejected);
            }
            if let Some(v) = verdict(shared.generation.load(Ordering::SeqCst)) {
                return Ok(v);
            }
            let mut offsets = TopicPartitionList::new();
            let positions = consumer.position().unwrap_or_else(|_| assignment.clone());
            for e in assignment.elements() {
                let at = positions
                    .find_partition(e.topic(), e.partition())
                    .and_then(|p| match p.offset() {
                        Offset::Offset(o) => Some(o),
                        _ => None,
                    })
                    .unwrap_or(0);
                let _ = offsets.add_partition_offset(e.topic(), e.partition(), Offset::Offset(at));
            }
            if let Some(proof) = proof.filter(|p| !p.unusable.load(Ordering::SeqCst))
                && let (Some(member_id), Some(wire_generation)) =
                    (client::member_id(&consumer), client::wire_generation(&consumer))
            {
                let answer = own_commit(&proof, &topic, &offsets, wire_generation, &member_id, incremental)?;
                // librdkafka may have moved on (a lost assignment and a new
                // membership) while the commit was out: then the answer is
                // about another membership than the one asked about.
                return Ok(verdict(shared.generation.load(Ordering::SeqCst)).unwrap_or(answer));
            }
            match consumer.commit(&offsets, CommitMode::Sync) {
                Ok(()) => Ok(Membership::Confirmed),
                Err(e) => {
                    match e.rdkafka_error_code().and_then(|c| errors::membership_of_code(c as i32, incremental)) {
                        Some(m) => Ok(m),
                        None => Err(broker_err(&redactor, "membership commit", &e)),
                    }
                }
            }
        })
        .await
    }

    async fn ack_revoked(&mut self, _partitions: &[u32]) -> Result<(), BrokerError> {
        let _ = self.acks.send(());
        Ok(())
    }

    async fn leave(&mut self) -> Result<(), BrokerError> {
        self.shared.leaving.store(true, Ordering::SeqCst);
        let consumer = self.consumer()?;
        self.blocking("leave", move || {
            consumer.unsubscribe();
            Ok(())
        })
        .await
    }

    async fn partition_count(&mut self) -> Result<u32, BrokerError> {
        Ok(self.partitions)
    }

    async fn close(&mut self) -> Result<(), BrokerError> {
        tracing::debug!("closing the kafka client");
        self.shared.closing.store(true, Ordering::SeqCst);
        self.watcher_stop.store(true, Ordering::SeqCst);
        let poller = self.poller.take();
        let consumer = self.consumer.take();
        let producer = self.producer.take();
        let (done_tx, done_rx) = oneshot::channel();
        // A dedicated thread, not `spawn_blocking`: if librdkafka hangs, the
        // driver's close timeout abandons it and the runtime can still shut
        // down. The clients are destroyed there too, after `close` returned.
        let spawned = std::thread::Builder::new().name("neli-kafka-close".into()).spawn(move || {
            if let Some(p) = poller {
                let _ = p.join();
            }
            if let Some(p) = &producer {
                let _ = p.flush(Duration::from_millis(500));
            }
            let _ = done_tx.send(());
            drop(consumer);
            drop(producer);
        });
        if spawned.is_err() {
            return Err(BrokerError::retriable("cannot start the close thread"));
        }
        let _ = done_rx.await;
        tracing::debug!("kafka client closed");
        Ok(())
    }
}

impl Drop for KafkaBroker {
    /// Dropped without `close` (or after an abandoned one): stop the threads
    /// and destroy the clients off the caller's thread, which librdkafka may block.
    fn drop(&mut self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        self.watcher_stop.store(true, Ordering::SeqCst);
        let (consumer, producer, poller) = (self.consumer.take(), self.producer.take(), self.poller.take());
        if consumer.is_some() || producer.is_some() {
            let _ = std::thread::Builder::new().name("neli-kafka-drop".into()).spawn(move || {
                if let Some(p) = poller {
                    let _ = p.join();
                }
                drop(consumer);
                drop(producer);
            });
        }
    }
}

/// The way librdkafka's text becomes a neli error: through the redaction
/// step (neli/KAFKA.md, "Secrets never printed"), since librdkafka echoes the values of
/// properties it rejects.
fn broker_err(redactor: &Redactor, what: &str, e: &KafkaError) -> BrokerError {
    BrokerError { kind: classify(e), message: redactor.redact(&format!("{what}: {e}")) }
}

/// The proof's own connection, where it helps and can be had: under
/// cooperative-sticky (under eager range the member's own rebalance revokes
/// the lease anyway), secured as librdkafka's connections are, from the same
/// client properties. Settings it cannot speak (GSSAPI, OIDC tokens, a key
/// store, …) leave the proof with librdkafka, said at startup by name.
fn own_proof(cfg: &ResolvedConfig, incremental: bool) -> Option<Arc<OwnProof>> {
    if !incremental {
        return None;
    }
    let redactor = Redactor::for_properties(&cfg.kafka_config);
    let security = match wire::Security::from_properties(&cfg.kafka_config) {
        Ok(s) => s,
        Err(why) => {
            tracing::warn!(
                "membership proof goes through librdkafka's coordinator connection: the proof's own connection \
                 cannot match these client properties ({}); the leader's lease may lapse while its own JoinGroup \
                 is held (neli/KAFKA.md, \"TLS and SASL\")",
                redactor.redact(&why)
            );
            return None;
        }
    };
    let bootstrap = cfg.kafka_config.get("bootstrap.servers")?;
    let client_id = format!("neli-proof-{}", cfg.name);
    let timeout = cfg.heartbeat_timeout.max(Duration::from_secs(1));
    Some(Arc::new(OwnProof {
        group: cfg.group_id.clone(),
        conn: Mutex::new(wire::ProofConnection::new(bootstrap, &client_id, timeout, security, redactor)),
        unusable: AtomicBool::new(false),
        answered: AtomicBool::new(false),
        protocol: cfg.kafka_config.get("security.protocol").map_or("PLAINTEXT", |p| p.trim()).to_uppercase(),
    }))
}

/// The membership proof on its own connection: the same commit librdkafka
/// would send, answered by the coordinator even while this member's JoinGroup
/// is held on librdkafka's connection.
fn own_commit(
    proof: &OwnProof,
    topic: &str,
    offsets: &TopicPartitionList,
    generation: i32,
    member_id: &str,
    incremental: bool,
) -> Result<Membership, BrokerError> {
    let offsets: Vec<(i32, i64)> = offsets
        .elements()
        .iter()
        .filter(|e| e.topic() == topic)
        .map(|e| (e.partition(), e.offset().to_raw().unwrap_or(0)))
        .collect();
    let mut conn = proof.conn.lock().expect("proof connection lock");
    let commit = wire::Commit { group: &proof.group, generation, member_id, topic, offsets: &offsets };
    let mut answer = conn.commit(&commit);
    tracing::trace!(generation, member_id, ?answer, "membership commit on the proof's own connection");
    if incremental && matches!(answer, Ok(wire::code::ILLEGAL_GENERATION)) {
        // The group may have formed its next generation with this member in
        // it while librdkafka still waits for the join answer (tansu holds
        // a member's JoinGroup after the group formed). A commit accepted
        // for that generation proves membership just as well: the check is
        // member known and generation current (docs/cooperative-rebalance.md,
        // "One coordinator connection"). Otherwise the first answer stands.
        let next = wire::Commit { generation: generation.saturating_add(1), ..commit };
        let probe = conn.commit(&next);
        tracing::trace!(generation = next.generation, member_id, answer = ?probe, "membership commit for the next generation");
        if matches!(probe, Ok(wire::code::NONE)) {
            answer = probe;
        }
    }
    drop(conn);
    if answer.is_ok() && !proof.answered.swap(true, Ordering::SeqCst) {
        tracing::info!(
            security.protocol = %proof.protocol,
            "membership proof: the group coordinator answers on the proof's own connection"
        );
    }
    match answer {
        Ok(code) => errors::membership_of_answer(code, incremental),
        Err(e) if e.is_permanent() => {
            // The broker cannot take this client (no common version) or
            // refuses its TLS or SASL credentials: the same settings would
            // meet the same answer. (The error text is already redacted.)
            proof.unusable.store(true, Ordering::SeqCst);
            tracing::warn!(error = %e, "the membership proof's own connection cannot be used; it goes through librdkafka from now on");
            Err(BrokerError::retriable(format!("membership commit: {e}")))
        }
        Err(e) => Err(BrokerError::retriable(format!("membership commit (own connection): {e}"))),
    }
}

/// The user's client properties plus the election's forced ones.
fn base_config(cfg: &ResolvedConfig) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set_log_level(client::librdkafka_log_level());
    for (k, v) in &cfg.kafka_config {
        c.set(k, v);
    }
    if !cfg.kafka_config.contains_key("reconnect.backoff.max.ms") {
        // librdkafka backs off up to 10 s between reconnects; a member must
        // try again well within its session to be back in the group soon
        // after a broker restart (neli/KAFKA.md, "Broker restart with state loss").
        let cap = (cfg.session_timeout.as_millis() / 2).clamp(100, 10_000);
        c.set("reconnect.backoff.max.ms", cap.to_string());
    }
    if !cfg.kafka_config.contains_key("allow.auto.create.topics") {
        // A metadata check must never resurrect a deleted election.
        c.set("allow.auto.create.topics", "false");
    }
    c
}

fn consumer_config(cfg: &ResolvedConfig) -> ClientConfig {
    let mut c = base_config(cfg);
    c.set("group.id", &cfg.group_id)
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "latest")
        .set("enable.partition.eof", "false")
        .set("group.protocol", cfg.group_protocol.name());
    if cfg.group_protocol == GroupProtocol::Consumer {
        // The broker assigns; both of its assignors are incremental. The
        // session timeout and heartbeat interval are the broker's too
        // (librdkafka refuses the client properties: config validation
        // refused them first, by name).
        let assignor = match cfg.assignment {
            crate::config::Assignment::CooperativeSticky => "uniform",
            crate::config::Assignment::Range => "range",
        };
        c.set("group.remote.assignor", assignor);
    } else {
        c.set("partition.assignment.strategy", cfg.assignment.name());
    }
    if cfg.group_protocol == GroupProtocol::Classic && !cfg.kafka_config.contains_key("heartbeat.interval.ms") {
        // librdkafka's 3 s default would get members with short sessions
        // evicted; a shorter interval also makes survivors notice a
        // rebalance (and so a failover) sooner.
        let hb = crate::config::group_heartbeat_interval(cfg.session_timeout);
        c.set("heartbeat.interval.ms", hb.as_millis().to_string());
    }
    if !cfg.kafka_config.contains_key("fetch.wait.max.ms") {
        // Brokers that do not wake a waiting fetch when data arrives (the
        // librdkafka mock; 500 ms by default) would delay every heartbeat's
        // read-back by this much, eating into (or exceeding) the lease T.
        let wait = (cfg.heartbeat_timeout.as_millis() / 10).clamp(10, 100);
        c.set("fetch.wait.max.ms", wait.to_string());
    }
    if !cfg.kafka_config.contains_key("client.id") {
        c.set("client.id", format!("neli-{}", cfg.name));
    }
    c
}

fn producer_config(cfg: &ResolvedConfig) -> ClientConfig {
    let mut c = base_config(cfg);
    for consumer_only in ["session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"] {
        c.remove(consumer_only);
    }
    c.set("linger.ms", "0");
    c
}

/// A helper client's context: its librdkafka logs and errors go through
/// the redaction step too (rdkafka's default context would hand them to the
/// `log` crate as they are).
fn helper_context(cfg: &ResolvedConfig) -> client::ProbeContext {
    client::ProbeContext::new(Arc::new(cfg.redactor()))
}

fn admin_client(cfg: &ResolvedConfig) -> Result<AdminClient<client::ProbeContext>, BrokerError> {
    producer_config(cfg)
        .create_with_context(helper_context(cfg))
        .map_err(|e| broker_err(&cfg.redactor(), "create admin client", &e))
}

/// Fails fast with a clear message if nobody answers at the bootstrap
/// servers, and at once, with librdkafka's reason, if the cluster answers
/// but refuses this client (a TLS certificate that does not verify, failed
/// SASL authentication): retrying cannot fix a configuration.
async fn reachable(cfg: &ResolvedConfig, timeout: Duration) -> Result<(), BrokerError> {
    let servers = cfg.kafka_config.get("bootstrap.servers").cloned().unwrap_or_default();
    if servers.trim().is_empty() {
        return Err(BrokerError::fatal("bootstrap.servers is not set"));
    }
    let redactor = Arc::new(cfg.redactor());
    // librdkafka checks every property when a client is created, before
    // anything connects: a bad consumer property is reported now, not as an
    // unreachable cluster after the connect timeout (the probe below is a
    // producer, which only warns about consumer properties).
    let _checked: BaseConsumer =
        consumer_config(cfg).create().map_err(|e| broker_err(&redactor, "check the client properties", &e))?;
    let producer: rdkafka::producer::BaseProducer<client::ProbeContext> = producer_config(cfg)
        .create_with_context(client::ProbeContext::new(redactor.clone()))
        .map_err(|e| broker_err(&redactor, "create client", &e))?;
    let found = tokio::task::spawn_blocking(move || client::probe(&producer, timeout))
        .await
        .map_err(|e| BrokerError::fatal(format!("metadata worker failed: {e}")))?;
    match found {
        client::Probe::Answered => Ok(()),
        client::Probe::Refused(why) => {
            Err(BrokerError::fatal(format!("cannot connect securely to the Kafka cluster at '{servers}': {why}")))
        }
        client::Probe::NoAnswer { error, last } => {
            let last = last.map(|l| format!("; last client error: {l}")).unwrap_or_default();
            Err(BrokerError::fatal(format!(
                "cannot reach the Kafka cluster at '{servers}' within {timeout:?}: {error}{last}"
            )))
        }
    }
}

/// Partition count of the election topic, creating it when missing.
async fn ensure_topic(cfg: &ResolvedConfig, timeout: Duration) -> Result<u32, BrokerError> {
    if let Some(n) = topic_partitions(cfg, timeout).await? {
        return Ok(n);
    }
    let admin = admin_client(cfg)?;
    remove_end_marker(&admin, cfg, timeout).await;
    let partitions = i32::try_from(cfg.mode.partitions()).unwrap_or(i32::MAX);
    let opts = AdminOptions::new().operation_timeout(Some(timeout)).request_timeout(Some(timeout));
    for replication in [-1, 1] {
        let topic = NewTopic::new(&cfg.topic, partitions, TopicReplication::Fixed(replication))
            .set("message.timestamp.type", "LogAppendTime");
        let results =
            admin.create_topics([&topic], &opts).await.map_err(|e| broker_err(&cfg.redactor(), "create topic", &e))?;
        match results.into_iter().next() {
            Some(Ok(_)) | Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) | None => break,
            // Older brokers do not know "-1 = broker default".
            Some(Err((_, RDKafkaErrorCode::InvalidReplicationFactor))) if replication == -1 => {
                continue;
            }
            Some(Err((topic, code))) => {
                return Err(BrokerError {
                    kind: kind_of(code),
                    message: format!("cannot create topic '{topic}': {code}"),
                });
            }
        }
    }
    // Creation propagates asynchronously; wait until metadata shows it.
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(n) = topic_partitions(cfg, timeout).await? {
            return Ok(n);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(BrokerError::retriable(format!(
                "topic '{}' was created but is not visible after {timeout:?}",
                cfg.topic
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn kind_of(code: RDKafkaErrorCode) -> crate::broker::ErrorKind {
    if errors::is_fatal_code(code) { crate::broker::ErrorKind::Fatal } else { crate::broker::ErrorKind::Retriable }
}

/// Best effort: a new election on a missing topic clears an old end marker.
async fn remove_end_marker(admin: &AdminClient<client::ProbeContext>, cfg: &ResolvedConfig, timeout: Duration) {
    let marker = end_marker_topic(&cfg.topic);
    let opts = AdminOptions::new().operation_timeout(Some(timeout));
    match tokio::time::timeout(timeout, admin.delete_topics(&[marker.as_str()], &opts)).await {
        Ok(Ok(results)) => {
            if results.iter().any(|r| r.is_ok()) {
                tracing::info!(%marker, "removed the end marker of an earlier election");
            }
        }
        Ok(Err(e)) => {
            tracing::debug!(%marker, error = %cfg.redactor().redact(&e.to_string()), "could not remove end marker")
        }
        Err(_) => tracing::debug!(%marker, "removing end marker timed out"),
    }
}

async fn topic_partitions(cfg: &ResolvedConfig, timeout: Duration) -> Result<Option<u32>, BrokerError> {
    let producer: rdkafka::producer::BaseProducer<client::ProbeContext> = producer_config(cfg)
        .create_with_context(helper_context(cfg))
        .map_err(|e| broker_err(&cfg.redactor(), "create client", &e))?;
    let (topic, redactor) = (cfg.topic.clone(), cfg.redactor());
    tokio::task::spawn_blocking(move || {
        let md = producer
            .client()
            .fetch_metadata(Some(&topic), timeout)
            .map_err(|e| broker_err(&redactor, "metadata", &e))?;
        Ok(md.topics().iter().find(|t| t.name() == topic && t.error().is_none()).map(|t| t.partitions().len() as u32))
    })
    .await
    .map_err(|e| BrokerError::fatal(format!("metadata worker failed: {e}")))?
    .map(|n| n.filter(|n| *n > 0))
}

async fn read_timestamp_type(cfg: &ResolvedConfig, timeout: Duration) -> TimestampType {
    let Ok(admin) = admin_client(cfg) else {
        return TimestampType::Unknown;
    };
    let opts = AdminOptions::new().request_timeout(Some(timeout));
    let Ok(Ok(results)) =
        tokio::time::timeout(timeout, admin.describe_configs([&ResourceSpecifier::Topic(&cfg.topic)], &opts)).await
    else {
        return TimestampType::Unknown;
    };
    let value = results
        .into_iter()
        .flatten()
        .flat_map(|r| r.entries.into_iter())
        .find(|e| e.name == "message.timestamp.type")
        .and_then(|e| e.value);
    match value.as_deref() {
        Some("LogAppendTime") => TimestampType::LogAppendTime,
        Some("CreateTime") => TimestampType::CreateTime,
        _ => TimestampType::Unknown,
    }
}

/// What the broker says of the election group's session under the consumer
/// protocol: its `consumer.session.timeout.ms` and
/// `consumer.heartbeat.interval.ms` (group configs since Kafka 4.0; their
/// value is the broker's default unless set for the group). `None` where the
/// broker does not answer DescribeConfigs for groups (older brokers, the
/// librdkafka mock, tansu).
async fn read_group_session(cfg: &ResolvedConfig, timeout: Duration) -> Option<GroupSession> {
    let admin = admin_client(cfg).ok()?;
    let opts = AdminOptions::new().request_timeout(Some(timeout));
    let spec = ResourceSpecifier::Group(&cfg.group_id);
    let results = tokio::time::timeout(timeout, admin.describe_configs([&spec], &opts)).await.ok()?.ok()?;
    let entries: Vec<_> = results.into_iter().flatten().flat_map(|r| r.entries.into_iter()).collect();
    let ms = |name: &str| {
        entries
            .iter()
            .find(|e| e.name == name)
            .and_then(|e| e.value.as_deref())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_millis)
    };
    let found = GroupSession {
        session_timeout: ms("consumer.session.timeout.ms"),
        heartbeat_interval: ms("consumer.heartbeat.interval.ms"),
    };
    (found.session_timeout.is_some() || found.heartbeat_interval.is_some()).then_some(found)
}

/// The consumer-protocol group session as the broker reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GroupSession {
    session_timeout: Option<Duration>,
    heartbeat_interval: Option<Duration>,
}

/// Logs what the broker said of the group's session against what neli
/// assumed: the bounds `explain` gives rest on S; safety does not (under
/// the consumer protocol it rests on G >= T + 10 %, which validation enforced).
fn report_group_session(cfg: &ResolvedConfig, found: Option<GroupSession>) {
    for line in group_session_report(cfg, found) {
        match line {
            (true, text) => tracing::warn!(group = %cfg.group_id, "{text}"),
            (false, text) => tracing::info!(group = %cfg.group_id, "{text}"),
        }
    }
}

/// The lines [`report_group_session`] logs, each with whether it is a warning.
fn group_session_report(cfg: &ResolvedConfig, found: Option<GroupSession>) -> Vec<(bool, String)> {
    let d = crate::duration::format;
    let assumed = cfg.session_timeout;
    let Some(found) = found else {
        return vec![(
            false,
            format!(
                "consumer group protocol: the broker does not say the group's session timeout (DescribeConfigs on \
                 the group); neli assumes {} (broker_session_timeout / --session-timeout) for its failover bounds",
                d(assumed)
            ),
        )];
    };
    let mut out = Vec::new();
    match found.session_timeout {
        Some(s) if s != assumed => out.push((
            true,
            format!(
                "consumer group protocol: the broker's session timeout for this group is {}, neli assumed {} \
                 (broker_session_timeout / --session-timeout): failover after a crash takes up to S + G + T, with \
                 the broker's S; safety rests on the grace (G >= T + 10%), not on S",
                d(s),
                d(assumed)
            ),
        )),
        Some(s) => {
            out.push((false, format!("consumer group protocol: the broker's session timeout is {}, as assumed", d(s))))
        }
        None => {}
    }
    if let Some(s) = found.session_timeout.filter(|s| *s <= cfg.heartbeat_timeout) {
        out.push((
            true,
            format!(
                "consumer group protocol: the broker's session timeout ({}) is not above the lease T ({}): a leader \
                 whose heartbeats stall is fenced before its lease ends; the grace still keeps the successor out, \
                 but the role changes hands more often than it needs to",
                d(s),
                d(cfg.heartbeat_timeout)
            ),
        ));
    }
    if let Some(hb) = found.heartbeat_interval {
        out.push((false, format!("consumer group protocol: the broker's group heartbeat interval is {}", d(hb))));
    }
    out
}

/// Whether the cluster lists `topic` (None: no answer). Asks for all topics:
/// a metadata request naming a deleted topic crashed librdkafka's metadata
/// parsing against tansu (segfault observed), a full listing does not.
pub fn topic_present<C: rdkafka::client::ClientContext>(
    client: &rdkafka::client::Client<C>,
    topic: &str,
) -> Option<bool> {
    let md = client.fetch_metadata(None, Duration::from_secs(2)).ok()?;
    Some(md.topics().iter().any(|t| t.name() == topic && t.error().is_none()))
}

/// Recreates the election topic after a broker lost its state (runs on the
/// watcher thread, so it gets its own small runtime).
fn recreate_topic(cfg: &ResolvedConfig, timeout: Duration) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "cannot start a runtime to recreate the election topic");
            return;
        }
    };
    match runtime.block_on(ensure_topic(cfg, timeout)) {
        Ok(partitions) => tracing::warn!(topic = %cfg.topic, partitions, "recreated the election topic"),
        Err(e) => tracing::warn!(topic = %cfg.topic, error = %e, "could not recreate the election topic yet"),
    }
}

fn watch_topic(
    producer: Arc<ThreadedProducer<ProduceContext>>,
    topic: String,
    stop: Arc<AtomicBool>,
    events: client::EventTx,
    recreate: impl Fn(),
) {
    let marker = end_marker_topic(&topic);
    let mut watch = crate::log_watch::LogWatch::default();
    while !stop.load(Ordering::SeqCst) {
        let step = Duration::from_millis(50);
        let mut waited = Duration::ZERO;
        while waited < TOPIC_CHECK_INTERVAL && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(step);
            waited += step;
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(md) = producer.client().fetch_metadata(None, Duration::from_secs(2)) else {
            continue;
        };
        let has = |name: &str| md.topics().iter().any(|t| t.name() == name && t.error().is_none());
        if has(&marker) {
            // `end` creates the marker and waits before deleting the topic, so
            // members stop while the topic still exists: a client still
            // fetching a deleted topic can crash (librdkafka 2.12.1 on tansu).
            tracing::info!(%topic, "election ended by `end`");
            let _ = events.send(Ok(BrokerEvent::ElectionEnded));
            return;
        }
        let look = if has(&topic) { crate::log_watch::Look::Present } else { crate::log_watch::Look::Missing };
        let verdict = watch.look(look);
        if verdict.lost {
            // Tokens restart with the log, whoever recreates it.
            let _ = events.send(Ok(BrokerEvent::LogLost));
        }
        if verdict.recreate {
            tracing::warn!(%topic, "election topic vanished without an end marker: the broker lost its state");
            recreate();
        }
    }
}

/// Appends `first` and whatever else is already queued on `events` to
/// `out`. An error with nothing before it is returned at once; one after
/// events waits in `pending` for the next poll, so the events are not lost.
pub(crate) fn drain<T>(
    first: Result<T, BrokerError>,
    events: &mut mpsc::UnboundedReceiver<Result<T, BrokerError>>,
    pending: &mut Option<BrokerError>,
    out: &mut Vec<T>,
) -> Result<(), BrokerError> {
    let mut next = Some(first);
    while let Some(item) = next.take() {
        match item {
            Ok(ev) => out.push(ev),
            Err(e) if out.is_empty() => return Err(e),
            Err(e) => {
                *pending = Some(e);
                break;
            }
        }
        next = events.try_recv().ok();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::{Assignment, GroupProtocol};

    fn resolved(protocol: GroupProtocol, assignment: Assignment) -> ResolvedConfig {
        Config::builder()
            .bootstrap_servers("127.0.0.1:9092")
            .group("g")
            .heartbeat_timeout(Duration::from_secs(1))
            .grace(Duration::from_millis(1100))
            .group_protocol(protocol)
            .assignment(assignment)
            .build()
            .and_then(|c| c.resolve())
            .expect("a valid configuration")
    }

    #[test]
    fn the_consumer_protocol_sets_the_broker_assignor_and_none_of_the_client_group_timings() {
        for (assignment, assignor) in [(Assignment::CooperativeSticky, "uniform"), (Assignment::Range, "range")] {
            let c = consumer_config(&resolved(GroupProtocol::Consumer, assignment));
            assert_eq!(c.get("group.protocol"), Some("consumer"));
            assert_eq!(c.get("group.remote.assignor"), Some(assignor));
            // librdkafka refuses each of these under the consumer protocol.
            for refused in ["session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"] {
                assert_eq!(c.get(refused), None, "{refused}");
            }
        }
        let classic = consumer_config(&resolved(GroupProtocol::Classic, Assignment::CooperativeSticky));
        assert_eq!(classic.get("group.protocol"), Some("classic"));
        assert_eq!(classic.get("partition.assignment.strategy"), Some("cooperative-sticky"));
        assert_eq!(classic.get("session.timeout.ms"), Some("3000"));
        assert_eq!(classic.get("heartbeat.interval.ms"), Some("600"));
        assert_eq!(classic.get("group.remote.assignor"), None);
    }

    #[test]
    fn the_consumer_protocol_creates_a_client_librdkafka_accepts() {
        // librdkafka checks every property when the client is created
        // (nothing connects): a refused one would fail here.
        let c = consumer_config(&resolved(GroupProtocol::Consumer, Assignment::CooperativeSticky));
        let created: Result<BaseConsumer, _> = c.create();
        assert!(created.is_ok(), "{:?}", created.err());
        let mut bad = c.clone();
        bad.set("session.timeout.ms", "6000");
        let refused: Result<BaseConsumer, _> = bad.create();
        let text = refused.err().expect("librdkafka refuses it").to_string();
        assert!(text.contains("session.timeout.ms"), "{text}");
    }

    #[test]
    fn the_group_session_report_warns_where_the_broker_differs_from_the_assumption() {
        let cfg = resolved(GroupProtocol::Consumer, Assignment::CooperativeSticky);
        let unknown = group_session_report(&cfg, None);
        assert_eq!(unknown.len(), 1);
        assert!(!unknown[0].0 && unknown[0].1.contains("neli assumes 45s"), "{unknown:?}");
        let same = GroupSession { session_timeout: Some(Duration::from_secs(45)), heartbeat_interval: None };
        let lines = group_session_report(&cfg, Some(same));
        assert_eq!(
            lines,
            vec![(false, "consumer group protocol: the broker's session timeout is 45s, as assumed".into())]
        );
        let short = GroupSession {
            session_timeout: Some(Duration::from_millis(800)),
            heartbeat_interval: Some(Duration::from_millis(200)),
        };
        let lines = group_session_report(&cfg, Some(short));
        assert_eq!(lines.iter().filter(|(warn, _)| *warn).count(), 2, "{lines:?}");
        assert!(lines[0].1.contains("is 800ms, neli assumed 45s"), "{lines:?}");
        assert!(lines[1].1.contains("(800ms) is not above the lease T (1s)"), "{lines:?}");
        assert!(lines[2].1.contains("heartbeat interval is 200ms"), "{lines:?}");
    }
}
