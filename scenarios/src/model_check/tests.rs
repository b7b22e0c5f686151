//! Tests of `model_check`: the search and limit flags that would change
//! nothing are refused by name, and a summary's verdict (vacuous,
//! incomplete, failed) is decided once.

use super::*;

#[test]
fn every_search_flag_that_would_change_nothing_is_refused_by_name() {
    assert_eq!(Search::from_flags(false, true, false, None, Some(2)), Ok(Search::BfsSymmetry));
    assert_eq!(Search::from_flags(false, false, true, None, Some(4)), Ok(Search::Dfs));
    assert_eq!(Search::from_flags(true, true, false, Some(7), None), Ok(Search::Simulate { seed: 7 }));
    // The walk runs on one thread: saying so is accepted, anything else not.
    assert_eq!(Search::from_flags(true, true, false, Some(7), Some(1)), Ok(Search::Simulate { seed: 7 }));
    for (flags, named) in [
        ((true, false, false, None, None), "--no-symmetry"),
        ((true, true, true, None, None), "--dfs"),
        ((false, true, false, Some(3), None), "--seed 3"),
        ((true, true, false, None, Some(4)), "--threads 4"),
        ((true, true, false, None, Some(2)), "--threads 2"),
    ] {
        let (sim, sym, dfs, seed, threads) = flags;
        let err = Search::from_flags(sim, sym, dfs, seed, threads).unwrap_err().to_string();
        assert!(err.starts_with(named), "{err}");
    }
}

#[test]
fn limits_default_by_search_and_refuse_zero() {
    let exhaustive = Limits::from_flags(None, Search::Bfs, None, None).unwrap();
    assert_eq!(exhaustive.max_states, DEFAULT_MAX_STATES);
    let walks = Limits::from_flags(None, Search::Simulate { seed: 0 }, Some("2h"), None).unwrap();
    assert_eq!(walks.max_states, DEFAULT_SIMULATE_STATES);
    assert_eq!(walks.time_budget, Some(std::time::Duration::from_secs(7200)));
    assert!(
        Limits::from_flags(Some(0), Search::Bfs, None, None).unwrap_err().to_string().starts_with("--max-states 0")
    );
    assert!(
        Limits::from_flags(None, Search::Bfs, Some("0s"), None).unwrap_err().to_string().starts_with("--time-budget")
    );
    // The memory limit: a share of the machine unless given, `none` for none.
    assert_eq!(exhaustive.memory, super::memory::default_limit());
    assert_eq!(Limits::from_flags(None, Search::Bfs, None, Some("none")).unwrap().memory, None);
    assert_eq!(Limits::from_flags(None, Search::Bfs, None, Some("2GiB")).unwrap().memory, Some(2 << 30));
    let bad = Limits::from_flags(None, Search::Bfs, None, Some("2 gallons")).unwrap_err().to_string();
    assert!(bad.starts_with("--memory-limit \"2 gallons\": not a size"), "{bad}");
}

fn summary(elected: bool, violated: bool, stopped: Option<&str>) -> Summary {
    let finding = |name, found: Option<&str>| PropertyFinding {
        info: property::info(name).expect("a catalogued property"),
        found: found.map(str::to_owned),
        file: None,
        file_error: None,
        path_file: None,
    };
    Summary {
        states: 10,
        unique: 10,
        depth: 3,
        findings: vec![
            finding(property::ONE_LEADER, violated.then_some("m0 and m1 lead")),
            finding(property::vacuity_witness(), elected.then_some("m0 leads")),
        ],
        stopped: stopped.map(str::to_owned),
        memory: super::MemoryUse::default(),
        coverage: String::new(),
    }
}

#[test]
fn a_finished_search_without_any_leader_proves_nothing() {
    assert!(summary(false, false, None).vacuous());
    assert_eq!(summary(false, false, None).verdict(), CheckVerdict::Vacuous);
    assert!(!summary(true, false, None).vacuous());
    assert_eq!(summary(true, false, None).verdict(), CheckVerdict::Pass);
    // A search cut short is incomplete, not vacuous.
    assert!(!summary(false, false, Some("--max-states 10 reached")).vacuous());
    assert_eq!(summary(false, false, Some("--max-states 10 reached")).verdict(), CheckVerdict::Incomplete);
}

#[test]
fn a_violation_fails_even_a_stopped_or_vacuous_search() {
    assert_eq!(summary(true, true, None).verdict(), CheckVerdict::Fail);
    assert_eq!(summary(false, true, None).verdict(), CheckVerdict::Fail);
    assert_eq!(summary(true, true, Some("--time-budget 1s reached")).verdict(), CheckVerdict::Fail);
}

#[test]
fn the_report_carries_the_verdict_and_typed_outcomes() {
    let r = summary(false, false, None).report("model ...".into(), 1.0, 0);
    assert_eq!(r.verdict, CheckVerdict::Vacuous);
    assert!(!r.passed);
    assert_eq!(r.properties[0].outcome, PropertyOutcome::Holds);
    assert_eq!(r.properties[1].outcome, PropertyOutcome::Never);
    assert!(r.render(crate::report::Format::Text).contains("verdict   FAIL (vacuous:"));
}
