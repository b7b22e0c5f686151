//! `explore`'s report: the text table for a person, JSON for tools and
//! `merge`, JUnit XML for CI. Everything here is computed from the per-seed
//! results in seed order, so a report merged from shards prints exactly what
//! one run over all seeds prints.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::{Case, CaseFailure, Format, junit, suite};
use crate::invocation::quote;
use crate::repro;
use crate::stats::{self, SeedResult};

/// The `schema` field of an explore report; bumped on incompatible change.
pub const SCHEMA: &str = "neli-lab/explore/2";

/// How many failing seeds the text output lists before "... and N more".
const LISTED: usize = 10;

/// One `explore` run (or a shard of one, or shards merged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explore {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The build that produced the figures ([`crate::BUILD`]).
    pub build: String,
    /// The first seed of the whole range.
    pub start: u64,
    /// `start` was drawn from the clock (`--start auto`); absent (false)
    /// when it was given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub start_auto: bool,
    /// How many seeds the whole range has (over all shards).
    pub seeds: u64,
    /// Which shard this is; `1/1` for an unsharded run.
    pub shard: Shard,
    /// Threads used.
    pub jobs: usize,
    /// Wall-clock seconds (not deterministic; never compared).
    pub wall_s: f64,
    /// The `--time-budget` (as given, e.g. `10m`) when it stopped the run
    /// before the shard's seeds ran out; `null` otherwise.
    #[serde(default)]
    pub time_budget: Option<String>,
    /// How many shard reports `merge` combined into this one (0: not merged).
    #[serde(default)]
    pub merged_shards: u64,
    /// Ctrl-C (or SIGTERM) stopped the run before its seeds ran out: the
    /// figures cover the seeds that ran, and a run without a failure has
    /// no verdict. Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `--ablate-seeds`: the ablated runs covered only the first this many
    /// seeds of the range; absent when they covered all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ablate_seeds: Option<u64>,
    /// `--regressions DIR`: the kept failures replayed before any new
    /// seed, in file order; absent when none were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regressions: Vec<Regression>,
    /// The scenarios, in the order given.
    pub scenarios: Vec<ScenarioResults>,
}

/// One kept failure replayed (`explore --regressions`): failing again is a
/// regression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    /// The scenario file, as found in the directory.
    pub file: String,
    /// Its scenario's `name`.
    pub scenario: String,
    /// The seed it is replayed with (its `seed`).
    pub seed: u64,
    pub passed: bool,
    pub violations: Vec<String>,
    /// The command that replays it.
    pub reproduce: String,
}

/// `--shard index/of` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub of: u64,
}

/// One scenario's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResults {
    /// The scenario's `name`.
    pub name: String,
    /// How the user named it (a name or a path), as reproduction lines use it.
    pub arg: String,
    /// Wall-clock seconds spent on this scenario.
    pub wall_s: f64,
    /// The summary row: seeds, violations, and p50/p99/max in ms of overlap,
    /// gap and failover (as printed).
    pub summary: Summary,
    /// Every failing seed, in seed order.
    pub failing: Vec<Failure>,
    /// Every seed's figures, in seed order (what `merge` recomputes from).
    pub results: Vec<SeedResult>,
    /// A layer-ablation run the scenario says must fail
    /// (`expect.fails_without`): it is as expected when some seed failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expect_fail: bool,
    /// A layer-ablation run the scenario says may fail
    /// (`expect.may_fail_without`): reported, never a failure of the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub may_fail: bool,
    /// The layer switched off in this run (`explore --ablate`); absent for
    /// the scenario as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without: Option<String>,
}

/// The table row of one scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub seeds: u64,
    pub violations: u64,
    pub overlap: String,
    pub gap: String,
    pub failover: String,
}

/// A failing seed: what it violated and how to reproduce it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub seed: u64,
    pub violations: Vec<String>,
    pub reproduce: String,
    pub shrink: String,
}

impl ScenarioResults {
    /// Summarises `results` (in seed order) of the scenario `name` given as `arg`.
    pub fn new(name: &str, arg: &str, wall_s: f64, results: Vec<SeedResult>) -> ScenarioResults {
        let [_, seeds, violations, overlap, gap, failover] = stats::row(name, &results);
        let failing = results
            .iter()
            .filter(|r| !r.violations.is_empty())
            .map(|r| Failure {
                seed: r.seed,
                violations: r.violations.clone(),
                reproduce: format!("{} run {arg} --seed {}", repro(), r.seed),
                shrink: format!("{} shrink {arg} --seed {} -o {}-shrunk.toml", repro(), r.seed, quote(name)),
            })
            .collect();
        ScenarioResults {
            name: name.to_owned(),
            arg: arg.to_owned(),
            wall_s,
            summary: Summary {
                seeds: seeds.parse().unwrap_or(0),
                violations: violations.parse().unwrap_or(0),
                overlap,
                gap,
                failover,
            },
            failing,
            results,
            expect_fail: false,
            may_fail: false,
            without: None,
        }
    }

