//! The recommended configuration: no discovery within the test bounds, one
//! fault kind at a time, with the state counts pinned so a model change that
//! silently shrinks the search shows up.

use neli_models::{ElectionModelCfg, Faults};
use stateright::Checker;

use crate::{
    ELECTED, ENDED, HANDOVER, LIVENESS, ONE_LEADER, OWN_TOKENS, PROOF_CAP, RESOURCE, SEND_TIME, TOKEN_REPORTED, TOKENS,
    check, counterexample, small,
};

/// Asserts every safety property holds, liveness holds, and the witnesses
/// are reachable (not vacuous); returns the unique state count.
pub(crate) fn assert_safe(cfg: ElectionModelCfg) -> usize {
    // Only a fault that removes the leader can move the role.
    let moves = cfg.faults.pauses + cfg.faults.crashes + cfg.faults.isolations > 0;
    let (model, checker) = check(cfg);
    for p in [ONE_LEADER, TOKENS, OWN_TOKENS, RESOURCE, SEND_TIME, PROOF_CAP, TOKEN_REPORTED, ENDED, LIVENESS] {
        if checker.discovery(p).is_some() {
            counterexample(&model, &checker, p);
        }
        checker.assert_no_discovery(p);
    }
    checker.assert_any_discovery(ELECTED);
    if moves {
        checker.assert_any_discovery(HANDOVER);
    }
    println!("states {} unique {}", checker.state_count(), checker.unique_state_count());
    checker.unique_state_count()
}

#[test]
fn recommended_survives_a_pause() {
    assert_eq!(assert_safe(small(Faults { pauses: 1, ..Faults::default() })), 13_230);
}

#[test]
fn recommended_survives_two_pauses() {
    let mut cfg = small(Faults { pauses: 2, ..Faults::default() });
    cfg.max_ticks = 7;
    assert_eq!(assert_safe(cfg), 127_436);
}

#[test]
fn recommended_survives_coordinator_isolation() {
    assert_eq!(assert_safe(small(Faults { isolations: 1, ..Faults::default() })), 4_213);
}

#[test]
fn recommended_survives_crash_and_restart() {
    assert_eq!(assert_safe(small(Faults { crashes: 1, ..Faults::default() })), 7_007);
}

#[test]
fn recommended_survives_message_delay_reorder_and_loss() {
    let mut cfg = small(Faults { message_delay: 1, reorder: true, losses: 1, ..Faults::default() });
    cfg.max_ticks = 6;
    assert_eq!(assert_safe(cfg), 7_753);
}

#[test]
fn recommended_survives_foreign_writer() {
    assert_eq!(assert_safe(small(Faults { foreign_writes: 1, ..Faults::default() })), 129);
}

/// Hazard 4, skew: with no grace and a clock that stands still or jumps,
/// the membership proof (T well below S) still keeps leases apart.
#[test]
fn recommended_without_grace_survives_clock_skew() {
    let faults = Faults { clock_steps: 2, max_skew: 2, ..Faults::default() };
    assert_eq!(assert_safe(small(faults)), 677);
}

/// Non-exclusive multi-role mode (`T > S`, NELI §4): overlap is allowed, and
/// every role is led again within the bound once a pause heals. This model
/// found that tokens used to regress here: a member resumed from a pause
/// acquired on its pre-pause heartbeat (still fresh, since `T > S`) with a
/// lower offset than the new owner's token, on a pre-pause membership proof.
/// The core now requires a proof sent after the evidence was read, and this
/// test pins that tokens strictly increase.
#[test]
fn non_exclusive_multi_role_leads_every_role_with_increasing_tokens() {
    let mut cfg = small(Faults { pauses: 1, ..Faults::default() });
    (cfg.roles, cfg.partitions, cfg.exclusive) = (2, 2, false);
    cfg.heartbeat_timeout = 5;
    cfg.max_ticks = 6;
    let (_, checker) = check(cfg);
    checker.assert_no_discovery(ONE_LEADER); // vacuous outside exclusive mode
    checker.assert_no_discovery(LIVENESS);
    checker.assert_any_discovery(ELECTED);
    checker.assert_no_discovery(TOKENS);
    // RESOURCE holds vacuously here: overlap is the point of this mode, so the
    // outgoing leader may still write with its older token during the
    // overlap; a token-guarded resource rejects those writes, which is what
    // tokens are for. So `check` exits 0 on correct code in every mode, and
    // the model keeps no resource monitor here (it would split states).
    checker.assert_no_discovery(RESOURCE);
    println!("states {} unique {}", checker.state_count(), checker.unique_state_count());
    assert_eq!(checker.unique_state_count(), 28_156);
}

/// Hazard 5, the log alone: the partition leader restarts without its data
/// while the group stays, so tokens restart mid-term. Leases stay apart,
/// tokens increase within each log, a member never reuses a token it led
/// with, and a downstream ordering on (log epoch, token) never goes back.
#[test]
fn recommended_survives_log_loss_and_a_pause() {
    let mut cfg = small(Faults { log_losses: 1, pauses: 1, ..Faults::default() });
    cfg.max_ticks = 7;
    let unique = assert_safe(cfg);
    assert!(unique > 0);
}
