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
            match exchange.next(&answer.auth_bytes).map_err(|e| fail(e.to_string()))? {
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
#[path = "wire_tests.rs"]
mod tests;
