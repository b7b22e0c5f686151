//! The rules configuration validation holds, as values a program can read:
//! the bounds it derives from a configuration (the same functions
//! validation, the core and [`crate::Config::explain`] use), the client
//! properties neli sets itself, and the defaults it fills in.
//!
//! ```
//! use std::time::Duration;
//!
//! let (t, s) = (Duration::from_secs(1), Duration::from_secs(3));
//! let group_heartbeat = neli::rules::group_heartbeat_interval(s);
//! // A crashed leader is replaced within S + group heartbeat + grace + T,
//! // not counting the broker's own rebalance delay.
//! let worst = neli::rules::failover_bound(s, group_heartbeat, Duration::ZERO, t);
//! assert_eq!(worst, s + group_heartbeat + t);
//! assert!(neli::rules::FORCED_KEYS.contains(&"enable.auto.commit"));
//! ```

pub use crate::config::{
    CONSUMER_PROTOCOL_REFUSED, DEFAULT_CLOSE_TIMEOUT, DEFAULT_HEARTBEAT_TIMEOUT, DEFAULT_MIN_POLL_INTERVAL,
    FORCED_KEYS, KAFKA_CONSUMER_HEARTBEAT_INTERVAL, KAFKA_CONSUMER_SESSION_TIMEOUT, LIBRDKAFKA_MAX_POLL_INTERVAL,
    STATIC_MEMBERSHIP_KEY, failover_bound, group_heartbeat_interval, handover_bound, lease_margin,
    min_rebalance_timeout, read_back_wait, resign_hold_off,
};
