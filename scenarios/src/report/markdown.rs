//! `--format markdown`: each report as a summary for a CI step page
//! (GitHub's job summary, GitLab's notes): a heading with the verdict, one
//! table, and every failure with the command that reproduces it. Computed
//! from the same report value as the other forms.

use std::fmt::Write;

use super::{Check, CheckVerdict, Explore, Gate, Run, Tune};

/// How many failing seeds a summary lists before "... and N more".
const LISTED: usize = 20;

/// A table cell: pipes escaped, line breaks flattened.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown table of `header` and `rows`.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut o = format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(header.len()));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
        let _ = writeln!(o, "| {} |", cells.join(" | "));
    }
    o
}

fn verdict(passed: bool) -> &'static str {
    if passed { "PASS" } else { "FAIL" }
}

impl Explore {
    /// The summary of an explore run.
    pub fn markdown(&self) -> String {
        self.markdown_at("###")
    }

    fn markdown_at(&self, level: &str) -> String {
        let mut o = format!("{level} neli-lab explore: {}\n\n{}\n\n", verdict(!self.failed()), self.explored_line());
        let rows: Vec<Vec<String>> = self
            .scenarios
            .iter()
            .map(|s| {
                let note = if s.expect_fail {
                    " (must fail)"
                } else if s.may_fail {
                    " (may fail)"
                } else {
                    ""
                };
                vec![
                    s.name.clone(),
                    s.summary.seeds.to_string(),
                    format!("{}{note}", s.summary.violations),
                    s.summary.overlap.clone(),
                    s.summary.gap.clone(),
                    s.summary.failover.clone(),
                ]
            })
            .collect();
        o.push_str(&table(&["scenario", "seeds", "violations", "overlap (ms)", "gap (ms)", "failover (ms)"], &rows));
        o.push_str("\nFigures are p50/p99/max over seeds.\n");
        let regressed: Vec<_> = self.regressions.iter().filter(|r| !r.passed).collect();
        if !self.regressions.is_empty() {
            let _ = writeln!(
                o,
                "\n**Regressions:** {} kept failure(s) replayed first, {} fail again.",
                self.regressions.len(),
                regressed.len()
            );
            for r in regressed {
                let v = r.violations.first().map_or("", String::as_str);
                let _ = writeln!(o, "- `{}` seed {}: {v} (reproduce: `{}`)", r.file, r.seed, r.reproduce);
            }
        }
        for s in self.scenarios.iter().filter(|s| s.missed_expected_failure()) {
            let _ = writeln!(o, "\n**{}** must fail (`expect.fails_without`) but passed every seed.", s.name);
        }
        let failing: Vec<_> =
            self.scenarios.iter().filter(|s| s.judged()).flat_map(|s| s.failing.iter().map(move |f| (s, f))).collect();
        if !failing.is_empty() {
            let _ = writeln!(o, "\n**Failing seeds** ({}):\n", failing.len());
            for (s, f) in failing.iter().take(LISTED) {
                let v = f.violations.first().map_or("", String::as_str);
                let _ = writeln!(o, "- seed {} of `{}`: {v}\n  - reproduce: `{}`", f.seed, s.arg, f.reproduce);
            }
            if failing.len() > LISTED {
                let _ = writeln!(o, "- ... and {} more", failing.len() - LISTED);
            }
        }
        o
    }
}

impl Run {
    /// The summary of one run.
    pub fn markdown(&self) -> String {
        let f = &self.figures;
        let mut o = format!("### neli-lab run {} seed {}: {}\n\n", self.scenario, self.seed, verdict(self.passed));
        let _ = writeln!(o, "Broker: {}\n", self.broker);
        let rows = vec![
            vec!["overlap total / max (ms)".into(), format!("{} / {}", f.overlap_total_ms, f.overlap_max_ms)],
            vec!["gap total / max (ms)".into(), format!("{} / {}", f.gap_total_ms, f.gap_max_ms)],
            vec!["failovers (ms)".into(), format!("{:?}", f.failovers_ms)],
            vec!["leader changes".into(), f.leader_changes.to_string()],
            vec!["interruptions".into(), f.interruptions.to_string()],
        ];
        o.push_str(&table(&["figure", "value"], &rows));
        if !self.passed {
            o.push_str("\n**Violations:**\n\n");
            for v in &self.violations {
                let _ = writeln!(o, "- {v}");
            }
            let _ = writeln!(o, "\nReproduce: `{}`", self.reproduce);
        }
        o
    }
}

impl Tune {
    /// The summary of a sweep: every configuration and the recommendation.
    pub fn markdown(&self) -> String {
        let mut o = format!(
            "### neli-lab tune {}: {}\n\n{} seed(s) from {}; broker {}\n\n",
            self.scenario,
            verdict(!self.failed()),
            self.seeds,
            self.start,
            self.broker
        );
        let rows = self.rows();
        o.push_str(&table(
            &["config", "violating", "overlap max (ms)", "gap p50/p99 (ms)", "failover p50/max (ms)", "verdict"],
            &rows,
        ));
        let _ = writeln!(o, "\nRecommended: {}", self.recommended.as_deref().unwrap_or("none"));
        for c in &self.configs {
            if let Some(f) = &c.failing {
                let v = f.violations.first().map_or("", String::as_str);
                let _ = writeln!(o, "- {} seed {}: {v} (reproduce: `{}`)", c.label, f.seed, f.reproduce);
            }
        }
        o
    }
}

impl Check {
    /// The summary of a model check: one row per property.
    pub fn markdown(&self) -> String {
        self.markdown_at("###", "neli-lab check")
    }

    fn markdown_at(&self, level: &str, title: &str) -> String {
        let v = match self.verdict {
            CheckVerdict::Pass => "PASS",
            CheckVerdict::Fail => "FAIL",
            CheckVerdict::Vacuous => "FAIL (vacuous)",
            CheckVerdict::Incomplete => "INCOMPLETE",
        };
        let mut o = format!(
            "{level} {title}: {v}\n\n```\n{}\n```\n\n{} states, {} unique, depth {}, {:.1}s\n\n",
            self.bounds, self.states, self.unique, self.depth, self.wall_s
        );
        let rows: Vec<Vec<String>> = self
            .properties
            .iter()
            .map(|p| {
                let replay = p.replay.as_ref().map_or(String::new(), |r| match &r.reproduce {
                    Some(cmd) => format!("{}: `{cmd}`", r.result),
                    None => r.result.clone(),
                });
                vec![p.property.clone(), p.kind.word().into(), p.outcome.word().into(), replay]
            })
            .collect();
        o.push_str(&table(&["property", "kind", "outcome", "counterexample in the simulator"], &rows));
        if let Some(why) = &self.stopped {
            let _ = writeln!(o, "\nStopped early: {why} (not exhaustive).");
        }
        o
    }
}

impl Gate {
    /// Both halves' summaries under one verdict.
    pub fn markdown(&self) -> String {
        let v = match self.exit_code() {
            0 => "PASS",
            1 => "FAIL",
            _ => "INCOMPLETE",
        };
        let mut o = format!("## neli-lab gate: {v}\n\n");
        o.push_str(&self.explore.markdown_at("###"));
        for c in &self.checks {
            o.push('\n');
            o.push_str(&c.report.markdown_at("###", &format!("neli-lab check --mode {}", c.mode)));
        }
        o
    }
}
