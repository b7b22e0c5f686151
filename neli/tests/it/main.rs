//! The neli crate's integration tests, one binary.
//!
//! `cli`: the `neli` binary's exit codes, signals and hooks (mock broker).
//! `kafka_mock`: the rdkafka backend against librdkafka's in-process mock
//! cluster. `kafka_tansu`: members and `neli exec` as child processes
//! against the tansu broker (fetched by `scripts/fetch-tansu.sh`).

#[cfg(feature = "kafka")]
mod cli;
#[cfg(feature = "kafka")]
mod kafka_mock;
#[cfg(feature = "kafka")]
mod kafka_tansu;
#[cfg(feature = "kafka")]
mod support;
