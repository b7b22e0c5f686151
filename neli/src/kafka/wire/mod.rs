//! The membership proof on a connection of its own (docs/cooperative-rebalance.md,
//! "One coordinator connection").
//!
//! librdkafka sends JoinGroup, Heartbeat and OffsetCommit to the coordinator
//! on one connection, and a broker answers one connection's requests in
//! order, so a proof sent while the member's own JoinGroup is held waits for
//! the join. Under cooperative-sticky the leader keeps partition 0 through
//! the rebalance and must keep proving its membership meanwhile; this module
//! sends that one request, an OffsetCommit carrying librdkafka's member id
//! and generation, on a connection neli opens itself.
//!
//! The connection is secured like librdkafka's, from the same client
//! properties (`security`: TLS on the vendored OpenSSL librdkafka links;
//! `sasl`: PLAIN, SCRAM-SHA-256/512, OAUTHBEARER with the unsecured JWT).
//! The messages are the `kafka-protocol` crate's generated codecs:
//! ApiVersions (the highest version the broker takes, down to v0), then
//! SaslHandshake and SaslAuthenticate when SASL is on, FindCoordinator and
//! OffsetCommit, each at the highest version both sides speak (flexible
//! encodings included). Blocking `std::net` I/O with timeouts; the caller
//! runs it on a worker thread.

mod guard;
mod sasl;
pub(crate) mod security;
#[cfg(test)]
pub(crate) mod test_server;

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorRequest, FindCoordinatorResponse, GroupId,
    OffsetCommitRequest, OffsetCommitResponse, RequestHeader, ResponseHeader, SaslAuthenticateRequest,
    SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, Message, StrBytes, VersionRange};
use openssl::ssl::SslStream;

use crate::secrets::Redactor;
pub(crate) use security::Security;

/// Kafka error codes the connection itself acts on (rdkafka's numbering,
/// which for broker errors is Kafka's).
pub(crate) mod code {
    use rdkafka::error::RDKafkaErrorCode as C;

    pub const NONE: i16 = C::NoError as i16;
    pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = C::CoordinatorLoadInProgress as i16;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = C::CoordinatorNotAvailable as i16;
    pub const NOT_COORDINATOR: i16 = C::NotCoordinator as i16;
    pub const ILLEGAL_GENERATION: i16 = C::IllegalGeneration as i16;
    pub const UNSUPPORTED_VERSION: i16 = C::UnsupportedVersion as i16;
    pub const UNSUPPORTED_SASL_MECHANISM: i16 = C::UnsupportedSASLMechanism as i16;
}

