//! `neli-lab`: the command line over the simulated Kafka cluster. See
//! `scenarios/README.md` and the top-level README.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use indicatif::ProgressBar;
use neli_lab::catalog::{self, Entry};
use neli_lab::report::{self, Format};
use neli_lab::{REPRO, explore, shrink, stats, svg, tune};
use neli_sim::RunReport;
use neli_sim::scenario::Layer;

// The model checker allocates and frees a state per step (BENCHMARKS.md,
// "Model checker"); mimalloc does that faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "neli-lab",
    version = neli_lab::VERSION,
    about = "Run, explore, shrink and tune NELI election scenarios on a simulated Kafka cluster"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the scenarios with their one-line descriptions.
    List,
    /// Run one scenario with one seed: verdict and figures; exit 1 on a violation.
    Run {
        /// A scenario name (see `list`) or a path to a .toml file.
        scenario: String,
        /// The seed (default: the scenario's `seed`, else 0).
        #[arg(long)]
        seed: Option<u64>,
        /// Print the full trace.
        #[arg(long)]
        trace: bool,
        /// Draw leadership per member over time, with fault bands, into this SVG file.
        #[arg(long, value_name = "FILE.svg")]
        timeline: Option<PathBuf>,
        /// Output: text, one JSON document or JUnit XML (one testcase).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// If the run fails, write DIR/<scenario>-seed<N>.toml, .trace.txt
        /// and .svg as `explore --artifacts` does.
        #[arg(long, value_name = "DIR")]
        artifacts: Option<PathBuf>,
        /// Run with this layer of the lease switched off (layer ablation):
        /// membership-proof, client-session-expiry or commit-generation-check.
        #[arg(long, value_name = "LAYER", value_parser = Layer::parse)]
        without: Option<Layer>,
    },
    /// Print the full trace of one seed (byte-identical on every run).
    Replay {
        scenario: String,
        #[arg(long)]
        seed: u64,
        /// Replay with this layer switched off, as `run --without`.
        #[arg(long, value_name = "LAYER", value_parser = Layer::parse)]
        without: Option<Layer>,
    },
    /// Run many seeds of scenarios across threads; summary table per scenario.
    Explore(ExploreArgs),
    /// Combine the JSON reports of `explore --shard i/n --format json` into
    /// the output one run over all seeds gives, with its exit code.
    Merge {
        /// The shard reports, e.g. `shard-*.json`.
        files: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Minimise a failing run into a scenario file that still fails.
    Shrink {
        scenario: String,
        #[arg(long)]
        seed: u64,
        /// Where to write the shrunk scenario (default: stdout).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// At most this many simulation runs.
        #[arg(long, default_value_t = 300)]
        budget: u32,
        /// Shrink the run with this layer switched off, as `run --without`.
        #[arg(long, value_name = "LAYER", value_parser = Layer::parse)]
        without: Option<Layer>,
    },
    /// Sweep T, S and G over seeds: CSV, SVG chart, safe region, recommendation.
    Tune {
        scenario: String,
        /// Heartbeat timeouts T, comma separated: `500ms,1s,2s`.
        #[arg(long)]
        heartbeat_timeout: String,
        /// Session timeouts S, comma separated.
        #[arg(long)]
        session_timeout: String,
        /// Grace periods G, comma separated (default: the scenario's).
        #[arg(long)]
        grace: Option<String>,
        #[command(flatten)]
        range: SeedRange,
        /// Output directory for tune.csv and tune.svg.
        #[arg(long)]
        out: PathBuf,
        /// Output: text tables, one JSON document or JUnit XML (one
        /// testcase per configuration).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Model-check the election (stateright, the real core, exhaustive within
    /// bounds); counterexamples become scenario files that `run` replays.
    Check {
        /// Members (default 3 in exclusive mode, 2 in the multi-role modes).
        #[arg(long)]
        members: Option<u8>,
        #[arg(long, value_enum, default_value_t = CheckMode::Exclusive)]
        mode: CheckMode,
        /// Roles (and partitions) in multi-role and non-exclusive mode
        /// (default 2); refused in exclusive mode.
        #[arg(long)]
        roles: Option<u32>,
        /// T in model ticks (a tick is 500 ms when replayed); default 2, or 5
        /// in non-exclusive mode (which is T > S).
        #[arg(long)]
        heartbeat_timeout: Option<u8>,
        /// S in model ticks; default 4, or 3 in non-exclusive mode.
        #[arg(long)]
        session_timeout: Option<u8>,
        /// G in model ticks.
        #[arg(long, default_value_t = 0)]
        grace: u8,
        /// Bound on the global clock, in ticks.
        #[arg(long, default_value_t = 8)]
        ticks: u8,
        /// A deliberately unsafe variant: the core's lease-from-receipt or
        /// any-record-counts, or a coordinator that skips the Revoked
        /// barrier (skip-revoked-barrier, needs --assignment cooperative-sticky).
        #[arg(long, value_enum, default_value_t = CheckVariant::Recommended)]
        variant: CheckVariant,
        /// How a rebalance deals partitions: range (eager: everything is
        /// revoked from everyone) or cooperative-sticky (incremental: an
        /// owner keeps its partitions, one that moves is revoked first).
        #[arg(long, value_enum, default_value_t = CheckAssignment::Range)]
        assignment: CheckAssignment,
        /// Turn the membership proof off (goNELI).
        #[arg(long)]
        no_membership_proof: bool,
        #[arg(long, default_value_t = 1)]
        pauses: u8,
        #[arg(long, default_value_t = 0)]
        crashes: u8,
        /// A member cut off from the group coordinator (default 1 in
        /// exclusive mode, 0 in the multi-role modes).
        #[arg(long)]
        isolations: Option<u8>,
        /// One-tick clock steps (a member's clock jumps or stands still).
        #[arg(long, default_value_t = 0)]
        clock_steps: u8,
        /// Largest |member clock - global clock| in ticks (default: what
        /// --clock-steps can reach); needs --clock-steps.
        #[arg(long)]
        max_skew: Option<u8>,
        /// The partition leader restarts without its data: the election log
        /// is lost and recreated, tokens restart (the group stays).
        #[arg(long, default_value_t = 0)]
        log_losses: u8,
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Where counterexample scenario files go.
        #[arg(long, default_value = "target/neli-lab/check")]
        out: PathBuf,
        /// Tell members apart (no symmetry reduction). By default members
        /// are interchangeable, still breadth first, level by level, so
        /// counterexamples stay the shortest.
        #[arg(long)]
        no_symmetry: bool,
        /// Depth-first search (counterexamples are not the shortest).
        #[arg(long)]
        dfs: bool,
        /// Random walks instead of an exhaustive search (stateright's
        /// simulation checker), for bounds too large to exhaust: a seed
        /// gives one result; never a proof (exit 3 if nothing is found).
        #[arg(long)]
        simulate: bool,
        /// The random walks' seed (with --simulate; default 0).
        #[arg(long)]
        seed: Option<u64>,
        /// Seeds of the simulator tried on each counterexample scenario.
        #[arg(long, default_value_t = 20)]
        sim_seeds: u64,
        /// Output: text, one JSON document or JUnit XML (one testcase per property).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Stop after about this many generated states (memory grows with
        /// them; default 250000000, with --simulate 1000000). A stopped
        /// search is INCOMPLETE (exit 3), never PASS.
        #[arg(long)]
        max_states: Option<usize>,
        /// Stop after this much wall time (e.g. 90s, 10m); INCOMPLETE
        /// (exit 3) if it stops the search.
        #[arg(long)]
        time_budget: Option<String>,
    },
    /// The harness's own speed: seeds/s and simulated seconds per wall second.
    Bench {
        /// Scenario (default: the fixed `bench` scenario).
        #[arg(default_value = "bench")]
        scenario: String,
        #[arg(long, default_value_t = 20)]
        seeds: u64,
        #[arg(long)]
        jobs: Option<usize>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum CheckMode {
    Exclusive,
    MultiRole,
    /// Multi-role, non-exclusive.
    NonExclusive,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum CheckVariant {
    Recommended,
    LeaseFromReceipt,
    AnyRecordCounts,
    /// The coordinator hands a moving partition to its new owner in the
    /// rebalance that tells its old owner to revoke it.
    SkipRevokedBarrier,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CheckAssignment {
    Range,
    CooperativeSticky,
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// `explore`'s arguments, handed to [`cmd_explore`] whole.
#[derive(clap::Args)]
struct ExploreArgs {
    /// Scenario names or paths.
    scenarios: Vec<String>,
    /// Every shipped scenario (not those under broken/).
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    range: SeedRange,
    /// Run only every n-th seed, starting with the i-th (1-based): `--shard 2/4`.
    #[arg(long, value_name = "i/n")]
    shard: Option<String>,
    /// Output: text tables, one JSON document (input to `merge`) or JUnit XML.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// For every failing seed write DIR/<scenario>-seed<N>.toml (fails
    /// under `run`), .trace.txt and .svg (timeline).
    #[arg(long, value_name = "DIR")]
    artifacts: Option<PathBuf>,
    /// Stop starting seeds after this long (`10m`, `90s`, `1h`): seeds run
    /// in order, every scenario the same ones; the summary says how many.
    #[arg(long, value_name = "DURATION")]
    time_budget: Option<String>,
    /// Layer ablation: also run each scenario once per layer of the lease
    /// with that layer off (`<name>-without-<layer>`). Each must pass,
    /// unless the scenario lists the layer in `expect.fails_without`:
    /// then it must fail in some seed.
    #[arg(long)]
    ablate: bool,
    /// With --ablate: run the ablated scenarios on only the first N
    /// seeds of the range (default: all of them), to keep the cost down.
    #[arg(long, value_name = "N", requires = "ablate")]
    ablate_seeds: Option<u64>,
    /// Stop after the first scenario (or ablated run) with a failing
    /// seed that must pass: the summary covers the scenarios run so
    /// far. For a quick red/green, e.g. in mutation testing.
    #[arg(long)]
    fail_fast: bool,
}

/// The seeds of a multi-seed command and the threads that run them.
#[derive(clap::Args)]
struct SeedRange {
    /// How many seeds per scenario (or per configuration).
    #[arg(long)]
    seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Threads (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
}

fn jobs(j: Option<usize>) -> usize {
    j.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1)
}

fn bar(total: u64) -> ProgressBar {
    neli_lab::progress::bar(total)
}

fn print_figures(r: &RunReport) {
    let f = &r.figures;
    println!("overlap   {} intervals, total {}ms, max {}ms", f.overlap_count, f.overlap_total_ms, f.overlap_max_ms);
    println!("gap       total {}ms, max {}ms", f.gap_total_ms, f.gap_max_ms);
    let fos: Vec<String> = f.failovers_ms.iter().map(|m| format!("{m}ms")).collect();
    println!(
        "failover  {} (max {}ms){}",
        f.failovers_ms.len(),
        f.failover_max_ms(),
        if fos.is_empty() { String::new() } else { format!(": {}", fos.join(" ")) }
    );
    println!(
        "other     first leader {}, acquisitions {}, writes {}, stale writes {}, zombie heartbeats {}, leader at end {}",
        f.first_leader_ms.map_or("never".into(), neli_lab::secs),
        f.acquisitions,
        f.writes,
        f.stale_writes,
        f.zombie_heartbeats,
        if f.leader_at_end { "yes" } else { "no" }
    );
    println!(
        "churn     interruptions {} (leader stopped with no fault on it), leader changes {}",
        f.interruptions, f.leader_changes
    );
}

fn verdict(e: &Entry, r: &RunReport) -> ExitCode {
    if r.passed() {
        println!("verdict   PASS");
        return ExitCode::SUCCESS;
    }
    println!("verdict   FAIL");
    for v in &r.violations {
        println!("violation {v}");
    }
    println!("reproduce: {REPRO} run {} --seed {}", e.arg, r.seed);
    ExitCode::from(1)
}

fn cmd_list() -> ExitCode {
    let mut bad = false;
    let mut rows = Vec::new();
    for (broken, path, s) in catalog::all() {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name = if broken { format!("{name} (broken on purpose)") } else { name };
        match s {
            Ok(s) => rows.push(vec![name, s.description]),
            Err(e) => {
                bad = true;
                rows.push(vec![name, format!("INVALID: {e}")]);
            }
        }
    }
    print!("{}", stats::table(&["scenario", "description"], &rows));
    if bad { ExitCode::from(2) } else { ExitCode::SUCCESS }
}

fn cmd_run(
    arg: &str,
    without: Option<Layer>,
    seed: Option<u64>,
    trace: bool,
    timeline: Option<PathBuf>,
    format: Format,
    artifacts: Option<PathBuf>,
) -> ExitCode {
    let e = match catalog::load_without(arg, without) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    let seed = seed.or(e.scenario.seed).unwrap_or(0);
    if let Some(dir) = &artifacts {
        if let Err(err) = std::fs::create_dir_all(dir) {
            return fail(format!("--artifacts {}: cannot create: {err}", dir.display()));
        }
        if !neli_lab::run(&e.scenario, seed).passed() {
            match neli_lab::artifacts::write_failing_seed(dir, &e.arg, &e.scenario, seed) {
                Ok(files) => eprintln!("wrote {} artifact file(s) to {}", files.len(), dir.display()),
                Err(err) => return fail(err),
            }
        }
    }
    if format != Format::Text {
        let t0 = Instant::now();
        let r = neli_lab::run(&e.scenario, seed);
        if let Some(path) = &timeline {
            let picture = svg::timeline(&r, e.scenario.election.members, e.scenario.duration.ms());
            if let Err(err) = std::fs::write(path, picture) {
                return fail(format!("{}: cannot write: {err}", path.display()));
            }
        }
        let out = report::Run::new(&e.scenario.name, &e.arg, &r, trace, timeline.map(|p| p.display().to_string()));
        match format {
            Format::Json => print!("{}", out.json()),
            _ => print!("{}", out.junit(t0.elapsed().as_secs_f64())),
        }
        return if r.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) };
    }
    println!("{}", neli_lab::build_line());
    println!("scenario  {} seed {seed}", e.scenario.name);
    let r = neli_lab::run(&e.scenario, seed);
    if trace {
        for l in &r.trace {
            println!("{l}");
        }
    }
    print_figures(&r);
    if let Some(path) = timeline {
        let picture = svg::timeline(&r, e.scenario.election.members, e.scenario.duration.ms());
        if let Err(err) = std::fs::write(&path, picture) {
            return fail(format!("{}: cannot write: {err}", path.display()));
        }
        println!("timeline  {}", path.display());
    }
    verdict(&e, &r)
}

fn cmd_replay(arg: &str, without: Option<Layer>, seed: u64) -> ExitCode {
    let e = match catalog::load_without(arg, without) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    println!("scenario  {} seed {seed}", e.scenario.name);
    let r = neli_lab::run(&e.scenario, seed);
    for l in &r.trace {
        println!("{l}");
    }
    print_figures(&r);
    verdict(&e, &r)
}

#[allow(clippy::too_many_arguments)]
fn cmd_explore(args: ExploreArgs) -> ExitCode {
    let ExploreArgs {
        scenarios: names,
        all,
        range: SeedRange { seeds, start, jobs: j },
        shard,
        format,
        artifacts,
        time_budget,
        ablate,
        ablate_seeds,
        fail_fast,
    } = args;
    let names = match (all, names.is_empty()) {
        (true, true) => match catalog::names() {
            v if v.is_empty() => {
                return fail(format!(
                    "--all: no scenario files in {} (set NELI_LAB_SCENARIOS to a directory of *.toml scenarios)",
                    catalog::dir().display()
                ));
            }
            v => v,
        },
        (false, false) => names,
        (true, false) => return fail("give scenario names or --all, not both"),
        (false, true) => return fail("give scenario names or --all"),
    };
    let (si, sn) = match shard.as_deref().map(explore::parse_shard) {
        None => (1, 1),
        Some(Ok(s)) => s,
        Some(Err(e)) => return fail(e),
    };
    let mut entries = Vec::new();
    for n in &names {
        match catalog::load(n) {
            Ok(e) => entries.push(e),
            Err(err) => return fail(err),
        }
    }
    // Layer ablation: each scenario's runs with one layer off follow it,
    // each with whether the scenario says it must fail.
    let ablate_seeds = match ablate_seeds {
        Some(0) => return fail("--ablate-seeds 0: give at least 1"),
        Some(n) if n > seeds => return fail(format!("--ablate-seeds {n}: at most --seeds ({seeds})")),
        Some(n) if n < seeds => Some(n),
        _ => None,
    };
    // Per entry: the layer it runs without (None: the scenario as written).
    let mut ablated_entry: Vec<Option<Layer>> = vec![None; entries.len()];
    let mut expect_fail = vec![(false, false); entries.len()];
    if ablate {
        let (mut with, mut is_ablated, mut expect) = (Vec::new(), Vec::new(), Vec::new());
        for e in entries {
            let ablated: Vec<(catalog::Entry, Layer, (bool, bool))> = Layer::ALL
                .into_iter()
                .filter_map(|l| e.without(l).map(|a| (a, l, (e.scenario.needs(l), e.scenario.may_need(l)))))
                .collect();
            with.push(e);
            is_ablated.push(None);
            expect.push((false, false));
            for (a, layer, must_fail) in ablated {
                with.push(a);
                is_ablated.push(Some(layer));
                expect.push(must_fail);
            }
        }
        (entries, ablated_entry, expect_fail) = (with, is_ablated, expect);
    }
    let seed_list = match explore::shard_seeds(start, seeds, si, sn) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let budget = match time_budget.as_deref().map(explore::parse_budget) {
        None => None,
        Some(Ok(d)) => Some(d),
        Some(Err(e)) => return fail(e),
    };
    if let Some(dir) = &artifacts
        && let Err(err) = std::fs::create_dir_all(dir)
    {
        return fail(format!("--artifacts {}: cannot create: {err}", dir.display()));
    }
    let jobs = jobs(j);
    let ablation_count =
        seed_list.iter().filter(|s| ablate_seeds.is_none_or(|n| **s < start.saturating_add(n))).count();
    let runs: usize = ablated_entry.iter().map(|a| if a.is_some() { ablation_count } else { seed_list.len() }).sum();
    let b = bar(runs as u64);
    let t0 = Instant::now();
    let mut per: Vec<(Vec<stats::SeedResult>, f64)> = entries.iter().map(|_| (Vec::new(), 0.0)).collect();
    // Without a budget, one pass per scenario; with one, every scenario runs
    // the same chunk of seeds before the clock is looked at, so all of them
    // stop after the same seed.
    let chunk = if budget.is_some() { explore::budget_chunk(jobs) } else { seed_list.len() };
    let mut stopped = false;
    let mut failed_at = None;
    for (k, seeds) in seed_list.chunks(chunk.max(1)).enumerate() {
        if k > 0 && budget.is_some_and(|d| t0.elapsed() >= d) {
            stopped = true;
            break;
        }
        if neli_lab::interrupt::requested() {
            break;
        }
        // The ablated runs' seeds are the first `ablate_seeds` of the
        // range: with the same shard stride, a prefix of every chunk.
        let ablation_end = ablate_seeds.map_or(u64::MAX, |n| start.saturating_add(n));
        let ablation_seeds: Vec<u64> = seeds.iter().copied().filter(|s| *s < ablation_end).collect();
        // The scenario as written, and where its results of this chunk start.
        let (mut base, mut base_from) = (0, 0);
        for (i, (e, ablated)) in entries.iter().zip(&ablated_entry).enumerate() {
            b.set_prefix(e.scenario.name.clone());
            let ts = Instant::now();
            let results = match ablated {
                None => {
                    (base, base_from) = (i, per[i].0.len());
                    explore::explore(&e.scenario, seeds, jobs, &b)
                }
                // The scenario as written ran just before its ablations.
                Some(layer) => {
                    let this_chunk = &per[base].0[base_from..];
                    explore::explore_without(&e.scenario, *layer, &ablation_seeds, this_chunk, jobs, &b)
                }
            };
            let (rs, wall) = &mut per[i];
            rs.extend(results);
            *wall += ts.elapsed().as_secs_f64();
            let must_pass = expect_fail[i] == (false, false);
            if fail_fast && must_pass && rs.iter().any(|r| !r.violations.is_empty()) {
                failed_at = Some(i);
                break;
            }
        }
        if failed_at.is_some() {
            break;
        }
    }
    // --fail-fast: report the scenarios run so far, the failing one last.
    if let Some(i) = failed_at {
        let not_run = entries.len() - i - 1;
        entries.truncate(i + 1);
        per.truncate(i + 1);
        expect_fail.truncate(i + 1);
        ablated_entry.truncate(i + 1);
        eprintln!(
            "neli-lab: --fail-fast: stopped after {} failed; {not_run} scenario run(s) after it not started",
            entries[i].scenario.name
        );
    }
    let scenarios = entries
        .iter()
        .zip(per)
        .zip(expect_fail.iter().zip(&ablated_entry))
        .map(|((e, (rs, wall)), ((must_fail, may_fail), layer))| {
            report::ScenarioResults::new(&e.scenario.name, &e.arg, wall, rs)
                .expecting_failure(*must_fail)
                .allowing_failure(*may_fail)
                .ablating(*layer)
        })
        .collect();
    b.finish_and_clear();
    let r = report::Explore {
        schema: report::SCHEMA.into(),
        build: neli_lab::BUILD.into(),
        start,
        seeds,
        shard: report::Shard { index: si, of: sn },
        jobs,
        wall_s: t0.elapsed().as_secs_f64(),
        time_budget: if stopped { time_budget } else { None },
        merged_shards: 0,
        interrupted: neli_lab::interrupt::requested(),
        ablate_seeds,
        scenarios,
    };
    print!("{}", r.render(format));
    if let Some(dir) = &artifacts {
        let mut written = 0;
        // A run that must fail and did is not something to look into.
        for (e, sr) in entries.iter().zip(&r.scenarios).filter(|(_, sr)| !sr.expect_fail && !sr.may_fail) {
            for f in &sr.failing {
                match neli_lab::artifacts::write_failing_seed(dir, &e.arg, &e.scenario, f.seed) {
                    Ok(files) => written += files.len(),
                    Err(err) => return fail(err),
                }
            }
        }
        eprintln!("wrote {written} artifact file(s) to {}", dir.display());
    }
    if neli_lab::interrupt::requested() {
        let ran: usize = r.scenarios.iter().map(|s| s.results.len()).sum();
        eprintln!(
            "neli-lab: interrupted after {ran} of {} run(s): the summary above covers only those",
            seed_list.len() * entries.len()
        );
        return ExitCode::from(neli_lab::interrupt::EXIT);
    }
    if r.failed() { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

fn cmd_merge(files: &[PathBuf], format: Format) -> ExitCode {
    let mut inputs = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(err) => return fail(format!("{name}: cannot read: {err}")),
        };
        match serde_json::from_str::<report::Explore>(&text) {
            Ok(r) => inputs.push((name, r)),
            Err(err) => return fail(format!("{name}: not an explore JSON report ({err})")),
        }
    }
    let r = match report::merge(inputs) {
        Ok(r) => r,
        Err(err) => return fail(err),
    };
    print!("{}", r.render(format));
    if r.failed() { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

fn cmd_shrink(arg: &str, without: Option<Layer>, seed: u64, out: Option<PathBuf>, budget: u32) -> ExitCode {
    let e = match catalog::load_without(arg, without) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    let b = neli_lab::progress::bar_of(u64::from(budget), "runs");
    b.set_prefix(format!("shrink {}", e.scenario.name));
    let shrunk = shrink::shrink_with_progress(&e.scenario, seed, budget, &b);
    b.finish_and_clear();
    let Some(s) = shrunk else {
        eprintln!("{} seed {seed} does not fail: nothing to shrink", e.scenario.name);
        return ExitCode::from(1);
    };
    let before = neli_lab::schedule::materialize(&e.scenario, seed);
    let mut sc = s.scenario.clone();
    sc.name = format!("{}-shrunk", e.scenario.name);
    sc.description = format!("{} seed {seed}, shrunk: {}", e.scenario.name, s.class);
    sc.seed = Some(seed);
    let header = vec![
        format!("shrunk by: neli-lab shrink {arg} --seed {seed} ({} runs)", s.runs),
        format!("fails with: {}", s.violations.first().cloned().unwrap_or_default()),
    ];
    let text = match sc.to_toml(&header) {
        Ok(t) => t,
        Err(err) => return fail(err.to_string()),
    };
    // The file must parse and fail the same way when read back.
    let check = match neli_sim::Scenario::parse(&text, "<shrunk>") {
        Ok(c) => c,
        Err(err) => return fail(format!("internal: shrunk scenario does not parse: {err}")),
    };
    let r1 = neli_lab::run(&check, seed);
    let r2 = neli_lab::run(&check, seed);
    if r1.passed() || r1.trace != r2.trace {
        return fail("internal: the shrunk scenario does not fail deterministically");
    }
    eprintln!(
        "shrunk {} seed {seed} in {} runs: faults {} -> {}, duration {} -> {}, members {} -> {} (still: {})",
        e.scenario.name,
        s.runs,
        before.faults.len(),
        sc.faults.len(),
        before.duration,
        sc.duration,
        before.election.members,
        sc.election.members,
        s.class
    );
    match out {
        Some(path) => {
            if let Err(err) = std::fs::write(&path, text) {
                return fail(format!("{}: cannot write: {err}", path.display()));
            }
            eprintln!("wrote {}; reproduce: {REPRO} run {}", path.display(), path.display());
        }
        None => print!("{text}"),
    }
    ExitCode::SUCCESS
}

#[allow(clippy::too_many_arguments)]
fn cmd_tune(
    arg: &str,
    t: &str,
    s: &str,
    g: Option<&str>,
    seeds: u64,
    start: u64,
    j: Option<usize>,
    out: PathBuf,
    format: Format,
) -> ExitCode {
    let e = match catalog::load(arg) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    let ts = match tune::parse_list("heartbeat-timeout", t) {
        Ok(v) => v,
        Err(err) => return fail(err),
    };
    let ss = match tune::parse_list("session-timeout", s) {
        Ok(v) => v,
        Err(err) => return fail(err),
    };
    let gs = match g.map(|g| tune::parse_list("grace", g)) {
        None => vec![e.scenario.election.grace],
        Some(Ok(v)) => v,
        Some(Err(err)) => return fail(err),
    };
    if seeds == 0 {
        return fail("--seeds must be at least 1");
    }
    if let Err(err) = std::fs::create_dir_all(&out) {
        return fail(format!("{}: cannot create: {err}", out.display()));
    }
    let seed_list: Vec<u64> = (start..start + seeds).collect();
    let b = bar((ts.len() * ss.len() * gs.len()) as u64 * seeds);
    b.set_prefix(e.scenario.name.clone());
    let t0 = Instant::now();
    let cs = tune::sweep(&e.scenario, &ts, &ss, &gs, &seed_list, jobs(j), &b);
    b.finish_and_clear();
    if neli_lab::interrupt::requested() {
        // Configurations swept in part cannot be compared: no table, no recommendation.
        let ran: u64 = cs.iter().map(|c| c.seeds).sum();
        eprintln!(
            "neli-lab: interrupted after {ran} of {} run(s): the sweep is incomplete, so nothing is recommended",
            (ts.len() * ss.len() * gs.len()) as u64 * seeds
        );
        return ExitCode::from(neli_lab::interrupt::EXIT);
    }
    let rec = tune::recommend(&cs);
    let text = format == Format::Text;
    if text {
        print_tune(&e.scenario.name, seeds, start, &cs, rec);
    }
    let points: Vec<svg::Point> = cs
        .iter()
        .enumerate()
        .map(|(i, c)| svg::Point {
            label: c.label(),
            gap_ms: c.gap_p50_ms,
            gap_p99_ms: c.gap_p99_ms,
            overlap_ms: c.overlap_max_ms,
            safe: c.safe(),
            valid: c.valid,
            recommended: Some(i) == rec,
        })
        .collect();
    let title = format!("{}: overlap vs leaderless gap, {seeds} seeds per configuration", e.scenario.name);
    let mut files = Vec::new();
    for (file, body) in [("tune.csv", tune::csv(&cs)), ("tune.svg", svg::chart(&title, &points))] {
        let p = out.join(file);
        if let Err(err) = std::fs::write(&p, body) {
            return fail(format!("{}: cannot write: {err}", p.display()));
        }
        if text {
            println!("wrote {}", p.display());
        }
        files.push(p.display().to_string());
    }
    let reports = match write_unsafe(arg, &e.scenario, &cs, rec, &out) {
        Ok(r) => r,
        Err(err) => return fail(err),
    };
    let r = report::Tune {
        schema: report::TUNE_SCHEMA.into(),
        build: neli_lab::BUILD.into(),
        scenario: e.scenario.name.clone(),
        start,
        seeds,
        configs: reports,
        safe_region: cs.iter().filter(|c| c.safe() && c.valid).map(|c| c.label()).collect(),
        recommended: rec.map(|i| cs[i].label()),
        files,
    };
    match format {
        Format::Text => {}
        Format::Json => print!("{}", r.json()),
        Format::Junit => print!("{}", r.junit(t0.elapsed().as_secs_f64())),
    }
    if r.failed() { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

/// What the simulator made of a counterexample scenario file.
enum Replay {
    /// The file does not load (`check` says why).
    LoadError(String),
    NotTried,
    Reproduced(u64, String),
    NotReproduced,
}

/// The text form of a sweep: the table, the safe region and the recommendation.
fn print_tune(name: &str, seeds: u64, start: u64, cs: &[tune::Config], rec: Option<usize>) {
    let rows: Vec<Vec<String>> = cs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            vec![
                c.label(),
                c.violating.to_string(),
                c.overlap_max_ms.to_string(),
                format!("{}/{}", c.gap_p50_ms, c.gap_p99_ms),
                match (c.failover_p50_ms, c.failover_max_ms) {
                    (Some(a), Some(b)) => format!("{a}/{b}"),
                    _ => "-".into(),
                },
                match (Some(i) == rec, c.safe(), c.valid) {
                    (true, _, _) => "safe, recommended".into(),
                    (false, true, true) => "safe".into(),
                    (false, true, false) => "no overlap seen, but rejected by validation".into(),
                    (false, false, true) => "OVERLAPS".into(),
                    (false, false, false) => "OVERLAPS (rejected by validation)".into(),
                },
            ]
        })
        .collect();
    println!("tune {name} over {seeds} seed(s) from {start} (ms)");
    print!(
        "{}",
        stats::table(&["config", "violating", "overlap max", "gap p50/p99", "failover p50/max", "verdict"], &rows)
    );
    let safe: Vec<String> = cs.iter().filter(|c| c.safe() && c.valid).map(|c| c.label()).collect();
    println!("safe region: {}", if safe.is_empty() { "none of these".into() } else { safe.join(", ") });
    match rec {
        Some(i) => println!(
            "recommended: {} (gap p50 {}ms p99 {}ms, failover max {}; rule: safe and valid, gap p50 at most 25% + 250ms above the best, then the largest margin |S-T|/S, then the smallest gap p99)",
            cs[i].label(),
            cs[i].gap_p50_ms,
            cs[i].gap_p99_ms,
            cs[i].failover_max_ms.map_or("-".into(), |f| format!("{f}ms"))
        ),
        None => println!("recommended: none (no valid configuration was free of overlap)"),
    }
}

/// A configuration validation accepts that is unsafe is a violation:
/// each is written as a scenario file that `run` reproduces.
fn write_unsafe(
    arg: &str,
    base: &neli_sim::Scenario,
    cs: &[tune::Config],
    rec: Option<usize>,
    out: &std::path::Path,
) -> Result<Vec<report::TuneConfig>, String> {
    let mut reports = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        let mut file = None;
        if c.valid && !c.safe() {
            let mut sc = tune::configure(base, c.t, c.s, c.g);
            let g = if c.g.0 > 0 { format!("-g{}", c.g) } else { String::new() };
            sc.name = format!("{}-t{}-s{}{g}", base.name, c.t, c.s);
            let p = out.join(format!("{}.toml", sc.name));
            let header = vec![format!("tune {arg}: configuration {} ({})", c.label(), neli_lab::BUILD)];
            let text = sc.to_toml(&header).map_err(|e| e.to_string())?;
            std::fs::write(&p, text).map_err(|err| format!("{}: cannot write: {err}", p.display()))?;
            file = Some(p.display().to_string());
        }
        reports.push(report::TuneConfig::of(c, Some(i) == rec, file.as_deref()));
    }
    Ok(reports)
}

fn replay_counterexample(o: &neli_lab::check::Outcome, sim_seeds: u64) -> Option<Replay> {
    let f = o.file.as_ref()?;
    if let Some(e) = &o.file_error {
        return Some(Replay::LoadError(e.clone()));
    }
    // The model abstracts time and the coordinator; say whether the
    // simulator shows the same failure.
    let sc = neli_sim::Scenario::load(f);
    let hit = sc.ok().and_then(|sc| {
        (0..sim_seeds).find_map(|seed| {
            let r = neli_lab::run(&sc, seed);
            r.violations.first().map(|v| (seed, v.clone()))
        })
    });
    Some(match hit {
        Some((seed, v)) => Replay::Reproduced(seed, v),
        None if sim_seeds == 0 => Replay::NotTried,
        None => Replay::NotReproduced,
    })
}

/// `check`'s exit code when a limit stopped the search and nothing was
/// violated in the states it explored: neither a proof nor a failure.
const EXIT_INCOMPLETE: u8 = 3;

fn cmd_check(
    req: neli_lab::check::Request,
    out: PathBuf,
    search: neli_lab::check::Search,
    limits: neli_lab::check::Limits,
    budget_text: String,
    sim_seeds: u64,
    format: Format,
) -> ExitCode {
    let text = format == Format::Text;
    if text {
        println!("{}", neli_lab::build_line());
    }
    let cfg = match req.config() {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let bounds = neli_lab::check::describe(&cfg, search, req.threads);
    if text {
        println!("{bounds}");
    }
    let t0 = Instant::now();
    let s = match neli_lab::check::check(cfg, req.threads, search, limits, &budget_text, &out) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let wall_s = t0.elapsed().as_secs_f64();
    let replays: Vec<Option<Replay>> = s
        .outcomes
        .iter()
        .map(|o| if o.always && o.found.is_some() { replay_counterexample(o, sim_seeds) } else { None })
        .collect();
    let violated = s.outcomes.iter().any(|o| o.always && o.found.is_some());
    let vacuous = s.vacuous();
    let code = match (violated || vacuous, &s.stopped) {
        (true, _) => ExitCode::from(1),
        (false, Some(_)) => ExitCode::from(EXIT_INCOMPLETE),
        (false, None) => ExitCode::SUCCESS,
    };
    if !text {
        let r = check_report(&s, &replays, bounds, wall_s, violated || vacuous, sim_seeds);
        match format {
            Format::Json => print!("{}", r.json()),
            _ => print!("{}", r.junit()),
        }
        return code;
    }
    let stopped = match &s.stopped {
        Some(why) => format!(" (stopped: {why}; not exhaustive)"),
        None => String::new(),
    };
    println!("explored {} states ({} unique, depth {}) in {wall_s:.1}s{stopped}", s.states, s.unique, s.depth);
    let unreproduced = print_outcomes(&s, &replays, sim_seeds);
    if unreproduced > 0 {
        println!("WARNING   {unreproduced} counterexample(s) NOT REPRODUCED by the simulator (see above)");
    }
    match (violated, &s.stopped) {
        (true, _) => println!("verdict   FAIL"),
        (false, None) if vacuous => println!(
            "verdict   FAIL (vacuous: no member ever leads within these bounds, so the safety properties hold \
             trivially; an election that never elects is broken)"
        ),
        (false, Some(why)) => println!(
            "verdict   INCOMPLETE ({why}: no violation in the {} states explored, but the bounds were not \
             exhausted; raise the limit or narrow the bounds)",
            s.unique
        ),
        (false, None) => println!("verdict   PASS"),
    }
    code
}

/// The `--format json|junit` form of a check.
fn check_report(
    s: &neli_lab::check::Summary,
    replays: &[Option<Replay>],
    bounds: String,
    wall_s: f64,
    violated: bool,
    sim_seeds: u64,
) -> report::Check {
    report::Check {
        schema: report::CHECK_SCHEMA.into(),
        build: neli_lab::BUILD.into(),
        bounds,
        states: s.states as u64,
        unique: s.unique as u64,
        depth: s.depth as u64,
        wall_s,
        passed: !violated && s.stopped.is_none(),
        stopped: s.stopped.clone(),
        properties: s
            .outcomes
            .iter()
            .zip(replays)
            .map(|(o, rp)| {
                let file = o.file.as_ref().map(|f| f.display().to_string());
                report::CheckProperty {
                    property: o.property.into(),
                    kind: if o.always { "always" } else { "sometimes" }.into(),
                    outcome: match (o.always, o.found.is_some()) {
                        (_, false) if s.stopped.is_some() => "unproven",
                        (true, false) => "holds",
                        (true, true) => "violated",
                        (false, true) => "witnessed",
                        (false, false) => "never",
                    }
                    .into(),
                    path: if o.always { o.found.clone() } else { None },
                    scenario: file.clone(),
                    path_file: o.path_file.as_ref().map(|p| p.display().to_string()),
                    replay: rp.as_ref().map(|rp| {
                        let f = file.clone().unwrap_or_default();
                        match rp {
                            Replay::LoadError(e) => report::CheckReplay {
                                result: format!("not loadable: {e}"),
                                seed: None,
                                violation: None,
                                reproduce: None,
                            },
                            Replay::NotTried => report::CheckReplay {
                                result: "not tried".into(),
                                seed: None,
                                violation: None,
                                reproduce: Some(format!("{REPRO} run {f}")),
                            },
                            Replay::Reproduced(seed, v) => report::CheckReplay {
                                result: "reproduced".into(),
                                seed: Some(*seed),
                                violation: Some(v.clone()),
                                reproduce: Some(format!("{REPRO} run {f} --seed {seed}")),
                            },
                            Replay::NotReproduced => report::CheckReplay {
                                result: format!("not reproduced by seeds 0..{sim_seeds}"),
                                seed: None,
                                violation: None,
                                reproduce: Some(format!("{REPRO} run {f}")),
                            },
                        }
                    }),
                }
            })
            .collect(),
    }
}

/// The text form: a line per property, and the path, scenario file and
/// simulator replay of each violation. Returns how many counterexamples the
/// simulator did not reproduce.
fn print_outcomes(s: &neli_lab::check::Summary, replays: &[Option<Replay>], sim_seeds: u64) -> usize {
    let mut unreproduced = 0;
    for (o, rp) in s.outcomes.iter().zip(replays) {
        match (o.always, &o.found) {
            (true, None) if s.stopped.is_some() => {
                println!("unproven  {} (no violation in the states explored)", o.property)
            }
            (true, None) => println!("holds     {}", o.property),
            (false, Some(_)) => println!("witnessed {}", o.property),
            (false, None) if s.stopped.is_some() => {
                println!("unproven  {} (not reached in the states explored)", o.property)
            }
            (false, None) => println!("never     {} (not reachable within the bounds)", o.property),
            (true, Some(path)) => {
                println!("VIOLATED  {}\n{path}", o.property);
                if let (Some(f), Some(rp)) = (&o.file, rp) {
                    match rp {
                        Replay::LoadError(e) => {
                            println!("scenario  {} (the simulator cannot load it: {e})", f.display())
                        }
                        rp => {
                            if let Some(p) = &o.path_file {
                                println!("path      {} (replays step by step on the core)", p.display());
                            }
                            println!("scenario  {}", f.display());
                            match rp {
                                Replay::Reproduced(seed, v) => println!(
                                    "replay    REPRODUCED by the simulator with seed {seed}: {v}\n          {REPRO} run {} --seed {seed}",
                                    f.display()
                                ),
                                Replay::NotTried => {
                                    println!("replay    not tried (--sim-seeds 0): {REPRO} run {}", f.display())
                                }
                                _ => {
                                    unreproduced += 1;
                                    println!(
                                        "replay    NOT REPRODUCED: the simulator passes seeds 0..{sim_seeds} of this scenario.\n          \
                                         The model's path and the simulator disagree (coarser model timing, a fault aimed\n          \
                                         differently, or a model/simulator mismatch): do not trust either until explained.\n          \
                                         {REPRO} run {}",
                                        f.display()
                                    )
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    unreproduced
}

fn cmd_bench(arg: &str, seeds: u64, j: Option<usize>) -> ExitCode {
    let e = match catalog::load(arg) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    let seed_list: Vec<u64> = (0..seeds.max(1)).collect();
    let sim_s = e.scenario.duration.ms() as f64 / 1000.0;
    println!("bench {}: {} simulated s per seed, {} seeds", e.scenario.name, sim_s, seed_list.len());
    let mut rows = Vec::new();
    let mut configs = vec![1];
    let jn = jobs(j);
    if jn > 1 {
        configs.push(jn);
    }
    for jobs in configs {
        let b = ProgressBar::hidden();
        let t0 = Instant::now();
        let rs = explore::explore(&e.scenario, &seed_list, jobs, &b);
        let wall = t0.elapsed().as_secs_f64();
        let n = rs.len() as f64;
        rows.push(vec![
            jobs.to_string(),
            format!("{wall:.3}"),
            format!("{:.1}", n / wall),
            format!("{:.0}x", n * sim_s / wall),
        ]);
    }
    print!("{}", stats::table(&["threads", "wall s", "seeds/s", "simulated s per wall s"], &rows));
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    neli_lab::interrupt::install();
    match cli.cmd {
        Cmd::List => cmd_list(),
        Cmd::Run { scenario, seed, trace, timeline, format, artifacts, without } => {
            cmd_run(&scenario, without, seed, trace, timeline, format, artifacts)
        }
        Cmd::Replay { scenario, seed, without } => cmd_replay(&scenario, without, seed),
        Cmd::Explore(args) => cmd_explore(args),
        Cmd::Merge { files, format } => cmd_merge(&files, format),
        Cmd::Shrink { scenario, seed, out, budget, without } => cmd_shrink(&scenario, without, seed, out, budget),
        Cmd::Tune {
            scenario,
            heartbeat_timeout,
            session_timeout,
            grace,
            range: SeedRange { seeds, start, jobs },
            out,
            format,
        } => {
            cmd_tune(&scenario, &heartbeat_timeout, &session_timeout, grace.as_deref(), seeds, start, jobs, out, format)
        }
        Cmd::Check {
            members,
            mode,
            roles,
            heartbeat_timeout,
            session_timeout,
            grace,
            ticks,
            variant,
            assignment,
            no_membership_proof,
            pauses,
            crashes,
            isolations,
            clock_steps,
            max_skew,
            log_losses,
            threads,
            out,
            no_symmetry,
            dfs,
            simulate,
            seed,
            sim_seeds,
            format,
            max_states,
            time_budget,
        } => {
            let req = neli_lab::check::Request {
                members,
                mode: match mode {
                    CheckMode::Exclusive => neli_lab::check::Mode::Exclusive,
                    CheckMode::MultiRole => neli_lab::check::Mode::MultiRole,
                    CheckMode::NonExclusive => neli_lab::check::Mode::NonExclusive,
                },
                roles,
                heartbeat_timeout,
                session_timeout,
                grace,
                ticks,
                membership_proof: !no_membership_proof,
                incremental: assignment == CheckAssignment::CooperativeSticky,
                variant: neli::core::UnsafeVariant {
                    lease_from_receipt: matches!(variant, CheckVariant::LeaseFromReceipt),
                    any_record_counts: matches!(variant, CheckVariant::AnyRecordCounts),
                },
                skip_revoked_barrier: matches!(variant, CheckVariant::SkipRevokedBarrier),
                pauses,
                crashes,
                isolations,
                clock_steps,
                max_skew,
                log_losses,
                threads,
            };
            let search = match (simulate, !no_symmetry, dfs, seed) {
                (true, false, _, _) => {
                    return fail("--no-symmetry has no effect with --simulate (random walks merge no states)");
                }
                (true, _, true, _) => return fail("--dfs has no effect with --simulate (random walks)"),
                (true, _, _, seed) => neli_lab::check::Search::Simulate { seed: seed.unwrap_or(0) },
                (false, _, _, Some(s)) => {
                    return fail(format!("--seed {s} has no effect without --simulate (the search is exhaustive)"));
                }
                (false, true, true, None) => neli_lab::check::Search::DfsSymmetry,
                (false, true, false, None) => neli_lab::check::Search::BfsSymmetry,
                (false, false, true, None) => neli_lab::check::Search::Dfs,
                (false, false, false, None) => neli_lab::check::Search::Bfs,
            };
            let max_states = match (max_states, simulate) {
                (Some(0), _) => {
                    return fail(format!(
                        "--max-states 0: must be at least 1 (the default is {})",
                        neli_lab::check::DEFAULT_MAX_STATES
                    ));
                }
                (Some(n), _) => n,
                (None, true) => neli_lab::check::DEFAULT_SIMULATE_STATES,
                (None, false) => neli_lab::check::DEFAULT_MAX_STATES,
            };
            if simulate && threads != 2 {
                return fail(format!(
                    "--threads {threads} has no effect with --simulate (one thread, so a seed gives one result)"
                ));
            }
            let limits = match time_budget.as_deref().map(explore::parse_budget) {
                None => neli_lab::check::Limits { max_states, time_budget: None },
                Some(Ok(d)) => neli_lab::check::Limits { max_states, time_budget: Some(d) },
                Some(Err(e)) => return fail(e),
            };
            cmd_check(req, out, search, limits, time_budget.unwrap_or_default(), sim_seeds, format)
        }
        Cmd::Bench { scenario, seeds, jobs } => cmd_bench(&scenario, seeds, jobs),
    }
}
