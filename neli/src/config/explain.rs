//! [`Explanation`]: the bounds a valid configuration promises in time
//! ([`Config::explain`]), computed by the functions validation uses.

use std::fmt;
use std::time::Duration;

use super::bounds::{failover_bound, handover_bound, lease_margin, min_rebalance_timeout};
use super::error::ConfigError;
use super::{Config, GroupProtocol, ResolvedConfig};

/// What a configuration promises in time: the bounds its settings imply,
/// computed by the functions the core and validation use
/// ([`failover_bound`], [`handover_bound`], [`resign_hold_off`](super::resign_hold_off),
/// [`min_rebalance_timeout`], [`lease_margin`], [`group_heartbeat_interval`](super::group_heartbeat_interval)).
/// From [`Config::explain`]; `neli exec --explain` prints its `Display`
/// form, and the driver logs it once when it starts.
///
/// The bounds leave out what only the broker knows: its own delay before
/// it completes a rebalance (none for a non-empty group on Apache Kafka,
/// up to S/2 on tansu, S − 1 s on librdkafka's mock cluster: neli/KAFKA.md)
/// and round trips, which must stay below T for anyone to lead at all.
///
/// ```
/// use std::time::Duration;
/// use neli::Config;
///
/// let config = Config::builder()
///     .group("billing-cron")
///     .heartbeat_timeout(Duration::from_secs(5))
///     .session_timeout(Duration::from_secs(15))
///     .build()?;
/// let bounds = config.explain()?;
/// // S + the group heartbeat (S/10) + G + T
/// assert_eq!(bounds.failover, Duration::from_millis(15_000 + 1_500 + 5_000));
/// // the group heartbeat + G + T
/// assert_eq!(bounds.handover, Duration::from_millis(1_500 + 5_000));
/// assert_eq!(bounds.min_rebalance_timeout, Some(Duration::from_secs(20)));
/// println!("{bounds}");
/// # Ok::<(), neli::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// Exclusive mode (at most one leader per role): `T < S`.
    pub exclusive: bool,
    /// Whether leases are bounded by a membership proof.
    pub membership_proof: bool,
    /// Lease length T.
    pub heartbeat_timeout: Duration,
    /// Session timeout S (`session.timeout.ms`).
    pub session_timeout: Duration,
    /// Time between a member's heartbeats on the election topic.
    pub heartbeat_interval: Duration,
    /// The group heartbeat interval in effect (`heartbeat.interval.ms`):
    /// how soon the others learn of a rebalance.
    pub group_heartbeat_interval: Duration,
    /// Acquisition grace G.
    pub grace: Duration,
    /// Upper bound on `close()`, the `Revoked` handlers included.
    pub close_timeout: Duration,
    /// Worst case from the leader's crash (or a pause longer than S) to a
    /// successor's lease: S for its session to expire, the group heartbeat
    /// for the others to rejoin, G and T ([`failover_bound`]), plus the
    /// broker's rebalance delay.
    pub failover: Duration,
    /// From the leader's `close()` or `resign()` (or dropping its
    /// [`crate::Background`]), once its `Revoked` handlers returned, to a
    /// successor's lease: the group heartbeat, G and T
    /// ([`handover_bound`]), plus the broker's rebalance delay. No session
    /// has to expire.
    pub handover: Duration,
    /// How long a member that resigned stays out of the group
    /// ([`resign_hold_off`](super::resign_hold_off): 2 S + T).
    pub resign_hold_off: Duration,
    /// With the membership proof, `max.poll.interval.ms` (the rebalance
    /// timeout) must be above this, T + S ([`min_rebalance_timeout`]);
    /// `None` without the proof.
    pub min_rebalance_timeout: Option<Duration>,
    /// The rebalance timeout in effect (`max.poll.interval.ms`, else
    /// librdkafka's default of 300 s).
    pub rebalance_timeout: Duration,
    /// Whether the client properties set `max.poll.interval.ms`.
    pub rebalance_timeout_set: bool,
    /// In exclusive mode, how much longer than T the leader's lease may
    /// last in real time (a slow clock, a late timer) and still end before
    /// a successor can lead: S − T ([`lease_margin`]) + G; under the
    /// consumer protocol G − T. `None` in non-exclusive mode.
    pub drift_margin: Option<Duration>,
    /// The same as a clock rate: the leader's clock may run this many parts
    /// per million slow, `(S − T + G) / (S + G)`. `None` in non-exclusive
    /// mode.
    pub tolerated_drift_ppm: Option<u32>,
    /// The group protocol; under [`GroupProtocol::Consumer`] the drift
    /// margin is G − T of a wait of G (no session expiry precedes a
    /// handover there).
    pub group_protocol: GroupProtocol,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = crate::duration::format;
        let (t, s, g, hb) =
            (d(self.heartbeat_timeout), d(self.session_timeout), d(self.grace), d(self.group_heartbeat_interval));
        writeln!(
            f,
            "lease T = {t}, session S = {s}, grace G = {g}, heartbeats every {}, group heartbeats every {hb} ({})",
            d(self.heartbeat_interval),
            if self.exclusive { "exclusive" } else { "non-exclusive" }
        )?;
        writeln!(
            f,
            "failover on crash: within {} (S for the session to expire + {hb} group heartbeat + G + T for the \
             successor's evidence), plus the broker's rebalance delay",
            d(self.failover)
        )?;
        writeln!(
            f,
            "handover on close/resign: within {} ({hb} group heartbeat + G + T) once the Revoked handler returned \
             (close waits for it up to {}), plus the broker's rebalance delay",
            d(self.handover),
            d(self.close_timeout)
        )?;
        writeln!(
            f,
            "resign hold-off: {} (2 S + T): a resigned member rejoins only then, so that it cannot take the role straight back",
            d(self.resign_hold_off)
        )?;
        let in_effect = if self.rebalance_timeout_set { "max.poll.interval.ms" } else { "librdkafka's default" };
        match self.min_rebalance_timeout {
            Some(min) => writeln!(
                f,
                "rebalance timeout: must be above {} (T + S): a membership proof accepted while a rebalance runs \
                 proves a lease of T that must end before the partition moves; in effect {} ({in_effect})",
                d(min),
                d(self.rebalance_timeout)
            )?,
            None => writeln!(
                f,
                "rebalance timeout: no requirement without the membership proof; in effect {} ({in_effect})",
                d(self.rebalance_timeout)
            )?,
        }
        match (self.drift_margin, self.tolerated_drift_ppm) {
            (Some(margin), Some(ppm)) => {
                write!(
                    f,
                    "clock drift: the leader's clock may run {}.{}% slow (a margin of {} = {}) and its lease \
                     still ends before a successor can lead",
                    ppm / 10_000,
                    ppm % 10_000 / 1_000,
                    if self.group_protocol == GroupProtocol::Consumer { "G - T" } else { "S - T + G" },
                    d(margin)
                )?;
                if !self.membership_proof {
                    write!(f, " (without the membership proof only while it reaches the group coordinator)")?;
                }
                Ok(())
            }
            _ => write!(f, "clock drift: non-exclusive mode (T > S) promises no single leader, so no drift bound"),
        }
    }
}

