//! The rdkafka side of [`super::KafkaBroker`]: one consumer polled on a
//! dedicated thread, one threaded producer, and a topic watcher thread.
//!
//! librdkafka runs rebalance callbacks on the thread that calls `poll`, so
//! that thread is ours alone: a revocation callback forwards `Revoked` to the
//! driver and *blocks* until the driver acknowledges it, which is what holds
//! the partition until the application's Revoked handler has finished (eager
//! protocol: the group cannot complete the rebalance before we unassign).
//! Nothing async ever blocks on librdkafka: every blocking call runs on these
//! threads, and the async side bounds its waits.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::Duration;

use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, RebalanceProtocol};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, DeliveryResult, Producer, ProducerContext};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::mpsc;

use super::errors::classify;
use crate::broker::{BrokerError, BrokerEvent};
use crate::core::Record;
use crate::secrets::Redactor;

/// Bound on the metadata refresh that precedes every assignment (it runs on
/// the poll thread, inside the rebalance callback).
const ASSIGN_METADATA_LIMIT: Duration = Duration::from_secs(2);

/// How long the poll thread waits in one `poll` call; bounds how late a
/// command (close) or an acknowledgement is noticed.
pub(crate) const POLL_SLICE: Duration = Duration::from_millis(10);

pub(crate) type EventTx = mpsc::UnboundedSender<Result<BrokerEvent, BrokerError>>;

/// State shared by the consumer context (poll thread) and the async side.
pub(crate) struct Shared {
    pub(crate) topic: String,
    pub(crate) events: EventTx,
    /// Generation of the current assignment (0 = none).
    pub(crate) generation: AtomicU64,
    /// Highest generation ever assigned, so a fallback never goes backwards.
    pub(crate) last_generation: AtomicU64,
    /// Set while leaving or closing: revocations are then not held.
    pub(crate) leaving: AtomicBool,
    pub(crate) closing: AtomicBool,
    /// Acknowledgements of a held revocation.
    pub(crate) acks: Mutex<Option<std_mpsc::Receiver<()>>>,
    /// librdkafka reported every broker down: fetching is paused until the
    /// cluster answers again and lists the election topic (see [`poll_loop`]).
    pub(crate) outage: AtomicBool,
    /// Every librdkafka text passes through it before it is logged or sent.
    pub(crate) redactor: Arc<Redactor>,
    /// How often the poll thread wakes librdkafka's main thread
    /// ([`group_wake`]).
    pub(crate) group_wake: Duration,
}

/// How often the poll thread wakes librdkafka's main thread: a tenth of the
/// group heartbeat interval, within 10..250 ms.
///
/// librdkafka sends a group heartbeat only when its main thread wakes up,
/// and an idle consumer's main thread sleeps up to a second between its
/// timers, so a 600 ms `heartbeat.interval.ms` becomes one heartbeat a
/// second, all members of a group in step. A survivor learns of a leave
/// or an expiry only from its next heartbeat's answer, so that second went
/// into every handover and failover (neli/KAFKA.md, "Group heartbeats at
/// the interval set").
/// Any request served by the main thread wakes it; the cheapest is asking
/// for the rebalance protocol.
pub(crate) fn group_wake(group_heartbeat: Duration) -> Duration {
    (group_heartbeat / 10).clamp(Duration::from_millis(10), Duration::from_millis(250))
}

/// Consumer context: rebalances become broker events.
pub(crate) struct ElectionContext {
    pub(crate) shared: Arc<Shared>,
}

impl ClientContext for ElectionContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        log_librdkafka(&self.shared.redactor, level, fac, log_message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        if error.rdkafka_error_code() == Some(rdkafka::error::RDKafkaErrorCode::AllBrokersDown) {
            self.shared.outage.store(true, Ordering::SeqCst);
        }
        forward_client_error(&self.shared.redactor, &self.shared.events, error, reason);
    }
}

