//! The election model: members running the real `neli::core::Member` against
//! an abstract classic-protocol group coordinator and a partition log, under
//! a discrete global clock and bounded, individually switchable faults.
//!
//! Semantics: maximal progress. Within one tick members and the coordinator
//! interleave freely; the clock advances only once no member can do any more
//! work (poll a callback, read a record, fire a due timer, join, sync). Delay
//! therefore only ever comes from a fault: a pause, an isolation, a message in
//! flight, a skewed clock. One tick is one millisecond of core time.
//!
//! The model reads in this file (configuration, the `Model`), `state.rs`,
//! `actions.rs` (when each action is enabled), `steps.rs` (what each does,
//! one function per action), `member.rs` (how a core is driven),
//! `coordinator.rs` and `property.rs`; `speed/` holds what keeps the search
//! fast (models/README.md, "How a state stays cheap").

mod actions;
mod coordinator;
mod member;
pub mod property;
mod speed;
mod state;
mod steps;
mod view;

use std::sync::Arc;
use std::time::Duration;

use neli::core::{CoreConfig, Member, UnsafeVariant};
use stateright::{Model, Property};

pub use actions::ElectionAction;
pub use coordinator::{deal, deal_count, sticky_deal};
pub use speed::{canonical_fingerprint, rename_members, representative};
pub use state::{Callback, Coordinator, ElectionState, GroupMember, Key, LogRec, Msg, Slot};

/// Fault budgets; 0 switches a kind off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Faults {
    /// Process pauses (SIGSTOP/GC): nothing of the member runs, timers fire late.
    pub pauses: u8,
    pub crashes: u8,
    /// Member cannot reach the coordinator but still reaches the partition leader.
    pub isolations: u8,
    /// Clock steps of one tick (forward jump or a tick the clock stands still).
    pub clock_steps: u8,
    /// Largest |local - global| any member clock may reach.
    pub max_skew: u8,
    /// Produce/commit messages go in flight; this many ticks may pass while
    /// any message is in flight (delivery order is FIFO unless `reorder`).
    pub message_delay: u8,
    pub reorder: bool,
    pub losses: u8,
    /// Garbage records written to partition 0 by a stranger.
    pub foreign_writes: u8,
    /// The partition leader restarts without its data: every partition's
    /// log is lost and recreated empty, so offsets (tokens) restart at 0;
    /// the group, on its own coordinator, is untouched.
    pub log_losses: u8,
    /// The member's group heartbeats fail (answered with errors that do not
    /// fence, or lost) while its other requests (the membership proof's
    /// commits, produce, fetch) still go through: the coordinator stops
    /// renewing its session. What a Kafka 4 consumer-protocol member whose
    /// heartbeats are refused sees; the fault that separates the two
    /// protocols (docs/background.md, "Group protocols").
    pub heartbeat_failures: u8,
    /// Static membership (classic protocol, `group.instance.id`): a new
    /// process with a member's instance id joins while the old one still
    /// runs (paused, cut off, or simply unaware), and the coordinator hands
    /// it the old member's partitions in the same generation, without a
    /// rebalance and without the old member's session expiring. The old
    /// process learns only from its next answer (FENCED_INSTANCE_ID, fatal:
    /// it never rejoins). Each replacement starts one of this many spare
    /// processes (docs/background.md, "Group protocols").
    pub static_replacements: u8,
}

/// The group protocol the coordinator and the client speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum GroupProtocol {
    /// JoinGroup/SyncGroup/Heartbeat: the client expires its own session
    /// after S without a heartbeat answer, and an accepted generation-checked
    /// commit renews its session at the coordinator.
    #[default]
    Classic,
    /// KIP-848 (`group.protocol=consumer`): no client-side session expiry
    /// (a member learns it was fenced only from an answer), and a commit
    /// renews nothing: only heartbeats keep the session.
    Consumer,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ElectionModelCfg {
    pub members: u8,
    pub roles: u32,
    pub partitions: u32,
    /// Exclusive mode: check at-most-one-leader. Otherwise only liveness and tokens.
    pub exclusive: bool,
    /// `T`, `S`, `G` and the heartbeat interval, in ticks.
    pub heartbeat_timeout: u8,
    pub session_timeout: u8,
    pub grace: u8,
    pub heartbeat_interval: u8,
    pub membership_proof: bool,
    /// Incremental (cooperative-sticky) assignment: a rebalance keeps a
    /// partition with its owner, and one that must move is revoked from its
    /// owner alone and handed on in the next rebalance. Eager (`false`):
    /// every rebalance revokes everything from everyone.
    pub incremental: bool,
    pub variant: UnsafeVariant,
    /// Deliberately unsafe coordinator (with `incremental` only): a moving
    /// partition goes to its new owner in the same rebalance in which its
    /// old owner is told to revoke it, instead of one rebalance later, so
    /// nothing waits for the old owner's Revoked barrier.
    pub skip_revoked_barrier: bool,
    /// The group protocol (classic unless said).
    pub protocol: GroupProtocol,
    pub faults: Faults,
    pub max_ticks: u8,
    /// Forget, after every step, what no property and no later step can
    /// tell apart any more ([`ElectionModel::forget`]), so that such states
    /// merge. On by default; off only to test that forgetting merges and
    /// never splits.
    pub forget: bool,
    /// Milliseconds per tick when a counterexample is written as a scenario.
    pub tick_ms: u64,
}

