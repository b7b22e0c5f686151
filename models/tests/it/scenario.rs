//! Counterexamples become scenario files (scenarios/FORMAT.md) that the
//! simulator replays.

use neli::core::UnsafeVariant;
use neli_models::{Faults, counterexample_to_scenario};
use neli_sim::scenario::{Dur, FaultKind, Variant};

use crate::{ONE_LEADER, counterexample, hunt, small, three_members};

/// The hazard-1 counterexample written as a scenario: the pause of the
/// leader becomes a `pause` fault with its start and length in real time.
#[test]
fn lease_from_receipt_counterexample_writes_a_pause_scenario() {
    let mut cfg = small(Faults { pauses: 1, ..Faults::default() });
    cfg.variant = UnsafeVariant { lease_from_receipt: true, ..UnsafeVariant::default() };
    cfg.membership_proof = false;
    let (model, checker) = hunt(cfg, ONE_LEADER);
    let path = counterexample(&model, &checker, ONE_LEADER);
    let replay = counterexample_to_scenario(&model, "model-lease-from-receipt", &path);
    let s = &replay.scenario;
    println!("{}", s.to_toml(&replay.notes).expect("writable"));
    assert_eq!(s.election.variant, Variant::LeaseFromReceipt);
    assert!(!s.election.membership_proof);
    assert_eq!((s.election.heartbeat_timeout, s.election.session_timeout), (Dur(1000), Dur(2000)));
    // No neli configuration selects the variant: the file says why it runs it
    // (scenarios/FORMAT.md, `election.unchecked`).
    let why = s.election.unchecked.as_deref().unwrap_or_default();
    assert!(why.contains("(election.variant): an unsafe variant of the core"), "{why}");
    // The one fault of the path: a pause of the leader (m0 or m1), closed by
    // its resume, aimed at the coordinator's deal (the model pauses it
    // before it polled its assignment); the old leader, idle in the path's
    // last tick while the resumed member leads, stalls its poll loop there.
    let faults: Vec<_> = s.timed_faults().collect();
    assert_eq!(faults.len(), 2, "{faults:?}");
    assert_eq!((faults[0].fault.kind(), faults[0].on), (FaultKind::Pause, Some(neli_sim::scenario::Trigger::Dealt)));
    assert_eq!(faults[1].fault.kind(), FaultKind::StallPoll);
    // Written out, it reads back as the same scenario.
    let text = s.to_toml(&replay.notes).expect("writable");
    let back = neli_sim::Scenario::parse(&text, "<model>").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.timed_faults().collect::<Vec<_>>(), faults);
}

/// A pause that lands right after a member's assignment poll, before it
/// read anything back, is aimed at the moment the simulator's coordinator
/// accepts that member's membership proof (`on = "proof-accepted"`), not at
/// a time: the window is milliseconds wide in the simulator. The member is
/// also cut off the coordinator for the pause and T after it, since the
/// model's client hears of its eviction only when it polls. A fault aimed
/// at the first assignment is not moved past the group's forming; one right
/// after the first leader acquired in the first tick is aimed at that
/// acquisition.
#[test]
fn a_pause_right_after_an_assignment_is_aimed_at_the_proof() {
    use neli_models::election::ElectionAction::*;
    use neli_sim::scenario::{Fault, Target, Trigger};
    use stateright::Model;
    let model = small(Faults { pauses: 1, ..Faults::default() }).into_model();
    let init = model.init_states().remove(0);
    let actions = [Sync { deal: 0 }, Poll(0), Pause(0), Poll(1), Tick { slow: None }, Tick { slow: None }, Resume(0)];
    let path = stateright::Path::from_actions(&model, init, &actions).expect("the model enables these steps");
    let replay = counterexample_to_scenario(&model, "aimed", &path);
    let faults: Vec<_> = replay.scenario.timed_faults().cloned().collect();
    assert_eq!(faults.len(), 2, "{faults:?}");
    assert!(faults.iter().all(|f| f.on == Some(Trigger::ProofAccepted) && f.at == Dur(0)), "{faults:?}");
    assert_eq!(faults[0].fault, Fault::Pause { target: Target::Member(0), duration: Dur(1000) });
    assert_eq!(faults[1].fault, Fault::IsolateCoordinator { target: Target::Member(0), duration: Dur(2000) });
    // The same pause after the member read its heartbeat back and led: aimed
    // at its acquisition, since the simulator's group may form after the
    // instant tick 0 stands for.
    let actions = [Sync { deal: 0 }, Poll(0), Read(0, 0), Pause(0), Poll(1), Tick { slow: None }, Resume(0)];
    let init = model.init_states().remove(0);
    let path = stateright::Path::from_actions(&model, init, &actions).expect("the model enables these steps");
    let replay = counterexample_to_scenario(&model, "led", &path);
    let faults: Vec<_> = replay.scenario.timed_faults().collect();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!((faults[0].on, faults[0].at), (Some(Trigger::Acquired), Dur(0)));
    assert_eq!(faults[0].fault, Fault::Pause { target: Target::Member(0), duration: Dur(500) });
    // So is a crash there.
    let model = small(Faults { crashes: 1, ..Faults::default() }).into_model();
    let actions = [Sync { deal: 0 }, Poll(0), Read(0, 0), Poll(1), Crash(0)];
    let init = model.init_states().remove(0);
    let path = stateright::Path::from_actions(&model, init, &actions).expect("the model enables these steps");
    let replay = counterexample_to_scenario(&model, "crashed", &path);
    let faults: Vec<_> = replay.scenario.timed_faults().collect();
    assert_eq!((faults[0].on, faults[0].at), (Some(Trigger::Acquired), Dur(0)), "{faults:?}");
    assert!(matches!(faults[0].fault, Fault::Crash { target: Target::Member(0), .. }), "{faults:?}");
    // A tick later it is a timed one.
    let model = small(Faults { pauses: 1, ..Faults::default() }).into_model();
    let actions = [Sync { deal: 0 }, Poll(0), Read(0, 0), Poll(1), Tick { slow: None }, Pause(0), Resume(0)];
    let init = model.init_states().remove(0);
    let path = stateright::Path::from_actions(&model, init, &actions).expect("the model enables these steps");
    let replay = counterexample_to_scenario(&model, "timed", &path);
    let faults: Vec<_> = replay.scenario.timed_faults().collect();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0].on, None);
}

