//! What an election publishes about itself: its lifecycle [`State`] and
//! the [`Status`] every handle's `watch` channel carries. The driver
//! publishes it and the metrics read it, so it depends on neither.

use std::collections::BTreeMap;

use crate::core::{Lease, Time};

/// Lifecycle of an election handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// The election runs.
    Live,
    /// `close()` is under way: `Revoked` handlers run, the client closes.
    Closing,
    /// The election has finished (closed, ended, or dropped).
    Closed,
}

/// Published on the status `watch` channel after every change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The election's lifecycle state.
    pub state: State,
    /// The roles this member leads, with the leases the core holds (an
    /// entry may have ended since it was published: ask
    /// [`Status::lease`]).
    pub leading: BTreeMap<u32, Lease>,
    /// How many times this member saw the election log lost and recreated
    /// (a broker restart without its data). Fencing tokens are log offsets,
    /// so they restart with every new log: a downstream system compares
    /// `(log_epoch, token)`, not the token alone (neli/KAFKA.md, "Fencing
    /// tokens after a broker lost its log"): take both from one lease,
    /// [`Lease::stamp`], rather than this field and a token read apart.
    pub log_epoch: u64,
    /// The group generation of the member's current assignment, if it has
    /// one: under cooperative-sticky a leader that keeps its partition
    /// through a rebalance moves to the new generation and keeps its lease.
    pub generation: Option<u64>,
}

impl Status {
    /// Whether this status shows a live lease of `role` at `now` on the
    /// member's clock. Every handle (`Neli`, `Control`, `Background`)
    /// answers `is_leader` with this, from the status the driver published.
    pub fn is_leader_of(&self, role: u32, now: Time) -> bool {
        self.lease(role, now).is_some()
    }

    /// The lease of `role` if it is live at `now` on the member's clock
    /// ([`Lease::is_live_at`]), with the log epoch its token belongs to
    /// ([`Lease::stamp`]). Every handle's `lease`, `is_leader` and `token`
    /// are read from it, so the harness, whose application reads the token,
    /// judges the same answer. A status has no clock, so it takes `now`;
    /// the handles read their member's clock.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use neli::{Lease, State, Status, Time, Token};
    ///
    /// let lease = Lease { token: Token(7), until: Time::from_millis(900), log_epoch: 0 };
    /// let status =
    ///     Status { state: State::Live, leading: BTreeMap::from([(0, lease)]), log_epoch: 0, generation: Some(3) };
    /// assert_eq!(status.lease(0, Time::from_millis(899)), Some(lease));
    /// assert_eq!(status.lease(0, Time::from_millis(900)), None);
    /// ```
    pub fn lease(&self, role: u32, now: Time) -> Option<Lease> {
        self.leading.get(&role).copied().filter(|l| l.is_live_at(now))
    }
}
