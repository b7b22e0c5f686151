//! [`Control`]: the cheap handle every task (event handlers included) uses to
//! read leadership and request `close`/`resign`, over the state the loop
//! shares with its handles.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::{Error, Outcome};
use crate::core::{Event, Lease, Time, Token};
use crate::metrics::{ElectionCounters, Handles, Health};
use crate::status::{State, Status};

pub(super) type Now = Arc<dyn Fn() -> Time + Send + Sync>;

pub(super) struct Shared {
    pub(super) status: watch::Sender<Status>,
    pub(super) requests: Mutex<Requests>,
    pub(super) subscribers: Mutex<Vec<mpsc::UnboundedSender<Event>>>,
    /// How the election ended, once it has: an outcome or the fatal error.
    /// Set once (the first end sticks) and read by every handle.
    pub(super) end: Mutex<Option<Result<Outcome, Error>>>,
    pub(super) now: Now,
    /// The election's metric handles (`neli::metrics`).
    pub(super) metrics: Mutex<Handles>,
    /// The counts as of the loop's last pulse (`Control::counters`).
    pub(super) counters: Mutex<ElectionCounters>,
    /// When the loop last finished a pulse, and since when it waits for a
    /// `Revoked` handler (`Control::health`).
    pub(super) pulses: Mutex<Pulses>,
    /// `neli::metrics::liveness_bound` of the configuration.
    pub(super) liveness_bound: Duration,
    /// The consumer group the election runs in (`Control::group_id`).
    pub(super) group_id: String,
}

#[derive(Clone, Copy)]
pub(super) struct Pulses {
    pub(super) last: Time,
    pub(super) in_handler_since: Option<Time>,
}

impl Shared {
    /// The published lease of `role` if live at `now`: what every handle's
    /// `lease`, `is_leader` and `token` answer from.
    pub(super) fn lease(&self, role: u32, now: Time) -> Option<Lease> {
        self.status.borrow().lease(role, now)
    }

    pub(super) fn end(&self) -> Option<Result<Outcome, Error>> {
        self.end.lock().expect("end lock").clone()
    }

    /// Sets the time-dependent gauges from the published status at `now`.
    /// (The status first, then the metrics: the one lock order.)
    pub(super) fn set_gauges(&self, now: Time) {
        let status = self.status.borrow();
        self.metrics.lock().expect("metrics lock").set_gauges(&status, now);
    }

    /// Records how the election ended, unless it already had.
    pub(super) fn finish(&self, end: Result<Outcome, Error>) {
        self.end.lock().expect("end lock").get_or_insert(end);
    }
}

#[derive(Default)]
pub(super) struct Requests {
    pub(super) close: bool,
    pub(super) resign: bool,
}

/// A cheap, cloneable handle for requesting `close`/`resign` and reading
/// leadership from any task, including an event handler. A [`Background`](super::Background)
/// handle dereferences to one.
#[derive(Clone)]
pub struct Control {
    pub(super) shared: Arc<Shared>,
}

impl Control {
    /// Asks the election loop to close; returns at once.
    pub fn close(&self) {
        self.shared.requests.lock().expect("requests lock").close = true;
    }

    /// Asks the election loop to give up leadership; returns at once.
    pub fn resign(&self) {
        self.shared.requests.lock().expect("requests lock").resign = true;
    }

    /// Whether this member leads role 0 now (lease not expired).
    pub fn is_leader(&self) -> bool {
        self.is_leader_of(0)
    }

    /// Whether this member leads `role` now (lease not expired): whether
    /// [`Control::lease`] is some.
    pub fn is_leader_of(&self, role: u32) -> bool {
        self.lease(role).is_some()
    }

    /// The fencing token of role 0 while leading: the token of
    /// [`Control::lease`]. Downstream, compare the lease's
    /// [`Lease::stamp`] instead (tokens restart with a new log).
    pub fn token(&self) -> Option<Token> {
        self.lease(0).map(|l| l.token)
    }

