//! The cached view of a core: what properties, the token monitor and the
//! choice of actions ask of a core in every state, read once when the core
//! changes, so that they do not reach into the shared `Member` (a cache
//! miss per member per state).

use neli::core::{Member, Time};

use crate::election::state::Slot;

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
}

impl Slot {
    /// The lease end and token of `role`, if this slot's core leads it
    /// (lease possibly expired: compare with the member's clock).
    pub(crate) fn lease(&self, role: u32) -> Option<(Time, u64)> {
        match self.view.leases.get(role as usize) {
            Some(lease) => *lease,
            None => {
                let core = self.core()?;
                core.leading_roles().find(|(r, _)| *r == role).map(|(_, l)| (l.until, l.token.0))
            }
        }
    }

    /// Whether partition `p` is assigned to this slot's core.
    pub(crate) fn assigned(&self, p: u32) -> bool {
        match self.view.assigned {
            Some(mask) => p < VIEW_PARTITIONS && mask & (1 << p) != 0,
            None => self.core().is_some_and(|c| c.assigned().contains(&p)),
        }
    }

    /// When the core next wants `handle_timeout` (`poll_timeout()`).
    pub(crate) fn timeout(&self) -> Option<Time> {
        self.view.timeout
    }
}
