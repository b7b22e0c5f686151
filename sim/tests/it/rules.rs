//! Each per-rule oracle (`neli_sim::oracle::rules`) on a small hand-made
//! log: the story of one member that breaks exactly one rule, judged
//! against the story where it keeps it. The harness's end-to-end checks
//! (overlap, token order) cannot see most of these alone, because another
//! layer of the design hides the broken one (docs/background.md,
//! "Per-rule oracles").

use std::collections::BTreeMap;

use neli::Event;
use neli_sim::oracle::rules;
use neli_sim::record::{
    AppendObs, AssignmentChange, AssignmentObs, ClaimObs, EventObs, HeartbeatClaim, Log, ProofObs, WriteObs,
};
use neli_sim::{Rule, Violation};

use crate::scenario;

/// T = 1 s, with the membership proof (the default) or without.
fn scenario_with_proof(proof: bool) -> neli_sim::Scenario {
    if proof {
        scenario(include_str!("scenarios/rules-with-proof.toml"))
    } else {
        scenario(include_str!("scenarios/rules-without-proof.toml"))
    }
}

fn assigned(log: &mut Log, at: u64, member: &str, generation: u64) {
    let seq = log.next_seq();
    log.assignments.push(AssignmentObs {
        seq,
        at,
        member: member.into(),
        change: AssignmentChange::Assigned { generation, partitions: vec![0] },
    });
}

fn change(log: &mut Log, at: u64, member: &str, change: AssignmentChange) {
    let seq = log.next_seq();
    log.assignments.push(AssignmentObs { seq, at, member: member.into(), change });
}

fn heartbeat(log: &mut Log, at: u64, offset: u64, author: &str, term: u64, sent_at: u64) {
    let seq = log.next_seq();
    let heartbeat = Some(HeartbeatClaim { role: 0, term, sent_at, lease: None });
    log.appends.push(AppendObs { seq, at, partition: 0, offset, author: author.into(), heartbeat });
}

fn proof(log: &mut Log, member: &str, generation: u64, sent_local: u64) {
    let seq = log.next_seq();
    log.proofs.push(ProofObs { seq, member: member.into(), generation, sent_local });
}

fn claim(log: &mut Log, at: u64, member: &str, token: u64, until: u64, log_epoch: u64) {
    let seq = log.next_seq();
    let leading = BTreeMap::from([(
        0,
        neli::Lease { token: neli::Token(token), until: neli::Time::from_millis(until), log_epoch },
    )]);
    let generation = taken(log, member);
    log.claims.push(ClaimObs { seq, at, member: member.into(), log_epoch, generation, leading });
}

/// The generation of the last assignment handed to `member` (what its
/// status reports).
fn taken(log: &Log, member: &str) -> Option<u64> {
    log.assignments.iter().rev().filter(|a| a.member == member).find_map(|a| match a.change {
        AssignmentChange::Assigned { generation, .. } => Some(generation),
        _ => None,
    })
}

/// m0 is assigned partition 0 in generation 1, writes its heartbeat (offset
/// 5, sent at 1000 on its clock), proves membership at 1010 and leads until
/// 2000 = 1000 + T: every rule kept.
fn keeps_every_rule() -> Log {
    let mut log = Log::default();
    assigned(&mut log, 100, "m0", 1);
    heartbeat(&mut log, 110, 5, "m0", 1, 1000);
    proof(&mut log, "m0", 1, 1010);
    claim(&mut log, 120, "m0", 5, 2000, 0);
    log
}

fn judged(log: &Log) -> Vec<Violation> {
    rules::judge(&scenario_with_proof(true), log)
}

/// The one violation in `v`, of `rule`, with the member it names: its text.
fn only(v: Vec<Violation>, rule: Rule) -> String {
    assert_eq!(v.len(), 1, "exactly one rule broken, got {v:?}");
    assert_eq!(v[0].rule, rule, "{v:?}");
    assert!(v[0].detail.starts_with(&format!("{}: ", rule.class())), "{v:?}");
    assert_eq!(v[0].members.len(), 1, "a rule's violation names its member: {v:?}");
    v[0].detail.clone()
}

#[test]
fn a_lease_that_keeps_every_rule_passes() {
    assert_eq!(judged(&keeps_every_rule()), Vec::<Violation>::new());
}

