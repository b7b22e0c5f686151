//! Failover and handover times of `neli exec` on real Kafka-protocol
//! brokers, for BENCHMARKS.md ("Real brokers"). Not a test: it prints a
//! table.
//!
//! Each run starts 3 `neli exec` children on a fresh group; their CMD
//! appends `start <neli pid> <unix ms>` to a file when it starts (i.e. at
//! `Acquired`). Failover: SIGKILL the leader's neli, time until another
//! CMD starts. Handover: SIGTERM the leader's neli (it stops CMD and leaves
//! the group, i.e. resigns), time until another CMD starts.
//!
//! Usage: cargo build -p neli --bin neli --example failover_bench &&
//!        target/debug/examples/failover_bench [mock|tansu|both] [runs] [sessions, e.g. 1,3,6] [failover,handover]
//! `NELI_BENCH_ASSIGNMENT=cooperative-sticky` runs the members with that
//! assignment strategy (default: range). `NELI_BENCH_GROUP_PROTOCOL=consumer`
//! runs them under Kafka 4's consumer protocol (mock only: tansu does not
//! speak it) with the grace the rule asks, G = T + 10%, and the mock's
//! consumer session set to S with group heartbeats at the interval neli sets
//! for `heartbeat.interval.ms` under the classic protocol
//! (`neli::rules::group_heartbeat_interval`, S/10). Run i of N sends its signal
//! i/N s later than run 0, so the runs cover every phase of the broker's
//! once-a-second checks.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use neli::kafka::mock::MockKafka;
use rustix::process::{Pid, Signal, kill_process};

fn neli_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent().and_then(|p| p.parent()).expect("target dir").join("neli")
}

fn spawn(bootstrap: &str, group: &str, s: Duration, file: &Path) -> Child {
    let t = s / 3;
    // NELI_BENCH_LOG_DIR keeps every member's debug log, for odd runs.
    let stderr = match std::env::var_os("NELI_BENCH_LOG_DIR") {
        Some(dir) => {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let f = std::fs::File::create(Path::new(&dir).join(format!("{group}-{n}.log"))).expect("log file");
            Stdio::from(f)
        }
        None => Stdio::null(),
    };
    Command::new(neli_bin())
        .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "neli=debug".into()))
        .args(["exec", "--bootstrap-servers", bootstrap, "--group", group])
        .args([
            "--heartbeat-timeout",
            &format!("{}ms", t.as_millis()),
            "--session-timeout",
            &format!("{}ms", s.as_millis()),
        ])
        .args(["--assignment", &std::env::var("NELI_BENCH_ASSIGNMENT").unwrap_or_else(|_| "range".into())])
        .args(if consumer_protocol() {
            vec![
                "--group-protocol".to_owned(),
                "consumer".to_owned(),
                "--grace".to_owned(),
                format!("{}ms", (t + t / 10).as_millis()),
            ]
        } else {
            Vec::new()
        })
        .args([
            "--stop-timeout",
            "1s",
            "--",
            "sh",
            "-c",
            "echo start $PPID $(date +%s%3N) >> \"$1\"; exec sleep 1000",
            "cmd",
        ])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("spawn neli (build it first: cargo build -p neli --bin neli)")
}

/// Whether the members speak the consumer group protocol (KIP-848).
fn consumer_protocol() -> bool {
    std::env::var("NELI_BENCH_GROUP_PROTOCOL").is_ok_and(|p| p == "consumer")
}

fn starts(file: &Path) -> Vec<(u32, u64)> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?))
        })
        .collect()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// One run; returns the time from the signal to the next CMD start.
