//! Faults the scenario format has no kind for (broker stall, broker network
//! cut) and the leader crash/handover the fidelity table measures, on inline
//! scenarios judged by the same oracles.

use neli_testcontainers::{Step, StepKind};

use crate::support::{run_real, scenario_text};

fn three_members(name: &str) -> neli_sim::Scenario {
    scenario_text(&format!(
        "name = \"{name}\"\nduration = \"20s\"\n[cluster]\nprofile = \"tansu\"\n\
         [election]\nmembers = 3\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n[expect]\nmax_overlap = \"0s\"\n"
    ))
}

fn at0(kind: StepKind) -> Vec<Step> {
    vec![Step { at: 0, kind }]
}

#[test]
fn sigkill_of_the_leader_fails_over_to_one_other_member() {
    let s = three_members("real-leader-crash");
    let Some(out) = run_real(&s, at0(StepKind::Crash { target: "leader".into(), restart_ms: None }), 15_000) else {
        return;
    };
    assert_eq!(out.violations, Vec::<String>::new());
    // One takeover, within S + tansu's rebalance pause + slack.
    assert_eq!(out.figures.failovers_ms.len(), 1, "{:?}", out.figures);
    assert!(out.figures.failover_max_ms() < 10_000, "{:?}", out.figures);
}

#[test]
fn sigterm_of_the_leader_hands_over_gracefully() {
    let s = three_members("real-handover");
    let Some(out) = run_real(&s, at0(StepKind::Close { target: "leader".into() }), 10_000) else { return };
    assert_eq!(out.violations, Vec::<String>::new());
    assert_eq!(out.figures.failovers_ms.len(), 1, "{:?}", out.figures);
}

#[test]
fn docker_pause_of_the_broker_expires_the_lease_and_the_group_recovers() {
    // The leader cannot read its heartbeats back from a frozen broker, so its
    // lease (T = 1 s) lapses during the 5 s stall instead of outliving it.
    let s = three_members("real-broker-pause");
    let Some(out) = run_real(&s, at0(StepKind::BrokerPause { ms: 5000 }), 12_000) else { return };
    assert_eq!(out.violations, Vec::<String>::new());
    assert!(out.figures.gap_max_ms >= 3000, "nobody acted through the stall: {:?}", out.figures);
    assert!(out.figures.leader_at_end);
}

#[test]
fn network_disconnect_of_the_broker_expires_the_lease_and_the_group_recovers() {
    let s = three_members("real-broker-disconnect");
    let Some(out) = run_real(&s, at0(StepKind::BrokerDisconnect { ms: 5000 }), 12_000) else { return };
    assert_eq!(out.violations, Vec::<String>::new());
    assert!(out.figures.gap_max_ms >= 3000, "nobody acted through the cut: {:?}", out.figures);
    assert!(out.figures.leader_at_end);
}

#[test]
fn sigstop_of_a_follower_changes_nothing_for_the_leader_beyond_a_rebalance() {
    let s = three_members("real-follower-pause");
    let Some(out) = run_real(&s, at0(StepKind::Pause { target: "m1".into(), ms: 5000 }), 12_000) else { return };
    assert_eq!(out.violations, Vec::<String>::new());
    assert!(out.figures.leader_at_end);
}
