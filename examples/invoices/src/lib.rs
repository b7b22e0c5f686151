//! An invoices service on neli: the leader sends one invoice per round,
//! numbered after the invoices the database already holds, stamped with
//! its term's fencing stamp. Rendering an invoice takes a while, and that
//! is where a process pause bites: a leader paused while rendering wakes up
//! with its lease gone.
//!
//! [`serve`] is written against neli's traits only (`Broker`, `Clock`,
//! `Downstream`): the binary (`src/main.rs`) calls it with Kafka, the
//! system clock and a SQLite file; the harness test (`tests/invoices.rs`)
//! calls the same function with the simulator's. [`Variant::Correct`] does
//! its work per term (`Neli::on_term`): each invoice is sent inside a
//! section of the term, so a handover waits for the invoice in flight and
//! no invoice is sent once the term is over. The other variants are the
//! mistakes the harness test must catch.

use std::time::Duration;

use neli::downstream::Downstream;
use neli::{Broker, CancellationToken, Clock, Neli, Outcome, Term};

/// How long rendering an invoice takes.
pub const RENDER: Duration = Duration::from_millis(200);
/// How long the service waits between invoices, and between looks at its
/// lease when it does not lead.
pub const ROUND: Duration = Duration::from_millis(100);

/// Which service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Term-scoped (`Neli::on_term`): renders, then sends inside a section
    /// of the term, stamped with the term's stamp.
    Correct,
    /// The obvious background-mode service: looks at its lease, renders,
    /// looks again, and sends stamped with the lease's stamp. Between the
    /// second look and the send, the election can hand the role over.
    LookThenSend,
    /// Sends what it rendered without looking again: after a pause its
    /// lease may be gone. The fenced database refuses some of these
    /// writes, not all.
    NoRecheck,
}

/// How the service runs and when it stops.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Which service (the binary runs [`Variant::Correct`]).
    pub variant: Variant,
    /// Stop once the invoice numbered `until` is in the database (the
    /// binary's `--until`); `None`: never by itself.
    pub until: Option<u64>,
    /// Cancelled on shutdown (SIGTERM): the election closes, the handover
    /// waiting for the invoice in flight.
    pub shutdown: CancellationToken,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { variant: Variant::Correct, until: None, shutdown: CancellationToken::new() }
    }
}

/// The limit part of [`Settings`], copied into each term's work.
#[derive(Debug, Clone, Copy)]
struct Limit {
    until: Option<u64>,
}

/// The service: runs the election in the background and sends invoices
/// while it leads, until the election finishes (closed, ended, a fatal
/// error), the shutdown token is cancelled or the limit is reached.
/// Returns how the election ended.
pub async fn serve<B, C, D>(neli: Neli<B, C>, clock: C, db: D, settings: Settings) -> Result<Outcome, neli::Error>
where
    B: Broker,
    C: Clock,
    D: Downstream,
{
    match settings.variant {
        Variant::Correct => serve_by_term(neli, clock, db, settings).await,
        Variant::LookThenSend | Variant::NoRecheck => serve_by_looking(neli, clock, db, settings).await,
    }
}

/// Whether the database holds the last invoice to send.
async fn reached<D: Downstream>(db: &D, limit: Limit) -> bool {
    match limit.until {
        Some(until) => db.count().await.is_ok_and(|n| n >= until),
        None => false,
    }
}

/// The invoice to send next, or `None` when the limit is reached or the
/// database did not answer.
async fn next_invoice<D: Downstream>(db: &D, limit: Limit) -> Option<Result<(String, String), ()>> {
    let Ok(sent) = db.count().await else { return Some(Err(())) };
    let n = sent + 1;
    if limit.until.is_some_and(|u| n > u) {
        return None;
    }
    Some(Ok((format!("invoice-{n}"), format!("invoice {n}: 1 x widget, 42.00 EUR"))))
}

async fn serve_by_term<B, C, D>(
    mut neli: Neli<B, C>,
    clock: C,
    db: D,
    settings: Settings,
) -> Result<Outcome, neli::Error>
where
    B: Broker,
    C: Clock,
    D: Downstream,
{
    let limit = Limit { until: settings.until };
    let (work_clock, work_db) = (clock.clone(), db.clone());
    neli.on_term(0, move |term| invoices_of_a_term(term, work_clock.clone(), work_db.clone(), limit));
    let election = neli.background_until(settings.shutdown.clone());
    if limit.until.is_none() {
        return election.await;
    }
    // The limit is reached when the database holds it, whoever sent it.
    while election.end().is_none() && !settings.shutdown.is_cancelled() && !reached(&db, limit).await {
        clock.sleep(ROUND).await;
    }
    election.close().await
}

/// One term's work: render, then send inside a section of the term.
async fn invoices_of_a_term<C: Clock, D: Downstream>(term: Term, clock: C, db: D, limit: Limit) {
    loop {
        let Some(next) = term.until_over(next_invoice(&db, limit)).await else { return };
        let Some(Ok((key, body))) = next else {
            // Done, or no answer from the database: look again next round.
            if term.until_over(clock.sleep(ROUND)).await.is_none() {
                return;
            }
            continue;
        };
        if term.until_over(clock.sleep(RENDER)).await.is_none() {
            return;
        }
        // The lease is checked and the invoice sent on the same side of
        // any handover: a Revoked waits for the section.
        let Some(section) = term.section().await else { return };
        let _ = db.write(&key, body.as_bytes(), section.stamp()).await;
        drop(section);
        if term.until_over(clock.sleep(ROUND)).await.is_none() {
            return;
        }
    }
}

async fn serve_by_looking<B, C, D>(
    neli: Neli<B, C>,
    clock: C,
    db: D,
    settings: Settings,
) -> Result<Outcome, neli::Error>
where
    B: Broker,
    C: Clock,
    D: Downstream,
{
    let (variant, limit) = (settings.variant, Limit { until: settings.until });
    let election = neli.background_until(settings.shutdown.clone());
    loop {
        if let Some(end) = election.end() {
            return end;
        }
        if settings.shutdown.is_cancelled() || reached(&db, limit).await {
            return election.close().await;
        }
        let Some(lease) = election.lease(0) else {
            clock.sleep(ROUND).await;
            continue;
        };
        let Some(Ok((key, body))) = next_invoice(&db, limit).await else {
            clock.sleep(ROUND).await;
            continue;
        };
        clock.sleep(RENDER).await;
        if variant == Variant::LookThenSend && election.lease(0).map(|l| l.stamp()) != Some(lease.stamp()) {
            // The lease ended while rendering (a pause, a revocation).
            continue;
        }
        let _ = db.write(&key, body.as_bytes(), lease.stamp()).await;
        clock.sleep(ROUND).await;
    }
}
