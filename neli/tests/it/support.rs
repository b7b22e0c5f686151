//! Shared helpers for the real-broker tests: in-process members that record
//! their transitions on one clock, and waits with deadlines (never blind sleeps)
//! whose lengths come from [`budget`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use neli::kafka::mock::MockKafka;
use neli::{Background, Config, Event};
use rustix::process::Pid;
pub use rustix::process::Signal;

/// Sends `sig` to the process `pid` (one the test started); a process that
/// is gone already is no failure.
pub fn signal(pid: u32, sig: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

/// Sends `sig` to the process group `pid` leads (CMD under `neli exec`).
pub fn signal_group(pid: u32, sig: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, sig);
    }
}

/// Stops the process groups `groups` and the processes `pids` (ones the test
/// started) and returns once every process in them is stopped. A process
/// takes a stop itself, when it next runs: one woken by SIGSTOP from a
/// `flock` wait may first take the lock, if it was freed meanwhile, and then
/// stop holding it. So a test that freezes processes sharing a lock holds
/// the lock through this call, and a stopped process never holds it.
pub fn stop_and_wait(groups: &[u32], pids: &[u32]) {
    for g in groups {
        signal_group(*g, Signal::STOP);
    }
    for p in pids {
        signal(*p, Signal::STOP);
    }
    let limit = budget(Duration::ZERO);
    let deadline = Instant::now() + limit;
    loop {
        // 'D' counts as stopped: a shell waits there for a vfork child that
        // was stopped before it could exec, and a process leaving 'D' takes
        // the pending stop on its way back to user space. The exception is a
        // process entering `flock` that sleeps in 'D' on the kernel's lock
        // table while /proc/locks is read: it may then take the lock; only
        // a failing test's report reads /proc/locks (kafka_roles).
        let running: Vec<(u32, char)> = processes()
            .into_iter()
            .filter(|&(pid, state, group)| {
                (groups.contains(&group) || pids.contains(&pid)) && !matches!(state, 'T' | 't' | 'Z' | 'X' | 'D')
            })
            .map(|(pid, state, _)| (pid, state))
            .collect();
        if running.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "groups {groups:?} and processes {pids:?} stopped within {limit:?}: still running (pid, state) {running:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every process as (pid, state, process group), from /proc.
fn processes() -> Vec<(u32, char, u32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(Result::ok)
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
            let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
            let state = rest.next()?.chars().next()?;
            let pgrp = rest.nth(1)?.parse().ok()?;
            Some((pid, state, pgrp))
        })
        .collect()
}

/// The deadline for a wait whose protocol needs `protocol` (a sum of S, T,
/// the broker's rebalance hold and retries, written out at each call):
/// twice that, for a loaded 2-core machine, plus 2 s and 100 times the
/// scheduling delay measured once per test binary. Waits end as soon as
/// their condition holds, so the margin costs nothing when things work.
pub fn budget(protocol: Duration) -> Duration {
    static SLACK: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    let slack = *SLACK.get_or_init(|| {
        let nap = Duration::from_millis(5);
        let worst = (0..20)
            .map(|_| {
                let start = Instant::now();
                std::thread::sleep(nap);
                start.elapsed().saturating_sub(nap)
            })
            .max()
            .unwrap_or_default();
        Duration::from_secs(2) + worst * 100
    });
    protocol * 2 + slack
}

/// librdkafka's reconnect backoff cap as the backend sets it (S / 2).
pub fn retry(s: Duration) -> Duration {
    s / 2
}

/// A member running in this process, with its events timestamped.
pub struct Member {
    pub name: String,
    pub bg: Option<Background>,
    pub events: Arc<Mutex<Vec<(Instant, Event)>>>,
}

impl Member {
    pub fn is_leader(&self) -> bool {
        self.bg.as_ref().is_some_and(|b| b.is_leader())
    }

