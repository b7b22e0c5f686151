//! The faults a scenario schedules (`scenarios/FORMAT.md`, "Faults") as one
//! typed enum: read from scenario files through [`RawFault`] (so a missing or
//! stray field is named), written back by serde, drawn at random by
//! [`FaultKind::draw`] and played by the simulated world (`world/apply.rs`).
//!
//! Adding a fault kind touches this file (the variant, its [`FaultKind`] and
//! the arms the compiler then asks for), `world/apply.rs` (what it does) and
//! its row in `scenarios/FORMAT.md`, which a test checks
//! (ARCHITECTURE.md, "Adding a fault kind").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::dur::Dur;
use super::limits::{MAX_FOREIGN_RECORDS, MAX_PPM, MAX_RUN};

/// A member a fault is aimed at. `leader` is resolved when the fault
/// starts, to the member that holds role 0 then (m0 if nobody does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    Leader,
    Member(u32),
}

/// Any host of the simulated cluster: a member (or `leader`) or a broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    Leader,
    Member(u32),
    Broker(u32),
}

/// A broker: `b0`, `b1`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BrokerId(pub u32);

impl From<Target> for Host {
    fn from(t: Target) -> Host {
        match t {
            Target::Leader => Host::Leader,
            Target::Member(i) => Host::Member(i),
        }
    }
}

impl From<BrokerId> for Host {
    fn from(b: BrokerId) -> Host {
        Host::Broker(b.0)
    }
}

/// `m7` -> 7 for `prefix` 'm'; digits only, no leading zeros, so that a
/// name read and written back is the same text.
fn index(text: &str, prefix: char) -> Option<u32> {
    let digits = text.strip_prefix(prefix)?;
    let canonical =
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

impl FromStr for Host {
    type Err = String;
    fn from_str(s: &str) -> Result<Host, String> {
        if s == "leader" {
            return Ok(Host::Leader);
        }
        if let Some(i) = index(s, 'm') {
            return Ok(Host::Member(i));
        }
        index(s, 'b').map(Host::Broker).ok_or_else(|| {
            format!("{s:?} is not a host: expected \"leader\", a member (m0, m1, ...) or a broker (b0, b1, ...)")
        })
    }
}

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Target, String> {
        match s.parse::<Host>() {
            Ok(Host::Leader) => Ok(Target::Leader),
            Ok(Host::Member(i)) => Ok(Target::Member(i)),
            _ => Err(format!("{s:?} is not a member: expected \"leader\" or a member (m0, m1, ...)")),
        }
    }
}

impl FromStr for BrokerId {
    type Err = String;
    fn from_str(s: &str) -> Result<BrokerId, String> {
        index(s, 'b').map(BrokerId).ok_or_else(|| format!("{s:?} is not a broker: expected b0, b1, ..."))
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Leader => f.write_str("leader"),
            Host::Member(i) => write!(f, "m{i}"),
            Host::Broker(i) => write!(f, "b{i}"),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&Host::from(*self), f)
    }
}

impl fmt::Display for BrokerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b{}", self.0)
    }
}

/// Host names are strings in scenario files.
macro_rules! serde_as_text {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }
    )*};
}
serde_as_text!(Host, Target, BrokerId);

/// The kinds of fault, as named in scenario files and `[random] kinds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, strum::VariantArray)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    Pause,
    StallPoll,
    Crash,
    Partition,
    OneWay,
    IsolateCoordinator,
    HeartbeatFailure,
    Latency,
    DropConnections,
    BrokerCrash,
    ClockStep,
    ClockDrift,
    ForeignWriter,
    Close,
    Resign,
    CloseInHandler,
    CloseAndWaitInHandler,
    FatalError,
    StaticReplace,
    Resume,
}

