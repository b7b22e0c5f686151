//! `diff`'s report: two `explore --format json` reports of the same
//! scenarios and seeds (BASE, say the main branch, and HEAD, the change)
//! compared scenario by scenario and figure by figure, each figure judged
//! against its `--max-regress` threshold. The figures are recomputed from
//! the per-seed `results` with [`stats::percentile`], as the explore table
//! computes them, never parsed from the printed strings.
//!
//! A figure regresses when HEAD's value exceeds BASE's by more than its
//! threshold: `N%` of BASE's value, or an absolute `Nms`/`Ns`; given both
//! for one figure, it regresses only when it exceeds both (the absolute one
//! is a floor under the noise of small values). A relative threshold over a
//! BASE of 0 lets no rise through. More violating seeds in HEAD than in BASE
//! always regress (except in rows that must or may fail: there a violation
//! is the expected outcome of the ablation). Figures without a threshold are
//! shown, not judged.

use std::fmt::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::thresholds::{Figure, Limit, Stat, Thresholds, pct};
use super::{Case, CaseFailure, Explore, Format, SCHEMA, ScenarioResults, junit};
use crate::stats;

/// The `schema` field of a `diff --format json` report.
pub const DIFF_SCHEMA: &str = "neli-lab/diff/1";

/// Why two reports do not compare: both sides named, and what differs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    #[error(
        "the reports cover different seed ranges: {base_file} has --start {} --seeds {}, {head_file} has --start {} --seeds {}; compare runs over the same seeds",
        base.0, base.1, head.0, head.1
    )]
    SeedRanges { base_file: String, base: (u64, u64), head_file: String, head: (u64, u64) },
    #[error(
        "the reports cover different scenarios: missing in HEAD {head_file}: {only_base}; missing in BASE {base_file}: {only_head}; compare runs of the same scenarios"
    )]
    Scenarios { head_file: String, only_base: String, base_file: String, only_head: String },
    #[error(
        "{scenario}: the reports ran different seeds ({base_file}: {base}, {head_file}: {head}; a time budget, an interruption or another --ablate-seeds); compare runs over the same seeds"
    )]
    Seeds { scenario: String, base_file: String, base: String, head_file: String, head: String },
}

/// Why a file is not a report `diff` compares: the file and what it found.
#[derive(Debug, thiserror::Error)]
pub enum ReportFileError {
    #[error("{file}: cannot read: {source}")]
    Read { file: String, source: std::io::Error },
    #[error("{file}: not JSON ({source}); expected an explore JSON report")]
    NotJson { file: String, source: serde_json::Error },
    #[error("{file}: schema {schema:?}, expected {SCHEMA:?} (an explore --format json report)")]
    OtherSchema { file: String, schema: String },
    #[error("{file}: schema {value}, expected {SCHEMA:?} (an explore --format json report)")]
    SchemaNotText { file: String, value: serde_json::Value },
    #[error("{file}: no \"schema\" field; expected an explore --format json report ({SCHEMA:?})")]
    NoSchema { file: String },
    #[error("{file}: not an explore JSON report ({source})")]
    NotExplore { file: String, source: serde_json::Error },
    #[error(
        "{file}: shard {index}/{of} of a sharded explore; merge the shards first (neli-lab merge SHARD.json... --format json > merged.json) and compare the merged report"
    )]
    Shard { file: String, index: u64, of: u64 },
}

/// Reads an explore JSON report from `path`, refusing (naming the path and
/// what it found) a file that cannot be read, is not JSON, has another
/// `schema` or is not an explore report, and the report of one shard of a
/// sharded explore (to be merged first).
pub fn load(path: &Path) -> Result<Explore, ReportFileError> {
    let file = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(source) => return Err(ReportFileError::Read { file, source }),
    };
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(source) => return Err(ReportFileError::NotJson { file, source }),
    };
    match value.get("schema") {
        Some(serde_json::Value::String(s)) if s == SCHEMA => {}
        Some(serde_json::Value::String(s)) => return Err(ReportFileError::OtherSchema { file, schema: s.clone() }),
        Some(other) => return Err(ReportFileError::SchemaNotText { file, value: other.clone() }),
        None => return Err(ReportFileError::NoSchema { file }),
    }
    let r: Explore = match serde_json::from_value(value) {
        Ok(r) => r,
        Err(source) => return Err(ReportFileError::NotExplore { file, source }),
    };
    if r.merged_shards == 0 && r.shard.of > 1 {
        return Err(ReportFileError::Shard { file, index: r.shard.index, of: r.shard.of });
    }
    Ok(r)
}