impl ConsumerContext for ElectionContext {
    fn rebalance(&self, consumer: &BaseConsumer<Self>, err: RDKafkaRespErr, tpl: &mut TopicPartitionList) {
        // The protocol the group elected, not the configured strategy: it is
        // NONE until a JoinGroup picked an assignor, and calling the wrong
        // kind of (un)assign leaves the member assigned nothing for ever
        // (docs/cooperative-rebalance.md, "rust-rdkafka").
        let incremental = matches!(consumer.rebalance_protocol(), RebalanceProtocol::Cooperative);
        // Under the incremental protocol `tpl` is the change, not the set.
        let partitions = self.ours(tpl);
        match err {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => self.assign(consumer, tpl, partitions, incremental),
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS => self.revoke(consumer, tpl, partitions, incremental),
            other => {
                tracing::warn!(error = ?other, "rebalance error; dropping the assignment");
                self.shared.generation.store(0, Ordering::SeqCst);
                let _ = self.shared.events.send(Ok(BrokerEvent::Lost { partitions }));
                let _ = consumer.unassign();
            }
        }
    }
}

impl ElectionContext {
    /// `partitions` (ours in `tpl`) were assigned: take them, fetching only
    /// once the cluster lists the topic, and tell the core the full set.
    fn assign(
        &self,
        consumer: &BaseConsumer<Self>,
        tpl: &mut TopicPartitionList,
        partitions: Vec<u32>,
        incremental: bool,
    ) {
        // Fresh metadata before fetching: after a broker lost its
        // state the topic was recreated under a new topic id, and a
        // consumer whose cache still holds the old id fetches with
        // it. tansu answers that fetch with an error that makes
        // librdkafka 2.12.1 dereference a NULL topic name (SIGSEGV in
        // `rd_kafka_metadata_update_op`); see neli/KAFKA.md, "Broker
        // restart with state loss". An incremental Assign of nothing
        // (every member gets one on every rebalance) fetches nothing
        // new, and every partition is paused until this returns.
        let listed =
            (incremental && partitions.is_empty()) || topic_listed(consumer, &self.shared.topic, ASSIGN_METADATA_LIMIT);
        // Only fresh heartbeats matter: never replay history.
        start_at_the_end(consumer, tpl, listed);
        let last = self.shared.last_generation.load(Ordering::SeqCst);
        // Without the group's generation, a local counter still
        // orders this member's own terms.
        let generation = read_generation(consumer).filter(|g| *g > last).unwrap_or(last + 1);
        self.shared.last_generation.store(generation, Ordering::SeqCst);
        self.shared.generation.store(generation, Ordering::SeqCst);
        let assigned = if incremental { consumer.incremental_assign(tpl) } else { consumer.assign(tpl) };
        if let Err(e) = assigned {
            let message = self.shared.redactor.redact(&format!("assign failed: {e}"));
            let _ = self.shared.events.send(Err(BrokerError::retriable(message)));
        }
        // A pause outlives unassign/assign in librdkafka, so every
        // assignment says explicitly whether it may fetch: only once
        // the cluster lists the topic (else the poll thread keeps
        // checking, as after an outage).
        if listed {
            let _ = consumer.resume(tpl);
            self.shared.outage.store(false, Ordering::SeqCst);
        } else {
            let _ = consumer.pause(tpl);
            self.shared.outage.store(true, Ordering::SeqCst);
        }
        // The core is always told the full set it now owns.
        let partitions =
            if incremental { consumer.assignment().map(|a| self.ours(&a)).unwrap_or(partitions) } else { partitions };
        tracing::debug!(generation, ?partitions, incremental, "assigned");
        let _ = self.shared.events.send(Ok(BrokerEvent::Assigned { generation, partitions }));
    }

    /// `partitions` (ours in `tpl`) are taken away: `Lost` if the member was
    /// evicted, else `Revoked`, held until the driver acknowledges it.
    fn revoke(
        &self,
        consumer: &BaseConsumer<Self>,
        tpl: &mut TopicPartitionList,
        partitions: Vec<u32>,
        incremental: bool,
    ) {
        // Read before unassigning: incremental_unassign clears it.
        let lost = consumer.assignment_lost();
        let keeps =
            incremental && consumer.assignment().is_ok_and(|a| self.ours(&a).iter().any(|p| !partitions.contains(p)));
        if lost || !keeps {
            // No membership proof is taken for a member that owns
            // nothing or lost its assignment; one that keeps other
            // partitions still proves its generation.
            self.shared.generation.store(0, Ordering::SeqCst);
        }
        if lost {
            // Evicted: another member may already own the partition.
            let _ = self.shared.events.send(Ok(BrokerEvent::Lost { partitions }));
        } else {
            self.hold_revocation(partitions);
        }
        if incremental {
            let _ = consumer.incremental_unassign(tpl);
        } else {
            let _ = consumer.unassign();
        }
    }

