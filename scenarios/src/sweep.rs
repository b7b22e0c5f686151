//! Sweeping the timings T (heartbeat timeout), S (session timeout) and G
//! (grace) over seeds: per configuration the worst overlap and the leaderless
//! gap, written as CSV and an SVG chart, with the safe region and a
//! recommendation.
//!
//! Safe = no overlap and no stale write on any seed. Valid = what neli's
//! config validation accepts (`Election::neli_config`, the library's own
//! `ConfigBuilder::build`: exclusive T < S, non-exclusive T > S, and with
//! the membership proof `max.poll.interval.ms` above T + S); an invalid
//! configuration is still simulated, to show why the rule exists, but
//! never recommended. Recommended = among safe and valid
//! configurations whose median gap is within 25% (+250 ms) of the best one,
//! the one with the largest relative margin |S - T| / S (slack against clock
//! drift and late timers), then the shorter p99 gap.

use indicatif::ProgressBar;
use neli_sim::scenario::Dur;
use neli_sim::{Scenario, ScenarioError};

use crate::invocation::quote;
use crate::parallel::run_seeds;
use crate::report::{Failure, TuneConfig};
use crate::repro;
use crate::stats::percentile;

/// One configuration and what its seeds showed.
#[derive(Debug, Clone)]
pub struct Config {
    pub t: Dur,
    pub s: Dur,
    pub g: Dur,
    pub seeds: u64,
    pub violating: u64,
    pub overlap_max_ms: u64,
    pub stale_writes: u64,
    pub gap_p50_ms: u64,
    pub gap_p99_ms: u64,
    /// `None` when no fault hit a leader that was then replaced.
    pub failover_p50_ms: Option<u64>,
    pub failover_max_ms: Option<u64>,
    pub valid: bool,
    /// The first seed that violated something, with its first violation.
    pub first_violation: Option<(u64, String)>,
}

impl Config {
    pub fn safe(&self) -> bool {
        self.overlap_max_ms == 0 && self.stale_writes == 0
    }
    pub fn label(&self) -> String {
        let g = if self.g.0 > 0 { format!(" G={}", self.g) } else { String::new() };
        format!("T={} S={}{g}", self.t, self.s)
    }
}

/// How `tune` reports a configuration: the report stays below the sweep
/// that fills it.
impl TuneConfig {
    /// `c` as reported; `file` is where the configured scenario was written
    /// when `c` is valid but unsafe.
    pub fn of(c: &Config, recommended: bool, file: Option<&str>) -> TuneConfig {
        let failing = match (file, &c.first_violation) {
            (Some(file), Some((seed, v))) => Some(Failure {
                seed: *seed,
                violations: vec![v.clone()],
                reproduce: format!("{} run {} --seed {seed}", repro(), quote(file)),
                shrink: format!("{} shrink {} --seed {seed}", repro(), quote(file)),
            }),
            _ => None,
        };
        TuneConfig {
            failing,
            label: c.label(),
            heartbeat_timeout_ms: c.t.0,
            session_timeout_ms: c.s.0,
            grace_ms: c.g.0,
            seeds: c.seeds,
            violating: c.violating,
            overlap_max_ms: c.overlap_max_ms,
            stale_writes: c.stale_writes,
            gap_p50_ms: c.gap_p50_ms,
            gap_p99_ms: c.gap_p99_ms,
            failover_p50_ms: c.failover_p50_ms,
            failover_max_ms: c.failover_max_ms,
            safe: c.safe(),
            valid: c.valid,
            recommended,
        }
    }
}

/// Why `tune` refused a flag or could not write what it found: the flag or
/// the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("--{flag}: {reason}")]
    BadDuration { flag: String, reason: neli_sim::scenario::BadDuration },
    #[error("--{flag}: durations must be positive")]
    NotPositive { flag: String },
    #[error("{}: cannot write: {source}", path.display())]
    Write { path: std::path::PathBuf, source: std::io::Error },
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// Parses `"500ms,1s,2s"`.
pub fn parse_list(flag: &str, text: &str) -> Result<Vec<Dur>, SweepError> {
    let v: Result<Vec<Dur>, SweepError> = text
        .split(',')
        .map(|p| Dur::parse(p).map_err(|e| SweepError::BadDuration { flag: flag.to_owned(), reason: e }))
        .collect();
    let v = v?;
    if v.iter().any(|d| d.0 <= 0 && flag != "grace") {
        return Err(SweepError::NotPositive { flag: flag.to_owned() });
    }
    Ok(v)
}

