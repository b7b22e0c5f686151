//! Scenario files (`scenarios/FORMAT.md`, v1): parsing with errors that name
//! the file, line, field and rule, and [`run_scenario`](crate::run_scenario), the entry point the
//! `neli-lab` CLI and the tests share.

mod build;
mod dur;
mod fault;
mod limits;
pub mod schedule;
mod suggest;
mod validate;

use serde::{Deserialize, Serialize};
use toml::Spanned;

pub use crate::profile::Profile;
pub use dur::{BadDuration, Dur};
pub use fault::{BrokerId, Fault, FaultKind, Host, Picks, Target, TimedFault, Trigger};
pub use limits::*;
pub use suggest::closest;

/// How long the built-in application's Revoked handler keeps finishing
/// work unless the scenario says (`election.revoked_work`).
pub const DEFAULT_REVOKED_WORK: std::time::Duration = std::time::Duration::from_millis(250);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ModeName {
    #[default]
    Exclusive,
    MultiRole,
}

/// How a member's application runs the election (`election.app_loop`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppLoop {
    /// Its own loop of `pulse()` calls.
    #[default]
    Pulse,
    /// `Neli::background()`, asking the `Background` handle.
    Background,
}

impl AppLoop {
    fn is_default(&self) -> bool {
        *self == AppLoop::Pulse
    }
}

/// The group protocol the members speak (`election.group_protocol`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupProtocolName {
    /// JoinGroup/SyncGroup/Heartbeat.
    #[default]
    Classic,
    /// Kafka 4's consumer protocol (KIP-848), as far as it changes the
    /// lease: the client has no session expiry of its own and a commit
    /// renews no session (docs/background.md, "Group protocols"). Member
    /// epochs and server-side assignment are not simulated.
    Consumer,
}

impl GroupProtocolName {
    fn is_default(&self) -> bool {
        *self == GroupProtocolName::Classic
    }
}

/// `[election] assignment`: the partition assignment strategy every member
/// uses (neli's `Assignment`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AssignmentName {
    /// Eager `range`: every rebalance revokes everything from everyone.
    Range,
    /// Incremental `cooperative-sticky`: only a partition that moves is revoked.
    CooperativeSticky,
}

/// The library's own default (`neli::Assignment::default()`), so a file
/// without the key simulates what `Config::default()` and `neli exec` run
/// (scenarios/FORMAT.md, "election.assignment").
impl Default for AssignmentName {
    fn default() -> AssignmentName {
        match neli::Assignment::default() {
            neli::Assignment::Range => AssignmentName::Range,
            neli::Assignment::CooperativeSticky => AssignmentName::CooperativeSticky,
        }
    }
}

impl AssignmentName {
    pub fn is_default(&self) -> bool {
        *self == AssignmentName::default()
    }

    pub fn neli(self) -> neli::Assignment {
        match self {
            AssignmentName::Range => neli::Assignment::Range,
            AssignmentName::CooperativeSticky => neli::Assignment::CooperativeSticky,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    #[default]
    Recommended,
    LeaseFromReceipt,
    AnyRecordCounts,
}

impl Variant {
    /// The name scenario files use.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Recommended => "recommended",
            Variant::LeaseFromReceipt => "lease-from-receipt",
            Variant::AnyRecordCounts => "any-record-counts",
        }
    }
}

fn d1() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One layer of the lease's defence that a run can switch off (layer
/// ablation, docs/background.md "Layer ablation"): the design says which
/// of them the others must cover for, and a scenario says in
/// `[expect] fails_without` which it is meant to need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    /// `[election] membership_proof`: the generation-checked commit that caps the lease.
    MembershipProof,
    /// `[election] client_session_expiry`: the client reports its
    /// assignment lost once no group heartbeat succeeded for S.
    ClientSessionExpiry,
    /// `[cluster] commit_generation_check`: the coordinator refuses a
    /// commit from an old generation (else only unknown members are refused).
    CommitGenerationCheck,
}

impl Layer {
    pub const ALL: [Layer; 3] = [Layer::MembershipProof, Layer::ClientSessionExpiry, Layer::CommitGenerationCheck];