#[test]
fn a_lease_longer_than_the_heartbeats_send_time_plus_t_breaks_send_time() {
    let mut log = keeps_every_rule();
    // As if the lease ran from when the heartbeat was read (60 ms later).
    claim(&mut log, 130, "m0", 5, 2060, 0);
    // Without the proof the lease is bounded by the heartbeat alone.
    let v = rules::judge(&scenario_with_proof(false), &log);
    let text = only(v, Rule::SendTime);
    assert!(text.contains("ends at 2060ms on its clock, 60ms after"), "{text}");
}

#[test]
fn a_lease_outliving_the_membership_proof_breaks_the_proof_rule() {
    let mut log = Log::default();
    assigned(&mut log, 100, "m0", 1);
    proof(&mut log, "m0", 1, 900);
    heartbeat(&mut log, 110, 5, "m0", 1, 1000);
    claim(&mut log, 120, "m0", 5, 2000, 0);
    let text = only(judged(&log), Rule::MembershipProof);
    assert!(text.contains("100ms after its newest accepted membership proof"), "{text}");
    // With the proof off, the same lease keeps every rule that is on.
    assert_eq!(rules::judge(&scenario_with_proof(false), &log), Vec::<Violation>::new());
}

#[test]
fn a_proof_from_an_older_generation_does_not_count() {
    let mut log = Log::default();
    assigned(&mut log, 100, "m0", 2);
    proof(&mut log, "m0", 1, 1010);
    heartbeat(&mut log, 110, 5, "m0", 2, 1000);
    claim(&mut log, 120, "m0", 5, 2000, 0);
    let text = only(judged(&log), Rule::MembershipProof);
    assert!(text.contains("no accepted membership proof of generation 2"), "{text}");
}

#[test]
fn a_token_naming_somebody_elses_record_breaks_own_evidence() {
    let mut log = Log::default();
    assigned(&mut log, 100, "m0", 1);
    heartbeat(&mut log, 105, 4, "stranger", 1, 1000);
    heartbeat(&mut log, 110, 5, "m0", 1, 1000);
    proof(&mut log, "m0", 1, 1010);
    claim(&mut log, 120, "m0", 4, 2000, 0);
    let text = only(judged(&log), Rule::OwnEvidence);
    assert!(text.contains("written by stranger"), "{text}");
}

#[test]
fn a_lease_on_an_old_terms_heartbeat_breaks_current_term() {
    let mut log = Log::default();
    assigned(&mut log, 50, "m0", 1);
    heartbeat(&mut log, 60, 5, "m0", 1, 1000);
    change(&mut log, 70, "m0", AssignmentChange::Revoked(vec![0]));
    assigned(&mut log, 100, "m0", 2);
    heartbeat(&mut log, 110, 6, "m0", 2, 1000);
    proof(&mut log, "m0", 2, 1010);
    claim(&mut log, 120, "m0", 5, 2000, 0);
    let text = only(judged(&log), Rule::CurrentTerm);
    assert!(text.contains("its own heartbeat of generation 1"), "{text}");
}

#[test]
fn a_lease_after_the_partition_was_lost_breaks_assigned_only() {
    let mut log = keeps_every_rule();
    change(&mut log, 150, "m0", AssignmentChange::Lost(vec![0]));
    claim(&mut log, 160, "m0", 5, 1990, 0);
    let text = only(judged(&log), Rule::AssignedOnly);
    assert!(text.contains("partition 0 was not assigned to it (last change: Lost([0]) at 0.150s)"), "{text}");
}

/// A member's tokens only go up, unless it says its log restarted: across a
/// lost log its own published log epoch must be higher (a silent restart of
/// tokens is the violation).
#[test]
fn a_members_tokens_only_increase_unless_it_says_the_log_restarted() {
    let renewed = |token, epoch| {
        let mut log = keeps_every_rule();
        let seq = log.next_seq();
        let generation = taken(&log, "m0");
        log.claims.push(ClaimObs {
            seq,
            at: 125,
            member: "m0".into(),
            log_epoch: 0,
            generation,
            leading: BTreeMap::new(),
        });
        heartbeat(&mut log, 130, token, "m0", 1, 1100);
        proof(&mut log, "m0", 1, 1110);
        claim(&mut log, 140, "m0", token, 2100, epoch);
        judged(&log)
    };
    for token in [2, 5] {
        let text = only(renewed(token, 0), Rule::TokenOrder);
        assert!(text.contains(&format!("went from 5 (log epoch 0) to {token} (log epoch 0)")), "{text}");
    }
    // Said loudly: a new log epoch, tokens start again.
    assert_eq!(renewed(2, 1), Vec::<Violation>::new());
    assert_eq!(renewed(5, 1), Vec::<Violation>::new());
    // A new term with a higher token is fine.
    assert_eq!(renewed(6, 0), Vec::<Violation>::new());
}

