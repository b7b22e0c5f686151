//! One test per hazard of docs/background.md, Hazards: the recommended configuration (T=1s,
//! S=3s, own heartbeats by send time, membership proof) survives it, and
//! a broken variant in the same story is flagged (every hazard has one).

use crate::{assert_flagged, assert_survives, scenario};

fn story(name: &str, election_extra: &str, cluster: &str, faults: &str) -> String {
    format!(
        "name = \"{name}\"\nduration = \"30s\"\n{cluster}\n[election]\nmembers = 3\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n{election_extra}\n{faults}\n[expect]\nmax_overlap = \"0s\"\n"
    )
}

const PAUSE: &str = "[[faults]]\nat = \"10s\"\nkind = \"pause\"\ntarget = \"leader\"\nduration = \"5s\"\n";

// Hazard 1: a leader paused longer than S resumes with late timers and
// buffered input; its lease ended on its own clock, so no overlap.
#[test]
fn hazard1_leader_pause_longer_than_session() {
    let s = scenario(&story("hazard1-pause", "", "", PAUSE));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(!r.figures.failovers_ms.is_empty(), "the pause hit the leader and someone took over");
    }
}

// Hazard 1/4 broken: a lease T=4s longer than S=3s outlives the paused
// leader's eviction, so two members hold the role (paper: T must be < S).
#[test]
fn hazard1_broken_lease_longer_than_session_overlaps() {
    let s = scenario(
        &story("hazard1-broken", "", "", PAUSE).replace("heartbeat_timeout = \"1s\"", "heartbeat_timeout = \"4s\""),
    );
    assert_flagged(&s, 1..4, "overlap");
}

// Hazard 1 broken (goNELI): the lease counted from *receipt* plus no
// membership proof. Latency makes the leader's last heartbeats arrive while
// it is paused; on resume it drains them and believes it leads for another T.
#[test]
fn hazard1_broken_lease_from_receipt_overlaps() {
    let latency = "[[faults]]\nat = \"10s\"\nkind = \"latency\"\na = \"leader\"\nb = \"b0\"\nlatency = \"400ms\"\nduration = \"6s\"\n";
    let text = story(
        "hazard1-receipt",
        "membership_proof = false\nvariant = \"lease-from-receipt\"",
        "",
        &format!("{PAUSE}{latency}"),
    );
    assert_flagged(&scenario(&text), 1..12, "overlap");
}

// Hazard 2: the resumed zombie writes stale heartbeats before its lost
// assignment reaches it; the new owner must ignore them (own evidence only).
#[test]
fn hazard2_zombie_heartbeats_do_not_extend_anyone() {
    let s = scenario(&story("hazard2-zombie", "", "", &PAUSE.replace("5s", "4s")));
    let mut zombies = 0;
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert_eq!(r.figures.stale_writes, 0);
        zombies += r.figures.zombie_heartbeats;
    }
    assert!(zombies > 0, "the hazard was reproduced: the resumed member wrote stale-term heartbeats");
}

// Hazard 2 broken: without the membership proof the resumed zombie reads
// back its own stale-term heartbeat before its lost assignment arrives and
// leads again next to the new leader (the measured real-broker behaviour).
#[test]
fn hazard2_broken_without_membership_proof_zombie_leads_again() {
    let text = story("hazard2-noproof", "membership_proof = false", "", PAUSE);
    assert_flagged(&scenario(&text), 1..80, "overlap");
}

// Hazard 2 broken (goNELI): counting any record as a heartbeat lets the
// zombie lead again on the new owner's records, with a reused token.
#[test]
fn hazard2_broken_any_record_counts() {
    let text = story("hazard2-anyrecord", "membership_proof = false\nvariant = \"any-record-counts\"", "", PAUSE);
    assert_flagged(&scenario(&text), 1..16, "role 0");
}

// Hazard 3: the leader reaches the partition leader (b1) but not the
// coordinator (b0): it keeps reading its own heartbeats after eviction. The
// membership proof bounds its lease anyway.
#[test]
fn hazard3_isolated_from_coordinator() {
    let cluster = "[cluster]\nbrokers = 2\ncoordinator = \"b0\"\npartition_leader = \"b1\"";
    let faults = "[[faults]]\nat = \"10s\"\nkind = \"isolate-coordinator\"\ntarget = \"leader\"\nduration = \"8s\"\n";
    let s = scenario(&story("hazard3-isolate", "", cluster, faults));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(!r.figures.failovers_ms.is_empty(), "the isolated leader was replaced");
    }
}

