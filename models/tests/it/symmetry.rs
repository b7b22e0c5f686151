//! Symmetry reduction over members (stateright applies it in DFS only):
//! the same verdicts on fewer states, in every mode.
//!
//! The reduction is sound when the set of reachable states is closed under
//! renaming members (then a state and its [`representative`] have the same
//! futures up to renaming, and every property only counts leaders and
//! compares tokens). `reachable_states_are_closed_under_renaming` checks
//! that premise directly; the agreement test checks its consequence: BFS
//! without symmetry and DFS with it give the same verdict, on a number of
//! states between `full / n!` and `full`.

use std::collections::BTreeSet;

use neli::core::UnsafeVariant;
use neli_models::election::{canonical_fingerprint, rename_members, representative};
use neli_models::{ElectionModelCfg, Faults};
use stateright::{Checker, HasDiscoveries, Model};

use crate::{HANDOVER, LIVENESS, ONE_LEADER, RESOURCE, TOKENS, reachable, small, three_members};

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
    assert_eq!((full.unique_state_count(), reduced.unique_state_count()), (62_507, 10_909));
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

/// The three modes `neli-lab check --mode` offers, with 3 members (the
/// smallest group where a renaming is more than a rotation), at bounds a
/// debug build checks in seconds: exclusive with `T` = 1, `S` = 2 and 3
/// ticks (long enough for a pause past `S`, so the broken variants fail),
/// the two multi-role modes (2 roles on 2 partitions, a much larger space)
/// with 2 ticks.
fn modes(faults: Faults) -> Vec<(&'static str, ElectionModelCfg)> {
    let mut exclusive = small(faults);
    (exclusive.members, exclusive.max_ticks) = (3, 3);
    (exclusive.heartbeat_timeout, exclusive.session_timeout) = (1, 2);
    let mut multi = small(faults);
    (multi.members, multi.max_ticks, multi.roles, multi.partitions) = (3, 2, 2, 2);
    let mut non_exclusive = multi.clone();
    (non_exclusive.exclusive, non_exclusive.heartbeat_timeout) = (false, 5);
    vec![("exclusive", exclusive), ("multi-role exclusive", multi), ("non-exclusive", non_exclusive)]
}

/// Every permutation of `0..n`.
fn permutations(n: u8) -> Vec<Vec<u8>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

/// The soundness premise of the reduction, checked state by state: every
/// renaming of every reachable state is reachable. This failed in
/// multi-role mode while a rebalance dealt partitions by rotating one fixed
/// member order (see `neli_models::election::deal`).
#[test]
fn reachable_states_are_closed_under_renaming() {
    let eager = modes(Faults { pauses: 1, ..Faults::default() });
    // Incremental assignment breaks ties between equally loaded members by
    // every order of the members (`neli_models::election::sticky_deal`).
    // (At these bounds no partition moves; deeper, multi-role exclusive
    // with `T` = 1, `S` = 2 and 3 ticks, 794,993 states, where one does, was
    // also closed, but takes 40 s in release.)
    let incremental = eager.clone().into_iter().map(|(mode, mut cfg)| {
        cfg.incremental = true;
        (mode, cfg)
    });
    for (mode, cfg) in eager.into_iter().chain(incremental) {
        let mode = if cfg.incremental { format!("{mode}, incremental") } else { mode.to_owned() };
        let model = cfg.into_model();
        let seen = reachable(&model);
        let perms = permutations(model.cfg.members);
        let missing = seen.iter().filter(|s| perms.iter().any(|p| !seen.contains(&rename_members(s, p)))).count();
        println!("{mode}: {} reachable states, {missing} with an unreachable renaming", seen.len());
        assert_eq!(missing, 0, "{mode}: renaming members leaves the reachable states");
    }
}

