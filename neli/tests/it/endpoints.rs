//! `neli::endpoints` (neli/KAFKA.md, "Metrics and health"): `/healthz`,
//! `/leader` and `/metrics` for one election and for several of one
//! process, over real HTTP on 127.0.0.1. The elections run on the fake
//! broker with manual clocks that stand still unless a test moves them: a
//! clock moved past the liveness bound is an election loop that stopped
//! pulsing, which the server, on its own thread, still answers for.

use std::time::Duration;

use metrics::{Key, Metadata, Recorder};
use neli::endpoints::{Endpoints, MAX_HEADER_BYTES, PrometheusBuilder};
use neli::testing::{FakeBroker, FakeCluster};
use neli::{Config, Control, ManualClock, Neli};

use crate::http_raw::{Answer, bounded, call, exchange, get, request};

const T: Duration = Duration::from_millis(1000);
const P: Duration = Duration::from_millis(50);

/// One election on a fake broker of its own, leading role 0, whose loop
/// pulses only when the test says: its clock stands still otherwise.
pub struct Election {
    neli: Neli<FakeBroker<ManualClock>, ManualClock>,
    clock: ManualClock,
    runtime: tokio::runtime::Runtime,
    _cluster: FakeCluster,
}

impl Election {
    /// An election of `group` with one role, led by its lone member.
    pub fn leading(group: &str) -> Election {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let cluster = FakeCluster::new(1);
        let clock = ManualClock::default();
        let config = Config::builder().group(group).name("a").heartbeat_timeout(T).build().expect("valid config");
        let neli = runtime.block_on(async {
            let mut neli = Neli::new(&config, cluster.broker("a", clock.clone()), clock.clone()).await?;
            let _ = neli.pulse(P).await?; // assigned, heartbeat written
            let _ = neli.pulse(P).await?; // read back: leads
            Ok::<_, neli::Error>(neli)
        });
        let neli = neli.expect("the election starts");
        assert!(neli.is_leader(), "a lone member leads");
        Election { neli, clock, runtime, _cluster: cluster }
    }

    pub fn control(&self) -> Control {
        self.neli.control()
    }

    /// Moves its clock past the liveness bound without a pulse: its loop
    /// is stuck (and its lease, shorter than the bound, has ended).
    pub fn stall(&self) {
        let health = self.control().health();
        self.clock.advance(health.bound + Duration::from_millis(1));
        assert!(!self.control().health().is_alive() && !self.neli.is_leader());
    }

    /// One pulse at the clock's time: alive again.
    pub fn pulse(&mut self) {
        let _ = self.runtime.block_on(self.neli.pulse(P)).expect("pulse");
    }
}

/// A server on a free loopback port with a recorder of its own (not the
/// process's: tests run side by side).
pub fn endpoints() -> Endpoints {
    let prometheus = PrometheusBuilder::new().build_recorder().handle();
    Endpoints::bind("127.0.0.1:0".parse().expect("an address"), prometheus).expect("binds a free loopback port")
}

fn token_line(e: &Election) -> String {
    let lease = e.control().lease(0).expect("leads role 0");
    format!("leader of role 0: token {} log_epoch {}\n", lease.token, lease.log_epoch)
}

fn assert_answer(answer: &Answer, status: u16, body: &str) {
    assert_eq!((answer.status, answer.body.as_str()), (status, body), "{answer:?}");
}

#[test]
fn before_any_election_health_and_leader_say_connecting() {
    let server = endpoints();
    let addr = server.local_addr();
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    assert_answer(&get(addr, "/healthz"), 503, "not alive: connecting to the cluster\n");
    assert_answer(&get(addr, "/leader"), 503, "not leader of role 0: connecting to the cluster\n");
    assert_answer(&get(addr, "/leader?group=any&role=2"), 503, "not leader of role 2: connecting to the cluster\n");
    assert_answer(&get(addr, "/leader?role=x"), 400, "role 'x' is not a whole number\n");
    assert_eq!(get(addr, "/metrics").status, 200);
}

