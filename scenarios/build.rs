//! Names the build for `neli-lab`'s output headers (ARCHITECTURE.md, "Build
//! identity"): the git commit the binary was built from and whether the tree
//! differed from it. A verdict that names no build cannot be trusted, so every
//! `check`, `explore` and `run` prints this. Without git or a `.git` the
//! commit is "unknown"; this script never fails the build.
//! (The shipped scenario files are embedded by neli-sim's build script:
//! `neli_sim::shipped`.)

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs git without its optional locks: a plain `git status` refreshes
/// the index's stat data and rewrites `.git/index`, which this script
/// watches (`rerun-if-changed`), so on a fresh clone every build would
/// re-run it and recompile neli-lab. `--no-optional-locks` (and
/// `GIT_OPTIONAL_LOCKS=0`, for the commands that take no such flag)
/// leave the index alone.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The commit a packaged crate was made from, and whether that tree
/// differed from it: `cargo package` writes them into
/// `.cargo_vcs_info.json` (`"sha1": "…"`, `"dirty": true`). `None` in a
/// checkout, where git says.
fn packaged_from(manifest: &Path) -> Option<(String, &'static str)> {
    let text = std::fs::read_to_string(manifest.join(".cargo_vcs_info.json")).ok()?;
    let at = text.find("\"sha1\"")? + "\"sha1\"".len();
    let sha: String =
        text[at..].chars().skip_while(|c| !c.is_ascii_hexdigit()).take_while(char::is_ascii_hexdigit).collect();
    (sha.len() >= 7).then(|| (sha, if text.contains("\"dirty\": true") { "dirty" } else { "clean" }))
}

/// `rerun-if-changed` for `p` when it exists. Cargo re-runs a build script
/// on every build while a path it watches is missing, which would
/// recompile neli-lab each time: a worktree or a fresh clone may have no
/// `packed-refs`. Git creates that file only by packing loose refs, which
/// removes the branch's loose ref watched below, so nothing is missed.
fn watch(p: &Path) {
    if p.exists() {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    if let Some((commit, state)) = packaged_from(&manifest) {
        // A package: the folder around it may be anyone's repository.
        println!("cargo:rustc-env=NELI_LAB_COMMIT={commit}");
        println!("cargo:rustc-env=NELI_LAB_TREE={state}");
        println!("cargo:rerun-if-changed=build.rs");
        return;
    }
    let root = manifest.parent().map(Path::to_path_buf).unwrap_or(manifest);
    let commit =
        git(&root, &["rev-parse", "HEAD"]).filter(|c| c.len() >= 7 && c.bytes().all(|b| b.is_ascii_hexdigit()));
    // `--porcelain` lists modified, staged and untracked (not ignored) files.
    let state = match (&commit, git(&root, &["status", "--porcelain", "--untracked-files=normal"])) {
        (Some(_), Some(s)) if s.is_empty() => "clean",
        (Some(_), Some(_)) => "dirty",
        _ => "tree state unknown",
    };
    println!("cargo:rustc-env=NELI_LAB_COMMIT={}", commit.as_deref().unwrap_or("unknown"));
    println!("cargo:rustc-env=NELI_LAB_TREE={state}");

    // Re-run when HEAD moves (checkout, commit), the index changes (staging)
    // or any file of the tree changes. `target/` and `.git` are left out so
    // that building does not re-trigger the script.
    println!("cargo:rerun-if-changed=build.rs");
    for git_file in ["HEAD", "index", "packed-refs"] {
        if let Some(p) = git(&root, &["rev-parse", "--git-path", git_file]) {
            watch(&root.join(p));
        }
    }
    if let Some(branch) = git(&root, &["symbolic-ref", "-q", "HEAD"])
        && let Some(p) = git(&root, &["rev-parse", "--git-path", &branch])
    {
        let p = root.join(p);
        // A branch kept only in packed-refs (a fresh clone's may be): the
        // folder its loose ref would be written to.
        match p.parent() {
            Some(folder) if !p.exists() => watch(folder),
            _ => watch(&p),
        }
    }
    if let Ok(entries) = std::fs::read_dir(&root) {
        let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        for p in names {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name == ".git" || name.starts_with("target") {
                continue;
            }
            if name == "fuzz" {
                // cargo-fuzz builds and writes its findings inside fuzz/: only
                // its sources and corpus are part of the tree.
                for sub in ["Cargo.toml", "README.md", "fuzz_targets", "corpus"] {
                    watch(&p.join(sub));
                }
                continue;
            }
            watch(&p);
        }
    }
}
