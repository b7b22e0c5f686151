//! `check`'s report: the bounds explored, one outcome per model property,
//! each counterexample with its scenario file and the simulator's replay,
//! and the verdict.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::{Case, CaseFailure, Format, junit, suite};
use crate::invocation::quote;
use crate::repro;

/// The `schema` field of a `check --format json` report.
pub const CHECK_SCHEMA: &str = "neli-lab/check/1";

/// One `check` (`--format json`), documented in `scenarios/README.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub schema: String,
    pub build: String,
    /// The bounds explored, as the text form's second line.
    pub bounds: String,
    pub states: u64,
    pub unique: u64,
    pub depth: u64,
    pub wall_s: f64,
    /// No `always` property was violated and the search was exhaustive.
    pub passed: bool,
    /// The limit that stopped the search early (`--max-states N reached`),
    /// if one did: then `passed` is false and unviolated `always`
    /// properties are `unproven`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The checker's peak resident memory in bytes, where the kernel says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory: Option<u64>,
    /// `--memory-limit` in bytes, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
    /// What the search covered: exhaustive (with the chance that a
    /// fingerprint collision skipped a state), partial or random walks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<String>,
    pub properties: Vec<CheckProperty>,
    /// What the search proved (the text form's last line, the exit code).
    #[serde(skip, default)]
    pub verdict: CheckVerdict,
}

/// What a search proved, decided once (`neli_lab::model_check::Summary::verdict`)
/// and printed, rendered and turned into the exit code from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckVerdict {
    /// Exhaustive, no `always` property violated, a leader was elected.
    #[default]
    Pass,
    /// An `always` property was violated.
    Fail,
    /// Exhaustive and nothing violated, but nobody ever led: the safety
    /// properties hold trivially.
    Vacuous,
    /// A limit stopped the search before the bounds were exhausted.
    Incomplete,
}

/// `check`'s exit code when a limit stopped the search and nothing was
/// violated in the states it explored: neither a proof nor a failure.
pub const EXIT_INCOMPLETE: u8 = 3;

/// A size for people: `21.0 GiB`.
pub fn show_bytes(bytes: u64) -> String {
    bytesize::ByteSize::b(bytes).display().iec().to_string()
}

impl CheckVerdict {
    /// 0 pass, 1 fail or vacuous, 3 incomplete.
    pub fn exit_code(self) -> u8 {
        match self {
            CheckVerdict::Pass => 0,
            CheckVerdict::Fail | CheckVerdict::Vacuous => 1,
            CheckVerdict::Incomplete => EXIT_INCOMPLETE,
        }
    }
}

/// `always` or `sometimes`, as the model's catalog says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PropertyKind {
    Always,
    Sometimes,
}

impl PropertyKind {
    pub(crate) fn word(self) -> &'static str {
        match self {
            PropertyKind::Always => "always",
            PropertyKind::Sometimes => "sometimes",
        }
    }
}

/// What the search made of one property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PropertyOutcome {
    /// `always`, no counterexample in the exhausted bounds.
    Holds,
    /// `always`, with a counterexample.
    Violated,
    /// `sometimes`, with an example.
    Witnessed,
    /// `sometimes`, not reachable within the exhausted bounds.
    Never,
    /// The search stopped early without a counterexample or an example.
    Unproven,
}

impl PropertyOutcome {
    /// The outcome of a property of `kind`, `found` or not, in a search
    /// that was `stopped` early or not.
    pub fn of(kind: PropertyKind, found: bool, stopped: bool) -> PropertyOutcome {
        match (kind, found) {
            (_, false) if stopped => PropertyOutcome::Unproven,
            (PropertyKind::Always, false) => PropertyOutcome::Holds,
            (PropertyKind::Always, true) => PropertyOutcome::Violated,
            (PropertyKind::Sometimes, true) => PropertyOutcome::Witnessed,
            (PropertyKind::Sometimes, false) => PropertyOutcome::Never,
        }
    }

    pub(crate) fn word(self) -> &'static str {
        match self {
            PropertyOutcome::Holds => "holds",
            PropertyOutcome::Violated => "violated",
            PropertyOutcome::Witnessed => "witnessed",
            PropertyOutcome::Never => "never",
            PropertyOutcome::Unproven => "unproven",
        }
    }
}

