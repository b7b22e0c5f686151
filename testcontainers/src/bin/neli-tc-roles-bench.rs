//! What membership changes cost the roles of a multi-role election, on the
//! real broker and in the simulator, from one scenario file
//! (BENCHMARKS.md, "Many roles"): per change (a crash, the crashed
//! member's restart, a graceful leave), how many roles changed holder, how
//! many were interrupted, and how long each interrupted role was leaderless
//! (`neli_sim::oracle::moves`). Every run is under `range` and under
//! `cooperative-sticky` in turn (interleaved), and judged by the oracles:
//! a run with a violation is reported as such.
//!
//! Usage: `neli-tc-roles-bench FILE [RUNS] [SEEDS]` (default 3 real runs and
//! 20 simulated seeds per assignment). Needs Docker (the tansu image is
//! built as for the real-broker suite).

use std::path::{Path, PathBuf};

use neli_sim::Scenario;
use neli_sim::oracle::LeaseSpan;
use neli_sim::oracle::moves::{ChangeCost, change_costs};
use neli_sim::scenario::AssignmentName;
use neli_testcontainers::{Broker, BrokerSpec, RealRun, plan};

/// One run's costs, and whether the oracles passed it.
struct Measured {
    costs: Vec<ChangeCost>,
    /// What each change was (`m3 crashes`, `m3 restarts`, `m2 leaves`).
    labels: Vec<String>,
    violations: Vec<String>,
    /// Why the run could not be played (the broker did not start, the
    /// group never formed): no figures, and not a violation either.
    error: Option<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: neli-tc-roles-bench FILE [RUNS] [SEEDS]");
        std::process::exit(2);
    };
    let number = |i: usize, default: u64| match args.get(i).map(|a| a.parse::<u64>()) {
        None => default,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("neli-tc-roles-bench: argument {} '{}' is not a positive whole number", i + 1, args[i]);
            std::process::exit(2);
        }
    };
    let (runs, seeds) = (number(1, 3), number(2, 20));
    let base = Scenario::load(Path::new(file)).unwrap_or_else(|e| {
        eprintln!("neli-tc-roles-bench: {e}");
        std::process::exit(2);
    });
    if let Err(why) = plan(&base) {
        eprintln!("neli-tc-roles-bench: {file} cannot run on the real broker: {why}");
        std::process::exit(2);
    }
    let member_bin = sibling("neli-tc-member");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let spec = rt.block_on(BrokerSpec::from_env()).unwrap_or_else(|e| {
        eprintln!("neli-tc-roles-bench: the broker image: {e}");
        std::process::exit(1);
    });
    let assignments = [AssignmentName::Range, AssignmentName::CooperativeSticky];
    let mut real: Vec<Vec<Measured>> = vec![Vec::new(), Vec::new()];
    for run in 0..runs {
        for (i, a) in assignments.iter().enumerate() {
            let s = with_assignment(&base, *a);
            eprintln!("real run {}/{runs}, {}", run + 1, a.neli().name());
            real[i].push(rt.block_on(real_run(&s, &spec, &member_bin)));
        }
    }
    println!(
        "| source | assignment | change | runs | roles moved (median, max) | roles interrupted (median, max) | per-role gap median / max (ms) | runs with a violation |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (i, a) in assignments.iter().enumerate() {
        let s = with_assignment(&base, *a);
        let simulated: Vec<Measured> = (0..seeds).map(|seed| simulated(&s, seed)).collect();
        table("tansu", *a, &real[i]);
        table("simulator", *a, &simulated);
    }
}

fn with_assignment(base: &Scenario, a: AssignmentName) -> Scenario {
    let mut s = base.clone();
    s.election.assignment = a;
    s
}

/// A binary beside this one (cargo builds them into one folder).
fn sibling(name: &str) -> PathBuf {
    std::env::current_exe().map(|p| p.with_file_name(name)).unwrap_or_else(|_| PathBuf::from(name))
}