    /// The same results, marked as a run with `layer` switched off.
    pub fn ablating(mut self, layer: Option<neli_sim::scenario::Layer>) -> ScenarioResults {
        self.without = layer.map(|l| l.to_string());
        self
    }

    /// The same results, judged as a run that must fail (`expect_fail`).
    pub fn expecting_failure(mut self, expect_fail: bool) -> ScenarioResults {
        self.expect_fail = expect_fail;
        self
    }

    /// The same results, judged as a run that may fail (`may_fail`).
    pub fn allowing_failure(mut self, may_fail: bool) -> ScenarioResults {
        self.may_fail = may_fail;
        self
    }

    /// A failing seed here fails the run: not a run that must or may fail.
    pub(crate) fn judged(&self) -> bool {
        !self.expect_fail && !self.may_fail
    }

    /// A run that must fail in which every seed passed.
    pub(crate) fn missed_expected_failure(&self) -> bool {
        self.expect_fail && self.failing.is_empty()
    }
}

impl Explore {
    /// Seeds run per scenario (the first scenario's count; all are equal).
    pub fn seeds_run(&self) -> usize {
        self.scenarios.first().map_or(0, |s| s.results.len())
    }

    /// Whether any scenario's outcome is not the expected one: a failing
    /// seed, or a run that must fail passing every seed (unless
    /// interrupted: then it may just not have got there yet).
    pub fn failed(&self) -> bool {
        self.regressions.iter().any(|r| !r.passed)
            || self.scenarios.iter().any(|s| {
                if s.expect_fail {
                    s.failing.is_empty() && !self.interrupted
                } else {
                    s.judged() && !s.failing.is_empty()
                }
            })
    }

    /// The `explored …` line of the text output (it names the wall time, so
    /// it is the one line that differs between runs).
    pub fn explored_line(&self) -> String {
        let shard = match (self.merged_shards, self.shard.of) {
            (0, 1) => String::new(),
            (0, of) => format!(", shard {}/{of}", self.shard.index),
            (n, _) => format!(", merged from {n} shard(s)"),
        };
        // Seeds run: an ablated seed taken from the scenario's own run costs nothing.
        let total: usize = self.scenarios.iter().flat_map(|s| &s.results).filter(|r| !r.reused).count();
        let base = self.scenarios.iter().filter(|s| s.without.is_none()).count();
        let ablated: Vec<&ScenarioResults> = self.scenarios.iter().filter(|s| s.without.is_some()).collect();
        let ablations = match ablated.first() {
            None => String::new(),
            Some(a) => {
                let reused = ablated.iter().flat_map(|s| &s.results).filter(|r| r.reused).count();
                let of = ablated.iter().map(|s| s.results.len()).sum::<usize>();
                let reused = if reused > 0 {
                    format!(
                        " ({reused} of those {of} taken from the scenario's own run of the seed: the layer never acted there)"
                    )
                } else {
                    String::new()
                };
                format!(" and {} ablated run(s) x {} seed(s){reused}", ablated.len(), a.results.len())
            }
        };
        let budget = match &self.time_budget {
            Some(b) => format!(" (time budget {b} reached: {} of {} seed(s) ran)", self.seeds_run(), self.planned()),
            None => String::new(),
        };
        let auto = if self.start_auto {
            format!(" (drawn by --start auto; these seeds again: --start {})", self.start)
        } else {
            String::new()
        };
        format!(
            "explored {} scenario(s) x {} seed(s){ablations} from {}{auto}{shard} on {} thread(s) in {:.1}s ({:.1} seeds/s){budget}",
            base,
            self.seeds_run(),
            self.start,
            self.jobs,
            self.wall_s,
            total as f64 / self.wall_s.max(1e-9)
        )
    }

    /// Seeds this shard would run without a time budget.
    fn planned(&self) -> u64 {
        let first = self.start.saturating_add(self.shard.index - 1);
        let end = self.start.saturating_add(self.seeds);
        if first >= end { 0 } else { (end - first).div_ceil(self.shard.of) }
    }

