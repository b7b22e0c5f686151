//! The workspace's structural limits, as code the tests call
//! (ARCHITECTURE.md, "Limits the tools hold"): every crate's modules form
//! layers (no module reaches back into a sibling that reaches it), and no
//! source file is longer than [`MAX_FILE_LINES`] before its test module.
//! Functions over 80 lines are clippy's `too_many_lines`, set in the
//! workspace's lints and `clippy.toml`.
//!
//! The scan reads sources as text: every `crate::a::b`, `super::x` or
//! `self::x` path outside a comment names an edge. A module's inline test
//! module (`#[cfg(test)] mod tests {`) may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most lines a source file may have before its test module.
pub const MAX_FILE_LINES: usize = 800;
/// The most lines an inline test module may have; a longer one moves to a
/// sibling file (`#[cfg(test)] #[path = "x_tests.rs"] mod tests;`).
pub const MAX_INLINE_TEST_LINES: usize = 200;

/// A module's path inside its crate: `world/member.rs` is `["world", "member"]`,
/// `world/mod.rs` is `["world"]`, `lib.rs` is `[]`.
pub type ModPath = Vec<String>;

/// Sibling modules that reach each other, and the dependencies among them
/// (what to cut to break the circle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    pub modules: Vec<String>,
    pub edges: Vec<(String, String)>,
}

/// One crate's sources under its `src/`: module path to text before tests.
#[derive(Debug, Default)]
pub struct Crate {
    pub root: PathBuf,
    pub modules: BTreeMap<ModPath, String>,
}

/// The `.rs` files under `dir`, sorted, skipping `src/bin` (each file there
/// is a crate of its own with no modules).
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "bin") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The module path of `rel`, a file's path under `src/`.
pub fn mod_path(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts
}

/// A file's text before its test module: the first top-level
/// `#[cfg(test)]` whose item is an inline `mod name {` (a `#[cfg(test)] mod
/// helpers;` declaration is not the tests).
pub fn before_tests(text: &str) -> &str {
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim_end() == "#[cfg(test)]" {
            let item = lines.clone().find(|l| !l.starts_with("#[")).unwrap_or_default().trim_end();
            let is_mod =
                item.starts_with("mod ") || item.starts_with("pub mod ") || item.starts_with("pub(crate) mod ");
            if is_mod && item.ends_with('{') {
                return &text[..offset];
            }
        }
        offset += line.len();
    }
    text
}

/// `text` without its comment lines (`//`, `///`, `//!`): a doc link names
/// a module for the reader, not for the compiler.
pub fn code_only(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

impl Crate {
    /// Reads the crate whose `src/` is `src`. A `main.rs` beside a `lib.rs`
    /// uses the library by name and declares no modules of its own.
    pub fn read(src: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        let has_lib = src.join("lib.rs").exists();
        for f in rust_files(src) {
            let rel = f.strip_prefix(src).expect("under src");
            if has_lib && rel == Path::new("main.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            modules.insert(mod_path(rel), code_only(before_tests(&text)));
        }
        Crate { root: src.to_path_buf(), modules }
    }

    /// The longest known module path that `path` starts with.
    fn resolve(&self, path: &[String]) -> Option<ModPath> {
        (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| self.modules.contains_key(p))
    }

    /// Edges between modules: `from` names something in `to`.
    pub fn edges(&self) -> BTreeSet<(ModPath, ModPath)> {
        let mut out = BTreeSet::new();
        for (from, text) in &self.modules {
            for path in paths_named(text, from) {
                if let Some(to) = self.resolve(&path)
                    && &to != from
                {
                    out.insert((from.clone(), to));
                }
            }
        }
        out
    }

    /// Edges between siblings: an edge from `a::x::y` to `a::z` is one from
    /// `a::x` to `a::z`; a module naming its own ancestor or descendant is
    /// no sibling edge (a parent re-exports its children; children use
    /// their parent's items).
    pub fn sibling_edges(&self) -> BTreeSet<(ModPath, ModPath)> {
        let mut out = BTreeSet::new();
        for (from, to) in self.edges() {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                out.insert((from[..=common].to_vec(), to[..=common].to_vec()));
            }
        }
        out
    }

    /// A circle among sibling modules, if there is one: `[a, b, a]`.
    pub fn circle(&self) -> Option<Vec<String>> {
        let graph = self.graph();
        let mut done = BTreeSet::new();
        let starts: Vec<String> = graph.keys().cloned().collect();
        starts.iter().find_map(|s| visit(s, &graph, &mut Vec::new(), &mut done))
    }

    /// Every group of sibling modules that reach each other (a strongly
    /// connected component of more than one), with the edges inside it:
    /// what to cut to break the circle.
    pub fn circles(&self) -> Vec<Circle> {
        let graph = self.graph();
        let reach = |from: &str| -> BTreeSet<String> {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.to_owned()];
            while let Some(m) = stack.pop() {
                for n in graph.get(&m).into_iter().flatten() {
                    if seen.insert(n.clone()) {
                        stack.push(n.clone());
                    }
                }
            }
            seen
        };
        let reached: BTreeMap<String, BTreeSet<String>> = graph.keys().map(|k| (k.clone(), reach(k))).collect();
        let mut out: Vec<Circle> = Vec::new();
        let mut placed = BTreeSet::new();
        for (m, r) in &reached {
            if placed.contains(m) || !r.contains(m) {
                continue;
            }
            let group: Vec<String> =
                r.iter().filter(|n| reached.get(*n).is_some_and(|rn| rn.contains(m))).cloned().collect();
            let inside: Vec<(String, String)> = group
                .iter()
                .flat_map(|a| graph[a].iter().filter(|b| group.contains(b)).map(move |b| (a.clone(), b.clone())))
                .collect();
            placed.extend(group.iter().cloned());
            out.push(Circle { modules: group, edges: inside });
        }
        out
    }

    fn graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in self.sibling_edges() {
            graph.entry(a.join("::")).or_default().insert(b.join("::"));
        }
        graph
    }
}

