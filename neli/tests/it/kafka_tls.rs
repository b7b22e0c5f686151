//! TLS (and SASL over TLS) against a real broker: tansu behind the
//! TLS-terminating proxy of `tls.rs`, with a CA made at test time.
//!
//! What these prove: an election over `security.protocol=SSL` elects a
//! leader and fails over after SIGKILL, with the client properties passed
//! the three documented ways (`-X` as in `neli exec --help`, `-X @FILE` with
//! the file from neli/KAFKA.md, `NELI_KAFKA_*` variables); a client that
//! trusts the wrong CA is refused at once with librdkafka's certificate
//! failure in the message; mutual TLS works and a client without a
//! certificate is refused; SCRAM over TLS authenticates on tansu and a wrong
//! password is refused. Without tansu these skip with a NOTICE; under
//! `CI=true` they fail (see `kafka_tansu::tansu_bin`).

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::kafka_tansu::{CMD, Reap, S, T, formation, tempdir};
use crate::tls::{self, ClientAuth, path};

// Deadlines: `formation()` and `takeover()` of the tansu tests (S, T,
// tansu's rebalance pause and a retry per join, doubled for a loaded
// machine, plus the measured scheduling delay); every wait says what it
// waited for when it runs out.

/// The properties file shown in neli/KAFKA.md whose first line is `first`,
/// with the documented paths replaced by this test's files.
pub(crate) fn kafka_md_properties(first: &str, replace: &[(&str, String)]) -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("KAFKA.md")).expect("read KAFKA.md");
    let start = doc.find(first).unwrap_or_else(|| panic!("neli/KAFKA.md no longer shows a block starting '{first}'"));
    let block = &doc[start..];
    let mut text = block[..block.find("```").expect("the block ends")].to_owned();
    for (from, to) in replace {
        assert!(text.contains(from), "the KAFKA.md block '{first}' no longer mentions {from}");
        text = text.replace(from, to);
    }
    text
}