    /// The text output after the build line and the `explored` line: the
    /// figures table, the verdict and the failing seeds.
    pub fn text_body(&self) -> String {
        let mut o = self.figures_table();
        let regressed: Vec<&Regression> = self.regressions.iter().filter(|r| !r.passed).collect();
        if !self.regressions.is_empty() {
            let _ = writeln!(
                o,
                "regressions: {} kept failure(s) replayed first, {} fail again",
                self.regressions.len(),
                regressed.len()
            );
        }
        self.write_allowed_failures(&mut o);
        let failing: Vec<(&ScenarioResults, &Failure)> =
            self.scenarios.iter().filter(|s| s.judged()).flat_map(|s| s.failing.iter().map(move |f| (s, f))).collect();
        let missed: Vec<&ScenarioResults> = self.scenarios.iter().filter(|s| s.missed_expected_failure()).collect();
        if failing.is_empty() && self.interrupted && regressed.is_empty() {
            o.push_str("verdict   NONE (interrupted: no violation in the seeds that ran, and not every seed ran)\n");
            return o;
        }
        if failing.is_empty() && missed.is_empty() && regressed.is_empty() {
            o.push_str("verdict   PASS\n");
            return o;
        }
        write_fail(&mut o, &regressed, &failing, &missed);
        o
    }

    /// The figures table, with the line that says what its figures are.
    fn figures_table(&self) -> String {
        let mut o = String::new();
        o.push_str(
            "figures in ms as p50/p99/max over seeds; overlap = total per run, gap = longest per run, failover = slowest per run\n",
        );
        let rows: Vec<Vec<String>> = self
            .scenarios
            .iter()
            .map(|s| {
                vec![
                    s.name.clone(),
                    s.summary.seeds.to_string(),
                    if s.expect_fail {
                        format!("{} (must fail)", s.summary.violations)
                    } else if s.may_fail {
                        format!("{} (may fail)", s.summary.violations)
                    } else {
                        s.summary.violations.to_string()
                    },
                    s.summary.overlap.clone(),
                    s.summary.gap.clone(),
                    s.summary.failover.clone(),
                ]
            })
            .collect();
        o.push_str(&stats::table(&["scenario", "seeds", "violations", "overlap", "gap", "failover"], &rows));
        o
    }

    /// One line per scenario not judged (its file says it must or may
    /// fail) whose seeds failed, as it says they would.
    fn write_allowed_failures(&self, o: &mut String) {
        for s in self.scenarios.iter().filter(|s| !s.judged() && !s.failing.is_empty()) {
            let first = &s.failing[0];
            let (label, field) =
                if s.expect_fail { ("expected", "fails_without") } else { ("may fail", "may_fail_without") };
            let _ = writeln!(
                o,
                "{label:<9} {} failed in {} of {} seed(s), as its scenario says (expect.{field}); seed {}: {}",
                s.name,
                s.failing.len(),
                s.results.len(),
                first.seed,
                first.violations.first().map_or("", String::as_str)
            );
        }
    }

