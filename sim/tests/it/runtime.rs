//! The simulator's runtime (`neli_sim::rt`, ARCHITECTURE.md, "The
//! simulator's runtime"): time that jumps over idle stretches, a network
//! that delays, loses and resets as documented, hosts whose tasks end with
//! them, and the same run for the same seed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use neli_sim::rt::Sim;
use neli_sim::rt::net::{TcpListener, TcpStream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Log = Arc<Mutex<Vec<String>>>;

fn ms() -> u64 {
    neli_sim::rt::elapsed().map_or(u64::MAX, |d| d.as_millis() as u64)
}

fn note(log: &Log, text: impl Into<String>) {
    log.lock().unwrap().push(format!("{} {}", ms(), text.into()));
}

/// A host "srv" that answers every 4-byte frame with the same frame, and
/// notes what it reads and how each connection ends.
fn echo(sim: &mut Sim, log: &Log) {
    let log = log.clone();
    sim.host("srv", move || {
        let log = log.clone();
        async move {
            let l = TcpListener::bind(("0.0.0.0", 9)).await?;
            loop {
                let (mut s, from) = l.accept().await?;
                let log = log.clone();
                tokio::task::spawn_local(async move {
                    let mut buf = [0u8; 4];
                    loop {
                        match s.read_exact(&mut buf).await {
                            Ok(_) => {
                                note(&log, format!("srv read {:?} from {from}", buf));
                                if s.write_all(&buf).await.is_err() {
                                    return;
                                }
                            }
                            Err(e) => return note(&log, format!("srv: {:?}", e.kind())),
                        }
                    }
                });
            }
        }
    });
}

/// A run with the echo host "srv" and a host "cli" running `cli` (handed
/// the log), every message taking `delay` ms.
fn echo_and_client<F, Fut>(seed: u64, delay: u64, cli: F) -> (Sim, Log)
where
    F: Fn(Log) -> Fut + 'static,
    Fut: std::future::Future<Output = neli_sim::rt::Result> + 'static,
{
    let log: Log = Arc::default();
    let d = Duration::from_millis(delay);
    let mut sim = Sim::new(seed, d, d);
    echo(&mut sim, &log);
    let l = log.clone();
    sim.host("cli", move || cli(l.clone()));
    (sim, log)
}

fn delays(seed: u64) -> Vec<u64> {
    let log: Log = Arc::default();
    let mut sim = Sim::new(seed, Duration::from_millis(1), Duration::from_millis(25));
    echo(&mut sim, &log);
    let out: Arc<Mutex<Vec<u64>>> = Arc::default();
    let o = out.clone();
    sim.host("cli", move || {
        let o = o.clone();
        async move {
            let mut s = TcpStream::connect("srv:9").await?;
            for i in 0..20u8 {
                let sent = ms();
                s.write_all(&[i; 4]).await?;
                let mut buf = [0u8; 4];
                s.read_exact(&mut buf).await?;
                assert_eq!(buf, [i; 4], "in order and intact");
                o.lock().unwrap().push(ms() - sent);
            }
            Ok(())
        }
    });
    sim.run_until(10_000).expect("runs");
    out.lock().unwrap().clone()
}

// Round trips take two drawn delays of 1-25 ms each; the same seed draws
// the same ones, another seed others.
#[test]
fn delays_are_drawn_from_the_seed_within_the_links_bounds() {
    let a = delays(7);
    assert_eq!(a.len(), 20, "every echo came back: {a:?}");
    assert!(a.iter().all(|d| (2..=50).contains(d)), "{a:?}");
    assert!(a.iter().any(|d| *d > 2), "not every delay is the least: {a:?}");
    assert_eq!(delays(7), a, "the same seed, the same run");
    assert_ne!(delays(8), a, "another seed, other delays");
}

// An hour of a host that sleeps: the runtime jumps from timer to timer
// (what that saves is measured in BENCHMARKS.md, "The simulator's own
// runtime"), and every timer fires at its millisecond.
#[test]
fn time_jumps_from_timer_to_timer() {
    let mut sim = Sim::new(1, Duration::from_millis(1), Duration::from_millis(1));
    let woke: Arc<Mutex<u32>> = Arc::default();
    let w = woke.clone();
    sim.host("sleeper", move || {
        let w = w.clone();
        async move {
            loop {
                tokio::time::sleep(Duration::from_secs(60)).await;
                *w.lock().unwrap() += 1;
            }
        }
    });
    // What is due at the instant a run stops at runs after it, once the
    // caller has done what it does at that instant.
    sim.run_until(3_600_000).expect("runs");
    assert_eq!(*woke.lock().unwrap(), 59);
    assert_eq!(sim.elapsed(), Duration::from_secs(3600));
    sim.run_until(3_600_001).expect("runs");
    assert_eq!(*woke.lock().unwrap(), 60);
    sim.run_until(3_660_000).expect("runs");
    assert_eq!(*woke.lock().unwrap(), 60, "the next wake is at 3,660 s, after the stop");
    sim.run_until(3_660_001).expect("runs");
    assert_eq!(*woke.lock().unwrap(), 61);
}

// A segment sent on a cut link is lost and the stream delivers nothing
// after it, even once the link heals: no retransmission.
#[test]
fn a_segment_lost_on_a_cut_link_stalls_its_stream() {
    let (mut sim, log) = echo_and_client(3, 5, |l| async move {
        {
            let mut s = TcpStream::connect("srv:9").await?;
            s.write_all(&[1; 4]).await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            s.write_all(&[2; 4]).await?; // sent while the link is cut
            tokio::time::sleep(Duration::from_millis(200)).await;
            s.write_all(&[3; 4]).await?; // after the heal: stuck behind the lost one
            note(&l, "cli wrote all");
            Ok(())
        }
    });
    sim.run_until(50).unwrap();
    sim.partition("cli", "srv");
    sim.run_until(150).unwrap();
    sim.repair("cli", "srv");
    sim.run_until(2_000).unwrap();
    let log = log.lock().unwrap().clone();
    assert!(log.iter().any(|l| l.ends_with("srv read [1, 1, 1, 1] from cli")), "{log:?}");
    assert!(!log.iter().any(|l| l.contains("[2, 2, 2, 2]") || l.contains("[3, 3, 3, 3]")), "{log:?}");
}

// `reset_connections` breaks every connection of a host: both ends read a
// reset at once; a new connection works.
#[test]
fn a_reset_reaches_both_ends_at_once() {
    let (mut sim, log) = echo_and_client(4, 5, |l| async move {
        {
            let mut s = TcpStream::connect("srv:9").await?;
            let mut buf = [0u8; 4];
            let err = s.read_exact(&mut buf).await.expect_err("reset");
            note(&l, format!("cli: {:?}", err.kind()));
            // A reset stream stays reset, for reads and writes.
            let again = s.read_exact(&mut buf).await.expect_err("still reset").kind();
            let write = s.write_all(&[1; 4]).await.expect_err("reset too").kind();
            note(&l, format!("cli then: {again:?} {write:?}"));
            let mut again = TcpStream::connect("srv:9").await?;
            again.write_all(&[9; 4]).await?;
            again.read_exact(&mut buf).await?;
            note(&l, format!("cli got {buf:?} again"));
            Ok(())
        }
    });
    sim.run_until(100).unwrap();
    sim.reset_connections("cli");
    sim.run_until(1_000).unwrap();
    let log = log.lock().unwrap().clone();
    assert!(log.contains(&"100 cli: ConnectionReset".to_owned()), "{log:?}");
    assert!(log.contains(&"100 cli then: ConnectionReset ConnectionReset".to_owned()), "{log:?}");
    assert!(log.contains(&"100 srv: ConnectionReset".to_owned()), "{log:?}");
    assert!(log.iter().any(|l| l.ends_with("cli got [9, 9, 9, 9] again")), "{log:?}");
}

// A host that is down refuses a connection a round trip later; a connection
// over a cut link is tried again after 1 s, 2 s, ... and made once it heals.
#[test]
fn connections_are_refused_by_a_host_down_and_retried_over_a_cut_link() {
    let (mut sim, log) = echo_and_client(5, 5, |l| async move {
        {
            let refused = TcpStream::connect("srv:9").await.err().map(|e| e.kind());
            note(&l, format!("cli: {refused:?}"));
            tokio::time::sleep(Duration::from_millis(90)).await;
            let _s = TcpStream::connect("srv:9").await?;
            note(&l, "cli connected");
            Ok(())
        }
    });
    sim.crash("srv");
    sim.run_until(50).unwrap();
    sim.bounce("srv");
    sim.partition("cli", "srv");
    sim.run_until(2_500).unwrap();
    sim.repair("cli", "srv");
    sim.run_until(10_000).unwrap();
    let log = log.lock().unwrap().clone();
    assert!(log.contains(&"10 cli: Some(ConnectionRefused)".to_owned()), "{log:?}");
    // Tried at 100 ms, again at 1.1 s and 3.1 s: the heal at 2.5 s lets the third through.
    assert!(log.contains(&"3110 cli connected".to_owned()), "{log:?}");
}

// A crash drops every task of the host, the ones it spawned too; `bounce`
// starts its program again.
#[test]
fn a_crash_ends_every_task_of_its_host() {
    let log: Log = Arc::default();
    let mut sim = Sim::new(6, Duration::from_millis(1), Duration::from_millis(1));
    let l = log.clone();
    sim.host("h", move || {
        let l = l.clone();
        async move {
            note(&l, "start");
            let l2 = l.clone();
            tokio::task::spawn_local(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    note(&l2, "tick");
                }
            });
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    sim.run_until(250).unwrap();
    sim.crash("h");
    sim.run_until(1_000).unwrap();
    sim.bounce("h");
    sim.run_until(1_150).unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(log, ["0 start", "100 tick", "200 tick", "1000 start", "1100 tick"]);
}

// A task started with `tokio::spawn` inside a host would outlive a crash
// of the host: the run fails, naming where it was spawned.
#[test]
fn a_tokio_spawn_inside_a_host_fails_the_run_naming_it() {
    if !cfg!(tokio_unstable) {
        return eprintln!("SKIPPED: needs --cfg tokio_unstable (.cargo/config.toml sets it)");
    }
    let mut sim = Sim::new(1, Duration::from_millis(1), Duration::from_millis(1));
    sim.host("h", || async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        tokio::spawn(async {});
        Ok(())
    });
    let err = sim.run_until(100).expect_err("the stray task fails the run");
    assert!(err.contains("host h spawned a task with tokio::spawn at") && err.contains("runtime.rs"), "{err}");
    assert!(err.contains("tokio::task::spawn_local"), "{err}");
}

// A host program's error or panic ends the run with its message.
#[test]
fn a_host_error_or_panic_is_reported_with_its_host() {
    let mut sim = Sim::new(1, Duration::from_millis(1), Duration::from_millis(1));
    sim.host("bad", || async { Err("no disk".into()) });
    assert_eq!(sim.run_until(10).expect_err("an error"), "host bad: no disk");
    let mut sim = Sim::new(1, Duration::from_millis(1), Duration::from_millis(1));
    sim.host("worse", || async { panic!("lost the plot") });
    let err = sim.run_until(10).expect_err("a panic");
    assert_eq!(err, "host worse panicked: lost the plot");
}

// A SYN whose answer is lost on a cut way back is sent again, as TCP does,
// and no half-open connection reaches the listener meanwhile; a shutdown
// sends the end of stream.
#[test]
fn a_lost_answer_to_a_connection_is_retried_and_a_shutdown_ends_the_stream() {
    let (mut sim, log) = echo_and_client(7, 5, |l| async move {
        let mut s = TcpStream::connect("srv:9").await?;
        note(&l, "cli connected");
        s.shutdown().await?;
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).await?;
        note(&l, format!("cli read to the end: {} bytes", rest.len()));
        Ok(())
    });
    sim.partition_oneway("srv", "cli");
    sim.run_until(500).unwrap();
    assert!(log.lock().unwrap().is_empty(), "nothing while the answers are lost: {:?}", log.lock().unwrap());
    sim.repair_oneway("srv", "cli");
    sim.run_until(5_000).unwrap();
    let log = log.lock().unwrap().clone();
    // Sent at 0 (answer lost at 5), again at 1,005 (through at 1,010, back at 1,015).
    assert_eq!(log, ["1015 cli connected", "1020 srv: UnexpectedEof", "1025 cli read to the end: 0 bytes"]);
}

// Wrong addresses get errors that name them; the network outside a host
// says so.
#[test]
fn a_wrong_address_is_named_in_its_error() {
    let log: Log = Arc::default();
    let mut sim = Sim::new(1, Duration::from_millis(1), Duration::from_millis(1));
    let l = log.clone();
    sim.host("cli", move || {
        let l = l.clone();
        async move {
            for addr in ["srv", "srv:port", "nowhere:9"] {
                let e = TcpStream::connect(addr).await.err().expect("an error");
                note(&l, format!("{addr}: {:?} {e}", e.kind()));
            }
            Ok(())
        }
    });
    sim.run_until(10).unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "0 srv: InvalidInput not host:port: srv",
            "0 srv:port: InvalidInput not host:port: srv:port",
            "0 nowhere:9: NotFound no host named nowhere"
        ]
    );
    let outside = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let e = outside.block_on(TcpStream::connect("srv:9")).err().expect("outside a run");
    assert!(e.to_string().contains("outside a simulated host"), "{e}");
}
