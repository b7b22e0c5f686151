//! Counterexamples for humans and for the simulator: one line per step
//! (tick, member, action, resulting leadership), and the same path as a
//! `neli_sim::Scenario` with a fault timeline.

use std::fmt::Write;

use neli_sim::Scenario;
use neli_sim::scenario::{
    AppLoop, AssignmentName, BrokerId, Cluster, Dur, ElectionSpec, Expect, Fault, FaultKind, GroupProtocolName,
    ModeName, Target, Trigger, Variant,
};
use stateright::Model;
use stateright::Path;

use crate::election::{Callback, ElectionAction, ElectionModel, ElectionModelCfg, ElectionState, GroupProtocol};

/// Who leads each role in `s`, e.g. `r0=m1.0#5` (member slot.incarnation, token).
pub fn leadership(model: &ElectionModel, s: &ElectionState) -> String {
    let roles: Vec<String> = (0..model.cfg.roles)
        .map(|r| {
            let who: Vec<String> = s.leaders(r).iter().map(|((m, i), t)| format!("m{m}.{i}#{t}")).collect();
            format!("r{r}={}", if who.is_empty() { "-".into() } else { who.join("+") })
        })
        .collect();
    roles.join(" ")
}

/// The member an action belongs to, if any.
fn actor(a: &ElectionAction) -> Option<u8> {
    use ElectionAction::*;
    match *a {
        Tick { slow } => slow,
        Join(m)
        | Poll(m)
        | Read(m, _)
        | Timeout(m)
        | Send(m, _)
        | Lose(m, _)
        | Pause(m)
        | Resume(m)
        | Crash(m)
        | Restart(m)
        | Isolate(m)
        | Heal(m)
        | HeartbeatsFail(m)
        | HeartbeatsHeal(m)
        | Replace(m)
        | ClockFast(m) => Some(m),
        Sync { .. } | Foreign | LogLoss => None,
    }
}

/// `path` cut right after the first state that violates the `always`
/// property `name`. Stateright's BFS keeps the last violating state it met in
/// a batch; cutting at the first violation restores a shortest-looking trace.
pub fn cut_at_violation(
    model: &ElectionModel,
    path: &Path<ElectionState, ElectionAction>,
    name: &'static str,
) -> Path<ElectionState, ElectionAction> {
    let property = model.property(name);
    let steps = path.clone().into_vec();
    let first_bad = steps.iter().position(|(s, _)| !(property.condition)(model, s)).unwrap_or(steps.len() - 1);
    let actions: Vec<ElectionAction> = steps[..first_bad].iter().filter_map(|(_, a)| *a).collect();
    Path::from_actions(model, steps[0].0.clone(), &actions).expect("a prefix of a model path is a model path")
}

/// One line per step: `t=<tick> <member> <action> -> <leadership>`.
pub fn format_path(model: &ElectionModel, path: &Path<ElectionState, ElectionAction>) -> String {
    let mut out = String::new();
    let steps = path.clone().into_vec();
    let _ = writeln!(out, "t=0  --  init -> {}", leadership(model, &steps[0].0));
    for w in steps.windows(2) {
        let (action, next) = (w[0].1.expect("every step but the last has an action"), &w[1].0);
        let who = actor(&action).map_or("--".to_string(), |m| format!("m{m}"));
        let _ = writeln!(
            out,
            "t={:<2} {who:<3} {:<22} -> {}",
            next.now,
            model.format_action(&action),
            leadership(model, next)
        );
    }
    out
}

/// Which simulator member plays each model member: `sim[m]` for model slot
/// `m`. The simulated coordinator deals partition `p` to the `p mod n`-th
/// member in name order (`m0`, `m1`, ...) when the group first forms, while
/// the path's first rebalance may deal partition 0 to any model member; the
/// model's members are interchangeable, so the path is renamed to start from
/// the simulator's assignment (model member of share `j` -> `m{j}`).
pub fn sim_members(model: &ElectionModel, path: &Path<ElectionState, ElectionAction>) -> Vec<u8> {
    let n = model.cfg.members as usize;
    let mut sim: Vec<u8> = (0..n as u8).collect();
    let steps = path.clone().into_vec();
    let first_sync = steps.iter().find_map(|(s, a)| match a {
        Some(ElectionAction::Sync { deal: number }) => Some((s, *number)),
        _ => None,
    });
    let Some((s, number)) = first_sync else {
        return with_spares(model, sim);
    };
    let keys: Vec<u8> = s.coord.members.keys().map(|k| k.0).collect();
    if keys.len() != n {
        return with_spares(model, sim); // not every member in the first generation: keep the names
    }
    let order = model.shares(n, number as usize);
    let mut free: Vec<u8> = (0..n as u8).collect();
    for (share, idx) in order.iter().enumerate() {
        sim[keys[*idx] as usize] = share as u8;
        free.retain(|f| *f != share as u8);
    }
    let dealt: Vec<u8> = order.iter().map(|i| keys[*i]).collect();
    let mut rest = free.into_iter();
    for m in 0..n as u8 {
        if !dealt.contains(&m) {
            sim[m as usize] = rest.next().unwrap_or(m);
        }
    }
    with_spares(model, sim)
}