    /// The election topic's partitions in `tpl`.
    fn ours(&self, tpl: &TopicPartitionList) -> Vec<u32> {
        tpl.elements()
            .iter()
            .filter(|e| e.topic() == self.shared.topic)
            .filter_map(|e| u32::try_from(e.partition()).ok())
            .collect()
    }

    /// Sends `Revoked` and waits for the driver's acknowledgement before the
    /// partitions are unassigned (the handover barrier).
    fn hold_revocation(&self, partitions: Vec<u32>) {
        let acks = self.shared.acks.lock().expect("acks lock");
        let Some(acks) = acks.as_ref() else { return };
        while acks.try_recv().is_ok() {}
        let _ = self.shared.events.send(Ok(BrokerEvent::Revoked { partitions }));
        if self.shared.leaving.load(Ordering::SeqCst) {
            return;
        }
        loop {
            if self.shared.closing.load(Ordering::SeqCst) || self.shared.leaving.load(Ordering::SeqCst) {
                return;
            }
            match acks.recv_timeout(Duration::from_millis(50)) {
                Ok(()) | Err(std_mpsc::RecvTimeoutError::Disconnected) => return,
                Err(std_mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

/// The group generation of the consumer's current membership, read from
/// librdkafka's serialized group metadata (`"CGMDv2:" <i32 generation> ...`,
/// native endian; rdkafka does not expose the generation otherwise).
fn read_generation(consumer: &BaseConsumer<ElectionContext>) -> Option<u64> {
    group_metadata(consumer).and_then(|bytes| parse_generation(&bytes))
}

/// The generation id librdkafka would put in its own commit, as the broker
/// numbers it (tansu starts at 0): what the proof's own connection sends.
pub(crate) fn wire_generation(consumer: &BaseConsumer<ElectionContext>) -> Option<i32> {
    group_metadata(consumer).and_then(|bytes| parse_raw_generation(&bytes)).filter(|g| *g >= 0)
}

fn group_metadata(consumer: &BaseConsumer<ElectionContext>) -> Option<Vec<u8>> {
    // SAFETY: the pointers come from librdkafka and are released with the
    // matching librdkafka functions; the buffer is read within its length.
    unsafe {
        let rk = consumer.client().native_ptr();
        let md = rdkafka_sys::rd_kafka_consumer_group_metadata(rk);
        if md.is_null() {
            return None;
        }
        let mut buf: *mut std::ffi::c_void = std::ptr::null_mut();
        let mut size: usize = 0;
        let err = rdkafka_sys::rd_kafka_consumer_group_metadata_write(md, &mut buf, &mut size);
        rdkafka_sys::rd_kafka_consumer_group_metadata_destroy(md);
        if !err.is_null() {
            rdkafka_sys::rd_kafka_error_destroy(err);
            return None;
        }
        let bytes = std::slice::from_raw_parts(buf as *const u8, size).to_vec();
        rdkafka_sys::rd_kafka_mem_free(rk, buf);
        Some(bytes)
    }
}

/// The member id librdkafka holds for this consumer (None before it joined).
pub(crate) fn member_id(consumer: &BaseConsumer<ElectionContext>) -> Option<String> {
    // SAFETY: librdkafka returns a NUL-terminated copy (or NULL) that the
    // caller frees with rd_kafka_mem_free.
    unsafe {
        let rk = consumer.client().native_ptr();
        let raw = rdkafka_sys::rd_kafka_memberid(rk);
        if raw.is_null() {
            return None;
        }
        let id = std::ffi::CStr::from_ptr(raw).to_string_lossy().into_owned();
        rdkafka_sys::rd_kafka_mem_free(rk, raw as *mut std::ffi::c_void);
        Some(id).filter(|id| !id.is_empty())
    }
}

pub(crate) fn parse_generation(bytes: &[u8]) -> Option<u64> {
    parse_raw_generation(bytes).and_then(|g| u64::try_from(g).ok()).filter(|g| *g > 0)
}

fn parse_raw_generation(bytes: &[u8]) -> Option<i32> {
    let magic = b"CGMDv2:";
    if bytes.len() < magic.len() + 4 || &bytes[..magic.len()] != magic {
        return None;
    }
    let raw: [u8; 4] = bytes[magic.len()..magic.len() + 4].try_into().ok()?;
    Some(i32::from_ne_bytes(raw))
}

/// Producer context: delivery failures are logged (the lease simply does
/// not get renewed by a heartbeat that never arrives).
pub(crate) struct ProduceContext {
    pub(crate) events: EventTx,
    pub(crate) redactor: Arc<Redactor>,
}

impl ClientContext for ProduceContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        log_librdkafka(&self.redactor, level, fac, log_message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        forward_client_error(&self.redactor, &self.events, error, reason);
    }
}

impl ProducerContext for ProduceContext {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: Self::DeliveryOpaque) {
        if let Err((e, _)) = result {
            tracing::warn!(error = %self.redactor.redact(&e.to_string()), "heartbeat delivery failed");
        }
    }
}

fn forward_client_error(redactor: &Redactor, events: &EventTx, error: KafkaError, reason: &str) {
    let kind = classify(&error);
    let e = BrokerError { kind, message: redactor.redact(&format!("{error}: {reason}")) };
    if e.is_fatal() {
        let _ = events.send(Err(e));
    } else {
        // Transient client errors (broker down, timeouts) show up as missing
        // heartbeats; the lease handles them. Log, do not flood the driver.
        tracing::debug!(error = %e.message, "librdkafka client error");
    }
}

/// librdkafka's own log level, taken from what the `tracing` subscriber
/// wants for target `librdkafka` (rdkafka would otherwise derive it from the
/// `log` crate, which nothing here initialises, and drop everything below
/// errors, warnings included).
pub(crate) fn librdkafka_log_level() -> RDKafkaLogLevel {
    if tracing::enabled!(target: "librdkafka", tracing::Level::DEBUG) {
        RDKafkaLogLevel::Debug
    } else if tracing::enabled!(target: "librdkafka", tracing::Level::INFO) {
        RDKafkaLogLevel::Info
    } else if tracing::enabled!(target: "librdkafka", tracing::Level::WARN) {
        RDKafkaLogLevel::Warning
    } else {
        RDKafkaLogLevel::Error
    }
}

pub(crate) fn log_librdkafka(redactor: &Redactor, level: RDKafkaLogLevel, fac: &str, message: &str) {
    let message = redactor.redact(message);
    match level {
        RDKafkaLogLevel::Emerg | RDKafkaLogLevel::Alert | RDKafkaLogLevel::Critical | RDKafkaLogLevel::Error => {
            tracing::error!(target: "librdkafka", fac, "{message}")
        }
        RDKafkaLogLevel::Warning => tracing::warn!(target: "librdkafka", fac, "{message}"),
        RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
            tracing::info!(target: "librdkafka", fac, "{message}")
        }
        RDKafkaLogLevel::Debug => tracing::debug!(target: "librdkafka", fac, "{message}"),
    }
}

/// Context of the connection probe ([`probe`]): remembers the client
/// errors librdkafka reports through its error callback, so a failed connect
/// says why (a TLS handshake or authentication failure) instead of only
/// "no answer", and says it at once. The short-lived helper clients (admin,
/// metadata) use it too, so their librdkafka texts are redacted as well.
pub(crate) struct ProbeContext {
    pub(crate) redactor: Arc<Redactor>,
    seen: Mutex<ProbeErrors>,
}

#[derive(Default)]
struct ProbeErrors {
    /// The first error that retrying cannot heal (TLS, authentication).
    refused: Option<String>,
    /// The newest client error that says why (not "all brokers are down").
    last: Option<String>,
}

impl ProbeContext {
    pub(crate) fn new(redactor: Arc<Redactor>) -> ProbeContext {
        ProbeContext { redactor, seen: Mutex::new(ProbeErrors::default()) }
    }
}

impl ClientContext for ProbeContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        log_librdkafka(&self.redactor, level, fac, log_message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        let text = self.redactor.redact(&format!("{reason} ({error})"));
        tracing::debug!(error = %text, "librdkafka client error while connecting");
        let mut seen = self.seen.lock().expect("probe lock");
        // A SASL handshake cut short by the network (librdkafka reports it as
        // an authentication error too) may heal: keep retrying it.
        let cut_short = reason.contains("transport failure") || reason.contains("Disconnected");
        if ((refuses_connection(&error) && !cut_short) || is_tls_alert(reason)) && seen.refused.is_none() {
            seen.refused = Some(text.clone());
        }
        // "All brokers are down" only sums up the errors before it: keep
        // the error that says why.
        let summary = error.rdkafka_error_code() == Some(rdkafka::error::RDKafkaErrorCode::AllBrokersDown);
        if !summary || seen.last.is_none() {
            seen.last = Some(text);
        }
    }
}

impl ProducerContext for ProbeContext {
    type DeliveryOpaque = ();

