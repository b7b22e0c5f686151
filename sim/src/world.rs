//! One simulated run: builds the turmoil world (broker hosts, member hosts
//! running the real `neli::Neli` driver, an optional foreign writer), plays
//! the fault timeline between simulation steps and hands the recording to
//! the oracles. A run is a pure function of (scenario, seed, code).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use neli::core::{Heartbeat, UnsafeVariant};
use neli::{Clock, Config, Mode, Neli, Time};
use tokio::sync::Notify;

use crate::client::{ClientCfg, SimBroker};
use crate::clock::{ClockModel, Gate, SimClock, global_ms};
use crate::oracle::{self, Figures};
use crate::proto::{Conn, Request};
use crate::record::{EventObs, FaultObs, LeaseObs, LeaseView, Recorder, Told, WriteObs, format_line};
use crate::scenario::{Dur, Fault, FaultKind, ModeName, Scenario, Variant};
use crate::server::{BrokerCtx, BrokerState, Profile};

/// The simulation tick: 10 ms keeps turmoil near 400x real time (docs/background.md, Measured facts).
pub const TICK: Duration = Duration::from_millis(10);
/// Default link latency range: spread over a few ticks so seeds explore
/// different message orders.
pub const MIN_LATENCY: Duration = Duration::from_millis(1);
pub const MAX_LATENCY: Duration = Duration::from_millis(25);

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub scenario: String,
    pub seed: u64,
    /// One line per event: `  12.345s m1 Acquired role=0 token=17`.
    pub trace: Vec<String>,
    pub figures: Figures,
    /// Broken guarantees, each a sentence; empty for a passing run.
    pub violations: Vec<String>,
}

