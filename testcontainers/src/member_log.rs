//! The member log of the real-broker suite: one JSON line per [`Entry`],
//! written by `neli-tc-member` on its stdout and read back by the suite
//! (`run.rs`). Both sides use these types, so a field renamed on one side is
//! a compile error rather than a silently empty figure.
//!
//! Times are milliseconds of the host's `CLOCK_MONOTONIC`, which every
//! process on the host shares (the suite moves them to its run's origin).

use serde::{Deserialize, Serialize};

/// One line: when (`t`) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub t: u64,
    #[serde(flatten)]
    pub what: Logged,
}

/// What a member logged. JSON: `{"t":ms,"k":"lease","leading":[[role,token,until_ms]],"log_epoch":n}`
/// and so on, `k` naming the variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Logged {
    /// The member process is up and its election handle running.
    Started,
    /// The driver published a new status: each led role as (role, token,
    /// lease end on the host clock), and how many election logs it saw lost.
    Lease { leading: Vec<(u32, u64, u64)>, log_epoch: u64 },
    /// A leadership event, as handlers see it.
    Event { event: EventKind, role: u32, token: Option<u64> },
    /// `is_leader()` held with this token (checked every 50 ms): what a
    /// guarded resource would see the member do as leader.
    Act { token: u64 },
    /// The member closed on SIGTERM; the background handle's result.
    Closed { outcome: String },
    /// The election loop stopped by itself (election ended or a fatal error).
    Ended,
    /// The member failed to start or run.
    Error { error: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Acquired,
    Revoked,
    Fenced,
}

impl Logged {
    pub fn event(e: neli::Event) -> Logged {
        match e {
            neli::Event::Acquired { role, token } => {
                Logged::Event { event: EventKind::Acquired, role, token: Some(token.0) }
            }
            neli::Event::Revoked { role } => Logged::Event { event: EventKind::Revoked, role, token: None },
            neli::Event::Fenced { role } => Logged::Event { event: EventKind::Fenced, role, token: None },
            // A kind of event this log has no line for fails the run loudly.
            other => Logged::Error { error: format!("an event the member log cannot record: {other:?}") },
        }
    }
}

impl Entry {
    /// The line as JSON (one line, no newline).
    pub fn to_json(&self) -> String {
        // Plain data of integers, strings and enums: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The wire format the suite's logs (and its README) show.
    #[test]
    fn lines_keep_their_json_shape() {
        let lease = Entry { t: 5, what: Logged::Lease { leading: vec![(0, 7, 900)], log_epoch: 1 } };
        assert_eq!(lease.to_json(), r#"{"t":5,"k":"lease","leading":[[0,7,900]],"log_epoch":1}"#);
        let event = Entry { t: 6, what: Logged::event(neli::Event::Acquired { role: 0, token: neli::Token(7) }) };
        assert_eq!(event.to_json(), r#"{"t":6,"k":"event","event":"acquired","role":0,"token":7}"#);
        for e in [lease, event, Entry { t: 1, what: Logged::Started }] {
            assert_eq!(serde_json::from_str::<Entry>(&e.to_json()).ok(), Some(e));
        }
    }
}
