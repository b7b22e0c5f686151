//! The `neli` binary's contract: exit codes, signals, CMD lifecycle, hooks.
//! Members are child processes; the broker is the in-process librdkafka mock
//! (reachable over TCP), so these need nothing fetched.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use neli::kafka::mock::MockKafka;

fn neli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_neli"))
}

fn mock(group: &str) -> MockKafka {
    let mock = MockKafka::start(1).expect("mock cluster");
    mock.create_topic(&format!("{group}.neli"), 1).expect("topic");
    mock
}

fn exec_args(bootstrap: &str, group: &str) -> Vec<String> {
    ["exec", "--bootstrap-servers", bootstrap, "--group", group, "--heartbeat-timeout", "1s", "--session-timeout", "3s"]
        .map(String::from)
        .to_vec()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_flags_print_usage_and_exit_2() {
    let out = neli().args(["exec", "--bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Usage: neli exec"), "{}", stderr(&out));
    let out = neli()
        .args(["exec", "--bootstrap-servers", "x:1", "--group", "g", "-X", "group.id=other", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a forced key is refused");
    assert!(stderr(&out).contains("cannot override configuration 'group.id'"), "{}", stderr(&out));
}

#[test]
fn unreachable_broker_exits_2_with_a_clear_message_in_bounded_time() {
    let started = Instant::now();
    let out = neli()
        .args(["exec", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--connect-timeout", "2s", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot reach the Kafka cluster at '127.0.0.1:1'"), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(5), "bounded by --connect-timeout: {:?}", started.elapsed());
}

#[test]
fn cmd_exit_status_becomes_neli_exit_status_and_cmd_sees_token_and_role() {
    let mock = mock("exit");
    let out = neli()
        .args(exec_args(&mock.bootstrap_servers(), "exit"))
        .args(["--", "sh", "-c", "echo \"role=$NELI_ROLE token=$NELI_TOKEN\"; exit 7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("role=leader token="), "{stdout}");
}

#[test]
fn sigterm_stops_cmd_resigns_and_exits_0() {
    let mock = mock("term");
    let dir = std::env::temp_dir().join(format!("neli-it-term-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let pidfile = dir.join("cmd.pid");
    let mut child = neli()
        .args(exec_args(&mock.bootstrap_servers(), "term"))
        .args(["--", "sh", "-c", "echo $$ > \"$1\"; exec sleep 100", "cmd"])
        .arg(&pidfile)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let cmd_pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile).ok().and_then(|s| s.trim().parse().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "CMD never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    // CMD was stopped before neli exited (signal 0 probes existence).
    let alive = unsafe { libc::kill(cmd_pid, 0) } == 0;
    assert!(!alive || is_zombie(cmd_pid), "CMD {cmd_pid} outlived neli");
    let _ = std::fs::remove_dir_all(&dir);
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(true)
}

#[test]
fn failing_revoke_hook_is_retried_then_neli_exits_nonzero() {
    let mock = mock("hook");
    let dir = std::env::temp_dir().join(format!("neli-it-hook-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let tries = dir.join("tries");
    let hook = format!("echo try >> '{}'; exit 1", tries.display());
    // CMD exits at once: neli gives up leadership, runs the hook, which fails.
    let out = neli()
        .args(exec_args(&mock.bootstrap_servers(), "hook"))
        .args(["--on-revoke", &hook, "--", "sh", "-c", "sleep 0.2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("revoke hook"), "{}", stderr(&out));
    let n = std::fs::read_to_string(&tries).unwrap_or_default().lines().count();
    assert_eq!(n, 3, "the hook was retried before giving up");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ended_election_stops_cmd_and_exits_0() {
    let mock = mock("ended");
    let mut child = neli()
        .args(exec_args(&mock.bootstrap_servers(), "ended"))
        .args(["--", "sleep", "100"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2)); // let it join and lead
    // `neli end` creates the marker, then deletes the topic (the mock has
    // neither CreateTopics nor DeleteTopics, so both are done by hand).
    mock.create_topic("ended.neli.ended", 1).expect("marker");
    mock.hide_topic("ended.neli");
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "neli exec did not stop after the election ended");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    // A deliberate end is not a failure.
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.contains("the election was ended"), "{err}");
}

#[test]
fn watch_prints_one_json_line_per_transition() {
    let mock = mock("watched");
    let bs = mock.bootstrap_servers();
    let mut watch = neli()
        .args(["watch", "--bootstrap-servers", &bs, "--group", "watched", "--heartbeat-timeout", "1s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = neli().args(exec_args(&bs, "watched")).args(["--", "sleep", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::thread::sleep(Duration::from_millis(1500)); // the lease lapses: "expired"
    unsafe {
        libc::kill(watch.id() as i32, libc::SIGTERM);
    }
    let mut text = String::new();
    std::io::Read::read_to_string(watch.stdout.as_mut().unwrap(), &mut text).unwrap();
    let _ = watch.wait();
    let events: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    // The exec member led once, then its heartbeats stopped.
    assert_eq!(kinds, ["acquired", "expired"], "{text}");
    assert!(events[0]["token"].is_u64() && events[0]["member"].is_string(), "{text}");
}

/// The TLS and secrets examples of `neli exec --help` are the ones the TLS
/// tests run (`kafka_tls::election_over_tls_acquires_and_fails_over_after_sigkill`
/// passes `-X security.protocol=SSL -X ssl.ca.location=…`;
/// `kafka_tls::scram_over_tls_authenticates_and_a_wrong_password_is_refused_at_once`
/// runs `NELI_KAFKA_SASL_PASSWORD=… neli exec -X @scram.properties`).
#[test]
fn help_shows_the_tested_tls_and_secret_examples() {
    for sub in ["exec", "watch", "end"] {
        let out = neli().args([sub, "--help"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let help = String::from_utf8_lossy(&out.stdout);
        for shown in [
            "-X KEY=VALUE and -X @FILE",
            "NELI_KAFKA_<NAME> environment variables",
            "-X security.protocol=SSL -X ssl.ca.location=/etc/neli/ca.pem",
            "NELI_KAFKA_SASL_PASSWORD=\"$(cat /run/secrets/kafka-password)\" neli exec",
            "-X @/etc/neli/scram.properties",
        ] {
            assert!(help.contains(shown), "neli {sub} --help shows '{shown}':\n{help}");
        }
    }
}
