//! A role's lease: the one value that says whether, and until when, a
//! member leads (ARCHITECTURE.md, "The core": a lease, not a flag).

use super::Time;

/// A fencing token: strictly increasing across successive leadership terms of
/// a role, as long as the broker keeps the role's partition log.
///
/// It is the log offset of the own heartbeat that confirmed the term.
/// Downstream systems should reject writes carrying a token older than the
/// newest they have seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token(pub u64);

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Leadership of one role: the fencing token of the term and the time the
/// lease ends on the member's monotonic clock.
///
/// The core hands these out ([`Member::lease`](super::Member::lease),
/// [`Member::leading_roles`](super::Member::leading_roles)), the driver
/// publishes them in its `Status`, and every "who leads" answer compares a
/// time with one through [`Lease::is_live_at`].
///
/// ```
/// use neli::core::{Lease, Time, Token};
///
/// let lease = Lease { token: Token(42), until: Time::from_millis(5_000) };
/// assert!(lease.is_live_at(Time::from_millis(4_999)));
/// assert!(!lease.is_live_at(Time::from_millis(5_000)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    /// Fences the term's writes downstream.
    pub token: Token,
    /// The lease ends at this time on the member's clock.
    pub until: Time,
}

impl Lease {
    /// Whether the lease holds at `now` on the member's clock: up to, not
    /// including, `until`, so a process that stalled past the end (and
    /// polled nothing since) no longer reports leadership.
    #[must_use]
    pub fn is_live_at(&self, now: Time) -> bool {
        now < self.until
    }
}
