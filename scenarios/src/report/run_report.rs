//! `run`'s report: one seed of one scenario, its figures and verdict.

use serde::{Deserialize, Serialize};

use super::{Case, CaseFailure, Format, junit};

/// The `schema` field of a `run --format json` report.
pub const RUN_SCHEMA: &str = "neli-lab/run/2";

/// One `run` (`--format json`), documented in `scenarios/README.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub schema: String,
    pub build: String,
    pub scenario: String,
    pub arg: String,
    /// The broker profile the run imitated, with its provenance and the
    /// scenario's timing overrides (`Cluster::broker_provenance`).
    #[serde(default)]
    pub broker: String,
    pub seed: u64,
    pub passed: bool,
    pub violations: Vec<String>,
    pub figures: RunFigures,
    /// The command that reproduces this run.
    pub reproduce: String,
    /// Where `--timeline` drew the SVG.
    pub timeline: Option<String>,
    /// The full trace with `--trace`.
    pub trace: Option<Vec<String>>,
}

/// The figures of one run, in ms: the simulator's own type.
pub type RunFigures = neli_sim::Figures;

impl Run {
    /// The report of `r`, a run of the scenario `s` given as `arg`.
    pub fn new(
        s: &neli_sim::Scenario,
        arg: &str,
        r: &neli_sim::RunReport,
        trace: bool,
        timeline: Option<String>,
    ) -> Run {
        let f = &r.figures;
        Run {
            schema: RUN_SCHEMA.into(),
            build: crate::BUILD.into(),
            scenario: s.name.clone(),
            arg: arg.into(),
            broker: s.cluster.broker_provenance(),
            seed: r.seed,
            passed: r.passed(),
            violations: r.violations.iter().map(ToString::to_string).collect(),
            figures: f.clone(),
            reproduce: format!("{} run {arg} --seed {}", crate::repro(), r.seed),
            timeline,
            trace: trace.then(|| r.trace.clone()),
        }
    }

    pub fn json(&self) -> String {
        super::pretty_json(self)
    }

    /// One testcase named after the scenario.
    pub fn junit(&self, time_s: f64) -> String {
        let f = &self.figures;
        let case = Case {
            name: self.scenario.clone(),
            classname: format!("neli-lab.run.{}", self.scenario),
            time_s,
            failure: (!self.passed).then(|| CaseFailure {
                message: format!(
                    "seed {}: {}; reproduce: {}",
                    self.seed,
                    self.violations.first().map_or("", String::as_str),
                    self.reproduce
                ),
                body: self.violations.iter().map(|v| format!("{v}\n")).collect(),
            }),
            skipped: None,
            out: format!(
                "seed {} overlap {}ms gap max {}ms failovers {:?} ms",
                self.seed, f.overlap_total_ms, f.gap_max_ms, f.failovers_ms
            ),
        };
        junit("neli-lab run", &self.build, time_s, &[case])
    }
}

impl Run {
    /// The report in `format`; `time_s` is the run's wall time (JUnit only).
    pub fn render(&self, format: Format, time_s: f64) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => self.json(),
            Format::Junit => self.junit(time_s),
            Format::Jsonl => super::one_line(self),
            Format::Markdown => self.markdown(),
        }
    }

    /// What `run` prints: the build, the scenario and seed, the trace
    /// (`--trace`), the figures, the timeline file and the verdict.
    pub fn text(&self) -> String {
        format!(
            "{}
{}",
            crate::build_line(),
            self.replay_text()
        )
    }

    /// What `replay` prints: `run`'s text without the build line.
    pub fn replay_text(&self) -> String {
        let mut o = format!("scenario  {} seed {}\nbroker    {}\n", self.scenario, self.seed, self.broker);
        for l in self.trace.iter().flatten() {
            o.push_str(l);
            o.push('\n');
        }
        o.push_str(&figures_text(&self.figures));
        if let Some(path) = &self.timeline {
            o.push_str(&format!("timeline  {path}\n"));
        }
        if self.passed {
            o.push_str("verdict   PASS\n");
        } else {
            o.push_str("verdict   FAIL\n");
            for v in &self.violations {
                o.push_str(&format!("violation {v}\n"));
            }
            o.push_str(&format!("reproduce: {}\n", self.reproduce));
        }
        o
    }
}

/// The figures of one run as `run` and `replay` print them.
pub fn figures_text(f: &RunFigures) -> String {
    let fos: Vec<String> = f.failovers_ms.iter().map(|m| format!("{m}ms")).collect();
    format!(
        "overlap   {} intervals, total {}ms, max {}ms\n\
         gap       total {}ms, max {}ms\n\
         failover  {} (max {}ms){}\n\
         other     first leader {}, acquisitions {}, writes {}, stale writes {}, zombie heartbeats {}, leader at end {}\n\
         churn     interruptions {} (leader stopped with no fault on it), leader changes {}\n",
        f.overlap_count,
        f.overlap_total_ms,
        f.overlap_max_ms,
        f.gap_total_ms,
        f.gap_max_ms,
        f.failovers_ms.len(),
        f.failover_max_ms(),
        if fos.is_empty() { String::new() } else { format!(": {}", fos.join(" ")) },
        f.first_leader_ms.map_or("never".into(), crate::secs),
        f.acquisitions,
        f.writes,
        f.stale_writes,
        f.zombie_heartbeats,
        if f.leader_at_end { "yes" } else { "no" },
        f.interruptions,
        f.leader_changes
    )
}
