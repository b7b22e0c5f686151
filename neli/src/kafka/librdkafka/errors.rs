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

/// What a membership commit's answer says, one reading for both paths:
/// librdkafka's commit errors (broker codes, plus its local `State` and
/// `Fenced`) and the proof's own connection (docs/cooperative-rebalance.md,
/// "Proof"). `None`: not an answer about membership (transport, authorization,
/// anything else), for the caller to turn into an error.
pub(crate) fn membership_of_code(code: i32, incremental: bool) -> Option<Membership> {
    use RDKafkaErrorCode as C;
    let is = |c: RDKafkaErrorCode| code == c as i32;
    if is(C::NoError) {
        Some(Membership::Confirmed)
    } else if is(C::IllegalGeneration) || is(C::RebalanceInProgress) {
        // Incremental: the member keeps its partitions through a rebalance
        // and commits through it; a commit that races the rebalance's phases
        // is answered so, neither confirming nor evicting.
        Some(if incremental { Membership::Undetermined } else { Membership::Rejected })
    } else if is(C::StaleMemberEpoch) {
        // Consumer protocol: the commit carried an older member epoch than
        // the coordinator's (the member moved on since); it says nothing
        // about whether the member is still one (docs/background.md,
        // "Group protocols").
        Some(Membership::Undetermined)
    } else if is(C::UnknownMemberId)
        || is(C::FencedMemberEpoch)
        || is(C::FencedInstanceId)
        || is(C::State)
        || is(C::Fenced)
    {
        Some(Membership::Rejected)
    } else {
        None
    }
}

/// What an OffsetCommit answer sent on the proof's own connection says.
pub(crate) fn membership_of_answer(code: i16, incremental: bool) -> Result<Membership, BrokerError> {
    use RDKafkaErrorCode as C;
    if let Some(m) = membership_of_code(code.into(), incremental) {
        return Ok(m);
    }
    let named =
        [C::GroupAuthorizationFailed, C::TopicAuthorizationFailed].into_iter().find(|c| *c as i32 == i32::from(code));
    match named {
        Some(c) => Err(BrokerError::fatal(format!("membership commit: not authorized (Kafka error {code}: {c})"))),
        None => Err(BrokerError::retriable(format!("membership commit: Kafka error {code}"))),
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
        let eager = |c: RDKafkaErrorCode| membership_of_code(c as i32, false);
        let incremental = |c: RDKafkaErrorCode| membership_of_code(c as i32, true);
        assert_eq!(eager(RDKafkaErrorCode::UnknownMemberId), Some(Membership::Rejected));
        assert_eq!(eager(RDKafkaErrorCode::RequestTimedOut), None, "a transport error is no membership answer");
        assert_eq!(incremental(RDKafkaErrorCode::RebalanceInProgress), Some(Membership::Undetermined));
        assert_eq!(
            incremental(RDKafkaErrorCode::UnknownMemberId),
            Some(Membership::Rejected),
            "an unknown member is evicted"
        );
        // The consumer protocol's member epochs: fenced at once, or neither.
        for protocol_incremental in [true, false] {
            let answer = |c: RDKafkaErrorCode| membership_of_code(c as i32, protocol_incremental);
            assert_eq!(answer(RDKafkaErrorCode::FencedMemberEpoch), Some(Membership::Rejected));
            assert_eq!(answer(RDKafkaErrorCode::StaleMemberEpoch), Some(Membership::Undetermined));
        }
        // librdkafka's own local answers for a member it already dropped.
        assert_eq!(incremental(RDKafkaErrorCode::State), Some(Membership::Rejected));
        assert_eq!(incremental(RDKafkaErrorCode::Fenced), Some(Membership::Rejected));
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
