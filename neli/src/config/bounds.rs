//! The bounds in time a configuration implies, as pure functions of its
//! durations: what validation checks and [`super::Explanation`] reports
//! (docs/background.md, "Lease rules, and why").

use std::time::Duration;

/// The group heartbeat interval (`heartbeat.interval.ms`) the Kafka backend
/// sets unless the user does: S/10 within 100 ms..3 s. librdkafka's 3 s default
/// gets members with short sessions evicted, and a shorter interval makes
/// survivors notice a rebalance, and so a failover, sooner: a coordinator
/// tells a member of a rebalance, or of a dead member's expired session, only
/// in the answer to its next group heartbeat (neli/KAFKA.md, "Defaults we
/// set unless you do"). The simulator's client uses the same value.
pub fn group_heartbeat_interval(session_timeout: Duration) -> Duration {
    Duration::from_millis((session_timeout.as_millis() / 10).clamp(100, 3000) as u64)
}

/// The longest a fetch of the election topic waits at the broker
/// (`fetch.wait.max.ms`) that the Kafka backend sets unless the user does:
/// T/40 within 10..100 ms. Brokers that do not answer a waiting fetch as
/// soon as a record arrives (tansu, the librdkafka mock) answer it late, at
/// the latest when this wait ends, so a member reads its own heartbeat back
/// up to this long after writing it: a new leader's evidence comes that
/// much later, and a leader keeps that much less of each lease (neli/KAFKA.md, "Defaults we
/// set unless you do"). The cost is up to one fetch request per wait from
/// each member that holds a partition, when nothing is written.
pub fn read_back_wait(heartbeat_timeout: Duration) -> Duration {
    Duration::from_millis((heartbeat_timeout.as_millis() / 40).clamp(10, 100) as u64)
}

/// How long a member that resigned stays out of the group: the others
/// rejoin within S, the coordinator may hold the rebalance up to another S,
/// then T for the successor's evidence. Back sooner, the resigner could take
/// the role back in the next eager rebalance (neli/KAFKA.md "Resign"). The
/// simulator's `resign-holds-off` rule holds members to it.
pub fn resign_hold_off(session_timeout: Duration, heartbeat_timeout: Duration) -> Duration {
    2 * session_timeout + heartbeat_timeout
}

/// The rebalance timeout (`max.poll.interval.ms`) must be above this with
/// the membership proof: T + S. A member learns of a rebalance only at its
/// next group heartbeat (< S), so a commit accepted up to then proves a
/// lease to T later, and the partition must not move before that lease
/// ended (found by neli-sim, hazard tests
/// `a_rebalance_timeout_below_the_lease_lets_a_proven_lease_overlap` and
/// `a_rebalance_timeout_below_the_lease_overlaps_on_a_poll_stall`).
pub fn min_rebalance_timeout(heartbeat_timeout: Duration, session_timeout: Duration) -> Duration {
    heartbeat_timeout + session_timeout
}

/// How much sooner the lease `T` ends than the session `S` can expire in
/// exclusive mode: `S - T`, or `None` when `T >= S` (which validation
/// refuses: an evicted leader could overlap its successor).
pub fn lease_margin(heartbeat_timeout: Duration, session_timeout: Duration) -> Option<Duration> {
    session_timeout.checked_sub(heartbeat_timeout).filter(|m| !m.is_zero())
}

/// From a leader's leave (close or resign, once its `Revoked` handlers
/// returned) to a successor's lease, not counting the broker's own
/// rebalance delay: the others learn of the rebalance at their next group
/// heartbeat (`group_heartbeat`) and rejoin, then the new owner of the
/// partition waits the grace `G` and needs fresh own evidence, a heartbeat
/// read back within `T`, and a membership proof.
pub fn handover_bound(group_heartbeat: Duration, grace: Duration, heartbeat_timeout: Duration) -> Duration {
    group_heartbeat + grace + heartbeat_timeout
}

/// From a leader's crash to a successor's lease, not counting the
/// broker's own rebalance delay: its session expires within `S` of its
/// last group heartbeat, then as [`handover_bound`].
pub fn failover_bound(
    session_timeout: Duration,
    group_heartbeat: Duration,
    grace: Duration,
    heartbeat_timeout: Duration,
) -> Duration {
    session_timeout + handover_bound(group_heartbeat, grace, heartbeat_timeout)
}
