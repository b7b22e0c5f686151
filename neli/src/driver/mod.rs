//! `Neli`: the async driver that runs the sans-IO core against a [`Broker`]
//! and a [`Clock`], with goNELI's API (`pulse`, `is_leader`, `background`,
//! `close`, `state`) plus `resign`, `token`, a status `watch` and an event
//! `Stream`.
//!
//! The driver is one short loop: poll the broker, feed the core, carry out
//! the core's outputs. Handlers run on their own task so a `Fenced` handler
//! never delays the loop, while a `Revoked` handler holds the handover (the
//! loop waits for it before acknowledging the revocation to the broker).
//! Control requests (`close`, `resign`) from handlers or other tasks are
//! flags the loop picks up, so a handler calling `close()` cannot deadlock.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::broker::{Broker, BrokerError, BrokerEvent, Membership};
use crate::clock::Clock;
use crate::config::{Config, ConfigError, ResolvedConfig};
#[cfg(feature = "unsafe-variants")]
use crate::core::{CoreConfig, UnsafeVariant};
use crate::core::{Event, FenceCause, Lease, Member, Output, Time, Token};
use crate::metrics::{ElectionCounters, Handles};
use crate::status::{State, Status};

mod background;
mod control;
mod phases;
pub(crate) mod spawn;
mod term;

pub use background::Background;
pub use control::Control;
use control::{Now, Pulses, Requests, Shared};
use term::TermWork;
pub use term::{Section, Term};

type HandlerFn = Box<dyn FnMut(Event, Control) -> BoxFuture<'static, ()> + Send>;

/// How a finished election ended (not an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Outcome {
    /// `close()` was called.
    #[error("the election is closed")]
    Closed,
    /// The election was ended (`neli end`: its end marker created, then its
    /// topic deleted): every member stops.
    #[error("the election was ended (neli end)")]
    ElectionEnded,
}

/// What one [`Neli::pulse`] found.
#[must_use = "a finished election must stop the loop that pulses it"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pulse {
    /// The election runs.
    Running {
        /// Whether this member leads role 0 now.
        leader: bool,
    },
    /// The election is over; every later pulse says so again.
    Finished(Outcome),
}

impl Pulse {
    /// Whether this member leads role 0 (false once finished).
    pub fn is_leader(self) -> bool {
        matches!(self, Pulse::Running { leader: true })
    }
}

/// Errors surfaced by the driver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration was refused (before anything connected).
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// A fatal broker error; sticky: every later call returns it again.
    #[error(transparent)]
    Broker(#[from] BrokerError),
    /// An operation on an election that has finished (`pulse` reports that
    /// as [`Pulse::Finished`] instead).
    #[error("{0}")]
    Finished(Outcome),
    /// `close()` did not finish within the time given, and what hung (a
    /// broker call, a `Revoked` handler) was abandoned: the close timeout,
    /// or twice it when the election loop could not start closing.
    #[error("close did not finish within {0:?}; resources were abandoned")]
    CloseTimedOut(Duration),
}

/// The election handle. See the crate docs for a complete example.
pub struct Neli<B: Broker, C: Clock> {
    cfg: ResolvedConfig,
    core: Member,
    broker: B,
    clock: C,
    shared: Arc<Shared>,
    handler: Option<mpsc::UnboundedSender<(Event, Option<oneshot::Sender<()>>)>>,
    /// The term-scoped work registered with [`Neli::on_term`].
    terms: Vec<TermWork>,
    state: State,
    rejoin_at: Option<Time>,
    /// The log epoch last reported (warned about and published).
    log_epoch: u64,
    /// What the driver counted (the core's counters are added as emitted).
    counts: ElectionCounters,
    /// The counts last emitted as metrics.
    emitted: ElectionCounters,
    /// The phases of the acquisition under way, for the histogram.
    acquisition: phases::AcquisitionClock,
}

