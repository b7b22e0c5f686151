//! [`KafkaBroker`]: the election's [`Broker`] on librdkafka (through
//! `rdkafka`): the client threads (`client`), its settings (`settings`),
//! admin calls and topic checks (`admin`), the membership proof on neli's
//! own connection where it helps (`proof`), error classes (`errors`), and
//! the observer's [`KafkaReader`] (`reader`). See [`crate::kafka`] for the
//! choices.

mod admin;
mod client;
mod errors;
mod proof;
mod reader;
mod settings;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::{mpsc, oneshot};

use crate::broker::{Broker, BrokerError, BrokerEvent, Membership};
use crate::config::{Config, GroupProtocol, ResolvedConfig};
use crate::driver::Error;
use crate::kafka::DEFAULT_CONNECT_TIMEOUT;
use crate::secrets::Redactor;
pub(crate) use admin::reachable;
pub use admin::topic_present;
use admin::{ensure_topic, read_group_session, read_timestamp_type, recreate_topic, report_group_session, watch_topic};
use client::{ElectionContext, ProduceContext, Shared};
pub use errors::classify;
use proof::{InFlight, OwnProof, own_commit, own_proof};
pub use reader::{KafkaReader, WAITING_LOOK, observer_group};
pub(crate) use settings::admin_client;
use settings::{consumer_config, producer_config};

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
        let timestamp_type = read_diagnostics(&cfg);

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
            group_wake: client::group_wake(cfg.group_heartbeat_interval()),
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

/// Reads, on tasks of their own, what is diagnostic only (so it never
/// delays joining; the mock does not answer DescribeConfigs at all): the
/// topic's timestamp type, into the slot returned, and under the consumer
/// protocol the group's session timeout, which is logged.
fn read_diagnostics(cfg: &ResolvedConfig) -> Arc<Mutex<TimestampType>> {
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
    timestamp_type
}

/// The way librdkafka's text becomes a neli error: through the redaction
/// step (neli/KAFKA.md, "Secrets never printed"), since librdkafka echoes the values of
/// properties it rejects.
pub(crate) fn broker_err(redactor: &Redactor, what: &str, e: &KafkaError) -> BrokerError {
    BrokerError { kind: classify(e), message: redactor.redact(&format!("{what}: {e}")) }
}

pub(crate) fn kind_of(code: RDKafkaErrorCode) -> crate::broker::ErrorKind {
    if errors::is_fatal_code(code) { crate::broker::ErrorKind::Fatal } else { crate::broker::ErrorKind::Retriable }
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
