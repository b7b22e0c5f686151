//! The real-broker suite: tansu (or another Kafka-protocol broker) in a
//! container that testcontainers starts from a locally built image, `neli`
//! members as host processes (`neli-tc-member`), faults by real mechanisms
//! (docker pause/unpause, network disconnect/connect, container kill and
//! restart, SIGKILL, SIGSTOP/SIGCONT, SIGTERM, SIGUSR1), and the simulator's
//! scenario files and oracles (`neli_sim::oracle::judge`) applied to a
//! `neli_sim::record::Log` built from the members' JSON logs.
//!
//! Every time in a run is read from the host's `CLOCK_MONOTONIC` (one clock
//! for all processes) and reported in ms since the run started.

pub mod broker;
pub mod budget;
pub mod member_log;
pub mod run;

use std::io::Write;
use std::process::Command;
use std::time::Duration;

pub use broker::{Broker, BrokerSpec};
pub use budget::Budget;
pub use run::{RealRun, RealRunReport, Step, StepKind, plan};

/// The host's monotonic clock in ms; the same in every process of the host.
pub fn mono_ms() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Whether the suite can run. `Ok(false)`: skip (a NOTICE was printed).
/// Under `CI=true` a missing Docker engine is an error instead.
pub fn docker_or_skip(what: &str) -> Result<bool, String> {
    match docker_reachable() {
        Ok(()) => Ok(true),
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            Err(format!("the real-broker suite needs a Docker engine under CI=true, but none is reachable: {why}"))
        }
        Err(why) => {
            // Straight to stderr, not eprintln!: the test harness captures the
            // macros and would hide the notice of a passing (skipped) test.
            let _ = writeln!(
                std::io::stderr(),
                "NOTICE: skipping {what}: no Docker engine reachable ({why}); start Docker (or set DOCKER_HOST) to run it"
            );
            Ok(false)
        }
    }
}

/// `docker version` against the engine, bounded by 20 s.
pub fn docker_reachable() -> Result<(), String> {
    let out = docker(&["version", "--format", "{{.Server.Version}}"], Duration::from_secs(20))?;
    if out.trim().is_empty() { Err("`docker version` reported no server".into()) } else { Ok(()) }
}

/// Runs the docker CLI (for what testcontainers does not expose: network
/// disconnect/connect, kill), bounded by `timeout`.
pub fn docker(args: &[&str], timeout: Duration) -> Result<String, String> {
    let mut child = Command::new("docker")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run the docker CLI: {e}"))?;
    let deadline = std::time::Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`docker {}` did not finish within {timeout:?}", args.join(" ")));
            }
            Err(e) => return Err(format!("waiting for `docker {}`: {e}", args.join(" "))),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`docker {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
