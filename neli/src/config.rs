//! User-facing configuration with goNELI's names and defaults, its builder,
//! and validation into the core's [`CoreConfig`].
//!
//! Validation refuses what is provably unsafe or malformed with a
//! [`ConfigError`] naming the field, the value and the rule. Secrets in the
//! client properties never reach `Debug` output or logs.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::core::CoreConfig;
#[cfg(feature = "unsafe-variants")]
use crate::core::UnsafeVariant;

/// Client properties the election depends on; users may not set them.
pub const FORCED_KEYS: &[&str] = &[
    "group.id",
    "enable.auto.commit",
    "enable.auto.offset.store",
    "auto.offset.reset",
    "linger.ms",
    "enable.partition.eof",
    "partition.assignment.strategy",
    "group.protocol",
    "group.remote.assignor",
];

/// Client properties librdkafka refuses under the consumer group protocol
/// (it will not create the client), each with what to do instead: neli
/// refuses them first, by name ([`ConfigError::RefusedUnderProtocol`]).
/// `partition.assignment.strategy` is a forced key under either protocol.
pub const CONSUMER_PROTOCOL_REFUSED: &[(&str, &str)] = &[
    (
        "session.timeout.ms",
        "the session timeout is the broker's (group.consumer.session.timeout.ms, or the group's \
         consumer.session.timeout.ms); state the value neli should assume with broker_session_timeout",
    ),
    ("heartbeat.interval.ms", "the group heartbeat interval is the broker's (group.consumer.heartbeat.interval.ms)"),
    ("group.protocol.type", "the consumer protocol has no protocol type"),
];

/// Apache Kafka's default `group.consumer.session.timeout.ms`: the session
/// timeout S neli assumes under the consumer protocol unless told
/// ([`ConfigBuilder::broker_session_timeout`]) or the broker says otherwise.
pub const KAFKA_CONSUMER_SESSION_TIMEOUT: Duration = Duration::from_secs(45);
/// Apache Kafka's default `group.consumer.heartbeat.interval.ms`, the group
/// heartbeat interval under the consumer protocol (the broker's to choose).
pub const KAFKA_CONSUMER_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(5);

/// goNELI's default heartbeat timeout.
pub const DEFAULT_HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(5);
/// goNELI's default minimum poll interval.
pub const DEFAULT_MIN_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Default bound on `close()`.
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(10);
/// librdkafka's default `max.poll.interval.ms`, which is also the classic
/// group's rebalance timeout: what is in effect unless the client properties
/// set it.
pub const LIBRDKAFKA_MAX_POLL_INTERVAL: Duration = Duration::from_secs(300);
/// The client property that turns on static group membership (KIP-345).
///
/// A replacement static member (a new process with the same instance id)
/// receives the partition without a rebalance and without the holder's
/// session expiring, as under the consumer protocol, so the same rule
/// applies: a grace of at least T + 10 % and the membership proof
/// ([`ConfigError::GraceBelowLease`], [`ConfigError::ProofRequired`];
/// docs/background.md, "Group protocols").
pub const STATIC_MEMBERSHIP_KEY: &str = "group.instance.id";

/// How roles map onto the election topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// One role on partition 0; at most one leader (goNELI).
    #[default]
    Exclusive,
    /// Roles `0..roles` on `partitions` partitions via `role mod partitions`
    /// (NELI paper). `exclusive` requires `T < S`; non-exclusive requires
    /// `T > S` and trades overlap for continuous availability.
    MultiRole {
        /// How many roles (each elects its own leader).
        roles: u32,
        /// How many partitions the election topic has (`M`).
        partitions: u32,
        /// At most one leader per role (`T < S`), or continuous
        /// availability with overlaps (`T > S`).
        exclusive: bool,
    },
}

impl Mode {
    /// How many roles are elected (1 in exclusive mode).
    pub fn roles(&self) -> u32 {
        match *self {
            Mode::Exclusive => 1,
            Mode::MultiRole { roles, .. } => roles,
        }
    }

    /// How many partitions the election topic needs.
    pub fn partitions(&self) -> u32 {
        match *self {
            Mode::Exclusive => 1,
            Mode::MultiRole { partitions, .. } => partitions,
        }
    }

    /// Whether a role has at most one leader at a time.
    pub fn is_exclusive(&self) -> bool {
        match *self {
            Mode::Exclusive => true,
            Mode::MultiRole { exclusive, .. } => exclusive,
        }
    }
}

/// How the group coordinator's members share the election topic's
/// partitions (librdkafka's `partition.assignment.strategy`). Every member of
/// a group must use the same one: Kafka and tansu refuse a member that does
/// not (INCONSISTENT_GROUP_PROTOCOL), librdkafka's mock cluster aborts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Assignment {
    /// Eager `range` (goNELI's, the default before issue 40): every rebalance
    /// revokes every partition from everyone, so the leader stops whenever
    /// any member joins or leaves.
    Range,
    /// Incremental `cooperative-sticky` (the default): only a partition that
    /// moves is revoked, and a member that comes back gets nothing while the
    /// owner keeps it (docs/cooperative-rebalance.md). A group started with
    /// `range` refuses members that use it (neli/KAFKA.md, "Switching an
    /// existing group").
    #[default]
    CooperativeSticky,
}

impl Assignment {
    /// librdkafka's name of the strategy, also the CLI's and scenario files'.
    pub fn name(self) -> &'static str {
        match self {
            Assignment::Range => "range",
            Assignment::CooperativeSticky => "cooperative-sticky",
        }
    }

    /// Parses a strategy name, saying which names exist when it is none.
    pub fn parse(text: &str) -> Result<Assignment, String> {
        [Assignment::Range, Assignment::CooperativeSticky].into_iter().find(|a| a.name() == text).ok_or_else(|| {
            format!("{text:?} is not an assignment strategy (expected \"range\" or \"cooperative-sticky\")")
        })
    }
}

impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The group protocol the Kafka client speaks (librdkafka's `group.protocol`).
///
/// Under [`GroupProtocol::Consumer`] the coordinator can hand partition 0
/// to a successor without the holder's session expiring: the client has no
/// session expiry of its own and an accepted commit does not renew the
/// session. A successor must then wait out the holder's lease, so the
/// grace G must be at least T + 10 % and the membership proof stays on
/// ([`ConfigError::GraceBelowLease`], [`ConfigError::ProofRequired`];
/// docs/background.md, "Group protocols").
///
/// ```
/// use std::time::Duration;
/// use neli::{Config, GroupProtocol};
///
/// let config = Config::builder()
///     .group("billing-cron")
///     .group_protocol(GroupProtocol::Consumer)
///     .heartbeat_timeout(Duration::from_secs(5))
///     .grace(Duration::from_millis(5500))
///     .build()?;
/// // S is the broker's: Kafka's default unless stated or read from the broker.
/// assert_eq!(config.resolve()?.session_timeout, Duration::from_secs(45));
/// # Ok::<(), neli::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupProtocol {
    /// JoinGroup/SyncGroup/Heartbeat (KIP-345 and before): the client
    /// expires its own session after S, and a generation-checked commit
    /// renews it. The default.
    #[default]
    Classic,
    /// Kafka 4's consumer group protocol (KIP-848): assignment by the
    /// broker (`uniform` for [`Assignment::CooperativeSticky`], `range`
    /// for [`Assignment::Range`], both incremental), session timeout and
    /// heartbeat interval set on the broker.
    Consumer,
}

impl GroupProtocol {
    /// librdkafka's name of the protocol, also the CLI's and scenario files'.
    pub fn name(self) -> &'static str {
        match self {
            GroupProtocol::Classic => "classic",
            GroupProtocol::Consumer => "consumer",
        }
    }

    /// Parses a protocol name, saying which names exist when it is none.
    pub fn parse(text: &str) -> Result<GroupProtocol, String> {
        [GroupProtocol::Classic, GroupProtocol::Consumer]
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| format!("{text:?} is not a group protocol (expected \"classic\" or \"consumer\")"))
    }
}