impl<B: Broker, C: Clock> Neli<B, C> {
    /// Validates `config`, subscribes to the election and returns the handle.
    pub async fn new(config: &Config, mut broker: B, clock: C) -> Result<Self, Error> {
        let cfg = config.resolve()?;
        let bounds = cfg.explain();
        let d = crate::duration::format;
        tracing::info!(
            name = %cfg.name,
            group = %cfg.group_id,
            topic = %cfg.topic,
            failover = %d(bounds.failover),
            handover = %d(bounds.handover),
            resign_hold_off = %d(bounds.resign_hold_off),
            min_rebalance_timeout = %bounds.min_rebalance_timeout.map_or_else(|| "none".to_owned(), d),
            rebalance_timeout = %d(bounds.rebalance_timeout),
            drift_margin = %bounds.drift_margin.map_or_else(|| "none".to_owned(), d),
            "election starting; bounds not counting the broker's rebalance delay (Config::explain, neli exec --explain)"
        );
        let partitions = broker.partition_count().await?;
        if partitions < cfg.mode.partitions() {
            tracing::warn!(topic = %cfg.topic, partitions, wanted = cfg.mode.partitions(), "election topic has fewer partitions than configured");
        }
        broker.subscribe().await?;
        let core = Member::new(cfg.core(partitions));
        let metrics = Handles::register(None, &cfg.group_id, cfg.mode.roles());
        let started = clock.now();
        let now: Now = {
            let clock = clock.clone();
            Arc::new(move || clock.now())
        };
        let shared = Arc::new(Shared {
            status: watch::Sender::new(Status {
                state: State::Live,
                leading: BTreeMap::new(),
                log_epoch: 0,
                generation: None,
            }),
            requests: Mutex::new(Requests::default()),
            subscribers: Mutex::new(Vec::new()),
            end: Mutex::new(None),
            now,
            metrics: Mutex::new(metrics),
            counters: Mutex::new(ElectionCounters::default()),
            pulses: Mutex::new(Pulses { last: started, in_handler_since: None }),
            liveness_bound: crate::metrics::liveness_bound(cfg.min_poll_interval, cfg.heartbeat_timeout),
            group_id: cfg.group_id.clone(),
        });
        Ok(Neli {
            cfg,
            core,
            broker,
            clock,
            shared,
            handler: None,
            terms: Vec::new(),
            state: State::Live,
            rejoin_at: None,
            log_epoch: 0,
            counts: ElectionCounters::default(),
            emitted: ElectionCounters::default(),
            acquisition: phases::AcquisitionClock::default(),
        })
    }

    /// Registers this election's metrics with `recorder` instead of the
    /// global recorder it registered them with in [`Neli::new`] (for a
    /// process with several registries, or a test reading its own). Call
    /// before the first `pulse`: what was emitted before stays with the
    /// earlier recorder.
    pub fn set_metrics_recorder(&mut self, recorder: &dyn ::metrics::Recorder) {
        let handles = Handles::register(Some(recorder), &self.cfg.group_id, self.cfg.mode.roles());
        *self.shared.metrics.lock().expect("metrics lock") = handles;
    }

    /// Replaces the core with one running the deliberately broken
    /// `variant`, for harnesses that show their oracles catch it (the
    /// simulator, the model checker). Call before the first `pulse`. Only
    /// with the `unsafe-variants` feature, which applications never enable.
    #[cfg(feature = "unsafe-variants")]
    #[doc(hidden)]
    pub fn with_unsafe_variant(mut self, variant: UnsafeVariant) -> Self {
        let cfg = CoreConfig { unsafe_variant: variant, ..self.core.config().clone() };
        self.core = Member::new(cfg);
        self
    }

    /// Replaces the core with one whose acquisition grace is `grace`,
    /// whatever validation requires (a grace below T under the consumer
    /// protocol, which `Config` refuses): for tests that show the overlap
    /// the rule prevents. Call before the first `pulse`. Only with the
    /// `unsafe-variants` feature, which applications never enable.
    #[cfg(feature = "unsafe-variants")]
    #[doc(hidden)]
    pub fn with_unchecked_grace(mut self, grace: Duration) -> Self {
        let cfg = CoreConfig { grace, ..self.core.config().clone() };
        self.core = Member::new(cfg);
        self
    }

