//! Scenario files (`scenarios/FORMAT.md`, v1): parsing with errors that name
//! the file, line, field and rule, and [`run_scenario`], the entry point the
//! `neli-lab` CLI and the tests share.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer};
use toml::Spanned;

pub use crate::oracle::Figures;
pub use crate::world::{RunReport, run_scenario};

/// A duration written with a unit: `"250ms"`, `"3s"`, `"1m"`; `by` of a
/// clock step may be negative (`"-2s"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Dur(pub i64);

impl Dur {
    pub fn ms(self) -> u64 {
        u64::try_from(self.0).unwrap_or(0)
    }
    pub fn duration(self) -> Duration {
        Duration::from_millis(self.ms())
    }
    pub fn parse(text: &str) -> Result<Dur, String> {
        let t = text.trim();
        let (neg, t) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: i64 = num.parse().map_err(|_| {
            format!("invalid duration {text:?}: expected a number with a unit, e.g. \"250ms\", \"3s\", \"1m\"")
        })?;
        let scale = match unit {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            _ => {
                return Err(format!("invalid duration {text:?}: unit must be ms, s or m"));
            }
        };
        let ms = n.checked_mul(scale).ok_or_else(|| format!("duration {text:?} is too large"))?;
        Ok(Dur(if neg { -ms } else { ms }))
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        let s = String::deserialize(d)?;
        Dur::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 % 1000 == 0 { write!(f, "{}s", self.0 / 1000) } else { write!(f, "{}ms", self.0) }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileName {
    #[default]
    Kafka,
    Tansu,
    LibrdkafkaMock,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ModeName {
    #[default]
    Exclusive,
    MultiRole,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    #[default]
    Recommended,
    LeaseFromReceipt,
    AnyRecordCounts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    Pause,
    StallPoll,
    Crash,
    Partition,
    OneWay,
    IsolateCoordinator,
    Latency,
    DropConnections,
    BrokerCrash,
    ClockStep,
    ClockDrift,
    ForeignWriter,
    Close,
    Resign,
    /// Extension: arm a Revoked handler that calls `close()` (a barrier
    /// handler closing the election; goNELI deadlocks here).
    CloseInHandler,
    /// Extension, a deliberately broken application (hazard 7): a Revoked
    /// handler that calls `close()` and then waits for the election to be
    /// closed, as goNELI's blocking `Close()` from inside its barrier does.
    CloseAndWaitInHandler,
}

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Pause => "pause",
            FaultKind::StallPoll => "stall-poll",
            FaultKind::Crash => "crash",
            FaultKind::Partition => "partition",
            FaultKind::OneWay => "one-way",
            FaultKind::IsolateCoordinator => "isolate-coordinator",
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
        }
    }
}

