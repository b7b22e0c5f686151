//! The librdkafka client properties of each client: the user's plus the
//! election's forced ones, per group protocol and assignment.

use std::sync::Arc;

use rdkafka::admin::AdminClient;
use rdkafka::config::ClientConfig;

use super::{broker_err, client};
use crate::broker::BrokerError;
use crate::config::{GroupProtocol, ResolvedConfig};

/// The user's client properties plus the election's forced ones.
pub(crate) fn base_config(cfg: &ResolvedConfig) -> ClientConfig {
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

pub(crate) fn consumer_config(cfg: &ResolvedConfig) -> ClientConfig {
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
        // Brokers that do not wake a waiting fetch when data arrives (tansu,
        // the librdkafka mock; 500 ms by default) delay every heartbeat's
        // read-back by up to this wait, eating into the lease T.
        let wait = crate::config::read_back_wait(cfg.heartbeat_timeout);
        c.set("fetch.wait.max.ms", wait.as_millis().to_string());
    }
    if !cfg.kafka_config.contains_key("client.id") {
        c.set("client.id", format!("neli-{}", cfg.name));
    }
    c
}

pub(crate) fn producer_config(cfg: &ResolvedConfig) -> ClientConfig {
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
pub(crate) fn helper_context(cfg: &ResolvedConfig) -> client::ProbeContext {
    client::ProbeContext::new(Arc::new(cfg.redactor()))
}

pub(crate) fn admin_client(cfg: &ResolvedConfig) -> Result<AdminClient<client::ProbeContext>, BrokerError> {
    producer_config(cfg)
        .create_with_context(helper_context(cfg))
        .map_err(|e| broker_err(&cfg.redactor(), "create admin client", &e))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use rdkafka::consumer::BaseConsumer;

    use super::*;
    use crate::config::{Assignment, Config, GroupProtocol};

    pub(crate) fn resolved(protocol: GroupProtocol, assignment: Assignment) -> ResolvedConfig {
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
        assert_eq!(classic.get("heartbeat.interval.ms"), Some("300"));
        assert_eq!(classic.get("group.remote.assignor"), None);
        // The read-back wait, T/40 at T = 1 s, under either protocol.
        for protocol in [GroupProtocol::Classic, GroupProtocol::Consumer] {
            let c = consumer_config(&resolved(protocol, Assignment::CooperativeSticky));
            assert_eq!(c.get("fetch.wait.max.ms"), Some("25"), "{protocol:?}");
        }
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
}
