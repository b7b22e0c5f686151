//! A member host: the real `neli::Neli` driver on a simulated client and
//! clock, the application around it (a poll loop writing to a token-guarded
//! resource, a Revoked barrier handler), the controls faults pull on
//! ([`MemberCtl`]), and the stranger that writes to the election topic.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use neli::core::UnsafeVariant;
use neli::{Clock, Config, Mode, Neli, Time};

use crate::app::AppSetup;
use crate::client::{ClientCfg, PollLog, SimBroker};
use crate::clock::{ClockModel, Gate, SimClock, global_ms};
use crate::record::{ClaimObs, CloseResult, EventObs, LeaseObs, Recorder, WriteObs};
use crate::scenario::{DEFAULT_REVOKED_WORK, Dur, ModeName, Scenario, Variant};
use crate::verdict::Rule;

mod resource;
mod user_app;
use resource::{Handle, write_if_told};
use user_app::run_user_app;

/// What faults ask of a member's application; read by its loop and handler.
#[derive(Debug, Default)]
pub(super) struct MemberCtl {
    pub stall_until: u64,
    pub close: bool,
    pub resign: bool,
    pub close_in_handler: bool,
    pub close_and_wait_in_handler: bool,
}

impl MemberCtl {
    /// The application's pending requests (close, resign), taken.
    fn take_asks(&mut self) -> (bool, bool) {
        (std::mem::take(&mut self.close), std::mem::take(&mut self.resign))
    }
}

/// One member host across its incarnations: its clock, its pause gate
/// and the controls the world's faults set.
#[derive(Clone)]
pub(super) struct Slot {
    pub idx: usize,
    pub clock: Arc<Mutex<ClockModel>>,
    pub gate: Gate,
    pub ctl: Arc<Mutex<MemberCtl>>,
    pub incarnations: Arc<AtomicU64>,
    /// Set by a `fatal-error` fault: the client of the running incarnation
    /// fails fatally from its next poll on (a restart clears it).
    pub fatal: Arc<AtomicBool>,
    /// Global ms a `stall-poll` holds a harness application's loop until
    /// (its clock and store client wait it out: `app.rs`), or, under
    /// `app_loop = "background"`, neli's loop (its client's polls wait it
    /// out: `SimBroker::polls_stalled_by`). Cleared when a process starts.
    pub app_stall: Arc<AtomicU64>,
    /// Seeded start delay of the first incarnation, so members' timers run
    /// out of phase and seeds explore different interleavings.
    pub start_delay_ms: u64,
    /// The static instance id its client joins with (`group.instance.id`):
    /// `m<idx>` under static membership; a spare's is set by the
    /// `static-replace` fault that starts it, and it waits until then.
    pub instance: Arc<Mutex<Option<String>>>,
    /// A spare process for a static replacement (`election.spares`).
    pub spare: bool,
}

impl Slot {
    pub fn new(idx: usize, seed: u64) -> Slot {
        Slot {
            idx,
            // Every member's monotonic clock has its own origin.
            clock: Arc::new(Mutex::new(ClockModel::new(crate::mix(seed, idx as u64) % 100_000))),
            gate: Gate::default(),
            ctl: Arc::new(Mutex::new(MemberCtl::default())),
            incarnations: Arc::new(AtomicU64::new(0)),
            fatal: Arc::new(AtomicBool::new(false)),
            app_stall: Arc::new(AtomicU64::new(0)),
            start_delay_ms: crate::mix(seed, 100 + idx as u64) % 1000,
            instance: Arc::new(Mutex::new(None)),
            spare: false,
        }
    }

    /// The instance id its client joins with, if any.
    pub fn instance(&self) -> Option<String> {
        self.instance.lock().expect("instance lock").clone()
    }

    /// What the faults ask of the application now (close, resign), once a
    /// stall of its loop is over: a stalled loop asks nothing, while the
    /// client's background work goes on, and a request made meanwhile
    /// waits for it (it used to be dropped).
    async fn asks(&self) -> (bool, bool) {
        loop {
            let stalled = {
                let mut c = self.ctl();
                let now = global_ms();
                if c.stall_until <= now {
                    return c.take_asks();
                }
                c.stall_until - now
            };
            tokio::time::sleep(Duration::from_millis(stalled)).await;
            self.gate.pass().await;
        }
    }