/// The same pause in a model without the membership proof: no proof is
/// sent, so the pause is aimed at the assignment, with which the member
/// sends its heartbeat; aimed at a proof it would never start, and the
/// simulator refuses such a file (scenarios/FORMAT.md, `on`).
#[test]
fn without_the_proof_a_pause_right_after_an_assignment_is_aimed_at_the_assignment() {
    use neli_models::election::ElectionAction::*;
    use neli_sim::scenario::Trigger;
    use stateright::Model;
    let mut cfg = small(Faults { pauses: 1, ..Faults::default() });
    cfg.membership_proof = false;
    let model = cfg.into_model();
    let init = model.init_states().remove(0);
    let actions = [Sync { deal: 0 }, Poll(0), Pause(0), Poll(1), Tick { slow: None }, Tick { slow: None }, Resume(0)];
    let path = stateright::Path::from_actions(&model, init, &actions).expect("the model enables these steps");
    let replay = counterexample_to_scenario(&model, "aimed", &path);
    let on: Vec<_> = replay.scenario.timed_faults().map(|f| f.on).collect();
    assert_eq!(on, vec![Some(Trigger::Assigned); 2]);
    // The model's member hands a revoked partition back in one step.
    assert_eq!(replay.scenario.election.revoked_work, Some(Dur(0)));
    let text = replay.scenario.to_toml(&replay.notes).expect("writable");
    neli_sim::Scenario::parse(&text, "aimed.toml").expect("the simulator accepts it");
}

