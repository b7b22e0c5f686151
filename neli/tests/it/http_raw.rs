//! HTTP/1.1 by hand over `std::net::TcpStream`, for the endpoints' tests:
//! malformed requests need bytes no client library writes, and every
//! read has a deadline, so a server that hangs fails the test with what
//! it waited for instead of hanging it.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use neli::endpoints::HEADER_READ_TIMEOUT;

/// The longest a test waits for something the server bounds by
/// [`HEADER_READ_TIMEOUT`] (a close, an answer after a slot frees): twice
/// it, the slack for a loaded machine.
pub fn bounded() -> Duration {
    HEADER_READ_TIMEOUT * 2
}

/// One parsed answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    /// The head, status line and headers, without the blank line.
    pub head: String,
    pub body: String,
}

impl Answer {
    /// The value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// What came back on a connection before it closed or the deadline.
#[derive(Debug)]
pub struct Seen {
    pub bytes: Vec<u8>,
    /// The server closed (or reset) the connection; false: still open at
    /// the deadline.
    pub closed: bool,
    /// From the start of the exchange to the close (or the deadline).
    pub after: Duration,
}

impl Seen {
    /// Every complete answer in the bytes, in order; `Err` if bytes are
    /// left that are not one.
    pub fn answers(&self) -> Result<Vec<Answer>, String> {
        let mut rest = &self.bytes[..];
        let mut answers = Vec::new();
        while !rest.is_empty() {
            let (answer, used) = parse(rest).ok_or_else(|| {
                format!("{} bytes that are no whole answer: {:?}", rest.len(), String::from_utf8_lossy(rest))
            })?;
            answers.push(answer);
            rest = &rest[used..];
        }
        Ok(answers)
    }
}

/// One answer from the start of `bytes` and the bytes it used; `None` if
/// they do not hold a whole one.
pub fn parse(bytes: &[u8]) -> Option<(Answer, usize)> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let status = head.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()?;
    let mut answer = Answer { status, head, body: String::new() };
    let length: usize = answer.header("content-length").map_or(Some(0), |l| l.parse().ok())?;
    let body = bytes.get(end + 4..end + 4 + length)?;
    answer.body = String::from_utf8_lossy(body).into_owned();
    Some((answer, end + 4 + length))
}

/// A connection to `addr` whose reads and writes give up after `timeout`.
pub fn connect(addr: SocketAddr, timeout: Duration) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    stream.set_read_timeout(Some(timeout)).expect("read timeout");
    stream.set_write_timeout(Some(timeout)).expect("write timeout");
    stream
}

/// Sends `request` on a new connection (a write the server cut short by
/// closing is not an error: what it answered is still read), then reads
/// until the server closes the connection or `within` passes.
pub fn exchange(addr: SocketAddr, request: &[u8], within: Duration) -> Seen {
    let start = Instant::now();
    let mut stream = connect(addr, within);
    let _ = stream.write_all(request);
    read_until_closed(&mut stream, start, within)
}

/// Reads `stream` until the server closes it or `within` of `start` passes.
pub fn read_until_closed(stream: &mut TcpStream, start: Instant, within: Duration) -> Seen {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let left = within.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Seen { bytes, closed: false, after: start.elapsed() };
        }
        stream.set_read_timeout(Some(left)).expect("read timeout");
        match stream.read(&mut chunk) {
            Ok(0) => return Seen { bytes, closed: true, after: start.elapsed() },
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => return Seen { bytes, closed: true, after: start.elapsed() },
        }
    }
}

/// Reads one whole answer from a kept-alive connection; `Ok(None)` if the
/// server closed it before sending a byte.
pub fn read_answer(stream: &mut TcpStream, within: Duration) -> Result<Option<Answer>, String> {
    let start = Instant::now();
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some((answer, used)) = parse(&bytes) {
            return match bytes.len() - used {
                0 => Ok(Some(answer)),
                extra => Err(format!("{extra} bytes after the answer {answer:?}")),
            };
        }
        let left = within.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(format!("no whole answer within {within:?}; got {:?}", String::from_utf8_lossy(&bytes)));
        }
        stream.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
        match stream.read(&mut chunk) {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Ok(0) | Err(_) if bytes.is_empty() => return Ok(None),
            Ok(0) => return Err(format!("closed within an answer: {:?}", String::from_utf8_lossy(&bytes))),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(format!("{e} within an answer: {:?}", String::from_utf8_lossy(&bytes))),
        }
    }
}

/// A well-formed request for `path`, `method` and closing or keeping the
/// connection.
pub fn request(method: &str, path: &str, close: bool) -> Vec<u8> {
    let connection = if close { "Connection: close\r\n" } else { "" };
    format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{connection}\r\n").into_bytes()
}

/// `GET path` on a connection of its own: the one answer, within
/// [`bounded`]; panics naming what it waited for otherwise.
pub fn get(addr: SocketAddr, path: &str) -> Answer {
    call(addr, "GET", path)
}

/// `method path` on a connection of its own: the one answer (see [`get`]).
pub fn call(addr: SocketAddr, method: &str, path: &str) -> Answer {
    let seen = exchange(addr, &request(method, path, true), bounded());
    assert!(seen.closed, "{method} {path}: the connection was still open after {:?}: {seen:?}", seen.after);
    let answers = seen.answers().unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    match <[Answer; 1]>::try_from(answers) {
        Ok([answer]) => answer,
        Err(answers) => panic!("{method} {path}: one answer expected, got {answers:?}"),
    }
}
