//! Layer ablation (`explore --ablate`, `run --without`): the runs with one
//! layer of the lease off are named and reproducible, a scenario that says
//! it needs a layer must fail without it, and bad claims are refused.

use crate::{fixture, lab, stderr, stdout};

#[test]
fn explore_ablate_runs_each_scenario_once_per_layer_it_has() {
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "2", "--ablate"]);
    let out = stdout(&o);
    assert!(o.status.success(), "tiny-pause without any one layer must still hold:\n{out}{}", stderr(&o));
    for layer in ["membership-proof", "client-session-expiry", "commit-generation-check"] {
        assert!(out.contains(&format!("tiny-pause-without-{layer}")), "no row without {layer}:\n{out}");
    }
    assert!(out.contains("explored 1 scenario(s) x 2 seed(s) and 3 ablated run(s) x 2 seed(s)"), "{out}");
}

#[test]
fn a_scenario_that_must_fail_without_a_layer_and_passes_is_a_failure() {
    let o = lab(&["explore", &fixture("needs-generation-check"), "--seeds", "2", "--ablate"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "a claim that did not hold must fail the run:\n{out}");
    assert!(out.contains("verdict   FAIL (1 run(s) that must fail passed)"), "{out}");
    assert!(
        out.contains("needs-generation-check-without-commit-generation-check must fail (expect.fails_without) but passed all 2 seed(s)"),
        "{out}"
    );
    // The scenario itself, and without the other layers, passed.
    assert!(!out.contains("violating run"), "{out}");
}

#[test]
fn without_an_ablation_the_claim_is_not_looked_at() {
    let o = lab(&["explore", &fixture("needs-generation-check"), "--seeds", "2"]);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(!stdout(&o).contains("-without-"), "{}", stdout(&o));
}

#[test]
fn run_without_a_layer_reproduces_the_ablated_run() {
    let o = lab(&["run", &fixture("tiny-pause"), "--without", "client-session-expiry", "--seed", "1"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("scenario  tiny-pause-without-client-session-expiry seed 1"), "{out}");
}

#[test]
fn a_layer_that_is_already_off_or_unknown_is_refused_by_name() {
    let o = lab(&["run", "zombie-no-proof", "--without", "membership-proof"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("--without membership-proof") && err.contains("election.membership_proof = false"), "{err}");
    let o = lab(&["run", "leader-pause", "--without", "the-proof"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("\"the-proof\" is not a layer") && err.contains("client-session-expiry"), "{err}");
}

#[test]
fn fails_without_names_each_layer_once_and_only_layers_that_are_on() {
    let base = "name = \"x\"\nduration = \"5s\"\n[election]\nmembers = 2\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n";
    let twice = format!("{base}[expect]\nfails_without = [\"membership-proof\", \"membership-proof\"]\n");
    let err = neli_sim::Scenario::parse(&twice, "twice.toml").unwrap_err().0;
    assert!(err.contains("twice.toml") && err.contains("membership-proof is named twice"), "{err}");
    let off = base.replace("session_timeout = \"3s\"\n", "session_timeout = \"3s\"\nmembership_proof = false\n");
    let off = format!("{off}[expect]\nfails_without = [\"membership-proof\"]\n");
    let err = neli_sim::Scenario::parse(&off, "off.toml").unwrap_err().0;
    assert!(err.contains("already off") && err.contains("election.membership_proof = false"), "{err}");
    let both =
        format!("{base}[expect]\nfails_without = [\"membership-proof\"]\nmay_fail_without = [\"membership-proof\"]\n");
    let err = neli_sim::Scenario::parse(&both, "both.toml").unwrap_err().0;
    assert!(err.contains("in both fails_without (must fail) and may_fail_without"), "{err}");
    let unknown = format!("{base}[expect]\nfails_without = [\"proof\"]\n");
    let err = neli_sim::Scenario::parse(&unknown, "unknown.toml").unwrap_err().0;
    assert!(err.contains("unknown.toml:") && err.contains("proof"), "{err}");
}

#[test]
fn an_ablated_scenario_reads_back_as_itself() {
    let text = std::fs::read_to_string(fixture("tiny-pause")).unwrap();
    let s = neli_sim::Scenario::parse(&text, "tiny-pause.toml").unwrap();
    for layer in neli_sim::scenario::Layer::ALL {
        let a = s.without(layer).expect("every layer is on in tiny-pause");
        assert!(!a.has(layer) && s.has(layer));
        let back = neli_sim::Scenario::parse(&a.to_toml(&[]).unwrap(), "ablated.toml").unwrap();
        assert_eq!(back.to_toml(&[]).unwrap(), a.to_toml(&[]).unwrap());
        assert!(a.without(layer).is_none(), "{layer} is off already");
    }
}

#[test]
fn a_scenario_that_needs_the_proof_fails_without_it_and_the_run_passes() {
    // leader-pause says `fails_without = ["membership-proof"]`; seed 8 is one
    // where the resumed leader's zombie heartbeat gives it a second lease
    // while its successor's Revoked handler still writes with the older token.
    let o = lab(&["explore", "leader-pause", "--start", "8", "--seeds", "2", "--ablate", "--format", "json"]);
    let out = stdout(&o);
    assert!(o.status.success(), "the expected failure is the expected outcome:\n{out}{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    let rows = v["scenarios"].as_array().unwrap();
    let no_proof = rows.iter().find(|r| r["name"] == "leader-pause-without-membership-proof").expect("ablated row");
    assert_eq!(no_proof["without"], "membership-proof");
    assert_eq!(no_proof["expect_fail"], true);
    let failing = no_proof["failing"].as_array().unwrap();
    assert!(!failing.is_empty(), "without the proof some seed fails: {no_proof}");
    assert!(
        failing[0]["reproduce"].as_str().unwrap().ends_with("run leader-pause --without membership-proof --seed 8"),
        "{}",
        failing[0]["reproduce"]
    );
    let plain = rows.iter().find(|r| r["name"] == "leader-pause").unwrap();
    assert!(plain.get("without").is_none() && plain.get("expect_fail").is_none(), "{plain}");
}

#[test]
fn ablate_seeds_runs_the_ablations_on_a_prefix_of_the_seeds() {
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "3", "--ablate", "--ablate-seeds", "1"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("explored 1 scenario(s) x 3 seed(s) and 3 ablated run(s) x 1 seed(s)"), "{out}");
    for bad in ["0", "4"] {
        let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "3", "--ablate", "--ablate-seeds", bad]);
        assert_eq!(o.status.code(), Some(2), "--ablate-seeds {bad}");
        assert!(stderr(&o).contains(&format!("--ablate-seeds {bad}")), "{}", stderr(&o));
    }
    let o = lab(&["explore", &fixture("tiny-pause"), "--seeds", "3", "--ablate-seeds", "1"]);
    assert_eq!(o.status.code(), Some(2), "--ablate-seeds needs --ablate");
}
