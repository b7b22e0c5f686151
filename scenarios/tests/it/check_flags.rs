//! `neli-lab check` names its build and the bounds it explored, and every
//! flag it accepts is effective or refused: each bound flag changes the
//! number of states explored (against a small base bound), and a flag that
//! would change nothing exits 2 with a message naming it.

use crate::{ONE_LEADER, SEND_TIME};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{WIDE_WALK, lab, scratch, stderr, stdout};

/// The base bound: 2 members, 4 ticks, one pause (2,452 unique states; the
/// timing flags only matter once a fault can make a lease run out).
const BASE: &[(&str, &str)] = &[("--members", "2"), ("--ticks", "4"), ("--pauses", "1"), ("--isolations", "0")];

/// Unique states `check` explored with `BASE` plus `extra` (an `extra` flag
/// replaces the base's value); also asserts the header shape.
fn unique(extra: &[(&str, &str)]) -> usize {
    // Counterexamples go to a scratch directory of their own (tests run in
    // parallel), not into the source tree.
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let out = scratch(&format!("check_flags/{}", RUNS.fetch_add(1, Ordering::Relaxed)));
    let mut args = vec!["check".to_owned(), "--sim-seeds".to_owned(), "0".to_owned(), "--out".to_owned()];
    args.push(out.display().to_string());
    for (flag, value) in BASE.iter().filter(|(f, _)| !extra.iter().any(|(e, _)| e == f)).chain(extra) {
        args.push((*flag).to_owned());
        if !value.is_empty() {
            args.push((*value).to_owned());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = lab(&args);
    let out = stdout(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {out}{}", stderr(&o));
    let explored = out.lines().find(|l| l.starts_with("explored ")).unwrap_or_else(|| panic!("{out}"));
    // "explored N states (M unique, depth D) in Xs"
    explored
        .split('(')
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no unique count in {explored:?}"))
}

/// Asserts that setting `flag` to `value` changes the explored state count.
fn changes_the_count(extra: &[(&str, &str)]) {
    let (base, with) = (unique(&[]), unique(extra));
    println!("{extra:?}: {base} -> {with} unique states");
    assert_ne!(base, with, "{extra:?} explored exactly the base's {base} states: the flag had no effect");
}

/// `check` with `args` is refused: exit 2, no panic, and stderr names `flag`.
fn refused(args: &[&str], flag: &str) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let o = lab(&all);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{all:?} must be refused: {}{err}", stdout(&o));
    assert!(err.starts_with(&format!("error: {flag} ")), "{all:?}: the error must name {flag}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

// The first line names the build (crate version, git commit, clean/dirty),
// and the header prints the bounds after defaults, the skew bound included.
#[test]
fn check_header_names_the_build_and_the_bounds_explored() {
    let o =
        lab(&["check", "--members", "2", "--ticks", "3", "--pauses", "0", "--isolations", "0", "--clock-steps", "1"]);
    let out = stdout(&o);
    let first = out.lines().next().unwrap_or_default();
    let words: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(words[..4], ["build", "neli-lab", env!("CARGO_PKG_VERSION"), "commit"], "{first}");
    let commit = words[4];
    assert!(commit == "unknown" || (commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit())), "{first}");
    let tree = words[5..].join(" ");
    assert!(["clean", "dirty", "tree state unknown"].contains(&tree.as_str()), "{first}");
    assert!(
        out.contains("\nmodel     2 members, exclusive, T=2 S=4 G=0 heartbeat interval 1 (ticks), 3 ticks,"),
        "{out}"
    );
    assert!(
        out.contains("\nfaults    pauses 0, crashes 0, isolations 0, clock steps 1 (max skew 1), log losses 0\n"),
        "{out}"
    );
    assert!(out.contains("\nsearch    BFS + symmetry, 2 thread(s)\n"), "{out}");
    // `--version` names the same commit.
    let v = stdout(&lab(&["--version"]));
    assert!(v.starts_with(&format!("neli-lab {} (commit {commit}, ", env!("CARGO_PKG_VERSION"))), "{v}");
}

// `run` and `explore` name the build on their first line too.
#[test]
fn run_and_explore_name_the_build_first() {
    for args in [&["run", "leader-pause", "--seed", "1"][..], &["explore", "leader-pause", "--seeds", "1"][..]] {
        let out = stdout(&lab(args));
        assert!(out.starts_with("build     neli-lab "), "{args:?}: {out}");
    }
}

#[test]
fn members_changes_the_count() {
    changes_the_count(&[("--members", "3")]);
}

#[test]
fn ticks_changes_the_count() {
    changes_the_count(&[("--ticks", "5")]);
}

#[test]
fn pauses_changes_the_count() {
    changes_the_count(&[("--pauses", "0")]);
}

#[test]
fn crashes_changes_the_count() {
    changes_the_count(&[("--crashes", "1")]);
}

#[test]
fn isolations_changes_the_count() {
    changes_the_count(&[("--isolations", "1")]);
}

// Every `check` flag changes what is explored: `--clock-steps` sets the skew
// bound it needs by itself.
#[test]
fn clock_steps_changes_the_count() {
    changes_the_count(&[("--clock-steps", "1")]);
}

#[test]
fn log_losses_changes_the_count() {
    changes_the_count(&[("--log-losses", "1")]);
}

// Two steps may reach a skew of 2; `--max-skew 1` keeps the clocks closer.
#[test]
fn max_skew_changes_the_count() {
    let (two, one) = (unique(&[("--clock-steps", "2")]), unique(&[("--clock-steps", "2"), ("--max-skew", "1")]));
    assert!(one < two, "--max-skew 1 explored {one} states, two free steps {two}");
}

#[test]
fn heartbeat_timeout_changes_the_count() {
    changes_the_count(&[("--heartbeat-timeout", "3")]);
}

#[test]
fn session_timeout_changes_the_count() {
    changes_the_count(&[("--session-timeout", "3")]);
}

#[test]
fn grace_changes_the_count() {
    changes_the_count(&[("--grace", "1")]);
}

#[test]
fn mode_and_roles_change_the_count() {
    let multi = unique(&[("--mode", "multi-role")]);
    assert_ne!(multi, unique(&[]), "--mode multi-role");
    assert_ne!(multi, unique(&[("--mode", "multi-role"), ("--roles", "3")]), "--roles 3");
    assert_ne!(multi, unique(&[("--mode", "non-exclusive"), ("--heartbeat-timeout", "5")]), "--mode non-exclusive");
}

#[test]
fn membership_proof_and_variant_change_the_count() {
    let base = unique(&[]);
    let no_proof = unique(&[("--no-membership-proof", "")]);
    assert_ne!(base, no_proof, "--no-membership-proof");
    let receipt = unique(&[("--no-membership-proof", ""), ("--variant", "lease-from-receipt")]);
    assert_ne!(no_proof, receipt, "--variant lease-from-receipt");
}

// Flags that would change nothing are refused, each naming itself.
#[test]
fn ineffective_flags_are_refused_with_the_flag_named() {
    refused(&["--max-skew", "1"], "--max-skew");
    refused(&["--clock-steps", "1", "--max-skew", "0"], "--max-skew");
    refused(&["--clock-steps", "1", "--max-skew", "2"], "--max-skew");
    refused(&["--roles", "2"], "--roles");
    refused(&["--mode", "multi-role", "--roles", "0"], "--roles");
    refused(&["--threads", "0"], "--threads");
    refused(&["--members", "0"], "--members");
    refused(&["--heartbeat-timeout", "0"], "--heartbeat-timeout");
    // Non-exclusive mode is T > S; with T <= S it would explore multi-role.
    refused(&["--mode", "non-exclusive", "--heartbeat-timeout", "2"], "--mode");
    refused(&["--mode", "non-exclusive", "--session-timeout", "5"], "--mode");
}

// The four searches explore the same space: DFS visits exactly BFS's
// states, BFS + symmetry (the default) exactly DFS + symmetry's, between a
// half and all of them (2 members), and the header names the search that ran.
#[test]
fn search_flags_agree_and_are_named() {
    let (bfs, dfs) = (unique(&[("--no-symmetry", "")]), unique(&[("--no-symmetry", ""), ("--dfs", "")]));
    let (sym, dfs_sym) = (unique(&[]), unique(&[("--dfs", "")]));
    assert_eq!(bfs, dfs, "DFS and BFS must visit the same states");
    assert_eq!(sym, dfs_sym, "BFS and DFS with symmetry must visit the same representatives");
    assert!(sym <= bfs && sym * 2 >= bfs, "symmetry {sym} vs {bfs}");
    for (flags, name) in [
        (&["--no-symmetry", "--dfs"][..], "DFS"),
        (&["--no-symmetry"][..], "BFS"),
        (&[][..], "BFS + symmetry"),
        (&["--dfs"][..], "DFS + symmetry"),
    ] {
        let mut args = vec!["check", "--members", "2", "--ticks", "2"];
        args.extend_from_slice(flags);
        let o = stdout(&lab(&args));
        assert!(o.contains(&format!("\nsearch    {name}, 2 thread(s)\n")), "{flags:?}: {o}");
    }
}

// `--simulate` walks at random from a printed seed; the same seed gives the
// same walks (everything but the wall time on the `explored` line and the
// process's peak memory is equal),
// another seed other walks, and a walk proves nothing: exit 3, INCOMPLETE.
#[test]
fn simulate_is_seeded_reproducible_and_never_a_proof() {
    let run = |seed: &str| {
        let args = ["check", "--members", "2", "--ticks", "20", "--simulate", "--seed", seed, "--max-states", "20000"];
        let o = lab(&args);
        assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
        let out = stdout(&o);
        assert!(out.contains(&format!("seed {seed}, 1 thread(s)\n")), "{out}");
        assert!(out.contains("verdict   INCOMPLETE"), "{out}");
        // States visited and the depth reached are reported.
        assert!(out.lines().any(|l| l.starts_with("explored ") && l.contains(", depth ")), "{out}");
        // The peak resident memory is the process's, not the walks'.
        let walked = |l: &&str| !["explored ", "build ", "memory "].iter().any(|p| l.starts_with(p));
        out.lines().filter(walked).collect::<Vec<_>>().join("\n")
    };
    let (a, b, c) = (run("5"), run("5"), run("6"));
    assert_eq!(a, b, "one seed, one result");
    assert_ne!(a, c, "seeds 5 and 6 walked the same states");
}

// The walk that found a candidate leading on an older term's evidence (a
// member dropped from the group and assigned again without Lost; rule in
// neli's core_rules::candidate_evidence_of_an_older_term_does_not_survive_a_new_generation).
// With the rule taken out of the core, seed 1 of this bound violates both
// token properties within its million states; with it, the walk finds
// nothing (exit 3: random walks prove nothing, but they found no violation).
#[test]
fn simulate_seed_1_of_a_wide_bound_finds_no_token_regression() {
    let args = [&WIDE_WALK[..], &["--sim-seeds", "0"]].concat();
    let o = lab(&args);
    let out = stdout(&o);
    assert!(!out.contains("VIOLATED"), "{out}");
    assert_eq!(o.status.code(), Some(3), "{out}{}", stderr(&o));
}

// Flags `--simulate` does not use, and `--seed` without it, are refused.
#[test]
fn simulate_refuses_flags_it_would_ignore() {
    refused(&["--seed", "3"], "--seed");
    refused(&["--simulate", "--no-symmetry"], "--no-symmetry");
    refused(&["--simulate", "--dfs"], "--dfs");
    refused(&["--simulate", "--threads", "4"], "--threads");
    refused(&["--simulate", "--threads", "2"], "--threads");
    // `--threads 1` says what the walk does: accepted, the walk runs.
    let out_dir = scratch("check_flags/simulate_one_thread");
    let out_arg = out_dir.display().to_string();
    let args = ["check", "--simulate", "--threads", "1", "--members", "2", "--ticks", "4", "--max-states", "2000"];
    let o = lab(&[&args[..], &["--sim-seeds", "0", "--out", &out_arg]].concat());
    assert_eq!(o.status.code(), Some(3), "a walk that finds nothing is INCOMPLETE:\n{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("verdict   INCOMPLETE"), "{}", stdout(&o));
}

// A search cut short by --max-states is never a PASS: the verdict is
// INCOMPLETE with exit 3, the explored line names the limit, properties
// that were not violated are "unproven", and JSON/JUnit say the same.
#[test]
fn max_states_stops_the_search_with_an_incomplete_verdict() {
    let out_dir = scratch("check_flags/max_states");
    let out_arg = out_dir.display().to_string();
    let args = ["check", "--members", "3", "--ticks", "6", "--threads", "1", "--max-states", "500", "--out", &out_arg];
    let o = lab(&args);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}{}", stderr(&o));
    assert!(out.contains("(stopped: --max-states 500 reached; not exhaustive)"), "{out}");
    assert!(out.contains(&format!("\nunproven  {ONE_LEADER} (no violation in the states explored)\n")), "{out}");
    assert!(out.contains("\nverdict   INCOMPLETE (--max-states 500 reached: "), "{out}");
    assert!(!out.contains("PASS"), "{out}");
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let o = lab(&json_args);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("check JSON");
    assert_eq!(v["passed"].as_bool(), Some(false));
    assert_eq!(v["stopped"].as_str(), Some("--max-states 500 reached"));
    assert!(v["properties"].as_array().unwrap().iter().any(|p| p["outcome"] == "unproven"), "{v}");
    let mut junit_args = args.to_vec();
    junit_args.extend(["--format", "junit"]);
    let junit = stdout(&lab(&junit_args));
    assert!(
        junit.contains("<skipped message=\"unproven: the search stopped early (--max-states 500 reached)"),
        "{junit}"
    );
}

// A limit the search does not reach changes nothing: the same PASS.
#[test]
fn a_limit_not_reached_leaves_the_verdict_alone() {
    let o = lab(&["check", "--members", "2", "--ticks", "3", "--max-states", "1000000", "--time-budget", "10m"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("\nverdict   PASS\n") && !out.contains("stopped"), "{out}");
}

// A violation found before the limit is still a FAIL (exit 1).
#[test]
fn a_violation_before_the_limit_is_still_a_fail() {
    let out_dir = scratch("check_flags/violation_before_limit");
    let out_arg = out_dir.display().to_string();
    let o = lab(&[
        "check",
        "--members",
        "2",
        "--isolations",
        "0",
        "--no-membership-proof",
        "--variant",
        "lease-from-receipt",
        "--sim-seeds",
        "0",
        "--time-budget",
        "10m",
        "--out",
        &out_arg,
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("\nverdict   FAIL\n"), "{out}");
}

#[test]
fn bad_limits_are_refused_with_the_flag_named() {
    refused(&["--max-states", "0"], "--max-states");
    refused(&["--time-budget", "soon"], "--time-budget");
    refused(&["--time-budget", "0s"], "--time-budget");
}

// The time budget holds with one checker thread too (stateright looks at
// its own timeout only when a thread runs out of queued work, which one
// thread never does): a search far longer than the budget stops with a
// partial, INCOMPLETE result.
#[test]
fn time_budget_stops_a_one_thread_search() {
    let out_dir = scratch("check_flags/time_budget");
    let out_arg = out_dir.display().to_string();
    let o = lab(&[
        "check",
        "--members",
        "3",
        "--ticks",
        "10",
        "--isolations",
        "1",
        "--threads",
        "1",
        "--time-budget",
        "1s",
        "--out",
        &out_arg,
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}{}", stderr(&o));
    assert!(out.contains("(stopped: --time-budget 1s reached; not exhaustive)"), "{out}");
    assert!(out.contains("\nverdict   INCOMPLETE (--time-budget 1s reached: "), "{out}");
}

/// `check`'s exit code means the same in every mode: 0 on the recommended
/// core. Non-exclusive mode lets two members lead one role at once by design,
/// so it is judged only on what it promises (token order, liveness), not on
/// a guarded resource refusing the outgoing leader's older token
/// (docs/background.md, "Lease rules, and why").
#[test]
fn check_exits_0_on_the_recommended_core_in_every_mode() {
    for (mode, extra) in [
        ("exclusive", &[][..]),
        ("multi-role", &["--roles", "2"][..]),
        ("non-exclusive", &["--roles", "2", "--heartbeat-timeout", "5"][..]),
    ] {
        let out = scratch(&format!("check_modes/{mode}"));
        let out = out.display().to_string();
        let mut args =
            vec!["check", "--mode", mode, "--members", "2", "--ticks", "6", "--sim-seeds", "0", "--out", &out];
        args.extend_from_slice(extra);
        let o = lab(&args);
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?} must pass on correct code:\n{text}{}", stderr(&o));
        assert!(text.contains("verdict   PASS"), "{args:?}:\n{text}");
    }
}

/// `check` exits 1 on each unsafe lease variant with its
/// defaults (membership proof on). No leader overlaps another there, since
/// the proof caps every lease; the model holds each lease to the send-time
/// rule on its own, and the counterexample replays as a scenario the
/// simulator fails on the same rule.
#[test]
fn check_exits_1_on_each_unsafe_lease_variant_with_its_defaults() {
    for variant in ["lease-from-receipt", "any-record-counts"] {
        let dir = scratch(&format!("check_flags/variant_{variant}"));
        let out = dir.display().to_string();
        let o = lab(&["check", "--variant", variant, "--threads", "1", "--sim-seeds", "5", "--out", &out]);
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "--variant {variant} must fail:\n{text}{}", stderr(&o));
        assert!(text.contains(&format!("membership proof on, assignment range, variant {variant}\n")), "{text}");
        assert!(text.contains(&format!("\nholds     {ONE_LEADER}\n")), "{text}");
        assert!(text.contains(&format!("\nVIOLATED  {SEND_TIME}\n")), "{text}");
        let replay = text.lines().find(|l| l.starts_with("replay ")).expect("a replay line");
        assert!(replay.contains("REPRODUCED") && replay.contains("rule send-time"), "--variant {variant}: {replay}");
        let scenario =
            std::fs::read_to_string(dir.join("check-send-time-a-lease-ends-by-its-newest-own-heartbeat-read-t.toml"));
        let scenario = scenario.unwrap_or_else(|e| panic!("--variant {variant}: no scenario file ({e}):\n{text}"));
        assert!(scenario.contains(&format!("variant = \"{variant}\"")), "{scenario}");
        // The model's range, not the format's default (scenarios/FORMAT.md, "election.assignment").
        assert!(scenario.contains("assignment = \"range\""), "{scenario}");
    }
}

#[test]
fn assignment_changes_the_count() {
    changes_the_count(&[("--assignment", "cooperative-sticky")]);
}

// Under incremental assignment (docs/cooperative-rebalance.md) the
// recommended core passes the default bounds, and the header says which
// assignment was explored.
#[test]
fn check_passes_with_cooperative_sticky_assignment() {
    let out = scratch("check_flags/cooperative_sticky");
    let out = out.display().to_string();
    let o = lab(&[
        "check",
        "--assignment",
        "cooperative-sticky",
        "--members",
        "2",
        "--isolations",
        "0",
        "--sim-seeds",
        "0",
        "--out",
        &out,
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    assert!(text.contains("membership proof on, assignment cooperative-sticky, variant recommended\n"), "{text}");
    assert!(text.contains("\nverdict   PASS\n"), "{text}");
}

// A coordinator that hands a moving partition on without waiting
// for its old owner's revocation gives two leaders of one role (2 members,
// 2 roles, a pause past S), and the counterexample scenario is written for
// a cooperative-sticky election.
#[test]
fn check_catches_a_coordinator_that_skips_the_revoked_barrier() {
    let dir = scratch("check_flags/skip_revoked_barrier");
    let out = dir.display().to_string();
    let o = lab(&[
        "check",
        "--assignment",
        "cooperative-sticky",
        "--mode",
        "multi-role",
        "--ticks",
        "4",
        "--variant",
        "skip-revoked-barrier",
        "--sim-seeds",
        "0",
        "--out",
        &out,
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}{}", stderr(&o));
    assert!(text.contains("variant skip-revoked-barrier\n"), "{text}");
    assert!(text.contains(&format!("\nVIOLATED  {ONE_LEADER}\n")), "{text}");
    let scenario = std::fs::read_to_string(dir.join("check-at-most-one-leader-per-role.toml")).expect("scenario file");
    // The format's default: the file leaves it implicit, and reads back as it.
    let parsed = neli_sim::Scenario::parse(&scenario, "check-at-most-one-leader-per-role.toml");
    let parsed = parsed.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed.election.assignment, neli_sim::scenario::AssignmentName::CooperativeSticky, "{scenario}");
}

#[test]
fn assignment_and_its_variant_refuse_bad_input_naming_the_flag() {
    refused(&["--variant", "skip-revoked-barrier"], "--variant");
    let o = lab(&["check", "--assignment", "sticky"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--assignment"), "{err}");
}

#[test]
fn heartbeat_failures_changes_the_count() {
    changes_the_count(&[("--heartbeat-failures", "1")]);
}

// Kafka 4's consumer group protocol (docs/background.md, "Group
// protocols"). A member whose heartbeats fail while its proofs go through
// keeps a lease proven just before the coordinator fences it and hands
// partition 0 on: two leaders with G = 0, in the model and in the
// simulator's replay of its counterexample. G = T separates them. The header
// names the protocol and the fault.
#[test]
fn consumer_protocol_needs_a_grace_of_t() {
    let out = scratch("check_flags/consumer");
    let out = out.display().to_string();
    let small = ["--members", "2", "--pauses", "0", "--isolations", "0", "--sim-seeds", "20", "--out", &out];
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "--group-protocol", "consumer"];
        args.extend(small);
        args.extend(extra);
        let o = lab(&args);
        (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
    };
    let (code, text) = run(&[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("variant recommended, group protocol consumer (KIP-848)\n"), "{text}");
    assert!(text.contains("log losses 0, heartbeat failures 1\n"), "{text}");
    assert!(text.contains("VIOLATED  at most one leader per role"), "{text}");
    assert!(text.contains("HeartbeatsFail"), "the path shows the fault: {text}");
    // The written counterexample (group_protocol = "consumer", a
    // heartbeat-failure fault) fails in the simulator too.
    assert!(text.contains("replay    REPRODUCED by the simulator with seed"), "{text}");
    let (code, text) = run(&["--grace", "2"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("T=2 S=4 G=2") && text.contains("\nverdict   PASS\n"), "{text}");
    // The classic protocol survives the same fault without a grace.
    let o = lab(&["check", "--heartbeat-failures", "1", "--members", "2", "--pauses", "0", "--isolations", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}
