//! The command line's habits, the same in every command: thread counts,
//! the scenario folder, durations, "did you mean", the build named before
//! any verdict, completions and the man page, and a build script that lets
//! a second build be a no-op (scenarios/README.md, "Command line").

use std::process::{Command, Output};

use crate::{fixture, lab, scratch, stderr, stdout};

/// `neli-lab` with `NELI_LAB_SCENARIOS=scenarios`.
fn lab_with_scenarios(scenarios: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .args(args)
        .env("NELI_LAB_SCENARIOS", scenarios)
        .output()
        .expect("neli-lab runs")
}

/// Asserts `o` is a refusal (exit 2, no panic) whose message holds every one of `parts`.
fn refused(o: &Output, what: &str, parts: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: must exit 2\n{err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    for p in parts {
        assert!(err.contains(p), "{what}: {p:?} missing from\n{err}");
    }
}

// Every thread-count flag refuses 0 the same way, before anything runs:
// the flag, the value and what to write instead, exit 2 like clap's usage
// errors (`explore --jobs 0` used to run one thread).
#[test]
fn thread_flags_refuse_zero_naming_flag_value_and_fix() {
    let f = fixture("tiny-pause");
    let out = scratch("threads_zero");
    let out = out.to_str().unwrap();
    let jobs = "error: --jobs 0: at least 1 thread (leave it out for one per core)";
    let tune = ["tune", &f, "--heartbeat-timeout", "1s", "--session-timeout", "3s", "--seeds", "1", "--out", out];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["explore", &f, "--seeds", "1", "--jobs", "0"], jobs),
        (vec!["explore", "--all", "--seeds", "1", "--jobs", "0"], jobs),
        ([&tune[..], &["--jobs", "0"]].concat(), jobs),
        (vec!["bench", &f, "--jobs", "0"], jobs),
        (vec!["gate", "--seeds", "1", "--jobs", "0"], jobs),
        (vec!["check", "--threads", "0"], "error: --threads 0: at least 1 thread (leave it out for the default, 2)"),
    ];
    for (args, says) in cases {
        let o = lab(&args);
        refused(&o, &args.join(" "), &[says]);
        assert!(stdout(&o).is_empty(), "{args:?}: nothing runs: {}", stdout(&o));
    }
    let o = lab(&["explore", &f, "--seeds", "1", "--jobs", "two"]);
    refused(&o, "--jobs two", &["error: --jobs \"two\": not a thread count; write a whole number, 1 or more"]);
    let o = lab(&["explore", &f, "--seeds", "1", "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

// A scenario folder that is not there, is a file, or holds no scenario
// file is refused by every command that looks a name up in it, naming the
// variable and the path (it used to read as an empty catalog: `list`
// printed an empty table and exited 0). A scenario given as a path does
// not read the folder.
#[test]
fn a_missing_or_empty_scenario_folder_is_refused_by_every_command() {
    let dir = scratch("scenario_folder");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["run", "leader-pause"],
        vec!["replay", "leader-pause", "--seed", "1"],
        vec!["explore", "leader-pause", "--seeds", "1"],
        vec!["explore", "--all", "--seeds", "1"],
        vec!["shrink", "leader-pause", "--seed", "1"],
        vec![
            "tune",
            "leader-pause",
            "--heartbeat-timeout",
            "1s",
            "--session-timeout",
            "3s",
            "--seeds",
            "1",
            "--out",
            out,
        ],
        vec!["bench"],
        vec!["gate", "--seeds", "1"],
    ];
    for args in &commands {
        let o = lab_with_scenarios("/nonexistent", args);
        refused(&o, &args.join(" "), &["NELI_LAB_SCENARIOS=/nonexistent: no such folder"]);
        assert!(stdout(&o).is_empty(), "{args:?} printed: {}", stdout(&o));
    }
    let file = dir.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let file = file.to_str().unwrap();
    let o = lab_with_scenarios(file, &["list"]);
    refused(&o, "a file", &[&format!("NELI_LAB_SCENARIOS={file}: not a folder")]);
    let empty = dir.join("empty");
    std::fs::create_dir_all(empty.join("broken")).unwrap();
    let empty = empty.to_str().unwrap();
    for args in [vec!["list"], vec!["explore", "--all", "--seeds", "1"], vec!["run", "x"]] {
        let o = lab_with_scenarios(empty, &args);
        refused(&o, "an empty folder", &[&format!("NELI_LAB_SCENARIOS={empty}: holds no scenario file")]);
    }
    let o = lab_with_scenarios("/nonexistent", &["run", &fixture("tiny-pause"), "--seed", "1"]);
    assert_eq!(o.status.code(), Some(0), "a path needs no folder: {}", stderr(&o));
}

// Durations take decimals and several units, largest first, the same in
// a flag and in a scenario file (one parser, `neli::duration`); what
// cannot be a whole number of milliseconds is refused, never rounded.
#[test]
fn durations_take_decimals_and_compounds_in_flags_and_files() {
    let f = fixture("tiny-pause");
    let o = lab(&["explore", &f, "--seeds", "1", "--time-budget", "1m30s"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for (budget, says) in [
        ("0.5ms", "\"0.5ms\" is finer than a millisecond"),
        ("1.0005s", "\"1.0005s\" is finer than a millisecond"),
        ("1x", "\"1x\": unknown unit \"x\" (use ms, s, m or h; write e.g. 1.5s, 250ms, 1m30s)"),
        ("1s1m", "write each unit once, largest first"),
        ("-1s", "\"-1s\" is negative"),
        ("99999999999999999999h", "too large a duration"),
    ] {
        let o = lab(&["explore", &f, "--seeds", "1", &format!("--time-budget={budget}")]);
        refused(&o, budget, &["--time-budget", says]);
    }
    // The same scenario written with decimals and compounds replays the
    // same trace as with whole units.
    let plain = std::fs::read_to_string(&f).unwrap();
    let fancy = plain
        .replace("duration = \"19s\"", "duration = \"0.25m4s\"")
        .replace("heartbeat_timeout = \"1s\"", "heartbeat_timeout = \"0.5s500ms\"")
        .replace("at = \"9s\"", "at = \"8.5s500ms\"")
        .replace("duration = \"4s\"", "duration = \"3s1000ms\"");
    assert_ne!(plain, fancy);
    let dir = scratch("durations");
    for (sub, text) in [("plain", &plain), ("fancy", &fancy)] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::write(dir.join(sub).join("tiny-pause.toml"), text).unwrap();
    }
    let replay = ["replay", "tiny-pause", "--seed", "3"];
    let a = lab_with_scenarios(dir.join("plain").to_str().unwrap(), &replay);
    let b = lab_with_scenarios(dir.join("fancy").to_str().unwrap(), &replay);
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    assert_eq!(stdout(&a), stdout(&b), "the same durations, the same run");
    std::fs::write(dir.join("bad.toml"), plain.replace("session_timeout = \"3s\"", "session_timeout = \"3sec\""))
        .unwrap();
    let bad = dir.join("bad.toml");
    let o = lab(&["run", bad.to_str().unwrap()]);
    let at = format!("{}:8: election.session_timeout:", bad.display());
    refused(&o, "3sec", &[&at, "unknown unit \"sec\"", "write e.g. 1.5s, 250ms, 1m30s"]);
}

// A misspelt scenario name and a misspelt key of a scenario file get the
// closest known name; the key's message names the file, the line and the
// table.
#[test]
fn misspelt_names_and_keys_get_a_suggestion() {
    let o = lab(&["run", "leader-paus"]);
    refused(&o, "leader-paus", &["leader-paus: no scenario of that name", "did you mean \"leader-pause\"?"]);
    let o = lab(&["run", "lease-from-reciept"]);
    refused(&o, "a broken one", &["did you mean \"lease-from-receipt\"?"]);
    let o = lab(&["run", "zzzzzzzzzzzz"]);
    refused(&o, "nothing close", &["zzzzzzzzzzzz: no scenario of that name"]);
    assert!(!stderr(&o).contains("did you mean"), "{}", stderr(&o));
    let o = lab_with_scenarios("embedded", &["run", "leader-paus"]);
    refused(&o, "embedded", &["did you mean \"leader-pause\"?"]);

    let dir = scratch("misspelt_key");
    let text = std::fs::read_to_string(fixture("tiny-pause")).unwrap();
    let path = dir.join("typo.toml");
    std::fs::write(&path, text.replace("heartbeat_timeout", "heartbeat_timout")).unwrap();
    let o = lab(&["run", path.to_str().unwrap()]);
    let at = format!("{}:7: unknown field `heartbeat_timout` in [election]", path.display());
    refused(&o, "heartbeat_timout", &[&at, "did you mean `heartbeat_timeout`?"]);
    std::fs::write(&path, text.replace("kind = \"pause\"", "kind = \"puase\"")).unwrap();
    let o = lab(&["run", path.to_str().unwrap()]);
    refused(&o, "puase", &[":14: faults.kind: unknown variant `puase`; did you mean `pause`?"]);
}

// `replay` names its build like every command, on stderr: its stdout, the
// trace, stays byte-identical whichever build replays it (the snapshots).
#[test]
fn replay_names_its_build_on_stderr() {
    let o = lab(&["replay", &fixture("tiny-pause"), "--seed", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().next(), Some(neli_lab::build_line().as_str()));
    assert!(!stdout(&o).contains(neli_lab::BUILD), "{}", stdout(&o));
    let run = lab(&["run", &fixture("tiny-pause"), "--seed", "3"]);
    assert_eq!(stdout(&run).lines().next(), Some(neli_lab::build_line().as_str()), "the same line as run's");
}

const SUBCOMMANDS: [&str; 13] = [
    "list",
    "run",
    "replay",
    "explore",
    "merge",
    "diff",
    "shrink",
    "tune",
    "check",
    "bench",
    "gate",
    "completions",
    "man",
];

// Completions for every shell clap_complete knows; bash's offers every
// subcommand. An unknown shell is a usage error.
#[test]
fn completions_cover_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = lab(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        assert!(stdout(&o).contains("neli-lab") || stdout(&o).contains("neli__lab"), "{shell}");
    }
    let bash = stdout(&lab(&["completions", "bash"]));
    for sub in SUBCOMMANDS {
        assert!(bash.contains(&format!(" {sub} ")) || bash.contains(&format!(" {sub}\"")), "{sub} missing:\n{bash}");
    }
    assert!(bash.contains("--jobs") && bash.contains("--time-budget"), "flags too");
    refused(&lab(&["completions", "tcsh"]), "tcsh", &["invalid value 'tcsh'"]);
}

// `man` prints a roff page naming every subcommand; `man SUB` the
// subcommand's own page with its flags.
#[test]
fn man_page_names_every_subcommand() {
    let o = lab(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH neli-lab 1") && page.contains(".SH SUBCOMMANDS"), "{page}");
    for sub in SUBCOMMANDS {
        assert!(page.contains(&format!("neli\\-lab\\-{sub}(1)")), "{sub} missing:\n{page}");
    }
    let explore = stdout(&lab(&["man", "explore"]));
    assert!(explore.contains(".TH neli-lab-explore 1") && explore.contains("\\-\\-time\\-budget"), "{explore}");
    refused(&lab(&["man", "explor"]), "man explor", &["man explor: no such subcommand", "explore"]);
}

// The build script asks git for the tree's state without refreshing the
// index: a plain `git status` rewrites `.git/index`, which the script
// watches, so every build after a fresh clone re-ran it and recompiled
// neli-lab. Every git command goes through the one helper that says so.
#[test]
fn build_script_runs_git_without_optional_locks() {
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/build.rs")).expect("build.rs");
    assert_eq!(script.matches("Command::new(\"git\")").count(), 1, "one way to run git");
    let helper = script.split("fn git(").nth(1).and_then(|s| s.split("\n}\n").next()).expect("fn git");
    assert!(helper.contains(".arg(\"--no-optional-locks\")"), "{helper}");
    assert!(helper.contains(".env(\"GIT_OPTIONAL_LOCKS\", \"0\")"), "{helper}");
    assert!(script.contains("git(&root, &[\"status\""), "status goes through git()");
}

// Every path the build script watches exists: cargo re-runs a build script
// on every build while one is missing (`.git/packed-refs` in a worktree or
// a fresh clone), so neli-lab was recompiled by each `cargo build`. Read
// from what the script told cargo for this very build.
#[test]
fn build_script_watches_only_paths_that_exist() {
    let output = std::path::Path::new(env!("OUT_DIR")).with_file_name("output");
    let text = std::fs::read_to_string(&output).expect("the build script's output");
    let watched: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("cargo:rerun-if-changed=")).collect();
    assert!(watched.len() > 10, "the tree is watched: {watched:?}");
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for w in watched {
        assert!(manifest.join(w).exists(), "{w} is watched but missing: every build would re-run the script");
        assert!(!w.ends_with(".git"), "{w}: the git folder changes with every git command");
    }
}