// Hazard 4: clock step backwards, fast drift on the leader: the lease is
// measured on one clock (send and expiry on the same member), so no skew
// assumption is needed.
#[test]
fn hazard4_clock_step_and_drift() {
    let faults = "[[faults]]\nat = \"8s\"\nkind = \"clock-drift\"\ntarget = \"leader\"\nppm = -50000\n[[faults]]\nat = \"12s\"\nkind = \"clock-step\"\ntarget = \"leader\"\nby = \"-2s\"\n[[faults]]\nat = \"16s\"\nkind = \"pause\"\ntarget = \"leader\"\nduration = \"4s\"\n";
    let s = scenario(&story("hazard4-clock", "", "", faults));
    for seed in 1..4 {
        assert_survives(&s, seed);
    }
}

// Hazard 4 broken: T >= S in exclusive mode (validation refuses it; the
// simulator bypasses validation to show why).
#[test]
fn hazard4_broken_t_not_below_s_overlaps() {
    let s = scenario(
        &story("hazard4-broken", "", "", PAUSE)
            .replace("heartbeat_timeout = \"1s\"", "heartbeat_timeout = \"2s\"")
            .replace("session_timeout = \"3s\"", "session_timeout = \"1s\""),
    );
    assert_flagged(&s, 1..4, "overlap");
}

// Hazard 5: socket drops, a stalled poll loop beyond max.poll.interval.ms
// while background heartbeats go on, and a broker restart losing its state.
#[test]
fn hazard5_drops_stalls_and_broker_restart() {
    let faults = "[[faults]]\nat = \"8s\"\nkind = \"drop-connections\"\ntarget = \"leader\"\n[[faults]]\nat = \"10s\"\nkind = \"stall-poll\"\ntarget = \"leader\"\nduration = \"6s\"\n[[faults]]\nat = \"20s\"\nkind = \"broker-crash\"\ntarget = \"b0\"\nduration = \"2s\"\nlose_state = true\n";
    let s = scenario(&story("hazard5-drops", "max_poll_interval = \"4s\"", "", faults));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(
            r.trace.iter().any(|l| l.contains("max.poll.interval.ms exceeded")),
            "the stall outlived max.poll.interval.ms"
        );
    }
}

// Hazard 5, the broker's side: it restarts without its data (topic,
// offsets, group). Members see what the real client sees (refused
// connections, their session lost on their own clock, the topic missing,
// their member id unknown), every live member rejoins, and a member says
// that the log (and with it the token sequence) restarted. Pins the real
// suite's broker-restart failure (neli/KAFKA.md, "Broker restart with state loss").
#[test]
fn hazard5_broker_restart_losing_state_every_live_member_rejoins() {
    let faults =
        "[[faults]]\nat = \"10s\"\nkind = \"broker-crash\"\ntarget = \"b0\"\nduration = \"2s\"\nlose_state = true\n";
    let s = scenario(&story("hazard5-state-loss", "", "", faults));
    let secs = |l: &str| l.split_whitespace().next().and_then(|t| t.trim_end_matches('s').parse::<f64>().ok());
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(r.figures.leader_at_end, "a leader after the restart (seed {seed})");
        let after_restart = |l: &&String| secs(l).is_some_and(|t| t > 12.0);
        for m in ["m0", "m1", "m2"] {
            let rejoined = r.trace.iter().filter(after_restart).any(|l| l.contains(&format!(" {m} joined generation")));
            assert!(rejoined, "{m} is back in the group after the restart (seed {seed})");
        }
        assert!(r.trace.iter().any(|l| l.contains("election topic created")), "a member recreated the topic");
        assert!(r.trace.iter().any(|l| l.contains("election log lost")), "a member said tokens restart");
    }
}

// Hazard 6: a stranger writes garbage and well-formed foreign heartbeats;
// nobody counts them.
#[test]
fn hazard6_foreign_writer_is_ignored() {
    let faults = "[[faults]]\nat = \"6s\"\nkind = \"foreign-writer\"\npartition = 0\ncount = 20\ngarbage = true\n[[faults]]\nat = \"7s\"\nkind = \"foreign-writer\"\npartition = 0\ncount = 20\ngarbage = false\n[[faults]]\nat = \"9s\"\nkind = \"pause\"\ntarget = \"leader\"\nduration = \"5s\"\n";
    let s = scenario(&story("hazard6-foreign", "", "", faults));
    for seed in 1..4 {
        assert_survives(&s, seed);
    }
}

// Hazard 6 broken: with any record counting, a stranger's garbage written
// while the leader is paused revives it on resume.
#[test]
fn hazard6_broken_any_record_counts_foreign_garbage() {
    let faults = format!(
        "{PAUSE}[[faults]]\nat = \"14900ms\"\nkind = \"foreign-writer\"\npartition = 0\ncount = 10\ngarbage = true\n"
    );
    let text = story("hazard6-anyrecord", "membership_proof = false\nvariant = \"any-record-counts\"", "", &faults);
    assert_flagged(&scenario(&text), 1..16, "role 0");
}

