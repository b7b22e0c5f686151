//! Breadth-first search with symmetry (`neli_models::bfs`): the states
//! stateright's DFS with symmetry visits, and counterexamples as short as
//! stateright's BFS without symmetry finds.

use std::collections::BTreeSet;

use neli::core::UnsafeVariant;
use neli_models::bfs::SymmetricBfs;
use neli_models::election::{canonical_fingerprint, representative};
use neli_models::{Faults, cut_at_violation};
use stateright::{Checker, HasDiscoveries, Model};

use crate::{HANDOVER, LIVENESS, ONE_LEADER, RESOURCE, TOKENS, hunt, small, three_members};

/// Both searches visit one state per class of the same representative
/// function, so run to completion they count the same states (pinned in
/// `symmetry_keeps_the_safe_verdicts_on_fewer_states`) and agree on every
/// property, on one thread or two.
#[test]
fn bfs_with_symmetry_visits_the_states_dfs_with_symmetry_visits() {
    let model = three_members(Faults { pauses: 1, ..Faults::default() }).into_model();
    let never = HasDiscoveries::AllOf(BTreeSet::from(["(run to completion)"]));
    let dfs = model.clone().checker().finish_when(never.clone()).symmetry_fn(representative).spawn_dfs().join();
    for threads in [1, 2] {
        let bfs = SymmetricBfs::builder(model.clone())
            .threads(threads)
            .symmetry_fn(canonical_fingerprint)
            .finish_when(never.clone())
            .spawn()
            .join();
        assert_eq!(bfs.unique_state_count(), 10_909, "{threads} thread(s)");
        assert_eq!(bfs.unique_state_count(), dfs.unique_state_count());
        assert_eq!(bfs.max_depth(), 43, "{threads} thread(s): levels, the initial state's included");
        for p in [ONE_LEADER, TOKENS, RESOURCE, LIVENESS] {
            bfs.assert_no_discovery(p);
        }
        // A witness comes back as a real path of the model (rebuilt on the
        // real states, so it starts at the initial state and every step is
        // enabled) ending where the witness holds.
        let path = bfs.assert_any_discovery(HANDOVER);
        assert!(path.last_state().handover);
    }
}

/// Each hazard of `hazards.rs`, found by BFS + symmetry on two threads with a
/// counterexample exactly as long as this search finds without symmetry
/// on one thread (plain breadth first: the shortest), never longer than
/// stateright's BFS finds (which keeps the last violation of a batch of
/// states, so its path may be longer), on fewer states.
#[test]
fn bfs_with_symmetry_finds_every_hazard_at_its_shortest_length() {
    let receipt = UnsafeVariant { lease_from_receipt: true, ..UnsafeVariant::default() };
    let any = UnsafeVariant { any_record_counts: true, ..UnsafeVariant::default() };
    let pause = Faults { pauses: 1, ..Faults::default() };
    let skew = Faults { pauses: 1, clock_steps: 1, max_skew: 1, ..Faults::default() };
    let isolation = Faults { isolations: 1, ..Faults::default() };
    let mut lengths = Vec::new();
    for (name, variant, proof, faults, t_equals_s) in [
        ("lease from receipt", receipt, false, pause, false),
        ("any record counts", any, false, pause, false),
        ("T = S with skew", UnsafeVariant::default(), true, skew, true),
        ("isolated, no proof", UnsafeVariant::default(), false, isolation, false),
        ("paused, no proof", UnsafeVariant::default(), false, pause, false),
    ] {
        let mut cfg = small(faults);
        cfg.members = 3;
        (cfg.variant, cfg.membership_proof) = (variant, proof);
        if t_equals_s {
            cfg.heartbeat_timeout = cfg.session_timeout;
        }
        let (model, full) = hunt(cfg.clone(), ONE_LEADER);
        let shortest = cut_at_violation(&model, &full.discovery(ONE_LEADER).expect("a hazard"), ONE_LEADER);
        let until = HasDiscoveries::AnyOf(BTreeSet::from([ONE_LEADER]));
        let plain = SymmetricBfs::builder(model.clone()).finish_when(until.clone()).spawn().join();
        let plain = plain.discovery(ONE_LEADER).unwrap_or_else(|| panic!("{name}: not found"));
        let reduced = SymmetricBfs::builder(model.clone())
            .threads(2)
            .symmetry_fn(canonical_fingerprint)
            .finish_when(until)
            .spawn()
            .join();
        let path = reduced.discovery(ONE_LEADER).unwrap_or_else(|| panic!("{name}: not found with symmetry"));
        assert_eq!(path.last_state().leader_count(0), 2, "{name}: ends with two leaders");
        assert!(model.init_states().contains(&path.clone().into_states()[0]));
        // Level by level, the discovery is the first violation on its path.
        assert_eq!(cut_at_violation(&model, &path, ONE_LEADER).into_actions().len(), path.clone().into_actions().len());
        let (n, p, m) = (path.into_actions().len(), plain.into_actions().len(), shortest.into_actions().len());
        lengths.push(format!("{name}: {n} steps (stateright's BFS: {m})"));
        assert_eq!(n, p, "{name}: BFS + symmetry found {n} steps, plain BFS {p}");
        assert!(n <= m, "{name}: BFS + symmetry found {n} steps, stateright's BFS {m}");
        assert!(reduced.unique_state_count() < full.unique_state_count(), "{name}: no reduction");
    }
    println!("{}", lengths.join("\n"));
}

