//! The harness API from outside: a new crate in a temporary directory,
//! depending on neli-sim by path, runs the invoices service of
//! `examples/invoices` (its own application, its own invariants) with only
//! the documented public API. The correct service passes 200 of 200 seeds
//! of `leader-pause` and `swarm`; each wrong one fails on some seed with a
//! named invariant and prints a reproduction that fails again when run; the
//! ablation says every weakening of neli that gives two leaders is caught.
//! The transcripts of docs/testing-your-service.md of that reproduction and of the ablation table
//! are checked against them.
//!
//! It builds the crate in its own target directory (`target/outside-crate`;
//! its dependencies optimised, as the example's Cargo.toml asks: several
//! minutes the first time) and runs about 1,400 seeds (a few minutes on 2
//! cores).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// Copies `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a directory for the copy");
    for e in std::fs::read_dir(from).expect("the example readable") {
        let p = e.expect("an entry").path();
        let dest = to.join(p.file_name().expect("a name"));
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("a file copied");
        }
    }
}

/// The example as a new crate in a temporary directory, its path
/// dependencies pointing back at this workspace.
fn new_crate() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("neli-sim-outside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("examples/invoices"), &dir);
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("the example's manifest");
    let text = text
        .replace("path = \"../../neli\"", &format!("path = {:?}", root().join("neli").display().to_string()))
        .replace("path = \"../../sim\"", &format!("path = {:?}", root().join("sim").display().to_string()));
    assert!(!text.contains("../../"), "every path dependency rewritten:\n{text}");
    std::fs::write(&manifest, text).expect("manifest written");
    // The workspace's lock file: the same versions, nothing fetched.
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("lock file copied");
    dir
}

