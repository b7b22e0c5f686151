//! Counterexamples for humans and for the simulator: one line per step
//! (tick, member, action, resulting leadership), and the same path as a
//! `neli_sim::Scenario` with a fault timeline.

use std::fmt::Write;

use neli_sim::Scenario;
use neli_sim::scenario::{
    AssignmentName, BrokerId, Cluster, Dur, Election, Expect, Fault, ModeName, Target, Trigger, Variant,
};
use stateright::Model;
use stateright::Path;

use crate::election::{ElectionAction, ElectionModel, ElectionState};

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
        return sim;
    };
    let keys: Vec<u8> = s.coord.members.keys().map(|k| k.0).collect();
    if keys.len() != n {
        return sim; // not every member in the first generation: keep the names
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
    sim
}

/// A counterexample as a scenario for `neli-sim` to replay, with notes on
/// what the scenario format cannot express (written as comments).
#[derive(Debug, Clone)]
pub struct Replay {
    pub scenario: Scenario,
    pub notes: Vec<String>,
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
    use ElectionAction::*;
    let c = &model.cfg;
    let ticks = |t: u64| Dur((t * c.tick_ms) as i64);
    let steps = path.clone().into_vec();
    let end = u64::from(steps.last().map_or(0, |s| s.0.now));
    let run_end = end + u64::from(c.session_timeout) * 2;
    let exclusive_one_role = c.roles == 1 && c.partitions == 1;
    let variant = match (c.variant.lease_from_receipt, c.variant.any_record_counts) {
        (false, false) => Variant::Recommended,
        (true, _) => Variant::LeaseFromReceipt,
        (false, true) => Variant::AnyRecordCounts,
    };
    let election = Election {
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
        variant,
        assignment: if c.incremental { AssignmentName::CooperativeSticky } else { AssignmentName::Range },
        max_poll_interval: None,
        // The application works between pulses and asks `is_leader()`
        // again, so a member resumed from a pause acts on what its core
        // answers then, as the model judges it (FORMAT.md, `app_work`).
        app_work: Some(Dur((c.tick_ms / 2).max(1) as i64)),
        app_asks_at_lease_end: false,
        app_loop: Default::default(),
        revoked_work: None,
    };
    let mut scenario = Scenario {
        name: name.to_owned(),
        description: "found by neli-models (BFS shortest counterexample)".into(),
        duration: ticks(run_end),
        seed: None,
        cluster: Cluster::default(),
        election,
        faults: Vec::new(),
        random: None,
        // Non-exclusive mode promises token order, not exclusivity.
        expect: Expect { max_overlap: (c.exclusive || exclusive_one_role).then_some(Dur(0)), ..Expect::default() },
    };
    let mut notes = Vec::new();
    if c.skip_revoked_barrier {
        notes.push(
            "the model's coordinator skipped the Revoked barrier (handed a moving partition on at once); \
             the simulator's coordinator always withholds it, so this scenario replays the faults, not that coordinator"
                .to_owned(),
        );
    }
    let sim = sim_members(model, path);
    let moved: Vec<String> =
        sim.iter().enumerate().filter(|(m, s)| *m != **s as usize).map(|(m, s)| format!("m{m} as m{s}")).collect();
    if !moved.is_empty() {
        notes.push(format!("model members renamed to the simulator's first assignment: {}", moved.join(", ")));
    }
    // Who a fault on model member `m` in state `s` targets.
    let target = |s: &ElectionState, m: u8| {
        let leads = s.leaders(0);
        if leads.len() == 1 && leads[0].0.0 == m { Target::Leader } else { Target::Member(u32::from(sim[m as usize])) }
    };
    // A pause, crash or isolation from `since` for `length` ticks; one
    // healed within its tick (length 0) lasts half a tick, since a scenario
    // fault must last a while.
    let lasting = |action: &ElectionAction, target: Target, length: u64| {
        let duration = if length == 0 { Dur((c.tick_ms / 2).max(1) as i64) } else { ticks(length) };
        match action {
            Pause(_) => Fault::Pause { target, duration },
            Crash(_) => Fault::Crash { target, duration: Some(duration) },
            _ => Fault::IsolateCoordinator { target, duration },
        }
    };
    // A pause of a member whose last step was the poll that handed it an
    // assignment (and so sent its heartbeat and membership proof), before
    // it read anything back: a window of milliseconds in the simulator, so
    // the pause is aimed at the moment its proof is accepted, not at a time.
    let right_after_assignment = |k: usize, m: u8| {
        let mine = steps[..k].iter().rposition(|(_, a)| a.is_some_and(|a| actor(&a) == Some(m)));
        mine.is_some_and(|j| {
            steps[j].1 == Some(Poll(m))
                && steps[j].0.now == steps[k].0.now
                && steps[j + 1].0.slots[m as usize].core().is_some_and(|c| !c.assigned().is_empty())
        })
    };
    // Open faults (pause, crash, isolation) end at the matching healing step.
    let mut open: Vec<(ElectionAction, u64, Target)> = Vec::new();
    let mut skip_resume: Vec<usize> = Vec::new();
    for (k, w) in steps.windows(2).enumerate() {
        let (action, t) = (w[0].1.expect("non-final step"), u64::from(w[0].0.now));
        match action {
            Pause(m) if right_after_assignment(k, m) => {
                let resume = steps[k..].iter().position(|(_, a)| *a == Some(Resume(m))).map(|i| k + i);
                let until = resume.map_or(end + 1, |i| u64::from(steps[i].0.now));
                let length = ticks((until - t).max(1));
                let member = Target::Member(u32::from(sim[m as usize]));
                scenario.push_fault(ticks(t), Fault::Pause { target: member, duration: length });
                // The model's client hears of its eviction only when it
                // polls; librdkafka's background heartbeat (and the
                // simulator's) hears at once after a pause. Cut the member
                // off the coordinator for the pause and T after it, so the
                // resumed member acts on what it read first, as in the path.
                let cut = Dur(length.0 + ticks(c.heartbeat_timeout.into()).0);
                scenario.cluster.brokers = 2;
                scenario.cluster.partition_leader = BrokerId(1);
                scenario.push_fault(ticks(t), Fault::IsolateCoordinator { target: member, duration: cut });
                for f in scenario.faults.iter_mut().rev().take(2) {
                    f.get_mut().on = Some(Trigger::ProofAccepted);
                }
                if let Some(i) = resume {
                    skip_resume.push(i);
                }
            }
            Pause(m) | Crash(m) | Isolate(m) => open.push((action, t, target(&w[0].0, m))),
            Resume(_) if skip_resume.contains(&k) => {}
            Resume(m) | Restart(m) | Heal(m) => {
                let opener = |a: &ElectionAction| match (a, action) {
                    (Pause(x), Resume(_)) | (Crash(x), Restart(_)) | (Isolate(x), Heal(_)) => *x == m,
                    _ => false,
                };
                if let Some(i) = open.iter().position(|(a, _, _)| opener(a)) {
                    let (a, since, who) = open.remove(i);
                    scenario.push_fault(ticks(since), lasting(&a, who, t - since));
                }
            }
            ClockFast(m) => {
                scenario.push_fault(ticks(t), Fault::ClockStep { target: target(&w[0].0, m), by: ticks(1) })
            }
            Tick { slow: Some(m) } => scenario
                .push_fault(ticks(t), Fault::ClockStep { target: target(&w[0].0, m), by: Dur(-(c.tick_ms as i64)) }),
            Foreign => scenario.push_fault(ticks(t), Fault::ForeignWriter { partition: 0, count: 1, garbage: true }),
            // The log alone goes: its broker (b1) restarts empty at once,
            // while the group lives on the coordinator (b0).
            LogLoss => {
                scenario.cluster.brokers = 2;
                scenario.cluster.partition_leader = BrokerId(1);
                scenario.push_fault(
                    ticks(t),
                    Fault::BrokerCrash { target: BrokerId(1), duration: Some(ticks(1)), lose_state: true },
                )
            }
            Lose(m, k) => notes.push(format!(
                "at {}: message {k} in flight from m{} lost (not expressible in v1)",
                ticks(t),
                sim[m as usize]
            )),
            Send(m, k) if k > 0 => notes.push(format!(
                "at {}: message {k} from m{} delivered out of order (not expressible in v1)",
                ticks(t),
                sim[m as usize]
            )),
            _ => {}
        }
    }
    // A pause still open resumes one tick after the path ends (the member
    // runs again); other open faults last until the end of the run.
    for (a, since, who) in open {
        let until = if matches!(a, Pause(_)) { end + 1 } else { run_end };
        scenario.push_fault(ticks(since), lasting(&a, who, until - since));
    }
    Replay { scenario, notes }
}