fn d1() -> u32 {
    1
}
fn b0() -> String {
    "b0".into()
}
fn yes() -> bool {
    true
}
fn poll_default() -> Dur {
    Dur(100)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cluster {
    #[serde(default = "d1")]
    pub brokers: u32,
    #[serde(default = "b0")]
    pub coordinator: String,
    #[serde(default = "b0")]
    pub partition_leader: String,
    #[serde(default)]
    pub profile: ProfileName,
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster { brokers: 1, coordinator: b0(), partition_leader: b0(), profile: ProfileName::Kafka }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Election {
    pub members: u32,
    #[serde(default)]
    pub mode: ModeName,
    #[serde(default = "d1")]
    pub roles: u32,
    #[serde(default = "d1")]
    pub partitions: u32,
    #[serde(default = "yes")]
    pub exclusive: bool,
    pub heartbeat_timeout: Dur,
    pub session_timeout: Dur,
    #[serde(default)]
    pub grace: Dur,
    pub heartbeat_interval: Option<Dur>,
    #[serde(default = "poll_default")]
    pub poll_interval: Dur,
    #[serde(default = "yes")]
    pub membership_proof: bool,
    #[serde(default)]
    pub variant: Variant,
    /// Extension to v1: `max.poll.interval.ms`, also the rebalance timeout.
    pub max_poll_interval: Option<Dur>,
    /// Extension to v1: after each pulse that says it leads, the application
    /// works this long (on its own clock; a pause can land inside) and then
    /// asks `is_leader()` again, without pulsing, before writing.
    pub app_work: Option<Dur>,
}

impl Election {
    pub fn max_poll_ms(&self) -> u64 {
        self.max_poll_interval.map_or(10_000, Dur::ms)
    }
    pub fn is_exclusive(&self) -> bool {
        self.mode == ModeName::Exclusive || self.exclusive
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    pub at: Dur,
    pub kind: FaultKind,
    pub target: Option<String>,
    pub duration: Option<Dur>,
    pub a: Option<String>,
    pub b: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub latency: Option<Dur>,
    pub jitter: Option<Dur>,
    pub lose_state: Option<bool>,
    pub by: Option<Dur>,
    pub ppm: Option<i64>,
    pub partition: Option<u32>,
    pub count: Option<u32>,
    pub garbage: Option<bool>,
}

impl Fault {
    /// A fault with only `at` and `kind` set (for generated schedules).
    pub fn new(at: Dur, kind: FaultKind) -> Fault {
        Fault {
            at,
            kind,
            target: None,
            duration: None,
            a: None,
            b: None,
            from: None,
            to: None,
            latency: None,
            jitter: None,
            lose_state: None,
            by: None,
            ppm: None,
            partition: None,
            count: None,
            garbage: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Random {
    pub faults: u32,
    pub kinds: Vec<FaultKind>,
    pub max_duration: Dur,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub max_overlap: Option<Dur>,
    pub max_gap: Option<Dur>,
    pub max_failover: Option<Dur>,
}

/// One scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub duration: Dur,
    pub seed: Option<u64>,
    #[serde(default)]
    pub cluster: Cluster,
    pub election: Election,
    #[serde(default)]
    pub faults: Vec<Spanned<Fault>>,
    pub random: Option<Random>,
    #[serde(default)]
    pub expect: Expect,
}

/// A scenario that could not be read; the message names file, line, field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScenarioError(pub String);

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|b| *b == b'\n').count() + 1
}

/// Limits that keep a scenario's cost (memory, time, output) sane; each
/// error names the field, the value and the limit (scenarios/FORMAT.md).
pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 2000;
pub const MAX_MEMBERS: u32 = 64;
pub const MAX_FAULTS: u32 = 1000;
pub const MAX_RUN: Dur = Dur(3_600_000);
pub const MAX_PPM: u64 = 1_000_000;
pub const MAX_FOREIGN_RECORDS: u32 = 100_000;

impl Scenario {
    /// Reads and validates the scenario file at `path`.
    pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScenarioError(format!("{}: cannot read: {e}", path.display())))?;
        Scenario::parse(&text, &path.display().to_string())
    }

    /// Parses and validates scenario `text`; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let s: Scenario = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|r| line_of(text, r.start));
            let at = line.map(|l| format!(":{l}")).unwrap_or_default();
            ScenarioError(format!("{file}{at}: {}", e.message()))
        })?;
        s.validate().map_err(|(offset, msg)| {
            let at = offset.map(|o| format!(":{}", line_of(text, o))).unwrap_or_default();
            ScenarioError(format!("{file}{at}: {msg}"))
        })?;
        Ok(s)
    }

    /// The hosts a scenario may name.
    pub fn member_names(&self) -> Vec<String> {
        (0..self.election.members).map(|i| format!("m{i}")).collect()
    }
    pub fn broker_names(&self) -> Vec<String> {
        (0..self.cluster.brokers).map(|i| format!("b{i}")).collect()
    }

    fn validate(&self) -> Result<(), (Option<usize>, String)> {
        let err = |msg: String| Err((None, msg));
        if self.name.is_empty() || !self.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return err(format!("name = {:?}: must match [a-z0-9-]+", self.name));
        }
        if self.name.len() > MAX_NAME {
            return err(format!("name: {} characters, at most {MAX_NAME} allowed", self.name.len()));
        }
        if self.description.chars().count() > MAX_DESCRIPTION {
            let n = self.description.chars().count();
            return err(format!("description: {n} characters, at most {MAX_DESCRIPTION} allowed"));
        }
        if self.duration.0 <= 0 {
            return err(format!("duration = \"{}\": must be positive", self.duration));
        }
        if self.duration.0 > MAX_RUN.0 {
            return err(format!("duration = \"{}\": at most \"{MAX_RUN}\" of simulated time", self.duration));
        }
        if let Some(r) = &self.random {
            if r.faults > MAX_FAULTS {
                return err(format!("random.faults = {}: at most {MAX_FAULTS}", r.faults));
            }
            if r.max_duration.0 <= 0 {
                return err(format!("random.max_duration = \"{}\": must be positive", r.max_duration));
            }
        }
        if self.faults.len() > MAX_FAULTS as usize {
            return err(format!("{} faults: at most {MAX_FAULTS}", self.faults.len()));
        }
        let c = &self.cluster;
        if c.brokers == 0 {
            return err("cluster.brokers = 0: need at least one broker".into());
        }
        let brokers = self.broker_names();
        for (field, v) in [("coordinator", &c.coordinator), ("partition_leader", &c.partition_leader)] {
            if !brokers.contains(v) {
                return err(format!("cluster.{field} = {v:?}: no such broker (brokers are b0..b{})", c.brokers - 1));
            }
        }
        let e = &self.election;
        if e.members == 0 {
            return err("election.members = 0: need at least one member".into());
        }
        if e.members > MAX_MEMBERS {
            return err(format!("election.members = {}: at most {MAX_MEMBERS}", e.members));
        }
        if e.heartbeat_timeout.0 <= 0 || e.session_timeout.0 <= 0 || e.poll_interval.0 <= 0 {
            return err("election: heartbeat_timeout, session_timeout and poll_interval must be positive".into());
        }
        if e.roles == 0 || e.partitions == 0 {
            return err("election: roles and partitions must be at least 1".into());
        }
        if let Some(w) = e.app_work
            && w.0 <= 0
        {
            return err(format!("election.app_work = \"{w}\": must be positive"));
        }
        if let Some(i) = e.heartbeat_interval
            && (i.0 <= 0 || i >= e.heartbeat_timeout)
        {
            return err(format!("election.heartbeat_interval = \"{i}\": must be positive and below heartbeat_timeout"));
        }
        let members = self.member_names();
        let hosts: Vec<String> = members.iter().chain(brokers.iter()).cloned().collect();
        for f in &self.faults {
            let at = Some(f.span().start);
            let f = f.get_ref();
            let kind = f.kind.name();
            let need = |field: &str, v: bool| {
                if v { Ok(()) } else { Err((at, format!("faults: kind {kind:?} requires field `{field}`"))) }
            };
            let member = |field: &str, v: &Option<String>| match v {
                Some(t) if t == "leader" || members.contains(t) => Ok(()),
                Some(t) => {
                    Err((at, format!("faults.{field} = {t:?}: not a member (m0..m{}) or \"leader\"", e.members - 1)))
                }
                None => Err((at, format!("faults: kind {kind:?} requires field `{field}`"))),
            };
            let host = |field: &str, v: &Option<String>| match v {
                Some(t) if t == "leader" || hosts.contains(t) => Ok(()),
                Some(t) => Err((at, format!("faults.{field} = {t:?}: no such host"))),
                None => Err((at, format!("faults: kind {kind:?} requires field `{field}`"))),
            };
            if f.at.0 < 0 {
                return Err((at, format!("faults.at = \"{}\": must not be negative", f.at)));
            }
            if f.at >= self.duration {
                return Err((
                    at,
                    format!(
                        "faults.at = \"{}\": at or after the end of the run (duration = \"{}\")",
                        f.at, self.duration
                    ),
                ));
            }
            for (field, v) in [("duration", f.duration), ("latency", f.latency)] {
                if let Some(d) = v
                    && d.0 <= 0
                {
                    return Err((at, format!("faults.{field} = \"{d}\": must be positive")));
                }
            }
            if let Some(j) = f.jitter
                && j.0 < 0
            {
                return Err((at, format!("faults.jitter = \"{j}\": must not be negative")));
            }
            if let Some(ppm) = f.ppm
                && ppm.unsigned_abs() > MAX_PPM
            {
                return Err((
                    at,
                    format!("faults.ppm = {ppm}: must be within ±{MAX_PPM} (a clock at most twice as fast)"),
                ));
            }
            if let Some(by) = f.by
                && by.0.unsigned_abs() > MAX_RUN.0.unsigned_abs()
            {
                return Err((at, format!("faults.by = \"{by}\": a step of at most \"{MAX_RUN}\" either way")));
            }
            if let Some(n) = f.count
                && n > MAX_FOREIGN_RECORDS
            {
                return Err((at, format!("faults.count = {n}: at most {MAX_FOREIGN_RECORDS} records")));
            }
            match f.kind {
                FaultKind::Pause | FaultKind::StallPoll | FaultKind::IsolateCoordinator => {
                    member("target", &f.target)?;
                    need("duration", f.duration.is_some())?;
                }
                FaultKind::Crash
                | FaultKind::Close
                | FaultKind::Resign
                | FaultKind::CloseInHandler
                | FaultKind::CloseAndWaitInHandler => member("target", &f.target)?,
                FaultKind::ClockStep => {
                    member("target", &f.target)?;
                    need("by", f.by.is_some())?;
                }
                FaultKind::ClockDrift => {
                    member("target", &f.target)?;
                    need("ppm", f.ppm.is_some())?;
                }
                FaultKind::Partition | FaultKind::Latency => {
                    host("a", &f.a)?;
                    host("b", &f.b)?;
                    need("duration", f.duration.is_some())?;
                    if f.kind == FaultKind::Latency {
                        need("latency", f.latency.is_some())?;
                    }
                }
                FaultKind::OneWay => {
                    host("from", &f.from)?;
                    host("to", &f.to)?;
                    need("duration", f.duration.is_some())?;
                }
                FaultKind::DropConnections => host("target", &f.target)?,
                FaultKind::BrokerCrash => match &f.target {
                    Some(t) if brokers.contains(t) => {}
                    other => {
                        return Err((
                            at,
                            format!("faults.target = {other:?}: broker-crash needs a broker (b0..b{})", c.brokers - 1),
                        ));
                    }
                },
                FaultKind::ForeignWriter => {
                    need("partition", f.partition.is_some())?;
                    need("count", f.count.is_some())?;
                }
            }
            if f.kind == FaultKind::IsolateCoordinator && c.coordinator == c.partition_leader {
                return Err((
                    at,
                    "faults: isolate-coordinator needs cluster.coordinator != cluster.partition_leader".into(),
                ));
            }
        }
        Ok(())
    }
}