/// `base` with T, S and G replaced (a heartbeat interval no longer below T
/// is dropped, so the default T/4 applies).
pub fn configure(base: &Scenario, t: Dur, s: Dur, g: Dur) -> Scenario {
    let mut sc = base.clone();
    sc.election.heartbeat_timeout = t;
    sc.election.session_timeout = s;
    sc.election.grace = g;
    if sc.election.heartbeat_interval.is_some_and(|i| i >= t) {
        sc.election.heartbeat_interval = None;
    }
    sc
}

/// Whether neli's own validation accepts `sc`'s settings
/// (`Election::neli_config`): whatever the scenario file says in
/// `unchecked`, an invalid configuration is never recommended.
pub fn valid(sc: &Scenario) -> bool {
    sc.election.neli_config().is_ok()
}

/// Runs every configuration of `ts x ss x gs` over `seeds`.
pub fn sweep(
    base: &Scenario,
    ts: &[Dur],
    ss: &[Dur],
    gs: &[Dur],
    seeds: &[u64],
    jobs: usize,
    bar: &ProgressBar,
) -> Vec<Config> {
    let mut out = Vec::new();
    for t in ts {
        for s in ss {
            for g in gs {
                let sc = configure(base, *t, *s, *g);
                let rs = run_seeds(seeds, jobs, bar, |seed| crate::run(&sc, seed));
                let gaps: Vec<u64> = rs.iter().map(|r| r.figures.gap_max_ms).collect();
                let fos: Vec<u64> = rs
                    .iter()
                    .filter(|r| !r.figures.failovers_ms.is_empty())
                    .map(|r| r.figures.failover_max_ms())
                    .collect();
                out.push(Config {
                    t: *t,
                    s: *s,
                    g: *g,
                    seeds: seeds.len() as u64,
                    violating: rs.iter().filter(|r| !r.passed()).count() as u64,
                    overlap_max_ms: rs.iter().map(|r| r.figures.overlap_total_ms).max().unwrap_or(0),
                    stale_writes: rs.iter().map(|r| r.figures.stale_writes).sum(),
                    gap_p50_ms: percentile(&gaps, 50),
                    gap_p99_ms: percentile(&gaps, 99),
                    failover_p50_ms: (!fos.is_empty()).then(|| percentile(&fos, 50)),
                    failover_max_ms: (!fos.is_empty()).then(|| percentile(&fos, 100)),
                    valid: valid(&sc),
                    first_violation: rs.iter().find_map(|r| r.violations.first().map(|v| (r.seed, v.to_string()))),
                });
            }
        }
    }
    out
}

/// Index of the recommended configuration, if any is safe and valid.
pub fn recommend(cs: &[Config]) -> Option<usize> {
    let ok = || cs.iter().enumerate().filter(|(_, c)| c.safe() && c.valid);
    let best = ok().map(|(_, c)| c.gap_p50_ms).min()?;
    let near = best + best / 4 + 250;
    ok().filter(|(_, c)| c.gap_p50_ms <= near)
        .max_by_key(|(_, c)| {
            let margin = (c.s.0 - c.t.0).unsigned_abs() * 1000 / c.s.ms().max(1);
            (margin, std::cmp::Reverse(c.gap_p99_ms))
        })
        .map(|(i, _)| i)
}

