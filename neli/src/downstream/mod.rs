//! The fenced downstream: what a service writes its results to, and the
//! one rule that makes a fencing token worth having there: a write whose
//! [`Stamp`] is below the highest stamp the downstream has accepted is
//! refused, in the same step as the write itself (ARCHITECTURE.md,
//! "Fencing downstream").
//!
//! A service is written against the [`Downstream`] trait, so that one
//! `serve` function runs in production (on [`sqlite::SqliteFence`] with
//! feature `sqlite`, [`postgres::PostgresFence`] with feature `postgres`,
//! or an implementation of a team's own) and under the simulator, whose
//! store host runs the same SQLite adapter behind a simulated network link.
//!
//! ```
//! use neli::downstream::{Downstream, Written};
//! use neli::{Stamp, Token};
//!
//! // The work of one term: write, stamped with the term's stamp, and stop
//! // at the first refusal (a newer leader has written since).
//! async fn record<D: Downstream>(db: &D, stamp: Stamp) -> Result<bool, neli::downstream::DownstreamError> {
//!     match db.write("report-2026-11", b"42 rows", stamp).await? {
//!         Written::Accepted => Ok(true),
//!         Written::Refused { highest } => {
//!             assert!(highest > stamp);
//!             Ok(false)
//!         }
//!         // `Written` is non-exhaustive: an answer this code does not
//!         // know is not taken for a success.
//!         _ => Ok(false),
//!     }
//! }
//! # let _ = record::<neli::downstream::Memory>;
//! # let _ = Stamp { log_epoch: 0, token: Token(1) };
//! ```

use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::core::Stamp;

#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sqlite")]
pub mod sqlite;

/// The downstream's answer to a fenced write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Written {
    /// Taken: the stamp was not below the highest accepted one (a term
    /// writes again with its own stamp as often as it likes).
    Accepted,
    /// Refused, nothing written: a writer with a higher stamp has written
    /// (`highest`), so this writer's term is over even if it does not know
    /// it yet.
    Refused {
        /// The highest stamp the downstream had accepted.
        highest: Stamp,
    },
}

/// A write that got no answer: the connection failed, the request timed
/// out or the database reported an error. The write may or may not have
/// landed; retry with the same stamp (the downstream judges it again).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the downstream did not answer: {0}")]
pub struct DownstreamError(pub String);

/// A row written through [`Downstream::write`], as an adapter reads it
/// back (`rows()` of the SQLite and PostgreSQL adapters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The row's key.
    pub key: String,
    /// What was written.
    pub value: Vec<u8>,
    /// The stamp of the write that wrote it last.
    pub stamp: Stamp,
}

/// A downstream that fences: every write carries the writer's [`Stamp`],
/// and a write below the highest accepted stamp is refused in the same
/// atomic step that would have written it.
///
/// Implementations: [`Memory`] (in process, for tests), the SQLite and
/// PostgreSQL adapters, and the simulator's store client (which judges with
/// the SQLite adapter).
pub trait Downstream: Clone + Send + Sync + 'static {
    /// Writes `value` under `key` unless `stamp` is below the highest
    /// stamp accepted so far; says which.
    fn write(
        &self,
        key: &str,
        value: &[u8],
        stamp: Stamp,
    ) -> impl Future<Output = Result<Written, DownstreamError>> + Send;

    /// How many distinct keys hold a value (a service numbers its next
    /// item after it).
    fn count(&self) -> impl Future<Output = Result<u64, DownstreamError>> + Send;
}

/// The fencing rule, once: whether a write stamped `stamp` is refused by a
/// downstream whose highest accepted stamp is `highest`.
///
/// ```
/// use neli::downstream::refuses;
/// use neli::{Stamp, Token};
///
/// let s = |log_epoch, token| Stamp { log_epoch, token: Token(token) };
/// assert!(!refuses(None, s(0, 5)), "the first write is taken");
/// assert!(!refuses(Some(s(0, 5)), s(0, 5)), "a term writes again");
/// assert!(refuses(Some(s(0, 5)), s(0, 3)), "an older term is refused");
/// assert!(!refuses(Some(s(0, 9_000)), s(1, 3)), "a new election log outranks the old one");
/// ```
pub fn refuses(highest: Option<Stamp>, stamp: Stamp) -> bool {
    refused_by(highest, stamp).is_some()
}

/// The highest stamp, when it refuses a write stamped `stamp`.
pub(crate) fn refused_by(highest: Option<Stamp>, stamp: Stamp) -> Option<Stamp> {
    highest.filter(|h| stamp < *h)
}

/// An in-process fenced downstream (a map behind a mutex), for tests and
/// examples; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    inner: Arc<Mutex<MemoryState>>,
}

#[derive(Debug, Default)]
struct MemoryState {
    highest: Option<Stamp>,
    rows: std::collections::BTreeMap<String, (Vec<u8>, Stamp)>,
}

impl Memory {
    /// An empty downstream.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// The value under `key` and the stamp it was written with.
    pub fn get(&self, key: &str) -> Option<(Vec<u8>, Stamp)> {
        self.inner.lock().expect("memory downstream lock").rows.get(key).cloned()
    }

    /// The highest stamp accepted so far.
    pub fn highest(&self) -> Option<Stamp> {
        self.inner.lock().expect("memory downstream lock").highest
    }
}

impl Downstream for Memory {
    fn write(
        &self,
        key: &str,
        value: &[u8],
        stamp: Stamp,
    ) -> impl Future<Output = Result<Written, DownstreamError>> + Send {
        let mut s = self.inner.lock().expect("memory downstream lock");
        let answer = if let Some(highest) = refused_by(s.highest, stamp) {
            Written::Refused { highest }
        } else {
            s.highest = s.highest.max(Some(stamp));
            s.rows.insert(key.to_owned(), (value.to_vec(), stamp));
            Written::Accepted
        };
        std::future::ready(Ok(answer))
    }

    fn count(&self) -> impl Future<Output = Result<u64, DownstreamError>> + Send {
        let n = self.inner.lock().expect("memory downstream lock").rows.len();
        std::future::ready(Ok(n as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Token;

    fn s(log_epoch: u64, token: u64) -> Stamp {
        Stamp { log_epoch, token: Token(token) }
    }

    #[tokio::test]
    async fn memory_refuses_a_stamp_below_the_highest_and_keeps_the_newer_value() {
        let db = Memory::new();
        assert_eq!(db.write("a", b"new", s(0, 5)).await, Ok(Written::Accepted));
        assert_eq!(db.write("a", b"old", s(0, 3)).await, Ok(Written::Refused { highest: s(0, 5) }));
        assert_eq!(db.get("a"), Some((b"new".to_vec(), s(0, 5))));
        assert_eq!(db.write("b", b"x", s(1, 0)).await, Ok(Written::Accepted), "a new log epoch outranks");
        assert_eq!((db.count().await, db.highest()), (Ok(2), Some(s(1, 0))));
    }
}