    fn delivery(&self, _: &DeliveryResult<'_>, _: Self::DeliveryOpaque) {}
}

/// Errors of the error callback that mean the cluster answered but the
/// connection cannot be set up with this configuration: a failed TLS
/// handshake or certificate check (librdkafka reports these as `_SSL`,
/// `rdkafka_ssl.c`), a failed SASL handshake or authentication.
pub(crate) fn refuses_connection(error: &KafkaError) -> bool {
    use rdkafka::error::RDKafkaErrorCode as C;
    matches!(
        error.rdkafka_error_code(),
        Some(
            C::SSL
                | C::Authentication
                | C::SaslAuthenticationFailed
                | C::UnsupportedSASLMechanism
                | C::IllegalSASLState
        )
    )
}

/// Whether a transport error is a TLS alert the broker sent (OpenSSL's
/// "SSL routines::... alert ...", e.g. "tlsv13 alert certificate required"
/// when it demands a client certificate): with TLS 1.3 the client's
/// handshake is over before the broker checks the client, so librdkafka
/// reports the broker's refusal as a failed receive, not as an `_SSL` error.
/// An alert is the broker's answer, not a network fault: retrying cannot fix it.
pub(crate) fn is_tls_alert(reason: &str) -> bool {
    reason.contains("SSL routines") && reason.contains(" alert ")
}

/// What the connection probe found.
pub(crate) enum Probe {
    /// The cluster answered a metadata request.
    Answered,
    /// The cluster cannot be used with this configuration; librdkafka's reason.
    Refused(String),
    /// No answer within the timeout: the metadata error and the newest client error.
    NoAnswer { error: String, last: Option<String> },
}

/// How long one metadata request of the probe may take; bounds how late a
/// TLS or authentication failure is reported.
const PROBE_SLICE: Duration = Duration::from_millis(200);

/// Asks the cluster for metadata until it answers, a client error shows the
/// connection can never work, or `timeout` passes. Blocks: run it on a
/// blocking thread.
pub(crate) fn probe(producer: &BaseProducer<ProbeContext>, timeout: Duration) -> Probe {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let result = producer.client().fetch_metadata(None, left.clamp(Duration::from_millis(1), PROBE_SLICE));
        // librdkafka queues error callbacks until the client is polled; one
        // poll serves at most one event.
        for _ in 0..16 {
            producer.poll(Duration::ZERO);
        }
        let ctx = producer.context();
        let seen = ctx.seen.lock().expect("probe lock");
        match result {
            Ok(_) => return Probe::Answered,
            Err(_) if seen.refused.is_some() => return Probe::Refused(seen.refused.clone().unwrap_or_default()),
            Err(e) if std::time::Instant::now() >= deadline => {
                return Probe::NoAnswer { error: ctx.redactor.redact(&e.to_string()), last: seen.last.clone() };
            }
            Err(_) => {}
        }
    }
}

/// The poll loop: forwards records (and, through the context, rebalances)
/// until closing; then closes the consumer on this same thread.
///
/// It also keeps a fetch from resuming blindly after an outage of every
/// broker: a broker that comes back without its data has recreated (or not
/// yet recreated) the election topic under a new topic id, and a fetch under
/// the old id makes tansu answer with leader tags that crash librdkafka
/// 2.12.1 (neli/KAFKA.md, "Broker restart with state loss"). So when
/// librdkafka reports all brokers down, the assignment is paused; it resumes
/// once a metadata request (which also refreshes the topic id) lists the topic.
pub(crate) fn poll_loop(consumer: Arc<BaseConsumer<ElectionContext>>, shared: Arc<Shared>) {
    let mut paused: Option<std::time::Instant> = None;
    let mut woken = std::time::Instant::now();
    while !shared.closing.load(Ordering::SeqCst) {
        paused = hold_fetches_through_outage(&consumer, &shared, paused);
        if woken.elapsed() >= shared.group_wake {
            let _ = consumer.rebalance_protocol();
            woken = std::time::Instant::now();
        }
        match consumer.poll(POLL_SLICE) {
            None => {}
            Some(Ok(msg)) => {
                if msg.topic() != shared.topic {
                    continue;
                }
                let (Ok(partition), Ok(offset)) = (u32::try_from(msg.partition()), u64::try_from(msg.offset())) else {
                    continue;
                };
                let record = Record {
                    partition,
                    offset,
                    timestamp: msg.timestamp().to_millis().and_then(|t| u64::try_from(t).ok()),
                    payload: msg.payload().unwrap_or_default().to_vec(),
                };
                let _ = shared.events.send(Ok(BrokerEvent::Record(record)));
            }
            Some(Err(e)) => {
                let kind = classify(&e);
                let err = BrokerError { kind, message: shared.redactor.redact(&format!("consumer: {e}")) };
                if err.is_fatal() {
                    let _ = shared.events.send(Err(err));
                } else {
                    tracing::debug!(error = %err.message, "consumer error");
                }
            }
        }
    }
    // Leaves the group (LeaveGroup; the revocation is not held since
    // `closing` is set) and waits for librdkafka to finish closing, bounded.
    // Runs here, so a hung librdkafka blocks this thread, never `close`.
    if consumer.close_queue().is_ok() {
        let deadline = std::time::Instant::now() + CLOSE_LIMIT;
        while !consumer.closed() && std::time::Instant::now() < deadline {
            let _ = consumer.poll(Duration::from_millis(50));
        }
    }
}

/// Where the partitions in `tpl` start: at the log's end as the cluster
/// reports it now, before this member writes its first heartbeat there.
/// Left to librdkafka (`Offset::End`, looked up once its fetcher starts),
/// the end could be looked up after that heartbeat landed (tansu answers a
/// ListOffsets sent before a produce after the produce), and the member
/// would read only its next heartbeat, a heartbeat interval later
/// (neli/KAFKA.md, "tansu's timing"). One lookup for all of them (a
/// ListOffsets per leader broker); `Offset::End` where it fails or the
/// topic is not listed.
fn start_at_the_end<C: ConsumerContext>(consumer: &BaseConsumer<C>, tpl: &mut TopicPartitionList, listed: bool) {
    let _ = tpl.set_all_offsets(Offset::End);
    if !listed || tpl.count() == 0 {
        return;
    }
    // A timestamp of -1 (`Offset::End`) asks for the latest offset.
    match consumer.offsets_for_times(tpl.clone(), END_QUERY_LIMIT) {
        Ok(ends) => {
            for e in ends.elements() {
                if let (Offset::Offset(at), Ok(())) = (e.offset(), e.error()) {
                    let _ = tpl.set_partition_offset(e.topic(), e.partition(), Offset::Offset(at));
                }
            }
        }
        Err(e) => tracing::debug!(error = %e, "the log's end unknown at assignment; librdkafka looks it up"),
    }
}

/// How long an assignment waits for the log's end before leaving it to
/// librdkafka.
const END_QUERY_LIMIT: Duration = Duration::from_secs(1);

/// Pauses the assignment when an outage starts; every [`OUTAGE_RECHECK`]
/// asks for metadata and resumes once the election topic is listed again.
fn hold_fetches_through_outage(
    consumer: &BaseConsumer<ElectionContext>,
    shared: &Shared,
    paused: Option<std::time::Instant>,
) -> Option<std::time::Instant> {
    if !shared.outage.load(Ordering::SeqCst) {
        return None;
    }
    let Some(since) = paused else {
        if let Ok(assignment) = consumer.assignment() {
            let _ = consumer.pause(&assignment);
        }
        tracing::info!("every broker is down: fetching paused until the election topic is listed again");
        return Some(std::time::Instant::now());
    };
    if since.elapsed() < OUTAGE_RECHECK {
        return Some(since);
    }
    if !topic_listed(consumer, &shared.topic, OUTAGE_RECHECK) {
        return Some(std::time::Instant::now());
    }
    shared.outage.store(false, Ordering::SeqCst);
    if let Ok(assignment) = consumer.assignment() {
        let _ = consumer.resume(&assignment);
    }
    tracing::info!("the cluster lists the election topic again: fetching resumed");
    None
}

/// Asks the cluster for all topics (which also refreshes this client's
/// cached topic ids) and says whether it lists `topic`. All topics, never
/// one by name: naming a topic that is gone is the other known crash.
fn topic_listed(consumer: &BaseConsumer<ElectionContext>, topic: &str, limit: Duration) -> bool {
    match consumer.client().fetch_metadata(None, limit) {
        Ok(md) => md.topics().iter().any(|t| t.name() == topic && t.error().is_none()),
        Err(e) => {
            tracing::debug!(error = %e, "metadata request failed");
            false
        }
    }
}

/// How often a paused consumer asks whether the cluster is back.
const OUTAGE_RECHECK: Duration = Duration::from_millis(250);

/// Longest the poll thread waits for librdkafka's consumer close.
const CLOSE_LIMIT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::{is_tls_alert, parse_generation, refuses_connection, start_at_the_end};
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::error::{KafkaError, RDKafkaErrorCode};
    use rdkafka::{ClientConfig, Offset, TopicPartitionList};