impl RunReport {
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// splitmix64: the run's own seeded randomness (clock origins, random faults).
pub fn mix(seed: u64, salt: u64) -> u64 {
    let mut z = seed.wrapping_add(salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Debug, Default)]
struct MemberCtl {
    stall_until: u64,
    close: bool,
    resign: bool,
    close_in_handler: bool,
    close_and_wait_in_handler: bool,
}

#[derive(Clone)]
struct Slot {
    idx: usize,
    clock: Arc<Mutex<ClockModel>>,
    gate: Gate,
    ctl: Arc<Mutex<MemberCtl>>,
    incarnations: Arc<AtomicU64>,
    /// Seeded start delay of the first incarnation, so members' timers run
    /// out of phase and seeds explore different interleavings.
    start_delay_ms: u64,
}

#[derive(Clone)]
struct MemberParams {
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
}

async fn member_main(slot: Slot, p: MemberParams, rec: Recorder) -> turmoil::Result {
    let inc = slot.incarnations.fetch_add(1, Ordering::SeqCst);
    if inc == 0 {
        tokio::time::sleep(Duration::from_millis(slot.start_delay_ms)).await;
    }
    let name = if inc == 0 { format!("m{}", slot.idx) } else { format!("m{}.{inc}", slot.idx) };
    {
        let mut log = rec.lock();
        log.slots.insert(name.clone(), slot.idx);
        log.current.insert(slot.idx, name.clone());
    }
    slot.gate.set_paused(false);
    *slot.ctl.lock().expect("ctl lock") = MemberCtl::default();
    rec.trace(global_ms(), &name, "started");
    let clock = SimClock::new(slot.clock.clone(), slot.gate.clone());
    let s_ms = p.s.as_millis() as u64;
    let cfg = ClientCfg {
        name: name.clone(),
        coordinator: p.coordinator.clone(),
        partition_leader: p.leader.clone(),
        session_ms: s_ms,
        // The interval the Kafka backend gives librdkafka (neli/KAFKA.md).
        heartbeat_ms: neli::config::group_heartbeat_interval(Duration::from_millis(s_ms)).as_millis() as u64,
        max_poll_ms: p.max_poll_ms,
        request_timeout_ms: 1000,
        delivery_timeout_ms: 2 * p.t.as_millis() as u64,
    };
    let broker = SimBroker::start(cfg, clock.clone(), slot.gate.clone(), rec.clone());
    // The client's session timeout is the scenario's S. neli's validation
    // (T < S exclusive, T > S non-exclusive) is bypassed on purpose so unsafe
    // settings can be shown to fail: neli itself only uses S to time a resign.
    // For the same reason max.poll.interval.ms stays out of neli's config
    // (validation refuses values not above T + S with the membership proof).
    let t = p.t;
    let validated_s = match (p.mode.is_exclusive(), t < p.s, t > p.s) {
        (true, true, _) | (false, _, true) => p.s,
        (true, false, _) => t * 3,
        (false, _, false) => t / 2,
    };
    let mut builder = Config::builder()
        .bootstrap_servers(format!("{}:9092", p.coordinator))
        .group("sim")
        .topic("sim.neli")
        .name(name.clone())
        .heartbeat_timeout(t)
        .min_poll_interval(p.poll)
        .grace(p.grace)
        .membership_proof(p.proof)
        .mode(p.mode)
        .kafka("session.timeout.ms", validated_s.as_millis().to_string());
    if let Some(i) = p.interval {
        builder = builder.heartbeat_interval(i);
    }
    let config = match builder.build() {
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
    let control = neli.control();
    {
        // The application's handler: a Revoked barrier that finishes some
        // work (250 ms) and, when armed, closes the election from inside.
        let (ctl, rec, name, gate) = (slot.ctl.clone(), rec.clone(), name.clone(), slot.gate.clone());
        neli.on_event(move |event, control| {
            let revoked = matches!(event, neli::Event::Revoked { .. });
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
                    control.close();
                }
                if close_and_wait {
                    // Broken on purpose: the loop waits for this handler and
                    // this handler waits for the loop to close (goNELI).
                    rec.trace(global_ms(), &name, "Revoked handler calls close() and waits for it");
                    control.close();
                    let mut status = control.status();
                    let _ = status.wait_for(|s| s.state == neli::State::Closed).await;
                }
                if matches!(event, neli::Event::Revoked { .. }) {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    gate.pass().await;
                }
            }
        });
    }
    {
        let mut status = control.status();
        let (rec2, name2, idx) = (rec.clone(), name.clone(), slot.idx);
        tokio::spawn(async move {
            let (rec, name) = (rec2, name2);
            while status.changed().await.is_ok() {
                let leading = status
                    .borrow_and_update()
                    .leading
                    .iter()
                    .map(|(r, l)| (*r, LeaseView { token: l.token.0, until: l.until.as_millis() }))
                    .collect();
                rec.lock().leases.push(LeaseObs { at: global_ms(), member: name.clone(), slot: idx, leading });
            }
        });
        let mut events = control.events();
        let (rec2, name2) = (rec.clone(), name.clone());
        tokio::spawn(async move {
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
                };
                let mut log = rec.lock();
                log.trace.push((at, name.clone(), text));
                log.events.push(EventObs { at, member: name.clone(), event });
            }
        });
    }
    loop {
        let (stall_until, close, resign) = {
            let mut c = slot.ctl.lock().expect("ctl lock");
            (c.stall_until, std::mem::take(&mut c.close), std::mem::take(&mut c.resign))
        };
        let now = global_ms();
        if stall_until > now {
            // The application loop is stuck; the client's background work goes on.
            tokio::time::sleep(Duration::from_millis(stall_until - now)).await;
            slot.gate.pass().await;
            continue;
        }
        if close {
            let r = neli.close().await;
            rec.trace(global_ms(), &name, format!("closed ({})", if r.is_ok() { "ok" } else { "error" }));
            rec.lock().ends.insert(name.clone(), global_ms());
            return Ok(());
        }
        if resign {
            let _ = neli.resign().await;
            rec.trace(global_ms(), &name, "resigned");
        }
        match neli.pulse(p.poll).await {
            Ok(_) => {}
            Err(neli::Error::Closed | neli::Error::ElectionEnded) => {
                rec.trace(global_ms(), &name, "closed (ok)");
                rec.lock().ends.insert(name.clone(), global_ms());
                return Ok(());
            }
            Err(e) => {
                rec.trace(global_ms(), &name, format!("pulse failed: {e}"));
                clock.sleep(p.poll).await;
            }
        }
        // The token-guarded shared resource: write while leading.
        let leading = write_if_told(&neli, &clock, &control, &rec, &name);
        // With `app_work`, the application works between pulses and asks
        // `is_leader()` again before writing: the answer must already be
        // false if the lease ran out meanwhile (a pause can land here).
        if let Some(work) = p.app_work
            && leading
        {
            clock.sleep(work).await;
            write_if_told(&neli, &clock, &control, &rec, &name);
        }
    }
}