    /// Sets the event handler. `Revoked` handlers hold the handover until
    /// they return; `Acquired` and `Fenced` never block the election loop.
    /// Handlers run one at a time, in event order, on their own task.
    pub fn on_event<F, Fut>(&mut self, mut handler: F)
    where
        F: FnMut(Event, Control) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let mut handler: HandlerFn = Box::new(move |ev, ctl| handler(ev, ctl).boxed());
        let (tx, mut rx) = mpsc::unbounded_channel::<(Event, Option<oneshot::Sender<()>>)>();
        let control = self.control();
        spawn::spawn(async move {
            while let Some((event, done)) = rx.recv().await {
                handler(event, control.clone()).await;
                if let Some(done) = done {
                    let _ = done.send(());
                }
            }
        });
        self.handler = Some(tx);
    }

    /// Runs `work` for each term this member leads `role`: called on
    /// `Acquired` with the term ([`Term`]: its stamp, the end of the term,
    /// sections), on a task of its own. The term ends at once on `Fenced`;
    /// on `Revoked` (a rebalance, `resign`, `close`) the handover waits
    /// until every [`Section`] of the term is left, so work that checks the
    /// lease and writes inside one section never writes after the role
    /// moved on. Register before [`Neli::background`]; works with
    /// [`Neli::pulse`] loops too. See [`Term`] for an example.
    pub fn on_term<F, Fut>(&mut self, role: u32, work: F)
    where
        F: FnMut(Term) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.terms.push(TermWork::new(role, work));
    }

    /// A cloneable handle for other tasks and handlers: leadership,
    /// status, events, and `close`/`resign` requests.
    pub fn control(&self) -> Control {
        Control { shared: self.shared.clone() }
    }

    /// The validated configuration, defaults resolved.
    pub fn config(&self) -> &ResolvedConfig {
        &self.cfg
    }

    /// The core's view, for diagnostics (counters of ignored records, ...).
    pub fn core(&self) -> &Member {
        &self.core
    }

    /// Polls the broker for up to `timeout`, advances the election and
    /// returns whether this member leads role 0, or that the election has
    /// finished (closed, or ended with `neli end`). A fatal broker error is
    /// returned by this and every later pulse.
    pub async fn pulse(&mut self, timeout: Duration) -> Result<Pulse, Error> {
        let result = self.pulse_once(timeout).await;
        self.shared.pulses.lock().expect("pulses lock").last = self.clock.now();
        self.emit();
        result
    }

    async fn pulse_once(&mut self, timeout: Duration) -> Result<Pulse, Error> {
        if let Some(end) = self.shared.end() {
            return end.map(Pulse::Finished);
        }
        self.take_requests().await?;
        if let Some(end) = self.shared.end() {
            return end.map(Pulse::Finished);
        }
        if self.rejoin_at.is_some_and(|at| at <= self.clock.now()) {
            self.rejoin_at = None;
            if let Err(e) = self.broker.subscribe().await {
                self.broker_error(e)?;
            }
        }
        let now = self.clock.now();
        let mut wait = timeout;
        for deadline in [self.core.poll_timeout(), self.rejoin_at].into_iter().flatten() {
            wait = wait.min(deadline.saturating_since(now));
        }
        match self.broker.poll(wait).await {
            Ok(events) => {
                for event in events {
                    self.apply(event).await?;
                    if let Some(end) = self.shared.end() {
                        return end.map(Pulse::Finished);
                    }
                }
            }
            Err(e) => self.broker_error(e)?,
        }
        self.core.handle_timeout(self.clock.now());
        self.drain().await?;
        Ok(Pulse::Running { leader: self.is_leader() })
    }

    /// Whether this member leads role 0 now. False once the lease expires,
    /// even if nothing has been polled since.
    pub fn is_leader(&self) -> bool {
        self.is_leader_of(0)
    }

    /// Whether this member leads `role` now (lease not expired): whether
    /// [`Neli::lease`] is some.
    pub fn is_leader_of(&self, role: u32) -> bool {
        self.lease(role).is_some()
    }

    /// The fencing token of role 0 while leading: the token of
    /// [`Neli::lease`]. Downstream, compare the lease's [`Lease::stamp`]
    /// instead (tokens restart with a new log).
    pub fn token(&self) -> Option<Token> {
        self.lease(0).map(|l| l.token)
    }

    /// The lease of `role` while it is live now on the member's clock: its
    /// token, end and log epoch, read at once; [`Lease::stamp`] is what a
    /// downstream system compares. The same answer as [`Control::lease`].
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
    /// let lease = neli.lease(0).expect("the only member leads");
    /// assert_eq!(lease.stamp(), neli::Stamp { log_epoch: 0, token: lease.token });
    /// neli.close().await?;
    /// # Ok(()) }
    /// ```
    pub fn lease(&self, role: u32) -> Option<Lease> {
        self.shared.lease(role, self.clock.now())
    }

    /// The election's lifecycle state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Gives up leadership now (leaders get `Revoked`) and stays out of the
    /// group for 2 S + T (a rebalance, which the coordinator may hold up to
    /// S after the others rejoin, plus the successor's evidence) so another
    /// member takes over.
    pub async fn resign(&mut self) -> Result<(), Error> {
        self.usable()?;
        self.counts.resigns += 1;
        self.hand_over_terms(None).await;
        self.core.resign(self.clock.now());
        self.drain().await
    }

    /// Closes the election: leaders get `Revoked`, the broker is closed.
    /// Bounded by the configured close timeout, also if the broker or a
    /// handler hangs.
    pub async fn close(&mut self) -> Result<(), Error> {
        if self.state == State::Closed {
            return Ok(());
        }
        self.state = State::Closing;
        self.publish();
        let limit = self.cfg.close_timeout;
        let clock = self.clock.clone();
        let sleep = clock.sleep(limit);
        let result = {
            let work = async {
                self.hand_over_terms(None).await;
                self.core.close(self.clock.now());
                let drained = self.drain().await;
                let closed = self.broker.close().await.map_err(Error::from);
                drained.and(closed)
            };
            tokio::select! {
                biased;
                r = work => r,
                _ = sleep => Err(Error::CloseTimedOut(limit)),
            }
        };
        self.state = State::Closed;
        self.shared.finish(Ok(Outcome::Closed));
        self.publish();
        self.emit();
        match result {
            Err(Error::Broker(e)) if !e.is_fatal() => Ok(()),
            other => other,
        }
    }

    /// Runs the election loop on a task: pulse every `min_poll_interval`
    /// until closed, ended or a fatal error.
    ///
    /// The returned [`Background`] owns the election: dropping it (or the
    /// future that awaits it) closes the election as [`Background::close`]
    /// would, on the task. [`Neli::background_until`] adds a cancellation
    /// token that does the same.
    pub fn background(self) -> Background {
        self.background_until(CancellationToken::new())
    }

    /// [`Neli::background`], closing the election once `cancel` is
    /// cancelled, as when the returned handle is dropped: the loop sees
    /// it at its next pulse (within `min_poll_interval`), then closes as
    /// [`Neli::close`] does: leaders get `Revoked` and the handover waits
    /// for the `Revoked` handler, then the member leaves the group, so
    /// another member takes over within the graceful handover time
    /// ([`crate::config::Explanation::handover`]), not after the session
    /// timeout. The whole close is bounded by twice the close timeout from
    /// the cancellation (the bound of [`Background::close`]); past that
    /// the task gives up and drops the client. Awaiting the handle then
    /// gives `Ok(Outcome::Closed)` (or the error the close met).
    ///
    /// One token can stop many elections, and a child token of the
    /// application's shutdown token stops this one with the rest:
    ///
    /// ```
    /// use neli::{CancellationToken, Config, Outcome, SystemClock, testing::FakeCluster};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), neli::Error> {
    /// let shutdown = CancellationToken::new();
    /// let config = Config::builder().group("billing-cron").build()?;
    /// let clock = SystemClock::new();
    /// let cluster = FakeCluster::new(1);
    /// let neli = neli::Neli::new(&config, cluster.broker("a", clock.clone()), clock).await?;
    /// let election = neli.background_until(shutdown.clone());
    /// // ... on SIGTERM, say:
    /// shutdown.cancel();
    /// assert_eq!(election.await?, Outcome::Closed);
    /// # Ok(()) }
    /// ```
    pub fn background_until(mut self, cancel: CancellationToken) -> Background {
        // A child: dropping the handle cancels this election only.
        let stop = cancel.child_token();
        let guard = stop.clone().drop_guard();
        let control = self.control();
        let abandon_after = self.cfg.close_timeout * 2;
        let clock = self.clock.clone();
        let sleep = Box::new(move |d| {
            let clock = clock.clone();
            async move { clock.sleep(d).await }.boxed()
        }) as Box<dyn Fn(Duration) -> BoxFuture<'static, ()> + Send>;
        let clock = self.clock.clone();
        let task = spawn::spawn(async move {
            let run = async {
                let poll = self.cfg.min_poll_interval;
                let result = loop {
                    if stop.is_cancelled() {
                        // The same request as `Control::close`: the close
                        // runs inside the pulse, Revoked barrier and all.
                        self.shared.requests.lock().expect("requests lock").close = true;
                    }
                    match self.pulse(poll).await {
                        Ok(Pulse::Running { .. }) => {}
                        Ok(Pulse::Finished(outcome)) => break Ok(outcome),
                        Err(e) => break Err(e),
                    }
                };
                if self.state != State::Closed {
                    let closed = self.close().await;
                    if result.is_ok() {
                        closed?;
                    }
                }
                result
            };
            // Once cancelled, bounded as `Background::close` bounds it: a
            // pulse stuck in a hung broker call or handler is abandoned
            // (and with it the client, when `self` drops below).
            let bounded = async {
                stop.cancelled().await;
                clock.sleep(abandon_after).await;
            };
            tokio::select! {
                biased;
                r = run => r,
                _ = bounded => Err(Error::CloseTimedOut(abandon_after)),
            }
        });
        Background { task, control, abandon_after, sleep, guard }
    }

    /// `Err` once the election has finished: the fatal error, or why it ended.
    fn usable(&self) -> Result<(), Error> {
        match self.shared.end() {
            None => Ok(()),
            Some(Ok(outcome)) => Err(Error::Finished(outcome)),
            Some(Err(e)) => Err(e),
        }
    }

    async fn take_requests(&mut self) -> Result<(), Error> {
        let (close, resign) = {
            let mut r = self.shared.requests.lock().expect("requests lock");
            (std::mem::take(&mut r.close), std::mem::take(&mut r.resign))
        };
        if resign {
            self.resign().await?;
        }
        if close {
            self.close().await?;
        }
        Ok(())
    }

    async fn apply(&mut self, event: BrokerEvent) -> Result<(), Error> {
        let now = self.clock.now();
        match event {
            BrokerEvent::Assigned { generation, partitions } => {
                tracing::info!(generation, ?partitions, "partitions assigned");
                self.acquisition.assigned(now, &self.core, &partitions);
                self.core.handle_assigned(now, generation, &partitions)
            }
            BrokerEvent::Revoked { partitions } => {
                // The terms first, while the core still leads: every write
                // a section sent then lies inside the lease.
                self.hand_over_terms(Some(&partitions)).await;
                self.core.handle_revoked(self.clock.now(), &partitions);
                // Revoked handlers finish before the partitions move on.
                self.drain().await?;
                if let Err(e) = self.broker.ack_revoked(&partitions).await {
                    self.broker_error(e)?;
                }
            }
            BrokerEvent::Lost { partitions } => self.core.handle_lost(now, &partitions),
            BrokerEvent::Record(record) => {
                self.core.handle_record(now, &record);
                let phase = self.acquisition.read(now, self.core.counters().own_heartbeats);
                self.time_phase(phase);
            }
            BrokerEvent::LogLost => {
                self.core.handle_log_lost();
                self.publish();
            }
            BrokerEvent::ElectionEnded => {
                tracing::info!(topic = %self.cfg.topic, "election ended");
                // Recorded first, so that the close below does not read as
                // the reason the election finished.
                self.shared.finish(Ok(Outcome::ElectionEnded));
                self.close().await?;
                return Ok(());
            }
        }
        self.drain().await
    }

    /// Carries out the core's outputs until there are none, and publishes
    /// the status, also when a broker error cut it short (every handle
    /// answers `is_leader` from that status, so it never lags the core).
    async fn drain(&mut self) -> Result<(), Error> {
        let result = self.carry_out().await;
        self.publish();
        result
    }

    async fn carry_out(&mut self) -> Result<(), Error> {
        while let Some((output, cause)) = self.core.poll_output_with_cause() {
            match output {
                Output::Produce { partition, payload } => {
                    if let Err(e) = self.broker.produce(partition, payload).await {
                        self.broker_error(e)?;
                    }
                }
                Output::ConfirmMembership { generation } => {
                    let sent = self.clock.now();
                    match self.broker.confirm_membership(generation).await {
                        Ok(Membership::Undetermined) => {
                            self.counts.proofs.undetermined += 1;
                            tracing::debug!(generation, "membership proof undetermined (rebalance in progress)");
                        }
                        Ok(m) => {
                            self.time_phase(self.acquisition.proved(self.clock.now().saturating_since(sent)));
                            let accepted = m == Membership::Confirmed;
                            if accepted {
                                self.counts.proofs.accepted += 1;
                            } else {
                                self.counts.proofs.rejected += 1;
                            }
                            self.core.handle_membership(self.clock.now(), generation, sent, accepted);
                        }
                        Err(e) => self.broker_error(e)?,
                    }
                }
                Output::LeaveGroup { rejoin_after } => {
                    if let Err(e) = self.broker.leave().await {
                        self.broker_error(e)?;
                    }
                    self.rejoin_at = Some(self.clock.now() + rejoin_after);
                }
                Output::Event(event) => self.deliver(event, cause).await,
            }
        }
        Ok(())
    }

    async fn deliver(&mut self, event: Event, cause: Option<FenceCause>) {
        tracing::info!(name = %self.cfg.name, ?event, ?cause, "leadership transition");
        if matches!(event, Event::Acquired { .. }) {
            let phase = self.acquisition.acquired(self.clock.now());
            self.time_phase(phase);
        }
        self.count(event, cause);
        self.publish();
        self.shared.subscribers.lock().expect("subscribers lock").retain(|tx| tx.send(event).is_ok());
        // A Revoked waits for the term's sections, then for the handler:
        // both hold the handover (`Control::health` reports the wait).
        let revoked = matches!(event, Event::Revoked { .. });
        if revoked {
            self.shared.pulses.lock().expect("pulses lock").in_handler_since = Some(self.clock.now());
        }
        let (control, log_epoch) = (self.control(), self.core.log_epoch());
        for term in &mut self.terms {
            term.on_event(event, log_epoch, &control).await;
        }
        if let Some(handler) = &self.handler {
            if revoked {
                let (done, wait) = oneshot::channel();
                if handler.send((event, Some(done))).is_ok() {
                    let _ = wait.await;
                }
            } else {
                let _ = handler.send((event, None));
            }
        }
        if revoked {
            self.shared.pulses.lock().expect("pulses lock").in_handler_since = None;
        }
    }

    /// Ends the terms of the roles `partitions` carry (every term if
    /// `None`) and waits until their sections are left, before the core
    /// gives the roles up (ARCHITECTURE.md, "Term-scoped work"): a write
    /// sent inside a section is then sent while the member still leads,
    /// and the successor is assigned only after it. `Control::health`
    /// reports the wait as time in a `Revoked` handler.
    async fn hand_over_terms(&mut self, partitions: Option<&[u32]>) {
        let cfg = self.core.config().clone();
        let mut marked = false;
        for term in &mut self.terms {
            if partitions.is_none_or(|ps| ps.contains(&cfg.partition_of(term.role()))) {
                if !marked {
                    self.shared.pulses.lock().expect("pulses lock").in_handler_since = Some(self.clock.now());
                    marked = true;
                }
                term.hand_over().await;
            }
        }
        if marked {
            self.shared.pulses.lock().expect("pulses lock").in_handler_since = None;
        }
    }

    /// What a dropped, unclosed `Neli` can still do without awaiting: end
    /// the core's leases, tell subscribers and the handler (`Revoked`, not
    /// waited for), and publish `Closed`, so that no `Control` answers
    /// `is_leader` from a lease nobody renews while the client (dropped
    /// next) leaves the group.
    fn close_without_waiting(&mut self) {
        if !self.core.is_closed() {
            self.core.close(self.clock.now());
        }
        while let Some((output, cause)) = self.core.poll_output_with_cause() {
            // Writes, proofs and leaves need the broker, which is going.
            let Output::Event(event) = output else { continue };
            tracing::info!(name = %self.cfg.name, ?event, "leadership transition (dropped without close)");
            self.count(event, cause);
            self.shared.subscribers.lock().expect("subscribers lock").retain(|tx| tx.send(event).is_ok());
            if let Some(handler) = &self.handler {
                let _ = handler.send((event, None));
            }
        }
        for term in &mut self.terms {
            term.end_now();
        }
        self.state = State::Closed;
        self.shared.finish(Ok(Outcome::Closed));
        self.publish();
        self.emit();
    }

    /// Counts a leadership transition (and a fence's cause).
    fn count(&mut self, event: Event, cause: Option<FenceCause>) {
        let role = self.counts.role_mut(event.role());
        match event {
            Event::Acquired { .. } => role.acquisitions += 1,
            Event::Revoked { .. } => role.revocations += 1,
            Event::Fenced { .. } => {
                // The core gives every Fenced its cause.
                debug_assert!(cause.is_some(), "a Fenced event without a cause");
                role.fences.add(cause.unwrap_or(FenceCause::LeaseExpired));
            }
        }
    }

    /// Records one phase of an acquisition in its histogram (and the log).
    fn time_phase(&self, phase: Option<(crate::metrics::Phase, Duration)>) {
        if let Some((phase, took)) = phase {
            tracing::debug!(phase = phase.as_str(), seconds = took.as_secs_f64(), "acquisition phase");
            self.shared.metrics.lock().expect("metrics lock").time_phase(phase, took);
        }
    }

    /// The one place metrics are emitted: the counters grow by what was
    /// counted since the last emission (the driver's counts and the
    /// core's), the gauges are set from the published status now, and
    /// `Control::counters` answers the new counts.
    fn emit(&mut self) {
        let core = self.core.counters();
        if self.counts.records != *core {
            self.counts.records = core.clone();
        }
        if self.counts != self.emitted {
            self.shared.metrics.lock().expect("metrics lock").add(&self.emitted, &self.counts);
            self.emitted.clone_from(&self.counts);
            self.shared.counters.lock().expect("counters lock").clone_from(&self.counts);
        }
        self.shared.set_gauges(self.clock.now());
    }

    fn broker_error(&mut self, e: BrokerError) -> Result<(), Error> {
        if e.is_fatal() {
            self.counts.broker_errors.fatal += 1;
            tracing::error!(error = %e, "fatal broker error");
            let err = Error::Broker(e);
            self.shared.finish(Err(err.clone()));
            Err(err)
        } else {
            self.counts.broker_errors.retriable += 1;
            tracing::warn!(error = %e, "retriable broker error");
            Ok(())
        }
    }

    fn publish(&mut self) {
        // Whoever found it (the topic watcher, or the core reading its own
        // heartbeat back below a token it led with), say it once per log.
        let log_epoch = self.core.log_epoch();
        if log_epoch > self.log_epoch {
            self.log_epoch = log_epoch;
            tracing::warn!(
                topic = %self.cfg.topic,
                log_epoch,
                "the election log was lost or truncated (a broker restarted without its data, or an unclean leader \
                 election): fencing tokens restart from the new log's offsets; compare (log_epoch, token) downstream"
            );
        }
        let leading = self.core.leading_roles().collect();
        let status =
            Status { state: self.state, leading, log_epoch: self.log_epoch, generation: self.core.generation() };
        self.shared.status.send_if_modified(|s| {
            let changed = *s != status;
            *s = status;
            changed
        });
    }
}

/// Dropping a `Neli` that was not closed (`close()` is the way to end an
/// election: it awaits the `Revoked` handlers and the leave) cannot await
/// anything: its leases end at once (every handle's `is_leader` turns
/// false and `Control::end` says `Closed`), subscribers and the handler are
/// told `Revoked` but nothing waits for the handler, and then the broker
/// is dropped. The Kafka backend's client leaves the group as it is
/// destroyed (librdkafka's consumer close sends LeaveGroup, on a thread of
/// its own), so another member takes over after a rebalance rather than a
/// session timeout; [`crate::testing::FakeBroker`] leaves too. A `Neli`
/// dropped while unwinding from a panic does none of this.
impl<B: Broker, C: Clock> Drop for Neli<B, C> {
    fn drop(&mut self) {
        if self.state == State::Closed || std::thread::panicking() {
            return;
        }
        self.close_without_waiting();
    }
}
