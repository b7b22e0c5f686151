//! What an election did and whether its loop is alive: counters and a
//! health answer on every [`crate::Control`], and the same figures as
//! metrics through the [`metrics`](https://docs.rs/metrics) facade, so the
//! application picks the exporter (Prometheus, StatsD, OpenTelemetry, ...).
//!
//! The driver emits in one place: after every pulse (and as it closes) it
//! compares its counts, and the core's [`crate::core::Counters`], with the
//! values it emitted last and adds the difference; the gauges are set from
//! the published leases at that moment. The core stays sans-IO and the
//! simulator, which installs no recorder, is unaffected.
//!
//! Every metric is named `neli_…`, with its unit in the name (`_seconds`,
//! `_total`), and labelled with the election's `group` (so elections of
//! several groups in one process stay apart) and, where it is about one
//! role, `role`. [`CATALOG`] lists them; neli/KAFKA.md, "Metrics and
//! health", has the table.
//!
//! The election registers its metrics with the recorder installed when it
//! is created ([`crate::Neli::new`]): install the exporter first, or pass a
//! recorder with [`crate::Neli::set_metrics_recorder`].
//!
//! ```
//! use std::time::Duration;
//! use neli::{Config, SystemClock, testing::FakeCluster};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), neli::Error> {
//! let config = Config::builder().group("billing-cron").build()?;
//! let clock = SystemClock::new();
//! let cluster = FakeCluster::new(1);
//! let mut neli = neli::Neli::new(&config, cluster.broker("a", clock.clone()), clock).await?;
//! let _ = neli.pulse(Duration::from_millis(10)).await?;
//! let _ = neli.pulse(Duration::from_millis(10)).await?;
//! let control = neli.control();
//! assert_eq!(control.counters().role(0).acquisitions, 1);
//! assert!(control.health().is_alive());
//! neli.close().await?;
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use ::metrics::{Counter, Gauge, Histogram, Recorder, Unit};

use crate::core::{self, FenceCause, Time};
use crate::status::{State, Status};

/// `neli_leader`: 1 while this member holds a live lease of the role, else 0.
pub const LEADER: &str = "neli_leader";
/// `neli_lease_remaining_seconds`: how long the live lease of the role has
/// left (0 without one).
pub const LEASE_REMAINING: &str = "neli_lease_remaining_seconds";
/// `neli_fencing_token`: the token of the live lease of the role, −1
/// without one.
pub const FENCING_TOKEN: &str = "neli_fencing_token";
/// `neli_log_epoch`: how many times this member saw the election log lost
/// and recreated; tokens restart with each (compare `(log_epoch, token)`).
pub const LOG_EPOCH: &str = "neli_log_epoch";
/// `neli_acquisitions_total`: terms this member started, per role.
pub const ACQUISITIONS: &str = "neli_acquisitions_total";
/// `neli_revocations_total`: orderly losses (rebalance, resign, close), per role.
pub const REVOCATIONS: &str = "neli_revocations_total";
/// `neli_fences_total`: abrupt losses, per role and `cause`
/// ([`FenceCause::as_str`]).
pub const FENCES: &str = "neli_fences_total";
/// `neli_resigns_total`: resigns carried out.
pub const RESIGNS: &str = "neli_resigns_total";
/// `neli_membership_proofs_total`: the coordinator's answers to
/// membership proofs, by `outcome` (`accepted`, `rejected`, `undetermined`).
pub const MEMBERSHIP_PROOFS: &str = "neli_membership_proofs_total";
/// `neli_heartbeats_sent_total`: heartbeats handed to the broker.
pub const HEARTBEATS_SENT: &str = "neli_heartbeats_sent_total";
/// `neli_own_heartbeats_total`: own current-term heartbeats read back (the
/// only evidence a lease rests on).
pub const OWN_HEARTBEATS: &str = "neli_own_heartbeats_total";
/// `neli_records_ignored_total`: records read and ignored, by `reason`
/// (`foreign`, `stale_term`, `undecodable`, `expired_on_arrival`,
/// `misplaced`, `while_unassigned`).
pub const RECORDS_IGNORED: &str = "neli_records_ignored_total";
/// `neli_acquisition_phase_seconds`: how long each phase of taking a role
/// took, by `phase`: `evidence` (the assignment to the first own heartbeat
/// read back), `proof` (a membership proof's round trip while acquiring),
/// `lease` (that evidence to the lease).
pub const ACQUISITION_PHASE: &str = "neli_acquisition_phase_seconds";
/// `neli_broker_errors_total`: errors of broker calls, by `kind` (`fatal`,
/// `retriable`).
pub const BROKER_ERRORS: &str = "neli_broker_errors_total";