    /// The report in `format` (explore and merge print the same way).
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => self.json(),
            Format::Junit => self.junit(),
            Format::Jsonl => self.jsonl(),
            Format::Markdown => self.markdown(),
        }
    }

    /// The whole text output, as `explore` has always printed it.
    pub fn text(&self) -> String {
        format!("build     {}\n{}\n{}", self.build, self.explored_line(), self.text_body())
    }

    /// Pretty JSON with a trailing newline.
    pub fn json(&self) -> String {
        super::pretty_json(self)
    }

    /// JUnit XML: one testsuite, one testcase per scenario; a scenario with
    /// failing seeds has one `<failure>` naming the first failing seed's
    /// violation and reproduction, listing all of them in its body.
    pub fn junit(&self) -> String {
        let cases = self.cases();
        junit("neli-lab explore", &format!("{}\n{}", self.build, self.explored_line()), self.wall_s, &cases)
    }

    /// One testcase per regression replayed, then one per scenario row.
    fn cases(&self) -> Vec<Case> {
        let regressions = self.regressions.iter().map(|r| Case {
            name: format!("regression {}", r.file),
            classname: format!("neli-lab.regressions.{}", r.scenario),
            time_s: 0.0,
            failure: (!r.passed).then(|| CaseFailure {
                message: format!(
                    "kept failure fails again, seed {}: {}; reproduce: {}",
                    r.seed,
                    r.violations.first().map_or("", String::as_str),
                    r.reproduce
                ),
                body: r.violations.iter().map(|v| format!("{v}\n")).collect(),
            }),
            skipped: None,
            out: format!("seed {}", r.seed),
        });
        regressions
            .chain(self.scenarios.iter().map(|s| Case {
                name: s.name.clone(),
                classname: format!("neli-lab.explore.{}", s.name),
                time_s: s.wall_s,
                failure: if s.missed_expected_failure() {
                    Some(CaseFailure {
                        message: format!("must fail (expect.fails_without) but passed all {} seed(s)", s.results.len()),
                        body: String::new(),
                    })
                } else if !s.judged() {
                    None
                } else {
                    s.failing.first().map(|first| CaseFailure {
                        message: format!(
                            "{} of {} seed(s) violated; seed {}: {}; reproduce: {}",
                            s.failing.len(),
                            s.results.len(),
                            first.seed,
                            first.violations.first().map_or("", String::as_str),
                            first.reproduce
                        ),
                        body: s
                            .failing
                            .iter()
                            .map(|f| {
                                format!("seed {}: {}\n  reproduce: {}\n", f.seed, f.violations.join("; "), f.reproduce)
                            })
                            .collect(),
                    })
                },
                skipped: None,
                out: format!(
                    "seeds {} violations {}{} overlap {} gap {} failover {} (ms, p50/p99/max)",
                    s.summary.seeds,
                    s.summary.violations,
                    if s.expect_fail {
                        " (must fail)"
                    } else if s.may_fail {
                        " (may fail)"
                    } else {
                        ""
                    },
                    s.summary.overlap,
                    s.summary.gap,
                    s.summary.failover
                ),
            }))
            .collect()
    }

    /// The testsuite of [`Explore::junit`], for a document of several.
    pub fn junit_suite(&self) -> quick_junit::TestSuite {
        suite("neli-lab explore", &format!("{}\n{}", self.build, self.explored_line()), self.wall_s, &self.cases())
    }
}

/// The `FAIL` verdict line and what made it: regressions that fail again,
/// scenarios that must fail but passed, and the first [`LISTED`] failing
/// seeds with their reproduction.
fn write_fail(
    o: &mut String,
    regressed: &[&Regression],
    failing: &[(&ScenarioResults, &Failure)],
    missed: &[&ScenarioResults],
) {
    let mut why = Vec::new();
    if !regressed.is_empty() {
        why.push(format!("{} regression(s)", regressed.len()));
    }
    if !failing.is_empty() {
        why.push(format!("{} violating run(s)", failing.len()));
    }
    if !missed.is_empty() {
        why.push(format!("{} run(s) that must fail passed", missed.len()));
    }
    let _ = writeln!(o, "verdict   FAIL ({})", why.join(", "));
    for r in regressed {
        let _ = writeln!(
            o,
            "  REGRESSION {} (seed {}, kept earlier) fails again: {}",
            r.file,
            r.seed,
            r.violations.first().map_or("", String::as_str)
        );
        let _ = writeln!(o, "    reproduce: {}", r.reproduce);
    }
    for s in missed {
        let _ = writeln!(
            o,
            "  {} must fail (expect.fails_without) but passed all {} seed(s): the layer it names carried no weight here",
            s.name,
            s.results.len()
        );
    }
    for (s, f) in failing.iter().take(LISTED) {
        let _ = writeln!(o, "  seed {} of {}: {}", f.seed, s.arg, f.violations.first().map_or("", String::as_str));
        let _ = writeln!(o, "    reproduce: {}", f.reproduce);
        let _ = writeln!(o, "    shrink:    {}", f.shrink);
    }
    if failing.len() > LISTED {
        let _ = writeln!(o, "  ... and {} more", failing.len() - LISTED);
    }
}

/// The `schema` of `explore --format jsonl`'s lines (2: a header line first).
pub const JSONL_SCHEMA: &str = "neli-lab/explore-jsonl/2";

/// The first `--format jsonl` line (`type` "header"), before any verdict:
/// a stream cut short (a CI job killed at its time limit) still names the
/// build its seed lines came from.
#[derive(Debug, Serialize)]
struct HeaderLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    schema: &'static str,
    /// As the summary line's `build` ([`crate::BUILD`]).
    build: &'a str,
    /// The build's parts: the git commit, and `clean`, `dirty` or `tree
    /// state unknown` (`scenarios/build.rs`).
    commit: &'a str,
    tree: &'a str,
}

