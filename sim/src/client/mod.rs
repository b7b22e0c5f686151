//! The simulated Kafka client and [`SimBroker`], its `neli::Broker` face.
//!
//! Faithful to librdkafka where the election depends on it: group heartbeats
//! run on a background task whatever the application does; the client
//! detects its own session timeout and reports a lost assignment; rebalance
//! events reach the application only inside a poll, and after a lost
//! assignment the client rejoins only once a poll delivered it; records are
//! prefetched into a buffer; produce enqueues and a background task delivers
//! within a delivery timeout; not polling for `max.poll.interval.ms` makes
//! the client leave the group. Like the Kafka backend, a topic watcher looks
//! for the election topic every second and, when a broker lost it, reports
//! `LogLost` and recreates it. As the Kafka backend does, a newly assigned
//! partition starts at the end the cluster reports inside the poll that
//! hands the assignment over, before the member writes there; nothing is
//! fetched from it before.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use neli::core::Record;
use neli::{BrokerError, BrokerEvent, Clock, Membership};
use tokio::sync::Notify;

use crate::clock::{Gate, SimClock, global_ms};
use crate::proto::{CallError, Conn, GroupError, Request, Response};
use crate::record::{AssignmentChange, AssignmentObs, ProofObs, Recorder};
use crate::verdict::Rule;

mod tasks;
use tasks::{fetch_task, group_task, produce_task, topic_task};

/// Client settings (the librdkafka properties that matter here).
#[derive(Debug, Clone)]
pub struct ClientCfg {
    /// The member incarnation's name (also the client id).
    pub name: String,
    pub coordinator: String,
    pub partition_leader: String,
    pub session_ms: u64,
    pub heartbeat_ms: u64,
    pub max_poll_ms: u64,
    pub request_timeout_ms: u64,
    pub delivery_timeout_ms: u64,
    /// Report the assignment lost once no group heartbeat succeeded for
    /// `session_ms` (librdkafka does; off only for layer ablation).
    pub session_expiry: bool,
    /// The cooperative-sticky protocol: a rebalance keeps what is not
    /// moving; only a moving partition is revoked, then the member rejoins
    /// (else eager range: give everything back before every rebalance).
    pub cooperative: bool,
    /// Static membership: the instance id it joins with (`group.instance.id`).
    pub instance_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Joining,
    Member,
    /// Revoked handed to the app; waiting for `ack_revoked`.
    Revoking,
    /// A lost assignment (or max-poll leave) waits for the app's next poll.
    WaitPoll,
    Closed,
}

struct ClientState {
    phase: Phase,
    member_id: Option<String>,
    generation: Option<u64>,
    assigned: Vec<u32>,
    positions: BTreeMap<u32, Option<u64>>,
    /// Assigned partitions whose start the application has not fixed yet:
    /// the Kafka backend asks for their end in the rebalance callback, in
    /// the poll that hands the assignment over, and librdkafka fetches
    /// nothing from them before (neli/KAFKA.md, "tansu's timing").
    unstarted: BTreeSet<u32>,
    fetch_epoch: u64,
    queue: VecDeque<BrokerEvent>,
    last_hb_ok: u64,
    last_poll: u64,
    produce_q: VecDeque<(u64, u32, Vec<u8>)>,
    /// Cooperative: the generation in which `assigned` was last handed out.
    owned_generation: u64,
    /// A JoinGroup is on its way or held by the coordinator: librdkafka
    /// sends it on the one coordinator connection its commits use, and a
    /// broker answers one connection's requests in order, so an eager
    /// member's commit waits behind it (a cooperative member's proof has a
    /// connection of its own: docs/cooperative-rebalance.md, "One coordinator
    /// connection").
    join_in_flight: bool,
    /// Cooperative: the assignment to take once the app acked the revocation
    /// of what it no longer contains.
    after_revoke: Option<(u64, Vec<u32>)>,
}

impl ClientState {
    /// Gives up the whole assignment: nothing of it is fetched any more,
    /// and a fetch already on its way is discarded (a new epoch).
    fn forget_assignment(&mut self) {
        self.assigned.clear();
        self.positions.clear();
        self.unstarted.clear();
        self.fetch_epoch += 1;
    }