/// One phase of an acquisition, a label value of the histogram; its
/// discriminant is its place in [`Phase::ALL`] and in the histogram handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// From the assignment to the first own heartbeat read back after it.
    Evidence,
    /// One membership proof's round trip, while acquiring.
    Proof,
    /// From that evidence to the lease (the proof, if taken, included).
    Lease,
}

impl Phase {
    pub(crate) const ALL: [Phase; 3] = [Phase::Evidence, Phase::Proof, Phase::Lease];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Evidence => "evidence",
            Phase::Proof => "proof",
            Phase::Lease => "lease",
        }
    }
}

/// One metric: its name, kind, unit, labels and meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricInfo {
    /// The metric's name.
    pub name: &'static str,
    /// `"gauge"`, `"counter"` or `"histogram"`.
    pub kind: &'static str,
    /// Its unit, if it has one.
    pub unit: Option<Unit>,
    /// Its labels.
    pub labels: &'static [&'static str],
    /// What it means (the exporter's help text).
    pub help: &'static str,
}

const ROLE: &[&str] = &["group", "role"];
const GROUP: &[&str] = &["group"];

/// Every metric the driver emits, as documented in neli/KAFKA.md.
pub const CATALOG: &[MetricInfo] = &[
    MetricInfo {
        name: LEADER,
        kind: "gauge",
        unit: None,
        labels: ROLE,
        help: "1 while this member holds a live lease of the role, else 0",
    },
    MetricInfo {
        name: LEASE_REMAINING,
        kind: "gauge",
        unit: Some(Unit::Seconds),
        labels: ROLE,
        help: "time left on the live lease of the role (0 without one)",
    },
    MetricInfo {
        name: FENCING_TOKEN,
        kind: "gauge",
        unit: None,
        labels: ROLE,
        help: "fencing token of the live lease of the role (-1 without one)",
    },
    MetricInfo {
        name: LOG_EPOCH,
        kind: "gauge",
        unit: None,
        labels: GROUP,
        help: "election logs seen lost and recreated; tokens restart with each",
    },
    MetricInfo {
        name: ACQUISITIONS,
        kind: "counter",
        unit: None,
        labels: ROLE,
        help: "leadership terms this member started",
    },
    MetricInfo {
        name: REVOCATIONS,
        kind: "counter",
        unit: None,
        labels: ROLE,
        help: "orderly losses of leadership (rebalance, resign, close)",
    },
    MetricInfo {
        name: FENCES,
        kind: "counter",
        unit: None,
        labels: &["group", "role", "cause"],
        help: "abrupt losses of leadership, by cause (assignment_lost, membership_rejected, lease_expired)",
    },
    MetricInfo { name: RESIGNS, kind: "counter", unit: None, labels: GROUP, help: "resigns carried out" },
    MetricInfo {
        name: MEMBERSHIP_PROOFS,
        kind: "counter",
        unit: None,
        labels: &["group", "outcome"],
        help: "the coordinator's answers to membership proofs (accepted, rejected, undetermined)",
    },
    MetricInfo {
        name: HEARTBEATS_SENT,
        kind: "counter",
        unit: None,
        labels: GROUP,
        help: "heartbeats written to the election topic",
    },
    MetricInfo {
        name: OWN_HEARTBEATS,
        kind: "counter",
        unit: None,
        labels: GROUP,
        help: "own current-term heartbeats read back",
    },
    MetricInfo {
        name: RECORDS_IGNORED,
        kind: "counter",
        unit: None,
        labels: &["group", "reason"],
        help: "records read and ignored, by reason (foreign, stale_term, undecodable, expired_on_arrival, misplaced, while_unassigned)",
    },
    MetricInfo {
        name: BROKER_ERRORS,
        kind: "counter",
        unit: None,
        labels: &["group", "kind"],
        help: "errors of broker calls, by kind (fatal, retriable)",
    },
    MetricInfo {
        name: ACQUISITION_PHASE,
        kind: "histogram",
        unit: Some(Unit::Seconds),
        labels: &["group", "phase"],
        help: "phases of taking a role: evidence (assignment to own heartbeat read), proof (a proof's round trip), lease (evidence to lease)",
    },
];