    // A dealt partition is read from the end the cluster reported before
    // the member's first heartbeat, not from an end librdkafka looks up
    // later, past that heartbeat (neli/KAFKA.md, "tansu's timing");
    // without the topic listed the lookup is left to librdkafka.
    #[test]
    fn dealt_partitions_start_at_the_end_reported_at_assignment() {
        let mock = crate::kafka::mock::MockKafka::start(1).expect("mock cluster");
        mock.create_topic("t", 2).expect("topic");
        for _ in 0..3 {
            mock.write("t", 0, b"older").expect("write");
        }
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", mock.bootstrap_servers())
            .set("group.id", "g")
            .create()
            .expect("consumer");
        // Connected and the leaders known first, as a member's consumer is
        // by its first assignment: the lookup's own limit is for a live broker.
        consumer.fetch_metadata(Some("t"), std::time::Duration::from_secs(30)).expect("metadata");
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition("t", 0);
        tpl.add_partition("t", 1);
        start_at_the_end(&consumer, &mut tpl, true);
        let at = |tpl: &TopicPartitionList, p| tpl.find_partition("t", p).expect("listed").offset();
        assert_eq!((at(&tpl, 0), at(&tpl, 1)), (Offset::Offset(3), Offset::Offset(0)));
        start_at_the_end(&consumer, &mut tpl, false);
        assert_eq!((at(&tpl, 0), at(&tpl, 1)), (Offset::End, Offset::End));
    }

