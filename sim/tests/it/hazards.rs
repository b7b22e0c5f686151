//! One story per hazard of docs/background.md, Hazards: the recommended
//! configuration (T = 1 s, S = 3 s, own heartbeats by send time, membership
//! proof) survives it, and a broken variant of the same story is flagged
//! (every hazard has one). Each story is a file under `scenarios/`, so a
//! failure replays with the `run` example.

use neli_sim::scenario::FaultKind;
use neli_sim::{Bound, Rule};

use crate::{assert_flagged, assert_survives, scenario};

// Hazard 1. Proves that a leader paused past its session stops leading on
// its own clock before the successor starts (no overlap in any seed), and
// that the pause really cost it the role (a failover was measured).
// Reference: NELI §3 — exclusivity needs the lease to end before the group
// can hand the partition to someone else.
#[test]
fn paused_leader_stops_leading_before_successor_starts() {
    let s = scenario(include_str!("scenarios/paused-leader.toml"));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(!r.figures.failovers_ms.is_empty(), "the pause hit the leader and someone took over");
    }
}

// Hazard 1 broken. Proves the overlap oracle sees a lease (T = 4 s) that
// outlives the session (S = 3 s): the paused leader still holds the role when
// its successor takes it.
// Reference: NELI §3 — T must be below S.
#[test]
fn a_lease_longer_than_the_session_overlaps_the_successor() {
    let s = scenario(include_str!("scenarios/broken-lease-longer-than-session.toml"));
    assert_flagged(&s, 1..4, &[Rule::Overlap]);
}

// Hazard 1 broken (goNELI). Proves that counting a lease from receipt lets
// heartbeats drained after a pause extend a dead lease: the resumed leader
// believes it leads for another T beside its successor.
#[test]
fn a_lease_counted_from_receipt_outlives_a_pause() {
    let s = scenario(include_str!("scenarios/broken-lease-from-receipt.toml"));
    assert_flagged(&s, 1..60, &[Rule::Overlap]);
}

// Hazard 2. Proves that the stale-term heartbeats a resumed zombie writes
// before its lost assignment reaches it extend nobody (no stale write in any
// seed), and that the story does produce them (else it proves nothing).
#[test]
fn zombie_heartbeats_of_a_resumed_leader_extend_nobody() {
    let s = scenario(include_str!("scenarios/zombie-heartbeats.toml"));
    let mut zombies = 0;
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert_eq!(r.figures.stale_writes, 0);
        zombies += r.figures.zombie_heartbeats;
    }
    assert!(zombies > 0, "the hazard was reproduced: the resumed member wrote stale-term heartbeats");
}

// Hazard 2 broken. Proves the membership proof carries weight: without it the
// resumed zombie reads back its own stale-term heartbeat before its lost
// assignment arrives and leads again next to the new leader (the measured
// real-broker behaviour).
#[test]
fn without_the_proof_a_resumed_zombie_leads_again() {
    let s = scenario(include_str!("scenarios/broken-zombie-without-proof.toml"));
    assert_flagged(&s, 1..80, &[Rule::Overlap]);
}

// Hazard 2 broken (goNELI). Proves that own evidence only carries weight:
// counting any record lets the zombie lead again on the new owner's records,
// with a reused token.
#[test]
fn counting_any_record_lets_a_zombie_lead_on_its_successors_records() {
    let s = scenario(include_str!("scenarios/broken-any-record-counts.toml"));
    assert_flagged(&s, 1..16, &[Rule::Overlap, Rule::TokenNotIncreasing]);
}

// Hazard 3. Proves that a leader which still reads its own heartbeats but
// cannot reach the coordinator loses the role without overlap (the
// membership proof bounds its lease), and that it was replaced.
#[test]
fn a_leader_cut_off_from_the_coordinator_is_replaced_without_overlap() {
    let s = scenario(include_str!("scenarios/leader-isolated-from-coordinator.toml"));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(!r.figures.failovers_ms.is_empty(), "the isolated leader was replaced");
    }
}

