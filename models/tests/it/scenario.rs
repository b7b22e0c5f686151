//! Counterexamples become scenario files (scenarios/FORMAT.md).
