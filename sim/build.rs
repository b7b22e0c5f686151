//! Embeds the shipped scenario files, so the harness API
//! (`neli_sim::shipped`) and an installed `neli-lab` find them by name
//! without the source tree. They are read from `shipped/` in this crate:
//! one symbolic link per file of `scenarios/*.toml` and
//! `scenarios/broken/*.toml` (the one copy; `sim/tests/it/scenario_files.rs`
//! checks the links cover exactly those files), which `cargo package`
//! follows, so a packaged neli-sim carries the files themselves
//! (scenarios/README.md, "Installing").

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    println!("cargo:rerun-if-changed=build.rs");
    let found = embed_scenarios(&manifest.join("shipped"));
    if found == 0 {
        eprintln!("error: no scenario files in {}", manifest.join("shipped").display());
        std::process::exit(1);
    }
}

/// Writes `$OUT_DIR/embedded.rs`: `EMBEDDED: &[(&str, &str)]`, each shipped
/// scenario's path relative to `scenarios/` (`leader-pause.toml`,
/// `broken/lease-from-receipt.toml`) and its text, top level first; returns
/// how many.
fn embed_scenarios(dir: &Path) -> usize {
    let mut files = Vec::new();
    for (prefix, d) in [("", dir.to_path_buf()), ("broken/", dir.join("broken"))] {
        println!("cargo:rerun-if-changed={}", d.display());
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if p.extension().is_some_and(|e| e == "toml") && name != "Cargo.toml" {
                println!("cargo:rerun-if-changed={}", p.display());
                files.push((format!("{prefix}{name}"), p));
            }
        }
    }
    // The directory's order: the top level, then `broken/`, each by name.
    files.sort_by_key(|(rel, _)| (rel.starts_with("broken/"), rel.clone()));
    let mut code = String::from(
        "/// The shipped scenario files, embedded at build time.\npub const EMBEDDED: &[(&str, &str)] = &[\n",
    );
    for (rel, path) in &files {
        code.push_str(&format!("    ({rel:?}, include_str!({:?})),\n", path.display().to_string()));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("embedded.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
    files.len()
}