/// One property's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckProperty {
    pub property: String,
    pub kind: PropertyKind,
    pub outcome: PropertyOutcome,
    /// The counterexample, step by step (violated only).
    pub path: Option<String>,
    /// The counterexample as a scenario file `run` replays.
    pub scenario: Option<String>,
    /// The counterexample as a model path file.
    pub path_file: Option<String>,
    /// What the simulator made of the scenario file.
    pub replay: Option<CheckReplay>,
}

/// The simulator's replay of a counterexample scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReplay {
    /// `reproduced`, `not reproduced by seeds 0..N`, `not tried` or `not loadable: WHY`.
    pub result: String,
    pub seed: Option<u64>,
    pub violation: Option<String>,
    pub reproduce: Option<String>,
    /// The same, typed, for the text form.
    #[serde(skip, default)]
    pub class: Replay,
}

/// What the simulator made of a counterexample scenario file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Replay {
    /// The file does not load (why).
    LoadError(String),
    /// `--sim-seeds 0`.
    #[default]
    NotTried,
    /// A seed of the simulator fails too, first with this violation.
    Reproduced(u64, String),
    /// Seeds `0..N` of the simulator pass.
    NotReproduced(u64),
    /// No seed of `0..seeds` breaks the property's guarantee, but `seed`
    /// breaks another rule, first with `violation`: not a reproduction.
    OtherRule { seeds: u64, seed: u64, violation: String },
}

impl CheckReplay {
    /// The report of `class` for the scenario file `file`.
    pub fn of(class: Replay, file: &str) -> CheckReplay {
        let (result, seed, violation, reproduce) = match &class {
            Replay::LoadError(e) => (format!("not loadable: {e}"), None, None, None),
            Replay::NotTried => ("not tried".into(), None, None, Some(format!("{} run {}", repro(), quote(file)))),
            Replay::Reproduced(seed, v) => (
                "reproduced".into(),
                Some(*seed),
                Some(v.clone()),
                Some(format!("{} run {} --seed {seed}", repro(), quote(file))),
            ),
            Replay::NotReproduced(n) => (
                format!("not reproduced by seeds 0..{n}"),
                None,
                None,
                Some(format!("{} run {}", repro(), quote(file))),
            ),
            Replay::OtherRule { seeds, seed, violation } => (
                format!("not reproduced by seeds 0..{seeds}: another rule fails"),
                Some(*seed),
                Some(violation.clone()),
                Some(format!("{} run {} --seed {seed}", repro(), quote(file))),
            ),
        };
        CheckReplay { result, seed, violation, reproduce, class }
    }
}