fn visit(
    m: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(i) = path.iter().position(|p| p == m) {
        let mut circle = path[i..].to_vec();
        circle.push(m.to_owned());
        return Some(circle);
    }
    if !done.insert(m.to_owned()) {
        return None;
    }
    path.push(m.to_owned());
    for next in graph.get(m).into_iter().flatten() {
        if let Some(c) = visit(next, graph, path, done) {
            return Some(c);
        }
    }
    path.pop();
    None
}

/// The module paths a text names, made absolute from the module `from`:
/// `crate::a::b`, `super::c` and `self::d`, and every path of a use tree
/// such as `crate::{a, b::{c, d}}`.
pub fn paths_named(text: &str, from: &[String]) -> Vec<ModPath> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let preceded = i > 0 && (is_ident(bytes[i - 1] as char) || bytes[i - 1] == b':');
        let head = ["crate::", "super::", "self::"].into_iter().find(|h| rest.starts_with(h));
        let (Some(head), false) = (head, preceded) else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let mut base: ModPath = match head {
            "crate::" => Vec::new(),
            "self::" => from.to_vec(),
            _ => from[..from.len().saturating_sub(1)].to_vec(),
        };
        let mut tail = &rest[head.len()..];
        while let Some(t) = tail.strip_prefix("super::") {
            base.pop();
            tail = t;
        }
        use_tree(&mut tail, base, &mut out);
        i += head.len();
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Reads one use tree from the front of `s` (`a::b`, `a::{b, c::d}`),
/// pushing each path it names onto `out` after `base`.
fn use_tree(s: &mut &str, mut base: ModPath, out: &mut Vec<ModPath>) {
    loop {
        *s = s.trim_start();
        if let Some(inner) = s.strip_prefix('{') {
            *s = inner;
            loop {
                use_tree(s, base.clone(), out);
                *s = s.trim_start();
                if let Some(r) = s.strip_prefix(',') {
                    *s = r;
                    continue;
                }
                if let Some(r) = s.strip_prefix('}') {
                    *s = r;
                }
                return;
            }
        }
        let n = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
        if n == 0 {
            break;
        }
        base.push(s[..n].to_owned());
        *s = &s[n..];
        match s.strip_prefix("::") {
            Some(r) => *s = r,
            None => break,
        }
    }
    if !base.is_empty() {
        out.push(base);
    }
}

/// Every source file's lines before its tests and, where the tests are an
/// inline module, that module's lines.
pub fn file_lengths(src: &Path) -> Vec<(PathBuf, usize, usize)> {
    rust_files(src)
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let before = before_tests(&text).lines().count();
            let tests = text.lines().count() - before;
            (f, before, tests)
        })
        .collect()
}

