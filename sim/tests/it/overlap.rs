//! Faults that overlap on one target mean what scenarios/FORMAT.md,
//! "Overlapping faults", says: pauses nest, a link stays cut until its last
//! cut ends, a pause that begins before the process started holds it, a
//! crash ends its process's pauses, and a process fault on a member that
//! is down does nothing, saying so.

use crate::{assert_survives, scenario};

fn story(name: &str, faults: &str) -> String {
    format!(
        "name = \"{name}\"\nduration = \"30s\"\n[election]\nmembers = 3\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n{faults}\n[expect]\nmax_overlap = \"0s\"\n"
    )
}

fn fault(at: &str, kind: &str, rest: &str) -> String {
    format!("[[faults]]\nat = \"{at}\"\nkind = \"{kind}\"\n{rest}\n")
}

/// Seconds of a trace line ("   12.345s m1 …").
fn secs(line: &str) -> f64 {
    line.split_whitespace().next().and_then(|t| t.trim_end_matches('s').parse().ok()).unwrap_or(f64::NAN)
}

/// Lines of host `host` containing `text`, with their instants.
fn lines_of(trace: &[String], host: &str, text: &str) -> Vec<f64> {
    trace.iter().filter(|l| l.split_whitespace().nth(1) == Some(host) && l.contains(text)).map(|l| secs(l)).collect()
}

// Two pauses of m1, the second inside the first: m1 runs again only when
// the outer one ends (it used to resume at the inner one's end).
#[test]
fn nested_pauses_resume_when_the_last_one_ends() {
    let faults = fault("5s", "pause", "target = \"m1\"\nduration = \"10s\"")
        + &fault("8s", "pause", "target = \"m1\"\nduration = \"2s\"");
    let s = scenario(&story("overlap-nested-pauses", &faults));
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

// A pause at 0 s holds the member from its first step: it joins only
// after the pause (it used to be erased when the process started).
#[test]
fn a_pause_before_the_member_starts_holds_it() {
    let s = scenario(&story("overlap-pause-at-start", &fault("0s", "pause", "target = \"m2\"\nduration = \"6s\"")));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        let joins = lines_of(&r.trace, "m2", "joined generation");
        assert!(!joins.is_empty(), "m2 joins once resumed (seed {seed})");
        assert!(joins.iter().all(|t| *t >= 6.0), "m2 joined at {joins:?}, inside its pause (seed {seed})");
    }
}

// Two cuts of the m1–b0 link, the second inside the first: the link stays
// cut until the outer one ends, so m1 cannot rejoin before 15 s.
#[test]
fn a_link_stays_cut_until_its_last_cut_ends() {
    let faults = fault("5s", "partition", "a = \"m1\"\nb = \"b0\"\nduration = \"10s\"")
        + &fault("8s", "partition", "a = \"m1\"\nb = \"b0\"\nduration = \"2s\"");
    let s = scenario(&story("overlap-nested-cuts", &faults));
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

// A crash brings the member back once, with its last restart due.
#[test]
fn overlapping_crashes_restart_once_at_the_last_restart() {
    let faults = fault("5s", "crash", "target = \"m1\"\nduration = \"8s\"")
        + &fault("7s", "crash", "target = \"m1\"\nduration = \"2s\"");
    let r = assert_survives(&scenario(&story("overlap-crashes", &faults)), 1);
    assert_eq!(lines_of(&r.trace, "sim", "restart m1"), vec![13.0], "{:#?}", r.trace);
}

// Faults on the process of a member that a crash keeps down do nothing
// and the trace says so; the restarted process is not paused, closed or
// resigned by them. Clock faults still apply.
#[test]
fn process_faults_on_a_member_that_is_down_do_nothing() {
    let crash = fault("5s", "crash", "target = \"m1\"\nduration = \"4s\"");
    for (kind, rest) in [
        ("pause", "target = \"m1\"\nduration = \"10s\""),
        ("stall-poll", "target = \"m1\"\nduration = \"10s\""),
        ("close", "target = \"m1\""),
        ("resign", "target = \"m1\""),
    ] {
        let s = scenario(&story(&format!("overlap-down-{kind}"), &(crash.clone() + &fault("7s", kind, rest))));
        let r = assert_survives(&s, 1);
        let said = lines_of(&r.trace, "sim", &format!("m1 is down: the {kind} does nothing"));
        assert_eq!(said, vec![7.0], "{kind}: {:#?}", r.trace);
        let back = lines_of(&r.trace, "m1.1", "joined generation");
        assert!(back.iter().any(|t| *t > 9.0 && *t < 15.0), "{kind}: the restarted m1 rejoins at once: {back:?}");
        assert!(lines_of(&r.trace, "m1.1", "closed").is_empty() && lines_of(&r.trace, "m1.1", "resigned").is_empty());
    }
}

// A pause of the killed process does not end a later pause of its
// successor early: each resume belongs to the process it paused.
#[test]
fn a_resume_of_a_killed_process_does_not_end_its_successors_pause() {
    let faults = fault("0s", "pause", "target = \"m1\"\nduration = \"10s\"")
        + &fault("1s", "crash", "target = \"m1\"\nduration = \"1s\"")
        + &fault("5s", "pause", "target = \"m1\"\nduration = \"10s\"");
    let s = scenario(&story("overlap-resume-after-crash", &faults));
    let r = assert_survives(&s, 1);
    assert_eq!(lines_of(&r.trace, "sim", "resume m1"), vec![15.0], "{:#?}", r.trace);
}