/// One report compared: the file it came from and the build that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    /// The path given on the command line.
    pub file: String,
    /// The report's `build`.
    pub build: String,
}

/// What a compared figure came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureVerdict {
    /// Judged, and within its threshold (or not higher than BASE).
    Ok,
    /// Judged, and worse beyond its threshold.
    Regressed,
    /// No threshold for it: shown, not judged.
    NotGated,
    /// Neither report has the figure (e.g. no failover in any seed).
    NotApplicable,
}

impl FigureVerdict {
    /// As the text table prints it.
    fn text(self) -> &'static str {
        match self {
            FigureVerdict::Ok => "ok",
            FigureVerdict::Regressed => "REGRESSED",
            FigureVerdict::NotGated => "-",
            FigureVerdict::NotApplicable => "n/a",
        }
    }
}

/// One figure of one scenario in both reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureDiff {
    /// `violations` (violating seeds) or `FIGURE.STAT` (ms), e.g. `gap.p99`.
    pub figure: String,
    /// BASE's value; `null` when no seed had the figure (a failover).
    pub base: Option<u64>,
    /// HEAD's value; `null` when no seed had the figure.
    pub head: Option<u64>,
    /// HEAD minus BASE (a missing value counted as 0); `null` when both are missing.
    pub change: Option<i64>,
    /// The change in percent of BASE; `null` when BASE is 0 or missing.
    pub change_pct: Option<f64>,
    /// The threshold as given (`10%`, `50ms`, `10% and 50ms`, `any rise`
    /// for violations); `null` when the figure is not judged.
    pub threshold: Option<String>,
    /// What the figure came to.
    pub verdict: FigureVerdict,
    /// For a regressed figure, the threshold it exceeded, e.g. `+25.0% > 10%`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Why the verdict is what it is when that is not plain (BASE 0 under a
    /// relative threshold, a figure missing on one side, a row that must fail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One scenario (or ablated row) in both reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioDiff {
    /// The scenario's `name` (an ablated row's ends in `-without-LAYER`).
    pub name: String,
    /// The layer switched off in an ablated row; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without: Option<String>,
    /// Seeds compared (the same seeds on both sides).
    pub seeds: usize,
    /// `violations`, then `overlap`, `gap`, `failover` × `p50`, `p99`, `max`.
    pub figures: Vec<FigureDiff>,
}

/// One `diff` run (`--format json`), documented in `scenarios/README.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// Always [`DIFF_SCHEMA`].
    pub schema: String,
    /// The build of the `neli-lab` that compared.
    pub build: String,
    /// The baseline report.
    pub base: Side,
    /// The report judged against it.
    pub head: Side,
    /// The first seed of the range both reports ran.
    pub start: u64,
    /// How many seeds that range has.
    pub seeds: u64,
    /// The thresholds applied, `FIGURE.STAT=LIMIT` each (as `--max-regress` takes them).
    pub thresholds: Vec<String>,
    /// No figure regressed.
    pub passed: bool,
    /// Every scenario row, in BASE's order.
    pub scenarios: Vec<ScenarioDiff>,
    /// One line per regressed figure, as the text form prints it after `regressed: `.
    pub regressions: Vec<String>,
}

