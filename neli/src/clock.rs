//! The `Clock` seam: where drivers read time and wait.
//!
//! The core never reads a clock; drivers read one of these and pass `now` in.
//! [`SystemClock`] is monotonic (tokio's `Instant`, so it also follows tokio's
//! paused test time and the simulator's time); [`ManualClock`] only moves
//! when a test moves it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::core::Time;

/// A monotonic clock. `now` never goes backwards.
pub trait Clock: Clone + Send + Sync + 'static {
    /// The time now, on this clock.
    fn now(&self) -> Time;
    /// Completes once `now()` has advanced by at least `duration`.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send;
}

/// The process's monotonic clock (via tokio, origin at construction).
#[derive(Debug, Clone)]
pub struct SystemClock {
    origin: tokio::time::Instant,
}

impl SystemClock {
    /// The clock, with its origin (`Time::ZERO`) now.
    pub fn new() -> SystemClock {
        SystemClock { origin: tokio::time::Instant::now() }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Time {
        let ms = tokio::time::Instant::now().duration_since(self.origin).as_millis();
        Time::from_millis(u64::try_from(ms).unwrap_or(u64::MAX))
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(duration)
    }
}

/// A clock for tests: time stands still until [`ManualClock::advance`] or
/// [`ManualClock::set`]; sleepers wake when time passes their deadline.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<watch::Sender<Time>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Time) -> ManualClock {
        ManualClock { now: Arc::new(watch::Sender::new(start)) }
    }

    /// Moves time forward by `by`, waking the sleepers it passes.
    pub fn advance(&self, by: Duration) {
        self.now.send_modify(|t| *t = *t + by);
    }

    /// Moves time forward to `to`; earlier values are ignored (monotonic).
    pub fn set(&self, to: Time) {
        self.now.send_if_modified(|t| {
            let moved = to > *t;
            if moved {
                *t = to;
            }
            moved
        });
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new(Time::ZERO)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Time {
        *self.now.borrow()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        let deadline = self.now() + duration;
        let mut rx = self.now.subscribe();
        async move {
            // The sender lives as long as any clone of the clock; if it is
            // gone nobody can advance time and the sleep never ends.
            let _ = rx.wait_for(|t| *t >= deadline).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn manual_sleep_wakes_only_when_advanced_past_deadline() {
        let clock = ManualClock::default();
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep(Duration::from_millis(100)).await }
        });
        tokio::task::yield_now().await; // the sleeper takes its deadline at t=0
        clock.advance(Duration::from_millis(99));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_millis(1));
        sleeper.await.unwrap();
        assert_eq!(clock.now(), Time::from_millis(100));
        clock.set(Time::from_millis(50));
        assert_eq!(clock.now(), Time::from_millis(100), "set never moves time backwards");
    }

    #[tokio::test(start_paused = true)]
    async fn system_clock_is_monotonic_and_follows_tokio_time() {
        let clock = SystemClock::new();
        let a = clock.now();
        clock.sleep(Duration::from_secs(3)).await;
        assert_eq!(clock.now().saturating_since(a), Duration::from_secs(3));
    }
}
