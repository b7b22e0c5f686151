//! What a run can break, typed: every guarantee the oracles, a scenario's
//! `[expect]` table or a user's invariant judges is a [`Rule`], and each
//! time one is broken the judge writes a [`Violation`] (rule, members, time,
//! the sentence reports print). Reports, the shrinker, the timeline and the
//! harness read these fields; none of them parses the sentence. This module
//! depends on nothing else in the crate, so every layer (the simulated
//! client, the world, the oracles) can name a rule.

use std::fmt;

/// The per-rule oracles' names (`oracle/rules.rs`; docs/background.md,
/// "Per-rule oracles"), as `neli-lab` prints them after `rule `.
pub mod names {
    pub const ASSIGNED_ONLY: &str = "assigned-only";
    pub const OWN_EVIDENCE: &str = "own-evidence";
    pub const CURRENT_TERM: &str = "current-term";
    pub const CURRENT_GENERATION: &str = "current-generation";
    pub const SEND_TIME: &str = "send-time";
    pub const MEMBERSHIP_PROOF: &str = "membership-proof";
    pub const TOKEN_ORDER: &str = "token-order";
    pub const LOST_IS_FENCED: &str = "lost-is-fenced";
    pub const REVOKED_BARRIER: &str = "revoked-barrier";
    pub const LOG_EPOCH: &str = "log-epoch";
    pub const STATUS_GENERATION: &str = "status-generation";
    pub const HEARTBEAT_LEASE: &str = "heartbeat-lease";
    pub const HANDLES_AGREE: &str = "handles-agree";
    pub const GRACE: &str = "grace";
    pub const RESIGN_HOLDS_OFF: &str = "resign-holds-off";
    pub const WAKES_ON_TIME: &str = "wakes-on-time";
    pub const HEARTBEAT_SEQ: &str = "heartbeat-seq";
    pub const NO_BUSY_WAIT: &str = "no-busy-wait";
    pub const LEADER_ELECTED: &str = "leader-elected";
    pub const CLOSE_FINISHES: &str = "close-finishes";
    pub const CLOSE_REPORTS: &str = "close-reports";
    pub const RESIGN_TAKES_EFFECT: &str = "resign-takes-effect";
    pub const TOLD_WHILE_LEADING: &str = "told-while-leading";
}

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
    /// A named rule of the oracles ([`names`]).
    Named(&'static str),
    /// A bound of the scenario's `[expect]` table (`max_overlap`, …).
    Expect(&'static str),
    /// The simulated code panicked.
    Panicked,
    /// The simulation itself failed (turmoil's error).
    SimulationError,
    /// A user's invariant (`Harness::invariant`).
    Invariant(String),
    /// The user's application misbehaved as a program: it panicked, or it
    /// never returned after its election finished.
    App,
}

impl Rule {
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
            Rule::Named(n) => format!("rule {n}"),
            Rule::Expect(field) => format!("expect.{field}"),
            Rule::Panicked => "the simulation panicked".into(),
            Rule::SimulationError => "simulation error".into(),
            Rule::Invariant(name) => format!("invariant {name}"),
            Rule::App => "application".into(),
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
        assert_eq!(Rule::Named(names::GRACE).class(), "rule grace");
        assert_eq!(Rule::Expect("max_overlap").class(), "expect.max_overlap");
        assert_eq!(Rule::Invariant("no invoice twice".into()).to_string(), "invariant no invoice twice");
        let v = Violation::new(Rule::Overlap, "overlap: role 0 held by m0 and m1").by("m0").by("m1").at(1200);
        assert_eq!(v.to_string(), "overlap: role 0 held by m0 and m1");
        assert_eq!((v.members.len(), v.at), (2, Some(1200)));
        assert_eq!(secs(12_345), "12.345s");
    }
}
