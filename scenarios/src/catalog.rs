//! Finding scenarios: a name is looked up in the scenario directory
//! (`$NELI_LAB_SCENARIOS`, default this crate's directory, i.e. the repo's
//! `scenarios/`); anything with a `/` or ending in `.toml` is a path.
//! Deliberately broken scenarios live in `broken/` below it, so that
//! `explore --all` (the main job) checks only what must hold. When that
//! directory is gone (an installed binary whose source tree moved) or
//! `NELI_LAB_SCENARIOS=embedded`, the copies embedded at build time are used.

use std::path::{Path, PathBuf};

use neli_sim::scenario::Layer;
use neli_sim::{Scenario, ScenarioError};

use crate::invocation::quote;

/// A loaded scenario and how the user named it (for reproduction lines).
#[derive(Debug, Clone)]
pub struct Entry {
    pub arg: String,
    pub path: PathBuf,
    pub scenario: Scenario,
}

use neli_sim::shipped::EMBEDDED;

/// What `dir()` says when the embedded copies are in use.
pub const EMBEDDED_DIR: &str = "<embedded>";

pub fn dir() -> PathBuf {
    match std::env::var_os("NELI_LAB_SCENARIOS") {
        Some(d) if d == "embedded" => PathBuf::from(EMBEDDED_DIR),
        Some(d) => PathBuf::from(d),
        None => {
            let built_from = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
            if built_from.is_dir() { built_from } else { PathBuf::from(EMBEDDED_DIR) }
        }
    }
}

/// [`dir`], refused when `NELI_LAB_SCENARIOS` names a folder that is not
/// there, is not a folder or holds no scenario file (`*.toml`, in it or in
/// its `broken/`): a typo in the variable would otherwise read as a
/// catalog with nothing in it. The message names the variable and the path.
pub fn checked_dir() -> Result<PathBuf, ScenarioError> {
    let d = dir();
    let Some(set) = std::env::var_os("NELI_LAB_SCENARIOS").filter(|v| v != "embedded") else {
        return Ok(d);
    };
    let at = format!("NELI_LAB_SCENARIOS={}", quote(&set.to_string_lossy()));
    let fix = "set it to a folder of *.toml scenario files, or to `embedded` for the shipped ones";
    match std::fs::metadata(&d) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(ScenarioError(format!("{at}: no such folder ({fix})")))
        }
        Err(e) => Err(ScenarioError(format!("{at}: cannot read: {e} ({fix})"))),
        Ok(m) if !m.is_dir() => Err(ScenarioError(format!("{at}: not a folder ({fix})"))),
        Ok(_) if toml_files(&d).is_empty() && toml_files(&d.join("broken")).is_empty() => {
            Err(ScenarioError(format!("{at}: holds no scenario file, no *.toml in it or in broken/ ({fix})")))
        }
        Ok(_) => Ok(d),
    }
}

/// The embedded scenario at `rel` (`leader-pause.toml`, `broken/x.toml`).
fn embedded_text(rel: &str) -> Option<&'static str> {
    EMBEDDED.iter().find(|(p, _)| *p == rel).map(|(_, t)| *t)
}

/// Resolves and loads `arg` (a name or a path). `arg` is kept shell-quoted,
/// as reproduction lines print it (scenarios/README.md, "Reproduction
/// lines"). A scenario found by name is called by that name, its file's
/// stem, from here on (scenarios/FORMAT.md, "name").
pub fn load(arg: &str) -> Result<Entry, ScenarioError> {
    let quoted = quote(arg).into_owned();
    let by_name = !(arg.contains('/') || arg.ends_with(".toml"));
    let dir = if by_name { checked_dir()? } else { PathBuf::new() };
    let path = if !by_name {
        PathBuf::from(arg)
    } else if dir == Path::new(EMBEDDED_DIR) {
        for rel in [format!("{arg}.toml"), format!("broken/{arg}.toml")] {
            if let Some(text) = embedded_text(&rel) {
                let path = Path::new(EMBEDDED_DIR).join(&rel);
                let scenario = named_by_file(Scenario::parse(text, &path.display().to_string())?, arg, &path);
                return Ok(Entry { arg: quoted, path, scenario });
            }
        }
        let names: Vec<String> = EMBEDDED.iter().map(|(p, _)| stem_of(p)).collect();
        return Err(ScenarioError(format!(
            "{arg}: no scenario of that name among the embedded ones{} (try `neli-lab list`, or give a path)",
            suggestion(arg, &names)
        )));
    } else {
        let top = dir.join(format!("{arg}.toml"));
        let broken = dir.join("broken").join(format!("{arg}.toml"));
        if !top.exists() && broken.exists() {
            broken
        } else if top.exists() {
            top
        } else {
            return Err(ScenarioError(format!(
                "{arg}: no scenario of that name in {}{} (try `neli-lab list`, or give a path)",
                dir.display(),
                suggestion(arg, &all_names(&dir))
            )));
        }
    };
    let scenario = Scenario::load(&path)?;
    let scenario = if by_name { named_by_file(scenario, arg, &path) } else { scenario };
    Ok(Entry { arg: quoted, path, scenario })
}

