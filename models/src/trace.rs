//! Counterexamples for humans and for the simulator: one line per step
//! (tick, member, action, resulting leadership), and the same path written as
//! a scenario file (`scenarios/FORMAT.md`) with a fault timeline.

use std::fmt::Write;

use stateright::Model;
use stateright::Path;

use crate::election::{ElectionAction, ElectionModel, ElectionState, deal};

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
        Sync { .. } | Foreign => None,
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
    let order = deal(n, model.cfg.partitions as usize, number as usize);
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

/// The path as a scenario file for `neli-sim` to replay (`scenarios/FORMAT.md`).
///
/// Faults are aimed as the model meant them: model members are renamed to
/// the simulator's first assignment ([`sim_members`]), and a fault on the
/// member that leads role 0 at that instant targets `"leader"` (resolved by
/// the simulator at the fault's instant, so a later election that went to
/// another member there still hits the leader). A pause still open when the
/// path ends resumes one tick later, so the paused member runs again and
/// acts on what it believes, as the model's next step would have; crashes
/// and isolations still open last to the end of the run. Faults the format
/// cannot express (a single lost or reordered message) are kept as comments.
pub fn counterexample_to_scenario(
    model: &ElectionModel,
    name: &str,
    path: &Path<ElectionState, ElectionAction>,
) -> String {
    use ElectionAction::*;
    let c = &model.cfg;
    let ms = |ticks: u64| format!("\"{}ms\"", ticks * c.tick_ms);
    let mut out = String::new();
    let _ = writeln!(out, "name = \"{name}\"");
    let _ = writeln!(out, "description = \"found by neli-models (BFS shortest counterexample)\"");
    let steps = path.clone().into_vec();
    let end = u64::from(steps.last().map_or(0, |s| s.0.now));
    let _ = writeln!(out, "duration = {}\n", ms(end + u64::from(c.session_timeout) * 2));
    let _ =
        writeln!(out, "[cluster]\nbrokers = 1\ncoordinator = \"b0\"\npartition_leader = \"b0\"\nprofile = \"kafka\"\n");
    let mode = if c.roles == 1 && c.partitions == 1 { "exclusive" } else { "multi-role" };
    let variant = match (c.variant.lease_from_receipt, c.variant.any_record_counts) {
        (false, false) => "recommended",
        (true, _) => "lease-from-receipt",
        (false, true) => "any-record-counts",
    };
    let _ = writeln!(out, "[election]\nmembers = {}\nmode = \"{mode}\"", c.members);
    if mode == "multi-role" {
        let _ = writeln!(out, "roles = {}\npartitions = {}\nexclusive = {}", c.roles, c.partitions, c.exclusive);
    }
    let _ = writeln!(
        out,
        "heartbeat_timeout = {}\nsession_timeout = {}\ngrace = {}\nheartbeat_interval = {}\npoll_interval = {}\nmembership_proof = {}\nvariant = \"{variant}\"",
        ms(c.heartbeat_timeout.into()),
        ms(c.session_timeout.into()),
        ms(c.grace.into()),
        ms(c.heartbeat_interval.into()),
        ms(1),
        c.membership_proof
    );
    // The application works between pulses and asks `is_leader()` again, so
    // a member resumed from a pause acts on what its core answers then, as
    // the model judges it (`scenarios/FORMAT.md`, `app_work`).
    let _ = writeln!(out, "app_work = \"{}ms\"", (c.tick_ms / 2).max(1));
    let sim = sim_members(model, path);
    let moved: Vec<String> =
        sim.iter().enumerate().filter(|(m, s)| *m != **s as usize).map(|(m, s)| format!("m{m} as m{s}")).collect();
    if !moved.is_empty() {
        let _ = writeln!(out, "\n# model members renamed to the simulator's first assignment: {}", moved.join(", "));
    }
    // Who a fault on model member `m` in state `s` targets.
    let target = |s: &ElectionState, m: u8| {
        let leads = s.leaders(0);
        if leads.len() == 1 && leads[0].0.0 == m { "leader".to_owned() } else { format!("m{}", sim[m as usize]) }
    };
    // A pause, crash or isolation from `since` for `duration` ticks.
    let open_fault = |faults: &mut String, action: &ElectionAction, who: &str, since: u64, duration: u64| {
        let kind = match action {
            Pause(_) => "pause",
            Crash(_) => "crash",
            _ => "isolate-coordinator",
        };
        let _ = writeln!(
            faults,
            "\n[[faults]]\nat = {}\nkind = \"{kind}\"\ntarget = \"{who}\"\nduration = {}",
            ms(since),
            ms(duration)
        );
    };
    // Open faults (pause, crash, isolation) end at the matching healing step.
    let mut open: Vec<(ElectionAction, u64, String)> = Vec::new();
    let mut faults = String::new();
    for w in steps.windows(2) {
        let (action, t) = (w[0].1.expect("non-final step"), u64::from(w[0].0.now));
        let mut emit = |kind: &str, fields: String| {
            let _ = writeln!(faults, "\n[[faults]]\nat = {}\nkind = \"{kind}\"\n{fields}", ms(t));
        };
        match action {
            Pause(m) | Crash(m) | Isolate(m) => open.push((action, t, target(&w[0].0, m))),
            Resume(m) | Restart(m) | Heal(m) => {
                let opener = |a: &ElectionAction| match (a, action) {
                    (Pause(x), Resume(_)) | (Crash(x), Restart(_)) | (Isolate(x), Heal(_)) => *x == m,
                    _ => false,
                };
                if let Some(i) = open.iter().position(|(a, _, _)| opener(a)) {
                    let (a, since, who) = open.remove(i);
                    open_fault(&mut faults, &a, &who, since, t - since);
                }
            }
            ClockFast(m) => emit("clock-step", format!("target = \"{}\"\nby = {}", target(&w[0].0, m), ms(1))),
            Tick { slow: Some(m) } => {
                emit("clock-step", format!("target = \"{}\"\nby = \"-{}ms\"", target(&w[0].0, m), c.tick_ms))
            }
            Foreign => emit("foreign-writer", "partition = 0\ncount = 1\ngarbage = true".into()),
            Lose(m, k) => {
                let _ = writeln!(
                    faults,
                    "\n# at {}: message {k} in flight from m{} lost (not expressible in v1)",
                    ms(t),
                    sim[m as usize]
                );
            }
            Send(m, k) if k > 0 => {
                let _ = writeln!(
                    faults,
                    "\n# at {}: message {k} from m{} delivered out of order (not expressible in v1)",
                    ms(t),
                    sim[m as usize]
                );
            }
            _ => {}
        }
    }
    // A pause still open resumes one tick after the path ends (the member
    // runs again); other open faults last until the end of the run.
    for (a, since, who) in open {
        let until = if matches!(a, Pause(_)) { end + 1 } else { end + u64::from(c.session_timeout) * 2 };
        open_fault(&mut faults, &a, &who, since, until - since);
    }
    out.push_str(&faults);
    let _ = writeln!(out, "\n[expect]\nmax_overlap = \"0s\"");
    out
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