// Hazard 3 broken. Proves the membership proof bounds an isolated leader's
// lease: without it, a leader cut off from the coordinator whose poll loop
// stalls just before its client reports the loss keeps a lease, counted from
// its last own heartbeat, past its eviction. It overlaps where the
// survivors' next group heartbeats come soon after the eviction, so that the
// rebalance hands the role on within T: 7 of seeds 0..99, the first 27.
#[test]
fn without_the_proof_an_isolated_stalled_leader_overlaps() {
    let s = scenario(include_str!("scenarios/broken-isolated-stalled-without-proof.toml"));
    assert_flagged(&s, 1..100, &[Rule::Overlap]);
}

// Hazard 3, the same story with the proof on. Proves the lease ends T after
// the last accepted commit, before the isolation began to matter: no seed
// overlaps.
#[test]
fn with_the_proof_an_isolated_stalled_leader_stops_in_time() {
    let s = scenario(include_str!("scenarios/isolated-stalled-leader.toml"));
    for seed in 1..4 {
        assert_survives(&s, seed);
    }
}

// Hazard 4. Proves no skew assumption is needed: the lease is measured on
// one clock (send and expiry on the same member), so a leader whose clock
// drifts, steps back and then pauses never overlaps its successor.
#[test]
fn a_leader_whose_clock_drifts_and_steps_back_keeps_exclusivity() {
    let s = scenario(include_str!("scenarios/leader-clock-drift-step-pause.toml"));
    for seed in 1..4 {
        assert_survives(&s, seed);
    }
}

// Hazard 4 broken. Proves why validation refuses T >= S in exclusive mode
// (the simulator bypasses it): T = 2 s with S = 1 s overlaps after a pause.
// Reference: NELI §3 — exclusivity needs the lease to end before the group
// can hand the partition to someone else.
#[test]
fn a_lease_not_below_the_session_overlaps() {
    let s = scenario(include_str!("scenarios/broken-lease-not-below-session.toml"));
    assert_flagged(&s, 1..4, &[Rule::Overlap]);
}

// Hazard 5. Proves that socket drops, a poll loop stalled beyond
// max.poll.interval.ms while background heartbeats go on, and a broker restart
// that loses its state, in one run, never give two leaders; and that the
// stall did outlive max.poll.interval.ms (the client left the group).
#[test]
fn drops_a_poll_stall_and_a_broker_restart_never_give_two_leaders() {
    let s = scenario(include_str!("scenarios/drops-stall-broker-restart.toml"));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(
            r.trace.iter().any(|l| l.contains("max.poll.interval.ms exceeded")),
            "the stall outlived max.poll.interval.ms"
        );
    }
}

// Hazard 5, a stall across the lease's end. Proves that a lease that ended
// while the poll loop stalled stays ended: when the loop runs again it reads
// the heartbeats it sent before the stall, still fresh, and the core must
// fence the ended term before they count, so no heartbeat claims it
// afterwards (rule heartbeat-lease) and any new term has a new token
// (docs/background.md, "Protocol semantics": a lease is over at its end).
// Before the core fenced first, seeds 0, 2, 10, 11 and 17 broke it.
#[test]
fn a_lease_that_ends_in_a_poll_stall_stays_ended() {
    let s = scenario(include_str!("scenarios/lease-ends-in-a-stall.toml"));
    let secs = |l: &str| l.split_whitespace().next().and_then(|t| t.trim_end_matches('s').parse::<f64>().ok());
    let mut fenced_at_resume = 0;
    for seed in 0..20 {
        let r = assert_survives(&s, seed);
        let stall = r.faults.iter().find(|f| f.kind == FaultKind::StallPoll).expect("the stall was played");
        // The story happened: the lease ended inside the stall, so the
        // member learns of it only when its loop runs again.
        let resumed = stall.end as f64 / 1000.0;
        fenced_at_resume += usize::from(
            r.trace
                .iter()
                .any(|l| l.contains(" m0 Fenced role=") && secs(l).is_some_and(|t| (t - resumed).abs() < 0.0005)),
        );
    }
    assert!(fenced_at_resume >= 3, "the lease ended inside the stall in only {fenced_at_resume} of 20 seeds");
}