async fn real_run(s: &Scenario, spec: &BrokerSpec, member_bin: &Path) -> Measured {
    let failed = |e: String| Measured { costs: Vec::new(), labels: Vec::new(), violations: Vec::new(), error: Some(e) };
    let broker = match Broker::start(spec).await {
        Ok(b) => b,
        Err(e) => return failed(e.to_string()),
    };
    let steps = plan(s).expect("checked in main");
    let first = s.timed_faults().map(|f| f.at.ms()).min().unwrap_or(0);
    let run = match RealRun::new(s, &broker, member_bin) {
        Ok(r) => r,
        Err(e) => return failed(e.to_string()),
    };
    match run.play(steps, s.duration.ms() - first).await {
        Ok(out) => {
            let end = out.spans.iter().map(|sp| sp.end).max().unwrap_or(0);
            let base = |m: &Option<String>| m.as_deref().unwrap_or("broker").split('.').next().unwrap_or("").to_owned();
            let (changes, labels) = changes(out.faults.iter().map(|f| (f.at, f.until, f.kills, base(&f.member))));
            Measured {
                costs: change_costs(&out.spans, s.roles(), &changes, end),
                labels,
                violations: out.violations,
                error: None,
            }
        }
        Err(e) => failed(e.to_string()),
    }
}

fn simulated(s: &Scenario, seed: u64) -> Measured {
    let report = neli_sim::run_scenario(s, seed);
    let spans: Vec<LeaseSpan> = report
        .history
        .holds()
        .map(|h| LeaseSpan {
            slot: h.slot,
            member: h.member.clone(),
            role: h.role,
            start: h.at,
            end: h.until,
            interrupted: h.interrupted,
        })
        .collect();
    let (changes, labels) =
        changes(report.faults.iter().map(|f| (f.start, f.end, f.kind.name() == "crash", f.hosts.join(","))));
    Measured {
        costs: change_costs(&spans, s.roles(), &changes, report.history.end),
        labels,
        violations: report.violations.iter().map(ToString::to_string).collect(),
        error: None,
    }
}

/// Membership changes: each fault's start, and a crash's restart, with
/// what each was; from (start, end, is a crash, member) per fault.
fn changes(faults: impl Iterator<Item = (u64, u64, bool, String)>) -> (Vec<u64>, Vec<String>) {
    let mut out = Vec::new();
    for (at, until, crash, member) in faults {
        out.push((at, format!("{member} {}", if crash { "crashes" } else { "leaves" })));
        if crash && until > at {
            out.push((until, format!("{member} restarts")));
        }
    }
    out.sort();
    out.into_iter().unzip()
}

fn table(source: &str, a: AssignmentName, runs: &[Measured]) {
    let changes = runs.iter().map(|m| m.costs.len()).max().unwrap_or(0);
    let violated = runs.iter().filter(|m| !m.violations.is_empty()).count();
    for v in runs.iter().flat_map(|m| &m.violations).take(3) {
        eprintln!("{source} {}: {v}", a.neli().name());
    }
    for e in runs.iter().filter_map(|m| m.error.as_ref()) {
        eprintln!("{source} {}: a run could not be played (left out of the figures): {e}", a.neli().name());
    }
    for c in 0..changes {
        let of = |f: &dyn Fn(&ChangeCost) -> u64| -> Vec<u64> {
            let mut v: Vec<u64> = runs.iter().filter_map(|m| m.costs.get(c)).map(f).collect();
            v.sort_unstable();
            v
        };
        let moved = of(&|x| u64::from(x.moved));
        let interrupted = of(&|x| u64::from(x.interrupted));
        let mut gaps: Vec<u64> = runs.iter().filter_map(|m| m.costs.get(c)).flat_map(|x| x.gaps_ms.clone()).collect();
        gaps.sort_unstable();
        let label = runs.iter().find_map(|m| m.labels.get(c)).map_or("?", String::as_str);
        println!(
            "| {source} | {} | {}. {label} | {} | {} | {} | {} / {} | {violated} |",
            a.neli().name(),
            c + 1,
            moved.len(),
            median_max(&moved),
            median_max(&interrupted),
            gaps.get(gaps.len() / 2).map_or("-".into(), u64::to_string),
            gaps.last().map_or("-".into(), u64::to_string),
        );
    }
}

fn median_max(v: &[u64]) -> String {
    match (v.get(v.len() / 2), v.last()) {
        (Some(m), Some(x)) => format!("{m}, {x}"),
        _ => "-".into(),
    }
}
