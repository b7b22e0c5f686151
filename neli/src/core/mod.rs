//! The NELI member as a plain state machine: broker facts and time in,
//! intended effects out. No async, no I/O, no clock reads.
//!
//! Drivers feed a [`Member`] with `handle_*` calls (assignment, revocation,
//! lost partitions, records read back, membership confirmations, timeouts),
//! then drain [`Member::poll_output`] until `None` and sleep until
//! [`Member::poll_timeout`]. The same `Member` runs in production, inside the
//! simulator and inside the stateright model.
//!
//! Leadership of a role is a lease. A member becomes *candidate* for every
//! role whose partition (`role mod partitions`) it is assigned, writes
//! heartbeats there, and leads once it reads one of its own current-term
//! heartbeats back while that heartbeat is still fresh (`sent_at + T > now`)
//! and the acquisition grace has passed. The lease ends at the freshest own
//! heartbeat's `sent_at + T` and, with the membership proof enabled, also at
//! the freshest confirmed membership's send time `+ T`.
//! Reference: NELI §3 (exclusive mode), §4 (multi-role).

mod counters;
mod heartbeat;
// Their public types are re-exported at the crate root, their one path.
pub(crate) mod lease;
pub(crate) mod output;
pub(crate) mod time;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

pub use counters::Counters;
use counters::Statistics;
pub use heartbeat::{DecodeError, Heartbeat};
pub(crate) use lease::{Lease, Stamp, Token};
pub(crate) use output::Event;
pub use output::{FenceCause, Output, Record};
pub(crate) use time::Time;

/// Deliberately unsafe behaviours, for the simulator and the model checker to
/// show that their oracles catch them. Behind the `unsafe-variants` cargo
/// feature, which only the harness crates enable: an application built on
/// `neli` cannot switch them on.
#[cfg(feature = "unsafe-variants")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UnsafeVariant {
    /// Count the lease from the time a heartbeat is *read*, not sent
    /// (goNELI): buffered heartbeats revive a paused member.
    pub lease_from_receipt: bool,
    /// Count any record on the partition as a heartbeat (goNELI): a zombie's
    /// or a stranger's writes keep a leader alive.
    pub any_record_counts: bool,
}

#[cfg(feature = "unsafe-variants")]
impl UnsafeVariant {
    /// Whether any unsafe behaviour is on.
    pub fn is_any(&self) -> bool {
        self.lease_from_receipt || self.any_record_counts
    }
}

/// How a member runs. Built from the user-facing `Config` by validation; the
/// simulator and the model construct it directly.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CoreConfig {
    /// This instance's unique name (written into every heartbeat).
    pub name: String,
    /// Number of roles `R` (1 in exclusive mode).
    pub roles: u32,
    /// Number of partitions `M` of the election topic.
    pub partitions: u32,
    /// Lease length `T`.
    pub heartbeat_timeout: Duration,
    /// Time between heartbeats while assigned.
    pub heartbeat_interval: Duration,
    /// Acquisition grace `G`: a new assignment may lead only `G` after it.
    pub grace: Duration,
    /// Bound the lease by confirmed group membership as well.
    pub membership_proof: bool,
    /// How long a resigning member stays out of the group.
    pub resign_hold_off: Duration,
    /// Incremental (cooperative) rebalancing: a partition leaves only through
    /// `handle_revoked` or `handle_lost`, so an assignment of a new generation
    /// that keeps it changes nothing about the lease, and a membership proof
    /// stays valid across generations (docs/cooperative-rebalance.md,
    /// "The core under incremental assignment"). Eager (`false`): every
    /// generation starts from scratch.
    pub incremental: bool,
    /// Deliberately unsafe behaviours switched on (harness builds only).
    #[cfg(feature = "unsafe-variants")]
    pub unsafe_variant: UnsafeVariant,
}

