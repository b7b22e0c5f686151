//! Admin calls and topic checks: is the cluster reachable, the election
//! topic (created when missing, recreated when lost), its timestamp type,
//! the group's session timeout under the consumer protocol, and the thread
//! that watches the topic and its end marker.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::consumer::BaseConsumer;
use rdkafka::error::RDKafkaErrorCode;

use super::client::{self, ProduceContext};
use super::settings::{admin_client, consumer_config, helper_context, producer_config};
use super::{TimestampType, broker_err, kind_of};
use crate::broker::{BrokerError, BrokerEvent};
use crate::config::ResolvedConfig;
use crate::kafka::{TOPIC_CHECK_INTERVAL, end_marker_topic};
use rdkafka::producer::{Producer, ThreadedProducer};

/// Fails fast with a clear message if nobody answers at the bootstrap
/// servers, and at once, with librdkafka's reason, if the cluster answers
/// but refuses this client (a TLS certificate that does not verify, failed
/// SASL authentication): retrying cannot fix a configuration.
pub(crate) async fn reachable(cfg: &ResolvedConfig, timeout: Duration) -> Result<(), BrokerError> {
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
pub(crate) async fn ensure_topic(cfg: &ResolvedConfig, timeout: Duration) -> Result<u32, BrokerError> {
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

/// Best effort: a new election on a missing topic clears an old end marker.
pub(crate) async fn remove_end_marker(
    admin: &AdminClient<client::ProbeContext>,
    cfg: &ResolvedConfig,
    timeout: Duration,
) {
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

pub(crate) async fn topic_partitions(cfg: &ResolvedConfig, timeout: Duration) -> Result<Option<u32>, BrokerError> {
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

pub(crate) async fn read_timestamp_type(cfg: &ResolvedConfig, timeout: Duration) -> TimestampType {
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
pub(crate) async fn read_group_session(cfg: &ResolvedConfig, timeout: Duration) -> Option<GroupSession> {
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
pub(crate) struct GroupSession {
    session_timeout: Option<Duration>,
    heartbeat_interval: Option<Duration>,
}

/// Logs what the broker said of the group's session against what neli
/// assumed: the bounds `explain` gives rest on S; safety does not (under
/// the consumer protocol it rests on G >= T + 10 %, which validation enforced).
pub(crate) fn report_group_session(cfg: &ResolvedConfig, found: Option<GroupSession>) {
    for line in group_session_report(cfg, found) {
        match line {
            (true, text) => tracing::warn!(group = %cfg.group_id, "{text}"),
            (false, text) => tracing::info!(group = %cfg.group_id, "{text}"),
        }
    }
}

/// The lines [`report_group_session`] logs, each with whether it is a warning.
pub(crate) fn group_session_report(cfg: &ResolvedConfig, found: Option<GroupSession>) -> Vec<(bool, String)> {
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
pub(crate) fn recreate_topic(cfg: &ResolvedConfig, timeout: Duration) {
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

pub(crate) fn watch_topic(
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::{Assignment, GroupProtocol};
    use crate::kafka::librdkafka::settings::tests::resolved;

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
