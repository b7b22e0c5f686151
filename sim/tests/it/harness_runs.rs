//! The harness as a team's CI runs it: seeds on every core with the same
//! report as on one, a moving start, shards, a regressions folder replayed
//! first, shrunk reproductions that replay, reports in every format, faults
//! composed in code, the determinism check and the ablation that says
//! whether the invariants can fail at all.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use neli::downstream::Downstream;
use neli::{Clock, Pulse};
use neli_sim::Rule;
use neli_sim::app::{SimMember, StoreMode};
use neli_sim::harness::{Harness, Settings, Start};
use neli_sim::history::History;
use neli_sim::scenario::{Dur, Fault, Host, Target};

use crate::harness::ticker;
use crate::scenario;

/// Looks, then works for 400 ms, then sends: the check-then-act race,
/// unfenced. A pause inside the work sends without a lease.
async fn look_then_send(m: SimMember) {
    let SimMember { mut neli, clock, store, .. } = m;
    let mut n = 0u32;
    loop {
        match neli.pulse(Duration::from_millis(100)).await {
            Ok(Pulse::Finished(_)) => return,
            Ok(Pulse::Running { .. }) => {}
            Err(_) => {
                clock.sleep(Duration::from_millis(100)).await;
                continue;
            }
        }
        if let Some(lease) = neli.lease(0) {
            clock.sleep(Duration::from_millis(400)).await;
            n += 1;
            let _ = store.write(&format!("job-{n}"), b"", lease.stamp()).await;
        }
    }
}

/// Nobody sends while its lease is over.
fn sent_with_a_lease(h: &History) -> Result<(), String> {
    match h.writes().find(|w| !h.held(&w.member, 0, w.sent_at)) {
        Some(w) => Err(format!("{} sent {} at {} ms without a lease", w.member, w.key, w.sent_at)),
        None => Ok(()),
    }
}

fn racy() -> Harness {
    Harness::new(scenario(include_str!("scenarios/leader-pause.toml")))
        .app(look_then_send)
        .store(StoreMode::Unfenced)
        .invariant("sent with a lease", sent_with_a_lease)
}

/// Two members never both write within one 100 ms round of each other.
fn one_writer_at_a_time(h: &History) -> Result<(), String> {
    let writes: Vec<_> = h.writes().collect();
    for pair in writes.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if a.member != b.member && b.sent_at < a.sent_at + 50 {
            return Err(format!("{} and {} both wrote at {} ms", a.member, b.member, b.sent_at));
        }
    }
    Ok(())
}

/// A fresh folder for one test's files.
fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("harness-runs").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a test folder");
    d
}

fn none() -> Settings {
    Settings::default()
}

// 200 seeds on two threads give the report one thread gives, in seed order.
#[test]
fn seeds_on_every_core_report_as_on_one() {
    let h = Harness::new(scenario(include_str!("scenarios/harness-short-pause.toml")))
        .app(look_then_send)
        .store(StoreMode::Unfenced)
        .invariant("sent with a lease", sent_with_a_lease)
        .seeds(0..200);
    let (one, two) = (h.clone().jobs(1).run_with(&none()), h.jobs(2).run_with(&none()));
    assert!(!one.failures.is_empty(), "the race shows in some seed: {one}");
    assert_eq!(one.to_string(), two.to_string());
    assert_eq!(one.to_json(), two.to_json());
    let failing: Vec<u64> = two.failures.iter().map(|f| f.seed).collect();
    assert!(failing.windows(2).all(|w| w[0] < w[1]), "in seed order: {failing:?}");
    assert_eq!(two.seeds, (0..200).collect::<Vec<_>>());
}

// `Start::Auto` draws a new range each run, prints it, and the printed
// setting reruns exactly that range; a shard runs every n-th seed of it.
#[test]
fn an_auto_start_moves_is_printed_and_reruns_from_the_print() {
    let h = Harness::shipped("leader-pause").expect("shipped").seeds(0..2).start(Start::Auto);
    let first = h.run_with(&none());
    let start = first.start.expect("a range from a start");
    assert!(first.start_auto && first.seeds == [start, start + 1], "{first}");
    assert!(first.to_string().contains(&format!("NELI_SIM_START={start}")), "{first}");
    let second = h.run_with(&none());
    assert!(second.start.expect("a start") > start, "each run tries new seeds");
    let again = h.run_with(&Settings { start: Some(Start::Seed(start)), ..none() });
    assert_eq!(again.seeds, first.seeds);
    let shard = Harness::shipped("leader-pause").expect("shipped").seeds(0..2).run_with(&Settings {
        seeds: Some(9),
        shard: Some((2, 3)),
        ..none()
    });
    assert_eq!(shard.seeds, [1, 4, 7], "{shard}");
}

