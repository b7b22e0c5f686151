//! Random fault schedules as proptest strategies. A scenario's `[random]`
//! table (`faults`, `kinds`, `max_duration`) becomes a strategy over a
//! vector of faults; a seed picks one value deterministically (ChaCha RNG
//! seeded from the seed), and `shrink` walks the same value tree to
//! simplify a failing schedule the principled way: earlier kinds in the
//! list, earlier start, shorter duration, `leader` as target, fewer effects.
//!
//! This replaces `neli_sim::swarm::random_faults` inside neli-lab: a seed of
//! a `[random]` scenario draws a different schedule here than in neli-sim's
//! own `run` example; every neli-lab command (run, replay, explore, shrink,
//! tune) draws the same one.

use neli_sim::Scenario;
use neli_sim::scenario::{Dur, Fault, FaultKind};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use toml::Spanned;

/// The strategy for `s`'s `[random]` faults, or `None` without one.
pub fn strategy(s: &Scenario) -> Option<BoxedStrategy<Vec<Fault>>> {
    let r = s.random.as_ref()?;
    if r.kinds.is_empty() || r.faults == 0 {
        return None;
    }
    let dur = s.duration.ms().max(10);
    let members = s.election.members as usize;
    let coordinator = s.cluster.coordinator.clone();
    let max_len = r.max_duration.ms().max(501);
    let kinds = r.kinds.clone();
    // Faults start between 10% and 60% of the run and end by 80%, so the
    // end of every run shows recovery.
    let one = (
        proptest::sample::select(kinds),
        dur / 10..dur * 6 / 10 + 1,
        0..=members,
        0..members,
        500..max_len,
        any::<bool>(),
    )
        .prop_flat_map(|head| {
            (
                Just(head),
                (
                    50i64..350,
                    -2000i64..2000,
                    -10_000i64..10_000,
                    1u32..6,
                    any::<bool>(),
                ),
            )
        })
        .prop_map(
            move |((kind, at, who, other, len, to_coord), (lat, by, ppm, count, garbage))| {
                let member = if who == 0 {
                    "leader".to_owned()
                } else {
                    format!("m{}", who - 1)
                };
                let other = format!("m{other}");
                let room = (dur * 8 / 10).saturating_sub(at).max(500);
                let mut f = Fault::new(Dur(at as i64), kind);
                f.duration = Some(Dur(len.min(room) as i64));
                match kind {
                    FaultKind::Partition | FaultKind::Latency => {
                        f.a = Some(member);
                        f.b = Some(if to_coord { coordinator.clone() } else { other });
                        if kind == FaultKind::Latency {
                            f.latency = Some(Dur(lat));
                        }
                    }
                    FaultKind::OneWay => {
                        f.from = Some(member);
                        f.to = Some(coordinator.clone());
                    }
                    FaultKind::BrokerCrash => f.target = Some(coordinator.clone()),
                    FaultKind::ClockStep => {
                        f.target = Some(member);
                        f.by = Some(Dur(by));
                    }
                    FaultKind::ClockDrift => {
                        f.target = Some(member);
                        f.ppm = Some(ppm);
                    }
                    FaultKind::ForeignWriter => {
                        f.partition = Some(0);
                        f.count = Some(count);
                        f.garbage = Some(garbage);
                    }
                    _ => f.target = Some(member),
                }
                f
            },
        );
    let n = r.faults as usize;
    Some(proptest::collection::vec(one, n..=n).boxed())
}

/// The deterministic runner for `seed`.
pub fn runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&neli_sim::mix(seed, 7000 + i as u64).to_le_bytes());
    }
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// The value tree of `s`'s random faults for `seed`.
pub fn tree(s: &Scenario, seed: u64) -> Option<Box<dyn ValueTree<Value = Vec<Fault>>>> {
    let strat = strategy(s)?;
    let mut r = runner(seed);
    strat.new_tree(&mut r).ok().map(|t| Box::new(t) as _)
}

/// `s` with its `[random]` faults for `seed` appended as explicit faults
/// (sorted by start time) and the `[random]` table removed.
pub fn materialize(s: &Scenario, seed: u64) -> Scenario {
    let extra = tree(s, seed).map(|t| t.current()).unwrap_or_default();
    with_faults(s, extra)
}

/// `s` without `[random]`, its own faults plus `extra`.
pub fn with_faults(s: &Scenario, extra: Vec<Fault>) -> Scenario {
    let mut out = s.clone();
    out.random = None;
    out.faults
        .extend(extra.into_iter().map(|f| Spanned::new(0..0, f)));
    out.faults.sort_by_key(|f| f.get_ref().at);
    out
}
