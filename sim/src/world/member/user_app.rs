//! A harness application in a member's process instead of the built-in
//! one (`app.rs`, `harness.rs`), and the faults that ask it something,
//! sent to its election's `Control` as a service's admin task would.

use neli::Neli;

use super::{Slot, record_status};
use crate::app::{AppSetup, CatchUnwind, SimMember, Store};
use crate::client::SimBroker;
use crate::clock::{SimClock, global_ms};
use crate::record::Recorder;
use crate::verdict::{Rule, Violation};

/// A harness application runs in this process instead of the built-in
/// one (`app.rs`, `harness.rs`): it gets the driver, a clock a stall holds
/// and a store client; the faults that ask the application something
/// (close, resign, close from a Revoked handler) go to its election's
/// `Control`, as an admin task of the service would send them. When it
/// returns (or panics: a reported failure) the process stops.
pub(super) async fn run_user_app(
    neli: Neli<SimBroker, SimClock>,
    clock: SimClock,
    setup: &AppSetup,
    slot: &Slot,
    name: String,
    rec: &Recorder,
) {
    let control = neli.control();
    {
        // Its leases are not claims in line with its polls (the loop is
        // the user's), as with `Neli::background`.
        let mut log = rec.lock();
        log.background.insert(name.clone());
        log.user_apps.insert(name.clone());
    }
    record_status(control.status(), control.events(), rec, &name, slot.idx);
    forward_asks(control, slot, rec, &name);
    let app_clock = clock.stalled_by(slot.app_stall.clone());
    let store = Store::new(&name, app_clock.clone(), slot.gate.clone());
    let member = SimMember { name: name.clone(), slot: slot.idx, neli, clock: app_clock, store };
    let outcome = CatchUnwind((setup.app)(member)).await;
    let mut log = rec.lock();
    if let Err(what) = outcome {
        let at = global_ms();
        let text = format!("application: {name} at {}: the application panicked: {what}", crate::verdict::secs(at));
        log.app_failures.push(Violation::new(Rule::App, text).by(&name).at(at));
    }
    log.trace.push((global_ms(), name.clone(), "the application returned".into()));
    log.ends.entry(name).or_insert(global_ms());
}

/// The faults that ask a harness application to close or resign, sent to
/// its election's `Control` (a close from a Revoked handler at its next
/// Revoked event), and noted for the rules `close-finishes` and
/// `resign-takes-effect`.
fn forward_asks(control: neli::Control, slot: &Slot, rec: &Recorder, name: &str) {
    let (ctl, rec2, name2, control2) = (slot.ctl.clone(), rec.clone(), name.to_owned(), control.clone());
    tokio::task::spawn_local(async move {
        let (rec, name, control) = (rec2, name2, control2);
        while control.end().is_none() {
            tokio::time::sleep(crate::world::TICK).await;
            let (close, resign) = {
                let mut c = ctl.lock().expect("ctl lock");
                (std::mem::take(&mut c.close), std::mem::take(&mut c.resign))
            };
            if close {
                rec.lock().close_asked.entry(name.clone()).or_insert(global_ms());
                rec.trace(global_ms(), &name, "asked to close (Control::close)");
                control.close();
            }
            if resign {
                rec.lock().resign_asked.push((global_ms(), name.clone()));
                rec.trace(global_ms(), &name, "asked to resign (Control::resign)");
                control.resign();
            }
        }
    });
    let (ctl, rec, name) = (slot.ctl.clone(), rec.clone(), name.to_owned());
    let mut events = control.events();
    tokio::task::spawn_local(async move {
        use tokio_stream::StreamExt;
        while let Some(event) = events.next().await {
            let armed = matches!(event, neli::Event::Revoked { .. })
                && std::mem::take(&mut ctl.lock().expect("ctl lock").close_in_handler);
            if armed {
                rec.lock().close_asked.entry(name.clone()).or_insert(global_ms());
                rec.trace(global_ms(), &name, "asked to close at its Revoked event (Control::close)");
                control.close();
            }
        }
    });
}