    pub fn ctl(&self) -> std::sync::MutexGuard<'_, MemberCtl> {
        self.ctl.lock().expect("ctl lock")
    }
}

/// The election settings every member of a run shares.
#[derive(Clone)]
pub(super) struct MemberParams {
    coordinator: String,
    leader: String,
    t: Duration,
    s: Duration,
    grace: Duration,
    interval: Option<Duration>,
    poll: Duration,
    proof: bool,
    mode: Mode,
    variant: UnsafeVariant,
    max_poll_ms: u64,
    app_work: Option<Duration>,
    app_asks_at_lease_end: bool,
    /// The application runs the election with `Neli::background`.
    background: bool,
    revoked_work: Duration,
    session_expiry: bool,
    assignment: neli::Assignment,
    /// A harness application runs in every member process instead of the
    /// built-in one.
    pub app: Option<AppSetup>,
}

impl MemberParams {
    pub fn new(s: &Scenario) -> MemberParams {
        let (e, c) = (&s.election, &s.cluster);
        MemberParams {
            coordinator: c.coordinator.to_string(),
            leader: c.partition_leader.to_string(),
            t: e.heartbeat_timeout.duration(),
            s: e.session_timeout.duration(),
            grace: e.grace.duration(),
            interval: e.heartbeat_interval.map(Dur::duration),
            poll: e.poll_interval.duration(),
            proof: e.membership_proof,
            mode: match e.mode {
                ModeName::Exclusive => Mode::Exclusive,
                ModeName::MultiRole => {
                    Mode::MultiRole { roles: e.roles, partitions: e.partitions, exclusive: e.exclusive }
                }
            },
            variant: UnsafeVariant {
                lease_from_receipt: e.variant == Variant::LeaseFromReceipt,
                any_record_counts: e.variant == Variant::AnyRecordCounts,
            },
            max_poll_ms: e.max_poll_ms(),
            app_work: e.app_work.map(Dur::duration),
            app_asks_at_lease_end: e.app_asks_at_lease_end,
            background: e.app_loop == crate::scenario::AppLoop::Background,
            revoked_work: e.revoked_work.map_or(DEFAULT_REVOKED_WORK, Dur::duration),
            // The consumer protocol's client never expires its own session.
            session_expiry: e.client_session_expiry && e.group_protocol == crate::scenario::GroupProtocolName::Classic,
            assignment: e.assignment.neli(),
            app: None,
        }
    }

    /// How many roles' resources the built-in application writes: every
    /// role in exclusive multi-role mode, else role 0's alone (outside
    /// exclusive mode two leaders of a role may overlap by design).
    fn written_roles(&self) -> u32 {
        match self.mode {
            Mode::MultiRole { roles, exclusive: true, .. } => roles,
            _ => 1,
        }
    }

    /// The member's neli configuration. The client's session timeout is
    /// the scenario's S; neli's validation (T < S exclusive, T > S
    /// non-exclusive) is bypassed on purpose so unsafe settings can be
    /// shown to fail: neli itself only uses S to time a resign. For the same
    /// reason max.poll.interval.ms stays out of neli's config (validation
    /// refuses values not above T + S with the membership proof).
    fn config(&self, name: &str) -> Result<Config, neli::ConfigError> {
        let t = self.t;
        let validated_s = match (self.mode.is_exclusive(), t < self.s, t > self.s) {
            (true, true, _) | (false, _, true) => self.s,
            (true, false, _) => t * 3,
            (false, _, false) => t / 2,
        };
        let mut builder = Config::builder()
            .bootstrap_servers(format!("{}:9092", self.coordinator))
            .group("sim")
            .topic("sim.neli")
            .name(name.to_owned())
            .heartbeat_timeout(t)
            .min_poll_interval(self.poll)
            .grace(self.grace)
            .membership_proof(self.proof)
            .mode(self.mode)
            .assignment(self.assignment)
            .kafka("session.timeout.ms", validated_s.as_millis().to_string());
        if let Some(i) = self.interval {
            builder = builder.heartbeat_interval(i);
        }
        builder.build()
    }

