//! Term-scoped work ([`Neli::on_term`](super::Neli::on_term)): the
//! service's work for one term of a role, started when the role is
//! acquired, told at once when the term ends, and holding an orderly
//! handover for as long as it is inside a [`Section`] (ARCHITECTURE.md,
//! "Term-scoped work").
//!
//! Checking the lease and then writing downstream is two steps; a
//! revocation can fall between them, and then a member that has handed the
//! role over still writes. A section closes that gap: it is entered only
//! while the term's lease is live, and the `Revoked` handover waits until
//! every section of the term has been left, so the check and the write sit
//! on the same side of the handover. A fence (`Fenced`: the lease lapsed or
//! the member was cut off) does not wait: nobody can hold a lapsed lease
//! open, so the term ends at once and the stamp is what the downstream
//! judges the write by.

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::{OwnedRwLockReadGuard, RwLock};
use tokio_util::sync::CancellationToken;

use super::control::Control;
use crate::core::{Event, Stamp};

/// One term of leadership of one role: its [`Stamp`], a way to learn that
/// it ended, and [`Term::section`] to do work that must not straddle a
/// handover.
///
/// ```
/// use std::time::Duration;
/// use neli::{Config, SystemClock, Term, testing::FakeCluster};
/// use neli::downstream::{Downstream, Memory};
///
/// // The work of one term: write once a round, stamped, each write in a
/// // section, until the term is over.
/// async fn work(term: Term, db: Memory) {
///     let mut n = 0;
///     while let Some(section) = term.section().await {
///         n += 1;
///         let _ = db.write(&format!("tick-{n}"), b"", section.stamp()).await;
///         drop(section); // leave it before waiting: a handover waits for it
///         if term.until_over(tokio::time::sleep(Duration::from_millis(5))).await.is_none() {
///             return; // the term ended while we waited
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), neli::Error> {
/// let config = Config::builder().group("billing-cron").build()?;
/// let clock = SystemClock::new();
/// let cluster = FakeCluster::new(1);
/// let db = Memory::new();
/// let mut neli = neli::Neli::new(&config, cluster.broker("a", clock.clone()), clock).await?;
/// let for_work = db.clone();
/// neli.on_term(0, move |term| work(term, for_work.clone()));
/// let election = neli.background();
/// while db.highest().is_none() {
///     tokio::time::sleep(Duration::from_millis(5)).await;
/// }
/// election.close().await?; // Revoked: waits for a section in flight, then hands over
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Term {
    role: u32,
    stamp: Stamp,
    inner: Arc<TermInner>,
    control: Control,
}

struct TermInner {
    over: CancellationToken,
    sections: Arc<RwLock<()>>,
}

/// Work inside a term that an orderly handover waits for: while a section
/// is held, the role's `Revoked` is not acknowledged, so no successor can
/// lead. Hold it across the lease check and the write it guards, and no
/// longer (a section held for ever holds the handover until the close
/// timeout).
pub struct Section {
    stamp: Stamp,
    _open: OwnedRwLockReadGuard<()>,
}

impl Section {
    /// The stamp to write with: the term's.
    pub fn stamp(&self) -> Stamp {
        self.stamp
    }
}

impl Term {
    /// The role this term leads.
    pub fn role(&self) -> u32 {
        self.role
    }

    /// The term's stamp (log epoch and fencing token), fixed for the term.
    pub fn stamp(&self) -> Stamp {
        self.stamp
    }

    /// Whether the term is over: ended by the election (`Revoked`,
    /// `Fenced`, close), or its lease not live now with this term's stamp.
    pub fn is_over(&self) -> bool {
        self.inner.over.is_cancelled() || self.control.lease(self.role).is_none_or(|l| l.stamp() != self.stamp)
    }

    /// Completes when the election ends the term (`Revoked`, `Fenced`,
    /// close): select on it to stop at once.
    pub async fn over(&self) {
        self.inner.over.cancelled().await;
    }

    /// A token cancelled when the election ends the term, for work that
    /// already selects on a `CancellationToken` (a child token: cancelling
    /// it ends nothing but itself).
    pub fn cancellation(&self) -> CancellationToken {
        self.inner.over.child_token()
    }

    /// Runs `work` until it completes (`Some`) or the term ends first
    /// (`None`; the work is dropped).
    pub async fn until_over<F: Future>(&self, work: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            () = self.inner.over.cancelled() => None,
            out = work => Some(out),
        }
    }

    /// Enters a section if the term's lease is live now; `None` once the
    /// term is over. An orderly handover waits for the section to be
    /// dropped; a section asked for while a handover waits is refused.
    pub async fn section(&self) -> Option<Section> {
        if self.inner.over.is_cancelled() {
            return None;
        }
        // tokio's lock is fair: a handover waiting to write goes before
        // later readers, so no new section starts once it waits.
        let open = self.inner.sections.clone().read_owned().await;
        if self.is_over() {
            return None;
        }
        Some(Section { stamp: self.stamp, _open: open })
    }
}

type WorkFn = Box<dyn FnMut(Term) -> BoxFuture<'static, ()> + Send>;

/// The work registered for one role and its current term.
pub(super) struct TermWork {
    role: u32,
    work: WorkFn,
    current: Option<Arc<TermInner>>,
}

impl TermWork {
    pub(super) fn new<F, Fut>(role: u32, mut work: F) -> TermWork
    where
        F: FnMut(Term) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        TermWork { role, work: Box::new(move |t| work(t).boxed()), current: None }
    }

    /// Starts, ends or hands over the term as `event` says; a `Revoked`
    /// completes once the term's sections are left.
    pub(super) async fn on_event(&mut self, event: Event, log_epoch: u64, control: &Control) {
        if event.role() != self.role {
            return;
        }
        match event {
            Event::Acquired { role, token } => {
                self.end_now();
                let inner = Arc::new(TermInner { over: CancellationToken::new(), sections: Arc::new(RwLock::new(())) });
                self.current = Some(inner.clone());
                let stamp = Stamp { log_epoch, token };
                super::spawn::spawn((self.work)(Term { role, stamp, inner, control: control.clone() }));
            }
            Event::Fenced { .. } => self.end_now(),
            Event::Revoked { .. } => {
                self.hand_over().await;
            }
        }
    }

    /// The role this work is for.
    pub(super) fn role(&self) -> u32 {
        self.role
    }

    /// Ends the current term, if any, in order: no new sections, and
    /// once the sections in flight are left. Whether there was a term.
    pub(super) async fn hand_over(&mut self) -> bool {
        let Some(inner) = self.current.take() else { return false };
        inner.over.cancel();
        let _no_sections = inner.sections.write().await;
        true
    }

    /// Ends the current term without waiting for its sections.
    pub(super) fn end_now(&mut self) {
        if let Some(inner) = self.current.take() {
            inner.over.cancel();
        }
    }
}
