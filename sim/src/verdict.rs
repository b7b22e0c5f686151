//! What a run can break, typed: every guarantee the oracles, a scenario's
//! `[expect]` table or a user's invariant judges is a [`Rule`], and each
//! time one is broken the judge writes a [`Violation`] (rule, members, time,
//! the sentence reports print). Reports, the shrinker, the timeline and the
//! harness read these fields; none of them parses the sentence. This module
//! depends on nothing else in the crate, so every layer (the simulated
//! client, the world, the oracles) can name a rule.

use std::fmt;

/// A guarantee a run can break.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// Two members held an exclusive role at once.
    Overlap,
    /// A write used a token older than one already used.
    StaleWrite,
    /// A role's tokens did not strictly increase across members.
    TokenNotIncreasing,
    /// Events out of order: Acquired twice, a loss of what was not held, a
    /// role held in silence when the election finished.
    IllFormedEvents,
    /// The application was told it leads without a live lease.
    ToldWithoutLease,
    // The per-rule oracles (`oracle/rules.rs`; docs/background.md,
    // "Per-rule oracles"), printed as `rule <name>` ([`Rule::oracle_name`]).
    /// `rule assigned-only`: a lease of a role whose partition the member was not assigned.
    AssignedOnly,
    /// `rule own-evidence`: a lease extended by evidence the member did not produce.
    OwnEvidence,
    /// `rule current-term`: a lease extended by evidence from before the member's current term.
    CurrentTerm,
    /// `rule current-generation`: a lease extended by evidence from an older group generation.
    CurrentGeneration,
    /// `rule send-time`: a lease counted from a time later than its evidence's send time.
    SendTime,
    /// `rule membership-proof`: a lease that outlived the member's last accepted membership proof.
    MembershipProof,
    /// `rule token-order`: a new term whose token is not above the member's previous one.
    TokenOrder,
    /// `rule lost-is-fenced`: a lost assignment that did not end the lease at once.
    LostIsFenced,
    /// `rule revoked-barrier`: a revoked partition handed on before the Revoked handler returned.
    RevokedBarrier,
    /// `rule log-epoch`: a published log epoch ahead of the log losses the member was told of.
    LogEpoch,
    /// `rule status-generation`: a status that reports a generation the member does not hold.
    StatusGeneration,
    /// `rule heartbeat-lease`: a lease longer than the heartbeat timeout T past its evidence.
    HeartbeatLease,
    /// `rule handles-agree`: the application's handles disagreed on whether it leads.
    HandlesAgree,
    /// `rule grace`: a lease taken before the acquisition grace G had passed.
    Grace,
    /// `rule resign-holds-off`: a resigned member that took a partition back within its hold-off.
    ResignHoldsOff,
    /// `rule wakes-on-time`: a driver that slept past work its core already had.
    WakesOnTime,
    /// `rule heartbeat-seq`: heartbeats handed over out of their sequence.
    HeartbeatSeq,
    /// `rule no-busy-wait`: a driver that polled again and again with no wait.
    NoBusyWait,
    /// `rule leader-elected`: a run long enough to elect in which nobody led role 0.
    LeaderElected,
    /// `rule close-finishes`: a close (or fatal error) after which the election did not end in time.
    CloseFinishes,
    /// `rule close-reports`: a close that returned something other than what happened.
    CloseReports,
    /// `rule resign-takes-effect`: a resign after which the member did not leave the group in time.
    ResignTakesEffect,
    /// `rule told-while-leading`: a member that led without its application ever being told.
    ToldWhileLeading,
    /// A bound of the scenario's `[expect]` table.
    Expect(Bound),
    /// The simulated code panicked.
    Panicked,
    /// The simulation itself failed: a host's program returned an error or
    /// panicked, or spawned a task that would outlive its host.
    SimulationError,
    /// A user's invariant (`Harness::invariant`).
    Invariant(String),
    /// The user's application misbehaved as a program: it panicked, or it
    /// never returned after its election finished.
    App,
    /// The same seed ran twice and the two runs differed (the harness's
    /// determinism check): something in the run reads the wall clock,
    /// iterates a hash map, or draws unseeded randomness.
    Nondeterministic,
}

/// A bound of a scenario's `[expect]` table, as a [`Rule`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bound {
    /// `expect.max_overlap`.
    MaxOverlap,
    /// `expect.max_gap`.
    MaxGap,
    /// `expect.max_failover`.
    MaxFailover,
    /// `expect.max_interruptions`.
    MaxInterruptions,
    /// `expect.max_leader_changes`.
    MaxLeaderChanges,
}

impl Bound {
    /// The field's name in the scenario file.
    pub fn field(self) -> &'static str {
        match self {
            Bound::MaxOverlap => "max_overlap",
            Bound::MaxGap => "max_gap",
            Bound::MaxFailover => "max_failover",
            Bound::MaxInterruptions => "max_interruptions",
            Bound::MaxLeaderChanges => "max_leader_changes",
        }
    }
}

impl Rule {
    /// Every rule of the per-rule oracles, in the order reports list them.
    pub const ORACLE: [Rule; 23] = [
        Rule::AssignedOnly,
        Rule::OwnEvidence,
        Rule::CurrentTerm,
        Rule::CurrentGeneration,
        Rule::SendTime,
        Rule::MembershipProof,
        Rule::TokenOrder,
        Rule::LostIsFenced,
        Rule::RevokedBarrier,
        Rule::LogEpoch,
        Rule::StatusGeneration,
        Rule::HeartbeatLease,
        Rule::HandlesAgree,
        Rule::Grace,
        Rule::ResignHoldsOff,
        Rule::WakesOnTime,
        Rule::HeartbeatSeq,
        Rule::NoBusyWait,
        Rule::LeaderElected,
        Rule::CloseFinishes,
        Rule::CloseReports,
        Rule::ResignTakesEffect,
        Rule::ToldWhileLeading,
    ];

