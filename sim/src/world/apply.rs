//! The world of one run and what each fault kind does to it: one arm of
//! [`World::apply`] per kind (adding a kind adds its arm here; see
//! `scenario/fault.rs`), follow-up [`Action`]s on the timeline (a resume, a
//! repair, a restart), and the loop that plays the timeline between
//! simulation steps.
//!
//! Faults on one target may overlap (random schedules draw them
//! independently). Each overlap has one meaning, documented in
//! `scenarios/FORMAT.md` ("Overlapping faults"): pauses nest (the member
//! runs again when the last one ends), a link stays cut until the last cut
//! of it is repaired, a slowed link keeps the latest latency until the last
//! slowdown ends, a stall lasts to the latest end, and a crashed host stays
//! down until its last restart is due. A crash ends the pauses of the
//! process it kills: the restarted process was never stopped.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::foreign::{ForeignJob, ForeignRecords, foreign_main};
use super::member::{MemberParams, Slot, member_main};
use super::{MAX_LATENCY, MIN_LATENCY, PlayedFault, RunReport, TICK};
use crate::app::{AppSetup, STORE_HOST, store_database, store_main};
use crate::rt::Sim;
use neli::Event;

use crate::clock::ClockModel;
use crate::history::{self, History};
use crate::oracle;
use crate::record::{AssignmentChange, FaultObs, Recorder, format_line};
use crate::scenario::{Fault, FaultKind, GroupProtocolName, Host, Scenario, Target, TimedFault, Trigger};
use crate::server::{BrokerCtx, BrokerState};
use crate::verdict::{Rule, Violation};

/// A follow-up a fault schedules for later.
enum Action {
    Start(TimedFault),
    /// The pause of member slot `.0` ends, unless a crash or a `resume`
    /// ended every pause of the slot since it began (`.1`, the slot's
    /// pause epoch then).
    ResumePause(usize, u32),
    Repair(String, String),
    RepairOneWay(String, String),
    Restart(String),
    RestoreLatency(String, String),
    /// A `heartbeat-failure` of this member host ends.
    RestoreHeartbeats(String),
}

type ForeignQueue = Arc<Mutex<VecDeque<ForeignJob>>>;

pub(super) struct World {
    sim: Sim,
    rec: Recorder,
    slots: Vec<Slot>,
    brokers: BTreeMap<String, Arc<Mutex<BrokerState>>>,
    coordinator: String,
    foreign: (ForeignQueue, Arc<Notify>),
    /// Shared with every broker: whose heartbeats the coordinator drops.
    heartbeats_dropped: Arc<Mutex<BTreeMap<String, u32>>>,
    /// (instant, order, action): actions at one instant run in order.
    timeline: Vec<(u64, u64, Action)>,
    order: u64,
    played: Vec<PlayedFault>,
    /// Pauses in force per member slot (nested pauses), and how many times
    /// a crash (the process is gone) or a `resume` fault ended all of a
    /// slot's pauses at once: a pause's scheduled end from before that must
    /// not end a later pause.
    pauses: Vec<u32>,
    pause_epochs: Vec<u32>,
    /// Cuts in force per link: two-way cuts by sorted host pair, one-way
    /// cuts by (from, to).
    cuts: BTreeMap<(String, String), u32>,
    one_way: BTreeMap<(String, String), u32>,
    /// Slowdowns in force per link (sorted host pair).
    slow: BTreeMap<(String, String), u32>,
    /// Restarts still due per crashed host; it comes back with the last.
    restarts_due: BTreeMap<String, u32>,
    /// Faults waiting for their trigger (`on`): the fault, its trigger, its
    /// member slot, and how often that had happened when it was armed.
    armed: Vec<(Fault, Trigger, usize, usize)>,
}

/// A two-way link's key: the same for (a, b) and (b, a).
fn link(a: &str, b: &str) -> (String, String) {
    if a <= b { (a.to_owned(), b.to_owned()) } else { (b.to_owned(), a.to_owned()) }
}

/// Adds one to `key`'s count; true if it was the first.
fn count_up(map: &mut BTreeMap<(String, String), u32>, key: (String, String)) -> bool {
    let n = map.entry(key).or_insert(0);
    *n += 1;
    *n == 1
}

