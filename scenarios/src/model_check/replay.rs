//! A counterexample on the simulator: the model abstracts time and the
//! coordinator, so `check` runs each counterexample's scenario file on the
//! simulator and says whether it breaks *the same guarantee* there. Another
//! rule failing is not a reproduction: it is reported as such, with the
//! seed, so that neither view is trusted until the difference is explained
//! (scenarios/README.md, "Counterexamples that replay").

use neli_models::election::property as p;
use neli_sim::{Bound, Rule};

use super::PropertyFinding;
use crate::report::Replay;

/// Whether a simulator violation of `rule` breaks the guarantee the model's
/// property `property` states: the simulator's oracle for the same claim
/// (docs/background.md, "Per-rule oracles").
///
/// ```
/// use neli_lab::model_check::same_guarantee;
/// use neli_models::election::property::ONE_LEADER;
/// use neli_sim::Rule;
///
/// assert!(same_guarantee(ONE_LEADER, &Rule::Overlap));
/// assert!(!same_guarantee(ONE_LEADER, &Rule::SendTime));
/// ```
pub fn same_guarantee(property: &str, rule: &Rule) -> bool {
    match property {
        p::ONE_LEADER => matches!(rule, Rule::Overlap | Rule::Expect(Bound::MaxOverlap)),
        p::TOKENS => matches!(rule, Rule::TokenNotIncreasing),
        p::OWN_TOKENS => matches!(rule, Rule::TokenOrder | Rule::TokenNotIncreasing),
        p::RESOURCE => matches!(rule, Rule::StaleWrite),
        p::SEND_TIME => matches!(rule, Rule::SendTime),
        p::PROOF_CAP => matches!(rule, Rule::MembershipProof),
        // The simulator sees a wrong token through the application's
        // events and handles.
        p::TOKEN_REPORTED => matches!(rule, Rule::IllFormedEvents | Rule::HandlesAgree | Rule::ToldWithoutLease),
        // The simulator sees a revived term in the heartbeat that claims it
        // after its lease ended.
        p::ENDED => matches!(rule, Rule::HeartbeatLease),
        p::LIVENESS => matches!(rule, Rule::LeaderElected | Rule::Expect(Bound::MaxGap | Bound::MaxFailover)),
        _ => false,
    }
}

/// What the simulator makes of `o`'s scenario file on seeds `0..sim_seeds`:
/// the first seed that breaks the property's guarantee reproduces it; if
/// none does, the first seed that broke another rule is named.
pub(super) fn replay_counterexample(o: &PropertyFinding, sim_seeds: u64) -> Option<Replay> {
    let f = o.file.as_ref()?;
    if let Some(e) = &o.file_error {
        return Some(Replay::LoadError(e.clone()));
    }
    if sim_seeds == 0 {
        return Some(Replay::NotTried);
    }
    let sc = match neli_sim::Scenario::load(f) {
        Ok(sc) => sc,
        Err(e) => return Some(Replay::LoadError(e.to_string())),
    };
    let mut other = None;
    for seed in 0..sim_seeds {
        let violations = crate::run(&sc, seed).violations;
        if let Some(v) = violations.iter().find(|v| same_guarantee(o.info.name, &v.rule)) {
            return Some(Replay::Reproduced(seed, v.to_string()));
        }
        if other.is_none() {
            other = violations.first().map(|v| (seed, v.to_string()));
        }
    }
    Some(match other {
        Some((seed, v)) => Replay::OtherRule { seeds: sim_seeds, seed, violation: v },
        None => Replay::NotReproduced(sim_seeds),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_safety_property_has_a_simulator_rule_and_no_rule_counts_for_two() {
        let rules = [
            Rule::Overlap,
            Rule::TokenNotIncreasing,
            Rule::TokenOrder,
            Rule::StaleWrite,
            Rule::SendTime,
            Rule::MembershipProof,
            Rule::IllFormedEvents,
            Rule::HeartbeatLease,
            Rule::LeaderElected,
        ];
        for info in p::PROPERTIES.iter().filter(|i| i.expectation == p::Expectation::Always) {
            assert!(rules.iter().any(|r| same_guarantee(info.name, r)), "{}: no simulator rule", info.name);
        }
        // An overlap is not a send-time violation and the reverse: a
        // counterexample of one is not reproduced by the other.
        assert!(!same_guarantee(p::SEND_TIME, &Rule::Overlap));
        assert!(!same_guarantee(p::ONE_LEADER, &Rule::MembershipProof));
        assert!(!same_guarantee(p::ELECTED, &Rule::LeaderElected), "a sometimes property has no counterexample");
    }
}
