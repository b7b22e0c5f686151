//! The membership proof on a connection of its own (docs/cooperative-rebalance.md,
//! "One coordinator connection").
//!
//! librdkafka sends JoinGroup, Heartbeat and OffsetCommit to the coordinator
//! on one connection, and a broker answers one connection's requests in
//! order, so a proof sent while the member's own JoinGroup is held waits for
//! the join. Under cooperative-sticky the leader keeps partition 0 through
//! the rebalance and must keep proving its membership meanwhile; this module
//! sends that one request, an OffsetCommit carrying librdkafka's member id
//! and generation, on a plaintext connection neli opens itself.
//!
//! It speaks only what it needs of the Kafka protocol: ApiVersions v0 (to
//! pick versions), FindCoordinator v0–v2 and OffsetCommit v2–v7, all
//! non-flexible encodings. Blocking `std::net` I/O with timeouts; the caller
//! runs it on a worker thread.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

const API_OFFSET_COMMIT: i16 = 8;
const API_FIND_COORDINATOR: i16 = 10;
const API_VERSIONS: i16 = 18;

/// Kafka error codes the connection itself acts on (rdkafka's numbering,
/// which for broker errors is Kafka's).
pub(crate) mod code {
    use rdkafka::error::RDKafkaErrorCode as C;

    pub const NONE: i16 = C::NoError as i16;
    pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = C::CoordinatorLoadInProgress as i16;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = C::CoordinatorNotAvailable as i16;
    pub const NOT_COORDINATOR: i16 = C::NotCoordinator as i16;
    pub const ILLEGAL_GENERATION: i16 = C::IllegalGeneration as i16;
}

/// What went wrong on the proof connection. `Io` and `Protocol` are worth a
/// retry on a fresh connection; `Unsupported` means the broker cannot take
/// this client at all.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WireError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("malformed answer: {0}")]
    Protocol(String),
    #[error("the broker supports none of {api} versions {ours}")]
    Unsupported { api: &'static str, ours: &'static str },
    #[error("the coordinator lookup failed with Kafka error {0}")]
    Coordinator(i16),
}

/// One commit's worth of partitions: (partition, offset).
#[derive(Clone, Copy)]
pub(crate) struct Commit<'a> {
    pub group: &'a str,
    pub generation: i32,
    pub member_id: &'a str,
    pub topic: &'a str,
    pub offsets: &'a [(i32, i64)],
}

/// A lazily opened connection to the group's coordinator.
pub(crate) struct ProofConnection {
    bootstrap: Vec<String>,
    client_id: String,
    timeout: Duration,
    coordinator: Option<Conn>,
}

struct Conn {
    stream: TcpStream,
    next_correlation: i32,
    find_coordinator: i16,
    offset_commit: i16,
}

impl ProofConnection {
    /// `bootstrap` is librdkafka's `bootstrap.servers` value.
    pub(crate) fn new(bootstrap: &str, client_id: &str, timeout: Duration) -> ProofConnection {
        let bootstrap = bootstrap
            .split(',')
            .map(|s| s.trim())
            .map(|s| s.strip_prefix("PLAINTEXT://").or_else(|| s.strip_prefix("plaintext://")).unwrap_or(s))
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        ProofConnection { bootstrap, client_id: client_id.to_owned(), timeout, coordinator: None }
    }

    /// Sends `commit` and returns the error code of its first partition
    /// (0: accepted). A coordinator that moved, or a connection that broke,
    /// is looked up again on the next call.
    pub(crate) fn commit(&mut self, commit: &Commit<'_>) -> Result<i16, WireError> {
        let deadline = Instant::now() + self.timeout;
        if self.coordinator.is_none() {
            self.coordinator = Some(self.find_coordinator(commit.group, deadline)?);
        }
        let conn = self.coordinator.as_mut().expect("set above");
        let answer = conn.offset_commit(&self.client_id, commit, deadline);
        match answer {
            Ok(c)
                if matches!(
                    c,
                    code::NOT_COORDINATOR | code::COORDINATOR_NOT_AVAILABLE | code::COORDINATOR_LOAD_IN_PROGRESS
                ) =>
            {
                self.coordinator = None;
                Ok(c)
            }
            Ok(c) => Ok(c),
            Err(e) => {
                self.coordinator = None;
                Err(e)
            }
        }
    }

