//! What a membership change costs the roles of a multi-role election: how
//! many roles change holder, how many are interrupted (any leaderless time,
//! also when the same member takes the role back, as eager `range` does on
//! every rebalance), and how long each interrupted role stays leaderless.
//! Computed from hold intervals alone ([`super::LeaseSpan`]), so a simulated
//! run and a real-broker run of one scenario file are measured alike
//! (BENCHMARKS.md, "Many roles").

use super::LeaseSpan;

/// The cost of one membership change (a fault's start) to the roles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeCost {
    /// When the change began (run ms).
    pub at: u64,
    /// Roles whose holder before the change (by member slot) differs from
    /// their first holder after it.
    pub moved: u32,
    /// Roles with any leaderless time between this change and the next.
    pub interrupted: u32,
    /// Per interrupted role, its leaderless time in ms (role order).
    pub gaps_ms: Vec<u64>,
}

/// The cost of each change in `changes` (run ms, ascending) to roles
/// `0..roles`, judged from `spans` up to `end`. A role's window runs from
/// one change to the next (or `end`).
///
/// ```
/// use neli_sim::oracle::LeaseSpan;
/// use neli_sim::oracle::moves::change_costs;
///
/// let span = |slot: usize, role: u32, start: u64, end: u64| LeaseSpan {
///     slot, member: format!("m{slot}"), role, start, end, interrupted: false,
/// };
/// // Role 0 stays with m0; role 1 moves from m1 (crashed at 10 s) to m0 after 4 s.
/// let spans = [span(0, 0, 1_000, 30_000), span(1, 1, 1_000, 12_000), span(0, 1, 16_000, 30_000)];
/// let cost = &change_costs(&spans, 2, &[10_000], 30_000)[0];
/// assert_eq!((cost.moved, cost.interrupted, cost.gaps_ms.clone()), (1, 1, vec![4_000]));
/// ```
pub fn change_costs(spans: &[LeaseSpan], roles: u32, changes: &[u64], end: u64) -> Vec<ChangeCost> {
    changes
        .iter()
        .enumerate()
        .map(|(i, &at)| {
            let until = changes.get(i + 1).copied().unwrap_or(end);
            let mut cost = ChangeCost { at, moved: 0, interrupted: 0, gaps_ms: Vec::new() };
            for role in 0..roles {
                let mut mine: Vec<&LeaseSpan> = spans.iter().filter(|s| s.role == role).collect();
                mine.sort_by_key(|s| s.start);
                let before = mine.iter().rev().find(|s| s.start <= at);
                let after = mine.iter().find(|s| s.start > at && s.start < until);
                if let (Some(b), Some(a)) = (before, after)
                    && b.slot != a.slot
                {
                    cost.moved += 1;
                }
                let gap = leaderless(&mine, at, until);
                if gap > 0 {
                    cost.interrupted += 1;
                    cost.gaps_ms.push(gap);
                }
            }
            cost
        })
        .collect()
}

/// Time within `[from, until)` covered by none of `spans` (one role's):
/// from `from` to the first span after it, between spans, and from the
/// last span's end to `until`.
fn leaderless(spans: &[&LeaseSpan], from: u64, until: u64) -> u64 {
    let mut covered_to = from;
    let mut gap = 0;
    for s in spans.iter().filter(|s| s.end > from && s.start < until) {
        if s.start > covered_to {
            gap += s.start - covered_to;
        }
        covered_to = covered_to.max(s.end);
    }
    // A role nobody led again before the next change: leaderless to it.
    gap + until.saturating_sub(covered_to.min(until))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(slot: usize, role: u32, start: u64, end: u64) -> LeaseSpan {
        LeaseSpan { slot, member: format!("m{slot}"), role, start, end, interrupted: false }
    }

    #[test]
    fn an_eager_rebalance_interrupts_a_role_that_comes_back_to_its_holder() {
        // range: m0 gives role 0 up at 10.2 s and takes it again at 11.5 s.
        let spans = [span(0, 0, 0, 10_200), span(0, 0, 11_500, 20_000)];
        let c = &change_costs(&spans, 1, &[10_000], 20_000)[0];
        assert_eq!((c.moved, c.interrupted, c.gaps_ms.clone()), (0, 1, vec![1_300]));
    }

    #[test]
    fn a_role_never_led_again_is_leaderless_until_the_next_change() {
        let spans = [span(1, 0, 0, 5_000), span(0, 0, 25_000, 30_000)];
        let costs = change_costs(&spans, 1, &[4_000, 20_000], 30_000);
        assert_eq!(costs[0].gaps_ms, [15_000], "from the end at 5 s to the next change at 20 s");
        assert_eq!(costs[1].gaps_ms, [5_000]);
        assert_eq!(costs[0].moved, 0, "no holder after it within its window");
    }

    #[test]
    fn an_untouched_role_costs_nothing() {
        let spans = [span(0, 0, 0, 30_000), span(1, 1, 0, 30_000)];
        let c = &change_costs(&spans, 2, &[10_000], 30_000)[0];
        assert_eq!((c.moved, c.interrupted), (0, 0));
    }
}