/// What went wrong on the proof connection. `Io` and `Protocol` are worth a
/// retry on a fresh connection; the permanent ones ([`WireError::is_permanent`])
/// mean this connection cannot be had with these settings, and the proof
/// goes through librdkafka from then on.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WireError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("malformed answer: {0}")]
    Protocol(String),
    #[error("the broker supports none of {api} versions {ours}")]
    Unsupported { api: &'static str, ours: VersionRange },
    #[error("the coordinator lookup failed with Kafka error {0}")]
    Coordinator(i16),
    /// A TLS handshake or certificate check failed (the text names the
    /// property that decides it, e.g. `ssl.ca.location`).
    #[error("{0}")]
    Tls(String),
    /// SASL authentication failed: the mechanism, the user and why.
    #[error("SASL authentication with {mechanism} as user '{user}' failed: {why}")]
    Auth { mechanism: &'static str, user: String, why: String },
}

impl WireError {
    /// A failure that the same settings will meet again: the broker cannot
    /// take this client, or refuses its TLS or SASL credentials.
    pub(crate) fn is_permanent(&self) -> bool {
        matches!(self, WireError::Unsupported { .. } | WireError::Tls(_) | WireError::Auth { .. })
    }

    /// The same error with every text passed through `redactor`.
    fn redacted(self, redactor: &Redactor) -> WireError {
        match self {
            WireError::Io(e) => WireError::Io(io::Error::new(e.kind(), redactor.redact(&e.to_string()))),
            WireError::Protocol(m) => WireError::Protocol(redactor.redact(&m)),
            WireError::Tls(m) => WireError::Tls(redactor.redact(&m)),
            WireError::Auth { mechanism, user, why } => {
                WireError::Auth { mechanism, user: redactor.redact(&user), why: redactor.redact(&why) }
            }
            e @ (WireError::Unsupported { .. } | WireError::Coordinator(_)) => e,
        }
    }
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

/// The versions this client speaks of each API it sends: the codec crate's
/// ranges, except that SaslHandshake v0 (tokens without Kafka framing, for
/// brokers before 1.0) is not spoken.
const OURS_API_VERSIONS: VersionRange = ApiVersionsRequest::VERSIONS;
const OURS_FIND_COORDINATOR: VersionRange = FindCoordinatorRequest::VERSIONS;
const OURS_OFFSET_COMMIT: VersionRange = OffsetCommitRequest::VERSIONS;
const OURS_SASL_HANDSHAKE: VersionRange = VersionRange { min: 1, max: SaslHandshakeRequest::VERSIONS.max };
const OURS_SASL_AUTHENTICATE: VersionRange = SaslAuthenticateRequest::VERSIONS;

/// The version of each API used on one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Versions {
    pub api_versions: i16,
    pub find_coordinator: i16,
    pub offset_commit: i16,
    /// Set when the connection authenticates.
    pub sasl: Option<(i16, i16)>,
}

/// A lazily opened connection to the group's coordinator.
pub(crate) struct ProofConnection {
    bootstrap: Vec<String>,
    client_id: String,
    timeout: Duration,
    security: Security,
    redactor: Redactor,
    coordinator: Option<Conn>,
}

/// A plaintext or TLS byte stream.
enum Stream {
    Plain(TcpStream),
    Tls(Box<SslStream<TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

struct Conn {
    stream: Stream,
    /// `host:port`, for errors.
    server: String,
    next_correlation: i32,
    versions: Versions,
}

/// `bootstrap.servers` as librdkafka reads it: comma-separated, an optional
/// `PROTO://` prefix that must match `security.protocol` (entries that do
/// not are dropped, as librdkafka drops them), port 9092 when none is given.
fn parse_bootstrap(bootstrap: &str, security: &Security) -> Vec<String> {
    bootstrap
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .filter_map(|s| match s.split_once("://") {
            Some((scheme, rest)) => security.accepts_scheme(scheme).then_some(rest),
            None => Some(s),
        })
        .map(|s| if s.ends_with(']') || !s.contains(':') { format!("{s}:9092") } else { s.to_owned() })
        .collect()
}

/// The host part of `host:port` (`[v6]:port` loses its brackets).
fn host_of(server: &str) -> &str {
    let host = server.rsplit_once(':').map_or(server, |(h, _)| h);
    host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host)
}

impl ProofConnection {
    /// `bootstrap` is librdkafka's `bootstrap.servers` value; `security` and
    /// `redactor` come from the same client properties.
    pub(crate) fn new(
        bootstrap: &str,
        client_id: &str,
        timeout: Duration,
        security: Security,
        redactor: Redactor,
    ) -> ProofConnection {
        let bootstrap = parse_bootstrap(bootstrap, &security);
        ProofConnection { bootstrap, client_id: client_id.to_owned(), timeout, security, redactor, coordinator: None }
    }

    /// The versions in use on the coordinator connection, if one is open.
    #[cfg(test)]
    pub(crate) fn versions(&self) -> Option<Versions> {
        self.coordinator.as_ref().map(|c| c.versions)
    }

    /// Sends `commit` and returns the error code of its first partition
    /// (0: accepted). A coordinator that moved, or a connection that broke,
    /// is looked up again on the next call. Error texts are redacted.
    pub(crate) fn commit(&mut self, commit: &Commit<'_>) -> Result<i16, WireError> {
        self.commit_inner(commit).map_err(|e| e.redacted(&self.redactor))
    }

    fn commit_inner(&mut self, commit: &Commit<'_>) -> Result<i16, WireError> {
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
        let mut last = WireError::Io(io::Error::new(
            io::ErrorKind::NotFound,
            "no bootstrap server (bootstrap.servers is empty or no entry matches security.protocol)",
        ));
        for server in &self.bootstrap {
            match self.ask_for_coordinator(server, group, deadline) {
                Ok(addr) => return self.open(&addr, deadline),
                // The same settings fail on every broker.
                Err(e) if e.is_permanent() => return Err(e),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn ask_for_coordinator(&self, server: &str, group: &str, deadline: Instant) -> Result<String, WireError> {
        let mut conn = self.open(server, deadline)?;
        let v = conn.versions.find_coordinator;
        let request = FindCoordinatorRequest::default().with_key_type(0); // 0: a group
        let request = if v >= 4 {
            request.with_coordinator_keys(vec![StrBytes::from_string(group.to_owned())])
        } else {
            request.with_key(StrBytes::from_string(group.to_owned()))
        };
        let answer: FindCoordinatorResponse =
            conn.call(&self.client_id, ApiKey::FindCoordinator, v, &request, deadline)?;
        let (error, host, port) = if v >= 4 {
            let c = answer
                .coordinators
                .first()
                .ok_or_else(|| WireError::Protocol("FindCoordinator answered no coordinator".into()))?;
            (c.error_code, c.host.to_string(), c.port)
        } else {
            (answer.error_code, answer.host.to_string(), answer.port)
        };
        if error != code::NONE {
            return Err(WireError::Coordinator(error));
        }
        Ok(if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") })
    }

    /// Connects to `server`, secures the connection, negotiates versions
    /// and authenticates.
    fn open(&self, server: &str, deadline: Instant) -> Result<Conn, WireError> {
        let addrs: Vec<SocketAddr> = server.to_socket_addrs()?.collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{server} resolves to no address"));
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, left(deadline)?) {
                Ok(tcp) => {
                    tcp.set_nodelay(true)?;
                    let stream = match &self.security.tls {
                        None => Stream::Plain(tcp),
                        Some(tls) => {
                            let remaining = left(deadline)?;
                            tcp.set_read_timeout(Some(remaining))?;
                            tcp.set_write_timeout(Some(remaining))?;
                            Stream::Tls(Box::new(tls.connect(host_of(server), tcp)?))
                        }
                    };
                    let placeholder = Versions { api_versions: 0, find_coordinator: 0, offset_commit: 2, sasl: None };
                    let mut conn =
                        Conn { stream, server: server.to_owned(), next_correlation: 1, versions: placeholder };
                    conn.negotiate(&self.client_id, self.security.sasl.is_some(), deadline)?;
                    if let Some(mechanism) = &self.security.sasl {
                        conn.authenticate(&self.client_id, mechanism, deadline)?;
                    }
                    return Ok(conn);
                }
                Err(e) => last = io::Error::new(e.kind(), format!("connect {addr}: {e}")),
            }
        }
        Err(last.into())
    }
}

/// The highest version in both ranges, or None.
fn highest_common(ours: VersionRange, theirs: VersionRange) -> Option<i16> {
    let both = ours.intersect(&theirs);
    (!both.is_empty()).then_some(both.max)
}

impl Conn {
    /// ApiVersions at the highest version we speak; a broker that does not
    /// take it answers UNSUPPORTED_VERSION (in the v0 body, with its own
    /// range when it can) and we ask again at a version it takes, as
    /// librdkafka does. Then each API's version: the highest both speak.
    fn negotiate(&mut self, client_id: &str, sasl: bool, deadline: Instant) -> Result<(), WireError> {
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("neli-rs"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        let mut version = OURS_API_VERSIONS.max;
        let answer = loop {
            let body = self.round_trip(client_id, ApiKey::ApiVersions, version, &request, deadline)?;
            let error = body.get(..2).map(|b| i16::from_be_bytes([b[0], b[1]]));
            if error == Some(code::UNSUPPORTED_VERSION) && version > 0 {
                // The broker's own ApiVersions range, if its v0 answer says.
                let theirs = decode_answer::<ApiVersionsResponse>(ApiKey::ApiVersions, body.clone(), 0)
                    .ok()
                    .and_then(|r| r.api_keys.into_iter().find(|k| k.api_key == ApiKey::ApiVersions as i16))
                    .map(|k| k.max_version);
                version = theirs.filter(|&v| (0..version).contains(&v)).unwrap_or(0);
                continue;
            }
            break decode_answer::<ApiVersionsResponse>(ApiKey::ApiVersions, body, version)?;
        };
        if answer.error_code != code::NONE {
            return Err(WireError::Protocol(format!("ApiVersions v{version} answered error {}", answer.error_code)));
        }
        let theirs = |api: ApiKey| {
            answer
                .api_keys
                .iter()
                .find(|k| k.api_key == api as i16)
                .map(|k| VersionRange { min: k.min_version, max: k.max_version })
        };
        let pick = |api: ApiKey, name: &'static str, ours: VersionRange| {
            theirs(api).and_then(|t| highest_common(ours, t)).ok_or(WireError::Unsupported { api: name, ours })
        };
        self.versions = Versions {
            api_versions: version,
            find_coordinator: pick(ApiKey::FindCoordinator, "FindCoordinator", OURS_FIND_COORDINATOR)?,
            offset_commit: pick(ApiKey::OffsetCommit, "OffsetCommit", OURS_OFFSET_COMMIT)?,
            sasl: if sasl {
                Some((
                    pick(ApiKey::SaslHandshake, "SaslHandshake", OURS_SASL_HANDSHAKE)?,
                    pick(ApiKey::SaslAuthenticate, "SaslAuthenticate", OURS_SASL_AUTHENTICATE)?,
                ))
            } else {
                None
            },
        };
        Ok(())
    }

    /// SaslHandshake, then SaslAuthenticate until the mechanism is done.
    fn authenticate(
        &mut self,
        client_id: &str,
        mechanism: &sasl::Mechanism,
        deadline: Instant,
    ) -> Result<(), WireError> {
        let (handshake, authenticate) = self.versions.sasl.expect("negotiated with sasl");
        let fail =
            |why: String| WireError::Auth { mechanism: mechanism.name(), user: mechanism.user().to_owned(), why };
        let request = SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism.name()));
        let answer: SaslHandshakeResponse =
            self.call(client_id, ApiKey::SaslHandshake, handshake, &request, deadline)?;
        if answer.error_code == code::UNSUPPORTED_SASL_MECHANISM {
            let offered: Vec<&str> = answer.mechanisms.iter().map(|m| m.as_str()).collect();
            return Err(fail(format!(
                "the broker does not enable this mechanism (it offers {}; see sasl.mechanism)",
                if offered.is_empty() { "none".to_owned() } else { offered.join(", ") }
            )));
        } else if answer.error_code != code::NONE {
            return Err(fail(format!("SaslHandshake answered Kafka error {}", answer.error_code)));
        }
        let mut exchange = mechanism.start();
        let mut token = exchange.first();
        // PLAIN and OAUTHBEARER take one round, SCRAM two.
        for _ in 0..4 {
            let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(token));
            let answer: SaslAuthenticateResponse =
                self.call(client_id, ApiKey::SaslAuthenticate, authenticate, &request, deadline)?;
            if answer.error_code != code::NONE {
                let said = answer.error_message.as_ref().map(|m| m.as_str()).unwrap_or("no reason given");
                return Err(fail(format!(
                    "the broker answered Kafka error {} ({said}); check sasl.username and sasl.password",
                    answer.error_code
                )));
            }
            match exchange.next(&answer.auth_bytes).map_err(fail)? {
                sasl::Step::Done => return Ok(()),
                sasl::Step::Send(next) => token = next,
            }
        }
        Err(fail("the exchange did not end".into()))
    }

    fn offset_commit(&mut self, client_id: &str, c: &Commit<'_>, deadline: Instant) -> Result<i16, WireError> {
        let v = self.versions.offset_commit;
        let partitions = c
            .offsets
            .iter()
            .map(|&(partition, offset)| {
                OffsetCommitRequestPartition::default()
                    .with_partition_index(partition)
                    .with_committed_offset(offset)
                    .with_committed_metadata(None)
            })
            .collect();
        let request = OffsetCommitRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(c.group.to_owned())))
            .with_generation_id_or_member_epoch(c.generation)
            .with_member_id(StrBytes::from_string(c.member_id.to_owned()))
            .with_topics(vec![
                OffsetCommitRequestTopic::default()
                    .with_name(TopicName(StrBytes::from_string(c.topic.to_owned())))
                    .with_partitions(partitions),
            ]);
        let answer: OffsetCommitResponse = self.call(client_id, ApiKey::OffsetCommit, v, &request, deadline)?;
        // Every partition of one commit gets the group's verdict; the first
        // non-zero one is the answer.
        let mut first = None;
        for p in answer.topics.iter().flat_map(|t| &t.partitions) {
            if first.is_none_or(|f| f == code::NONE) {
                first = Some(p.error_code);
            }
        }
        first.ok_or_else(|| WireError::Protocol("OffsetCommit answered no partition".into()))
    }

    /// One request, its decoded answer.
    fn call<Req: Encodable, Resp: Decodable>(
        &mut self,
        client_id: &str,
        api: ApiKey,
        version: i16,
        request: &Req,
        deadline: Instant,
    ) -> Result<Resp, WireError> {
        let body = self.round_trip(client_id, api, version, request, deadline)?;
        decode_answer(api, body, version)
    }

    /// One request, the answer's body (after its header).
    fn round_trip<Req: Encodable>(
        &mut self,
        client_id: &str,
        api: ApiKey,
        version: i16,
        request: &Req,
        deadline: Instant,
    ) -> Result<Bytes, WireError> {
        let correlation = self.next_correlation;
        self.next_correlation = self.next_correlation.wrapping_add(1);
        let header = RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(correlation)
            .with_client_id(Some(StrBytes::from_string(client_id.to_owned())));
        let mut frame = vec![0u8; 4];
        let encoded = header
            .encode(&mut frame, api.request_header_version(version))
            .and_then(|()| request.encode(&mut frame, version));
        if let Err(e) = encoded {
            // Our own request: a bug here, not the broker's fault.
            return Err(WireError::Protocol(format!("cannot encode {api:?} v{version}: {e}")));
        }
        let size = i32::try_from(frame.len() - 4).map_err(|_| WireError::Protocol("request too large".into()))?;
        frame[..4].copy_from_slice(&size.to_be_bytes());
        self.stream.tcp().set_write_timeout(Some(left(deadline)?))?;
        self.stream.write_all(&frame).map_err(|e| self.io_error(e))?;
        self.stream.flush().map_err(|e| self.io_error(e))?;
        let mut size = [0u8; 4];
        self.read_exact(&mut size, deadline)?;
        let size = i32::from_be_bytes(size);
        if !(4..=16 << 20).contains(&size) {
            return Err(WireError::Protocol(format!("answer size {size}")));
        }
        let mut answer = vec![0u8; size as usize];
        self.read_exact(&mut answer, deadline)?;
        let mut answer = Bytes::from(answer);
        let header: ResponseHeader = decode(&mut answer, api.response_header_version(version))?;
        if header.correlation_id != correlation {
            return Err(WireError::Protocol(format!(
                "correlation id {}, expected {correlation}",
                header.correlation_id
            )));
        }
        Ok(answer)
    }

    fn read_exact(&mut self, buf: &mut [u8], deadline: Instant) -> Result<(), WireError> {
        self.stream.tcp().set_read_timeout(Some(left(deadline)?))?;
        self.stream.read_exact(buf).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                WireError::Io(io::Error::new(io::ErrorKind::TimedOut, "no answer before the request timeout"))
            }
            _ => self.io_error(e),
        })
    }

    /// An I/O error; on TLS, one carrying an alert from the broker (with
    /// TLS 1.3 a broker that wants a client certificate says so after the
    /// handshake, at the first read) is a TLS failure.
    fn io_error(&self, e: io::Error) -> WireError {
        if let Stream::Tls(_) = self.stream
            && let Some(stack) =
                e.get_ref().and_then(|i| i.downcast_ref::<openssl::ssl::Error>()).and_then(|s| s.ssl_error())
        {
            return WireError::Tls(format!(
                "TLS with {} failed: {} (does the broker require a client certificate? \
                 see ssl.certificate.location and ssl.key.location)",
                self.server,
                security::first_reason(stack)
            ));
        }
        WireError::Io(e)
    }
}

