//! The harness API as a team uses it: its own application in every member
//! process, its own invariants, and what it is told when its code or its
//! setup is wrong (a named failure and the seed, never a hang).

use std::time::Duration;

use neli::downstream::{Downstream, Written};
use neli::{Clock, Pulse, Stamp, Token};
use neli_sim::Rule;
use neli_sim::app::{SimMember, StoreMode};
use neli_sim::harness::{Harness, Settings};
use neli_sim::history::Entry;

use crate::scenario;

/// Leads and writes `tick` once a round, stamped, until its election ends.
pub async fn ticker(m: SimMember) {
    let SimMember { mut neli, clock, store, .. } = m;
    loop {
        match neli.pulse(Duration::from_millis(100)).await {
            Ok(Pulse::Finished(_)) => return,
            Ok(Pulse::Running { .. }) => {}
            Err(_) => {
                clock.sleep(Duration::from_millis(100)).await;
                continue;
            }
        }
        if let Some(lease) = neli.lease(0) {
            let _ = store.write("tick", b"", lease.stamp()).await;
        }
    }
}

fn pause() -> Harness {
    Harness::new(scenario(include_str!("scenarios/leader-pause.toml"))).app(ticker)
}

// The same seed gives the same history and trace, byte for byte; and the
// app's writes are in it, each judged by the fenced store.
#[test]
fn a_seed_of_a_harness_application_replays_byte_for_byte() {
    let h = pause();
    let (a, b) = (h.run_seed(3), h.run_seed(3));
    assert!(a.passed(), "{:?}", a.violations);
    assert_eq!(a.history, b.history);
    assert_eq!(a.trace, b.trace);
    let writes: Vec<_> = a.history.writes().collect();
    assert!(writes.len() > 20, "the app wrote while leading: {}", writes.len());
    assert!(writes.iter().all(|w| w.key == "tick" && w.stamp.is_some() && w.sent_at <= w.at));
    let refused = writes.iter().filter(|w| !w.accepted).count();
    assert!(
        writes.iter().all(|w| w.accepted
            || w.stamp < writes.iter().filter(|x| x.accepted && x.at < w.at).map(|x| x.stamp).max().flatten()),
        "a refusal is of a stamp below one accepted before ({refused} refused)"
    );
    // Every accepted write came from a member that held role 0 when it sent it.
    assert!(writes.iter().filter(|w| w.accepted).all(|w| a.history.held(&w.member, 0, w.sent_at)));
}

// A panicking application fails its seed with rule `application`, quoting
// the panic; the other seeds still run.
#[test]
fn an_application_that_panics_fails_its_seed_by_name() {
    let h = Harness::new(scenario(include_str!("scenarios/leader-pause.toml")))
        .app(|m: SimMember| async move {
            m.clock.sleep(Duration::from_secs(2)).await;
            if m.slot == 1 {
                panic!("invoice template missing");
            }
        })
        .seeds(0..2);
    let r = h.run();
    assert_eq!(r.seeds, [0, 1]);
    assert_eq!(r.failures.len(), 2, "{r}");
    let v = &r.failures[0].violations;
    assert!(
        v.iter().any(|v| v.rule == Rule::App && v.detail.contains("invoice template missing") && v.members == ["m1"]),
        "{v:?}"
    );
    let text = r.to_string();
    assert!(text.contains("seed 0:") && text.contains("reproduce: NELI_SIM_SEED=0 cargo test "), "{text}");
}

// An invariant's verdict and its panic are violations named after it.
#[test]
fn invariants_fail_and_panic_by_name() {
    let r = pause()
        .invariant("holds", |_| Ok(()))
        .invariant("at most 3 writes", |h| match h.writes().count() {
            n if n <= 3 => Ok(()),
            n => Err(format!("{n} writes")),
        })
        .invariant("reads past the end", |h| {
            let entries = &h.entries;
            let _ = &entries[entries.len() + 1];
            Ok(())
        })
        .seeds([5])
        .run();
    let v = &r.failures[0].violations;
    let rules: Vec<String> = v.iter().map(|v| v.class()).collect();
    assert_eq!(rules, ["invariant at most 3 writes", "invariant reads past the end"], "{r}");
    assert!(v[1].detail.contains("panicked"), "{v:?}");
}

// An application that blocks its thread (no .await) cannot be stopped by
// the simulation: the seed's wall-clock budget stops waiting for it and
// fails the seed, naming it.
#[test]
fn an_application_that_blocks_its_thread_fails_after_the_budget() {
    let r = Harness::new(scenario(include_str!("scenarios/leader-pause.toml")))
        .app(|_m: SimMember| async move {
            std::thread::sleep(Duration::from_secs(3));
        })
        .seed_budget(Duration::from_millis(300))
        .seeds([9])
        .run();
    assert_eq!(r.failures.len(), 1, "{r}");
    let v = &r.failures[0].violations[0];
    assert_eq!(v.rule, Rule::App);
    assert!(v.detail.contains("seed 9 did not finish within its wall-clock budget"), "{v}");
}