/// Depth first (`Builder::depth_first`), the search `check --dfs` runs:
/// the same states as breadth first and as stateright's DFS with symmetry,
/// on one thread or two (work handed between them), and every hazard still
/// found, with a real path of the model ending in the violation.
#[test]
fn depth_first_visits_the_same_states_and_finds_every_hazard() {
    let model = three_members(Faults { pauses: 1, ..Faults::default() }).into_model();
    let never = HasDiscoveries::AllOf(BTreeSet::from(["(run to completion)"]));
    for threads in [1, 2] {
        let dfs = SymmetricBfs::builder(model.clone())
            .depth_first()
            .threads(threads)
            .symmetry_fn(canonical_fingerprint)
            .finish_when(never.clone())
            .spawn()
            .join();
        assert_eq!(dfs.unique_state_count(), 10_909, "{threads} thread(s)");
        // A state is first reached by whichever path the search takes, so
        // depth first goes at least as deep as breadth first's 43 levels.
        assert!(dfs.max_depth() >= 43, "{threads} thread(s): depth {}", dfs.max_depth());
        for p in [ONE_LEADER, TOKENS, RESOURCE, LIVENESS] {
            dfs.assert_no_discovery(p);
        }
        assert!(dfs.assert_any_discovery(HANDOVER).last_state().handover);
    }
    let receipt = UnsafeVariant { lease_from_receipt: true, ..UnsafeVariant::default() };
    let isolation = Faults { isolations: 1, ..Faults::default() };
    for (name, variant, faults) in [
        ("lease from receipt", receipt, Faults { pauses: 1, ..Faults::default() }),
        ("isolated, no proof", UnsafeVariant::default(), isolation),
    ] {
        let mut cfg = small(faults);
        cfg.members = 3;
        (cfg.variant, cfg.membership_proof) = (variant, false);
        let model = cfg.into_model();
        let until = HasDiscoveries::AnyOf(BTreeSet::from([ONE_LEADER]));
        let dfs = SymmetricBfs::builder(model.clone())
            .depth_first()
            .threads(2)
            .symmetry_fn(canonical_fingerprint)
            .finish_when(until)
            .spawn()
            .join();
        let path = dfs.discovery(ONE_LEADER).unwrap_or_else(|| panic!("{name}: not found depth first"));
        assert_eq!(path.last_state().leader_count(0), 2, "{name}: ends with two leaders");
        assert!(model.init_states().contains(&path.into_states()[0]), "{name}: starts at an initial state");
    }
}