impl CoreConfig {
    /// Exclusive mode (one role on partition 0) with lease `heartbeat_timeout`
    /// and the recommended defaults for the rest.
    pub fn exclusive(name: impl Into<String>, heartbeat_timeout: Duration) -> CoreConfig {
        CoreConfig {
            name: name.into(),
            roles: 1,
            partitions: 1,
            heartbeat_timeout,
            heartbeat_interval: heartbeat_timeout / 4,
            grace: Duration::ZERO,
            membership_proof: true,
            resign_hold_off: heartbeat_timeout,
            incremental: false,
            #[cfg(feature = "unsafe-variants")]
            unsafe_variant: UnsafeVariant::default(),
        }
    }

    /// goNELI's lease from receipt time (unsafe; harness builds only).
    fn lease_from_receipt(&self) -> bool {
        #[cfg(feature = "unsafe-variants")]
        return self.unsafe_variant.lease_from_receipt;
        #[cfg(not(feature = "unsafe-variants"))]
        false
    }

    /// goNELI's any record as evidence (unsafe; harness builds only).
    fn any_record_counts(&self) -> bool {
        #[cfg(feature = "unsafe-variants")]
        return self.unsafe_variant.any_record_counts;
        #[cfg(not(feature = "unsafe-variants"))]
        false
    }

    /// The partition that carries `role` (`role mod M`). Reference: NELI §4.
    pub fn partition_of(&self, role: u32) -> u32 {
        role % self.partitions.max(1)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum RoleState {
    /// The role's partition is not ours.
    Idle,
    /// Assigned; waiting for fresh own evidence (and the grace period).
    Candidate { eligible_at: Time, evidence: Option<Evidence> },
    /// Leading until `heartbeat_until` (bounded by the membership proof)
    /// unless renewed.
    Leader { token: Token, heartbeat_until: Time },
}

/// A term's token and end as the core tracks them before it hands out a
/// [`Lease`]: the member's log epoch is added then, from its one counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Term {
    token: Token,
    until: Time,
}

impl Term {
    /// As [`Lease::is_live_at`].
    fn is_live_at(&self, now: Time) -> bool {
        now < self.until
    }
}

/// Fresh own current-term heartbeats seen by a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Evidence {
    /// The lease a term confirmed now would start with: the freshest one's
    /// log offset as token, its send time + T as end.
    lease: Term,
    /// When the first of them was read; a membership proof must be newer.
    first_read: Time,
}

/// One member's view of the election. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Member {
    cfg: CoreConfig,
    generation: Option<u64>,
    assigned: BTreeSet<u32>,
    roles: BTreeMap<u32, RoleState>,
    /// Newest token per role, so a member never hands out a non-increasing
    /// one within a log epoch.
    last_token: BTreeMap<u32, Token>,
    /// Election logs this member saw lost or truncated: tokens are offsets
    /// and restart with the log, so `(log_epoch, token)` is what increases.
    log_epoch: u64,
    /// Send time of the freshest confirmed membership for `generation`, + T.
    membership_until: Option<Time>,
    /// Send time of the freshest confirmed membership for `generation`.
    membership_sent: Option<Time>,
    /// When the last membership proof was requested.
    proof_requested: Option<Time>,
    next_heartbeat: Option<Time>,
    /// Assignments with a generation at or below this are ignored (resigned).
    resigned_through: Option<u64>,
    last_now: Time,
    closed: bool,
    outputs: VecDeque<Output>,
    /// The cause of every `Fenced` event in `outputs`, in the same order:
    /// derived from what produced them, so it decides nothing either.
    fence_causes: Statistics<VecDeque<FenceCause>>,
    counters: Statistics<Counters>,
}

