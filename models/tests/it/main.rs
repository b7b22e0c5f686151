//! Integration tests of the election model: each property as a test that
//! asserts discovery or absence of discovery, with pinned state counts.

mod bfs;
mod forget;
mod hazards;
mod incremental;
mod protocols;
mod replay;
mod safe;
mod scenario;
mod symmetry;

use neli_models::{
    ElectionAction, ElectionModel, ElectionModelCfg, ElectionState, Faults, cut_at_violation, format_path,
};
use stateright::{Checker, HasDiscoveries, Model, Path};

/// The property names, as the model exports them.
pub use neli_models::property::{
    ELECTED, ENDED, HANDOVER, LIVENESS, ONE_LEADER, OWN_TOKENS, PROOF_CAP, RESOURCE, SEND_TIME, TOKEN_REPORTED, TOKENS,
};

/// The test bounds: 2 members, `T` = 2, `S` = 4, 8 ticks (small enough for a
/// debug build; the benchmark uses the documented bounds).
pub fn small(faults: Faults) -> ElectionModelCfg {
    let mut cfg = ElectionModelCfg::exclusive(2);
    cfg.session_timeout = 4;
    cfg.max_ticks = 8;
    cfg.faults = faults;
    cfg
}

/// [`small`] with 3 interchangeable members over 7 ticks: where symmetry pays.
pub fn three_members(faults: Faults) -> ElectionModelCfg {
    let mut cfg = small(faults);
    cfg.members = 3;
    cfg.max_ticks = 7;
    cfg
}

/// Every state `model` reaches, breadth first, without stateright: for
/// checks over the whole reachable set (closure under renaming, a state of
/// some kind exists).
pub fn reachable(model: &ElectionModel) -> std::collections::HashSet<neli_models::ElectionState> {
    let mut seen: std::collections::HashSet<neli_models::ElectionState> = model.init_states().into_iter().collect();
    let mut queue: std::collections::VecDeque<neli_models::ElectionState> = seen.iter().cloned().collect();
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        actions.clear();
        model.actions(&s, &mut actions);
        for a in actions.drain(..) {
            if let Some(next) = model.next_state(&s, a)
                && seen.insert(next.clone())
            {
                queue.push_back(next);
            }
        }
    }
    seen
}

/// Exhaustive BFS on one thread (deterministic counts).
pub fn check(cfg: ElectionModelCfg) -> (ElectionModel, impl Checker<ElectionModel>) {
    let model = cfg.into_model();
    let checker = model.clone().checker().spawn_bfs().join();
    (model, checker)
}

/// BFS until `property` is violated.
pub fn hunt(cfg: ElectionModelCfg, property: &'static str) -> (ElectionModel, impl Checker<ElectionModel>) {
    let model = cfg.into_model();
    let until = HasDiscoveries::AnyOf([property].into_iter().collect());
    let checker = model.clone().checker().finish_when(until).spawn_bfs().join();
    (model, checker)
}

/// The shortest counterexample for `property`, printed one line per step.
pub fn counterexample(
    model: &ElectionModel,
    checker: &impl Checker<ElectionModel>,
    property: &'static str,
) -> Path<ElectionState, ElectionAction> {
    let path = checker.discovery(property).unwrap_or_else(|| panic!("expected a discovery of {property:?}"));
    let path = cut_at_violation(model, &path, property);
    println!("counterexample to {property:?}:\n{}", format_path(model, &path));
    path
}
