//! Counterexamples for humans and for the simulator: one line per step
//! (tick, member, action, resulting leadership), and the same path written as
//! a scenario file (`scenarios/FORMAT.md`) with a fault timeline.

use std::fmt::Write;

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

/// The path as a scenario file for `neli-sim` to replay. Faults the format
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
    // A pause, crash or isolation of member `m` from `since` for `duration` ticks.
    let open_fault = |faults: &mut String, action: &ElectionAction, m: u8, since: u64, duration: u64| {
        let kind = match action {
            Pause(_) => "pause",
            Crash(_) => "crash",
            _ => "isolate-coordinator",
        };
        let _ = writeln!(
            faults,
            "\n[[faults]]\nat = {}\nkind = \"{kind}\"\ntarget = \"m{m}\"\nduration = {}",
            ms(since),
            ms(duration)
        );
    };
    // Open faults (pause, crash, isolation) end at the matching healing step.
    let mut open: Vec<(ElectionAction, u64)> = Vec::new();
    let mut faults = String::new();
    for w in steps.windows(2) {
        let (action, t) = (w[0].1.expect("non-final step"), u64::from(w[0].0.now));
        let mut emit = |kind: &str, fields: String| {
            let _ = writeln!(faults, "\n[[faults]]\nat = {}\nkind = \"{kind}\"\n{fields}", ms(t));
        };
        match action {
            Pause(_) | Crash(_) | Isolate(_) => open.push((action, t)),
            Resume(m) | Restart(m) | Heal(m) => {
                let opener = |a: &ElectionAction| match (a, action) {
                    (Pause(x), Resume(_)) | (Crash(x), Restart(_)) | (Isolate(x), Heal(_)) => *x == m,
                    _ => false,
                };
                if let Some(i) = open.iter().position(|(a, _)| opener(a)) {
                    let (a, since) = open.remove(i);
                    open_fault(&mut faults, &a, m, since, t - since);
                }
            }
            ClockFast(m) => emit("clock-step", format!("target = \"m{m}\"\nby = {}", ms(1))),
            Tick { slow: Some(m) } => emit("clock-step", format!("target = \"m{m}\"\nby = \"-{}ms\"", c.tick_ms)),
            Foreign => emit("foreign-writer", "partition = 0\ncount = 1\ngarbage = true".into()),
            Lose(m, k) => {
                let _ =
                    writeln!(faults, "\n# at {}: message {k} in flight from m{m} lost (not expressible in v1)", ms(t));
            }
            Send(m, k) if k > 0 => {
                let _ = writeln!(
                    faults,
                    "\n# at {}: message {k} from m{m} delivered out of order (not expressible in v1)",
                    ms(t)
                );
            }
            _ => {}
        }
    }
    // Faults still open at the end of the path last until the end of the run.
    for (a, since) in open {
        let m = actor(&a).unwrap_or(0);
        open_fault(&mut faults, &a, m, since, end + u64::from(c.session_timeout) * 2 - since);
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