    /// The lease of `role` while it is live now on the member's clock: its
    /// token, end and log epoch, read at once ([`Lease::stamp`] is what a
    /// downstream system compares). The one answer `is_leader`,
    /// `is_leader_of` and `token` read.
    ///
    /// ```
    /// use neli::{Config, SystemClock, testing::FakeCluster};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), neli::Error> {
    /// let config = Config::builder().bootstrap_servers("127.0.0.1:9092").group("billing-cron").build()?;
    /// let clock = SystemClock::new();
    /// let cluster = FakeCluster::new(1);
    /// let mut neli = neli::Neli::new(&config, cluster.broker("a", clock.clone()), clock).await?;
    /// let _ = neli.pulse(std::time::Duration::from_millis(10)).await?; // joins, writes a heartbeat
    /// let _ = neli.pulse(std::time::Duration::from_millis(10)).await?; // reads it back
    /// let control = neli.control();
    /// if let Some(lease) = control.lease(0) {
    ///     let stamp = lease.stamp(); // fence each write with this
    ///     assert_eq!(stamp.token, lease.token);
    /// }
    /// neli.close().await?;
    /// # Ok(()) }
    /// ```
    pub fn lease(&self, role: u32) -> Option<Lease> {
        self.shared.lease(role, (self.shared.now)())
    }

    /// The consumer group this election runs in (the configuration's
    /// `group.id`): the name `neli::endpoints::Endpoints::serve` answers
    /// it under, and the `group` label of its metrics.
    pub fn group_id(&self) -> &str {
        &self.shared.group_id
    }

    /// The election's lifecycle state, as last published.
    pub fn state(&self) -> State {
        self.shared.status.borrow().state
    }

    /// The published status: a `watch` receiver woken on every change.
    pub fn status(&self) -> watch::Receiver<Status> {
        self.shared.status.subscribe()
    }

    /// Every event from now on, in order. Unbounded: nothing is dropped.
    pub fn events(&self) -> UnboundedReceiverStream<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.shared.subscribers.lock().expect("subscribers lock").push(tx);
        UnboundedReceiverStream::new(rx)
    }

    /// The fatal error that ended the election, if one did.
    pub fn error(&self) -> Option<Error> {
        self.shared.end().and_then(Result::err)
    }

    /// How the election ended, once it has.
    pub fn end(&self) -> Option<Result<Outcome, Error>> {
        self.shared.end()
    }

    /// What the election did since it started (terms, revocations, fences
    /// by cause, resigns, membership proofs, records ignored, broker
    /// errors), as of the loop's last pulse: the figures the `_total`
    /// metrics show ([`crate::metrics`]), without a metrics recorder.
    pub fn counters(&self) -> ElectionCounters {
        self.shared.counters.lock().expect("counters lock").clone()
    }

    /// Whether the election loop is alive, on the member's clock now: the
    /// time since its last pulse against [`crate::metrics::liveness_bound`]
    /// (see [`Health::is_alive`]). A loop that stopped pulsing (a hung
    /// broker call, a starved runtime, a process resumed from a stop whose
    /// loop has not run yet) turns not alive once the bound passes.
    pub fn health(&self) -> Health {
        let now = (self.shared.now)();
        let pulses = *self.shared.pulses.lock().expect("pulses lock");
        Health {
            state: self.state(),
            finished: self.shared.end().is_some(),
            last_pulse_age: now.saturating_since(pulses.last),
            bound: self.shared.liveness_bound,
            in_revoked_handler: pulses.in_handler_since.map(|t| now.saturating_since(t)),
        }
    }

    /// Sets the gauges that change with time alone (`neli_leader`,
    /// `neli_lease_remaining_seconds`, `neli_fencing_token`) from the
    /// published leases on the member's clock now. The loop sets them after
    /// every pulse; an exporter calls this right before it renders a
    /// scrape, so that no scrape shows a lease that ended since the loop's
    /// last pulse (a process resumed from a stop answers before its loop
    /// ran). `neli exec --metrics-addr` does.
    pub fn refresh_metrics(&self) {
        self.shared.set_gauges((self.shared.now)());
    }
}