/// The model's tick orders its steps; the simulator's tick lasts
/// milliseconds. A member that resumes in the tick in which another member
/// took its first role, after it, resumes at that acquisition in the
/// scenario: its pause lasts a tick longer, and a `resume` aimed at the
/// other's acquisition (`on = "acquired"`, `of`) ends it there, so that it
/// acts after that acquisition in every seed (which of the two tokens comes
/// first decides "tokens strictly increase per role", and a resume inside
/// the old lease writes the stale token). One that resumes in a tick where
/// nobody took a role resumes on the tick. A pause right after an
/// assignment is written with its resume, a quarter of a tick late (the rule
/// above is for a pause aimed at a time or at an acquisition); and where a
/// member revoked in an eager rebalance in that tick, the resume comes a
/// quarter of a tick and a tick and a half later.
#[test]
fn a_resume_after_another_members_acquisition_in_its_tick_comes_after_it() {
    use neli_models::election::ElectionAction::*;
    use neli_sim::scenario::{Fault, Target, Trigger};
    use stateright::Model;
    let mut cfg = small(Faults { pauses: 1, ..Faults::default() });
    cfg.membership_proof = false;
    let model = cfg.into_model();
    let faults = |actions: &[neli_models::election::ElectionAction]| {
        let init = model.init_states().remove(0);
        let path = stateright::Path::from_actions(&model, init, actions).expect("the model enables these steps");
        counterexample_to_scenario(&model, "lag", &path).scenario.timed_faults().cloned().collect::<Vec<_>>()
    };
    let pause = |actions: &[neli_models::election::ElectionAction]| {
        faults(actions).into_iter().find_map(|f| match f.fault {
            Fault::Pause { duration, .. } => Some(duration),
            _ => None,
        })
    };
    let tick = Tick { slow: None };
    let before = [Sync { deal: 0 }, Poll(0), Poll(1), Pause(0), tick, tick, tick, tick, Poll(1), Sync { deal: 0 }];
    let without = [&before[..], &[Poll(1), Resume(0)]].concat();
    // Paused right after its assignment, m0's pause is aimed at that
    // moment and written with its resume, a quarter of a tick late.
    let at_assignment = [&before[..], &[Poll(1), Read(1, 0), Resume(0)]].concat();
    assert_eq!(pause(&at_assignment), Some(Dur(4 * 500 + 125)), "m1 took the role before m0 resumed");
    // Paused once it led, m0 resumes at m1's acquisition.
    let led = [Sync { deal: 0 }, Poll(0), Read(0, 0), Poll(1), Pause(0), tick, tick, tick, tick, Poll(1)];
    let after_acquisition = [&led[..], &[Sync { deal: 0 }, Poll(1), Read(1, 0), Resume(0)]].concat();
    assert_eq!(pause(&after_acquisition), Some(Dur(5 * 500)), "m1 took the role before m0 resumed");
    let written = faults(&after_acquisition);
    let paused = written.iter().find(|f| matches!(f.fault, Fault::Pause { .. })).expect("the pause");
    let resume =
        written.iter().find(|f| matches!(f.fault, Fault::Resume { .. })).expect("a resume at m1's acquisition");
    assert_eq!((resume.at, resume.on), (paused.at, Some(Trigger::Acquired)), "armed where the pause was");
    assert_eq!(resume.fault.member(), paused.fault.member(), "it ends m0's pause");
    assert_eq!(resume.of, Some(Target::Member(1)), "aimed at m1's acquisition");
    assert_eq!(written.iter().filter(|f| matches!(f.fault, Fault::Resume { .. })).count(), 1);
    assert_eq!(pause(&without), Some(Dur(4 * 500)), "nobody took the role in m0's last tick");
    assert!(!faults(&without).iter().any(|f| matches!(f.fault, Fault::Resume { .. })));
    // m1 paused, m0 revokes its partition in the eager rebalance after m1's
    // eviction and takes it again before m1 resumes: the simulator's
    // rebalance waits for m0's group heartbeat and its next poll, a tick
    // and a half more.
    let lead = [tick, Timeout(0), Read(0, 0)];
    let revoked = [
        &[Sync { deal: 0 }, Poll(0), Read(0, 0), Pause(1)][..],
        &lead,
        &lead,
        &lead,
        &[tick, Poll(0), Sync { deal: 0 }, Poll(0), Read(0, 0), Resume(1)],
    ]
    .concat();
    assert_eq!(pause(&revoked), Some(Dur(4 * 500 + 125 + 750)), "m0 revoked before the deal in m1's last tick");
}

/// A member that resumes in the tick in which another was handed the
/// partition and wrote its heartbeat, before that one read it back: the
/// resume comes half a tick later (after the simulator's rebalance), and
/// the other's loop stalls from its assignment, with the application in
/// the background so that the stall holds neli's loop; the resumed member
/// then reads both heartbeats and acquires first, as in the model.
#[test]
fn a_resume_between_a_successors_heartbeat_and_its_read_back_holds_the_read_back() {
    use neli_models::election::ElectionAction::*;
    use neli_sim::scenario::{AppLoop, Fault, Target, Trigger};
    use stateright::Model;
    let mut cfg = three_members(Faults { pauses: 1, ..Faults::default() });
    cfg.membership_proof = false;
    let model = cfg.into_model();
    let tick = Tick { slow: None };
    let actions = [
        &[Sync { deal: 0 }, Poll(1), Poll(2), Pause(0), tick, tick, tick, tick][..],
        &[Poll(1), Poll(2), Sync { deal: 0 }, Poll(1), Resume(0), Poll(0), Read(0, 0), Read(1, 0)],
    ]
    .concat();
    let init = model.init_states().remove(0);
    let path = stateright::Path::from_actions(&model, init, &actions).expect("the model enables these steps");
    let replay = counterexample_to_scenario(&model, "read-back", &path);
    let faults: Vec<_> = replay.scenario.timed_faults().cloned().collect();
    let stall = faults.iter().find(|f| matches!(f.fault, Fault::StallPoll { .. })).expect("a stall");
    assert_eq!(stall.fault, Fault::StallPoll { target: Target::Member(1), duration: Dur(500) });
    assert_eq!((stall.on, stall.at), (Some(Trigger::Assigned), Dur(3 * 500)), "armed a tick early");
    let pause = faults.iter().find_map(|f| match f.fault {
        Fault::Pause { duration, .. } => Some(duration),
        _ => None,
    });
    assert_eq!(pause, Some(Dur(4 * 500 + 250)), "resumed half a tick late");
    let e = &replay.scenario.election;
    assert_eq!((e.app_loop, e.app_work), (AppLoop::Background, None));
}
