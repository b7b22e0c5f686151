//! `neli::endpoints` against bad clients, on 127.0.0.1: malformed requests
//! (framing that could smuggle a second request, header injection,
//! garbage request lines, oversized heads) get one 400 or 431 and a closed
//! connection, never an answer to what was smuggled; slow, stalled and
//! idle clients are cut off by `HEADER_READ_TIMEOUT` and delay no other
//! client meanwhile; past `MAX_CONNECTIONS` a client waits for a slot, not
//! forever; a connection ends after `MAX_CONNECTION_AGE`; dropping the
//! server closes everything and frees the port. Every wait is derived from
//! the module's constants and says what it waited for when it fails.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use neli::endpoints::{HEADER_READ_TIMEOUT, MAX_CONNECTION_AGE, MAX_CONNECTIONS, MAX_HEADER_BYTES, MAX_HEADERS};

use crate::endpoints::{Election, endpoints};
use crate::http_raw::{Answer, bounded, connect, exchange, get, read_answer, read_until_closed, request};

/// A smuggled request's target in the cases below: were it ever
/// answered, its 404 would show.
const SMUGGLED: &str = "GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// A request that must be answered `status` (with `body`, if given) and
/// then closed.
struct Case {
    what: &'static str,
    bytes: Vec<u8>,
    status: u16,
    body: Option<&'static str>,
}

fn case(what: &'static str, bytes: impl Into<Vec<u8>>, status: u16, body: Option<&'static str>) -> Case {
    Case { what, bytes: bytes.into(), status, body }
}

const REFUSED_BODY: Option<&str> = Some("a request body is not accepted\n");

/// Framing: a body in any form is refused before a byte of it is read;
/// framing hyper cannot trust is a 400 from hyper itself.
fn framing_cases() -> Vec<Case> {
    let head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    let chunked_smuggle = format!("{head}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{SMUGGLED}");
    let cl_smuggle = format!("{head}Content-Length: {}\r\n\r\n{SMUGGLED}{SMUGGLED}", SMUGGLED.len());
    vec![
        case("Transfer-Encoding: chunked and a Content-Length", chunked_smuggle, 400, REFUSED_BODY),
        case("a Content-Length body holding a request", cl_smuggle, 400, REFUSED_BODY),
        case(
            "an invalid chunked body",
            format!("{head}Transfer-Encoding: chunked\r\n\r\nzz\r\nnot hex\r\n{SMUGGLED}"),
            400,
            REFUSED_BODY,
        ),
        case(
            "Transfer-Encoding: gzip, chunked",
            format!("{head}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n{SMUGGLED}"),
            400,
            REFUSED_BODY,
        ),
        case(
            "Transfer-Encoding: chunked, gzip",
            format!("{head}Transfer-Encoding: chunked, gzip\r\n\r\n{SMUGGLED}"),
            400,
            None,
        ),
        case("Transfer-Encoding: gzip", format!("{head}Transfer-Encoding: gzip\r\n\r\n{SMUGGLED}"), 400, None),
        case("Transfer-Encoding: xchunked", format!("{head}Transfer-Encoding: xchunked\r\n\r\n{SMUGGLED}"), 400, None),
        case(
            "a space before the colon of Transfer-Encoding",
            format!("{head}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n{SMUGGLED}"),
            400,
            None,
        ),
        case(
            "Transfer-Encoding in HTTP/1.0",
            format!("GET /healthz HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{SMUGGLED}"),
            400,
            None,
        ),
        case(
            "two different Content-Lengths",
            format!("{head}Content-Length: 0\r\nContent-Length: 44\r\n\r\n{SMUGGLED}"),
            400,
            None,
        ),
        case("a Content-Length that is no number", format!("{head}Content-Length: 4x\r\n\r\n{SMUGGLED}"), 400, None),
        case("a negative Content-Length", format!("{head}Content-Length: -1\r\n\r\n{SMUGGLED}"), 400, None),
    ]
}