fn opt(v: Option<u64>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

pub fn csv(cs: &[Config]) -> String {
    let mut o = String::from(
        "heartbeat_timeout_ms,session_timeout_ms,grace_ms,seeds,violating_seeds,overlap_max_ms,stale_writes,gap_p50_ms,gap_p99_ms,failover_p50_ms,failover_max_ms,safe,valid\n",
    );
    for c in cs {
        o.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            c.t.0,
            c.s.0,
            c.g.0,
            c.seeds,
            c.violating,
            c.overlap_max_ms,
            c.stale_writes,
            c.gap_p50_ms,
            c.gap_p99_ms,
            opt(c.failover_p50_ms),
            opt(c.failover_max_ms),
            c.safe(),
            c.valid
        ));
    }
    o
}

/// What a finished sweep writes to `--out` and reports: `tune.csv`,
/// `tune.svg` (the chart) and, for every configuration validation accepts
/// but that was unsafe, a scenario file that `run` reproduces.
pub fn write_report(
    arg: &str,
    base: &Scenario,
    start: u64,
    seeds: u64,
    cs: &[Config],
    out: &std::path::Path,
) -> Result<crate::report::Tune, SweepError> {
    let rec = recommend(cs);
    let points: Vec<crate::svg::Point> = cs
        .iter()
        .enumerate()
        .map(|(i, c)| crate::svg::Point {
            label: c.label(),
            gap_ms: c.gap_p50_ms,
            gap_p99_ms: c.gap_p99_ms,
            overlap_ms: c.overlap_max_ms,
            safe: c.safe(),
            valid: c.valid,
            recommended: Some(i) == rec,
        })
        .collect();
    let title = format!("{}: overlap vs leaderless gap, {seeds} seeds per configuration", base.name);
    let mut files = Vec::new();
    for (file, body) in [("tune.csv", csv(cs)), ("tune.svg", crate::svg::chart(&title, &points))] {
        let p = out.join(file);
        std::fs::write(&p, body).map_err(|source| SweepError::Write { path: p.clone(), source })?;
        files.push(p.display().to_string());
    }
    let mut configs = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        let file = if c.valid && !c.safe() { Some(write_unsafe(arg, base, c, out)?) } else { None };
        configs.push(crate::report::TuneConfig::of(c, Some(i) == rec, file.as_deref()));
    }
    Ok(crate::report::Tune {
        schema: crate::report::TUNE_SCHEMA.into(),
        build: crate::BUILD.into(),
        scenario: base.name.clone(),
        broker: base.cluster.broker_provenance(),
        start,
        seeds,
        configs,
        safe_region: cs.iter().filter(|c| c.safe() && c.valid).map(|c| c.label()).collect(),
        recommended: rec.map(|i| cs[i].label()),
        files,
    })
}

/// A configuration validation accepts that is unsafe is a violation: it is
/// written as a scenario file that `run` reproduces; returns its path.
fn write_unsafe(arg: &str, base: &Scenario, c: &Config, out: &std::path::Path) -> Result<String, SweepError> {
    let mut sc = configure(base, c.t, c.s, c.g);
    let g = if c.g.0 > 0 { format!("-g{}", c.g) } else { String::new() };
    sc.name = format!("{}-t{}-s{}{g}", base.name, c.t, c.s);
    let p = out.join(format!("{}.toml", sc.name));
    let header = vec![format!("tune {arg}: configuration {} ({})", c.label(), crate::BUILD)];
    let text = sc.to_toml(&header)?;
    std::fs::write(&p, text).map_err(|source| SweepError::Write { path: p.clone(), source })?;
    Ok(p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Valid is what neli's validation says, the rebalance timeout included
    // (it used to be T against S only).
    #[test]
    fn valid_is_what_neli_accepts() {
        let text = "name = \"x\"\nduration = \"10s\"\n[election]\nmembers = 2\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\nmax_poll_interval = \"5s\"\n";
        let base = Scenario::parse(text, "x.toml").expect("valid");
        let at = |t: i64, s: i64| valid(&configure(&base, Dur(t), Dur(s), Dur(0)));
        assert!(at(1000, 3000));
        assert!(!at(3000, 3000), "T not below S");
        assert!(!at(1000, 4000), "max.poll.interval.ms 5s not above T + S");
    }
}