/// One fault. Field meanings: `scenarios/FORMAT.md`, "Faults".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Fault {
    /// The member's process stops (SIGSTOP, a GC pause): nothing of it
    /// runs, its clock goes on.
    Pause { target: Target, duration: Dur },
    /// The loop that polls the client stalls (the application's; under
    /// `app_loop = "background"` neli's, while the application goes on
    /// asking); the client's own background heartbeats go on.
    StallPoll { target: Target, duration: Dur },
    /// The member's process dies; with a duration a new incarnation starts
    /// after it.
    Crash {
        target: Target,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration: Option<Dur>,
    },
    /// Both directions between two hosts are cut.
    Partition { a: Host, b: Host, duration: Dur },
    /// Messages from `from` to `to` are dropped.
    OneWay { from: Host, to: Host, duration: Dur },
    /// The member cannot reach the coordinator, still reaches the partition leader.
    IsolateCoordinator { target: Target, duration: Dur },
    /// The coordinator drops the member's group heartbeats (they time out
    /// and renew nothing) while its other requests, the membership proof's
    /// commits included, are answered.
    HeartbeatFailure { target: Target, duration: Dur },
    /// Extra delay (and jitter) on a link.
    Latency {
        a: Host,
        b: Host,
        latency: Dur,
        #[serde(skip_serializing_if = "Option::is_none")]
        jitter: Option<Dur>,
        duration: Dur,
    },
    /// Every TCP connection of the host breaks once.
    DropConnections { target: Host },
    /// The broker goes down, and back after `duration` (one tick if not
    /// given), with its log and groups gone if `lose_state`.
    BrokerCrash {
        target: BrokerId,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration: Option<Dur>,
        lose_state: bool,
    },
    /// The member's clock jumps by `by` (signed).
    ClockStep { target: Target, by: Dur },
    /// The member's clock runs `ppm` parts per million fast (or slow) from now on.
    ClockDrift { target: Target, ppm: i64 },
    /// A stranger produces `count` records to `partition` of the election
    /// topic: garbage bytes, or well-formed heartbeats of a non-member, or
    /// (`misplaced`) well-formed heartbeats in our members' own names, each
    /// for a role this election keeps on another partition (or for no role
    /// it has).
    ForeignWriter {
        partition: u32,
        count: u32,
        garbage: bool,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        misplaced: bool,
    },
    /// The member closes its election gracefully.
    Close { target: Target },
    /// The member resigns its leadership.
    Resign { target: Target },
    /// The member's client fails fatally from its next poll on (as
    /// librdkafka's fatal errors do): the election must end, and the
    /// member leave the group.
    FatalError { target: Target },
    /// Extension: arm a Revoked handler that calls `close()` (a barrier
    /// handler closing the election; goNELI deadlocks here).
    CloseInHandler { target: Target },
    /// Extension, a deliberately broken application (hazard 7): a Revoked
    /// handler that calls `close()` and then waits for the election to be
    /// closed, as goNELI's blocking `Close()` from inside its barrier does.
    CloseAndWaitInHandler { target: Target },
    /// Extension (scenarios/FORMAT.md, `election.static_membership`): static membership's replacement. A spare
    /// process (`election.spares`) starts with the target's instance id
    /// while the target runs on; the coordinator hands it the target's
    /// partitions in the same generation, without a rebalance, and answers
    /// the target FENCED_INSTANCE_ID from then on.
    StaticReplace { target: Target },
    /// Extension: every pause of the target ends now (the member runs
    /// again); nothing if it is not paused. Written with `on` and `of`, it
    /// ends a pause at another member's moment of the protocol.
    Resume { target: Target },
}

/// A fault and when it starts, on the simulated clock from the run's start:
/// at `at`, or with `on`, at the first moment from `at` on when that
/// happens to its target member (or, with `of`, to that member).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawFault")]
pub struct TimedFault {
    pub at: Dur,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<Trigger>,
    /// The member whose moment `on` is, if not the target: `pause m0` when
    /// `m1` acquires. Only with `on`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Target>,
    #[serde(flatten)]
    pub fault: Fault,
}

impl TimedFault {
    /// The rules on `on` and `of`: `of` only with `on`, and naming one
    /// member; without `of`, a triggered fault names one member as its
    /// target, whose moment starts it (scenarios/FORMAT.md, `on`).
    pub fn check_aim(&self) -> Result<(), String> {
        match (self.on, self.of) {
            (None, Some(of)) => Err(format!(
                "faults.of = \"{of}\": `of` names the member whose moment starts the fault; it needs `on` (dealt, assigned, proof-accepted or acquired)"
            )),
            (Some(on), Some(Target::Leader)) => {
                Err(format!("faults.of = \"leader\": on = \"{on}\" is a moment of one member: name it (m0, m1, ...)"))
            }
            (Some(on), None) => {
                let aimed = self.fault.hosts().into_iter().find(|(field, _)| *field == "target").map(|(_, h)| h);
                if matches!(aimed, Some(Host::Member(_))) {
                    return Ok(());
                }
                let (kind, got) =
                    (self.fault.kind(), aimed.map_or("no target".to_owned(), |h| format!("target = \"{h}\"")));
                Err(format!(
                    "faults.on = \"{on}\": kind \"{kind}\" with {got}; a triggered fault needs a member target (m0, m1, ...), whose event starts it, or `of` naming the member"
                ))
            }
            _ => Ok(()),
        }
    }
}

