//! The real-broker suite (`cargo test -p neli-testcontainers`): every test
//! starts its own broker container and member processes. Without a Docker
//! engine the tests skip with a NOTICE, or fail under `CI=true`. The
//! PostgreSQL fence tests start their own server from the `postgresql`
//! package's binaries instead (skipped with a SKIPPED line without them,
//! failed under `CI=true`). The SQLite fence tests need no server: a
//! database file in a temporary directory. The invoices story builds the
//! example's production binary (examples/invoices) and runs it on tansu.

mod pg_server;
mod support;

mod faults;
mod invoices;
mod postgres_fence;
mod scenario_files;
mod sqlite_fence;