// A failing seed is written to the regressions folder; the next run
// replays it first and fails on it, before any new seed.
#[test]
fn a_failing_seed_is_kept_and_fails_first_next_time() {
    let d = dir("kept");
    let h = racy().regressions(&d);
    let seed = (0..24).find(|s| !h.run_seed(*s).passed()).expect("a failing seed");
    let first = h.clone().seeds([seed]).run_with(&none());
    assert_eq!(first.kept.len(), 1, "{first}");
    let kept = &first.kept[0];
    assert!(kept.starts_with(&d) && kept.to_string_lossy().ends_with(&format!("leader-pause-seed{seed}.toml")));
    let text = std::fs::read_to_string(kept).expect("the kept file");
    assert!(text.contains(&format!("seed = {seed}")) && text.contains("[[faults]]"), "{text}");
    // The next run, on other seeds, fails on the kept one first.
    let next = h.seeds([seed + 1000]).run_with(&none());
    assert_eq!(next.regressions.len(), 1, "{next}");
    assert!(!next.regressions[0].passed() && !next.passed());
    let shown = next.to_string();
    let kept_at = shown.find("kept ").expect("the kept failure is shown");
    assert!(kept_at < shown.find("harness leader-pause").expect("the summary"), "kept first: {shown}");
    assert!(next.regressions[0].reproduce.starts_with("NELI_SIM_REPLAY="), "{}", next.regressions[0].reproduce);
}

// A shrunk failing seed is smaller, and replayed from its kept file it
// breaks the same invariant again.
#[test]
fn a_shrunk_seed_replays_the_same_invariant_failure() {
    let d = dir("shrunk");
    let h = racy().regressions(&d).shrink(60).check_determinism(false);
    let seed = (0..24).find(|s| !h.run_seed(*s).passed()).expect("a failing seed");
    let r = h.clone().seeds([seed]).run_with(&none());
    let shrunk = r.failures[0].shrunk.as_ref().expect("shrunk");
    assert_eq!(shrunk.class, "invariant sent with a lease", "{r}");
    assert!(shrunk.replays && shrunk.duration_ms <= 20_000, "{r}");
    let kept = r.failures[0].kept.clone().expect("kept");
    assert_eq!(std::fs::read_to_string(&kept).expect("kept file"), shrunk.toml);
    let replayed = h.run_with(&Settings { replay: Some(kept.clone()), regressions: None, ..none() });
    assert_eq!(replayed.seeds, [seed], "{replayed}");
    let rules: Vec<String> = replayed.failures[0].violations.iter().map(|v| v.class()).collect();
    assert!(rules.contains(&"invariant sent with a lease".to_owned()), "{replayed}");
    assert!(replayed.failures[0].reproduce.contains(&kept.display().to_string()));
}

/// Writes its jobs in a HashMap's order: a different order per process
/// thread, so the same seed does not replay.
async fn hash_order(m: SimMember) {
    let SimMember { mut neli, clock, store, .. } = m;
    let jobs: HashMap<String, u32> = (0..8).map(|i| (format!("job-{i}"), i)).collect();
    loop {
        match neli.pulse(Duration::from_millis(100)).await {
            Ok(Pulse::Finished(_)) => return,
            Ok(Pulse::Running { .. }) => {}
            Err(_) => clock.sleep(Duration::from_millis(100)).await,
        }
        if let Some(lease) = neli.lease(0) {
            for key in jobs.keys() {
                let _ = store.write(key, b"", lease.stamp()).await;
            }
            return;
        }
    }
}