// Hazard 5 under Neli::background(): the election's own loop stalls for
// three times T while the application keeps asking the Background handle.
// Proves the stall holds neli's loop and not the application (it writes
// inside the stall), and that the handle's answer ends with the published
// lease although nothing fences the term meanwhile: no write inside the
// stall after the lease's end (rule told-without-lease judges every answer
// that led to a write).
#[test]
fn a_stalled_background_loop_leaves_the_application_told_no_at_the_lease_end() {
    use neli_sim::history::Entry;
    let s = scenario(include_str!("scenarios/background-loop-stalls.toml"));
    for seed in 0..5 {
        let r = assert_survives(&s, seed);
        let stall = r.faults.iter().find(|f| f.kind == FaultKind::StallPoll).expect("the stall was played");
        let who = stall.hosts.first().expect("the stall hit the leader");
        let writes: Vec<u64> = r
            .history
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Write(w) if w.member == *who && (stall.start..stall.end).contains(&w.at) => Some(w.at),
                _ => None,
            })
            .collect();
        assert!(
            !writes.is_empty(),
            "{who} wrote nothing inside its stall (seed {seed}): the stall held the application"
        );
        let t = s.election.heartbeat_timeout.ms();
        let last = writes.last().copied().unwrap_or_default();
        assert!(
            last < stall.start + t,
            "{who} still wrote at {last} ms, more than T after its loop stalled at {} ms (seed {seed})",
            stall.start
        );
    }
}

// Hazard 5, the broker's side. Proves that after a restart without its data
// members see what the real client sees (refused connections, their session
// lost on their own clock, the topic missing, their member id unknown): every
// live member rejoins, one recreates the topic and one says the log (and with
// it the token sequence) restarted, and someone leads at the end. Pins the
// real suite's broker-restart failure (neli/KAFKA.md, "Broker restart with
// state loss").
#[test]
fn every_live_member_rejoins_a_broker_that_lost_its_state() {
    let s = scenario(include_str!("scenarios/broker-restart-losing-state.toml"));
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

// Hazard 5 broken. Proves why validation wants the rebalance timeout
// (max.poll.interval.ms) above T + S: at 1 s a stalled poll loop makes the
// member leave the group while its last accepted commit still proves a lease
// of T = 2 s, and the next leader starts inside it.
#[test]
fn a_rebalance_timeout_below_the_lease_overlaps_on_a_poll_stall() {
    let s = scenario(include_str!("scenarios/broken-short-rebalance-stall.toml"));
    assert_flagged(&s, 0..6, &[Rule::Overlap]);
}

// Hazard 5, the same stall with a valid rebalance timeout (10 s). Proves the
// stall alone is safe: no seed overlaps.
#[test]
fn a_valid_rebalance_timeout_survives_a_poll_stall() {
    let s = scenario(include_str!("scenarios/rebalance-timeout-stall.toml"));
    for seed in 1..4 {
        assert_survives(&s, seed);
    }
}

// Hazard 6. Proves that a stranger's garbage and well-formed foreign
// heartbeats count for nobody: the leader pauses after them and no seed
// overlaps or breaks a rule.
#[test]
fn a_foreign_writers_records_count_for_nobody() {
    let s = scenario(include_str!("scenarios/foreign-writer.toml"));
    for seed in 1..4 {
        assert_survives(&s, seed);
    }
}

// Hazard 6 broken. Proves own evidence only carries weight against
// strangers: with any record counting, garbage written while the leader is
// paused revives it on resume.
#[test]
fn counting_any_record_lets_foreign_garbage_revive_a_paused_leader() {
    let s = scenario(include_str!("scenarios/broken-any-record-counts-garbage.toml"));
    assert_flagged(&s, 1..16, &[Rule::Overlap, Rule::TokenNotIncreasing]);
}

// Hazard 7. Proves that a leader closing while a rebalance is under way (a
// member crashed just before) keeps events well-formed, and its close
// finishes.
#[test]
fn a_leader_closing_during_a_rebalance_closes_cleanly() {
    let s = scenario(include_str!("scenarios/close-during-rebalance.toml"));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(r.trace.iter().any(|l| l.contains("closed (ok)")), "close finished");
    }
}