/// The spare processes of static replacements keep their places after the
/// members (`Faults::static_replacements`).
fn with_spares(model: &ElectionModel, mut sim: Vec<u8>) -> Vec<u8> {
    let n = model.cfg.members;
    sim.extend(n..n + model.cfg.faults.static_replacements);
    sim
}

/// A counterexample as a scenario for `neli-sim` to replay, with notes on
/// what the scenario format cannot express (written as comments).
#[derive(Debug, Clone)]
pub struct Replay {
    pub scenario: Scenario,
    pub notes: Vec<String>,
}

impl Replay {
    /// The scenario made to show a break of `property` where the
    /// simulator's default application could not. A counterexample of
    /// [`RESOURCE`](crate::election::property::RESOURCE): the model's
    /// downstream sees every leader's token in every state, while the
    /// simulator's pulsed application writes only between its pulses, and
    /// a leader cut off the coordinator waits in its pulse for a proof's
    /// answer until its lease is over, so it writes nothing in the overlap.
    /// Its application therefore runs the election in the background
    /// (`app_loop = "background"`: it keeps asking while the election's
    /// loop waits) and asks every twenty-fifth of a tick, so that a write
    /// lands in an overlap the model measures in ticks. A `stall-poll` the
    /// translation wrote to keep the cut-off leader from hearing of its
    /// loss then stalls neli's loop, not the application. Only a path that
    /// cuts a member off the coordinator is written so: elsewhere the old
    /// leader's loop, polling that often, hears of its loss before its
    /// successor leads (after a heartbeat failure its next proof is
    /// refused), where the pulsed application, slower between its pulses,
    /// writes in the overlap.
    ///
    /// ```
    /// use neli_models::election::property::{ONE_LEADER, RESOURCE};
    /// use neli_models::{ElectionModelCfg, Replay};
    /// use neli_sim::scenario::AppLoop;
    ///
    /// let cfg = ElectionModelCfg::exclusive(2);
    /// let text = "name = \"cut-off\"\nduration = \"10s\"\n[election]\nmembers = 2\n\
    ///             heartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n[cluster]\nbrokers = 2\n\
    ///             partition_leader = \"b1\"\n[[faults]]\nat = \"8s\"\nkind = \"isolate-coordinator\"\n\
    ///             target = \"m0\"\nduration = \"4s\"\n";
    /// let blank = || Replay { scenario: neli_sim::Scenario::parse(text, "cut-off.toml").unwrap(), notes: Vec::new() };
    /// assert_eq!(blank().showing(ONE_LEADER, &cfg).scenario.election.app_loop, AppLoop::Pulse);
    /// let shown = blank().showing(RESOURCE, &cfg).scenario.election;
    /// assert_eq!((shown.app_loop, shown.app_work), (AppLoop::Background, None));
    /// ```
    pub fn showing(mut self, property: &str, c: &ElectionModelCfg) -> Replay {
        let cut_off = self.scenario.timed_faults().any(|f| f.fault.kind() == FaultKind::IsolateCoordinator);
        if property != crate::election::property::RESOURCE || !cut_off {
            return self;
        }
        let e = &mut self.scenario.election;
        e.app_loop = AppLoop::Background;
        e.app_work = None;
        let every = (c.tick_ms / 25).max(neli_sim::TICK.as_millis() as u64);
        e.poll_interval = Dur(every as i64);
        self.notes.push(format!(
            "the application runs the election in the background and asks every {every}ms, so that a leader cut off \
             the coordinator keeps writing while its lease lasts, as the model's downstream sees every leader's token"
        ));
        self
    }
}

/// The path as a scenario (`scenarios/FORMAT.md`) for `neli-sim` to replay.
///
/// Faults are aimed as the model meant them: model members are renamed to
/// the simulator's first assignment ([`sim_members`]), and a fault on the
/// member that leads role 0 at that instant targets `leader` (resolved by
/// the simulator at the fault's instant, so a later election that went to
/// another member there still hits the leader). A pause still open when the
/// path ends resumes one tick later, so the paused member runs again and
/// acts on what it believes, as the model's next step would have; crashes
/// and isolations still open last to the end of the run. Faults the format
/// cannot express (a single lost or reordered message) become notes.
pub fn counterexample_to_scenario(
    model: &ElectionModel,
    name: &str,
    path: &Path<ElectionState, ElectionAction>,
) -> Replay {
    let c = &model.cfg;
    let steps = path.clone().into_vec();
    let end = u64::from(steps.last().map_or(0, |s| s.0.now));
    let run_end = end + u64::from(c.session_timeout) * 2;
    let sim = sim_members(model, path);
    let mut timeline = Timeline {
        cfg: c,
        steps: &steps,
        sim: &sim,
        end,
        run_end,
        scenario: blank_scenario(c, name, run_end),
        notes: first_notes(c, &sim),
        open: Vec::new(),
        skip_resume: Vec::new(),
        resumed: vec![None; sim.len()],
    };
    for k in 0..steps.len().saturating_sub(1) {
        timeline.step(k);
    }
    timeline.close()
}

