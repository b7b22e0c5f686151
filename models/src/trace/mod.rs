//! Counterexamples for humans and for the simulator: one line per step
//! (tick, member, action, resulting leadership), and the same path as a
//! `neli_sim::Scenario` with a fault timeline.

use std::fmt::Write;

use neli_sim::Scenario;
use neli_sim::scenario::{
    AppLoop, AssignmentName, Cluster, Dur, ElectionSpec, Expect, FaultKind, GroupProtocolName, ModeName, Variant,
};
use stateright::Model;
use stateright::Path;

use crate::election::{ElectionAction, ElectionModel, ElectionModelCfg, ElectionState, GroupProtocol};

mod timeline;

use timeline::Timeline;

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
    /// downstream sees the token of every leader that is not paused, in
    /// every state (exclusive mode), while the
    /// simulator's pulsed application writes only between its pulses, and
    /// a leader cut off the coordinator waits in its pulse for a proof's
    /// answer until its lease is over, so it writes nothing in the overlap.
    /// Its application therefore runs the election in the background
    /// (`app_loop = "background"`: it keeps asking while the election's
    /// loop waits) and asks every twenty-fifth of a tick, so that a write
    /// lands in an overlap the model measures in ticks. A `stall-poll` the
    /// translation wrote to keep the cut-off leader from hearing of its
    /// loss then stalls neli's loop, not the application. Only a path that
    /// cuts a running member off the coordinator is written so
    /// ([`cuts_off_a_running_member`]): elsewhere the old
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
        let cut_off = cuts_off_a_running_member(&self.scenario);
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
             the coordinator keeps writing while its lease lasts, as the model's downstream sees every running leader's token"
        ));
        self
    }
}

/// Whether `scenario` cuts a running member off the coordinator: an
/// `isolate-coordinator` fault other than the one a counterexample's
/// translation writes beside a pause (same member, same start, lasting the
/// pause and `T` more). That one stands for the model's client, which hears
/// nothing of the coordinator while paused and acts on what it read first
/// once resumed; in the model's path the member it cuts off leads nothing
/// it could write stale with before its successor, so a resource
/// counterexample written with it keeps the pulsed application, whose
/// survivor writes in the overlap. [`Replay::showing`] runs the application
/// of a resource counterexample that cuts a running member off in the
/// background.
///
/// ```
/// let file = |isolation: &str, pause: &str| format!(
///     "name = \"x\"\nduration = \"10s\"\n[election]\nmembers = 2\nheartbeat_timeout = \"1s\"\n\
///      session_timeout = \"3s\"\n[cluster]\nbrokers = 2\npartition_leader = \"b1\"\n\
///      [[faults]]\nat = \"8s\"\nkind = \"isolate-coordinator\"\ntarget = \"m0\"\nduration = \"{isolation}\"\n\
///      [[faults]]\nat = \"8s\"\nkind = \"pause\"\ntarget = \"m0\"\nduration = \"{pause}\"\n");
/// let cut = |isolation, pause| {
///     let s = neli_sim::Scenario::parse(&file(isolation, pause), "x.toml").unwrap();
///     neli_models::trace::cuts_off_a_running_member(&s)
/// };
/// assert!(!cut("3s", "2s"), "the isolation written beside a 2 s pause (T = 1 s)");
/// assert!(cut("4s", "2s"), "an isolation that outlasts the pause by more than T");
/// ```
pub fn cuts_off_a_running_member(scenario: &Scenario) -> bool {
    let faults: Vec<_> = scenario.timed_faults().collect();
    let t = scenario.election.heartbeat_timeout.0;
    let beside_a_pause = |i: &neli_sim::scenario::TimedFault| {
        faults.iter().any(|p| {
            let lasts = |f: &neli_sim::scenario::TimedFault| f.fault.duration().map(|d| d.0);
            p.fault.kind() == FaultKind::Pause
                && p.fault.member() == i.fault.member()
                && (p.at, p.on) == (i.at, i.on)
                && lasts(p).map(|d| d + t) == lasts(i)
        })
    };
    faults.iter().any(|f| f.fault.kind() == FaultKind::IsolateCoordinator && !beside_a_pause(f))
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
    let notes = first_notes(c, &sim);
    let mut timeline = Timeline::new(c, &steps, &sim, (end, run_end), blank_scenario(c, name, run_end), notes);
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
        // The model's unsafe coordinator, for its counterexamples (the
        // simulator's can skip the barrier under cooperative-sticky only).
        cluster: Cluster { revoked_barrier: !(c.skip_revoked_barrier && c.incremental), ..Cluster::default() },
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