impl Diff {
    /// Compares `head` (from `head_file`) with `base` (from `base_file`)
    /// under `thresholds`. Refuses, naming both sides, reports of different
    /// seed ranges, different scenario sets (the scenarios missing on each
    /// side) or a scenario whose seeds run differ (a time budget, an
    /// interruption, another `--ablate-seeds`).
    pub fn new(
        (base_file, base): (&str, &Explore),
        (head_file, head): (&str, &Explore),
        thresholds: &Thresholds,
    ) -> Result<Diff, DiffError> {
        if (base.start, base.seeds) != (head.start, head.seeds) {
            return Err(DiffError::SeedRanges {
                base_file: base_file.to_owned(),
                base: (base.start, base.seeds),
                head_file: head_file.to_owned(),
                head: (head.start, head.seeds),
            });
        }
        let pairs = pair(base_file, base, head_file, head)?;
        let mut scenarios = Vec::new();
        let mut regressions = Vec::new();
        for (b, h) in pairs {
            let seeds = |s: &ScenarioResults| -> Vec<u64> { s.results.iter().map(|r| r.seed).collect() };
            if seeds(b) != seeds(h) {
                return Err(DiffError::Seeds {
                    scenario: b.name.clone(),
                    base_file: base_file.to_owned(),
                    base: seed_span(&seeds(b)),
                    head_file: head_file.to_owned(),
                    head: seed_span(&seeds(h)),
                });
            }
            let d = compare(b, h, thresholds);
            for f in d.figures.iter().filter(|f| f.verdict == FigureVerdict::Regressed) {
                regressions.push(regression_line(&d.name, f));
            }
            scenarios.push(d);
        }
        Ok(Diff {
            schema: DIFF_SCHEMA.into(),
            build: crate::BUILD.into(),
            base: Side { file: base_file.into(), build: base.build.clone() },
            head: Side { file: head_file.into(), build: head.build.clone() },
            start: base.start,
            seeds: base.seeds,
            thresholds: thresholds.describe(),
            passed: regressions.is_empty(),
            scenarios,
            regressions,
        })
    }

    /// 0 when nothing regressed, else 1.
    pub fn exit_code(&self) -> u8 {
        u8::from(!self.passed)
    }

    /// The report in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => super::pretty_json(self),
            Format::Junit => self.junit(),
            Format::Jsonl => super::one_line(self),
            Format::Markdown => self.markdown(),
        }
    }

    /// A Markdown summary: the verdict, each regressed figure, and one
    /// table of every judged figure.
    pub fn markdown(&self) -> String {
        let mut o = format!(
            "### neli-lab diff: {}\n\n`{}` against `{}`, {} seed(s) from {}; thresholds {}\n\n",
            if self.passed { "PASS" } else { "FAIL" },
            self.head.file,
            self.base.file,
            self.seeds,
            self.start,
            if self.thresholds.is_empty() { "none".into() } else { self.thresholds.join(", ") }
        );
        for r in &self.regressions {
            let _ = writeln!(o, "- regressed: {r}");
        }
        if !self.regressions.is_empty() {
            o.push('\n');
        }
        o.push_str(
            "| scenario | figure | base | head | change | threshold | verdict |\n|---|---|---|---|---|---|---|\n",
        );
        for s in &self.scenarios {
            for f in s.figures.iter().filter(|f| f.threshold.is_some() || f.verdict == FigureVerdict::Regressed) {
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} | {} | {} | {} |",
                    s.name,
                    f.figure,
                    opt(f.base),
                    opt(f.head),
                    change_text(f),
                    f.threshold.clone().unwrap_or_else(|| "-".into()),
                    f.verdict.text()
                );
            }
        }
        o
    }

    /// The header, one table per scenario, the verdict and a `regressed:`
    /// line per regressed figure.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "build     {}", self.build);
        let _ = writeln!(o, "base      {} ({})", self.base.file, self.base.build);
        let _ = writeln!(o, "head      {} ({})", self.head.file, self.head.build);
        let _ = writeln!(
            o,
            "compared  {} row(s) x {} seed(s) from {}; thresholds {} (violating seeds: any rise)",
            self.scenarios.len(),
            self.seeds,
            self.start,
            if self.thresholds.is_empty() { "none".into() } else { self.thresholds.join(", ") }
        );
        o.push_str("figures in ms (violations in seeds); change = head - base\n");
        for s in &self.scenarios {
            o.push('\n');
            let _ = writeln!(o, "{} ({} seed(s))", s.name, s.seeds);
            let rows: Vec<Vec<String>> = s
                .figures
                .iter()
                .map(|f| {
                    vec![
                        f.figure.clone(),
                        opt(f.base),
                        opt(f.head),
                        change_text(f),
                        f.threshold.clone().unwrap_or_else(|| "-".into()),
                        match &f.note {
                            Some(n) => format!("{} ({n})", f.verdict.text()),
                            None => f.verdict.text().into(),
                        },
                    ]
                })
                .collect();
            o.push_str(&stats::table(&["figure", "base", "head", "change", "threshold", "verdict"], &rows));
        }
        o.push('\n');
        if self.passed {
            o.push_str("verdict   PASS (no figure worse beyond its threshold)\n");
        } else {
            let _ = writeln!(o, "verdict   FAIL ({} figure(s) worse beyond their threshold)", self.regressions.len());
            for r in &self.regressions {
                let _ = writeln!(o, "regressed: {r}");
            }
        }
        o
    }

    /// JUnit XML: one testcase per scenario, failing with its regressed figures.
    pub fn junit(&self) -> String {
        let cases: Vec<Case> = self
            .scenarios
            .iter()
            .map(|s| {
                let regressed: Vec<String> = s
                    .figures
                    .iter()
                    .filter(|f| f.verdict == FigureVerdict::Regressed)
                    .map(|f| regression_line(&s.name, f))
                    .collect();
                Case {
                    name: s.name.clone(),
                    classname: format!("neli-lab.diff.{}", s.name),
                    time_s: 0.0,
                    failure: regressed.first().map(|first| CaseFailure {
                        message: format!("{} figure(s) regressed; {first}", regressed.len()),
                        body: regressed.iter().map(|r| format!("regressed: {r}\n")).collect(),
                    }),
                    skipped: None,
                    out: s
                        .figures
                        .iter()
                        .map(|f| format!("{} {} -> {} ({})\n", f.figure, opt(f.base), opt(f.head), f.verdict.text()))
                        .collect(),
                }
            })
            .collect();
        let out = format!(
            "{}\nbase {} ({})\nhead {} ({})\nthresholds {}",
            self.build,
            self.base.file,
            self.base.build,
            self.head.file,
            self.head.build,
            self.thresholds.join(", ")
        );
        junit("neli-lab diff", &out, 0.0, &cases)
    }
}