/// What an election did since it started: [`crate::Control::counters`].
/// The same figures as the `_total` metrics ([`CATALOG`]), as of the
/// loop's last pulse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ElectionCounters {
    /// Per role that this member ever led or lost (a role it never led
    /// has no entry: [`ElectionCounters::role`] answers zeros for it).
    pub roles: BTreeMap<u32, RoleCounters>,
    /// Resigns carried out ([`crate::Control::resign`], `Neli::resign`).
    pub resigns: u64,
    /// The coordinator's answers to membership proofs.
    pub proofs: ProofCounters,
    /// Errors of broker calls.
    pub broker_errors: BrokerErrorCounters,
    /// The core's counts of records read (foreign, stale, undecodable, ...)
    /// and heartbeats sent.
    pub records: core::Counters,
}

impl ElectionCounters {
    /// The counts of `role` (zeros if it has none).
    pub fn role(&self, role: u32) -> RoleCounters {
        self.roles.get(&role).copied().unwrap_or_default()
    }

    /// Acquisitions summed over the roles.
    pub fn acquisitions(&self) -> u64 {
        self.roles.values().map(|r| r.acquisitions).sum()
    }

    pub(crate) fn role_mut(&mut self, role: u32) -> &mut RoleCounters {
        self.roles.entry(role).or_default()
    }
}

/// Leadership transitions of one role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RoleCounters {
    /// Terms started (`Acquired`).
    pub acquisitions: u64,
    /// Orderly losses (`Revoked`: rebalance, resign, close).
    pub revocations: u64,
    /// Abrupt losses (`Fenced`), by cause.
    pub fences: FenceCounters,
}

/// `Fenced` events by [`FenceCause`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FenceCounters {
    /// [`FenceCause::AssignmentLost`].
    pub assignment_lost: u64,
    /// [`FenceCause::MembershipRejected`].
    pub membership_rejected: u64,
    /// [`FenceCause::LeaseExpired`].
    pub lease_expired: u64,
}

impl FenceCounters {
    /// The count of `cause`.
    pub fn of(&self, cause: FenceCause) -> u64 {
        match cause {
            FenceCause::AssignmentLost => self.assignment_lost,
            FenceCause::MembershipRejected => self.membership_rejected,
            FenceCause::LeaseExpired => self.lease_expired,
        }
    }

    /// All causes together.
    pub fn total(&self) -> u64 {
        FenceCause::ALL.iter().map(|c| self.of(*c)).sum()
    }

    pub(crate) fn add(&mut self, cause: FenceCause) {
        match cause {
            FenceCause::AssignmentLost => self.assignment_lost += 1,
            FenceCause::MembershipRejected => self.membership_rejected += 1,
            FenceCause::LeaseExpired => self.lease_expired += 1,
        }
    }
}

/// The coordinator's answers to membership proofs
/// ([`crate::Membership`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProofCounters {
    /// Accepted: the member holds its generation.
    pub accepted: u64,
    /// Rejected: the member or generation is no longer current.
    pub rejected: u64,
    /// Undetermined: a rebalance was in progress.
    pub undetermined: u64,
}

/// Errors of broker calls, by [`crate::ErrorKind`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrokerErrorCounters {
    /// Fatal: the election ended with it.
    pub fatal: u64,
    /// Retriable: the lease absorbs it.
    pub retriable: u64,
}

/// How long the election loop may go without finishing a pulse before it
/// counts as stuck: it waits for the broker up to `min_poll_interval` in a
/// pulse, and a pulse's broker calls (a heartbeat write, a membership proof)
/// must come back within the lease `T` for any member to lead at all. Past
/// this bound no heartbeat was sent for longer than `T`, so a stuck loop
/// holds no lease either. The bound of [`Health`]; the driver pulses every
/// `min_poll_interval` ([`crate::Neli::background`]).
pub fn liveness_bound(min_poll_interval: Duration, heartbeat_timeout: Duration) -> Duration {
    min_poll_interval + heartbeat_timeout
}

