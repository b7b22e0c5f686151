//! Every counterexample `check` prints replays in the simulator
//! (scenarios/README.md, "Counterexamples that replay"): for each known-unsafe
//! setting, in each mode, group protocol and fault family where the model
//! finds it, `check` at the smallest bounds that find the violation must
//! find it, and the simulator must reproduce every counterexample it
//! prints. A counterexample that does not replay fails its row with the
//! scenario file attached.
//!
//! The rows at `check`'s default bounds take a minute each in a release
//! build: `scripts/check-replays.sh` runs them (in `.ci/run`, after the gate).
//! Every row replays; the properties whose counterexample a row's
//! simulator run does not show, and why, are in [`PROPERTY_GAPS`].

use neli_models::election::property;
use neli_models::trace::cuts_off_a_running_member;

use crate::{lab, scratch, stdout};

/// Runs `check` on one thread (the counterexample BFS finds first is then
/// always the same) with `args`, trying each counterexample on `sim_seeds`
/// seeds, and asserts that it finds a violation; returns its output and
/// the command line.
fn check_finds(dir: &str, args: &str, sim_seeds: &str) -> (String, String) {
    let out = scratch(&format!("replay_sweep/{dir}"));
    let out_text = out.display().to_string();
    let mut argv = vec!["check", "--threads", "1", "--sim-seeds", sim_seeds, "--out", &out_text];
    argv.extend(args.split_whitespace());
    let o = lab(&argv);
    let (text, command) = (stdout(&o), argv.join(" "));
    assert_eq!(o.status.code(), Some(1), "{dir}: `neli-lab {command}` finds no violation:\n{text}");
    (text, command)
}

/// Asserts that `check` with `args` finds a violation and that the
/// simulator reproduces every counterexample it prints as a break of the
/// same guarantee, except the properties [`PROPERTY_GAPS`] lists for `row`:
/// those must still be found and still not replay (a gap that closes is
/// taken off the list).
fn replays(row: &str, args: &str) {
    let (text, command) = check_finds(row, args, "20");
    let mut property = "";
    let mut judged = 0;
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("VIOLATED  ") {
            property = p.trim();
        } else if line.starts_with("replay ") {
            judged += 1;
            let gap = PROPERTY_GAPS.iter().find(|(r, p, _)| *r == row && *p == property);
            let reproduced = line.starts_with("replay    REPRODUCED");
            match gap {
                None if reproduced => {}
                None => panic!(
                    "{row}: the counterexample of \"{property}\" does not replay (`neli-lab {command}`):\n{line}\n{}\n--- check's output\n{text}",
                    scenario_of(&text, property)
                ),
                Some(_) if reproduced => {
                    panic!("{row}: \"{property}\" replays now: take it off PROPERTY_GAPS\n{text}")
                }
                Some(_) => {}
            }
        }
    }
    let violated = text.lines().filter(|l| l.starts_with("VIOLATED")).count();
    assert!(violated > 0 && judged == violated, "{row}: one replay per counterexample:\n{text}");
    // A cut-off leader's stale write shows only with its application
    // asking on its own; the survivor's, beside a paused member's
    // isolation, with its pulsed one (`neli_models::Replay::showing`).
    if let Some(file) = scenario_file(&text, property::RESOURCE) {
        let s = neli_sim::Scenario::load(std::path::Path::new(&file)).expect("check writes scenarios that load");
        let background = s.election.app_loop == neli_sim::scenario::AppLoop::Background;
        // The read-back stall holds a successor's election loop, which only
        // the background application lets it do (the translation sets it).
        let stalled_successor = s.timed_faults().any(|f| {
            f.on == Some(neli_sim::scenario::Trigger::Assigned)
                && f.fault.kind() == neli_sim::scenario::FaultKind::StallPoll
        });
        if cuts_off_a_running_member(&s) {
            assert!(
                background,
                "{row}: the resource scenario cuts a member off but is pulsed:\n{}",
                scenario_of(&text, property::RESOURCE)
            );
        } else if !stalled_successor {
            assert!(
                !background,
                "{row}: the resource scenario cuts nobody off but runs in the background:\n{}",
                scenario_of(&text, property::RESOURCE)
            );
        }
    }
    for (r, p, why) in PROPERTY_GAPS.iter().filter(|(r, ..)| *r == row) {
        assert!(!why.is_empty(), "{r}: a gap says why");
        assert!(text.contains(&format!("VIOLATED  {p}")), "{row}: the listed gap \"{p}\" is no longer found:\n{text}");
    }
}

/// The path of the scenario file `check` wrote for `property`, if it
/// found that property violated.
fn scenario_file(text: &str, property: &str) -> Option<String> {
    let block = text.split("VIOLATED  ").find(|b| b.starts_with(property))?;
    block.lines().find_map(|l| l.strip_prefix("scenario  ")).map(|f| f.trim().to_owned())
}

/// The scenario file `check` wrote for `property`, with its text.
fn scenario_of(text: &str, property: &str) -> String {
    let Some(file) = scenario_file(text, property) else {
        return "(no scenario file)".into();
    };
    let body = std::fs::read_to_string(&file).unwrap_or_else(|e| format!("({e})"));
    format!("--- {file}\n{body}")
}