/// `t` ticks as a scenario duration.
fn ticks(c: &ElectionModelCfg, t: u64) -> Dur {
    Dur((t * c.tick_ms) as i64)
}

/// The scenario of the model's configuration, without faults yet, running
/// until `run_end` ticks.
fn blank_scenario(c: &ElectionModelCfg, name: &str, run_end: u64) -> Scenario {
    let exclusive_one_role = c.roles == 1 && c.partitions == 1;
    Scenario {
        name: name.to_owned(),
        description: "found by neli-models (BFS shortest counterexample)".into(),
        duration: ticks(c, run_end),
        seed: None,
        // The model's unsafe coordinator, for its counterexamples.
        cluster: Cluster { revoked_barrier: !c.skip_revoked_barrier, ..Cluster::default() },
        election: election(c),
        faults: Vec::new(),
        random: None,
        // Non-exclusive mode promises token order, not exclusivity.
        expect: Expect { max_overlap: (c.exclusive || exclusive_one_role).then_some(Dur(0)), ..Expect::default() },
    }
}

/// The scenario's election settings for the model's configuration. A
/// configuration neli refuses (T not below S, a short rebalance timeout,
/// an unsafe variant: `ElectionSpec::neli_refusal`) is the model's on purpose,
/// and says so in `unchecked`, so the file reads back.
fn election(c: &ElectionModelCfg) -> ElectionSpec {
    let mut e = settings(c);
    e.unchecked = e.neli_refusal().map(|(key, rule)| {
        format!("the model's configuration, checked by neli-lab check as given although neli refuses it (election.{key}): {rule}")
    });
    e
}

/// The model's configuration as scenario settings, as given.
fn settings(c: &ElectionModelCfg) -> ElectionSpec {
    let ticks = |t: u64| ticks(c, t);
    let exclusive_one_role = c.roles == 1 && c.partitions == 1;
    let variant = match (c.variant.lease_from_receipt, c.variant.any_record_counts) {
        (false, false) => Variant::Recommended,
        (true, _) => Variant::LeaseFromReceipt,
        (false, true) => Variant::AnyRecordCounts,
    };
    ElectionSpec {
        members: u32::from(c.members),
        mode: if exclusive_one_role { ModeName::Exclusive } else { ModeName::MultiRole },
        roles: c.roles,
        partitions: c.partitions,
        exclusive: c.exclusive || exclusive_one_role,
        heartbeat_timeout: ticks(c.heartbeat_timeout.into()),
        session_timeout: ticks(c.session_timeout.into()),
        grace: ticks(c.grace.into()),
        heartbeat_interval: Some(ticks(c.heartbeat_interval.into())),
        poll_interval: ticks(1),
        membership_proof: c.membership_proof,
        client_session_expiry: true,
        group_protocol: match c.protocol {
            GroupProtocol::Classic => GroupProtocolName::Classic,
            GroupProtocol::Consumer => GroupProtocolName::Consumer,
        },
        static_membership: c.faults.static_replacements > 0,
        spares: u32::from(c.faults.static_replacements),
        variant,
        assignment: if c.incremental { AssignmentName::CooperativeSticky } else { AssignmentName::Range },
        max_poll_interval: None,
        // The application works between pulses and asks `is_leader()`
        // again, so a member resumed from a pause acts on what its core
        // answers then, as the model judges it (FORMAT.md, `app_work`).
        app_work: Some(Dur((c.tick_ms / 2).max(1) as i64)),
        app_asks_at_lease_end: false,
        app_loop: Default::default(),
        // The model's member polls its `Revoked` callback in one step and
        // hands the partition back at once; the simulator's application
        // would finish work for 250 ms first (FORMAT.md, `revoked_work`),
        // while the successor's eager rebalance waits for it.
        revoked_work: Some(Dur(0)),
        unchecked: None,
    }
}

/// What the scenario cannot replay of the configuration, and how members
/// were renamed.
fn first_notes(c: &ElectionModelCfg, sim: &[u8]) -> Vec<String> {
    let mut notes = Vec::new();
    if c.protocol == GroupProtocol::Consumer {
        notes.push(
            "the model ran Kafka 4's consumer group protocol (KIP-848); the simulator's group_protocol = \"consumer\" \
             runs it as far as the lease sees it (no client-side session expiry, commits renew no session)"
                .to_owned(),
        );
    }
    let moved: Vec<String> =
        sim.iter().enumerate().filter(|(m, s)| *m != **s as usize).map(|(m, s)| format!("m{m} as m{s}")).collect();
    if !moved.is_empty() {
        notes.push(format!("model members renamed to the simulator's first assignment: {}", moved.join(", ")));
    }
    notes
}