// Hazard 7. Proves that a barrier handler calling close() from inside its
// Revoked callback (goNELI deadlocks) does not deadlock: the handler ran, the
// close finished and another member leads.
#[test]
fn a_revoked_handler_that_closes_does_not_deadlock() {
    let s = scenario(include_str!("scenarios/close-in-handler.toml"));
    for seed in 1..4 {
        let r = assert_survives(&s, seed);
        assert!(r.trace.iter().any(|l| l.contains("Revoked handler calls close()")), "the handler ran");
        assert!(r.trace.iter().any(|l| l.contains("closed (ok)")), "close finished, no deadlock");
        assert!(r.figures.leader_at_end, "someone else leads");
    }
}

// Hazard 7 broken (goNELI). Proves the gap oracle sees a handler that waits
// for its own close(): the loop waits for the handler, the handler for the
// loop, the revocation is never acknowledged, and the role has no leader until
// the group gives up on the rebalance timeout (10 s).
#[test]
fn a_handler_waiting_for_its_own_close_stalls_the_handover() {
    let s = scenario(include_str!("scenarios/broken-handler-waits-for-its-close.toml"));
    let broken = assert_flagged(&s, 1..4, &[Rule::Expect(Bound::MaxGap)]);
    assert!(broken.figures.gap_max_ms >= 9_000, "stalled until the rebalance timeout: {:?}", broken.figures);
}

// Hazard 7, the same story with our non-blocking close(). Proves the handover
// takes about a second, not the rebalance timeout.
#[test]
fn a_handler_that_closes_without_waiting_hands_over_at_once() {
    let s = scenario(include_str!("scenarios/handler-closes-without-waiting.toml"));
    let ok = assert_survives(&s, 1);
    assert!(ok.figures.gap_max_ms < 3_000, "{:?}", ok.figures);
}

// The membership proof's caveat (docs/background.md, Protocol semantics), found
// by this simulator. Proves that a commit accepted during PreparingRebalance
// proves a lease of T, which overlaps the next leader when the rebalance
// timeout (1 s) is below T (2 s): the rebalance timeout must exceed T plus the
// group heartbeat interval.
#[test]
fn a_rebalance_timeout_below_the_lease_lets_a_proven_lease_overlap() {
    let s = scenario(include_str!("scenarios/broken-proof-rebalance-timeout.toml"));
    assert_flagged(&s, 1..4, &[Rule::Overlap]);
}

// The same story with the default rebalance timeout (10 s). Proves the proof
// is safe once the rebalance timeout exceeds the lease.
#[test]
fn the_default_rebalance_timeout_keeps_a_proven_lease_exclusive() {
    let s = scenario(include_str!("scenarios/proof-rebalance-timeout-ok.toml"));
    assert_survives(&s, 1);
}

// Multi-role mode. Proves that a member crash and a pause move 4 roles on 3
// partitions around without any role having two holders, that every role was
// acquired and then re-acquired, and that every role is led at the end; and
// that the application wrote every role's resource, each write while its
// writer held that role (so the stale-write oracle judges every role:
// scenarios/FORMAT.md, "what the application is told").
// Reference: NELI §4 — role j lives on partition j mod M.
#[test]
fn every_role_keeps_one_holder_through_a_crash_and_a_pause() {
    let s = scenario(include_str!("scenarios/multi-role.toml"));
    for seed in 1..3 {
        let r = assert_survives(&s, seed);
        assert!(r.figures.acquisitions >= 8, "all four roles were acquired, then re-acquired");
        assert!(r.figures.leader_at_end);
        let role_of = |key: &str| (0..4).find(|role| neli_sim::history::resource_key(*role) == key);
        let mut written = [0; 4];
        for w in r.history.writes().filter(|w| !w.in_handler) {
            let role = role_of(&w.key).unwrap_or_else(|| panic!("a write to {:?}, no role's resource", w.key));
            assert!(
                r.history.held(&w.member, role, w.at),
                "{} wrote role {role}'s resource at {} unheld",
                w.member,
                w.at
            );
            written[role as usize] += 1;
        }
        assert!(written.iter().all(|n| *n > 0), "every role's resource was written: {written:?} (seed {seed})");
    }
}