/// An event of the target member that starts a fault (`on = "..."`): a
/// fault aimed at a moment of the protocol rather than at a time, as a
/// model checker's counterexample aims it (`scenarios/FORMAT.md`, "Faults").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trigger {
    /// The coordinator completed a rebalance with the member in it: its
    /// assignment is on its way, not yet received (a fault started here
    /// finds the member before it handles the assignment).
    Dealt,
    /// Its client handed the driver an assignment.
    Assigned,
    /// The coordinator accepted a membership proof it sent.
    ProofAccepted,
    /// Its election acquired a role (an `Acquired` event): it leads.
    Acquired,
}

impl Trigger {
    /// The first moment after an assignment at which the member has shown
    /// the coordinator it is in the group: the acceptance of its proof, or,
    /// without the membership proof, [`Trigger::without_proof`] of it.
    ///
    /// ```
    /// use neli_sim::scenario::Trigger;
    ///
    /// assert_eq!(Trigger::in_the_group(true), Trigger::ProofAccepted);
    /// assert_eq!(Trigger::in_the_group(false), Trigger::Assigned);
    /// ```
    pub fn in_the_group(membership_proof: bool) -> Trigger {
        if membership_proof { Trigger::ProofAccepted } else { Trigger::ProofAccepted.without_proof() }
    }

    /// This moment in a run without the membership proof. No proof is sent
    /// then, so `proof-accepted` never comes: it becomes the assignment,
    /// with which the member sends its heartbeat (scenarios/FORMAT.md,
    /// `on`). Every other moment stays.
    pub fn without_proof(self) -> Trigger {
        match self {
            Trigger::ProofAccepted => Trigger::Assigned,
            other => other,
        }
    }
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Trigger::Dealt => "dealt",
            Trigger::Assigned => "assigned",
            Trigger::ProofAccepted => "proof-accepted",
            Trigger::Acquired => "acquired",
        })
    }
}

/// The random values one drawn fault may use. `schedule.rs` draws all of
/// them for every fault, in a fixed order, so a seed's schedule does not
/// depend on which kind a draw picked.
#[derive(Debug, Clone, Copy)]
pub struct Picks {
    pub member: Target,
    pub other: Target,
    pub coordinator: BrokerId,
    pub to_coordinator: bool,
    pub length: Dur,
    pub latency: Dur,
    pub by: Dur,
    pub ppm: i64,
    pub count: u32,
    pub garbage: bool,
}

impl FaultKind {
    /// Every kind, in declaration order (strum keeps the list complete).
    pub const ALL: &'static [FaultKind] = <FaultKind as strum::VariantArray>::VARIANTS;