/// Within one pulse a member can fence a term that ended and acquire the
/// role again (docs/background.md, "Protocol semantics"): its published
/// token changes with no pulse in between. That is a new term if it acquired
/// the new token, and a token changed inside a term otherwise.
#[test]
fn a_token_changed_between_two_pulses_is_a_new_term_only_if_acquired() {
    let changed = |token, acquired: bool| {
        let mut log = keeps_every_rule();
        heartbeat(&mut log, 130, token, "m0", 1, 1100);
        proof(&mut log, "m0", 1, 1110);
        claim(&mut log, 140, "m0", token, 2100, 0);
        if acquired {
            event(&mut log, 140, "m0", Event::Acquired { role: 0, token: neli::Token(token) });
        }
        judged(&log)
    };
    assert_eq!(changed(6, true), Vec::<Violation>::new());
    let text = only(changed(6, false), Rule::TokenOrder);
    assert!(text.contains("went from 5 (log epoch 0) to 6 (log epoch 0) at 0.140s for the same lease"), "{text}");
    let text = only(changed(2, true), Rule::TokenOrder);
    assert!(text.contains("to 2 (log epoch 0) at 0.140s for a new term"), "{text}");
}

fn event(log: &mut Log, at: u64, member: &str, event: Event) {
    log.events.push(EventObs { at, member: member.into(), event, log_epoch: 0 });
}

#[test]
fn a_lost_partition_answered_with_revoked_breaks_lost_is_fenced() {
    let mut log = keeps_every_rule();
    change(&mut log, 150, "m0", AssignmentChange::Lost(vec![0]));
    event(&mut log, 150, "m0", Event::Revoked { role: 0 });
    let text = only(judged(&log), Rule::LostIsFenced);
    assert!(text.contains("next event for role 0 was Revoked at 0.150s"), "{text}");

    let mut log = keeps_every_rule();
    change(&mut log, 150, "m0", AssignmentChange::Lost(vec![0]));
    event(&mut log, 150, "m0", Event::Fenced { role: 0 });
    assert_eq!(judged(&log), Vec::<Violation>::new());
}

fn handler_write(log: &mut Log, at: u64, member: &str, token: u64) {
    log.writes.push(WriteObs { at, member: member.into(), role: 0, token, log_epoch: 0, told: None, in_handler: true });
}

#[test]
fn a_revoked_handler_still_working_when_the_next_leader_acquires_breaks_the_barrier() {
    let mut log = keeps_every_rule();
    event(&mut log, 3000, "m1", Event::Acquired { role: 0, token: neli::Token(9) });
    handler_write(&mut log, 3050, "m0", 5);
    let text = only(judged(&log), Rule::RevokedBarrier);
    assert!(text.contains("m0's Revoked handler still wrote with token 5 at 3.050s, after m1 acquired"), "{text}");

    // Before the successor: fine.
    let mut log = keeps_every_rule();
    handler_write(&mut log, 2950, "m0", 5);
    event(&mut log, 3000, "m1", Event::Acquired { role: 0, token: neli::Token(9) });
    assert_eq!(judged(&log), Vec::<Violation>::new());

    // After the coordinator dropped m0 (its rebalance timeout ran out), the
    // barrier no longer holds and its late write is for the token to refuse.
    let mut log = keeps_every_rule();
    log.removals.push((2900, "m0".into()));
    event(&mut log, 3000, "m1", Event::Acquired { role: 0, token: neli::Token(9) });
    handler_write(&mut log, 3050, "m0", 5);
    assert_eq!(judged(&log), Vec::<Violation>::new());
}

#[test]
fn a_kept_partitions_proof_counts_across_generations() {
    // cooperative-sticky: partition 0 stays with m0 from generation 1 into 2
    // (no Revoked in between), so the generation-1 proof still bounds the
    // lease it claims in generation 2; a proof of generation 1 after a
    // revocation would not (a_proof_from_an_older_generation_does_not_count).
    let mut log = Log::default();
    assigned(&mut log, 100, "m0", 1);
    proof(&mut log, "m0", 1, 1010);
    assigned(&mut log, 105, "m0", 2);
    heartbeat(&mut log, 110, 5, "m0", 2, 1000);
    claim(&mut log, 120, "m0", 5, 2000, 0);
    assert_eq!(judged(&log), Vec::<Violation>::new());
}