/// The scenario's faults, built step by step along the path.
struct Timeline<'a> {
    cfg: &'a ElectionModelCfg,
    steps: &'a [(ElectionState, Option<ElectionAction>)],
    /// [`sim_members`] of the path.
    sim: &'a [u8],
    /// The path's last tick, and the run's.
    end: u64,
    run_end: u64,
    scenario: Scenario,
    notes: Vec<String>,
    /// Open faults (pause, crash, isolation), each ended by the matching
    /// healing step: the opening action, its tick, its target, and the
    /// moment it is aimed at, if it is.
    open: Vec<(ElectionAction, u64, Target, Option<Aim>)>,
    /// Resumes already written with the pause they end.
    skip_resume: Vec<usize>,
    /// Per model member, the last pause ended by a resume: where it was
    /// aimed and how long it lasted.
    resumed: Vec<Option<(Aim, Dur)>>,
}

/// Where a fault is written: at `at`, or, with `on`, armed at `at` and
/// started at the member's next such moment of the protocol.
#[derive(Debug, Clone, Copy)]
struct Aim {
    at: Dur,
    on: Option<Trigger>,
}

impl Timeline<'_> {
    /// The scenario's faults for step `k` (the action taken in state `k`).
    fn step(&mut self, k: usize) {
        use ElectionAction::*;
        let (c, steps) = (self.cfg, self.steps);
        let (s, action) = (&steps[k].0, steps[k].1.expect("non-final step"));
        let t = u64::from(s.now);
        let at = ticks(c, t);
        match action {
            Pause(m) if self.right_after_assignment(k, m) => self.pause_at_proof(k, m, t),
            Pause(m) | Crash(m) | Isolate(m) | HeartbeatsFail(m) if self.before_its_deal(k, m) => {
                // Armed half a tick early: the simulator's rebalance may
                // complete a little before the model's tick.
                let at = if t == 0 { Dur(0) } else { Dur(at.0 - (c.tick_ms / 2) as i64) };
                self.open.push((action, t, self.member(m), Some(Aim { at, on: Some(Trigger::Dealt) })));
            }
            Pause(m) | Crash(m) | Isolate(m) if self.led_since_resume(k, m) => self.cut_after_acquiring(action, m, t),
            // The simulator's group forms at a seed's own pace, sometimes
            // after the instant tick 0 stands for: a cut of the first
            // leader in its first tick is aimed at its acquisition.
            Pause(m) | Crash(m) | Isolate(m) if t == 0 && s.leaders(0).iter().any(|(key, _)| key.0 == m) => {
                self.open.push((action, t, self.member(m), Some(Aim { at: Dur(0), on: Some(Trigger::Acquired) })))
            }
            Pause(m) | Crash(m) | Isolate(m) | HeartbeatsFail(m) => {
                self.open.push((action, t, self.target(s, m), None))
            }
            Resume(_) if self.skip_resume.contains(&k) => {}
            Resume(m) => {
                self.hold_read_backs(k, m);
                self.heal(action, m, t, self.resume_lag(k, m))
            }
            Restart(m) | Heal(m) | HeartbeatsHeal(m) => self.heal(action, m, t, Dur(0)),
            ClockFast(m) => {
                self.scenario.push_fault(at, Fault::ClockStep { target: self.target(s, m), by: ticks(c, 1) })
            }
            Replace(m) => self.scenario.push_fault(at, Fault::StaticReplace { target: self.target(s, m) }),
            Tick { slow: Some(m) } => self
                .scenario
                .push_fault(at, Fault::ClockStep { target: self.target(s, m), by: Dur(-(c.tick_ms as i64)) }),
            Foreign => self
                .scenario
                .push_fault(at, Fault::ForeignWriter { partition: 0, count: 1, garbage: true, misplaced: false }),
            // The log alone goes: its broker (b1) restarts empty at once,
            // while the group lives on the coordinator (b0).
            LogLoss => {
                self.scenario.cluster.brokers = 2;
                self.scenario.cluster.partition_leader = BrokerId(1);
                self.scenario.push_fault(
                    at,
                    Fault::BrokerCrash { target: BrokerId(1), duration: Some(ticks(c, 1)), lose_state: true },
                )
            }
            Lose(m, k) => self.notes.push(format!(
                "at {at}: message {k} in flight from m{} lost (not expressible in v1)",
                self.sim[m as usize]
            )),
            Send(m, k) if k > 0 => self.notes.push(format!(
                "at {at}: message {k} from m{} delivered out of order (not expressible in v1)",
                self.sim[m as usize]
            )),
            _ => {}
        }
    }

    /// Model member `m` by its simulator name: a fault aimed at a moment
    /// names one member, never `leader`.
    fn member(&self, m: u8) -> Target {
        Target::Member(u32::from(self.sim[m as usize]))
    }

    /// Whether member `m`, at step `k`, was dealt an assignment in this
    /// tick that it has not polled yet. In the simulator that assignment
    /// is on the wire for milliseconds: only a fault started at the
    /// coordinator's deal (`on = "dealt"`) finds the member before it
    /// handles it, as the model's does.
    fn before_its_deal(&self, k: usize, m: u8) -> bool {
        let steps = self.steps;
        let sync = steps[..k].iter().rposition(|(_, a)| matches!(a, Some(ElectionAction::Sync { .. })));
        sync.is_some_and(|j| {
            steps[j].0.now == steps[k].0.now
                && !steps[j..k].iter().any(|(_, a)| *a == Some(ElectionAction::Poll(m)))
                && steps[k].0.slots[m as usize].callbacks.iter().any(|c| matches!(c, Callback::Assigned { .. }))
        })
    }

    /// Whether member `m`, at step `k`, resumed from a pause in this tick
    /// and has acquired a role since.
    fn led_since_resume(&self, k: usize, m: u8) -> bool {
        let steps = self.steps;
        let resume = steps[..k].iter().rposition(|(_, a)| *a == Some(ElectionAction::Resume(m)));
        let leads =
            |j: usize| (0..self.cfg.roles).filter(|r| steps[j].0.leaders(*r).iter().any(|((x, _), _)| *x == m)).count();
        resume.is_some_and(|r| {
            self.resumed[m as usize].is_some()
                && steps[r].0.now == steps[k].0.now
                && (r..k).any(|j| actor(&steps[j].1.expect("non-final step")) == Some(m) && leads(j + 1) > leads(j))
        })
    }

    /// A pause, crash or isolation of member `m` that the model takes
    /// after `m` acquired a role in the tick it resumed in: aimed at the
    /// moment it acquires, armed where the pause was. Under the consumer
    /// protocol only heartbeats keep a session, and the model's
    /// coordinator hears a member at a tick's start (`steps::tick`), so it
    /// heard none of `m` between the resume and the cut: its group
    /// heartbeats fail from the pause until half a tick after the resume,
    /// while its membership proof goes through.
    fn cut_after_acquiring(&mut self, action: ElectionAction, m: u8, t: u64) {
        let Some((pause, length)) = self.resumed[m as usize] else { return };
        let member = self.member(m);
        if self.cfg.protocol == GroupProtocol::Consumer {
            let duration = Dur(length.0 + (self.cfg.tick_ms / 2).max(1) as i64);
            self.push_aimed(pause, Fault::HeartbeatFailure { target: member, duration });
        }
        let aim = Aim { at: pause.at, on: Some(Trigger::Acquired) };
        self.open.push((action, t, member, Some(aim)));
    }

    /// Writes `fault` where `aim` says.
    fn push_aimed(&mut self, aim: Aim, fault: Fault) {
        self.scenario.push_fault(aim.at, fault);
        if let Some(last) = self.scenario.faults.last_mut() {
            last.get_mut().on = aim.on;
        }
    }

    /// Who a fault on model member `m` in state `s` targets.
    fn target(&self, s: &ElectionState, m: u8) -> Target {
        let leads = s.leaders(0);
        if leads.len() == 1 && leads[0].0.0 == m {
            Target::Leader
        } else {
            Target::Member(u32::from(self.sim[m as usize]))
        }
    }

    /// A pause, crash or isolation from `since` for `length` ticks; one
    /// healed within its tick (length 0) lasts half a tick, since a scenario
    /// fault must last a while.
    fn lasting(&self, action: &ElectionAction, target: Target, length: u64) -> Fault {
        let c = self.cfg;
        let duration = if length == 0 { Dur((c.tick_ms / 2).max(1) as i64) } else { ticks(c, length) };
        match action {
            ElectionAction::Pause(_) => Fault::Pause { target, duration },
            ElectionAction::Crash(_) => Fault::Crash { target, duration: Some(duration) },
            ElectionAction::HeartbeatsFail(_) => Fault::HeartbeatFailure { target, duration },
            _ => Fault::IsolateCoordinator { target, duration },
        }
    }

    /// Whether member `m`'s last step before step `k` was the poll that
    /// handed it an assignment (and so sent its heartbeat and membership
    /// proof), within the tick, before it read anything back: a window of
    /// milliseconds in the simulator.
    fn right_after_assignment(&self, k: usize, m: u8) -> bool {
        let steps = self.steps;
        let mine = steps[..k].iter().rposition(|(_, a)| a.is_some_and(|a| actor(&a) == Some(m)));
        mine.is_some_and(|j| {
            steps[j].1 == Some(ElectionAction::Poll(m))
                && steps[j].0.now == steps[k].0.now
                && steps[j + 1].0.slots[m as usize].core().is_some_and(|c| !c.assigned().is_empty())
        })
    }

    /// A pause of member `m` at step `k` right after its assignment
    /// ([`Self::right_after_assignment`]), aimed at the moment its proof is
    /// accepted, not at a time, and written with the resume that ends it.
    /// Without the proof there is no such moment (a fault aimed at it would
    /// never start): the pause is aimed at the assignment, with which the
    /// member sends its heartbeat.
    fn pause_at_proof(&mut self, k: usize, m: u8, t: u64) {
        let (c, steps) = (self.cfg, self.steps);
        let resume = steps[k..].iter().position(|(_, a)| *a == Some(ElectionAction::Resume(m))).map(|i| k + i);
        let until = resume.map_or(self.end + 1, |i| u64::from(steps[i].0.now));
        let lag = resume.map_or(Dur(0), |i| self.resume_lag(i, m));
        let length = Dur(ticks(c, (until - t).max(1)).0 + lag.0);
        let member = Target::Member(u32::from(self.sim[m as usize]));
        self.scenario.push_fault(ticks(c, t), Fault::Pause { target: member, duration: length });
        // The model's client hears of its eviction only when it
        // polls; librdkafka's background heartbeat (and the
        // simulator's) hears at once after a pause. Cut the member
        // off the coordinator for the pause and T after it, so the
        // resumed member acts on what it read first, as in the path.
        let cut = Dur(length.0 + ticks(c, c.heartbeat_timeout.into()).0);
        self.scenario.cluster.brokers = 2;
        self.scenario.cluster.partition_leader = BrokerId(1);
        self.scenario.push_fault(ticks(c, t), Fault::IsolateCoordinator { target: member, duration: cut });
        let moment = Trigger::in_the_group(c.membership_proof);
        for f in self.scenario.faults.iter_mut().rev().take(2) {
            f.get_mut().on = Some(moment);
        }
        if let Some(i) = resume {
            self.skip_resume.push(i);
        }
    }

    /// How much later than its tick the resume of member `m` at step `i`
    /// comes in the simulator: a fifth of a tick where another member took
    /// a role earlier in the same model tick, so that the resumed member
    /// acts after that acquisition there too (the simulator's takes tens of
    /// milliseconds into the tick; the order decides which token comes
    /// first), and nothing otherwise.
    fn resume_lag(&self, i: usize, m: u8) -> Dur {
        let steps = self.steps;
        let now = steps[i].0.now;
        let first = steps[..i].iter().rposition(|(s, _)| s.now != now).map_or(0, |j| j + 1);
        let took = |j: usize| {
            (0..self.cfg.roles).any(|r| {
                let before = steps[j].0.leaders(r);
                steps[j + 1].0.leaders(r).iter().any(|(key, _)| key.0 != m && !before.iter().any(|(b, _)| b == key))
            })
        };
        let tick = self.cfg.tick_ms as i64;
        let lag = if !self.reading_back(i, m).is_empty() {
            tick / 2
        } else if (first..i).any(took) {
            tick / 5
        } else {
            return Dur(0);
        };
        Dur(lag.max(1) + if self.eager_revoke(first, i) { tick * 3 / 2 } else { 0 })
    }

    /// Whether, in the model's tick from step `first` to step `i`, a member
    /// revoked its partitions (an eager rebalance) and the coordinator
    /// dealt after it: the model's coordinator deals at once, the
    /// simulator's waits for that member's group heartbeat to hear of the
    /// rebalance and its revocation, and the new assignment is read back at
    /// the next poll, so the tick's later steps come about a tick and a
    /// half later there.
    fn eager_revoke(&self, first: usize, i: usize) -> bool {
        let steps = self.steps;
        let holds = |j: usize, x: u8| steps[j].0.slots[x as usize].core().is_some_and(|c| !c.assigned().is_empty());
        let revoked = |j: usize| matches!(steps[j].1, Some(ElectionAction::Poll(x)) if holds(j, x) && !holds(j + 1, x));
        let dealt = |j: usize| matches!(steps[j].1, Some(ElectionAction::Sync { .. }));
        (first..i).any(|j| revoked(j) && (j..i).any(dealt))
    }

    /// The members other than `m` that, by step `i` (a resume of `m`), were
    /// handed an assignment in this tick (and so wrote their heartbeat) and
    /// lead nothing yet, but take a role later in the tick: the model's
    /// order is their heartbeat, then `m`'s, then their read-back.
    fn reading_back(&self, i: usize, m: u8) -> Vec<u8> {
        let steps = self.steps;
        let now = steps[i].0.now;
        let leads = |j: usize, y: u8| (0..self.cfg.roles).any(|r| steps[j].0.leaders(r).iter().any(|(k, _)| k.0 == y));
        let first = steps[..i].iter().rposition(|(s, _)| s.now != now).map_or(0, |j| j + 1);
        let later = steps[i..].iter().take_while(|(s, _)| s.now == now).count();
        (0..self.cfg.members)
            .filter(|&y| y != m && !leads(i, y))
            .filter(|&y| (i..i + later).any(|j| leads(j, y)))
            .filter(|&y| {
                (first..i).any(|j| {
                    let has = |j: usize| steps[j].0.slots[y as usize].core().is_some_and(|c| !c.assigned().is_empty());
                    steps[j].1 == Some(ElectionAction::Poll(y)) && !has(j) && has(j + 1)
                })
            })
            .collect()
    }

    /// In the simulator the resumed member `m` (its resume lagged half a
    /// tick, [`Self::resume_lag`]) writes after the members
    /// [`Self::reading_back`] were assigned, but their loops read their
    /// heartbeat back within milliseconds, before `m` acts. So each one's
    /// loop stalls from its assignment for a tick: the application runs
    /// the election in the background, where `stall-poll` holds neli's
    /// loop (`scenarios/FORMAT.md`), and `m` reads and acquires first.
    /// Armed a tick early: the simulator's rebalance may come before the
    /// model's tick or after it (13 of seeds 0..20 replay the tokens out of
    /// order after a pause without the proof; 9 armed half a tick early).
    fn hold_read_backs(&mut self, i: usize, m: u8) {
        let c = self.cfg;
        for y in self.reading_back(i, m) {
            let at = ticks(c, u64::from(self.steps[i].0.now).saturating_sub(1));
            let lag = self.resume_lag(i, m).0;
            let fault = Fault::StallPoll { target: self.member(y), duration: Dur(lag + ticks(c, 1).0 / 2) };
            self.push_aimed(Aim { at, on: Some(Trigger::Assigned) }, fault);
            let e = &mut self.scenario.election;
            (e.app_loop, e.app_work) = (AppLoop::Background, None);
        }
    }

    /// `healing` (a resume, restart or heal of member `m` at tick `t`) ends
    /// the open fault it matches; a pause lasts `lag` longer
    /// ([`Self::resume_lag`]).
    fn heal(&mut self, healing: ElectionAction, m: u8, t: u64, lag: Dur) {
        use ElectionAction::*;
        let opener = |a: &ElectionAction| match (a, healing) {
            (Pause(x), Resume(_))
            | (Crash(x), Restart(_))
            | (Isolate(x), Heal(_))
            | (HeartbeatsFail(x), HeartbeatsHeal(_)) => *x == m,
            _ => false,
        };
        if let Some(i) = self.open.iter().position(|(a, ..)| opener(a)) {
            let (a, since, who, aim) = self.open.remove(i);
            let mut fault = self.lasting(&a, who, t - since);
            if let Fault::Pause { duration, .. } = &mut fault {
                duration.0 += lag.0;
            }
            let aim = aim.unwrap_or(Aim { at: ticks(self.cfg, since), on: None });
            if let Fault::Pause { duration, .. } = fault {
                self.resumed[m as usize] = Some((aim, duration));
            }
            self.push_aimed(aim, fault);
        }
    }

    /// A member that ends the path leading while the model left it idle
    /// goes on leading there because the model's interleaving had it take
    /// no step: it has a `Lost` or `Rejoin` callback it never polled, or it
    /// took no step in the path's last tick, where its successor acquired.
    /// In the simulator its poll loop would act within milliseconds
    /// (hand it the callback, have its next proof refused), so its poll
    /// loop stalls (`stall-poll`: the client's background heartbeats go
    /// on, its lease runs out on its own) from half a tick before it went
    /// idle until a tick after the path ends.
    fn stall_idle_leaders(&mut self) {
        let Some((last, _)) = self.steps.last() else { return };
        let half = (self.cfg.tick_ms / 2).max(1) as i64;
        for m in 0..self.cfg.members {
            let unheard = |s: &ElectionState| {
                s.slots[m as usize].callbacks.iter().any(|c| matches!(c, Callback::Lost | Callback::Rejoin))
            };
            let leads = (0..self.cfg.roles).any(|r| last.leaders(r).iter().any(|((x, _), _)| *x == m));
            let acted_last_tick =
                self.steps.iter().any(|(s, a)| u64::from(s.now) == self.end && a.is_some_and(|a| actor(&a) == Some(m)));
            let since = if unheard(last) {
                let came = self.steps.iter().rposition(|(s, _)| !unheard(s)).map_or(0, |j| j + 1);
                // Heard on resuming from a pause: the stall would also
                // keep back what the member polled before it (a stale
                // assignment), which the simulator's client hands over first.
                let resumed =
                    self.steps[came.saturating_sub(1)..].iter().any(|(_, a)| *a == Some(ElectionAction::Resume(m)));
                if resumed {
                    continue;
                }
                u64::from(self.steps[came].0.now)
            } else if !acted_last_tick && self.end > 0 {
                self.end
            } else {
                continue;
            };
            if !leads {
                continue;
            }
            let at = Dur((ticks(self.cfg, since).0 - half).max(0));
            let duration = Dur(ticks(self.cfg, self.end + 1).0 - at.0);
            self.scenario.push_fault(at, Fault::StallPoll { target: self.member(m), duration });
        }
    }

    /// A pause still open resumes one tick after the path ends (the member
    /// runs again); other open faults last until the end of the run.
    fn close(mut self) -> Replay {
        self.stall_idle_leaders();
        for (a, since, who, aim) in std::mem::take(&mut self.open) {
            let until = if matches!(a, ElectionAction::Pause(_)) { self.end + 1 } else { self.run_end };
            let fault = self.lasting(&a, who, until - since);
            self.push_aimed(aim.unwrap_or(Aim { at: ticks(self.cfg, since), on: None }), fault);
        }
        Replay { scenario: self.scenario, notes: self.notes }
    }
}

