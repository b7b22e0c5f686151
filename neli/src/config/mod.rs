//! User-facing configuration with goNELI's names and defaults, its builder
//! (`builder`), validation into the core's [`CoreConfig`] (`validate`, on
//! the bounds of `bounds`), its errors (`error`) and [`Config::explain`]
//! (`explain`).
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
use crate::secrets::is_secret_key;

mod bounds;
mod builder;
mod error;
mod explain;
#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
mod validate;

pub use bounds::{
    failover_bound, group_heartbeat_interval, handover_bound, lease_margin, min_rebalance_timeout, read_back_wait,
    resign_hold_off,
};
pub use builder::ConfigBuilder;
pub use error::{ConfigError, UnknownName};
pub use explain::Explanation;
use validate::property_ms;

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
    /// Eager `range` (goNELI's, and neli's earlier default): every rebalance
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
    pub fn parse(text: &str) -> Result<Assignment, UnknownName> {
        [Assignment::Range, Assignment::CooperativeSticky].into_iter().find(|a| a.name() == text).ok_or_else(|| {
            UnknownName {
                given: text.to_owned(),
                what: "an assignment strategy",
                expected: "\"range\" or \"cooperative-sticky\"",
            }
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
    pub fn parse(text: &str) -> Result<GroupProtocol, UnknownName> {
        [GroupProtocol::Classic, GroupProtocol::Consumer].into_iter().find(|p| p.name() == text).ok_or_else(|| {
            UnknownName { given: text.to_owned(), what: "a group protocol", expected: "\"classic\" or \"consumer\"" }
        })
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
pub(crate) struct Redacted<'a>(pub &'a BTreeMap<String, String>);

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

    /// How long a fetch waits at the broker: the client property
    /// `fetch.wait.max.ms` if set, else [`read_back_wait`].
    pub fn read_back_wait(&self) -> Duration {
        property_ms(&self.kafka_config, "fetch.wait.max.ms")
            .ok()
            .flatten()
            .unwrap_or_else(|| read_back_wait(self.heartbeat_timeout))
    }

    /// The rebalance timeout in effect: the client property
    /// `max.poll.interval.ms` if set, else librdkafka's default
    /// ([`LIBRDKAFKA_MAX_POLL_INTERVAL`]).
    pub fn rebalance_timeout(&self) -> Duration {
        property_ms(&self.kafka_config, "max.poll.interval.ms").ok().flatten().unwrap_or(LIBRDKAFKA_MAX_POLL_INTERVAL)
    }
}

impl Config {
    /// A builder starting from goNELI's defaults; `build` validates.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder { cfg: Config::default() }
    }
}
