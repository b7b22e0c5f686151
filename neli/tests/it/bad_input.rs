//! Bad input to the `neli` binary: one case per rule and per flag family,
//! each refused with exit 2 and a message naming the flag (or property
//! source) at fault, before anything connects (neli/KAFKA.md, "The neli
//! CLI"). A new flag adds its cases here.

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Signal, budget, signal};

fn neli() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_neli"));
    // No NELI_KAFKA_* variable of the caller leaks into a case.
    for (k, _) in std::env::vars() {
        if k.starts_with("NELI_KAFKA_") {
            c.env_remove(k);
        }
    }
    c
}

/// `exec` against an address nothing listens on: a case that got past
/// validation would fail later with "cannot reach", not with its own message.
const BASE: [&str; 3] = ["exec", "--bootstrap-servers", "127.0.0.1:1"];

/// `--group g` unless the case sets the group itself.
fn group_unless_given(flags: &[impl AsRef<str>]) -> Vec<&'static str> {
    if flags.iter().any(|f| f.as_ref() == "--group") { vec![] } else { vec!["--group", "g"] }
}

/// One bad command line: (flags, environment, what the message must say).
type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);

/// Durations and the assignment strategy.
fn duration_cases() -> Vec<Case<'static>> {
    vec![
        (vec!["--heartbeat-timeout", "5"], vec![], "\"5\" has no unit"),
        (vec!["--heartbeat-timeout", "18446744073709551616s"], vec![], "too large a duration"),
        (vec!["--heartbeat-timeout", "99999999999999999999m"], vec![], "too large a duration"),
        (vec!["--heartbeat-timeout=-1s"], vec![], "\"-1s\" is negative"),
        (vec!["--heartbeat-timeout", "1.5x"], vec![], "unknown unit \"x\" (use ms, s, m or h; write e.g. 1.5s"),
        (vec!["--heartbeat-timeout", "1.0005s"], vec![], "\"1.0005s\" is finer than a millisecond"),
        (vec!["--heartbeat-timeout", "1s1m"], vec![], "write each unit once, largest first"),
        (vec!["--heartbeat-timeout", "3d"], vec![], "unknown unit \"d\" (use ms, s, m or h"),
        (vec!["--heartbeat-timeout", "0s"], vec![], "--heartbeat-timeout: heartbeat_timeout must be greater than zero"),
        (
            vec!["--heartbeat-timeout", "5s", "--session-timeout", "3s"],
            vec![],
            "--heartbeat-timeout: heartbeat_timeout",
        ),
        (vec!["--session-timeout", "soon"], vec![], "'--session-timeout <SESSION_TIMEOUT>'"),
        (vec!["--connect-timeout", "10"], vec![], "\"10\" has no unit"),
        (
            vec!["--assignment", "sticky"],
            vec![],
            "'--assignment <ASSIGNMENT>': \"sticky\" is not an assignment strategy (expected \"range\" or \"cooperative-sticky\")",
        ),
    ]
}

/// A forced property, names, and client properties set twice or set by
/// the election.
fn name_and_property_cases(props_arg: &str) -> Vec<Case<'_>> {
    vec![
        (vec!["-X", "partition.assignment.strategy=roundrobin"], vec![], "partition.assignment.strategy"),
        (vec!["--stop-timeout", "10"], vec![], "\"10\" has no unit"),
        (vec!["--group", "bad group"], vec![], "--group: group 'bad group' is invalid"),
        (vec!["--group", ""], vec![], "--group: group '' is invalid: must not be empty"),
        (vec!["--topic", ".."], vec![], "--topic: topic '..' is invalid"),
        (vec!["--name", ""], vec![], "--name: name '' is invalid"),
        (
            vec!["-X", "bootstrap.servers=other:9092"],
            vec![],
            "-X sets bootstrap.servers that --bootstrap-servers also sets",
        ),
        (vec!["-X", props_arg], vec![], "sets bootstrap.servers that --bootstrap-servers also sets"),
        (
            vec!["--session-timeout", "9s", "-X", "session.timeout.ms=9000"],
            vec![],
            "-X sets session.timeout.ms that --session-timeout also sets",
        ),
        (
            vec!["--session-timeout", "9s"],
            vec![("NELI_KAFKA_SESSION_TIMEOUT_MS", "9000")],
            "NELI_KAFKA_SESSION_TIMEOUT_MS sets session.timeout.ms that --session-timeout also sets",
        ),
        (vec!["-X", "session.timeout.ms=soon"], vec![], "-X session.timeout.ms: session.timeout.ms 'soon'"),
        (vec!["-X", "group.id=other"], vec![], "cannot override configuration 'group.id'"),
    ]
}