impl Member {
    /// A member that holds nothing yet.
    pub fn new(cfg: CoreConfig) -> Member {
        let roles = (0..cfg.roles).map(|r| (r, RoleState::Idle)).collect();
        Member {
            cfg,
            generation: None,
            assigned: BTreeSet::new(),
            roles,
            last_token: BTreeMap::new(),
            log_epoch: 0,
            membership_until: None,
            membership_sent: None,
            proof_requested: None,
            next_heartbeat: None,
            resigned_through: None,
            last_now: Time::ZERO,
            closed: false,
            outputs: VecDeque::new(),
            fence_causes: Statistics::default(),
            counters: Statistics::default(),
        }
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// Changes the instance name written into (and expected back from)
    /// heartbeats. For model checkers' symmetry reduction, which permutes
    /// member names consistently across a whole system state; a driver never
    /// needs it (a restarted process gets a new `Member`).
    #[doc(hidden)]
    pub fn rename(&mut self, name: impl Into<String>) {
        self.cfg.name = name.into();
    }

    /// What it read and ignored, by reason, for diagnostics.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The group generation of the current assignment, if any.
    pub fn generation(&self) -> Option<u64> {
        self.generation
    }

    /// Partitions currently assigned to this member.
    pub fn assigned(&self) -> &BTreeSet<u32> {
        &self.assigned
    }

    /// Whether this member leads `role` at `now`: [`Member::lease`] is
    /// some. Turns false when the lease expires, with no further input
    /// needed.
    pub fn is_leader(&self, role: u32, now: Time) -> bool {
        self.lease(role, now).is_some()
    }

    /// The lease of `role` if it is live at `now` ([`Lease::is_live_at`]),
    /// with the log epoch its token belongs to: the core's one answer to
    /// "who leads", which [`Member::is_leader`] and [`Member::token`] read.
    pub fn lease(&self, role: u32, now: Time) -> Option<Lease> {
        self.held_lease(role).filter(|l| l.is_live_at(now))
    }

    /// The lease of `role` if this member holds one, possibly expired but
    /// not yet processed by [`Member::handle_timeout`].
    fn held_lease(&self, role: u32) -> Option<Lease> {
        match *self.roles.get(&role)? {
            RoleState::Leader { token, heartbeat_until } => {
                Some(Lease { token, until: self.bound_by_membership(heartbeat_until), log_epoch: self.log_epoch })
            }
            _ => None,
        }
    }

    /// How many times this member saw the election log lost or truncated
    /// (told by [`Member::handle_log_lost`], or found by itself). Fencing
    /// tokens restart with each: compare `(log_epoch, token)`.
    #[must_use]
    pub fn log_epoch(&self) -> u64 {
        self.log_epoch
    }

    /// The driver found the election log lost (the topic vanished and was
    /// recreated): the new log's offsets start again, and so do tokens.
    pub fn handle_log_lost(&mut self) {
        self.last_token.clear();
        self.log_epoch += 1;
    }

    /// The fencing token of `role` while its lease is live at `now`: the
    /// `token` of [`Member::lease`].
    pub fn token(&self, role: u32, now: Time) -> Option<Token> {
        self.lease(role, now).map(|l| l.token)
    }

    /// The roles this member holds as leader, with their leases (possibly
    /// expired but not yet processed by [`Member::handle_timeout`]).
    pub fn leading_roles(&self) -> impl Iterator<Item = (u32, Lease)> + '_ {
        // One answer to "which lease, if leading": the driver publishes
        // these, and each heartbeat's `lease` field says the same.
        self.roles.keys().filter_map(|r| self.held_lease(*r).map(|l| (*r, l)))
    }

