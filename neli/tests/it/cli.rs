//! The `neli` binary's contract: exit codes, signals, CMD lifecycle, hooks.
//! Members are child processes; the broker is the in-process librdkafka mock
//! (reachable over TCP), so these need nothing fetched.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use neli::kafka::mock::MockKafka;

use rustix::process::Pid;

use crate::support::{Signal, budget, http_get, retry, sample, served_on, signal};

/// T and S of `exec_args`.
const T: Duration = Duration::from_secs(1);
const S: Duration = Duration::from_secs(3);

/// One member joins the mock and leads: the mock's 3 s initial rebalance
/// delay, a retry, then fresh own evidence and a membership proof (T).
fn first_lead() -> Duration {
    budget(Duration::from_secs(3) + retry(S) + T)
}

/// Waits for `path` to hold a line (CMD writes it when it starts).
fn wait_for_file(path: &std::path::Path, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(text) = std::fs::read_to_string(path).ok().filter(|t| t.ends_with('\n')) {
            return Some(text);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

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
fn roles_flags_that_do_not_go_together_are_refused_before_connecting() {
    let refused = |extra: &[&str]| {
        let out = neli()
            .args(["exec", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--heartbeat-timeout", "1s"])
            .args(extra)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        stderr(&out)
    };
    let err = refused(&["--roles", "2", "--partitions", "5"]);
    assert!(err.contains("--partitions 5 is more than --roles 2"), "{err}");
    let err = refused(&["--partitions", "2"]);
    assert!(err.contains("--roles"), "--partitions needs --roles: {err}");
    let err = refused(&["--non-exclusive"]);
    assert!(err.contains("--roles"), "--non-exclusive needs --roles: {err}");
    let err = refused(&["--roles", "0"]);
    assert!(err.starts_with("neli: --roles:") && err.contains('0'), "{err}");
    // Non-exclusive needs T > S; S defaults to 3 T.
    let err = refused(&["--roles", "2", "--non-exclusive"]);
    assert!(err.contains("--heartbeat-timeout") || err.contains("session"), "{err}");
}

/// An election topic that exists with fewer partitions than `--roles`
/// asks for would put several roles on one partition, so one member would
/// lead them together: refused, naming the topic, its count and the flag.
#[test]
fn roles_against_a_topic_with_other_partitions_are_refused() {
    let mock = mock("few");
    let out =
        neli().args(exec_args(&mock.bootstrap_servers(), "few")).args(["--roles", "3", "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--partitions 3") && err.contains("few.neli has 1 partition(s)"), "{err}");
    assert!(err.contains("pass --partitions 1"), "{err}");
}

/// The CMD of `with_roles_…`: it writes what it sees to `$1/role-N`
/// (its `{role}` argument, token, pid, lease file, and what `neli holds`
/// says for its role and for a role outside the election), then sleeps.
const ROLE_REPORT: &str = r#"out="$1/role-$NELI_ROLE_NUMBER"
{ echo "arg=$2 token=$NELI_TOKEN pid=$$ file=$NELI_LEASE_FILE"; "$0" holds; echo "holds=$?"; "$0" holds --role 7 2>/dev/null; echo "other=$?"; } > "$out.tmp"
mv "$out.tmp" "$out"; exec sleep 600"#;

/// `neli watch` in the background: its lines on the receiver.
fn watch_lines(bootstrap: &str, group: &str) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut watch = neli()
        .args(["watch", "--bootstrap-servers", bootstrap, "--group", group, "--heartbeat-timeout", "1s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let watched = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(watched)).map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (watch, rx)
}

/// `/leader?role=J` and `neli_leader{role}` answer for each of `roles`.
fn assert_served_per_role(addr: &str, group: &str, roles: u32) {
    let get = |path: &str| http_get(addr, path, Duration::from_secs(5)).unwrap_or_else(|e| panic!("GET {path}: {e}"));
    for role in 0..roles {
        let (code, body) = get(&format!("/leader?role={role}"));
        assert_eq!(code, 200, "{body}");
        assert!(body.starts_with(&format!("leader of role {role}: token ")), "{body}");
    }
    assert_eq!(get(&format!("/leader?role={roles}")).0, 503, "no role {roles}");
    let (_, metrics) = get("/metrics");
    for role in 0..roles {
        let labels = [("group", group), ("role", &role.to_string())];
        assert_eq!(sample(&metrics, "neli_leader", &labels), Some(1.0), "{metrics}");
    }
}

/// Waits (within T) until `neli watch` has shown an acquisition of each of `roles`.
fn assert_watch_saw_every_role(rx: &std::sync::mpsc::Receiver<String>, roles: u32) {
    let limit = budget(T);
    let deadline = Instant::now() + limit;
    let mut acquired = std::collections::BTreeSet::new();
    while acquired.len() < roles as usize {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx.recv_timeout(left).unwrap_or_else(|_| panic!("watch showed roles {acquired:?} within {limit:?}"));
        let event: serde_json::Value = serde_json::from_str(&line).expect("JSON line");
        if event["event"] == "acquired" {
            acquired.insert(event["role"].as_u64().expect("role"));
        }
    }
    assert_eq!(acquired.into_iter().collect::<Vec<_>>(), (0..u64::from(roles)).collect::<Vec<_>>());
}

/// `neli exec --roles 3` alone in its group leads every role: one CMD per
/// role, each with its number in `NELI_ROLE_NUMBER` and in place of
/// `{role}`, each seeing its own lease through `neli holds`; `/leader`, the
/// metrics and `neli watch` show every role; SIGTERM stops every CMD
/// (within `--stop-timeout` each, one after another) and removes the lease file.
#[test]
fn with_roles_one_cmd_runs_per_led_role_with_its_number_and_its_own_lease() {
    let mock = MockKafka::start(1).expect("mock cluster");
    mock.create_topic("roles.neli", 3).expect("topic");
    let dir = std::env::temp_dir().join(format!("neli-it-roles-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bs = mock.bootstrap_servers();
    let (mut watch, rx) = watch_lines(&bs, "roles");
    let log = dir.join("neli.stderr");
    let member = neli()
        .args(exec_args(&bs, "roles"))
        .args(["--roles", "3", "--stop-timeout", "2s", "--metrics-addr", "127.0.0.1:0"])
        .args(["--", "sh", "-c", ROLE_REPORT, env!("CARGO_BIN_EXE_neli")])
        .arg(&dir)
        .arg("{role}")
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    let (mut pids, mut lease_file) = (Vec::new(), String::new());
    for role in 0..3 {
        let Some(text) = wait_for_file(&dir.join(format!("role-{role}")), first_lead()) else {
            signal(member.id(), Signal::KILL);
            panic!("no CMD for role {role} within {:?}: {}", first_lead(), read_log());
        };
        assert!(text.starts_with(&format!("arg={role} token=")), "{{role}} is the role's number: {text}");
        assert!(text.contains("holds=0\n"), "role {role}'s CMD holds its own lease: {text}");
        assert!(text.contains("other=2\n"), "a role outside the election is bad input: {text}");
        let field = |name: &str| text.split(&format!("{name}=")).nth(1).and_then(|r| r.split_whitespace().next());
        pids.push(field("pid").and_then(|p| p.parse::<i32>().ok()).expect("pid"));
        lease_file = field("file").expect("lease file").to_owned();
    }
    let lines = std::fs::read_to_string(&lease_file).unwrap();
    let heads: Vec<String> = lines.lines().map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(heads, ["v2 0", "v2 1", "v2 2"]);
    let addr = served_on(&read_log()).unwrap_or_else(|| panic!("no 'serving' line: {}", read_log()));
    assert_served_per_role(&addr, "roles", 3);
    assert_watch_saw_every_role(&rx, 3);
    signal(watch.id(), Signal::TERM);
    let _ = watch.wait();
    signal(member.id(), Signal::TERM);
    let started = Instant::now();
    let out = member.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", read_log());
    let limit = budget(3 * Duration::from_secs(2));
    assert!(started.elapsed() < limit, "every CMD stopped within 3 x --stop-timeout (budget {limit:?})");
    for pid in pids {
        assert!(is_zombie(pid), "CMD {pid} stopped");
    }
    assert!(!std::path::Path::new(&lease_file).exists(), "the lease file is removed when neli exits");
    let _ = std::fs::remove_dir_all(&dir);
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
    let limit = budget(Duration::from_secs(2));
    assert!(started.elapsed() < limit, "bounded by --connect-timeout 2s (budget {limit:?}): {:?}", started.elapsed());
}

#[test]
fn cmd_exit_status_becomes_neli_exit_status_and_cmd_sees_token_and_role() {
    let mock = mock("exit");
    let out = neli()
        .args(exec_args(&mock.bootstrap_servers(), "exit"))
        .args(["--", "sh", "-c", "echo \"role=$NELI_ROLE token=$NELI_TOKEN\"; \"$0\" holds; echo \"holds=$?\"; exit 7"])
        .arg(env!("CARGO_BIN_EXE_neli"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("role=leader token="), "{stdout}");
    // CMD starts with its lease file already written: the lease holds.
    assert!(stdout.contains("holds=0"), "{stdout}{}", stderr(&out));
}

/// `neli holds` without a broker: a lease file and the exit codes.
#[test]
fn holds_answers_from_the_lease_file_and_names_what_is_wrong_with_a_bad_one() {
    let dir = std::env::temp_dir().join(format!("neli-it-holds-cli-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("lease");
    let holds = |content: Option<&str>, extra: &[&str]| {
        match content {
            Some(c) => std::fs::write(&file, c).unwrap(),
            None => {
                let _ = std::fs::remove_file(&file);
            }
        }
        let out =
            neli().arg("holds").arg("--lease-file").arg(&file).args(extra).env_remove("NELI_TOKEN").output().unwrap();
        (out.status.code(), stderr(&out))
    };
    // A deadline far in the future on CLOCK_MONOTONIC holds; 1 ns after boot has ended.
    let far = format!("v1 {} 7 0\n", u64::MAX / 2);
    assert_eq!(holds(Some(&far), &[]).0, Some(0));
    assert_eq!(holds(Some(&far), &["--token", "7"]).0, Some(0));
    let (code, err) = holds(Some(&far), &["--token", "6", "-v"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("about token 7, this process was started for token 6"), "{err}");
    let (code, err) = holds(Some("v1 1 7 0\n"), &["-v"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("the lease ended"), "{err}");
    assert_eq!(holds(Some("v1 0 0 0\n"), &[]).0, Some(1), "deadline 0: no lease");
    // Bad input: exit 2, naming the file and the field.
    let (code, err) = holds(Some("v1 soon 7 0\n"), &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains(&file.display().to_string()) && err.contains("deadline_ns 'soon'"), "{err}");
    let (code, err) = holds(None, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot read the lease file"), "{err}");
    let out = neli().arg("holds").env_remove("NELI_LEASE_FILE").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("NELI_LEASE_FILE"), "{}", stderr(&out));
    let out = neli().arg("holds").env("NELI_LEASE_FILE", "").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no lease file") && stderr(&out).contains("unset or empty"), "{}", stderr(&out));
    let out = neli().args(["holds", "--lease-file"]).arg(&file).env("NELI_TOKEN", "x7").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("NELI_TOKEN 'x7' is not a whole number"), "{}", stderr(&out));
    // Several roles (`neli exec --roles`): one line each; the role is
    // --role, else NELI_ROLE_NUMBER (which exec gives each CMD), else 0.
    let roles = format!("v2 0 0 0 0\nv2 1 {} 9 0\n", u64::MAX / 2);
    assert_eq!(holds(Some(&roles), &["--role", "1"]).0, Some(0));
    assert_eq!(holds(Some(&roles), &[]).0, Some(1), "role 0 has no lease");
    let by_env = |role: &str| {
        let out = neli().args(["holds", "--lease-file"]).arg(&file).env("NELI_ROLE_NUMBER", role).output().unwrap();
        (out.status.code(), stderr(&out))
    };
    assert_eq!(by_env("1").0, Some(0));
    let (code, err) = by_env("2");
    assert_eq!(code, Some(2), "a role the file does not hold is bad input");
    assert!(err.contains("no lease line for role 2 (the file holds roles 0..2)"), "{err}");
    let (code, err) = by_env("one");
    assert_eq!(code, Some(2));
    assert!(err.contains("NELI_ROLE_NUMBER 'one' is not a whole number"), "{err}");
    let (code, err) = holds(Some(&far), &["--role", "1"]);
    assert_eq!(code, Some(2), "a one-role file holds role 0 only");
    assert!(err.contains("no lease line for role 1 (the file holds roles 0)"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
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
    let cmd_pid: i32 = wait_for_file(&pidfile, first_lead())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("CMD never started within {:?}", first_lead()));
    signal(child.id(), Signal::TERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    // CMD was stopped before neli exited (signal 0 probes existence).
    let alive = Pid::from_raw(cmd_pid).is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
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
    let dir = std::env::temp_dir().join(format!("neli-it-ended-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let started = dir.join("started");
    let mut child = neli()
        .args(exec_args(&mock.bootstrap_servers(), "ended"))
        .args(["--", "sh", "-c", "echo up > \"$1\"; exec sleep 100", "cmd"])
        .arg(&started)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let leading = wait_for_file(&started, first_lead());
    assert!(leading.is_some(), "neli exec did not lead within {:?}", first_lead());
    // `neli end` creates the marker, then deletes the topic (the mock has
    // neither CreateTopics nor DeleteTopics, so both are done by hand).
    mock.create_topic("ended.neli.ended", 1).expect("marker");
    mock.hide_topic("ended.neli");
    // The topic watcher looks every second and stops on the marker.
    let limit = budget(Duration::from_secs(2));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "neli exec did not stop within {limit:?} after the election ended");
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&dir);
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
    // Lines as they come, so the test waits for "expired" instead of sleeping.
    let (mut watch, rx) = watch_lines(&bs, "watched");
    let out = neli().args(exec_args(&bs, "watched")).args(["--", "sleep", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The exec member stopped heartbeating; watch reports the lapse within T.
    let limit = budget(T);
    let deadline = Instant::now() + limit;
    let mut lines = Vec::new();
    while !lines.iter().any(|l: &String| l.contains("\"expired\"")) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(_) => panic!("watch printed no \"expired\" within {limit:?}: {lines:?}"),
        }
    }
    signal(watch.id(), Signal::TERM);
    let _ = watch.wait();
    // Whatever watch printed before it exited (its reader ends with it).
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(1)) {
        lines.push(line);
    }
    let text = lines.join("\n");
    let events: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    // The exec member led once, then its heartbeats stopped.
    assert_eq!(kinds, ["acquired", "expired"], "{text}");
    assert!(events[0]["token"].is_u64() && events[0]["member"].is_string(), "{text}");
    // The token watch shows is the one the member's core handed out.
    let err = stderr(&out);
    let exec_token = err
        .split("with token ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("exec printed no token: {err}"));
    assert_eq!(events[0]["token"].as_u64(), Some(exec_token), "{text}\n{err}");
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

// `--explain` prints the bounds the configuration implies and
// exits 0 without connecting (nothing listens on 127.0.0.1:1) and without
// running CMD; CMD may be left out.
#[test]
fn exec_explain_prints_the_bounds_and_exits_0_without_connecting() {
    let dir = std::env::temp_dir().join(format!("neli-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ran = dir.join("ran");
    let base = ["exec", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--heartbeat-timeout", "1s"];
    let started = Instant::now();
    for cmd in [vec![], vec!["--".to_owned(), "touch".to_owned(), ran.display().to_string()]] {
        let out = neli().args(base).args(["--session-timeout", "3s", "--explain"]).args(&cmd).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {}", stderr(&out));
        for line in [
            "lease T = 1s, session S = 3s, grace G = 0ms",
            "failover on crash: within 4300ms",
            "handover on close/resign: within 1300ms",
            "resign hold-off: 7s (2 S + T)",
            "rebalance timeout: must be above 4s (T + S)",
            "in effect 5m (librdkafka's default)",
            "clock drift: the leader's clock may run 66.6% slow",
        ] {
            assert!(text.contains(line), "{cmd:?}: {line:?} missing from:\n{text}");
        }
        assert!(!stderr(&out).contains("cannot reach"), "{}", stderr(&out));
    }
    assert!(started.elapsed() < budget(Duration::ZERO), "explained without waiting for a broker");
    assert!(!ran.exists(), "CMD ran");
    // An invalid configuration is refused as without --explain.
    let out = neli().args(base).args(["--session-timeout", "1s", "--explain"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--heartbeat-timeout: heartbeat_timeout (1s) must be below"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

// The transcript of the defaults' bounds in neli/KAFKA.md ("What a
// configuration promises") is what `explain` prints.
#[test]
fn kafka_md_shows_the_explanation_of_the_defaults() {
    let config = neli::Config::builder().group("g").build().unwrap();
    let text = config.explain().unwrap().to_string();
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/KAFKA.md")).unwrap();
    assert!(doc.contains(&format!("```\n{text}\n```")), "neli/KAFKA.md should show, verbatim:\n{text}");
}

/// `--metrics-addr 127.0.0.1:0`: the address is printed; `/healthz`,
/// `/leader` and `/metrics` answer for the election (mock broker).
#[test]
fn metrics_addr_serves_metrics_health_and_leader() {
    let mock = mock("served");
    let dir = std::env::temp_dir().join(format!("neli-it-served-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let log = dir.join("neli.stderr");
    let mut child = neli()
        .args(exec_args(&mock.bootstrap_servers(), "served"))
        .args(["--metrics-addr", "127.0.0.1:0", "--", "sleep", "600"])
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    // Listening comes before connecting: the line is there at once.
    let limit = budget(Duration::ZERO);
    let deadline = Instant::now() + limit;
    let addr = loop {
        if let Some(a) = served_on(&read_log()) {
            break a;
        }
        assert!(Instant::now() < deadline, "no 'serving … on http://' line within {limit:?}:\n{}", read_log());
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"), "{addr}");
    let get = |path: &str| http_get(&addr, path, Duration::from_secs(5)).unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let deadline = Instant::now() + first_lead();
    let leader = loop {
        let (code, body) = get("/leader");
        if code == 200 {
            break body;
        }
        assert_eq!(code, 503, "{body}");
        assert!(body.starts_with("not leader of role 0"), "{body}");
        assert!(Instant::now() < deadline, "/leader never answered 200 within {:?}:\n{}", first_lead(), read_log());
        std::thread::sleep(Duration::from_millis(50));
    };
    let token: u64 = leader
        .strip_prefix("leader of role 0: token ")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("/leader names the token: {leader:?}"));
    assert!(leader.trim_end().ends_with("log_epoch 0"), "{leader}");
    let (code, health) = get("/healthz");
    assert_eq!(code, 200, "{health}");
    // One line per election, named by its group.
    assert!(health.starts_with("served: alive: last pulse"), "{health}");
    assert_eq!(health.lines().count(), 1, "{health}");
    let (code, text) = get("/metrics");
    assert_eq!(code, 200, "{text}");
    let role0 = [("group", "served"), ("role", "0")];
    assert_eq!(sample(&text, "neli_leader", &role0), Some(1.0), "{text}");
    assert_eq!(sample(&text, "neli_fencing_token", &role0), Some(token as f64), "{text}");
    assert_eq!(sample(&text, "neli_acquisitions_total", &role0), Some(1.0), "{text}");
    let left = sample(&text, "neli_lease_remaining_seconds", &role0).expect("lease remaining");
    assert!(left > 0.0 && left <= T.as_secs_f64(), "{left}");
    let accepted = sample(&text, "neli_membership_proofs_total", &[("outcome", "accepted")]).expect("proofs");
    assert!(accepted >= 1.0, "{text}");
    for line in ["# TYPE neli_leader gauge", "# TYPE neli_acquisitions_total counter", "# HELP neli_fences_total"] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    let (code, _) = get("/nothing-here");
    assert_eq!(code, 404);
    let (code, body) = get("/leader?role=x");
    assert_eq!(code, 400, "{body}");
    assert_eq!(get("/leader?group=served"), (200, leader.clone()));
    let (code, body) = get("/leader?group=other");
    assert_eq!((code, body.as_str()), (404, "no election of group 'other' is served here; served: served\n"));
    signal(child.id(), Signal::TERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", read_log());
    let _ = std::fs::remove_dir_all(&dir);
}