/// Asks `token()` (`is_leader()`'s answer) and, if told it leads, writes to
/// the token-guarded resource. What the application is told is recorded
/// with the member's clock reading and the lease its driver published, for
/// the oracle. Returns whether it was told it leads.
fn write_if_told(
    neli: &Neli<SimBroker, SimClock>,
    clock: &SimClock,
    control: &neli::Control,
    rec: &Recorder,
    name: &str,
) -> bool {
    let Some(token) = neli.token() else {
        return false;
    };
    let told = Told {
        local: clock.now().as_millis(),
        lease_until: control.status().borrow().leading.get(&0).map(|l| l.until.as_millis()),
    };
    let mut log = rec.lock();
    let log_epoch = log.log_epoch;
    log.writes.push(WriteObs { at: global_ms(), member: name.to_owned(), token: token.0, log_epoch, told: Some(told) });
    true
}

/// A stranger on the election topic.
async fn foreign_main(
    leader: String,
    queue: Arc<Mutex<VecDeque<(u32, u32, bool)>>>,
    notify: Arc<Notify>,
) -> turmoil::Result {
    let mut conn = Conn::new(&leader, Gate::default());
    let mut seq = 0u64;
    loop {
        let job = queue.lock().expect("fw lock").pop_front();
        let Some((partition, count, garbage)) = job else {
            notify.notified().await;
            continue;
        };
        for _ in 0..count {
            seq += 1;
            let payload = if garbage {
                format!("garbage-{seq}").into_bytes()
            } else {
                Heartbeat {
                    role: 0,
                    term: 1_000_000 + seq,
                    seq,
                    sent_at: Time::from_millis(global_ms()),
                    name: "stranger".into(),
                }
                .encode()
            };
            let req = Request::Produce { partition, payload, create_time: global_ms() };
            let _ = conn.call(&req, Duration::from_secs(1)).await;
        }
    }
}

enum Action {
    Start(Fault),
    ResumePause(usize),
    Repair(String, String),
    RepairOneWay(String, String),
    Restart(String),
    RestoreLatency(String, String),
}

