//! Counterexamples become scenario files (scenarios/FORMAT.md) that the
//! simulator replays.

use neli::core::UnsafeVariant;
use neli_models::{Faults, counterexample_to_scenario};

use crate::{ONE_LEADER, counterexample, hunt, small};

/// The hazard-1 counterexample written as a scenario: the pause of the
/// leader becomes a `pause` fault with its start and length in real time.
#[test]
fn lease_from_receipt_counterexample_writes_a_pause_scenario() {
    let mut cfg = small(Faults { pauses: 1, ..Faults::default() });
    cfg.variant = UnsafeVariant { lease_from_receipt: true, ..UnsafeVariant::default() };
    cfg.membership_proof = false;
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    let toml = counterexample_to_scenario(&model, "model-lease-from-receipt", &path);
    println!("{toml}");
    assert!(toml.contains("variant = \"lease-from-receipt\""));
    assert!(toml.contains("membership_proof = false"));
    assert!(toml.contains("heartbeat_timeout = \"1000ms\"") && toml.contains("session_timeout = \"2000ms\""));
    // The one fault of the path: a pause of the leader (m0 or m1), closed by its resume.
    assert_eq!(toml.matches("[[faults]]").count(), 1);
    assert!(toml.contains("kind = \"pause\""));
}
