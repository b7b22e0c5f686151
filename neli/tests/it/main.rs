//! neli's integration tests, one binary.
//!
//! Core and driver (always): the sans-IO core (goNELI parity and the new
//! lease rules), property tests over random inputs, and the async driver on
//! the in-memory fake broker with a manual clock; `metrics` — counters,
//! gauges and health on the fake broker;
//! the observer on the fake.
//!
//! Endpoints (feature `endpoints`): `endpoints` — `/healthz`, `/leader`
//! and `/metrics` of one election and of several (fake broker, manual
//! clocks); `endpoints_limits` — malformed, oversized, slow and idle
//! clients, the connection cap and age, and the drop (`http_raw`: HTTP/1.1
//! by hand, with deadlines).
//!
//! Kafka (feature `kafka`): `bad_input` — one case per flag rule: exit 2
//! and a message naming the flag, before anything connects; `cli` — the
//! `neli` binary's exit codes, signals and hooks (mock broker); `kafka_mock` — the rdkafka backend against
//! librdkafka's in-process mock cluster; `kafka_observer` — the observer
//! (`neli::kafka::observe`) on the mock, and on tansu next to `neli watch`
//! and the members' own status; `kafka_coop` — cooperative-sticky
//! on tansu and the mock: followers come and go without stopping the
//! leader; `kafka_metrics` — `neli exec --metrics-addr` on tansu: one
//! member reports leading, takeover after SIGKILL, a stopped leader's
//! `/leader` says 503 once its lease ended; `kafka_tansu` — members and
//! `neli exec` as child processes against the tansu broker (fetched by
//! `scripts/fetch-tansu.sh`); `kafka_roles` — `neli exec --roles` on
//! tansu: one CMD per led role, a SIGKILL moves exactly the member's roles,
//! a follower restart none, a stopped member's CMDs stop on resume; `kafka_tls` — the same over TLS (tansu behind
//! the TLS proxy of `tls`) and SASL/SCRAM; `secrets` — a marker secret under
//! every secret-looking property name never appears in `Debug`, errors, the
//! CLI's trace logs or `neli watch` output.

mod core_loop;
mod core_props;
mod core_rules;
mod driver;
mod fuzz_corpus;
mod log_lines;
mod metrics;
mod mock;
mod observer;
mod terms;

#[cfg(feature = "endpoints")]
mod endpoints;
#[cfg(feature = "endpoints")]
mod endpoints_limits;
#[cfg(feature = "endpoints")]
mod http_raw;

#[cfg(feature = "kafka")]
mod bad_input;
#[cfg(feature = "kafka")]
mod cli;
#[cfg(feature = "kafka")]
mod cli_habits;
#[cfg(feature = "kafka")]
mod kafka_consumer;
#[cfg(feature = "kafka")]
mod kafka_coop;
#[cfg(feature = "kafka")]
mod kafka_metrics;
#[cfg(feature = "kafka")]
mod kafka_mock;
#[cfg(feature = "kafka")]
mod kafka_observer;
#[cfg(feature = "kafka")]
mod kafka_roles;
#[cfg(feature = "kafka")]
mod kafka_tansu;
#[cfg(feature = "kafka")]
mod kafka_tls;
#[cfg(feature = "kafka")]
mod secrets;
#[cfg(feature = "kafka")]
mod support;
#[cfg(feature = "kafka")]
mod tls;
