//! A small Kafka-protocol server for the proof connection's tests: it
//! speaks ApiVersions, SaslHandshake/SaslAuthenticate (PLAIN and
//! SCRAM-SHA-256/512, checked like Kafka checks them), FindCoordinator
//! (itself) and OffsetCommit (accepted), over plaintext or TLS (optionally
//! requiring a client certificate). No broker here can create SASL users,
//! and the librdkafka mock has no SASL handlers. Test code only.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::offset_commit_response::{OffsetCommitResponsePartition, OffsetCommitResponseTopic};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, BrokerId, FindCoordinatorRequest, FindCoordinatorResponse, OffsetCommitRequest,
    OffsetCommitResponse, ResponseHeader, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes, decode_request_header_from_buffer};
use openssl::ssl::{SslAcceptor, SslStream};

use super::sasl::ScramHash;
use super::sasl::server::Credential;
use crate::kafka::wire::code;

const SASL_AUTHENTICATION_FAILED: i16 = 58;
const ILLEGAL_SASL_STATE: i16 = 34;

/// What the server speaks and whom it lets in.
#[derive(Clone)]
pub(crate) struct Options {
    /// (api, min, max) it advertises; ApiVersions above its max is answered
    /// UNSUPPORTED_VERSION, as Kafka does.
    pub apis: Vec<(ApiKey, i16, i16)>,
    /// Mechanisms SaslHandshake accepts; empty: no SASL (requests are
    /// served unauthenticated).
    pub mechanisms: Vec<&'static str>,
    /// user → password.
    pub users: Vec<(String, String)>,
    /// TLS, if set.
    pub tls: Option<SslAcceptor>,
    /// Answer OffsetCommit with these bytes after the header.
    pub garbage_commits: Option<Vec<u8>>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            apis: vec![
                (ApiKey::ApiVersions, 0, 4),
                (ApiKey::FindCoordinator, 0, 6),
                (ApiKey::OffsetCommit, 2, 9),
                (ApiKey::SaslHandshake, 0, 1),
                (ApiKey::SaslAuthenticate, 0, 2),
            ],
            mechanisms: Vec::new(),
            users: Vec::new(),
            tls: None,
            garbage_commits: None,
        }
    }
}

/// One request the server read: (api, version, authenticated?).
pub(crate) type Seen = (ApiKey, i16, bool);

pub(crate) struct TestServer {
    pub(crate) port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    pub(crate) fn start(options: Options) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen2, stop2) = (seen.clone(), stop.clone());
        let options = Arc::new(options);
        thread::spawn(move || {
            for tcp in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(tcp) = tcp else { continue };
                let (options, seen) = (options.clone(), seen2.clone());
                thread::spawn(move || serve(tcp, port, &options, &seen));
            }
        });
        TestServer { port, seen, stop }
    }

    pub(crate) fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

enum Io {
    Plain(TcpStream),
    Tls(Box<SslStream<TcpStream>>),
}

