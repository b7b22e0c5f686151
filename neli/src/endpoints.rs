//! A small HTTP server for one election (`neli exec --metrics-addr`):
//!
//! - `/metrics`: every metric of the process in Prometheus text format,
//!   rendered by `metrics-exporter-prometheus` (its [`PrometheusHandle`]);
//!   the time-dependent gauges are refreshed first
//!   ([`Control::refresh_metrics`]).
//! - `/healthz`: 200 while the election loop is alive
//!   ([`Control::health`]), 503 otherwise (also before the election
//!   exists, while connecting); the body is [`crate::Health`]'s line.
//! - `/leader`: 200 while this member holds a live lease of role 0
//!   (`/leader?role=N` for another role), 503 otherwise; the body names
//!   the role, the token and the log epoch.
//!
//! It runs on threads of its own, not on the election's runtime, so a
//! stuck loop gets a 503 rather than no answer, and every answer about a
//! lease is computed from the published lease at the moment of the
//! request ([`crate::Status::lease`]), not from the loop's last pulse.
//! It has no authentication: serve it on loopback (what `neli exec`
//! insists on unless `--metrics-allow-remote`).
//!
//! ```no_run
//! use neli::endpoints::{Endpoints, PrometheusBuilder};
//!
//! # async fn run(config: neli::Config) -> Result<(), Box<dyn std::error::Error>> {
//! // The recorder first: the election registers its metrics as it is created.
//! let prometheus = PrometheusBuilder::new().install_recorder()?;
//! let endpoints = Endpoints::bind("127.0.0.1:9464".parse()?, prometheus)?;
//! let neli = neli::kafka::connect(&config).await?;
//! endpoints.serve(neli.control());
//! let election = neli.background();
//! # Ok(()) }
//! ```

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

pub use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::Control;

/// The running server; dropping it stops it.
pub struct Endpoints {
    addr: SocketAddr,
    server: Arc<tiny_http::Server>,
    election: Arc<OnceLock<Control>>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoints {
    /// Listens on `addr` (port 0: a free port, see
    /// [`Endpoints::local_addr`]) and serves on a thread of its own.
    /// `/healthz` and `/leader` answer 503 until [`Endpoints::serve`] names
    /// the election.
    pub fn bind(addr: SocketAddr, prometheus: PrometheusHandle) -> io::Result<Endpoints> {
        let server = tiny_http::Server::http(addr).map_err(|e| match e.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(e) => io::Error::other(e),
        })?;
        let server = Arc::new(server);
        let addr = server.server_addr().to_ip().unwrap_or(addr);
        let election = Arc::new(OnceLock::new());
        let thread = {
            let (server, election) = (server.clone(), election.clone());
            std::thread::Builder::new().name("neli-endpoints".into()).spawn(move || {
                for request in server.incoming_requests() {
                    let (code, body, content_type) = answer(request.url(), election.get(), &prometheus);
                    let header = tiny_http::Header::from_bytes("Content-Type", content_type).expect("a valid header");
                    let response = tiny_http::Response::from_string(body).with_status_code(code).with_header(header);
                    if let Err(e) = request.respond(response) {
                        tracing::debug!(error = %e, "endpoints: could not answer a request");
                    }
                }
            })?
        };
        Ok(Endpoints { addr, server, election, thread: Some(thread) })
    }

    /// The address it listens on (with the port chosen for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers `/healthz` and `/leader` for this election from now on
    /// (the first call counts; later ones change nothing).
    pub fn serve(&self, control: Control) {
        let _ = self.election.set(control);
    }
}

impl Drop for Endpoints {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

const TEXT: &str = "text/plain; charset=utf-8";
/// Prometheus's text exposition format.
const PROMETHEUS: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Status code, body and content type for a request of `url`.
fn answer(url: &str, election: Option<&Control>, prometheus: &PrometheusHandle) -> (u16, String, &'static str) {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    match path {
        "/metrics" => {
            if let Some(control) = election {
                control.refresh_metrics();
            }
            prometheus.run_upkeep();
            (200, prometheus.render(), PROMETHEUS)
        }
        "/healthz" => match election {
            None => (503, "not alive: connecting to the cluster\n".into(), TEXT),
            Some(control) => {
                let health = control.health();
                (if health.is_alive() { 200 } else { 503 }, format!("{health}\n"), TEXT)
            }
        },
        "/leader" => {
            let role = match query.split('&').find_map(|kv| kv.strip_prefix("role=")) {
                None => 0,
                Some(r) => match r.parse::<u32>() {
                    Ok(r) => r,
                    Err(_) => return (400, format!("role '{r}' is not a whole number\n"), TEXT),
                },
            };
            match election {
                None => (503, format!("not leader of role {role}: connecting to the cluster\n"), TEXT),
                Some(control) => match control.lease(role) {
                    Some(lease) => {
                        let epoch = lease.log_epoch;
                        (200, format!("leader of role {role}: token {} log_epoch {epoch}\n", lease.token), TEXT)
                    }
                    None => (503, format!("not leader of role {role}\n"), TEXT),
                },
            }
        }
        _ => (404, "not found: /metrics, /healthz or /leader\n".into(), TEXT),
    }
}
