//! `neli-lab run` and `replay`: one seed of one scenario.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use neli_sim::scenario::Layer;

use super::{fail, verdict_code, write};
use crate::report::{self, Format};
use crate::{catalog, svg};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
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
    /// Write the run's typed history to this file as JSON Lines: a header
    /// line with the history version, scenario and seed, then one event per
    /// line (acquired, revoked, fenced, writes, faults, holds, process
    /// starts and stops), in time order.
    #[arg(long, value_name = "FILE.jsonl")]
    history: Option<PathBuf>,
    /// Output: text, one JSON document, JUnit XML (one testcase), JSON Lines or Markdown.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// If the run fails, write DIR/<scenario>-seed<N>.toml, .trace.txt,
    /// .svg and .history.jsonl as `explore --artifacts` does.
    #[arg(long, value_name = "DIR")]
    artifacts: Option<PathBuf>,
    /// Run with this layer of the lease switched off (layer ablation):
    /// membership-proof, client-session-expiry or commit-generation-check.
    #[arg(long, value_name = "LAYER", value_parser = Layer::parse)]
    without: Option<Layer>,
}

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    scenario: String,
    #[arg(long)]
    seed: u64,
    /// Replay with this layer switched off, as `run --without`.
    #[arg(long, value_name = "LAYER", value_parser = Layer::parse)]
    without: Option<Layer>,
}

pub fn run(a: RunArgs) -> ExitCode {
    let e = match catalog::load_without(&a.scenario, a.without) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    let seed = a.seed.or(e.scenario.seed).unwrap_or(0);
    if a.format == Format::Text {
        // The header first: a long run says what it runs.
        println!("{}", crate::build_line());
    }
    let t0 = Instant::now();
    let r = crate::run(&e.scenario, seed);
    let time_s = t0.elapsed().as_secs_f64();
    if let Some(dir) = &a.artifacts {
        if let Err(err) = std::fs::create_dir_all(dir) {
            return fail(format!("--artifacts {}: cannot create: {err}", dir.display()));
        }
        if !r.passed() {
            match crate::artifacts::write_failing_seed(dir, &e.arg, &e.scenario, seed) {
                Ok(files) => eprintln!("wrote {} artifact file(s) to {}", files.len(), dir.display()),
                Err(err) => return fail(err),
            }
        }
    }
    if let Some(path) = &a.timeline {
        let picture = svg::timeline(&r, e.scenario.election.members, e.scenario.duration.ms());
        if let Err(err) = write(path, picture) {
            return fail(err);
        }
    }
    if let Some(path) = &a.history
        && let Err(err) = write(path, r.history.to_jsonl())
    {
        return fail(err);
    }
    let out = report::Run::new(&e.scenario, &e.arg, &r, a.trace, a.timeline.map(|p| p.display().to_string()));
    match a.format {
        Format::Text => print!("{}", out.replay_text()),
        f => print!("{}", out.render(f, time_s)),
    }
    verdict_code(out.passed)
}

pub fn replay(a: ReplayArgs) -> ExitCode {
    let e = match catalog::load_without(&a.scenario, a.without) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    // The build goes to stderr: stdout is the trace, byte-identical
    // whichever build replays it, so two builds' traces compare.
    eprintln!("{}", crate::build_line());
    let r = crate::run(&e.scenario, a.seed);
    let out = report::Run::new(&e.scenario, &e.arg, &r, true, None);
    print!("{}", out.replay_text());
    verdict_code(out.passed)
}