    #[test]
    fn tls_and_authentication_failures_refuse_and_transport_failures_do_not() {
        // Texts as librdkafka 2.12.1 reported them in the kafka_tls tests.
        assert!(refuses_connection(&KafkaError::Global(RDKafkaErrorCode::SSL)));
        assert!(refuses_connection(&KafkaError::Global(RDKafkaErrorCode::Authentication)));
        assert!(!refuses_connection(&KafkaError::Global(RDKafkaErrorCode::BrokerTransportFailure)));
        assert!(!refuses_connection(&KafkaError::Global(RDKafkaErrorCode::AllBrokersDown)));
        assert!(is_tls_alert(
            "ssl://127.0.0.1:44565/bootstrap: Receive failed: error:0A00045C:SSL routines::tlsv13 alert certificate required: SSL alert number 116"
        ));
        assert!(!is_tls_alert("127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused"));
    }

    #[test]
    fn generation_is_read_from_librdkafkas_group_metadata_v2() {
        let mut bytes = b"CGMDv2:".to_vec();
        bytes.extend_from_slice(&7i32.to_ne_bytes());
        bytes.extend_from_slice(b"group\0member\0\x01");
        assert_eq!(parse_generation(&bytes), Some(7));
        // No generation yet (-1), or another format: None, so a local counter is used.
        let mut none = b"CGMDv2:".to_vec();
        none.extend_from_slice(&(-1i32).to_ne_bytes());
        assert_eq!(parse_generation(&none), None);
        assert_eq!(parse_generation(b"CGMDv3:\x07\0\0\0"), None);
        assert_eq!(parse_generation(b"CGM"), None);
    }
}
