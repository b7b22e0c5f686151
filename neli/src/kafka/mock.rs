//! An in-process Kafka for tests and benchmarks: librdkafka's mock cluster
//! with the knobs the election's fault tests need.
//!
//! Quirks (docs/background.md, Measured facts): no CreateTopics (the
//! topic is created here), no LogAppendTime, member expiry checked every
//! second. Its initial rebalance delay (3 s by default) is set to 0 here
//! through the raw librdkafka call, since rdkafka does not expose it. The
//! consumer group protocol (KIP-848) is served too, with its own session
//! timeout and heartbeat interval ([`MockKafka::consumer_group_timings`]), a
//! range assignment recomputed on every membership change, and commits
//! that renew no session (neli/KAFKA.md, "The consumer group protocol").

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::error::KafkaError;
use rdkafka::mocking::MockCoordinator;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};

/// What failed in the mock cluster, with librdkafka's error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MockKafkaError {
    /// The client that hosts the cluster could not be created.
    #[error("cannot start the librdkafka mock cluster: {0}")]
    Start(KafkaError),
    /// librdkafka created the client without a mock cluster.
    #[error("librdkafka did not create a mock cluster")]
    NoCluster,
    /// Creating a topic failed.
    #[error("create_topic {topic}: {error}")]
    CreateTopic {
        /// The topic.
        topic: String,
        /// librdkafka's error.
        error: KafkaError,
    },
    /// A foreign write was not queued.
    #[error("foreign write: {0}")]
    Write(KafkaError),
    /// A foreign write was not delivered within 5 s.
    #[error("foreign write flush: {0}")]
    Flush(KafkaError),
}

/// A running mock cluster; dropped with the value.
pub struct MockKafka {
    // The mock cluster lives inside this client.
    handle: BaseProducer,
}

impl MockKafka {
    /// Starts a mock cluster of `brokers` brokers.
    pub fn start(brokers: u32) -> Result<MockKafka, MockKafkaError> {
        let handle: BaseProducer = ClientConfig::new()
            .set("test.mock.num.brokers", brokers.to_string())
            .set("log_level", "3")
            .create()
            .map_err(MockKafkaError::Start)?;
        // SAFETY: the handle is a live client created with a mock cluster;
        // the pointer is only used while `handle` lives.
        unsafe {
            let mc = rdkafka_sys::rd_kafka_handle_mock_cluster(handle.client().native_ptr());
            if mc.is_null() {
                return Err(MockKafkaError::NoCluster);
            }
            rdkafka_sys::rd_kafka_mock_group_initial_rebalance_delay_ms(mc, 0);
        }
        Ok(MockKafka { handle })
    }

