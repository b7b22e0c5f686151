//! What a harness run found, and its renderings: text (`Display`, what a
//! test prints), JSON, JUnit XML, Markdown and one self-contained HTML
//! page (`page.rs`). None of them names the number of threads, so a
//! run on one core and on many report the same.

use std::fmt;
use std::path::PathBuf;

use serde_json::json;

use super::settings::SEED_ENV;
use crate::junit::{Case, CaseFailure, junit};
use crate::scenario::Scenario;
use crate::verdict::Violation;
use crate::world::RunReport;

/// How many failing seeds keep their timeline, history and trace (the
/// rest keep their violations and reproduction).
pub const DETAILED_FAILURES: usize = 20;

/// A failing seed.
#[derive(Debug, Clone)]
pub struct Failure {
    pub seed: u64,
    pub violations: Vec<Violation>,
    /// The one-line command that reruns exactly this seed.
    pub reproduce: String,
    /// The run's trace (empty if it never finished or is not kept).
    pub trace: Vec<String>,
    /// The run's history as JSON Lines (`History::to_jsonl`), if kept.
    pub history: Option<String>,
    /// The run's leadership timeline as SVG, if kept.
    pub timeline: Option<String>,
    /// The seed shrunk, when the run shrank it.
    pub shrunk: Option<ShrunkRepro>,
    /// The regressions file it was kept in, when written this run.
    pub kept: Option<PathBuf>,
}

impl Failure {
    pub(super) fn of(s: &Scenario, seed: u64, r: RunReport, reproduce: String, detailed: bool) -> Failure {
        let (timeline, history) = if detailed {
            (Some(crate::svg::timeline(&r, s.election.members, s.duration.ms())), Some(r.history.to_jsonl()))
        } else {
            (None, None)
        };
        let trace = if detailed { r.trace } else { Vec::new() };
        Failure { seed, violations: r.violations, reproduce, trace, history, timeline, shrunk: None, kept: None }
    }

    pub(super) fn without_run(seed: u64, why: Violation, reproduce: String) -> Failure {
        Failure {
            seed,
            violations: vec![why],
            reproduce,
            trace: Vec::new(),
            history: None,
            timeline: None,
            shrunk: None,
            kept: None,
        }
    }
}

/// A failing seed shrunk: fewer faults, shorter ones, a shorter run,
/// fewer members, still breaking the same rule.
#[derive(Debug, Clone)]
pub struct ShrunkRepro {
    /// The rule it still breaks (`invariant no invoice sent twice`).
    pub class: String,
    pub runs: u32,
    pub faults: usize,
    pub duration_ms: u64,
    pub members: u32,
    /// Read back from its TOML, it broke the same rule again.
    pub replays: bool,
    /// The shrunk scenario file, with its `seed`.
    pub toml: String,
    /// How to replay it (`NELI_SIM_REPLAY=<file> cargo test …`).
    pub reproduce: String,
}

/// A kept failure replayed before the new seeds.
#[derive(Debug, Clone)]
pub struct Replayed {
    pub file: PathBuf,
    pub seed: u64,
    pub violations: Vec<Violation>,
    pub reproduce: String,
}

impl Replayed {
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// What a harness run found.
#[derive(Debug, Clone)]
pub struct Report {
    pub scenario: String,
    /// The test that ran it (cargo's thread name), if known.
    pub test: Option<String>,
    /// The seeds run, in order.
    pub seeds: Vec<u64>,
    /// The first seed, when the seeds were a range from a start.
    pub start: Option<u64>,
    /// The start was drawn from the clock (`Start::Auto`).
    pub start_auto: bool,
    pub shard: Option<(u64, u64)>,
    /// Threads that ran seeds (in no rendering: the verdict is the same).
    pub jobs: usize,
    /// Kept failures replayed first.
    pub regressions: Vec<Replayed>,
    pub failures: Vec<Failure>,
    /// Regressions files written by this run.
    pub kept: Vec<PathBuf>,
    /// The one scenario file run (`NELI_SIM_REPLAY`), if so.
    pub replayed_file: Option<PathBuf>,
    pub check_determinism: bool,
    /// Why nothing ran (a bad `NELI_SIM_*` value, a fault kind a harness
    /// application cannot take), or why the run's files are incomplete.
    pub error: Option<String>,
    /// `NELI_SIM_SEED` (or `NELI_SIM_REPLAY`) chose the one seed run.
    pub only_seed: bool,
    /// What may make the verdict less than it seems (printed first).
    pub warnings: Vec<String>,
}

impl Report {
    pub(super) fn empty(scenario: &str, test: Option<String>) -> Report {
        Report {
            scenario: scenario.to_owned(),
            test,
            seeds: Vec::new(),
            start: None,
            start_auto: false,
            shard: None,
            jobs: 1,
            regressions: Vec::new(),
            failures: Vec::new(),
            kept: Vec::new(),
            replayed_file: None,
            check_determinism: false,
            error: None,
            only_seed: false,
            warnings: Vec::new(),
        }
    }