    /// The simulated client's settings, as the Kafka backend sets librdkafka's.
    fn client(&self, name: &str, instance_id: Option<String>) -> ClientCfg {
        let s_ms = self.s.as_millis() as u64;
        ClientCfg {
            name: name.to_owned(),
            coordinator: self.coordinator.clone(),
            partition_leader: self.leader.clone(),
            session_ms: s_ms,
            // The interval the Kafka backend gives librdkafka (neli/KAFKA.md).
            heartbeat_ms: neli::rules::group_heartbeat_interval(Duration::from_millis(s_ms)).as_millis() as u64,
            max_poll_ms: self.max_poll_ms,
            request_timeout_ms: 1000,
            delivery_timeout_ms: 2 * self.t.as_millis() as u64,
            session_expiry: self.session_expiry,
            cooperative: self.assignment == neli::Assignment::CooperativeSticky,
            instance_id,
        }
    }
}

/// One incarnation of a member host, from start to crash or close.
pub(super) async fn member_main(slot: Slot, p: MemberParams, rec: Recorder) -> crate::rt::Result {
    if slot.spare && slot.incarnations.load(Ordering::SeqCst) == 0 {
        // A spare starts when a `static-replace` gives it an instance id.
        while slot.instance().is_none() {
            tokio::time::sleep(crate::world::TICK).await;
        }
    }
    let inc = slot.incarnations.fetch_add(1, Ordering::SeqCst);
    if inc == 0 && !slot.spare {
        tokio::time::sleep(Duration::from_millis(slot.start_delay_ms)).await;
    }
    let name = if inc == 0 { format!("m{}", slot.idx) } else { format!("m{}.{inc}", slot.idx) };
    {
        let mut log = rec.lock();
        log.slots.insert(name.clone(), slot.idx);
        log.current.insert(slot.idx, name.clone());
        log.starts.push((global_ms(), name.clone()));
    }
    // The gate is left as the world set it: a pause that began before this
    // process started (during its start delay) holds it at its first step;
    // a crash ended the pauses of the process it killed (`world/apply.rs`).
    *slot.ctl() = MemberCtl::default();
    // A stall held the killed process's loop; a new process starts free,
    // whichever loop (its own, a harness application's, neli's) it held.
    slot.app_stall.store(0, Ordering::SeqCst);
    rec.trace(global_ms(), &name, "started");
    let clock = SimClock::new(slot.clock.clone(), slot.gate.clone());
    slot.fatal.store(false, Ordering::SeqCst);
    let broker = SimBroker::start(
        p.client(&name, slot.instance()),
        clock.clone(),
        slot.gate.clone(),
        rec.clone(),
        slot.fatal.clone(),
    );
    let broker = if p.background && p.app.is_none() { broker.polls_stalled_by(slot.app_stall.clone()) } else { broker };
    let polls = broker.polls();
    let config = match p.config(&name) {
        Ok(c) => c,
        Err(e) => {
            rec.trace(global_ms(), &name, format!("config rejected: {e}"));
            return Ok(());
        }
    };
    let neli = match Neli::new(&config, broker, clock.clone()).await {
        Ok(n) => n,
        Err(e) => {
            rec.trace(global_ms(), &name, format!("start failed: {e}"));
            return Ok(());
        }
    };
    let mut neli = if p.variant.is_any() { neli.with_unsafe_variant(p.variant) } else { neli };
    if let Some(setup) = &p.app {
        run_user_app(neli, clock, setup, &slot, name, &rec).await;
        return Ok(());
    }
    let control = neli.control();
    install_barrier(&mut neli, &slot, &rec, &name, p.revoked_work);
    if p.background {
        // Subscribed before the task first runs (it starts at the next
        // yield), so no event is missed.
        rec.lock().background.insert(name.clone());
        // Its polls are not judged (`judge_waits` needs the core between pulses).
        drop(polls);
        let bg = neli.background();
        record_status(bg.status(), bg.events(), &rec, &name, slot.idx);
        run_background(bg, clock, control, name, &slot, &p, &rec).await;
    } else {
        record_status(control.status(), control.events(), &rec, &name, slot.idx);
        let member = Incarnation { neli, clock, control, name, claimed: None, polls };
        member.run(&slot, &p, &rec).await;
    }
    Ok(())
}