/// Why a path written by [`format_path`] does not replay: the line at
/// fault and what differs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("an empty path")]
    Empty,
    #[error("the model has no initial state")]
    NoInitialState,
    #[error("line {line}: no ` -> `")]
    NoInitialLeadership { line: usize },
    #[error("line {line}: initial leadership {got} where the path has {expected}")]
    InitialLeadership { line: usize, got: String, expected: String },
    #[error("line {line} ({text:?}): {step}")]
    Step { line: usize, text: String, step: StepError },
}

/// What is wrong with one step of a path ([`PathError::Step`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    #[error("no ` -> `")]
    NoLeadership,
    #[error("no `t=`")]
    NoTick,
    #[error("no member column")]
    NoMember,
    #[error("bad tick {0:?}")]
    BadTick(String),
    #[error("{0} is not enabled here")]
    NotEnabled(String),
    #[error("{0} has no next state")]
    NoNextState(String),
    #[error("after {action}: t={tick} {got}, the path has t={expected_tick} {expected}")]
    Differs { action: String, tick: u8, got: String, expected_tick: u8, expected: String },
}

/// Replays a path written by [`format_path`] on `model`, step by step: each
/// line's action must be one the model enables in the state reached so far
/// (matched by its text), and the tick and the leadership after it (judged
/// by the real cores' `is_leader` and `token`) must be the ones written.
/// A recorded path is therefore an executable test of the core: a change in
/// how `neli::core::Member` judges leases shows up as the first step whose
/// leadership differs. Returns the number of steps replayed.
pub fn replay_path(model: &ElectionModel, text: &str) -> Result<usize, PathError> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let (n, first) = lines.next().ok_or(PathError::Empty)?;
    let init = model.init_states().into_iter().next().ok_or(PathError::NoInitialState)?;
    let expect_init =
        first.split_once(" -> ").map(|(_, l)| l.trim()).ok_or(PathError::NoInitialLeadership { line: n + 1 })?;
    if leadership(model, &init) != expect_init {
        return Err(PathError::InitialLeadership {
            line: n + 1,
            got: leadership(model, &init),
            expected: expect_init.to_owned(),
        });
    }
    let (mut state, mut steps, mut enabled) = (init, 0, Vec::new());
    for (n, line) in lines {
        let at = |step: StepError| PathError::Step { line: n + 1, text: line.to_owned(), step };
        let (left, expected) = line.rsplit_once(" -> ").ok_or_else(|| at(StepError::NoLeadership))?;
        let rest = left.trim().strip_prefix("t=").ok_or_else(|| at(StepError::NoTick))?;
        let (tick, rest) = rest.split_once(' ').ok_or_else(|| at(StepError::NoMember))?;
        let tick: u8 = tick.parse().map_err(|_| at(StepError::BadTick(tick.to_owned())))?;
        let action_text = rest.trim_start().split_once(' ').map_or("", |(_, a)| a).trim();
        enabled.clear();
        model.actions(&state, &mut enabled);
        let action = enabled
            .iter()
            .copied()
            .find(|a| model.format_action(a) == action_text)
            .ok_or_else(|| at(StepError::NotEnabled(action_text.to_owned())))?;
        state = model.next_state(&state, action).ok_or_else(|| at(StepError::NoNextState(action_text.to_owned())))?;
        let got = leadership(model, &state);
        if state.now != tick || got != expected.trim() {
            return Err(at(StepError::Differs {
                action: action_text.to_owned(),
                tick: state.now,
                got,
                expected_tick: tick,
                expected: expected.trim().to_owned(),
            }));
        }
        steps += 1;
    }
    Ok(steps)
}