    pub fn saw_after(&self, after: Instant, pred: impl Fn(&Event) -> bool) -> Option<Instant> {
        self.events.lock().unwrap().iter().find(|(t, e)| *t >= after && pred(e)).map(|(t, _)| *t)
    }
}

pub fn config(bootstrap: &str, group: &str, name: &str, t: Duration, s: Duration) -> Config {
    Config::builder()
        .bootstrap_servers(bootstrap)
        .group(group)
        .name(name)
        .heartbeat_timeout(t)
        .session_timeout(s)
        .min_poll_interval(Duration::from_millis(20))
        .close_timeout(Duration::from_secs(5))
        .kafka("log_level", "3")
        // These in-process tests were written for eager range, and the
        // librdkafka mock interrupts a cooperative leader once per
        // rebalance with the proof on (neli/KAFKA.md, "REBALANCE_IN_PROGRESS");
        // cooperative-sticky, the default, has its own (`kafka_coop`).
        .assignment(neli::Assignment::Range)
        .build()
        .expect("valid test config")
}

pub async fn start_member(cfg: &Config) -> Member {
    let neli = neli::kafka::connect(cfg).await.expect("connect to the test broker");
    member_of(neli, &cfg.resolve().unwrap().name)
}

/// A member running `neli` in the background, its events recorded.
pub fn member_of(neli: neli::Neli<neli::kafka::KafkaBroker, neli::SystemClock>, name: &str) -> Member {
    let bg = neli.background();
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut stream = bg.events();
    let sink = events.clone();
    tokio::spawn(async move {
        while let Some(e) = stream.next().await {
            sink.lock().unwrap().push((Instant::now(), e));
        }
    });
    Member { name: name.to_owned(), bg: Some(bg), events }
}

/// Polls `cond` every 20 ms until it holds or `limit` passes.
pub async fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond()
}

/// Waits until one member has led without interruption for `window`, so
/// the group has settled after the last join (members join one by one and
/// each join rebalances).
pub async fn wait_stable(members: &[Member], window: Duration, limit: Duration) -> bool {
    wait_settled(members, window, limit, |_| Some(0)).await
}

/// Like [`wait_stable`], and every member was dealt the same generation of
/// a classic group for the whole window: the group holds them all, not only
/// the leader (a mock member stuck outside the group leaves a resign or a
/// close with nobody to hand over to). For the librdkafka mock, whose
/// generations every member reads alike; on tansu (generations from 0,
/// which the backend replaces by its own count) use [`wait_stable`].
pub async fn wait_formed(members: &[Member], window: Duration, limit: Duration) -> bool {
    wait_settled(members, window, limit, common_generation).await
}

/// The generation every member was dealt, if they all hold the same one.
fn common_generation(members: &[Member]) -> Option<u64> {
    let mut generations = members.iter().map(|m| m.bg.as_ref().and_then(|b| b.status().borrow().generation));
    let first = generations.next()??;
    generations.all(|g| g == Some(first)).then_some(first)
}