    fn find_coordinator(&self, group: &str, deadline: Instant) -> Result<Conn, WireError> {
        let mut last = WireError::Io(io::Error::new(io::ErrorKind::NotFound, "no bootstrap server"));
        for server in &self.bootstrap {
            match self.ask_for_coordinator(server, group, deadline) {
                Ok(addr) => return Conn::open(&addr, &self.client_id, deadline),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn ask_for_coordinator(&self, server: &str, group: &str, deadline: Instant) -> Result<String, WireError> {
        let mut conn = Conn::open(server, &self.client_id, deadline)?;
        let version = conn.find_coordinator;
        let mut body = Vec::new();
        put_str(&mut body, group);
        if version >= 1 {
            body.push(0); // key_type: group
        }
        let answer = conn.call(&self.client_id, API_FIND_COORDINATOR, version, &body, deadline)?;
        let mut r = Reader::new(&answer);
        if version >= 1 {
            r.i32()?; // throttle_time_ms
        }
        let error = r.i16()?;
        if version >= 1 {
            r.nullable_str()?; // error_message
        }
        if error != code::NONE {
            return Err(WireError::Coordinator(error));
        }
        r.i32()?; // node_id
        let host = r.str()?;
        let port = r.i32()?;
        Ok(format!("{host}:{port}"))
    }
}

impl Conn {
    fn open(server: &str, client_id: &str, deadline: Instant) -> Result<Conn, WireError> {
        let addrs: Vec<SocketAddr> = server.to_socket_addrs()?.collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{server} resolves to no address"));
        for addr in addrs {
            let left = left(deadline)?;
            match TcpStream::connect_timeout(&addr, left) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    let mut conn = Conn { stream, next_correlation: 1, find_coordinator: 0, offset_commit: 2 };
                    conn.negotiate(client_id, deadline)?;
                    return Ok(conn);
                }
                Err(e) => last = io::Error::new(e.kind(), format!("connect {addr}: {e}")),
            }
        }
        Err(last.into())
    }

    /// ApiVersions v0: every broker since 0.10 answers it.
    fn negotiate(&mut self, client_id: &str, deadline: Instant) -> Result<(), WireError> {
        let answer = self.call(client_id, API_VERSIONS, 0, &[], deadline)?;
        let mut r = Reader::new(&answer);
        let error = r.i16()?;
        if error != code::NONE {
            return Err(WireError::Protocol(format!("ApiVersions answered error {error}")));
        }
        let (mut find, mut commit) = (None, None);
        for _ in 0..r.len()? {
            let (api, min, max) = (r.i16()?, r.i16()?, r.i16()?);
            match api {
                API_FIND_COORDINATOR => find = highest_common(min, max, 0, 2),
                API_OFFSET_COMMIT => commit = highest_common(min, max, 2, 7),
                _ => {}
            }
        }
        self.find_coordinator = find.ok_or(WireError::Unsupported { api: "FindCoordinator", ours: "0-2" })?;
        self.offset_commit = commit.ok_or(WireError::Unsupported { api: "OffsetCommit", ours: "2-7" })?;
        Ok(())
    }

    fn offset_commit(&mut self, client_id: &str, c: &Commit<'_>, deadline: Instant) -> Result<i16, WireError> {
        let v = self.offset_commit;
        let mut body = Vec::new();
        put_str(&mut body, c.group);
        body.extend_from_slice(&c.generation.to_be_bytes());
        put_str(&mut body, c.member_id);
        if v >= 7 {
            body.extend_from_slice(&(-1i16).to_be_bytes()); // group_instance_id: null
        }
        if v <= 4 {
            body.extend_from_slice(&(-1i64).to_be_bytes()); // retention_time_ms: broker default
        }
        body.extend_from_slice(&1i32.to_be_bytes()); // one topic
        put_str(&mut body, c.topic);
        body.extend_from_slice(&(c.offsets.len() as i32).to_be_bytes());
        for (partition, offset) in c.offsets {
            body.extend_from_slice(&partition.to_be_bytes());
            body.extend_from_slice(&offset.to_be_bytes());
            if v >= 6 {
                body.extend_from_slice(&(-1i32).to_be_bytes()); // committed_leader_epoch
            }
            body.extend_from_slice(&(-1i16).to_be_bytes()); // metadata: null
        }
        let answer = self.call(client_id, API_OFFSET_COMMIT, v, &body, deadline)?;
        let mut r = Reader::new(&answer);
        if v >= 3 {
            r.i32()?; // throttle_time_ms
        }
        let mut first = None;
        for _ in 0..r.len()? {
            r.str()?;
            for _ in 0..r.len()? {
                r.i32()?;
                let error = r.i16()?;
                // Every partition of one commit gets the group's verdict;
                // the first non-zero one is the answer.
                if first.is_none_or(|f| f == code::NONE) {
                    first = Some(error);
                }
            }
        }
        first.ok_or_else(|| WireError::Protocol("OffsetCommit answered no partition".into()))
    }

    /// One request, one answer (request header v1, response header v0).
    fn call(
        &mut self,
        client_id: &str,
        api: i16,
        version: i16,
        body: &[u8],
        deadline: Instant,
    ) -> Result<Vec<u8>, WireError> {
        let correlation = self.next_correlation;
        self.next_correlation = self.next_correlation.wrapping_add(1);
        let mut frame = Vec::with_capacity(body.len() + 64);
        frame.extend_from_slice(&[0; 4]);
        frame.extend_from_slice(&api.to_be_bytes());
        frame.extend_from_slice(&version.to_be_bytes());
        frame.extend_from_slice(&correlation.to_be_bytes());
        put_str(&mut frame, client_id);
        frame.extend_from_slice(body);
        let size = (frame.len() - 4) as i32;
        frame[..4].copy_from_slice(&size.to_be_bytes());
        self.stream.set_write_timeout(Some(left(deadline)?))?;
        self.stream.write_all(&frame)?;
        let mut size = [0u8; 4];
        self.read_exact(&mut size, deadline)?;
        let size = i32::from_be_bytes(size);
        if !(4..=16 << 20).contains(&size) {
            return Err(WireError::Protocol(format!("answer size {size}")));
        }
        let mut answer = vec![0u8; size as usize];
        self.read_exact(&mut answer, deadline)?;
        let got = i32::from_be_bytes(answer[..4].try_into().expect("4 bytes"));
        if got != correlation {
            return Err(WireError::Protocol(format!("correlation id {got}, expected {correlation}")));
        }
        answer.drain(..4);
        Ok(answer)
    }

    fn read_exact(&mut self, buf: &mut [u8], deadline: Instant) -> Result<(), WireError> {
        self.stream.set_read_timeout(Some(left(deadline)?))?;
        self.stream.read_exact(buf).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                WireError::Io(io::Error::new(io::ErrorKind::TimedOut, "no answer before the request timeout"))
            }
            _ => WireError::Io(e),
        })
    }
}

