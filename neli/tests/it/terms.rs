//! Term-scoped work on the in-memory fake broker (ARCHITECTURE.md,
//! "Term-scoped work"): a term starts on `Acquired` with its stamp, a
//! handover waits for the section in flight and refuses new ones, a fence
//! ends the term at once, and a lapsed lease refuses a section even before
//! the driver has noticed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use neli::testing::FakeCluster;
use neli::{ManualClock, Neli, Stamp, Term};

use crate::driver::{FakeNeli, config, member};
use tokio::sync::{Notify, mpsc};

/// Sends each term it is given to the test.
fn hand_terms_out(neli: &mut FakeNeli) -> mpsc::UnboundedReceiver<Term> {
    let (tx, rx) = mpsc::unbounded_channel();
    neli.on_term(0, move |term| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(term);
        }
    });
    rx
}

#[tokio::test(start_paused = true)]
async fn a_term_starts_on_acquired_with_the_leases_stamp_and_ends_on_close() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    let mut terms = hand_terms_out(&mut a);
    let a = a.background();
    let term = terms.recv().await.expect("a term once a leads");
    let lease = a.lease(0).expect("a leads");
    assert_eq!((term.role(), term.stamp()), (0, lease.stamp()));
    assert!(!term.is_over());
    let section = term.section().await.expect("a section while the lease is live");
    assert_eq!(section.stamp(), lease.stamp());
    drop(section);
    a.close().await.expect("close");
    assert!(term.is_over());
    assert!(term.section().await.is_none(), "no section once the term is over");
    term.over().await; // completes: the term has ended
}

#[tokio::test(start_paused = true)]
async fn a_handover_waits_for_the_section_in_flight_and_refuses_new_ones() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    let release = Arc::new(Notify::new());
    let (entered_tx, mut entered) = mpsc::unbounded_channel::<Stamp>();
    let late = Arc::new(Mutex::new(Vec::new()));
    let (r, l) = (release.clone(), late.clone());
    a.on_term(0, move |term| {
        let (r, l, entered_tx) = (r.clone(), l.clone(), entered_tx.clone());
        async move {
            let section = term.section().await.expect("the term's first section");
            let _ = entered_tx.send(section.stamp());
            r.notified().await;
            drop(section);
            // Asked for while the handover is under way: refused.
            let refused = term.section().await.is_none();
            l.lock().expect("late lock").push(refused);
        }
    });
    let a = a.background();
    let stamp = entered.recv().await.expect("the term entered a section");
    // "0z" sorts first, so the rebalance moves partition 0 away from "a".
    let _z = member(&cluster, "0z").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let acked = |c: &FakeCluster| c.calls().iter().any(|l| l == "a ack_revoked [0]");
    assert!(!acked(&cluster), "partition released while a section of the term was open");
    assert!(a.health().in_revoked_handler.is_some(), "the loop reports it waits for the handover");
    release.notify_one();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(acked(&cluster), "the handover went ahead once the section was left");
    assert_eq!(*late.lock().expect("late lock"), [true], "a section after the handover began is refused");
    assert_eq!(stamp.log_epoch, 0);
    a.close().await.expect("close");
}

#[tokio::test(start_paused = true)]
async fn a_fence_ends_the_term_at_once_without_waiting_for_its_section() {
    let cluster = FakeCluster::new(1);
    let mut a = member(&cluster, "a").await;
    let mut terms = hand_terms_out(&mut a);
    let _ = a.pulse(Duration::from_millis(50)).await.expect("pulse");
    let _ = a.pulse(Duration::from_millis(50)).await.expect("pulse");
    let term = terms.recv().await.expect("a term");
    let _held = term.section().await.expect("a section");
    let token = term.cancellation();
    cluster.evict("a");
    for _ in 0..5 {
        let _ = a.pulse(Duration::from_millis(50)).await.expect("pulse");
    }
    assert!(!a.is_leader());
    assert!(term.is_over(), "fenced while a section was held: the term is over at once");
    assert!(token.is_cancelled(), "the term's cancellation token too");
    assert!(term.until_over(std::future::pending::<()>()).await.is_none(), "work selecting on the term stops");
}

#[tokio::test]
async fn a_lapsed_lease_refuses_a_section_before_the_driver_notices() {
    let cluster = FakeCluster::new(1);
    let clock = ManualClock::default();
    let mut a = Neli::new(&config("a"), cluster.broker("a", clock.clone()), clock.clone()).await.expect("start");
    let (tx, mut terms) = mpsc::unbounded_channel();
    a.on_term(0, move |term| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(term);
        }
    });
    let _ = a.pulse(Duration::from_millis(50)).await.expect("pulse");
    let _ = a.pulse(Duration::from_millis(50)).await.expect("pulse");
    let term = terms.recv().await.expect("a term");
    assert!(term.section().await.is_some());
    // A stalled loop: nothing is polled, the lease lapses on the clock alone.
    clock.advance(Duration::from_millis(1000));
    assert!(term.is_over() && term.section().await.is_none());
}
