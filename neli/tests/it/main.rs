//! neli's integration tests: the sans-IO core (goNELI parity and the new
//! lease rules), property tests over random inputs, and the async driver on
//! the in-memory fake broker with a manual clock.

mod core_loop;
mod core_props;
mod core_rules;
mod driver;
mod mock;