/// Replays a path written by [`format_path`] on `model`, step by step: each
/// line's action must be one the model enables in the state reached so far
/// (matched by its text), and the tick and the leadership after it (judged
/// by the real cores' `is_leader` and `token`) must be the ones written.
/// A recorded path is therefore an executable test of the core: a change in
/// how `neli::core::Member` judges leases shows up as the first step whose
/// leadership differs. Returns the number of steps replayed.
pub fn replay_path(model: &ElectionModel, text: &str) -> Result<usize, String> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let (n, first) = lines.next().ok_or("an empty path")?;
    let init = model.init_states().into_iter().next().ok_or("the model has no initial state")?;
    let expect_init = first.split_once(" -> ").map(|(_, l)| l.trim()).ok_or(format!("line {}: no ` -> `", n + 1))?;
    if leadership(model, &init) != expect_init {
        return Err(format!(
            "line {}: initial leadership {} where the path has {expect_init}",
            n + 1,
            leadership(model, &init)
        ));
    }
    let (mut state, mut steps, mut enabled) = (init, 0, Vec::new());
    for (n, line) in lines {
        let at = |msg: String| format!("line {} ({line:?}): {msg}", n + 1);
        let (left, expected) = line.rsplit_once(" -> ").ok_or_else(|| at("no ` -> `".into()))?;
        let rest = left.trim().strip_prefix("t=").ok_or_else(|| at("no `t=`".into()))?;
        let (tick, rest) = rest.split_once(' ').ok_or_else(|| at("no member column".into()))?;
        let tick: u8 = tick.parse().map_err(|_| at(format!("bad tick {tick:?}")))?;
        let action_text = rest.trim_start().split_once(' ').map_or("", |(_, a)| a).trim();
        enabled.clear();
        model.actions(&state, &mut enabled);
        let action = enabled
            .iter()
            .copied()
            .find(|a| model.format_action(a) == action_text)
            .ok_or_else(|| at(format!("{action_text} is not enabled here")))?;
        state = model.next_state(&state, action).ok_or_else(|| at(format!("{action_text} has no next state")))?;
        let got = leadership(model, &state);
        if state.now != tick || got != expected.trim() {
            return Err(at(format!(
                "after {action_text}: t={} {got}, the path has t={tick} {}",
                state.now,
                expected.trim()
            )));
        }
        steps += 1;
    }
    Ok(steps)
}
