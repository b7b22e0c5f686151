//! `neli-lab` in a team's own repository: from a folder outside this one,
//! with its own scenario folder named by `NELI_LAB_SCENARIOS`, every
//! reproduction line `explore`, `run`, `check` and `shrink` print, pasted
//! into a shell there, reruns the failure (scenarios/README.md,
//! "Reproduction lines").

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A folder outside the repository with `scenarios/`: a scenario that
/// passes (`short-pause`) and one broken on purpose (`lease-from-receipt`).
fn team_repo(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("neli-lab-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scenarios")).expect("a scenario folder");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"));
    for from in ["short-pause.toml", "broken/lease-from-receipt.toml"] {
        let to = dir.join("scenarios").join(Path::new(from).file_name().expect("a file name"));
        std::fs::copy(shipped.join(from), to).expect("scenario copied");
    }
    assert!(!dir.starts_with(shipped.parent().expect("the repository")), "{} is outside", dir.display());
    dir
}

/// `cmd` as a user's shell runs it in `dir`: not under cargo, and with no
/// `NELI_LAB_SCENARIOS` unless `scenarios` is given.
fn in_dir(mut cmd: Command, dir: &Path, scenarios: Option<&str>) -> Output {
    cmd.current_dir(dir).env_remove("CARGO").env_remove("CARGO_PKG_NAME").env_remove("NELI_LAB_SCENARIOS");
    if let Some(s) = scenarios {
        cmd.env("NELI_LAB_SCENARIOS", s);
    }
    cmd.output().expect("the command runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The rule of the first violation in `out` (`rule send-time: …`).
fn first_rule(out: &str) -> String {
    let at = out.find("rule ").unwrap_or_else(|| panic!("no violation in:\n{out}"));
    out[at + 5..].split(':').next().expect("a rule name").to_owned()
}

/// Runs `line` with `sh -c` in `dir` with nothing set, and asserts it
/// fails again (exit 1) with `rule`.
fn reruns(dir: &Path, line: &str, rule: &str) {
    let mut sh = Command::new("sh");
    sh.args(["-c", line]);
    let o = in_dir(sh, dir, None);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "`{line}` in {} reruns the failure:\n{out}", dir.display());
    assert_eq!(first_rule(&out), rule, "`{line}`:\n{out}");
}

/// The lines of `out` after `marker`, trimmed.
fn lines_after<'a>(out: &'a str, marker: &str) -> Vec<&'a str> {
    out.lines().filter_map(|l| l.split_once(marker).map(|(_, rest)| rest.trim())).collect()
}

