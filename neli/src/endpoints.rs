//! A small HTTP server for the elections of one process (`neli exec
//! --metrics-addr`):
//!
//! - `/metrics`: every metric of the process in Prometheus text format,
//!   rendered by `metrics-exporter-prometheus` (its [`PrometheusHandle`]);
//!   the time-dependent gauges of every served election are refreshed
//!   first ([`Control::refresh_metrics`]).
//! - `/healthz`: 200 while every served election's loop is alive
//!   ([`Control::health`]), 503 otherwise (also before any election is
//!   served, while connecting); the body has one line per election,
//!   `NAME: ` and [`crate::Health`]'s line, in name order.
//! - `/leader`: 200 while this member holds a live lease of role 0
//!   (`?role=N` for another role) in the election named by `?group=NAME`,
//!   503 otherwise; the body names the role, the token and the log epoch.
//!   With one election served `group` may be left out; with several it
//!   may not (400 naming them). An unknown group is a 404 naming the
//!   served ones, a `role` that is not a whole number a 400.
//!
//! [`Endpoints::serve`] serves an election under its group id
//! ([`Control::group_id`]); [`Endpoints::serve_group`] under a name of
//! the caller's choosing (two elections of one group in one process);
//! [`Endpoints::withdraw`] stops serving one.
//!
//! It runs on a thread of its own with its own current-thread runtime, not
//! on the election's, so a stuck election loop gets a 503 rather than no
//! answer, and every answer about a lease is computed from the published
//! lease at the moment of the request ([`crate::Status::lease`]), not from
//! the loop's last pulse. Connections are served concurrently, so a slow
//! client delays no other, within these limits:
//!
//! - at most [`MAX_CONNECTIONS`] connections at once; more wait in the
//!   listen backlog until one ends;
//! - a request's head (request line and headers) must arrive within
//!   [`HEADER_READ_TIMEOUT`] of the connection's start or of the previous
//!   answer, else the connection is closed (so also an idle keep-alive
//!   connection);
//! - a head is at most [`MAX_HEADER_BYTES`] bytes and [`MAX_HEADERS`]
//!   headers (431 past either); a malformed one (bad request line, a CR or
//!   an obs-fold in a header, a `Transfer-Encoding` whose last coding is
//!   not chunked, conflicting `Content-Length`s) is a 400;
//! - a request body is never read: a request that has one (a non-zero
//!   `Content-Length`, or chunked) is answered 400 and its connection
//!   closed, so no bytes are left whose framing anything could read
//!   another way; methods other than GET and HEAD are answered 405;
//! - a connection lives at most [`MAX_CONNECTION_AGE`], then it is shut
//!   down (the answer in flight, if any, gets [`HEADER_READ_TIMEOUT`] more
//!   to finish), so a client that never reads its answers holds a slot no
//!   longer than that.
//!
//! It has no authentication: serve it on loopback (what `neli exec` insists
//! on unless `--metrics-allow-remote`). It listens on the address given
//! and nothing else.
//!
//! ```no_run
//! use neli::endpoints::{Endpoints, PrometheusBuilder};
//!
//! # #[cfg(feature = "kafka")]
//! # async fn run(orders: neli::Config, billing: neli::Config) -> Result<(), Box<dyn std::error::Error>> {
//! // The recorder first: each election registers its metrics as it is created.
//! let prometheus = PrometheusBuilder::new().install_recorder()?;
//! // Loopback: the endpoints have no authentication.
//! let endpoints = Endpoints::bind("127.0.0.1:9464".parse()?, prometheus)?;
//! let orders = neli::kafka::connect(&orders).await?;
//! let billing = neli::kafka::connect(&billing).await?;
//! // Each under its group id: /leader?group=orders, /leader?group=billing;
//! // /healthz is 200 while both loops are alive. (With one election,
//! // plain /leader answers for it.)
//! endpoints.serve(orders.control());
//! endpoints.serve(billing.control());
//! let (orders, billing) = (orders.background(), billing.background());
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Body as _, Bytes, Incoming};
use hyper::header::{ALLOW, CONNECTION, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

pub use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::Control;

/// How long a client has to send a request's head (request line and
/// headers), from the connection's start or from the previous answer on
/// it; then the connection is closed without an answer. A scrape or a
/// probe sends its head in one packet, so this only ever ends slow,
/// stalled or idle clients.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(3);

/// The most connections served at once. Past it, new connections wait in
/// the kernel's listen backlog (not refused) until one ends, which an idle
/// or slow one does within [`HEADER_READ_TIMEOUT`], any within
/// [`MAX_CONNECTION_AGE`] and its grace. A handful of scrapers and probes
/// need a few; the cap bounds what a flood of clients costs.
pub const MAX_CONNECTIONS: usize = 64;

/// The most bytes a request's head may have (431 past it): far more than
/// any scrape or probe sends, and what is buffered per connection.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// The most headers a request may have (431 past it).
pub const MAX_HEADERS: usize = 64;

/// The longest a connection lives: then it is shut down gracefully (an
/// answer in flight gets [`HEADER_READ_TIMEOUT`] more) and closed. Bounds
/// what a client that never reads its answers holds; a keep-alive client
/// just connects again.
pub const MAX_CONNECTION_AGE: Duration = Duration::from_secs(15);

/// The pause after a failed `accept` (out of file descriptors, say), so the
/// accept loop does not spin while it lasts.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The running server; dropping it stops it.
pub struct Endpoints {
    addr: SocketAddr,
    elections: Arc<Elections>,
    stop: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl Endpoints {
    /// Listens on `addr` (port 0: a free port, see
    /// [`Endpoints::local_addr`]) and serves on a thread of its own with a
    /// runtime of its own. `/healthz` and `/leader` answer 503 until an
    /// election is served ([`Endpoints::serve`]). Errors: the address cannot
    /// be bound (in use, not local), or the runtime or thread cannot be made.
    pub fn bind(addr: SocketAddr, prometheus: PrometheusHandle) -> io::Result<Endpoints> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
        // Registered with the server's runtime here, so an error comes back
        // to the caller rather than ending the thread.
        let listener = {
            let _runtime = runtime.enter();
            TcpListener::from_std(listener)?
        };
        let elections = Arc::new(Elections::default());
        let stop = CancellationToken::new();
        let server = Arc::new(Server { prometheus, elections: elections.clone() });
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new().name("neli-endpoints".into()).spawn(move || {
                runtime.block_on(accept(listener, server, stop));
                // Dropping the runtime drops every connection's task, so
                // every socket is closed once the thread has ended.
                drop(runtime);
            })?
        };
        Ok(Endpoints { addr, elections, stop, thread: Some(thread) })
    }

    /// The address it listens on (with the port chosen for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers `/healthz` and `/leader` for this election from now on, under
    /// its group id ([`Control::group_id`]); `/metrics` refreshes its gauges.
    /// An election served before under that name is replaced (an election
    /// restarted in its group takes over its answers).
    pub fn serve(&self, control: Control) {
        let name = control.group_id().to_owned();
        self.serve_group(name, control);
    }

    /// Like [`Endpoints::serve`], under `name` rather than the group id: for
    /// two elections of one group in one process, or a name of the
    /// application's own. `/leader?group=NAME` answers for it.
    pub fn serve_group(&self, name: impl Into<String>, control: Control) {
        self.elections.lock().insert(name.into(), control);
    }

    /// Stops answering for the election served under `name` (an election
    /// the application ended on purpose, which `/healthz` would otherwise
    /// report not alive); false if none was.
    pub fn withdraw(&self, name: &str) -> bool {
        self.elections.lock().remove(name).is_some()
    }
}

