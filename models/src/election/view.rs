//! The cached view of a core: what properties, the token monitor and the
//! choice of actions ask of a core in every state, read once when the core
//! changes, so that they do not reach into the shared `Member` (a cache
//! miss per member per state). Part of what keeps the search fast
//! (models/README.md, "How a state stays cheap"), below the state that
//! holds it: a function of the core alone.

use neli::Time;
use neli::core::Member;

/// Roles and partitions whose lease and assignment [`View`] keeps; a
/// larger model asks the core itself.
const VIEW_ROLES: usize = 4;
const VIEW_PARTITIONS: u32 = 64;

/// The answers of a core the model needs in every state. A function of the
/// core: equal cores have equal views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct View {
    /// Per role below [`VIEW_ROLES`]: the lease end and token, if leading.
    leases: [Option<(Time, u64)>; VIEW_ROLES],
    /// `poll_timeout()`.
    timeout: Option<Time>,
    /// `assigned()` as a bit mask, if every partition is below [`VIEW_PARTITIONS`].
    assigned: Option<u64>,
}

impl View {
    pub(super) fn of(core: &Member) -> View {
        let mut leases = [None; VIEW_ROLES];
        for (role, lease) in core.leading_roles() {
            if let Some(slot) = leases.get_mut(role as usize) {
                *slot = Some((lease.until, lease.token.0));
            }
        }
        let assigned = core.assigned().iter().try_fold(0u64, |mask, p| (*p < VIEW_PARTITIONS).then(|| mask | 1 << p));
        View { leases, timeout: core.poll_timeout(), assigned }
    }

    /// The lease end and token of `role` if this view keeps the role
    /// (`Some(None)`: the core does not lead it); `None` when the core
    /// itself must be asked.
    pub(super) fn lease(&self, role: u32) -> Option<Option<(Time, u64)>> {
        self.leases.get(role as usize).copied()
    }

    /// Whether partition `p` is assigned, if this view keeps the
    /// assignment; `None` when the core itself must be asked.
    pub(super) fn assigned(&self, p: u32) -> Option<bool> {
        self.assigned.map(|mask| p < VIEW_PARTITIONS && mask & (1 << p) != 0)
    }

    /// `poll_timeout()`.
    pub(super) fn timeout(&self) -> Option<Time> {
        self.timeout
    }
}
