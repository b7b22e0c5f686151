//! Model paths as executable tests of the core: a path recorded from the
//! model (`paths/*.path`, one step per line as `format_path` prints it) is
//! replayed step by step on real `neli::core::Member`s, and after every step
//! the leaders the cores report (`is_leader`, `token`) must be the recorded
//! ones. A core that judges leases differently (for example an `is_leader`
//! that ignores lease expiry) fails at the first step where it matters,
//! whatever the search would find today.
//!
//! To re-record after a deliberate model or core change:
//! `NELI_RECORD_PATHS=1 cargo test -p neli-models --test it replay` (then
//! review the diff: a path is a behaviour, not a snapshot to wave through).

use neli::core::UnsafeVariant;
use neli_models::{ElectionModelCfg, Faults, format_path, replay_path};
use stateright::{Checker, Model};

use crate::{HANDOVER, ONE_LEADER, counterexample, hunt, small};

fn replay_or_record(file: &str, cfg: ElectionModelCfg, property: &'static str) {
    let path = format!("{}/tests/it/paths/{file}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("NELI_RECORD_PATHS").is_some() {
        let (model, checker) = hunt(cfg.clone(), property);
        let found = if property == HANDOVER {
            checker.discovery(property).expect("a handover is reachable")
        } else {
            counterexample(&model, &checker, property)
        };
        std::fs::write(&path, format_path(&model, &found)).expect("write the path");
    }
    let text = std::fs::read_to_string(&path).expect("a recorded path");
    let model = cfg.into_model();
    match replay_path(&model, &text) {
        Ok(steps) => println!("{file}: {steps} steps replayed"),
        Err(e) => panic!("{file} no longer replays on the core: {e}"),
    }
    assert!(model.properties().iter().any(|p| p.name == property));
}

/// The recommended configuration, shortest handover after a pause: the
/// paused leader's lease runs out on its own clock (no more `r0=m?.0`)
/// before the other member is elected. Pins lease expiry in `is_leader`.
#[test]
fn recorded_handover_after_a_pause_replays_on_the_core() {
    replay_or_record("handover-after-pause.path", small(Faults { pauses: 1, ..Faults::default() }), HANDOVER);
}

/// Hazard 1 without the membership proof: the recorded counterexample
/// still ends with two leaders on today's core.
#[test]
fn recorded_two_leaders_without_proof_replays_on_the_core() {
    let mut cfg = small(Faults { pauses: 1, ..Faults::default() });
    cfg.membership_proof = false;
    replay_or_record("no-proof-pause-two-leaders.path", cfg, ONE_LEADER);
}

/// goNELI's lease basis: the recorded counterexample replays too.
#[test]
fn recorded_lease_from_receipt_replays_on_the_core() {
    let mut cfg = small(Faults { pauses: 1, ..Faults::default() });
    cfg.variant = UnsafeVariant { lease_from_receipt: true, ..UnsafeVariant::default() };
    cfg.membership_proof = false;
    replay_or_record("lease-from-receipt-two-leaders.path", cfg, ONE_LEADER);
}

/// A path whose steps do not match the core is reported with its line.
#[test]
fn a_wrong_leadership_is_reported_with_its_line() {
    let model = small(Faults::default()).into_model();
    let (_, checker) = hunt(small(Faults::default()), crate::ELECTED);
    let text = format_path(&model, &checker.discovery(crate::ELECTED).expect("the vacuity witness is witnessed"));
    assert!(replay_path(&model, &text).is_ok());
    let last = text.lines().last().expect("a step").to_owned();
    let (left, _) = last.rsplit_once(" -> ").expect("arrow");
    let wrong = text.replace(&last, &format!("{left} -> r0=-"));
    let err = replay_path(&model, &wrong).expect_err("a wrong leadership fails").to_string();
    assert!(err.contains(&format!("line {}", text.lines().count())) && err.contains("the path has"), "{err}");
}

/// A rebalance's answer reaches only a member that still waits for it. The
/// path is what `check --crashes 1 --clock-steps 1 --log-losses 1 --dfs`
/// found when the coordinator queued every member's assignment: m1, cut
/// off from the coordinator with its clock a tick fast, times its own
/// session out (`Lost`), is still dealt partition 0, takes it, rejoins
/// without revoking it and leads on beside m2, to whom the next rebalance
/// deals it. A client whose session ran out ignores the answer to the join
/// it dropped (models/README.md, "What a member hears of a rebalance"), so
/// the step in which m1 takes the assignment no longer exists.
#[test]
fn a_member_whose_session_ran_out_takes_nothing_from_the_join_it_dropped() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/it/paths/isolated-member-dealt-a-partition.path",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the recorded path");
    let mut cfg = ElectionModelCfg::exclusive(3);
    (cfg.heartbeat_timeout, cfg.session_timeout, cfg.max_ticks) = (2, 4, 8);
    cfg.faults = Faults {
        pauses: 1,
        crashes: 1,
        isolations: 1,
        clock_steps: 1,
        max_skew: 1,
        log_losses: 1,
        ..Faults::default()
    };
    let model = cfg.into_model();
    let err = replay_path(&model, &text).expect_err("the assignment of a join m1 dropped is not delivered").to_string();
    // The step after the rebalance, in which m1 polled the assignment
    // queued after its `Lost` (lines count from 1).
    let line = text.lines().position(|l| l.starts_with("t=4  --  Sync { deal: 1 }")).expect("the rebalance") + 2;
    assert!(err.contains(&format!("line {line}")) && err.contains("Poll(1) is not enabled here"), "{err}");
}