/// The header line of `build` (`neli-lab 0.0.0 commit abc1234 clean`).
pub fn jsonl_header(build: &str) -> String {
    let (commit, tree) = build
        .split_once(" commit ")
        .map(|(_, rest)| rest.split_once(' ').unwrap_or((rest, "")))
        .unwrap_or(("unknown", "tree state unknown"));
    let line = HeaderLine { kind: "header", schema: JSONL_SCHEMA, build, commit, tree };
    let mut s = serde_json::to_string(&line).expect("a header line serialises");
    s.push('\n');
    s
}

/// One `--format jsonl` line per seed of a scenario row (`type` "seed").
#[derive(Debug, Serialize)]
struct SeedLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    scenario: &'a str,
    arg: &'a str,
    /// The layer switched off in an ablated row.
    #[serde(skip_serializing_if = "Option::is_none")]
    without: Option<String>,
    /// The row must fail (`expect.fails_without`) or may fail: a violation
    /// there is not a failure of the run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    must_fail: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    may_fail: bool,
    passed: bool,
    #[serde(flatten)]
    result: &'a SeedResult,
    /// The command that reproduces a failing seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    reproduce: Option<String>,
}

/// The lines of `results`, seeds of the row `name` (given as `arg`).
pub fn seed_lines(
    name: &str,
    arg: &str,
    without: Option<String>,
    must_fail: bool,
    may_fail: bool,
    results: &[SeedResult],
) -> String {
    let mut o = String::new();
    for r in results {
        let passed = r.violations.is_empty();
        // An ablated row's `arg` already names its layer (`x --without l`).
        let reproduce = (!passed).then(|| format!("{} run {arg} --seed {}", repro(), r.seed));
        let line = SeedLine {
            kind: "seed",
            scenario: name,
            arg,
            without: without.clone(),
            must_fail,
            may_fail,
            passed,
            result: r,
            reproduce,
        };
        o.push_str(&serde_json::to_string(&line).expect("a seed line serialises"));
        o.push('\n');
    }
    o
}

/// A replayed regression's `--format jsonl` line (`type` "regression").
pub fn regression_line(r: &Regression) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        #[serde(flatten)]
        r: &'a Regression,
    }
    let mut s = serde_json::to_string(&Line { kind: "regression", r }).expect("a regression line serialises");
    s.push('\n');
    s
}

/// The last `--format jsonl` line (`type` "summary"): the run, each row's
/// summary (no per-seed figures: those were the lines before) and the
/// verdict.
#[derive(Debug, Serialize)]
struct SummaryLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    schema: &'static str,
    build: &'a str,
    start: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    start_auto: bool,
    seeds: u64,
    shard: Shard,
    wall_s: f64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    interrupted: bool,
    passed: bool,
    regressions_failed: usize,
    scenarios: Vec<SummaryRow<'a>>,
}

#[derive(Debug, Serialize)]
struct SummaryRow<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    without: Option<&'a str>,
    expect_fail: bool,
    may_fail: bool,
    #[serde(flatten)]
    summary: &'a Summary,
}

impl Explore {
    /// The whole `--format jsonl` output (what `merge` prints): the
    /// header line, each regression's line, each seed's, then the summary line.
    pub fn jsonl(&self) -> String {
        let mut o = jsonl_header(&self.build);
        o.extend(self.regressions.iter().map(regression_line));
        for s in &self.scenarios {
            o.push_str(&seed_lines(&s.name, &s.arg, s.without.clone(), s.expect_fail, s.may_fail, &s.results));
        }
        o.push_str(&self.jsonl_summary());
        o
    }

    /// `--format jsonl`'s summary line (`explore` streams the lines before).
    pub fn jsonl_summary(&self) -> String {
        let line = SummaryLine {
            kind: "summary",
            schema: JSONL_SCHEMA,
            build: &self.build,
            start: self.start,
            start_auto: self.start_auto,
            seeds: self.seeds,
            shard: self.shard,
            wall_s: self.wall_s,
            interrupted: self.interrupted,
            passed: !self.failed(),
            regressions_failed: self.regressions.iter().filter(|r| !r.passed).count(),
            scenarios: self
                .scenarios
                .iter()
                .map(|s| SummaryRow {
                    name: &s.name,
                    without: s.without.as_deref(),
                    expect_fail: s.expect_fail,
                    may_fail: s.may_fail,
                    summary: &s.summary,
                })
                .collect(),
        };
        let mut s = serde_json::to_string(&line).expect("a summary line serialises");
        s.push('\n');
        s
    }
}
