use crate::{assert_survives, scenario};

// Pins the whole story of a leader crash: eviction after S, a rebalance, a
// new leader with a larger token, the old member back under a new name.
#[test]
fn leader_crash_trace() {
    let s = scenario(
        r#"
name = "leader-crash"
duration = "20s"
[election]
members = 3
heartbeat_timeout = "1s"
session_timeout = "3s"
[[faults]]
at = "8s"
kind = "crash"
target = "leader"
duration = "4s"
"#,
    );
    let r = assert_survives(&s, 1);
    insta::assert_snapshot!(r.trace.join("\n"));
}

// Pins the leader-pause story: the paused leader is evicted, another member
// leads, and on resume the old leader is fenced before anything else.
#[test]
fn leader_pause_trace() {
    let s = scenario(
        r#"
name = "leader-pause"
duration = "20s"
[election]
members = 3
heartbeat_timeout = "1s"
session_timeout = "3s"
[[faults]]
at = "8s"
kind = "pause"
target = "leader"
duration = "5s"
"#,
    );
    let r = assert_survives(&s, 1);
    insta::assert_snapshot!(r.trace.join("\n"));
}