impl Drop for Endpoints {
    /// Stops accepting, closes every connection and waits for the server's
    /// thread: the port is free once this returns.
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The served elections by name, shared with the server's thread.
#[derive(Default)]
struct Elections(Mutex<BTreeMap<String, Control>>);

impl Elections {
    /// The map; a panic elsewhere while it was held left it whole (every
    /// change is one insert or remove), so a poisoned lock is used as is.
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Control>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The elections now, in name order; the lock is not held while they
    /// are asked anything.
    fn snapshot(&self) -> Vec<(String, Control)> {
        self.lock().iter().map(|(name, control)| (name.clone(), control.clone())).collect()
    }
}

/// What every connection answers from.
struct Server {
    prometheus: PrometheusHandle,
    elections: Arc<Elections>,
}

/// The HTTP/1 settings of every connection: the limits of the module's doc.
fn http1_builder() -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        // A client that shuts its write side after the request (`nc -N`,
        // `curl` through some proxies) still gets the answer: without this,
        // hyper may see the end of input before it has written the answer
        // and close the connection unanswered.
        .half_close(true)
        .max_buf_size(MAX_HEADER_BYTES)
        .max_header_size(MAX_HEADER_BYTES)
        .max_headers(MAX_HEADERS);
    builder
}

/// Accepts connections until `stop`, each served on a task of its own while
/// it holds one of [`MAX_CONNECTIONS`] slots.
async fn accept(listener: TcpListener, server: Arc<Server>, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let builder = http1_builder();
    loop {
        // A slot first: at the cap, new connections wait in the backlog.
        let slot = tokio::select! {
            () = stop.cancelled() => return,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => return, // closed: never, the semaphore is ours
            },
        };
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                tokio::spawn(connection(builder.clone(), stream, server.clone(), slot));
            }
            Err(e) => {
                tracing::debug!(error = %e, "endpoints: accept failed");
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                }
            }
        }
    }
}