impl fmt::Display for GroupProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Election configuration. Unset optional fields take goNELI's defaults.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// Client properties passed through to the Kafka client (bootstrap
    /// servers, SASL, SSL, `session.timeout.ms`, ...), except [`FORCED_KEYS`].
    pub kafka_config: BTreeMap<String, String>,
    /// Group id; defaults to the running binary's name.
    pub leader_group_id: Option<String>,
    /// Election topic; defaults to `<group>.neli`.
    pub leader_topic: Option<String>,
    /// Instance name; defaults to `{hostname}_{pid}_{unix seconds}`.
    pub name: Option<String>,
    /// Lease length `T`.
    pub heartbeat_timeout: Duration,
    /// Time between heartbeats; defaults to `T / 4`.
    pub heartbeat_interval: Option<Duration>,
    /// Shortest time between two polls of the broker.
    pub min_poll_interval: Duration,
    /// Acquisition grace `G`.
    pub grace: Duration,
    /// Upper bound on `close()`, also when the broker hangs.
    pub close_timeout: Duration,
    /// Bound leases by a generation-checked membership proof (recommended).
    pub membership_proof: bool,
    /// How roles map onto the election topic (exclusive, one role, by default).
    pub mode: Mode,
    /// Partition assignment strategy (incremental `cooperative-sticky` by default).
    pub assignment: Assignment,
    /// The group protocol (classic by default).
    pub group_protocol: GroupProtocol,
    /// Under the consumer protocol, the broker's session timeout S that
    /// neli assumes where the broker cannot say
    /// ([`KAFKA_CONSUMER_SESSION_TIMEOUT`] unless set).
    pub broker_session_timeout: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kafka_config: BTreeMap::new(),
            leader_group_id: None,
            leader_topic: None,
            name: None,
            heartbeat_timeout: DEFAULT_HEARTBEAT_TIMEOUT,
            heartbeat_interval: None,
            min_poll_interval: DEFAULT_MIN_POLL_INTERVAL,
            grace: Duration::ZERO,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            membership_proof: true,
            mode: Mode::Exclusive,
            assignment: Assignment::CooperativeSticky,
            group_protocol: GroupProtocol::Classic,
            broker_session_timeout: None,
        }
    }
}

/// The group heartbeat interval (`heartbeat.interval.ms`) the Kafka backend
/// sets unless the user does: S/5 within 100 ms..3 s. librdkafka's 3 s default
/// gets members with short sessions evicted, and a shorter interval makes
/// survivors notice a rebalance, and so a failover, sooner. The simulator's
/// client uses the same value.
pub fn group_heartbeat_interval(session_timeout: Duration) -> Duration {
    Duration::from_millis((session_timeout.as_millis() / 5).clamp(100, 3000) as u64)
}

/// How long a member that resigned stays out of the group: the others
/// rejoin within S, the coordinator may hold the rebalance up to another S,
/// then T for the successor's evidence. Back sooner, the resigner could take
/// the role back in the next eager rebalance (neli/KAFKA.md "Resign"). The
/// simulator's `resign-holds-off` rule holds members to it.
pub fn resign_hold_off(session_timeout: Duration, heartbeat_timeout: Duration) -> Duration {
    2 * session_timeout + heartbeat_timeout
}

/// The rebalance timeout (`max.poll.interval.ms`) must be above this with
/// the membership proof: T + S. A member learns of a rebalance only at its
/// next group heartbeat (< S), so a commit accepted up to then proves a
/// lease to T later, and the partition must not move before that lease
/// ended (found by neli-sim, hazard test
/// `membership_proof_broken_by_rebalance_timeout_below_lease`).
pub fn min_rebalance_timeout(heartbeat_timeout: Duration, session_timeout: Duration) -> Duration {
    heartbeat_timeout + session_timeout
}

/// How much sooner the lease `T` ends than the session `S` can expire in
/// exclusive mode: `S - T`, or `None` when `T >= S` (which validation
/// refuses: an evicted leader could overlap its successor).
pub fn lease_margin(heartbeat_timeout: Duration, session_timeout: Duration) -> Option<Duration> {
    session_timeout.checked_sub(heartbeat_timeout).filter(|m| !m.is_zero())
}

/// From a leader's leave (close or resign, once its `Revoked` handlers
/// returned) to a successor's lease, not counting the broker's own
/// rebalance delay: the others learn of the rebalance at their next group
/// heartbeat (`group_heartbeat`) and rejoin, then the new owner of the
/// partition waits the grace `G` and needs fresh own evidence, a heartbeat
/// read back within `T`, and a membership proof.
pub fn handover_bound(group_heartbeat: Duration, grace: Duration, heartbeat_timeout: Duration) -> Duration {
    group_heartbeat + grace + heartbeat_timeout
}

/// From a leader's crash to a successor's lease, not counting the
/// broker's own rebalance delay: its session expires within `S` of its
/// last group heartbeat, then as [`handover_bound`].
pub fn failover_bound(
    session_timeout: Duration,
    group_heartbeat: Duration,
    grace: Duration,
    heartbeat_timeout: Duration,
) -> Duration {
    session_timeout + handover_bound(group_heartbeat, grace, heartbeat_timeout)
}

pub use crate::secrets::is_secret_key;

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("kafka_config", &Redacted(&self.kafka_config))
            .field("leader_group_id", &self.leader_group_id)
            .field("leader_topic", &self.leader_topic)
            .field("name", &self.name)
            .field("heartbeat_timeout", &self.heartbeat_timeout)
            .field("heartbeat_interval", &self.heartbeat_interval)
            .field("min_poll_interval", &self.min_poll_interval)
            .field("grace", &self.grace)
            .field("close_timeout", &self.close_timeout)
            .field("membership_proof", &self.membership_proof)
            .field("mode", &self.mode)
            .field("assignment", &self.assignment)
            .field("group_protocol", &self.group_protocol)
            .field("broker_session_timeout", &self.broker_session_timeout)
            .finish()
    }
}

/// Client properties with secret values replaced, for `Debug` and logs.
pub struct Redacted<'a>(pub &'a BTreeMap<String, String>);

impl fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (k, v) in self.0 {
            if is_secret_key(k) {
                map.entry(k, &crate::secrets::REDACTED);
            } else {
                map.entry(k, v);
            }
        }
        map.finish()
    }
}

/// A configuration problem, naming the field, the value and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A client property the election sets itself ([`FORCED_KEYS`]).
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
    /// not above `T + S` ([`min_rebalance_timeout`]).
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
    /// ([`CONSUMER_PROTOCOL_REFUSED`]).
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

/// Parses a non-negative duration in the one grammar of every input
/// ([`crate::duration`]: `250ms`, `3s`, `1m`, `2h`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    crate::duration::parse(text).map_err(|e| e.to_string())
}

/// A validated configuration with every default resolved.
#[derive(Clone, PartialEq, Eq)]
pub struct ResolvedConfig {
    /// The consumer group of the election.
    pub group_id: String,
    /// The election topic.
    pub topic: String,
    /// This member's instance name, written into its heartbeats.
    pub name: String,
    /// Session timeout S (`session.timeout.ms`, 3 T unless set).
    pub session_timeout: Duration,
    /// Lease length T.
    pub heartbeat_timeout: Duration,
    /// Time between heartbeats (T/4 unless set).
    pub heartbeat_interval: Duration,
    /// Shortest time between two polls of the broker.
    pub min_poll_interval: Duration,
    /// Acquisition grace G.
    pub grace: Duration,
    /// Upper bound on `close()`.
    pub close_timeout: Duration,
    /// Whether leases are bounded by a membership proof.
    pub membership_proof: bool,
    /// How roles map onto the election topic.
    pub mode: Mode,
    /// Partition assignment strategy.
    pub assignment: Assignment,
    /// The group protocol.
    pub group_protocol: GroupProtocol,
    /// User client properties (forced keys excluded) plus, under the
    /// classic protocol, a defaulted `session.timeout.ms`.
    pub kafka_config: BTreeMap<String, String>,
}

impl fmt::Debug for ResolvedConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedConfig")
            .field("group_id", &self.group_id)
            .field("topic", &self.topic)
            .field("name", &self.name)
            .field("session_timeout", &self.session_timeout)
            .field("heartbeat_timeout", &self.heartbeat_timeout)
            .field("heartbeat_interval", &self.heartbeat_interval)
            .field("min_poll_interval", &self.min_poll_interval)
            .field("grace", &self.grace)
            .field("close_timeout", &self.close_timeout)
            .field("membership_proof", &self.membership_proof)
            .field("mode", &self.mode)
            .field("assignment", &self.assignment)
            .field("group_protocol", &self.group_protocol)
            .field("kafka_config", &Redacted(&self.kafka_config))
            .finish()
    }
}

