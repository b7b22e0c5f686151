//! The election model's properties: their names, exported so that tests and
//! `neli-lab check` refer to a property without copying its name, a typed
//! catalog of what each expects, and the properties themselves.
//!
//! Safety properties are `always`; `sometimes` properties are witnesses that
//! the search reached what it set out to check. A search in which
//! [`ELECTED`], the vacuity witness, is never witnessed proves nothing: every
//! safety property holds trivially when nobody ever leads.

use stateright::Property;

use super::{ElectionModel, ElectionState};

pub const ONE_LEADER: &str = "at most one leader per role";
pub const TOKENS: &str = "tokens strictly increase per role";
pub const OWN_TOKENS: &str = "a member's own tokens strictly increase";
/// The downstream sees the token of every member that leads on its own
/// clock and is not paused (a stopped process writes nothing; once it
/// resumes, it writes if it still leads).
pub const RESOURCE: &str = "resource never sees an older token after a newer one";
pub const SEND_TIME: &str = "send-time: a lease ends by its newest own heartbeat read + T";
pub const PROOF_CAP: &str = "membership-proof: a lease ends by its newest accepted proof's send time + T";
pub const TOKEN_REPORTED: &str = "a leader reports the token it acquired";
pub const ENDED: &str = "an ended lease stays ended";
pub const LIVENESS: &str = "a leader within the liveness bound once faults heal";
pub const ELECTED: &str = "a leader is elected";
pub const HANDOVER: &str = "a handover happens";

/// What a property claims of the reachable states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expectation {
    /// Holds in every reachable state; a discovery is a counterexample.
    Always,
    /// Holds in some reachable state; a discovery is an example.
    Sometimes,
}

impl From<Expectation> for stateright::Expectation {
    fn from(e: Expectation) -> Self {
        match e {
            Expectation::Always => stateright::Expectation::Always,
            Expectation::Sometimes => stateright::Expectation::Sometimes,
        }
    }
}

/// One entry of [`PROPERTIES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PropertyInfo {
    pub name: &'static str,
    pub expectation: Expectation,
    /// A search that never witnesses this property is vacuous.
    pub vacuity_witness: bool,
}

impl PropertyInfo {
    const fn new(name: &'static str, expectation: Expectation) -> Self {
        PropertyInfo { name, expectation, vacuity_witness: false }
    }

    pub fn is_vacuity_witness(&self) -> bool {
        self.vacuity_witness
    }
}

/// Every property of the model, in the order `ElectionModel::properties`
/// lists them (pinned by a unit test below).
pub const PROPERTIES: &[PropertyInfo] = &[
    PropertyInfo::new(ONE_LEADER, Expectation::Always),
    PropertyInfo::new(TOKENS, Expectation::Always),
    PropertyInfo::new(OWN_TOKENS, Expectation::Always),
    PropertyInfo::new(RESOURCE, Expectation::Always),
    PropertyInfo::new(SEND_TIME, Expectation::Always),
    PropertyInfo::new(PROOF_CAP, Expectation::Always),
    PropertyInfo::new(TOKEN_REPORTED, Expectation::Always),
    PropertyInfo::new(ENDED, Expectation::Always),
    PropertyInfo::new(LIVENESS, Expectation::Always),
    PropertyInfo { vacuity_witness: true, ..PropertyInfo::new(ELECTED, Expectation::Sometimes) },
    PropertyInfo::new(HANDOVER, Expectation::Sometimes),
];

/// The catalog entry of the property named `name`, if the model has one.
pub fn info(name: &str) -> Option<&'static PropertyInfo> {
    PROPERTIES.iter().find(|p| p.name == name)
}

/// The name of the `sometimes` property whose absence makes a finished
/// search vacuous ([`ELECTED`]).
pub fn vacuity_witness() -> &'static str {
    PROPERTIES.iter().find(|p| p.vacuity_witness).map_or(ELECTED, |p| p.name)
}

