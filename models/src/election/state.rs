//! What a state of the election model holds: member slots (each a real
//! core plus what its driver and the property monitors know of it), the
//! coordinator's table, the partition logs, the fault budgets spent and the
//! monitors' verdicts; and the questions properties ask of it (who leads
//! now). How the coordinator acts on its table is `coordinator.rs`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use neli::Time;
use neli::core::Member;

use super::Faults;
use super::view::View;

/// A member incarnation: slot and restart count (its instance name is `m{slot}.{inc}`).
pub type Key = (u8, u8);

/// A heartbeat in the log: (role, term, sent_at, writer), or `None` for garbage.
pub type LogRec = Option<(u32, u64, u64, Key)>;

/// The log epoch of a token acquired so soon after a log loss that its
/// evidence may come from the lost log (see `ElectionState::log_lost_at`).
pub(super) const UNKNOWN_LOG: u8 = u8::MAX;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Callback {
    Assigned {
        generation: u64,
        partitions: Vec<u32>,
        /// Sent while the member could not hear the coordinator: it
        /// cannot be polled until the member hears it again (a classic
        /// answer arriving late once the link heals; under the consumer
        /// protocol, the assignment in the answer to a heartbeat that gets
        /// through), only the newest such answer is kept, and it is dropped
        /// if the member's join ends before it can hear it (`Lost`):
        /// models/README.md, "What a member hears of a rebalance".
        late: bool,
    },
    /// Rejoin the group. Eager: the coordinator is rebalancing, revoke
    /// everything first. Incremental: revoke nothing, claim what the member
    /// owns (and start a rebalance if none is on: the member revoked a
    /// partition that must move, and the next rebalance hands it on).
    Rejoin,
    Lost,
}

impl Callback {
    /// A rebalance answer still waiting for its member to hear the
    /// coordinator (`Assigned`'s `late`).
    pub fn is_late(&self) -> bool {
        matches!(self, Callback::Assigned { late: true, .. })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupMember {
    pub expiry: u8,
    pub rejoined: bool,
    /// Incremental assignment: what the member claimed when it last
    /// (re)joined, and the generation it got those partitions in (the
    /// cooperative-sticky JoinGroup metadata). Empty under eager assignment.
    pub owned: Vec<u32>,
    pub owned_generation: u64,
}

/// The coordinator's member table, generation and rebalance deadline (what
/// it does with them: `coordinator.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Coordinator {
    pub generation: u64,
    /// `Some(deadline)` while PreparingRebalance; the rebalance timeout is `S`.
    pub rebalance: Option<u8>,
    pub members: BTreeMap<Key, GroupMember>,
}

/// A message in a member's outbox. Its sender is the slot's current
/// incarnation (a crash empties the outbox), so it names no member: a
/// renaming of members moves outboxes with their slots unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Msg {
    /// A heartbeat: (role, term, sent_at).
    Produce {
        partition: u32,
        hb: (u32, u64, u64),
    },
    Commit {
        generation: u64,
        sent_at: u64,
    },
}

/// One member slot. Shared between states until a step changes it (copy on
/// write, see [`ElectionState::slots`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// The core, anonymous between steps: its instance name is empty and
    /// set only while a step runs it (see `ElectionModel::run`), because
    /// the name is a function of the slot's position and `inc`, and an
    /// anonymous core lets a renaming of members move slots as they are.
    /// Shared between states until a step changes it (copy on write).
    /// Changed only through `Slot::set_core`, which keeps the next two
    /// fields and `view` in step with it.
    pub(super) core: Option<Arc<Member>>,
    /// `fingerprint(core)`, kept with it (see [`Slot::core_fp`]).
    pub(super) core_fp: u64,
    /// A fingerprint of the whole slot, core included, brought up to date
    /// at the end of every step that changed the slot (`ElectionState::seal`):
    /// states are hashed by their slots' fingerprints, and symmetry orders
    /// slots by them, so no slot is hashed field by field more than once.
    pub(super) fp: u64,
    /// What every state asks of the core, read once when it changes.
    pub(super) view: View,
    pub inc: u8,
    pub offset: i8,
    pub paused: bool,
    pub isolated: bool,
    /// Its group heartbeats fail (`Faults::heartbeat_failures`); its
    /// commits still reach the coordinator.
    pub heartbeats_failing: bool,
    /// A spare process for a static replacement
    /// (`Faults::static_replacements`), not started yet.
    pub spare: bool,
    /// A static member whose instance id a newer process took over: it is
    /// no member any more and never joins again (FENCED_INSTANCE_ID is
    /// fatal to a librdkafka client).
    pub replaced: bool,
    pub in_group: bool,
    /// Local time of the last successful contact with the coordinator.
    pub coord_ok: u64,
    pub callbacks: VecDeque<Callback>,
    pub read: BTreeMap<u32, u64>,
    pub outbox: Vec<Msg>,
    /// Per role: this incarnation's last acquisition, as (the log epoch it
    /// happened in, the member's own log epoch then, token). Kept only when
    /// log losses are on (without them offsets only grow, so it would split
    /// states for nothing).
    pub acquired: BTreeMap<u32, (u8, u64, u64)>,
    /// Per role whose partition is assigned: the send time (member clock)
    /// of the newest heartbeat this incarnation wrote and read back, of any
    /// term. The `send-time` property bounds every lease by it + T.
    pub own_read: BTreeMap<u32, u64>,
    /// While anything is assigned: the send time of the newest membership
    /// proof the coordinator accepted from this incarnation. The
    /// `membership-proof` property bounds every lease by it + T.
    pub proof_sent: Option<u64>,
}