    /// Every seed ran and passed, and every kept failure replayed passes.
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && self.failures.is_empty()
            && self.regressions.iter().all(Replayed::passed)
            && !self.seeds.is_empty()
    }

    /// Panics with the report unless it passed: the last line of a test.
    pub fn assert_passed(&self) {
        assert!(self.passed(), "{self}");
    }

    /// `PASS` or `FAIL`.
    pub fn verdict(&self) -> &'static str {
        if self.passed() { "PASS" } else { "FAIL" }
    }

    /// Which seeds ran: `200 seed(s) 0..=199`, `seed 17 (NELI_SIM_SEED)`, …
    pub fn seeds_text(&self) -> String {
        if let Some(f) = &self.replayed_file {
            return format!(
                "{} at its seed {} (NELI_SIM_REPLAY)",
                f.display(),
                self.seeds.first().copied().unwrap_or(0)
            );
        }
        if self.only_seed {
            return format!("seed {} ({SEED_ENV})", self.seeds.first().copied().unwrap_or(0));
        }
        let n = self.seeds.len();
        let range = match (self.seeds.first(), self.seeds.last()) {
            (Some(a), Some(b)) if self.shard.is_none() && (b - a) as usize + 1 == n => format!("{a}..={b}"),
            (Some(a), Some(b)) => format!("from {a} to {b}"),
            _ => String::new(),
        };
        let mut out = format!("{n} seed(s) {range}");
        if let (Some(s), true) = (self.start, self.start_auto) {
            out.push_str(&format!(" (start auto: {s}; rerun them with NELI_SIM_START={s})"));
        }
        if let Some((i, of)) = self.shard {
            out.push_str(&format!(", shard {i}/{of}"));
        }
        out
    }

    /// The report as JSON (schema `neli-sim-harness/1`).
    pub fn to_json(&self) -> String {
        let violations = |vs: &[Violation]| -> Vec<serde_json::Value> {
            vs.iter()
                .map(|v| json!({"rule": v.class(), "detail": v.detail, "members": v.members, "at_ms": v.at}))
                .collect()
        };
        let failures: Vec<_> = self
            .failures
            .iter()
            .map(|f| {
                json!({
                    "seed": f.seed,
                    "violations": violations(&f.violations),
                    "reproduce": f.reproduce,
                    "kept": f.kept.as_ref().map(|p| p.display().to_string()),
                    "shrunk": f.shrunk.as_ref().map(|s| json!({
                        "rule": s.class, "runs": s.runs, "faults": s.faults, "duration_ms": s.duration_ms,
                        "members": s.members, "replays": s.replays, "scenario": s.toml, "reproduce": s.reproduce,
                    })),
                })
            })
            .collect();
        let regressions: Vec<_> = self
            .regressions
            .iter()
            .map(|r| {
                json!({"file": r.file.display().to_string(), "seed": r.seed, "passed": r.passed(),
                "violations": violations(&r.violations), "reproduce": r.reproduce})
            })
            .collect();
        let v = json!({
            "schema": "neli-sim-harness/1",
            "scenario": self.scenario,
            "test": self.test,
            "verdict": self.verdict(),
            "seeds": {"count": self.seeds.len(), "first": self.seeds.first(), "last": self.seeds.last(),
                "start": self.start, "start_auto": self.start_auto, "shard": self.shard.map(|(i, n)| format!("{i}/{n}")),
                "only": self.only_seed},
            "check_determinism": self.check_determinism,
            "regressions": regressions,
            "failures": failures,
            "kept": self.kept.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "error": self.error,
            "warnings": self.warnings,
        });
        serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
    }

    /// The report as JUnit XML: one testcase per kept failure replayed and
    /// per seed.
    pub fn to_junit(&self) -> String {
        let suite = format!("harness {}", self.scenario);
        let class = self.test.clone().unwrap_or_else(|| suite.clone());
        let case = |name: String, vs: &[Violation], reproduce: &str| Case {
            name,
            classname: class.clone(),
            time_s: 0.0,
            failure: (!vs.is_empty()).then(|| CaseFailure {
                message: vs.first().map(ToString::to_string).unwrap_or_default(),
                body: vs.iter().map(|v| format!("{v}\n")).collect::<String>() + &format!("reproduce: {reproduce}\n"),
            }),
            skipped: None,
            out: String::new(),
        };
        let mut cases: Vec<Case> = self
            .regressions
            .iter()
            .map(|r| case(format!("kept {}", r.file.display()), &r.violations, &r.reproduce))
            .collect();
        let mut failing = self.failures.iter().peekable();
        for seed in &self.seeds {
            match failing.next_if(|f| f.seed == *seed) {
                Some(f) => cases.push(case(format!("seed {seed}"), &f.violations, &f.reproduce)),
                None => cases.push(case(format!("seed {seed}"), &[], "")),
            }
        }
        if let Some(e) = &self.error {
            let v = Violation::new(crate::verdict::Rule::App, e.clone());
            cases.push(case("harness".into(), &[v], "fix the harness's settings"));
        }
        junit(&suite, &self.to_string(), 0.0, &cases)
    }

    /// The report as Markdown (a CI job summary).
    pub fn to_markdown(&self) -> String {
        let mut o = format!("## harness {}: {}\n\n{}\n\n", self.scenario, self.verdict(), self.seeds_text());
        if let Some(e) = &self.error {
            o.push_str(&format!("**cannot run:** {e}\n\n"));
        }
        if !self.regressions.is_empty() {
            o.push_str("| kept failure | seed | verdict |\n|---|---|---|\n");
            for r in &self.regressions {
                let verdict =
                    r.violations.first().map_or("pass".to_owned(), |v| format!("FAIL: {}", md(&v.to_string())));
                o.push_str(&format!("| `{}` | {} | {verdict} |\n", r.file.display(), r.seed));
            }
            o.push('\n');
        }
        if !self.failures.is_empty() {
            o.push_str("| seed | first violation | reproduce |\n|---|---|---|\n");
            for f in &self.failures {
                let first = f.violations.first().map(|v| md(&v.to_string())).unwrap_or_default();
                o.push_str(&format!("| {} | {first} | `{}` |\n", f.seed, f.reproduce));
            }
            o.push('\n');
        }
        o
    }
}

