//! `explore --ablate` does not run a seed again with a layer off when the
//! layer never acted in the seed's run of the scenario as written: it takes
//! that run's result (ARCHITECTURE.md, "Layer ablation"). That is only
//! right if such a run, with the layer off, is the same run byte for byte.
//! Checked here on every shipped scenario; a new use of a layer's setting
//! that forgets to say so in `Log::acted` fails this test.

use neli_sim::scenario::Layer;
use neli_sim::{Scenario, run_scenario};

/// The layers whose runs `explore --ablate` may reuse.
const REUSABLE: [Layer; 2] = [Layer::ClientSessionExpiry, Layer::CommitGenerationCheck];

fn shipped() -> Vec<Scenario> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the shipped scenarios")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && !p.ends_with("Cargo.toml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).expect("a scenario file");
            Scenario::parse(&text, &p.display().to_string()).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

#[test]
fn a_layer_that_never_acted_changes_nothing_when_switched_off() {
    let scenarios = shipped();
    assert!(scenarios.len() >= 30, "found only {} shipped scenarios", scenarios.len());
    // Per layer: (runs compared where it never acted, runs where it acted).
    let tally = std::sync::Mutex::new([(0u32, 0u32); 2]);
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Two threads: each run is single-threaded and deterministic.
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(s) = scenarios.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    for seed in 0..2 {
                        let base = run_scenario(s, seed);
                        for (k, layer) in REUSABLE.into_iter().enumerate() {
                            let Some(without) = s.without(layer) else { continue };
                            if base.acted.contains(&layer) {
                                tally.lock().unwrap()[k].1 += 1;
                                continue;
                            }
                            let off = run_scenario(&without, seed);
                            let what = format!("{} seed {seed} without {layer}, where the layer never acted", s.name);
                            assert_eq!(off.trace, base.trace, "{what}: the trace differs");
                            assert_eq!(off.violations, base.violations, "{what}: the verdict differs");
                            assert_eq!(off.figures, base.figures, "{what}: the figures differ");
                            tally.lock().unwrap()[k].0 += 1;
                        }
                    }
                }
            });
        }
    });
    let tally = tally.into_inner().unwrap();
    for (k, layer) in REUSABLE.into_iter().enumerate() {
        let (same, acted) = tally[k];
        assert!(
            same > 0 && acted > 0,
            "{layer}: {same} runs compared, {acted} where it acted: the test saw no contrast"
        );
    }
}