    /// Cooperative: `assignment` is the new full set; kept partitions keep
    /// their fetch positions.
    fn take_assignment(&mut self, assignment: &[u32]) {
        if self.assigned != assignment {
            self.positions.retain(|p, _| assignment.contains(p));
            self.unstarted.retain(|p| assignment.contains(p));
            for p in assignment {
                if !self.positions.contains_key(p) {
                    self.positions.insert(*p, None);
                    self.unstarted.insert(*p);
                }
            }
            self.assigned = assignment.to_vec();
            self.fetch_epoch += 1;
        }
    }
}

struct Shared {
    st: Mutex<ClientState>,
    app: Notify,
    /// A JoinGroup came back (commits queued behind it go out).
    joined: Notify,
    group: Notify,
    fetch: Notify,
    produce: Notify,
    gate: Gate,
    rec: Recorder,
    cfg: ClientCfg,
    /// A `fatal-error` fault: every poll fails fatally from now on.
    fatal: Arc<std::sync::atomic::AtomicBool>,
}

impl Shared {
    /// Notes for the per-rule oracles what the driver is about to learn of
    /// its assignment, in the order it learns it.
    fn note_handed_over(&self, events: &[BrokerEvent]) {
        let changes = events.iter().filter_map(|e| match e {
            BrokerEvent::Assigned { generation, partitions } => {
                Some(AssignmentChange::Assigned { generation: *generation, partitions: partitions.clone() })
            }
            BrokerEvent::Revoked { partitions } => Some(AssignmentChange::Revoked(partitions.clone())),
            BrokerEvent::Lost { partitions } => Some(AssignmentChange::Lost(partitions.clone())),
            BrokerEvent::LogLost => Some(AssignmentChange::LogLost),
            _ => None,
        });
        let mut log = self.rec.lock();
        for change in changes {
            let seq = log.next_seq();
            log.assignments.push(AssignmentObs { seq, at: global_ms(), member: self.cfg.name.clone(), change });
        }
        self.rec.moment();
    }

    /// A membership proof of `generation` was rejected: noted for the
    /// oracles (the member's assignment ends), and answered.
    fn rejected(&self, generation: u64) -> Membership {
        let mut log = self.rec.lock();
        let (seq, member) = (log.next_seq(), self.cfg.name.clone());
        let change = AssignmentChange::ProofRejected { generation };
        log.assignments.push(AssignmentObs { seq, at: global_ms(), member, change });
        Membership::Rejected
    }

    /// A cooperative join's answer, librdkafka's incremental path: revoke
    /// only what left the assignment, wait for the app, then take the new
    /// set and rejoin; with nothing revoked, one Assigned with the (full)
    /// new set.
    fn joined_incrementally(
        &self,
        st: &mut ClientState,
        member_id: String,
        generation: u64,
        assignment: Vec<u32>,
        now: u64,
    ) {
        st.member_id = Some(member_id);
        st.generation = Some(generation);
        st.owned_generation = generation;
        st.last_hb_ok = now;
        let revoked: Vec<u32> = st.assigned.iter().copied().filter(|p| !assignment.contains(p)).collect();
        if revoked.is_empty() {
            st.take_assignment(&assignment);
            st.phase = Phase::Member;
            st.queue.push_back(BrokerEvent::Assigned { generation, partitions: assignment.clone() });
            self.trace(format!("joined generation {generation} assigned {assignment:?} (incremental)"));
        } else {
            st.phase = Phase::Revoking;
            st.after_revoke = Some((generation, assignment.clone()));
            st.queue.push_back(BrokerEvent::Revoked { partitions: revoked.clone() });
            self.trace(format!("joined generation {generation}: revoking {revoked:?}, then assigned {assignment:?}"));
        }
        self.app.notify_one();
        self.fetch.notify_one();
    }

    /// An eager join's answer: everything was given back before the
    /// rebalance, so the new assignment starts from scratch.
    fn joined_eagerly(&self, st: &mut ClientState, member_id: String, generation: u64, assignment: Vec<u32>, now: u64) {
        st.member_id = Some(member_id);
        st.generation = Some(generation);
        st.assigned = assignment.clone();
        st.positions = assignment.iter().map(|p| (*p, None)).collect();
        st.unstarted = assignment.iter().copied().collect();
        st.fetch_epoch += 1;
        st.phase = Phase::Member;
        st.last_hb_ok = now;
        st.queue.push_back(BrokerEvent::Assigned { generation, partitions: assignment.clone() });
        self.trace(format!("joined generation {generation} assigned {assignment:?}"));
        self.app.notify_one();
        self.fetch.notify_one();
    }

