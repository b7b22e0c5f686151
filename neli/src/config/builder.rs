//! [`ConfigBuilder`]: a [`Config`] from goNELI's defaults, field by field;
//! `build` validates.

use std::time::Duration;

use super::error::ConfigError;
use super::{Assignment, Config, GroupProtocol, Mode};

/// Builder for [`Config`]; `build` validates.
#[derive(Debug, Clone, Default)]
pub struct ConfigBuilder {
    pub(super) cfg: Config,
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
    /// cannot say (default [`KAFKA_CONSUMER_SESSION_TIMEOUT`](super::KAFKA_CONSUMER_SESSION_TIMEOUT), 45 s); the
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
