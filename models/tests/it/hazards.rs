//! Known-unsafe configurations: BFS must find each one's counterexample
//! (docs/background.md, Hazards). Each test prints the trace, one line per step.

use neli::core::UnsafeVariant;
use neli_models::Faults;

use stateright::Checker;

use crate::{ONE_LEADER, PROOF_CAP, RESOURCE, SEND_TIME, TOKENS, check, counterexample, hunt, small};

fn pause() -> Faults {
    Faults { pauses: 1, ..Faults::default() }
}

/// Hazard 1 with goNELI's lease basis and no membership proof (goNELI has
/// none): a member paused past `S` resumes and leads next to the new owner.
/// The shortest path BFS finds is a stale assignment still queued in the
/// paused client, drained before its lost-revocation; the lease basis is not
/// even needed for it (see `no_membership_proof_after_pause_gives_two_leaders`).
#[test]
fn lease_from_receipt_after_pause_gives_two_leaders() {
    let mut cfg = small(pause());
    cfg.variant = UnsafeVariant { lease_from_receipt: true, ..UnsafeVariant::default() };
    cfg.membership_proof = false;
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    // Proves overlap: two members hold an unexpired lease at one instant.
    assert_eq!(path.last_state().leaders(0).len(), 2);
}

/// Hazards 2/6 with goNELI's record rule: the resumed zombie counts the new
/// owner's heartbeats as its own and leads on them.
#[test]
fn any_record_counts_gives_two_leaders() {
    let mut cfg = small(pause());
    cfg.variant = UnsafeVariant { any_record_counts: true, ..UnsafeVariant::default() };
    cfg.membership_proof = false;
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    assert_eq!(path.last_state().leaders(0).len(), 2);
}

/// Hazard 4: `T >= S` in exclusive mode. With `T == S` the lease ends exactly
/// when the session does; one tick of clock skew on the leader is enough.
#[test]
fn heartbeat_timeout_equal_to_session_timeout_gives_two_leaders() {
    let mut cfg = small(Faults { pauses: 1, clock_steps: 1, max_skew: 1, ..Faults::default() });
    cfg.heartbeat_timeout = cfg.session_timeout;
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    assert_eq!(path.last_state().leaders(0).len(), 2);
}

/// Hazard 3: a member isolated from the coordinator keeps reading its own
/// heartbeats after eviction; without the membership proof it keeps leading.
#[test]
fn no_membership_proof_with_isolated_member_gives_two_leaders() {
    let mut cfg = small(Faults { isolations: 1, ..Faults::default() });
    cfg.membership_proof = false;
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    assert_eq!(path.last_state().leaders(0).len(), 2);
}

/// The same pause without goNELI's lease basis: without the membership proof
/// a resumed member acts on the assignment queued before its pause (hazard 1).
#[test]
fn no_membership_proof_after_pause_gives_two_leaders() {
    let mut cfg = small(pause());
    cfg.membership_proof = false;
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    assert_eq!(path.last_state().leaders(0).len(), 2);
}

/// Finding: the membership proof alone masks both goNELI behaviours from
/// the end-result properties within these bounds (the lease is also capped
/// at the last accepted commit's send time + `T`, so it never overlaps a
/// successor's). The model therefore also holds each lease to the send-time
/// rule on its own, and that property catches both: a lease counted from
/// when a heartbeat was read, or from a record that is not the member's own,
/// ends later than the member's newest own heartbeat read back + `T`.
#[test]
fn the_send_time_property_catches_what_the_proof_masks() {
    let receipt = UnsafeVariant { lease_from_receipt: true, ..UnsafeVariant::default() };
    let any = UnsafeVariant { any_record_counts: true, ..UnsafeVariant::default() };
    let mut counts = Vec::new();
    for (variant, faults) in [(receipt, pause()), (any, Faults { pauses: 1, foreign_writes: 1, ..Faults::default() })] {
        let mut cfg = small(faults);
        cfg.variant = variant;
        let (model, checker) = check(cfg);
        for p in [ONE_LEADER, TOKENS, RESOURCE, PROOF_CAP] {
            checker.assert_no_discovery(p);
        }
        let path = counterexample(&model, &checker, SEND_TIME);
        // The lease the last step left behind breaks that rule alone.
        let last = path.last_state();
        assert!(last.send_time_broken && !last.proof_cap_broken);
        counts.push(checker.unique_state_count());
    }
    assert_eq!(counts, vec![13_338, 40_016]);
}