/// Runs `scenario` with `seed` and judges it. Never panics on a scenario
/// that passed validation.
pub fn run_scenario(scenario: &Scenario, seed: u64) -> RunReport {
    let e = &scenario.election;
    let c = &scenario.cluster;
    let profile = Profile::by_name(match c.profile {
        crate::scenario::ProfileName::Kafka => "kafka",
        crate::scenario::ProfileName::Tansu => "tansu",
        crate::scenario::ProfileName::LibrdkafkaMock => "librdkafka-mock",
    })
    .expect("every profile name has a profile");
    let duration = scenario.duration.ms();
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .tick_duration(TICK)
        .simulation_duration(Duration::from_millis(duration) + Duration::from_secs(3600))
        .min_message_latency(MIN_LATENCY)
        .max_message_latency(MAX_LATENCY)
        .build();
    let rec = Recorder::default();
    let partitions = if e.mode == ModeName::MultiRole { e.partitions } else { 1 };
    let mut broker_states = BTreeMap::new();
    for b in scenario.broker_names() {
        let ctx = BrokerCtx {
            name: b.clone(),
            profile,
            coordinator: b == c.coordinator,
            partition_leader: b == c.partition_leader,
            partitions,
            state: Arc::new(Mutex::new(BrokerState::new(partitions))),
            appended: Arc::new(Notify::new()),
            rec: rec.clone(),
            tick: TICK,
        };
        broker_states.insert(b.clone(), ctx.state.clone());
        sim.host(b.as_str(), move || ctx.clone().run());
    }
    let params = MemberParams {
        coordinator: c.coordinator.clone(),
        leader: c.partition_leader.clone(),
        t: e.heartbeat_timeout.duration(),
        s: e.session_timeout.duration(),
        grace: e.grace.duration(),
        interval: e.heartbeat_interval.map(Dur::duration),
        poll: e.poll_interval.duration(),
        proof: e.membership_proof,
        mode: match e.mode {
            ModeName::Exclusive => Mode::Exclusive,
            ModeName::MultiRole => Mode::MultiRole { roles: e.roles, partitions: e.partitions, exclusive: e.exclusive },
        },
        variant: UnsafeVariant {
            lease_from_receipt: e.variant == Variant::LeaseFromReceipt,
            any_record_counts: e.variant == Variant::AnyRecordCounts,
        },
        max_poll_ms: e.max_poll_ms(),
        app_work: e.app_work.map(Dur::duration),
    };
    let mut slots = Vec::new();
    for i in 0..e.members as usize {
        let slot = Slot {
            idx: i,
            // Every member's monotonic clock has its own origin.
            clock: Arc::new(Mutex::new(ClockModel::new(mix(seed, i as u64) % 100_000))),
            gate: Gate::default(),
            ctl: Arc::new(Mutex::new(MemberCtl::default())),
            incarnations: Arc::new(AtomicU64::new(0)),
            start_delay_ms: mix(seed, 100 + i as u64) % 1000,
        };
        let (s, p, r) = (slot.clone(), params.clone(), rec.clone());
        sim.host(format!("m{i}").as_str(), move || member_main(s.clone(), p.clone(), r.clone()));
        slots.push(slot);
    }
    let mut faults: Vec<Fault> = scenario.faults.iter().map(|f| f.get_ref().clone()).collect();
    faults.extend(crate::swarm::random_faults(scenario, seed));
    let fw_queue = Arc::new(Mutex::new(VecDeque::new()));
    let fw_notify = Arc::new(Notify::new());
    if faults.iter().any(|f| f.kind == FaultKind::ForeignWriter) {
        let (l, q, n) = (c.partition_leader.clone(), fw_queue.clone(), fw_notify.clone());
        sim.host("fw", move || foreign_main(l.clone(), q.clone(), n.clone()));
    }
    let mut timeline: Vec<(u64, u64, Action)> =
        faults.into_iter().enumerate().map(|(i, f)| (f.at.ms(), i as u64, Action::Start(f))).collect();
    let mut order = 1_000_000u64;
    let mut violations = Vec::new();
    let all_hosts: Vec<String> = scenario.member_names().into_iter().chain(scenario.broker_names()).collect();
    loop {
        let now = u64::try_from(sim.elapsed().as_millis()).unwrap_or(u64::MAX);
        if now >= duration {
            break;
        }
        timeline.sort_by_key(|(at, ord, _)| (*at, *ord));
        while timeline.first().is_some_and(|(at, _, _)| *at <= now) {
            let (_, _, action) = timeline.remove(0);
            let mut later = |at: u64, a: Action| {
                order += 1;
                timeline.push((at, order, a));
            };
            match action {
                Action::Start(f) => {
                    let target = resolve(&f.target, &rec, &slots, now);
                    let target_member =
                        target.as_ref().and_then(|t| t.strip_prefix('m')).and_then(|i| i.parse::<usize>().ok());
                    let incarnation = target_member.and_then(|i| rec.lock().current.get(&i).cloned());
                    let held = incarnation
                        .as_ref()
                        .is_some_and(|m| oracle::holds_role0(&rec.lock(), &slots_clocks(&slots), m, now));
                    let dur = f.duration.map_or(0, Dur::ms);
                    let desc = describe(&f, target.as_deref());
                    rec.trace(now, "sim", desc);
                    rec.lock().faults.push(FaultObs {
                        at: now,
                        kind: f.kind.name().into(),
                        member: incarnation.clone(),
                        held_role0: held,
                    });
                    match f.kind {
                        FaultKind::Pause => {
                            if let Some(i) = target_member {
                                slots[i].gate.set_paused(true);
                                later(now + dur, Action::ResumePause(i));
                            }
                        }
                        FaultKind::StallPoll => {
                            if let Some(i) = target_member {
                                slots[i].ctl.lock().expect("ctl lock").stall_until = now + dur;
                            }
                        }
                        FaultKind::Crash => {
                            if let Some(t) = target {
                                sim.crash(t.as_str());
                                if let Some(m) = incarnation {
                                    rec.lock().ends.insert(m, now);
                                }
                                if let Some(d) = f.duration {
                                    later(now + d.ms(), Action::Restart(t));
                                }
                            }
                        }
                        FaultKind::Partition | FaultKind::Latency => {
                            let a = resolve(&f.a, &rec, &slots, now).unwrap_or_default();
                            let b = resolve(&f.b, &rec, &slots, now).unwrap_or_default();
                            if a != b {
                                if f.kind == FaultKind::Partition {
                                    sim.partition(a.as_str(), b.as_str());
                                    later(now + dur, Action::Repair(a, b));
                                } else {
                                    let l = f.latency.map_or(0, Dur::ms);
                                    let j = f.jitter.map_or(0, Dur::ms);
                                    let (a_, b_) = (a.as_str(), b.as_str());
                                    sim.set_link_latency(a_, b_, Duration::from_millis(l));
                                    sim.set_link_max_message_latency(a_, b_, Duration::from_millis(l + j));
                                    later(now + dur, Action::RestoreLatency(a, b));
                                }
                            }
                        }
                        FaultKind::OneWay => {
                            let a = resolve(&f.from, &rec, &slots, now).unwrap_or_default();
                            let b = resolve(&f.to, &rec, &slots, now).unwrap_or_default();
                            if a != b {
                                sim.partition_oneway(a.as_str(), b.as_str());
                                later(now + dur, Action::RepairOneWay(a, b));
                            }
                        }
                        FaultKind::IsolateCoordinator => {
                            if let Some(t) = target {
                                sim.partition(t.as_str(), c.coordinator.as_str());
                                later(now + dur, Action::Repair(t, c.coordinator.clone()));
                            }
                        }
                        FaultKind::DropConnections => {
                            // A one-tick cut: turmoil TCP has no retransmit, so
                            // every stream that lost a segment is dead.
                            if let Some(t) = target {
                                for h in all_hosts.iter().filter(|h| **h != t) {
                                    sim.partition(t.as_str(), h.as_str());
                                    later(now + TICK.as_millis() as u64, Action::Repair(t.clone(), h.clone()));
                                }
                            }
                        }
                        FaultKind::BrokerCrash => {
                            if let Some(t) = target {
                                sim.crash(t.as_str());
                                if f.lose_state == Some(true) {
                                    let mut st = broker_states[&t].lock().expect("broker lock");
                                    *st = BrokerState::lost();
                                    rec.lock().log_epoch += 1;
                                }
                                later(now + f.duration.map_or(TICK.as_millis() as u64, Dur::ms), Action::Restart(t));
                            }
                        }
                        FaultKind::ClockStep => {
                            if let Some(i) = target_member {
                                slots[i].clock.lock().expect("clock lock").step(now, f.by.map_or(0, |d| d.0));
                            }
                        }
                        FaultKind::ClockDrift => {
                            if let Some(i) = target_member {
                                slots[i].clock.lock().expect("clock lock").set_drift(now, f.ppm.unwrap_or(0));
                            }
                        }
                        FaultKind::ForeignWriter => {
                            fw_queue.lock().expect("fw lock").push_back((
                                f.partition.unwrap_or(0),
                                f.count.unwrap_or(1),
                                f.garbage.unwrap_or(true),
                            ));
                            fw_notify.notify_one();
                        }
                        FaultKind::Close => {
                            if let Some(i) = target_member {
                                slots[i].ctl.lock().expect("ctl lock").close = true;
                            }
                        }
                        FaultKind::CloseInHandler => {
                            if let Some(i) = target_member {
                                slots[i].ctl.lock().expect("ctl lock").close_in_handler = true;
                            }
                        }
                        FaultKind::CloseAndWaitInHandler => {
                            if let Some(i) = target_member {
                                slots[i].ctl.lock().expect("ctl lock").close_and_wait_in_handler = true;
                            }
                        }
                        FaultKind::Resign => {
                            if let Some(i) = target_member {
                                slots[i].ctl.lock().expect("ctl lock").resign = true;
                            }
                        }
                    }
                }
                Action::ResumePause(i) => {
                    rec.trace(now, "sim", format!("resume m{i}"));
                    slots[i].gate.set_paused(false);
                }
                Action::Repair(a, b) => sim.repair(a.as_str(), b.as_str()),
                Action::RepairOneWay(a, b) => sim.repair_oneway(a.as_str(), b.as_str()),
                Action::RestoreLatency(a, b) => {
                    sim.set_link_latency(a.as_str(), b.as_str(), MIN_LATENCY);
                    sim.set_link_max_message_latency(a.as_str(), b.as_str(), MAX_LATENCY);
                }
                Action::Restart(h) => {
                    rec.trace(now, "sim", format!("restart {h}"));
                    sim.bounce(h.as_str());
                }
            }
        }
        if let Err(err) = sim.step() {
            violations.push(format!("simulation error: {err}"));
            break;
        }
    }
    let end = u64::try_from(sim.elapsed().as_millis()).unwrap_or(u64::MAX);
    drop(sim);
    let log = rec.lock();
    let clocks = slots_clocks(&slots);
    let (mut figures, mut found) = oracle::judge(scenario, &log, &clocks, end);
    // Foreign-writer records use huge terms; count zombies only where no stranger wrote.
    if !log.faults.iter().any(|f| f.kind == "foreign-writer") {
        figures.zombie_heartbeats =
            broker_states.values().map(|st| st.lock().expect("broker lock").zombie_heartbeats()).sum();
    }
    violations.append(&mut found);
    let mut lines: Vec<&(u64, String, String)> = log.trace.iter().collect();
    lines.sort_by_key(|(at, _, _)| *at);
    let trace = lines.into_iter().map(|(at, h, t)| format_line(*at, h, t)).collect();
    RunReport { scenario: scenario.name.clone(), seed, trace, figures, violations }
}