/// `neli exec` running the tick-writing CMD of `kafka_tansu`, with `args`
/// before `--` and `env` added.
fn exec(bootstrap: &str, group: &str, file: &Path, args: &[String], env: &[(String, String)]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_neli"))
        .args(["exec", "--bootstrap-servers", bootstrap, "--group", group, "--heartbeat-timeout", T])
        .args(["--session-timeout", &format!("{}ms", S.as_millis()), "--stop-timeout", "2s"])
        .args(args)
        .envs(env.iter().cloned())
        .args(["--", "sh", "-c", CMD, "cmd"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn neli exec")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn election_over_tls_acquires_and_fails_over_after_sigkill() {
    let Some(tls) = tls::start("failover", ClientAuth::None, &[]) else { return };
    let dir = tempdir::Dir::new("tls-failover");
    let file = dir.0.join("leader.log");
    std::fs::write(&file, "").unwrap();
    let group = format!("tls-failover-{}", std::process::id());
    let ca = path(&tls.files.ca);
    // As `neli exec --help` shows it.
    let cli_args =
        ["-X".to_owned(), "security.protocol=SSL".to_owned(), "-X".to_owned(), format!("ssl.ca.location={ca}")];
    // As neli/KAFKA.md shows it: a properties file.
    let props = dir.0.join("kafka.properties");
    std::fs::write(&props, kafka_md_properties("# /etc/neli/kafka.properties", &[("/etc/neli/ca.pem", ca.clone())]))
        .unwrap();
    let file_args = ["-X".to_owned(), format!("@{}", props.display())];
    // And from the environment.
    let env = [
        ("NELI_KAFKA_SECURITY_PROTOCOL".to_owned(), "SSL".to_owned()),
        ("NELI_KAFKA_SSL_CA_LOCATION".to_owned(), ca.clone()),
    ];
    let _members = Reap(vec![
        exec(&tls.bootstrap, &group, &file, &cli_args, &[]),
        exec(&tls.bootstrap, &group, &file, &file_args, &[]),
        exec(&tls.bootstrap, &group, &file, &[], &env),
    ]);
    crate::kafka_tansu::sigkill_the_leader_and_expect_one_takeover(&file);
}

/// Many roles over TLS: the SIGKILL story of `kafka_roles`.
#[test]
fn multi_role_election_over_tls_moves_exactly_the_killed_members_roles() {
    let Some(tls) = tls::start("roles", ClientAuth::None, &[]) else { return };
    let dir = tempdir::Dir::new("tls-roles");
    let file = dir.0.join("roles.log");
    std::fs::write(&file, "").unwrap();
    let group = format!("tls-roles-{}", std::process::id());
    let args = [
        "-X".to_owned(),
        "security.protocol=SSL".to_owned(),
        "-X".to_owned(),
        format!("ssl.ca.location={}", path(&tls.files.ca)),
    ];
    let _members =
        Reap((0..3).map(|_| crate::kafka_roles::spawn_member(&tls.bootstrap, &group, &file, 4, &args)).collect());
    crate::kafka_roles::sigkill_moves_exactly_the_killed_members_roles(&file, 4, crate::kafka_roles::On::Tansu, 3);
}

#[test]
fn client_trusting_the_wrong_ca_is_refused_at_once_with_the_certificate_failure() {
    let Some(tls) = tls::start("wrongca", ClientAuth::None, &[]) else { return };
    let connect_timeout = Duration::from_secs(30);
    let wrong_ca = path(&tls.files.wrong_ca);

    // The library: the connect error carries librdkafka's TLS failure.
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let cfg = neli::Config::builder()
        .bootstrap_servers(&tls.bootstrap)
        .group("wrongca")
        .heartbeat_timeout(Duration::from_secs(1))
        .session_timeout(Duration::from_secs(3))
        .kafka("security.protocol", "SSL")
        .kafka("ssl.ca.location", &wrong_ca)
        .build()
        .unwrap();
    let started = Instant::now();
    let result = rt.block_on(neli::kafka::KafkaBroker::with_connect_timeout(&cfg, connect_timeout));
    let took = started.elapsed();
    let err = result.err().expect("a client trusting another CA must not connect").to_string();
    assert!(err.contains("certificate verify failed"), "the error says why: {err}");
    assert!(err.contains(&format!("cannot connect securely to the Kafka cluster at '{}'", tls.bootstrap)), "{err}");
    assert!(took < connect_timeout / 3, "refused at once, not after the connect timeout ({took:?}): {err}");
    eprintln!("wrong CA: the library refused after {took:?}");

    // The CLI: exit 2, the reason on stderr, also at once.
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_neli"))
        .args(["exec", "--bootstrap-servers", &tls.bootstrap, "--group", "wrongca", "--connect-timeout", "30s"])
        .args(["-X", "security.protocol=SSL", "-X", &format!("ssl.ca.location={wrong_ca}"), "--", "true"])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("certificate verify failed"), "{}", stderr(&out));
    assert!(took < connect_timeout / 3, "refused at once ({took:?}): {}", stderr(&out));
    eprintln!("wrong CA: neli exec exited 2 after {took:?}");
}

#[test]
fn mutual_tls_member_with_a_client_certificate_leads_and_one_without_is_refused() {
    let Some(tls) = tls::start("mtls", ClientAuth::Required, &[]) else { return };
    let props = kafka_md_properties(
        "# /etc/neli/mtls.properties",
        &[
            ("/etc/neli/ca.pem", path(&tls.files.ca)),
            ("/etc/neli/client.pem", path(&tls.files.client_cert)),
            ("/etc/neli/client.key", path(&tls.files.client_key)),
        ],
    );
    let props = neli::properties::parse_properties("mtls.properties", &props).expect("the KAFKA.md block parses");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let config = |props: &[(String, String)]| {
            let mut b = neli::Config::builder()
                .bootstrap_servers(&tls.bootstrap)
                .group("mtls")
                .name("m0")
                .heartbeat_timeout(Duration::from_secs(1))
                .session_timeout(Duration::from_secs(3))
                .min_poll_interval(Duration::from_millis(20));
            for (k, v) in props {
                b = b.kafka(k, v);
            }
            b.build().unwrap()
        };
        let mut member = crate::support::start_member(&config(&props)).await;
        assert!(
            crate::support::wait_for(formation(), || member.is_leader()).await,
            "a member presenting a client certificate leads within {:?}",
            formation()
        );
        // Without the client certificate the proxy ends the handshake.
        let no_cert: Vec<(String, String)> = props
            .iter()
            .filter(|(k, _)| !k.starts_with("ssl.certificate") && !k.starts_with("ssl.key"))
            .cloned()
            .collect();
        // With TLS 1.3 the broker's refusal comes as an alert after the
        // client's handshake; it still ends the connect at once.
        let connect_timeout = Duration::from_secs(30);
        let started = Instant::now();
        let refused = neli::kafka::KafkaBroker::with_connect_timeout(&config(&no_cert), connect_timeout).await;
        let took = started.elapsed();
        let err = refused.err().expect("no client certificate, no connection").to_string();
        assert!(err.contains("alert certificate required"), "the error names the missing certificate: {err}");
        assert!(err.contains("cannot connect securely"), "{err}");
        assert!(took < connect_timeout / 3, "refused at once ({took:?}): {err}");
        eprintln!("mutual TLS: a client without a certificate was refused after {took:?}");
        if let Some(bg) = member.bg.take() {
            let _ = bg.close().await;
        }
    });
}