/// The status reports the generation of the assignment the member took:
/// none after it resigned or its proof was rejected, and an assignment of a
/// generation it resigned through is not taken (a core whose `generation()`
/// answered None or a constant passed every other oracle).
#[test]
fn the_status_reports_the_generation_of_the_assignment_taken() {
    let status = |log: &mut Log, at: u64, generation: Option<u64>| {
        let seq = log.next_seq();
        log.claims.push(ClaimObs { seq, at, member: "m0".into(), log_epoch: 0, generation, leading: BTreeMap::new() });
    };
    let of_rule = |log: &Log| -> Vec<Violation> {
        judged(log).into_iter().filter(|v| v.rule == Rule::StatusGeneration).collect()
    };
    let mut log = keeps_every_rule();
    status(&mut log, 130, Some(1));
    assert_eq!(of_rule(&log), Vec::<Violation>::new());
    status(&mut log, 140, None);
    let v = of_rule(&log);
    assert!(v[0].detail.contains("m0's status reported generation None at 0.140s"), "{v:?}");
    assert!(v[0].detail.contains("was Some(1)"), "{v:?}");

    // Resigned, then handed a late assignment of the generation it resigned
    // through: it reports none.
    let mut log = keeps_every_rule();
    change(&mut log, 130, "m0", AssignmentChange::Resigned);
    assigned(&mut log, 135, "m0", 1);
    status(&mut log, 140, None);
    assert_eq!(of_rule(&log), Vec::<Violation>::new());
    assigned(&mut log, 150, "m0", 2);
    status(&mut log, 160, Some(2));
    assert_eq!(of_rule(&log), Vec::<Violation>::new());

    // A rejected proof of its generation ends the assignment.
    let mut log = keeps_every_rule();
    change(&mut log, 130, "m0", AssignmentChange::ProofRejected { generation: 1 });
    status(&mut log, 140, None);
    assert_eq!(of_rule(&log), Vec::<Violation>::new());
}

/// Each heartbeat's `lease` (what `neli watch` shows) tells the truth: it
/// claims only a term its sender published, sent before that lease ended,
/// and a term held for 2T has some heartbeat that says so (a core whose
/// `is_leader` compared the lease end the wrong way passed every other
/// oracle: only these heartbeats and the model read it).
#[test]
fn heartbeats_say_who_leads_and_only_while_it_does() {
    let leased = |log: &mut Log, sent_at: u64, token: u64| {
        let seq = log.next_seq();
        let heartbeat = Some(HeartbeatClaim { role: 0, term: 1, sent_at, lease: Some(token) });
        log.appends.push(AppendObs { seq, at: 150, partition: 0, offset: 6, author: "m0".into(), heartbeat });
    };
    let of_rule =
        |log: &Log| -> Vec<Violation> { judged(log).into_iter().filter(|v| v.rule == Rule::HeartbeatLease).collect() };
    let base = || {
        let mut log = keeps_every_rule();
        log.slots.insert("m0".into(), 0);
        leased(&mut log, 1500, 5);
        log
    };
    assert_eq!(of_rule(&base()), Vec::<Violation>::new());
    let mut at_end = base();
    leased(&mut at_end, 2000, 5);
    let v = of_rule(&at_end);
    assert!(v[0].detail.contains("says it leads role 0 with token 5, but that lease ended at 2000ms"), "{v:?}");
    let mut unknown = base();
    leased(&mut unknown, 1500, 9);
    assert!(of_rule(&unknown)[0].detail.contains("with token 9, a term it never published"), "{:?}", of_rule(&unknown));
    // Held from 0.120 s to 2.120 s (2T) with no heartbeat claiming it.
    let mut silent = keeps_every_rule();
    silent.slots.insert("m0".into(), 0);
    claim(&mut silent, 2120, "m0", 5, 3000, 0);
    let v = of_rule(&silent);
    assert!(
        v[0].detail.contains("m0 held role 0 with token 5 from 0.120s to 2.120s but none of its heartbeats said so"),
        "{v:?}"
    );
}

