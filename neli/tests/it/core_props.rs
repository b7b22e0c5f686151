//! Property tests: random broker facts and times fed to the core, with the
//! safety rules checked after every step.

use std::collections::BTreeMap;

use neli::core::{CoreConfig, Heartbeat, Member, Output, Record};
use neli::{Event, Time, Token};
use proptest::prelude::*;

use crate::core_loop::dur;

#[derive(Debug, Clone)]
enum Step {
    Advance(u64),
    Assign(Vec<u32>),
    Revoke(u32),
    Lose(u32),
    /// Deliver the oldest `n` produced records (later ones stay buffered).
    Deliver(usize),
    /// Drop the oldest produced record (lost in flight).
    Drop,
    Foreign(Vec<u8>),
    Membership(bool),
    Resign,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u64..1500).prop_map(Step::Advance),
        1 => proptest::collection::vec(0u32..2, 0..3).prop_map(Step::Assign),
        1 => (0u32..2).prop_map(Step::Revoke),
        1 => (0u32..2).prop_map(Step::Lose),
        4 => (0usize..4).prop_map(Step::Deliver),
        1 => Just(Step::Drop),
        1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Step::Foreign),
        2 => any::<bool>().prop_map(Step::Membership),
        1 => Just(Step::Resign),
    ]
}

fn config() -> impl Strategy<Value = CoreConfig> {
    (1u32..4, 1u32..3, 200u64..2000, any::<bool>(), 0u64..500).prop_map(|(roles, partitions, t, proof, grace)| {
        CoreConfig {
            roles,
            partitions,
            grace: dur(grace),
            membership_proof: proof,
            ..CoreConfig::exclusive("me", dur(t))
        }
    })
}

struct World {
    m: Member,
    now: Time,
    generation: u64,
    in_flight: Vec<Record>,
    offset: u64,
    pending_proofs: Vec<(u64, Time)>,
    /// Latest send time of an own heartbeat actually delivered, per role.
    delivered_sent: BTreeMap<u32, Time>,
    leading: BTreeMap<u32, bool>,
    last_token: BTreeMap<u32, Token>,
}

impl World {
    fn drain(&mut self) -> Result<(), TestCaseError> {
        while let Some(out) = self.m.poll_output() {
            match out {
                Output::Produce { partition, payload } => {
                    self.in_flight.push(Record { partition, offset: self.offset, timestamp: None, payload });
                    self.offset += 1;
                }
                Output::ConfirmMembership { generation } => self.pending_proofs.push((generation, self.now)),
                Output::LeaveGroup { .. } => {}
                Output::Event(e) => self.check_event(e)?,
            }
        }
        Ok(())
    }

    fn check_event(&mut self, e: Event) -> Result<(), TestCaseError> {
        let role = e.role();
        let was = self.leading.get(&role).copied().unwrap_or(false);
        match e {
            Event::Acquired { token, .. } => {
                prop_assert!(!was, "double Acquired for role {}", role);
                if let Some(last) = self.last_token.get(&role) {
                    prop_assert!(token > *last, "token {} after {} for role {}", token, last, role);
                }
                self.last_token.insert(role, token);
                self.leading.insert(role, true);
            }
            Event::Revoked { .. } | Event::Fenced { .. } => {
                prop_assert!(was, "{:?} without a prior Acquired", e);
                self.leading.insert(role, false);
            }
            other => prop_assert!(false, "an event this checker does not judge yet: {:?}", other),
        }
        Ok(())
    }

    fn check_invariants(&self) -> Result<(), TestCaseError> {
        let cfg = self.m.config();
        for role in 0..cfg.roles {
            if self.m.is_leader(role, self.now) {
                prop_assert!(
                    self.m.assigned().contains(&cfg.partition_of(role)),
                    "leader of role {} without its partition assigned",
                    role
                );
                let sent = self.delivered_sent.get(&role).copied();
                prop_assert!(sent.is_some(), "leader of role {} with no own heartbeat delivered", role);
                let until = self.m.lease(role, self.now).expect("leader has a lease").until;
                prop_assert!(
                    until <= sent.unwrap() + cfg.heartbeat_timeout,
                    "lease {} beyond newest own heartbeat {} + T",
                    until,
                    sent.unwrap()
                );
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn core_keeps_its_safety_rules(cfg in config(), steps in proptest::collection::vec(step(), 1..80)) {
        let mut w = World {
            m: Member::new(cfg),
            now: Time::ZERO,
            generation: 0,
            in_flight: Vec::new(),
            offset: 0,
            pending_proofs: Vec::new(),
            delivered_sent: BTreeMap::new(),
            leading: BTreeMap::new(),
            last_token: BTreeMap::new(),
        };
        for s in steps {
            match s {
                Step::Advance(d) => { w.now = w.now + dur(d); w.m.handle_timeout(w.now); }
                Step::Assign(ps) => { w.generation += 1; w.m.handle_assigned(w.now, w.generation, &ps); }
                Step::Revoke(p) => w.m.handle_revoked(w.now, &[p]),
                Step::Lose(p) => w.m.handle_lost(w.now, &[p]),
                Step::Deliver(n) => {
                    let n = n.min(w.in_flight.len());
                    for r in w.in_flight.drain(..n).collect::<Vec<_>>() {
                        if let Ok(hb) = Heartbeat::decode(&r.payload)
                            && Some(hb.term) == w.m.generation()
                        {
                            let e = w.delivered_sent.entry(hb.role).or_insert(hb.sent_at);
                            *e = (*e).max(hb.sent_at);
                        }
                        w.m.handle_record(w.now, &r);
                    }
                }
                Step::Drop => { if !w.in_flight.is_empty() { w.in_flight.remove(0); } }
                Step::Foreign(bytes) => {
                    let r = Record { partition: 0, offset: w.offset, timestamp: None, payload: bytes };
                    w.offset += 1;
                    w.m.handle_record(w.now, &r);
                }
                Step::Membership(ok) => {
                    if let Some((g, sent)) = w.pending_proofs.pop() {
                        w.m.handle_membership(w.now, g, sent, ok);
                    }
                }
                Step::Resign => w.m.resign(w.now),
            }
            w.drain()?;
            w.check_invariants()?;
        }
    }
}