/// Header injection and garbage: hyper's parser refuses them (400).
fn injection_cases() -> Vec<Case> {
    let head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    vec![
        case("a CR inside a header value", format!("{head}X-A: a\rInjected: b\r\n\r\n{SMUGGLED}"), 400, None),
        case("a NUL inside a header value", format!("{head}X-A: a\0b\r\n\r\n"), 400, None),
        case("an obs-fold continuation line", format!("{head}X-A: a\r\n Injected: b\r\n\r\n"), 400, None),
        case("a space inside a header name", format!("{head}X A: b\r\n\r\n"), 400, None),
        case("a header line without a colon", format!("{head}Injected\r\n\r\n"), 400, None),
        case("a request line with a space in the target", "GET /healthz junk HTTP/1.1\r\nHost: x\r\n\r\n", 400, None),
        case("a CR inside the target", "GET /hea\rlthz HTTP/1.1\r\nHost: x\r\n\r\n", 400, None),
        case("an unknown HTTP version", "GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n", 400, None),
        case("a request line of garbage", b"\x16\x03\x01\x02\x00garbage\r\n\r\n".to_vec(), 400, None),
        case("a method of control bytes", b"G\x01T /healthz HTTP/1.1\r\n\r\n".to_vec(), 400, None),
    ]
}

/// Oversized heads: 431, as soon as the limit is passed (no waiting for
/// the end of a head that never ends).
fn oversized_cases() -> Vec<Case> {
    let big = "a".repeat(MAX_HEADER_BYTES + 1);
    let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: {i}\r\n")).collect();
    vec![
        case("a header value past the limit", format!("GET /healthz HTTP/1.1\r\nX-Big: {big}\r\n\r\n"), 431, None),
        case("a head past the limit that never ends", format!("GET /healthz HTTP/1.1\r\nX-Big: {big}"), 431, None),
        case("a target past the limit", format!("GET /{big} HTTP/1.1\r\n\r\n"), 431, None),
        case("one header more than allowed", format!("GET /healthz HTTP/1.1\r\n{many}\r\n"), 431, None),
    ]
}

/// `case` on a connection of its own: one answer of the expected status,
/// well before the header timeout (it is refused for what it is, not
/// timed out), and the connection closed with it.
fn assert_refused(addr: SocketAddr, case: &Case) {
    let seen = exchange(addr, &case.bytes, bounded());
    let what = case.what;
    let text = String::from_utf8_lossy(&seen.bytes);
    assert!(seen.closed, "{what}: the connection was still open after {:?}; got {text:?}", seen.after);
    assert!(seen.after < HEADER_READ_TIMEOUT, "{what}: closed only after {:?}, by the header timeout", seen.after);
    let answers = seen.answers().unwrap_or_else(|e| panic!("{what}: {e}"));
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [case.status], "{what}: exactly one answer, nothing smuggled answered: {answers:?}");
    if let Some(body) = case.body {
        assert_eq!(answers[0].body, body, "{what}");
    }
}

#[test]
fn malformed_requests_get_one_400_or_431_and_a_closed_connection() {
    let orders = Election::leading("orders");
    let server = endpoints();
    server.serve(orders.control());
    let addr = server.local_addr();
    for case in framing_cases().iter().chain(&injection_cases()).chain(&oversized_cases()) {
        assert_refused(addr, case);
        // Nothing of it lingers: the next client is served as ever.
        let health = get(addr, "/healthz");
        assert_eq!(health.status, 200, "after {}: {health:?}", case.what);
    }
}

/// Sends `head` one byte every `HEADER_READ_TIMEOUT / 10` (a read timing
/// out is the pause) until the server closes the connection, running
/// `during` once the first byte is out; the bytes the server answered and
/// when it closed, from `start`.
fn trickle(mut slow: TcpStream, head: &[u8], start: Instant, during: impl FnOnce()) -> (Vec<u8>, Duration) {
    let gap = HEADER_READ_TIMEOUT / 10;
    let mut during = Some(during);
    for (i, byte) in head.iter().enumerate() {
        if i == 1
            && let Some(during) = during.take()
        {
            during();
        }
        let _ = slow.write_all(&[*byte]);
        let seen = read_until_closed(&mut slow, Instant::now(), gap);
        if seen.closed || !seen.bytes.is_empty() {
            let at = start.elapsed();
            let rest = read_until_closed(&mut slow, Instant::now(), bounded());
            return ([seen.bytes, rest.bytes].concat(), at);
        }
        assert!(
            start.elapsed() < bounded(),
            "a head sent a byte every {gap:?} is still read after {:?}: the header timeout is {HEADER_READ_TIMEOUT:?}",
            start.elapsed()
        );
    }
    panic!("the whole head went out, one byte every {gap:?}, and the connection is still open")
}

