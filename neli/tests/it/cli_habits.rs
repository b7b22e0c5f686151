//! The `neli` command line's habits an operator relies on: every flag can
//! come from a `NELI_*` environment variable (as a pod spec sets them), a
//! flag given on the command line wins, diagnostics can be JSON lines, and
//! the CLI ships its completions and man page.

use std::process::{Command, Output};

fn neli() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_neli"));
    // Whatever the test runner's environment holds stays out.
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("NELI_") {
            c.env_remove(k);
        }
    }
    c
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

fn explain(c: &mut Command) -> Output {
    c.args(["exec", "--explain"]).output().expect("neli runs")
}

#[test]
fn every_flag_of_an_election_comes_from_the_environment() {
    let out = explain(
        neli()
            .env("NELI_BOOTSTRAP_SERVERS", "127.0.0.1:1")
            .env("NELI_GROUP", "billing")
            .env("NELI_HEARTBEAT_TIMEOUT", "2s")
            .env("NELI_SESSION_TIMEOUT", "6s")
            .env("NELI_GRACE", "100ms"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("lease T = 2s, session S = 6s, grace G = 100ms"), "{shown}");
}

#[test]
fn a_flag_on_the_command_line_wins_over_its_variable() {
    let out = neli()
        .env("NELI_BOOTSTRAP_SERVERS", "127.0.0.1:1")
        .env("NELI_GROUP", "billing")
        .env("NELI_HEARTBEAT_TIMEOUT", "2s")
        .args(["exec", "--heartbeat-timeout", "1s", "--session-timeout", "3s", "--explain"])
        .output()
        .expect("neli runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("lease T = 1s, session S = 3s"), "{}", text(&out.stdout));
}

#[test]
fn a_bad_value_in_a_variable_is_refused_naming_the_variable() {
    let out = explain(
        neli()
            .env("NELI_BOOTSTRAP_SERVERS", "127.0.0.1:1")
            .env("NELI_GROUP", "billing")
            .env("NELI_HEARTBEAT_TIMEOUT", "soon"),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("NELI_HEARTBEAT_TIMEOUT") && err.contains("soon"), "{err}");
}

#[test]
fn help_names_each_flags_variable() {
    let out = neli().args(["exec", "--help"]).output().expect("neli runs");
    let help = text(&out.stdout);
    for var in
        ["NELI_BOOTSTRAP_SERVERS", "NELI_GROUP", "NELI_HEARTBEAT_TIMEOUT", "NELI_METRICS_ADDR", "NELI_LOG_FORMAT"]
    {
        assert!(help.contains(&format!("[env: {var}")), "{var} missing from:\n{help}");
    }
}

#[test]
fn json_log_format_writes_one_json_object_per_line() {
    // An unreachable broker: neli gives up after the connect timeout and
    // says so in its diagnostics.
    let out = neli()
        .env("RUST_LOG", "neli=debug")
        .args(["--log-format", "json", "watch", "--bootstrap-servers", "127.0.0.1:1", "--group", "g"])
        .args(["--connect-timeout", "200ms"])
        .output()
        .expect("neli runs");
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with('{')).collect();
    assert!(!lines.is_empty(), "no JSON line on stderr:\n{err}");
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v.get("level").is_some() && v.get("timestamp").is_some(), "{line}");
    }
    // The same from the environment.
    let out = neli()
        .env("RUST_LOG", "neli=debug")
        .env("NELI_LOG_FORMAT", "json")
        .args(["watch", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--connect-timeout", "200ms"])
        .output()
        .expect("neli runs");
    assert!(text(&out.stderr).lines().any(|l| l.starts_with("{\"timestamp\"")), "{}", text(&out.stderr));
}

#[test]
fn completions_and_the_man_page_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = neli().args(["completions", shell]).output().expect("neli runs");
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for sub in ["exec", "watch", "end", "holds"] {
            assert!(script.contains(sub), "{shell} completion misses {sub}");
        }
    }
    let out = neli().arg("man").output().expect("neli runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(page.starts_with(".ie") || page.contains(".TH neli"), "not a man page:\n{page}");
    for sub in ["exec", "watch", "end", "holds", "completions"] {
        assert!(page.contains(sub), "the man page misses {sub}");
    }
    let out = neli().args(["completions", "tcsh"]).output().expect("neli runs");
    assert_eq!(out.status.code(), Some(2), "an unknown shell is a usage error");
}