/// Static membership and the consumer protocol, then malformed `-X`.
fn membership_and_property_cases() -> Vec<Case<'static>> {
    vec![
        // Static membership: only with a grace of at least T + 10 % and the proof,
        // saying why (neli/KAFKA.md, "The consumer group protocol"; refused
        // outright before).
        (
            vec!["-X", "group.instance.id=billing-1"],
            vec![],
            "--grace: grace (0ns) must be at least heartbeat_timeout + 10% (5.5s, with T = 5s) with static membership (group.instance.id)",
        ),
        (
            vec![],
            vec![("NELI_KAFKA_GROUP_INSTANCE_ID", "billing-1")],
            "--grace: grace (0ns) must be at least heartbeat_timeout + 10% (5.5s, with T = 5s) with static membership",
        ),
        (vec!["-X", "group.instance.id=billing-1", "--explain"], vec![], "without the leader's session expiring"),
        (
            vec!["-X", "group.instance.id=billing-1", "--grace", "5s", "--no-membership-proof"],
            vec![],
            "--no-membership-proof: membership_proof cannot be off with static membership (group.instance.id)",
        ),
        // The consumer protocol: librdkafka's refused properties by name,
        // and the same rule (neli/KAFKA.md, "The consumer group protocol").
        (
            vec!["--group-protocol", "consumer", "--grace", "5s", "-X", "group.protocol.type=consumer"],
            vec![],
            "-X group.protocol.type: cannot set 'group.protocol.type' with group protocol consumer",
        ),
        (
            vec!["--group-protocol", "consumer", "--grace", "5s"],
            vec![("NELI_KAFKA_SESSION_TIMEOUT_MS", "45000")],
            "NELI_KAFKA_SESSION_TIMEOUT_MS session.timeout.ms: cannot set 'session.timeout.ms' with group protocol consumer",
        ),
        (
            vec!["--group-protocol", "consumer"],
            vec![],
            "--grace: grace (0ns) must be at least heartbeat_timeout + 10% (5.5s, with T = 5s)",
        ),
        (vec!["--group-protocol", "kip848"], vec![], "\"kip848\" is not a group protocol"),
        (vec!["-X", "heartbeat.interval.ms=soon"], vec![], "-X heartbeat.interval.ms: heartbeat.interval.ms 'soon'"),
        // A property only the consumer reads, with a bad value: librdkafka
        // refuses it before anything connects.
        (vec!["-X", "fetch.wait.max.ms=soon"], vec![], "fetch.wait.max.ms"),
        (vec!["-X", "no-equals-sign"], vec![], "-X argument 1 is neither KEY=VALUE nor @FILE"),
        (vec!["-X", "=value"], vec![], "-X argument 1: the property name before '=' is empty"),
        (vec!["-X", "@/nonexistent/neli.properties"], vec![], "/nonexistent/neli.properties"),
        (vec![], vec![("NELI_KAFKA_", "x")], "NELI_KAFKA_"),
    ]
}