    /// The kind's name in scenario files (`stall-poll`); a test checks it
    /// against serde's spelling.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Pause => "pause",
            FaultKind::StallPoll => "stall-poll",
            FaultKind::Crash => "crash",
            FaultKind::Partition => "partition",
            FaultKind::OneWay => "one-way",
            FaultKind::IsolateCoordinator => "isolate-coordinator",
            FaultKind::HeartbeatFailure => "heartbeat-failure",
            FaultKind::Latency => "latency",
            FaultKind::DropConnections => "drop-connections",
            FaultKind::BrokerCrash => "broker-crash",
            FaultKind::ClockStep => "clock-step",
            FaultKind::ClockDrift => "clock-drift",
            FaultKind::ForeignWriter => "foreign-writer",
            FaultKind::Close => "close",
            FaultKind::Resign => "resign",
            FaultKind::CloseInHandler => "close-in-handler",
            FaultKind::CloseAndWaitInHandler => "close-and-wait-in-handler",
            FaultKind::FatalError => "fatal-error",
            FaultKind::StaticReplace => "static-replace",
            FaultKind::Resume => "resume",
        }
    }

    /// A fault of this kind built from random `picks` (the `[random]`
    /// table's generator, `schedule.rs`).
    pub fn draw(self, p: &Picks) -> Fault {
        let (target, duration) = (p.member, p.length);
        let peer = if p.to_coordinator { p.coordinator.into() } else { p.other.into() };
        match self {
            FaultKind::Pause => Fault::Pause { target, duration },
            FaultKind::StallPoll => Fault::StallPoll { target, duration },
            FaultKind::Crash => Fault::Crash { target, duration: Some(duration) },
            // A partition of a member from itself would do nothing, and a
            // scenario file may not hold one: the drawn member's peer is
            // then the coordinator (the same draws; only such a fault
            // changes).
            FaultKind::Partition => {
                let b = if peer == Host::from(target) { p.coordinator.into() } else { peer };
                Fault::Partition { a: target.into(), b, duration }
            }
            FaultKind::OneWay => Fault::OneWay { from: target.into(), to: p.coordinator.into(), duration },
            FaultKind::IsolateCoordinator => Fault::IsolateCoordinator { target, duration },
            FaultKind::HeartbeatFailure => Fault::HeartbeatFailure { target, duration },
            FaultKind::Latency => {
                Fault::Latency { a: target.into(), b: peer, latency: p.latency, jitter: None, duration }
            }
            FaultKind::DropConnections => Fault::DropConnections { target: target.into() },
            FaultKind::BrokerCrash => {
                Fault::BrokerCrash { target: p.coordinator, duration: Some(duration), lose_state: false }
            }
            FaultKind::ClockStep => Fault::ClockStep { target, by: p.by },
            FaultKind::ClockDrift => Fault::ClockDrift { target, ppm: p.ppm },
            FaultKind::ForeignWriter => {
                Fault::ForeignWriter { partition: 0, count: p.count, garbage: p.garbage, misplaced: false }
            }
            FaultKind::Close => Fault::Close { target },
            FaultKind::Resign => Fault::Resign { target },
            FaultKind::CloseInHandler => Fault::CloseInHandler { target },
            FaultKind::CloseAndWaitInHandler => Fault::CloseAndWaitInHandler { target },
            FaultKind::FatalError => Fault::FatalError { target },
            FaultKind::StaticReplace => Fault::StaticReplace { target },
            FaultKind::Resume => Fault::Resume { target },
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Fault {
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::Pause { .. } => FaultKind::Pause,
            Fault::StallPoll { .. } => FaultKind::StallPoll,
            Fault::Crash { .. } => FaultKind::Crash,
            Fault::Partition { .. } => FaultKind::Partition,
            Fault::OneWay { .. } => FaultKind::OneWay,
            Fault::IsolateCoordinator { .. } => FaultKind::IsolateCoordinator,
            Fault::HeartbeatFailure { .. } => FaultKind::HeartbeatFailure,
            Fault::Latency { .. } => FaultKind::Latency,
            Fault::DropConnections { .. } => FaultKind::DropConnections,
            Fault::BrokerCrash { .. } => FaultKind::BrokerCrash,
            Fault::ClockStep { .. } => FaultKind::ClockStep,
            Fault::ClockDrift { .. } => FaultKind::ClockDrift,
            Fault::ForeignWriter { .. } => FaultKind::ForeignWriter,
            Fault::Close { .. } => FaultKind::Close,
            Fault::Resign { .. } => FaultKind::Resign,
            Fault::CloseInHandler { .. } => FaultKind::CloseInHandler,
            Fault::CloseAndWaitInHandler { .. } => FaultKind::CloseAndWaitInHandler,
            Fault::FatalError { .. } => FaultKind::FatalError,
            Fault::StaticReplace { .. } => FaultKind::StaticReplace,
            Fault::Resume { .. } => FaultKind::Resume,
        }
    }

    /// The member the fault is aimed at, for kinds aimed at one member.
    pub fn member(&self) -> Option<Target> {
        match *self {
            Fault::Pause { target, .. }
            | Fault::StallPoll { target, .. }
            | Fault::Crash { target, .. }
            | Fault::IsolateCoordinator { target, .. }
            | Fault::HeartbeatFailure { target, .. }
            | Fault::ClockStep { target, .. }
            | Fault::ClockDrift { target, .. }
            | Fault::Close { target }
            | Fault::Resign { target }
            | Fault::CloseInHandler { target }
            | Fault::CloseAndWaitInHandler { target }
            | Fault::FatalError { target }
            | Fault::StaticReplace { target }
            | Fault::Resume { target } => Some(target),
            Fault::DropConnections { target: Host::Leader } => Some(Target::Leader),
            Fault::DropConnections { target: Host::Member(i) } => Some(Target::Member(i)),
            _ => None,
        }
    }

    /// Every host the fault names, with its field, in file order.
    /// Whether the fault acts on a member's running process (pause, stall,
    /// close, resign, the handler faults): such a fault does nothing while
    /// the member is down (scenarios/FORMAT.md, "Overlapping faults").
    /// Clock faults act on the host, network faults on its links, and a
    /// crash of a member that is down keeps it down.
    pub fn acts_on_process(&self) -> bool {
        matches!(
            self,
            Fault::Pause { .. }
                | Fault::StallPoll { .. }
                | Fault::Close { .. }
                | Fault::Resign { .. }
                | Fault::CloseInHandler { .. }
                | Fault::CloseAndWaitInHandler { .. }
                | Fault::FatalError { .. }
                | Fault::Resume { .. }
        )
    }

    pub fn hosts(&self) -> Vec<(&'static str, Host)> {
        match *self {
            Fault::Partition { a, b, .. } | Fault::Latency { a, b, .. } => vec![("a", a), ("b", b)],
            Fault::OneWay { from, to, .. } => vec![("from", from), ("to", to)],
            Fault::DropConnections { target } => vec![("target", target)],
            Fault::BrokerCrash { target, .. } => vec![("target", target.into())],
            Fault::ForeignWriter { .. } => vec![],
            _ => self.member().map(|t| ("target", t.into())).into_iter().collect(),
        }
    }

    /// How long the fault lasts, for faults that last.
    pub fn duration(&self) -> Option<Dur> {
        self.clone().duration_mut().map(|d| *d)
    }

    /// The duration to change, for faults that have one (shrinking halves it).
    pub fn duration_mut(&mut self) -> Option<&mut Dur> {
        match self {
            Fault::Pause { duration, .. }
            | Fault::StallPoll { duration, .. }
            | Fault::Partition { duration, .. }
            | Fault::OneWay { duration, .. }
            | Fault::IsolateCoordinator { duration, .. }
            | Fault::HeartbeatFailure { duration, .. }
            | Fault::Latency { duration, .. } => Some(duration),
            Fault::Crash { duration, .. } | Fault::BrokerCrash { duration, .. } => duration.as_mut(),
            _ => None,
        }
    }

    /// The trace line of the fault starting, with `target` resolved
    /// (`pause m1 for 5s`, `partition leader b0 for 3s`).
    pub fn describe(&self, target: Option<Host>) -> String {
        let mut words = vec![self.kind().name().to_owned()];
        match self {
            Fault::Partition { a, b, .. } | Fault::Latency { a, b, .. } => {
                words.extend([a.to_string(), b.to_string()]);
            }
            Fault::OneWay { from, to, .. } => words.extend([from.to_string(), to.to_string()]),
            Fault::ForeignWriter { .. } => {}
            _ => words.extend(target.map(|t| t.to_string())),
        }
        if let Some(d) = self.duration() {
            words.push(format!("for {d}"));
        }
        match self {
            Fault::ClockStep { by, .. } => words.push(format!("by {by}")),
            Fault::ClockDrift { ppm, .. } => words.push(format!("ppm={ppm}")),
            Fault::ForeignWriter { partition, count, misplaced, .. } => {
                words.push(format!("count={count} partition={partition}"));
                if *misplaced {
                    words.push("misplaced".into());
                }
            }
            Fault::BrokerCrash { lose_state: true, .. } => words.push("losing state".into()),
            _ => {}
        }
        words.join(" ")
    }

    /// Value rules that need no other part of the scenario; the message
    /// names the field, the value and the rule.
    pub fn check(&self) -> Result<(), String> {
        let positive = |field: &str, d: Dur| {
            if d.0 > 0 { Ok(()) } else { Err(format!("faults.{field} = \"{d}\": must be positive")) }
        };
        if let Some(d) = self.duration() {
            positive("duration", d)?;
        }
        match *self {
            // A latency on a link from a host to itself is allowed and does
            // nothing: the generator draws such pairs, and its files must
            // read back. (A partition or one-way cut of one is refused:
            // `Scenario::validate_fault`.)
            Fault::Latency { latency, jitter, .. } => {
                positive("latency", latency)?;
                match jitter {
                    Some(j) if j.0 < 0 => Err(format!("faults.jitter = \"{j}\": must not be negative")),
                    _ => Ok(()),
                }
            }
            Fault::ClockStep { by, .. } if by.0.unsigned_abs() > MAX_RUN.0.unsigned_abs() => {
                Err(format!("faults.by = \"{by}\": a step of at most \"{MAX_RUN}\" either way"))
            }
            Fault::ClockDrift { ppm, .. } if ppm.unsigned_abs() > MAX_PPM => {
                Err(format!("faults.ppm = {ppm}: must be within ±{MAX_PPM} (a clock at most twice as fast)"))
            }
            Fault::ForeignWriter { count, .. } if count == 0 || count > MAX_FOREIGN_RECORDS => {
                Err(format!("faults.count = {count}: at least 1 and at most {MAX_FOREIGN_RECORDS} records"))
            }
            _ => Ok(()),
        }
    }
}