impl ResolvedConfig {
    /// The bounds this configuration implies ([`Explanation`]).
    pub fn explain(&self) -> Explanation {
        let (t, s, g) = (self.heartbeat_timeout, self.session_timeout, self.grace);
        let group_heartbeat = self.group_heartbeat_interval();
        let exclusive = self.mode.is_exclusive();
        // Without a session expiry before a handover, the successor's grace
        // alone must outlast the leader's lease: the margin is G - T, of a
        // wait of G; otherwise S - T + G, of a wait of S + G.
        let consumer = self.group_protocol == GroupProtocol::Consumer;
        let (drift_margin, wait) = match (exclusive, consumer) {
            (false, _) => (None, g),
            (true, true) => (g.checked_sub(t), g),
            (true, false) => (lease_margin(t, s).map(|m| m + g), s + g),
        };
        let tolerated_drift_ppm = drift_margin.map(|m| {
            let ppm = m.as_micros().saturating_mul(1_000_000) / wait.as_micros().max(1);
            u32::try_from(ppm).unwrap_or(u32::MAX)
        });
        Explanation {
            exclusive,
            membership_proof: self.membership_proof,
            heartbeat_timeout: t,
            session_timeout: s,
            heartbeat_interval: self.heartbeat_interval,
            group_heartbeat_interval: group_heartbeat,
            grace: g,
            close_timeout: self.close_timeout,
            failover: failover_bound(s, group_heartbeat, g, t),
            handover: handover_bound(group_heartbeat, g, t),
            resign_hold_off: self.core(self.mode.partitions()).resign_hold_off,
            min_rebalance_timeout: self.membership_proof.then(|| min_rebalance_timeout(t, s)),
            rebalance_timeout: self.rebalance_timeout(),
            rebalance_timeout_set: self.kafka_config.contains_key("max.poll.interval.ms"),
            drift_margin,
            tolerated_drift_ppm,
            group_protocol: self.group_protocol,
        }
    }
}

impl Config {
    /// The bounds this configuration implies (worst-case failover,
    /// handover, resign hold-off, the rebalance timeout it needs, the clock
    /// drift it tolerates): see [`Explanation`]. `Err` when it is invalid.
    pub fn explain(&self) -> Result<Explanation, ConfigError> {
        Ok(self.resolve()?.explain())
    }
}