/// A value or `-`.
fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// `+300 (+25.0%)`, `-20 (-4.0%)`, `0`, `+40` (BASE 0).
fn change_text(f: &FigureDiff) -> String {
    match (f.change, f.change_pct) {
        (None, _) => "-".into(),
        (Some(0), _) => "0".into(),
        (Some(c), Some(p)) => format!("{c:+} ({p:+.1}%)"),
        (Some(c), None) => format!("{c:+}"),
    }
}

/// A seed list in brief: `5 seed(s), 2..=6`.
fn seed_span(seeds: &[u64]) -> String {
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) => format!("{} seed(s), {a}..={b}", seeds.len()),
        _ => "no seeds".into(),
    }
}

/// The rows of `base` and `head` paired by (`name`, `without`), in BASE's
/// order; a row given twice pairs with the same occurrence on the other
/// side. Refuses different sets, naming what each side lacks.
fn pair<'a>(
    base_file: &str,
    base: &'a Explore,
    head_file: &str,
    head: &'a Explore,
) -> Result<Vec<(&'a ScenarioResults, &'a ScenarioResults)>, DiffError> {
    let key = |s: &ScenarioResults| (s.name.clone(), s.without.clone());
    let mut used = vec![false; head.scenarios.len()];
    let mut pairs = Vec::new();
    let mut only_base = Vec::new();
    for b in &base.scenarios {
        match head.scenarios.iter().enumerate().position(|(i, h)| !used[i] && key(h) == key(b)) {
            Some(i) => {
                used[i] = true;
                pairs.push((b, &head.scenarios[i]));
            }
            None => only_base.push(b.name.clone()),
        }
    }
    let only_head: Vec<String> =
        head.scenarios.iter().zip(&used).filter(|(_, u)| !**u).map(|(h, _)| h.name.clone()).collect();
    if only_base.is_empty() && only_head.is_empty() {
        return Ok(pairs);
    }
    let list = |v: &[String]| if v.is_empty() { "none".to_owned() } else { v.join(", ") };
    Err(DiffError::Scenarios {
        head_file: head_file.to_owned(),
        only_base: list(&only_base),
        base_file: base_file.to_owned(),
        only_head: list(&only_head),
    })
}

