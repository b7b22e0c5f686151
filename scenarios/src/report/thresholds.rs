//! The thresholds of `diff --max-regress`: which figure and statistic may
//! rise by how much from BASE to HEAD (scenarios/README.md, "Comparing two
//! runs").

use crate::stats::{self, SeedResult};

/// A `--max-regress` refused: the item at fault and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    #[error("--max-regress: malformed threshold {item:?}{why}: expected {EXPECTED_FORM}")]
    Malformed { item: String, why: String },
    #[error("--max-regress: unknown figure {name:?} in {item:?}; valid figures: {figures}", figures = figure_names())]
    UnknownFigure { name: String, item: String },
    #[error("--max-regress: {name} has two {kind} thresholds (second: {item:?})")]
    Twice { name: String, kind: &'static str, item: String },
}

/// The thresholds used when `--max-regress` is not given.
pub const DEFAULT_MAX_REGRESS: &str = "gap.p99=10%,failover.p99=10%";

/// One of the explore table's figures, in ms per seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// Total time two members led at once, per seed.
    Overlap,
    /// Longest time without a leader, per seed.
    Gap,
    /// Slowest failover, per seed that had one.
    Failover,
}

/// A statistic of a figure over the seeds (nearest-rank, as explore prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    /// The median.
    P50,
    /// The 99th percentile.
    P99,
    /// The largest value.
    Max,
}

impl Figure {
    /// Every figure, in the order of the explore table.
    pub const ALL: [Figure; 3] = [Figure::Overlap, Figure::Gap, Figure::Failover];

    /// The name used in `--max-regress` and the report.
    pub fn name(self) -> &'static str {
        match self {
            Figure::Overlap => "overlap",
            Figure::Gap => "gap",
            Figure::Failover => "failover",
        }
    }

    /// This figure of every seed of `results` that has it, in seed order.
    pub(super) fn values(self, results: &[SeedResult]) -> Vec<u64> {
        match self {
            Figure::Overlap => results.iter().map(|r| r.overlap_total_ms).collect(),
            Figure::Gap => results.iter().map(|r| r.gap_max_ms).collect(),
            Figure::Failover => results.iter().filter_map(|r| r.failover_max_ms).collect(),
        }
    }
}

impl Stat {
    /// Every statistic, in the order of the explore table's `p50/p99/max`.
    pub const ALL: [Stat; 3] = [Stat::P50, Stat::P99, Stat::Max];

    /// The name used in `--max-regress` and the report.
    pub fn name(self) -> &'static str {
        match self {
            Stat::P50 => "p50",
            Stat::P99 => "p99",
            Stat::Max => "max",
        }
    }

    /// The percentile [`stats::percentile`] takes.
    fn percentile(self) -> u32 {
        match self {
            Stat::P50 => 50,
            Stat::P99 => 99,
            Stat::Max => 100,
        }
    }

    /// This statistic of `values`; `None` when there are none.
    pub(super) fn of(self, values: &[u64]) -> Option<u64> {
        (!values.is_empty()).then(|| stats::percentile(values, self.percentile()))
    }
}

/// Every `FIGURE.STAT` name `--max-regress` accepts, comma-separated.
pub fn figure_names() -> String {
    let names: Vec<String> =
        Figure::ALL.iter().flat_map(|f| Stat::ALL.iter().map(move |s| format!("{}.{}", f.name(), s.name()))).collect();
    names.join(", ")
}

/// How much a figure may rise from BASE to HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Limit {
    /// At most this many percent of BASE's value (`N%`).
    pub relative_pct: Option<f64>,
    /// At most this many ms (`Nms`, `Ns`, ...).
    pub absolute_ms: Option<u64>,
}

impl Limit {
    /// As written in the report: `10%`, `50ms`, or `10% and 50ms`.
    pub fn describe(&self) -> String {
        match (self.relative_pct, self.absolute_ms) {
            (Some(p), Some(ms)) => format!("{} and {ms}ms", pct(p)),
            (Some(p), None) => pct(p),
            (None, Some(ms)) => format!("{ms}ms"),
            (None, None) => "-".into(),
        }
    }
}

/// `10%`, `2.5%`: a percentage without needless decimals.
pub(super) fn pct(p: f64) -> String {
    if p.fract() == 0.0 { format!("{p:.0}%") } else { format!("{p}%") }
}

