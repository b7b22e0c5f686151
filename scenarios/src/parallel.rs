//! Many seeds of one scenario across OS threads. Each seed's simulation is
//! single-threaded and deterministic; threads only share a work counter,
//! and results are put back in seed order, so output never depends on
//! `--jobs`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::collections::BTreeMap;

use indicatif::ProgressBar;
use neli_sim::Scenario;
use neli_sim::scenario::Layer;

use crate::stats::SeedResult;

/// Most seeds one process runs per scenario; more is a job for shards.
pub const MAX_SEEDS: u64 = 100_000_000;

/// A refused `--seeds`, `--start`, `--shard` or `--time-budget`: each
/// names the flag at fault and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedFlagError {
    #[error("--seeds 0: nothing to run; give at least 1")]
    NoSeeds,
    #[error("--shard {index}/{of}: need 1 <= i <= n")]
    ShardOutOfRange { index: u64, of: u64 },
    #[error("--start {start} + --seeds {count} goes past the largest seed {max}", max = u64::MAX)]
    PastLargestSeed { start: u64, count: u64 },
    #[error("--shard {index}/{of}: no seed of the {count} from {start} falls in this shard")]
    EmptyShard { index: u64, of: u64, count: u64, start: u64 },
    #[error(
        "{n} seeds in one process (--seeds {count}, --shard {index}/{of}): at most {MAX_SEEDS}; split the range with --shard"
    )]
    TooManySeeds { n: u64, count: u64, index: u64, of: u64 },
    #[error("--shard {text:?}: expected i/n, e.g. 1/4")]
    ShardNotAFraction { text: String },
    #[error("--shard {text:?}: i and n must be integers")]
    ShardNotIntegers { text: String },
    #[error("--shard {text:?}: need 1 <= i <= n")]
    ShardTextOutOfRange { text: String },
    #[error("--time-budget {text:?}: must be positive, e.g. 10m")]
    ZeroBudget { text: String },
    #[error("--time-budget {text:?}: {reason}")]
    BadBudget { text: String, reason: String },
}

/// The seeds of `start..start+count` that shard `index` of `of` (1-based)
/// runs: every `of`-th seed, counted without walking the whole range, so a
/// huge range split into as many shards costs one seed per shard. An empty
/// selection or one above [`MAX_SEEDS`] is an error saying why.
pub fn shard_seeds(start: u64, count: u64, index: u64, of: u64) -> Result<Vec<u64>, SeedFlagError> {
    if count == 0 {
        return Err(SeedFlagError::NoSeeds);
    }
    if index == 0 || of == 0 || index > of {
        return Err(SeedFlagError::ShardOutOfRange { index, of });
    }
    let end = start.checked_add(count).ok_or(SeedFlagError::PastLargestSeed { start, count })?;
    let first = start.saturating_add(index - 1);
    if first >= end {
        return Err(SeedFlagError::EmptyShard { index, of, count, start });
    }
    let n = (end - first).div_ceil(of);
    if n > MAX_SEEDS {
        return Err(SeedFlagError::TooManySeeds { n, count, index, of });
    }
    Ok((0..n).map(|k| first + k * of).collect())
}

/// Parses `i/n` with `1 <= i <= n`.
pub fn parse_shard(text: &str) -> Result<(u64, u64), SeedFlagError> {
    let (i, n) = text.split_once('/').ok_or_else(|| SeedFlagError::ShardNotAFraction { text: text.to_owned() })?;
    let (i, n): (u64, u64) = match (i.trim().parse(), n.trim().parse()) {
        (Ok(i), Ok(n)) => (i, n),
        _ => return Err(SeedFlagError::ShardNotIntegers { text: text.to_owned() }),
    };
    if n == 0 || i == 0 || i > n {
        return Err(SeedFlagError::ShardTextOutOfRange { text: text.to_owned() });
    }
    Ok((i, n))
}

/// Parses a `--time-budget` such as `90s`, `10m` or `2h`, in the one
/// duration grammar ([`neli::duration`]); zero is refused.
pub fn parse_budget(text: &str) -> Result<std::time::Duration, SeedFlagError> {
    match neli::duration::parse(text) {
        Ok(d) if d.is_zero() => Err(SeedFlagError::ZeroBudget { text: text.to_owned() }),
        Ok(d) => Ok(d),
        Err(e) => Err(SeedFlagError::BadBudget { text: text.to_owned(), reason: e.to_string() }),
    }
}

