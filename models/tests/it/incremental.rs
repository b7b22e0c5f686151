//! Incremental (cooperative-sticky) assignment: a rebalance keeps a
//! partition with its owner, so the leader keeps leading through it, and a
//! partition that must move is revoked from its owner (the Revoked barrier)
//! before the next rebalance hands it on (docs/cooperative-rebalance.md).

use neli_models::{ElectionModelCfg, Faults};
use stateright::Checker;

use crate::{
    ELECTED, HANDOVER, LIVENESS, ONE_LEADER, OWN_TOKENS, RESOURCE, TOKENS, check, counterexample, hunt, small,
};

fn incremental(faults: Faults) -> ElectionModelCfg {
    let mut cfg = small(faults);
    cfg.incremental = true;
    cfg
}

#[test]
fn explore_sizes() {
    for (name, mut cfg) in [
        ("2m pause", incremental(Faults { pauses: 1, ..Faults::default() })),
        ("2m isolation", incremental(Faults { isolations: 1, ..Faults::default() })),
        ("2m pause+isolation", incremental(Faults { pauses: 1, isolations: 1, ..Faults::default() })),
    ] {
        let t0 = std::time::Instant::now();
        let (model, checker) = check(cfg.clone());
        println!("{name}: unique {} in {:?}", checker.unique_state_count(), t0.elapsed());
        for p in [ONE_LEADER, TOKENS, OWN_TOKENS, RESOURCE, LIVENESS] {
            if checker.discovery(p).is_some() {
                counterexample(&model, &checker, p);
            }
        }
        cfg.members = 3;
        let _ = &mut cfg;
    }
}

#[test]
fn explore_skip() {
    for (name, faults) in [
        ("pause", Faults { pauses: 1, ..Faults::default() }),
        ("crash", Faults { crashes: 1, ..Faults::default() }),
        ("isolation", Faults { isolations: 1, ..Faults::default() }),
    ] {
        for ticks in 3..=8 {
            let mut cfg = incremental(faults);
            (cfg.roles, cfg.partitions, cfg.max_ticks, cfg.skip_revoked_barrier) = (2, 2, ticks, true);
            let t0 = std::time::Instant::now();
            let (model, checker) = hunt(cfg.clone(), ONE_LEADER);
            let found = checker.discovery(ONE_LEADER).is_some();
            println!(
                "{name} ticks {ticks}: found {found} unique {} in {:?}",
                checker.unique_state_count(),
                t0.elapsed()
            );
            if found {
                let path = counterexample(&model, &checker, ONE_LEADER);
                println!("length {}", path.into_actions().len());
                break;
            }
        }
    }
}