impl Check {
    /// The report in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => format!("{}{}", self.header(), self.text_body()),
            Format::Json => self.json(),
            Format::Junit => self.junit(),
            Format::Jsonl => super::one_line(self),
            Format::Markdown => self.markdown(),
        }
    }

    /// The text form's first lines (build and bounds), printed before the
    /// search starts so a long search says what it explores.
    pub fn header(&self) -> String {
        format!("build     {}\n{}\n", self.build, self.bounds)
    }

    /// The text form after the header: the states explored, a line per
    /// property (each counterexample with its files and replay), a warning
    /// for counterexamples the simulator did not reproduce, the verdict.
    pub fn text_body(&self) -> String {
        let stopped = match &self.stopped {
            Some(why) => format!(" (stopped: {why}; not exhaustive)"),
            None => String::new(),
        };
        let mut o = format!(
            "explored {} states ({} unique, depth {}) in {:.1}s{stopped}\n",
            self.states, self.unique, self.depth, self.wall_s
        );
        for p in &self.properties {
            p.write_text(&mut o);
        }
        let unreproduced = self
            .properties
            .iter()
            .filter(|p| {
                matches!(p.replay.as_ref().map(|r| &r.class), Some(Replay::NotReproduced(_) | Replay::OtherRule { .. }))
            })
            .count();
        if unreproduced > 0 {
            let _ =
                writeln!(o, "WARNING   {unreproduced} counterexample(s) NOT REPRODUCED by the simulator (see above)");
        }
        if let Some(peak) = self.peak_memory {
            let limit =
                self.memory_limit.map_or("no --memory-limit".into(), |l| format!("--memory-limit {}", show_bytes(l)));
            let _ = writeln!(o, "memory    peak {} resident ({limit})", show_bytes(peak));
        }
        if let Some(coverage) = &self.coverage {
            let _ = writeln!(o, "coverage  {coverage}");
        }
        o.push_str(&self.verdict_line());
        o
    }

    fn verdict_line(&self) -> String {
        match self.verdict {
            CheckVerdict::Fail => "verdict   FAIL\n".into(),
            CheckVerdict::Vacuous => {
                "verdict   FAIL (vacuous: no member ever leads within these bounds, so the safety \
                 properties hold trivially; an election that never elects is broken)\n"
                    .into()
            }
            CheckVerdict::Incomplete => format!(
                "verdict   INCOMPLETE ({}: no violation in the {} states explored, but the bounds were not \
                 exhausted; raise the limit or narrow the bounds)\n",
                self.stopped.as_deref().unwrap_or("a limit"),
                self.unique
            ),
            CheckVerdict::Pass => "verdict   PASS\n".into(),
        }
    }

    pub fn json(&self) -> String {
        super::pretty_json(self)
    }

    /// One testcase per property; a violated `always` property fails with
    /// its scenario file, the simulator's replay and the reproduction.
    pub fn junit(&self) -> String {
        junit("neli-lab check", &format!("{}\n{}", self.build, self.bounds), self.wall_s, &self.cases())
    }

    /// The testsuite of [`Check::junit`] named `name`, for a document of several.
    pub fn junit_suite(&self, name: &str) -> quick_junit::TestSuite {
        suite(name, &format!("{}\n{}", self.build, self.bounds), self.wall_s, &self.cases())
    }

    /// One testcase per property.
    fn cases(&self) -> Vec<Case> {
        self.properties
            .iter()
            .map(|p| Case {
                name: p.property.clone(),
                classname: format!(
                    "neli-lab.check.{}",
                    if p.kind == PropertyKind::Always { "always" } else { "sometimes" }
                ),
                time_s: 0.0,
                failure: (p.outcome == PropertyOutcome::Violated)
                    .then(|| CaseFailure { message: p.failure_message(), body: p.path.clone().unwrap_or_default() }),
                skipped: (p.outcome == PropertyOutcome::Unproven).then(|| {
                    format!(
                        "unproven: the search stopped early ({}) before the bounds were exhausted",
                        self.stopped.as_deref().unwrap_or("a limit")
                    )
                }),
                out: p.outcome.word().into(),
            })
            .collect()
    }
}

impl CheckProperty {
    fn failure_message(&self) -> String {
        let mut m = format!("VIOLATED: {}", self.property);
        if let Some(f) = &self.scenario {
            let _ = write!(m, "; counterexample {f}");
        }
        if let Some(r) = &self.replay {
            let _ = write!(m, "; simulator: {}", r.result);
            if let (Some(seed), Some(v)) = (r.seed, &r.violation) {
                let _ = write!(m, " with seed {seed}: {v}");
            }
            if let Some(c) = &r.reproduce {
                let _ = write!(m, "; reproduce: {c}");
            }
        }
        m
    }

    /// This property's lines of the text form.
    fn write_text(&self, o: &mut String) {
        let name = &self.property;
        let _ = match (self.outcome, self.kind) {
            (PropertyOutcome::Unproven, PropertyKind::Always) => {
                writeln!(o, "unproven  {name} (no violation in the states explored)")
            }
            (PropertyOutcome::Unproven, PropertyKind::Sometimes) => {
                writeln!(o, "unproven  {name} (not reached in the states explored)")
            }
            (PropertyOutcome::Holds, _) => writeln!(o, "holds     {name}"),
            (PropertyOutcome::Witnessed, _) => writeln!(o, "witnessed {name}"),
            (PropertyOutcome::Never, _) => writeln!(o, "never     {name} (not reachable within the bounds)"),
            (PropertyOutcome::Violated, _) => {
                let _ = writeln!(o, "VIOLATED  {name}\n{}", self.path.as_deref().unwrap_or_default());
                self.write_replay(o);
                Ok(())
            }
        };
    }

