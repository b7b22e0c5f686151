//! The proof connection against the test server (TLS, SASL, protocol
//! versions, refusals) and librdkafka's mock cluster.

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
    assert_eq!(conn.commit(&commit(&[(0, 5)])).unwrap(), rdkafka::error::RDKafkaErrorCode::RebalanceInProgress as i16);
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
        &props(&[("security.protocol", "SSL"), ("ssl.ca.pem", ca), ("ssl.endpoint.identification.algorithm", "none")]),
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
                Err(e) => e.to_string(),
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