    /// What a group heartbeat's answer (read at `now`) does to a member in
    /// `phase`: a rebalance starts a revocation or a rejoin, an eviction
    /// loses the assignment, and so does a session that ran out meanwhile.
    fn heartbeat_answered(
        &self,
        st: &mut ClientState,
        resp: Result<Response, CallError>,
        phase: Phase,
        now: u64,
        session_deadline: u64,
    ) {
        match resp {
            Ok(Response::Ok) => st.last_hb_ok = now,
            // Heartbeats go on while the app handles the revocation.
            Ok(Response::Error(GroupError::RebalanceInProgress)) if phase == Phase::Revoking => st.last_hb_ok = now,
            Ok(Response::Error(GroupError::RebalanceInProgress)) if self.cfg.cooperative => {
                // Incremental: rejoin keeping (and fetching) what it owns.
                st.last_hb_ok = now;
                st.phase = Phase::Joining;
            }
            Ok(Response::Error(GroupError::RebalanceInProgress)) => {
                st.last_hb_ok = now;
                if st.assigned.is_empty() {
                    st.generation = None;
                    st.phase = Phase::Joining;
                } else {
                    // Eager protocol: give everything back, then rejoin.
                    let partitions = st.assigned.clone();
                    st.queue.push_back(BrokerEvent::Revoked { partitions });
                    st.phase = Phase::Revoking;
                    self.app.notify_one();
                }
            }
            // Inside the Revoked barrier (librdkafka's WAIT_UNASSIGN_CALL, a
            // rebalance in progress) an eviction only resets the member id:
            // no loss is reported, and after the handler the client assigns
            // what it keeps and joins again as a new member
            // (`rd_kafka_cgrp_revoke_all_rejoin_maybe`; docs/background.md,
            // "librdkafka's rejoin paths").
            Ok(Response::Error(GroupError::UnknownMember)) if phase == Phase::Revoking => {
                st.member_id = None;
                self.trace("unknown member while revoking: member id reset, no loss reported");
            }
            Ok(Response::Error(GroupError::IllegalGeneration)) if phase == Phase::Revoking => {
                self.trace("illegal generation while revoking: no loss reported");
            }
            Ok(Response::Error(GroupError::FencedInstanceId)) => self.fenced_by_newer_instance(st),
            Ok(Response::Error(GroupError::UnknownMember)) => self.lose(st, "unknown member", true),
            Ok(Response::Error(GroupError::IllegalGeneration)) => self.lose(st, "illegal generation", false),
            // Read after the call: it may have come back at the
            // deadline, or past it (the member was paused).
            _ if now >= session_deadline => {
                self.rec.lock().acted.insert(crate::scenario::Layer::ClientSessionExpiry);
                self.lose(st, "session timed out on the client", false)
            }
            _ => {}
        }
    }

    fn lock(&self) -> MutexGuard<'_, ClientState> {
        self.st.lock().expect("client lock")
    }

    fn trace(&self, text: impl Into<String>) {
        self.rec.trace(global_ms(), &self.cfg.name, text);
    }

    /// The assignment is gone without a handover (librdkafka `lost=true`).
    /// KIP-345: a newer process joined with this member's instance id.
    /// librdkafka revokes everything as lost and fails fatally
    /// (`rd_kafka_cgrp`, "consumer fenced by newer instance"): the election
    /// ends, and the client never joins again.
    fn fenced_by_newer_instance(&self, st: &mut ClientState) {
        self.lose(st, "fenced by a newer instance with its instance id (FENCED_INSTANCE_ID)", true);
        let name = self.cfg.name.clone();
        self.rec.lock().fatal_at.entry(name).or_insert(global_ms());
        self.fatal.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn lose(&self, st: &mut ClientState, why: &str, forget_member: bool) {
        if forget_member {
            st.member_id = None;
        }
        st.generation = None;
        st.after_revoke = None;
        if st.assigned.is_empty() {
            st.phase = Phase::Joining;
        } else {
            let partitions = st.assigned.clone();
            st.queue.push_back(BrokerEvent::Lost { partitions });
            st.phase = Phase::WaitPoll;
            self.app.notify_one();
        }
        self.trace(format!("assignment lost ({why})"));
    }
}