/// The member's election finished and its application loop ends. A
/// `status()` subscriber is woken for every change, so one tick later the
/// recorder's subscriber has seen the final state, `Closed` (rule
/// `handles-agree`; a driver that woke subscribers only on publishes that
/// changed nothing kept them waiting forever for `Closed`).
async fn finished(rec: &Recorder, name: &str) {
    {
        let mut log = rec.lock();
        log.ends.insert(name.to_owned(), global_ms());
        log.finished.insert(name.to_owned());
    }
    tokio::time::sleep(crate::world::TICK).await;
    let mut log = rec.lock();
    let seen = log.watched_state.get(name).copied();
    if seen != Some(neli::State::Closed) {
        let what =
            format!("the election finished but its status() subscriber was last woken with state {seen:?}, not Closed");
        log.saw_broken(Rule::HandlesAgree, name, global_ms(), what);
    }
}

/// The application runs the election on a task of its own
/// (`Neli::background`, `election.app_loop = "background"`) and asks the
/// `Background` handle before each write, once a poll interval. A
/// `stall-poll` fault stalls the loop that polls the client, which here is
/// neli's: the application goes on asking, and is answered from the lease
/// last published, so it is told no once that lease ends. Its leases
/// are not claims in line with its polls (the loop inside neli is not
/// observable), so the per-rule oracles of `oracle/rules.rs` do not judge
/// them; the end-result oracles and the handle rules do.
async fn run_background(
    bg: neli::Background,
    clock: SimClock,
    control: neli::Control,
    name: String,
    slot: &Slot,
    p: &MemberParams,
    rec: &Recorder,
) {
    let disagree = |what: String| rec.lock().saw_broken(Rule::HandlesAgree, &name, global_ms(), what);
    loop {
        // A stall holds neli's loop here, not the application
        // (`SimBroker::polls_stalled_by`): it goes on asking.
        let (close, resign) = slot.ctl().take_asks();
        if close {
            rec.lock().close_asked.entry(name.clone()).or_insert(global_ms());
            let out = bg.close().await;
            // Closing waits for the loop, so it has ended and says how.
            let end = control.end();
            rec.trace(global_ms(), &name, format!("Background::close returned {out:?}"));
            rec.lock().close_results.push(CloseResult::new(&name, out.as_ref().map(|_| ())));
            if let Ok(o) = &out
                && !matches!(&end, Some(Ok(e)) if e == o)
            {
                disagree(format!("Background::close returned Ok({o}), Control::end() = {end:?}"));
            }
            if end.is_some() {
                finished(rec, &name).await;
            }
            return;
        }
        if resign && control.end().is_none() {
            bg.resign();
            rec.lock().resign_asked.push((global_ms(), name.clone()));
            rec.trace(global_ms(), &name, "asked to resign (Background::resign)");
        }
        let same_status = *bg.status().borrow() == *control.status().borrow();
        if bg.state() != control.state() || !same_status || bg.error() != control.error() {
            disagree(format!(
                "Background says state {:?}, error {:?}; Control says {:?}, {:?}; same status: {same_status}",
                bg.state(),
                bg.error(),
                control.state(),
                control.error()
            ));
        }
        write_if_told(Handle::Background(&bg), &clock, &control, rec, &name, p.written_roles());
        if let Some(end) = control.end() {
            // The election ended by itself (a fatal error, `neli end`):
            // awaiting the handle says how.
            let joined = bg.await;
            if joined != end {
                disagree(format!("awaiting Background gave {joined:?}, Control::end() = {end:?}"));
            }
            finished(rec, &name).await;
            return;
        }
        clock.sleep(p.poll).await;
        slot.gate.pass().await;
    }
}

/// How often the application's Revoked handler writes while it finishes
/// its work (`election.revoked_work`, default `DEFAULT_REVOKED_WORK`).
const HANDLER_WRITE_EVERY: Duration = Duration::from_millis(50);