    /// The name of a per-rule oracle's rule (`own-evidence`), as
    /// `neli-lab` prints it after `rule `; `None` for the other rules.
    pub fn oracle_name(&self) -> Option<&'static str> {
        Some(match self {
            Rule::AssignedOnly => "assigned-only",
            Rule::OwnEvidence => "own-evidence",
            Rule::CurrentTerm => "current-term",
            Rule::CurrentGeneration => "current-generation",
            Rule::SendTime => "send-time",
            Rule::MembershipProof => "membership-proof",
            Rule::TokenOrder => "token-order",
            Rule::LostIsFenced => "lost-is-fenced",
            Rule::RevokedBarrier => "revoked-barrier",
            Rule::LogEpoch => "log-epoch",
            Rule::StatusGeneration => "status-generation",
            Rule::HeartbeatLease => "heartbeat-lease",
            Rule::HandlesAgree => "handles-agree",
            Rule::Grace => "grace",
            Rule::ResignHoldsOff => "resign-holds-off",
            Rule::WakesOnTime => "wakes-on-time",
            Rule::HeartbeatSeq => "heartbeat-seq",
            Rule::NoBusyWait => "no-busy-wait",
            Rule::LeaderElected => "leader-elected",
            Rule::CloseFinishes => "close-finishes",
            Rule::CloseReports => "close-reports",
            Rule::ResignTakesEffect => "resign-takes-effect",
            Rule::ToldWhileLeading => "told-while-leading",
            _ => return None,
        })
    }

    /// The per-rule oracle's rule called `name` (`own-evidence`).
    pub fn from_oracle_name(name: &str) -> Option<Rule> {
        Rule::ORACLE.into_iter().find(|r| r.oracle_name() == Some(name))
    }

    /// The rule's name as reports group violations by it: `overlap`,
    /// `rule leader-elected`, `expect.max_overlap`, `invariant no invoice
    /// twice`, …
    pub fn class(&self) -> String {
        match self {
            Rule::Overlap => "overlap".into(),
            Rule::StaleWrite => "stale write".into(),
            Rule::TokenNotIncreasing => "token not increasing".into(),
            Rule::IllFormedEvents => "ill-formed events".into(),
            Rule::ToldWithoutLease => "told without a lease".into(),
            Rule::Expect(bound) => format!("expect.{}", bound.field()),
            Rule::Panicked => "the simulation panicked".into(),
            Rule::SimulationError => "simulation error".into(),
            Rule::Invariant(name) => format!("invariant {name}"),
            Rule::App => "application".into(),
            Rule::Nondeterministic => "nondeterministic".into(),
            oracle => format!("rule {}", oracle.oracle_name().unwrap_or_default()),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.class())
    }
}

/// One broken guarantee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: Rule,
    /// The member incarnations at fault (`m1`, `m0.2`), where the rule
    /// names them: both holders of an overlap, the writer of a stale write.
    pub members: Vec<String>,
    /// When it happened (global ms), where the rule can say.
    pub at: Option<u64>,
    /// How long it lasted (ms), for what lasts (an overlap).
    pub lasted_ms: Option<u64>,
    /// The sentence reports print, starting with the rule's class.
    pub detail: String,
}

impl Violation {
    /// A violation of `rule` told by `detail` (which starts with the rule's class).
    pub fn new(rule: Rule, detail: impl Into<String>) -> Violation {
        Violation { rule, members: Vec::new(), at: None, lasted_ms: None, detail: detail.into() }
    }

    /// The member at fault.
    pub fn by(mut self, member: impl Into<String>) -> Violation {
        self.members.push(member.into());
        self
    }

    /// When it happened (global ms).
    pub fn at(mut self, at: u64) -> Violation {
        self.at = Some(at);
        self
    }

    /// The rule's class, as [`Rule::class`] names it.
    pub fn class(&self) -> String {
        self.rule.class()
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

/// `12345` ms as `12.345s`, as traces and violations print times.
pub fn secs(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_what_reports_group_by() {
        assert_eq!(Rule::Grace.class(), "rule grace");
        assert_eq!(Rule::Expect(Bound::MaxOverlap).class(), "expect.max_overlap");
        assert_eq!(Rule::Invariant("no invoice twice".into()).to_string(), "invariant no invoice twice");
        let v = Violation::new(Rule::Overlap, "overlap: role 0 held by m0 and m1").by("m0").by("m1").at(1200);
        assert_eq!(v.to_string(), "overlap: role 0 held by m0 and m1");
        assert_eq!((v.members.len(), v.at), (2, Some(1200)));
        assert_eq!(secs(12_345), "12.345s");
    }

    #[test]
    fn every_oracle_rule_has_one_name_and_back() {
        let names: std::collections::BTreeSet<_> = Rule::ORACLE.iter().filter_map(Rule::oracle_name).collect();
        assert_eq!(names.len(), Rule::ORACLE.len(), "names are distinct");
        for r in Rule::ORACLE {
            assert_eq!(Rule::from_oracle_name(r.oracle_name().expect("named")), Some(r.clone()));
        }
        assert_eq!(Rule::Overlap.oracle_name(), None);
        assert_eq!(Rule::from_oracle_name("no-such-rule"), None);
    }
}