impl ResolvedConfig {
    /// The redaction step for texts about this configuration's client
    /// (errors and logs from librdkafka): removes its secret values.
    pub fn redactor(&self) -> crate::secrets::Redactor {
        crate::secrets::Redactor::for_properties(&self.kafka_config)
    }

    /// The core configuration for `partitions` partitions of the topic.
    pub fn core(&self, partitions: u32) -> CoreConfig {
        CoreConfig {
            name: self.name.clone(),
            roles: self.mode.roles(),
            partitions: partitions.max(1),
            heartbeat_timeout: self.heartbeat_timeout,
            heartbeat_interval: self.heartbeat_interval,
            grace: self.grace,
            membership_proof: self.membership_proof,
            resign_hold_off: resign_hold_off(self.session_timeout, self.heartbeat_timeout),
            // The consumer protocol is always incremental, whichever broker
            // assignor deals the partitions.
            incremental: self.assignment == Assignment::CooperativeSticky
                || self.group_protocol == GroupProtocol::Consumer,
            #[cfg(feature = "unsafe-variants")]
            unsafe_variant: UnsafeVariant::default(),
        }
    }

    /// The group heartbeat interval in effect: the client property
    /// `heartbeat.interval.ms` if set, else what the Kafka backend sets
    /// ([`group_heartbeat_interval`]); under the consumer protocol the
    /// broker's, assumed to be Kafka's default
    /// ([`KAFKA_CONSUMER_HEARTBEAT_INTERVAL`]).
    pub fn group_heartbeat_interval(&self) -> Duration {
        if self.group_protocol == GroupProtocol::Consumer {
            return KAFKA_CONSUMER_HEARTBEAT_INTERVAL;
        }
        property_ms(&self.kafka_config, "heartbeat.interval.ms")
            .ok()
            .flatten()
            .unwrap_or_else(|| group_heartbeat_interval(self.session_timeout))
    }

    /// The rebalance timeout in effect: the client property
    /// `max.poll.interval.ms` if set, else librdkafka's default
    /// ([`LIBRDKAFKA_MAX_POLL_INTERVAL`]).
    pub fn rebalance_timeout(&self) -> Duration {
        property_ms(&self.kafka_config, "max.poll.interval.ms").ok().flatten().unwrap_or(LIBRDKAFKA_MAX_POLL_INTERVAL)
    }

    /// The bounds this configuration implies ([`Explanation`]).
    pub fn explain(&self) -> Explanation {
        let (t, s, g) = (self.heartbeat_timeout, self.session_timeout, self.grace);
        let group_heartbeat = self.group_heartbeat_interval();
        let exclusive = self.mode.is_exclusive();
        // Without a session expiry before a handover, the successor's grace
        // alone must outlast the leader's lease: the margin is G - T, of a
        // wait of G; otherwise S - T + G, of a wait of S + G.
        let consumer = self.group_protocol == GroupProtocol::Consumer;
        let (drift_margin, wait) = match (exclusive, consumer) {
            (false, _) => (None, g),
            (true, true) => (g.checked_sub(t), g),
            (true, false) => (lease_margin(t, s).map(|m| m + g), s + g),
        };
        let tolerated_drift_ppm = drift_margin.map(|m| {
            let ppm = m.as_micros().saturating_mul(1_000_000) / wait.as_micros().max(1);
            u32::try_from(ppm).unwrap_or(u32::MAX)
        });
        Explanation {
            exclusive,
            membership_proof: self.membership_proof,
            heartbeat_timeout: t,
            session_timeout: s,
            heartbeat_interval: self.heartbeat_interval,
            group_heartbeat_interval: group_heartbeat,
            grace: g,
            close_timeout: self.close_timeout,
            failover: failover_bound(s, group_heartbeat, g, t),
            handover: handover_bound(group_heartbeat, g, t),
            resign_hold_off: self.core(self.mode.partitions()).resign_hold_off,
            min_rebalance_timeout: self.membership_proof.then(|| min_rebalance_timeout(t, s)),
            rebalance_timeout: self.rebalance_timeout(),
            rebalance_timeout_set: self.kafka_config.contains_key("max.poll.interval.ms"),
            drift_margin,
            tolerated_drift_ppm,
            group_protocol: self.group_protocol,
        }
    }
}

/// What a configuration promises in time: the bounds its settings imply,
/// computed by the functions the core and validation use
/// ([`failover_bound`], [`handover_bound`], [`resign_hold_off`],
/// [`min_rebalance_timeout`], [`lease_margin`], [`group_heartbeat_interval`]).
/// From [`Config::explain`]; `neli exec --explain` prints its `Display`
/// form, and the driver logs it once when it starts.
///
/// The bounds leave out what only the broker knows: its own delay before
/// it completes a rebalance (none for a non-empty group on Apache Kafka,
/// up to S/2 on tansu, S − 1 s on librdkafka's mock cluster: neli/KAFKA.md)
/// and round trips, which must stay below T for anyone to lead at all.
///
/// ```
/// use std::time::Duration;
/// use neli::Config;
///
/// let config = Config::builder()
///     .group("billing-cron")
///     .heartbeat_timeout(Duration::from_secs(5))
///     .session_timeout(Duration::from_secs(15))
///     .build()?;
/// let bounds = config.explain()?;
/// // S + the group heartbeat (S/5) + G + T
/// assert_eq!(bounds.failover, Duration::from_secs(15 + 3 + 5));
/// // the group heartbeat + G + T
/// assert_eq!(bounds.handover, Duration::from_secs(3 + 5));
/// assert_eq!(bounds.min_rebalance_timeout, Some(Duration::from_secs(20)));
/// println!("{bounds}");
/// # Ok::<(), neli::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// Exclusive mode (at most one leader per role): `T < S`.
    pub exclusive: bool,
    /// Whether leases are bounded by a membership proof.
    pub membership_proof: bool,
    /// Lease length T.
    pub heartbeat_timeout: Duration,
    /// Session timeout S (`session.timeout.ms`).
    pub session_timeout: Duration,
    /// Time between a member's heartbeats on the election topic.
    pub heartbeat_interval: Duration,
    /// The group heartbeat interval in effect (`heartbeat.interval.ms`):
    /// how soon the others learn of a rebalance.
    pub group_heartbeat_interval: Duration,
    /// Acquisition grace G.
    pub grace: Duration,
    /// Upper bound on `close()`, the `Revoked` handlers included.
    pub close_timeout: Duration,
    /// Worst case from the leader's crash (or a pause longer than S) to a
    /// successor's lease: S for its session to expire, the group heartbeat
    /// for the others to rejoin, G and T ([`failover_bound`]), plus the
    /// broker's rebalance delay.
    pub failover: Duration,
    /// From the leader's `close()` or `resign()` (or dropping its
    /// [`crate::Background`]), once its `Revoked` handlers returned, to a
    /// successor's lease: the group heartbeat, G and T
    /// ([`handover_bound`]), plus the broker's rebalance delay. No session
    /// has to expire.
    pub handover: Duration,
    /// How long a member that resigned stays out of the group
    /// ([`resign_hold_off`]: 2 S + T).
    pub resign_hold_off: Duration,
    /// With the membership proof, `max.poll.interval.ms` (the rebalance
    /// timeout) must be above this, T + S ([`min_rebalance_timeout`]);
    /// `None` without the proof.
    pub min_rebalance_timeout: Option<Duration>,
    /// The rebalance timeout in effect (`max.poll.interval.ms`, else
    /// librdkafka's default of 300 s).
    pub rebalance_timeout: Duration,
    /// Whether the client properties set `max.poll.interval.ms`.
    pub rebalance_timeout_set: bool,
    /// In exclusive mode, how much longer than T the leader's lease may
    /// last in real time (a slow clock, a late timer) and still end before
    /// a successor can lead: S − T ([`lease_margin`]) + G; under the
    /// consumer protocol G − T. `None` in non-exclusive mode.
    pub drift_margin: Option<Duration>,
    /// The same as a clock rate: the leader's clock may run this many parts
    /// per million slow, `(S − T + G) / (S + G)`. `None` in non-exclusive
    /// mode.
    pub tolerated_drift_ppm: Option<u32>,
    /// The group protocol; under [`GroupProtocol::Consumer`] the drift
    /// margin is G − T of a wait of G (no session expiry precedes a
    /// handover there).
    pub group_protocol: GroupProtocol,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = crate::duration::format;
        let (t, s, g, hb) =
            (d(self.heartbeat_timeout), d(self.session_timeout), d(self.grace), d(self.group_heartbeat_interval));
        writeln!(
            f,
            "lease T = {t}, session S = {s}, grace G = {g}, heartbeats every {}, group heartbeats every {hb} ({})",
            d(self.heartbeat_interval),
            if self.exclusive { "exclusive" } else { "non-exclusive" }
        )?;
        writeln!(
            f,
            "failover on crash: within {} (S for the session to expire + {hb} group heartbeat + G + T for the \
             successor's evidence), plus the broker's rebalance delay",
            d(self.failover)
        )?;
        writeln!(
            f,
            "handover on close/resign: within {} ({hb} group heartbeat + G + T) once the Revoked handler returned \
             (close waits for it up to {}), plus the broker's rebalance delay",
            d(self.handover),
            d(self.close_timeout)
        )?;
        writeln!(
            f,
            "resign hold-off: {} (2 S + T): a resigned member rejoins only then, so that it cannot take the role straight back",
            d(self.resign_hold_off)
        )?;
        let in_effect = if self.rebalance_timeout_set { "max.poll.interval.ms" } else { "librdkafka's default" };
        match self.min_rebalance_timeout {
            Some(min) => writeln!(
                f,
                "rebalance timeout: must be above {} (T + S): a membership proof accepted while a rebalance runs \
                 proves a lease of T that must end before the partition moves; in effect {} ({in_effect})",
                d(min),
                d(self.rebalance_timeout)
            )?,
            None => writeln!(
                f,
                "rebalance timeout: no requirement without the membership proof; in effect {} ({in_effect})",
                d(self.rebalance_timeout)
            )?,
        }
        match (self.drift_margin, self.tolerated_drift_ppm) {
            (Some(margin), Some(ppm)) => {
                write!(
                    f,
                    "clock drift: the leader's clock may run {}.{}% slow (a margin of {} = {}) and its lease \
                     still ends before a successor can lead",
                    ppm / 10_000,
                    ppm % 10_000 / 1_000,
                    if self.group_protocol == GroupProtocol::Consumer { "G - T" } else { "S - T + G" },
                    d(margin)
                )?;
                if !self.membership_proof {
                    write!(f, " (without the membership proof only while it reaches the group coordinator)")?;
                }
                Ok(())
            }
            _ => write!(f, "clock drift: non-exclusive mode (T > S) promises no single leader, so no drift bound"),
        }
    }
}

