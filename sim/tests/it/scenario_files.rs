use neli_sim::Scenario;

// Every shipped scenario file parses; a typo'd field is an error naming the
// file, the line and the field (deny_unknown_fields).
#[test]
fn shipped_scenarios_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("scenarios dir") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
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
        &format!(
            "{base}[[faults]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"m5\"\nduration = \"1s\"\n"
        ),
        "f.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("f.toml:7:") && err.contains("\"m5\""),
        "{err}"
    );
    let err = Scenario::parse(&base.replace("\"1s\"", "\"1 sec\""), "g.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("g.toml:5:") && err.contains("unit"),
        "{err}"
    );
}
