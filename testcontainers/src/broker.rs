//! The broker container. By default the image `neli-tansu:0.1.2` is built
//! locally `FROM scratch` with the static tansu binary fetched (sha256
//! checked) by `scripts/fetch-tansu.sh`, so testcontainers never pulls.
//! `NELI_BROKER_IMAGE=name:tag` runs another image instead (see README).
//!
//! The container port is mapped to a fixed, free host port chosen up front,
//! so the advertised address `127.0.0.1:HOSTPORT` stays valid across a
//! restart and host processes reach the broker through Docker's port mapping.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use testcontainers::core::{ContainerPort, WaitFor};
use testcontainers::runners::{AsyncBuilder, AsyncRunner};
use testcontainers::{ContainerAsync, GenericBuildableImage, GenericImage, ImageExt};

use crate::{DockerError, docker};

pub const TANSU_IMAGE: &str = "neli-tansu";
pub const TANSU_TAG: &str = "0.1.2";
/// What failed starting, building or driving the broker container.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// A docker CLI call failed.
    #[error(transparent)]
    Docker(#[from] DockerError),
    /// `NELI_BROKER_REBALANCE_PAUSE_MS` is not a number of milliseconds.
    #[error("NELI_BROKER_REBALANCE_PAUSE_MS must be milliseconds, got {0:?}")]
    RebalancePause(String),
    /// `scripts/fetch-tansu.sh` could not be run.
    #[error("cannot run {}: {error}", script.display())]
    FetchScript { script: PathBuf, error: std::io::Error },
    /// `scripts/fetch-tansu.sh` failed (what it said).
    #[error("{} failed: {stderr}", script.display())]
    FetchFailed { script: PathBuf, stderr: String },
    /// Building the broker image failed.
    #[error("building {reference} FROM scratch: {error}")]
    Build { reference: String, error: String },
    /// Starting the container failed.
    #[error("starting {image}: {error}")]
    Start { image: String, error: String },
    /// The engine refused `docker pause`, `unpause` or `start`.
    #[error("docker {action}: {error}")]
    Engine { action: &'static str, error: String },
    /// The blocking task running a docker call failed.
    #[error("{0}")]
    Task(tokio::task::JoinError),
    /// The container publishes no such port.
    #[error("container {id} publishes no port {port}")]
    NoPort { id: String, port: u16 },
    /// No host port could be had (the first bind, or reading its address).
    #[error("no free host port: {0}")]
    NoFreePort(std::io::Error),
}

/// Port the broker listens on inside the container.
pub const CONTAINER_PORT: u16 = 9092;

/// Which image to run and with what arguments.
#[derive(Debug, Clone)]
pub struct BrokerSpec {
    pub name: String,
    pub tag: String,
    /// Arguments with `{port}` and `{host_port}` substituted; `None`: the image's own command.
    pub args: Option<Vec<String>>,
    /// Log line that means "ready"; `None`: rely on the group-stability wait.
    pub ready_log: Option<String>,
    /// What the broker adds to every rebalance; the timing budgets use it.
    pub rebalance_pause: Duration,
}

impl BrokerSpec {
    /// `NELI_BROKER_IMAGE` (+ `NELI_BROKER_ARGS`, `NELI_BROKER_READY_LOG`), or
    /// the locally built tansu image.
    pub async fn from_env() -> Result<BrokerSpec, ContainerError> {
        match std::env::var("NELI_BROKER_IMAGE") {
            Ok(image) if !image.is_empty() => {
                let (name, tag) = image.rsplit_once(':').unwrap_or((image.as_str(), "latest"));
                Ok(BrokerSpec {
                    name: name.into(),
                    tag: tag.into(),
                    args: std::env::var("NELI_BROKER_ARGS")
                        .ok()
                        .map(|a| a.split_whitespace().map(str::to_owned).collect()),
                    ready_log: std::env::var("NELI_BROKER_READY_LOG").ok(),
                    rebalance_pause: match std::env::var("NELI_BROKER_REBALANCE_PAUSE_MS") {
                        Ok(ms) => Duration::from_millis(
                            ms.trim().parse().map_err(|_| ContainerError::RebalancePause(ms.clone()))?,
                        ),
                        Err(_) => tansu_rebalance_pause(),
                    },
                })
            }
            _ => build_tansu_image().await,
        }
    }
}

fn tansu_args() -> Vec<String> {
    ["broker", "--listener-url", "tcp://0.0.0.0:{port}", "--advertised-listener-url", "tcp://127.0.0.1:{host_port}"]
        .map(str::to_owned)
        .to_vec()
}

/// tansu's pause on every rebalance, as the simulator's profile has it.
fn tansu_rebalance_pause() -> Duration {
    let profile = neli_sim::server::Profile::by_name("tansu").expect("the simulator has a tansu profile");
    Duration::from_millis(profile.rebalance_pause_ms)
}

/// The tansu binary from `scripts/fetch-tansu.sh` (which checks its sha256).
pub fn tansu_binary() -> Result<PathBuf, ContainerError> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/fetch-tansu.sh");
    let out = Command::new("sh")
        .arg(&script)
        .output()
        .map_err(|error| ContainerError::FetchScript { script: script.clone(), error })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(ContainerError::FetchFailed { script, stderr });
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Builds `neli-tansu:0.1.2` unless the engine already has it.
pub async fn build_tansu_image() -> Result<BrokerSpec, ContainerError> {
    let spec = BrokerSpec {
        name: TANSU_IMAGE.into(),
        tag: TANSU_TAG.into(),
        args: Some(tansu_args()),
        ready_log: Some("listening on".into()),
        rebalance_pause: tansu_rebalance_pause(),
    };
    let reference = format!("{TANSU_IMAGE}:{TANSU_TAG}");
    if docker(&["image", "inspect", "--format", "{{.Id}}", &reference], Duration::from_secs(20)).is_ok() {
        return Ok(spec);
    }
    let bin = tansu_binary()?;
    let _image = GenericBuildableImage::new(TANSU_IMAGE, TANSU_TAG)
        .with_dockerfile_string("FROM scratch\nCOPY tansu /tansu\nENTRYPOINT [\"/tansu\"]\n")
        .with_file(bin, "tansu")
        .build_image()
        .await
        .map_err(|e| ContainerError::Build { reference: reference.clone(), error: e.to_string() })?;
    Ok(spec)
}

/// A running broker container with a fixed host port.
pub struct Broker {
    container: ContainerAsync<GenericImage>,
    pub rebalance_pause: Duration,
    pub host_port: u16,
    pub bootstrap: String,
    network: String,
}

impl Broker {
    pub async fn start(spec: &BrokerSpec) -> Result<Broker, ContainerError> {
        let host_port = free_port()?;
        let mut image = GenericImage::new(spec.name.clone(), spec.tag.clone())
            .with_exposed_port(ContainerPort::Tcp(CONTAINER_PORT));
        if let Some(msg) = &spec.ready_log {
            image = image.with_wait_for(WaitFor::message_on_either_std(msg.as_str()));
        }
        let mut req = image
            .with_mapped_port(host_port, ContainerPort::Tcp(CONTAINER_PORT))
            .with_host_config_modifier(publish_on_loopback_only)
            .with_startup_timeout(Duration::from_secs(60));
        if let Some(args) = &spec.args {
            let args: Vec<String> = args
                .iter()
                .map(|a| {
                    a.replace("{port}", &CONTAINER_PORT.to_string()).replace("{host_port}", &host_port.to_string())
                })
                .collect();
            req = req.with_cmd(args);
        }
        let container = req.start().await.map_err(|e| ContainerError::Start {
            image: format!("{}:{}", spec.name, spec.tag),
            error: e.to_string(),
        })?;
        let id = container.id().to_owned();
        let network = docker(
            &["inspect", "--format", "{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}", &id],
            Duration::from_secs(20),
        )?
        .split_whitespace()
        .next()
        .unwrap_or("bridge")
        .to_owned();
        Ok(Broker {
            container,
            rebalance_pause: spec.rebalance_pause,
            host_port,
            bootstrap: format!("127.0.0.1:{host_port}"),
            network,
        })
    }

    pub fn id(&self) -> &str {
        self.container.id()
    }

    /// `docker pause`: the broker's processes freeze (cgroup freezer); TCP
    /// connections stay open, nothing is answered.
    pub async fn pause(&self) -> Result<(), ContainerError> {
        self.container.pause().await.map_err(|e| ContainerError::Engine { action: "pause", error: e.to_string() })
    }

    pub async fn unpause(&self) -> Result<(), ContainerError> {
        self.container.unpause().await.map_err(|e| ContainerError::Engine { action: "unpause", error: e.to_string() })
    }

    /// `docker kill` (SIGKILL): memory storage loses topics, offsets, groups.
    pub async fn kill(&self) -> Result<(), ContainerError> {
        let id = self.id().to_owned();
        tokio::task::spawn_blocking(move || docker(&["kill", &id], Duration::from_secs(30)))
            .await
            .map_err(ContainerError::Task)??;
        Ok(())
    }

    /// Starts the killed container again (same port mapping, empty state).
    pub async fn restart(&self) -> Result<(), ContainerError> {
        self.container.start().await.map_err(|e| ContainerError::Engine { action: "start", error: e.to_string() })
    }

    /// Cuts the container off its network: packets to it are dropped.
    pub async fn disconnect(&self) -> Result<(), ContainerError> {
        let (net, id) = (self.network.clone(), self.id().to_owned());
        tokio::task::spawn_blocking(move || {
            docker(&["network", "disconnect", "--force", &net, &id], Duration::from_secs(30))
        })
        .await
        .map_err(ContainerError::Task)??;
        Ok(())
    }

    pub async fn reconnect(&self) -> Result<(), ContainerError> {
        let (net, id) = (self.network.clone(), self.id().to_owned());
        tokio::task::spawn_blocking(move || docker(&["network", "connect", &net, &id], Duration::from_secs(30)))
            .await
            .map_err(ContainerError::Task)??;
        Ok(())
    }
}

/// A test broker is reachable from this host only: every published port is
/// bound to 127.0.0.1 (Docker's default is every interface).
fn publish_on_loopback_only(host: &mut testcontainers::bollard::models::HostConfig) {
    for bindings in host.port_bindings.iter_mut().flat_map(|m| m.values_mut()).flatten() {
        for b in bindings.iter_mut() {
            b.host_ip = Some("127.0.0.1".into());
        }
    }
}

/// The address Docker publishes `port` of container `id` on, as `docker port` prints it.
pub fn published_address(id: &str, port: u16) -> Result<String, ContainerError> {
    let out = docker(&["port", id, &format!("{port}/tcp")], Duration::from_secs(20))?;
    out.lines().next().map(str::to_owned).ok_or_else(|| ContainerError::NoPort { id: id.to_owned(), port })
}

/// A free TCP port on the host (bound and released; Docker takes it next).
fn free_port() -> Result<u16, ContainerError> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(ContainerError::NoFreePort)?;
    l.local_addr().map(|a| a.port()).map_err(ContainerError::NoFreePort)
}
