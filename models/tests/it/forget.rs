//! Forgetting (`ElectionModel::forget`) only merges states: the states the
//! model reaches with it are exactly those it reaches without it, each
//! with the forgotten facts dropped. A rule that read the path to a state
//! instead of the state would break this: forgetting a role's last acquirer
//! on the step that saw the first handover (tried, and dropped) split
//! states reached with it forgotten from the same states reached with it kept.

use std::collections::HashSet;

use neli_models::{ElectionModelCfg, ElectionState, Faults};

use crate::{reachable, small};

fn assert_forgetting_only_merges(cfg: ElectionModelCfg) {
    let model = cfg.clone().into_model();
    let plain = ElectionModelCfg { forget: false, ..cfg }.into_model();
    let with = reachable(&model);
    let without = reachable(&plain);
    let image: HashSet<ElectionState> = without
        .iter()
        .map(|s| {
            let mut s = s.clone();
            model.forget(&mut s);
            s
        })
        .collect();
    assert!(image.len() < without.len(), "forgetting merged nothing here ({} states): a vacuous test", without.len());
    assert_eq!(with.len(), image.len(), "states with forgetting vs the forgotten images of states without");
    assert!(with == image, "forgetting reached a state no path reaches without it, or missed one");
}

/// A log loss (its tick is forgotten after T) and a liveness counter that
/// can no longer pass its bound (S = 2 makes the bound 6 of 8 ticks).
#[test]
fn forgetting_a_log_loss_and_a_leaderless_count_only_merges() {
    let mut cfg = small(Faults { pauses: 1, log_losses: 1, ..Faults::default() });
    cfg.session_timeout = 2;
    cfg.heartbeat_timeout = 1;
    assert_forgetting_only_merges(cfg);
}
