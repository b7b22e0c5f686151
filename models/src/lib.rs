//! Stateright models that exhaustively check the real `neli` core: members run
//! `neli::core::Member` itself against an abstract group coordinator and
//! partition log, under a discrete global clock and bounded faults.

pub mod bfs;
pub mod election;

pub use election::{ElectionAction, ElectionModel, ElectionModelCfg, ElectionState, Faults, GroupProtocol, property};
pub mod trace;

pub use trace::{
    PathError, Replay, StepError, counterexample_to_scenario, cut_at_violation, format_path, leadership, replay_path,
};
