//! Copy on write: a successor state shares every slot, the coordinator and
//! the logs with the state it came from, and copies only what its step
//! changes, so that a step that touches one member copies one slot.

use std::sync::Arc;

use neli::core::Member;

use super::fingerprint::core_fingerprint;
use crate::election::state::{Coordinator, ElectionState, LogRec, Slot};
use crate::election::view::View;

impl ElectionState {
    /// Slot `i` for a change: copied first if another state shares it.
    pub(crate) fn slot_mut(&mut self, i: usize) -> &mut Slot {
        Arc::make_mut(&mut self.slots[i])
    }

    /// The coordinator for a change: copied first if another state shares it.
    pub(crate) fn coord_mut(&mut self) -> &mut Coordinator {
        Arc::make_mut(&mut self.coord)
    }

    /// The logs for a change: copied first if another state shares them.
    pub(crate) fn logs_mut(&mut self) -> &mut Vec<(u64, Vec<LogRec>)> {
        Arc::make_mut(&mut self.logs)
    }
}

impl Slot {
    /// Replaces the core, and with it what is kept of it: its fingerprint
    /// and its view. A changed core is hashed and asked here, once, instead
    /// of in every state that shares it.
    pub(crate) fn set_core(&mut self, core: Option<Arc<Member>>) {
        self.core_fp = core.as_deref().map_or(0, core_fingerprint);
        self.view = core.as_deref().map_or_else(View::default, View::of);
        self.core = core;
    }
}