    /// The name scenario files and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            Layer::MembershipProof => "membership-proof",
            Layer::ClientSessionExpiry => "client-session-expiry",
            Layer::CommitGenerationCheck => "commit-generation-check",
        }
    }

    /// Parses a layer name, saying which names exist when it is none.
    pub fn parse(text: &str) -> Result<Layer, UnknownLayer> {
        Layer::ALL.into_iter().find(|l| l.name() == text).ok_or_else(|| UnknownLayer(text.to_owned()))
    }

    /// The scenario field that switches the layer.
    pub fn field(self) -> &'static str {
        match self {
            Layer::MembershipProof => "election.membership_proof",
            Layer::ClientSessionExpiry => "election.client_session_expiry",
            Layer::CommitGenerationCheck => "cluster.commit_generation_check",
        }
    }
}

/// A name that is no [`Layer`]'s; its text lists the names there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLayer(pub String);

impl std::fmt::Display for UnknownLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = Layer::ALL.iter().map(|l| l.name()).collect();
        write!(f, "{:?} is not a layer (layers: {})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownLayer {}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
fn poll_default() -> Dur {
    Dur(100)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cluster {
    #[serde(default = "d1")]
    pub brokers: u32,
    #[serde(default)]
    pub coordinator: BrokerId,
    #[serde(default)]
    pub partition_leader: BrokerId,
    /// The broker the cluster imitates; [`Cluster::broker`] is what the
    /// simulation uses: this profile with the overrides below.
    #[serde(default)]
    pub profile: Profile,
    /// Extension to v1 (layer ablation): `false` makes the coordinator
    /// accept a commit of any generation from a known member.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub commit_generation_check: bool,
    /// Extension to v1, unsafe on purpose (the model's coordinator variant
    /// `skip-revoked-barrier`, for its counterexamples): `false` makes the
    /// cooperative-sticky coordinator hand a moving partition to its new
    /// owner at once, instead of withholding it for one generation while
    /// its owner revokes it. Cooperative-sticky assignment only.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub revoked_barrier: bool,
    /// Overrides of the profile's timings, for a broker configured or
    /// measured differently (unset: the profile's own). `group.initial.rebalance.delay.ms`
    /// for a group forming from empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rebalance_delay: Option<Dur>,
    /// The pause every rebalance pays before it completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebalance_pause: Option<Dur>,
    /// The pause of a rebalance started by a member leaving (its own
    /// override: setting `rebalance_pause` leaves it as the profile has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leave_pause: Option<Dur>,
    /// How often expired members are looked for ("0s": exactly when due).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry_check_interval: Option<Dur>,
}

impl Cluster {
    /// The `[cluster]` timing overrides, as (field, value).
    fn overrides(&self) -> [(&'static str, Option<Dur>); 4] {
        [
            ("initial_rebalance_delay", self.initial_rebalance_delay),
            ("rebalance_pause", self.rebalance_pause),
            ("leave_pause", self.leave_pause),
            ("expiry_check_interval", self.expiry_check_interval),
        ]
    }

    /// Whether the scenario overrides any of its profile's timings.
    pub fn overridden(&self) -> bool {
        self.overrides().iter().any(|(_, d)| d.is_some())
    }

    /// The broker the simulation runs: the profile with the scenario's
    /// timing overrides applied.
    pub fn broker(&self) -> Profile {
        let mut p = self.profile;
        let set = |field: &mut u64, d: Option<Dur>| {
            if let Some(d) = d {
                *field = d.ms();
            }
        };
        set(&mut p.initial_delay_ms, self.initial_rebalance_delay);
        set(&mut p.rebalance_pause_ms, self.rebalance_pause);
        set(&mut p.leave_pause_ms, self.leave_pause);
        set(&mut p.expiry_check_ms, self.expiry_check_interval);
        p
    }

    /// The profile's name, its provenance, and any override, for a report:
    /// `kafka (modelled from ...); overridden here: rebalance_pause = "5s"`.
    pub fn broker_provenance(&self) -> String {
        let set: Vec<String> =
            self.overrides().iter().filter_map(|(k, d)| d.map(|d| format!("{k} = \"{d}\""))).collect();
        let mut out = format!("{} ({})", self.profile.name, self.profile.provenance);
        if !set.is_empty() {
            out.push_str(&format!("; overridden by the scenario: {}", set.join(", ")));
        }
        out
    }
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster {
            brokers: 1,
            coordinator: BrokerId(0),
            partition_leader: BrokerId(0),
            profile: Profile::default(),
            commit_generation_check: true,
            revoked_barrier: true,
            initial_rebalance_delay: None,
            rebalance_pause: None,
            leave_pause: None,
            expiry_check_interval: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElectionSpec {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heartbeat_interval: Option<Dur>,
    #[serde(default = "poll_default")]
    pub poll_interval: Dur,
    #[serde(default = "yes")]
    pub membership_proof: bool,
    /// Extension to v1 (layer ablation): `false` makes the simulated client
    /// keep its assignment however long its group heartbeats fail; it then
    /// learns of an eviction only from the coordinator's answers.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub client_session_expiry: bool,
    /// Extension to v1: `"consumer"` runs Kafka 4's consumer group
    /// protocol as far as the lease sees it (no client-side session
    /// expiry, commits renew no session); default `"classic"`.
    #[serde(default, skip_serializing_if = "GroupProtocolName::is_default")]
    pub group_protocol: GroupProtocolName,
    /// Extension (scenarios/FORMAT.md, `election.static_membership`): static group membership: every member's
    /// client joins with its own instance id (`group.instance.id`, `m<i>`),
    /// so a restarted member takes its old place without a rebalance.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub static_membership: bool,
    /// Extension (scenarios/FORMAT.md, `election.static_membership`): spare processes, hosts `m<members>`, ... that
    /// start only when a `static-replace` fault gives one a member's
    /// instance id.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spares: u32,
    #[serde(default)]
    pub variant: Variant,
    /// Extension to v1: the partition assignment strategy (`"range"` or
    /// `"cooperative-sticky"`, the default, as neli's). Always written out,
    /// so a generated file says which coordinator it simulates.
    #[serde(default)]
    pub assignment: AssignmentName,
    /// Extension to v1: `max.poll.interval.ms`, also the rebalance timeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_poll_interval: Option<Dur>,
    /// Extension to v1: after each pulse that says it leads, the application
    /// works this long (on its own clock; a pause can land inside) and then
    /// asks `is_leader()` again, without pulsing, before writing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_work: Option<Dur>,
    /// Extension to v1: after each pulse that says it leads, the application
    /// works until the very millisecond its published lease ends (on its own
    /// clock) and asks `is_leader()` again there: the lease's last instant
    /// is not the leader's (scenarios/FORMAT.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub app_asks_at_lease_end: bool,
    /// Extension to v1: how the application runs the election: its own
    /// loop of `pulse()` calls (default) or `Neli::background()`, asking
    /// the `Background` handle before each write (scenarios/FORMAT.md).
    #[serde(default, skip_serializing_if = "AppLoop::is_default")]
    pub app_loop: AppLoop,
    /// Extension to v1: how long the application's Revoked handler keeps
    /// finishing work (writing with its old token every 50 ms) before it
    /// returns; default 250 ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_work: Option<Dur>,
    /// Extension to v1: why this scenario runs settings neli refuses (its
    /// own validation, [`Election::neli_config`], or an unsafe variant):
    /// a scenario unsafe on purpose says so, with the reason. Without it
    /// such settings are refused when the file is read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<String>,
}

impl ElectionSpec {
    pub fn max_poll_ms(&self) -> u64 {
        self.max_poll_interval.unwrap_or(DEFAULT_MAX_POLL).ms()
    }
    pub fn is_exclusive(&self) -> bool {
        self.mode == ModeName::Exclusive || self.exclusive
    }

    /// The election mode, as neli's [`neli::Mode`].
    pub fn neli_mode(&self) -> neli::Mode {
        match self.mode {
            ModeName::Exclusive => neli::Mode::Exclusive,
            ModeName::MultiRole => {
                neli::Mode::MultiRole { roles: self.roles, partitions: self.partitions, exclusive: self.exclusive }
            }
        }
    }

    /// What neli's own validation (`neli::ConfigBuilder::build`, the
    /// function every `neli::Config` passes) makes of these settings, as
    /// a member of the run is configured with them: T, S as
    /// `session.timeout.ms` (under the consumer protocol as the broker's,
    /// `broker_session_timeout`), the group protocol, the heartbeat
    /// interval, the grace, the mode
    /// with its roles and partitions, the membership proof, the client's
    /// `max.poll.interval.ms` (when the scenario sets it) and
    /// the assignment. `Err` is the library's refusal, naming its setting
    /// and rule. The simulated members themselves run whatever the
    /// scenario says (`world/member/`): a scenario may show why a rule
    /// exists ([`Election::unchecked`]), and `neli-lab tune` sweeps
    /// settings this refuses.
    pub fn neli_config(&self) -> Result<neli::Config, neli::ConfigError> {
        let mut builder = neli::Config::builder()
            .group("sim")
            .topic("sim.neli")
            .name("m0")
            .heartbeat_timeout(self.heartbeat_timeout.duration())
            .min_poll_interval(self.poll_interval.duration())
            .grace(self.grace.duration())
            .membership_proof(self.membership_proof)
            .mode(self.neli_mode())
            .assignment(self.assignment.neli());
        // Under the consumer protocol S is the broker's: the library takes it
        // as a stated assumption, not as the client property it refuses.
        builder = match self.group_protocol {
            GroupProtocolName::Classic => builder.session_timeout(self.session_timeout.duration()),
            GroupProtocolName::Consumer => builder
                .group_protocol(neli::GroupProtocol::Consumer)
                .broker_session_timeout(self.session_timeout.duration()),
        };
        if self.static_membership {
            builder = builder.kafka("group.instance.id", "m0");
        }
        // As in the library, the rebalance timeout is judged only where it is
        // set: unset, librdkafka's default (300 s) applies in production,
        // not the simulator's shorter stand-in (DEFAULT_MAX_POLL).
        if let Some(mp) = self.max_poll_interval {
            builder = builder.kafka("max.poll.interval.ms", mp.ms().to_string());
        }
        if let Some(i) = self.heartbeat_interval {
            builder = builder.heartbeat_interval(i.duration());
        }
        builder.build()
    }

    /// Why neli would not run these settings, if it would not: the
    /// scenario field at fault (`max_poll_interval`) and the rule, the
    /// library's own text for what its validation refuses
    /// ([`Election::neli_config`]); an unsafe variant, which no
    /// `neli::Config` can select, also counts.
    pub fn neli_refusal(&self) -> Option<(&'static str, String)> {
        if let Err(e) = self.neli_config() {
            let key = match e.field() {
                "session.timeout.ms" | "broker_session_timeout" => "session_timeout",
                "grace" => "grace",
                "membership_proof" => "membership_proof",
                "max.poll.interval.ms" => "max_poll_interval",
                "min_poll_interval" => "poll_interval",
                "heartbeat_interval" => "heartbeat_interval",
                "roles" => "roles",
                "partitions" => "partitions",
                // The lease rules name T; settings the simulator fixes
                // (group, topic, name) cannot be at fault.
                _ => "heartbeat_timeout",
            };
            return Some((key, e.to_string()));
        }
        if self.variant != Variant::Recommended {
            return Some((
                "variant",
                "an unsafe variant of the core, which no neli::Config can select (only the harness reaches it, through neli's unsafe-variants feature)".into(),
            ));
        }
        None
    }

    /// `key = value` of an election setting, for an error about it; a
    /// setting left out shows its default.
    fn shown(&self, key: &str) -> String {
        let dur = |d: Option<Dur>, default: &str| match d {
            Some(d) => format!("election.{key} = \"{d}\""),
            None => format!("election.{key} (default {default})"),
        };
        match key {
            "heartbeat_timeout" => dur(Some(self.heartbeat_timeout), ""),
            "session_timeout" => dur(Some(self.session_timeout), ""),
            "poll_interval" => dur(Some(self.poll_interval), ""),
            "heartbeat_interval" => dur(self.heartbeat_interval, "heartbeat_timeout / 4"),
            "grace" => dur(Some(self.grace), ""),
            "membership_proof" => format!("election.membership_proof = {}", self.membership_proof),
            "max_poll_interval" => dur(self.max_poll_interval, &format!("\"{DEFAULT_MAX_POLL}\"")),
            "roles" => format!("election.roles = {}", self.roles),
            "partitions" => format!("election.partitions = {}", self.partitions),
            "variant" => format!("election.variant = \"{}\"", self.variant.name()),
            _ => format!("election.{key}"),
        }
    }
}

/// `max.poll.interval.ms` when a scenario does not set it: far below
/// Kafka's 300 s, so that a stall can pass it within a simulated run.
pub const DEFAULT_MAX_POLL: Dur = Dur(10_000);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Random {
    pub faults: u32,
    pub kinds: Vec<FaultKind>,
    pub max_duration: Dur,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_overlap: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_gap: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_failover: Option<Dur>,
    /// Extension to v1: how often the leader of role 0 may lose it with no
    /// fault touching it (a follower came or went, the cluster rebalanced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_interruptions: Option<u64>,
    /// Extension to v1: how often role 0 may change hands in the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_leader_changes: Option<u64>,
    /// Extension to v1 (layer ablation): the layers this scenario is meant
    /// to need. `explore --ablate` expects the scenario to fail in some
    /// seed with any one of them off, and to pass with any other one off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fails_without: Vec<Layer>,
    /// Extension to v1 (layer ablation): layers without which the scenario
    /// may fail in some seeds but need not (random faults that only
    /// sometimes hit the window): those runs are reported, not judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub may_fail_without: Vec<Layer>,
}

impl Expect {
    fn is_empty(&self) -> bool {
        self.max_overlap.is_none()
            && self.max_gap.is_none()
            && self.max_failover.is_none()
            && self.max_interruptions.is_none()
            && self.max_leader_changes.is_none()
            && self.fails_without.is_empty()
            && self.may_fail_without.is_empty()
    }
}

/// One scenario file. Writing a scenario is serializing it ([`Scenario::to_toml`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub duration: Dur,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default)]
    pub cluster: Cluster,
    pub election: ElectionSpec,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Spanned<TimedFault>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random: Option<Random>,
    #[serde(default, skip_serializing_if = "Expect::is_empty")]
    pub expect: Expect,
}

/// Where in the file a broken rule is: a fault's offset, or a field by
/// its dotted path (`election.max_poll_interval`), found in the text when
/// the error is reported ([`offset_of`]).
enum At {
    Offset(usize),
    Field(String),
}

/// The offset of the value at dotted `path` in the TOML `text`, or of
/// the nearest table on the path when the key itself is not written (a
/// setting left at its default): the line an error about it points at.
fn offset_of(text: &str, path: &str) -> Option<usize> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let mut at = None;
    for key in path.split('.') {
        let Some(value) = table.get(key) else { break };
        at = Some(value.span().start);
        match value.get_ref() {
            toml::de::DeValue::Table(t) => table = t,
            _ => break,
        }
    }
    at
}

/// A scenario that could not be read; the message names file, line, field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScenarioError(pub String);

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|b| *b == b'\n').count() + 1
}

/// The field whose value starts at `offset`, as `table.key` (`faults.duration`),
/// read from the text: the key before `=` on that line and the nearest
/// `[table]` header above it.
fn field_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let key = text[line_start..offset].trim_end().strip_suffix('=')?.trim();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return None;
    }
    Some(match table_above(text, line_start) {
        Some(t) => format!("{t}.{key}"),
        None => key.to_owned(),
    })
}

