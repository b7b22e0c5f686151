//! States per second of the election model against a standard stateright
//! workload, in one run on one machine: two-phase commit (the TLA+
//! `TwoPhase` specification, written here in the shape of stateright's own
//! `2pc` example: a `Vec` of resource-manager states, a `Vec<bool>` of
//! prepared managers and a `BTreeSet` of messages), both through
//! stateright's DFS checker on the same number of threads. Usage:
//! `cargo run --release -p neli-models --example ratio -- [--threads N] [--rms N]`
//! (default 2 threads, 9 resource managers). The election model runs at
//! bound A (3 members, 10 ticks, one pause, one isolation), without and
//! with symmetry. Prints one line per run and the ratios.

use std::collections::BTreeSet;
use std::time::Instant;

use neli_models::bfs::SymmetricBfs;
use neli_models::election::{canonical_fingerprint, representative};
use neli_models::{ElectionModelCfg, Faults};
use stateright::{Checker, Model, Property};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Rm {
    Working,
    Prepared,
    Committed,
    Aborted,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Tm {
    Init,
    Committed,
    Aborted,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Msg {
    Prepared(usize),
    Commit,
    Abort,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct TwoPhaseState {
    rm: Vec<Rm>,
    tm: Tm,
    tm_prepared: Vec<bool>,
    msgs: BTreeSet<Msg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TwoPhaseAction {
    TmRcvPrepared(usize),
    TmCommit,
    TmAbort,
    RmPrepare(usize),
    RmChooseToAbort(usize),
    RmRcvCommitMsg(usize),
    RmRcvAbortMsg(usize),
}

struct TwoPhase {
    rms: usize,
}

impl Model for TwoPhase {
    type State = TwoPhaseState;
    type Action = TwoPhaseAction;

    fn init_states(&self) -> Vec<TwoPhaseState> {
        vec![TwoPhaseState {
            rm: vec![Rm::Working; self.rms],
            tm: Tm::Init,
            tm_prepared: vec![false; self.rms],
            msgs: BTreeSet::new(),
        }]
    }

    fn actions(&self, s: &TwoPhaseState, out: &mut Vec<TwoPhaseAction>) {
        use TwoPhaseAction::*;
        if s.tm == Tm::Init && s.tm_prepared.iter().all(|p| *p) {
            out.push(TmCommit);
        }
        if s.tm == Tm::Init {
            out.push(TmAbort);
        }
        for i in 0..self.rms {
            if s.tm == Tm::Init && s.msgs.contains(&Msg::Prepared(i)) {
                out.push(TmRcvPrepared(i));
            }
            if s.rm[i] == Rm::Working {
                out.push(RmPrepare(i));
                out.push(RmChooseToAbort(i));
            }
            if s.msgs.contains(&Msg::Commit) {
                out.push(RmRcvCommitMsg(i));
            }
            if s.msgs.contains(&Msg::Abort) {
                out.push(RmRcvAbortMsg(i));
            }
        }
    }

    fn next_state(&self, last: &TwoPhaseState, action: TwoPhaseAction) -> Option<TwoPhaseState> {
        use TwoPhaseAction::*;
        let mut s = last.clone();
        match action {
            TmRcvPrepared(i) => s.tm_prepared[i] = true,
            TmCommit => {
                s.tm = Tm::Committed;
                s.msgs.insert(Msg::Commit);
            }
            TmAbort => {
                s.tm = Tm::Aborted;
                s.msgs.insert(Msg::Abort);
            }
            RmPrepare(i) => {
                s.rm[i] = Rm::Prepared;
                s.msgs.insert(Msg::Prepared(i));
            }
            RmChooseToAbort(i) => s.rm[i] = Rm::Aborted,
            RmRcvCommitMsg(i) => s.rm[i] = Rm::Committed,
            RmRcvAbortMsg(i) => s.rm[i] = Rm::Aborted,
        }
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("consistent", |_, s: &TwoPhaseState| {
                !(s.rm.contains(&Rm::Committed) && s.rm.contains(&Rm::Aborted))
            }),
            Property::sometimes("abort agreement", |_, s: &TwoPhaseState| s.rm.iter().all(|r| *r == Rm::Aborted)),
            Property::sometimes("commit agreement", |_, s: &TwoPhaseState| s.rm.iter().all(|r| *r == Rm::Committed)),
        ]
    }
}

/// One run's figures: (generated, unique, seconds).
fn figures<M: Model>(checker: &impl Checker<M>, start: Instant) -> (usize, usize, f64) {
    (checker.state_count(), checker.unique_state_count(), start.elapsed().as_secs_f64())
}

fn line(name: &str, (states, unique, secs): (usize, usize, f64)) -> f64 {
    let rate = states as f64 / secs;
    println!("{name:<44} {states:>10} generated {unique:>10} unique {secs:>7.2} s {:>8.0} k states/s", rate / 1e3);
    rate
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let (threads, rms) = (arg("--threads", 2), arg("--rms", 9));
    println!("threads: {threads}, two-phase commit with {rms} resource managers");
    let start = Instant::now();
    let tpc = TwoPhase { rms }.checker().threads(threads).spawn_dfs().join();
    tpc.assert_no_discovery("consistent");
    let tpc_rate = line("2PC, stateright DFS", figures(&tpc, start));

    let mut cfg = ElectionModelCfg::exclusive(3);
    cfg.faults = Faults { pauses: 1, isolations: 1, ..Faults::default() };
    let model = cfg.into_model();
    let start = Instant::now();
    let dfs = model.clone().checker().threads(threads).spawn_dfs().join();
    let dfs_rate = line("election bound A, stateright DFS", figures(&dfs, start));
    let start = Instant::now();
    let sym = model.clone().checker().threads(threads).symmetry_fn(representative).spawn_dfs().join();
    let sym_rate = line("election bound A, stateright DFS + symmetry", figures(&sym, start));
    let start = Instant::now();
    let bfs = SymmetricBfs::builder(model.clone()).threads(threads).symmetry_fn(canonical_fingerprint).spawn().join();
    let bfs_rate = line("election bound A, neli_models::bfs + symmetry", figures(&bfs, start));
    for (name, rate) in [("DFS", dfs_rate), ("DFS + symmetry", sym_rate), ("BFS + symmetry", bfs_rate)] {
        println!("ratio election {name} / 2PC DFS: {:.2}", rate / tpc_rate);
    }
}
