//! The built-in application's token-guarded resources: before each write
//! it asks whether it leads, and the answer, the lease its driver published
//! and the token are recorded for the oracles (`oracle/mod.rs`, `writes`).
//! Role 0 is asked through every handle, which must agree; in exclusive
//! multi-role mode every other role guards a resource of its own, written
//! while `Control::lease(role)` gives a lease, so a stale write on any role
//! is seen (scenarios/FORMAT.md, "What the application is told").

use neli::{Clock, Neli};

use crate::client::SimBroker;
use crate::clock::{SimClock, global_ms};
use crate::record::{Recorder, Told, WriteObs};
use crate::verdict::Rule;

/// The handles an application may ask whether it leads role 0: the one
/// it pulses (`Neli`) or the one it runs in the background (`Background`).
pub(super) enum Handle<'a> {
    Pulsed(&'a Neli<SimBroker, SimClock>),
    Background(&'a neli::Background),
}

impl Handle<'_> {
    /// (handle, "do I lead role 0?") for each of the handle's own methods,
    /// and the token it gives.
    fn ask(&self) -> (Vec<(&'static str, bool)>, Option<neli::Token>) {
        match self {
            Handle::Pulsed(n) => (
                vec![
                    ("Neli::token", n.token().is_some()),
                    ("Neli::is_leader", n.is_leader()),
                    ("Neli::is_leader_of(0)", n.is_leader_of(0)),
                ],
                n.token(),
            ),
            Handle::Background(b) => (
                vec![
                    ("Background::token", b.token().is_some()),
                    ("Background::is_leader", b.is_leader()),
                    ("Background::control().token", b.control().token().is_some()),
                ],
                b.token(),
            ),
        }
    }
}

/// Writes the resource of every role from 1 below `roles` it holds a lease
/// of, then asks `token()` (`is_leader()`'s answer) and, if told it leads,
/// writes role 0's. What the application is told is recorded with the
/// member's clock reading and the lease its driver published, for the
/// oracle. Returns whether it was told it leads role 0.
pub(super) fn write_if_told(
    handle: Handle<'_>,
    clock: &SimClock,
    control: &neli::Control,
    rec: &Recorder,
    name: &str,
    roles: u32,
) -> bool {
    for role in 1..roles {
        write_role(clock, control, rec, name, role);
    }
    // Every handle answers from the same published status and clock, so
    // they agree at one instant (`neli::Status::is_leader_of`).
    let (mut asked, token) = handle.ask();
    let lease = control.lease(0);
    asked.extend([
        ("Control::token", control.token().is_some()),
        ("Control::is_leader", control.is_leader()),
        ("Control::is_leader_of(0)", control.is_leader_of(0)),
        ("Control::lease(0)", lease.is_some()),
        ("Status::is_leader_of(0, now)", control.status().borrow().is_leader_of(0, clock.now())),
    ]);
    if asked.iter().any(|(_, a)| *a != asked[0].1) || control.token() != token || lease.map(|l| l.token) != token {
        let what = asked.iter().map(|(h, a)| format!("{h} {a}")).collect::<Vec<_>>().join(", ");
        let what = format!("{what}; tokens {token:?} and {:?}", control.token());
        rec.lock().saw_broken(Rule::HandlesAgree, name, global_ms(), what);
    }
    let Some(token) = token else {
        return false;
    };
    record_write(rec, name, 0, token.0, told(clock.now(), control, 0));
    true
}

/// Writes the resource of `role` if `Control::lease(role)` gives a lease;
/// the status the driver published must give the same answer at the same
/// instant (rule `handles-agree`).
fn write_role(clock: &SimClock, control: &neli::Control, rec: &Recorder, name: &str, role: u32) {
    let lease = control.lease(role);
    let now = clock.now();
    let published = control.status().borrow().is_leader_of(role, now);
    if published != lease.is_some() {
        let what = format!("Control::lease({role}) {lease:?}, Status::is_leader_of({role}, now) {published}");
        rec.lock().saw_broken(Rule::HandlesAgree, name, global_ms(), what);
    }
    let Some(lease) = lease else {
        return;
    };
    record_write(rec, name, role, lease.token.0, told(now, control, role));
}

/// What the application was told at `now` about `role`: its clock reading
/// and the end of the lease the driver had published (`None`: none).
fn told(now: neli::Time, control: &neli::Control, role: u32) -> Told {
    let until = control.status().borrow().leading.get(&role).map(|l| l.until.as_millis());
    Told { local: now.as_millis(), lease_until: until }
}

fn record_write(rec: &Recorder, name: &str, role: u32, token: u64, told: Told) {
    let mut log = rec.lock();
    let log_epoch = log.epoch_of(name, role, token, false);
    let at = global_ms();
    log.writes.push(WriteObs {
        at,
        member: name.to_owned(),
        role,
        token,
        log_epoch,
        told: Some(told),
        in_handler: false,
    });
}
