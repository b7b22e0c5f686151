//! `explore --regressions DIR`: failures are kept, not only found. Every
//! scenario file in DIR (a failing seed written out: its faults and its
//! `seed`) is replayed before any new seed, and a failure there is a
//! regression; each new failing seed is written there, shrunk with
//! `--shrink`. A project commits the directory (`neli-regressions/` by
//! convention, scenarios/README.md "Regressions"), as proptest keeps
//! `proptest-regressions/`.

use std::path::{Path, PathBuf};

use neli_sim::{Scenario, ScenarioError};

use crate::report::{Explore, Regression};
use crate::shrinker::ShrinkFileError;
use crate::{artifacts, plan, repro, schedule, shrinker};

/// How many simulation runs `--shrink` spends on each new failing seed
/// (`shrink`'s own default).
pub const SHRINK_BUDGET: u32 = 300;

/// Why `--regressions` could not read or keep its files: the directory or
/// the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum RegressionsError {
    #[error("--regressions {}: cannot create: {source}", dir.display())]
    CreateDir { dir: PathBuf, source: std::io::Error },
    #[error("--regressions {}: cannot read: {source}", dir.display())]
    ReadDir { dir: PathBuf, source: std::io::Error },
    #[error("--regressions: {0}")]
    Scenario(#[from] ScenarioError),
    #[error(
        "--regressions: {}: no `seed`: a regression file names the seed it failed with (explore writes it)",
        path.display()
    )]
    NoSeed { path: PathBuf },
    #[error("--regressions: {}: cannot write: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Shrunk(#[from] ShrinkFileError),
}

/// The scenario files in `dir`, in name order; the directory is created
/// when it does not exist (a first run has nothing to replay).
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, RegressionsError> {
    std::fs::create_dir_all(dir).map_err(|source| RegressionsError::CreateDir { dir: dir.to_owned(), source })?;
    let read = |source| RegressionsError::ReadDir { dir: dir.to_owned(), source };
    let entries = std::fs::read_dir(dir).map_err(read)?;
    let mut files = Vec::new();
    for e in entries {
        let path = e.map_err(read)?.path();
        if path.extension().is_some_and(|x| x == "toml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Loads every regression file, refusing one that does not parse or names
/// no seed (nothing to replay), naming the file.
pub fn load(dir: &Path) -> Result<Vec<(PathBuf, Scenario, u64)>, RegressionsError> {
    let mut out = Vec::new();
    for path in files(dir)? {
        let s = Scenario::load(&path)?;
        let Some(seed) = s.seed else {
            return Err(RegressionsError::NoSeed { path });
        };
        out.push((path, s, seed));
    }
    Ok(out)
}

/// Replays each loaded regression at its seed.
pub fn replay(loaded: &[(PathBuf, Scenario, u64)]) -> Vec<Regression> {
    loaded
        .iter()
        .map(|(path, s, seed)| {
            let r = crate::run(s, *seed);
            let file = path.display().to_string();
            Regression {
                reproduce: format!("{} run {}", repro(), crate::invocation::quote(&file)),
                file,
                scenario: s.name.clone(),
                seed: *seed,
                passed: r.passed(),
                violations: r.violations.iter().map(ToString::to_string).collect(),
            }
        })
        .collect()
}

/// Writes each new failing seed of a row that must pass as
/// `DIR/<scenario>-seed<N>.toml` (shrunk when `shrink` is set), leaving a
/// file of that name alone; returns the files written.
pub fn keep(dir: &Path, groups: &[plan::Group], r: &Explore, shrink: bool) -> Result<Vec<PathBuf>, RegressionsError> {
    let mut written = Vec::new();
    for (row, sr) in plan::rows(groups).zip(&r.scenarios).filter(|(_, sr)| !sr.expect_fail && !sr.may_fail) {
        for f in &sr.failing {
            let path = dir.join(format!("{}.toml", artifacts::file_stem(&sr.name, f.seed)));
            if path.exists() {
                continue;
            }
            let text = if shrink {
                shrunk(&row.entry.scenario, &row.entry.arg, f.seed)?
            } else {
                written_out(&row.entry.scenario, &row.entry.arg, f.seed)?
            };
            // Written whole or not at all: another run may be replaying
            // the directory (it reads only `*.toml`).
            let part = path.with_extension("toml.part");
            std::fs::write(&part, text)
                .and_then(|()| std::fs::rename(&part, &path))
                .map_err(|source| RegressionsError::Write { path: path.clone(), source })?;
            written.push(path);
        }
    }
    Ok(written)
}

/// The failing seed with the faults it drew written out.
fn written_out(s: &Scenario, arg: &str, seed: u64) -> Result<String, RegressionsError> {
    let mut fixed = schedule::materialize(s, seed);
    fixed.seed = Some(seed);
    let header = vec![
        format!("failing seed {seed} of {arg}, kept by neli-lab explore --regressions ({})", crate::BUILD),
        format!("replayed by every explore --regressions run; reproduce: {} run <this file>", repro()),
    ];
    Ok(fixed.to_toml(&header)?)
}

/// The failing seed shrunk; written out unshrunk when it cannot be.
fn shrunk(s: &Scenario, arg: &str, seed: u64) -> Result<String, RegressionsError> {
    match shrinker::shrink(s, seed, SHRINK_BUDGET) {
        Some(sh) => Ok(shrinker::to_file(s, arg, seed, &sh)?.text),
        None => written_out(s, arg, seed),
    }
}
