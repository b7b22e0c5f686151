//! The real-broker suite (`cargo test -p neli-testcontainers`): every test
//! starts its own broker container and member processes. Without a Docker
//! engine the tests skip with a NOTICE, or fail under `CI=true`.

mod support;

mod faults;
mod scenario_files;
