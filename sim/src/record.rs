//! What a run records, on the global simulated clock: the readable trace and
//! the raw observations (lease status changes, events, resource writes,
//! incarnation ends, faults) the oracles judge.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use neli::{Event, Lease};

use crate::clock::ClockModel;
use crate::verdict::{Rule, Violation};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone)]
pub struct LeaseObs {
    pub at: u64,
    pub member: String,
    pub slot: usize,
    pub leading: BTreeMap<u32, Lease>,
}

#[derive(Debug, Clone)]
pub struct EventObs {
    pub at: u64,
    pub member: String,
    pub event: Event,
    /// The run's log epoch (broker log losses so far) when it happened.
    pub log_epoch: u64,
}

/// A write to the token-guarded resource of a role: the application asked
/// `is_leader()`/`token()` and was told it leads role 0, or, in exclusive
/// multi-role mode, `Control::lease(role)` gave it a lease of another role
/// (each role guards a resource of its own).
#[derive(Debug, Clone)]
pub struct WriteObs {
    pub at: u64,
    pub member: String,
    pub role: u32,
    pub token: u64,
    pub log_epoch: u64,
    /// What the member's own clock read when it was told, and the lease end
    /// its driver had published then (`None`: no lease of the role), where the
    /// recorder can see both (the simulator; not the real-broker suite).
    pub told: Option<Told>,
    /// Written by a Revoked handler finishing its work (not the main loop).
    pub in_handler: bool,
}

/// The instant a member was told it leads, on its own clock (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Told {
    pub local: u64,
    pub lease_until: Option<u64>,
}

/// A record a broker appended to the election topic, with who really sent
/// it. The per-rule oracles (`oracle/rules.rs`) hold leases against these
/// facts, which the members themselves cannot know; the broker logic never
/// reads `author`.
#[derive(Debug, Clone)]
pub struct AppendObs {
    pub seq: u64,
    pub at: u64,
    pub partition: u32,
    pub offset: u64,
    /// The incarnation (or `stranger`) whose client produced it.
    pub author: String,
    /// What the record claims, when it decodes as a heartbeat.
    pub heartbeat: Option<HeartbeatClaim>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatClaim {
    pub role: u32,
    pub term: u64,
    /// Send time on the author's own clock (ms).
    pub sent_at: u64,
    /// The token of the term the author said it led the role in when it
    /// sent this heartbeat (what `neli watch` shows), if it said so.
    pub lease: Option<u64>,
}

/// A generation-checked commit (the membership proof) the coordinator
/// accepted, with when the member's client sent it on the member's clock.
#[derive(Debug, Clone)]
pub struct ProofObs {
    pub seq: u64,
    pub member: String,
    pub generation: u64,
    pub sent_local: u64,
}

/// What a member's client handed its driver when the driver polled it.
#[derive(Debug, Clone)]
pub struct AssignmentObs {
    pub seq: u64,
    pub at: u64,
    pub member: String,
    pub change: AssignmentChange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssignmentChange {
    Assigned {
        generation: u64,
        partitions: Vec<u32>,
    },
    Revoked(Vec<u32>),
    Lost(Vec<u32>),
    /// The topic watcher found the election log lost (`BrokerEvent::LogLost`):
    /// the driver must report a higher log epoch from then on.
    LogLost,
    /// The coordinator rejected a membership proof of this generation
    /// (unknown member or stale generation): the member's assignment ends.
    ProofRejected {
        generation: u64,
    },
    /// Not from the client: the application resigned (`Neli::resign`
    /// returned Ok), so the member holds no assignment until it rejoins.
    Resigned,
}

/// The leases a member's driver had published when its `pulse` returned:
/// taken in line with the client's polls, so the rules see them in the
/// order the member learned things (`seq`), which `LeaseObs` (taken when
/// the status changes, for the hold intervals) cannot promise.
#[derive(Debug, Clone)]
pub struct ClaimObs {
    pub seq: u64,
    pub at: u64,
    pub member: String,
    /// The driver's published log epoch (how many log losses it reported).
    pub log_epoch: u64,
    /// The generation of the assignment its status reports, if any.
    pub generation: Option<u64>,
    pub leading: BTreeMap<u32, Lease>,
}

#[derive(Debug, Clone)]
pub struct FaultObs {
    pub at: u64,
    /// When it ends (`at` for an instant fault).
    pub until: u64,
    /// The fault killed the member incarnation it hit (a crash).
    pub kills: bool,
    /// The member incarnation the fault hit, if it targeted a member.
    pub member: Option<String>,
    /// Every member incarnation the fault touches (its target, either end
    /// of a cut link): a leader that loses its lease with none of them on it
    /// was interrupted.
    pub touches: Vec<String>,
    pub held_role0: bool,
}

/// What one close the application made (`Neli::close`,
/// `Background::close`) returned.
#[derive(Debug, Clone)]
pub struct CloseResult {
    /// Global ms when the close returned.
    pub at: u64,
    pub member: String,
    /// `Ok`, or the error as `Debug` prints it.
    pub result: Result<(), String>,
    /// The error was `CloseTimedOut`.
    pub timed_out: bool,
    /// The error was a fatal broker error.
    pub fatal: bool,
}

impl CloseResult {
    pub fn new(member: &str, r: Result<(), &neli::Error>) -> CloseResult {
        CloseResult {
            at: crate::clock::global_ms(),
            member: member.to_owned(),
            result: r.map_err(|e| format!("{e:?}")),
            timed_out: matches!(r, Err(neli::Error::CloseTimedOut(_))),
            fatal: matches!(r, Err(neli::Error::Broker(b)) if b.is_fatal()),
        }
    }
}

/// A write's fencing stamp: `neli::Stamp` (log epoch, then token), which
/// a downstream that orders writes by it compares (neli/KAFKA.md, "Fencing
/// tokens after a broker lost its log").
pub use neli::Stamp;

/// `neli::Stamp` in the simulator's serialized forms (the history's JSON,
/// the store's wire): `{"log_epoch":0,"token":5}`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct StampJson {
    log_epoch: u64,
    token: u64,
}

impl From<Stamp> for StampJson {
    fn from(s: Stamp) -> StampJson {
        StampJson { log_epoch: s.log_epoch, token: s.token.0 }
    }
}

impl From<StampJson> for Stamp {
    fn from(s: StampJson) -> Stamp {
        Stamp { log_epoch: s.log_epoch, token: neli::Token(s.token) }
    }
}

/// `Option<neli::Stamp>` as [`StampJson`], for `#[serde(with)]`.
mod stamp_json {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Stamp, StampJson};