/// A `[[faults]]` table as written: every field any kind has, so that
/// unknown fields and bad values are reported by the TOML reader with
/// their line, and [`TimedFault::try_from`] names what a kind lacks or
/// does not take.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFault {
    at: Dur,
    on: Option<Trigger>,
    of: Option<Host>,
    kind: FaultKind,
    target: Option<Host>,
    duration: Option<Dur>,
    a: Option<Host>,
    b: Option<Host>,
    from: Option<Host>,
    to: Option<Host>,
    latency: Option<Dur>,
    jitter: Option<Dur>,
    lose_state: Option<bool>,
    by: Option<Dur>,
    ppm: Option<i64>,
    partition: Option<u32>,
    count: Option<u32>,
    garbage: Option<bool>,
    misplaced: Option<bool>,
}

impl RawFault {
    /// The first field still set after the kind took its own: one it does not have.
    fn stray(&self) -> Option<&'static str> {
        [
            ("target", self.target.is_some()),
            ("duration", self.duration.is_some()),
            ("a", self.a.is_some()),
            ("b", self.b.is_some()),
            ("from", self.from.is_some()),
            ("to", self.to.is_some()),
            ("latency", self.latency.is_some()),
            ("jitter", self.jitter.is_some()),
            ("lose_state", self.lose_state.is_some()),
            ("by", self.by.is_some()),
            ("ppm", self.ppm.is_some()),
            ("partition", self.partition.is_some()),
            ("count", self.count.is_some()),
            ("garbage", self.garbage.is_some()),
            ("misplaced", self.misplaced.is_some()),
        ]
        .into_iter()
        .find_map(|(field, set)| set.then_some(field))
    }
}