fn slots_clocks(slots: &[Slot]) -> Vec<ClockModel> {
    slots.iter().map(|s| s.clock.lock().expect("clock lock").clone()).collect()
}

/// `leader` means whoever holds role 0 now; falls back to m0.
fn resolve(target: &Option<String>, rec: &Recorder, slots: &[Slot], now: u64) -> Option<String> {
    let t = target.as_ref()?;
    if t != "leader" {
        return Some(t.clone());
    }
    let log = rec.lock();
    let clocks = slots_clocks(slots);
    let holder = log.current.iter().find(|(_, m)| oracle::holds_role0(&log, &clocks, m, now)).map(|(i, _)| *i);
    Some(format!("m{}", holder.unwrap_or(0)))
}

fn describe(f: &Fault, target: Option<&str>) -> String {
    let mut s = f.kind.name().to_owned();
    for v in [target, f.a.as_deref(), f.b.as_deref(), f.from.as_deref(), f.to.as_deref()].into_iter().flatten() {
        s.push(' ');
        s.push_str(v);
    }
    if let Some(d) = f.duration {
        s.push_str(&format!(" for {d}"));
    }
    if let Some(by) = f.by {
        s.push_str(&format!(" by {by}"));
    }
    if let Some(ppm) = f.ppm {
        s.push_str(&format!(" ppm={ppm}"));
    }
    if let Some(n) = f.count {
        s.push_str(&format!(" count={n} partition={}", f.partition.unwrap_or(0)));
    }
    if f.lose_state == Some(true) {
        s.push_str(" losing state");
    }
    s
}
