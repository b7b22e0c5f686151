use crate::{assert_survives, scenario};

/// Three members, T = 1 s, S = 3 s; at 8 s the leader suffers `kind` for `duration`.
fn leader_fault_trace(name: &str, kind: &str, duration: &str) -> String {
    let s = scenario(&format!(
        "name = \"{name}\"\nduration = \"20s\"\n[election]\nmembers = 3\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n\
         [[faults]]\nat = \"8s\"\nkind = \"{kind}\"\ntarget = \"leader\"\nduration = \"{duration}\"\n"
    ));
    assert_survives(&s, 1).trace.join("\n")
}

// Pins the whole story of a leader crash: eviction after S, a rebalance, a
// new leader with a larger token, the old member back under a new name.
#[test]
fn leader_crash_trace() {
    insta::assert_snapshot!(leader_fault_trace("leader-crash", "crash", "4s"));
}

// Pins the leader-pause story: the paused leader is evicted, another member
// leads, and on resume the old leader is fenced before anything else.
#[test]
fn leader_pause_trace() {
    insta::assert_snapshot!(leader_fault_trace("leader-pause", "pause", "5s"));
}