/// `--metrics-addr`: an IP address and port, on loopback unless allowed.
fn metrics_addr_cases() -> Vec<Case<'static>> {
    vec![
        // --metrics-addr: an IP address and port, on loopback unless allowed.
        (vec!["--metrics-addr", "nonsense"], vec![], "--metrics-addr 'nonsense' is not an IP address and port"),
        (vec!["--metrics-addr", "9464"], vec![], "--metrics-addr '9464' is not an IP address and port"),
        (vec!["--metrics-addr", "127.0.0.1:99999"], vec![], "--metrics-addr '127.0.0.1:99999' is not an IP"),
        (vec!["--metrics-addr", "example.com:9464"], vec![], "--metrics-addr 'example.com:9464' is not an IP"),
        (
            vec!["--metrics-addr", "0.0.0.0:9464"],
            vec![],
            "--metrics-addr '0.0.0.0:9464' is not a loopback address: the endpoints have no authentication; add --metrics-allow-remote",
        ),
        (vec!["--metrics-addr", "[::]:9464"], vec![], "--metrics-addr '[::]:9464' is not a loopback address"),
        (vec!["--metrics-addr", "192.0.2.1:9464"], vec![], "--metrics-addr '192.0.2.1:9464' is not a loopback address"),
        (vec!["--metrics-addr", "nonsense", "--explain"], vec![], "--metrics-addr 'nonsense' is not an IP"),
        (vec!["--metrics-allow-remote"], vec![], "--metrics-addr <HOST:PORT>"),
    ]
}