/// Decodes an answer's body; malformed bytes are a protocol error, never
/// a panic or an abort (array lengths are checked first: `guard`).
fn decode_answer<T: Decodable>(api: ApiKey, mut body: Bytes, version: i16) -> Result<T, WireError> {
    // Flexible (compact) encodings: the request header v2 goes with them.
    let flexible = api.request_header_version(version) >= 2;
    if !guard::arrays_fit(api, version, flexible, &body) {
        return Err(WireError::Protocol(format!("{api:?} v{version}: an array longer than the answer")));
    }
    decode(&mut body, version)
}

/// Decodes a whole answer (or header) whose arrays fit.
fn decode<T: Decodable>(buf: &mut Bytes, version: i16) -> Result<T, WireError> {
    let name = || std::any::type_name::<T>().rsplit("::").next().unwrap_or("answer");
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| T::decode(buf, version))) {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(WireError::Protocol(format!("{} v{version}: {e}", name()))),
        Err(_) => Err(WireError::Protocol(format!("undecodable {} v{version}", name()))),
    }
}

fn left(deadline: Instant) -> io::Result<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| io::Error::new(io::ErrorKind::TimedOut, "no answer before the request timeout"))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};

    use super::test_server::certs::{self, Pki};
    use super::test_server::{Options, TestServer, acceptor, props};
    use super::*;

    fn commit(offsets: &'static [(i32, i64)]) -> Commit<'static> {
        Commit { group: "g", generation: 3, member_id: "m-1", topic: "t", offsets }
    }

    fn conn(bootstrap: &str, properties: &BTreeMap<String, String>) -> ProofConnection {
        let security = Security::from_properties(properties).expect("settings the connection speaks");
        ProofConnection::new(
            bootstrap,
            "neli-test",
            Duration::from_secs(10),
            security,
            Redactor::for_properties(properties),
        )
    }

    #[test]
    fn versions_are_the_highest_both_sides_speak() {
        let r = |min, max| VersionRange { min, max };
        assert_eq!(highest_common(r(2, 9), r(0, 9)), Some(9));
        assert_eq!(highest_common(r(2, 9), r(2, 4)), Some(4));
        assert_eq!(highest_common(r(2, 9), r(10, 11)), None, "a broker that dropped our encodings");
        assert_eq!(highest_common(r(2, 9), r(0, 1)), None);
    }

    /// The encoding against a real implementation of the protocol: the
    /// librdkafka mock accepts a commit to a group it does not know, answers
    /// a partition that does not exist with UNKNOWN_TOPIC_OR_PART (3), and
    /// an injected error with that error. It takes ApiVersions only up to
    /// v2 (the request at our v4 is answered UNSUPPORTED_VERSION and asked
    /// again lower), FindCoordinator up to v3 and OffsetCommit up to v9
    /// (flexible from v8).
    #[test]
    fn commits_round_trip_through_the_librdkafka_mock() {
        let mock = crate::kafka::mock::MockKafka::start(1).expect("mock cluster");
        mock.create_topic("t", 2).expect("topic");
        let mut conn = conn(&mock.bootstrap_servers(), &BTreeMap::new());
        let commit = |offsets| Commit { group: "g", generation: 3, member_id: "", topic: "t", offsets };
        assert_eq!(conn.commit(&commit(&[(0, 5), (1, 7)])).unwrap(), code::NONE);
        let v = conn.versions().expect("connected");
        assert!(v.api_versions < OURS_API_VERSIONS.max, "the mock refused our highest ApiVersions: {v:?}");
        assert_eq!((v.find_coordinator, v.offset_commit), (3, 9), "{v:?}");
        assert_eq!(conn.commit(&commit(&[(9, 1)])).unwrap(), 3, "the per-partition error is read");
        mock.fail_commits(1, rdkafka::types::RDKafkaRespErr::RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS);
        assert_eq!(
            conn.commit(&commit(&[(0, 5)])).unwrap(),
            rdkafka::error::RDKafkaErrorCode::RebalanceInProgress as i16
        );
        assert_eq!(conn.commit(&commit(&[(0, 6)])).unwrap(), code::NONE, "the same connection serves the next commit");
    }

    /// The tansu binary (scripts/fetch-tansu.sh), or None (skip with a
    /// notice) outside CI; under `CI=true` a missing tansu fails.
    fn tansu_bin() -> Option<PathBuf> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/fetch-tansu.sh");
        let out = Command::new("sh").arg(&script).output();
        match out {
            Ok(o) if o.status.success() => Some(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                    Err(e) => e.to_string(),
                };
                assert!(std::env::var("CI").as_deref() != Ok("true"), "tansu is required under CI=true: {why}");
                eprintln!("NOTICE: skipping tansu test: cannot fetch tansu ({why}); run scripts/fetch-tansu.sh");
                None
            }
        }
    }

    /// Against tansu (a broker written against Kafka's message definitions):
    /// versions negotiated from its ApiVersions (flexible encodings), a
    /// commit to a group it does not know accepted.
    #[test]
    fn commits_round_trip_through_tansu() {
        let Some(bin) = tansu_bin() else { return };
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("tcp://127.0.0.1:{port}");
        let mut child = Command::new(bin)
            .args(["broker", "--listener-url", &url, "--advertised-listener-url", &url])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn tansu");
        let bootstrap = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(&bootstrap).is_err() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let created = tokio::runtime::Runtime::new().unwrap().block_on(async {
            use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
            let admin: AdminClient<_> =
                rdkafka::ClientConfig::new().set("bootstrap.servers", &bootstrap).create().expect("admin client");
            let topic = NewTopic::new("t", 1, TopicReplication::Fixed(1));
            admin.create_topics([&topic], &AdminOptions::new()).await
        });
        let mut conn = conn(&bootstrap, &BTreeMap::new());
        let commit = |offsets| Commit { group: "g", generation: -1, member_id: "", topic: "t", offsets };
        let answer = conn.commit(&commit(&[(0, 1)]));
        let unknown = conn.commit(&commit(&[(7, 1)]));
        let versions = conn.versions();
        let _ = child.kill();
        let _ = child.wait();
        created.expect("topic t created");
        assert_eq!(answer.unwrap(), code::NONE);
        // tansu (0.6) accepts a commit for a partition the topic lacks.
        assert_eq!(unknown.unwrap(), code::NONE);
        let v = versions.expect("connected");
        eprintln!("tansu: {v:?}");
        assert!(v.offset_commit >= 8 && v.find_coordinator >= 3, "flexible versions were negotiated: {v:?}");
    }

    #[test]
    fn a_closed_port_is_an_io_error_and_the_next_call_tries_again() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut conn = ProofConnection::new(
            &format!("127.0.0.1:{port}"),
            "neli-test",
            Duration::from_millis(500),
            Security::plaintext(),
            Redactor::default(),
        );
        let commit = commit(&[(0, 0)]);
        assert!(matches!(conn.commit(&commit), Err(WireError::Io(_))));
        assert!(conn.coordinator.is_none());
        assert!(matches!(conn.commit(&commit), Err(WireError::Io(_))));
    }

    #[test]
    fn bootstrap_servers_are_read_as_librdkafka_reads_them() {
        let plain = Security::plaintext();
        assert_eq!(
            parse_bootstrap(" PLAINTEXT://a:1, b:2,,c, [::1]:4, [::1]", &plain),
            ["a:1", "b:2", "c:9092", "[::1]:4", "[::1]:9092"]
        );
        assert_eq!(
            parse_bootstrap("SSL://a:1,plaintext://b:2", &plain),
            ["b:2"],
            "a scheme of another listener is dropped"
        );
        assert_eq!(host_of("[::1]:4"), "::1");
        assert_eq!(host_of("kafka:9093"), "kafka");
    }

    /// Every version the server offers, and the commit at each: the codec
    /// crate's encodings (v8+ flexible) as a Kafka implementation reads them.
    #[test]
    fn every_offset_commit_and_find_coordinator_version_round_trips() {
        for (find, commit_v) in [(0, 2), (1, 3), (2, 5), (3, 7), (4, 8), (6, 9)] {
            let server = TestServer::start(Options {
                apis: vec![
                    (ApiKey::ApiVersions, 0, 3),
                    (ApiKey::FindCoordinator, 0, find),
                    (ApiKey::OffsetCommit, 2, commit_v),
                ],
                ..Options::default()
            });
            let mut c = conn(&server.bootstrap(), &BTreeMap::new());
            assert_eq!(c.commit(&commit(&[(0, 1), (1, 2)])).unwrap(), code::NONE);
            let v = c.versions().unwrap();
            assert_eq!((v.api_versions, v.find_coordinator, v.offset_commit), (3, find, commit_v));
            let seen = server.seen();
            assert_eq!(seen[0], (ApiKey::ApiVersions, 4, false), "asked at our highest first");
            assert_eq!(seen[1], (ApiKey::ApiVersions, 3, false), "then at the broker's");
        }
    }

    #[test]
    fn a_broker_without_our_versions_is_refused_by_name() {
        let server = TestServer::start(Options {
            apis: vec![(ApiKey::ApiVersions, 0, 3), (ApiKey::FindCoordinator, 0, 6), (ApiKey::OffsetCommit, 0, 1)],
            ..Options::default()
        });
        let e = conn(&server.bootstrap(), &BTreeMap::new()).commit(&commit(&[(0, 1)])).unwrap_err();
        assert!(e.is_permanent());
        assert!(e.to_string().contains("OffsetCommit versions 2..9"), "{e}");
    }

    /// A truncated answer, and one whose array claims 2^32 entries
    /// (OffsetCommit v9: throttle time, then a compact array length).
    #[test]
    fn a_malformed_answer_is_a_protocol_error_not_a_panic() {
        for garbage in [vec![0x7f, 0xff, 0xff], vec![0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f]] {
            let server = TestServer::start(Options { garbage_commits: Some(garbage.clone()), ..Options::default() });
            let e = conn(&server.bootstrap(), &BTreeMap::new()).commit(&commit(&[(0, 1)])).unwrap_err();
            assert!(matches!(e, WireError::Protocol(_)), "{garbage:?}: {e}");
        }
    }

    const PASSWORD: &str = "MARKER-sasl-secret-3f9a";

    fn sasl_server(mechanisms: Vec<&'static str>, tls: Option<openssl::ssl::SslAcceptor>) -> TestServer {
        TestServer::start(Options {
            mechanisms,
            users: vec![("billing".into(), PASSWORD.into())],
            tls,
            ..Options::default()
        })
    }

    fn sasl_props(
        protocol: &'static str,
        mechanism: &'static str,
        password: &'static str,
    ) -> Vec<(&'static str, &'static str)> {
        vec![
            ("security.protocol", protocol),
            ("sasl.mechanism", mechanism),
            ("sasl.username", "billing"),
            ("sasl.password", password),
        ]
    }

    /// PLAIN and SCRAM against the test server's SASL (checked as Kafka
    /// checks it): the right password commits, every request after the
    /// handshake is authenticated, at the negotiated versions.
    #[test]
    fn sasl_plain_and_scram_authenticate() {
        for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
            let server = sasl_server(vec!["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], None);
            let mut c = conn(&server.bootstrap(), &props(&sasl_props("SASL_PLAINTEXT", mechanism, PASSWORD)));
            assert_eq!(c.commit(&commit(&[(0, 1)])).unwrap(), code::NONE, "{mechanism}");
            assert_eq!(c.versions().unwrap().sasl, Some((1, 2)), "{mechanism}");
            let seen = server.seen();
            let rounds = seen.iter().filter(|(a, ..)| *a == ApiKey::SaslAuthenticate).count();
            let per_connection = if mechanism == "PLAIN" { 1 } else { 2 };
            assert_eq!(rounds, 2 * per_connection, "{mechanism}: bootstrap and coordinator connections: {seen:?}");
            for (api, _, authenticated) in &seen {
                if matches!(api, ApiKey::FindCoordinator | ApiKey::OffsetCommit) {
                    assert!(authenticated, "{mechanism}: {seen:?}");
                }
            }
        }
    }

    /// A wrong password: a clear error naming the mechanism and the user,
    /// permanent (the proof falls back to librdkafka), and neither password
    /// in its text or its Debug.
    #[test]
    fn a_wrong_password_names_the_mechanism_and_never_the_secret() {
        const WRONG: &str = "MARKER-wrong-password-77c1";
        for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
            let server = sasl_server(vec!["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], None);
            let mut c = conn(&server.bootstrap(), &props(&sasl_props("SASL_PLAINTEXT", mechanism, WRONG)));
            let e = c.commit(&commit(&[(0, 1)])).unwrap_err();
            let (text, debug) = (e.to_string(), format!("{e:?}"));
            assert!(e.is_permanent(), "{text}");
            assert!(text.contains(&format!("SASL authentication with {mechanism} as user 'billing' failed")), "{text}");
            assert!(text.contains("sasl.password"), "{text}");
            for secret in [WRONG, PASSWORD] {
                assert!(!text.contains(secret) && !debug.contains(secret), "{text} / {debug}");
            }
            assert!(!server.seen().iter().any(|(a, ..)| *a == ApiKey::OffsetCommit), "nothing is sent unauthenticated");
        }
    }

    #[test]
    fn a_mechanism_the_broker_does_not_enable_is_refused_naming_what_it_offers() {
        let server = sasl_server(vec!["SCRAM-SHA-512"], None);
        let e = conn(&server.bootstrap(), &props(&sasl_props("SASL_PLAINTEXT", "PLAIN", PASSWORD)))
            .commit(&commit(&[(0, 1)]))
            .unwrap_err();
        assert!(e.is_permanent());
        let text = e.to_string();
        assert!(text.contains("with PLAIN") && text.contains("it offers SCRAM-SHA-512"), "{text}");
    }

    /// Files for the `*.location` properties, in a directory of this test's own.
    struct Files(PathBuf);

    impl Files {
        fn new(name: &str) -> Files {
            let dir = std::env::temp_dir().join(format!("neli-wire-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Files(dir)
        }
        fn put(&self, name: &str, text: &str) -> String {
            let p = self.0.join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        }
    }

    impl Drop for Files {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn leaked(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    /// Server verification: the right CA (file, PEM property, directory not
    /// needed) passes; another CA is refused with an error naming
    /// ssl.ca.location; with verification off, any certificate passes.
    #[test]
    fn tls_verifies_the_broker_against_ssl_ca_location() {
        let (pki, other) = (Pki::new("right"), Pki::new("other"));
        let files = Files::new("server-verify");
        let ca = leaked(files.put("ca.pem", &pki.ca.cert_pem()));
        let wrong_ca = leaked(files.put("other-ca.pem", &other.ca.cert_pem()));
        let server = TestServer::start(Options { tls: Some(acceptor(&pki, false)), ..Options::default() });

        let mut c = conn(&server.bootstrap(), &props(&[("security.protocol", "SSL"), ("ssl.ca.location", ca)]));
        assert_eq!(c.commit(&commit(&[(0, 1)])).unwrap(), code::NONE);
        let ca_pem = leaked(pki.ca.cert_pem());
        let mut c = conn(
            &format!("SSL://localhost:{}", server.port),
            &props(&[("security.protocol", "ssl"), ("ssl.ca.pem", ca_pem)]),
        );
        assert_eq!(c.commit(&commit(&[(0, 1)])).unwrap(), code::NONE, "ssl.ca.pem, and the name localhost");

        let mut c = conn(&server.bootstrap(), &props(&[("security.protocol", "SSL"), ("ssl.ca.location", wrong_ca)]));
        let e = c.commit(&commit(&[(0, 1)])).unwrap_err();
        let text = e.to_string();
        assert!(e.is_permanent(), "{text}");
        assert!(text.contains("could not be verified against ssl.ca.location") && text.contains(wrong_ca), "{text}");

        let mut c = conn(
            &server.bootstrap(),
            &props(&[
                ("security.protocol", "SSL"),
                ("ssl.ca.location", wrong_ca),
                ("enable.ssl.certificate.verification", "false"),
            ]),
        );
        assert_eq!(c.commit(&commit(&[(0, 1)])).unwrap(), code::NONE, "verification off");
    }

    /// A certificate that does not name the host is refused unless
    /// ssl.endpoint.identification.algorithm=none.
    #[test]
    fn tls_checks_the_host_name_unless_identification_is_none() {
        let mut pki = Pki::new("names");
        pki.server = certs::issue_for("elsewhere.example", &pki.ca);
        let ca = leaked(pki.ca.cert_pem());
        let server = TestServer::start(Options { tls: Some(acceptor(&pki, false)), ..Options::default() });
        let e = conn(&server.bootstrap(), &props(&[("security.protocol", "SSL"), ("ssl.ca.pem", ca)]))
            .commit(&commit(&[(0, 1)]))
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("ssl.ca.pem") && text.contains("ssl.endpoint.identification.algorithm"), "{text}");
        let mut c = conn(
            &server.bootstrap(),
            &props(&[
                ("security.protocol", "SSL"),
                ("ssl.ca.pem", ca),
                ("ssl.endpoint.identification.algorithm", "none"),
            ]),
        );
        assert_eq!(c.commit(&commit(&[(0, 1)])).unwrap(), code::NONE);
    }

    /// Mutual TLS: the server requires a client certificate signed by its
    /// CA. Without one the connection is refused (naming the client
    /// certificate properties); with one from files, from PEM properties,
    /// with an encrypted key and ssl.key.password (PKCS#8 and the
    /// traditional format), it commits; a wrong ssl.key.password is refused
    /// naming the property and never printing it.
    #[test]
    fn mutual_tls_with_files_pem_properties_and_encrypted_keys() {
        let pki = Pki::new("mutual");
        let files = Files::new("mutual");
        let ca = leaked(files.put("ca.pem", &pki.ca.cert_pem()));
        let cert = leaked(files.put("client.pem", &pki.client.cert_pem()));
        let key = leaked(files.put("client.key", &pki.client.key_pem()));
        const KEY_PASSWORD: &str = "MARKER-key-password-5e21";
        let encrypted = leaked(files.put("client-enc.key", &pki.client.key_pem_encrypted(KEY_PASSWORD)));
        let legacy = leaked(files.put("client-legacy.key", &pki.client.key_pem_encrypted_legacy(KEY_PASSWORD)));
        let server = TestServer::start(Options { tls: Some(acceptor(&pki, true)), ..Options::default() });
        let base = [("security.protocol", "SSL"), ("ssl.ca.location", ca)];

        let e = conn(&server.bootstrap(), &props(&base)).commit(&commit(&[(0, 1)])).unwrap_err();
        let text = e.to_string();
        assert!(e.is_permanent(), "{text}");
        assert!(text.contains("ssl.certificate.location"), "without a client certificate: {text}");

        let cert_pem = leaked(pki.client.cert_pem());
        let key_pem = leaked(pki.client.key_pem());
        let enc_pem = leaked(pki.client.key_pem_encrypted(KEY_PASSWORD));
        let good: [&[(&str, &str)]; 5] = [
            &[("ssl.certificate.location", cert), ("ssl.key.location", key)],
            &[("ssl.certificate.location", cert), ("ssl.key.location", encrypted), ("ssl.key.password", KEY_PASSWORD)],
            &[("ssl.certificate.location", cert), ("ssl.key.location", legacy), ("ssl.key.password", KEY_PASSWORD)],
            &[("ssl.certificate.pem", cert_pem), ("ssl.key.pem", key_pem)],
            &[("ssl.certificate.pem", cert_pem), ("ssl.key.pem", enc_pem), ("ssl.key.password", KEY_PASSWORD)],
        ];
        for extra in good {
            let all: Vec<(&str, &str)> = base.iter().chain(extra).copied().collect();
            let mut c = conn(&server.bootstrap(), &props(&all));
            assert_eq!(
                c.commit(&commit(&[(0, 1)])).unwrap(),
                code::NONE,
                "{:?}",
                extra.iter().map(|p| p.0).collect::<Vec<_>>()
            );
        }

        for (key_prop, key_value) in [("ssl.key.location", encrypted), ("ssl.key.pem", enc_pem)] {
            for password in [None, Some("MARKER-wrong-key-password")] {
                let mut all = vec![base[0], base[1], ("ssl.certificate.location", cert), (key_prop, key_value)];
                all.extend(password.map(|p| ("ssl.key.password", p)));
                let e = match Security::from_properties(&props(&all)) {
                    Ok(_) => panic!("{key_prop} with {password:?} accepted"),
                    Err(e) => e,
                };
                assert!(e.contains(key_prop) && e.contains("ssl.key.password"), "{e}");
                assert!(!e.contains("MARKER") && !e.contains("PRIVATE KEY"), "{e}");
            }
        }
    }

    /// SASL over TLS: SCRAM on a TLS listener.
    #[test]
    fn sasl_ssl_authenticates_over_tls() {
        let pki = Pki::new("sasl-ssl");
        let ca_pem = leaked(pki.ca.cert_pem());
        let server = sasl_server(vec!["SCRAM-SHA-256"], Some(acceptor(&pki, false)));
        let mut all = sasl_props("SASL_SSL", "SCRAM-SHA-256", PASSWORD);
        all.push(("ssl.ca.pem", ca_pem));
        let mut c = conn(&server.bootstrap(), &props(&all));
        assert_eq!(c.commit(&commit(&[(0, 1)])).unwrap(), code::NONE);
        let mut all = sasl_props("SASL_SSL", "SCRAM-SHA-256", "MARKER-wrong");
        all.push(("ssl.ca.pem", ca_pem));
        let e = conn(&server.bootstrap(), &props(&all)).commit(&commit(&[(0, 1)])).unwrap_err();
        assert!(e.to_string().contains("SCRAM-SHA-256") && !format!("{e:?}").contains("MARKER"), "{e}");
    }
}