// Faults that ask the application something reach a harness application
// through its Control: it resigns (the lease moves) and closes (its pulse
// says Finished, it returns, the process stops); the oracles judge both.
#[test]
fn resign_and_close_faults_reach_a_harness_application() {
    let h = Harness::new(scenario(include_str!("scenarios/harness-close-resign.toml"))).app(ticker);
    let r = h.run_seed(2);
    assert!(r.passed(), "{:?}", r.violations);
    assert!(r.trace.iter().any(|l| l.contains("asked to resign (Control::resign)")), "resign forwarded");
    assert!(r.trace.iter().any(|l| l.contains("asked to close (Control::close)")), "close forwarded");
    let stopped = r.history.entries.iter().any(|e| matches!(e, Entry::Stopped(p) if p.at >= 18_000 && p.at < 30_000));
    assert!(stopped, "the closed member's application returned and its process stopped");
}

// An application that never returns after its election was closed (it
// never pulses again, so it is never told) fails rule close-finishes,
// naming the member, within the run: no hang.
#[test]
fn an_application_that_never_returns_after_a_close_fails_close_finishes() {
    let h =
        Harness::new(scenario(include_str!("scenarios/harness-close-resign.toml"))).app(|m: SimMember| async move {
            let SimMember { mut neli, clock, .. } = m;
            loop {
                let _ = neli.pulse(Duration::from_millis(100)).await;
                if neli.control().state() != neli::State::Live {
                    // Ignores the close: works on forever without pulsing.
                    loop {
                        clock.sleep(Duration::from_secs(1)).await;
                    }
                }
            }
        });
    let r = h.run_seed(2);
    let v: Vec<_> = r.violations.iter().filter(|v| v.rule == Rule::CloseFinishes).collect();
    assert_eq!(v.len(), 1, "{:?}", r.violations);
    assert!(v[0].detail.contains("its application asked to close") && v[0].members.len() == 1, "{v:?}");
}

// The store judges by stamp with the SQLite adapter: fenced, a stamp below
// the highest is refused; unfenced, everything is taken.
#[test]
fn the_store_fences_by_stamp_unless_told_not_to() {
    let writer = |m: SimMember| async move {
        if m.slot != 0 {
            return;
        }
        let s = |token| Stamp { log_epoch: 0, token: Token(token) };
        let mut got = Vec::new();
        for (key, stamp) in [("a", s(5)), ("b", s(3)), ("c", s(4)), ("d", s(5))] {
            got.push(m.store.write(key, b"", stamp).await.expect("the store answers"));
        }
        assert_eq!(
            m.store.count().await.expect("the store answers"),
            got.iter().filter(|o| **o == Written::Accepted).count() as u64,
            "one key per accepted write"
        );
    };
    let fenced = Harness::new(scenario(include_str!("scenarios/leader-pause.toml"))).app(writer).run_seed(1);
    let taken: Vec<bool> = fenced.history.writes().map(|w| w.accepted).collect();
    assert_eq!(taken, [true, false, false, true]);
    let open = Harness::new(scenario(include_str!("scenarios/leader-pause.toml")))
        .app(writer)
        .store(StoreMode::Unfenced)
        .run_seed(1);
    assert!(open.history.writes().all(|w| w.accepted));
}

// A fault that acts inside the built-in application's own handler cannot
// reach a harness application's handlers: refused by name, nothing runs.
#[test]
fn a_fault_a_harness_application_cannot_take_is_refused_by_name() {
    let r = Harness::new(scenario(include_str!("scenarios/broken-handler-waits-for-its-close.toml"))).app(ticker).run();
    assert!(!r.passed() && r.seeds.is_empty());
    let e = r.error.as_deref().unwrap_or_default();
    assert!(e.contains("close-and-wait-in-handler") && e.contains("broken-handler-waits-for-its-close"), "{e}");
    let none = pause().seeds(std::iter::empty()).run();
    assert!(none.error.as_deref().is_some_and(|e| e.contains("no seeds")), "{none}");
}

// NELI_SIM_SEED picks one seed; anything but a number is refused by name.
#[test]
fn the_seed_variable_reruns_one_seed_or_names_what_is_wrong() {
    let read = |v: &str| Settings::read(|k| (k == "NELI_SIM_SEED").then(|| v.to_owned()));
    assert_eq!(read("17").unwrap().seed, Some(17));
    let e = read("seventeen").unwrap_err();
    assert_eq!((e.var, e.value.as_str()), ("NELI_SIM_SEED", "seventeen"));
    assert!(e.to_string().starts_with("NELI_SIM_SEED=\"seventeen\": a seed"), "{e}");
    assert!(read("-1").is_err());
}
