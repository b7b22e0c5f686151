//! The oracles judge what the application is told, not only the lease end
//! the driver publishes: an `is_leader()` that answers true after the
//! member's own lease ended (on its own clock) is a violation even when the
//! published lease never overlaps another's (a core whose `is_leader`
//! ignored expiry would be invisible to the overlap oracle).

use neli_sim::clock::ClockModel;
use neli_sim::oracle::judge;
use neli_sim::record::{Log, Told, WriteObs};
use neli_sim::verdict::Rule;

use crate::scenario;

fn violations(local: u64, lease_until: Option<u64>) -> Vec<String> {
    let s = scenario(include_str!("scenarios/oracle-told.toml"));
    let mut log = Log::default();
    let told = Some(Told { local, lease_until });
    log.writes.push(WriteObs {
        at: 1500,
        member: "m0".into(),
        role: 0,
        token: 7,
        log_epoch: 0,
        told,
        in_handler: false,
    });
    judge(&s, &log, &[ClockModel::new(0)], 2000).1.iter().map(ToString::to_string).collect()
}

#[test]
fn told_it_leads_within_its_lease_is_fine() {
    assert_eq!(violations(1499, Some(1500)), Vec::<String>::new());
}

// Proves the oracle sees a stale `is_leader()` answer: at the lease end
// itself the answer must already be false (the core's `now < until`).
#[test]
fn told_it_leads_once_its_lease_ended_is_a_violation() {
    let v = violations(1500, Some(1500));
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].starts_with("told without a lease: m0 was told it leads role 0 (is_leader() = true, token 7) at 1.500s")
    );
    assert!(v[0].contains("had ended at 1500ms"), "{}", v[0]);
    let v = violations(1000, None);
    assert!(v[0].contains("its lease was not published"), "{v:?}");
}

/// Writes of (role, token) by m0, 100 ms apart, judged alone.
fn judged_writes(writes: &[(u32, u64)]) -> Vec<String> {
    let s = scenario(include_str!("scenarios/oracle-told.toml"));
    let mut log = Log::default();
    for (k, (role, token)) in writes.iter().enumerate() {
        let (at, told) = (100 + 100 * k as u64, Some(Told { local: 0, lease_until: Some(10_000) }));
        log.writes.push(WriteObs {
            at,
            member: "m0".into(),
            role: *role,
            token: *token,
            log_epoch: 0,
            told,
            in_handler: false,
        });
    }
    judge(&s, &log, &[ClockModel::new(0)], 2000).1.iter().map(ToString::to_string).collect()
}

// Each role guards a resource of its own (scenarios/FORMAT.md, "what the
// application is told"): an older token on one role's resource is stale
// whichever role the newer token was used on, and only then.
#[test]
fn a_stale_write_is_judged_on_its_own_roles_resource() {
    assert_eq!(judged_writes(&[(0, 7), (1, 3), (1, 4), (0, 8)]), Vec::<String>::new());
    let v = judged_writes(&[(1, 8), (0, 2), (1, 5)]);
    assert_eq!(v, ["stale write: m0 wrote for role 1 with token 5 at 0.300s after token 8 was used"]);
    let v = judged_writes(&[(0, 8), (0, 5)]);
    assert_eq!(v, ["stale write: m0 wrote with token 5 at 0.200s after token 8 was used"]);
}

#[test]
fn a_told_answer_on_another_role_is_judged_by_that_roles_lease() {
    let s = scenario(include_str!("scenarios/oracle-told.toml"));
    let mut log = Log::default();
    let told = Some(Told { local: 1500, lease_until: Some(1500) });
    log.writes.push(WriteObs {
        at: 1500,
        member: "m0".into(),
        role: 2,
        token: 7,
        log_epoch: 0,
        told,
        in_handler: false,
    });
    let v: Vec<_> = judge(&s, &log, &[ClockModel::new(0)], 2000).1.iter().map(ToString::to_string).collect();
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].starts_with("told without a lease: m0 was told it leads role 2 (lease(2) was Some, token 7)"),
        "{v:?}"
    );
}

/// The story of a model counterexample: the leader pauses past `S` while
/// its application is between pulses (`app_work`), resumes and asks
/// `is_leader()` before pulsing. The recommended core answers false once
/// its lease ran out, so no seed is flagged; a core whose `is_leader`
/// ignored expiry would be told it leads here.
#[test]
fn recommended_core_tells_a_resumed_leader_it_no_longer_leads() {
    let s = scenario(include_str!("scenarios/oracle-told-after-pause.toml"));
    for seed in 0..6 {
        let r = crate::assert_survives(&s, seed);
        assert!(r.figures.writes > 0, "the application wrote while leading");
    }
}