/// The application's handles (`Neli`, its `Control`, a pulse's answer) read
/// one published status on one clock: a disagreement at one instant is a
/// violation of its own (a `Control::is_leader` that answered true passed
/// every other oracle, since the simulated application writes by `token()`).
#[test]
fn handles_that_disagree_on_leadership_are_a_violation() {
    let mut log = keeps_every_rule();
    assert!(judged(&log).iter().all(|v| v.rule != Rule::HandlesAgree));
    log.saw_broken(Rule::HandlesAgree, "m0", 1500, "Neli::is_leader false, Control::is_leader true".into());
    let v: Vec<Violation> = judged(&log).into_iter().filter(|v| v.rule == Rule::HandlesAgree).collect();
    assert_eq!(
        v.iter().map(|v| (v.detail.as_str(), v.members.clone(), v.at)).collect::<Vec<_>>(),
        [(
            "rule handles-agree: m0's handles disagreed at 1.500s: Neli::is_leader false, Control::is_leader true",
            vec!["m0".to_owned()],
            Some(1500)
        )]
    );
}

/// G = 1 s: the story of `keeps_every_rule`, whose lease is claimed 20 ms
/// after the assignment, breaks the acquisition grace; claimed 1 s after
/// the assignment it keeps it. With a clock fault in the scenario the rule
/// is not judged (G runs on the member's clock, which may then run ahead).
#[test]
fn a_lease_taken_sooner_than_g_after_the_assignment_breaks_grace() {
    let grace = scenario(include_str!("scenarios/rules-grace.toml"));
    let early = keeps_every_rule();
    let text = only(rules::judge(&grace, &early), Rule::Grace);
    assert!(text.contains("20ms after partition 0 was handed to it") && text.contains("G = 1000ms"), "{text}");

    let mut late = Log::default();
    assigned(&mut late, 100, "m0", 1);
    heartbeat(&mut late, 1090, 5, "m0", 1, 1000);
    proof(&mut late, "m0", 1, 1010);
    claim(&mut late, 1100, "m0", 5, 2000, 0);
    assert_eq!(rules::judge(&grace, &late), Vec::<Violation>::new());

    let stepped = scenario(include_str!("scenarios/rules-grace-clock-step.toml"));
    assert_eq!(rules::judge(&stepped, &early), Vec::<Violation>::new());
}

/// A resign must move leadership: the member that resigned stays out of
/// the group for 2S + T (a driver that rejoined at its next pulse took the
/// role straight back).
#[test]
fn an_assignment_sooner_than_the_resign_hold_off_breaks_resign_holds_off() {
    let mut log = keeps_every_rule();
    let seq = log.next_seq();
    log.assignments.push(AssignmentObs { seq, at: 3_000, member: "m0".into(), change: AssignmentChange::Resigned });
    // 2S + T = 7 s at S = 3 s, T = 1 s: 6.99 s after the resign is too soon.
    assigned(&mut log, 9_990, "m0", 2);
    let v = only(judged(&log), Rule::ResignHoldsOff);
    assert!(v.contains("m0 was assigned generation 2 at 9.990s, 6990ms after it resigned at 3.000s"), "{v}");
    // 7 s after it is fine.
    let mut log = keeps_every_rule();
    let seq = log.next_seq();
    log.assignments.push(AssignmentObs { seq, at: 3_000, member: "m0".into(), change: AssignmentChange::Resigned });
    assigned(&mut log, 10_000, "m0", 2);
    assert!(judged(&log).iter().all(|v| v.rule != Rule::ResignHoldsOff), "{:?}", judged(&log));
}

// The rules judged where the simulator sees them broken (`wakes-on-time`,
// `no-busy-wait`, `heartbeat-seq`: `Log::seen_broken`) come out like the
// others, named, the first in full and the rest counted.
#[test]
fn a_rule_seen_broken_as_it_happened_is_reported_by_name() {
    let mut log = keeps_every_rule();
    for at in [1500, 1800] {
        log.saw_broken(Rule::WakesOnTime, "m0", at, format!("late wake at {at}"));
    }
    let v = only(judged(&log), Rule::WakesOnTime);
    assert!(v.contains("m0 at 1.500s: late wake at 1500 (1 more)"), "{v}");
}

// Reports list broken rules in the order of their printed names, so a
// report reads the same whatever order `Rule`'s variants are declared in.
#[test]
fn broken_rules_are_listed_by_name() {
    let mut log = keeps_every_rule();
    log.saw_broken(Rule::WakesOnTime, "m0", 1500, "late wake".into());
    log.saw_broken(Rule::NoBusyWait, "m0", 1600, "spins".into());
    log.saw_broken(Rule::HeartbeatSeq, "m0", 1700, "out of order".into());
    let rules: Vec<Rule> = judged(&log).into_iter().map(|v| v.rule).collect();
    assert_eq!(rules, [Rule::HeartbeatSeq, Rule::NoBusyWait, Rule::WakesOnTime]);
}