/// Serves one connection for at most [`MAX_CONNECTION_AGE`] (and the grace
/// after it), holding `_slot` until it ends.
async fn connection(builder: http1::Builder, stream: TcpStream, server: Arc<Server>, _slot: OwnedSemaphorePermit) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        std::future::ready(Ok::<_, Infallible>(server.answer(&request)))
    });
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    let served = tokio::select! {
        served = conn.as_mut() => served,
        () = tokio::time::sleep(MAX_CONNECTION_AGE) => {
            conn.as_mut().graceful_shutdown();
            match tokio::time::timeout(HEADER_READ_TIMEOUT, conn).await {
                Ok(served) => served,
                Err(_) => return, // dropped: the socket closes
            }
        }
    };
    if let Err(e) = served {
        // Malformed requests and timeouts end here; hyper has answered
        // what it could (400, 431) already.
        tracing::debug!(error = %e, "endpoints: connection ended");
    }
}

const TEXT: &str = "text/plain; charset=utf-8";
/// Prometheus's text exposition format.
const PROMETHEUS: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A status, a body and its content type.
struct Answer {
    status: StatusCode,
    body: String,
    content_type: &'static str,
}

impl Answer {
    fn text(status: StatusCode, body: impl Into<String>) -> Answer {
        Answer { status, body: body.into(), content_type: TEXT }
    }

    fn into_response(self) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(Bytes::from(self.body)));
        *response.status_mut() = self.status;
        response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(self.content_type));
        response
    }
}

