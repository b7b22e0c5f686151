//! The limits every crate of the workspace keeps (ARCHITECTURE.md, "Limits
//! the tools hold"): modules in layers, short files, short inline tests.
//! Functions over 80 lines are clippy's (`too_many_lines`, clippy.toml).

use std::path::{Path, PathBuf};

use neli_house::{Crate, MAX_FILE_LINES, MAX_INLINE_TEST_LINES, file_lengths, paths_named};

/// The workspace's member folders, as its Cargo.toml lists them.
fn members() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace's Cargo.toml");
    let list = manifest.split("members = [").nth(1).and_then(|r| r.split(']').next()).unwrap_or_default();
    let out: Vec<String> =
        list.split(',').map(|m| m.trim().trim_matches('"').to_owned()).filter(|m| !m.is_empty()).collect();
    assert!(out.contains(&"house".to_owned()), "members read from Cargo.toml: {out:?}");
    out
}

/// Every crate's `src/` in the workspace, and the worked example's (a
/// workspace of its own).
fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let mut crates = members();
    crates.push("examples/invoices".to_owned());
    let out: Vec<PathBuf> = crates.iter().map(|c| root.join(c).join("src")).collect();
    for src in &out {
        assert!(src.is_dir(), "{} is gone", src.display());
    }
    out
}

