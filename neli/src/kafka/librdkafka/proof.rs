//! The membership proof on neli's own coordinator connection
//! (docs/cooperative-rebalance.md, "One coordinator connection"): when it
//! is used, and the commit worker that sends it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::TopicPartitionList;

use super::errors;
use crate::broker::{BrokerError, Membership};
use crate::config::ResolvedConfig;
use crate::kafka::wire;
use crate::secrets::Redactor;

/// What the proof's own connection needs besides the consumer.
pub(crate) struct OwnProof {
    pub(crate) group: String,
    pub(crate) conn: Mutex<wire::ProofConnection>,
    /// Set once the broker turned out unable to take it (no common protocol
    /// version): from then on the proof goes through librdkafka.
    pub(crate) unusable: AtomicBool,
    /// Set at the coordinator's first answer on this connection, which is
    /// logged once (the tests read it: the proof did not fall back).
    pub(crate) answered: AtomicBool,
    /// `security.protocol` as configured (`PLAINTEXT` when unset), for that line.
    pub(crate) protocol: String,
}

/// Clears the in-flight flag when the commit worker finishes (or panics).
pub(crate) struct InFlight(pub(crate) Arc<AtomicBool>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// The proof's own connection, where it helps and can be had: under
/// cooperative-sticky (under eager range the member's own rebalance revokes
/// the lease anyway), secured as librdkafka's connections are, from the same
/// client properties. Settings it cannot speak (GSSAPI, OIDC tokens, a key
/// store, …) leave the proof with librdkafka, said at startup by name.
pub(crate) fn own_proof(cfg: &ResolvedConfig, incremental: bool) -> Option<Arc<OwnProof>> {
    if !incremental {
        return None;
    }
    let redactor = Redactor::for_properties(&cfg.kafka_config);
    let security = match wire::Security::from_properties(&cfg.kafka_config) {
        Ok(s) => s,
        Err(why) => {
            tracing::warn!(
                "membership proof goes through librdkafka's coordinator connection: the proof's own connection \
                 cannot match these client properties ({}); the leader's lease may lapse while its own JoinGroup \
                 is held (neli/KAFKA.md, \"TLS and SASL\")",
                redactor.redact(&why.to_string())
            );
            return None;
        }
    };
    let bootstrap = cfg.kafka_config.get("bootstrap.servers")?;
    let client_id = format!("neli-proof-{}", cfg.name);
    let timeout = cfg.heartbeat_timeout.max(Duration::from_secs(1));
    Some(Arc::new(OwnProof {
        group: cfg.group_id.clone(),
        conn: Mutex::new(wire::ProofConnection::new(bootstrap, &client_id, timeout, security, redactor)),
        unusable: AtomicBool::new(false),
        answered: AtomicBool::new(false),
        protocol: cfg.kafka_config.get("security.protocol").map_or("PLAINTEXT", |p| p.trim()).to_uppercase(),
    }))
}

/// The membership proof on its own connection: the same commit librdkafka
/// would send, answered by the coordinator even while this member's JoinGroup
/// is held on librdkafka's connection.
pub(crate) fn own_commit(
    proof: &OwnProof,
    topic: &str,
    offsets: &TopicPartitionList,
    generation: i32,
    member_id: &str,
    incremental: bool,
) -> Result<Membership, BrokerError> {
    let offsets: Vec<(i32, i64)> = offsets
        .elements()
        .iter()
        .filter(|e| e.topic() == topic)
        .map(|e| (e.partition(), e.offset().to_raw().unwrap_or(0)))
        .collect();
    let mut conn = proof.conn.lock().expect("proof connection lock");
    let commit = wire::Commit { group: &proof.group, generation, member_id, topic, offsets: &offsets };
    let mut answer = conn.commit(&commit);
    tracing::trace!(generation, member_id, ?answer, "membership commit on the proof's own connection");
    if incremental && matches!(answer, Ok(wire::code::ILLEGAL_GENERATION)) {
        // The group may have formed its next generation with this member in
        // it while librdkafka still waits for the join answer (tansu holds
        // a member's JoinGroup after the group formed). A commit accepted
        // for that generation proves membership just as well: the check is
        // member known and generation current (docs/cooperative-rebalance.md,
        // "One coordinator connection"). Otherwise the first answer stands.
        let next = wire::Commit { generation: generation.saturating_add(1), ..commit };
        let probe = conn.commit(&next);
        tracing::trace!(generation = next.generation, member_id, answer = ?probe, "membership commit for the next generation");
        if matches!(probe, Ok(wire::code::NONE)) {
            answer = probe;
        }
    }
    drop(conn);
    if answer.is_ok() && !proof.answered.swap(true, Ordering::SeqCst) {
        tracing::info!(
            security.protocol = %proof.protocol,
            "membership proof: the group coordinator answers on the proof's own connection"
        );
    }
    match answer {
        Ok(code) => errors::membership_of_answer(code, incremental),
        Err(e) if e.is_permanent() => {
            // The broker cannot take this client (no common version) or
            // refuses its TLS or SASL credentials: the same settings would
            // meet the same answer. (The error text is already redacted.)
            proof.unusable.store(true, Ordering::SeqCst);
            tracing::warn!(error = %e, "the membership proof's own connection cannot be used; it goes through librdkafka from now on");
            Err(BrokerError::retriable(format!("membership commit: {e}")))
        }
        Err(e) => Err(BrokerError::retriable(format!("membership commit (own connection): {e}"))),
    }
}
