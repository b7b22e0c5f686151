//! A marker secret under every secret-looking property name never appears in
//! anything neli prints: `Debug`, library errors, the `neli` CLI's stderr
//! with `RUST_LOG=trace` and librdkafka's own debug logging on, or `neli
//! watch` output. librdkafka echoes "key value" when it rejects a property
//! (unknown, misspelt, Java-only), so the rejected names matter most.

use std::process::{Command, Stdio};
use std::time::Duration;

use neli::kafka::mock::MockKafka;

use crate::support::{Signal, signal};

const MARKER: &str = "MARKER-7f3a9c-do-not-print";

/// Every property name the secret must be safe under: librdkafka's
/// sensitive properties, Java-client names librdkafka rejects, misspellings
/// and made-up names that look secret.
const SECRET_NAMES: &[&str] = &[
    "sasl.password",
    "sasl.passwrod",
    "sasl.pasword",
    "sasl.secert",
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.key.pem",
    "ssl_key",
    "sasl.jaas.config",
    "sasl.oauthbearer.config",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.assertion.private.key.pem",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "my.api.secret",
    "custom.password",
    "vault.token",
];

/// The marker as a value; PEM-shaped for the PEM properties.
fn marker_value(name: &str) -> String {
    if name.ends_with(".pem") {
        format!("-----BEGIN PRIVATE KEY-----\n{MARKER}\n-----END PRIVATE KEY-----\n")
    } else {
        MARKER.to_owned()
    }
}

/// A child whose stdout and stderr are drained on their own threads, so a
/// chatty run never blocks on a full pipe.
struct Drained {
    child: std::process::Child,
    out: std::thread::JoinHandle<String>,
    err: std::thread::JoinHandle<String>,
}

fn spawn_drained(cmd: &mut Command) -> Drained {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn neli");
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    Drained { child, out, err }
}

impl Drained {
    /// SIGTERM (neli then stops cleanly) and the exit code, stdout, stderr.
    fn stop(self) -> (Option<i32>, String, String) {
        signal(self.child.id(), Signal::TERM);
        self.finish()
    }

    fn finish(mut self) -> (Option<i32>, String, String) {
        let status = self.child.wait().expect("wait").code();
        (status, self.out.join().expect("stdout thread"), self.err.join().expect("stderr thread"))
    }
}

/// Runs `cmd` for at most `limit`, then SIGTERM: the text must be clean
/// whether or not the run finished by itself. Returns the exit code and
/// stdout + stderr.
fn run_bounded(cmd: &mut Command, limit: Duration) -> (Option<i32>, String) {
    let mut run = spawn_drained(cmd);
    let deadline = std::time::Instant::now() + limit;
    while run.child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() >= deadline {
            let (status, out, err) = run.stop();
            return (status, out + &err);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, out, err) = run.finish();
    (status, out + &err)
}

fn assert_no_marker(what: &str, text: &str) {
    assert!(!text.contains(MARKER) && !text.contains("7f3a9c"), "{what} printed the secret:\n{text}");
}

#[test]
fn debug_never_shows_a_secret_under_any_secret_looking_name() {
    for name in SECRET_NAMES {
        assert!(neli::secrets::is_secret_key(name), "{name} counts as secret");
        let builder =
            neli::Config::builder().bootstrap_servers("127.0.0.1:1").group("g").kafka(*name, marker_value(name));
        assert_no_marker(&format!("Debug of ConfigBuilder with {name}"), &format!("{builder:?}"));
        let cfg = builder.build().expect("a secret property is not a config error");
        assert_no_marker(&format!("Debug of Config with {name}"), &format!("{cfg:?}"));
        assert_no_marker(&format!("Debug of ResolvedConfig with {name}"), &format!("{:?}", cfg.resolve().unwrap()));
    }
}

#[test]
fn library_errors_never_show_a_secret() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    for name in SECRET_NAMES {
        let cfg = neli::Config::builder()
            .bootstrap_servers("127.0.0.1:1")
            .group("g")
            .kafka(*name, marker_value(name))
            .build()
            .unwrap();
        // Rejected properties fail at once with librdkafka's echo; accepted
        // ones fail to reach port 1. Either way the text must be clean.
        let result = rt.block_on(neli::kafka::KafkaBroker::with_connect_timeout(&cfg, Duration::from_millis(300)));
        let err = result.err().unwrap_or_else(|| panic!("nothing listens on port 1 ({name})"));
        assert_no_marker(&format!("the error with {name}"), &format!("{err} / {err:?}"));
        let ended = rt.block_on(neli::kafka::end_election(&cfg, Duration::from_millis(300)));
        assert_no_marker(&format!("end_election's error with {name}"), &format!("{ended:?}"));
    }
}