/// A member's connection to the simulated cluster; implements `neli::Broker`.
pub struct SimBroker {
    shared: Arc<Shared>,
    commit: Conn,
    /// Asks the partition leader for the end of newly assigned partitions.
    offsets: Conn,
    clock: SimClock,
    polls: PollLog,
    /// The sequence number of the last heartbeat the driver handed over
    /// (rule `heartbeat-seq`).
    last_seq: Option<u64>,
    /// The driver's clock at its last poll with no wait, and how many such
    /// polls in a row it made at that instant (rule `no-busy-wait`).
    busy: (u64, u32),
    /// Under `Neli::background`, a `stall-poll` fault stalls neli's own
    /// loop: its polls wait out this clock's stall before they hand
    /// anything over ([`SimBroker::polls_stalled_by`]).
    poll_stall: Option<SimClock>,
}

/// How long an assignment waits for the end of its partitions, as the Kafka
/// backend's rebalance callback does.
const END_QUERY_LIMIT: Duration = Duration::from_secs(1);

/// Polls with no wait at one instant before the driver counts as spinning
/// (rule `no-busy-wait`): correct code makes one or two, when a deadline is
/// due the moment it polls.
const BUSY_POLLS: u32 = 1000;

/// The polls the driver made, as (its clock when it asked, the wait it
/// asked for, in ms): the member host reads and clears it around each
/// pulse to judge the wait against the core's deadlines (rule
/// `wakes-on-time`, `world/member/`).
pub type PollLog = Arc<Mutex<Vec<(u64, u64)>>>;

impl SimBroker {
    /// Leaves the group (LeaveGroup), forgetting the assignment.
    /// Leaves the group; false when the member had joined and its
    /// LeaveGroup request got no answer (its session then ends by timeout).
    async fn leave_group(&mut self) -> bool {
        let member = {
            let mut st = self.shared.lock();
            st.phase = Phase::Idle;
            st.generation = None;
            st.after_revoke = None;
            st.forget_assignment();
            st.member_id.take()
        };
        if let Some(member_id) = member {
            let timeout = self.timeout();
            return self.commit.call(&Request::Leave { member_id }, timeout).await.is_ok();
        }
        true
    }

    /// Starts the client's background tasks on the current host.
    pub fn start(
        cfg: ClientCfg,
        clock: SimClock,
        gate: Gate,
        rec: Recorder,
        fatal: Arc<std::sync::atomic::AtomicBool>,
    ) -> SimBroker {
        let now = global_ms();
        let st = ClientState {
            phase: Phase::Idle,
            member_id: None,
            generation: None,
            assigned: Vec::new(),
            positions: BTreeMap::new(),
            unstarted: BTreeSet::new(),
            fetch_epoch: 0,
            queue: VecDeque::new(),
            last_hb_ok: now,
            last_poll: now,
            produce_q: VecDeque::new(),
            owned_generation: 0,
            join_in_flight: false,
            after_revoke: None,
        };
        let commit = Conn::new(&cfg.coordinator, gate.clone());
        let offsets = Conn::new(&cfg.partition_leader, gate.clone());
        let shared = Arc::new(Shared {
            st: Mutex::new(st),
            app: Notify::new(),
            joined: Notify::new(),
            group: Notify::new(),
            fetch: Notify::new(),
            produce: Notify::new(),
            gate,
            rec,
            cfg,
            fatal,
        });
        // On the host's LocalSet, not `tokio::spawn`: a crash drops these
        // tasks (and closes their connections) in spawn order, not in the
        // order of process-wide task ids (ARCHITECTURE.md, "Invariants").
        tokio::task::spawn_local(group_task(shared.clone()));
        tokio::task::spawn_local(fetch_task(shared.clone()));
        tokio::task::spawn_local(produce_task(shared.clone()));
        tokio::task::spawn_local(topic_task(shared.clone()));
        let polls = PollLog::default();
        SimBroker { shared, commit, offsets, clock, polls, last_seq: None, busy: (0, 0), poll_stall: None }
    }

    /// The driver's polls from now on (see [`PollLog`]).
    pub fn polls(&self) -> PollLog {
        self.polls.clone()
    }