// Multi-role mode, a new owner that cannot hear the partition leader in time.
// Proves that the client asks for the end of its newly dealt partitions within
// one limit for the whole assignment, as the Kafka backend does
// (neli/KAFKA.md, "tansu's timing"), not one limit per partition: the poll
// that hands the assignment over waits a second, not a second per partition.
#[test]
fn an_assignment_waits_one_limit_for_the_ends_of_all_its_partitions() {
    let s = scenario(include_str!("scenarios/assignment-with-leader-unreachable.toml"));
    for seed in 1..3 {
        let r = assert_survives(&s, seed);
        let unknown: Vec<&String> = r.trace.iter().filter(|l| l.contains("unknown at assignment")).collect();
        assert_eq!(
            unknown.len(),
            3,
            "m0 gives up the end of each of m1's three partitions (seed {seed}): {unknown:#?}"
        );
        let at = |l: &String| l.split_whitespace().next().map(str::to_owned);
        assert!(
            unknown.iter().all(|l| at(l) == at(unknown[0])),
            "the ends were given up at one instant, a second after the assignment (seed {seed}): {unknown:#?}"
        );
    }
}

/// A fault aimed at a moment of the protocol (`on`, scenarios/FORMAT.md):
/// armed at `at`, it starts when the target's first membership proof after
/// that is accepted, not at `at` (m0 gets partition 0 and proves; a member
/// with no partition sends no proof, and its fault would never start); it round-trips through the file format,
/// and the same seed plays it at the same instant.
#[test]
fn a_triggered_pause_starts_when_the_targets_proof_is_accepted() {
    let s = scenario(include_str!("scenarios/triggered-pause.toml"));
    let back = neli_sim::Scenario::parse(&s.to_toml(&[]).expect("writable"), "back.toml").expect("reads back");
    assert_eq!(back.timed_faults().collect::<Vec<_>>(), s.timed_faults().collect::<Vec<_>>());
    let r = assert_survives(&s, 3);
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
    assert_eq!(assert_survives(&s, 3).trace, r.trace, "the same seed plays the same trace");
}

/// `on = "dealt"` starts a fault when the coordinator deals the member its
/// assignment, before the member handles it: paused there, m0 acquires only
/// after its pause. `on = "acquired"` starts one when the member leads.
#[test]
fn dealt_and_acquired_triggers_fire_at_their_moments() {
    let text = include_str!("scenarios/triggered-pause.toml")
        .replace("on = \"proof-accepted\"", "on = \"dealt\"")
        .replace("duration = \"500ms\"", "duration = \"1500ms\"");
    let s = neli_sim::Scenario::parse(&format!("{text}\n[[faults]]\nat = \"0s\"\non = \"acquired\"\nkind = \"stall-poll\"\ntarget = \"m0\"\nduration = \"100ms\"\n"), "dealt.toml")
        .expect("a valid scenario");
    let r = assert_survives(&s, 3);
    let secs = |needle: &str| {
        let l = r.trace.iter().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle:?} in the trace"));
        l.trim_start().split('s').next().and_then(|t| t.parse::<f64>().ok()).expect("a time")
    };
    let (dealt, paused, joined) =
        (secs("sim m0: dealt"), secs("sim pause m0 for 1500ms"), secs("m0 joined generation"));
    assert_eq!(dealt, paused);
    assert!(joined >= paused + 1.5, "m0 handled its assignment at {joined}, inside its pause from {paused}");
    // Fired in the step m0 acquired in: within one tick of it.
    let ms = |needle: &str| (secs(needle) * 1000.0).round() as u64;
    let (acquired, fired) = (ms("m0 Acquired role=0"), ms("sim m0: acquired"));
    let tick = neli_sim::TICK.as_millis() as u64;
    assert!((acquired..=acquired + tick).contains(&fired), "acquired at {acquired} ms, fired at {fired} ms");
}

