//! `neli-lab check`: the stateright election model of `neli-models` (the
//! real core, exhaustive within bounds); counterexamples become scenario
//! files that `run` replays.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use super::fail;
use crate::model_check::{self, Limits, Mode, Request, Search};
use crate::report::Format;
use neli_models::GroupProtocol;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
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
    /// The group protocol: classic (the client expires its own session and
    /// an accepted commit renews it at the coordinator) or consumer
    /// (Kafka 4's KIP-848: neither; only heartbeats keep a session).
    #[arg(long, value_enum, default_value_t = CheckProtocol::Classic)]
    group_protocol: CheckProtocol,
    /// Members whose group heartbeats fail while their commits go through
    /// (default 1 with --group-protocol consumer, else 0).
    #[arg(long)]
    heartbeat_failures: Option<u8>,
    /// Static members (classic protocol, group.instance.id) replaced by a
    /// new process with the same instance id while the old one runs on:
    /// the new one gets the partitions at once, without a rebalance or a
    /// session expiry (default 0; refused with --group-protocol consumer).
    #[arg(long, default_value_t = 0)]
    static_replacements: u8,
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
    /// Checker threads, 1 or more [default: 2]; with --simulate, whose walk
    /// runs on one thread of its own, only 1.
    #[arg(long, value_name = "N", value_parser = super::Threads::CHECKER)]
    threads: Option<usize>,
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
    /// Output: text, one JSON document, JUnit XML (one testcase per property), JSON Lines or Markdown.
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
    /// Stop once the checker's resident memory reaches this (e.g. 16GiB,
    /// 12GB; `none` for no limit): INCOMPLETE (exit 3) with what was
    /// explored, instead of being killed by the kernel. Default: 90% of
    /// the machine's memory.
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<String>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum CheckMode {
    Exclusive,
    MultiRole,
    /// Multi-role, non-exclusive.
    NonExclusive,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum CheckVariant {
    Recommended,
    LeaseFromReceipt,
    AnyRecordCounts,
    /// The coordinator hands a moving partition to its new owner in the
    /// rebalance that tells its old owner to revoke it.
    SkipRevokedBarrier,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum CheckProtocol {
    Classic,
    Consumer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum CheckAssignment {
    Range,
    CooperativeSticky,
}

impl CheckArgs {
    fn request(&self) -> Request {
        Request {
            members: self.members,
            mode: match self.mode {
                CheckMode::Exclusive => Mode::Exclusive,
                CheckMode::MultiRole => Mode::MultiRole,
                CheckMode::NonExclusive => Mode::NonExclusive,
            },
            roles: self.roles,
            heartbeat_timeout: self.heartbeat_timeout,
            session_timeout: self.session_timeout,
            grace: self.grace,
            ticks: self.ticks,
            membership_proof: !self.no_membership_proof,
            incremental: self.assignment == CheckAssignment::CooperativeSticky,
            protocol: match self.group_protocol {
                CheckProtocol::Classic => GroupProtocol::Classic,
                CheckProtocol::Consumer => GroupProtocol::Consumer,
            },
            heartbeat_failures: self.heartbeat_failures,
            static_replacements: self.static_replacements,
            variant: neli::core::UnsafeVariant {
                lease_from_receipt: matches!(self.variant, CheckVariant::LeaseFromReceipt),
                any_record_counts: matches!(self.variant, CheckVariant::AnyRecordCounts),
            },
            skip_revoked_barrier: matches!(self.variant, CheckVariant::SkipRevokedBarrier),
            pauses: self.pauses,
            crashes: self.crashes,
            isolations: self.isolations,
            clock_steps: self.clock_steps,
            max_skew: self.max_skew,
            log_losses: self.log_losses,
            threads: self.threads.unwrap_or(if self.simulate { 1 } else { model_check::DEFAULT_THREADS }),
        }
    }
}

pub fn run(a: CheckArgs) -> ExitCode {
    let flags = Search::from_flags(a.simulate, !a.no_symmetry, a.dfs, a.seed, a.threads).and_then(|search| {
        Ok((search, Limits::from_flags(a.max_states, search, a.time_budget.as_deref(), a.memory_limit.as_deref())?))
    });
    let (search, limits) = match flags {
        Ok(f) => f,
        Err(err) => return fail(err),
    };
    let text = a.format == Format::Text;
    if text {
        println!("{}", crate::build_line());
    }
    let req = a.request();
    let cfg = match req.config() {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let bounds = model_check::describe(&cfg, search, req.threads);
    if text {
        println!("{bounds}");
    }
    let t0 = Instant::now();
    let budget_text = a.time_budget.clone().unwrap_or_default();
    let s = match model_check::check(cfg, req.threads, search, limits, &budget_text, &a.out) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let r = s.report(bounds, t0.elapsed().as_secs_f64(), a.sim_seeds);
    match a.format {
        Format::Text => print!("{}", r.text_body()),
        f => print!("{}", r.render(f)),
    }
    ExitCode::from(r.verdict.exit_code())
}