// Hazard 7: the leader closes while a rebalance is under way (a member
// crashed just before): events stay well-formed and someone else leads.
#[test]
fn hazard7_close_during_rebalance() {
    let faults = "[[faults]]\nat = \"10s\"\nkind = \"crash\"\ntarget = \"m2\"\n[[faults]]\nat = \"13s\"\nkind = \"close\"\ntarget = \"leader\"\n";
    let s = scenario(&story("hazard7-close", "", "", faults));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(r.trace.iter().any(|l| l.contains("closed (ok)")), "close finished");
    }
}

// The membership proof's caveat (docs/background.md, Protocol semantics): a commit is accepted during
// PreparingRebalance, and the partition moves once the rebalance timeout
// (max.poll.interval.ms) passes. A leader paused just after a rebalance
// began keeps a proven lease of T; with a rebalance timeout of 1 s below
// T = 2 s the next leader overlaps it. Found by this simulator: the rebalance
// timeout must exceed T plus the group heartbeat interval.
#[test]
fn membership_proof_broken_by_rebalance_timeout_below_lease() {
    let faults = "[[faults]]\nat = \"10s\"\nkind = \"crash\"\ntarget = \"m2\"\nduration = \"200ms\"\n[[faults]]\nat = \"10200ms\"\nkind = \"pause\"\ntarget = \"leader\"\nduration = \"5s\"\n";
    let text = story("proof-rebalance-timeout", "max_poll_interval = \"1s\"", "", faults)
        .replace("heartbeat_timeout = \"1s\"", "heartbeat_timeout = \"2s\"")
        .replace("session_timeout = \"3s\"", "session_timeout = \"6s\"");
    assert_flagged(&scenario(&text), 1..4, "overlap");
    // The same story with the default rebalance timeout (10 s) is safe.
    let safe =
        text.replace("max_poll_interval = \"1s\"", "").replace("proof-rebalance-timeout", "proof-rebalance-timeout-ok");
    assert_survives(&scenario(&safe), 1);
}

// Multi-role mode (NELI §4): 4 roles on 3 partitions (j mod M); a member
// crash and a pause move roles around without any role having two holders,
// and every role is led again at the end.
#[test]
fn multi_role_exclusive_survives_crash_and_pause() {
    let text = "name = \"multi-role\"\nduration = \"30s\"\n[election]\nmembers = 3\nmode = \"multi-role\"\nroles = 4\npartitions = 3\nexclusive = true\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n[[faults]]\nat = \"10s\"\nkind = \"crash\"\ntarget = \"m1\"\n[[faults]]\nat = \"15s\"\nkind = \"pause\"\ntarget = \"m0\"\nduration = \"5s\"\n[expect]\nmax_overlap = \"0s\"\n";
    for seed in 1..3 {
        let r = assert_survives(&scenario(text), seed);
        assert!(r.figures.acquisitions >= 8, "all four roles were acquired, then re-acquired");
        assert!(r.figures.leader_at_end);
    }
}

// Hazard 7: a barrier handler that calls close() from inside its Revoked
// callback (goNELI deadlocks). A rebalance (m2 restarts) revokes the leader;
// its handler closes the election; the close finishes and another member
// leads.
#[test]
fn hazard7_barrier_handler_calls_close() {
    let faults = "[[faults]]\nat = \"8s\"\nkind = \"close-in-handler\"\ntarget = \"leader\"\n[[faults]]\nat = \"10s\"\nkind = \"crash\"\ntarget = \"m2\"\nduration = \"1s\"\n";
    let s = scenario(&story("hazard7-handler-close", "", "", faults));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(r.trace.iter().any(|l| l.contains("Revoked handler calls close()")), "the handler ran");
        assert!(r.trace.iter().any(|l| l.contains("closed (ok)")), "close finished, no deadlock");
        assert!(r.figures.leader_at_end, "someone else leads");
    }
}

// Hazard 7 broken (goNELI): the barrier handler calls close() and then waits
// for the election to close. The loop waits for the handler, the handler for
// the loop: the revocation is never acknowledged, the group waits out the
// rebalance timeout (10 s) and the role has no leader meanwhile. The same
// story with our non-blocking close() hands over in about a second.
#[test]
fn hazard7_broken_handler_waiting_for_its_own_close_stalls_the_handover() {
    let faults = |kind: &str| {
        format!(
            "[[faults]]\nat = \"8s\"\nkind = \"{kind}\"\ntarget = \"leader\"\n[[faults]]\nat = \"10s\"\nkind = \"crash\"\ntarget = \"m2\"\nduration = \"1s\"\n"
        )
    };
    let bound = "[expect]\nmax_overlap = \"0s\"\nmax_gap = \"6s\"\n";
    let story7 =
        |name: &str, kind: &str| story(name, "", "", &faults(kind)).replace("[expect]\nmax_overlap = \"0s\"\n", bound);
    let broken = assert_flagged(&scenario(&story7("hazard7-deadlock", "close-and-wait-in-handler")), 1..4, "max_gap");
    assert!(broken.figures.gap_max_ms >= 9_000, "stalled until the rebalance timeout: {:?}", broken.figures);
    let ok = assert_survives(&scenario(&story7("hazard7-nonblocking", "close-in-handler")), 1);
    assert!(ok.figures.gap_max_ms < 3_000, "{:?}", ok.figures);
}