/// The breadth-first search keys states by `canonical_fingerprint`, which
/// hashes a state's representative without building it: it must be the
/// representative's own fingerprint (else the search merges the wrong
/// states), and tell every two representatives apart here (a 64-bit
/// collision would merge two). Members in every mode, and crashes (keys
/// with a second incarnation), log losses and isolations (fields that only
/// some states set).
#[test]
fn the_canonical_fingerprint_is_the_representatives_own() {
    let crash = Faults { crashes: 1, ..Faults::default() };
    let log_loss = Faults { isolations: 1, log_losses: 1, ..Faults::default() };
    for (mode, cfg) in modes(crash).into_iter().chain(modes(log_loss)) {
        let seen = reachable(&cfg.into_model());
        let mut representatives = std::collections::HashSet::new();
        let mut fingerprints = std::collections::HashSet::new();
        for s in &seen {
            let r = representative(s);
            assert_eq!(canonical_fingerprint(s), canonical_fingerprint(&r), "{mode}: {s:?}");
            fingerprints.insert(canonical_fingerprint(&r));
            representatives.insert(r);
        }
        // Every renaming of a state reaches the representative by another
        // renaming, so it hashes its representative through another path
        // of `canonical_fingerprint`: equal fingerprints exactly when the
        // representatives are equal (ties between identical slots may
        // leave two renamings with different representatives).
        for s in &seen {
            for p in permutations(3) {
                let renamed = rename_members(s, &p);
                let same = representative(&renamed) == representative(s);
                assert_eq!(canonical_fingerprint(&renamed) == canonical_fingerprint(s), same, "{mode}: {p:?} of {s:?}");
            }
        }
        println!("{mode}: {} states, {} representatives", seen.len(), representatives.len());
        assert!(representatives.len() < seen.len(), "{mode}: no two states share a representative");
        assert_eq!(fingerprints.len(), representatives.len(), "{mode}: two representatives share a fingerprint");
    }
}

/// Every property's verdict: discovered or not.
fn verdict(model: &neli_models::ElectionModel, c: &impl Checker<neli_models::ElectionModel>) -> Vec<(String, bool)> {
    model.properties().iter().map(|p| (p.name.to_owned(), c.discovery(p.name).is_some())).collect()
}

/// BFS without symmetry and DFS with it agree on every property, in every
/// mode, for the recommended configuration and each broken one, and the
/// reduced count lies between `full / 3!` and `full`. Both searches run to
/// completion (a name no property has is never discovered), so the counts
/// are comparable.
#[test]
fn bfs_and_dfs_with_symmetry_agree_in_every_mode() {
    let never = HasDiscoveries::AllOf(BTreeSet::from(["(run to completion)"]));
    let receipt = UnsafeVariant { lease_from_receipt: true, ..UnsafeVariant::default() };
    let any = UnsafeVariant { any_record_counts: true, ..UnsafeVariant::default() };
    let pause = Faults { pauses: 1, ..Faults::default() };
    let mut rows = Vec::new();
    for (name, variant, proof, t_above_s, faults) in [
        ("recommended", UnsafeVariant::default(), true, false, pause),
        ("no membership proof", UnsafeVariant::default(), false, false, pause),
        ("lease from receipt", receipt, false, false, pause),
        ("any record counts", any, false, false, pause),
        ("T > S", UnsafeVariant::default(), true, true, pause),
    ] {
        for (mode, mut cfg) in modes(faults) {
            cfg.variant = variant;
            cfg.membership_proof = proof;
            if t_above_s {
                cfg.heartbeat_timeout = cfg.session_timeout + 1;
            }
            let hazard_expected = name != "recommended" && mode == "exclusive";
            let model = cfg.into_model();
            let full = model.clone().checker().finish_when(never.clone()).spawn_bfs().join();
            let reduced =
                model.clone().checker().finish_when(never.clone()).symmetry_fn(representative).spawn_dfs().join();
            let (f, r) = (full.unique_state_count(), reduced.unique_state_count());
            let v = verdict(&model, &full);
            rows.push(format!("{mode:<21} {name:<20} full {f:>7} reduced {r:>6} ÷{:.2}", f as f64 / r as f64));
            assert_eq!(v, verdict(&model, &reduced), "{mode}, {name}: BFS and DFS + symmetry disagree");
            assert!(r <= f && r * 6 >= f, "{mode}, {name}: reduced {r} not within [{f}/3!, {f}]");
            // At these bounds only the exclusive space is deep enough for the
            // hazards; there both searches must find them, not just agree.
            if hazard_expected {
                assert!(v.iter().any(|(p, found)| p == ONE_LEADER && *found), "{mode}, {name}: hazard not found");
            }
        }
    }
    println!("{}", rows.join("\n"));
}