#[test]
fn a_slow_head_is_cut_off_by_the_header_timeout_and_delays_no_other_client() {
    let orders = Election::leading("orders");
    let server = endpoints();
    server.serve(orders.control());
    let addr = server.local_addr();
    // A valid head, but one that would take longer than the bound to send.
    let head = request("GET", "/healthz", true);
    assert!(HEADER_READ_TIMEOUT / 10 * head.len() as u32 > bounded(), "the head outlasts the bound");
    let start = Instant::now();
    let slow = connect(addr, bounded());
    let mut beside = None;
    let (answered, closed_after) = trickle(slow, &head, start, || {
        beside = Some((get(addr, "/healthz"), start.elapsed()));
    });
    assert!(answered.is_empty(), "the slow client got no answer: {:?}", String::from_utf8_lossy(&answered));
    assert!(closed_after >= HEADER_READ_TIMEOUT, "closed by the header timeout, not before: {closed_after:?}");
    let (health, at): (Answer, Duration) = beside.expect("a client was served beside the slow one");
    assert_eq!(health.status, 200, "{health:?}");
    // Served one after the other, the answer would come only once the
    // slow client's header timeout had passed.
    assert!(
        at < HEADER_READ_TIMEOUT / 2,
        "/healthz answered {at:?} after the slow client connected (header timeout {HEADER_READ_TIMEOUT:?}): \
         served after it, not beside it"
    );
}

#[test]
fn an_idle_connection_is_closed_by_the_header_timeout_before_and_after_an_answer() {
    let server = endpoints();
    let addr = server.local_addr();
    // Connected, nothing sent.
    let start = Instant::now();
    let mut idle = connect(addr, bounded());
    let seen = read_until_closed(&mut idle, start, bounded());
    assert!(seen.closed, "a silent connection still open after {:?}", seen.after);
    assert!(seen.after >= HEADER_READ_TIMEOUT && seen.bytes.is_empty(), "{seen:?}");
    // Kept alive after an answer, then silent: the next head has as long.
    let mut kept = connect(addr, bounded());
    kept.write_all(&request("GET", "/healthz", false)).expect("request");
    let answer = read_answer(&mut kept, bounded()).expect("an answer").expect("not closed");
    assert_eq!(answer.status, 503, "{answer:?}");
    let answered = Instant::now();
    let seen = read_until_closed(&mut kept, answered, bounded());
    assert!(seen.closed, "a kept-alive connection still open {:?} after its answer", seen.after);
    assert!(seen.bytes.is_empty(), "{seen:?}");
}

#[test]
fn past_max_connections_a_client_waits_for_a_slot_and_gets_one() {
    let server = endpoints();
    let addr = server.local_addr();
    // Every slot held by a kept-alive connection, answered once (so
    // accepted), then idle: the first frees its slot no earlier than the
    // header timeout after it sent its request.
    let first_sent = Instant::now();
    let holders: Vec<TcpStream> = (0..MAX_CONNECTIONS)
        .map(|i| {
            let mut holder = connect(addr, bounded());
            holder.write_all(&request("GET", "/healthz", false)).expect("request");
            let answer = read_answer(&mut holder, bounded()).unwrap_or_else(|e| panic!("holder {i}: {e}"));
            assert!(answer.is_some(), "holder {i} was answered");
            holder
        })
        .collect();
    let asked = Instant::now();
    let waited = get(addr, "/healthz");
    assert_eq!(waited.status, 503, "{waited:?}");
    let (since_asked, since_first) = (asked.elapsed(), first_sent.elapsed());
    assert!(
        since_first >= HEADER_READ_TIMEOUT,
        "answered {since_first:?} after the first holder: the cap did not hold"
    );
    assert!(since_asked < bounded(), "waited {since_asked:?} for a slot");
    drop(holders);
}

