//! Merging: after each step, forget what neither a property nor a later
//! step can tell apart any more, so that states differing only in it merge.

use crate::election::ElectionModel;
use crate::election::state::ElectionState;

impl ElectionModel {
    /// Forgets what no property and no future step can tell apart any
    /// more, so that states differing only in it merge. Each rule reads the
    /// state alone, never the path to it: a rule that depended on the path
    /// would split one state in two (pinned by `models/tests/it/forget.rs`).
    /// - a leaderless-ticks counter that cannot pass the liveness bound
    ///   before the last tick, whatever comes, counts as 0 (both values
    ///   then stay within the bound to the end);
    /// - the tick of the last log loss once its window (T + skew) has passed:
    ///   no acquisition can rest on the lost log any more.
    pub fn forget(&self, s: &mut ElectionState) {
        let left = self.cfg.max_ticks.saturating_sub(s.now);
        let bound = self.cfg.liveness_bound();
        for counter in s.calm_leaderless.iter_mut() {
            if u16::from(*counter) + u16::from(left) <= u16::from(bound) {
                *counter = 0;
            }
        }
        let window = u16::from(self.cfg.heartbeat_timeout) + u16::from(self.cfg.faults.max_skew);
        if s.log_lost_at.is_some_and(|at| u16::from(s.now) >= u16::from(at) + window) {
            s.log_lost_at = None;
        }
    }
}