/// A `resume` aimed at another member's moment (`on` with `of`,
/// scenarios/FORMAT.md): m0, paused for 8 s as it acquires, runs again in
/// the step m1 acquires in, long before its pause would have ended; and
/// that pause's own end, due inside a later pause of m0, leaves the later
/// pause its full 5 s. The file round-trips, and a seed replays its trace.
#[test]
fn a_resume_aimed_at_another_members_acquisition_ends_the_pause_there() {
    let s = scenario(include_str!("scenarios/resume-on-acquired.toml"));
    let back = neli_sim::Scenario::parse(&s.to_toml(&[]).expect("writable"), "back.toml").expect("reads back");
    assert_eq!(back.timed_faults().collect::<Vec<_>>(), s.timed_faults().collect::<Vec<_>>());
    for seed in [3, 4] {
        let r = assert_survives(&s, seed);
        let secs = |needle: &str| -> Vec<f64> {
            let time = |l: &String| l.trim_start().split('s').next().and_then(|t| t.parse::<f64>().ok());
            r.trace.iter().filter(|l| l.contains(needle)).filter_map(time).collect()
        };
        assert_eq!(secs("sim armed: resume m0 on m1: acquired"), vec![0.0]);
        let (paused, acquired, resumed) =
            (secs("sim pause m0 for 8s"), secs("sim m1: acquired"), secs("sim resume m0"));
        assert_eq!(resumed.len(), 2, "seed {seed}: resumed at {resumed:?}");
        assert_eq!(resumed[0], acquired[0], "seed {seed}: resumed as m1 acquired");
        assert!(resumed[0] < paused[0] + 8.0, "seed {seed}: paused at {paused:?}, resumed at {resumed:?}");
        // The first pause's own end falls inside the later pause (the
        // group forms at about 6 s), so the epoch is what keeps it whole.
        assert!(paused[0] + 8.0 > 12.0 && paused[0] + 8.0 < 17.0, "seed {seed}: paused at {paused:?}");
        assert_eq!(resumed[1], 17.0, "seed {seed}: the later pause keeps its 5 s");
        assert_eq!(assert_survives(&s, seed).trace, r.trace, "the same seed plays the same trace");
    }
    // A resume of a member that is not paused does nothing, and says so.
    let idle = s.to_toml(&[]).expect("writable").replace("on = \"acquired\"\nof = \"m1\"\n", "");
    let r = neli_sim::run_scenario(&neli_sim::Scenario::parse(&idle, "idle.toml").expect("valid"), 3);
    assert!(r.trace.iter().any(|l| l.contains("m0 is not paused: the resume does nothing")), "{:?}", r.trace);
    // Nor does one of a member that is down.
    let down = "name = \"down\"\nduration = \"5s\"\n[election]\nmembers = 2\nheartbeat_timeout = \"1s\"\n\
                session_timeout = \"3s\"\n[[faults]]\nat = \"1s\"\nkind = \"crash\"\ntarget = \"m0\"\n\
                [[faults]]\nat = \"2s\"\nkind = \"resume\"\ntarget = \"m0\"\n";
    let r = neli_sim::run_scenario(&neli_sim::Scenario::parse(down, "down.toml").expect("valid"), 3);
    assert!(r.trace.iter().any(|l| l.contains("m0 is down: the resume does nothing")), "{:?}", r.trace);
}

/// Without the membership proof no proof is ever accepted: a fault aimed
/// at that moment would silently never start, so the file is refused with
/// what to write instead; and the run ablated of the proof aims it at the
/// assignment, so the ablation still plays the fault (scenarios/FORMAT.md,
/// `on`).
#[test]
fn a_fault_aimed_at_a_proof_that_is_never_sent_is_refused_or_aimed_at_the_assignment() {
    let text = include_str!("scenarios/triggered-pause.toml");
    let off = text.replace("session_timeout = \"3s\"", "session_timeout = \"3s\"\nmembership_proof = false");
    let e = neli_sim::Scenario::parse(&off, "no-proof.toml").expect_err("refused").to_string();
    assert!(e.contains("no-proof.toml") && e.contains("faults.on = \"proof-accepted\""), "{e}");
    assert!(e.contains("membership_proof = false") && e.contains("\"assigned\""), "{e}");
    let ablated = scenario(text).without(neli_sim::scenario::Layer::MembershipProof).expect("the proof is on");
    let on: Vec<_> = ablated.timed_faults().map(|f| f.on).collect();
    assert_eq!(on, vec![Some(neli_sim::scenario::Trigger::Assigned)]);
    let back = neli_sim::Scenario::parse(&ablated.to_toml(&[]).expect("writable"), "ablated.toml");
    assert!(back.is_ok(), "the ablated scenario reads back: {back:?}");
    let r = neli_sim::run_scenario(&ablated, 3);
    assert!(r.trace.iter().any(|l| l.contains("sim pause m0 for 500ms")), "the ablated run plays the pause");
}