    fn cluster(&self) -> rdkafka::mocking::MockCluster<'_, rdkafka::producer::DefaultProducerContext> {
        self.handle.client().mock_cluster().expect("created with test.mock.num.brokers")
    }

    /// The mock brokers' addresses, for `bootstrap.servers`.
    pub fn bootstrap_servers(&self) -> String {
        self.cluster().bootstrap_servers()
    }

    /// Creates `topic` (the mock has no CreateTopics API).
    pub fn create_topic(&self, topic: &str, partitions: u32) -> Result<(), MockKafkaError> {
        self.cluster()
            .create_topic(topic, partitions as i32, 1)
            .map_err(|e| MockKafkaError::CreateTopic { topic: topic.to_owned(), error: e })
    }

    /// Makes metadata answers report `topic` as unknown: how a deleted
    /// topic looks to members (the mock has no DeleteTopics).
    pub fn hide_topic(&self, topic: &str) {
        let _ = self.cluster().topic_error(topic, RDKafkaRespErr::RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    }

    /// Moves the leadership of `topic`/`partition` to `broker`.
    pub fn partition_leader(&self, topic: &str, partition: u32, broker: i32) {
        let _ = self.cluster().partition_leader(topic, partition as i32, Some(broker));
    }

    /// Takes `broker` down: its connections drop, new ones are refused.
    pub fn broker_down(&self, broker: i32) {
        let _ = self.cluster().broker_down(broker);
    }

    /// Brings `broker` back.
    pub fn broker_up(&self, broker: i32) {
        let _ = self.cluster().broker_up(broker);
    }

    /// Puts the coordinator of every group on `broker`.
    pub fn coordinator(&self, group: &str, broker: i32) {
        let _ = self.cluster().coordinator(MockCoordinator::Group(group.to_owned()), broker);
    }

    /// Delays every answer of `broker` by `rtt` (zero: no delay).
    pub fn round_trip_time(&self, broker: i32, rtt: Duration) {
        let _ = self.cluster().broker_round_trip_time(broker, rtt);
    }

    /// The next `count` group Heartbeat requests fail with `error`.
    pub fn fail_heartbeats(&self, count: usize, error: RDKafkaRespErr) {
        self.cluster().request_errors(RDKafkaApiKey::Heartbeat, &vec![error; count]);
    }

    /// The next `count` OffsetCommit requests fail with `error`.
    pub fn fail_commits(&self, count: usize, error: RDKafkaRespErr) {
        self.cluster().request_errors(RDKafkaApiKey::OffsetCommit, &vec![error; count]);
    }

    /// Forgets the errors `fail_heartbeats` and `fail_commits` queued.
    pub fn clear_errors(&self) {
        self.cluster().clear_request_errors(RDKafkaApiKey::Heartbeat);
        self.cluster().clear_request_errors(RDKafkaApiKey::OffsetCommit);
    }

    /// The raw mock cluster, for the calls rdkafka does not wrap.
    fn raw(&self) -> *mut rdkafka_sys::rd_kafka_mock_cluster_t {
        // SAFETY: the handle was created with a mock cluster (checked in
        // `start`) and outlives every use of the pointer, which is `&self`.
        unsafe { rdkafka_sys::rd_kafka_handle_mock_cluster(self.handle.client().native_ptr()) }
    }

    /// The consumer group protocol's (KIP-848) session timeout and group
    /// heartbeat interval, which the broker sets there (30 s and 3 s by
    /// default on the mock). A group takes them when its members heartbeat:
    /// call this before anyone joins.
    pub fn consumer_group_timings(&self, session_timeout: Duration, heartbeat_interval: Duration) {
        let ms = |d: Duration| i32::try_from(d.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: a live mock cluster (see `raw`); plain integer arguments.
        unsafe {
            rdkafka_sys::rd_kafka_mock_set_group_consumer_session_timeout_ms(self.raw(), ms(session_timeout));
            rdkafka_sys::rd_kafka_mock_set_group_consumer_heartbeat_interval_ms(self.raw(), ms(heartbeat_interval));
        }
    }

    /// The next `count` ConsumerGroupHeartbeat requests (ApiKey 68, from any
    /// member: the mock's error stack is per API, not per client) fail
    /// with `error`. rdkafka's `RDKafkaApiKey` stops before 68, so this is
    /// the raw call. UNKNOWN_MEMBER_ID and FENCED_MEMBER_EPOCH also remove
    /// the member on the mock's side, as a broker that fenced it would.
    pub fn fail_consumer_heartbeats(&self, count: usize, error: RDKafkaRespErr) {
        const CONSUMER_GROUP_HEARTBEAT: i16 = 68;
        let errors = vec![error; count];
        // SAFETY: a live mock cluster; the array outlives the call, which copies it.
        unsafe {
            rdkafka_sys::rd_kafka_mock_push_request_errors_array(
                self.raw(),
                CONSUMER_GROUP_HEARTBEAT,
                errors.len(),
                errors.as_ptr(),
            );
        }
    }

    /// The next `count` ConsumerGroupHeartbeat requests that reach broker
    /// `broker` fail with `error` (the stack is per broker and API: any
    /// member whose coordinator connection is to that broker takes them).
    /// With the group's coordinator moved elsewhere ([`Self::coordinator`])
    /// after one member found it here, that member alone keeps sending its
    /// heartbeats here, and they fail, while its commits, which the mock
    /// serves on any broker, are answered: one member's heartbeats failing,
    /// the fault that separates the group protocols.
    pub fn fail_broker_consumer_heartbeats(&self, broker: i32, count: usize, error: RDKafkaRespErr) {
        for _ in 0..count {
            // SAFETY: a live mock cluster; the variadic arguments are one
            // (error, round-trip ms) pair of C ints, as the count says.
            unsafe {
                rdkafka_sys::rd_kafka_mock_broker_push_request_error_rtts(
                    self.raw(),
                    broker,
                    68,
                    1,
                    error as std::ffi::c_int,
                    0 as std::ffi::c_int,
                );
            }
        }
    }

    /// Forgets the errors `fail_consumer_heartbeats` queued.
    pub fn clear_consumer_heartbeat_errors(&self) {
        // SAFETY: a live mock cluster (see `raw`).
        unsafe { rdkafka_sys::rd_kafka_mock_clear_request_errors(self.raw(), 68) }
    }

    /// Produces `payload` to `topic`/`partition` as a foreign writer.
    pub fn write(&self, topic: &str, partition: u32, payload: &[u8]) -> Result<(), MockKafkaError> {
        let record: BaseRecord<'_, (), [u8]> = BaseRecord::to(topic).partition(partition as i32).payload(payload);
        self.handle.send(record).map_err(|(e, _)| MockKafkaError::Write(e))?;
        self.handle.flush(Duration::from_secs(5)).map_err(MockKafkaError::Flush)
    }
}
