//! neli-sim as a team's repository gets it: the `.crate` files `cargo
//! package` makes of neli and neli-sim, unpacked, and a new crate in a
//! temporary directory outside the repository that depends on them through
//! `[patch.crates-io]` and runs a harness test of one seed. So the packages
//! carry what they need, the shipped scenarios included (`sim/build.rs`
//! embeds them from `shipped/`, whose links packaging follows).
//!
//! It packages into, and builds in, directories of its own under the
//! target directory's `tmp/`, offline, from the registry cache the
//! workspace's build filled (about two minutes the first time on 2 cores,
//! seconds after).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    // The workspace's own flags stay out: the new crate's config decides.
    c.env_remove("RUSTFLAGS").env_remove("CARGO_ENCODED_RUSTFLAGS");
    // So do a CI job's own harness settings: the test says what it runs.
    for (var, _) in std::env::vars().filter(|(k, _)| k.starts_with("NELI_SIM_")) {
        c.env_remove(var);
    }
    c
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The scenario files `dir` of the repository holds (`scenarios/`,
/// `scenarios/broken/`), by name.
fn toml_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml") && n != "Cargo.toml")
        .collect();
    v.sort();
    v
}

/// `sim/shipped/` is one link per shipped scenario file and nothing else:
/// the one copy of each file is in `scenarios/` (scripts/link-shipped.sh
/// makes the links).
#[test]
fn the_embedded_scenarios_are_links_to_every_shipped_file() {
    let root = root();
    for (sub, up) in [("", "../../scenarios/"), ("broken", "../../../scenarios/broken/")] {
        let shipped = toml_names(&root.join("scenarios").join(sub));
        let links_dir = root.join("sim/shipped").join(sub);
        let links = toml_names(&links_dir);
        assert_eq!(links, shipped, "sim/shipped/{sub} differs from scenarios/{sub}: run scripts/link-shipped.sh");
        for name in links {
            let target = std::fs::read_link(links_dir.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                target,
                Path::new(&format!("{up}{name}")),
                "sim/shipped/{sub}/{name}: run scripts/link-shipped.sh"
            );
        }
    }
    assert_eq!(
        neli_sim::shipped::EMBEDDED.len(),
        toml_names(&root.join("scenarios")).len() + toml_names(&root.join("scenarios/broken")).len()
    );
}

/// `cargo package` of neli and neli-sim into `target`, unpacked into
/// `target/unpacked`; returns the folders of the two packages.
fn packages(target: &Path) -> (PathBuf, PathBuf) {
    let o = cargo()
        .current_dir(root())
        .args(["package", "--offline", "--no-verify", "--allow-dirty", "-p", "neli", "-p", "neli-sim", "--target-dir"])
        .arg(target)
        .output()
        .expect("cargo runs");
    assert!(o.status.success(), "cargo package:\n{}", text(&o));
    let unpacked = target.join("unpacked");
    let _ = std::fs::remove_dir_all(&unpacked);
    std::fs::create_dir_all(&unpacked).expect("a folder for the packages");
    let mut dirs = Vec::new();
    for krate in ["neli-0.1.0", "neli-sim-0.0.0"] {
        let file = target.join("package").join(format!("{krate}.crate"));
        // `m`: the files get the time of unpacking, not the fixed time
        // `cargo package` writes, so the team's build sees a new package
        // as changed and never reuses what it compiled of an older one.
        let o = Command::new("tar").arg("xzmf").arg(&file).arg("-C").arg(&unpacked).output().expect("tar runs");
        assert!(o.status.success(), "{}: {}", file.display(), text(&o));
        dirs.push(unpacked.join(krate));
    }
    (dirs[0].clone(), dirs[1].clone())
}

/// A team's crate: a service on neli and a harness test of one seed.
fn team_crate(neli: &Path, sim: &Path) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("neli-packaged-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["src", "tests", ".cargo"] {
        std::fs::create_dir_all(dir.join(sub)).expect("the crate's folders");
    }
    let manifest = format!(
        "[package]\nname = \"team-service\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nneli = {{ version = \"=0.1.0\", default-features = false }}\n\n\
         [dev-dependencies]\nneli-sim = \"=0.0.0\"\n\n\
         [patch.crates-io]\nneli = {{ path = {:?} }}\nneli-sim = {{ path = {:?} }}\n\n[workspace]\n",
        neli.display().to_string(),
        sim.display().to_string()
    );
    let files = [
        ("Cargo.toml", manifest.as_str()),
        ("src/lib.rs", "pub fn assignment() -> neli::Assignment {\n    neli::Config::default().assignment\n}\n"),
        (
            "tests/harness.rs",
            "#[test]\nfn leader_pause_holds() {\n    \
             let report = neli_sim::harness::Harness::shipped(\"leader-pause\").expect(\"shipped\").seeds(0..1).run();\n    \
             println!(\"{report}\");\n    report.assert_passed();\n    \
             assert_eq!(team_service::assignment().name(), \"cooperative-sticky\");\n}\n",
        ),
        (".cargo/config.toml", "[build]\nrustflags = [\"--cfg\", \"tokio_unstable\"]\n"),
    ];
    for (name, body) in files {
        std::fs::write(dir.join(name), body).expect("a file of the crate");
    }
    // The workspace's lock file: the same versions, all in the registry cache.
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("lock file copied");
    dir
}

#[test]
fn a_crate_outside_the_repository_tests_against_the_packaged_crates() {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("packaged");
    let started = Instant::now();
    let (neli, sim) = packages(&target);
    eprintln!("packaged neli and neli-sim in {:.1?}", started.elapsed());
    assert!(sim.join("shipped/leader-pause.toml").is_file(), "the package carries the scenario files");
    assert!(!sim.join("shipped/leader-pause.toml").is_symlink(), "as files, not links");
    let dir = team_crate(&neli, &sim);
    let started = Instant::now();
    let o = cargo()
        .current_dir(&dir)
        .args(["test", "--offline", "--test", "harness", "--", "--nocapture"])
        .env("CARGO_TARGET_DIR", target.join("team-target"))
        .output()
        .expect("cargo runs");
    eprintln!("built and tested the team's crate in {:.1?}", started.elapsed());
    let out = text(&o);
    assert!(o.status.success(), "the team's crate:\n{out}");
    assert!(out.contains("harness leader-pause (test leader_pause_holds): 1 seed(s) 0..=0, 0 failed: PASS"), "{out}");
    assert!(!out.contains("warning: neli-sim was built without"), "the crate's config seeds tokio:\n{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
