//! The typed history of one run: what happened, on the global simulated
//! clock, in the words a user's invariant, the timeline picture and
//! `neli-lab run --history` share. Built once from the recording when the
//! run ends ([`History::of`]); the trace is a human-readable rendering of
//! the same run and is never parsed back.
//!
//! Entries say what each member was told (acquired, revoked, fenced), what
//! it wrote (the built-in application's token-guarded resources, one a
//! role, keyed by [`resource_key`], or the
//! downstream store a harness application writes to, with each write's
//! fencing stamp and the store's answer), which faults were played, when
//! each member process started and stopped, and who really held each role
//! ([`Hold`]: the oracles' view, which can end well before the member is
//! told). The JSON Lines form ([`History::to_jsonl`]) starts with a header
//! line carrying [`HISTORY_VERSION`]; a change to the fields bumps it.

use serde::{Deserialize, Serialize};

use crate::oracle::LeaseSpan;
use crate::record::Log;
pub use crate::record::{Stamp, Write};

/// The version of the JSON Lines form; bumped when a field changes meaning
/// or goes away (new fields and entry kinds may be added within a version).
pub const HISTORY_VERSION: u32 = 1;

/// The key of the built-in application's resource of `role` in a
/// history's writes: `resource` for role 0 (the only one outside exclusive
/// multi-role mode), `resource/<role>` for the others.
///
/// ```
/// assert_eq!(neli_sim::history::resource_key(0), "resource");
/// assert_eq!(neli_sim::history::resource_key(2), "resource/2");
/// ```
pub fn resource_key(role: u32) -> String {
    if role == 0 { "resource".to_owned() } else { format!("resource/{role}") }
}

/// What a member's election told its application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Told {
    pub at: u64,
    /// The member incarnation (`m1`, `m1.2` after its second restart).
    pub member: String,
    pub role: u32,
    /// The term's fencing token (Acquired only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<u64>,
    /// The run's log epoch (broker log losses so far) when it happened.
    pub log_epoch: u64,
}

/// A fault as the simulator played it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    /// Its start and end (an instant fault ends where it starts).
    pub at: u64,
    pub until: u64,
    /// Its kind as scenario files name it (`pause`, `crash`, …).
    pub kind: String,
    /// The hosts it hit, `leader` resolved (`m1`, `b0`).
    pub hosts: Vec<String>,
    /// How the trace names it.
    pub label: String,
}

/// A member process started or stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    pub at: u64,
    pub member: String,
    /// The member slot (its host `m<slot>`), the same across restarts.
    pub slot: usize,
}

/// Where a member's lease of a role really held, on the global clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    pub at: u64,
    pub until: u64,
    pub member: String,
    pub slot: usize,
    pub role: u32,
    /// Role 0's lease ended with no fault on its member (an interruption).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// One entry of a [`History`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Entry {
    Started(Process),
    /// The process stopped: crashed, or its application finished.
    Stopped(Process),
    Acquired(Told),
    Revoked(Told),
    Fenced(Told),
    Write(Write),
    Fault(Fault),
    Held(Hold),
}

impl Entry {
    /// When it happened (a hold's or fault's start).
    pub fn at(&self) -> u64 {
        match self {
            Entry::Started(p) | Entry::Stopped(p) => p.at,
            Entry::Acquired(t) | Entry::Revoked(t) | Entry::Fenced(t) => t.at,
            Entry::Write(w) => w.at,
            Entry::Fault(f) => f.at,
            Entry::Held(h) => h.at,
        }
    }
}

/// The typed history of one run, ordered by time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    pub scenario: String,
    pub seed: u64,
    /// The run's length (global ms).
    pub end: u64,
    pub entries: Vec<Entry>,
}

/// The header line of the JSON Lines form.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    history: u32,
    scenario: String,
    seed: u64,
    end: u64,
}

