//! Symmetry reduction over members (stateright applies it in DFS only):
//! the same verdicts on fewer states.

use neli_models::election::representative;
use neli_models::{ElectionModelCfg, Faults};
use stateright::{Checker, Model};

use crate::{HANDOVER, LIVENESS, ONE_LEADER, RESOURCE, TOKENS, small};

fn three_members(faults: Faults) -> ElectionModelCfg {
    let mut cfg = small(faults);
    cfg.members = 3;
    cfg.max_ticks = 7;
    cfg
}

/// Proves the reduction is sound on the safe side (no property flips) and
/// pins how much it saves for 3 interchangeable members.
#[test]
fn symmetry_keeps_the_safe_verdicts_on_fewer_states() {
    let model = three_members(Faults { pauses: 1, ..Faults::default() }).into_model();
    let full = model.clone().checker().spawn_dfs().join();
    let reduced = model.clone().checker().symmetry_fn(representative).spawn_dfs().join();
    for p in [ONE_LEADER, TOKENS, RESOURCE, LIVENESS] {
        full.assert_no_discovery(p);
        reduced.assert_no_discovery(p);
    }
    reduced.assert_any_discovery(HANDOVER);
    assert_eq!((full.unique_state_count(), reduced.unique_state_count()), (250_133, 42_434));
}

/// The reduction must not hide a hazard: without the membership proof a
/// pause still yields two leaders.
#[test]
fn symmetry_still_finds_the_no_proof_pause_hazard() {
    let mut cfg = three_members(Faults { pauses: 1, ..Faults::default() });
    cfg.membership_proof = false;
    let reduced = cfg.into_model().checker().symmetry_fn(representative).spawn_dfs().join();
    let path = reduced.assert_any_discovery(ONE_LEADER);
    assert!(path.into_states().iter().any(|s| s.leaders(0).len() == 2));
}
