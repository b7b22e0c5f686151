use neli_sim::Scenario;
use neli_sim::scenario::{BrokerId, Dur, Fault, FaultKind, Picks, Target};

// Every shipped scenario file parses; a typo'd field is an error naming the
// file, the line and the field (deny_unknown_fields).
#[test]
fn shipped_scenarios_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("scenarios dir") {
        let path = entry.expect("dir entry").path();
        // Cargo.toml is the neli-lab crate's manifest, not a scenario.
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
            "faults.count = 4000000000: at least 1 and at most",
        ),
        (
            format!(
                "{base}[[faults]]\nat = \"1s\"\nkind = \"foreign-writer\"\npartition = 0\ncount = 4\nmisplaced = true\ngarbage = true\n"
            ),
            "faults.misplaced = true: a misplaced record is a well-formed heartbeat",
        ),
        (
            format!(
                "{base}[[faults]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"m0\"\nduration = \"1s\"\nmisplaced = true\n"
            ),
            "misplaced",
        ),
        (format!("{base}[random]\nfaults = 4000000000\nkinds = [\"pause\"]\nmax_duration = \"1s\"\n"), "random.faults"),
        (base.replace("members = 2", "members = 100000"), "election.members = 100000: at most 64"),
        (base.replace("name = \"x\"", &format!("name = \"{}\"", "a".repeat(70_000))), "name: 70000 characters"),
        (format!("description = \"{}\"\n{base}", "d".repeat(70_000)), "description: 70000 characters"),
        (base.replace("\"20s\"", "\"1000000m\""), "duration = \"60000000s\": at most \"3600s\""),
        (
            base.replace("[election]", "[cluster]\nrevoked_barrier = false\n[election]\nassignment = \"range\""),
            "cluster.revoked_barrier = false: only the cooperative-sticky assignment withholds a moving",
        ),
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

const BASE: &str =
    "name = \"x\"\nduration = \"20s\"\n[election]\nmembers = 2\nheartbeat_timeout = \"1s\"\nsession_timeout = \"3s\"\n";

// Every fault kind is documented: scenarios/FORMAT.md's table has its row,
// under the name serde reads and writes.
#[test]
fn every_fault_kind_has_its_format_row() {
    let format = include_str!("../../../scenarios/FORMAT.md");
    assert!(FaultKind::ALL.len() >= 16);
    for kind in FaultKind::ALL {
        let serde_name = serde_json::to_string(kind).expect("serializes");
        assert_eq!(serde_name, format!("\"{}\"", kind.name()), "{kind:?}");
        assert!(format.contains(&format!("| `{}` |", kind.name())), "scenarios/FORMAT.md has no row for `{kind}`");
    }
}