#[test]
fn one_election_is_served_under_its_group_and_group_may_be_left_out() {
    let orders = Election::leading("orders");
    let server = endpoints();
    server.serve(orders.control());
    let addr = server.local_addr();
    let health = get(addr, "/healthz");
    assert_eq!(health.status, 200, "{health:?}");
    assert!(health.body.starts_with("orders: alive: last pulse 0ms ago (bound"), "{health:?}");
    assert_eq!(health.body.lines().count(), 1, "{health:?}");
    assert_eq!(health.header("content-type"), Some("text/plain; charset=utf-8"));
    for path in ["/leader", "/leader?role=0", "/leader?group=orders", "/leader?role=0&group=orders"] {
        assert_answer(&get(addr, path), 200, &token_line(&orders));
    }
    assert_answer(&get(addr, "/leader?role=1"), 503, "not leader of role 1\n");
    assert_answer(&get(addr, "/leader?role=x"), 400, "role 'x' is not a whole number\n");
    assert_answer(&get(addr, "/leader?role=-1"), 400, "role '-1' is not a whole number\n");
    assert_answer(
        &get(addr, "/leader?group=billing"),
        404,
        "no election of group 'billing' is served here; served: orders\n",
    );
    assert_answer(&get(addr, "/nothing-here"), 404, "not found: /metrics, /healthz or /leader\n");
    let metrics = get(addr, "/metrics");
    assert_eq!(metrics.status, 200, "{metrics:?}");
    assert_eq!(metrics.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
}

#[test]
fn several_elections_answer_each_and_healthz_is_their_aggregate() {
    let (orders, billing) = (Election::leading("orders"), Election::leading("billing"));
    let mut billing_too = Election::leading("billing");
    let server = endpoints();
    server.serve(orders.control());
    server.serve(billing.control());
    server.serve_group("billing-2", billing_too.control());
    let addr = server.local_addr();
    let health = get(addr, "/healthz");
    assert_eq!(health.status, 200, "{health:?}");
    let names: Vec<&str> = health.body.lines().filter_map(|l| l.split_once(": alive: ")).map(|(n, _)| n).collect();
    assert_eq!(names, ["billing", "billing-2", "orders"], "one alive line per election, in name order: {health:?}");
    assert_answer(&get(addr, "/leader?group=orders"), 200, &token_line(&orders));
    assert_answer(&get(addr, "/leader?group=billing-2"), 200, &token_line(&billing_too));
    let several = "several elections are served; name one with ?group=NAME: billing, billing-2, orders\n";
    assert_answer(&get(addr, "/leader"), 400, several);
    assert_answer(&get(addr, "/leader?role=0"), 400, several);
    let unknown = "no election of group 'nope' is served here; served: billing, billing-2, orders\n";
    assert_answer(&get(addr, "/leader?group=nope"), 404, unknown);
    assert_answer(&get(addr, "/leader?group=orders&role=x"), 400, "role 'x' is not a whole number\n");

    // One loop stops pulsing: /healthz turns 503 and says which; the
    // others still answer for themselves.
    billing_too.stall();
    let health = get(addr, "/healthz");
    assert_eq!(health.status, 503, "{health:?}");
    let lines: Vec<&str> = health.body.lines().collect();
    assert_eq!(lines.len(), 3, "{health:?}");
    assert!(lines[0].starts_with("billing: alive: "), "{health:?}");
    assert!(lines[1].starts_with("billing-2: not alive: last pulse 1101ms ago, over the bound 1100ms"), "{health:?}");
    assert!(lines[2].starts_with("orders: alive: "), "{health:?}");
    assert_answer(&get(addr, "/leader?group=billing-2"), 503, "not leader of role 0\n");
    assert_answer(&get(addr, "/leader?group=billing"), 200, &token_line(&billing));

    // It pulses again: alive again.
    billing_too.pulse();
    assert_eq!(get(addr, "/healthz").status, 200);

    // Withdrawn: no longer named, no longer counted.
    billing_too.stall();
    assert!(server.withdraw("billing-2"));
    assert!(!server.withdraw("billing-2"), "withdrawn already");
    let health = get(addr, "/healthz");
    assert_eq!((health.status, health.body.lines().count()), (200, 2), "{health:?}");
    assert_answer(
        &get(addr, "/leader?group=billing-2"),
        404,
        "no election of group 'billing-2' is served here; served: billing, orders\n",
    );
}

#[test]
fn serving_a_group_again_replaces_the_election_served_under_it() {
    let (old, new) = (Election::leading("orders"), Election::leading("orders"));
    let server = endpoints();
    server.serve(old.control());
    old.stall();
    assert_eq!(get(server.local_addr(), "/healthz").status, 503);
    server.serve(new.control());
    let health = get(server.local_addr(), "/healthz");
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(health.body.lines().count(), 1, "{health:?}");
    assert_answer(&get(server.local_addr(), "/leader"), 200, &token_line(&new));
}

#[test]
fn names_are_percent_decoded_and_bad_escapes_refused() {
    // Group ids are plain ASCII, but an application's own names need not be.
    let (spaced, plain) = (Election::leading("orders"), Election::leading("plain"));
    let server = endpoints();
    server.serve_group("a b/c", spaced.control());
    server.serve(plain.control());
    let addr = server.local_addr();
    assert_answer(&get(addr, "/leader?group=a%20b%2Fc"), 200, &token_line(&spaced));
    assert_answer(&get(addr, "/leader?group=%zz"), 400, "group '%zz' is not percent-encoded UTF-8\n");
    assert_answer(&get(addr, "/leader?role=%FF"), 400, "role '%FF' is not percent-encoded UTF-8\n");
    assert_answer(&get(addr, "/leader?group=pla%69n"), 200, &token_line(&plain));
}

#[test]
fn only_get_and_head_are_served_and_head_has_no_body() {
    let orders = Election::leading("orders");
    let server = endpoints();
    server.serve(orders.control());
    let addr = server.local_addr();
    for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH", "BREW"] {
        let answer = call(addr, method, "/healthz");
        assert_eq!((answer.status, answer.body.as_str()), (405, "only GET and HEAD are served\n"), "{method}");
        assert_eq!(answer.header("allow"), Some("GET, HEAD"), "{method}: {answer:?}");
    }
    let seen = exchange(addr, &request("HEAD", "/healthz", true), bounded());
    let text = String::from_utf8_lossy(&seen.bytes);
    assert!(seen.closed, "HEAD: still open after {:?}: {text:?}", seen.after);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n") && text.ends_with("\r\n\r\n"), "a head and no body: {text:?}");
}