impl Config {
    /// A builder starting from goNELI's defaults; `build` validates.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder { cfg: Config::default() }
    }

    /// The bounds this configuration implies (worst-case failover,
    /// handover, resign hold-off, the rebalance timeout it needs, the clock
    /// drift it tolerates): see [`Explanation`]. `Err` when it is invalid.
    pub fn explain(&self) -> Result<Explanation, ConfigError> {
        Ok(self.resolve()?.explain())
    }

    /// Validates and resolves defaults.
    pub fn resolve(&self) -> Result<ResolvedConfig, ConfigError> {
        let consumer = self.group_protocol == GroupProtocol::Consumer;
        for key in self.kafka_config.keys() {
            if FORCED_KEYS.contains(&key.as_str()) {
                return Err(ConfigError::ForcedKey(key.clone()));
            }
            let refused = CONSUMER_PROTOCOL_REFUSED.iter().find(|(k, _)| key.trim().eq_ignore_ascii_case(k));
            if consumer && let Some((property, why)) = refused {
                return Err(ConfigError::RefusedUnderProtocol {
                    property: (*property).to_owned(),
                    protocol: self.group_protocol,
                    why,
                });
            }
        }
        if let (false, Some(s)) = (consumer, self.broker_session_timeout) {
            return Err(ConfigError::BrokerSessionTimeoutUnderClassic { s });
        }
        let group_id = match &self.leader_group_id {
            Some(g) => g.clone(),
            None => default_group_id(),
        };
        check_kafka_name("group", &group_id)?;
        let topic = self.leader_topic.clone().unwrap_or_else(|| format!("{group_id}.neli"));
        check_kafka_name("topic", &topic)?;
        let name = self.name.clone().unwrap_or_else(default_name);
        check_member_name(&name)?;

        let t = self.heartbeat_timeout;
        nonzero("heartbeat_timeout", t)?;
        nonzero("min_poll_interval", self.min_poll_interval)?;
        nonzero("close_timeout", self.close_timeout)?;
        let interval = self.heartbeat_interval.unwrap_or(t / 4);
        nonzero("heartbeat_interval", interval)?;
        if interval >= t {
            return Err(ConfigError::IntervalTooLong { interval, t });
        }
        let session_timeout = if consumer {
            let s = self.broker_session_timeout.unwrap_or(KAFKA_CONSUMER_SESSION_TIMEOUT);
            nonzero("broker_session_timeout", s)?;
            s
        } else {
            match self.property_ms("session.timeout.ms")? {
                Some(s) => {
                    nonzero("session.timeout.ms", s)?;
                    s
                }
                None => t * 3,
            }
        };
        self.check_lease(t, session_timeout)?;
        self.check_handover_without_expiry(t)?;
        let mut kafka_config = self.kafka_config.clone();
        if !consumer {
            kafka_config.insert("session.timeout.ms".into(), session_timeout.as_millis().to_string());
        }
        Ok(ResolvedConfig {
            group_id,
            topic,
            name,
            session_timeout,
            heartbeat_timeout: t,
            heartbeat_interval: interval,
            min_poll_interval: self.min_poll_interval,
            grace: self.grace,
            close_timeout: self.close_timeout,
            membership_proof: self.membership_proof,
            mode: self.mode,
            assignment: self.assignment,
            group_protocol: self.group_protocol,
            kafka_config,
        })
    }

    /// What can hand partition 0 to a successor without the holder's
    /// session expiring or its acknowledged revocation, if anything does in
    /// this configuration: the consumer protocol, or static membership (a
    /// replacement with the same instance id takes the partition at once)
    /// (docs/background.md, "Group protocols").
    pub fn handover_without_expiry(&self) -> Option<&'static str> {
        let static_membership = self.kafka_config.keys().any(|k| k.trim().eq_ignore_ascii_case(STATIC_MEMBERSHIP_KEY));
        if self.group_protocol == GroupProtocol::Consumer {
            Some("group protocol consumer")
        } else if static_membership {
            Some("static membership (group.instance.id)")
        } else {
            None
        }
    }

    /// Where a successor can receive the partition without the holder's
    /// session expiring, it must wait out the lease the holder's last
    /// accepted proof may still hold, plus a margin for the clocks running
    /// apart: G >= T + T/10 (the model needs G >= T + the clock skew it
    /// allows, `check --clock-steps`), proof on. The model shows the
    /// overlap without it (`neli-lab check --group-protocol consumer`,
    /// `--static-replacements 1`), and the simulator replays it (scenarios
    /// consumer-heartbeats-fail and static-replace).
    fn check_handover_without_expiry(&self, t: Duration) -> Result<(), ConfigError> {
        let Some(cause) = self.handover_without_expiry() else { return Ok(()) };
        if !self.membership_proof {
            return Err(ConfigError::ProofRequired { cause });
        }
        let least = t + t / 10;
        if self.grace < least {
            return Err(ConfigError::GraceBelowLease { cause, grace: self.grace, t, suggest: least });
        }
        Ok(())
    }

    /// The lease `t` against the session timeout `s` and the rebalance
    /// timeout, for the configured mode (docs/background.md).
    fn check_lease(&self, t: Duration, s: Duration) -> Result<(), ConfigError> {
        if let Mode::MultiRole { roles, partitions, .. } = self.mode {
            if roles == 0 {
                return Err(ConfigError::ZeroCount { field: "roles", value: roles });
            }
            if partitions == 0 {
                return Err(ConfigError::ZeroCount { field: "partitions", value: partitions });
            }
        }
        if self.mode.is_exclusive() && lease_margin(t, s).is_none() {
            return Err(ConfigError::ExclusiveLeaseTooLong { t, s });
        }
        if !self.mode.is_exclusive() && t <= s {
            return Err(ConfigError::NonExclusiveLeaseTooShort { t, s });
        }
        // Parsed whatever the mode, so that `explain` can state them.
        let max_poll = self.property_ms("max.poll.interval.ms")?;
        if let Some(hb) = self.property_ms("heartbeat.interval.ms")? {
            nonzero("heartbeat.interval.ms", hb)?;
        }
        if self.membership_proof
            && let Some(max_poll) = max_poll
            && max_poll <= min_rebalance_timeout(t, s)
        {
            return Err(ConfigError::RebalanceTimeoutTooShort { max_poll, t, s });
        }
        Ok(())
    }

    /// The client property `key`, a whole number of milliseconds, if set.
    fn property_ms(&self, key: &'static str) -> Result<Option<Duration>, ConfigError> {
        property_ms(&self.kafka_config, key)
    }
}

