//! Runs one scenario file with one seed and prints the trace, the figures
//! and any violation; exits non-zero when the run fails.
//!
//! `cargo run -p neli-sim --example run -- scenarios/leader-pause.toml --seed 7`

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: run <scenario.toml> [--seed N] [--quiet]");
        return ExitCode::from(2);
    };
    let scenario = match neli_sim::Scenario::load(std::path::Path::new(path)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut seed = scenario.seed.unwrap_or(0);
    let mut quiet = false;
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => match it.next().and_then(|s| s.parse().ok()) {
                Some(s) => seed = s,
                None => {
                    eprintln!("error: --seed needs an unsigned integer");
                    return ExitCode::from(2);
                }
            },
            "--quiet" => quiet = true,
            other => {
                eprintln!("error: unknown argument {other:?}");
                return ExitCode::from(2);
            }
        }
    }
    let report = neli_sim::run_scenario(&scenario, seed);
    // Output errors (a closed pipe) must not turn into a panic.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "scenario {} seed {seed}", scenario.name);
    if !quiet {
        for line in &report.trace {
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = writeln!(out, "{:?}", report.figures);
    for v in &report.violations {
        let _ = writeln!(out, "VIOLATION: {v}");
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
