//! Many seeds of one scenario across OS threads. Each seed's simulation is
//! single-threaded and deterministic; threads only share a work counter,
//! and results are put back in seed order, so output never depends on
//! `--jobs`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::ProgressBar;
use neli_sim::Scenario;

use crate::stats::SeedResult;

/// The seeds of `start..start+count` that shard `index` of `of` (1-based)
/// runs: every `of`-th seed.
pub fn shard_seeds(start: u64, count: u64, index: u64, of: u64) -> Vec<u64> {
    (start..start.saturating_add(count))
        .filter(|s| (s - start) % of == index - 1)
        .collect()
}

/// Parses `i/n` with `1 <= i <= n`.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let (i, n) = text
        .split_once('/')
        .ok_or_else(|| format!("--shard {text:?}: expected i/n, e.g. 1/4"))?;
    let (i, n): (u64, u64) = match (i.trim().parse(), n.trim().parse()) {
        (Ok(i), Ok(n)) => (i, n),
        _ => return Err(format!("--shard {text:?}: i and n must be integers")),
    };
    if n == 0 || i == 0 || i > n {
        return Err(format!("--shard {text:?}: need 1 <= i <= n"));
    }
    Ok((i, n))
}

/// Runs `f` on every seed with `jobs` threads, ticking `bar`.
pub fn run_seeds<T: Send, F>(seeds: &[u64], jobs: usize, bar: &ProgressBar, f: F) -> Vec<T>
where
    F: Fn(u64) -> T + Sync,
{
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(seeds.len()));
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                loop {
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
    run_seeds(seeds, jobs, bar, |seed| {
        SeedResult::of(&crate::run(s, seed), ms)
    })
}