#[test]
fn metrics_longer_than_the_head_limit_are_served_whole() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    // Enough series that the text is several times the head limit, which
    // is also hyper's buffer limit: it must not cap what is written.
    const SERIES: usize = MAX_HEADER_BYTES / 10;
    let name = "neli_test_a_counter_with_a_long_name_for_the_body";
    for i in 0..SERIES {
        let key = Key::from_parts(name, vec![metrics::Label::new("i", i.to_string())]);
        recorder.register_counter(&key, &Metadata::new(module_path!(), metrics::Level::INFO, None)).increment(1);
    }
    let rendered = handle.render();
    assert!(rendered.len() > 4 * MAX_HEADER_BYTES, "{} bytes", rendered.len());
    let server = Endpoints::bind("127.0.0.1:0".parse().expect("an address"), handle).expect("binds");
    let metrics = get(server.local_addr(), "/metrics");
    assert_eq!(metrics.status, 200);
    assert_eq!(metrics.body.len(), rendered.len(), "the whole text");
    assert_eq!(metrics.body.lines().filter(|l| l.starts_with(name)).count(), SERIES);
}

#[test]
fn a_client_that_half_closes_after_its_request_still_gets_the_answer() {
    use std::io::Write;
    let orders = Election::leading("orders");
    let server = endpoints();
    server.serve(orders.control());
    let start = std::time::Instant::now();
    let mut stream = crate::http_raw::connect(server.local_addr(), bounded());
    stream.write_all(&request("GET", "/leader", false)).expect("request");
    // What `printf 'GET …' | nc -N` does: no more to send, waiting for the answer.
    stream.shutdown(std::net::Shutdown::Write).expect("half close");
    let seen = crate::http_raw::read_until_closed(&mut stream, start, bounded());
    assert!(seen.closed, "still open after {:?}: {seen:?}", seen.after);
    let answers = seen.answers().expect("whole answers");
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_answer(&answers[0], 200, &token_line(&orders));
}
