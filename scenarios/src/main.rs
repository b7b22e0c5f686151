//! `neli-lab`: the command line over the simulated Kafka cluster and the
//! model checker. This file declares the commands and dispatches; each
//! command's flags and glue live in `neli_lab::cmd`, what they decide in
//! the library. See `scenarios/README.md` and the top-level README.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use neli_lab::cmd;

// The model checker allocates and frees a state per step; mimalloc does
// that faster than the system allocator (docs/benchmarks-log.md, "All four
// fault kinds").
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
    Run(cmd::run::RunArgs),
    /// Print the full trace of one seed (byte-identical on every run; the
    /// build line goes to stderr).
    Replay(cmd::run::ReplayArgs),
    /// Run many seeds of scenarios across threads; summary table per scenario.
    Explore(cmd::explore::ExploreArgs),
    /// Combine the JSON reports of `explore --shard i/n --format json` into
    /// the output one run over all seeds gives, with its exit code.
    Merge(cmd::merge::MergeArgs),
    /// Compare two `explore --format json` reports (BASE, HEAD) figure by
    /// figure; exit 1 naming each figure worse beyond its threshold.
    Diff(cmd::diff::DiffArgs),
    /// Minimise a failing run into a scenario file that still fails.
    Shrink(cmd::shrink::ShrinkArgs),
    /// Sweep T, S and G over seeds: CSV, SVG chart, safe region, recommendation.
    Tune(cmd::tune::TuneArgs),
    /// Model-check the election (stateright, the real core, exhaustive within
    /// bounds); counterexamples become scenario files that `run` replays.
    Check(cmd::check::CheckArgs),
    /// The harness's own speed: seeds/s and simulated seconds per wall second.
    Bench(cmd::bench::BenchArgs),
    /// The correctness gate: every shipped scenario with layer ablation on
    /// the simulator, then the model check in every mode; one verdict.
    Gate(cmd::gate::GateArgs),
    /// Print a shell completion script: `neli-lab completions bash >
    /// ~/.local/share/bash-completion/completions/neli-lab`.
    Completions(cmd::completions::CompletionsArgs),
    /// Print the man page (roff) on stdout, or a subcommand's: `neli-lab man | man -l -`.
    Man(cmd::completions::ManArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Reproduction lines name the program as it was run (scenarios/README.md, "Reproduction lines").
    neli_lab::invocation::init(neli_lab::invocation::Invocation::from_process());
    neli_lab::interrupt::install();
    match cli.cmd {
        Cmd::List => cmd::list::run(),
        Cmd::Run(a) => cmd::run::run(a),
        Cmd::Replay(a) => cmd::run::replay(a),
        Cmd::Explore(a) => cmd::explore::run(a),
        Cmd::Merge(a) => cmd::merge::run(a),
        Cmd::Diff(a) => cmd::diff::run(a),
        Cmd::Shrink(a) => cmd::shrink::run(a),
        Cmd::Tune(a) => cmd::tune::run(a),
        Cmd::Check(a) => cmd::check::run(a),
        Cmd::Bench(a) => cmd::bench::run(a),
        Cmd::Gate(a) => cmd::gate::run(a),
        Cmd::Completions(a) => cmd::completions::completions(a, Cli::command()),
        Cmd::Man(a) => cmd::completions::man(a, Cli::command()),
    }
}
