use crate::scenario;
use neli_sim::run_scenario;

const STORY: &str = r#"
name = "determinism"
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
[random]
faults = 2
kinds = ["pause", "partition", "clock-step"]
max_duration = "3s"
"#;

// A run is a pure function of (scenario, seed, code): the same seed gives the
// same trace byte for byte, and the seed really feeds the run.
#[test]
fn same_seed_same_trace_different_seed_differs() {
    let s = scenario(STORY);
    let a = run_scenario(&s, 11);
    let b = run_scenario(&s, 11);
    assert_eq!(a.trace, b.trace, "seed 11 must replay byte for byte");
    assert_eq!(a.figures, b.figures);
    let c = run_scenario(&s, 12);
    assert_ne!(a.trace, c.trace, "seeds 11 and 12 should differ");
}