// Hazard 3 broken: no membership proof. The leader is cut off from the
// coordinator (it still reaches the partition leader b1, so it keeps reading
// its own heartbeats) and its poll loop stalls just before the client would
// report the lost assignment: its lease, counted from its last own
// heartbeat, outlives its eviction. With the proof the lease ends T after
// the last accepted commit, before the isolation began to matter.
#[test]
fn hazard3_broken_without_membership_proof_isolated_leader_overlaps() {
    let cluster = "[cluster]\nbrokers = 2\ncoordinator = \"b0\"\npartition_leader = \"b1\"";
    let faults = "[[faults]]\nat = \"10s\"\nkind = \"isolate-coordinator\"\ntarget = \"leader\"\nduration = \"8s\"\n[[faults]]\nat = \"12s\"\nkind = \"stall-poll\"\ntarget = \"leader\"\nduration = \"3s\"\n";
    assert_flagged(&scenario(&story("hazard3-noproof", "membership_proof = false", cluster, faults)), 1..6, "overlap");
    let s = scenario(&story("hazard3-proof", "", cluster, faults));
    for seed in 1..4 {
        assert_survives(&s, seed);
    }
}

// Hazard 5 broken: `max.poll.interval.ms` (the rebalance timeout) at or below
// T + S, which config validation rejects. A poll loop stalled while the
// background heartbeats go on makes the member leave the group after 1 s,
// while its last accepted commit still proves a lease of T = 2 s: the next
// leader starts inside it. The valid 10 s survives the same stall.
#[test]
fn hazard5_broken_rebalance_timeout_below_lease_overlaps_on_a_poll_stall() {
    let faults = "[[faults]]\nat = \"10s\"\nkind = \"stall-poll\"\ntarget = \"leader\"\nduration = \"5s\"\n";
    let t2 = |text: String| {
        text.replace(
            "heartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"",
            "heartbeat_timeout = \"2s\"\nsession_timeout = \"6s\"",
        )
    };
    let broken = t2(story("hazard5-short-rebalance", "max_poll_interval = \"1s\"", "", faults));
    assert_flagged(&scenario(&broken), 1..4, "overlap");
    let valid = scenario(&t2(story("hazard5-valid-rebalance", "max_poll_interval = \"10s\"", "", faults)));
    for seed in 1..4 {
        assert_survives(&valid, seed);
    }
}

/// A fault aimed at a moment of the protocol (`on`, scenarios/FORMAT.md):
/// armed at `at`, it starts when the target's first membership proof after
/// that is accepted, not at `at` (m0 gets partition 0 and proves; a member
/// with no partition sends no proof, and its fault would never start); it round-trips through the file format,
/// and the same seed plays it at the same instant.
#[test]
fn a_triggered_pause_starts_when_the_targets_proof_is_accepted() {
    let s = crate::scenario(
        r#"
name = "triggered-pause"
duration = "12s"

[election]
members = 2
heartbeat_timeout = "1s"
session_timeout = "3s"

[[faults]]
at = "0s"
on = "proof-accepted"
kind = "pause"
target = "m0"
duration = "500ms"
"#,
    );
    let back = neli_sim::Scenario::parse(&s.to_toml(&[]).expect("writable"), "back.toml").expect("reads back");
    assert_eq!(back.timed_faults().collect::<Vec<_>>(), s.timed_faults().collect::<Vec<_>>());
    let r = crate::assert_survives(&s, 3);
    let at = |needle: &str| {
        r.trace.iter().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle:?} in the trace")).clone()
    };
    let armed = at("armed: pause on m0: proof-accepted");
    let fired = at("sim m0: proof-accepted");
    let paused = at("sim pause m0 for 500ms");
    assert!(armed.trim_start().starts_with("0.000s"), "{armed}");
    // The group forms after a few seconds: the pause waits for it.
    let secs = |l: &str| l.trim_start().split('s').next().and_then(|t| t.parse::<f64>().ok()).expect("a time");
    assert!(secs(&fired) > 1.0, "fired before any proof could be accepted: {fired}");
    assert_eq!(secs(&fired), secs(&paused), "{fired} / {paused}");
    assert_eq!(crate::assert_survives(&s, 3).trace, r.trace, "the same seed plays the same trace");
}
