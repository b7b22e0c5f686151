//! The simulator's scenario files, played against the real broker and
//! judged by the same oracles.

use crate::support::{run_file, scenario_file};

#[test]
fn leader_pause_past_the_session_fences_the_old_leader_without_overlap() {
    let s = scenario_file("leader-pause");
    let Some(out) = run_file(&s) else { return };
    // The oracles found no two members holding the lease at once, tokens
    // increasing, well-formed events, and someone took over within max_failover.
    assert_eq!(out.violations, Vec::<String>::new());
    assert_eq!(out.figures.failovers_ms.len(), 1, "the paused leader was replaced once");
    assert!(out.figures.leader_at_end);
}
