use crate::{assert_survives, scenario};

/// The trace of seed 1 of the story `name` (a file under `scenarios/`):
/// three members, T = 1 s, S = 3 s; at 8 s the leader suffers `kind` for
/// `duration`.
fn leader_fault_trace(name: &str, kind: &str, duration: &str) -> String {
    let text = match name {
        "leader-crash" => include_str!("scenarios/leader-crash.toml"),
        "leader-pause" => include_str!("scenarios/leader-pause.toml"),
        other => panic!("no story {other}"),
    };
    // The snapshot's name says what story it pins: the file must tell it.
    assert!(text.contains(&format!("kind = \"{kind}\"")) && text.contains(&format!("duration = \"{duration}\"")));
    let s = scenario(text);
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