impl Server {
    /// The response to `request`: refusals first (a body, a method), then
    /// the route. A panic while asking an election (a lock it poisoned) is
    /// a 500, never a connection closed without an answer.
    fn answer(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        if !request.body().is_end_stream() {
            let refused = Answer::text(StatusCode::BAD_REQUEST, "a request body is not accepted\n");
            let mut response = refused.into_response();
            // Its bytes are never read: the connection ends with this answer.
            response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
        if request.method() != Method::GET && request.method() != Method::HEAD {
            let refused = Answer::text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD are served\n");
            let mut response = refused.into_response();
            response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return response;
        }
        let uri = request.uri();
        let answer = catch_unwind(AssertUnwindSafe(|| self.route(uri.path(), uri.query().unwrap_or(""))))
            .unwrap_or_else(|_| Answer::text(StatusCode::INTERNAL_SERVER_ERROR, "internal error: see the log\n"));
        answer.into_response()
    }

    fn route(&self, path: &str, query: &str) -> Answer {
        let elections = self.elections.snapshot();
        match path {
            "/metrics" => {
                for (_, control) in &elections {
                    control.refresh_metrics();
                }
                self.prometheus.run_upkeep();
                Answer { status: StatusCode::OK, body: self.prometheus.render(), content_type: PROMETHEUS }
            }
            "/healthz" => healthz(&elections),
            "/leader" => leader(&elections, query),
            _ => Answer::text(StatusCode::NOT_FOUND, "not found: /metrics, /healthz or /leader\n"),
        }
    }
}

/// 200 if every election is alive; one line per election.
fn healthz(elections: &[(String, Control)]) -> Answer {
    if elections.is_empty() {
        return Answer::text(StatusCode::SERVICE_UNAVAILABLE, "not alive: connecting to the cluster\n");
    }
    let mut alive = true;
    let mut body = String::new();
    for (name, control) in elections {
        let health = control.health();
        alive &= health.is_alive();
        let _ = writeln!(body, "{}: {health}", name.escape_debug());
    }
    let status = if alive { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    Answer::text(status, body)
}

/// `/leader?group=NAME&role=N` (both optional, within the rules of the
/// module's doc).
fn leader(elections: &[(String, Control)], query: &str) -> Answer {
    let role = match query_value(query, "role") {
        None => 0,
        Some(Err(raw)) => {
            return Answer::text(StatusCode::BAD_REQUEST, format!("role '{raw}' is not percent-encoded UTF-8\n"));
        }
        Some(Ok(r)) => match r.parse::<u32>() {
            Ok(r) => r,
            Err(_) => {
                return Answer::text(
                    StatusCode::BAD_REQUEST,
                    format!("role '{}' is not a whole number\n", r.escape_debug()),
                );
            }
        },
    };
    if elections.is_empty() {
        return Answer::text(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not leader of role {role}: connecting to the cluster\n"),
        );
    }
    let control = match query_value(query, "group") {
        Some(Err(raw)) => {
            return Answer::text(StatusCode::BAD_REQUEST, format!("group '{raw}' is not percent-encoded UTF-8\n"));
        }
        Some(Ok(group)) => match elections.iter().find(|(name, _)| *name == group) {
            Some((_, control)) => control,
            None => {
                let known = names(elections);
                let body = format!("no election of group '{}' is served here; served: {known}\n", group.escape_debug());
                return Answer::text(StatusCode::NOT_FOUND, body);
            }
        },
        None => match elections {
            [(_, control)] => control,
            _ => {
                let body = format!("several elections are served; name one with ?group=NAME: {}\n", names(elections));
                return Answer::text(StatusCode::BAD_REQUEST, body);
            }
        },
    };
    match control.lease(role) {
        Some(lease) => {
            let epoch = lease.log_epoch;
            Answer::text(StatusCode::OK, format!("leader of role {role}: token {} log_epoch {epoch}\n", lease.token))
        }
        None => Answer::text(StatusCode::SERVICE_UNAVAILABLE, format!("not leader of role {role}\n")),
    }
}

/// The served names, in order, for a message.
fn names(elections: &[(String, Control)]) -> String {
    let names: Vec<String> = elections.iter().map(|(name, _)| name.escape_debug().to_string()).collect();
    names.join(", ")
}

/// The first value of `key` in `query`, percent-decoded; `Err` with the raw
/// value (its bytes are all visible ASCII: the request line admits no
/// others) if it is not valid percent-encoding of UTF-8.
fn query_value<'q>(query: &'q str, key: &str) -> Option<Result<String, &'q str>> {
    let raw = query.split('&').find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))?;
    Some(percent_decode(raw).ok_or(raw))
}

/// `%XX` escapes decoded (a `+` stays a `+`); `None` for a broken escape or
/// bytes that are not UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(raw.len());
    let mut rest = raw.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = tail.get(..2).filter(|h| h.iter().all(u8::is_ascii_hexdigit))?;
            bytes.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_decoded_and_the_first_counts() {
        assert_eq!(query_value("role=2&group=a", "group"), Some(Ok("a".to_owned())));
        assert_eq!(query_value("group=a%20b%2Fc&group=x", "group"), Some(Ok("a b/c".to_owned())));
        assert_eq!(query_value("xgroup=a", "group"), None);
        assert_eq!(query_value("group", "group"), None);
        assert_eq!(query_value("group=", "group"), Some(Ok(String::new())));
        assert_eq!(query_value("group=a+b", "group"), Some(Ok("a+b".to_owned())));
        for bad in ["group=%", "group=%4", "group=%zz", "group=%+f", "group=%ff", "group=%C3%28"] {
            assert!(matches!(query_value(bad, "group"), Some(Err(_))), "{bad}");
        }
    }
}