fn run(bootstrap: &str, group: &str, s: Duration, signal: Signal, file: &Path, phase: Duration) -> Option<Duration> {
    let _ = std::fs::write(file, "");
    let mut kids: Vec<Child> = (0..3).map(|_| spawn(bootstrap, group, s, file)).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let result = (|| {
        while starts(file).is_empty() {
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Let the group settle (late joiners rebalance once), then wait
        // `phase` more: brokers act on whole seconds (tansu looks at held
        // joins once a second) and members heartbeat on a fixed beat, so a
        // signal sent at one fixed offset would measure one phase only.
        std::thread::sleep(s + Duration::from_secs(4) + phase);
        let (leader, _) = *starts(file).last()?;
        let before = starts(file).len();
        let at = now_ms();
        if let Some(pid) = i32::try_from(leader).ok().and_then(Pid::from_raw) {
            let _ = kill_process(pid, signal);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let st = starts(file);
            if let Some((_, t)) = st[before..].iter().find(|(p, _)| *p != leader) {
                return Some(Duration::from_millis(t.saturating_sub(at)));
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    })();
    for k in &mut kids {
        let _ = k.kill();
        let _ = k.wait();
    }
    result
}

fn stats(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], *v.last().unwrap())
}

fn bench(broker: &str, bootstrap: &dyn Fn(&str) -> String, runs: usize, sessions: &[u64], kinds: &str) {
    let file = std::env::temp_dir().join(format!("neli-bench-{}.log", std::process::id()));
    for &s_secs in sessions {
        let s = Duration::from_secs(s_secs);
        for (kind, signal) in [("failover (SIGKILL)", Signal::KILL), ("handover (SIGTERM=resign)", Signal::TERM)] {
            if !kinds.contains(&kind[..4]) {
                continue;
            }
            let mut times = Vec::new();
            let mut failed = 0;
            for i in 0..runs {
                let group = format!("bench-{broker}-{s_secs}-{}-{i}-{}", signal.as_raw(), std::process::id());
                // The runs' signals spread evenly over one second.
                let phase = Duration::from_millis((i * 1000 / runs) as u64);
                let result = run(&bootstrap(&group), &group, s, signal, &file, phase);
                eprintln!("{group}: {result:?}");
                match result {
                    Some(d) => times.push(d),
                    None => failed += 1,
                }
            }
            if times.is_empty() {
                println!("| {broker} | {s_secs} s | {kind} | no successful run ({failed} failed) |");
                continue;
            }
            let n = times.len();
            let (median, max) = stats(&mut times);
            let r = |d: Duration| d.as_secs_f64() / s.as_secs_f64();
            println!(
                "| {broker} | {s_secs} s | {kind} | {n} | {:.2} s ({:.2}×S) | {:.2} s ({:.2}×S) | {failed} |",
                median.as_secs_f64(),
                r(median),
                max.as_secs_f64(),
                r(max)
            );
        }
    }
    let _ = std::fs::remove_file(file);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("both");
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(10);
    let sessions: Vec<u64> = match args.get(3) {
        Some(list) => list.split(',').filter_map(|s| s.parse().ok()).collect(),
        None => vec![1, 3, 6],
    };
    let kinds = args.get(4).cloned().unwrap_or_else(|| "failover,handover".into());
    if consumer_protocol() && which != "mock" {
        eprintln!("NELI_BENCH_GROUP_PROTOCOL=consumer runs on the mock only (tansu does not speak it): use `mock`");
        std::process::exit(2);
    }
    println!("| broker | S | kind | runs | median | max | failed runs |");
    println!("|---|---|---|---|---|---|---|");
    if which == "mock" || which == "both" {
        let mock = MockKafka::start(1).expect("mock cluster");
        let bs = mock.bootstrap_servers();
        bench(
            "mock",
            &|group| {
                mock.create_topic(&format!("{group}.neli"), 1).expect("topic");
                if consumer_protocol() {
                    // The group's S; the run's name carries it.
                    let s_secs: u64 = group.split('-').nth(2).and_then(|s| s.parse().ok()).expect("bench-mock-S-...");
                    let s = Duration::from_secs(s_secs);
                    mock.consumer_group_timings(s, neli::rules::group_heartbeat_interval(s));
                }
                bs.clone()
            },
            runs,
            &sessions,
            &kinds,
        );
    }
    if which == "tansu" || which == "both" {
        let out = Command::new("sh")
            .arg("scripts/fetch-tansu.sh")
            .output()
            .expect("run scripts/fetch-tansu.sh from the repo root");
        let bin = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("tcp://127.0.0.1:{port}");
        let mut tansu = Command::new(&bin)
            .args(["broker", "--listener-url", &url, "--advertised-listener-url", &url])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn tansu");
        std::thread::sleep(Duration::from_millis(300));
        let bs = format!("127.0.0.1:{port}");
        bench("tansu", &|_| bs.clone(), runs, &sessions, &kinds);
        let _ = tansu.kill();
        let _ = tansu.wait();
    }
}