/// The application's handler. On Revoked it finishes its work (`revoked_work`),
/// writing to the token-guarded resource with the token it led with, as an
/// application flushing its last batch would: the barrier rule says all of
/// it lands before the next leader's first act. On Fenced it stops at once
/// (the lease is already gone). When armed, it closes the election from
/// inside a Revoked handler.
fn install_barrier(neli: &mut Neli<SimBroker, SimClock>, slot: &Slot, rec: &Recorder, name: &str, work: Duration) {
    let (ctl, rec, name, gate) = (slot.ctl.clone(), rec.clone(), name.to_owned(), slot.gate.clone());
    let led_with: Arc<Mutex<Option<u64>>> = Arc::default();
    neli.on_event(move |event, control| {
        let revoked = matches!(event, neli::Event::Revoked { .. });
        // The token this handler may finish work with: Revoked keeps the one
        // the member led with, Fenced leaves none.
        let token = {
            let mut held = led_with.lock().expect("token lock");
            match event {
                neli::Event::Acquired { role: 0, token } => {
                    *held = Some(token.0);
                    None
                }
                neli::Event::Revoked { role: 0 } => held.take(),
                neli::Event::Fenced { role: 0 } => held.take().and(None),
                _ => None,
            }
        };
        let (close, close_and_wait) = {
            let mut c = ctl.lock().expect("ctl lock");
            (
                revoked && std::mem::take(&mut c.close_in_handler),
                revoked && std::mem::take(&mut c.close_and_wait_in_handler),
            )
        };
        let (rec, name, gate) = (rec.clone(), name.clone(), gate.clone());
        async move {
            if close {
                rec.trace(global_ms(), &name, "Revoked handler calls close()");
                rec.lock().close_asked.entry(name.clone()).or_insert(global_ms());
                control.close();
            }
            if close_and_wait {
                // Broken on purpose: the loop waits for this handler and
                // this handler waits for the loop to close (goNELI).
                rec.trace(global_ms(), &name, "Revoked handler calls close() and waits for it");
                rec.lock().close_asked.entry(name.clone()).or_insert(global_ms());
                control.close();
                let mut status = control.status();
                let _ = status.wait_for(|s| s.state == neli::State::Closed).await;
            }
            if matches!(event, neli::Event::Revoked { .. }) {
                let mut worked = Duration::ZERO;
                while worked < work {
                    let step = HANDLER_WRITE_EVERY.min(work - worked);
                    tokio::time::sleep(step).await;
                    worked += step;
                    gate.pass().await;
                    if let Some(token) = token {
                        let mut log = rec.lock();
                        let log_epoch = log.epoch_of(&name, 0, token, true);
                        let at = global_ms();
                        log.writes.push(WriteObs {
                            at,
                            member: name.clone(),
                            role: 0,
                            token,
                            log_epoch,
                            told: None,
                            in_handler: true,
                        });
                    }
                }
            }
        }
    });
}

/// Records every lease status the driver publishes and every event it
/// emits, for the oracles and the trace.
fn record_status(
    mut status: tokio::sync::watch::Receiver<neli::Status>,
    mut events: tokio_stream::wrappers::UnboundedReceiverStream<neli::Event>,
    rec: &Recorder,
    name: &str,
    idx: usize,
) {
    let (rec2, name2) = (rec.clone(), name.to_owned());
    tokio::task::spawn_local(async move {
        let (rec, name) = (rec2, name2);
        while status.changed().await.is_ok() {
            let (state, leading) = {
                let s = status.borrow_and_update();
                let leading = s.leading.iter().map(|(r, l)| (*r, *l)).collect();
                (s.state, leading)
            };
            let mut log = rec.lock();
            log.watched_state.insert(name.clone(), state);
            log.leases.push(LeaseObs { at: global_ms(), member: name.clone(), slot: idx, leading });
        }
    });
    let (rec2, name2) = (rec.clone(), name.to_owned());
    tokio::task::spawn_local(async move {
        let (rec, name) = (rec2, name2);
        use tokio_stream::StreamExt;
        while let Some(event) = events.next().await {
            let at = global_ms();
            let text = match event {
                neli::Event::Acquired { role, token } => {
                    format!("Acquired role={role} token={token}")
                }
                neli::Event::Revoked { role } => format!("Revoked role={role}"),
                neli::Event::Fenced { role } => format!("Fenced role={role}"),
                other => format!("unknown event {other:?}"),
            };
            let mut log = rec.lock();
            log.trace.push((at, name.clone(), text));
            let log_epoch = log.log_epoch;
            log.events.push(EventObs { at, member: name.clone(), event, log_epoch });
            rec.moment();
        }
    });
}