    /// The partitions were assigned in `generation`: the full assignment
    /// (under incremental rebalancing too: the driver passes what the member
    /// owns after the change, not the change).
    pub fn handle_assigned(&mut self, now: Time, generation: u64, partitions: &[u32]) {
        let now = self.clamp(now);
        if self.closed || self.resigned_through.is_some_and(|g| generation <= g) {
            return;
        }
        self.fence_before_input(now);
        if self.generation != Some(generation) && !self.cfg.incremental {
            // Eager: every member gave everything back before this
            // generation, so membership proven for an older one says nothing
            // now. Incremental: a kept partition never left this member, and
            // a proof sent while it was a member still bounds how soon the
            // coordinator can have given the partition to anyone else.
            self.membership_until = None;
            self.membership_sent = None;
        }
        let new_term = self.generation != Some(generation);
        self.generation = Some(generation);
        self.assigned = partitions.iter().copied().filter(|p| *p < self.cfg.partitions).collect();
        let eligible_at = now + self.cfg.grace;
        for role in 0..self.cfg.roles {
            let mine = self.assigned.contains(&self.cfg.partition_of(role));
            let state = self.roles.get_mut(&role).expect("every role has a state");
            match (mine, &*state) {
                (true, RoleState::Idle) => *state = RoleState::Candidate { eligible_at, evidence: None },
                // Evidence is own *current-term* heartbeats: a candidate's
                // evidence of an older term must not confirm this one. A
                // member dropped from the group and assigned again without a
                // Lost in between (librdkafka's JoinGroup UNKNOWN_MEMBER_ID
                // path, docs/cooperative-rebalance.md "librdkafka") would
                // otherwise lead with an offset below its successor's token
                // (found by `neli-lab check --simulate`, test
                // core_rules::candidate_evidence_of_an_older_term_does_not_survive_a_new_generation).
                (true, RoleState::Candidate { eligible_at: at, .. }) if new_term => {
                    *state = RoleState::Candidate { eligible_at: *at, evidence: None }
                }
                (true, _) => {}
                (false, RoleState::Leader { .. }) => {
                    *state = RoleState::Idle;
                    self.outputs.push_back(Output::Event(Event::Revoked { role }));
                }
                (false, _) => *state = RoleState::Idle,
            }
        }
        if !self.assigned.is_empty() {
            self.send_heartbeats(now);
        }
        self.handle_timeout(now);
    }

    /// Orderly revocation of `partitions`: leaders of their roles get
    /// `Revoked`; revoking other partitions emits nothing.
    pub fn handle_revoked(&mut self, now: Time, partitions: &[u32]) {
        self.release(now, partitions, None);
    }

    /// The assignment of `partitions` was lost (session timed out, member
    /// evicted): leaders of their roles are fenced.
    pub fn handle_lost(&mut self, now: Time, partitions: &[u32]) {
        self.lose(now, partitions, FenceCause::AssignmentLost);
    }

    fn lose(&mut self, now: Time, partitions: &[u32], cause: FenceCause) {
        self.release(now, partitions, Some(cause));
        if self.cfg.incremental {
            // The membership the proofs were about is gone; under eager
            // rebalancing the next generation clears them anyway.
            self.membership_until = None;
            self.membership_sent = None;
        }
    }

    /// Gives up the roles of `partitions`: leaders get `Revoked`, or
    /// `Fenced` with `fenced`'s cause.
    fn release(&mut self, now: Time, partitions: &[u32], fenced: Option<FenceCause>) {
        // A term that already ended is fenced, not revoked: there is no
        // orderly handover of a lease that is over.
        let now = self.clamp(now);
        self.fence_before_input(now);
        for p in partitions {
            self.assigned.remove(p);
        }
        for (role, state) in self.roles.iter_mut() {
            if partitions.contains(&(role % self.cfg.partitions.max(1))) {
                if matches!(state, RoleState::Leader { .. }) {
                    let role = *role;
                    let event = match fenced {
                        Some(cause) => {
                            self.fence_causes.push_back(cause);
                            Event::Fenced { role }
                        }
                        None => Event::Revoked { role },
                    };
                    self.outputs.push_back(Output::Event(event));
                }
                *state = RoleState::Idle;
            }
        }
        if self.assigned.is_empty() {
            self.next_heartbeat = None;
        }
    }

