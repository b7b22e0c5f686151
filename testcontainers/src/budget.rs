//! How long the real-broker suite waits for something, derived from the
//! run's configuration instead of fixed numbers, so a wait is as long as the
//! protocol needs on a busy machine and its failure message says what it
//! waited for and why that long (see README.md, "Timing budgets").
//!
//! Every budget is a deadline for a *condition* (a stable group, a leader):
//! a passing run returns as soon as the condition holds, so generous factors
//! cost nothing when things work.

use std::fmt;
use std::time::{Duration, Instant};

use neli_sim::Scenario;

/// Margin for the protocol sums: a CPU hog on 2 cores may slow every
/// process-side step (polls, callbacks, heartbeat sends) about twofold.
const LOAD_FACTOR: u32 = 2;
/// Fixed slack on top, for container and process start-up.
const FIXED_SLACK: Duration = Duration::from_secs(2);
/// Scheduling delay is multiplied by this: one wait involves dozens of
/// wake-ups across the member processes and the broker.
const WAKEUPS: u32 = 100;

/// The inputs of every budget of one run.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Heartbeat timeout T (lease length).
    pub t: Duration,
    /// `session.timeout.ms` S.
    pub s: Duration,
    /// What the broker adds to every rebalance (tansu: ~3 s).
    pub rebalance_pause: Duration,
    /// One client retry: librdkafka's reconnect backoff, capped at S / 2 by
    /// the Kafka backend (neli/KAFKA.md).
    pub retry: Duration,
    /// Worst oversleep of a 5 ms sleep measured when the run started.
    pub sched_delay: Duration,
    /// Members of the scenario (joins are serialised into rebalances).
    pub members: u32,
}

impl Budget {
    pub fn for_scenario(s: &Scenario, rebalance_pause: Duration) -> Budget {
        let (t, session) = (s.election.heartbeat_timeout.duration(), s.election.session_timeout.duration());
        Budget::new(t, session, s.election.members, rebalance_pause)
    }

    /// The budget of a run with `members` members configured with T and S
    /// (the scheduling delay is measured now).
    pub fn new(t: Duration, s: Duration, members: u32, rebalance_pause: Duration) -> Budget {
        Budget { t, s, rebalance_pause, retry: retry_interval(s), sched_delay: measure_scheduling_delay(), members }
    }

    /// A bound the configuration promises or the caller derives (e.g.
    /// `neli::Explanation::failover` plus the broker's pause), on a loaded
    /// machine: the same load factor and slack as the protocol sums.
    pub fn within(&self, bound: Duration) -> Duration {
        bound * LOAD_FACTOR + self.slack()
    }

    fn slack(&self) -> Duration {
        FIXED_SLACK + self.sched_delay * WAKEUPS
    }

    /// One member's way back into the group: its old session expires (S),
    /// it retries (one retry), the group rebalances (pause), and a leader
    /// then needs fresh own evidence (T).
    fn one_rejoin(&self) -> Duration {
        self.retry + self.rebalance_pause
    }

    /// Every member joined and one of them leads. Members join one after
    /// another and every join is a rebalance.
    pub fn formation(&self) -> Duration {
        (self.s + self.t + self.one_rejoin() * self.members) * LOAD_FACTOR + self.slack()
    }

    /// After the last fault healed: the faulty sessions expire, every live
    /// member rejoins (in turn, each a rebalance), and the new leader
    /// confirms its lease.
    pub fn recovery(&self) -> Duration {
        (self.s + self.t + self.one_rejoin() * self.members) * LOAD_FACTOR + self.slack()
    }

    /// A takeover after the leader failed: its session expires, one
    /// rebalance, fresh evidence.
    pub fn takeover(&self) -> Duration {
        (self.s + self.t + self.one_rejoin()) * LOAD_FACTOR + self.slack()
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "T {:?}, S {:?}, rebalance pause {:?}, retry {:?}, {} members, x{LOAD_FACTOR} for load, \
             slack {:?} (2 s + {WAKEUPS} x measured scheduling delay {:?})",
            self.t,
            self.s,
            self.rebalance_pause,
            self.retry,
            self.members,
            self.slack(),
            self.sched_delay
        )
    }
}

/// The reconnect backoff cap the Kafka backend sets: S / 2, within
/// librdkafka's own bounds (0.1 s to its 10 s default).
pub fn retry_interval(session: Duration) -> Duration {
    (session / 2).clamp(Duration::from_millis(100), Duration::from_secs(10))
}

/// The worst oversleep of twenty 5 ms sleeps: how late this machine wakes a
/// process right now (a CPU hog beside the suite makes it larger).
pub fn measure_scheduling_delay() -> Duration {
    let nap = Duration::from_millis(5);
    (0..20)
        .map(|_| {
            let start = Instant::now();
            std::thread::sleep(nap);
            start.elapsed().saturating_sub(nap)
        })
        .max()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(sched_ms: u64) -> Budget {
        Budget {
            t: Duration::from_secs(1),
            s: Duration::from_secs(3),
            rebalance_pause: Duration::from_secs(3),
            retry: retry_interval(Duration::from_secs(3)),
            sched_delay: Duration::from_millis(sched_ms),
            members: 3,
        }
    }

    #[test]
    fn budgets_grow_with_the_configuration_and_the_machine_s_delay() {
        let idle = budget(0);
        // (S 3 + T 1 + 3 x (retry 1.5 + pause 3)) x 2 + 2 s slack.
        assert_eq!(idle.recovery(), Duration::from_millis(37_000));
        assert_eq!(idle.takeover(), Duration::from_millis(19_000));
        let busy = budget(20);
        assert_eq!(busy.recovery() - idle.recovery(), Duration::from_secs(2), "100 x 20 ms");
        assert_eq!(idle.within(Duration::from_secs(8)), Duration::from_secs(18), "8 s x 2 + 2 s slack");
        let longer = Budget { s: Duration::from_secs(6), ..idle };
        assert!(longer.recovery() > idle.recovery());
        assert!(idle.to_string().contains("rebalance pause 3s"), "{idle}");
    }

    #[test]
    fn retry_interval_is_half_the_session_within_librdkafka_bounds() {
        assert_eq!(retry_interval(Duration::from_secs(3)), Duration::from_millis(1500));
        assert_eq!(retry_interval(Duration::from_millis(100)), Duration::from_millis(100));
        assert_eq!(retry_interval(Duration::from_secs(45)), Duration::from_secs(10));
    }
}
