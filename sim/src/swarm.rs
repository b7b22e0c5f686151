//! Random fault schedules drawn from the seed (`[random]` in a scenario, and
//! the swarm test).

use crate::scenario::{Dur, Fault, FaultKind, Scenario};
use crate::world::mix;

/// The `[random]` faults of `s` for `seed`; empty without a `[random]` table.
pub fn random_faults(s: &Scenario, seed: u64) -> Vec<Fault> {
    let Some(r) = &s.random else {
        return Vec::new();
    };
    if r.kinds.is_empty() {
        return Vec::new();
    }
    let dur = s.duration.ms();
    let mut out = Vec::new();
    for i in 0..r.faults as u64 {
        let pick = |salt: u64, n: u64| mix(seed, 1000 + i * 16 + salt) % n.max(1);
        let kind = r.kinds[pick(0, r.kinds.len() as u64) as usize];
        // Faults start in the middle of the run and end by 80% of it, so
        // the end shows recovery.
        let at = dur / 10 + pick(1, dur / 2);
        let mut f = Fault::new(Dur(at as i64), kind);
        let member = if pick(2, 2) == 0 {
            "leader".to_owned()
        } else {
            format!("m{}", pick(3, s.election.members as u64))
        };
        let other = format!("m{}", pick(4, s.election.members as u64));
        let room = (dur * 8 / 10).saturating_sub(at).max(500);
        let length = (500 + pick(5, r.max_duration.ms().saturating_sub(500))).min(room);
        f.duration = Some(Dur(length as i64));
        match kind {
            FaultKind::Partition | FaultKind::Latency => {
                f.a = Some(member);
                f.b = Some(if pick(6, 2) == 0 {
                    s.cluster.coordinator.clone()
                } else {
                    other
                });
                f.latency = Some(Dur(50 + pick(7, 300) as i64));
            }
            FaultKind::OneWay => {
                f.from = Some(member);
                f.to = Some(s.cluster.coordinator.clone());
            }
            FaultKind::BrokerCrash => f.target = Some(s.cluster.coordinator.clone()),
            FaultKind::ClockStep => {
                f.target = Some(member);
                f.by = Some(Dur(pick(8, 4000) as i64 - 2000));
            }
            FaultKind::ClockDrift => {
                f.target = Some(member);
                f.ppm = Some(pick(9, 20_001) as i64 - 10_000);
            }
            FaultKind::ForeignWriter => {
                f.partition = Some(0);
                f.count = Some(1 + pick(10, 5) as u32);
                f.garbage = Some(pick(11, 2) == 0);
            }
            _ => f.target = Some(member),
        }
        out.push(f);
    }
    out
}