    pub fn serialize<S: Serializer>(stamp: &Option<Stamp>, s: S) -> Result<S::Ok, S::Error> {
        stamp.map(StampJson::from).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Stamp>, D::Error> {
        Ok(Option::<StampJson>::deserialize(d)?.map(Stamp::from))
    }
}

/// A write a member made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Write {
    /// When it took effect: the store received it (harness applications),
    /// or the built-in application wrote its token-guarded resource.
    pub at: u64,
    /// When the application sent it (the same instant for the built-in
    /// application).
    pub sent_at: u64,
    pub member: String,
    /// What was written (the store's key; `resource` for the built-in
    /// application).
    pub key: String,
    /// The fencing stamp it carried; `None` for an unfenced write.
    #[serde(with = "stamp_json")]
    pub stamp: Option<Stamp>,
    /// The store took it. A fenced store refuses a stamp below the highest
    /// it has taken; the built-in resource takes every write (the oracles
    /// judge it).
    pub accepted: bool,
    /// Written by a Revoked handler finishing its work (built-in application).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_handler: bool,
}

#[derive(Debug, Default)]
pub struct Log {
    pub trace: Vec<(u64, String, String)>,
    pub leases: Vec<LeaseObs>,
    pub events: Vec<EventObs>,
    pub writes: Vec<WriteObs>,
    pub faults: Vec<FaultObs>,
    /// Incarnation name -> global time it stopped (crash, close).
    pub ends: BTreeMap<String, u64>,
    /// Incarnation name -> global time its application first asked the
    /// election to close (`Neli::close` or `Control::close`): the
    /// `close-finishes` rule holds it to ending within the close timeout.
    pub close_asked: BTreeMap<String, u64>,
    /// (global ms, incarnation): its application asked to resign
    /// (`Control::resign`, `Background::resign`); the client notes the
    /// resign itself when the member leaves the group (rule
    /// `resign-takes-effect`).
    pub resign_asked: Vec<(u64, String)>,
    /// Incarnation name -> global time a `fatal-error` fault hit its client:
    /// the election must end (rule `close-finishes`).
    pub fatal_at: BTreeMap<String, u64>,
    /// Incarnations whose application loop was told the election finished
    /// (a close, a fatal error, the election ended), not killed.
    pub finished: BTreeSet<String>,
    /// What each close the application made returned (rule `close-reports`).
    pub close_results: Vec<CloseResult>,
    /// Incarnation name -> the `State` its `status()` subscriber was last
    /// woken with (rule `handles-agree`: it is woken for every change).
    pub watched_state: BTreeMap<String, neli::State>,
    /// Incarnations whose application runs the election with
    /// `Neli::background` (no claims in line with its polls).
    pub background: BTreeSet<String>,
    /// Incarnation name -> member slot.
    pub slots: BTreeMap<String, usize>,
    /// (global ms, incarnation): its process started.
    pub starts: Vec<(u64, String)>,
    /// Bumped when a broker loses its log: fencing tokens restart.
    pub log_epoch: u64,
    /// Current incarnation per slot.
    pub current: BTreeMap<usize, String>,
    /// Rules broken where the simulator saw them happen, not replayed from
    /// facts, each with its incarnation, global time and what happened:
    /// `handles-agree` (the application's handles disagreed on whether it
    /// leads), `wakes-on-time`, `heartbeat-seq`, `no-busy-wait`
    /// (`oracle/rules.rs` reports them with the replayed rules).
    pub seen_broken: Vec<Violation>,
    /// The layers of the lease whose setting made a difference in this
    /// run: with the layer off, the run would have gone otherwise from
    /// there. A layer not in here could be switched off and the run would
    /// be the same, byte for byte (`explore --ablate` reuses such runs:
    /// ARCHITECTURE.md, "Layer ablation").
    pub acted: BTreeSet<crate::scenario::Layer>,
    /// The per-rule oracles' facts (`oracle/rules.rs`), ordered by `seq`.
    pub appends: Vec<AppendObs>,
    pub proofs: Vec<ProofObs>,
    pub assignments: Vec<AssignmentObs>,
    pub claims: Vec<ClaimObs>,
    /// (global ms, incarnation): the coordinator dropped the member
    /// (session or rebalance timeout), so a barrier it was in no longer holds.
    pub removals: Vec<(u64, String)>,
    /// (global ms, incarnation): the coordinator completed a rebalance with
    /// the member in it and sent it its assignment (`on = "dealt"`).
    pub dealt: Vec<(u64, String)>,
    /// Writes that reached a harness application's downstream store
    /// (`harness::store`), accepted or not.
    pub store_writes: Vec<Write>,
    /// Incarnations running a harness application instead of the built-in one.
    pub user_apps: BTreeSet<String>,
    /// Harness applications that failed as programs (one panicked), each
    /// a `Rule::App` violation with its incarnation and global time; the
    /// oracles report them as they are.
    pub app_failures: Vec<Violation>,
    seq: u64,
}