    /// A record was read from the election topic at `now`.
    pub fn handle_record(&mut self, now: Time, record: &Record) {
        let now = self.clamp(now);
        if self.closed {
            return;
        }
        self.fence_before_input(now);
        let any = self.cfg.any_record_counts();
        let hb = match Heartbeat::decode(&record.payload) {
            Ok(hb) => Some(hb),
            Err(_) => {
                self.counters.undecodable += 1;
                None
            }
        };
        let role_matches = |role: u32| self.cfg.partition_of(role) == record.partition;
        let (role, sent_at) = match hb {
            Some(hb) if hb.role >= self.cfg.roles || !role_matches(hb.role) => {
                self.counters.misplaced += 1;
                if !any {
                    return;
                }
                (None, now)
            }
            Some(hb) if hb.name != self.cfg.name => {
                self.counters.foreign += 1;
                if !any {
                    return;
                }
                (Some(hb.role), now)
            }
            Some(hb) if Some(hb.term) != self.generation => {
                self.counters.stale_term += 1;
                if !any {
                    return;
                }
                (Some(hb.role), now)
            }
            Some(hb) => {
                self.counters.own_heartbeats += 1;
                let basis = if self.cfg.lease_from_receipt() { now } else { hb.sent_at };
                (Some(hb.role), basis)
            }
            None if any => (None, now),
            None => return,
        };
        let lease = Term { token: Token(record.offset), until: sent_at + self.cfg.heartbeat_timeout };
        if !lease.is_live_at(now) {
            self.counters.expired_on_arrival += 1;
            return;
        }
        // An unknown role (garbage counted by the unsafe variant) feeds every
        // role on the partition.
        let roles: Vec<u32> = match role {
            Some(r) => vec![r],
            None => (0..self.cfg.roles).filter(|r| role_matches(*r)).collect(),
        };
        for role in roles {
            self.add_evidence(now, role, lease);
        }
        self.handle_timeout(now);
    }

    fn add_evidence(&mut self, now: Time, role: u32, lease: Term) {
        let Some(state) = self.roles.get_mut(&role) else { return };
        match state {
            RoleState::Idle => self.counters.while_unassigned += 1,
            RoleState::Candidate { evidence, .. } => {
                let first_read = evidence.map_or(now, |e| e.first_read);
                if evidence.is_none_or(|e| e.lease.until < lease.until) {
                    *evidence = Some(Evidence { lease, first_read });
                }
                // Acquiring needs membership proven *after* the evidence was
                // read: a member resumed from a pause drains still-fresh own
                // heartbeats (T > S in non-exclusive mode) but is no longer a
                // member, and an older proof would let it lead with an old
                // token next to its successor (found by neli-models).
                if self.cfg.membership_proof
                    && let Some(generation) = self.generation
                    && self.proof_requested.is_none_or(|t| t < first_read)
                {
                    self.proof_requested = Some(now);
                    self.outputs.push_back(Output::ConfirmMembership { generation });
                }
            }
            RoleState::Leader { heartbeat_until, .. } => {
                *heartbeat_until = (*heartbeat_until).max(lease.until);
            }
        }
    }

    /// The outcome of a [`Output::ConfirmMembership`] request sent at
    /// `sent_at`: `accepted` if the coordinator took the generation-checked
    /// commit, false if it rejected the member or generation.
    pub fn handle_membership(&mut self, now: Time, generation: u64, sent_at: Time, accepted: bool) {
        let now = self.clamp(now);
        if self.closed || Some(generation) != self.generation {
            return;
        }
        self.fence_before_input(now);
        if accepted {
            let until = sent_at + self.cfg.heartbeat_timeout;
            if self.membership_until.is_none_or(|u| u < until) {
                self.membership_until = Some(until);
                self.membership_sent = Some(sent_at);
            }
            self.handle_timeout(now);
        } else {
            self.counters.membership_rejected += 1;
            let all: Vec<u32> = self.assigned.iter().copied().collect();
            self.lose(now, &all, FenceCause::MembershipRejected);
            self.generation = None;
            self.membership_until = None;
            self.membership_sent = None;
        }
    }

