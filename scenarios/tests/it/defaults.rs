//! A default is one value everywhere (scenarios/FORMAT.md,
//! "election.assignment"): the library's `Config`, `neli exec`'s flags,
//! a scenario file without the key, and the format's documentation.

use clap::Parser;
use neli::cli::{Cli, Cmd};
use neli_sim::Scenario;
use neli_sim::scenario::AssignmentName;

/// What `neli exec` runs when `--assignment` is not given.
fn exec_default() -> neli::Assignment {
    let args = ["neli", "exec", "--bootstrap-servers", "kafka:9092", "--group", "g", "--", "true"];
    let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{e}"));
    let Cmd::Exec(exec) = cli.command else { panic!("`neli exec` parses as exec") };
    exec.common.assignment
}

#[test]
fn the_assignment_default_is_the_same_in_the_library_the_cli_and_scenario_files() {
    let library = neli::Config::default().assignment;
    assert_eq!(exec_default(), library, "neli exec's --assignment default");
    assert_eq!(AssignmentName::default().neli(), library, "the scenario format's default");
    let text = "name = \"x\"\ndescription = \"d\"\nduration = \"5s\"\n[election]\nmembers = 1\n\
                heartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n";
    let s = Scenario::parse(text, "x.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.election.assignment.neli(), library, "a file without `assignment`");
    // Written out, either value is explicit: a generated file says which
    // coordinator it simulates, whatever the default becomes.
    let mut other = s.clone();
    other.election.assignment =
        if library == neli::Assignment::Range { AssignmentName::CooperativeSticky } else { AssignmentName::Range };
    for scenario in [&s, &other] {
        let written = scenario.to_toml(&[]).unwrap_or_else(|e| panic!("{e}"));
        let name = scenario.election.assignment.neli().name();
        assert!(written.contains(&format!("assignment = \"{name}\"")), "{written}");
    }

    let format = include_str!("../../FORMAT.md");
    let name = library.name();
    for shown in [
        format!("- `election.assignment` (optional, default `\"{name}\"`)"),
        format!("assignment = \"{name}\""),
        format!("# optional: {name} (default)"),
    ] {
        assert!(format.contains(&shown), "scenarios/FORMAT.md names the default: `{shown}`");
    }
}