#[test]
fn a_connection_ends_at_its_max_age_however_busy() {
    let server = endpoints();
    let addr = server.local_addr();
    let start = Instant::now();
    let mut busy = connect(addr, bounded());
    let gap = HEADER_READ_TIMEOUT / 2;
    let mut answered = 0u32;
    loop {
        let _ = busy.write_all(&request("GET", "/healthz", false));
        match read_answer(&mut busy, bounded()) {
            Ok(Some(answer)) => assert_eq!(answer.status, 503, "{answer:?}"),
            Ok(None) => break,
            Err(e) => panic!("answer {answered}: {e}"),
        }
        answered += 1;
        let age = start.elapsed();
        assert!(
            age < MAX_CONNECTION_AGE + bounded(),
            "still served after {age:?}: the max age is {MAX_CONNECTION_AGE:?}"
        );
        // A request every half header timeout keeps it from being idle.
        std::thread::sleep(gap);
    }
    let ended = start.elapsed();
    assert!(ended >= MAX_CONNECTION_AGE, "ended after {ended:?}, before its max age {MAX_CONNECTION_AGE:?}");
    assert!(answered >= MAX_CONNECTION_AGE.as_millis() as u32 / gap.as_millis() as u32 / 2, "only {answered} answers");
}

#[test]
fn dropping_the_server_closes_its_connections_and_frees_the_port() {
    let server = endpoints();
    let addr = server.local_addr();
    let mut kept = connect(addr, bounded());
    kept.write_all(&request("GET", "/healthz", false)).expect("request");
    assert!(read_answer(&mut kept, bounded()).expect("an answer").is_some());
    let mut silent = connect(addr, bounded());
    // Dropped on a thread of its own, so a drop that never returns fails
    // the test rather than hanging it.
    let (dropped, done) = std::sync::mpsc::channel();
    let dropping = Instant::now();
    std::thread::spawn(move || {
        drop(server);
        let _ = dropped.send(dropping.elapsed());
    });
    let took =
        done.recv_timeout(bounded()).unwrap_or_else(|_| panic!("the drop had not returned after {:?}", bounded()));
    assert!(took < HEADER_READ_TIMEOUT, "the drop took {took:?}: it waited for a client");
    for (what, stream) in [("a kept-alive connection", &mut kept), ("a silent connection", &mut silent)] {
        let seen = read_until_closed(stream, Instant::now(), HEADER_READ_TIMEOUT / 2);
        assert!(seen.closed && seen.bytes.is_empty(), "{what} after the drop: {seen:?}");
    }
    let refused = TcpStream::connect(addr);
    assert!(
        matches!(&refused, Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused),
        "a connection to {addr} after the drop: {refused:?}"
    );
    let again = std::net::TcpListener::bind(addr);
    assert!(again.is_ok(), "{addr} is free again: {again:?}");
}

#[test]
fn kafka_md_states_the_limits_as_they_are() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/KAFKA.md")).expect("neli/KAFKA.md");
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let stated = [
        format!("`HEADER_READ_TIMEOUT` ({} s)", HEADER_READ_TIMEOUT.as_secs()),
        format!("`MAX_CONNECTIONS` ({MAX_CONNECTIONS})"),
        format!("`MAX_HEADER_BYTES` ({} KiB)", MAX_HEADER_BYTES / 1024),
        format!("`MAX_HEADERS` ({MAX_HEADERS})"),
        format!("`MAX_CONNECTION_AGE` ({} s)", MAX_CONNECTION_AGE.as_secs()),
    ];
    for limit in stated {
        assert!(doc.contains(&limit), "neli/KAFKA.md (\"Metrics and health\") should say {limit}");
    }
}
