//! The crate's modules form layers: no module reaches back into one that
//! reaches it (issue 37 found `client` -> `oracle` -> `world` -> `client`,
//! kept only for rule names, a time formatter and a constant). Read from
//! the sources: each `crate::<module>` a file names is an edge, also in a
//! doc comment (a doc link up the layers counts: name it in plain text).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module of a file under `src/` (`world/member.rs` -> `world`).
fn module_of(rel: &Path) -> String {
    let first = rel.components().next().expect("a path under src").as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// The modules a source text names as `crate::<module>` (also inside `use crate::{a, b}`).
fn named(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        let heads: Vec<&str> = match rest.strip_prefix('{') {
            Some(inner) => inner[..inner.find('}').unwrap_or(inner.len())].split(',').collect(),
            None => vec![rest],
        };
        for h in heads {
            let name: String = h.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if modules.contains(&name) {
                out.insert(name);
            }
        }
    }
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src readable") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_module_of_the_simulator_imports_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let rel: Vec<_> = all.iter().map(|p| p.strip_prefix(&src).expect("under src").to_path_buf()).collect();
    let modules: BTreeSet<String> = rel.iter().filter(|r| r != &Path::new("lib.rs")).map(|r| module_of(r)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, r) in all.iter().zip(&rel) {
        if r == Path::new("lib.rs") {
            continue;
        }
        let from = module_of(r);
        let text = std::fs::read_to_string(path).expect("source readable");
        // Tests inside a module may reach anywhere.
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        let to: Vec<String> = named(text, &modules).into_iter().filter(|m| *m != from).collect();
        edges.entry(from).or_default().extend(to);
    }
    assert!(edges.get("client").is_some_and(|e| e.contains("record")), "the scan sees edges: {edges:?}");
    // Depth-first search for a back edge, reporting the circle it closes.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut circle = path[i..].to_vec();
            circle.push(m.to_owned());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_owned());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for m in &modules {
        if let Some(circle) = visit(m, &edges, &mut Vec::new(), &mut done) {
            panic!("an import circle among sim/src modules: {}", circle.join(" -> "));
        }
    }
}
