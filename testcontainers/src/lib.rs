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
mod run_errors;

use std::io::Write;
use std::process::Command;
use std::time::Duration;

pub use broker::{Broker, BrokerSpec, ContainerError};
pub use budget::Budget;
pub use run::{RealRun, RealRunReport, Step, StepKind, plan};
pub use run_errors::{NotStable, PlanError, RunError};

/// The host's monotonic clock in ms; the same in every process of the host.
pub fn mono_ms() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// What failed running the docker CLI, or why no engine can be used.
#[derive(Debug, thiserror::Error)]
pub enum DockerError {
    /// The docker CLI could not be started.
    #[error("cannot run the docker CLI: {0}")]
    Spawn(std::io::Error),
    /// The command did not finish in time (it was killed).
    #[error("`docker {command}` did not finish within {timeout:?}")]
    Timeout { command: String, timeout: Duration },
    /// Waiting for the command failed.
    #[error("waiting for `docker {command}`: {error}")]
    Wait { command: String, error: std::io::Error },
    /// Its output could not be read.
    #[error("{0}")]
    Output(std::io::Error),
    /// The command failed: its exit status and what it said.
    #[error("`docker {command}` failed ({status}): {stderr}")]
    Failed { command: String, status: std::process::ExitStatus, stderr: String },
    /// `docker version` named no server.
    #[error("`docker version` reported no server")]
    NoServer,
    /// No engine under `CI=true`, where the suite must run.
    #[error("the real-broker suite needs a Docker engine under CI=true, but none is reachable: {0}")]
    RequiredUnderCi(Box<DockerError>),
}

/// Whether the suite can run. `Ok(false)`: skip (a NOTICE was printed).
/// Under `CI=true` a missing Docker engine is an error instead.
pub fn docker_or_skip(what: &str) -> Result<bool, DockerError> {
    match docker_reachable() {
        Ok(()) => Ok(true),
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => Err(DockerError::RequiredUnderCi(Box::new(why))),
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
pub fn docker_reachable() -> Result<(), DockerError> {
    let out = docker(&["version", "--format", "{{.Server.Version}}"], Duration::from_secs(20))?;
    if out.trim().is_empty() { Err(DockerError::NoServer) } else { Ok(()) }
}

/// Runs the docker CLI (for what testcontainers does not expose: network
/// disconnect/connect, kill), bounded by `timeout`.
pub fn docker(args: &[&str], timeout: Duration) -> Result<String, DockerError> {
    let mut child = Command::new("docker")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(DockerError::Spawn)?;
    let deadline = std::time::Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(DockerError::Timeout { command: args.join(" "), timeout });
            }
            Err(error) => return Err(DockerError::Wait { command: args.join(" "), error }),
        }
    }
    let out = child.wait_with_output().map_err(DockerError::Output)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(DockerError::Failed {
            command: args.join(" "),
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}