fn need<T>(kind: FaultKind, field: &str, v: Option<T>) -> Result<T, String> {
    v.ok_or_else(|| format!("faults: kind \"{kind}\" requires field `{field}`"))
}

/// The member named by `field`, which `kind` aims at.
fn member(kind: FaultKind, v: Option<Host>) -> Result<Target, String> {
    match need(kind, "target", v)? {
        Host::Leader => Ok(Target::Leader),
        Host::Member(i) => Ok(Target::Member(i)),
        b @ Host::Broker(_) => {
            Err(format!("faults.target = \"{b}\": kind \"{kind}\" needs a member (m0, m1, ...) or \"leader\""))
        }
    }
}

impl RawFault {
    /// The fault this table describes, its kind's fields taken out of it
    /// (what is left over is a stray field: [`RawFault::stray`]).
    fn fault(&mut self) -> Result<Fault, String> {
        let kind = self.kind;
        let lasting = |r: &mut RawFault| need(kind, "duration", r.duration.take());
        Ok(match kind {
            FaultKind::Pause => Fault::Pause { target: member(kind, self.target.take())?, duration: lasting(self)? },
            FaultKind::StallPoll => {
                Fault::StallPoll { target: member(kind, self.target.take())?, duration: lasting(self)? }
            }
            FaultKind::Crash => {
                Fault::Crash { target: member(kind, self.target.take())?, duration: self.duration.take() }
            }
            FaultKind::Partition => Fault::Partition {
                a: need(kind, "a", self.a.take())?,
                b: need(kind, "b", self.b.take())?,
                duration: lasting(self)?,
            },
            FaultKind::OneWay => Fault::OneWay {
                from: need(kind, "from", self.from.take())?,
                to: need(kind, "to", self.to.take())?,
                duration: lasting(self)?,
            },
            FaultKind::IsolateCoordinator => {
                Fault::IsolateCoordinator { target: member(kind, self.target.take())?, duration: lasting(self)? }
            }
            FaultKind::HeartbeatFailure => {
                Fault::HeartbeatFailure { target: member(kind, self.target.take())?, duration: lasting(self)? }
            }
            FaultKind::Latency => Fault::Latency {
                a: need(kind, "a", self.a.take())?,
                b: need(kind, "b", self.b.take())?,
                latency: need(kind, "latency", self.latency.take())?,
                jitter: self.jitter.take(),
                duration: lasting(self)?,
            },
            FaultKind::DropConnections => Fault::DropConnections { target: need(kind, "target", self.target.take())? },
            FaultKind::BrokerCrash => Fault::BrokerCrash {
                target: match need(kind, "target", self.target.take())? {
                    Host::Broker(b) => BrokerId(b),
                    other => {
                        return Err(format!("faults.target = \"{other}\": broker-crash needs a broker (b0, b1, ...)"));
                    }
                },
                duration: self.duration.take(),
                lose_state: self.lose_state.take().unwrap_or(false),
            },
            FaultKind::ClockStep => {
                Fault::ClockStep { target: member(kind, self.target.take())?, by: need(kind, "by", self.by.take())? }
            }
            FaultKind::ClockDrift => Fault::ClockDrift {
                target: member(kind, self.target.take())?,
                ppm: need(kind, "ppm", self.ppm.take())?,
            },
            FaultKind::ForeignWriter => self.foreign_writer()?,
            FaultKind::Close => Fault::Close { target: member(kind, self.target.take())? },
            FaultKind::Resign => Fault::Resign { target: member(kind, self.target.take())? },
            FaultKind::CloseInHandler => Fault::CloseInHandler { target: member(kind, self.target.take())? },
            FaultKind::CloseAndWaitInHandler => {
                Fault::CloseAndWaitInHandler { target: member(kind, self.target.take())? }
            }
            FaultKind::FatalError => Fault::FatalError { target: member(kind, self.target.take())? },
            FaultKind::StaticReplace => Fault::StaticReplace { target: member(kind, self.target.take())? },
            FaultKind::Resume => Fault::Resume { target: member(kind, self.target.take())? },
        })
    }

