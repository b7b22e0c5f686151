//! Counterexamples become scenario files (scenarios/FORMAT.md) that the
//! simulator replays.

use neli::core::UnsafeVariant;
use neli_models::{Faults, counterexample_to_scenario};
use neli_sim::scenario::{Dur, FaultKind, Variant};

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
    let replay = counterexample_to_scenario(&model, "model-lease-from-receipt", &path);
    let s = &replay.scenario;
    println!("{}", s.to_toml(&replay.notes).expect("writable"));
    assert_eq!(s.election.variant, Variant::LeaseFromReceipt);
    assert!(!s.election.membership_proof);
    assert_eq!((s.election.heartbeat_timeout, s.election.session_timeout), (Dur(1000), Dur(2000)));
    // The one fault of the path: a pause of the leader (m0 or m1), closed by its resume.
    let faults: Vec<_> = s.timed_faults().collect();
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0].fault.kind(), FaultKind::Pause);
    // Written out, it reads back as the same scenario.
    let text = s.to_toml(&replay.notes).expect("writable");
    let back = neli_sim::Scenario::parse(&text, "<model>").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.timed_faults().collect::<Vec<_>>(), faults);
}