/// Whether an election's loop is alive: [`crate::Control::health`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    /// The election's lifecycle state.
    pub state: State,
    /// Whether the election has finished (closed, ended, or a fatal error).
    pub finished: bool,
    /// Time since the loop last finished a pulse (since the election was
    /// created, before its first), on the member's clock.
    pub last_pulse_age: Duration,
    /// The bound on `last_pulse_age` ([`liveness_bound`] of the
    /// configuration's `min_poll_interval` and `T`).
    pub bound: Duration,
    /// How long the loop has been waiting for a `Revoked` handler, if it
    /// is: the handover barrier, which the application holds on purpose.
    pub in_revoked_handler: Option<Duration>,
}

impl Health {
    /// Alive: the election runs (`Live`, not finished) and its loop
    /// finished a pulse within the bound, or is waiting for a `Revoked`
    /// handler (a slow handler is the application's, and a liveness probe
    /// that restarted the process then would cut the handover short).
    pub fn is_alive(&self) -> bool {
        self.state == State::Live
            && !self.finished
            && (self.last_pulse_age <= self.bound || self.in_revoked_handler.is_some())
    }
}

/// One line: `alive: last pulse 20ms ago (bound 5.02s)`, or why not.
impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |d: Duration| crate::duration::format(Duration::from_millis(d.as_millis() as u64));
        let (age, bound) = (d(self.last_pulse_age), d(self.bound));
        if self.finished || self.state != State::Live {
            return write!(
                f,
                "not alive: the election is {:?}",
                if self.finished { State::Closed } else { self.state }
            );
        }
        match self.in_revoked_handler {
            Some(w) if self.last_pulse_age > self.bound => {
                write!(f, "alive: waiting for the Revoked handler for {} (last pulse {age} ago)", d(w))
            }
            _ if self.is_alive() => write!(f, "alive: last pulse {age} ago (bound {bound})"),
            _ => write!(f, "not alive: last pulse {age} ago, over the bound {bound}"),
        }
    }
}

/// The registered handles of one election's metrics.
pub(crate) struct Handles {
    roles: Vec<RoleHandles>,
    log_epoch: Gauge,
    resigns: Counter,
    proofs: [Counter; 3],
    heartbeats_sent: Counter,
    own_heartbeats: Counter,
    /// foreign, stale_term, undecodable, expired_on_arrival, misplaced, while_unassigned.
    ignored: [Counter; 6],
    /// fatal, retriable.
    broker_errors: [Counter; 2],
    /// In [`Phase::ALL`]'s order.
    phases: [Histogram; 3],
}

struct RoleHandles {
    leader: Gauge,
    remaining: Gauge,
    token: Gauge,
    acquisitions: Counter,
    revocations: Counter,
    /// In [`FenceCause::ALL`]'s order.
    fences: [Counter; 3],
}

const IGNORED: [&str; 6] =
    ["foreign", "stale_term", "undecodable", "expired_on_arrival", "misplaced", "while_unassigned"];

fn ignored(c: &core::Counters) -> [u64; 6] {
    [c.foreign, c.stale_term, c.undecodable, c.expired_on_arrival, c.misplaced, c.while_unassigned]
}