    /// A counterexample's files and what the simulator made of it.
    fn write_replay(&self, o: &mut String) {
        let (Some(f), Some(rp)) = (&self.scenario, &self.replay) else { return };
        if let Replay::LoadError(e) = &rp.class {
            let _ = writeln!(o, "scenario  {f} (the simulator cannot load it: {e})");
            return;
        }
        if let Some(p) = &self.path_file {
            let _ = writeln!(o, "path      {p} (replays step by step on the core)");
        }
        let _ = writeln!(o, "scenario  {f}");
        let (prog, q) = (repro(), quote(f));
        let _ = match &rp.class {
            Replay::Reproduced(seed, v) => writeln!(
                o,
                "replay    REPRODUCED by the simulator with seed {seed}: {v}\n          {prog} run {q} --seed {seed}"
            ),
            Replay::NotTried => writeln!(o, "replay    not tried (--sim-seeds 0): {prog} run {q}"),
            Replay::NotReproduced(n) => writeln!(
                o,
                "replay    NOT REPRODUCED: the simulator passes seeds 0..{n} of this scenario.\n          \
                 The model's path and the simulator disagree (coarser model timing, a fault aimed\n          \
                 differently, or a model/simulator mismatch): do not trust either until explained.\n          \
                 {prog} run {q}"
            ),
            Replay::OtherRule { seeds, seed, violation } => writeln!(
                o,
                "replay    NOT REPRODUCED: no seed of 0..{seeds} breaks this property in the simulator;\n          \
                 seed {seed} breaks another rule: {violation}\n          \
                 The model's path and the simulator disagree on what fails: do not trust either until\n          \
                 explained.\n          {prog} run {q} --seed {seed}"
            ),
            Replay::LoadError(_) => Ok(()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_kind_discovery_and_completeness() {
        use PropertyKind::*;
        use PropertyOutcome::*;
        assert_eq!(PropertyOutcome::of(Always, false, false), Holds);
        assert_eq!(PropertyOutcome::of(Always, true, false), Violated);
        assert_eq!(PropertyOutcome::of(Always, true, true), Violated);
        assert_eq!(PropertyOutcome::of(Always, false, true), Unproven);
        assert_eq!(PropertyOutcome::of(Sometimes, true, false), Witnessed);
        assert_eq!(PropertyOutcome::of(Sometimes, false, false), Never);
        assert_eq!(PropertyOutcome::of(Sometimes, false, true), Unproven);
    }

    #[test]
    fn verdicts_map_to_exit_codes() {
        assert_eq!(CheckVerdict::Pass.exit_code(), 0);
        assert_eq!(CheckVerdict::Fail.exit_code(), 1);
        assert_eq!(CheckVerdict::Vacuous.exit_code(), 1);
        assert_eq!(CheckVerdict::Incomplete.exit_code(), 3);
    }

    #[test]
    fn json_keeps_outcome_words() {
        let p = CheckProperty {
            property: "p".into(),
            kind: PropertyKind::Sometimes,
            outcome: PropertyOutcome::Never,
            path: None,
            scenario: None,
            path_file: None,
            replay: Some(CheckReplay::of(Replay::NotReproduced(20), "f.toml")),
        };
        let j = serde_json::to_string(&p).unwrap();
        assert!(j.contains(r#""kind":"sometimes","outcome":"never""#), "{j}");
        assert!(j.contains(r#""result":"not reproduced by seeds 0..20""#), "{j}");
        assert!(!j.contains("class"), "{j}");
    }

    #[test]
    fn another_rule_failing_is_not_a_reproduction() {
        let other = Replay::OtherRule { seeds: 20, seed: 3, violation: "rule send-time: m0 ...".into() };
        let p = CheckProperty {
            property: "at most one leader per role".into(),
            kind: PropertyKind::Always,
            outcome: PropertyOutcome::Violated,
            path: Some("t=0 ...".into()),
            scenario: Some("f.toml".into()),
            path_file: None,
            replay: Some(CheckReplay::of(other, "f.toml")),
        };
        let mut text = String::new();
        p.write_replay(&mut text);
        assert!(text.contains("replay    NOT REPRODUCED: no seed of 0..20 breaks this property"), "{text}");
        assert!(text.contains("seed 3 breaks another rule: rule send-time"), "{text}");
        assert!(text.contains("run f.toml --seed 3"), "{text}");
        let j = serde_json::to_string(&p).unwrap();
        assert!(j.contains(r#""result":"not reproduced by seeds 0..20: another rule fails","seed":3"#), "{j}");
    }
}
