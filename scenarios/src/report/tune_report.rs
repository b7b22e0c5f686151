//! `tune`'s report: a sweep of (T, S, G) configurations, the safe region
//! and the recommended configuration.

use serde::{Deserialize, Serialize};

use super::{Case, CaseFailure, Failure, Format, junit};
use crate::stats;

/// The `schema` field of a `tune --format json` report.
pub const TUNE_SCHEMA: &str = "neli-lab/tune/1";

/// One `tune` sweep (`--format json`), documented in `scenarios/README.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tune {
    pub schema: String,
    pub build: String,
    pub scenario: String,
    /// The broker profile the sweep imitated, with its provenance and the
    /// scenario's timing overrides: the recommendation holds for that broker.
    #[serde(default)]
    pub broker: String,
    pub start: u64,
    pub seeds: u64,
    /// Every configuration, in sweep order (T, then S, then G).
    pub configs: Vec<TuneConfig>,
    /// Labels of the safe and valid configurations.
    pub safe_region: Vec<String>,
    /// Label of the recommended configuration.
    pub recommended: Option<String>,
    /// The CSV and SVG written to `--out`.
    pub files: Vec<String>,
}

/// One configuration of a sweep (`crate::sweep::Config`), times in ms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneConfig {
    pub label: String,
    pub heartbeat_timeout_ms: i64,
    pub session_timeout_ms: i64,
    pub grace_ms: i64,
    pub seeds: u64,
    pub violating: u64,
    pub overlap_max_ms: u64,
    pub stale_writes: u64,
    pub gap_p50_ms: u64,
    pub gap_p99_ms: u64,
    pub failover_p50_ms: Option<u64>,
    pub failover_max_ms: Option<u64>,
    /// No overlap and no stale write on any seed.
    pub safe: bool,
    /// Accepted by neli's config validation.
    pub valid: bool,
    pub recommended: bool,
    /// For a valid but unsafe configuration: its first violating seed, the
    /// violation and how to reproduce it (the configured scenario is
    /// written to `--out`).
    pub failing: Option<Failure>,
}

impl Tune {
    /// A configuration neli's validation accepts that overlapped or wrote
    /// stale: a safety violation, the one thing that makes `tune` exit 1.
    pub fn failed(&self) -> bool {
        self.configs.iter().any(|c| c.valid && !c.safe)
    }

    pub fn json(&self) -> String {
        super::pretty_json(self)
    }

    /// One testcase per configuration: valid and unsafe fails, invalid is
    /// skipped (simulated only to show why validation refuses it).
    pub fn junit(&self, time_s: f64) -> String {
        let cases: Vec<Case> = self
            .configs
            .iter()
            .map(|c| Case {
                name: c.label.clone(),
                classname: format!("neli-lab.tune.{}", self.scenario),
                time_s: 0.0,
                failure: (c.valid && !c.safe).then(|| CaseFailure {
                    message: format!(
                        "{} accepted by validation but unsafe: overlap max {}ms, {} stale write(s), {} of {} seed(s) violating{}",
                        c.label,
                        c.overlap_max_ms,
                        c.stale_writes,
                        c.violating,
                        c.seeds,
                        c.failing.as_ref().map_or(String::new(), |f| format!(
                            "; seed {}: {}; reproduce: {}",
                            f.seed,
                            f.violations.join("; "),
                            f.reproduce
                        ))
                    ),
                    body: String::new(),
                }),
                skipped: (!c.valid).then(|| format!("{}: rejected by neli's config validation", c.label)),
                out: format!(
                    "violating {} overlap max {}ms gap p50/p99 {}/{}ms failover p50/max {}/{}{}",
                    c.violating,
                    c.overlap_max_ms,
                    c.gap_p50_ms,
                    c.gap_p99_ms,
                    c.failover_p50_ms.map_or("-".into(), |v| format!("{v}ms")),
                    c.failover_max_ms.map_or("-".into(), |v| format!("{v}ms")),
                    if c.recommended { " (recommended)" } else { "" }
                ),
            })
            .collect();
        junit(&format!("neli-lab tune {}", self.scenario), &self.build, time_s, &cases)
    }
}

/// The rule `sweep::recommend` applies, as the text form states it.
const RULE: &str = "safe and valid, gap p50 at most 25% + 250ms above the best, then the largest margin |S-T|/S, then the smallest gap p99";

impl Tune {
    /// The report in `format`; `time_s` is the sweep's wall time (JUnit only).
    pub fn render(&self, format: Format, time_s: f64) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => self.json(),
            Format::Junit => self.junit(time_s),
            Format::Jsonl => super::one_line(self),
            Format::Markdown => self.markdown(),
        }
    }

    /// One table row per configuration (text and Markdown print the same).
    pub(crate) fn rows(&self) -> Vec<Vec<String>> {
        self.configs
            .iter()
            .map(|c| {
                vec![
                    c.label.clone(),
                    c.violating.to_string(),
                    c.overlap_max_ms.to_string(),
                    format!("{}/{}", c.gap_p50_ms, c.gap_p99_ms),
                    match (c.failover_p50_ms, c.failover_max_ms) {
                        (Some(a), Some(b)) => format!("{a}/{b}"),
                        _ => "-".into(),
                    },
                    c.verdict().into(),
                ]
            })
            .collect()
    }

    /// The table, the safe region, the recommendation and the files written.
    pub fn text(&self) -> String {
        let rows = self.rows();
        let mut o = format!("tune {} over {} seed(s) from {} (ms)\n", self.scenario, self.seeds, self.start);
        o.push_str(&stats::table(
            &["config", "violating", "overlap max", "gap p50/p99", "failover p50/max", "verdict"],
            &rows,
        ));
        let safe = if self.safe_region.is_empty() { "none of these".into() } else { self.safe_region.join(", ") };
        o.push_str(&format!("safe region: {safe}\n"));
        match self.configs.iter().find(|c| c.recommended) {
            Some(c) => o.push_str(&format!(
                "recommended: {} (gap p50 {}ms p99 {}ms, failover max {}; rule: {RULE})\n",
                c.label,
                c.gap_p50_ms,
                c.gap_p99_ms,
                c.failover_max_ms.map_or("-".into(), |f| format!("{f}ms"))
            )),
            None => o.push_str("recommended: none (no valid configuration was free of overlap)\n"),
        }
        o.push_str(&format!("assumes broker {}\n", self.broker));
        for f in &self.files {
            o.push_str(&format!("wrote {f}\n"));
        }
        o
    }
}

impl TuneConfig {
    /// The verdict column of the text table.
    pub(crate) fn verdict(&self) -> &'static str {
        match (self.recommended, self.safe, self.valid) {
            (true, _, _) => "safe, recommended",
            (false, true, true) => "safe",
            (false, true, false) => "no overlap seen, but rejected by validation",
            (false, false, true) => "OVERLAPS",
            (false, false, false) => "OVERLAPS (rejected by validation)",
        }
    }
}
