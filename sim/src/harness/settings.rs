//! What a CI job may change about a harness test without editing it: the
//! `NELI_SIM_*` environment variables, read once per run, each refused with
//! the variable, its value and what it takes.

use std::path::PathBuf;

/// Reruns one seed: `NELI_SIM_SEED=17`.
pub const SEED_ENV: &str = "NELI_SIM_SEED";
/// How many seeds: `NELI_SIM_SEEDS=1000`.
pub const SEEDS_ENV: &str = "NELI_SIM_SEEDS";
/// The first seed, or `auto` (drawn from the clock, printed).
pub const START_ENV: &str = "NELI_SIM_START";
/// Threads running seeds (default: the machine's parallelism).
pub const JOBS_ENV: &str = "NELI_SIM_JOBS";
/// Keep failing seeds in this folder, and replay it first.
pub const REGRESSIONS_ENV: &str = "NELI_SIM_REGRESSIONS";
/// Write the report to these files (comma-separated; the extension says
/// the format: `.txt`, `.json`, `.xml` (JUnit), `.md`, `.html`).
pub const REPORT_ENV: &str = "NELI_SIM_REPORT";
/// Run only shard `i` of `n` of the seeds: `NELI_SIM_SHARD=2/4`.
pub const SHARD_ENV: &str = "NELI_SIM_SHARD";
/// Shrink the first new failing seeds (`1`), spending at most this many
/// runs on each (a number above 1); `0` switches shrinking off, whatever
/// the code set.
pub const SHRINK_ENV: &str = "NELI_SIM_SHRINK";
/// Run each seed twice and fail a seed whose two runs differ (`1`); `0`
/// switches the check off, whatever the code set.
pub const CHECK_DETERMINISM_ENV: &str = "NELI_SIM_CHECK_DETERMINISM";
/// Run one scenario file (a kept regression or a shrunk reproduction) at
/// its own `seed`, instead of the harness's scenario and seeds.
pub const REPLAY_ENV: &str = "NELI_SIM_REPLAY";

/// How many simulation runs a shrink spends on one seed by default.
pub const DEFAULT_SHRINK_BUDGET: u32 = 300;

/// The first seed of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// This seed.
    Seed(u64),
    /// The microseconds since the Unix epoch when the run starts (printed
    /// in the report's header; each failure's reproduction names its own
    /// seed), so each run of a
    /// test tries seeds no earlier run tried; a shard takes the first
    /// microsecond of the UTC day instead, so every shard of one nightly
    /// job draws the same range.
    Auto,
}

impl Start {
    /// The first seed this start stands for now.
    pub fn resolve(self, sharded: bool) -> u64 {
        const DAY_US: u64 = 86_400_000_000;
        match self {
            Start::Seed(s) => s,
            Start::Auto => {
                // The one read of the wall clock: outside every simulated
                // run, to choose which seeds run.
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX / 2));
                if sharded { now - now % DAY_US } else { now }
            }
        }
    }
}

impl Start {
    /// Whether the start is drawn from the clock.
    pub fn is_auto(self) -> bool {
        self == Start::Auto
    }
}

impl std::str::FromStr for Start {
    type Err = String;
    fn from_str(text: &str) -> Result<Start, String> {
        match text.trim() {
            "auto" => Ok(Start::Auto),
            t => t
                .parse()
                .map(Start::Seed)
                .map_err(|_| format!("{text:?} is neither a seed (0 to {}) nor `auto`", u64::MAX)),
        }
    }
}

/// A refused `NELI_SIM_*` value: the variable, the value, what it takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}={value:?}: {expected}")]
pub struct BadSetting {
    pub var: &'static str,
    pub value: String,
    pub expected: String,
}

/// The settings read from the environment; `None`: not set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub seed: Option<u64>,
    pub seeds: Option<u64>,
    pub start: Option<Start>,
    pub jobs: Option<usize>,
    pub regressions: Option<PathBuf>,
    pub reports: Vec<PathBuf>,
    pub shard: Option<(u64, u64)>,
    /// `Some(None)`: shrinking switched off (`NELI_SIM_SHRINK=0`);
    /// `Some(Some(budget))`: on, with that budget.
    pub shrink: Option<Option<u32>>,
    /// `Some(false)`: switched off (`NELI_SIM_CHECK_DETERMINISM=0`).
    pub check_determinism: Option<bool>,
    pub replay: Option<PathBuf>,
}

impl Settings {
    /// Reads the process environment.
    pub fn from_env() -> Result<Settings, BadSetting> {
        Settings::read(|var| std::env::var(var).ok())
    }

