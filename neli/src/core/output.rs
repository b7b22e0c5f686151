//! What the core tells its driver: [`Output`]s to carry out, the
//! [`Event`]s among them (with their [`FenceCause`]), and the [`Record`]s it
//! reads back.

use std::time::Duration;

use super::Token;

/// A leadership transition of one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Event {
    /// This member now leads `role`; `token` fences its writes.
    Acquired {
        /// The role now led.
        role: u32,
        /// The term's fencing token, above every earlier term's of the role.
        token: Token,
    },
    /// Orderly loss (partition revoked, resign, close): finish work; the
    /// driver holds the handover until the handler returns.
    Revoked {
        /// The role given up.
        role: u32,
    },
    /// Suspected partition, lost assignment or expired lease: stop now.
    Fenced {
        /// The role lost.
        role: u32,
    },
}

/// Why a member was fenced: the cause the core gives each
/// [`Event::Fenced`] ([`Member::poll_output_with_cause`](super::Member::poll_output_with_cause)), for diagnostics
/// and metrics (`neli_fences_total`'s `cause` label). It decides nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum FenceCause {
    /// The group took the partition away without a revocation (session
    /// expired, member evicted): [`Member::handle_lost`](super::Member::handle_lost).
    AssignmentLost,
    /// The coordinator rejected a membership proof
    /// ([`Member::handle_membership`](super::Member::handle_membership) with `accepted == false`).
    MembershipRejected,
    /// The lease ran out: no fresh own heartbeat, or no fresh membership
    /// proof, came back within T ([`Member::handle_timeout`](super::Member::handle_timeout)).
    LeaseExpired,
}

impl FenceCause {
    /// Every cause, in a fixed order.
    pub const ALL: [FenceCause; 3] =
        [FenceCause::AssignmentLost, FenceCause::MembershipRejected, FenceCause::LeaseExpired];

    /// The cause as a metric label value: `assignment_lost`,
    /// `membership_rejected` or `lease_expired`.
    pub fn as_str(self) -> &'static str {
        match self {
            FenceCause::AssignmentLost => "assignment_lost",
            FenceCause::MembershipRejected => "membership_rejected",
            FenceCause::LeaseExpired => "lease_expired",
        }
    }
}

impl std::fmt::Display for FenceCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Event {
    /// The role this event is about.
    pub fn role(&self) -> u32 {
        match *self {
            Event::Acquired { role, .. } | Event::Revoked { role } | Event::Fenced { role } => role,
        }
    }
}

/// An effect the driver must carry out.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Output {
    /// Produce `payload` (an encoded [`Heartbeat`](super::Heartbeat)) to `partition`.
    Produce {
        /// The election topic's partition to write to.
        partition: u32,
        /// The encoded heartbeat.
        payload: Vec<u8>,
    },
    /// Prove group membership for `generation` (a synchronous,
    /// generation-checked offset commit) and report the outcome with
    /// [`Member::handle_membership`](super::Member::handle_membership), passing the time the request was sent.
    ConfirmMembership {
        /// The group generation the member believes it holds.
        generation: u64,
    },
    /// Leave the group now and rejoin after `rejoin_after` (resign).
    LeaveGroup {
        /// How long to stay out of the group (the resign hold-off).
        rejoin_after: Duration,
    },
    /// Tell the application.
    Event(Event),
}

/// A record read from the election topic.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Record {
    /// The partition it was read from.
    pub partition: u32,
    /// Its offset in that partition: a heartbeat's offset is the fencing
    /// token of the term it confirms.
    pub offset: u64,
    /// Broker timestamp (CreateTime or LogAppendTime), if any. Informational:
    /// broker time is not comparable with the member's monotonic clock.
    pub timestamp: Option<u64>,
    /// The record's value (a heartbeat, or anything a foreign writer wrote).
    pub payload: Vec<u8>,
}