impl Log {
    /// Notes `rule` broken by incarnation `member` at global `at`, as the
    /// simulator saw it happen (`seen_broken`).
    pub fn saw_broken(&mut self, rule: Rule, member: &str, at: u64, what: String) {
        self.seen_broken.push(Violation::new(rule, what).by(member).at(at));
    }

    /// The run's log epoch when `member` acquired `role` with `token`: its
    /// writes with that token belong to that log, also after the log was
    /// lost under it. A main-loop write follows the member's latest event
    /// of the role only if that is this acquisition; otherwise the acquisition is
    /// not recorded yet and belongs to the current epoch (the same token
    /// value comes back after a lost log: scenario stall-and-restart under
    /// cooperative-sticky). A Revoked handler's writes follow the latest
    /// acquisition, whatever was recorded since (`in_handler`).
    pub fn epoch_of(&self, member: &str, role: u32, token: u64, in_handler: bool) -> u64 {
        let mut mine = self.events.iter().rev().filter(|e| e.member == member && e.event.role() == role);
        let latest = if in_handler { mine.find(|e| matches!(e.event, Event::Acquired { .. })) } else { mine.next() };
        latest
            .filter(|e| matches!(e.event, Event::Acquired { token: t, .. } if t.0 == token))
            .map_or(self.log_epoch, |e| e.log_epoch)
    }

    /// The next number in the order the rules' facts were recorded.
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Whether incarnation `member` holds role 0 at global `now`: it has
    /// not stopped, and the newest lease of role 0 its driver published has
    /// not ended on its own clock (`clocks[slot]`). The simulator aims
    /// `leader` faults with this and the oracles judge with it.
    pub fn holds_role0(&self, clocks: &[ClockModel], member: &str, now: u64) -> bool {
        if self.ends.get(member).is_some_and(|e| *e <= now) {
            return false;
        }
        let Some(o) = self.leases.iter().filter(|o| o.member == member && o.at <= now).max_by_key(|o| o.at) else {
            return false;
        };
        let Some(l) = o.leading.get(&0) else {
            return false;
        };
        l.is_live_at(neli::Time::from_millis(clocks[o.slot].local_at(now)))
    }

    /// The slot whose current incarnation holds role 0 at `now`, if any.
    pub fn role0_holder(&self, clocks: &[ClockModel], now: u64) -> Option<usize> {
        self.current.iter().find(|(_, m)| self.holds_role0(clocks, m, now)).map(|(i, _)| *i)
    }
}

/// Shared, cheap-to-clone handle on the run's [`Log`].
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    inner: Arc<Mutex<Log>>,
    /// Notified at every moment a fault can wait for (`scenario::Trigger`):
    /// the world stops the run there to start the fault at that instant.
    moment: Arc<tokio::sync::Notify>,
}

impl Recorder {
    pub fn lock(&self) -> MutexGuard<'_, Log> {
        // A run whose code panicked (a mutant of the core, say) is still
        // judged and reported from what it recorded (`run_scenario`).
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn trace(&self, at: u64, host: &str, text: impl Into<String>) {
        self.lock().trace.push((at, host.to_owned(), text.into()));
    }

    /// Something a triggered fault can wait for was just recorded.
    pub(crate) fn moment(&self) {
        self.moment.notify_one();
    }

    /// What [`Recorder::moment`] notifies.
    pub(crate) fn moments(&self) -> Arc<tokio::sync::Notify> {
        self.moment.clone()
    }
}

/// `  12.345s m1 Acquired role=0 token=17`
pub fn format_line(at: u64, host: &str, text: &str) -> String {
    format!("{:>4}.{:03}s {host} {text}", at / 1000, at % 1000)
}
