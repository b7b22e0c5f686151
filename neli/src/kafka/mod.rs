//! The production [`Broker`](crate::Broker): Kafka through `rdkafka`
//! (librdkafka, in `librdkafka/`), with the membership proof on a
//! connection of neli's own (the Kafka wire protocol, in `wire/`).
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
//!   [`Broker::ack_revoked`](crate::Broker::ack_revoked), i.e. until the application's Revoked handler
//!   has finished; only then is the partition unassigned. A *lost*
//!   assignment (session timeout, eviction) becomes [`BrokerEvent::Lost`](crate::BrokerEvent::Lost).
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
//!   [`BrokerEvent::ElectionEnded`](crate::BrokerEvent::ElectionEnded) while the topic still exists. A topic that vanishes *without* a
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

// The election's client: librdkafka through rdkafka (consumer, producer,
// admin calls, the observer's reader).
mod librdkafka;
pub mod mock;
// The membership proof's own connection: the Kafka wire protocol spoken by
// neli itself (`kafka-protocol` codecs, std sockets).
mod wire;

use std::time::Duration;

use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::error::RDKafkaErrorCode;

use crate::broker::BrokerError;
use crate::clock::SystemClock;
use crate::config::Config;
use crate::driver::{Error, Neli};
use crate::observer::Observer;
pub use librdkafka::{KafkaBroker, KafkaReader, TimestampType, WAITING_LOOK, classify, observer_group, topic_present};
use librdkafka::{admin_client, broker_err, reachable};

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

/// Ends the election: creates its end marker ([`end_marker_topic`]), waits
/// [`END_GRACE`] and deletes its topic. Every member sees the marker and
/// stops with `Outcome::ElectionEnded` (the marker stays, so a member started
/// later stops too). Gives up after `timeout`.
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