#[test]
fn every_reproduction_line_reruns_the_failure_outside_the_repository() {
    let dir = team_repo("outside");
    let bin = env!("CARGO_BIN_EXE_neli-lab");
    let lab = |args: &[&str]| {
        let mut c = Command::new(bin);
        c.args(args);
        in_dir(c, &dir, Some("scenarios"))
    };
    let prefix = format!("NELI_LAB_SCENARIOS=scenarios {bin} ");

    // explore: each failing seed's reproduce and shrink lines.
    let o = lab(&["explore", "short-pause", "lease-from-receipt", "--seeds", "2"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let rule = first_rule(&out);
    let repro = lines_after(&out, "reproduce: ");
    assert_eq!(repro.len(), 2, "one line per failing seed:\n{out}");
    for line in &repro {
        assert!(line.starts_with(&prefix), "{line}");
        reruns(&dir, line, &rule);
    }
    // The shrink suggestion writes a file whose own reproduction fails again.
    let shrink = lines_after(&out, "shrink:    ");
    let mut sh = Command::new("sh");
    sh.args(["-c", shrink[0]]);
    let shrunk = in_dir(sh, &dir, None);
    let shrunk_out = text(&shrunk);
    assert!(shrunk.status.success(), "`{}`:\n{shrunk_out}", shrink[0]);
    let wrote = lines_after(&shrunk_out, "reproduce: ");
    assert_eq!(wrote, [format!("{prefix}run lease-from-receipt-shrunk.toml")], "{shrunk_out}");
    reruns(&dir, wrote[0], &rule);

    // run: its one line.
    let o = lab(&["run", "lease-from-receipt", "--seed", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let line = lines_after(&stdout_of(&o), "reproduce: ")[0].to_owned();
    assert_eq!(line, format!("{prefix}run lease-from-receipt --seed 1"));
    reruns(&dir, &line, &rule);

    // shrink -o: the line it prints about the file.
    let o = lab(&["shrink", "scenarios/lease-from-receipt.toml", "--seed", "1", "-o", "small.toml", "--budget", "40"]);
    assert!(o.status.success(), "{}", text(&o));
    let line = lines_after(&text(&o), "reproduce: ")[0].to_owned();
    assert_eq!(line, format!("{prefix}run small.toml"));
    reruns(&dir, &line, &rule);
    let _ = std::fs::remove_dir_all(&dir);
}

fn stdout_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_check_counterexample_reruns_outside_the_repository() {
    let dir = team_repo("outside-check");
    let mut c = Command::new(env!("CARGO_BIN_EXE_neli-lab"));
    // A known unsafe setting: leases counted from receipt, no proof
    // (scenarios/README.md, `check`).
    c.args(["check", "--members", "2", "--isolations", "0", "--variant", "lease-from-receipt"]).args([
        "--no-membership-proof",
        "--sim-seeds",
        "2",
        "--out",
        "found",
    ]);
    let o = in_dir(c, &dir, Some("scenarios"));
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    // Each replay line says what the simulator broke ("overlap", "rule
    // send-time", ...); the command under it breaks the same, run anew.
    let mut reproductions = 0;
    let mut lines = out.lines().map(str::trim);
    while let Some(l) = lines.next() {
        let Some(said) = l.strip_prefix("replay    REPRODUCED by the simulator with seed ") else { continue };
        let class = said.split(": ").nth(1).expect("seed N: what broke: ...");
        let line = lines.next().expect("the reproduction line under it");
        assert!(line.starts_with("NELI_LAB_SCENARIOS=scenarios ") && line.contains(" run found/check-"), "{line}");
        let mut sh = Command::new("sh");
        sh.args(["-c", line]);
        let again = text(&in_dir(sh, &dir, None));
        assert!(again.contains(&format!("violation {class}: ")), "`{line}` breaks {class} again:\n{again}");
        reproductions += 1;
    }
    assert!(reproductions > 0, "the simulator reproduces it:\n{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bare name found on `PATH` stays bare in the line, which reruns with
/// the same `PATH`.
#[test]
fn a_program_found_on_the_path_is_named_bare() {
    let dir = team_repo("outside-path");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_neli-lab")).parent().expect("the binary's folder");
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut c = Command::new("neli-lab");
    c.env("PATH", &path).args(["run", "lease-from-receipt"]);
    let o = in_dir(c, &dir, Some("scenarios"));
    let line = lines_after(&stdout_of(&o), "reproduce: ")[0].to_owned();
    assert_eq!(line, "NELI_LAB_SCENARIOS=scenarios neli-lab run lease-from-receipt --seed 0");
    let mut sh = Command::new("sh");
    sh.env("PATH", &path).args(["-c", &line]);
    let again = in_dir(sh, &dir, None);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert_eq!(first_rule(&text(&again)), first_rule(&text(&o)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file whose `name` differs from its file name is called by the file
/// name, the one the user types, everywhere after one warning
/// (scenarios/FORMAT.md, "name").
#[test]
fn a_scenario_is_called_by_its_file_name_after_a_warning() {
    let dir = team_repo("outside-names");
    let renamed = dir.join("scenarios/receipt.toml");
    std::fs::rename(dir.join("scenarios/lease-from-receipt.toml"), &renamed).expect("renamed");
    let mut c = Command::new(env!("CARGO_BIN_EXE_neli-lab"));
    c.args(["explore", "receipt", "--seeds", "1"]);
    let o = in_dir(c, &dir, Some("scenarios"));
    let (out, err) = (stdout_of(&o), String::from_utf8_lossy(&o.stderr).into_owned());
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    let warning = "warning: scenarios/receipt.toml: its name \"lease-from-receipt\" differs from its file name \
                   \"receipt\"; it is called \"receipt\" from here on";
    assert_eq!(err.lines().filter(|l| l.starts_with("warning: ")).collect::<Vec<_>>(), [warning], "{err}");
    assert!(!out.contains("lease-from-receipt"), "one name everywhere:\n{out}");
    assert!(out.lines().any(|l| l.starts_with("receipt ")), "the table row:\n{out}");
    assert!(out.contains("  seed 0 of receipt: rule "), "{out}");
    assert!(out.contains(" shrink receipt --seed 0 -o receipt-shrunk.toml\n"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
