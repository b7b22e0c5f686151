//! [`ConfigError`]: why a configuration was refused, naming the field, the
//! value and the rule.

use std::time::Duration;

use super::GroupProtocol;

/// A configuration problem, naming the field, the value and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A client property the election sets itself ([`FORCED_KEYS`](super::FORCED_KEYS)).
    #[error("cannot override configuration '{0}'")]
    ForcedKey(String),
    /// A group, topic or member name Kafka (or neli) would not accept.
    #[error("{field} '{value}' is invalid: {rule}")]
    InvalidName {
        /// `group`, `topic` or `name`.
        field: &'static str,
        /// The name given.
        value: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// A duration that must be positive is zero.
    #[error("{field} must be greater than zero (got {value:?})")]
    Zero {
        /// The setting.
        field: &'static str,
        /// Its value.
        value: Duration,
    },
    /// A client property that must be a whole number of milliseconds is not.
    #[error("{field} '{value}' is not a whole number of milliseconds")]
    NotANumber {
        /// The client property.
        field: &'static str,
        /// Its value.
        value: String,
    },
    /// Exclusive mode with `T >= S`.
    #[error(
        "heartbeat_timeout ({t:?}) must be below session.timeout.ms ({s:?}) in exclusive mode: \
         a lease as long as the session lets an evicted leader overlap its successor"
    )]
    ExclusiveLeaseTooLong {
        /// The lease, `heartbeat_timeout`.
        t: Duration,
        /// The session timeout.
        s: Duration,
    },
    /// Non-exclusive mode with `T <= S`.
    #[error(
        "heartbeat_timeout ({t:?}) must be above session.timeout.ms ({s:?}) in non-exclusive mode: \
         the lease must outlast a rebalance for continuous availability"
    )]
    NonExclusiveLeaseTooShort {
        /// The lease, `heartbeat_timeout`.
        t: Duration,
        /// The session timeout.
        s: Duration,
    },
    /// Heartbeats no more often than the lease lasts.
    #[error(
        "heartbeat_interval ({interval:?}) must be below heartbeat_timeout ({t:?}) or the lease lapses between heartbeats"
    )]
    IntervalTooLong {
        /// The heartbeat interval.
        interval: Duration,
        /// The lease, `heartbeat_timeout`.
        t: Duration,
    },
    /// A multi-role mode with no roles or no partitions.
    #[error("mode: {field} must be at least 1 (got {value})")]
    ZeroCount {
        /// `roles` or `partitions`.
        field: &'static str,
        /// The count given.
        value: u32,
    },
    /// With the membership proof, a rebalance timeout (`max.poll.interval.ms`)
    /// not above `T + S` ([`min_rebalance_timeout`](super::min_rebalance_timeout)).
    #[error(
        "max.poll.interval.ms ({max_poll:?}) must be above heartbeat_timeout + session.timeout.ms ({t:?} + {s:?}) \
         with the membership proof: it is the rebalance timeout, and a commit accepted during a rebalance \
         proves a lease of heartbeat_timeout that must end before the partition can move"
    )]
    RebalanceTimeoutTooShort {
        /// The `max.poll.interval.ms` given.
        max_poll: Duration,
        /// The lease, `heartbeat_timeout`.
        t: Duration,
        /// The session timeout.
        s: Duration,
    },
    /// A client property librdkafka refuses under this group protocol
    /// ([`CONSUMER_PROTOCOL_REFUSED`](super::CONSUMER_PROTOCOL_REFUSED)).
    #[error("cannot set '{property}' with group protocol {protocol}: {why}")]
    RefusedUnderProtocol {
        /// The client property.
        property: String,
        /// The protocol that refuses it.
        protocol: GroupProtocol,
        /// Why, and what to do instead.
        why: &'static str,
    },
    /// `broker_session_timeout` under the classic protocol, where the
    /// client sets the session timeout.
    #[error(
        "broker_session_timeout ({s:?}) is only for group protocol consumer; under classic the client sets the \
         session timeout: session.timeout.ms"
    )]
    BrokerSessionTimeoutUnderClassic {
        /// The value given.
        s: Duration,
    },
    /// A successor can receive the partition without the holder's session
    /// expiring (`cause`), and the grace G is below the lease T.
    #[error(
        "grace ({grace:?}) must be at least heartbeat_timeout + 10% ({suggest:?}, with T = {t:?}) with {cause}: the \
         coordinator can hand partition 0 to a successor without the leader's session expiring, while the leader's \
         last accepted membership proof may still hold a lease of T, so the successor waits out T plus a margin \
         for the two members' clocks running apart (docs/background.md, \"Group protocols\")"
    )]
    GraceBelowLease {
        /// What hands the partition on without a session expiry.
        cause: &'static str,
        /// The grace G given.
        grace: Duration,
        /// The lease T.
        t: Duration,
        /// The least grace allowed: T + T/10.
        suggest: Duration,
    },
    /// The membership proof switched off where a successor can receive the
    /// partition without the holder's session expiring (`cause`).
    #[error(
        "membership_proof cannot be off with {cause}: without it a leader's lease is bounded only by its own \
         heartbeats, and the coordinator can hand partition 0 on while they still arrive (docs/background.md, \
         \"Group protocols\")"
    )]
    ProofRequired {
        /// What hands the partition on without a session expiry.
        cause: &'static str,
    },
}

impl ConfigError {
    /// The setting at fault, as the builder names it (`group`,
    /// `heartbeat_timeout`, `session.timeout.ms`, a forced client key), so a
    /// front end can name its own flag for it.
    pub fn field(&self) -> &str {
        match self {
            ConfigError::ForcedKey(key) => key,
            ConfigError::InvalidName { field, .. }
            | ConfigError::Zero { field, .. }
            | ConfigError::NotANumber { field, .. }
            | ConfigError::ZeroCount { field, .. } => field,
            ConfigError::ExclusiveLeaseTooLong { .. } | ConfigError::NonExclusiveLeaseTooShort { .. } => {
                "heartbeat_timeout"
            }
            ConfigError::IntervalTooLong { .. } => "heartbeat_interval",
            ConfigError::RebalanceTimeoutTooShort { .. } => "max.poll.interval.ms",
            ConfigError::RefusedUnderProtocol { property, .. } => property,
            ConfigError::BrokerSessionTimeoutUnderClassic { .. } => "broker_session_timeout",
            ConfigError::GraceBelowLease { .. } => "grace",
            ConfigError::ProofRequired { .. } => "membership_proof",
        }
    }
}

/// A name that is none of those a setting takes ([`super::Assignment::parse`],
/// [`super::GroupProtocol::parse`]): the name given, and the ones that exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} is not {what} (expected {expected})")]
pub struct UnknownName {
    /// The text given.
    pub given: String,
    /// What it should have named (`an assignment strategy`).
    pub what: &'static str,
    /// The names that exist, quoted.
    pub expected: &'static str,
}