/// Every figure of one scenario row, judged.
fn compare(b: &ScenarioResults, h: &ScenarioResults, thresholds: &Thresholds) -> ScenarioDiff {
    let mut figures = vec![violations(b, h)];
    for figure in Figure::ALL {
        let (bv, hv) = (figure.values(&b.results), figure.values(&h.results));
        for stat in Stat::ALL {
            figures.push(judge(
                format!("{}.{}", figure.name(), stat.name()),
                stat.of(&bv),
                stat.of(&hv),
                thresholds.limit(figure, stat),
            ));
        }
    }
    ScenarioDiff { name: b.name.clone(), without: b.without.clone(), seeds: b.results.len(), figures }
}

/// Violating seeds: any rise regresses, except in a row that must or may fail.
fn violations(b: &ScenarioResults, h: &ScenarioResults) -> FigureDiff {
    let count = |s: &ScenarioResults| s.results.iter().filter(|r| !r.violations.is_empty()).count() as u64;
    let (bc, hc) = (count(b), count(h));
    let exempt = if b.expect_fail {
        Some("must fail without its layer: violations expected")
    } else if b.may_fail {
        Some("may fail without its layer: not judged")
    } else {
        None
    };
    FigureDiff {
        figure: "violations".into(),
        base: Some(bc),
        head: Some(hc),
        change: Some(signed(hc) - signed(bc)),
        change_pct: (bc > 0).then(|| (hc as f64 - bc as f64) * 100.0 / bc as f64),
        threshold: exempt.is_none().then(|| "any rise".into()),
        verdict: match exempt {
            Some(_) => FigureVerdict::NotGated,
            None if hc > bc => FigureVerdict::Regressed,
            None => FigureVerdict::Ok,
        },
        why: (exempt.is_none() && hc > bc).then(|| "any rise regresses".into()),
        note: exempt.map(str::to_owned),
    }
}

/// `v` as i64, saturating.
fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// One figure judged against `limit`. A value missing on one side (no
/// failover in any seed there) counts as 0.
fn judge(figure: String, base: Option<u64>, head: Option<u64>, limit: Option<Limit>) -> FigureDiff {
    let mut d = FigureDiff {
        threshold: limit.map(|l| l.describe()),
        verdict: if limit.is_some() { FigureVerdict::Ok } else { FigureVerdict::NotGated },
        figure,
        base,
        head,
        change: None,
        change_pct: None,
        why: None,
        note: None,
    };
    if base.is_none() && head.is_none() {
        d.verdict = FigureVerdict::NotApplicable;
        d.note = Some("no seed has it on either side".into());
        return d;
    }
    let (b, h) = (base.unwrap_or(0), head.unwrap_or(0));
    d.change = Some(signed(h).saturating_sub(signed(b)));
    d.change_pct = (b > 0).then(|| (h as f64 - b as f64) * 100.0 / b as f64);
    let mut notes = Vec::new();
    match (base, head) {
        (None, _) => notes.push("no seed has it in BASE: counted as 0".to_owned()),
        (_, None) => notes.push("no seed has it in HEAD: counted as 0".to_owned()),
        _ => {}
    }
    if let Some(l) = limit {
        if b == 0 && l.relative_pct.is_some() && l.absolute_ms.is_none() {
            notes.push(format!(
                "BASE 0: a relative threshold lets no rise through; add an absolute one, e.g. {}=50ms, to allow some",
                d.figure
            ));
        }
        let rise = h.saturating_sub(b);
        // Each limit given, with whether the rise exceeds it and how to say so.
        let relative = l.relative_pct.map(|p| match d.change_pct {
            Some(c) => (c > p, format!("{c:+.1}% > {}", pct(p))),
            None => (rise > 0, format!("BASE 0: any rise exceeds {}", pct(p))),
        });
        let absolute = l.absolute_ms.map(|ms| (rise > ms, format!("+{rise}ms > {ms}ms")));
        let exceeded: Vec<(bool, String)> = relative.into_iter().chain(absolute).collect();
        if rise > 0 && exceeded.iter().all(|(over, _)| *over) {
            d.verdict = FigureVerdict::Regressed;
            d.why = Some(exceeded.into_iter().map(|(_, why)| why).collect::<Vec<_>>().join(" and "));
        }
    }
    if !notes.is_empty() {
        d.note = Some(notes.join("; "));
    }
    d
}