    /// Let time pass: expire leases, admit candidates whose grace ended,
    /// send due heartbeats. Calls before any deadline change nothing.
    pub fn handle_timeout(&mut self, now: Time) {
        let now = self.clamp(now);
        if self.closed {
            return;
        }
        // An ended lease is fenced before this call's heartbeats could
        // claim it; goNELI's lease from receipt claims first and ends its
        // leases after, as goNELI's loop does ([`Member::fence_before_input`]).
        self.fence_before_input(now);
        if self.next_heartbeat.is_some_and(|t| t <= now) {
            self.send_heartbeats(now);
        }
        if self.cfg.lease_from_receipt() {
            self.fence_lapsed(now);
        }
        let (proof, membership_until, membership_sent) =
            (self.cfg.membership_proof, self.membership_until, self.membership_sent);
        let membership_ok = |read_at: Time| {
            !proof || (membership_until.is_some_and(|u| u > now) && membership_sent.is_some_and(|s| s >= read_at))
        };
        for (role, state) in self.roles.iter_mut() {
            let RoleState::Candidate { eligible_at, evidence: Some(Evidence { lease, first_read }) } = *state else {
                continue;
            };
            if !lease.is_live_at(now) {
                *state = RoleState::Candidate { eligible_at, evidence: None };
            } else if eligible_at <= now && membership_ok(first_read) {
                let token = lease.token;
                if self.last_token.get(role).is_some_and(|last| *last >= token) {
                    // Own current-term evidence at or below a token
                    // this member led with: its position went back,
                    // so the log restarted under it (a broker lost
                    // its data, an unclean leader election truncated
                    // it). Skipping such evidence left the role
                    // leaderless until the new offsets passed the old
                    // token (scenario log-loss-mid-term: 20 s at
                    // T = 1 s, days at production offsets). Tokens
                    // restart instead, in a new log epoch the driver
                    // reports (neli/KAFKA.md, "Fencing tokens after a
                    // broker lost its log").
                    self.last_token.clear();
                    self.log_epoch += 1;
                }
                self.last_token.insert(*role, token);
                *state = RoleState::Leader { token, heartbeat_until: lease.until };
                self.outputs.push_back(Output::Event(Event::Acquired { role: *role, token }));
            }
        }
    }

    /// [`Member::fence_lapsed`], first thing on every input. Not in goNELI's
    /// lease from receipt (unsafe, harness builds only): goNELI's leader is a
    /// flag that any fresh heartbeat refreshes, so there an ended term
    /// revives, as the harness must show; its leases end only when time
    /// passes ([`Member::handle_timeout`]).
    fn fence_before_input(&mut self, now: Time) {
        if !self.cfg.lease_from_receipt() {
            self.fence_lapsed(now);
        }
    }

    /// Fences every leader whose lease ended by `now`, before any input can
    /// extend it: fresh evidence or a newer proof read after the end must
    /// not revive the term under its old token, because its successor may
    /// already lead (docs/background.md, "Protocol semantics": a lease is
    /// over at its end). A process that stalled past its lease learns of
    /// the end only from its next input, so every input starts here.
    fn fence_lapsed(&mut self, now: Time) {
        for (role, state) in self.roles.iter_mut() {
            if let RoleState::Leader { token, heartbeat_until } = *state {
                let until = bound(self.cfg.membership_proof, self.membership_until, heartbeat_until);
                if !(Term { token, until }).is_live_at(now) {
                    *state = RoleState::Candidate { eligible_at: now, evidence: None };
                    self.fence_causes.push_back(FenceCause::LeaseExpired);
                    self.outputs.push_back(Output::Event(Event::Fenced { role: *role }));
                }
            }
        }
    }