impl History {
    /// The history of a finished run from its recording, the faults it
    /// played and the oracles' hold intervals.
    pub fn of(scenario: &str, seed: u64, end: u64, log: &Log, faults: &[Fault], spans: &[LeaseSpan]) -> History {
        // (instant, order of recording) keeps entries of one instant in the
        // order they happened; a kind's rank breaks ties between sources.
        let mut keyed: Vec<(u64, u8, usize, Entry)> = Vec::new();
        for (i, (at, member)) in log.starts.iter().enumerate() {
            let slot = log.slots.get(member).copied().unwrap_or(0);
            keyed.push((*at, 0, i, Entry::Started(Process { at: *at, member: member.clone(), slot })));
        }
        for (i, f) in faults.iter().enumerate() {
            keyed.push((f.at, 1, i, Entry::Fault(f.clone())));
        }
        for (i, e) in log.events.iter().enumerate() {
            let role = e.event.role();
            let (member, at, log_epoch) = (e.member.clone(), e.at, e.log_epoch);
            let entry = match e.event {
                neli::Event::Acquired { token, .. } => {
                    Entry::Acquired(Told { at, member, role, token: Some(token.0), log_epoch })
                }
                neli::Event::Revoked { .. } => Entry::Revoked(Told { at, member, role, token: None, log_epoch }),
                neli::Event::Fenced { .. } => Entry::Fenced(Told { at, member, role, token: None, log_epoch }),
                // An event the history has no entry for yet; the oracle
                // fails the run on it (rule ill-formed-events).
                _ => continue,
            };
            keyed.push((at, 2, i, entry));
        }
        for (i, h) in spans.iter().enumerate() {
            let hold = Hold {
                at: h.start,
                until: h.end,
                member: h.member.clone(),
                slot: h.slot,
                role: h.role,
                interrupted: h.interrupted,
            };
            keyed.push((h.start, 3, i, Entry::Held(hold)));
        }
        for (i, w) in log.writes.iter().enumerate() {
            let write = Write {
                at: w.at,
                sent_at: w.at,
                member: w.member.clone(),
                key: resource_key(w.role),
                stamp: Some(Stamp { log_epoch: w.log_epoch, token: neli::Token(w.token) }),
                accepted: true,
                in_handler: w.in_handler,
            };
            keyed.push((w.at, 4, i, Entry::Write(write)));
        }
        for (i, w) in log.store_writes.iter().enumerate() {
            keyed.push((w.at, 4, log.writes.len() + i, Entry::Write(w.clone())));
        }
        for (i, (member, at)) in log.ends.iter().enumerate() {
            let slot = log.slots.get(member).copied().unwrap_or(0);
            if *at <= end {
                keyed.push((*at, 5, i, Entry::Stopped(Process { at: *at, member: member.clone(), slot })));
            }
        }
        keyed.sort_by_key(|(at, rank, i, _)| (*at, *rank, *i));
        History { scenario: scenario.to_owned(), seed, end, entries: keyed.into_iter().map(|(.., e)| e).collect() }
    }

    /// Every write, in the order they took effect.
    pub fn writes(&self) -> impl Iterator<Item = &Write> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Write(w) => Some(w),
            _ => None,
        })
    }

    /// Every hold interval (who really held which role, when).
    pub fn holds(&self) -> impl Iterator<Item = &Hold> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Held(h) => Some(h),
            _ => None,
        })
    }

    /// Every fault played.
    pub fn faults(&self) -> impl Iterator<Item = &Fault> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Fault(f) => Some(f),
            _ => None,
        })
    }

    /// Whether `member` really held `role` at global instant `at` (its lease
    /// had not ended on its own clock, and its process was running).
    pub fn held(&self, member: &str, role: u32, at: u64) -> bool {
        self.holds().any(|h| h.member == member && h.role == role && h.at <= at && at < h.until)
    }

    /// The members that really held `role` at `at` (more than one is an overlap).
    pub fn holders(&self, role: u32, at: u64) -> Vec<&str> {
        self.holds().filter(|h| h.role == role && h.at <= at && at < h.until).map(|h| h.member.as_str()).collect()
    }

    /// The JSON Lines form: a header line (`{"history":1,"scenario":…}`),
    /// then one entry per line, each named by its `event` field.
    pub fn to_jsonl(&self) -> String {
        let header =
            Header { history: HISTORY_VERSION, scenario: self.scenario.clone(), seed: self.seed, end: self.end };
        let mut out = serde_json::to_string(&header).expect("a header serializes");
        out.push('\n');
        for e in &self.entries {
            out.push_str(&serde_json::to_string(e).expect("an entry serializes"));
            out.push('\n');
        }
        out
    }

    /// Reads the JSON Lines form back; an error names the line and what is
    /// wrong with it (an unknown version included).
    pub fn from_jsonl(text: &str) -> Result<History, HistoryError> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (_, first) = lines.next().ok_or(HistoryError::Empty)?;
        let h: Header = serde_json::from_str(first).map_err(|e| HistoryError::Header(e.to_string()))?;
        if h.history != HISTORY_VERSION {
            return Err(HistoryError::Version(h.history));
        }
        let entries = lines
            .map(|(i, l)| serde_json::from_str(l).map_err(|e| HistoryError::Entry { line: i + 1, what: e.to_string() }))
            .collect::<Result<_, _>>()?;
        Ok(History { scenario: h.scenario, seed: h.seed, end: h.end, entries })
    }
}

/// A history file that does not read back ([`History::from_jsonl`]); the
/// text names the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    #[error("an empty history: the header line is missing")]
    Empty,
    #[error("line 1: not a history header: {0}")]
    Header(String),
    #[error("line 1: history version {0} is not the version this build reads ({HISTORY_VERSION})")]
    Version(u32),
    #[error("line {line}: {what}")]
    Entry { line: usize, what: String },
}