/// One member holds role 0 from 0 to 5 s (what its driver published) and
/// its application writes `writes` times: an election that never lets its
/// application act must not pass (a driver whose `token()` compared the
/// lease the wrong way round would pass every other oracle).
fn untold(writes: usize) -> Vec<String> {
    let s = scenario(include_str!("scenarios/oracle-untold.toml"));
    let mut log = Log::default();
    let leading = std::collections::BTreeMap::from([(
        0,
        neli::Lease { token: neli::Token(7), until: neli::Time::from_millis(5000), log_epoch: 0 },
    )]);
    log.leases.push(neli_sim::record::LeaseObs { at: 0, member: "m0".into(), slot: 0, leading });
    log.slots.insert("m0".into(), 0);
    for k in 0..writes {
        let at = 100 + 100 * k as u64;
        log.writes.push(WriteObs {
            at,
            member: "m0".into(),
            role: 0,
            token: 7,
            log_epoch: 0,
            told: None,
            in_handler: false,
        });
    }
    judge(&s, &log, &[ClockModel::new(0)], 10_000).1.iter().map(ToString::to_string).collect()
}

#[test]
fn a_leader_whose_application_is_never_told_it_leads_is_a_violation() {
    let v = untold(0);
    assert!(v.iter().any(|v| v.starts_with("rule told-while-leading: m0 held role 0 for 5.000s in total")), "{v:?}");
    assert!(untold(1).iter().all(|v| !v.contains("told-while-leading")), "{:?}", untold(1));
}

/// A run long enough to elect in which nobody ever published a lease: every
/// safety oracle holds trivially there, so it is a violation of its own (a
/// core whose `leading_roles` answered nothing passed every other oracle).
/// A run too short to elect is not judged so.
#[test]
fn a_run_long_enough_to_elect_that_elects_nobody_is_a_violation() {
    let nobody = |text: &str, end: u64| {
        let s = scenario(text);
        let mut log = Log::default();
        log.slots.insert("m0".into(), 0);
        judge(&s, &log, &[ClockModel::new(0), ClockModel::new(0)], end).1
    };
    let v = nobody(include_str!("scenarios/oracle-nobody-30s.toml"), 30_000);
    assert!(
        v.iter().any(|v| v.rule == Rule::LeaderElected
            && v.detail.starts_with("rule leader-elected: no member held role 0 in 30.000s")),
        "{v:?}"
    );
    let short = nobody(include_str!("scenarios/oracle-nobody-5s.toml"), 5_000);
    assert!(short.iter().all(|v| v.rule != Rule::LeaderElected), "{short:?}");
}

/// m0's client tells its driver once that the election log was lost, then
/// m0 publishes `epoch`: the told loss must show in the published log epoch
/// (a core whose `handle_log_lost` did nothing passed every other oracle:
/// tokens are compared within the simulator's own log epochs), and the
/// epoch may not run ahead of the losses either.
fn after_one_told_loss(epoch: u64) -> Vec<String> {
    use neli_sim::record::{AssignmentChange, AssignmentObs, ClaimObs};
    let s = scenario(include_str!("scenarios/oracle-told-loss.toml"));
    let mut log = Log::default();
    log.slots.insert("m0".into(), 0);
    log.assignments.push(AssignmentObs { seq: 1, at: 500, member: "m0".into(), change: AssignmentChange::LogLost });
    let claim = ClaimObs {
        seq: 2,
        at: 600,
        member: "m0".into(),
        log_epoch: epoch,
        generation: None,
        leading: Default::default(),
    };
    log.claims.push(claim);
    let v = judge(&s, &log, &[ClockModel::new(0)], 2000).1;
    v.into_iter().filter(|v| v.rule == Rule::LogEpoch).map(|v| v.detail).collect()
}

#[test]
fn a_told_log_loss_must_raise_the_published_log_epoch_once() {
    assert_eq!(after_one_told_loss(1), Vec::<String>::new());
    let v = after_one_told_loss(0);
    assert!(v[0].contains("m0 published log epoch 0 at 0.600s after its client told it 1 time(s)"), "{v:?}");
    let v = after_one_told_loss(2);
    assert!(v[0].contains("m0 published log epoch 2 but was told of 1 lost log(s) and acquired 0 term(s)"), "{v:?}");
}
