//! The library pieces the CLI is built from.

use neli_lab::schedule;
use neli_lab::stats::percentile;
use neli_sim::Scenario;
use neli_sim::scenario::FaultKind;
use proptest::strategy::ValueTree;

fn fixture(name: &str) -> Scenario {
    Scenario::load(std::path::Path::new(&crate::fixture(name))).expect("fixture")
}

// Nearest-rank percentiles: p50 of 1..=10 is 5, p99 and max are 10.
#[test]
fn percentiles_are_nearest_rank() {
    let v: Vec<u64> = (1..=10).rev().collect();
    assert_eq!((percentile(&v, 50), percentile(&v, 99), percentile(&v, 100)), (5, 10, 10));
    assert_eq!(percentile(&[], 50), 0);
}

// The proptest schedule for a seed is a pure function of the seed, honours
// `[random]` (count, kinds, start window, durations) and can be simplified.
#[test]
fn random_schedule_is_seeded_bounded_and_shrinkable() {
    let s = fixture("tiny-random");
    let a = schedule::materialize(&s, 9);
    let b = schedule::materialize(&s, 9);
    assert!(a.random.is_none());
    assert_eq!(format!("{:?}", a.faults), format!("{:?}", b.faults));
    assert_eq!(a.faults.len(), 3);
    for f in a.timed_faults() {
        let kind = f.fault.kind();
        assert!([FaultKind::Pause, FaultKind::Crash, FaultKind::Partition, FaultKind::ClockStep].contains(&kind));
        assert!(f.at.ms() >= 1600 && f.at.ms() <= 9600, "{f:?}");
        if kind != FaultKind::ClockStep {
            assert!(f.fault.duration().is_some_and(|d| d.ms() >= 500 && d.ms() <= 4000), "{f:?}");
        }
    }
    let mut tree = schedule::tree(&s, 9).expect("a value tree");
    assert!(tree.simplify(), "a schedule can be simplified");
}

// A scenario written back as TOML parses to the same scenario.
#[test]
fn written_scenario_round_trips() {
    for name in ["leader-pause", "multi-role-scale", "clock-skew", "foreign-writer", "swarm"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{name}.toml"));
        let s = Scenario::load(&path).expect("shipped");
        let text = s.to_toml(&["header".into()]).expect("writable");
        let back = Scenario::parse(&text, "<written>").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.to_toml(&["header".into()]).expect("writable"), text);
        let faults = |s: &Scenario| s.timed_faults().cloned().collect::<Vec<_>>();
        assert_eq!(faults(&back), faults(&s));
        assert_eq!(format!("{:?}", back.election), format!("{:?}", s.election));
    }
}

// The timeline reads leadership from the run's typed history and fault
// bands from the faults as played: a bar from Acquired to Revoked, a stopped
// process closes its bars, a pause band lasts its duration; overlaps come
// from the typed violations.
#[test]
fn timeline_reads_leadership_from_the_history_and_bands_from_the_faults() {
    use neli_sim::history::{Entry, History, Process, Told};
    let told = |at, member: &str, token| Told { at, member: member.into(), role: 0, token, log_epoch: 0 };
    let started = |member: &str, slot| Entry::Started(Process { at: 0, member: member.into(), slot });
    let history = History {
        scenario: "story".into(),
        seed: 1,
        end: 30_000,
        entries: vec![
            started("m0", 0),
            started("m1", 1),
            Entry::Acquired(told(3000, "m0", Some(4))),
            Entry::Acquired(told(13_000, "m1", Some(9))),
            Entry::Revoked(told(15_000, "m0", None)),
            Entry::Stopped(Process { at: 20_000, member: "m1".into(), slot: 1 }),
        ],
    };
    let played = |kind, start, end, host: &str, label: &str| neli_sim::PlayedFault {
        kind,
        start,
        end,
        hosts: vec![host.to_owned()],
        label: label.to_owned(),
    };
    let faults = vec![
        played(FaultKind::Pause, 10_000, 15_000, "m0", "pause m0 for 5s"),
        played(FaultKind::Crash, 20_000, 20_000, "m1", "crash m1"),
    ];
    let leads = neli_lab::svg::leads(&history);
    let bands = neli_lab::svg::bands(&faults);
    let got: Vec<(usize, u64, u64, u64)> = leads.iter().map(|l| (l.row, l.start, l.end, l.token)).collect();
    assert_eq!(got, vec![(0, 3000, 15_000, 4), (1, 13_000, 20_000, 9)]);
    assert_eq!((bands[0].rows.clone(), bands[0].start, bands[0].end), (vec![0], 10_000, 15_000));
    let mut overlap =
        neli_sim::Violation::new(neli_sim::Rule::Overlap, "overlap: role 0 held by m0 and m1.1").at(12_330);
    overlap.members = vec!["m0".into(), "m1.1".into()];
    overlap.lasted_ms = Some(880);
    let stale = neli_sim::Violation::new(neli_sim::Rule::StaleWrite, "stale write").by("m2").at(1);
    let o = neli_lab::svg::overlaps(&[overlap, stale]);
    assert_eq!(o, vec![(vec![0, 1], 12_330, 13_210)]);
}

// One generator: a `[random]` scenario's seed gives the same run through
// the simulator's own entry point (the one its tests' reproduction command
// uses), through neli-lab, and from the scenario file neli-lab writes for it.
#[test]
fn a_random_seed_replays_byte_for_byte_everywhere() {
    let s = fixture("tiny-random");
    for seed in [1, 7] {
        let direct = neli_sim::run_scenario(&s, seed);
        assert_eq!(neli_lab::run(&s, seed).trace, direct.trace, "seed {seed}");
        let mut fixed = schedule::materialize(&s, seed);
        fixed.seed = Some(seed);
        let text = fixed.to_toml(&[]).expect("writable");
        let back = Scenario::parse(&text, "<written>").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(neli_sim::run_scenario(&back, seed).trace, direct.trace, "seed {seed}: the written file");
        assert!(direct.trace.iter().any(|l| l.contains(" sim ")), "faults were drawn");
    }
}

// The timeline draws where each lease really held (the oracles' spans) apart
// from what the member was told: the paused leader's lease ends before its
// successor's begins, though it is told only on resume (scenarios/README.md,
// "Timeline"); the
// successor, stopped when the resumed member takes leadership back under
// eager range, is marked as interrupted.
#[test]
fn timeline_separates_the_lease_from_what_the_member_was_told() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("leader-pause.toml");
    let s = Scenario::load(&path).expect("leader-pause loads");
    let r = neli_lab::run(&s, 7);
    let of = |m: &str| r.history.holds().filter(|l| l.member == m && l.role == 0).cloned().collect::<Vec<_>>();
    let (m0, m1) = (of("m0"), of("m1"));
    let successor = m1.first().expect("m1 led");
    assert!(m0[0].until <= successor.at, "m0's lease {:?} ended before m1's {:?} began", m0[0], successor);
    let told = r.trace.iter().find(|l| l.contains("m0 Revoked") || l.contains("m0 Fenced")).expect("m0 told");
    assert!(told.contains("15."), "m0 was told only after its pause: {told}");
    assert_eq!(r.history.holds().filter(|l| l.interrupted).count() as u64, r.figures.interruptions);
    let svg = neli_lab::svg::timeline(&r, 3, 30_000);
    assert!(svg.contains("m0's lease of role 0 (token 0) held"), "solid bar of the real lease");
    assert!(svg.contains("pale: its lease had ended"), "pale bar of what m0 was told");
    assert!(svg.contains("interruption: m1's lease ended"), "the flap-back interrupted m1");
}