    /// The client of an election run by `Neli::background`: the loop that
    /// polls it is neli's, so a `stall-poll` fault (global ms in `stall`)
    /// holds its polls, and the events they would hand over, until the
    /// stall ends, while the client's background work (group heartbeats,
    /// fetches) goes on, as under a pulsed application.
    pub(crate) fn polls_stalled_by(mut self, stall: Arc<std::sync::atomic::AtomicU64>) -> SimBroker {
        self.poll_stall = Some(self.clock.clone().stalled_by(stall));
        self
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.shared.cfg.request_timeout_ms)
    }

    /// Where the partitions just assigned start, fixed before the poll hands
    /// the assignment over: at the end the partition leader reports now, as
    /// the Kafka backend asks in its rebalance callback (up to a second;
    /// past that, or refused, at the end its first fetch finds, as
    /// librdkafka does by itself).
    async fn start_at_the_end(&mut self) {
        // One ask per partition, all within one limit for the whole round
        // (the backend's lookup covers the assignment at once); an
        // assignment that comes meanwhile adds its partitions to the round.
        let deadline = global_ms() + END_QUERY_LIMIT.as_millis() as u64;
        let mut asked = BTreeSet::new();
        loop {
            let next = self.shared.lock().unstarted.iter().copied().find(|p| !asked.contains(p));
            let Some(partition) = next else { break };
            asked.insert(partition);
            let left = Duration::from_millis(deadline.saturating_sub(global_ms()));
            let end = if left.is_zero() {
                None
            } else {
                let ask = Request::Fetch { partition, from: None, max_wait_ms: 0 };
                match self.offsets.call(&ask, left).await {
                    Ok(Response::Fetched { next, .. }) => Some(next),
                    _ => None,
                }
            };
            let mut st = self.shared.lock();
            if st.unstarted.remove(&partition)
                && let (Some(end), Some(slot @ None)) = (end, st.positions.get_mut(&partition))
            {
                *slot = Some(end);
            }
            drop(st);
            if end.is_none() {
                self.shared
                    .trace(format!("the end of partition {partition} unknown at assignment: its first fetch finds it"));
            }
        }
        self.shared.fetch.notify_one();
    }

    /// Rule `heartbeat-seq`: an incarnation numbers its heartbeats 1, 2,
    /// 3, ... in the order it hands them over (docs/background.md, "The
    /// heartbeat record"), so a reader can count the ones it missed.
    fn check_seq(&mut self, payload: &[u8]) {
        let Ok(hb) = neli::core::Heartbeat::decode(payload) else {
            return;
        };
        let expected = self.last_seq.map_or(1, |s| s.wrapping_add(1));
        if hb.seq != expected {
            let what = format!(
                "handed over a heartbeat (role {}, term {}) numbered {} after {:?}; expected {expected}",
                hb.role, hb.term, hb.seq, self.last_seq
            );
            self.shared.rec.lock().saw_broken(Rule::HeartbeatSeq, &self.shared.cfg.name, global_ms(), what);
        }
        self.last_seq = Some(hb.seq);
    }
}

impl neli::Broker for SimBroker {
    async fn subscribe(&mut self) -> Result<(), BrokerError> {
        let mut st = self.shared.lock();
        if st.phase == Phase::Idle {
            st.phase = Phase::Joining;
            st.last_poll = global_ms();
        }
        drop(st);
        self.shared.group.notify_one();
        Ok(())
    }

