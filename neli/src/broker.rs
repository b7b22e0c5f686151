//! The `Broker` seam: what a driver needs from Kafka (or a simulation of it).
//!
//! Implementations: `neli::kafka::KafkaBroker` on rdkafka (production, feature `kafka`), the
//! simulator's `SimBroker`, and [`crate::testing::FakeBroker`] in memory.

use std::future::Future;
use std::time::Duration;

use crate::core::Record;

/// What happened on the broker since the last poll, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BrokerEvent {
    /// Eager assignment: the full set of partitions held in `generation`.
    Assigned {
        /// The group generation of this assignment.
        generation: u64,
        /// Every partition of the election topic this member now holds.
        partitions: Vec<u32>,
    },
    /// Orderly revocation. The broker must not release the partitions to
    /// another member until [`Broker::ack_revoked`] is called.
    Revoked {
        /// The partitions taken away.
        partitions: Vec<u32>,
    },
    /// The assignment was lost (session timeout, eviction): no handover wait.
    Lost {
        /// The partitions lost.
        partitions: Vec<u32>,
    },
    /// A record read from an assigned partition of the election topic.
    Record(Record),
    /// The election was ended (its end marker seen, or its topic gone with
    /// the marker): every member stops (terminal).
    ElectionEnded,
    /// The election log was lost without the election being ended (a broker
    /// restarted without its data) and has been recreated: log offsets, and
    /// so fencing tokens, start again from the beginning. The driver counts
    /// these in [`crate::Status::log_epoch`].
    LogLost,
}

/// How bad a broker error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Transient (timeouts, leader moves): the driver retries.
    Retriable,
    /// Unrecoverable (auth failure, bad config): the election stops.
    Fatal,
}

/// A broker error, classified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?} broker error: {message}")]
pub struct BrokerError {
    /// Whether the driver retries or the election stops.
    pub kind: ErrorKind,
    /// What went wrong, with secrets redacted.
    pub message: String,
}

impl BrokerError {
    /// A transient error: the driver carries on.
    pub fn retriable(message: impl Into<String>) -> BrokerError {
        BrokerError { kind: ErrorKind::Retriable, message: message.into() }
    }
    /// An unrecoverable error: the election stops with it.
    pub fn fatal(message: impl Into<String>) -> BrokerError {
        BrokerError { kind: ErrorKind::Fatal, message: message.into() }
    }
    /// Whether the error ends the election.
    pub fn is_fatal(&self) -> bool {
        self.kind == ErrorKind::Fatal
    }
}

/// The answer to a membership proof request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Membership {
    /// The coordinator accepted the generation-checked commit.
    Confirmed,
    /// The coordinator does not count us in that generation.
    Rejected,
    /// The coordinator answered neither way for that generation (a
    /// rebalance is in progress, or the client already moved to a newer
    /// generation): the lease is neither extended nor cut short; it still
    /// ends at the newest accepted proof's send time + T. Only incremental
    /// (cooperative) rebalancing reports it: there the member keeps its
    /// partitions through rebalances and commits through them.
    Undetermined,
}

/// A Kafka-like broker as the election needs it.
pub trait Broker: Send + 'static {
    /// Joins the group and subscribes to the election topic.
    fn subscribe(&mut self) -> impl Future<Output = Result<(), BrokerError>> + Send;
    /// Events since the last call; waits up to `timeout` for the first one.
    fn poll(&mut self, timeout: Duration) -> impl Future<Output = Result<Vec<BrokerEvent>, BrokerError>> + Send;
    /// Produces `payload` to `partition` of the election topic.
    fn produce(&mut self, partition: u32, payload: Vec<u8>) -> impl Future<Output = Result<(), BrokerError>> + Send;
    /// Synchronous, generation-checked membership proof (an offset commit).
    fn confirm_membership(&mut self, generation: u64) -> impl Future<Output = Result<Membership, BrokerError>> + Send;
    /// The handler for a revocation finished: the partitions may move on.
    fn ack_revoked(&mut self, partitions: &[u32]) -> impl Future<Output = Result<(), BrokerError>> + Send;
    /// Leaves the group (resign); `subscribe` joins again.
    fn leave(&mut self) -> impl Future<Output = Result<(), BrokerError>> + Send;
    /// Number of partitions of the election topic.
    fn partition_count(&mut self) -> impl Future<Output = Result<u32, BrokerError>> + Send;
    /// Leaves the group and releases resources.
    fn close(&mut self) -> impl Future<Output = Result<(), BrokerError>> + Send;
}
