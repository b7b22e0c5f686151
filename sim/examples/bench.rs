//! Simulator benchmark (docs/benchmarks-log.md, "Simulator"; BENCHMARKS.md, "Simulator throughput"): runs
//! `scenarios/bench.toml` (5 members, 1 broker, T=1s, S=3s, 30 s simulated
//! with a pause and a partition) for N seeds, then a bare program on the
//! simulator's runtime (`neli_sim::rt`) with the same hosts and a comparable
//! request rate, in the same
//! process (interleaved seed by seed), and prints simulated seconds per wall second, seeds per second
//! and the overhead ratio.
//!
//! `cargo run --release -p neli-sim --example bench -- [seeds]`

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn bare(seed: u64, sim_secs: u64) {
    let mut sim = neli_sim::rt::Sim::new(seed, neli_sim::MIN_LATENCY, neli_sim::MAX_LATENCY);
    sim.host("b0", || async {
        let l = neli_sim::rt::net::TcpListener::bind(("0.0.0.0", 9092)).await?;
        loop {
            let (mut s, _) = l.accept().await?;
            tokio::task::spawn_local(async move {
                let mut buf = [0u8; 64];
                while s.read_exact(&mut buf).await.is_ok() {
                    if s.write_all(&buf).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    for i in 0..5 {
        sim.host(format!("m{i}").as_str(), || async {
            // ~12 request/response pairs per second per member: about what
            // a member's heartbeats, commits, fetches and group heartbeats make.
            let mut s = neli_sim::rt::net::TcpStream::connect("b0:9092").await?;
            let mut buf = [7u8; 64];
            loop {
                tokio::time::sleep(Duration::from_millis(80)).await;
                s.write_all(&buf).await?;
                s.read_exact(&mut buf).await?;
            }
        });
    }
    sim.run_until(sim_secs * 1000).expect("the bare program runs");
}

fn main() {
    let seeds: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/bench.toml");
    let scenario = neli_sim::Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let sim_secs = scenario.duration.ms() / 1000;
    // Interleaved per seed, so both sides see the same load on a shared machine.
    let (mut ours, mut theirs, mut violations) = (0.0, 0.0, 0);
    for seed in 0..seeds {
        let start = Instant::now();
        violations += neli_sim::run_scenario(&scenario, seed).violations.len();
        ours += start.elapsed().as_secs_f64();
        let start = Instant::now();
        bare(seed, sim_secs);
        theirs += start.elapsed().as_secs_f64();
    }
    let simulated = (seeds * sim_secs) as f64;
    println!("seeds {seeds}, {sim_secs} s simulated each, violations {violations}");
    println!("neli-sim : {:.3} s wall, {:.0}x real time, {:.2} seeds/s", ours, simulated / ours, seeds as f64 / ours);
    println!(
        "bare     : {:.3} s wall, {:.0}x real time, {:.2} seeds/s",
        theirs,
        simulated / theirs,
        seeds as f64 / theirs
    );
    println!("overhead : {:.2}x the bare program", ours / theirs);
}