/// The `[table]` (or `[[table]]`) header nearest above `offset`.
fn table_above(text: &str, offset: usize) -> Option<String> {
    let line_start = text[..offset.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    text[..line_start].lines().rev().find_map(|l| {
        let l = l.trim();
        l.starts_with('[').then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_owned())
    })
}

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
            let start = e.span().map(|r| r.start);
            let at = start.map(|o| format!(":{}", line_of(text, o))).unwrap_or_default();
            let message = suggest::with_suggestion(e.message(), start.and_then(|o| table_above(text, o)).as_deref());
            let message = message.as_str();
            // Name the field when the reader did not (a bad value's own error).
            let field = start.and_then(|o| field_at(text, o)).filter(|f| {
                let key = f.rsplit('.').next().unwrap_or(f);
                !message.contains(&format!("`{key}`")) && !message.starts_with(f.as_str())
            });
            match field {
                Some(f) => ScenarioError(format!("{file}{at}: {f}: {message}")),
                None => ScenarioError(format!("{file}{at}: {message}")),
            }
        })?;
        s.validate().map_err(|(place, msg)| {
            let offset = match place {
                Some(At::Offset(o)) => Some(o),
                Some(At::Field(path)) => offset_of(text, &path),
                None => None,
            };
            let at = offset.map(|o| format!(":{}", line_of(text, o))).unwrap_or_default();
            ScenarioError(format!("{file}{at}: {msg}"))
        })?;
        Ok(s)
    }

    /// The scenario as a scenario file; `header` lines become leading `#`
    /// comments. [`Scenario::parse`] reads it back as the same scenario.
    /// Fails only on a value TOML cannot hold (a seed above 2^63 - 1).
    pub fn to_toml(&self, header: &[String]) -> Result<String, ScenarioError> {
        let mut out: String = header.iter().map(|h| format!("# {h}\n")).collect();
        let body = toml::to_string(self)
            .map_err(|e| ScenarioError(format!("scenario {:?} cannot be written as TOML: {e}", self.name)))?;
        out.push_str(&body);
        Ok(out)
    }

    /// Appends a fault (one not read from a file: no line to point at).
    pub fn push_fault(&mut self, at: Dur, fault: Fault) {
        self.faults.push(Spanned::new(0..0, TimedFault { at, on: None, of: None, fault }));
    }

    /// The faults, without their places in the file.
    pub fn timed_faults(&self) -> impl Iterator<Item = &TimedFault> {
        self.faults.iter().map(|f| f.get_ref())
    }

    /// Whether `layer` is on in this scenario.
    pub fn has(&self, layer: Layer) -> bool {
        match layer {
            Layer::MembershipProof => self.election.membership_proof,
            Layer::ClientSessionExpiry => self.election.client_session_expiry,
            Layer::CommitGenerationCheck => self.cluster.commit_generation_check,
        }
    }

    /// This scenario with `layer` switched off, named `<name>-without-<layer>`
    /// and with no `fails_without` of its own (the caller knows whether it
    /// is meant to fail: [`Scenario::needs`]). `None` when the layer is
    /// already off here, so there is nothing to ablate.
    pub fn without(&self, layer: Layer) -> Option<Scenario> {
        if !self.has(layer) {
            return None;
        }
        let mut s = self.clone();
        match layer {
            Layer::MembershipProof => {
                s.election.membership_proof = false;
                // No proof is sent any more: a fault aimed at one's
                // acceptance is aimed at the assignment, with which the
                // member sends its heartbeat (scenarios/FORMAT.md, `on`).
                for f in &mut s.faults {
                    let f = f.get_mut();
                    f.on = f.on.map(Trigger::without_proof);
                }
            }
            Layer::ClientSessionExpiry => s.election.client_session_expiry = false,
            Layer::CommitGenerationCheck => s.cluster.commit_generation_check = false,
        }
        // A long name is cut so the ablated scenario still reads back.
        let suffix = format!("-without-{layer}");
        let keep = self.name.len().min(MAX_NAME.saturating_sub(suffix.len()));
        s.name = format!("{}{suffix}", &self.name[..keep]);
        s.expect.fails_without.clear();
        s.expect.may_fail_without.clear();
        Some(s)
    }

    /// Whether the scenario says it fails without `layer` (`expect.fails_without`).
    pub fn needs(&self, layer: Layer) -> bool {
        self.expect.fails_without.contains(&layer)
    }

    /// Whether the scenario says it may fail without `layer` (`expect.may_fail_without`).
    pub fn may_need(&self, layer: Layer) -> bool {
        self.expect.may_fail_without.contains(&layer)
    }

    /// The hosts a scenario may name.
    pub fn member_names(&self) -> Vec<String> {
        (0..self.election.members + self.election.spares).map(|i| format!("m{i}")).collect()
    }
    pub fn broker_names(&self) -> Vec<String> {
        (0..self.cluster.brokers).map(|i| BrokerId(i).to_string()).collect()
    }

    /// Roles elected: `roles` in multi-role mode, else 1.
    pub fn roles(&self) -> u32 {
        if self.election.mode == ModeName::MultiRole { self.election.roles } else { 1 }
    }

    /// Partitions of the election topic.
    pub fn partitions(&self) -> u32 {
        if self.election.mode == ModeName::MultiRole { self.election.partitions } else { 1 }
    }
}