/// `leader-pause failover.p99 1200ms -> 1500ms (+25.0% > 10%)`.
fn regression_line(scenario: &str, f: &FigureDiff) -> String {
    let why = f.why.as_deref().unwrap_or("worse");
    if f.figure == "violations" {
        return format!("{scenario} violations {} -> {} violating seed(s) ({why})", opt(f.base), opt(f.head));
    }
    let ms = |v: Option<u64>| v.map_or_else(|| "none".into(), |v| format!("{v}ms"));
    format!("{scenario} {} {} -> {} ({why})", f.figure, ms(f.base), ms(f.head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_relative_absolute_and_both() {
        let t = Thresholds::parse("gap.p99=10%, failover.max=2s,gap.p99=50ms,overlap.p50=2.5%").unwrap();
        assert_eq!(t.limit(Figure::Gap, Stat::P99), Some(Limit { relative_pct: Some(10.0), absolute_ms: Some(50) }));
        assert_eq!(t.limit(Figure::Failover, Stat::Max), Some(Limit { relative_pct: None, absolute_ms: Some(2000) }));
        assert_eq!(t.limit(Figure::Gap, Stat::P50), None);
        assert_eq!(t.describe(), ["gap.p99=10%", "gap.p99=50ms", "failover.max=2000ms", "overlap.p50=2.5%"]);
        assert_eq!(Thresholds::parse(&t.describe().join(",")), Ok(t));
        assert_eq!(Thresholds::defaults().describe(), ["gap.p99=10%", "failover.p99=10%"]);
    }

    #[test]
    fn thresholds_refuse_naming_the_item() {
        let err = |s: &str| Thresholds::parse(s).unwrap_err().to_string();
        assert!(err("gap.p95=10%").contains("unknown figure \"gap.p95\""));
        assert!(err("gap.p95=10%").contains("overlap.p50, overlap.p99, overlap.max, gap.p50"));
        assert!(err("gap.p99").contains("malformed threshold \"gap.p99\""));
        assert!(err("gap.p99=ten%").contains("expected FIGURE.STAT=N%"));
        assert!(err("gap.p99=-1%").contains("malformed"));
        assert!(err("gap.p99=5").contains("has no unit"));
        assert!(err("gap.p99=1%,gap.p99=2%").contains("two relative thresholds"));
        assert!(err("").contains("malformed threshold \"\""));
    }

    fn limit(p: Option<f64>, ms: Option<u64>) -> Option<Limit> {
        Some(Limit { relative_pct: p, absolute_ms: ms })
    }

    #[test]
    fn judging_figures() {
        let v = |b, h, l| judge("gap.p99".into(), b, h, l).verdict;
        assert_eq!(v(Some(1000), Some(1100), limit(Some(10.0), None)), FigureVerdict::Ok);
        assert_eq!(v(Some(1000), Some(1101), limit(Some(10.0), None)), FigureVerdict::Regressed);
        assert_eq!(v(Some(1000), Some(5000), None), FigureVerdict::NotGated);
        assert_eq!(v(Some(0), Some(1), limit(Some(10.0), None)), FigureVerdict::Regressed);
        assert_eq!(v(Some(0), Some(40), limit(Some(10.0), Some(50))), FigureVerdict::Ok);
        assert_eq!(v(Some(1000), Some(1300), limit(Some(10.0), Some(500))), FigureVerdict::Ok);
        assert_eq!(v(Some(1000), Some(1600), limit(Some(10.0), Some(500))), FigureVerdict::Regressed);
        assert_eq!(v(None, Some(10), limit(Some(10.0), None)), FigureVerdict::Regressed);
        assert_eq!(v(Some(10), None, limit(Some(10.0), None)), FigureVerdict::Ok);
        assert_eq!(v(None, None, limit(Some(10.0), None)), FigureVerdict::NotApplicable);
        let f = judge("failover.p99".into(), Some(1200), Some(1500), limit(Some(10.0), None));
        assert_eq!(regression_line("leader-pause", &f), "leader-pause failover.p99 1200ms -> 1500ms (+25.0% > 10%)");
        let f = judge("gap.max".into(), Some(0), Some(40), limit(Some(10.0), None));
        assert_eq!(regression_line("x", &f), "x gap.max 0ms -> 40ms (BASE 0: any rise exceeds 10%)");
        let f = judge("gap.max".into(), Some(100), Some(400), limit(None, Some(200)));
        assert_eq!(regression_line("x", &f), "x gap.max 100ms -> 400ms (+300ms > 200ms)");
    }
}