    /// A `foreign-writer` fault: garbage unless `misplaced`, never both.
    fn foreign_writer(&mut self) -> Result<Fault, String> {
        let kind = self.kind;
        let misplaced = self.misplaced.take().unwrap_or(false);
        let garbage = self.garbage.take();
        if misplaced && garbage == Some(true) {
            return Err("faults.misplaced = true: a misplaced record is a well-formed heartbeat; \
                        leave out garbage (or set it false)"
                .into());
        }
        Ok(Fault::ForeignWriter {
            partition: need(kind, "partition", self.partition.take())?,
            count: need(kind, "count", self.count.take())?,
            garbage: garbage.unwrap_or(!misplaced),
            misplaced,
        })
    }
}

impl TryFrom<RawFault> for TimedFault {
    type Error = String;

    fn try_from(mut r: RawFault) -> Result<TimedFault, String> {
        let kind = r.kind;
        let fault = r.fault()?;
        if let Some(field) = r.stray() {
            return Err(format!(
                "faults.{field}: kind \"{kind}\" has no field `{field}` (scenarios/FORMAT.md, Faults, lists each kind's fields)"
            ));
        }
        // A broker has no moments; every other rule on `on` and `of` is
        // the scenario's (`TimedFault::check_aim`), for faults built in code too.
        let of = match r.of {
            None => None,
            Some(Host::Member(i)) => Some(Target::Member(i)),
            Some(Host::Leader) => Some(Target::Leader),
            Some(b @ Host::Broker(_)) => {
                return Err(format!(
                    "faults.of = \"{b}\": a broker has no moments of the protocol; name a member (m0, m1, ...)"
                ));
            }
        };
        Ok(TimedFault { at: r.at, on: r.on, of, fault })
    }
}