/// Seeds per scenario run between two looks at a `--time-budget`: enough
/// to keep `jobs` threads busy, few enough to stop soon after the budget.
pub fn budget_chunk(jobs: usize) -> usize {
    jobs.max(1) * 8
}

/// Runs `f` on every seed with `jobs` threads, ticking `bar`; after an
/// interrupt ([`crate::interrupt`]), on a prefix of them.
pub fn run_seeds<T: Send, F>(seeds: &[u64], jobs: usize, bar: &ProgressBar, f: F) -> Vec<T>
where
    F: Fn(u64) -> T + Sync,
{
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(seeds.len()));
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                // After an interrupt no new seed starts; the results so
                // far are a prefix of `seeds` (every taken seed finishes).
                while !crate::interrupt::requested() {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(seed) = seeds.get(i) else { break };
                    let r = f(*seed);
                    out.lock().expect("results lock").push((i, r));
                    bar.inc(1);
                }
            });
        }
    });
    let mut v = out.into_inner().expect("results lock");
    v.sort_by_key(|(i, _)| *i);
    v.into_iter().map(|(_, r)| r).collect()
}

/// Runs `s` over `seeds`, keeping only the figures.
pub fn explore(s: &Scenario, seeds: &[u64], jobs: usize, bar: &ProgressBar) -> Vec<SeedResult> {
    let ms = s.duration.ms();
    run_seeds(seeds, jobs, bar, |seed| SeedResult::of(&crate::run(s, seed), ms))
}

/// Runs `ablated` (a scenario with `layer` off) over `seeds`, except the
/// seeds whose run of the scenario as written (in `base`) shows the layer
/// never acted: the ablated run would be that run again, byte for byte, so
/// its result is taken from there ([`SeedResult::reusable_without`];
/// ARCHITECTURE.md, "Layer ablation").
pub fn explore_without(
    ablated: &Scenario,
    layer: Layer,
    seeds: &[u64],
    base: &[SeedResult],
    jobs: usize,
    bar: &ProgressBar,
) -> Vec<SeedResult> {
    let by_seed: BTreeMap<u64, &SeedResult> = base.iter().map(|r| (r.seed, r)).collect();
    let reuse = |seed: &u64| by_seed.get(seed).and_then(|r| r.reusable_without(layer));
    let run: Vec<u64> = seeds.iter().copied().filter(|s| reuse(s).is_none()).collect();
    let mut ran = explore(ablated, &run, jobs, bar).into_iter();
    let mut out = Vec::with_capacity(seeds.len());
    for seed in seeds {
        match reuse(seed) {
            Some(r) => {
                bar.inc(1);
                out.push(r);
            }
            // After an interrupt, `ran` is a prefix: so is the result.
            None => match ran.next() {
                Some(r) => out.push(r),
                None => break,
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_range_in_order() {
        let all: Vec<u64> = (1..=3).flat_map(|i| shard_seeds(10, 8, i, 3).unwrap()).collect();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(sorted, (10..18).collect::<Vec<_>>());
        assert_eq!(shard_seeds(10, 8, 2, 3).unwrap(), vec![11, 14, 17]);
    }

    #[test]
    fn a_huge_range_in_as_many_shards_is_one_seed_each() {
        assert_eq!(shard_seeds(0, u64::MAX, 1, u64::MAX).unwrap(), vec![0]);
        assert_eq!(shard_seeds(0, u64::MAX, u64::MAX, u64::MAX).unwrap(), vec![u64::MAX - 1]);
    }

    #[test]
    fn budgets_have_units_and_are_positive() {
        assert_eq!(parse_budget("10m").unwrap().as_secs(), 600);
        assert_eq!(parse_budget("2h").unwrap().as_secs(), 7200);
        assert_eq!(parse_budget("250ms").unwrap().as_millis(), 250);
        for bad in ["0s", "10", "m", "10x", "-1s", ""] {
            assert!(parse_budget(bad).unwrap_err().to_string().contains("--time-budget"), "{bad}");
        }
    }

    #[test]
    fn nothing_to_run_or_too_much_is_an_error_saying_why() {
        assert!(shard_seeds(0, 0, 1, 1).unwrap_err().to_string().contains("nothing to run"));
        assert!(shard_seeds(0, 2, 3, 4).unwrap_err().to_string().contains("no seed"));
        assert!(shard_seeds(5, u64::MAX, 1, 1).unwrap_err().to_string().contains("past the largest seed"));
        assert!(shard_seeds(0, u64::MAX, 1, 1).unwrap_err().to_string().contains("split the range"));
    }
}
