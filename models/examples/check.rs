//! Checks one configuration of the election model and prints figures and
//! counterexamples. Usage:
//! `cargo run --release -p neli-models --example check -- [--dfs] [--sym] [--threads N]`
//! (`--sym`: breadth first with symmetry, `neli_models::bfs`; `--sym --dfs`: stateright's
//! DFS with symmetry; `--dfs`: stateright's DFS; neither: stateright's BFS)
//! checks the default exclusive model with 3 members at the documented bounds
//! (T = 2, S = 6 ticks; 10 ticks; one pause and one coordinator isolation).
//! Env overrides: TICKS, PAUSES, CRASHES, ISOLATIONS, STEPS (clock steps), LOG_LOSSES.

use std::time::Instant;

use neli_models::bfs::SymmetricBfs;
use neli_models::election::{canonical_fingerprint, representative};
use neli_models::{ElectionModel, ElectionModelCfg, Faults, format_path};
use stateright::{Checker, Model};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sym = args.iter().any(|a| a == "--sym");
    let dfs = args.iter().any(|a| a == "--dfs");
    let threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(2);
    let mut cfg = ElectionModelCfg::exclusive(3);
    let env = |k: &str, d: u8| std::env::var(k).ok().and_then(|t| t.parse().ok()).unwrap_or(d);
    cfg.faults = Faults {
        pauses: env("PAUSES", 1),
        crashes: env("CRASHES", 0),
        isolations: env("ISOLATIONS", 1),
        clock_steps: env("STEPS", 0),
        log_losses: env("LOG_LOSSES", 0),
        max_skew: 1,
        ..Faults::default()
    };
    cfg.max_ticks = std::env::var("TICKS").ok().and_then(|t| t.parse().ok()).unwrap_or(10);
    println!("config: {cfg:?}\nthreads: {threads}, symmetry: {sym}, dfs: {dfs}");
    let model = cfg.into_model();
    let start = Instant::now();
    let mut builder = model.clone().checker().threads(threads);
    if sym && !dfs {
        let bfs = SymmetricBfs::builder(model.clone()).threads(threads).symmetry_fn(canonical_fingerprint);
        return report(&model, bfs.spawn().join(), start);
    }
    if sym {
        builder = builder.symmetry_fn(representative);
    }
    if dfs {
        report(&model, builder.spawn_dfs().join(), start);
    } else {
        report(&model, builder.spawn_bfs().join(), start);
    }
}

fn report(model: &ElectionModel, checker: impl Checker<ElectionModel>, start: Instant) {
    let secs = start.elapsed().as_secs_f64();
    println!(
        "states generated: {}\nunique states: {}\nmax depth: {}\nwall time: {secs:.2} s\nstates/s generated: {:.0}",
        checker.state_count(),
        checker.unique_state_count(),
        checker.max_depth(),
        checker.state_count() as f64 / secs
    );
    for p in model.properties() {
        match checker.discovery(p.name) {
            Some(path) => println!("discovered {:?}:\n{}", p.name, format_path(model, &path)),
            None => println!("no discovery: {:?}", p.name),
        }
    }
}
