//! neli: "exactly one worker does this" on Kafka — NELI leader election.
//!
//! Each member joins a consumer group on an election topic. Whoever is
//! assigned a role's partition writes heartbeats there and leads while it
//! reads its *own* fresh heartbeats back: leadership is a lease that lapses
//! on its own. The protocol lives once, in the sans-IO [`core`]; [`Neli`]
//! drives it with a [`Broker`] and a [`Clock`]. An [`observer::Observer`]
//! tells who leads from anywhere, without joining the election.
//!
//! ```
//! use std::time::Duration;
//! use neli::{Config, Event, Neli, SystemClock, testing::FakeCluster};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), neli::Error> {
//! let config = Config::builder()
//!     .bootstrap_servers("127.0.0.1:9092")
//!     .group("billing-cron")
//!     .heartbeat_timeout(Duration::from_secs(5))
//!     .build()?;
//! // Production uses the Kafka broker and `SystemClock`; this example runs
//! // on the in-memory fake so it needs no broker.
//! let clock = SystemClock::new();
//! let cluster = FakeCluster::new(1);
//! let mut neli = Neli::new(&config, cluster.broker("a", clock.clone()), clock).await?;
//! neli.on_event(|event, _control| async move {
//!     match event {
//!         Event::Acquired { token, .. } => println!("leading, fencing token {token}"),
//!         Event::Revoked { .. } => println!("finish work, then hand over"),
//!         Event::Fenced { .. } => println!("stop now"),
//!         _ => {} // `Event` is non-exhaustive: kinds added later
//!     }
//! });
//! let _ = neli.pulse(Duration::from_millis(10)).await?; // joins, writes a heartbeat
//! let pulse = neli.pulse(Duration::from_millis(10)).await?; // reads it back
//! assert!(pulse.is_leader() && neli.token().is_some());
//! neli.close().await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

// Modules whose public types are re-exported at the root are private, so
// that every type has one public path (CHANGELOG, "One path per type").
mod broker;
#[cfg(feature = "cli")]
pub mod cli;
mod clock;
mod config;
pub mod core;
pub mod downstream;
mod driver;
pub mod duration;
#[cfg(feature = "endpoints")]
pub mod endpoints;
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "kafka")]
pub mod kafka;
pub mod lease_file;
pub mod log_watch;
pub mod metrics;
mod mock_neli;
pub mod observer;
pub mod properties;
pub mod rules;
pub mod secrets;
mod status;
pub mod testing;

pub use broker::{Broker, BrokerError, BrokerEvent, ErrorKind, Membership};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{
    Assignment, Config, ConfigBuilder, ConfigError, Explanation, GroupProtocol, Mode, ResolvedConfig, UnknownName,
};
pub use core::lease::{Lease, Stamp, Token};
pub use core::output::Event;
pub use core::time::Time;
#[doc(hidden)]
pub use driver::spawn::spawn_on_local_set;
pub use driver::{Background, Control, Error, Neli, Outcome, Pulse, Section, Term};
pub use mock_neli::{Election, MockNeli, Transition};
pub use status::{State, Status};

/// The crate README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
/// The cancellation token [`Neli::background_until`] takes (tokio-util's),
/// re-exported so that a matching version is always at hand.
pub use tokio_util::sync::CancellationToken;