impl Slot {
    pub(super) fn new(core: Option<Member>, inc: u8, coord_ok: u64) -> Slot {
        let mut slot = Slot {
            core: None,
            core_fp: 0,
            fp: 0,
            view: View::default(),
            inc,
            offset: 0,
            paused: false,
            isolated: false,
            heartbeats_failing: false,
            spare: false,
            replaced: false,
            in_group: core.is_some(),
            coord_ok,
            callbacks: VecDeque::new(),
            read: BTreeMap::new(),
            outbox: Vec::new(),
            acquired: BTreeMap::new(),
            own_read: BTreeMap::new(),
            proof_sent: None,
        };
        slot.set_core(core.map(Arc::new));
        slot.fp = slot.fingerprint();
        slot
    }

    /// A spare process for a static replacement, not started.
    pub(super) fn spare() -> Slot {
        let mut slot = Slot::new(None, 0, 0);
        slot.spare = true;
        slot.fp = slot.fingerprint();
        slot
    }

    /// The member's core (anonymous: see the field's docs), if it runs.
    pub fn core(&self) -> Option<&Member> {
        self.core.as_deref()
    }
}

impl Slot {
    /// The lease end and token of `role`, if this slot's core leads it
    /// (lease possibly expired: compare with the member's clock).
    pub(crate) fn lease(&self, role: u32) -> Option<(Time, u64)> {
        match self.view.lease(role) {
            Some(lease) => lease,
            None => {
                let core = self.core()?;
                core.leading_roles().find(|(r, _)| *r == role).map(|(_, l)| (l.until, l.token.0))
            }
        }
    }

    /// Whether partition `p` is assigned to this slot's core.
    pub(crate) fn assigned(&self, p: u32) -> bool {
        match self.view.assigned(p) {
            Some(assigned) => assigned,
            None => self.core().is_some_and(|c| c.assigned().contains(&p)),
        }
    }

    /// When the core next wants `handle_timeout` (`poll_timeout()`).
    pub(crate) fn timeout(&self) -> Option<Time> {
        self.view.timeout()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionState {
    pub now: u8,
    /// Per member slot, shared between states until a step changes it:
    /// most steps touch one member, so a state's clone copies no slot.
    pub slots: Vec<Arc<Slot>>,
    /// Shared between states until a step changes it, like the slots.
    pub coord: Arc<Coordinator>,
    /// Per partition: offset of the first kept record and the records from it
    /// (a prefix nobody can read any more is trimmed). Shared like `coord`.
    pub logs: Arc<Vec<(u64, Vec<LogRec>)>>,
    pub used: Faults,
    /// How many times the logs were lost: tokens are comparable only
    /// within one epoch (or as `(epoch, token)`).
    pub log_epoch: u8,
    /// The tick of the last log loss. An acquisition within T (+ skew) of
    /// it may rest on a heartbeat read from the lost log, so which log its
    /// token belongs to is unknown: the token-order properties skip it.
    pub log_lost_at: Option<u8>,
    /// Per role: the last acquisition's epoch, token and member.
    pub last_acquired: Vec<Option<(u8, u64, Key)>>,
    /// Per role: the newest `(epoch of acquisition, token)` a leader acted with.
    pub resource: Vec<Option<(u8, u64)>>,
    pub token_regressed: bool,
    /// A member incarnation acquired a role with a token not above its own
    /// previous one (across log losses too).
    pub own_token_regressed: bool,
    pub resource_regressed: bool,
    /// Some member held a lease ending later than its newest own heartbeat
    /// read back + T (the core's send-time rule, [`Slot::own_read`]).
    pub send_time_broken: bool,
    /// With the proof on, some member held a lease ending later than its
    /// newest accepted membership proof's send time + T ([`Slot::proof_sent`]).
    pub proof_cap_broken: bool,
    pub handover: bool,
    /// Right after an acquisition, the core's `token(role)` was not the
    /// token of its `Acquired` event.
    pub token_misreported: bool,
    /// A member led a role again with the token of a term whose lease had
    /// ended before the step's input arrived.
    pub term_revived: bool,
    /// Per role: consecutive ticks, all faults healed, without a leader.
    pub calm_leaderless: Vec<u8>,
}

impl ElectionState {
    /// The member clock of `slot` at the global tick.
    pub fn local(&self, slot: usize) -> u64 {
        (i16::from(self.now) + i16::from(self.slots[slot].offset)).max(0) as u64
    }

    /// Incarnations leading `role` now, each judged on its own clock.
    pub fn leaders(&self, role: u32) -> Vec<(Key, u64)> {
        self.leading(role).collect()
    }

    /// How many incarnations lead `role` now ([`Self::leaders`] without
    /// collecting them: properties ask this of every state).
    pub fn leader_count(&self, role: u32) -> usize {
        self.leading(role).count()
    }

    fn leading(&self, role: u32) -> impl Iterator<Item = (Key, u64)> + '_ {
        (0..self.slots.len()).filter_map(move |i| self.leads(i, role).map(|t| ((i as u8, self.slots[i].inc), t)))
    }

    /// The token slot `i` leads `role` with now, if it leads it.
    pub(super) fn leads(&self, i: usize, role: u32) -> Option<u64> {
        // The cached view rules out the members without a lease cheaply; the
        // answer itself is the core's own `is_leader` on the member's clock,
        // the call an application of the sans-IO core makes.
        let (_, token) = self.slots[i].lease(role)?;
        let core = self.slots[i].core()?;
        core.is_leader(role, Time::from_millis(self.local(i))).then_some(token)
    }

    pub(super) fn faults_active(&self) -> bool {
        self.slots.iter().any(|s| {
            s.paused
                || s.isolated
                || s.heartbeats_failing
                || (s.core.is_none() && !s.spare)
                || (s.replaced && s.in_group)
                || !s.outbox.is_empty()
        })
    }
}