/// SASL/SCRAM over TLS on tansu, configured as neli/KAFKA.md shows (the
/// properties file, the password in `NELI_KAFKA_SASL_PASSWORD`). What tansu
/// 0.6.0 allows testing: with `--authentication` it offers SCRAM-SHA-256/512
/// and runs the SCRAM exchange, but it refuses every unauthenticated request,
/// including `tansu user create`, and its memory storage starts empty, so no
/// user can exist; without `--authentication` it answers every SaslHandshake
/// with "unsupported mechanism". So this proves the client side up to the
/// broker's verdict (TLS handshake, SCRAM negotiated, the exchange answered
/// with "unknown-user"), that the refusal is immediate and names the SASL
/// failure, and that the password is not printed. A successful SCRAM login
/// is not tested against any broker (the librdkafka mock has no SASL).
#[test]
fn scram_over_tls_reaches_the_brokers_verdict_and_a_refusal_is_immediate() {
    let Some(tls) = tls::start("scram", ClientAuth::None, &["--authentication"]) else { return };
    let password = "billing-pw-5d1e";
    let dir = tempdir::Dir::new("tls-scram");
    let props = dir.0.join("scram.properties");
    let text = kafka_md_properties("# /etc/neli/scram.properties", &[("/etc/neli/ca.pem", path(&tls.files.ca))]);
    std::fs::write(&props, text).unwrap();
    for mechanism in ["SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_neli"))
            .args(["exec", "--bootstrap-servers", &tls.bootstrap, "--group", "scram", "--connect-timeout", "30s"])
            .args(["--heartbeat-timeout", "1s", "--session-timeout", "3s", "-X"])
            .arg(format!("@{}", props.display()))
            .args(["-X", &format!("sasl.mechanism={mechanism}")])
            .env("NELI_KAFKA_SASL_PASSWORD", password)
            .env("RUST_LOG", "trace")
            .args(["--", "true"])
            .output()
            .unwrap();
        let took = started.elapsed();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{mechanism}: {err}");
        assert!(err.contains("cannot connect securely"), "{mechanism}: the refusal is named: {err}");
        assert!(
            err.contains("SASL SCRAM authentication failed: broker responded with unknown-user"),
            "{mechanism} was negotiated over TLS and the exchange reached the broker's verdict: {err}"
        );
        assert!(!err.contains(password), "{mechanism}: the password is never printed: {err}");
        assert!(took < Duration::from_secs(10), "{mechanism}: refused at once, not after the 30 s timeout ({took:?})");
        eprintln!("{mechanism}: refused after {took:?}");
    }
}

/// The support table of neli/KAFKA.md ("TLS and SASL"): librdkafka refuses a
/// `builtin.features` value naming a feature the build lacks, so asking for
/// the features decides what this build has, without any broker.
#[test]
fn build_has_tls_and_sasl_but_not_gssapi_or_oidc() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let connect = |features: &str| {
        let cfg = neli::Config::builder()
            .bootstrap_servers("127.0.0.1:1")
            .group("features")
            .kafka("builtin.features", features)
            .build()
            .unwrap();
        let result = rt.block_on(neli::kafka::KafkaBroker::with_connect_timeout(&cfg, Duration::from_millis(300)));
        result.err().expect("nothing listens on port 1").to_string()
    };
    let has = connect("ssl,sasl_plain,sasl_scram,sasl_oauthbearer");
    assert!(has.contains("cannot reach the Kafka cluster"), "TLS, PLAIN, SCRAM and OAUTHBEARER are built in: {has}");
    for missing in ["sasl_gssapi", "http", "oidc"] {
        let err = connect(missing);
        assert!(err.contains("builtin.features") && err.contains(missing), "{missing} is not built in: {err}");
    }
}
