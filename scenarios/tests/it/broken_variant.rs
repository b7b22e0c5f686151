//! A deliberately broken core (goNELI's lease-from-receipt) must be caught
//! by `explore`, and `shrink` must turn the failure into a smaller scenario
//! file that still fails the same way, deterministically.

use crate::{lab, scratch, stderr, stdout};

#[test]
fn explore_catches_lease_from_receipt_and_shrink_minimises_it() {
    let o = lab(&["explore", "lease-from-receipt", "--seeds", "3"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "the broken variant must fail explore:\n{out}");
    assert!(out.contains("verdict   FAIL"), "{out}");
    let repro = out.lines().find(|l| l.trim_start().starts_with("reproduce: ")).expect("a reproduction line");
    let seed = repro.rsplit(' ').next().expect("seed").to_owned();
    assert!(repro.ends_with(&format!("run lease-from-receipt --seed {seed}")), "{repro}");

    let dir = scratch("broken_variant");
    let file = dir.join("shrunk.toml");
    let s = lab(&["shrink", "lease-from-receipt", "--seed", &seed, "-o", file.to_str().unwrap()]);
    assert_eq!(s.status.code(), Some(0), "{}", stderr(&s));
    let original = neli_sim::Scenario::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("broken/lease-from-receipt.toml"),
    )
    .unwrap();
    let shrunk = neli_sim::Scenario::load(&file).expect("the shrunk file is a valid scenario");
    // Smaller: shorter run, fewer faults or fewer members, never larger.
    assert!(shrunk.duration <= original.duration && shrunk.faults.len() <= original.faults.len());
    assert!(shrunk.election.members <= original.election.members);
    assert!(
        shrunk.duration < original.duration
            || shrunk.faults.len() < original.faults.len()
            || shrunk.election.members < original.election.members,
        "shrink made nothing smaller"
    );
    // It still fails, with its own seed, the same way twice.
    let a = lab(&["replay", file.to_str().unwrap(), "--seed", &seed]);
    let b = lab(&["run", file.to_str().unwrap()]);
    assert_eq!(a.status.code(), Some(1), "{}", stdout(&a));
    assert_eq!(b.status.code(), Some(1), "{}", stdout(&b));
    assert_eq!(a.stdout, lab(&["replay", file.to_str().unwrap(), "--seed", &seed]).stdout);
}

// A seed that passes has nothing to shrink: exit 1 with a message.
#[test]
fn shrink_of_a_passing_run_says_so() {
    let o = lab(&["shrink", "leader-pause", "--seed", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("does not fail: nothing to shrink"), "{}", stderr(&o));
}

// A failing random schedule (T >= S under random pauses and latency; explore
// finds the seed) shrinks to fewer faults and a shorter run, written with
// explicit faults and no `[random]` table, and the file still overlaps.
#[test]
fn shrink_turns_a_random_schedule_into_fewer_explicit_faults() {
    let fixture = crate::fixture("random-broken");
    let e = lab(&["explore", &fixture, "--seeds", "12"]);
    assert_eq!(e.status.code(), Some(1), "T >= S must overlap on some seed:\n{}", stdout(&e));
    let out = stdout(&e);
    let seed = out
        .lines()
        .find(|l| l.trim_start().starts_with("reproduce: "))
        .and_then(|l| l.rsplit(' ').next())
        .expect("a reproduction line")
        .to_owned();
    let dir = scratch("shrink_random");
    let file = dir.join("shrunk.toml");
    let o = lab(&["shrink", &fixture, "--seed", &seed, "--budget", "80", "-o", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = neli_sim::Scenario::load(&file).expect("valid scenario");
    assert!(s.random.is_none(), "the schedule is written out explicitly");
    assert!(s.faults.len() < 3, "three drawn faults, {} left", s.faults.len());
    assert!(s.duration.ms() < 20_000);
    let r = lab(&["run", file.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1));
    assert!(stdout(&r).contains("violation overlap"), "{}", stdout(&r));
}