/// Takes one from `key`'s count; true if that was the last.
fn count_down(map: &mut BTreeMap<(String, String), u32>, key: &(String, String)) -> bool {
    match map.get_mut(key) {
        Some(n) if *n > 1 => {
            *n -= 1;
            false
        }
        Some(_) => {
            map.remove(key);
            true
        }
        None => false,
    }
}

impl World {
    /// Brokers, members (and a foreign writer if a fault needs one) of `s`,
    /// with `s`'s faults on the timeline.
    pub fn build(s: &Scenario, seed: u64, app: Option<&AppSetup>) -> World {
        let c = &s.cluster;
        let mut sim = Sim::new(seed, MIN_LATENCY, MAX_LATENCY);
        let rec = Recorder::default();
        let heartbeats_dropped: Arc<Mutex<BTreeMap<String, u32>>> = Arc::default();
        let brokers = start_brokers(&mut sim, s, &rec, &heartbeats_dropped);
        let mut params = MemberParams::new(s);
        params.app = app.cloned();
        if let Some(setup) = app {
            let (mode, db, r) = (setup.store, store_database(), rec.clone());
            sim.host(STORE_HOST, move || store_main(mode, db.clone(), r.clone()));
        }
        let slots = start_members(&mut sim, s, seed, &params, &rec);
        let foreign = (Arc::new(Mutex::new(VecDeque::new())), Arc::new(Notify::new()));
        if s.timed_faults().any(|f| f.fault.kind() == FaultKind::ForeignWriter) {
            let (l, q, n) = (c.partition_leader.to_string(), foreign.0.clone(), foreign.1.clone());
            let layout = (s.roles(), s.partitions());
            sim.host("fw", move || foreign_main(l.clone(), layout, q.clone(), n.clone()));
        }
        let timeline =
            s.timed_faults().enumerate().map(|(i, f)| (f.at.ms(), i as u64, Action::Start(f.clone()))).collect();
        World {
            sim,
            rec,
            slots,
            brokers,
            coordinator: c.coordinator.to_string(),
            foreign,
            heartbeats_dropped,
            timeline,
            order: 1_000_000,
            played: Vec::new(),
            pauses: vec![0; (s.election.members + s.election.spares) as usize],
            pause_epochs: vec![0; (s.election.members + s.election.spares) as usize],
            cuts: BTreeMap::new(),
            one_way: BTreeMap::new(),
            slow: BTreeMap::new(),
            restarts_due: BTreeMap::new(),
            armed: Vec::new(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.sim.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Steps the simulation to `duration` ms, running each timeline action
    /// at its instant. Returns the runtime's error if the simulation broke.
    pub fn play(&mut self, duration: u64) -> Option<Violation> {
        loop {
            let now = self.now();
            if now >= duration {
                return None;
            }
            self.timeline.sort_by_key(|(at, ord, _)| (*at, *ord));
            while self.timeline.first().is_some_and(|(at, _, _)| *at <= now) {
                let (_, _, action) = self.timeline.remove(0);
                self.act(now, action);
            }
            // Run to the next thing the world does: a timeline action or
            // the end; while a fault waits for its trigger, to the instant
            // of the next moment recorded (`Recorder::moment`) at the latest.
            self.timeline.sort_by_key(|(at, ord, _)| (*at, *ord));
            let next = self.timeline.first().map_or(duration, |(at, ..)| (*at).min(duration));
            let stop = (!self.armed.is_empty()).then(|| self.rec.moments());
            if let Err(err) = self.sim.run_until_or(next.max(now + 1), stop) {
                return Some(Violation::new(Rule::SimulationError, format!("simulation error: {err}")));
            }
            if !self.armed.is_empty() {
                self.fire_triggered();
            }
        }
    }

    /// Starts each armed fault whose trigger happened since it was armed.
    fn fire_triggered(&mut self) {
        let now = self.now();
        let mut k = 0;
        while k < self.armed.len() {
            let (_, trigger, slot, before) = self.armed[k];
            if self.happened(trigger, slot) > before {
                let (fault, ..) = self.armed.remove(k);
                self.rec.trace(now, "sim", format!("m{slot}: {trigger}"));
                self.start(now, &fault);
            } else {
                k += 1;
            }
        }
    }

    /// How many times `trigger` happened to member slot `slot` so far, over
    /// all its incarnations.
    fn happened(&self, trigger: Trigger, slot: usize) -> usize {
        let log = self.rec.lock();
        let of_slot = |m: &str| log.slots.get(m) == Some(&slot);
        match trigger {
            Trigger::Dealt => log.dealt.iter().filter(|(_, m)| of_slot(m)).count(),
            Trigger::Assigned => log
                .assignments
                .iter()
                .filter(|a| matches!(a.change, AssignmentChange::Assigned { .. }) && of_slot(&a.member))
                .count(),
            Trigger::ProofAccepted => log.proofs.iter().filter(|p| of_slot(&p.member)).count(),
            Trigger::Acquired => {
                log.events.iter().filter(|e| matches!(e.event, Event::Acquired { .. }) && of_slot(&e.member)).count()
            }
        }
    }

    fn later(&mut self, at: u64, action: Action) {
        self.order += 1;
        self.timeline.push((at, self.order, action));
    }

    fn act(&mut self, now: u64, action: Action) {
        match action {
            Action::Start(TimedFault { on: None, fault, .. }) => self.start(now, &fault),
            Action::Start(TimedFault { on: Some(trigger), of, fault, .. }) => {
                // Validation made sure a triggered fault names one member:
                // in `of`, or as its target.
                let target = fault.member();
                let slot = match of.or(target) {
                    Some(Target::Member(i)) => Some(i as usize),
                    _ => None,
                };
                if let Some(slot) = slot.filter(|i| *i < self.slots.len()) {
                    let before = self.happened(trigger, slot);
                    let what = match (of, target) {
                        (Some(_), Some(t)) => format!("{} {t}", fault.kind().name()),
                        _ => fault.kind().name().to_owned(),
                    };
                    self.rec.trace(now, "sim", format!("armed: {what} on m{slot}: {trigger}"));
                    self.armed.push((fault, trigger, slot, before));
                }
            }
            Action::ResumePause(i, epoch) => {
                // Nested pauses: the member runs again when the last ends.
                // A crash or a resume since the pause began already ended it.
                if epoch == self.pause_epochs[i] && self.pauses[i] > 0 {
                    self.pauses[i] -= 1;
                    if self.pauses[i] == 0 {
                        self.rec.trace(now, "sim", format!("resume m{i}"));
                        self.slots[i].gate.set_paused(false);
                    }
                }
            }
            Action::Repair(a, b) => {
                if count_down(&mut self.cuts, &link(&a, &b)) {
                    self.sim.repair(a.as_str(), b.as_str());
                    // A two-way repair heals the link in both directions:
                    // one-way cuts still in force are put back.
                    for (from, to) in [(&a, &b), (&b, &a)] {
                        if self.one_way.contains_key(&(from.clone(), to.clone())) {
                            self.sim.partition_oneway(from.as_str(), to.as_str());
                        }
                    }
                }
            }
            Action::RepairOneWay(a, b) => {
                if count_down(&mut self.one_way, &(a.clone(), b.clone())) && !self.cuts.contains_key(&link(&a, &b)) {
                    self.sim.repair_oneway(a.as_str(), b.as_str());
                }
            }
            Action::RestoreLatency(a, b) => {
                if count_down(&mut self.slow, &link(&a, &b)) {
                    self.sim.set_link_latency(a.as_str(), b.as_str(), MIN_LATENCY);
                    self.sim.set_link_max_message_latency(a.as_str(), b.as_str(), MAX_LATENCY);
                }
            }
            Action::RestoreHeartbeats(host) => {
                let mut dropped = self.heartbeats_dropped.lock().expect("drop lock");
                if let Some(n) = dropped.get_mut(&host) {
                    *n = n.saturating_sub(1);
                }
                if dropped.get(&host) == Some(&0) {
                    dropped.remove(&host);
                    self.rec.trace(now, "sim", format!("{host}'s heartbeats are answered again"));
                }
            }
            Action::Restart(h) => {
                let due = self.restarts_due.entry(h.clone()).or_insert(1);
                *due = due.saturating_sub(1);
                if *due == 0 {
                    self.restarts_due.remove(&h);
                    self.rec.trace(now, "sim", format!("restart {h}"));
                    self.sim.bounce(h.as_str());
                }
            }
        }
    }

    fn clocks(&self) -> Vec<ClockModel> {
        self.slots.iter().map(|s| s.clock.lock().expect("clock lock").clone()).collect()
    }

    /// `leader` is whoever holds role 0 now by the recording (m0 if nobody).
    fn resolve(&self, h: Host, now: u64) -> Host {
        match h {
            Host::Leader => Host::Member(self.rec.lock().role0_holder(&self.clocks(), now).unwrap_or(0) as u32),
            other => other,
        }
    }

    /// A fault starts: it is traced and recorded (with whether its member
    /// led, for failover figures), then applied.
    fn start(&mut self, now: u64, fault: &Fault) {
        let target = fault.hosts().into_iter().find(|(field, _)| *field == "target").map(|(_, h)| self.resolve(h, now));
        let member = match target {
            Some(Host::Member(i)) => Some(i as usize),
            _ => None,
        };
        let incarnation = member.and_then(|i| self.rec.lock().current.get(&i).cloned());
        // A resume costs nobody a lease: it is no failover's start.
        let held = fault.kind() != FaultKind::Resume
            && incarnation.as_ref().is_some_and(|m| self.rec.lock().holds_role0(&self.clocks(), m, now));
        let label = fault.describe(target);
        self.rec.trace(now, "sim", label.clone());
        let kills = fault.kind() == FaultKind::Crash;
        let end = now + fault.duration().map_or(0, |d| d.ms());
        let touched: Vec<usize> = fault
            .hosts()
            .into_iter()
            .filter_map(|(_, h)| match self.resolve(h, now) {
                Host::Member(i) => Some(i as usize),
                _ => None,
            })
            .collect();
        let touches: Vec<String> = {
            let rec = self.rec.lock();
            touched.iter().filter_map(|i| rec.current.get(i).cloned()).collect()
        };
        self.rec.lock().faults.push(FaultObs {
            at: now,
            until: end,
            kills,
            member: incarnation.clone(),
            touches,
            held_role0: held,
        });
        let hosts = match target {
            Some(t) => vec![t.to_string()],
            None => fault.hosts().into_iter().map(|(_, h)| self.resolve(h, now).to_string()).collect(),
        };
        self.played.push(PlayedFault { kind: fault.kind(), start: now, end, hosts, label });
        self.apply(now, fault, target.map(|t| t.to_string()), member, incarnation);
    }

    /// A fault between two hosts, resolved at `now`; none between a host
    /// and itself.
    fn between(&mut self, now: u64, a: Host, b: Host, act: impl FnOnce(&mut Self, String, String)) {
        let (a, b) = (self.resolve(a, now).to_string(), self.resolve(b, now).to_string());
        if a != b {
            act(self, a, b);
        }
    }

    /// Queues a `foreign-writer` job for the stranger (`foreign.rs`).
    fn write_foreign(&mut self, partition: u32, count: u32, garbage: bool, misplaced: bool) {
        let records = if misplaced {
            // In the names the members hold now (a restarted member's
            // incarnation has a name of its own).
            ForeignRecords::Misplaced { names: self.rec.lock().current.values().cloned().collect() }
        } else if garbage {
            ForeignRecords::Garbage
        } else {
            ForeignRecords::Stranger
        };
        self.foreign.0.lock().expect("fw lock").push_back(ForeignJob { partition, count, records });
        self.foreign.1.notify_one();
    }

    /// Whether `fault` acts on a member process that is down (crashed,
    /// its restart due): there is none to stop, stall, close or resign: a
    /// SIGSTOP of a process that is not there does nothing, and the
    /// restarted process starts afresh. Traced when so.
    fn process_is_down(&self, now: u64, fault: &Fault, target: Option<&str>, member: Option<usize>) -> bool {
        let down = target.is_some_and(|t| self.restarts_due.contains_key(t));
        if down && member.is_some() && fault.acts_on_process() {
            let name = target.unwrap_or("?");
            self.rec.trace(now, "sim", format!("{name} is down: the {} does nothing", fault.kind().name()));
            return true;
        }
        false
    }

    /// A `stall-poll` fault: the built-in pulsed loop, a harness
    /// application's clock and store client, or, under `app_loop =
    /// "background"`, neli's polls of its client wait until `until`
    /// (global ms).
    fn stall_poll(&mut self, member: Option<usize>, until: u64) {
        self.control(member, |c| c.stall_until = c.stall_until.max(until));
        if let Some(i) = member {
            self.slots[i].app_stall.fetch_max(until, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// What each kind does. `target` is the resolved `target` field,
    /// `member` its slot if it is a member, `incarnation` that member's
    /// current incarnation.
    fn apply(
        &mut self,
        now: u64,
        fault: &Fault,
        target: Option<String>,
        member: Option<usize>,
        incarnation: Option<String>,
    ) {
        let tick = TICK.as_millis() as u64;
        if self.process_is_down(now, fault, target.as_deref(), member) {
            return;
        }
        match *fault {
            Fault::Pause { duration, .. } => self.pause(now, member, duration.ms()),
            Fault::StallPoll { duration, .. } => self.stall_poll(member, now + duration.ms()),
            Fault::Crash { duration, .. } => {
                if let Some(t) = target {
                    self.crash(now, t, member, incarnation, duration.map(|d| d.ms()));
                }
            }
            Fault::Partition { a, b, duration } => {
                self.between(now, a, b, |w, a, b| w.cut(now + duration.ms(), a, b));
            }
            Fault::Latency { a, b, latency, jitter, duration } => {
                let jitter = jitter.map_or(0, |j| j.ms());
                self.between(now, a, b, |w, a, b| w.slow_down(now + duration.ms(), a, b, latency.ms(), jitter));
            }
            Fault::OneWay { from, to, duration } => {
                self.between(now, from, to, |w, a, b| w.cut_one_way(now + duration.ms(), a, b));
            }
            Fault::HeartbeatFailure { duration, .. } => {
                if let Some(t) = target.filter(|_| member.is_some()) {
                    *self.heartbeats_dropped.lock().expect("drop lock").entry(t.clone()).or_insert(0) += 1;
                    self.later(now + duration.ms(), Action::RestoreHeartbeats(t));
                }
            }
            Fault::IsolateCoordinator { duration, .. } => {
                if let Some(t) = target {
                    let coordinator = self.coordinator.clone();
                    self.cut(now + duration.ms(), t, coordinator);
                }
            }
            Fault::DropConnections { .. } => {
                if let Some(t) = target {
                    self.sim.reset_connections(&t);
                }
            }
            Fault::BrokerCrash { duration, lose_state, .. } => {
                if let Some(t) = target {
                    self.crash_broker(now + duration.map_or(tick, |d| d.ms()), t, lose_state);
                }
            }
            Fault::ClockStep { by, .. } => self.clock(member, |c| c.step(now, by.0)),
            Fault::ClockDrift { ppm, .. } => self.clock(member, |c| c.set_drift(now, ppm)),
            Fault::ForeignWriter { partition, count, garbage, misplaced } => {
                self.write_foreign(partition, count, garbage, misplaced);
            }
            Fault::StaticReplace { .. } => self.replace_static(now, member),
            Fault::Resume { .. } => self.resume(now, member),
            Fault::Close { .. } => self.control(member, |c| c.close = true),
            Fault::CloseInHandler { .. } => self.control(member, |c| c.close_in_handler = true),
            Fault::CloseAndWaitInHandler { .. } => self.control(member, |c| c.close_and_wait_in_handler = true),
            Fault::Resign { .. } => self.control(member, |c| c.resign = true),
            Fault::FatalError { .. } => {
                if let (Some(i), Some(m)) = (member, incarnation) {
                    self.slots[i].fatal.store(true, std::sync::atomic::Ordering::SeqCst);
                    self.rec.lock().fatal_at.entry(m).or_insert(now);
                }
            }
        }
    }

    /// Stops member slot `member`'s process for `ms`; pauses nest.
    fn pause(&mut self, now: u64, member: Option<usize>, ms: u64) {
        if let Some(i) = member {
            self.pauses[i] += 1;
            self.slots[i].gate.set_paused(true);
            self.later(now + ms, Action::ResumePause(i, self.pause_epochs[i]));
        }
    }

    /// A `resume` fault: every pause of member slot `member` ends now.
    fn resume(&mut self, now: u64, member: Option<usize>) {
        let Some(i) = member else { return };
        if self.pauses[i] == 0 {
            self.rec.trace(now, "sim", format!("m{i} is not paused: the resume does nothing"));
            return;
        }
        self.pauses[i] = 0;
        self.pause_epochs[i] += 1;
        self.slots[i].gate.set_paused(false);
    }

    /// Kills host `t` (member slot `member`, running `incarnation`), to
    /// restart after `restart_in` ms or never.
    fn crash(
        &mut self,
        now: u64,
        t: String,
        member: Option<usize>,
        incarnation: Option<String>,
        restart_in: Option<u64>,
    ) {
        self.sim.crash(t.as_str());
        if let Some(i) = member {
            // The killed process's pauses end with it.
            self.pauses[i] = 0;
            self.pause_epochs[i] += 1;
            self.slots[i].gate.set_paused(false);
        }
        if let Some(m) = incarnation {
            // A crash of a member already down does not move its death.
            self.rec.lock().ends.entry(m).or_insert(now);
        }
        match restart_in {
            Some(ms) => self.restart_later(now + ms, t),
            // Down for good: no earlier crash's restart brings it back.
            None => {
                self.restarts_due.insert(t, u32::MAX);
            }
        }
    }

    /// Sets the a–b link's latency to `latency` plus up to `jitter` ms
    /// until `until`: the latest slowdown sets the latency; the last to end
    /// restores it.
    fn slow_down(&mut self, until: u64, a: String, b: String, latency: u64, jitter: u64) {
        count_up(&mut self.slow, link(&a, &b));
        self.sim.set_link_latency(a.as_str(), b.as_str(), Duration::from_millis(latency));
        self.sim.set_link_max_message_latency(a.as_str(), b.as_str(), Duration::from_millis(latency + jitter));
        self.later(until, Action::RestoreLatency(a, b));
    }

    /// Cuts the link from a to b (not back) until `until`.
    fn cut_one_way(&mut self, until: u64, a: String, b: String) {
        if count_up(&mut self.one_way, (a.clone(), b.clone())) {
            self.sim.partition_oneway(a.as_str(), b.as_str());
        }
        self.later(until, Action::RepairOneWay(a, b));
    }

    /// Kills broker `t`, its log and group state with it if `lose_state`,
    /// to restart at `restart_at`.
    fn crash_broker(&mut self, restart_at: u64, t: String, lose_state: bool) {
        self.sim.crash(t.as_str());
        if lose_state {
            *self.brokers[&t].lock().expect("broker lock") = BrokerState::lost();
            self.rec.lock().log_epoch += 1;
        }
        self.restart_later(restart_at, t);
    }

    /// Cuts the link a–b both ways until `until` (or until the last
    /// overlapping cut of it ends).
    fn cut(&mut self, until: u64, a: String, b: String) {
        if count_up(&mut self.cuts, link(&a, &b)) {
            self.sim.partition(a.as_str(), b.as_str());
        }
        self.later(until, Action::Repair(a, b));
    }

    /// Schedules `host`'s restart; with several due, the last one restarts it.
    fn restart_later(&mut self, at: u64, host: String) {
        let due = self.restarts_due.entry(host.clone()).or_insert(0);
        *due = due.saturating_add(1);
        self.later(at, Action::Restart(host));
    }

    /// A spare process starts with member slot `member`'s instance id; the
    /// coordinator replaces the old member when it joins (`server.rs`).
    fn replace_static(&mut self, now: u64, member: Option<usize>) {
        let Some(i) = member else { return };
        let Some(instance) = self.slots[i].instance() else { return };
        let spare = self.slots.iter().find(|s| s.spare && s.instance().is_none()).map(|s| s.idx);
        match spare {
            Some(j) => {
                self.rec.trace(now, "sim", format!("m{j} starts with m{i}'s instance id {instance}"));
                *self.slots[j].instance.lock().expect("instance lock") = Some(instance);
            }
            None => self.rec.trace(now, "sim", "no spare process left: the static-replace does nothing"),
        }
    }

    /// Steps or skews a member's clock.
    fn clock(&self, member: Option<usize>, set: impl FnOnce(&mut ClockModel)) {
        if let Some(i) = member {
            set(&mut self.slots[i].clock.lock().expect("clock lock"));
        }
    }

    /// Sets a control the member's application reads.
    fn control(&self, member: Option<usize>, set: impl FnOnce(&mut super::member::MemberCtl)) {
        if let Some(i) = member {
            set(&mut self.slots[i].ctl());
        }
    }

    /// Ends the simulation and judges the recording.
    pub fn finish(self, s: &Scenario, seed: u64, stopped: Option<Violation>) -> RunReport {
        let end = self.now();
        let clocks = self.clocks();
        let World { sim, rec, brokers, played, .. } = self;
        drop(sim);
        let log = rec.lock();
        let (mut figures, mut violations) = oracle::judge(s, &log, &clocks, end);
        let leases = oracle::lease_spans(s, &log, &clocks, end);
        if let Some(e) = stopped {
            violations.insert(0, e);
        }
        // Foreign-writer records use huge terms; count zombies only where no stranger wrote.
        if !played.iter().any(|f| f.kind == FaultKind::ForeignWriter) {
            figures.zombie_heartbeats =
                brokers.values().map(|st| st.lock().expect("broker lock").zombie_heartbeats()).sum();
        }
        let mut lines: Vec<&(u64, String, String)> = log.trace.iter().collect();
        lines.sort_by_key(|(at, _, _)| *at);
        let trace = lines.into_iter().map(|(at, h, t)| format_line(*at, h, t)).collect();
        let faults: Vec<PlayedFault> = played.into_iter().map(|f| PlayedFault { end: f.end.min(end), ..f }).collect();
        let played: Vec<history::Fault> = faults
            .iter()
            .map(|f| history::Fault {
                at: f.start,
                until: f.end,
                kind: f.kind.name().to_owned(),
                hosts: f.hosts.clone(),
                label: f.label.clone(),
            })
            .collect();
        let history = History::of(&s.name, seed, end, &log, &played, &leases);
        let acted = log.acted.clone();
        RunReport { scenario: s.name.clone(), seed, trace, faults, figures, violations, history, acted }
    }
}

/// The broker hosts, in the order of their names (host creation order is
/// part of a seed's run); their states by name.
fn start_brokers(
    sim: &mut Sim,
    s: &Scenario,
    rec: &Recorder,
    heartbeats_dropped: &Arc<Mutex<BTreeMap<String, u32>>>,
) -> BTreeMap<String, Arc<Mutex<BrokerState>>> {
    let c = &s.cluster;
    let partitions = s.partitions();
    let mut brokers = BTreeMap::new();
    let mut profile = c.broker();
    if s.election.group_protocol == GroupProtocolName::Consumer {
        // KIP-848: only heartbeats keep a session.
        profile.commit_resets_session = false;
    }
    for b in s.broker_names() {
        let ctx = BrokerCtx {
            name: b.clone(),
            profile,
            generation_check: c.commit_generation_check,
            revoked_barrier: c.revoked_barrier,
            coordinator: b == c.coordinator.to_string(),
            partition_leader: b == c.partition_leader.to_string(),
            partitions,
            state: Arc::new(Mutex::new(BrokerState::new(partitions))),
            appended: Arc::new(Notify::new()),
            rec: rec.clone(),
            tick: TICK,
            heartbeats_dropped: heartbeats_dropped.clone(),
        };
        brokers.insert(b.clone(), ctx.state.clone());
        sim.host(b.as_str(), move || ctx.clone().run());
    }
    brokers
}

/// The member hosts `m0`, `m1`, … (spares last), each with its slot.
fn start_members(sim: &mut Sim, s: &Scenario, seed: u64, params: &MemberParams, rec: &Recorder) -> Vec<Slot> {
    let mut slots = Vec::new();
    for i in 0..(s.election.members + s.election.spares) as usize {
        let mut slot = Slot::new(i, seed);
        slot.spare = i >= s.election.members as usize;
        if s.election.static_membership && !slot.spare {
            *slot.instance.lock().expect("instance lock") = Some(format!("m{i}"));
        }
        let (sl, p, r) = (slot.clone(), params.clone(), rec.clone());
        sim.host(format!("m{i}").as_str(), move || member_main(sl.clone(), p.clone(), r.clone()));
        slots.push(slot);
    }
    slots
}
