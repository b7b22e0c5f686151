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

/// A fencing token stamped with the election log it was handed out in:
/// what a downstream system compares.
///
/// Tokens are log offsets, so they restart when a broker loses the election
/// log (neli/KAFKA.md, "Fencing tokens after a broker lost its log"): a token
/// alone can go backwards, a stamp cannot. Compare stamps, never bare
/// tokens. The order is the log epoch first, then the token.
///
/// ```
/// use neli::{Stamp, Token};
///
/// let before_the_loss = Stamp { log_epoch: 0, token: Token(9_000) };
/// let after_the_loss = Stamp { log_epoch: 1, token: Token(3) };
/// assert!(after_the_loss > before_the_loss);
/// assert!(Stamp { log_epoch: 1, token: Token(4) } > after_the_loss);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp {
    /// How many lost election logs the member had seen when it handed the
    /// token out (compared first).
    pub log_epoch: u64,
    /// The term's fencing token, a log offset in that log.
    pub token: Token,
}

impl std::fmt::Display for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.log_epoch, self.token)
    }
}

/// Leadership of one role: the fencing token of the term, the time the
/// lease ends on the member's monotonic clock and the election log epoch the
/// token belongs to ([`Lease::stamp`] gives the two together).
///
/// The core hands these out ([`Member::lease`](super::Member::lease),
/// [`Member::leading_roles`](super::Member::leading_roles)), the driver
/// publishes them in its `Status`, and every "who leads" answer compares a
/// time with one through [`Lease::is_live_at`].
///
/// ```
/// use neli::{Lease, Time, Token};
///
/// let lease = Lease { token: Token(42), until: Time::from_millis(5_000), log_epoch: 0 };
/// assert!(lease.is_live_at(Time::from_millis(4_999)));
/// assert!(!lease.is_live_at(Time::from_millis(5_000)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    /// Fences the term's writes downstream.
    pub token: Token,
    /// The lease ends at this time on the member's clock.
    pub until: Time,
    /// How many lost election logs the member had seen when it handed the
    /// lease out ([`Stamp::log_epoch`]).
    pub log_epoch: u64,
}

impl Lease {
    /// Whether the lease holds at `now` on the member's clock: up to, not
    /// including, `until`, so a process that stalled past the end (and
    /// polled nothing since) no longer reports leadership.
    #[must_use]
    pub fn is_live_at(&self, now: Time) -> bool {
        now < self.until
    }

    /// The token with its log epoch, read from this one lease: what a
    /// downstream system compares ([`Stamp`]).
    ///
    /// ```
    /// use neli::{Lease, Stamp, Time, Token};
    ///
    /// let lease = Lease { token: Token(7), until: Time::from_millis(900), log_epoch: 2 };
    /// assert_eq!(lease.stamp(), Stamp { log_epoch: 2, token: Token(7) });
    /// ```
    #[must_use]
    pub fn stamp(&self) -> Stamp {
        Stamp { log_epoch: self.log_epoch, token: self.token }
    }
}
