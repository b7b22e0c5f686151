//! The scenarios neli ships (`scenarios/*.toml`, and `scenarios/broken/`,
//! unsafe on purpose), embedded at build time: a harness run can start from
//! one by name ([`get`]) without the source tree.

use crate::scenario::{Scenario, ScenarioError};

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// The shipped scenarios that must hold, by name (`leader-pause`, `swarm`, …).
pub fn names() -> Vec<&'static str> {
    EMBEDDED.iter().filter(|(p, _)| !p.contains('/')).map(|(p, _)| p.trim_end_matches(".toml")).collect()
}

/// The shipped scenario `name` (`leader-pause`), or one broken on purpose
/// (`broken/zombie-no-proof`).
///
/// ```
/// let s = neli_sim::shipped::get("leader-pause").expect("shipped");
/// assert_eq!(s.election.members, 3);
/// let e = neli_sim::shipped::get("no-such").unwrap_err();
/// assert!(e.to_string().contains("no shipped scenario named 'no-such'"));
/// ```
pub fn get(name: &str) -> Result<Scenario, ScenarioError> {
    let rel = format!("{name}.toml");
    let Some((_, text)) = EMBEDDED.iter().find(|(p, _)| *p == rel) else {
        return Err(ScenarioError(format!("no shipped scenario named '{name}' (shipped: {})", names().join(", "))));
    };
    Scenario::parse(text, &format!("<shipped>/{rel}"))
}