    /// Reads the settings through `get` (the environment, or a map in a test).
    pub fn read(get: impl Fn(&str) -> Option<String>) -> Result<Settings, BadSetting> {
        let var = |name: &'static str| get(name).filter(|v| !v.trim().is_empty()).map(|v| (name, v));
        let mut s = Settings::default();
        if let Some((n, v)) = var(SEED_ENV) {
            s.seed = Some(number(n, &v, "a seed (a whole number from 0 to 2^64 - 1)")?);
        }
        if let Some((n, v)) = var(SEEDS_ENV) {
            s.seeds = Some(
                number(n, &v, "how many seeds to run (a whole number, at least 1)")
                    .and_then(|c| if c == 0 { Err(bad(n, &v, "at least 1 seed (0 runs nothing)")) } else { Ok(c) })?,
            );
        }
        if let Some((n, v)) = var(START_ENV) {
            s.start = Some(v.parse().map_err(|e: String| bad(n, &v, &e))?);
        }
        if let Some((n, v)) = var(JOBS_ENV) {
            let jobs: u64 = number(n, &v, "how many threads run seeds (at least 1)")?;
            if jobs == 0 {
                return Err(bad(n, &v, "at least 1 thread (unset it for one per core)"));
            }
            s.jobs = Some(usize::try_from(jobs).unwrap_or(usize::MAX));
        }
        s.regressions = var(REGRESSIONS_ENV).map(|(_, v)| PathBuf::from(v));
        if let Some((n, v)) = var(REPORT_ENV) {
            s.reports = report_files(n, &v)?;
        }
        if let Some((n, v)) = var(SHARD_ENV) {
            s.shard = Some(parse_shard(&v).map_err(|e| bad(n, &v, &e))?);
        }
        if let Some((n, v)) = var(SHRINK_ENV) {
            s.shrink = Some(match v.trim() {
                "0" | "false" | "no" => None,
                "1" | "true" | "yes" => Some(DEFAULT_SHRINK_BUDGET),
                t => Some(
                    number(n, t, "1 to shrink, 0 not to (or the most runs a shrink may take, e.g. 500)")?
                        .min(u64::from(u32::MAX)) as u32,
                ),
            });
        }
        if let Some((n, v)) = var(CHECK_DETERMINISM_ENV) {
            s.check_determinism = Some(flag(n, &v)?);
        }
        s.replay = var(REPLAY_ENV).map(|(_, v)| PathBuf::from(v));
        Ok(s)
    }
}

fn bad(var: &'static str, value: &str, expected: &str) -> BadSetting {
    BadSetting { var, value: value.to_owned(), expected: expected.to_owned() }
}

fn number(var: &'static str, value: &str, expected: &str) -> Result<u64, BadSetting> {
    value.trim().parse().map_err(|_| bad(var, value, expected))
}

fn flag(var: &'static str, value: &str) -> Result<bool, BadSetting> {
    match value.trim() {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err(bad(var, value, "1 (on) or 0 (off)")),
    }
}

/// The formats a report file can take, by extension.
pub const REPORT_EXTENSIONS: [&str; 5] = ["txt", "json", "xml", "md", "html"];

fn report_files(var: &'static str, value: &str) -> Result<Vec<PathBuf>, BadSetting> {
    let mut out = Vec::new();
    for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(part);
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !REPORT_EXTENSIONS.contains(&ext) {
            let expected = format!(
                "{part:?} has no report format: name files ending in .{} (text, JSON, JUnit XML, Markdown, HTML)",
                REPORT_EXTENSIONS.join(", .")
            );
            return Err(bad(var, value, &expected));
        }
        out.push(path);
    }
    Ok(out)
}

/// `i/n`, 1 <= i <= n: shard `i` of `n` runs every `n`-th seed from the
/// `i`-th.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let Some((i, n)) = text.trim().split_once('/') else {
        return Err("expected i/n, e.g. 1/4".into());
    };
    let (Ok(i), Ok(n)) = (i.trim().parse::<u64>(), n.trim().parse::<u64>()) else {
        return Err("i and n of i/n must be whole numbers, e.g. 1/4".into());
    };
    if i == 0 || i > n {
        return Err(format!("shard {i} of {n}: need 1 <= i <= n"));
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn read(pairs: &[(&str, &str)]) -> Result<Settings, BadSetting> {
        let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        Settings::read(|k| map.get(k).cloned())
    }

    #[test]
    fn every_setting_reads() {
        let s = read(&[
            (SEEDS_ENV, "500"),
            (START_ENV, "auto"),
            (JOBS_ENV, "2"),
            (REGRESSIONS_ENV, "neli-regressions"),
            (REPORT_ENV, "out/r.json, out/r.html"),
            (SHARD_ENV, "2/4"),
            (SHRINK_ENV, "1"),
            (CHECK_DETERMINISM_ENV, "1"),
        ])
        .unwrap();
        assert_eq!((s.seeds, s.start, s.jobs, s.shard), (Some(500), Some(Start::Auto), Some(2), Some((2, 4))));
        assert_eq!(s.reports, vec![PathBuf::from("out/r.json"), PathBuf::from("out/r.html")]);
        assert_eq!((s.shrink, s.check_determinism), (Some(Some(DEFAULT_SHRINK_BUDGET)), Some(true)));
        assert_eq!(read(&[]).unwrap(), Settings::default());
    }

    // `0` is an answer, not an absence: it switches off what the code set.
    #[test]
    fn zero_switches_shrinking_and_the_determinism_check_off() {
        let s = read(&[(SHRINK_ENV, "0"), (CHECK_DETERMINISM_ENV, "0")]).unwrap();
        assert_eq!((s.shrink, s.check_determinism), (Some(None), Some(false)));
        assert_eq!(read(&[(SHRINK_ENV, "500")]).unwrap().shrink, Some(Some(500)));
        assert_eq!(read(&[(SHRINK_ENV, " ")]).unwrap().shrink, None, "blank is unset");
    }

    #[test]
    fn a_bad_value_names_the_variable_the_value_and_what_it_takes() {
        for (var, value, says) in [
            (SEEDS_ENV, "0", "at least 1"),
            (SEEDS_ENV, "many", "how many seeds"),
            (START_ENV, "soon", "nor `auto`"),
            (JOBS_ENV, "0", "at least 1 thread"),
            (REPORT_ENV, "report.pdf", ".html"),
            (SHARD_ENV, "5/4", "1 <= i <= n"),
            (SHARD_ENV, "half", "i/n"),
            (CHECK_DETERMINISM_ENV, "maybe", "1 (on)"),
            (SHRINK_ENV, "lots", "1 to shrink, 0 not to"),
            (SEED_ENV, "-1", "a seed"),
        ] {
            let e = read(&[(var, value)]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{var}={value:?}")) && e.contains(says), "{e}");
        }
    }
}
