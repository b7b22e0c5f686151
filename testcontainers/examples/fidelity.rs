//! Sim-to-real fidelity: failover/handover times of the same scenarios on
//! the real broker (tansu in a container, host member processes) and in
//! `neli-sim` with the `tansu` broker profile. Prints a Markdown table.
//!
//! `cargo run -p neli-testcontainers --example fidelity -- [REAL_REPS] [SIM_SEEDS]`
//! (defaults 3 and 20).

use std::path::PathBuf;

use neli_sim::{Scenario, run_scenario};
use neli_testcontainers::{Broker, BrokerSpec, RealRun, docker_or_skip, plan};

const CASES: &[(&str, &str, &str)] = &[
    ("leader crash (SIGKILL)", "fid-leader-crash", "kind = \"crash\"\ntarget = \"leader\""),
    ("leader pause 10 s (SIGSTOP)", "fid-leader-pause", "kind = \"pause\"\ntarget = \"leader\"\nduration = \"10s\""),
    ("graceful handover (close)", "fid-handover", "kind = \"close\"\ntarget = \"leader\""),
];

fn scenario(name: &str, fault: &str) -> Scenario {
    let text = format!(
        "name = \"{name}\"\nduration = \"30s\"\n[cluster]\nprofile = \"tansu\"\n[election]\nmembers = 3\n\
         heartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n[[faults]]\nat = \"10s\"\n{fault}\n"
    );
    Scenario::parse(&text, name).unwrap_or_else(|e| panic!("{e}"))
}

fn stats(v: &mut [u64]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.sort();
    format!("{} ({}–{}, n={})", v[v.len() / 2], v[0], v[v.len() - 1], v.len())
}

fn median(v: &[u64]) -> Option<u64> {
    (!v.is_empty()).then(|| v[v.len() / 2])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let seeds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    match docker_or_skip("fidelity benchmark") {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    let member = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/debug/neli-tc-member");
    assert!(member.exists(), "build the member first: cargo build -p neli-testcontainers --bin neli-tc-member");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    println!("| case | real tansu: median ms (min–max, n) | sim `tansu` profile: median ms (min–max, n) | sim/real |");
    println!("|---|---|---|---|");
    for (label, name, fault) in CASES {
        let s = scenario(name, fault);
        let mut sim: Vec<u64> =
            (1..=seeds).filter_map(|seed| run_scenario(&s, seed).figures.failovers_ms.first().copied()).collect();
        let mut real = Vec::new();
        for rep in 0..reps {
            let out = rt.block_on(async {
                let spec = BrokerSpec::from_env().await.map_err(|e| e.to_string())?;
                let broker = Broker::start(&spec).await.map_err(|e| e.to_string())?;
                let steps = plan(&s).map_err(|e| e.to_string())?;
                RealRun::new(&s, &broker, &member)
                    .map_err(|e| e.to_string())?
                    .play(steps, 20_000)
                    .await
                    .map_err(|e| e.to_string())
            });
            match out {
                Ok(o) => {
                    eprintln!(
                        "{name} rep {rep}: failovers {:?}, violations {:?}",
                        o.figures.failovers_ms, o.violations
                    );
                    real.extend(o.figures.failovers_ms.first().copied());
                }
                Err(e) => eprintln!("{name} rep {rep}: {e}"),
            }
        }
        sim.sort();
        real.sort();
        let ratio = match (median(&sim), median(&real)) {
            (Some(a), Some(b)) if b > 0 => format!("{:.2}", a as f64 / b as f64),
            _ => "–".into(),
        };
        println!("| {label} | {} | {} | {ratio} |", stats(&mut real), stats(&mut sim));
    }
}