/// The CLI with `RUST_LOG=trace` and librdkafka's debug log on, against the
/// mock cluster: every secret name in its own run (a rejected property
/// stops the run before the others reach librdkafka), all runs at once.
#[test]
fn cli_stderr_at_trace_level_never_shows_a_secret() {
    let mock = MockKafka::start(1).expect("mock cluster");
    let bootstrap = mock.bootstrap_servers();
    let runs: Vec<_> = SECRET_NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let group = format!("secret{i}");
            mock.create_topic(&format!("{group}.neli"), 1).expect("topic");
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_neli"));
            cmd.args(["exec", "--bootstrap-servers", &bootstrap, "--group", &group, "--connect-timeout", "5s"])
                .args(["--heartbeat-timeout", "1s", "--session-timeout", "3s"])
                .args(["-X", "log_level=7", "-X", "debug=broker,security,conf,generic"])
                .arg("-X")
                .arg(format!("{name}={}", marker_value(name)))
                .args(["--", "true"])
                .env("RUST_LOG", "trace");
            // Accepted properties lead and exit once CMD (`true`) is done;
            // the bound only keeps a run whose group never forms from hanging.
            (*name, std::thread::spawn(move || run_bounded(&mut cmd, Duration::from_secs(30))))
        })
        .collect();
    for (name, run) in runs {
        let (status, text) = run.join().expect("run thread");
        assert_no_marker(&format!("neli exec -X {name}=… (exit {status:?})"), &text);
        assert!(!text.is_empty(), "trace logging printed something for {name}");
    }
}

/// The same secret through a properties file and the environment, and a
/// malformed properties line holding it: the error names file and line only.
#[test]
fn cli_secret_from_file_or_environment_and_malformed_lines_are_never_shown() {
    let dir = std::env::temp_dir().join(format!("neli-it-secret-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.properties");
    std::fs::write(&bad, format!("security.protocol=SASL_SSL\nsasl.password {MARKER}\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_neli"))
        .args(["exec", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "-X"])
        .arg(format!("@{}", bad.display()))
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}:2: expected KEY=VALUE", bad.display())), "names file and line: {err}");
    assert_no_marker("a malformed properties line", &err);

    let missing = dir.join("missing.properties");
    let out = Command::new(env!("CARGO_BIN_EXE_neli"))
        .args(["watch", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "-X"])
        .arg(format!("@{}", missing.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("cannot read properties file '{}'", missing.display())), "{err}");

    // A -X argument without '=' is not echoed either (it may be a secret).
    let out = Command::new(env!("CARGO_BIN_EXE_neli"))
        .args(["exec", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "-X", MARKER, "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("-X argument 1 is neither KEY=VALUE nor @FILE"), "{err}");
    assert_no_marker("a -X argument without '='", &err);

    // Rejected by librdkafka (a Java-only property), given in the environment.
    let out = Command::new(env!("CARGO_BIN_EXE_neli"))
        .args(["exec", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--connect-timeout", "1s", "--", "true"])
        .env("NELI_KAFKA_SASL_JAAS_CONFIG", MARKER)
        .env("RUST_LOG", "trace")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("sasl.jaas.config"), "the error names the property: {err}");
    assert_no_marker("NELI_KAFKA_SASL_JAAS_CONFIG", &err);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `neli watch` (stdout and trace-level stderr) with every secret property
/// librdkafka accepts set at once, while a member leads and stops.
#[test]
fn watch_output_never_shows_a_secret() {
    let mock = MockKafka::start(1).expect("mock cluster");
    let bs = mock.bootstrap_servers();
    mock.create_topic("watchsecret.neli", 1).expect("topic");
    // Accepted by librdkafka under PLAINTEXT (the rest are rejected at once,
    // covered by the tests above; `sasl.oauthbearer.client.secret` is OIDC,
    // which this build lacks).
    let accepted =
        ["sasl.password", "ssl.key.password", "ssl.keystore.password", "ssl.key.pem", "sasl.oauthbearer.config"];
    let mut watch = Command::new(env!("CARGO_BIN_EXE_neli"));
    watch.args(["watch", "--bootstrap-servers", &bs, "--group", "watchsecret", "--heartbeat-timeout", "1s"]);
    for name in accepted {
        watch.arg("-X").arg(format!("{name}={}", marker_value(name)));
    }
    watch.env("RUST_LOG", "trace");
    let watch = spawn_drained(&mut watch);
    let mut exec = Command::new(env!("CARGO_BIN_EXE_neli"));
    exec.args(["exec", "--bootstrap-servers", &bs, "--group", "watchsecret", "--heartbeat-timeout", "1s"]).args([
        "--session-timeout",
        "3s",
        "--",
        "sleep",
        "2",
    ]);
    let (status, exec_out) = run_bounded(&mut exec, Duration::from_secs(30));
    assert_eq!(status, Some(0), "the member led for 2 s and stopped within 30 s: {exec_out}");
    std::thread::sleep(Duration::from_millis(1500)); // the lease lapses: "expired"
    let (_, stdout, stderr) = watch.stop();
    assert!(stdout.contains("\"acquired\""), "watch saw the member lead:\n{stdout}\n{stderr}");
    assert_no_marker("neli watch stdout", &stdout);
    assert_no_marker("neli watch stderr at trace level", &stderr);
}
