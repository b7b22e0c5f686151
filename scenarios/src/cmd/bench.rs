//! `neli-lab bench`: the harness's own speed on one scenario.

use std::process::ExitCode;
use std::time::Instant;

use indicatif::ProgressBar;

use super::{fail, jobs};
use crate::{catalog, parallel, stats};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Scenario (default: the fixed `bench` scenario).
    #[arg(default_value = "bench")]
    scenario: String,
    #[arg(long, default_value_t = 20)]
    seeds: u64,
    /// Threads of the second measurement, 1 or more (default: the
    /// number of cores; the first is always one thread).
    #[arg(long, value_name = "N", value_parser = super::Threads::PER_CORE)]
    jobs: Option<usize>,
}

/// Seeds/s and simulated seconds per wall second, on one thread and on `--jobs`.
pub fn run(a: BenchArgs) -> ExitCode {
    if a.seeds == 0 {
        // As `explore --seeds 0`: refused, not quietly run on one seed.
        return fail(crate::parallel::SeedFlagError::NoSeeds);
    }
    let e = match catalog::load(&a.scenario) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    let seed_list: Vec<u64> = (0..a.seeds).collect();
    let sim_s = e.scenario.duration.ms() as f64 / 1000.0;
    println!("bench {}: {} simulated s per seed, {} seeds", e.scenario.name, sim_s, seed_list.len());
    let mut rows = Vec::new();
    let mut configs = vec![1];
    let jn = jobs(a.jobs);
    if jn > 1 {
        configs.push(jn);
    }
    for jobs in configs {
        let t0 = Instant::now();
        let rs = parallel::explore(&e.scenario, &seed_list, jobs, &ProgressBar::hidden());
        let wall = t0.elapsed().as_secs_f64();
        let n = rs.len() as f64;
        rows.push(vec![
            jobs.to_string(),
            format!("{wall:.3}"),
            format!("{:.1}", n / wall),
            format!("{:.0}x", n * sim_s / wall),
        ]);
    }
    print!("{}", stats::table(&["threads", "wall s", "seeds/s", "simulated s per wall s"], &rows));
    ExitCode::SUCCESS
}
