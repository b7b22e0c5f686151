//! The election model: members running the real `neli::core::Member` against
//! an abstract classic-protocol group coordinator and a partition log, under
//! a discrete global clock and bounded, individually switchable faults.
//!
//! Semantics: maximal progress. Within one tick members and the coordinator
//! interleave freely; the clock advances only once no member can do any more
//! work (poll a callback, read a record, fire a due timer, join, sync). Delay
//! therefore only ever comes from a fault: a pause, an isolation, a message in
//! flight, a skewed clock. One tick is one millisecond of core time.

use std::collections::{BTreeMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use neli::core::{CoreConfig, Event, Heartbeat, Member, Output, Record, Time, UnsafeVariant};
use stateright::{Model, Property};

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

/// A member incarnation: slot and restart count (its instance name is `m{slot}.{inc}`).
pub type Key = (u8, u8);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Callback {
    Assigned {
        generation: u64,
        partitions: Vec<u32>,
    },
    /// Rejoin the group. Eager: the coordinator is rebalancing, revoke
    /// everything first. Incremental: revoke nothing, claim what the member
    /// owns (and start a rebalance if none is on: the member revoked a
    /// partition that must move, and the next rebalance hands it on).
    Rejoin,
    Lost,
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
    core: Option<Arc<Member>>,
    /// `fingerprint(core)`, kept with it (see [`Slot::core_fp`]).
    core_fp: u64,
    /// A fingerprint of the whole slot, core included, brought up to date
    /// at the end of every step that changed the slot ([`ElectionState::seal`]):
    /// states are hashed by their slots' fingerprints, and symmetry orders
    /// slots by them, so no slot is hashed field by field more than once.
    fp: u64,
    /// What every state asks of the core, read once when it changes.
    view: View,
    pub inc: u8,
    pub offset: i8,
    pub paused: bool,
    pub isolated: bool,
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

/// Roles and partitions whose lease and assignment [`View`] keeps; a
/// larger model asks the core itself.
const VIEW_ROLES: usize = 4;
const VIEW_PARTITIONS: u32 = 64;

/// The answers of a core that properties, the token monitor and the choice
/// of actions need in every state, so that those do not reach into the
/// shared `Member` (a cache miss per member per state). A function of the
/// core: equal cores have equal views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct View {
    /// Per role below [`VIEW_ROLES`]: the lease end and token, if leading.
    leases: [Option<(Time, u64)>; VIEW_ROLES],
    /// `poll_timeout()`.
    timeout: Option<Time>,
    /// `assigned()` as a bit mask, if every partition is below [`VIEW_PARTITIONS`].
    assigned: Option<u64>,
}

impl View {
    fn of(core: &Member) -> View {
        let mut leases = [None; VIEW_ROLES];
        for (role, lease) in leases.iter_mut().enumerate() {
            *lease = core.lease_until(role as u32).map(|until| (until, core.token(role as u32).map_or(0, |t| t.0)));
        }
        let assigned = core.assigned().iter().try_fold(0u64, |mask, p| (*p < VIEW_PARTITIONS).then(|| mask | 1 << p));
        View { leases, timeout: core.poll_timeout(), assigned }
    }
}

impl Slot {
    fn new(core: Option<Member>, inc: u8, coord_ok: u64) -> Slot {
        let mut slot = Slot {
            core: None,
            core_fp: 0,
            fp: 0,
            view: View::default(),
            inc,
            offset: 0,
            paused: false,
            isolated: false,
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

    /// The slot's fields hashed (with the core by its fingerprint): what
    /// [`Slot::fp`] keeps.
    fn fingerprint(&self) -> u64 {
        let mut h = hasher();
        self.core_fp.hash(&mut h);
        (self.inc, self.offset, self.paused, self.isolated, self.in_group, self.coord_ok).hash(&mut h);
        (&self.callbacks, &self.read, &self.outbox, &self.acquired, &self.own_read, self.proof_sent).hash(&mut h);
        h.finish()
    }

    /// The member's core (anonymous: see the field's docs), if it runs.
    pub fn core(&self) -> Option<&Member> {
        self.core.as_deref()
    }

    /// A 64-bit hash of the anonymous core, computed once when a step
    /// changes the core instead of on every hash of every state that
    /// shares it. Equal cores have equal fingerprints (it is their derived
    /// `Hash`), so hashing a slot by it keeps `Hash` consistent with `Eq`.
    pub fn core_fp(&self) -> u64 {
        self.core_fp
    }

    fn set_core(&mut self, core: Option<Arc<Member>>) {
        self.core_fp = core.as_deref().map_or(0, |c| {
            let mut h = hasher();
            c.hash(&mut h);
            h.finish() | 1
        });
        self.view = core.as_deref().map_or_else(View::default, View::of);
        self.core = core;
    }

    /// The lease end and token of `role`, if this slot's core leads it
    /// (lease possibly expired: compare with the member's clock).
    fn lease(&self, role: u32) -> Option<(Time, u64)> {
        match self.view.leases.get(role as usize) {
            Some(lease) => *lease,
            None => {
                let core = self.core()?;
                core.lease_until(role).map(|until| (until, core.token(role).map_or(0, |t| t.0)))
            }
        }
    }

    /// Whether partition `p` is assigned to this slot's core.
    fn assigned(&self, p: u32) -> bool {
        match self.view.assigned {
            Some(mask) => p < VIEW_PARTITIONS && mask & (1 << p) != 0,
            None => self.core().is_some_and(|c| c.assigned().contains(&p)),
        }
    }
}

impl Hash for Slot {
    /// Every field, through the slot's fingerprint (see [`Slot::fp`]).
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fp);
    }
}

/// The hasher of every fingerprint the model keeps: fixed keys, so a state
/// has the same fingerprint in every run and on every thread, and 64 bits
/// of good quality, since two states with one fingerprint are one state to
/// the checker.
fn hasher() -> ahash::AHasher {
    use std::hash::BuildHasher;
    ahash::RandomState::with_seeds(0x6e65_6c69, 0x6d6f_6465, 0x6c73, 0x5eed).build_hasher()
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

impl GroupMember {
    fn joined(expiry: u8) -> GroupMember {
        GroupMember { expiry, rejoined: true, owned: Vec::new(), owned_generation: 0 }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Coordinator {
    pub generation: u64,
    /// `Some(deadline)` while PreparingRebalance; the rebalance timeout is `S`.
    pub rebalance: Option<u8>,
    pub members: BTreeMap<Key, GroupMember>,
}

/// A heartbeat in the log: (role, term, sent_at, writer), or `None` for garbage.
pub type LogRec = Option<(u32, u64, u64, Key)>;

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
    /// Per role: consecutive ticks, all faults healed, without a leader.
    pub calm_leaderless: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElectionAction {
    Tick {
        slow: Option<u8>,
    },
    Join(u8),
    /// The rebalance completes. Eager: partition `p` goes to the `p mod n`-th
    /// member of deal number `deal` (see [`deal`]). Incremental: deal number
    /// `deal` is an order of all members that breaks ties in [`sticky_deal`].
    Sync {
        deal: u32,
    },
    Poll(u8),
    Read(u8, u32),
    Timeout(u8),
    Send(u8, u8),
    Lose(u8, u8),
    Pause(u8),
    Resume(u8),
    Crash(u8),
    Restart(u8),
    Isolate(u8),
    Heal(u8),
    ClockFast(u8),
    Foreign,
    LogLoss,
}

impl Hash for ElectionState {
    /// One 64-bit digest of every field, slots by their fingerprints: the
    /// checkers hash each state they generate, and a digest costs them one
    /// word instead of the state's every byte.
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.digest());
    }
}

impl ElectionState {
    fn digest(&self) -> u64 {
        let mut identity = [0u8; 256];
        identity.iter_mut().enumerate().for_each(|(i, p)| *p = i as u8);
        self.digest_renamed(&identity[..self.slots.len()])
    }

    /// The digest of `rename_members(self, perm)`, without building it.
    fn digest_renamed(&self, perm: &[u8]) -> u64 {
        // A slot written to after `seal` would be hashed by a stale
        // fingerprint and silently merged with another state; the tests
        // (debug builds) would see it here.
        debug_assert!(self.slots.iter().all(|slot| slot.fp == slot.fingerprint()), "a slot changed after seal");
        let map = |k: &Key| (perm[usize::from(k.0)], k.1);
        let mut h = hasher();
        self.now.hash(&mut h);
        let mut order = [0usize; 256];
        perm.iter().enumerate().for_each(|(old, new)| order[usize::from(*new)] = old);
        order[..perm.len()].iter().for_each(|old| h.write_u64(self.slots[*old].fp));
        // The coordinator's table in the order of the renamed keys.
        (self.coord.generation, self.coord.rebalance).hash(&mut h);
        let mut members: Vec<(Key, &GroupMember)> = self.coord.members.iter().map(|(k, m)| (map(k), m)).collect();
        members.sort_unstable_by_key(|(k, _)| *k);
        members.hash(&mut h);
        for (base, recs) in self.logs.iter() {
            (base, recs.len()).hash(&mut h);
            recs.iter().for_each(|r| r.map(|(role, term, sent, writer)| (role, term, sent, map(&writer))).hash(&mut h));
        }
        (self.used, self.log_epoch, self.log_lost_at).hash(&mut h);
        self.last_acquired.iter().for_each(|l| l.map(|(e, t, k)| (e, t, map(&k))).hash(&mut h));
        (&self.resource, &self.calm_leaderless).hash(&mut h);
        let flags = [
            self.token_regressed,
            self.own_token_regressed,
            self.resource_regressed,
            self.send_time_broken,
            self.proof_cap_broken,
            self.handover,
        ];
        flags.hash(&mut h);
        h.finish()
    }

    /// Brings the fingerprint of every slot a step changed up to date (a
    /// slot still shared with `before` is unchanged). Every change to a
    /// slot happens inside a step, before this: the fields are public to
    /// read, and a slot written to afterwards would keep a stale
    /// fingerprint (debug builds assert against that when hashing).
    fn seal(&mut self, before: &ElectionState) {
        for (slot, old) in self.slots.iter_mut().zip(&before.slots) {
            if !Arc::ptr_eq(slot, old) {
                let fp = slot.fingerprint();
                Arc::make_mut(slot).fp = fp;
            }
        }
    }

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
    fn leads(&self, i: usize, role: u32) -> Option<u64> {
        // The cached view rules out the members without a lease cheaply; the
        // answer itself is the core's own `is_leader` on the member's clock,
        // the call an application of the sans-IO core makes.
        let (_, token) = self.slots[i].lease(role)?;
        let core = self.slots[i].core()?;
        core.is_leader(role, Time::from_millis(self.local(i))).then_some(token)
    }

    /// Slot `i` for a change: copied first if another state shares it.
    fn slot_mut(&mut self, i: usize) -> &mut Slot {
        Arc::make_mut(&mut self.slots[i])
    }

    /// The coordinator for a change: copied first if another state shares it.
    fn coord_mut(&mut self) -> &mut Coordinator {
        Arc::make_mut(&mut self.coord)
    }

    /// The logs for a change: copied first if another state shares them.
    fn logs_mut(&mut self) -> &mut Vec<(u64, Vec<LogRec>)> {
        Arc::make_mut(&mut self.logs)
    }

    fn faults_active(&self) -> bool {
        self.slots.iter().any(|s| s.paused || s.isolated || s.core.is_none() || !s.outbox.is_empty())
    }
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

    /// How many deals a rebalance of `members` members can make: eager, one
    /// per order of the shares ([`deal_count`]); incremental, one per order
    /// of all members (ties in [`sticky_deal`] may involve every member).
    fn deal_count(&self, members: usize) -> usize {
        let shares = if self.cfg.incremental { members } else { self.cfg.partitions as usize };
        deal_count(members, shares)
    }

    /// Deal number `number` of a rebalance of `members` members, as the
    /// member index (into the coordinator's sorted member list) that gets
    /// each share `j < min(partitions, members)` when nobody owns anything
    /// (the first generation): partition `p` goes to share `p mod n`.
    pub fn shares(&self, members: usize, number: usize) -> Vec<usize> {
        if self.cfg.incremental {
            let mut order = deal(members, members, number);
            order.truncate((self.cfg.partitions as usize).min(members));
            order
        } else {
            deal(members, self.cfg.partitions as usize, number)
        }
    }

    /// Whether `i` can run: alive and not paused.
    fn runs(s: &ElectionState, i: usize) -> bool {
        s.slots[i].core.is_some() && !s.slots[i].paused
    }

    /// Work a running member must do before the clock may advance.
    fn urgent(&self, s: &ElectionState, out: &mut Vec<ElectionAction>) {
        let c = &s.coord;
        if c.rebalance.is_some() && !c.members.is_empty() && c.members.values().all(|m| m.rejoined) {
            let count = self.deal_count(c.members.len()).min(u32::MAX as usize);
            (0..count as u32).for_each(|deal| out.push(ElectionAction::Sync { deal }));
        }
        for i in 0..s.slots.len() {
            let (slot, m) = (&s.slots[i], i as u8);
            if slot.core.is_none() || slot.paused {
                continue;
            }
            if !slot.in_group && slot.callbacks.is_empty() && !slot.isolated {
                out.push(ElectionAction::Join(m));
            }
            if slot.callbacks.front().is_some_and(|cb| *cb != Callback::Rejoin || !slot.isolated) {
                out.push(ElectionAction::Poll(m));
            }
            for (&p, &r) in &slot.read {
                let (base, recs) = &s.logs[p as usize];
                if slot.assigned(p) && r < base + recs.len() as u64 {
                    out.push(ElectionAction::Read(m, p));
                }
            }
            if slot.view.timeout.is_some_and(|t| t.as_millis() <= s.local(i)) {
                out.push(ElectionAction::Timeout(m));
            }
            if self.cfg.faults.message_delay == 0 && !slot.outbox.is_empty() {
                out.push(ElectionAction::Send(m, 0));
            }
        }
    }

    /// Runs `f` on member `i`'s core, named for the step, then carries out
    /// its outputs; the core is anonymous again afterwards (see [`Slot`]).
    fn run(&self, s: &mut ElectionState, i: usize, f: impl FnOnce(&mut Member, Time)) {
        if s.slots[i].core.is_none() {
            return;
        }
        let now = Time::from_millis(s.local(i));
        let key = (i as u8, s.slots[i].inc);
        let Some(mut shared) = s.slot_mut(i).core.take() else {
            return;
        };
        let core = Arc::make_mut(&mut shared);
        core.rename(self.name(key));
        f(core, now);
        while let Some(output) = core.poll_output() {
            match output {
                Output::Produce { partition, payload } => {
                    let hb = Heartbeat::decode(&payload).expect("the core writes valid heartbeats");
                    s.slot_mut(i)
                        .outbox
                        .push(Msg::Produce { partition, hb: (hb.role, hb.term, hb.sent_at.as_millis()) });
                }
                Output::ConfirmMembership { generation } => {
                    s.slot_mut(i).outbox.push(Msg::Commit { generation, sent_at: now.as_millis() })
                }
                Output::Event(Event::Acquired { role, token }) => {
                    let window = u16::from(self.cfg.heartbeat_timeout) + u16::from(self.cfg.faults.max_skew);
                    let unknown_log = s.log_lost_at.is_some_and(|at| u16::from(s.now) < u16::from(at) + window);
                    let epoch = if unknown_log { UNKNOWN_LOG } else { s.log_epoch };
                    let last = &mut s.last_acquired[role as usize];
                    s.token_regressed |=
                        epoch != UNKNOWN_LOG && last.is_some_and(|(e, t, _)| e == epoch && t >= token.0);
                    s.handover |= last.is_some_and(|(_, _, k)| k != key);
                    *last = Some((epoch, token.0, key));
                    if self.cfg.faults.log_losses > 0 {
                        // What the member reports: (its own log epoch, token).
                        let own = (core.log_epoch(), token.0);
                        let before = s.slot_mut(i).acquired.insert(role, (epoch, own.0, own.1));
                        s.own_token_regressed |= before.is_some_and(|(_, e, t)| (e, t) >= own);
                    }
                }
                Output::Event(_) | Output::LeaveGroup { .. } => {}
            }
        }
        core.rename(String::new());
        let slot = Arc::make_mut(&mut s.slots[i]);
        for p in core.assigned() {
            let end = s.logs[*p as usize].0 + s.logs[*p as usize].1.len() as u64;
            slot.read.entry(*p).or_insert(end);
        }
        slot.read.retain(|p, _| core.assigned().contains(p));
        // Facts about an ownership that ended cannot justify a later lease
        // (and kept would split states the core no longer tells apart).
        let cfg = core.config();
        slot.own_read.retain(|role, _| core.assigned().contains(&cfg.partition_of(*role)));
        if core.assigned().is_empty() {
            slot.proof_sent = None;
        }
        slot.set_core(Some(shared));
        self.judge_lease_rules(s, i);
        if self.cfg.faults.message_delay == 0 {
            while !s.slots[i].outbox.is_empty() {
                self.deliver(s, i, 0);
            }
        }
    }

    /// Holds every lease slot `i`'s core reports to the rules the core
    /// promises, each on its own (docs/background.md, "Per-rule oracles"):
    /// with the other layers on, a lease that breaks one of them may still
    /// never overlap another, and the end-result properties would pass.
    fn judge_lease_rules(&self, s: &mut ElectionState, i: usize) {
        let slot = &s.slots[i];
        let t = u64::from(self.cfg.heartbeat_timeout);
        let (mut send_time, mut proof_cap) = (false, false);
        for role in 0..self.cfg.roles {
            let Some((until, _)) = slot.lease(role) else { continue };
            let until = until.as_millis();
            send_time |= slot.own_read.get(&role).is_none_or(|sent| until > sent + t);
            proof_cap |= self.cfg.membership_proof && slot.proof_sent.is_none_or(|sent| until > sent + t);
        }
        s.send_time_broken |= send_time;
        s.proof_cap_broken |= proof_cap;
    }

    fn deliver(&self, s: &mut ElectionState, i: usize, idx: usize) {
        let key = (i as u8, s.slots[i].inc);
        match s.slot_mut(i).outbox.remove(idx) {
            Msg::Produce { partition, hb: (role, term, sent_at) } => {
                s.logs_mut()[partition as usize].1.push(Some((role, term, sent_at, key)))
            }
            // An isolated member's commit times out: the driver tells the core nothing.
            Msg::Commit { .. } if s.slots[i].isolated => {}
            Msg::Commit { generation, sent_at } => {
                let expiry = s.now + self.cfg.session_timeout;
                let accepted = s.coord.generation == generation && s.coord.members.contains_key(&key);
                if accepted && s.coord.members[&key].expiry != expiry {
                    s.coord_mut().members.get_mut(&key).expect("a member of the group").expiry = expiry;
                }
                if accepted && s.slots[i].proof_sent.is_none_or(|p| p < sent_at) {
                    s.slot_mut(i).proof_sent = Some(sent_at);
                }
                let sent = Time::from_millis(sent_at);
                self.run(s, i, |core, now| core.handle_membership(now, generation, sent, accepted));
            }
        }
    }

    /// Membership changed: enter PreparingRebalance; everyone but `joiner` must rejoin.
    fn start_rebalance(&self, s: &mut ElectionState, joiner: Option<Key>) {
        if s.coord.members.is_empty() {
            if s.coord.rebalance.is_some() {
                s.coord_mut().rebalance = None;
            }
        } else if s.coord.rebalance.is_none() {
            let deadline = s.now + self.cfg.session_timeout;
            let coord = s.coord_mut();
            coord.rebalance = Some(deadline);
            for (k, m) in coord.members.iter_mut() {
                m.rejoined = Some(*k) == joiner;
            }
        }
    }

    /// What members learn from background group heartbeats, then cleanup.
    fn settle(&self, s: &mut ElectionState) {
        for i in 0..s.slots.len() {
            let local = s.local(i);
            let key = (i as u8, s.slots[i].inc);
            let slot = &s.slots[i];
            if slot.core.is_none() || slot.paused {
                continue;
            }
            // Decided on the shared slot; copied only if something changes.
            let coord_ok = if slot.isolated { slot.coord_ok } else { local };
            let known = s.coord.members.get(&key);
            let evicted = !slot.isolated && known.is_none();
            let timed_out = local >= coord_ok + u64::from(self.cfg.session_timeout);
            let callback = if slot.in_group && (evicted || timed_out) {
                Some(Callback::Lost)
            } else if slot.in_group
                && !slot.isolated
                && known.is_some_and(|m| !m.rejoined)
                && !slot.callbacks.contains(&Callback::Rejoin)
            {
                Some(Callback::Rejoin)
            } else {
                None
            };
            if coord_ok == slot.coord_ok && callback.is_none() {
                continue;
            }
            let slot = s.slot_mut(i);
            slot.coord_ok = coord_ok;
            if let Some(cb) = callback {
                slot.in_group &= cb != Callback::Lost;
                slot.callbacks.push_back(cb);
            }
        }
        for p in 0..s.logs.len() {
            let readers = s.slots.iter().filter_map(|sl| sl.read.get(&(p as u32)).copied());
            let end = s.logs[p].0 + s.logs[p].1.len() as u64;
            let keep_from = readers.min().unwrap_or(end);
            if keep_from > s.logs[p].0 {
                let (base, recs) = &mut s.logs_mut()[p];
                recs.drain(..(keep_from - *base) as usize);
                *base = keep_from;
            }
        }
        for role in 0..self.cfg.roles {
            for i in 0..s.slots.len() {
                let Some(token) = s.leads(i, role) else {
                    continue;
                };
                // A downstream that orders on (log epoch, token), as
                // neli/KAFKA.md asks, with the epoch the leader acquired in
                // (known here; best effort for a real member).
                let epoch = s.slots[i].acquired.get(&role).map_or(0, |(e, _, _)| *e);
                if epoch == UNKNOWN_LOG {
                    continue;
                }
                let newest = &mut s.resource[role as usize];
                s.resource_regressed |= newest.is_some_and(|n| (epoch, token) < n);
                *newest = Some(newest.map_or((epoch, token), |n| n.max((epoch, token))));
            }
        }
    }
}

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

/// The log epoch of a token acquired so soon after a log loss that its
/// evidence may come from the lost log (see `ElectionState::log_lost_at`).
const UNKNOWN_LOG: u8 = u8::MAX;

fn name(key: Key) -> String {
    format!("m{}.{}", key.0, key.1)
}

impl Model for ElectionModel {
    type State = ElectionState;
    type Action = ElectionAction;

    fn init_states(&self) -> Vec<ElectionState> {
        let c = &self.cfg;
        let slot = |_| Arc::new(Slot::new(Some(Member::new(self.core_config())), 0, 0));
        vec![ElectionState {
            now: 0,
            slots: (0..c.members).map(slot).collect(),
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
            calm_leaderless: vec![0; c.roles as usize],
        }]
    }

    fn actions(&self, s: &ElectionState, out: &mut Vec<ElectionAction>) {
        use ElectionAction::*;
        let (f, u) = (&self.cfg.faults, &s.used);
        self.urgent(s, out);
        // Faults other than pauses strike between ticks (when all work is
        // done): a pause is the one fault whose timing inside a tick matters
        // (it freezes a member mid-work), and this keeps the space small.
        let quiescent = out.is_empty();
        let in_flight = (0..s.slots.len()).any(|i| Self::runs(s, i) && !s.slots[i].outbox.is_empty());
        if quiescent && s.now < self.cfg.max_ticks && (!in_flight || u.message_delay < f.message_delay) {
            out.push(Tick { slow: None });
            for (i, slot) in s.slots.iter().enumerate() {
                if u.clock_steps < f.clock_steps && i16::from(slot.offset) > -i16::from(f.max_skew) {
                    out.push(Tick { slow: Some(i as u8) });
                }
            }
        }
        for (i, slot) in s.slots.iter().enumerate() {
            let m = i as u8;
            match (&slot.core, slot.paused) {
                (None, _) => out.push(Restart(m)),
                (Some(_), true) => out.push(Resume(m)),
                (Some(_), false) if u.pauses < f.pauses => out.push(Pause(m)),
                _ => {}
            }
            if f.message_delay > 0 && Self::runs(s, i) {
                let n = if f.reorder { slot.outbox.len() } else { slot.outbox.len().min(1) };
                (0..n as u8).for_each(|k| out.push(Send(m, k)));
                if u.losses < f.losses {
                    (0..n as u8).for_each(|k| out.push(Lose(m, k)));
                }
            }
            if !quiescent {
                continue;
            }
            if slot.core.is_some() && u.crashes < f.crashes {
                out.push(Crash(m));
            }
            if slot.isolated {
                out.push(Heal(m));
            } else if u.isolations < f.isolations {
                out.push(Isolate(m));
            }
            if u.clock_steps < f.clock_steps && i16::from(slot.offset) < i16::from(f.max_skew) {
                out.push(ClockFast(m));
            }
        }
        if quiescent && u.foreign_writes < f.foreign_writes {
            out.push(Foreign);
        }
        if quiescent && u.log_losses < f.log_losses {
            out.push(LogLoss);
        }
    }

    fn next_state(&self, last: &ElectionState, action: ElectionAction) -> Option<ElectionState> {
        use ElectionAction::*;
        let mut s = last.clone();
        let s_ = &mut s;
        let key = |s: &ElectionState, m: u8| (m, s.slots[m as usize].inc);
        let fault =
            !matches!(action, Tick { slow: None } | Join(_) | Sync { .. } | Poll(_) | Read(..) | Timeout(_) | Send(..));
        match action {
            Tick { slow } => {
                let calm = !s_.faults_active();
                for role in 0..self.cfg.roles {
                    let counter = &mut s_.calm_leaderless[role as usize];
                    *counter = if calm && last.leader_count(role) == 0 { counter.saturating_add(1) } else { 0 };
                }
                s_.now += 1;
                if (0..last.slots.len()).any(|i| Self::runs(last, i) && !last.slots[i].outbox.is_empty()) {
                    s_.used.message_delay += 1;
                }
                if let Some(m) = slow {
                    s_.slot_mut(m as usize).offset -= 1;
                    s_.used.clock_steps += 1;
                }
                let now = s_.now;
                let mut expired = Vec::new();
                let rebalance = s_.coord.rebalance;
                for (k, gm) in s_.coord_mut().members.iter_mut() {
                    let slot = &last.slots[k.0 as usize];
                    if slot.inc == k.1 && slot.core.is_some() && !slot.paused && !slot.isolated && slot.in_group {
                        gm.expiry = now + self.cfg.session_timeout;
                    } else if gm.expiry <= now {
                        expired.push(*k);
                    }
                    if rebalance.is_some_and(|d| d <= now) && !gm.rejoined {
                        expired.push(*k);
                    }
                }
                if !expired.is_empty() {
                    for k in &expired {
                        s_.coord_mut().members.remove(k);
                    }
                    // Starts a rebalance unless one is on (its timeout then
                    // completes it without the stragglers).
                    self.start_rebalance(s_, None);
                }
            }
            Join(m) => {
                let k = key(s_, m);
                // A joining member owns nothing (it comes back after Lost
                // or a restart), so under incremental assignment it claims nothing.
                let expiry = s_.now + self.cfg.session_timeout;
                s_.coord_mut().members.insert(k, GroupMember::joined(expiry));
                s_.slot_mut(m as usize).in_group = true;
                self.start_rebalance(s_, Some(k));
            }
            Sync { deal: number } => {
                s_.coord_mut().generation += 1;
                s_.coord_mut().rebalance = None;
                let keys: Vec<Key> = s_.coord.members.keys().copied().collect();
                let dealt: Vec<Vec<u32>> = if self.cfg.incremental {
                    let order = deal(keys.len(), keys.len(), number as usize);
                    let claims: Vec<(&[u32], u64)> =
                        s_.coord.members.values().map(|m| (&m.owned[..], m.owned_generation)).collect();
                    sticky_deal(&claims, self.cfg.partitions, &order, !self.cfg.skip_revoked_barrier)
                } else {
                    let order = deal(keys.len(), self.cfg.partitions as usize, number as usize);
                    (0..keys.len())
                        .map(|idx| {
                            (0..self.cfg.partitions).filter(|p| order[*p as usize % keys.len()] == idx).collect()
                        })
                        .collect()
                };
                for (k, partitions) in keys.iter().zip(dealt) {
                    let generation = s_.coord.generation;
                    s_.slot_mut(k.0 as usize).callbacks.push_back(Callback::Assigned { generation, partitions });
                }
            }
            Poll(m) => {
                let i = m as usize;
                let k = key(s_, m);
                let assigned = |core: &Member| core.assigned().iter().copied().collect::<Vec<u32>>();
                match s_.slot_mut(i).callbacks.pop_front()? {
                    Callback::Assigned { generation, partitions } if self.cfg.incremental => {
                        // The cooperative client: revoke only what moves
                        // (the Revoked barrier), then hand the core the full
                        // set; having revoked, rejoin, so that the next
                        // rebalance can hand the partition on.
                        let core = s_.slots[i].core().map_or_else(Vec::new, assigned);
                        let revoked: Vec<u32> = core.into_iter().filter(|p| !partitions.contains(p)).collect();
                        self.run(s_, i, |core, now| {
                            if !revoked.is_empty() {
                                core.handle_revoked(now, &revoked);
                            }
                            core.handle_assigned(now, generation, &partitions)
                        });
                        if !revoked.is_empty() && !s_.slots[i].callbacks.contains(&Callback::Rejoin) {
                            s_.slot_mut(i).callbacks.push_back(Callback::Rejoin);
                        }
                    }
                    Callback::Assigned { generation, partitions } => {
                        self.run(s_, i, |core, now| core.handle_assigned(now, generation, &partitions))
                    }
                    Callback::Rejoin if self.cfg.incremental => {
                        // Keep everything; claim it with the generation it came in.
                        let owned = s_.slots[i].core().map_or_else(Vec::new, assigned);
                        let owned_generation = s_.slots[i].core().and_then(Member::generation).unwrap_or(0);
                        let rebalancing = s_.coord.rebalance.is_some();
                        match s_.coord_mut().members.get_mut(&k) {
                            Some(gm) => {
                                (gm.owned, gm.owned_generation, gm.rejoined) = (owned, owned_generation, true);
                                if !rebalancing {
                                    self.start_rebalance(s_, Some(k));
                                }
                            }
                            None => s_.slot_mut(i).in_group = false,
                        }
                    }
                    Callback::Rejoin => {
                        self.run(s_, i, |core, now| core.handle_revoked(now, &assigned(core)));
                        match s_.coord_mut().members.get_mut(&k) {
                            Some(gm) => gm.rejoined = true,
                            None => s_.slot_mut(i).in_group = false,
                        }
                    }
                    Callback::Lost => self.run(s_, i, |core, now| core.handle_lost(now, &assigned(core))),
                }
            }
            Read(m, p) => {
                let i = m as usize;
                let offset = s_.slots[i].read[&p];
                let (base, recs) = &s_.logs[p as usize];
                let key = key(s_, m);
                let rec = recs[(offset - base) as usize];
                let payload = match rec {
                    Some((role, term, sent_at, writer)) => {
                        let sent_at = Time::from_millis(sent_at);
                        Heartbeat { role, term, seq: 0, sent_at, lease: None, name: self.name(writer) }.encode()
                    }
                    None => b"not a heartbeat".to_vec(),
                };
                let slot = s_.slot_mut(i);
                slot.read.insert(p, offset + 1);
                if let Some((role, _, sent_at, writer)) = rec
                    && writer == key
                    && slot.own_read.get(&role).is_none_or(|s| *s < sent_at)
                {
                    slot.own_read.insert(role, sent_at);
                }
                let record = Record { partition: p, offset, timestamp: None, payload };
                self.run(s_, i, |core, now| core.handle_record(now, &record));
            }
            Timeout(m) => self.run(s_, m as usize, |core, now| core.handle_timeout(now)),
            Send(m, k) => self.deliver(s_, m as usize, k as usize),
            Lose(m, k) => {
                s_.slot_mut(m as usize).outbox.remove(k as usize);
                s_.used.losses += 1;
            }
            Pause(m) => {
                s_.slot_mut(m as usize).paused = true;
                s_.used.pauses += 1;
            }
            Resume(m) => s_.slot_mut(m as usize).paused = false,
            Crash(m) => {
                let slot = s_.slot_mut(m as usize);
                slot.set_core(None);
                (slot.paused, slot.in_group) = (false, false);
                slot.callbacks.clear();
                slot.read.clear();
                slot.outbox.clear();
                slot.acquired.clear();
                slot.own_read.clear();
                slot.proof_sent = None;
                s_.used.crashes += 1;
            }
            Restart(m) => {
                let inc = s_.slots[m as usize].inc + 1;
                let local = s_.local(m as usize);
                let slot = s_.slot_mut(m as usize);
                slot.set_core(Some(Arc::new(Member::new(self.core_config()))));
                (slot.inc, slot.coord_ok) = (inc, local);
            }
            Isolate(m) => {
                s_.slot_mut(m as usize).isolated = true;
                s_.used.isolations += 1;
            }
            Heal(m) => s_.slot_mut(m as usize).isolated = false,
            ClockFast(m) => {
                s_.slot_mut(m as usize).offset += 1;
                s_.used.clock_steps += 1;
            }
            Foreign => {
                s_.logs_mut()[0].1.push(None);
                s_.used.foreign_writes += 1;
            }
            LogLoss => {
                // A fresh, empty log per partition; consumers whose position
                // is past its end start again from its beginning.
                for log in s_.logs_mut().iter_mut() {
                    *log = (0, Vec::new());
                }
                for i in 0..s_.slots.len() {
                    if s_.slots[i].read.values().any(|r| *r != 0) {
                        s_.slot_mut(i).read.values_mut().for_each(|r| *r = 0);
                    }
                }
                s_.log_epoch += 1;
                s_.log_lost_at = Some(s_.now);
                s_.used.log_losses += 1;
            }
        }
        if fault {
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
        vec![
            Property::always("at most one leader per role", |m: &ElectionModel, s: &ElectionState| {
                !m.cfg.exclusive || (0..m.cfg.roles).all(|r| s.leader_count(r) <= 1)
            }),
            // Within one log: a lost log restarts the offsets tokens are made of.
            Property::always("tokens strictly increase per role", |_, s: &ElectionState| !s.token_regressed),
            // Across lost logs too: what a member reports, (its own log
            // epoch, token), only goes up (the core starts a new epoch when
            // its own heartbeat comes back below a token it led with).
            Property::always("a member's own tokens strictly increase", |_, s: &ElectionState| !s.own_token_regressed),
            // Non-exclusive mode lets two members lead one role at once by
            // design (T > S buys availability), so their writes interleave
            // and a guarded resource refusing the older token is expected;
            // that mode promises token order and liveness, not this.
            Property::always(
                "resource never sees an older token after a newer one",
                |m: &ElectionModel, s: &ElectionState| !m.cfg.exclusive || !s.resource_regressed,
            ),
            // The core's lease rules one by one, in every mode: the layers
            // cover for each other, so a weakened rule may never show as an
            // overlap within the bounds (docs/background.md, "Per-rule oracles").
            Property::always("send-time: a lease ends by its newest own heartbeat read + T", |_, s: &ElectionState| {
                !s.send_time_broken
            }),
            Property::always(
                "membership-proof: a lease ends by its newest accepted proof's send time + T",
                |_, s: &ElectionState| !s.proof_cap_broken,
            ),
            Property::always(
                "a leader within the liveness bound once faults heal",
                |m: &ElectionModel, s: &ElectionState| s.calm_leaderless.iter().all(|c| *c <= m.cfg.liveness_bound()),
            ),
            Property::sometimes("a leader is elected", |m: &ElectionModel, s: &ElectionState| {
                (0..m.cfg.roles).any(|r| s.leader_count(r) > 0)
            }),
            Property::sometimes("a handover happens", |_, s: &ElectionState| s.handover),
        ]
    }
}

/// How many different assignments a rebalance of `members` members over
/// `partitions` partitions can deal (see [`deal`]): `n! / (n - k)!` with
/// `k = min(partitions, n)`.
pub fn deal_count(members: usize, partitions: usize) -> usize {
    let k = partitions.min(members);
    (members - k + 1..=members).fold(1usize, |a, b| a.saturating_mul(b))
}

/// Deal number `number` (lexicographic order): the member index (into the
/// coordinator's sorted member list) that gets the `j`-th share, for
/// `j < min(partitions, members)`; partition `p` goes to share `p mod n`
/// (NELI's `j mod M` dealing).
///
/// Every order of the members is a possible deal, because member ids are
/// arbitrary (random in Kafka), so which member sorts first is not a fact
/// of the system. A rotation of one fixed order (what this model dealt
/// before) made member names matter in multi-role mode with 3 or more
/// members: renaming two members could produce an assignment no rotation
/// deals, so the set of reachable states was not closed under renaming and
/// the symmetry reduction ([`representative`]) was unsound there. With
/// every order the reachable states are closed under renaming (pinned by
/// `models/tests/it/symmetry.rs`). With one partition, or two members, the
/// deals are exactly the old rotations.
pub fn deal(members: usize, partitions: usize, number: usize) -> Vec<usize> {
    let k = partitions.min(members);
    let (mut rest, mut left): (Vec<usize>, usize) = ((0..members).collect(), number);
    let mut out = Vec::with_capacity(k);
    for j in 0..k {
        // Deals with this prefix: (n - j - 1)! / (n - k)!
        let block: usize = (members - k + 1..members - j).product();
        out.push(rest.remove(left / block));
        left %= block;
    }
    out
}

/// Cooperative-sticky dealing (librdkafka's group leader, as the
/// simulator's `sticky_assignment` deals): `claims[i]` is what member `i`
/// (into the coordinator's sorted member list) owns and the generation it
/// got it in. A partition stays with the member that claims it in the
/// newest generation (two claims of one generation cancel each other);
/// unowned partitions go, in order, to the least loaded member; then
/// partitions move from the most to the least loaded member until the loads
/// differ by at most one. Ties between equally loaded members go to the
/// member earlier in `order` (every order is a possible deal, as in
/// [`deal`], so the reachable states stay closed under renaming).
///
/// With `withhold`, a partition whose owner changes is dealt to nobody this
/// time: its owner's assignment lacks it, so the owner revokes it (the
/// Revoked barrier) and rejoins, and the next rebalance deals it as
/// unowned. Without, it goes to its new owner at once (the unsafe
/// `skip_revoked_barrier` coordinator).
pub fn sticky_deal(claims: &[(&[u32], u64)], partitions: u32, order: &[usize], withhold: bool) -> Vec<Vec<u32>> {
    let mut owner: BTreeMap<u32, (u64, Option<usize>)> = BTreeMap::new();
    for (i, (owned, generation)) in claims.iter().enumerate() {
        for &p in owned.iter().filter(|p| **p < partitions) {
            match owner.get(&p) {
                Some((g, _)) if g > generation => {}
                Some((g, _)) if g == generation => {
                    owner.insert(p, (*g, None));
                }
                _ => {
                    owner.insert(p, (*generation, Some(i)));
                }
            }
        }
    }
    let owner: BTreeMap<u32, usize> = owner.into_iter().filter_map(|(p, (_, o))| o.map(|o| (p, o))).collect();
    let mut target: Vec<Vec<u32>> = vec![Vec::new(); claims.len()];
    for (p, o) in &owner {
        target[*o].push(*p);
    }
    let rank = |i: usize| order.iter().position(|o| *o == i).unwrap_or(usize::MAX);
    let least = |t: &[Vec<u32>]| (0..t.len()).min_by_key(|i| (t[*i].len(), rank(*i))).expect("a group has members");
    for p in (0..partitions).filter(|p| !owner.contains_key(p)) {
        let to = least(&target);
        target[to].push(p);
    }
    loop {
        let most = (0..target.len()).min_by_key(|i| (std::cmp::Reverse(target[*i].len()), rank(*i))).expect("members");
        let to = least(&target);
        if target[most].len() <= target[to].len() + 1 {
            break;
        }
        let p = target[most].pop().expect("the most loaded member has a partition");
        target[to].push(p);
    }
    for (i, ps) in target.iter_mut().enumerate() {
        if withhold {
            ps.retain(|p| owner.get(p).is_none_or(|o| *o == i));
        }
        ps.sort_unstable();
    }
    target
}

/// Symmetry reduction over members: a canonical renaming of member slots.
///
/// Members are interchangeable up to their names (`m{slot}.{inc}`), which
/// appear in the coordinator's table, the logs and the token monitor (the
/// cores are anonymous between steps and outboxes name no member, see
/// [`Slot`]). Slots are ordered by a key that ignores their own index (the
/// core's fingerprint, the rest of the slot, and the slot's entry in the
/// coordinator's table), and every name is rewritten with the same
/// permutation, so the representative is a state of the same system up to
/// renaming and every property (which only counts leaders and compares
/// tokens) has the same value on it. Ties keep index order, which costs
/// reduction, never soundness. No core is copied: slots move as they are.
pub fn representative(s: &ElectionState) -> ElectionState {
    match canonical_renaming(s) {
        Some(perm) => rename_members(s, &perm[..s.slots.len()]),
        None => s.clone(),
    }
}

/// The fingerprint of `s`'s [`representative`], computed without building
/// it: what the breadth-first search keys its visited set by, so that a
/// generated state costs no copy of a state (pinned equal to hashing the
/// representative by `models/tests/it/symmetry.rs`).
pub fn canonical_fingerprint(s: &ElectionState) -> u64 {
    match canonical_renaming(s) {
        Some(perm) => s.digest_renamed(&perm[..s.slots.len()]),
        None => s.digest(),
    }
}

/// The renaming that takes `s` to its representative (slot `i` becomes
/// `perm[i]`), or `None` if `s` is its own representative.
fn canonical_renaming(s: &ElectionState) -> Option<[u8; 256]> {
    let n = s.slots.len();
    let key = |i: usize| {
        let slot = &s.slots[i];
        let mut h = Mix::default();
        h.write_u64(slot.fp);
        s.coord.members.get(&(i as u8, slot.inc)).hash(&mut h);
        h.finish()
    };
    let mut perm = [0u8; 256];
    let mut keyed: [(u64, usize); 8] = [(0, 0); 8];
    if n > keyed.len() {
        let mut order: Vec<(u64, usize)> = (0..n).map(|i| (key(i), i)).collect();
        order.sort_unstable();
        order.iter().enumerate().for_each(|(new, (_, old))| perm[*old] = new as u8);
        return Some(perm);
    }
    for (i, k) in keyed.iter_mut().enumerate().take(n) {
        *k = (key(i), i);
    }
    let keyed = &mut keyed[..n];
    keyed.sort_unstable();
    if keyed.iter().enumerate().all(|(new, (_, old))| new == *old) {
        return None;
    }
    keyed.iter().enumerate().for_each(|(new, (_, old))| perm[*old] = new as u8);
    Some(perm)
}

/// `s` with member slot `i` renamed to slot `perm[i]` everywhere a member is
/// named: the slots themselves (moved, not copied), the coordinator's
/// table, heartbeats in the logs, and the token monitor. `perm` must be a
/// permutation of `0..members`.
pub fn rename_members(s: &ElectionState, perm: &[u8]) -> ElectionState {
    let n = s.slots.len();
    assert_eq!(perm.len(), n, "a permutation of every member slot");
    let map = |k: Key| (perm[k.0 as usize], k.1);
    let mut out = s.clone();
    for (old, &new) in perm.iter().enumerate() {
        out.slots[new as usize] = Arc::clone(&s.slots[old]);
    }
    let members = s.coord.members.iter().map(|(k, v)| (map(*k), v.clone())).collect();
    out.coord = Arc::new(Coordinator { generation: s.coord.generation, rebalance: s.coord.rebalance, members });
    let moved = |rec: &LogRec| rec.is_some_and(|r| map(r.3) != r.3);
    if s.logs.iter().any(|(_, recs)| recs.iter().any(moved)) {
        for (_, recs) in Arc::make_mut(&mut out.logs).iter_mut() {
            for rec in recs.iter_mut().flatten() {
                rec.3 = map(rec.3);
            }
        }
    }
    for last in out.last_acquired.iter_mut().flatten() {
        last.2 = map(last.2);
    }
    out
}

/// A fast, non-cryptographic hasher for ordering slots in
/// [`representative`]: a collision only leaves two slots in index order
/// (less reduction), so speed matters more than quality here.
#[derive(Default)]
struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