    async fn poll(&mut self, timeout: Duration) -> Result<Vec<BrokerEvent>, BrokerError> {
        // The driver's clock when it asked: it read the clock and computed
        // the wait without yielding in between.
        let at = self.clock.now().as_millis();
        // Kept only while the member host reads it (an application on
        // `Neli::background` has no pulses to judge).
        if Arc::strong_count(&self.polls) > 1 {
            self.polls.lock().expect("poll log").push((at, timeout.as_millis() as u64));
        }
        self.busy = match self.busy {
            (t, n) if timeout.is_zero() && t == at => (t, n + 1),
            _ if timeout.is_zero() => (at, 1),
            _ => (at, 0),
        };
        if self.busy.1 >= BUSY_POLLS {
            // Simulated time moves only when every task waits: a driver that
            // polls with no wait again and again at one instant stops it, and
            // the run with it. Failing the client fatally ends the member's
            // election, so the run goes on and reports why.
            let what = format!(
                "its driver polled {BUSY_POLLS} times in a row with no wait at {} (own clock): it spins and simulated time stands still",
                crate::verdict::secs(at)
            );
            let name = self.shared.cfg.name.clone();
            let mut log = self.shared.rec.lock();
            log.saw_broken(Rule::NoBusyWait, &name, global_ms(), what);
            // As a `fatal-error` fault: the rules about closing after one apply.
            log.fatal_at.entry(name).or_insert(global_ms());
            drop(log);
            self.busy = (at, 0);
            self.shared.fatal.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        self.shared.gate.pass().await;
        if self.shared.fatal.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(BrokerError::fatal("the client failed fatally (scenario fault fatal-error)"));
        }
        let empty = self.shared.lock().queue.is_empty();
        if empty {
            tokio::select! {
                _ = self.shared.app.notified() => {}
                _ = self.clock.sleep(timeout) => {}
            }
            self.shared.gate.pass().await;
        }
        if let Some(stalled) = &self.poll_stall {
            stalled.wait_out_stall().await;
        }
        let assigns = {
            let st = self.shared.lock();
            // An assignment already lost (its `Lost` queued behind it) is
            // given up as this poll hands it over: nothing to ask for it.
            !st.unstarted.is_empty()
                && st.phase != Phase::WaitPoll
                && st.queue.iter().any(|e| matches!(e, BrokerEvent::Assigned { .. }))
        };
        if assigns {
            self.start_at_the_end().await;
        }
        let mut st = self.shared.lock();
        st.last_poll = global_ms();
        let events: Vec<BrokerEvent> = st.queue.drain(..).collect();
        self.shared.note_handed_over(&events);
        if st.phase == Phase::WaitPoll {
            // The lost assignment reached the app: drop it and rejoin.
            st.forget_assignment();
            st.phase = Phase::Joining;
            drop(st);
            self.shared.group.notify_one();
        }
        Ok(events)
    }

    async fn produce(&mut self, partition: u32, payload: Vec<u8>) -> Result<(), BrokerError> {
        self.check_seq(&payload);
        let mut st = self.shared.lock();
        if st.produce_q.len() >= 1000 {
            return Err(BrokerError::retriable("producer queue full"));
        }
        st.produce_q.push_back((global_ms(), partition, payload));
        drop(st);
        self.shared.produce.notify_one();
        Ok(())
    }

    async fn confirm_membership(&mut self, generation: u64) -> Result<Membership, BrokerError> {
        let (member_id, current) = {
            let st = self.shared.lock();
            (st.member_id.clone(), st.generation)
        };
        let Some(member_id) = member_id else {
            return Ok(self.shared.rejected(generation));
        };
        let cooperative = self.shared.cfg.cooperative;
        if cooperative && current.is_some_and(|g| g > generation) {
            // The client moved on; the driver learns of it at its next poll.
            return Ok(Membership::Undetermined);
        }
        // Eager: queued behind the member's own JoinGroup on librdkafka's
        // coordinator connection, no answer until the coordinator answers
        // the join. Cooperative: neli sends the proof on a connection of its
        // own (docs/cooperative-rebalance.md, "One coordinator connection").
        let timeout = self.timeout();
        let queued = self.clock.now();
        loop {
            let joined = self.shared.joined.notified();
            if cooperative || !self.shared.lock().join_in_flight {
                break;
            }
            let waited = Duration::from_millis(self.clock.now().as_millis().saturating_sub(queued.as_millis()));
            let Some(left) = timeout.checked_sub(waited).filter(|l| !l.is_zero()) else {
                return Err(BrokerError::retriable(
                    "commit failed: no answer within the request timeout (queued behind the JoinGroup)",
                ));
            };
            tokio::select! {
                _ = joined => {}
                _ = self.clock.sleep(left) => {}
            }
            self.shared.gate.pass().await;
        }
        let timeout = self.timeout();
        let sent_local = self.clock.now().as_millis();
        match self.commit.call(&Request::Commit { member_id, generation }, timeout).await {
            Ok(Response::Ok) => {
                let mut log = self.shared.rec.lock();
                let seq = log.next_seq();
                log.proofs.push(ProofObs { seq, member: self.shared.cfg.name.clone(), generation, sent_local });
                self.shared.rec.moment();
                Ok(Membership::Confirmed)
            }
            // Incremental: a commit racing a rebalance's end names the old
            // generation; the member keeps its partitions and proves the new
            // one next (docs/cooperative-rebalance.md, "Proof").
            Ok(Response::Error(GroupError::IllegalGeneration | GroupError::RebalanceInProgress)) if cooperative => {
                Ok(Membership::Undetermined)
            }
            // Eager: the rebalance takes every partition anyway, so neli's
            // backend reads any of these as a rejection
            // (`neli::kafka::errors::membership_of_code`).
            Ok(Response::Error(
                GroupError::UnknownMember | GroupError::IllegalGeneration | GroupError::RebalanceInProgress,
            )) => Ok(self.shared.rejected(generation)),
            // librdkafka: fatal (`rd_kafka_cgrp` raises it), and the
            // proof is refused (neli's backend reads the code so).
            Ok(Response::Error(GroupError::FencedInstanceId)) => {
                let rejected = self.shared.rejected(generation);
                self.shared.fenced_by_newer_instance(&mut self.shared.lock());
                Ok(rejected)
            }
            Ok(other) => Err(BrokerError::retriable(format!("commit failed: {other:?}"))),
            Err(e) => Err(BrokerError::retriable(format!("commit failed: {e}"))),
        }
    }