#[test]
fn every_bad_flag_is_refused_naming_the_flag() {
    let dir = std::env::temp_dir().join(format!("neli-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let props = dir.join("client.properties");
    std::fs::write(&props, "bootstrap.servers=other:9092\n").unwrap();
    let props_arg = format!("@{}", props.display());
    let mut cases = duration_cases();
    cases.extend(name_and_property_cases(&props_arg));
    cases.extend(membership_and_property_cases());
    cases.extend(metrics_addr_cases());
    for (flags, env, want) in cases {
        let mut c = neli();
        c.args(BASE).args(group_unless_given(&flags)).args(&flags).args(["--", "true"]).envs(env.iter().copied());
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?} {env:?}: exit {:?}\n{err}", out.status.code());
        assert!(err.contains(want), "{flags:?} {env:?}: expected {want:?} in:\n{err}");
        assert!(!err.contains("cannot reach"), "{flags:?}: refused only after trying to connect:\n{err}");
        assert!(!err.contains("panicked"), "{flags:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// A port in use is bad input too: exit 2, naming the flag and the
// address, before anything connects.
#[test]
fn metrics_addr_in_use_is_refused_naming_the_flag() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = neli().args(BASE).args(["--group", "g", "--metrics-addr", &addr, "--", "true"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let want = format!("neli: --metrics-addr {addr}: cannot listen: ");
    assert!(err.contains(&want) && err.contains("in use"), "expected {want:?}…in use in:\n{err}");
    assert!(!err.contains("cannot reach"), "refused only after trying to connect:\n{err}");
}

// SIGTERM while `exec` is still connecting ends it with exit 0 and a line
// saying so (neli/KAFKA.md: a signal at any point ends neli with exit 0).
#[test]
fn sigterm_while_connecting_exits_0_and_says_so() {
    let mut child = neli()
        .args(BASE)
        .args(["--group", "g", "--connect-timeout", "10m", "--", "true"])
        .env("RUST_LOG", "neli=debug")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the line saying the signal handlers are in place.
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = lines.by_ref().map_while(Result::ok).any(|l| l.contains("connecting; SIGINT or SIGTERM ends neli"));
    assert!(ready, "neli never reported that it was connecting");
    signal(child.id(), Signal::TERM);
    let limit = budget(Duration::from_secs(1));
    let started = Instant::now();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert!(rest.iter().any(|l| l.contains("neli: SIGTERM while connecting: exiting")), "{rest:?}");
    assert!(started.elapsed() < limit, "took {:?} to stop after SIGTERM (budget {limit:?})", started.elapsed());
}

/// `v` as owned arguments.
fn owned(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The sweep's flag cases, for every subcommand: each bad duration under
/// each duration flag, each bad name under each name flag, bad properties.
fn sweep_cases() -> Vec<Vec<String>> {
    let bad_durations = [
        "5",
        "0",
        "-1s",
        "1.0005s",
        "1s1m",
        "3d",
        "1 s",
        "s",
        "",
        "18446744073709551616s",
        "99999999999999999999ms",
        "1e3ms",
        "NaN",
    ];
    let long = "g".repeat(250);
    let bad_names = ["bad group", "", "..", ".", "x/y", "ü", long.as_str()];
    let mut cases: Vec<Vec<String>> = Vec::new();
    for flag in ["--heartbeat-timeout", "--session-timeout", "--connect-timeout", "--stop-timeout"] {
        for d in bad_durations {
            cases.push(owned(&[flag, d]));
        }
    }
    for flag in ["--group", "--topic"] {
        for n in bad_names {
            cases.push(owned(&[flag, n]));
        }
    }
    for n in ["", "a\nb"] {
        cases.push(owned(&["--name", n]));
    }
    for x in [
        "bootstrap.servers=y:1",
        "session.timeout.ms=soon",
        "session.timeout.ms=-5",
        "group.id=other",
        "enable.auto.commit=true",
        "no-equals-sign",
        "=value",
        "@/nonexistent/neli.properties",
        "@",
    ] {
        cases.push(owned(&["-X", x]));
    }
    for (t, s) in [("5s", "3s"), ("3s", "3s"), ("1s", "1ms"), ("10m", "1s")] {
        cases.push(owned(&["--heartbeat-timeout", t, "--session-timeout", s]));
    }
    cases.push(owned(&["--session-timeout", "9s", "-X", "session.timeout.ms=9000"]));
    cases.push(owned(&["--bogus"]));
    cases.push(owned(&["--heartbeat-timeout"]));
    cases
}

// The sweep: at least 100 bad command lines, built flag
// by flag from the rules above, every one refused with exit 2 and an error
// line, quickly and without a panic (`cargo test -p neli --test it
// bad_input_sweep -- --nocapture` prints the count).
#[test]
fn bad_input_sweep_never_panics_hangs_or_accepts() {
    let cases = sweep_cases();
    let mut problems = Vec::new();
    let mut run = |args: Vec<String>, env: Vec<(&str, &str)>| {
        let out = neli().args(&args).envs(env.iter().copied()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        // An error line, or clap's usage when nothing at all was given.
        let explained = err.contains("error") || err.starts_with("neli:") || err.contains("Usage:");
        if err.contains("panicked") || out.status.code() != Some(2) || !explained {
            problems.push(format!("{args:?} {env:?}: exit {:?}: {err}", out.status.code()));
        }
        if err.contains("cannot reach") {
            problems.push(format!("{args:?} {env:?}: refused only after trying to connect: {err}"));
        }
    };
    let mut n = 0;
    for sub in ["exec", "watch", "end"] {
        for c in &cases {
            let mut args = vec![sub.to_owned(), "--bootstrap-servers".into(), "127.0.0.1:1".into()];
            args.extend(group_unless_given(c).into_iter().map(String::from));
            if sub != "exec" && ["--stop-timeout"].contains(&c[0].as_str()) {
                continue;
            }
            args.extend(c.iter().cloned());
            if sub == "exec" {
                args.extend(["--".into(), "true".into()]);
            }
            run(args, vec![]);
            n += 1;
        }
    }
    for (var, value) in [
        ("NELI_KAFKA_", "x"),
        ("NELI_KAFKA_BOOTSTRAP_SERVERS", "y:1"),
        ("NELI_KAFKA_GROUP_ID", "other"),
        ("NELI_KAFKA_SESSION_TIMEOUT_MS", "soon"),
    ] {
        run(owned(&["exec", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--", "true"]), vec![(var, value)]);
        n += 1;
    }
    for bare in [
        vec![],
        owned(&["exec"]),
        owned(&["exec", "--group", "g", "--", "true"]),
        owned(&["watch", "--bootstrap-servers", "x:1"]),
    ] {
        run(bare, vec![]);
        n += 1;
    }
    println!("bad-input sweep: {n} command lines, {} problem(s)", problems.len());
    assert!(n >= 100, "the sweep is at least 100 bad inputs, got {n}");
    assert!(problems.is_empty(), "{} problem(s):\n{}", problems.len(), problems.join("\n"));
}
