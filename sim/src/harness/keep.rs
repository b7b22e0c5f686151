//! The harness's regressions folder: each failing seed written as a
//! scenario file with its faults drawn out and its `seed` (shrunk when the
//! run shrank it), in the format `neli-lab explore --regressions` keeps,
//! one folder per test; every file there is replayed before new seeds.

use std::path::{Path, PathBuf};

use super::report::Failure;
use crate::scenario::{Scenario, schedule};

/// The kept file of `seed` of scenario `name`.
fn file_name(name: &str, seed: u64) -> String {
    format!("{name}-seed{seed}.toml")
}

/// Whether `path` is the kept file of `seed` of scenario `name`.
pub(super) fn is_file_of(path: &Path, name: &str, seed: u64) -> bool {
    path.file_name().is_some_and(|f| f.to_string_lossy() == file_name(name, seed))
}

/// Every scenario file in `dir`, in name order, with its seed; a folder
/// that does not exist yet holds nothing. A file that does not parse or
/// names no seed is an error naming it.
pub(super) fn load(dir: &Path) -> Result<Vec<(PathBuf, Scenario, u64)>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("regressions folder {}: cannot read: {e}", dir.display())),
    };
    let mut files = Vec::new();
    for e in entries {
        let path = e.map_err(|e| format!("regressions folder {}: cannot read: {e}", dir.display()))?.path();
        if path.extension().is_some_and(|x| x == "toml") {
            files.push(path);
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let s = Scenario::load(&path).map_err(|e| format!("regressions folder: {e}"))?;
        let Some(seed) = s.seed else {
            return Err(format!(
                "regressions folder: {}: no `seed`: a kept failure names the seed it failed with (the harness writes it)",
                path.display()
            ));
        };
        out.push((path, s, seed));
    }
    Ok(out)
}

/// Writes each failure not kept yet into `dir` (created if needed),
/// whole or not at all; returns the files written.
pub(super) fn write_new(
    dir: &Path,
    scenario: &Scenario,
    failures: &[Failure],
    test: Option<&str>,
) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for f in failures {
        let path = dir.join(file_name(&scenario.name, f.seed));
        if path.exists() {
            continue;
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("regressions folder {}: cannot create: {e}", dir.display()))?;
        let text = match &f.shrunk {
            Some(s) if s.replays => s.toml.clone(),
            _ => {
                let mut fixed = schedule::materialize(scenario, f.seed);
                fixed.seed = Some(f.seed);
                let by = test.map_or_else(|| "a harness run".to_owned(), |t| format!("the harness test {t}"));
                let header = vec![
                    format!("failing seed {} of {}, kept by {by}", f.seed, scenario.name),
                    format!("fails with: {}", f.violations.first().map(ToString::to_string).unwrap_or_default()),
                ];
                fixed.to_toml(&header).map_err(|e| e.to_string())?
            }
        };
        // Another run may be replaying the folder (it reads only `*.toml`).
        let part = path.with_extension("toml.part");
        std::fs::write(&part, text)
            .and_then(|()| std::fs::rename(&part, &path))
            .map_err(|e| format!("regressions folder: {}: cannot write: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