/// A running member: its driver and what its application loop needs.
struct Incarnation {
    neli: Neli<SimBroker, SimClock>,
    clock: SimClock,
    control: neli::Control,
    name: String,
    /// The last `ClaimObs` recorded: (log epoch, generation, leases).
    claimed: Option<(u64, Option<u64>, BTreeMap<u32, neli::Lease>)>,
    /// The driver's polls, as its client saw them (rule `wakes-on-time`).
    polls: PollLog,
}

impl Incarnation {
    /// The application's poll loop, until the member closes.
    async fn run(mut self, slot: &Slot, p: &MemberParams, rec: &Recorder) {
        loop {
            let (close, resign) = slot.asks().await;
            if close {
                self.close_as_asked(rec).await;
                // The loop goes on as an application's would: its next pulse
                // must say the election finished (rule close-finishes).
                continue;
            }
            if resign && self.control.end().is_none() {
                self.resign_as_asked(rec);
            }
            match self.pulse_judged(p, resign, rec).await {
                Ok(neli::Pulse::Running { .. }) => {}
                Ok(neli::Pulse::Finished(outcome)) => {
                    self.finish(outcome, rec).await;
                    return;
                }
                Err(e) => {
                    if self.close_if_fatal(&e, rec).await {
                        return;
                    }
                    self.clock.sleep(p.poll).await;
                }
            }
            self.work_while_leading(p, rec).await;
        }
    }

    /// A `close` fault: the application closes the election from its loop.
    async fn close_as_asked(&mut self, rec: &Recorder) {
        let name = &self.name;
        rec.lock().close_asked.entry(name.clone()).or_insert(global_ms());
        let r = self.neli.close().await;
        rec.trace(global_ms(), name, format!("close() returned ({})", if r.is_ok() { "ok" } else { "error" }));
        rec.lock().close_results.push(CloseResult::new(name, r.as_ref().copied()));
        if !self.neli.core().is_closed() {
            let what = "close() returned, but the core says it is not closed".to_owned();
            rec.lock().saw_broken(Rule::HandlesAgree, name, global_ms(), what);
        }
    }

    /// A `resign` fault, asked from outside the loop as an application's
    /// admin task would: the next pulse gives up leadership before it
    /// polls (the client notes the resign when it leaves).
    fn resign_as_asked(&self, rec: &Recorder) {
        self.control.resign();
        rec.lock().resign_asked.push((global_ms(), self.name.clone()));
        rec.trace(global_ms(), &self.name, "asked to resign (Control::resign)");
    }

    /// One pulse, with what the rules judge around it: the driver's waits
    /// against the core's deadlines, the leases it published, and whether
    /// a running pulse's answer agrees with the handles.
    async fn pulse_judged(
        &mut self,
        p: &MemberParams,
        resign: bool,
        rec: &Recorder,
    ) -> Result<neli::Pulse, neli::Error> {
        // The core as the pulse's poll will find it, unless a resign
        // asked now changes it first.
        let before = (!resign).then(|| self.neli.core().clone());
        self.polls.lock().expect("poll log").clear();
        let pulsed = self.neli.pulse(p.poll).await;
        if let Some(core) = before {
            self.judge_waits(core, rec);
        }
        self.note_claims(rec);
        if let Ok(said @ neli::Pulse::Running { .. }) = pulsed {
            let (leads, closed) = (self.neli.is_leader(), self.neli.core().is_closed());
            if said.is_leader() != leads || closed {
                let what = format!(
                    "pulse() said running, leader = {}; is_leader() = {leads}, the core says closed = {closed}",
                    said.is_leader()
                );
                rec.lock().saw_broken(Rule::HandlesAgree, &self.name, global_ms(), what);
            }
        }
        pulsed
    }

    /// The election finished: every handle tells how it ended alike.
    async fn finish(&self, outcome: neli::Outcome, rec: &Recorder) {
        let name = &self.name;
        let end = self.control.end();
        if !matches!(&end, Some(Ok(o)) if *o == outcome) {
            let what = format!("pulse() said the election finished ({outcome}), Control::end() = {end:?}");
            rec.lock().saw_broken(Rule::HandlesAgree, name, global_ms(), what);
        }
        rec.trace(global_ms(), name, "closed (ok)");
        finished(rec, name).await;
    }

