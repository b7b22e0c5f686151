//! Classifies librdkafka errors as fatal (stop the election) or retriable
//! (the lease absorbs them: a member that cannot reach the broker simply
//! stops renewing and is fenced by its own clock).

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::broker::{BrokerError, ErrorKind, Membership};

/// Whether `error` can never heal by retrying.
pub fn classify(error: &KafkaError) -> ErrorKind {
    match error {
        KafkaError::ClientConfig(..) | KafkaError::ClientCreation(_) | KafkaError::Subscription(_) => ErrorKind::Fatal,
        _ => match error.rdkafka_error_code() {
            Some(code) if is_fatal_code(code) => ErrorKind::Fatal,
            _ => ErrorKind::Retriable,
        },
    }
}

pub(crate) fn is_fatal_code(code: RDKafkaErrorCode) -> bool {
    use RDKafkaErrorCode as C;
    matches!(
        code,
        C::Fatal
            | C::Authentication
            | C::SaslAuthenticationFailed
            | C::UnsupportedSASLMechanism
            | C::IllegalSASLState
            | C::TopicAuthorizationFailed
            | C::GroupAuthorizationFailed
            | C::ClusterAuthorizationFailed
            | C::InvalidGroupId
            | C::InvalidConfig
            | C::InvalidArgument
            | C::UnsupportedVersion
            | C::UnsupportedFeature
            // A member whose assignment strategy differs from the group's
            // (range vs cooperative-sticky): librdkafka would retry the
            // JoinGroup for ever (neli/KAFKA.md, "Assignment strategy").
            | C::InconsistentGroupProtocol
    )
}

/// Commit errors meaning "the coordinator does not count this member in this
/// generation" (the membership proof failed, not the transport).
pub(crate) fn is_membership_rejection(code: RDKafkaErrorCode) -> bool {
    use RDKafkaErrorCode as C;
    matches!(
        code,
        C::IllegalGeneration | C::UnknownMemberId | C::RebalanceInProgress | C::FencedInstanceId | C::State | C::Fenced
    )
}

/// Commit errors a member that keeps its partitions through a cooperative
/// rebalance gets while the rebalance runs: the coordinator answers for a
/// generation that is being replaced, neither confirming nor evicting.
pub(crate) fn is_rebalance_answer(code: RDKafkaErrorCode) -> bool {
    use RDKafkaErrorCode as C;
    matches!(code, C::IllegalGeneration | C::RebalanceInProgress)
}

/// What an OffsetCommit answer sent on the proof's own connection says
/// (the same reading as librdkafka's commit errors above).
pub(crate) fn membership_of_answer(code: i16, incremental: bool) -> Result<Membership, BrokerError> {
    use super::wire::code as k;
    match code {
        k::NONE => Ok(Membership::Confirmed),
        k::ILLEGAL_GENERATION | k::REBALANCE_IN_PROGRESS if incremental => Ok(Membership::Undetermined),
        k::ILLEGAL_GENERATION | k::REBALANCE_IN_PROGRESS | k::UNKNOWN_MEMBER_ID | k::FENCED_INSTANCE_ID => {
            Ok(Membership::Rejected)
        }
        k::GROUP_AUTHORIZATION_FAILED | k::TOPIC_AUTHORIZATION_FAILED => Err(BrokerError::fatal(format!(
            "membership commit: not authorized (Kafka error {code}: {})",
            if code == k::GROUP_AUTHORIZATION_FAILED {
                "GROUP_AUTHORIZATION_FAILED"
            } else {
                "TOPIC_AUTHORIZATION_FAILED"
            }
        ))),
        other => Err(BrokerError::retriable(format!("membership commit: Kafka error {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_is_fatal_and_transport_is_retriable() {
        let auth = KafkaError::Global(RDKafkaErrorCode::SaslAuthenticationFailed);
        assert_eq!(classify(&auth), ErrorKind::Fatal);
        let down = KafkaError::Global(RDKafkaErrorCode::AllBrokersDown);
        assert_eq!(classify(&down), ErrorKind::Retriable);
        let commit = KafkaError::ConsumerCommit(RDKafkaErrorCode::IllegalGeneration);
        assert_eq!(classify(&commit), ErrorKind::Retriable, "a rejected commit is a membership answer, not fatal");
        assert!(is_membership_rejection(RDKafkaErrorCode::UnknownMemberId));
        assert!(!is_membership_rejection(RDKafkaErrorCode::RequestTimedOut));
        assert!(is_rebalance_answer(RDKafkaErrorCode::RebalanceInProgress));
        assert!(!is_rebalance_answer(RDKafkaErrorCode::UnknownMemberId), "an unknown member is evicted");
    }

    #[test]
    fn own_connection_answers_read_like_librdkafkas() {
        assert_eq!(membership_of_answer(0, true).unwrap(), Membership::Confirmed);
        assert_eq!(membership_of_answer(27, true).unwrap(), Membership::Undetermined);
        assert_eq!(membership_of_answer(22, true).unwrap(), Membership::Undetermined);
        assert_eq!(
            membership_of_answer(27, false).unwrap(),
            Membership::Rejected,
            "eager: the rebalance took everything"
        );
        assert_eq!(membership_of_answer(25, true).unwrap(), Membership::Rejected, "an unknown member was evicted");
        assert_eq!(membership_of_answer(30, true).unwrap_err().kind, ErrorKind::Fatal);
        assert_eq!(membership_of_answer(15, true).unwrap_err().kind, ErrorKind::Retriable);
    }
}