/// Builder for [`Config`]; `build` validates.
#[derive(Debug, Clone, Default)]
pub struct ConfigBuilder {
    cfg: Config,
}

impl ConfigBuilder {
    /// The Kafka brokers to connect to first (`bootstrap.servers`).
    pub fn bootstrap_servers(self, servers: impl Into<String>) -> Self {
        self.kafka("bootstrap.servers", servers)
    }
    /// Sets a client property (refused at `build` if it is a forced key).
    pub fn kafka(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.cfg.kafka_config.insert(key.into(), value.into());
        self
    }
    /// The election's consumer group (default: the running binary's name).
    pub fn group(mut self, group: impl Into<String>) -> Self {
        self.cfg.leader_group_id = Some(group.into());
        self
    }
    /// The election topic (default: `<group>.neli`).
    pub fn topic(mut self, topic: impl Into<String>) -> Self {
        self.cfg.leader_topic = Some(topic.into());
        self
    }
    /// This member's instance name (default: `{hostname}_{pid}_{unix seconds}`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.cfg.name = Some(name.into());
        self
    }
    /// The lease length T (default 5 s).
    pub fn heartbeat_timeout(mut self, t: Duration) -> Self {
        self.cfg.heartbeat_timeout = t;
        self
    }
    /// Time between heartbeats (default T/4; must be below T).
    pub fn heartbeat_interval(mut self, i: Duration) -> Self {
        self.cfg.heartbeat_interval = Some(i);
        self
    }
    /// The session timeout S, as the client property `session.timeout.ms`
    /// (default 3 T; exclusive mode needs T < S).
    pub fn session_timeout(self, s: Duration) -> Self {
        self.kafka("session.timeout.ms", s.as_millis().to_string())
    }
    /// Shortest time between two polls of the broker (default 100 ms).
    pub fn min_poll_interval(mut self, i: Duration) -> Self {
        self.cfg.min_poll_interval = i;
        self
    }
    /// The acquisition grace G: a new owner of a partition leads no sooner
    /// than G after its assignment (default 0).
    pub fn grace(mut self, g: Duration) -> Self {
        self.cfg.grace = g;
        self
    }
    /// The bound on `close()`, also when the broker or a handler hangs
    /// (default 10 s).
    pub fn close_timeout(mut self, c: Duration) -> Self {
        self.cfg.close_timeout = c;
        self
    }
    /// Bound leases by a generation-checked membership proof (default on;
    /// recommended).
    pub fn membership_proof(mut self, on: bool) -> Self {
        self.cfg.membership_proof = on;
        self
    }
    /// How roles map onto the election topic (default: exclusive, one role).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.cfg.mode = mode;
        self
    }
    /// The partition assignment strategy (default incremental
    /// `cooperative-sticky`; `Assignment::Range` keeps the eager one, which
    /// every member of a group must then use).
    pub fn assignment(mut self, assignment: Assignment) -> Self {
        self.cfg.assignment = assignment;
        self
    }
    /// The group protocol (default [`GroupProtocol::Classic`]). Under
    /// [`GroupProtocol::Consumer`] the grace must be at least T + 10 % and the
    /// session timeout is the broker's ([`Self::broker_session_timeout`]).
    pub fn group_protocol(mut self, protocol: GroupProtocol) -> Self {
        self.cfg.group_protocol = protocol;
        self
    }
    /// Under the consumer protocol, the broker's session timeout S
    /// (`group.consumer.session.timeout.ms`, or the group's
    /// `consumer.session.timeout.ms`) that neli assumes where the broker
    /// cannot say (default [`KAFKA_CONSUMER_SESSION_TIMEOUT`], 45 s); the
    /// Kafka backend reads the group's value when the broker answers and
    /// warns when it differs. Refused under the classic protocol.
    pub fn broker_session_timeout(mut self, s: Duration) -> Self {
        self.cfg.broker_session_timeout = Some(s);
        self
    }
    /// The configuration, validated.
    pub fn build(self) -> Result<Config, ConfigError> {
        self.cfg.resolve()?;
        Ok(self.cfg)
    }
}

/// The client property `key` of `properties`, a whole number of
/// milliseconds, if set.
fn property_ms(properties: &BTreeMap<String, String>, key: &'static str) -> Result<Option<Duration>, ConfigError> {
    let Some(v) = properties.get(key) else { return Ok(None) };
    let ms: u64 = v.trim().parse().map_err(|_| ConfigError::NotANumber { field: key, value: v.clone() })?;
    Ok(Some(Duration::from_millis(ms)))
}

fn nonzero(field: &'static str, value: Duration) -> Result<(), ConfigError> {
    if value.is_zero() { Err(ConfigError::Zero { field, value }) } else { Ok(()) }
}

/// Kafka's rule for group ids and topic names.
fn check_kafka_name(field: &'static str, value: &str) -> Result<(), ConfigError> {
    let err = |rule| Err(ConfigError::InvalidName { field, value: value.to_owned(), rule });
    if value.is_empty() {
        return err("must not be empty");
    }
    if value.len() > 249 {
        return err("must be at most 249 characters");
    }
    if value == "." || value == ".." {
        return err("must not be '.' or '..'");
    }
    if !value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
        return err("may contain only ASCII letters, digits, '.', '_' and '-'");
    }
    Ok(())
}

fn check_member_name(value: &str) -> Result<(), ConfigError> {
    let err = |rule| Err(ConfigError::InvalidName { field: "name", value: value.to_owned(), rule });
    if value.is_empty() {
        return err("must not be empty");
    }
    if value.len() > 1024 {
        return err("must be at most 1024 bytes");
    }
    if value.chars().any(char::is_control) {
        return err("must not contain control characters");
    }
    Ok(())
}

fn default_group_id() -> String {
    let exe = std::env::current_exe().ok().and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()));
    let raw = exe.unwrap_or_else(|| "neli".to_owned());
    // Cargo test binaries carry a hash suffix and may hold odd characters.
    let cleaned: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect();
    if cleaned.is_empty() { "neli".into() } else { cleaned }
}

fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into());
    // Wall-clock seconds only label the instance; no timing depends on them.
    let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    format!("{host}_{}_{unix}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ConfigBuilder {
        Config::builder().bootstrap_servers("127.0.0.1:9092").group("g")
    }

    #[test]
    fn defaults_follow_goneli() {
        let r = base().build().unwrap().resolve().unwrap();
        assert_eq!(r.topic, "g.neli");
        assert_eq!(r.heartbeat_timeout, Duration::from_secs(5));
        assert_eq!(r.session_timeout, Duration::from_secs(15));
        assert_eq!(r.min_poll_interval, Duration::from_millis(100));
        assert_eq!(r.kafka_config["session.timeout.ms"], "15000");
        let parts: Vec<&str> = r.name.rsplitn(3, '_').collect();
        assert_eq!(parts.len(), 3, "name is host_pid_unix: {}", r.name);
        assert_eq!(parts[1], std::process::id().to_string());
    }

    // A resigner stays out for 2 S + T (neli/KAFKA.md "Resign"): the others
    // rejoin within S, the coordinator may hold the rebalance another S,
    // then the successor needs T for its evidence. S + T lost that race
    // beside a CPU hog (kafka_mock::resigning_leader_hands_over_and_stays_out).
    #[test]
    fn resign_hold_off_covers_a_held_rebalance_and_the_successors_evidence() {
        let c = base().heartbeat_timeout(Duration::from_secs(1)).session_timeout(Duration::from_secs(3)).build();
        let r = c.unwrap().resolve().unwrap();
        assert_eq!(r.core(1).resign_hold_off, Duration::from_secs(7));
    }

    #[test]
    fn default_group_is_the_binary_name() {
        let r = Config::builder().build().unwrap().resolve().unwrap();
        assert!(r.group_id.starts_with("neli"), "{}", r.group_id);
    }

    #[test]
    fn forced_keys_are_refused_by_name() {
        for key in FORCED_KEYS {
            let err = base().kafka(*key, "x").build().unwrap_err();
            assert_eq!(err.to_string(), format!("cannot override configuration '{key}'"));
        }
    }

    #[test]
    fn bad_group_and_topic_names_name_the_field_and_rule() {
        let err = base().group("bad group").build().unwrap_err();
        assert_eq!(
            err.to_string(),
            "group 'bad group' is invalid: may contain only ASCII letters, digits, '.', '_' and '-'"
        );
        let err = base().topic("..").build().unwrap_err();
        assert_eq!(err.to_string(), "topic '..' is invalid: must not be '.' or '..'");
        let err = base().name("a\nb").build().unwrap_err();
        assert!(err.to_string().starts_with("name 'a\nb' is invalid"), "{err}");
    }

    #[test]
    fn zero_intervals_are_refused() {
        let err = base().heartbeat_timeout(Duration::ZERO).build().unwrap_err();
        assert_eq!(err, ConfigError::Zero { field: "heartbeat_timeout", value: Duration::ZERO });
        let err = base().min_poll_interval(Duration::ZERO).build().unwrap_err();
        assert!(err.to_string().starts_with("min_poll_interval must be greater than zero"));
        let err = base().kafka("session.timeout.ms", "abc").build().unwrap_err();
        assert_eq!(err.to_string(), "session.timeout.ms 'abc' is not a whole number of milliseconds");
    }

    #[test]
    fn exclusive_mode_needs_lease_below_session() {
        // Reference: NELI §3 — exclusivity needs the lease to end before the
        // group can hand the partition to someone else.
        let err = base().heartbeat_timeout(Duration::from_secs(6)).session_timeout(Duration::from_secs(6)).build();
        let msg = err.unwrap_err().to_string();
        assert!(
            msg.starts_with("heartbeat_timeout (6s) must be below session.timeout.ms (6s) in exclusive mode"),
            "{msg}"
        );
        assert!(
            base().heartbeat_timeout(Duration::from_secs(5)).session_timeout(Duration::from_secs(6)).build().is_ok()
        );
    }

    #[test]
    fn multi_role_exclusive_mode_needs_lease_below_session() {
        // Exclusive multi-role leases obey the same rule as one role: a role's
        // lease must end before the group can hand its partition on.
        let multi = Mode::MultiRole { roles: 4, partitions: 2, exclusive: true };
        let six = Duration::from_secs(6);
        let err = base().mode(multi).heartbeat_timeout(six).session_timeout(six).build().unwrap_err();
        assert_eq!(err, ConfigError::ExclusiveLeaseTooLong { t: six, s: six });
        let just_below = base().mode(multi).heartbeat_timeout(six - Duration::from_millis(1)).session_timeout(six);
        assert!(just_below.build().is_ok());
    }

    #[test]
    fn non_exclusive_mode_refuses_lease_equal_to_session() {
        let multi = Mode::MultiRole { roles: 4, partitions: 2, exclusive: false };
        let three = Duration::from_secs(3);
        let err = base().mode(multi).heartbeat_timeout(three).session_timeout(three).build().unwrap_err();
        assert_eq!(err, ConfigError::NonExclusiveLeaseTooShort { t: three, s: three });
    }

    #[test]
    fn non_exclusive_mode_needs_lease_above_session() {
        let multi = Mode::MultiRole { roles: 4, partitions: 2, exclusive: false };
        let err = base().mode(multi).heartbeat_timeout(Duration::from_secs(5)).build().unwrap_err();
        assert_eq!(
            err,
            ConfigError::NonExclusiveLeaseTooShort { t: Duration::from_secs(5), s: Duration::from_secs(15) }
        );
        let ok = base().mode(multi).heartbeat_timeout(Duration::from_secs(5)).session_timeout(Duration::from_secs(3));
        assert!(ok.build().is_ok());
    }

    #[test]
    fn secrets_never_reach_debug() {
        let cfg = base()
            .kafka("sasl.password", "hunter2")
            .kafka("ssl.key.password", "k3y")
            .kafka("sasl.oauthbearer.client.secret", "s3cret")
            .kafka("client.id", "visible")
            .build()
            .unwrap();
        for text in [format!("{cfg:?}"), format!("{:?}", cfg.resolve().unwrap())] {
            assert!(!text.contains("hunter2") && !text.contains("k3y") && !text.contains("s3cret"), "{text}");
            assert!(text.contains("visible") && text.contains("<redacted>"), "{text}");
        }
    }

    #[test]
    fn rejects_rebalance_timeout_not_above_lease_plus_session() {
        let err = base().kafka("max.poll.interval.ms", "1000").build().unwrap_err();
        assert!(matches!(err, ConfigError::RebalanceTimeoutTooShort { .. }), "{err}");
        assert!(err.to_string().starts_with("max.poll.interval.ms (1s) must be above"), "{err}");
        assert!(base().kafka("max.poll.interval.ms", "300000").build().is_ok());
        assert!(base().membership_proof(false).kafka("max.poll.interval.ms", "1000").build().is_ok());
    }

    #[test]
    fn rebalance_timeout_must_exceed_lease_plus_session_not_just_session() {
        // T = 5 s, S = 15 s: a value above S but not above T + S (20 s) is
        // still refused; the first value past T + S is accepted.
        let b = || base().heartbeat_timeout(Duration::from_secs(5)).session_timeout(Duration::from_secs(15));
        for ms in ["16000", "20000"] {
            let err = b().kafka("max.poll.interval.ms", ms).build().unwrap_err();
            assert_eq!(
                err,
                ConfigError::RebalanceTimeoutTooShort {
                    max_poll: Duration::from_millis(ms.parse().unwrap()),
                    t: Duration::from_secs(5),
                    s: Duration::from_secs(15),
                },
                "max.poll.interval.ms = {ms}"
            );
        }
        assert!(b().kafka("max.poll.interval.ms", "20001").build().is_ok());
        let err = b().kafka("max.poll.interval.ms", "soon").build().unwrap_err();
        assert_eq!(err, ConfigError::NotANumber { field: "max.poll.interval.ms", value: "soon".into() });
    }

    // What each setter and derived value feeds: the core's configuration,
    // the client's, the CLI's and the scenarios' texts (cargo-mutants found
    // setters and derivations no test looked at; BENCHMARKS.md).
    #[test]
    fn every_setter_reaches_the_resolved_config_and_the_core() {
        let multi = Mode::MultiRole { roles: 5, partitions: 3, exclusive: true };
        let r = base()
            .heartbeat_timeout(Duration::from_secs(2))
            .session_timeout(Duration::from_secs(6))
            .heartbeat_interval(Duration::from_millis(300))
            .grace(Duration::from_millis(700))
            .membership_proof(false)
            .mode(multi)
            .assignment(Assignment::CooperativeSticky)
            .build()
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(r.heartbeat_interval, Duration::from_millis(300));
        assert_eq!(r.grace, Duration::from_millis(700));
        let core = r.core(3);
        assert_eq!((core.roles, core.partitions), (5, 3));
        assert_eq!(core.heartbeat_timeout, Duration::from_secs(2));
        assert_eq!(core.heartbeat_interval, Duration::from_millis(300));
        assert_eq!(core.grace, Duration::from_millis(700));
        assert!(!core.membership_proof);
        assert!(core.incremental, "cooperative-sticky assignment is incremental");
        let default = base().build().unwrap().resolve().unwrap();
        assert_eq!(default.assignment, Assignment::CooperativeSticky, "the default since issue 40");
        assert!(default.core(1).incremental, "the default assignment is incremental");
        let range = base().assignment(Assignment::Range).build().unwrap().resolve().unwrap();
        assert!(!range.core(1).incremental, "range assignment is eager");
    }

    #[test]
    fn modes_count_their_roles_and_partitions() {
        assert_eq!((Mode::Exclusive.roles(), Mode::Exclusive.partitions()), (1, 1));
        let multi = Mode::MultiRole { roles: 5, partitions: 3, exclusive: false };
        assert_eq!((multi.roles(), multi.partitions()), (5, 3));
    }

    #[test]
    fn group_heartbeat_interval_is_a_fifth_of_the_session_within_bounds() {
        assert_eq!(group_heartbeat_interval(Duration::from_secs(3)), Duration::from_millis(600));
        assert_eq!(group_heartbeat_interval(Duration::from_millis(7_000)), Duration::from_millis(1_400));
        assert_eq!(group_heartbeat_interval(Duration::from_millis(300)), Duration::from_millis(100));
        assert_eq!(group_heartbeat_interval(Duration::from_secs(60)), Duration::from_secs(3));
    }

    #[test]
    fn assignment_names_round_trip_through_display_and_parse() {
        for a in [Assignment::Range, Assignment::CooperativeSticky] {
            assert_eq!(Assignment::parse(&a.to_string()), Ok(a));
        }
        assert_eq!(Assignment::CooperativeSticky.to_string(), "cooperative-sticky");
    }

    #[test]
    fn the_redactor_hides_the_configurations_secret_values() {
        let r = base().kafka("sasl.password", "hunter2-secret").build().unwrap().resolve().unwrap();
        let text = r.redactor().redact("authentication with hunter2-secret failed");
        assert!(!text.contains("hunter2-secret"), "{text}");
        assert!(text.contains("authentication with"), "{text}");
    }

    #[test]
    fn name_lengths_are_refused_just_past_their_limits() {
        // The topic is set: by default it is the group plus ".neli", 5 more.
        let at = |n: usize| base().topic("t").group("g".repeat(n)).build();
        assert!(at(249).is_ok());
        assert_eq!(
            at(250).unwrap_err().to_string(),
            format!("group '{}' is invalid: must be at most 249 characters", "g".repeat(250))
        );
        let named = |n: usize| base().name("n".repeat(n)).build();
        assert!(named(1024).is_ok());
        assert!(named(1025).unwrap_err().to_string().ends_with("must be at most 1024 bytes"));
        assert!(named(3000).is_err());
    }

    // Issue 39: the bounds `explain` states, for goNELI's defaults (T = 5 s,
    // S = 3 T) against the documented formulas, each written out here.
    #[test]
    fn explain_states_the_documented_bounds_of_the_defaults() {
        let e = base().build().unwrap().explain().unwrap();
        let secs = Duration::from_secs;
        let (t, s, g) = (secs(5), secs(15), Duration::ZERO);
        assert_eq!((e.heartbeat_timeout, e.session_timeout, e.grace), (t, s, g));
        assert_eq!(e.heartbeat_interval, t / 4);
        // heartbeat.interval.ms as the Kafka backend sets it: S/5 within 100 ms..3 s.
        assert_eq!(e.group_heartbeat_interval, secs(3));
        // failover: S (session expiry) + group heartbeat + G + T.
        assert_eq!(e.failover, s + secs(3) + g + t);
        assert_eq!(e.failover, secs(23));
        // handover: group heartbeat + G + T, no session expiry.
        assert_eq!(e.handover, secs(8));
        // resign hold-off: 2 S + T, the core's own value.
        assert_eq!(e.resign_hold_off, 2 * s + t);
        assert_eq!(e.resign_hold_off, base().build().unwrap().resolve().unwrap().core(1).resign_hold_off);
        // the rebalance timeout must be above T + S with the proof; librdkafka's 300 s is in effect.
        assert_eq!(e.min_rebalance_timeout, Some(secs(20)));
        assert_eq!((e.rebalance_timeout, e.rebalance_timeout_set), (secs(300), false));
        // drift: S - T + G of margin, (S - T + G) / (S + G) as a rate.
        assert_eq!(e.drift_margin, Some(secs(10)));
        assert_eq!(e.tolerated_drift_ppm, Some(666_666));
        assert_eq!(e.close_timeout, DEFAULT_CLOSE_TIMEOUT);
        assert!(e.exclusive && e.membership_proof);
    }

    #[test]
    fn explain_uses_the_properties_in_effect_and_the_grace() {
        let ms = Duration::from_millis;
        let e = base()
            .heartbeat_timeout(ms(1000))
            .session_timeout(ms(3000))
            .grace(ms(500))
            .kafka("heartbeat.interval.ms", "250")
            .kafka("max.poll.interval.ms", "10000")
            .build()
            .unwrap()
            .explain()
            .unwrap();
        assert_eq!(e.group_heartbeat_interval, ms(250), "the user's heartbeat.interval.ms");
        assert_eq!(e.failover, ms(3000 + 250 + 500 + 1000));
        assert_eq!(e.handover, ms(250 + 500 + 1000));
        assert_eq!(e.resign_hold_off, ms(7000));
        assert_eq!(e.min_rebalance_timeout, Some(ms(4000)));
        assert_eq!((e.rebalance_timeout, e.rebalance_timeout_set), (ms(10_000), true));
        assert_eq!(e.drift_margin, Some(ms(2500)));
        assert_eq!(e.tolerated_drift_ppm, Some(714_285), "2.5 s / 3.5 s");
        let text = e.to_string();
        for line in [
            "lease T = 1s, session S = 3s, grace G = 500ms, heartbeats every 250ms, group heartbeats every 250ms (exclusive)",
            "failover on crash: within 4750ms (S for the session to expire + 250ms group heartbeat + G + T",
            "handover on close/resign: within 1750ms (250ms group heartbeat + G + T) once the Revoked handler returned \
             (close waits for it up to 10s)",
            "resign hold-off: 7s (2 S + T)",
            "rebalance timeout: must be above 4s (T + S)",
            "in effect 10s (max.poll.interval.ms)",
            "clock drift: the leader's clock may run 71.4% slow (a margin of S - T + G = 2500ms)",
        ] {
            assert!(text.contains(line), "{line:?} missing from:\n{text}");
        }
        assert_eq!(text.lines().count(), 6, "{text}");
    }

    #[test]
    fn explain_without_the_proof_or_exclusivity_says_what_it_cannot_promise() {
        let e = base().membership_proof(false).build().unwrap().explain().unwrap();
        assert_eq!(e.min_rebalance_timeout, None);
        assert!(e.to_string().contains("no requirement without the membership proof"), "{e}");
        assert!(e.to_string().contains("only while it reaches the group coordinator"), "{e}");
        let multi = Mode::MultiRole { roles: 4, partitions: 2, exclusive: false };
        let e = base().mode(multi).session_timeout(Duration::from_secs(3)).build().unwrap().explain().unwrap();
        assert_eq!((e.drift_margin, e.tolerated_drift_ppm), (None, None));
        assert!(e.to_string().contains("non-exclusive mode"), "{e}");
        let invalid = Config { heartbeat_timeout: Duration::ZERO, ..base().build().unwrap() };
        assert_eq!(invalid.explain(), Err(ConfigError::Zero { field: "heartbeat_timeout", value: Duration::ZERO }));
    }

    #[test]
    fn static_membership_needs_a_grace_of_at_least_t_and_the_proof() {
        let t = Duration::from_secs(1);
        let static_member = || base().heartbeat_timeout(t).kafka("group.instance.id", "billing-1");
        let cause = "static membership (group.instance.id)";
        let err = static_member().build().unwrap_err();
        assert_eq!(
            err,
            ConfigError::GraceBelowLease { cause, grace: Duration::ZERO, t, suggest: Duration::from_millis(1100) }
        );
        assert!(
            err.to_string().contains("with static membership (group.instance.id): the coordinator can hand"),
            "{err}"
        );
        for key in [" group.instance.id", "GROUP.INSTANCE.ID"] {
            let err = base().heartbeat_timeout(t).kafka(key, "x").build().unwrap_err();
            assert!(matches!(err, ConfigError::GraceBelowLease { .. }), "{key:?}: {err:?}");
        }
        assert_eq!(
            static_member().grace(Duration::from_millis(1100)).membership_proof(false).build().unwrap_err(),
            ConfigError::ProofRequired { cause }
        );
        let ok = static_member().grace(Duration::from_millis(1100)).build().unwrap().resolve().unwrap();
        assert_eq!(ok.kafka_config.get("group.instance.id").map(String::as_str), Some("billing-1"));
        // Under the consumer protocol the protocol's rule is named.
        let both = static_member().group_protocol(GroupProtocol::Consumer).build().unwrap_err();
        assert!(matches!(both, ConfigError::GraceBelowLease { cause: "group protocol consumer", .. }), "{both:?}");
    }

    /// The consumer protocol with T = 1 s and the smallest grace it takes.
    fn consumer() -> ConfigBuilder {
        base()
            .heartbeat_timeout(Duration::from_secs(1))
            .group_protocol(GroupProtocol::Consumer)
            .grace(Duration::from_millis(1100))
    }

    #[test]
    fn consumer_protocol_refuses_each_property_librdkafka_refuses_by_name_and_protocol() {
        for (property, _) in CONSUMER_PROTOCOL_REFUSED {
            for key in [property.to_string(), format!(" {}", property.to_uppercase())] {
                let err = consumer().kafka(key.clone(), "3000").build().unwrap_err();
                assert!(
                    matches!(&err, ConfigError::RefusedUnderProtocol { property: p, protocol: GroupProtocol::Consumer, .. } if p.as_str() == *property),
                    "{key:?}: {err:?}"
                );
                assert_eq!(err.field(), *property);
                let text = err.to_string();
                assert!(text.starts_with(&format!("cannot set '{property}' with group protocol consumer: ")), "{text}");
            }
            // The classic protocol takes them (session.timeout.ms within the rules).
            let classic = base().kafka(*property, "30000").build();
            assert!(classic.is_ok() || *property == "group.protocol.type", "{property}: {classic:?}");
        }
        let text = consumer().session_timeout(Duration::from_secs(6)).build().unwrap_err().to_string();
        assert!(text.contains("broker_session_timeout"), "the refusal says what to do instead: {text}");
        for forced in ["group.remote.assignor", "partition.assignment.strategy", "group.protocol"] {
            assert_eq!(consumer().kafka(forced, "x").build().unwrap_err(), ConfigError::ForcedKey(forced.into()));
        }
    }

    #[test]
    fn consumer_protocol_needs_a_grace_of_at_least_t_and_the_proof() {
        let t = Duration::from_secs(1);
        let err = consumer().grace(Duration::ZERO).build().unwrap_err();
        assert_eq!(
            err,
            ConfigError::GraceBelowLease {
                cause: "group protocol consumer",
                grace: Duration::ZERO,
                t,
                suggest: Duration::from_millis(1100)
            }
        );
        assert_eq!(err.field(), "grace");
        let text = err.to_string();
        for part in [
            "grace (0ns) must be at least heartbeat_timeout + 10% (1.1s, with T = 1s) with group protocol consumer",
            "without the leader's session expiring",
            "clocks running apart",
        ] {
            assert!(text.contains(part), "{part:?} missing from {text}");
        }
        for below in [t, Duration::from_millis(1099)] {
            let refused = consumer().grace(below).build();
            assert!(matches!(refused, Err(ConfigError::GraceBelowLease { .. })), "{below:?}: {refused:?}");
        }
        assert!(consumer().grace(Duration::from_millis(1100)).build().is_ok(), "T + 10% is the least");
        let err = consumer().membership_proof(false).build().unwrap_err();
        assert_eq!(err, ConfigError::ProofRequired { cause: "group protocol consumer" });
        assert_eq!(err.field(), "membership_proof");
        // The classic protocol keeps G = 0 and the proof optional.
        assert!(base().build().is_ok() && base().membership_proof(false).build().is_ok());
    }

    #[test]
    fn consumer_protocol_assumes_the_brokers_session_timeout_and_sets_no_client_one() {
        let r = consumer().build().unwrap().resolve().unwrap();
        assert_eq!(r.session_timeout, KAFKA_CONSUMER_SESSION_TIMEOUT);
        assert!(!r.kafka_config.contains_key("session.timeout.ms"), "{:?}", r.kafka_config.keys());
        assert_eq!(r.group_heartbeat_interval(), KAFKA_CONSUMER_HEARTBEAT_INTERVAL);
        assert!(r.core(1).incremental, "the consumer protocol is incremental under either broker assignor");
        let range = consumer().assignment(Assignment::Range).build().unwrap().resolve().unwrap();
        assert!(range.core(1).incremental);
        let stated = consumer().broker_session_timeout(Duration::from_secs(10)).build().unwrap().resolve().unwrap();
        assert_eq!(stated.session_timeout, Duration::from_secs(10));
        // T < S still holds in exclusive mode, against the broker's S.
        let err = consumer().broker_session_timeout(Duration::from_millis(900)).build().unwrap_err();
        assert!(matches!(err, ConfigError::ExclusiveLeaseTooLong { .. }), "{err:?}");
        let err = consumer().broker_session_timeout(Duration::ZERO).build().unwrap_err();
        assert_eq!(err, ConfigError::Zero { field: "broker_session_timeout", value: Duration::ZERO });
        let err = base().broker_session_timeout(Duration::from_secs(10)).build().unwrap_err();
        assert_eq!(err, ConfigError::BrokerSessionTimeoutUnderClassic { s: Duration::from_secs(10) });
        assert_eq!(err.field(), "broker_session_timeout");
        assert!(err.to_string().contains("only for group protocol consumer"), "{err}");
    }

    #[test]
    fn consumer_protocol_drift_margin_is_the_grace_beyond_the_lease() {
        let e = consumer().grace(Duration::from_millis(1100)).build().unwrap().explain().unwrap();
        assert_eq!(e.drift_margin, Some(Duration::from_millis(100)));
        // 100 ms of a wait of 1.1 s.
        assert_eq!(e.tolerated_drift_ppm, Some(90_909));
        assert!(e.to_string().contains("may run 9.0% slow (a margin of G - T = 100ms)"), "{e}");
        let wider = consumer().grace(Duration::from_millis(1250)).build().unwrap().explain().unwrap();
        assert_eq!((wider.drift_margin, wider.tolerated_drift_ppm), (Some(Duration::from_millis(250)), Some(200_000)));
    }

    #[test]
    fn group_protocol_names_parse_and_print() {
        for p in [GroupProtocol::Classic, GroupProtocol::Consumer] {
            assert_eq!(GroupProtocol::parse(p.name()), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!(GroupProtocol::default(), GroupProtocol::Classic);
        let err = GroupProtocol::parse("CONSUMER").unwrap_err();
        assert_eq!(err, "\"CONSUMER\" is not a group protocol (expected \"classic\" or \"consumer\")");
    }

    #[test]
    fn heartbeat_interval_property_must_be_a_positive_number_of_milliseconds() {
        let err = base().kafka("heartbeat.interval.ms", "soon").build().unwrap_err();
        assert_eq!(err, ConfigError::NotANumber { field: "heartbeat.interval.ms", value: "soon".into() });
        let err = base().kafka("heartbeat.interval.ms", "0").build().unwrap_err();
        assert_eq!(err, ConfigError::Zero { field: "heartbeat.interval.ms", value: Duration::ZERO });
        let err = base().membership_proof(false).kafka("max.poll.interval.ms", "soon").build().unwrap_err();
        assert_eq!(err, ConfigError::NotANumber { field: "max.poll.interval.ms", value: "soon".into() });
    }

    #[test]
    fn default_name_starts_with_the_kernels_host_name() {
        let host =
            std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_default();
        if !host.is_empty() {
            assert!(default_name().starts_with(&format!("{host}_")), "{} vs host {host}", default_name());
        }
    }
}
