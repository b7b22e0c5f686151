//! `gate`'s report: both halves of the harness, the simulator (`explore
//! --all --ablate`) and the model checker (`check` in every mode at its
//! defaults), with one verdict.

use serde::{Deserialize, Serialize};

use super::{Check, CheckVerdict, Explore, Format, document};

/// The `schema` field of a `gate --format json` report.
pub const GATE_SCHEMA: &str = "neli-lab/gate/1";

/// One `gate` run (`--format json`), documented in `scenarios/README.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    pub schema: String,
    pub build: String,
    /// Both halves held: no violating seed, no run that must fail passing,
    /// every check exhaustive, non-vacuous and without a violation.
    pub passed: bool,
    pub explore: Explore,
    /// One exhaustive check per mode, in the order run.
    pub checks: Vec<GateCheck>,
}

/// One mode's check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateCheck {
    /// `exclusive`, `multi-role` or `non-exclusive`.
    pub mode: String,
    pub report: Check,
}

impl Gate {
    /// The gate of `explore` and `checks` (`(mode, report)`).
    pub fn new(explore: Explore, checks: Vec<(String, Check)>) -> Gate {
        let checks: Vec<GateCheck> = checks.into_iter().map(|(mode, report)| GateCheck { mode, report }).collect();
        let mut g = Gate { schema: GATE_SCHEMA.into(), build: crate::BUILD.into(), passed: false, explore, checks };
        g.passed = g.exit_code() == 0;
        g
    }

    /// 1 if either half failed (a violation, a run that must fail passing,
    /// a vacuous check), else 3 if a check was stopped short of exhausting
    /// its bounds, else 0.
    pub fn exit_code(&self) -> u8 {
        let verdicts: Vec<CheckVerdict> = self.checks.iter().map(|c| c.report.verdict).collect();
        if self.explore.failed() || verdicts.iter().any(|v| matches!(v, CheckVerdict::Fail | CheckVerdict::Vacuous)) {
            1
        } else if verdicts.contains(&CheckVerdict::Incomplete) {
            super::EXIT_INCOMPLETE
        } else {
            0
        }
    }

    /// The report in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => super::pretty_json(self),
            Format::Jsonl => super::one_line(self),
            Format::Markdown => self.markdown(),
            Format::Junit => {
                let mut suites = vec![self.explore.junit_suite()];
                suites.extend(self.checks.iter().map(|c| c.report.junit_suite(&format!("neli-lab check {}", c.mode))));
                let time = self.explore.wall_s + self.checks.iter().map(|c| c.report.wall_s).sum::<f64>();
                document("neli-lab gate", time, suites)
            }
        }
    }

    /// The explore report, each check's, and the verdict naming each half.
    pub fn text(&self) -> String {
        let mut o = self.explore.text();
        for c in &self.checks {
            o.push_str(&format!("\ncheck --mode {}\n", c.mode));
            o.push_str(&c.report.render(Format::Text));
        }
        let halves: Vec<String> =
            std::iter::once(format!("explore {}", if self.explore.failed() { "FAIL" } else { "pass" }))
                .chain(self.checks.iter().map(|c| {
                    let v = match c.report.verdict {
                        CheckVerdict::Pass => "pass",
                        CheckVerdict::Fail => "FAIL",
                        CheckVerdict::Vacuous => "FAIL (vacuous)",
                        CheckVerdict::Incomplete => "INCOMPLETE",
                    };
                    format!("check {} {v}", c.mode)
                }))
                .collect();
        let verdict = match self.exit_code() {
            0 => "PASS",
            1 => "FAIL",
            _ => "INCOMPLETE",
        };
        o.push_str(&format!("\ngate      {verdict} ({})\n", halves.join(", ")));
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Shard;

    fn explore() -> Explore {
        Explore {
            schema: crate::report::SCHEMA.into(),
            build: "b".into(),
            start: 0,
            start_auto: false,
            seeds: 1,
            shard: Shard { index: 1, of: 1 },
            jobs: 1,
            wall_s: 0.0,
            time_budget: None,
            merged_shards: 0,
            interrupted: false,
            ablate_seeds: None,
            regressions: Vec::new(),
            scenarios: Vec::new(),
        }
    }

    fn check(verdict: CheckVerdict) -> Check {
        Check {
            schema: crate::report::CHECK_SCHEMA.into(),
            build: "b".into(),
            bounds: "model …".into(),
            states: 1,
            unique: 1,
            depth: 1,
            wall_s: 0.0,
            passed: verdict == CheckVerdict::Pass,
            stopped: (verdict == CheckVerdict::Incomplete).then(|| "--max-states 1 reached".into()),
            peak_memory: None,
            memory_limit: None,
            coverage: None,
            properties: Vec::new(),
            verdict,
        }
    }

    fn gate(verdicts: &[CheckVerdict]) -> Gate {
        let modes = ["exclusive", "multi-role", "non-exclusive"];
        Gate::new(explore(), verdicts.iter().zip(modes).map(|(v, m)| (m.to_owned(), check(*v))).collect())
    }

    #[test]
    fn either_half_failing_fails_the_gate() {
        use CheckVerdict::*;
        assert_eq!(gate(&[Pass, Pass, Pass]).exit_code(), 0);
        assert!(gate(&[Pass, Pass, Pass]).passed);
        // A model half that fails or proves nothing fails the gate.
        assert_eq!(gate(&[Pass, Fail, Pass]).exit_code(), 1);
        assert_eq!(gate(&[Vacuous, Pass, Pass]).exit_code(), 1);
        assert!(gate(&[Pass, Pass, Vacuous]).text().ends_with(
            "gate      FAIL (explore pass, check exclusive pass, check multi-role pass, check non-exclusive FAIL (vacuous))\n"
        ));
        // A search stopped short is neither a pass nor a failure; a failure wins over it.
        assert_eq!(gate(&[Incomplete, Pass, Pass]).exit_code(), 3);
        assert_eq!(gate(&[Incomplete, Fail, Pass]).exit_code(), 1);
        assert!(!gate(&[Incomplete, Pass, Pass]).passed);
    }
}
