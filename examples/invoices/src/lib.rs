//! An invoices service on neli: the leader sends one invoice per round,
//! numbered after the invoices the store already took, stamped with its
//! fencing token; it stops at once on `Fenced` and, on `Revoked`, finishes
//! the invoice it is sending before the handover. Rendering an invoice
//! takes a while, and that is where a process pause bites: a leader paused
//! while rendering wakes up with its lease gone.
//!
//! [`Variant::Correct`] asks neli again after rendering; the two wrong
//! variants are what the harness test (`tests/invoices.rs`) must catch.

use std::sync::Arc;
use std::time::Duration;

use neli::{Clock, Pulse};
use neli_sim::app::{SimMember, StoreMode};
use neli_sim::history::Stamp;

/// How long rendering an invoice takes.
pub const RENDER: Duration = Duration::from_millis(200);
/// How long one pulse of the election waits at most.
pub const ROUND: Duration = Duration::from_millis(100);

/// Which service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Renders, then asks neli again (same token?) before it sends,
    /// stamped, to a fenced store.
    Correct,
    /// Sends what it rendered without asking again: after a pause its
    /// lease may be gone. The fenced store refuses some of these writes,
    /// not all.
    NoRecheck,
    /// The same, unstamped, to a store that does not fence.
    Unfenced,
}

impl Variant {
    /// The store this variant writes to.
    pub fn store(self) -> StoreMode {
        match self {
            Variant::Unfenced => StoreMode::Unfenced,
            _ => StoreMode::Fenced,
        }
    }
}

/// The service's main, run in every member process.
pub async fn serve(member: SimMember, variant: Variant) {
    let SimMember { mut neli, clock, store, .. } = member;
    // Held while an invoice is being sent: a Revoked handler waits for it,
    // so the handover waits for the invoice in flight.
    let sending = Arc::new(tokio::sync::Mutex::new(()));
    let in_flight = sending.clone();
    neli.on_event(move |event, _control| {
        let in_flight = in_flight.clone();
        async move {
            if let neli::Event::Revoked { .. } = event {
                let _finished = in_flight.lock().await;
            }
        }
    });
    loop {
        match neli.pulse(ROUND).await {
            Ok(Pulse::Finished(_)) => return,
            Ok(Pulse::Running { .. }) => {}
            Err(_) if neli.control().error().is_some() => {
                // A fatal client error: close and stop.
                let _ = neli.close().await;
                return;
            }
            Err(_) => {
                clock.sleep(ROUND).await;
                continue;
            }
        }
        let Some(token) = neli.token() else { continue };
        let Ok(sent) = store.accepted().await else { continue };
        let key = format!("invoice-{}", sent + 1);
        clock.sleep(RENDER).await;
        let _sending = sending.lock().await;
        if variant == Variant::Correct && neli.token() != Some(token) {
            // The lease ended while rendering (a pause, a revocation).
            continue;
        }
        let log_epoch = neli.control().status().borrow().log_epoch;
        let stamp = (variant != Variant::Unfenced).then_some(Stamp { log_epoch, token: token.0 });
        let _ = store.write(key, stamp).await;
    }
}