/// Waits until the same member leads and `settled` gives the same answer
/// (not `None`) for `window` without interruption.
async fn wait_settled(
    members: &[Member],
    window: Duration,
    limit: Duration,
    settled: impl Fn(&[Member]) -> Option<u64>,
) -> bool {
    let deadline = Instant::now() + limit;
    let mut since: Option<(usize, u64, Instant)> = None;
    while Instant::now() < deadline {
        match (leaders(members).as_slice(), settled(members), since) {
            ([one], Some(g), Some((l, h, t))) if *one == l && g == h => {
                if t.elapsed() >= window {
                    return true;
                }
            }
            ([one], Some(g), _) => since = Some((*one, g, Instant::now())),
            _ => since = None,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Every member's transitions relative to `origin`, for failure messages.
pub fn history(members: &[Member], origin: Instant) -> String {
    let mut out = String::new();
    for m in members {
        for (t, e) in m.events.lock().unwrap().iter() {
            out.push_str(&format!("\n  {:>6} ms {} {e:?}", t.saturating_duration_since(origin).as_millis(), m.name));
        }
    }
    out
}

pub fn leaders(members: &[Member]) -> Vec<usize> {
    members.iter().enumerate().filter(|(_, m)| m.is_leader()).map(|(i, _)| i).collect()
}

/// A mock cluster with the election topic and `n` members that elected a
/// leader. The mock occasionally never forms the group (docs/background.md, Measured facts: ~1 run
/// in 14), so formation is retried on a fresh cluster.
pub async fn mock_election(n: usize, t: Duration, s: Duration) -> (MockKafka, Vec<Member>, String) {
    mock_election_with(1, n, t, s, |_, _, _| {}).await
}

/// Like [`mock_election`] on `brokers` brokers; `layout(mock, group, topic)`
/// places partitions and coordinators before anyone joins.
pub async fn mock_election_with(
    brokers: u32,
    n: usize,
    t: Duration,
    s: Duration,
    layout: impl Fn(&MockKafka, &str, &str),
) -> (MockKafka, Vec<Member>, String) {
    for attempt in 1..=4 {
        let mock = MockKafka::start(brokers).expect("mock cluster");
        let group = format!("g{attempt}-{}", std::process::id());
        let topic = format!("{group}.neli");
        mock.create_topic(&topic, 1).expect("topic");
        layout(&mock, &group, &topic);
        let mut members = Vec::new();
        for i in 0..n {
            let cfg = config(&mock.bootstrap_servers(), &group, &format!("m{i}"), t, s);
            members.push(start_member(&cfg).await);
        }
        // The mock delays a forming group by 3 s, then every join is a
        // rebalance held for S - 1 s (neli/KAFKA.md), plus a retry each.
        let limit = budget(Duration::from_secs(3) + (s + retry(s)) * n as u32 + t);
        if wait_formed(&members, Duration::from_secs(3), limit).await {
            return (mock, members, topic);
        }
        eprintln!(
            "mock group did not form within {limit:?} (attempt {attempt}; waited for one member leading 3 s \
             without interruption while every member held the same generation); retrying on a fresh cluster"
        );
        for m in &mut members {
            if let Some(bg) = m.bg.take() {
                let _ = bg.close().await;
            }
        }
    }
    panic!("the mock cluster never formed the group (every member in one generation, one leader) in 4 attempts");
}

/// `GET path` from `addr` (one HTTP/1.0 request on its own connection):
/// the status code and the body. `timeout` bounds each read and write.
pub fn http_get(addr: &str, path: &str, timeout: Duration) -> std::io::Result<(u16, String)> {
    http_response(http_request(addr, path, timeout)?)
}

/// Sends `GET path` to `addr` without waiting for the answer (the kernel
/// takes the connection and the request also while the server is stopped).
pub fn http_request(addr: &str, path: &str, timeout: Duration) -> std::io::Result<std::net::TcpStream> {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    Ok(stream)
}

/// The answer to [`http_request`]: the status code and the body.
pub fn http_response(mut stream: std::net::TcpStream) -> std::io::Result<(u16, String)> {
    use std::io::Read;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line in {head:?}")))?;
    Ok((code, body.to_owned()))
}

/// The value of the sample `name{…}` whose labels include every one of
/// `labels`, in Prometheus text format.
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (n, rest) = series.split_once('{').unwrap_or((series, "}"));
        let have: Vec<&str> = rest.trim_end_matches('}').split(',').collect();
        let matches = n == name && labels.iter().all(|(k, v)| have.contains(&format!("{k}=\"{v}\"").as_str()));
        if matches { value.parse().ok() } else { None }
    })
}

/// The address `neli exec --metrics-addr` says it serves on, from its stderr.
pub fn served_on(stderr: &str) -> Option<String> {
    let line = stderr.lines().find(|l| l.contains("serving /metrics, /healthz and /leader on http://"))?;
    Some(line.rsplit("http://").next()?.trim().to_owned())
}
