//! Classifies librdkafka errors as fatal (stop the election) or retriable
//! (the lease absorbs them: a member that cannot reach the broker simply
//! stops renewing and is fenced by its own clock).

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::broker::ErrorKind;

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
    }
}