fn left(deadline: Instant) -> io::Result<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| io::Error::new(io::ErrorKind::TimedOut, "no answer before the request timeout"))
}

fn highest_common(min: i16, max: i16, ours_min: i16, ours_max: i16) -> Option<i16> {
    let v = max.min(ours_max);
    (v >= min.max(ours_min)).then_some(v)
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as i16).to_be_bytes());
    buf.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.buf.len() < n {
            return Err(WireError::Protocol(format!("answer ends early ({} of {n} bytes)", self.buf.len())));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    fn i16(&mut self) -> Result<i16, WireError> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }

    fn i32(&mut self) -> Result<i32, WireError> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    /// An array length; a null array counts as empty.
    fn len(&mut self) -> Result<usize, WireError> {
        let n = self.i32()?;
        if n > 100_000 {
            return Err(WireError::Protocol(format!("array of {n} entries")));
        }
        Ok(n.max(0) as usize)
    }

    fn nullable_str(&mut self) -> Result<Option<String>, WireError> {
        let n = self.i16()?;
        if n < 0 {
            return Ok(None);
        }
        let bytes = self.take(n as usize)?;
        Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
    }

    fn str(&mut self) -> Result<String, WireError> {
        self.nullable_str()?.ok_or_else(|| WireError::Protocol("null where a string belongs".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_the_highest_both_sides_speak() {
        assert_eq!(highest_common(0, 9, 2, 7), Some(7));
        assert_eq!(highest_common(2, 4, 2, 7), Some(4));
        assert_eq!(highest_common(8, 9, 2, 7), None, "a broker that dropped the old encodings");
        assert_eq!(highest_common(0, 1, 2, 7), None);
    }

    #[test]
    fn a_short_answer_is_a_protocol_error_not_a_panic() {
        let mut r = Reader::new(&[0, 5, b'a']);
        assert!(matches!(r.str(), Err(WireError::Protocol(m)) if m.contains("ends early")));
        let mut r = Reader::new(&[0xff, 0xff]);
        assert_eq!(r.nullable_str().unwrap(), None);
        let mut r = Reader::new(&[0x7f, 0xff, 0xff, 0xff]);
        assert!(r.len().is_err(), "an absurd array length is refused before allocating");
    }

    /// The encoding against a real implementation of the protocol: the
    /// librdkafka mock accepts a commit to a group it does not know, answers
    /// a partition that does not exist with UNKNOWN_TOPIC_OR_PART (3), and
    /// an injected error with that error.
    #[test]
    fn commits_round_trip_through_the_librdkafka_mock() {
        let mock = crate::kafka::mock::MockKafka::start(1).expect("mock cluster");
        mock.create_topic("t", 2).expect("topic");
        let mut conn = ProofConnection::new(&mock.bootstrap_servers(), "neli-test", Duration::from_secs(5));
        let commit =
            |offsets: &'static [(i32, i64)]| Commit { group: "g", generation: 3, member_id: "", topic: "t", offsets };
        assert_eq!(conn.commit(&commit(&[(0, 5), (1, 7)])).unwrap(), code::NONE);
        assert_eq!(conn.commit(&commit(&[(9, 1)])).unwrap(), 3, "the per-partition error is read");
        mock.fail_commits(1, rdkafka::types::RDKafkaRespErr::RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS);
        assert_eq!(
            conn.commit(&commit(&[(0, 5)])).unwrap(),
            rdkafka::error::RDKafkaErrorCode::RebalanceInProgress as i16
        );
        assert_eq!(conn.commit(&commit(&[(0, 6)])).unwrap(), code::NONE, "the same connection serves the next commit");
    }

    #[test]
    fn a_closed_port_is_an_io_error_and_the_next_call_tries_again() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut conn = ProofConnection::new(&format!("127.0.0.1:{port}"), "neli-test", Duration::from_millis(500));
        let commit = Commit { group: "g", generation: 1, member_id: "m", topic: "t", offsets: &[(0, 0)] };
        assert!(matches!(conn.commit(&commit), Err(WireError::Io(_))));
        assert!(conn.coordinator.is_none());
        assert!(matches!(conn.commit(&commit), Err(WireError::Io(_))));
    }

    #[test]
    fn bootstrap_servers_lose_their_plaintext_scheme() {
        let c = ProofConnection::new(" PLAINTEXT://a:1, b:2,,", "id", Duration::from_secs(1));
        assert_eq!(c.bootstrap, vec!["a:1".to_string(), "b:2".to_string()]);
    }
}