// Every kind the generator can draw reads back from the file it writes:
// writing a scenario is serializing it.
#[test]
fn every_fault_kind_round_trips_through_a_file() {
    let picks = Picks {
        member: Target::Leader,
        other: Target::Member(1),
        coordinator: BrokerId(0),
        to_coordinator: false,
        length: Dur(1500),
        latency: Dur(80),
        by: Dur(-300),
        ppm: 2000,
        count: 3,
        garbage: false,
    };
    // Two brokers: isolate-coordinator needs the partition leader elsewhere;
    // static-replace needs static membership and a spare.
    let two = format!(
        "{BASE}static_membership = true\nspares = 1\ngrace = \"1100ms\"\n[cluster]\nbrokers = 2\npartition_leader = \"b1\"\n"
    );
    let mut s = Scenario::parse(&two, "base.toml").expect("valid");
    for (i, kind) in FaultKind::ALL.iter().enumerate() {
        s.push_fault(Dur(1000 + i as i64 * 100), kind.draw(&picks));
    }
    let text = s.to_toml(&["every kind".into()]).expect("writable");
    let back = Scenario::parse(&text, "written.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.timed_faults().collect::<Vec<_>>(), s.timed_faults().collect::<Vec<_>>());
    assert_eq!(back.to_toml(&["every kind".into()]).expect("writable"), text);
}

// A fault carries exactly its kind's fields: a missing one and a stray one
// are both named, and so is the field of a bad value.
#[test]
fn fault_fields_are_exactly_the_kinds() {
    let fault = |body: &str| format!("{BASE}[[faults]]\nat = \"1s\"\n{body}\n");
    let cases = [
        (
            "kind = \"close\"\ntarget = \"m0\"\nduration = \"2s\"",
            "faults.duration: kind \"close\" has no field `duration`",
        ),
        ("kind = \"pause\"\ntarget = \"m0\"", "kind \"pause\" requires field `duration`"),
        ("kind = \"pause\"\ntarget = \"b0\"\nduration = \"1s\"", "needs a member"),
        ("kind = \"broker-crash\"\ntarget = \"m1\"", "broker-crash needs a broker"),
        ("kind = \"pause\"\ntarget = \"m01\"\nduration = \"1s\"", "\"m01\" is not a host"),
        ("kind = \"pause\"\ntarget = \"m0\"\nduration = \"soon\"", "faults.duration: invalid duration"),
        (
            "kind = \"foreign-writer\"\npartition = 1\ncount = 1",
            "faults.partition = 1: the election topic has partitions 0..0",
        ),
        ("kind = \"crash\"\ntarget = \"b7\"", "needs a member"),
        ("kind = \"drop-connections\"\ntarget = \"b7\"", "faults.target = \"b7\": no such broker"),
        (
            "on = \"proof-accepted\"\nkind = \"pause\"\ntarget = \"leader\"\nduration = \"1s\"",
            "faults.on = \"proof-accepted\": kind \"pause\" with target = \"leader\"; a triggered fault needs a member target",
        ),
        (
            "on = \"assigned\"\nkind = \"foreign-writer\"\npartition = 0\ncount = 1",
            "a triggered fault needs a member target",
        ),
        ("on = \"soon\"\nkind = \"pause\"\ntarget = \"m0\"\nduration = \"1s\"", "unknown variant `soon`"),
        (
            "of = \"m1\"\nkind = \"resume\"\ntarget = \"m0\"",
            "faults.of = \"m1\": `of` names the member whose moment starts the fault; it needs `on`",
        ),
        (
            "on = \"acquired\"\nof = \"leader\"\nkind = \"resume\"\ntarget = \"m0\"",
            "faults.of = \"leader\": on = \"acquired\" is a moment of one member: name it (m0, m1, ...)",
        ),
        ("on = \"acquired\"\nof = \"b0\"\nkind = \"resume\"\ntarget = \"m0\"", "faults.of = \"b0\""),
        (
            "on = \"acquired\"\nof = \"m2\"\nkind = \"resume\"\ntarget = \"m0\"",
            "faults.of = \"m2\": not a member (m0..m1)",
        ),
        (
            "kind = \"resume\"\ntarget = \"m0\"\nduration = \"1s\"",
            "faults.duration: kind \"resume\" has no field `duration`",
        ),
        ("kind = \"resume\"\ntarget = \"b0\"", "needs a member"),
    ];
    for (body, want) in cases {
        let err = Scenario::parse(&fault(body), "k.toml").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with("k.toml:"), "{err}");
        assert!(err.contains(want), "expected {want:?} in: {err}");
    }
    let err = Scenario::parse(&format!("{BASE}[random]\nfaults = 2\nkinds = []\nmax_duration = \"1s\"\n"), "r.toml")
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("random.kinds = []"), "{err}");
    let err = Scenario::parse(
        &format!("{BASE}[random]\nfaults = 2\nkinds = [\"pause\", \"resume\"]\nmax_duration = \"1s\"\n"),
        "r.toml",
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(err.contains("random.kinds: resume is not drawn at random"), "{err}");
    let err = Scenario::parse(&BASE.replace("members = 2", "members = \"two\""), "e.toml").unwrap_err().to_string();
    assert!(err.contains("election.members"), "a type error names its field: {err}");
}

// `of` (scenarios/FORMAT.md, `on`) names the one member whose moment starts
// a fault: a member that does not exist is refused without the `leader`
// hint the target fields get, and a fault aimed this way needs no member
// target of its own.
#[test]
fn of_names_the_member_whose_moment_starts_the_fault() {
    // `of` names one member: no `leader` hint for it.
    let of =
        format!("{BASE}[[faults]]\nat = \"1s\"\non = \"acquired\"\nof = \"m2\"\nkind = \"resume\"\ntarget = \"m0\"\n");
    let err = Scenario::parse(&of, "k.toml").map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("faults.of = \"m2\"") && !err.contains("leader"), "{err}");
    // With `of`, a fault needs no member target: a cut when m1 acquires.
    let cut = format!(
        "{BASE}[[faults]]\nat = \"1s\"\non = \"acquired\"\nof = \"m1\"\nkind = \"partition\"\na = \"m0\"\nb = \"b0\"\nduration = \"1s\"\n"
    );
    let s = Scenario::parse(&cut, "cut.toml").unwrap_or_else(|e| panic!("{e}"));
    let f = s.timed_faults().next().expect("the cut");
    assert_eq!(
        (f.on, f.of),
        (Some(neli_sim::scenario::Trigger::Acquired), Some(neli_sim::scenario::Target::Member(1)))
    );
}