    /// The earliest time at which [`Member::handle_timeout`] has work to do.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.closed {
            return None;
        }
        let mut next = self.next_heartbeat;
        let mut consider = |t: Time| next = Some(next.map_or(t, |n| n.min(t)));
        for state in self.roles.values() {
            match *state {
                RoleState::Leader { heartbeat_until, .. } => consider(self.bound_by_membership(heartbeat_until)),
                RoleState::Candidate { eligible_at, evidence: Some(Evidence { lease, .. }) } => {
                    consider(if eligible_at > self.last_now { eligible_at } else { lease.until });
                }
                _ => {}
            }
        }
        next
    }

    /// The next effect to carry out, oldest first.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.poll_output_with_cause().map(|(output, _)| output)
    }

    /// [`Member::poll_output`], with the cause of a [`Event::Fenced`]
    /// (`None` for every other output): what the driver's metrics label
    /// fences with. Draining with either method is the same.
    #[must_use]
    pub fn poll_output_with_cause(&mut self) -> Option<(Output, Option<FenceCause>)> {
        let output = self.outputs.pop_front()?;
        let cause = match output {
            Output::Event(Event::Fenced { .. }) => self.fence_causes.pop_front(),
            _ => None,
        };
        Some((output, cause))
    }

    /// Give up every role now: leaders get `Revoked`, and the member leaves
    /// the group for `resign_hold_off` so another member takes over.
    pub fn resign(&mut self, now: Time) {
        let now = self.clamp(now);
        if self.closed {
            return;
        }
        let all: Vec<u32> = (0..self.cfg.partitions).collect();
        self.handle_revoked(now, &all);
        self.resigned_through = self.generation.or(Some(0));
        self.generation = None;
        self.membership_until = None;
        self.membership_sent = None;
        self.outputs.push_back(Output::LeaveGroup { rejoin_after: self.cfg.resign_hold_off });
    }

    /// Stop for good: leaders get `Revoked`; later input is ignored.
    pub fn close(&mut self, now: Time) {
        let all: Vec<u32> = (0..self.cfg.partitions).collect();
        self.handle_revoked(now, &all);
        self.closed = true;
    }

    /// Whether [`Member::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn send_heartbeats(&mut self, now: Time) {
        let Some(term) = self.generation else {
            self.next_heartbeat = None;
            return;
        };
        // Each heartbeat says whether its sender leads (and with which
        // token): what `neli watch` shows, from the core's own answer.
        let leases: BTreeMap<u32, Option<Token>> = self.roles.keys().map(|r| (*r, self.token(*r, now))).collect();
        for (role, state) in &self.roles {
            if matches!(state, RoleState::Idle) {
                continue;
            }
            // The sequence number is the count of heartbeats sent: it
            // decides nothing, so it lives with the statistics (it would
            // otherwise tell apart members that behave alike).
            self.counters.heartbeats_sent += 1;
            let seq = self.counters.heartbeats_sent;
            let lease = leases.get(role).copied().flatten();
            let hb = Heartbeat { role: *role, term, seq, sent_at: now, lease, name: self.cfg.name.clone() };
            self.outputs.push_back(Output::Produce { partition: self.cfg.partition_of(*role), payload: hb.encode() });
        }
        if self.cfg.membership_proof {
            self.proof_requested = Some(now);
            self.outputs.push_back(Output::ConfirmMembership { generation: term });
        }
        self.next_heartbeat = Some(now + self.cfg.heartbeat_interval.max(Duration::from_millis(1)));
    }

    fn bound_by_membership(&self, heartbeat_until: Time) -> Time {
        bound(self.cfg.membership_proof, self.membership_until, heartbeat_until)
    }

    fn clamp(&mut self, now: Time) -> Time {
        self.last_now = self.last_now.max(now);
        self.last_now
    }
}

fn bound(membership_proof: bool, membership_until: Option<Time>, heartbeat_until: Time) -> Time {
    if membership_proof { heartbeat_until.min(membership_until.unwrap_or(Time::ZERO)) } else { heartbeat_until }
}