/// Modules of one crate that share a file name (`cmd/check.rs` and
/// `report/check.rs`), where neither is the other's child: one name per
/// thing, so a search or an editor tab says which one it is.
pub fn same_names(krate: &Crate) -> Vec<Vec<String>> {
    let mut by_name: BTreeMap<&str, Vec<&ModPath>> = BTreeMap::new();
    for path in krate.modules.keys() {
        if let Some(last) = path.last() {
            by_name.entry(last.as_str()).or_default().push(path);
        }
    }
    let nested = |a: &ModPath, b: &ModPath| a.len() + 1 == b.len() && b.starts_with(a);
    by_name
        .into_values()
        .filter(|paths| {
            paths.iter().enumerate().any(|(i, a)| paths[i + 1..].iter().any(|b| !nested(a, b) && !nested(b, a)))
        })
        .map(|paths| paths.iter().map(|p| p.join("/")).collect())
        .collect()
}

/// The most lines a function may span, from its `fn` line to its closing
/// brace, blank lines and comments included. Clippy's `too_many_lines`
/// holds the same limit counting code lines only; this count is the one a
/// reader scrolls through.
pub const MAX_FN_LINES: usize = 80;

/// Every function of `text` as (name, first line, lines spanned), nested
/// ones included. Reads the text as tokens only as far as braces need:
/// strings, raw strings, chars and comments are skipped, lifetimes are
/// told from chars.
pub fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let braces = brace_lines(text);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        // The body opens at the first `{` at or after this line; a `;`
        // first (a trait method without a body) means no body.
        let opened = braces.iter().position(|(l, open, _)| *l >= i && *open);
        let Some(start) = opened else { continue };
        let ends_decl =
            text.lines().skip(i).take(braces[start].0 - i + 1).any(|l| code_part(l).trim_end().ends_with(';'));
        if ends_decl {
            continue;
        }
        let depth = braces[start].2;
        let close = braces[start + 1..].iter().find(|(_, open, d)| !*open && *d == depth);
        if let Some((end, ..)) = close {
            out.push((name, i + 1, end - i + 1));
        }
    }
    out
}

/// `fn name` at the start of a line (after `pub`, `async`, `const`, …).
fn fn_name(line: &str) -> Option<String> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return None;
    }
    let at = code.find("fn ")?;
    let before = &code[..at];
    let qualifiers = ["pub", "pub(crate)", "pub(super)", "async", "const", "unsafe", "extern", "\"C\"", "default"];
    if !before.split_whitespace().all(|w| qualifiers.contains(&w)) {
        return None;
    }
    let name: String = code[at + 3..].chars().take_while(|c| is_ident(*c)).collect();
    (!name.is_empty()).then_some(name)
}

/// A line without its `//` comment (a rough cut: enough for `;` at the end).
fn code_part(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// Every brace of `text` outside strings, chars and comments, as (line
/// index, opening?, depth inside it).
fn brace_lines(text: &str) -> Vec<(usize, bool, usize)> {
    let b = text.as_bytes();
    let (mut i, mut line, mut depth) = (0, 0, 0usize);
    let mut out = Vec::new();
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                line += text[i..end].matches('\n').count();
                i = end;
                continue;
            }
            b'r' if !(i > 0 && is_ident(b[i - 1] as char)) && matches!(b.get(i + 1), Some(b'"' | b'#')) => {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let from = i + 2 + hashes;
                    let end = text[from..].find(&close).map_or(b.len(), |e| from + e + close.len());
                    line += text[i..end].matches('\n').count();
                    i = end;
                    continue;
                }
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                line += text[i..j.min(b.len())].matches('\n').count();
                i = j + 1;
                continue;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{1F600}', '{'), else a lifetime.
                let rest = &text[i + 1..];
                let len = if let Some(escaped) = rest.strip_prefix('\\') {
                    escaped.find('\'').map(|e| e + 2)
                } else {
                    rest.chars().next().filter(|_| rest.chars().nth(1) == Some('\'')).map(char::len_utf8)
                };
                if let Some(len) = len {
                    i += len + 2;
                    continue;
                }
            }
            b'{' => {
                depth += 1;
                out.push((line, true, depth));
            }
            b'}' => {
                out.push((line, false, depth));
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    out
}