// A fault built in code ([`Scenario::fault`], [`Scenario::fault_on`], and
// the harness's) is held to a file's rules: its values and its aim, not
// only what it names.
#[test]
fn a_fault_built_in_code_is_held_to_a_files_rules() {
    use neli_sim::scenario::Trigger;
    let base = || Scenario::parse(BASE, "base.toml").expect("valid");
    let pause = |duration| Fault::Pause { target: Target::Member(0), duration };
    let e = base().fault(Dur(1000), pause(Dur(-5))).unwrap_err().to_string();
    assert!(e.contains("fault 1 (pause at 1s)") && e.contains("faults.duration = \"-5ms\": must be positive"), "{e}");
    let leader = Fault::Pause { target: Target::Leader, duration: Dur(500) };
    let e = base().fault_on(Dur(0), Trigger::Acquired, None, leader).unwrap_err().to_string();
    assert!(e.contains("a triggered fault needs a member target"), "{e}");
    let e = base().fault_on(Dur(0), Trigger::Acquired, Some(Target::Member(3)), pause(Dur(500))).unwrap_err();
    assert!(
        e.to_string().contains("fault 1 (pause on Acquired of m3)") && e.to_string().contains("not a member"),
        "{e}"
    );
    let s = base().fault_on(Dur(0), Trigger::Acquired, Some(Target::Member(1)), pause(Dur(500))).expect("valid");
    let back = Scenario::parse(&s.to_toml(&[]).expect("writable"), "back.toml").expect("reads back");
    assert_eq!(back.timed_faults().collect::<Vec<_>>(), s.timed_faults().collect::<Vec<_>>());
}

// A bound in [expect] is the most a run may show; a negative one would be
// held by every run. Refused with the file, the
// line of the field, the field and the rule.
#[test]
fn negative_expect_durations_are_refused_naming_line_field_and_rule() {
    for key in ["max_overlap", "max_gap", "max_failover"] {
        let text = format!("{BASE}[expect]\n{key} = \"-1s\"\n");
        let err = Scenario::parse(&text, "x.toml").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with("x.toml:8: "), "{err}");
        assert!(err.contains(&format!("expect.{key} = \"-1s\": must not be negative")), "{err}");
    }
    assert!(Scenario::parse(&format!("{BASE}[expect]\nmax_overlap = \"0s\"\n"), "x.toml").is_ok());
}

// A `[cluster]` timing override is validated like every other
// field: a negative pause, or one longer than any run, is refused with the
// file, the line of the field, the field and the rule.
#[test]
fn bad_broker_timing_overrides_are_refused_naming_line_field_and_rule() {
    for (key, value, rule) in [
        ("rebalance_pause", "-1s", "must not be negative"),
        ("initial_rebalance_delay", "-5ms", "must not be negative"),
        ("leave_pause", "1000h", "at most"),
        ("expiry_check_interval", "-1s", "must not be negative"),
    ] {
        let text = BASE.replacen("[election]", &format!("[cluster]\n{key} = \"{value}\"\n\n[election]"), 1);
        let line = text.lines().position(|l| l.starts_with(key)).expect("the override's line") + 1;
        let err = Scenario::parse(&text, "x.toml").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with(&format!("x.toml:{line}: cluster.{key} = ")), "{err}");
        assert!(err.contains(rule), "expected {rule:?} in: {err}");
    }
    let ok = BASE.replacen("[election]", "[cluster]\nrebalance_pause = \"0s\"\n\n[election]", 1);
    assert_eq!(Scenario::parse(&ok, "x.toml").expect("a zero pause is fine").cluster.broker().rebalance_pause_ms, 0);
}