impl Handles {
    /// Describes and registers every metric of `group`'s `roles` with
    /// `recorder`, or the global recorder when `None`.
    pub(crate) fn register(recorder: Option<&dyn Recorder>, group: &str, roles: u32) -> Handles {
        let register = || {
            for m in CATALOG {
                let help = m.help;
                match (m.kind, m.unit) {
                    ("gauge", Some(unit)) => ::metrics::describe_gauge!(m.name, unit, help),
                    ("gauge", None) => ::metrics::describe_gauge!(m.name, help),
                    ("histogram", Some(unit)) => ::metrics::describe_histogram!(m.name, unit, help),
                    ("histogram", None) => ::metrics::describe_histogram!(m.name, help),
                    (_, Some(unit)) => ::metrics::describe_counter!(m.name, unit, help),
                    (_, None) => ::metrics::describe_counter!(m.name, help),
                }
            }
            let g = group.to_owned();
            let counter = |name: &'static str, label: &'static str, value: &'static str| ::metrics::counter!(name, "group" => g.clone(), label => value);
            Handles {
                roles: (0..roles)
                    .map(|role| {
                        let r = role.to_string();
                        let labels = [("group", g.clone()), ("role", r.clone())];
                        RoleHandles {
                            leader: ::metrics::gauge!(LEADER, &labels),
                            remaining: ::metrics::gauge!(LEASE_REMAINING, &labels),
                            token: ::metrics::gauge!(FENCING_TOKEN, &labels),
                            acquisitions: ::metrics::counter!(ACQUISITIONS, &labels),
                            revocations: ::metrics::counter!(REVOCATIONS, &labels),
                            fences: FenceCause::ALL.map(|c| {
                                ::metrics::counter!(FENCES, "group" => g.clone(), "role" => r.clone(), "cause" => c.as_str())
                            }),
                        }
                    })
                    .collect(),
                log_epoch: ::metrics::gauge!(LOG_EPOCH, "group" => g.clone()),
                resigns: ::metrics::counter!(RESIGNS, "group" => g.clone()),
                proofs: ["accepted", "rejected", "undetermined"].map(|o| counter(MEMBERSHIP_PROOFS, "outcome", o)),
                heartbeats_sent: ::metrics::counter!(HEARTBEATS_SENT, "group" => g.clone()),
                own_heartbeats: ::metrics::counter!(OWN_HEARTBEATS, "group" => g.clone()),
                ignored: IGNORED.map(|r| counter(RECORDS_IGNORED, "reason", r)),
                broker_errors: ["fatal", "retriable"].map(|k| counter(BROKER_ERRORS, "kind", k)),
                phases: Phase::ALL
                    .map(|p| ::metrics::histogram!(ACQUISITION_PHASE, "group" => g.clone(), "phase" => p.as_str())),
            }
        };
        match recorder {
            Some(r) => ::metrics::with_local_recorder(r, register),
            None => register(),
        }
    }

    /// Adds to the counters what `now` counts beyond `before`.
    /// One phase of an acquisition took `took`.
    pub(crate) fn time_phase(&self, phase: Phase, took: Duration) {
        self.phases[phase as usize].record(took.as_secs_f64());
    }

    pub(crate) fn add(&self, before: &ElectionCounters, now: &ElectionCounters) {
        let inc = |c: &Counter, b: u64, n: u64| {
            if n > b {
                c.increment(n - b);
            }
        };
        for (role, h) in self.roles.iter().enumerate() {
            let role = u32::try_from(role).unwrap_or(u32::MAX);
            let (b, n) = (before.role(role), now.role(role));
            inc(&h.acquisitions, b.acquisitions, n.acquisitions);
            inc(&h.revocations, b.revocations, n.revocations);
            for (i, cause) in FenceCause::ALL.iter().enumerate() {
                inc(&h.fences[i], b.fences.of(*cause), n.fences.of(*cause));
            }
        }
        inc(&self.resigns, before.resigns, now.resigns);
        let proofs = |p: &ProofCounters| [p.accepted, p.rejected, p.undetermined];
        for (i, (b, n)) in proofs(&before.proofs).into_iter().zip(proofs(&now.proofs)).enumerate() {
            inc(&self.proofs[i], b, n);
        }
        inc(&self.heartbeats_sent, before.records.heartbeats_sent, now.records.heartbeats_sent);
        inc(&self.own_heartbeats, before.records.own_heartbeats, now.records.own_heartbeats);
        for (i, (b, n)) in ignored(&before.records).into_iter().zip(ignored(&now.records)).enumerate() {
            inc(&self.ignored[i], b, n);
        }
        inc(&self.broker_errors[0], before.broker_errors.fatal, now.broker_errors.fatal);
        inc(&self.broker_errors[1], before.broker_errors.retriable, now.broker_errors.retriable);
    }

    /// Sets the gauges from the published `status` at `now`: the same
    /// answer as every handle's `is_leader` ([`Status::lease`]).
    pub(crate) fn set_gauges(&self, status: &Status, now: Time) {
        for (role, h) in self.roles.iter().enumerate() {
            let lease = u32::try_from(role).ok().and_then(|r| status.lease(r, now));
            h.leader.set(if lease.is_some() { 1.0 } else { 0.0 });
            h.remaining.set(lease.map_or(0.0, |l| l.until.saturating_since(now).as_secs_f64()));
            h.token.set(lease.map_or(-1.0, |l| l.token.0 as f64));
        }
        self.log_epoch.set(status.log_epoch as f64);
    }
}
