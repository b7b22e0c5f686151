//! Faults that overlap on one target mean what scenarios/FORMAT.md,
//! "Overlapping faults", says: pauses nest, a link stays cut until its last
//! cut ends, a pause that begins before the process started holds it, a
//! crash ends its process's pauses, and a process fault on a member that
//! is down does nothing, saying so.

use crate::{assert_survives, scenario};

/// Seconds of a trace line ("   12.345s m1 …").
fn secs(line: &str) -> f64 {
    line.split_whitespace().next().and_then(|t| t.trim_end_matches('s').parse().ok()).unwrap_or(f64::NAN)
}

/// Lines of host `host` containing `text`, with their instants.
fn lines_of(trace: &[String], host: &str, text: &str) -> Vec<f64> {
    trace.iter().filter(|l| l.split_whitespace().nth(1) == Some(host) && l.contains(text)).map(|l| secs(l)).collect()
}

// Two pauses of m1, the second inside the first. Proves m1 runs again only
// when the outer one ends: one resume, at 15 s, and no line of m1's in
// between (it used to resume at the inner one's end).
#[test]
fn nested_pauses_resume_when_the_last_one_ends() {
    let s = scenario(include_str!("scenarios/overlap-nested-pauses.toml"));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        let resumes = lines_of(&r.trace, "sim", "resume m1");
        assert_eq!(resumes, vec![15.0], "one resume, when the 10 s pause ends (seed {seed})");
        let acts = r.trace.iter().filter(|l| {
            let t = secs(l);
            l.split_whitespace().nth(1).is_some_and(|h| h == "m1") && t > 5.5 && t < 15.0
        });
        assert_eq!(acts.count(), 0, "m1 does nothing while either pause holds it (seed {seed})");
    }
}

// A pause at 0 s. Proves it holds the member from its first step: m2 joins,
// but only after the pause (it used to be erased when the process started).
#[test]
fn a_pause_before_the_member_starts_holds_it() {
    let s = scenario(include_str!("scenarios/overlap-pause-at-start.toml"));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        let joins = lines_of(&r.trace, "m2", "joined generation");
        assert!(!joins.is_empty(), "m2 joins once resumed (seed {seed})");
        assert!(joins.iter().all(|t| *t >= 6.0), "m2 joined at {joins:?}, inside its pause (seed {seed})");
    }
}

// Two cuts of the m1–b0 link, the second inside the first. Proves the link
// stays cut until the outer one ends: m1 does not rejoin between 5 s and
// 15 s, and does after.
#[test]
fn a_link_stays_cut_until_its_last_cut_ends() {
    let s = scenario(include_str!("scenarios/overlap-nested-cuts.toml"));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        let joins = lines_of(&r.trace, "m1", "joined generation");
        assert!(
            joins.iter().all(|t| !(5.0..15.0).contains(t)),
            "m1 joined through a cut link at {joins:?} (seed {seed})"
        );
        assert!(joins.iter().any(|t| *t >= 15.0), "m1 rejoins after the outer cut (seed {seed})");
    }
}

// Two crashes of m1, the second while it is down. Proves the member comes
// back once, when its last restart is due (13 s).
#[test]
fn overlapping_crashes_restart_once_at_the_last_restart() {
    let r = assert_survives(&scenario(include_str!("scenarios/overlap-crashes.toml")), 1);
    assert_eq!(lines_of(&r.trace, "sim", "restart m1"), vec![13.0], "{:#?}", r.trace);
}

/// m1 is crashed at 5 s for 4 s and a `kind` fault aimed at it at 7 s
/// (`text`, the story's file). Proves the fault does nothing and the trace
/// says so at 7 s, the restarted process rejoins at once (between 9 s and
/// 15 s), and it is not closed or resigned by the fault. Clock faults, by
/// contrast, still apply to a member that is down.
fn a_process_fault_on_a_member_that_is_down_does_nothing(kind: &str, text: &str) {
    let r = assert_survives(&scenario(text), 1);
    let said = lines_of(&r.trace, "sim", &format!("m1 is down: the {kind} does nothing"));
    assert_eq!(said, vec![7.0], "{kind}: {:#?}", r.trace);
    let back = lines_of(&r.trace, "m1.1", "joined generation");
    assert!(back.iter().any(|t| *t > 9.0 && *t < 15.0), "{kind}: the restarted m1 rejoins at once: {back:?}");
    assert!(lines_of(&r.trace, "m1.1", "closed").is_empty() && lines_of(&r.trace, "m1.1", "resigned").is_empty());
}

#[test]
fn a_pause_of_a_member_that_is_down_does_nothing() {
    a_process_fault_on_a_member_that_is_down_does_nothing("pause", include_str!("scenarios/overlap-down-pause.toml"));
}

#[test]
fn a_poll_stall_of_a_member_that_is_down_does_nothing() {
    let text = include_str!("scenarios/overlap-down-stall-poll.toml");
    a_process_fault_on_a_member_that_is_down_does_nothing("stall-poll", text);
}

#[test]
fn a_close_of_a_member_that_is_down_does_nothing() {
    a_process_fault_on_a_member_that_is_down_does_nothing("close", include_str!("scenarios/overlap-down-close.toml"));
}

#[test]
fn a_resign_of_a_member_that_is_down_does_nothing() {
    a_process_fault_on_a_member_that_is_down_does_nothing("resign", include_str!("scenarios/overlap-down-resign.toml"));
}

// m1 paused, killed and restarted, then its new process paused. Proves a
// pause of the killed process does not end its successor's pause early:
// the only resume is the successor's, at 15 s (each resume belongs to the
// process it paused).
#[test]
fn a_resume_of_a_killed_process_does_not_end_its_successors_pause() {
    let s = scenario(include_str!("scenarios/overlap-resume-after-crash.toml"));
    let r = assert_survives(&s, 1);
    assert_eq!(lines_of(&r.trace, "sim", "resume m1"), vec![15.0], "{:#?}", r.trace);
}
