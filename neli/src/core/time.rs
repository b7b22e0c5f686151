//! Time as the core sees it: a monotonic instant passed in by the driver.
//!
//! The core never reads a clock. Every `handle_*` call carries `now`, and the
//! driver promises that successive `now` values never go backwards (a
//! monotonic clock). A value that does go backwards is clamped to the last one
//! seen, so a misbehaving driver cannot extend a lease by rewinding time.

use std::fmt;
use std::ops::{Add, Sub};
use std::time::Duration;

/// A point on a member's monotonic clock, in whole milliseconds since an
/// arbitrary origin chosen by the clock.
///
/// Small, ordered and hashable so model checkers can enumerate it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// The clock's origin.
    pub const ZERO: Time = Time(0);

    /// A time `ms` milliseconds after the clock's origin.
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms)
    }

    /// Milliseconds since the clock's origin.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// The time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, rhs: Duration) -> Time {
        let ms = u64::try_from(rhs.as_millis()).unwrap_or(u64::MAX);
        Time(self.0.saturating_add(ms))
    }
}

impl Sub<Duration> for Time {
    type Output = Time;
    fn sub(self, rhs: Duration) -> Time {
        let ms = u64::try_from(rhs.as_millis()).unwrap_or(u64::MAX);
        Time(self.0.saturating_sub(ms))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}s", self.0 / 1000, self.0 % 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtracting_a_duration_stops_at_zero() {
        assert_eq!(Time::from_millis(1_500) - Duration::from_millis(500), Time::from_millis(1_000));
        assert_eq!(Time::from_millis(100) - Duration::from_secs(1), Time::ZERO);
    }

    #[test]
    fn a_time_prints_as_seconds_and_milliseconds() {
        assert_eq!(Time::from_millis(12_345).to_string(), "12.345s");
        assert_eq!(Time::from_millis(7).to_string(), "0.007s");
    }
}