// An application that iterates a HashMap is flagged by the determinism
// check, with the first history entry that differs and the likely cause.
#[test]
fn an_application_iterating_a_hash_map_is_flagged() {
    let h = Harness::new(scenario(include_str!("scenarios/leader-pause.toml"))).app(hash_order).seeds(0..3);
    let plain = h.clone().run_with(&none());
    assert!(plain.passed(), "without the check nothing fails: {plain}");
    let checked = h.clone().run_with(&Settings { check_determinism: Some(true), ..none() });
    let v: Vec<_> =
        checked.failures.iter().flat_map(|f| &f.violations).filter(|v| v.rule == Rule::Nondeterministic).collect();
    assert!(!v.is_empty(), "{checked}");
    assert!(v[0].detail.contains("differ first at history entry") && v[0].detail.contains("HashMap"), "{}", v[0]);
    assert!(v[0].detail.contains("\"event\":\"write\""), "names the write that moved: {}", v[0]);
    // The variable wins over the code, both ways: `=0` switches off the
    // check a test set.
    let off = h.check_determinism(true).run_with(&Settings { check_determinism: Some(false), ..none() });
    assert!(off.passed(), "NELI_SIM_CHECK_DETERMINISM=0 switches the check off: {off}");
}

// Faults composed in code are checked like a file's and written back as
// one; a bad one is refused by name before anything runs.
#[test]
fn faults_in_code_are_checked_like_a_files() {
    let ok = Harness::shipped("leader-pause")
        .expect("shipped")
        .fault(
            Dur::from_secs(15),
            Fault::Partition { a: Host::Leader, b: Host::Broker(0), duration: Dur::from_secs(2) },
        )
        .seeds([1]);
    let toml = ok.scenario().to_toml(&[]).expect("writable");
    let back = neli_sim::Scenario::parse(&toml, "<back>").expect("reads back");
    assert_eq!(back.faults.len(), 2);
    assert!(ok.run_with(&none()).passed());
    let bad = Harness::shipped("leader-pause")
        .expect("shipped")
        .fault(Dur::from_secs(5), Fault::Pause { target: Target::Member(9), duration: Dur::from_secs(1) })
        .run_with(&none());
    let e = bad.error.clone().unwrap_or_default();
    assert!(
        bad.seeds.is_empty() && e.contains("built in code") && e.contains("fault 2 (pause at 5s)") && e.contains("m9"),
        "{e}"
    );
}

// Every format says the same verdict; the HTML page carries each failing
// seed's timeline, history and reproduction.
#[test]
fn reports_in_every_format() {
    let d = dir("reports");
    let files: Vec<PathBuf> = ["r.txt", "r.json", "r.xml", "r.md", "r.html"].iter().map(|f| d.join(f)).collect();
    let h = files.iter().fold(racy().seeds(0..6), |h, f| h.report_to(f));
    let r = h.run_with(&none());
    assert!(!r.failures.is_empty() && r.error.is_none(), "{r}");
    let read = |i: usize| std::fs::read_to_string(&files[i]).expect("written");
    assert_eq!(read(0), r.to_string());
    let json: serde_json::Value = serde_json::from_str(&read(1)).expect("JSON");
    assert_eq!((json["verdict"].as_str(), json["seeds"]["count"].as_u64()), (Some("FAIL"), Some(6)));
    let seed = r.failures[0].seed;
    assert!(read(2).contains(&format!("name=\"seed {seed}\"")) && read(2).contains("<failure"), "JUnit");
    valid_junit(&files[2]);
    assert!(read(3).contains(&format!("| {seed} | invariant sent with a lease")), "Markdown: {}", read(3));
    let html = read(4);
    assert!(html.contains(&format!("id=\"seed-{seed}\"")) && html.contains("<svg") && html.contains("NELI_SIM_SEED="));
    let bad = racy().seeds([0]).run_with(&Settings { reports: vec![d.join("r.txt/nested.json")], ..none() });
    assert!(bad.error.as_deref().is_some_and(|e| e.contains("r.txt/nested.json")), "{bad}");
}