/// The parsed `--max-regress`: a [`Limit`] per figure and statistic.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Thresholds {
    limits: Vec<(Figure, Stat, Limit)>,
}

/// The form `--max-regress` expects, for error messages.
const EXPECTED_FORM: &str =
    "FIGURE.STAT=N% (relative to BASE) or FIGURE.STAT=Nms / Ns (absolute), e.g. gap.p99=10% or gap.p99=50ms";

impl Thresholds {
    /// Parses `FIGURE.STAT=LIMIT[,FIGURE.STAT=LIMIT...]`, where LIMIT is
    /// `N%` (N a non-negative number, fractions allowed) or a duration of
    /// [`neli::duration::parse`]. A figure may have one relative and one
    /// absolute limit. Refuses, naming it, an unknown figure (listing the
    /// valid ones), a malformed item (with the expected form) and a limit
    /// of one kind given twice for a figure.
    pub fn parse(text: &str) -> Result<Thresholds, ThresholdError> {
        let mut t = Thresholds::default();
        for item in text.split(',') {
            let item = item.trim();
            let malformed = |why: &str| ThresholdError::Malformed { item: item.to_owned(), why: why.to_owned() };
            let Some((name, limit)) = item.split_once('=') else {
                return Err(malformed(""));
            };
            let (name, limit) = (name.trim(), limit.trim());
            let (figure, stat) = parse_name(name).ok_or_else(|| {
                if name.is_empty() {
                    malformed(" (no figure)")
                } else {
                    ThresholdError::UnknownFigure { name: name.to_owned(), item: item.to_owned() }
                }
            })?;
            let slot = match t.limits.iter().position(|(f, s, _)| (*f, *s) == (figure, stat)) {
                Some(i) => &mut t.limits[i].2,
                None => {
                    t.limits.push((figure, stat, Limit::default()));
                    let last = t.limits.len() - 1;
                    &mut t.limits[last].2
                }
            };
            let twice =
                |kind: &'static str| ThresholdError::Twice { name: name.to_owned(), kind, item: item.to_owned() };
            if let Some(p) = limit.strip_suffix('%') {
                let p: f64 = p
                    .trim()
                    .parse()
                    .ok()
                    .filter(|p: &f64| p.is_finite() && *p >= 0.0)
                    .ok_or_else(|| malformed(" (not a non-negative percentage)"))?;
                if slot.relative_pct.replace(p).is_some() {
                    return Err(twice("relative"));
                }
            } else {
                let d = neli::duration::parse(limit).map_err(|err| malformed(&format!(" ({err})")))?;
                let ms = u64::try_from(d.as_millis()).map_err(|_| malformed(" (too large)"))?;
                if slot.absolute_ms.replace(ms).is_some() {
                    return Err(twice("absolute"));
                }
            }
        }
        Ok(t)
    }

    /// The defaults, [`DEFAULT_MAX_REGRESS`].
    pub fn defaults() -> Thresholds {
        Thresholds::parse(DEFAULT_MAX_REGRESS).unwrap_or_default()
    }

    /// The limit of `figure.stat`, if any.
    pub fn limit(&self, figure: Figure, stat: Stat) -> Option<Limit> {
        self.limits.iter().find(|(f, s, _)| (*f, *s) == (figure, stat)).map(|(_, _, l)| *l)
    }

    /// Every threshold as `FIGURE.STAT=LIMIT`, one per limit (a figure
    /// with both kinds twice), as `--max-regress` takes them back.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (f, s, l) in &self.limits {
            let name = format!("{}.{}", f.name(), s.name());
            out.extend(l.relative_pct.map(|p| format!("{name}={}", pct(p))));
            out.extend(l.absolute_ms.map(|ms| format!("{name}={ms}ms")));
        }
        out
    }
}

/// `gap.p99` as (figure, statistic).
fn parse_name(name: &str) -> Option<(Figure, Stat)> {
    let (f, s) = name.split_once('.')?;
    let figure = Figure::ALL.into_iter().find(|x| x.name() == f)?;
    let stat = Stat::ALL.into_iter().find(|x| x.name() == s)?;
    Some((figure, stat))
}