impl Io {
    fn stream(&mut self) -> &mut dyn ReadWrite {
        match self {
            Io::Plain(s) => s,
            Io::Tls(s) => s.as_mut(),
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// Per connection: where the SASL exchange stands.
enum Sasl {
    /// No handshake yet (or SASL off).
    None,
    Mechanism(&'static str),
    /// SCRAM after the client-first: (hash, credential, client-first-bare, server-first).
    ScramFinal(Box<(Credential, String, String)>),
    Done,
}

/// Serves one connection until the client closes it or a request calls for
/// closing it (as Kafka would: a bad frame, a failed authentication, a
/// request before authentication).
fn serve(tcp: TcpStream, port: u16, options: &Options, seen: &Mutex<Vec<Seen>>) {
    tcp.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let mut io = match &options.tls {
        None => Io::Plain(tcp),
        Some(acceptor) => match acceptor.accept(tcp) {
            Ok(s) => Io::Tls(Box::new(s)),
            Err(_) => return,
        },
    };
    let sasl_on = !options.mechanisms.is_empty();
    let mut sasl = Sasl::None;
    loop {
        let Some(mut buf) = read_frame(&mut io) else { return };
        let Ok(header) = decode_request_header_from_buffer(&mut buf) else { return };
        let Ok(api) = ApiKey::try_from(header.request_api_key) else { return };
        let v = header.request_api_version;
        let authenticated = matches!(sasl, Sasl::Done);
        seen.lock().unwrap().push((api, v, authenticated));
        let mut out = BytesMut::new();
        let to = Reply { api, correlation: header.correlation_id, v };
        let written = match api {
            ApiKey::ApiVersions => api_versions(&mut out, to, options),
            ApiKey::SaslHandshake => {
                let Some(written) = sasl_handshake(&mut out, to, &mut buf, options, &mut sasl) else { return };
                written
            }
            ApiKey::SaslAuthenticate => {
                let Ok(req) = SaslAuthenticateRequest::decode(&mut buf, v) else { return };
                if !sasl_authenticate(&mut out, to, &req, options, &mut sasl) {
                    // Kafka closes the connection after a failed authentication.
                    let _ = io.stream().write_all(&out);
                    return;
                }
                Ok(())
            }
            // Kafka closes a connection that skips authentication.
            _ if sasl_on && !authenticated => return,
            ApiKey::FindCoordinator => {
                let Ok(req) = FindCoordinatorRequest::decode(&mut buf, v) else { return };
                find_coordinator(&mut out, to, req, port)
            }
            ApiKey::OffsetCommit => {
                let Ok(req) = OffsetCommitRequest::decode(&mut buf, v) else { return };
                offset_commit(&mut out, to, req, options)
            }
            _ => return,
        };
        if written.is_err() || io.stream().write_all(&out).is_err() {
            return;
        }
    }
}

/// Whom an answer goes to: the request's API, correlation id and version.
#[derive(Clone, Copy)]
struct Reply {
    api: ApiKey,
    correlation: i32,
    v: i16,
}

impl Reply {
    fn send<R: Encodable>(self, out: &mut BytesMut, r: &R) -> Result<(), String> {
        respond(out, self.api, self.correlation, self.v, r)
    }
}

/// One size-prefixed request frame, or `None` when the connection ended or
/// the frame is too short to hold a header.
fn read_frame(io: &mut Io) -> Option<Bytes> {
    let mut size = [0u8; 4];
    io.stream().read_exact(&mut size).ok()?;
    let mut frame = vec![0u8; i32::from_be_bytes(size).clamp(0, 1 << 20) as usize];
    if frame.len() < 8 || io.stream().read_exact(&mut frame).is_err() {
        return None;
    }
    Some(Bytes::from(frame))
}

/// The ApiVersions answer: the configured ranges, or Kafka's v0 error body
/// for a version above what the server speaks.
fn api_versions(out: &mut BytesMut, to: Reply, options: &Options) -> Result<(), String> {
    let range = options.apis.iter().find(|(a, _, _)| *a == to.api).map(|&(_, min, max)| (min, max));
    let (_, max) = range.unwrap_or((0, 0));
    let keys = options
        .apis
        .iter()
        .map(|&(a, min, max)| ApiVersion::default().with_api_key(a as i16).with_min_version(min).with_max_version(max))
        .collect();
    if to.v > max {
        // Kafka's answer to a version it does not know: the v0 body.
        let r = ApiVersionsResponse::default().with_error_code(code::UNSUPPORTED_VERSION).with_api_keys(keys);
        Reply { v: 0, ..to }.send(out, &r)
    } else {
        to.send(out, &ApiVersionsResponse::default().with_api_keys(keys))
    }
}

/// The SaslHandshake answer (the mechanisms offered), choosing the
/// mechanism; `None` closes the connection (an undecodable request).
fn sasl_handshake(
    out: &mut BytesMut,
    to: Reply,
    buf: &mut Bytes,
    options: &Options,
    sasl: &mut Sasl,
) -> Option<Result<(), String>> {
    let req = SaslHandshakeRequest::decode(buf, to.v).ok()?;
    let offered: Vec<StrBytes> = options.mechanisms.iter().map(|m| StrBytes::from_static_str(m)).collect();
    let r = SaslHandshakeResponse::default().with_mechanisms(offered);
    Some(match options.mechanisms.iter().find(|m| **m == req.mechanism.as_str()) {
        Some(m) if matches!(sasl, Sasl::None) => {
            *sasl = Sasl::Mechanism(m);
            to.send(out, &r)
        }
        Some(_) => to.send(out, &r.with_error_code(ILLEGAL_SASL_STATE)),
        None => to.send(out, &r.with_error_code(code::UNSUPPORTED_SASL_MECHANISM)),
    })
}

/// Answers one SaslAuthenticate token and moves the exchange on; false when
/// the authentication failed (the answer is in `out` all the same).
fn sasl_authenticate(
    out: &mut BytesMut,
    to: Reply,
    req: &SaslAuthenticateRequest,
    options: &Options,
    sasl: &mut Sasl,
) -> bool {
    let (next, answer) = authenticate(std::mem::replace(sasl, Sasl::None), &req.auth_bytes, options);
    *sasl = next;
    let r = match answer {
        Ok(bytes) => SaslAuthenticateResponse::default().with_auth_bytes(Bytes::from(bytes)),
        Err(why) => SaslAuthenticateResponse::default()
            .with_error_code(SASL_AUTHENTICATION_FAILED)
            .with_error_message(Some(StrBytes::from_string(why))),
    };
    let failed = r.error_code != 0;
    let _ = to.send(out, &r);
    !failed
}

/// The FindCoordinator answer: this server, node 1, for every key.
fn find_coordinator(out: &mut BytesMut, to: Reply, req: FindCoordinatorRequest, port: u16) -> Result<(), String> {
    let host = StrBytes::from_static_str("127.0.0.1");
    let r = FindCoordinatorResponse::default();
    let r = if to.v >= 4 {
        r.with_coordinators(
            req.coordinator_keys
                .into_iter()
                .map(|k| {
                    Coordinator::default()
                        .with_key(k)
                        .with_node_id(BrokerId(1))
                        .with_host(host.clone())
                        .with_port(i32::from(port))
                })
                .collect(),
        )
    } else {
        r.with_node_id(BrokerId(1)).with_host(host).with_port(i32::from(port))
    };
    to.send(out, &r)
}

/// The OffsetCommit answer: every partition accepted, or the configured
/// garbage after a valid header.
fn offset_commit(out: &mut BytesMut, to: Reply, req: OffsetCommitRequest, options: &Options) -> Result<(), String> {
    if let Some(garbage) = &options.garbage_commits {
        out.extend_from_slice(&[0; 4]);
        let _ = ResponseHeader::default()
            .with_correlation_id(to.correlation)
            .encode(out, to.api.response_header_version(to.v));
        out.extend_from_slice(garbage);
        let size = (out.len() - 4) as i32;
        out[..4].copy_from_slice(&size.to_be_bytes());
        return Ok(());
    }
    let topics = req
        .topics
        .into_iter()
        .map(|t| {
            OffsetCommitResponseTopic::default().with_name(t.name).with_partitions(
                t.partitions
                    .into_iter()
                    .map(|p| OffsetCommitResponsePartition::default().with_partition_index(p.partition_index))
                    .collect(),
            )
        })
        .collect();
    to.send(out, &OffsetCommitResponse::default().with_topics(topics))
}

/// The next SASL state and the answer to one SaslAuthenticate token.
fn authenticate(state: Sasl, token: &[u8], options: &Options) -> (Sasl, Result<Vec<u8>, String>) {
    let password_of = |user: &str| options.users.iter().find(|(u, _)| u == user).map(|(_, p)| p.clone());
    match state {
        Sasl::Mechanism("PLAIN") => {
            let parts: Vec<&[u8]> = token.split(|b| *b == 0).collect();
            let [_, user, password] = parts.as_slice() else {
                return (Sasl::None, Err("Invalid PLAIN token".into()));
            };
            let user = String::from_utf8_lossy(user);
            match password_of(&user) {
                Some(p) if p.as_bytes() == *password => (Sasl::Done, Ok(Vec::new())),
                _ => (Sasl::None, Err("Authentication failed: Invalid username or password".into())),
            }
        }
        Sasl::Mechanism(m @ ("SCRAM-SHA-256" | "SCRAM-SHA-512")) => {
            let hash = if m == "SCRAM-SHA-256" { ScramHash::Sha256 } else { ScramHash::Sha512 };
            let first = String::from_utf8_lossy(token).into_owned();
            let user = first
                .strip_prefix("n,,n=")
                .and_then(|r| r.split(',').next())
                .map(|u| u.replace("=2C", ",").replace("=3D", "="));
            let Some(password) = user.as_deref().and_then(password_of) else {
                return (
                    Sasl::None,
                    Err("Authentication failed during authentication due to invalid credentials with SASL mechanism"
                        .into()),
                );
            };
            let credential = Credential::new(hash, &password, b"test-server-salt", 4096);
            match credential.server_first(&first, "server-nonce-part") {
                Ok((bare, server_first)) => {
                    let answer = server_first.clone().into_bytes();
                    (Sasl::ScramFinal(Box::new((credential, bare, server_first))), Ok(answer))
                }
                Err(e) => (Sasl::None, Err(e)),
            }
        }
        Sasl::ScramFinal(state) => {
            let (credential, bare, server_first) = *state;
            match credential.verify(&bare, &server_first, &String::from_utf8_lossy(token)) {
                Ok(v) => (Sasl::Done, Ok(v.into_bytes())),
                Err(_) => (
                    Sasl::None,
                    Err("Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM"
                        .into()),
                ),
            }
        }
        _ => (Sasl::None, Err("Unexpected SaslAuthenticate".into())),
    }
}

fn respond<R: Encodable>(out: &mut BytesMut, api: ApiKey, correlation: i32, v: i16, r: &R) -> Result<(), String> {
    out.extend_from_slice(&[0; 4]);
    ResponseHeader::default()
        .with_correlation_id(correlation)
        .encode(out, api.response_header_version(v))
        .and_then(|()| r.encode(out, v))
        .map_err(|e| e.to_string())?;
    let size = (out.len() - 4) as i32;
    out[..4].copy_from_slice(&size.to_be_bytes());
    Ok(())
}

/// Test certificates made with OpenSSL at test time: a CA, a server
/// certificate for 127.0.0.1/localhost and a client certificate, both
/// signed by the CA, with their keys (the client's also encrypted).
pub(crate) mod certs {
    use openssl::asn1::Asn1Time;
    use openssl::bn::BigNum;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::hash::MessageDigest;
    use openssl::nid::Nid;
    use openssl::pkey::{PKey, Private};
    use openssl::rsa::Rsa;
    use openssl::symm::Cipher;
    use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName};
    use openssl::x509::{X509, X509NameBuilder};

    pub(crate) struct Issued {
        pub cert: X509,
        pub key: PKey<Private>,
    }

    impl Issued {
        pub(crate) fn cert_pem(&self) -> String {
            String::from_utf8(self.cert.to_pem().unwrap()).unwrap()
        }
        pub(crate) fn key_pem(&self) -> String {
            String::from_utf8(self.key.private_key_to_pem_pkcs8().unwrap()).unwrap()
        }
        /// PKCS#8, PBES2 with AES-256-CBC (OpenSSL 3's default).
        pub(crate) fn key_pem_encrypted(&self, password: &str) -> String {
            let pem = self.key.private_key_to_pem_pkcs8_passphrase(Cipher::aes_256_cbc(), password.as_bytes()).unwrap();
            String::from_utf8(pem).unwrap()
        }
        /// The traditional format with a `Proc-Type: 4,ENCRYPTED` header.
        pub(crate) fn key_pem_encrypted_legacy(&self, password: &str) -> String {
            let rsa = self.key.rsa().expect("an RSA key");
            let pem = rsa.private_key_to_pem_passphrase(Cipher::aes_128_cbc(), password.as_bytes()).unwrap();
            String::from_utf8(pem).unwrap()
        }
    }

    fn ec_key() -> PKey<Private> {
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        PKey::from_ec_key(EcKey::generate(&group).unwrap()).unwrap()
    }

    /// A server certificate signed by `ca` that names only `dns`.
    pub(crate) fn issue_for(dns: &str, ca: &Issued) -> Issued {
        issue(dns, ec_key(), Some(ca), false, 4, Some(dns))
    }

    fn issue(
        cn: &str,
        key: PKey<Private>,
        issuer: Option<&Issued>,
        ca: bool,
        serial: u32,
        dns: Option<&str>,
    ) -> Issued {
        let mut name = X509NameBuilder::new().unwrap();
        name.append_entry_by_text("CN", cn).unwrap();
        let name = name.build();
        let mut b = X509::builder().unwrap();
        b.set_version(2).unwrap();
        b.set_serial_number(&BigNum::from_u32(serial).unwrap().to_asn1_integer().unwrap()).unwrap();
        b.set_subject_name(&name).unwrap();
        b.set_issuer_name(issuer.map_or(&name, |i| i.cert.subject_name())).unwrap();
        b.set_pubkey(&key).unwrap();
        b.set_not_before(&Asn1Time::days_from_now(0).unwrap()).unwrap();
        b.set_not_after(&Asn1Time::days_from_now(2).unwrap()).unwrap();
        if ca {
            b.append_extension(BasicConstraints::new().critical().ca().build().unwrap()).unwrap();
        } else {
            let mut san = SubjectAlternativeName::new();
            match dns {
                Some(name) => san.dns(name),
                None => san.ip("127.0.0.1").dns("localhost"),
            };
            let san = san.build(&b.x509v3_context(issuer.map(|i| i.cert.as_ref()), None)).unwrap();
            b.append_extension(san).unwrap();
        }
        b.sign(issuer.map_or(&key, |i| &i.key), MessageDigest::sha256()).unwrap();
        Issued { cert: b.build(), key }
    }

    pub(crate) struct Pki {
        pub ca: Issued,
        pub server: Issued,
        /// RSA, so the legacy encrypted format can be written too.
        pub client: Issued,
    }

    impl Pki {
        pub(crate) fn new(name: &str) -> Pki {
            let ca = issue(&format!("{name} test CA"), ec_key(), None, true, 1, None);
            let server = issue("127.0.0.1", ec_key(), Some(&ca), false, 2, None);
            let client_key = PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap();
            let client = issue("neli-test-client", client_key, Some(&ca), false, 3, None);
            Pki { ca, server, client }
        }
    }
}

/// A TLS acceptor for the server certificate of `pki`, asking for (and
/// then requiring) a client certificate signed by its CA when `mutual`.
pub(crate) fn acceptor(pki: &certs::Pki, mutual: bool) -> SslAcceptor {
    use openssl::ssl::{SslMethod, SslVerifyMode};
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).unwrap();
    b.set_certificate(&pki.server.cert).unwrap();
    b.set_private_key(&pki.server.key).unwrap();
    b.cert_store_mut().add_cert(pki.ca.cert.clone()).unwrap();
    if mutual {
        b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    }
    b.build()
}

/// Properties as a client would give them.
pub(crate) fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}
