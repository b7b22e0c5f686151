//! neli-sim: a simulated Kafka cluster on its own deterministic runtime
//! ([`rt`]) that runs the real
//! `neli::Neli` driver, unmodified, in every member host.
//!
//! Each member host runs a [`client::SimBroker`] (`neli::Broker`, a
//! librdkafka-like client speaking a small protocol of ours over the
//! runtime's simulated TCP) and a [`clock::SimClock`] (`neli::Clock` with offset, drift and
//! steps). Broker hosts run the group coordinator and the partition log
//! ([`server`]). A scenario ([`scenario::Scenario`], `scenarios/FORMAT.md`)
//! adds faults on a timeline; [`run_scenario`] plays it for a seed and judges
//! the recording with the [`oracle`]s. Same scenario, seed and code: the same
//! trace, byte for byte.

pub mod app;
pub mod client;
pub mod clock;
#[doc(hidden)]
pub mod fuzzing;
pub mod harness;
pub mod history;
pub mod html;
pub mod junit;
pub mod oracle;
pub mod profile;
mod proto;
pub mod record;
pub mod rt;
pub mod scenario;
mod seed;
pub mod server;
pub mod shipped;
pub mod shrink;
pub mod svg;
pub mod verdict;
pub(crate) mod world;

pub use history::History;
pub use oracle::Figures;
pub use scenario::{Scenario, ScenarioError, schedule};
pub use seed::mix;
pub use verdict::{Bound, Rule, Violation};
pub use world::{MAX_LATENCY, MIN_LATENCY, PlayedFault, RunReport, TICK, TIMING_MODEL, run_scenario};
