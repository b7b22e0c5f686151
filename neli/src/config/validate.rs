//! Validation: [`Config::resolve`] refuses what is provably unsafe or
//! malformed and resolves every default.

use std::collections::BTreeMap;
use std::time::Duration;

use super::bounds::{lease_margin, min_rebalance_timeout};
use super::error::ConfigError;
use super::{CONSUMER_PROTOCOL_REFUSED, FORCED_KEYS, KAFKA_CONSUMER_SESSION_TIMEOUT, STATIC_MEMBERSHIP_KEY};
use super::{Config, GroupProtocol, Mode, ResolvedConfig};

impl Config {
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

/// The client property `key` of `properties`, a whole number of
/// milliseconds, if set.
pub(super) fn property_ms(
    properties: &BTreeMap<String, String>,
    key: &'static str,
) -> Result<Option<Duration>, ConfigError> {
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

pub(super) fn default_name() -> String {
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