/// The properties, in the order of [`PROPERTIES`].
pub(super) fn properties() -> Vec<Property<ElectionModel>> {
    vec![
        Property::always(ONE_LEADER, |m: &ElectionModel, s: &ElectionState| {
            !m.cfg.exclusive || (0..m.cfg.roles).all(|r| s.leader_count(r) <= 1)
        }),
        // Within one log: a lost log restarts the offsets tokens are made of.
        Property::always(TOKENS, |_, s: &ElectionState| !s.token_regressed),
        // Across lost logs too: what a member reports, (its own log
        // epoch, token), only goes up (the core starts a new epoch when
        // its own heartbeat comes back below a token it led with).
        Property::always(OWN_TOKENS, |_, s: &ElectionState| !s.own_token_regressed),
        // Non-exclusive mode lets two members lead one role at once by
        // design (T > S buys availability), so their writes interleave
        // and a guarded resource refusing the older token is expected;
        // that mode promises token order and liveness, not this.
        Property::always(RESOURCE, |m: &ElectionModel, s: &ElectionState| !m.cfg.exclusive || !s.resource_regressed),
        // The core's lease rules one by one, in every mode: the layers
        // cover for each other, so a weakened rule may never show as an
        // overlap within the bounds (docs/background.md, "Per-rule oracles").
        Property::always(SEND_TIME, |_, s: &ElectionState| !s.send_time_broken),
        Property::always(PROOF_CAP, |_, s: &ElectionState| !s.proof_cap_broken),
        // What a sans-IO user fences with (`Member::token`) is the token
        // the core handed out with `Acquired`: the other monitors read
        // tokens from events, so a wrong answer there would go unseen.
        Property::always(TOKEN_REPORTED, |_, s: &ElectionState| !s.token_misreported),
        // goNELI's lease from receipt revives ended terms by design (its
        // leader is a flag any fresh heartbeat refreshes): the unsafe
        // variant is judged by what it breaks downstream, not by this rule
        // of neli's core, which it does not have.
        Property::always(ENDED, |m: &ElectionModel, s: &ElectionState| {
            m.cfg.variant.lease_from_receipt || !s.term_revived
        }),
        Property::always(LIVENESS, |m: &ElectionModel, s: &ElectionState| {
            s.calm_leaderless.iter().all(|c| *c <= m.cfg.liveness_bound())
        }),
        Property::sometimes(ELECTED, |m: &ElectionModel, s: &ElectionState| {
            (0..m.cfg.roles).any(|r| s.leader_count(r) > 0)
        }),
        Property::sometimes(HANDOVER, |_, s: &ElectionState| s.handover),
    ]
}

#[cfg(test)]
mod tests {
    use stateright::Model;

    use super::*;
    use crate::ElectionModelCfg;

    #[test]
    fn the_catalog_lists_the_models_properties_in_order() {
        let model = ElectionModelCfg::exclusive(2).into_model();
        let listed: Vec<(&str, stateright::Expectation)> =
            model.properties().into_iter().map(|p| (p.name, p.expectation)).collect();
        let catalog: Vec<(&str, stateright::Expectation)> =
            PROPERTIES.iter().map(|p| (p.name, p.expectation.into())).collect();
        assert_eq!(listed, catalog);
    }

    #[test]
    fn the_vacuity_witness_is_the_one_sometimes_property_that_a_leader_is_elected() {
        let witnesses: Vec<&PropertyInfo> = PROPERTIES.iter().filter(|p| p.is_vacuity_witness()).collect();
        assert_eq!(witnesses.len(), 1);
        assert_eq!(witnesses[0].name, ELECTED);
        assert_eq!(witnesses[0].expectation, Expectation::Sometimes);
        assert_eq!(vacuity_witness(), ELECTED);
        assert_eq!(info(ELECTED), Some(witnesses[0]));
        assert_eq!(info("no such property"), None);
    }
}