/// `s`, found by the name `stem` in the file `path`, called `stem` from
/// here on: the table, the failing seeds and the shrink suggestion then
/// name it as the user typed it. A different `name` in the file is
/// warned about on stderr, naming the file and both names.
pub fn named_by_file(mut s: Scenario, stem: &str, path: &Path) -> Scenario {
    if s.name != stem {
        eprintln!(
            "warning: {}: its name {:?} differs from its file name {stem:?}; it is called {stem:?} from here on",
            path.display(),
            s.name
        );
        s.name = stem.to_owned();
    }
    s
}

impl Entry {
    /// This entry with `layer` switched off (layer ablation): the scenario
    /// renamed `<name>-without-<layer>`, and `arg` extended with
    /// `--without <layer>` so reproduction lines rebuild it. `None` when
    /// the scenario already runs without that layer.
    pub fn without(&self, layer: Layer) -> Option<Entry> {
        let scenario = self.scenario.without(layer)?;
        Some(Entry { arg: format!("{} --without {layer}", self.arg), path: self.path.clone(), scenario })
    }
}

/// [`load`], then switch `without` off if given; a layer that is already
/// off in the scenario is an error naming the field.
pub fn load_without(arg: &str, without: Option<Layer>) -> Result<Entry, ScenarioError> {
    let e = load(arg)?;
    match without {
        None => Ok(e),
        Some(l) => e.without(l).ok_or_else(|| {
            ScenarioError(format!(
                "--without {l}: {} already runs without it ({} = false)",
                e.path.display(),
                l.field()
            ))
        }),
    }
}

fn toml_files(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && !p.ends_with("Cargo.toml"))
        .collect();
    v.sort();
    v
}

/// `broken/x.toml` as `x`.
fn stem_of(rel: &str) -> String {
    rel.rsplit('/').next().unwrap_or(rel).trim_end_matches(".toml").to_owned()
}

fn stems(files: &[PathBuf]) -> impl Iterator<Item = String> + '_ {
    files.iter().filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
}

/// Every name a scenario in `dir` is found by, broken ones too.
fn all_names(dir: &Path) -> Vec<String> {
    stems(&toml_files(dir)).chain(stems(&toml_files(&dir.join("broken")))).collect()
}

/// `; did you mean "x"?` when one of `names` is close to `arg` (a
/// misspelt name), else nothing.
fn suggestion(arg: &str, names: &[String]) -> String {
    neli_sim::scenario::closest(arg, names.iter().map(String::as_str))
        .map(|n| format!("; did you mean {n:?}?"))
        .unwrap_or_default()
}

/// The shipped scenarios that must hold (the top of the directory), by
/// name; refused as [`checked_dir`] refuses a folder.
pub fn names() -> Result<Vec<String>, ScenarioError> {
    let d = checked_dir()?;
    if d == Path::new(EMBEDDED_DIR) {
        return Ok(EMBEDDED.iter().filter(|(p, _)| !p.contains('/')).map(|(p, _)| stem_of(p)).collect());
    }
    Ok(stems(&toml_files(&d)).collect())
}

/// A scenario file as `list` shows it: `(broken, path, parsed or error)`.
pub type Listed = (bool, PathBuf, Result<Scenario, ScenarioError>);

/// Every scenario file; refused as [`checked_dir`] refuses a folder.
pub fn all() -> Result<Vec<Listed>, ScenarioError> {
    let d = checked_dir()?;
    if d == Path::new(EMBEDDED_DIR) {
        return Ok(EMBEDDED
            .iter()
            .map(|(rel, text)| {
                let path = Path::new(EMBEDDED_DIR).join(rel);
                let parsed = Scenario::parse(text, &path.display().to_string());
                (rel.starts_with("broken/"), path, parsed)
            })
            .collect());
    }
    let mut out = Vec::new();
    for (broken, d) in [(false, d.clone()), (true, d.join("broken"))] {
        for p in toml_files(&d) {
            let s = Scenario::load(&p);
            out.push((broken, p, s));
        }
    }
    Ok(out)
}