/// Counterexamples of rows that replay whose property the simulator does
/// not show (it shows the overlap, or nothing), each with the reason
/// (scenarios/README.md, "Counterexamples that replay"): row, property, why.
pub const PROPERTY_GAPS: &[(&str, &str, &str)] = &[
    ("multi_role_consumer_without_grace", property::RESOURCE, MULTI_ROLE_RESOURCE_WHY),
    ("multi_role_classic_pause_without_proof", property::TOKENS, STALLED_WRITER_WHY),
    ("multi_role_classic_pause_without_proof", property::RESOURCE, STALLED_WRITER_WHY),
    (
        "multi_role_cooperative_skip_revoked_barrier",
        property::TOKENS,
        "the model's tick holds the eviction's rebalance, the paused member's rejoin and the second rebalance that hands \
         it the partition at once; in the simulator the resumed member's client reports its assignment lost (session \
         timed out) and rejoins, and the second rebalance comes about 0.9 s after the first, taking the partition back \
         from the survivor before it acquires (it waits T after the paused member's last heartbeat there)",
    ),
    (
        "exclusive_static_pause_without_grace",
        property::TOKENS,
        "the model's tick is coarser than the order of the original's steps: resumed in the tick its replacement took its \
         static id and led, it reads back its heartbeat and takes the proof it sent at the same tick for one sent at or \
         after the read, so it acquires with the older token; in the simulator that proof went out before the read, and \
         the resumed original, fenced by its replacement (FENCED_INSTANCE_ID), cannot send another, so it never acquires again",
    ),
];

const STALLED_WRITER_WHY: &str = "the model's survivor writes its heartbeat on the partition it is dealt and reads \
     it back only after the resumed member acquired with a newer one; in the simulator the stall that holds the \
     survivor's reading (aimed at its assignment) also keeps its application from seeing the assignment, so it writes \
     nothing there before the resumed member rejoins and the partition goes back to it (the resumed member's own \
     acquisition replays: its client starts the partition as the assignment reaches its application, before its \
     heartbeat; the overlap replays)";
const MULTI_ROLE_RESOURCE_WHY: &str = "the member whose group heartbeats fail leads role 1; in the simulator its \
     pulses keep the phase of its group heartbeats, from which its session is counted, so the proof it sends as the \
     coordinator evicts it is refused and it is fenced at once, inside the stall the translation aims to keep it from \
     hearing of its loss; the model's member had its last proof accepted a tick before the eviction and leads on \
     into the tick its successor acquires in (with the members swapped, role 0's holder overlaps its successor, but the \
     stall of its pulsed loop holds its writes)";

/// One row of the sweep: its name says mode, protocol, fault family and
/// the unsafe setting; the flags are the smallest bounds that find it.
macro_rules! row {
    ($name:ident, $args:expr) => {
        #[test]
        fn $name() {
            replays(stringify!($name), $args);
        }
    };
}

// The membership proof off (goNELI): a member that lost its membership
// leads on its own heartbeats.
row!(exclusive_classic_pause_without_proof, "--no-membership-proof --isolations 0");
row!(exclusive_classic_isolation_without_proof, "--no-membership-proof --pauses 0");
row!(exclusive_cooperative_pause_without_proof, "--no-membership-proof --isolations 0 --assignment cooperative-sticky");
row!(exclusive_cooperative_isolation_without_proof, "--no-membership-proof --pauses 0 --assignment cooperative-sticky");
// In multi-role and non-exclusive mode the eager rebalance after the paused
// member's eviction takes the survivor's revocation first, in the simulator
// a tick and a half after the model's.
row!(multi_role_classic_pause_without_proof, "--mode multi-role --no-membership-proof");
row!(non_exclusive_classic_pause_without_proof, "--mode non-exclusive --no-membership-proof");
// T = S: a leader whose clock runs a tick slow keeps its lease past its
// session, while the successor leads.
row!(
    exclusive_classic_clock_step_t_equal_s,
    "--members 2 --heartbeat-timeout 4 --session-timeout 4 --isolations 0 --clock-steps 1"
);
// A cooperative coordinator that hands a moving partition on at once: the
// new owner acquires while the old one's Revoked handler still writes.
row!(
    multi_role_cooperative_skip_revoked_barrier,
    "--variant skip-revoked-barrier --assignment cooperative-sticky --mode multi-role --members 2 --ticks 4"
);
row!(
    exclusive_consumer_isolation_without_proof,
    "--group-protocol consumer --grace 3 --no-membership-proof --members 2 --pauses 0 --heartbeat-failures 0"
);
// The core's unsafe variants (goNELI's lease basis and record rule).
row!(exclusive_classic_pause_lease_from_receipt, "--variant lease-from-receipt --isolations 0");
row!(
    exclusive_classic_pause_any_record_counts,
    "--members 2 --variant any-record-counts --no-membership-proof --isolations 0"
);
// The consumer protocol without a grace of T: the coordinator hands the
// partition on while the old leader's last proof still holds.
row!(
    exclusive_consumer_heartbeat_failure_without_grace,
    "--group-protocol consumer --members 2 --pauses 0 --isolations 0"
);
// A leader cut off the coordinator keeps its last proof's lease while the
// successor leads: the resource sees the old token after the new one
// (the cut-off leader's application runs the election in the background).
row!(exclusive_consumer_isolation_without_grace, "--group-protocol consumer --members 2 --heartbeat-failures 0");
row!(
    exclusive_consumer_log_loss_without_grace,
    "--group-protocol consumer --members 2 --pauses 0 --isolations 0 --log-losses 1"
);

// Multi-role under the consumer protocol without a grace: the second
// member takes both roles while the first's last proof still holds one.
row!(multi_role_consumer_without_grace, "--group-protocol consumer --mode multi-role --pauses 0");
// Static membership without a grace: the replacement takes the role while
// the paused original's proof still holds.
row!(exclusive_static_pause_without_grace, "--members 2 --static-replacements 1 --isolations 0");
// Static membership with a grace of exactly T: a clock one tick slow keeps
// the paused original's lease past the replacement's wait (neli asks
// G >= T + 10 % for the clocks' drift).
row!(
    exclusive_static_clock_step_grace_of_t,
    "--members 2 --static-replacements 1 --isolations 0 --grace 2 --clock-steps 1"
);