impl ElectionModelCfg {
    /// The recommended exclusive configuration (T = 2, S = 3T, G = 0, proof
    /// on) with every fault kind off; tests switch faults on one by one.
    pub fn exclusive(members: u8) -> Self {
        ElectionModelCfg {
            members,
            roles: 1,
            partitions: 1,
            exclusive: true,
            heartbeat_timeout: 2,
            session_timeout: 6,
            grace: 0,
            heartbeat_interval: 1,
            membership_proof: true,
            incremental: false,
            variant: UnsafeVariant::default(),
            skip_revoked_barrier: false,
            protocol: GroupProtocol::Classic,
            faults: Faults::default(),
            max_ticks: 10,
            forget: true,
            tick_ms: 500,
        }
    }

    /// Ticks a role may stay leaderless once every fault has healed.
    pub fn liveness_bound(&self) -> u8 {
        2 * self.session_timeout + self.grace + 2
    }

    pub fn into_model(self) -> ElectionModel {
        let incarnations = self.faults.crashes;
        let names = (0..self.members).map(|m| (0..=incarnations).map(|inc| name((m, inc))).collect()).collect();
        ElectionModel { cfg: self, names }
    }
}

#[derive(Debug, Clone)]
pub struct ElectionModel {
    pub cfg: ElectionModelCfg,
    /// `m{slot}.{inc}` for every incarnation a run can reach, made once.
    names: Vec<Vec<String>>,
}

impl ElectionModel {
    /// The instance name of incarnation `key`.
    fn name(&self, key: Key) -> String {
        match self.names.get(usize::from(key.0)).and_then(|n| n.get(usize::from(key.1))) {
            Some(name) => name.clone(),
            None => name(key),
        }
    }

    /// The core configuration, anonymous (see [`Slot`]'s `core`).
    fn core_config(&self) -> CoreConfig {
        let c = &self.cfg;
        let ms = |t: u8| Duration::from_millis(u64::from(t));
        CoreConfig {
            name: String::new(),
            roles: c.roles,
            partitions: c.partitions,
            heartbeat_timeout: ms(c.heartbeat_timeout),
            heartbeat_interval: ms(c.heartbeat_interval),
            grace: ms(c.grace),
            membership_proof: c.membership_proof,
            resign_hold_off: ms(c.heartbeat_timeout),
            incremental: c.incremental,
            unsafe_variant: c.variant,
        }
    }
}

fn name(key: Key) -> String {
    format!("m{}.{}", key.0, key.1)
}

impl Model for ElectionModel {
    type State = ElectionState;
    type Action = ElectionAction;

    fn init_states(&self) -> Vec<ElectionState> {
        let c = &self.cfg;
        let slot = |_| Arc::new(Slot::new(Some(Member::new(self.core_config())), 0, 0));
        // Spare processes for static replacements: not started, not members.
        let spare = |_| Arc::new(Slot::spare());
        vec![ElectionState {
            now: 0,
            slots: (0..c.members).map(slot).chain((0..c.faults.static_replacements).map(spare)).collect(),
            // Every member has joined; the first rebalance is pending.
            coord: Arc::new(Coordinator {
                generation: 0,
                rebalance: Some(c.session_timeout),
                members: (0..c.members).map(|i| ((i, 0), GroupMember::joined(c.session_timeout))).collect(),
            }),
            logs: Arc::new(vec![(0, Vec::new()); c.partitions as usize]),
            used: Faults::default(),
            log_epoch: 0,
            log_lost_at: None,
            last_acquired: vec![None; c.roles as usize],
            resource: vec![None; c.roles as usize],
            token_regressed: false,
            own_token_regressed: false,
            resource_regressed: false,
            send_time_broken: false,
            proof_cap_broken: false,
            handover: false,
            token_misreported: false,
            term_revived: false,
            calm_leaderless: vec![0; c.roles as usize],
        }]
    }

    fn actions(&self, s: &ElectionState, out: &mut Vec<ElectionAction>) {
        self.enabled(s, out);
    }

    /// The action's step (`steps.rs`), then what follows every step: the
    /// liveness counters restart on a fault, members hear from the
    /// coordinator, states merge, and changed slots are fingerprinted.
    fn next_state(&self, last: &ElectionState, action: ElectionAction) -> Option<ElectionState> {
        use ElectionAction::*;
        let mut s = last.clone();
        let s_ = &mut s;
        match action {
            Tick { slow } => self.tick(last, s_, slow),
            Join(m) => self.join(s_, m),
            Sync { deal } => self.sync(s_, deal),
            Poll(m) => self.poll(s_, m)?,
            Read(m, p) => self.read(s_, m, p),
            Timeout(m) => self.timeout(s_, m),
            Send(m, k) => self.send(s_, m, k),
            Lose(m, k) => Self::lose(s_, m, k),
            Pause(m) => Self::pause(s_, m),
            Resume(m) => Self::resume(s_, m),
            Crash(m) => Self::crash(s_, m),
            Restart(m) => self.restart(s_, m),
            Isolate(m) => Self::isolate(s_, m),
            Heal(m) => Self::heal(s_, m),
            HeartbeatsFail(m) => Self::heartbeats_fail(s_, m),
            HeartbeatsHeal(m) => Self::heartbeats_heal(s_, m),
            Replace(m) => self.replace(s_, m),
            ClockFast(m) => Self::clock_fast(s_, m),
            Foreign => Self::foreign(s_),
            LogLoss => Self::log_loss(s_),
        }
        if action.is_fault() {
            s_.calm_leaderless.iter_mut().for_each(|c| *c = 0);
        }
        self.settle(s_);
        if self.cfg.forget {
            self.forget(s_);
        }
        s.seal(last);
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        property::properties()
    }
}