    async fn ack_revoked(&mut self, _partitions: &[u32]) -> Result<(), BrokerError> {
        let mut st = self.shared.lock();
        if st.phase == Phase::Revoking
            && let Some((generation, assignment)) = st.after_revoke.take()
        {
            // Incremental: the revoked partitions go (incremental_unassign),
            // the new set is handed out, and the member rejoins so the next
            // rebalance can give the revoked ones to their new owner.
            st.take_assignment(&assignment);
            st.queue.push_back(BrokerEvent::Assigned { generation, partitions: assignment });
            st.phase = Phase::Joining;
            drop(st);
            self.shared.app.notify_one();
            self.shared.group.notify_one();
            self.shared.fetch.notify_one();
            return Ok(());
        }
        if st.phase == Phase::Revoking {
            st.generation = None;
            st.forget_assignment();
            st.phase = Phase::Joining;
            drop(st);
            self.shared.group.notify_one();
        }
        Ok(())
    }

    async fn leave(&mut self) -> Result<(), BrokerError> {
        // Only a resign leaves the group and stays in the election: the
        // rules see it here, where it happens, in order with what the
        // client hands the driver (`close` leaves by `leave_group`).
        {
            let mut log = self.shared.rec.lock();
            let seq = log.next_seq();
            let member = self.shared.cfg.name.clone();
            log.assignments.push(AssignmentObs { seq, at: global_ms(), member, change: AssignmentChange::Resigned });
        }
        self.shared.trace("left the group (resign)");
        // A resign whose LeaveGroup got no answer still takes the member
        // out: it has forgotten its membership and sends the coordinator no
        // more group heartbeats, so its session ends by timeout.
        self.leave_group().await;
        Ok(())
    }

    async fn partition_count(&mut self) -> Result<u32, BrokerError> {
        let mut conn = Conn::new(&self.shared.cfg.partition_leader, self.shared.gate.clone());
        for _ in 0..50 {
            if let Ok(Response::Metadata { partitions }) = conn.call(&Request::Metadata, self.timeout()).await {
                return Ok(partitions);
            }
            self.clock.sleep(Duration::from_millis(200)).await;
        }
        Err(BrokerError::retriable("metadata request kept failing"))
    }

    async fn close(&mut self) -> Result<(), BrokerError> {
        let left = self.leave_group().await;
        self.shared.lock().phase = Phase::Closed;
        // As librdkafka's consumer close reports a fatal error raised
        // before it, and as a real client's close can fail retriably (the
        // rdkafka backend: its close thread did not start). The driver
        // passes the first on and not the second (rule close-reports).
        if self.shared.fatal.load(std::sync::atomic::Ordering::SeqCst) {
            Err(BrokerError::fatal("the client failed fatally (scenario fault fatal-error)"))
        } else if left {
            Ok(())
        } else {
            Err(BrokerError::retriable("the LeaveGroup request on close got no answer"))
        }
    }
}
