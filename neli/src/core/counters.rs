//! [`Counters`]: what the core counted (records ignored by reason, terms,
//! proofs), kept in a [`Statistics`] wrapper so that counts never make two
//! otherwise equal members differ.

/// Counts of records and inputs the core ignored, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// Heartbeats this member handed its driver to write.
    pub heartbeats_sent: u64,
    /// Own current-term heartbeats read back (the only evidence).
    pub own_heartbeats: u64,
    /// Records that are no heartbeat this version understands.
    pub undecodable: u64,
    /// Heartbeats of other members (or strangers).
    pub foreign: u64,
    /// Own heartbeats of an earlier term (generation).
    pub stale_term: u64,
    /// Own heartbeats whose lease had ended by the time they were read.
    pub expired_on_arrival: u64,
    /// Heartbeats for a role this member does not have, or on the wrong partition.
    pub misplaced: u64,
    /// Own heartbeats read for a role not assigned to this member.
    pub while_unassigned: u64,
    /// Membership proofs the coordinator rejected.
    pub membership_rejected: u64,
}

/// Counts that describe what happened but decide nothing: two members that
/// differ only in them behave alike, so they compare equal and hash alike
/// (the model checker would otherwise tell apart states that only counted
/// differently).
#[derive(Debug, Clone, Default)]
pub(crate) struct Statistics<T>(pub(crate) T);

impl<T> PartialEq for Statistics<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Eq for Statistics<T> {}

impl<T> std::hash::Hash for Statistics<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<T> std::ops::Deref for Statistics<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Statistics<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}