/// A table cell's text: no `|` or line break to break the row.
fn md(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        let test = self.test.as_ref().map(|t| format!(" (test {t})")).unwrap_or_default();
        if let Some(e) = &self.error {
            if self.seeds.is_empty() {
                return writeln!(f, "harness {}{test}: cannot run: {e}", self.scenario);
            }
            writeln!(f, "error: {e}")?;
        }
        let failed_kept = self.regressions.iter().filter(|r| !r.passed()).count();
        if !self.regressions.is_empty() {
            writeln!(f, "kept failures: {} replayed first, {failed_kept} failed", self.regressions.len())?;
            for r in self.regressions.iter().filter(|r| !r.passed()) {
                writeln!(f, "kept {} (seed {}):", r.file.display(), r.seed)?;
                for v in r.violations.iter().take(5) {
                    writeln!(f, "  {v}")?;
                }
                writeln!(f, "  reproduce: {}", r.reproduce)?;
            }
        }
        let check = if self.check_determinism { ", each run twice" } else { "" };
        writeln!(
            f,
            "harness {}{test}: {}{check}, {} failed: {}",
            self.scenario,
            self.seeds_text(),
            self.failures.len(),
            self.verdict()
        )?;
        for x in self.failures.iter().take(5) {
            writeln!(f, "seed {}:", x.seed)?;
            for v in x.violations.iter().take(5) {
                writeln!(f, "  {v}")?;
            }
            writeln!(f, "  reproduce: {}", x.reproduce)?;
            if let Some(s) = &x.shrunk {
                let ok = if s.replays { "replays" } else { "DOES NOT replay: keep the unshrunk seed" };
                writeln!(
                    f,
                    "  shrunk in {} runs to {} fault(s), {} ms, {} member(s), still {} ({ok})",
                    s.runs, s.faults, s.duration_ms, s.members, s.class
                )?;
                if x.kept.is_none() {
                    writeln!(f, "  the shrunk scenario (write it to a file to replay it):")?;
                    for line in s.toml.lines() {
                        writeln!(f, "    {line}")?;
                    }
                }
                writeln!(f, "  replay the shrunk scenario: {}", s.reproduce)?;
            }
        }
        if self.failures.len() > 5 {
            let rest: Vec<String> = self.failures[5..].iter().map(|x| x.seed.to_string()).collect();
            writeln!(f, "also failing: seeds {}", rest.join(", "))?;
        }
        for k in &self.kept {
            writeln!(f, "kept {} (replayed first from now on; commit it)", k.display())?;
        }
        Ok(())
    }
}