// Settings neli's own validation refuses (`ElectionSpec::neli_config`,
// the library's `ConfigBuilder::build`) must not run and fail as a protocol
// violation (exit 1): they are refused when the file is read, at the line
// of the field at fault, quoting the library's own rule, unless the file
// says why it runs them anyway (`unchecked`).
#[test]
fn settings_neli_refuses_are_refused_with_its_rule_unless_unchecked() {
    let cases = [
        ("max_poll_interval = \"1ms\"", 7, "election.max_poll_interval = \"1ms\""),
        ("heartbeat_timeout = \"3s\"", 5, "election.heartbeat_timeout = \"3s\""),
        ("mode = \"multi-role\"\nexclusive = false", 5, "election.heartbeat_timeout = \"1s\""),
        ("membership_proof = true\nmax_poll_interval = \"4s\"", 8, "election.max_poll_interval = \"4s\""),
        ("variant = \"lease-from-receipt\"", 7, "election.variant = \"lease-from-receipt\""),
        // The consumer protocol's rule, G >= T + 10 % with the proof on.
        ("group_protocol = \"consumer\"\ngrace = \"500ms\"", 8, "election.grace = \"500ms\""),
        (
            "group_protocol = \"consumer\"\ngrace = \"1s\"\nmembership_proof = false",
            9,
            "election.membership_proof = false",
        ),
    ];
    for (setting, line, shown) in cases {
        let key = setting.lines().last().unwrap().split(" = ").next().unwrap();
        let text = if key == "heartbeat_timeout" {
            BASE.replace("heartbeat_timeout = \"1s\"", setting)
        } else {
            format!("{BASE}{setting}\n")
        };
        let err = Scenario::parse(&text, "x.toml").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with(&format!("x.toml:{line}: {shown}: neli refuses this configuration: ")), "{err}");
        assert!(err.ends_with("says why in election.unchecked = \"...\""), "{err}");
        // The rule is the library's own text, and the settings run when
        // the file says why.
        let waived = Scenario::parse(&format!("{text}unchecked = \"shows why\"\n"), "x.toml").expect("unchecked");
        let rule = match waived.election.neli_config() {
            Err(e) => e.to_string(),
            Ok(_) => "no such configuration".to_owned(),
        };
        assert!(key == "variant" || err.contains(&rule), "{rule:?} not in {err}");
        assert_eq!(waived.election.unchecked.as_deref(), Some("shows why"));
    }
    let err = Scenario::parse(&format!("{BASE}max_poll_interval = \"0ms\"\n"), "x.toml").unwrap_err().to_string();
    assert!(
        err.contains("max.poll.interval.ms (0ns) must be above heartbeat_timeout + session.timeout.ms (1s + 3s) with the membership proof"),
        "{err}"
    );
    // A reason must be given; a rebalance timeout of 0 is refused without
    // the proof too, and with a reason (Kafka's least is 1 ms).
    let err = Scenario::parse(&format!("{BASE}max_poll_interval = \"1s\"\nunchecked = \" \"\n"), "x.toml");
    let err = err.map(|_| ()).unwrap_err().to_string();
    assert!(err.starts_with("x.toml:8: election.unchecked = \" \": give the reason"), "{err}");
    let no_proof = format!("{BASE}membership_proof = false\nmax_poll_interval = \"0ms\"\n");
    let err = Scenario::parse(&no_proof, "x.toml").map(|_| ()).unwrap_err().to_string();
    assert!(err.starts_with("x.toml:8: election.max_poll_interval = \"0s\": must be positive"), "{err}");
    let waived = format!("{BASE}max_poll_interval = \"0ms\"\nunchecked = \"why\"\n");
    let err = Scenario::parse(&waived, "x.toml").map(|_| ()).unwrap_err().to_string();
    assert!(err.starts_with("x.toml:7: election.max_poll_interval = \"0s\": must be positive"), "{err}");
    // Settings neli accepts need no reason, and one changes nothing.
    let ok = Scenario::parse(&format!("{BASE}max_poll_interval = \"4001ms\"\n"), "x.toml").expect("accepted");
    assert!(ok.election.neli_config().is_ok() && ok.election.neli_refusal().is_none());
}

// A partition of a host from itself would do nothing, silently: a
// file that says so is refused at the fault's line, naming the field.
#[test]
fn a_cut_of_a_host_from_itself_is_refused() {
    let cases = [
        (
            "kind = \"partition\"\na = \"m1\"\nb = \"m1\"\nduration = \"1s\"",
            "faults.b = \"m1\": the same host as a = \"m1\"; a partition cuts the link between two different hosts",
        ),
        ("kind = \"partition\"\na = \"leader\"\nb = \"leader\"\nduration = \"1s\"", "faults.b = \"leader\""),
        (
            "kind = \"one-way\"\nfrom = \"b0\"\nto = \"b0\"\nduration = \"1s\"",
            "faults.to = \"b0\": the same host as from = \"b0\"; a one-way cut",
        ),
    ];
    for (body, want) in cases {
        let text = format!("{BASE}[[faults]]\nat = \"1s\"\n{body}\n");
        let err = Scenario::parse(&text, "x.toml").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with("x.toml:7: "), "{err}");
        assert!(err.contains(want), "expected {want:?} in: {err}");
    }
    // A partition between `leader` and a member is resolved when it starts.
    let text =
        format!("{BASE}[[faults]]\nat = \"1s\"\nkind = \"partition\"\na = \"leader\"\nb = \"m1\"\nduration = \"1s\"\n");
    assert!(Scenario::parse(&text, "x.toml").is_ok());
}

