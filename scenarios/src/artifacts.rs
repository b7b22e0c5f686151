//! `explore --artifacts DIR`: for every failing seed, the files a person
//! opens from a CI artifact list (scenarios/README.md, "Artifacts"):
//! `<scenario>-seed<N>.toml`, a scenario file with the seed and the faults
//! it drew written out (so `neli-lab run` on it fails the same way),
//! `<scenario>-seed<N>.trace.txt`, the full trace and figures,
//! `<scenario>-seed<N>.svg`, the leadership timeline, and
//! `<scenario>-seed<N>.history.jsonl`, the run's typed history; and one
//! `index.html` listing them all, each with its timeline, history and
//! reproduction (`neli_sim::html`, the page the harness writes too).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use neli_sim::{Scenario, ScenarioError};

use crate::{schedule, svg};

/// `name` with anything but ASCII letters, digits, `-`, `_` and `.` as `_`,
/// so that a scenario name is a safe file name.
pub fn file_stem(name: &str, seed: u64) -> String {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    format!("{safe}-seed{seed}")
}

/// Why a failing seed's files were not written: the seed, the scenario or
/// the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("internal: {name} seed {seed} passes once its faults are written out")]
    PassesWrittenOut { name: String, seed: u64 },
    #[error("--artifacts: {0}")]
    Scenario(#[from] ScenarioError),
    #[error("--artifacts: {}: cannot write: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// Writes the four files for `seed` of `s` (given on the command line as
/// `arg`) into `dir` and returns their paths. The scenario file is checked
/// to fail again before it is written.
pub fn write_failing_seed(dir: &Path, arg: &str, s: &Scenario, seed: u64) -> Result<Vec<PathBuf>, ArtifactError> {
    let mut fixed = schedule::materialize(s, seed);
    fixed.seed = Some(seed);
    let r = crate::run(&fixed, seed);
    if r.passed() {
        return Err(ArtifactError::PassesWrittenOut { name: s.name.clone(), seed });
    }
    let header = vec![
        format!("failing seed {seed} of {arg}, written by neli-lab explore --artifacts ({})", crate::BUILD),
        format!("fails with: {}", r.violations.first().map(ToString::to_string).unwrap_or_default()),
        format!("reproduce: {} run <this file>", crate::repro()),
    ];
    let stem = file_stem(&s.name, seed);
    let mut trace = String::new();
    let _ = writeln!(trace, "build     {}\nscenario  {} seed {seed}", crate::BUILD, s.name);
    for l in &r.trace {
        let _ = writeln!(trace, "{l}");
    }
    for v in &r.violations {
        let _ = writeln!(trace, "violation {v}");
    }
    let files = [
        (format!("{stem}.toml"), fixed.to_toml(&header)?),
        (format!("{stem}.trace.txt"), trace),
        (format!("{stem}.svg"), svg::timeline(&r, s.election.members, s.duration.ms())),
        (format!("{stem}.history.jsonl"), r.history.to_jsonl()),
    ];
    let mut out = Vec::new();
    for (name, body) in files {
        let p = dir.join(name);
        std::fs::write(&p, body).map_err(|source| ArtifactError::Write { path: p.clone(), source })?;
        out.push(p);
    }
    Ok(out)
}

/// One failing seed on the artifacts' index page.
pub struct Indexed<'a> {
    pub name: &'a str,
    pub seed: u64,
    pub violations: &'a [String],
    pub reproduce: &'a str,
    pub shrink: &'a str,
}

/// Writes `DIR/index.html`: one self-contained page (the harness's HTML
/// report, `neli_sim::html`) listing every failing seed whose files
/// [`write_failing_seed`] wrote, with its timeline, history, reproduction
/// and shrink lines; returns its path.
pub fn write_index(dir: &Path, summary: Vec<(String, String)>, failing: &[Indexed]) -> Result<PathBuf, ArtifactError> {
    let read = |name: String| std::fs::read_to_string(dir.join(name)).ok();
    let sections = failing
        .iter()
        .map(|f| {
            let stem = file_stem(f.name, f.seed);
            neli_sim::html::Section {
                id: stem.clone(),
                title: format!("{} seed {}", f.name, f.seed),
                violations: f.violations.to_vec(),
                reproduce: f.reproduce.to_owned(),
                timeline: read(format!("{stem}.svg")),
                history: read(format!("{stem}.history.jsonl")),
                extra: vec![
                    ("shrink".to_owned(), f.shrink.to_owned()),
                    (
                        "files".to_owned(),
                        ["toml", "trace.txt", "svg", "history.jsonl"].map(|x| format!("{stem}.{x}")).join("\n"),
                    ),
                ],
            }
        })
        .collect();
    let verdict = if failing.is_empty() { "no failing seed" } else { "failing seeds" };
    let page = neli_sim::html::Page { title: format!("neli-lab explore: {verdict}"), summary, sections };
    let path = dir.join("index.html");
    std::fs::write(&path, page.render()).map_err(|source| ArtifactError::Write { path: path.clone(), source })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_are_safe_names() {
        assert_eq!(file_stem("leader-pause", 7), "leader-pause-seed7");
        assert_eq!(file_stem("a b/c", 0), "a_b_c-seed0");
    }
}