// A team's invariant that checks nothing is reported as catching nothing;
// one that checks the lease catches the weakenings that give two leaders.
#[test]
fn the_ablation_says_which_invariants_can_fail() {
    let a = Harness::shipped("leader-pause")
        .expect("shipped")
        .app(ticker)
        .store(StoreMode::Unfenced)
        .invariant("one writer at a time", one_writer_at_a_time)
        .invariant("checks nothing", |_| Ok(()))
        .seeds(0..10)
        .ablate();
    println!("{a}");
    assert_eq!(a.rows[0].name, "as written");
    assert!(a.rows.iter().any(|r| r.name == "without membership-proof"), "a row per layer: {a}");
    let receipt = a.rows.iter().find(|r| r.name == "lease from receipt, no proof").expect("a row per variant");
    assert!(receipt.two_leaders > 0 && receipt.caught[0] > 0, "{a}");
    assert!(a.uncaught().is_empty(), "{a}");
    assert_eq!(a.idle(), ["checks nothing"], "{a}");
    assert!(a.passed() && a.to_string().contains("CATCHES NOTHING: invariant \"checks nothing\""), "{a}");
    // Alone, the idle invariant lets every weakening through: that fails.
    let mut alone = a.clone();
    alone.invariants.remove(0);
    alone.rows.iter_mut().for_each(|r| {
        r.caught.remove(0);
    });
    assert!(
        !alone.passed() && alone.to_string().contains("NOT CAUGHT: lease from receipt, no proof gives two leaders"),
        "{alone}"
    );
    // A service that cannot act within the longest overlap cannot see it:
    // with a reaction that long, the uncaught weakening fails nothing, and
    // the table says why; a reaction one millisecond shorter fails again.
    let longest = alone.rows.iter().flat_map(|r| r.overlaps_ms.iter().copied()).max().expect("two leaders somewhere");
    let slow = alone.clone().reaction(std::time::Duration::from_millis(longest));
    assert!(slow.passed() && slow.uncaught().is_empty(), "{slow}");
    assert!(slow.to_string().contains("TOO SHORT TO ACT IN: lease from receipt, no proof gives two leaders"), "{slow}");
    assert!(slow.to_string().contains(&format!("for longer than {longest} ms is caught")), "{slow}");
    let quicker = alone.reaction(std::time::Duration::from_millis(longest - 1));
    assert!(!quicker.passed(), "{quicker}");
}

/// The JUnit file validates against the schema neli-lab's reports keep
/// (`scenarios/tests/it/junit.xsd`) with xmllint; without xmllint this
/// fails under `CI=true` (`.ci/run` installs it) and is otherwise skipped,
/// loudly.
fn valid_junit(file: &std::path::Path) {
    let xsd = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/tests/it/junit.xsd");
    match std::process::Command::new("xmllint").arg("--noout").arg("--schema").arg(&xsd).arg(file).output() {
        Ok(o) => {
            assert!(o.status.success(), "{} does not validate: {}", file.display(), String::from_utf8_lossy(&o.stderr))
        }
        Err(e) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "xmllint not found ({e}): apt-get install libxml2-utils"
            );
            eprintln!("SKIPPED: JUnit schema validation: xmllint not found ({e}); apt-get install libxml2-utils");
        }
    }
}

/// Debian's chromium, or why the browser check cannot run (a failure
/// under `CI=true`, where `.ci/run` installs it).
fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| std::process::Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()));
    if found.is_none() {
        let why = "no chromium on PATH: the HTML report's browser check cannot run (apt-get install chromium)";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("SKIPPED: {why}");
    }
    found
}

// The HTML report, opened in a real headless browser, has the summary,
// one section per failing seed, each with its timeline drawn as SVG, its
// history and its reproduction.
#[test]
fn the_html_report_opens_in_a_browser() {
    let Some(browser) = chromium() else { return };
    let d = dir("browser");
    let page = d.join("report.html");
    let r = racy().seeds(0..6).report_to(&page).run_with(&none());
    assert!(!r.failures.is_empty(), "{r}");
    let profile = d.join("profile");
    let out = std::process::Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dom.contains("<table id=\"summary\">"),
        "{}\n{dom}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(dom.matches("<section class=\"failure\"").count(), r.failures.len(), "{dom}");
    assert_eq!(
        dom.matches("<div class=\"timeline\"><svg").count(),
        r.failures.len(),
        "each timeline is SVG in the page"
    );
    assert_eq!(dom.matches("<details class=\"history\">").count(), r.failures.len());
    for f in &r.failures {
        assert!(dom.contains(&format!("id=\"seed-{}\"", f.seed)) && dom.contains(&f.reproduce), "seed {}", f.seed);
    }
}