fn cargo_test(dir: &Path, args: &[&str], seed: Option<&str>) -> Output {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(dir)
        .args(["test", "--offline", "--test", "invoices"])
        .args(args)
        .env("CARGO_TARGET_DIR", root().join("target/outside-crate"))
        // The workspace's own flags stay out: the crate's .cargo/config.toml decides.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("NELI_SIM_SEED");
    // A CI job's own harness settings stay out: the test says what it runs.
    for (var, _) in std::env::vars().filter(|(k, _)| k.starts_with("NELI_SIM_")) {
        cmd.env_remove(var);
    }
    if let Some(s) = seed {
        cmd.env("NELI_SIM_SEED", s);
    }
    cmd.output().expect("cargo runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The report block a test printed, from its `harness` line to its last `reproduce:` line.
fn report_of<'a>(out: &'a str, first_line: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = out.lines().collect();
    let start =
        lines.iter().position(|l| l.starts_with(first_line)).unwrap_or_else(|| panic!("no '{first_line}' in:\n{out}"));
    let mut block = vec![lines[start]];
    for l in &lines[start + 1..] {
        if !(l.starts_with("seed ") || l.starts_with("  ") || l.starts_with("also failing")) {
            break;
        }
        block.push(l);
    }
    block
}

#[test]
fn a_crate_outside_the_workspace_tests_its_own_service() {
    let dir = new_crate();
    let all = cargo_test(&dir, &["--", "--nocapture", "--test-threads", "2"], None);
    let out = text(&all);
    assert!(all.status.success(), "the invoices tests:\n{out}");
    for scenario in ["leader-pause", "swarm"] {
        let test = format!("correct_survives_{}", scenario.replace('-', "_"));
        let pass = format!("harness {scenario} (test {test}): 200 seed(s) 0..=199, 0 failed: PASS");
        assert!(out.contains(&pass), "the correct service passes every seed of {scenario}:\n{out}");
    }
    assert!(!out.contains("warning: neli-sim was built without"), "the crate's config seeds tokio:\n{out}");
    // The term-scoped service passes every seed its look-then-send twin fails some of.
    let ppc =
        |l: &&str| l.starts_with("harness pause-partition-crash (test ") && l.contains("): 200 seed(s) 0..=199, ");
    let verdicts: Vec<&str> = out.lines().filter(ppc).collect();
    assert_eq!(verdicts.len(), 2, "both services ran pause-partition-crash:\n{out}");
    assert!(verdicts.iter().any(|l| l.ends_with("0 failed: PASS")), "the term-scoped service passes:\n{out}");
    assert!(verdicts.iter().any(|l| l.ends_with("FAIL")), "the look-then-send service fails:\n{out}");
    let fails: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("harness leader-pause (test ") && l.contains(": 200 seed(s) ") && l.ends_with("FAIL"))
        .collect();
    assert_eq!(fails.len(), 2, "both wrong variants fail some seed:\n{out}");
    for (test, invariant) in [
        ("no_recheck_sends_without_a_lease", "invariant no invoice sent without a lease: "),
        ("unfenced_sends_an_invoice_twice", "invariant no invoice sent twice: "),
    ] {
        // Its report names the invariant and says how to rerun the seed:
        // the first seed that fails it.
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        let repro = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("reproduce: NELI_SIM_SEED=") && l.contains(test))
            .find(|(i, _)| {
                lines[..*i].iter().rev().take_while(|l| !l.starts_with("seed ")).any(|l| l.starts_with(invariant))
            })
            .map(|(_, l)| *l)
            .unwrap_or_else(|| panic!("no reproduction line for {test} naming {invariant:?}:\n{out}"));
        assert!(out.lines().any(|l| l.trim_start().starts_with(invariant)), "{invariant} named:\n{out}");
        let seed = repro.trim_start_matches("reproduce: NELI_SIM_SEED=").split(' ').next().expect("a seed");
        assert_eq!(repro, format!("reproduce: NELI_SIM_SEED={seed} cargo test {test} -- --exact"));
        // The reproduction fails again, the same way.
        let again = cargo_test(&dir, &[test, "--", "--exact", "--nocapture"], Some(seed));
        let again_out = text(&again);
        assert!(again.status.success(), "{again_out}");
        let header = format!("harness leader-pause (test {test}): seed {seed} (NELI_SIM_SEED), 1 failed: FAIL");
        let block = report_of(&again_out, &header);
        assert!(block.iter().any(|l| l.trim_start().starts_with(invariant)), "{again_out}");
        assert!(block.contains(&format!("  {repro}").as_str()), "{again_out}");
        if test == "unfenced_sends_an_invoice_twice" {
            readme_shows(&format!("$ NELI_SIM_SEED={seed} cargo test {test} -- --exact --nocapture"), &block);
        }
    }
    // The ablation: every weakening that gives two leaders is caught, and
    // the guide shows the table as the test prints it.
    let from_table = out.lines().skip_while(|l| !l.starts_with("ablation of leader-pause"));
    let mut table: Vec<&str> = Vec::new();
    for l in from_table {
        table.push(l);
        if l.starts_with("verdict: ") {
            break;
        }
    }
    assert!(table.last().is_some_and(|l| l.starts_with("verdict: every weakening")), "{out}");
    readme_shows("$ cargo test the_invariants_catch_a_weakened_neli -- --nocapture", &table);
    let _ = std::fs::remove_dir_all(&dir);
}

// One service, two mains: the service's own code names nothing of the
// simulator, which only its tests depend on.
#[test]
fn the_invoices_service_depends_on_the_simulator_only_in_its_tests() {
    let example = root().join("examples/invoices");
    for file in ["src/lib.rs", "src/main.rs"] {
        let text = std::fs::read_to_string(example.join(file)).expect("the example's source");
        assert!(!text.contains("neli_sim"), "examples/invoices/{file} names neli_sim");
    }
    let manifest = std::fs::read_to_string(example.join("Cargo.toml")).expect("the example's manifest");
    let deps = &manifest[manifest.find("[dependencies]").expect("a [dependencies] table")..];
    let deps = &deps[..deps.find("[dev-dependencies]").expect("a [dev-dependencies] table")];
    assert!(!deps.contains("neli-sim"), "neli-sim is a dev-dependency only:\n{deps}");
}

/// The guide's transcript under `command` is what the run printed.
fn readme_shows(command: &str, block: &[&str]) {
    let readme = std::fs::read_to_string(root().join(GUIDE)).expect("the guide readable");
    let at = readme.find(command).unwrap_or_else(|| panic!("{GUIDE} shows no `{command}`"));
    let shown: Vec<&str> =
        readme[at..].lines().skip(1).take_while(|l| !l.starts_with("```")).filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(shown, block, "{GUIDE}'s transcript under `{command}` differs from the run");
}

/// The page that shows a team how to test its own service.
const GUIDE: &str = "docs/testing-your-service.md";