    /// A failed pulse; after a fatal one (every later pulse fails alike)
    /// the application closes, so the member leaves the group. Returns
    /// whether it did.
    async fn close_if_fatal(&mut self, e: &neli::Error, rec: &Recorder) -> bool {
        let name = &self.name;
        rec.trace(global_ms(), name, format!("pulse failed: {e}"));
        if self.control.error().is_none() {
            return false;
        }
        let r = self.neli.close().await;
        rec.trace(global_ms(), name, format!("closed after a fatal error ({r:?})"));
        rec.lock().close_results.push(CloseResult::new(name, r.as_ref().copied()));
        finished(rec, name).await;
        true
    }

    /// The token-guarded shared resource: the application writes while
    /// leading, and asks again later as the scenario's timings say.
    async fn work_while_leading(&self, p: &MemberParams, rec: &Recorder) {
        let name = &self.name;
        let leading =
            write_if_told(Handle::Pulsed(&self.neli), &self.clock, &self.control, rec, name, p.written_roles());
        // With `app_work`, the application works between pulses and asks
        // `is_leader()` again before writing: the answer must already be
        // false if the lease ran out meanwhile (a pause can land here).
        if let Some(work) = p.app_work
            && leading
        {
            self.clock.sleep(work).await;
            write_if_told(Handle::Pulsed(&self.neli), &self.clock, &self.control, rec, name, p.written_roles());
        }
        // Working right up to the lease's end: at its last millisecond
        // the answer must already be no (a lease ends at `until`, not
        // after it: docs/background.md, Protocol semantics).
        let until = p.app_asks_at_lease_end.then(|| self.control.status().borrow().leading.get(&0).map(|l| l.until));
        if let Some(until) = until.flatten()
            && leading
        {
            self.clock.sleep(until.saturating_since(self.clock.now())).await;
            write_if_told(Handle::Pulsed(&self.neli), &self.clock, &self.control, rec, name, p.written_roles());
        }
    }
}

impl Incarnation {
    /// Rule `wakes-on-time`: the driver never sleeps past the core's next
    /// deadline (`Member::poll_timeout`'s promise). Judged by what the core
    /// does, not by asking it when: a copy of the core as the poll found
    /// it, handed the last millisecond of the wait, must have nothing to do
    /// yet. A late wake is a late `Fenced` (the lease had ended) or a late
    /// `Acquired`; the published lease still ends on time, so no other rule
    /// sees it (docs/background.md, "Per-rule oracles").
    fn judge_waits(&self, core: neli::core::Member, rec: &Recorder) {
        let polls = std::mem::take(&mut *self.polls.lock().expect("poll log"));
        for (at, wait) in polls.into_iter().filter(|(_, wait)| *wait > 0) {
            let mut probe = core.clone();
            let last = at + wait - 1;
            probe.handle_timeout(Time::from_millis(last));
            if let Some(due) = probe.poll_output() {
                let what = format!(
                    "its driver polled at {} (own clock) for {wait} ms, but its core already had work by {}: {due:?}",
                    crate::verdict::secs(at),
                    crate::verdict::secs(last)
                );
                rec.lock().saw_broken(Rule::WakesOnTime, &self.name, global_ms(), what);
            }
        }
    }

    /// Records the leases the driver published, if they changed, in line
    /// with the client's polls (`ClaimObs`).
    fn note_claims(&mut self, rec: &Recorder) {
        let status = self.control.status().borrow().clone();
        let leading: BTreeMap<u32, neli::Lease> = status.leading.iter().map(|(r, l)| (*r, *l)).collect();
        let claim = (status.log_epoch, status.generation, leading);
        if self.claimed.as_ref() == Some(&claim) {
            return;
        }
        let mut log = rec.lock();
        let seq = log.next_seq();
        let (log_epoch, generation, leading) = claim.clone();
        log.claims.push(ClaimObs { seq, at: global_ms(), member: self.name.clone(), log_epoch, generation, leading });
        self.claimed = Some(claim);
    }
}
