use neli_sim::Scenario;

// Every shipped scenario file parses; a typo'd field is an error naming the
// file, the line and the field (deny_unknown_fields).
#[test]
fn shipped_scenarios_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("scenarios dir") {
        let path = entry.expect("dir entry").path();
        // Cargo.toml is the neli-scenarios crate's manifest, not a scenario.
        if path.extension().is_some_and(|e| e == "toml") && !path.ends_with("Cargo.toml") {
            Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 3, "expected the hazard scenarios, found {n}");
}

#[test]
fn unknown_field_names_file_line_and_field() {
    let text = "name = \"x\"\nduration = \"10s\"\n[election]\nmembers = 2\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\nsesion = 1\n";
    let err = Scenario::parse(text, "bad.toml").unwrap_err().to_string();
    assert!(err.starts_with("bad.toml:7:"), "{err}");
    assert!(err.contains("sesion"), "{err}");
}

#[test]
fn bad_target_and_duration_are_explained() {
    let base = "name = \"x\"\nduration = \"10s\"\n[election]\nmembers = 2\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n";
    let err = Scenario::parse(
        &format!("{base}[[faults]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"m5\"\nduration = \"1s\"\n"),
        "f.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("f.toml:7:") && err.contains("\"m5\""), "{err}");
    let err = Scenario::parse(&base.replace("\"1s\"", "\"1 sec\""), "g.toml").unwrap_err().to_string();
    assert!(err.starts_with("g.toml:5:") && err.contains("unit"), "{err}");
}

// Values that cannot happen as written are refused with the field, the value
// and the rule, instead of being run as something else (a negative length as
// zero, a fault after the end dropped) or exhausting memory.
#[test]
fn impossible_or_oversized_values_are_refused_naming_field_and_rule() {
    let base = "name = \"x\"\nduration = \"20s\"\n[election]\nmembers = 2\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n";
    let pause = |extra: &str| format!("{base}[[faults]]\nkind = \"pause\"\ntarget = \"m0\"\n{extra}\n");
    let cases: Vec<(String, &str)> = vec![
        (pause("at = \"1s\"\nduration = \"-5s\""), "faults.duration = \"-5s\": must be positive"),
        (pause("at = \"1s\"\nduration = \"0s\""), "faults.duration = \"0s\": must be positive"),
        (pause("at = \"50s\"\nduration = \"1s\""), "faults.at = \"50s\": at or after the end of the run"),
        (
            format!(
                "{base}[[faults]]\nat = \"1s\"\nkind = \"clock-drift\"\ntarget = \"m0\"\nppm = 9223372036854775807\n"
            ),
            "faults.ppm = 9223372036854775807: must be within",
        ),
        (
            format!("{base}[[faults]]\nat = \"1s\"\nkind = \"foreign-writer\"\npartition = 0\ncount = 4000000000\n"),
            "faults.count = 4000000000: at most",
        ),
        (format!("{base}[random]\nfaults = 4000000000\nkinds = [\"pause\"]\nmax_duration = \"1s\"\n"), "random.faults"),
        (base.replace("members = 2", "members = 100000"), "election.members = 100000: at most 64"),
        (base.replace("name = \"x\"", &format!("name = \"{}\"", "a".repeat(70_000))), "name: 70000 characters"),
        (format!("description = \"{}\"\n{base}", "d".repeat(70_000)), "description: 70000 characters"),
        (base.replace("\"20s\"", "\"1000000m\""), "duration = \"60000000s\": at most \"3600s\""),
    ];
    for (text, want) in cases {
        let err = Scenario::parse(&text, "v.toml").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with("v.toml"), "{err}");
        assert!(err.contains(want), "expected {want:?} in: {err}");
    }
    // Faults name their line.
    let err = Scenario::parse(&pause("at = \"1s\"\nduration = \"-5s\""), "v.toml").unwrap_err().to_string();
    assert!(err.starts_with("v.toml:7:"), "{err}");
}