#[test]
fn no_crate_has_an_import_circle_among_sibling_modules() {
    let mut circles = Vec::new();
    for src in sources() {
        let krate = Crate::read(&src);
        for c in krate.circles() {
            let edges: Vec<String> = c.edges.iter().map(|(a, b)| format!("{a} -> {b}")).collect();
            circles.push(format!(
                "{}: {{{}}} reach each other: {}",
                src.display(),
                c.modules.join(", "),
                edges.join(", ")
            ));
        }
    }
    assert!(
        circles.is_empty(),
        "import circles (a module reaching back into one that reaches it):\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_scan_sees_the_edges_that_are_there() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let sim = Crate::read(&root.join("sim/src"));
    let edges = sim.sibling_edges();
    let has = |a: &str, b: &str| edges.contains(&(vec![a.to_owned()], vec![b.to_owned()]));
    assert!(has("client", "record"), "sim's client reads records: {edges:?}");
    assert!(edges.len() > 20, "a crate of this size has more than {} edges", edges.len());
}

#[test]
fn use_trees_super_and_self_resolve_to_module_paths() {
    let from: Vec<String> = vec!["world".into(), "member".into()];
    let text = "use crate::{a::{b, c::D}, e};\nuse super::apply::x;\nlet y = self::inner::f();\nmy_crate::z;";
    let got = paths_named(text, &from);
    let want: Vec<Vec<&str>> = vec![
        vec!["a", "b"],
        vec!["a", "c", "D"],
        vec!["e"],
        vec!["world", "apply", "x"],
        vec!["world", "member", "inner", "f"],
    ];
    let want: Vec<Vec<String>> = want.into_iter().map(|p| p.into_iter().map(String::from).collect()).collect();
    assert_eq!(got, want);
}

#[test]
fn a_circle_between_siblings_is_found_and_named() {
    let dir = std::env::temp_dir().join(format!("neli-house-circle-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("world")).expect("temp dir");
    std::fs::write(src.join("lib.rs"), "pub mod world;\n").expect("write");
    std::fs::write(src.join("world/mod.rs"), "pub mod a;\npub mod b;\n").expect("write");
    std::fs::write(src.join("world/a.rs"), "use super::b::B;\n").expect("write");
    std::fs::write(src.join("world/b.rs"), "use crate::world::a::A;\n#[cfg(test)]\nuse crate::x;\n").expect("write");
    let krate = Crate::read(&src);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(krate.circle().map(|c| c.join(" -> ")), Some("world::a -> world::b -> world::a".to_owned()));
    let circles = krate.circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert_eq!(circles[0].modules, ["world::a", "world::b"]);
    let want = [("world::a", "world::b"), ("world::b", "world::a")].map(|(a, b)| (a.to_owned(), b.to_owned()));
    assert_eq!(circles[0].edges, want, "the edges to cut; the test module's use is not one");
}

#[test]
fn no_source_file_is_over_the_limit_before_its_tests() {
    let mut long = Vec::new();
    for src in sources() {
        for (file, before, tests) in file_lengths(&src) {
            if before > MAX_FILE_LINES {
                long.push(format!("{}: {before} lines before its tests (limit {MAX_FILE_LINES})", file.display()));
            }
            if tests > MAX_INLINE_TEST_LINES {
                long.push(format!(
                    "{}: an inline test module of {tests} lines (limit {MAX_INLINE_TEST_LINES}; move it to a sibling file)",
                    file.display()
                ));
            }
        }
    }
    assert!(long.is_empty(), "files over the limits:\n{}", long.join("\n"));
}

#[test]
fn no_two_modules_of_a_crate_share_a_file_name() {
    let mut clashes = Vec::new();
    for src in sources() {
        for names in neli_house::same_names(&Crate::read(&src)) {
            clashes.push(format!("{}: {}", src.display(), names.join(", ")));
        }
    }
    assert!(clashes.is_empty(), "modules sharing a file name (neither the other's child):\n{}", clashes.join("\n"));
}

// Clippy holds functions to 80 lines only where the workspace's lints
// reach: the threshold, the lint and every crate's opt-in are checked here,
// so none of them is loosened without this test saying so.
#[test]
fn every_crate_lints_functions_over_80_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let clippy = read("clippy.toml");
    assert!(clippy.lines().any(|l| l.trim() == "too-many-lines-threshold = 80"), "clippy.toml:\n{clippy}");
    let workspace = read("Cargo.toml");
    let lints = workspace.split("[workspace.lints.clippy]").nth(1).unwrap_or_default();
    let table = lints.split("\n[").next().unwrap_or_default();
    assert!(table.lines().any(|l| l.trim() == "too_many_lines = \"warn\""), "[workspace.lints.clippy]:\n{table}");
    for krate in members() {
        let manifest = read(&format!("{krate}/Cargo.toml"));
        let opted_in = manifest.split("[lints]").nth(1).is_some_and(|t| t.trim_start().starts_with("workspace = true"));
        assert!(opted_in, "{krate}/Cargo.toml has no `[lints] workspace = true`");
    }
}

#[test]
fn a_long_file_a_long_inline_test_and_a_shared_name_are_found() {
    let dir = std::env::temp_dir().join(format!("neli-house-long-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("cmd")).expect("temp dir");
    std::fs::create_dir_all(src.join("report")).expect("temp dir");
    let body = "fn f() {}\n".repeat(MAX_FILE_LINES + 1);
    let tests = format!("#[cfg(test)]\nmod tests {{\n{}}}\n", "    // a line\n".repeat(MAX_INLINE_TEST_LINES));
    std::fs::write(src.join("lib.rs"), "pub mod cmd;\npub mod report;\n").expect("write");
    std::fs::write(src.join("cmd/mod.rs"), "#[cfg(test)]\nmod helpers;\npub mod run;\n").expect("write");
    std::fs::write(src.join("cmd/run.rs"), format!("{body}{tests}")).expect("write");
    std::fs::write(src.join("report/mod.rs"), "pub mod run;\n").expect("write");
    std::fs::write(src.join("report/run.rs"), "pub fn text() {}\n").expect("write");
    let lengths = file_lengths(&src);
    let names = neli_house::same_names(&Crate::read(&src));
    std::fs::remove_dir_all(&dir).ok();
    let of = |f: &str| lengths.iter().find(|(p, ..)| p.ends_with(f)).map(|(_, before, tests)| (*before, *tests));
    assert_eq!(of("cmd/run.rs"), Some((MAX_FILE_LINES + 1, MAX_INLINE_TEST_LINES + 3)));
    assert_eq!(of("cmd/mod.rs").map(|(before, _)| before), Some(3), "a `#[cfg(test)] mod x;` is not the tests");
    assert_eq!(names, [vec!["cmd/run".to_owned(), "report/run".to_owned()]]);
}

#[test]
fn no_function_is_over_the_limit() {
    let mut long = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let mut dirs = sources();
    for m in members() {
        dirs.extend(["tests", "examples", "benches"].map(|d| root.join(&m).join(d)));
    }
    dirs.push(root.join("examples/invoices/tests"));
    for dir in dirs {
        for file in neli_house::rust_files(&dir) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            for (name, line, lines) in neli_house::functions(&text) {
                if lines > neli_house::MAX_FN_LINES {
                    long.push(format!("{}:{line} {name}: {lines} lines", file.display()));
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {} lines (fn line to closing brace):\n{}",
        neli_house::MAX_FN_LINES,
        long.join("\n")
    );
}

#[test]
fn function_spans_skip_strings_chars_and_comments() {
    let text = "fn a<'x>(s: &'x str) -> char {\n    let _ = \"}}\";\n    let _ = r#\"{\"#;\n    // }\n    '}'\n}\n\ntrait T {\n    fn b(&self);\n    fn c(&self) {\n        if true {}\n    }\n}\n";
    let got = neli_house::functions(text);
    assert_eq!(got, [("a".to_owned(), 1, 6), ("c".to_owned(), 10, 3)]);
}