// The random generator never draws a partition of a member from itself
// (one that did would draw no broker in one of members + 1 draws), so every schedule it draws reads back from the file it writes.
#[test]
fn the_generator_draws_no_partition_of_a_member_from_itself() {
    for members in 1..=3 {
        let text = format!(
            "{}[random]\nfaults = 20\nkinds = [\"partition\"]\nmax_duration = \"2s\"\n",
            BASE.replace("members = 2", &format!("members = {members}"))
        );
        let s = Scenario::parse(&text, "r.toml").expect("valid");
        for seed in 0..50 {
            let drawn = neli_sim::schedule::materialize(&s, seed);
            for f in drawn.timed_faults() {
                if let neli_sim::scenario::Fault::Partition { a, b, .. } = f.fault {
                    assert_ne!(a, b, "members {members} seed {seed}");
                }
            }
            let written = drawn.to_toml(&[]).expect("writable");
            Scenario::parse(&written, "drawn.toml").unwrap_or_else(|e| panic!("{e}\n{written}"));
        }
    }
}

// Static membership's replacement needs its settings, each
// refusal naming the field and the rule.
#[test]
fn static_replacement_needs_static_membership_and_a_spare_per_fault() {
    let replace = "[[faults]]\nat = \"5s\"\nkind = \"static-replace\"\ntarget = \"leader\"\n";
    let cases = [
        (format!("{BASE}{replace}"), "static-replace needs election.static_membership = true"),
        (
            format!("{BASE}static_membership = true\nspares = 1\ngrace = \"1100ms\"\n{replace}{replace}"),
            "more static-replace faults than spare processes (election.spares = 1)",
        ),
        (format!("{BASE}spares = 1\n"), "election.spares = 1: spares take over a member's static instance id"),
        (
            format!("{BASE}static_membership = true\ngroup_protocol = \"consumer\"\ngrace = \"1100ms\"\n"),
            "simulated for the classic protocol only",
        ),
        (
            format!("{BASE}static_membership = true\n"),
            "grace (0ns) must be at least heartbeat_timeout + 10% (1.1s, with T = 1s) with static membership (group.instance.id)",
        ),
        (
            format!("{BASE}[random]\nfaults = 1\nkinds = [\"static-replace\"]\nmax_duration = \"1s\"\n"),
            "static-replace is not drawn at random",
        ),
    ];
    for (text, want) in cases {
        let err = Scenario::parse(&text, "x.toml").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with("x.toml:"), "{err}");
        assert!(err.contains(want), "expected {want:?} in: {err}");
    }
    let ok = format!("{BASE}static_membership = true\nspares = 1\ngrace = \"1100ms\"\n{replace}");
    let s = Scenario::parse(&ok, "x.toml").expect("static membership with a spare and G = T");
    assert_eq!(s.member_names(), ["m0", "m1", "m2"], "the spare is a host of its own");
}

// A misplaced writer's fault reads back as written (the field is left out
// of files where it is false, so older files and outputs are unchanged).
#[test]
fn a_misplaced_foreign_writer_round_trips_and_plain_ones_stay_as_they_were() {
    let text = format!(
        "{BASE}[[faults]]\nat = \"1s\"\nkind = \"foreign-writer\"\npartition = 0\ncount = 4\nmisplaced = true\n\
         [[faults]]\nat = \"2s\"\nkind = \"foreign-writer\"\npartition = 0\ncount = 4\n"
    );
    let s = Scenario::parse(&text, "m.toml").expect("valid");
    let faults: Vec<_> = s.timed_faults().map(|f| f.fault.clone()).collect();
    assert_eq!(
        faults,
        vec![
            Fault::ForeignWriter { partition: 0, count: 4, garbage: false, misplaced: true },
            Fault::ForeignWriter { partition: 0, count: 4, garbage: true, misplaced: false },
        ]
    );
    let written = s.to_toml(&[]).expect("writable");
    assert_eq!(written.matches("misplaced = true").count(), 1, "{written}");
    assert!(!written.contains("misplaced = false"), "{written}");
    let back = Scenario::parse(&written, "back.toml").expect("reads back");
    assert_eq!(back.timed_faults().map(|f| f.fault.clone()).collect::<Vec<_>>(), faults);
}
