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
//! `LogLost` and recreates it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use neli::core::Record;
use neli::{BrokerError, BrokerEvent, Clock, Membership};
use tokio::sync::Notify;

use crate::clock::{Gate, SimClock, global_ms};
use crate::proto::{Conn, GroupError, Request, Response};
use crate::record::{AssignmentChange, AssignmentObs, ProofObs, Recorder};

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
    /// Cooperative: `assignment` is the new full set; kept partitions keep
    /// their fetch positions.
    fn take_assignment(&mut self, assignment: &[u32]) {
        if self.assigned != assignment {
            self.positions.retain(|p, _| assignment.contains(p));
            for p in assignment {
                self.positions.entry(*p).or_insert(None);
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
        resp: Result<Response, String>,
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
    clock: SimClock,
    polls: PollLog,
    /// The sequence number of the last heartbeat the driver handed over
    /// (rule `heartbeat-seq`).
    last_seq: Option<u64>,
    /// The driver's clock at its last poll with no wait, and how many such
    /// polls in a row it made at that instant (rule `no-busy-wait`).
    busy: (u64, u32),
}

/// Polls with no wait at one instant before the driver counts as spinning
/// (rule `no-busy-wait`): correct code makes one or two, when a deadline is
/// due the moment it polls.
const BUSY_POLLS: u32 = 1000;

/// The polls the driver made, as (its clock when it asked, the wait it
/// asked for, in ms): the member host reads and clears it around each
/// pulse to judge the wait against the core's deadlines (rule
/// `wakes-on-time`, `world/member.rs`).
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
            st.assigned.clear();
            st.positions.clear();
            st.fetch_epoch += 1;
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
        SimBroker { shared, commit, clock, polls: PollLog::default(), last_seq: None, busy: (0, 0) }
    }

    /// The driver's polls from now on (see [`PollLog`]).
    pub fn polls(&self) -> PollLog {
        self.polls.clone()
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.shared.cfg.request_timeout_ms)
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
            self.shared.rec.lock().seen_broken.push((
                crate::verdict::names::HEARTBEAT_SEQ,
                global_ms(),
                self.shared.cfg.name.clone(),
                what,
            ));
        }
        self.last_seq = Some(hb.seq);
    }
}

async fn wait(notify: &Notify, gate: &Gate, ms: u64) {
    let _ = tokio::time::timeout(Duration::from_millis(ms), notify.notified()).await;
    gate.pass().await;
}

/// librdkafka's group thread: joins, heartbeats and notices a rebalance or
/// the end of its session whatever the application does, one round per
/// turn of the loop.
async fn group_task(sh: Arc<Shared>) {
    let mut conn = Conn::new(&sh.cfg.coordinator, sh.gate.clone());
    let mut next_hb = 0u64;
    loop {
        sh.gate.pass().await;
        let (phase, member_id, generation) = {
            let st = sh.lock();
            (st.phase, st.member_id.clone(), st.generation)
        };
        match phase {
            Phase::Closed => return,
            Phase::Idle | Phase::WaitPoll => {
                check_max_poll(&sh, &mut conn).await;
                wait(&sh.group, &sh.gate, 100).await;
            }
            // A client that failed fatally never joins again (a static
            // member fenced by a newer instance would take its place back).
            Phase::Joining if sh.fatal.load(std::sync::atomic::Ordering::SeqCst) => {
                wait(&sh.group, &sh.gate, 100).await
            }
            Phase::Joining => join_round(&sh, &mut conn, member_id, &mut next_hb).await,
            Phase::Member | Phase::Revoking => {
                heartbeat_round(&sh, &mut conn, phase, member_id, generation, &mut next_hb).await
            }
        }
    }
}

/// Phase `Joining`: one JoinGroup and what its answer makes of the
/// client; a failed join is tried again 200 ms later.
async fn join_round(sh: &Shared, conn: &mut Conn, member_id: Option<String>, next_hb: &mut u64) {
    let cfg = &sh.cfg;
    let (owned, owned_generation) = {
        let st = sh.lock();
        if cfg.cooperative { (st.assigned.clone(), st.owned_generation) } else { (Vec::new(), 0) }
    };
    let req = Request::Join {
        member_id,
        client: cfg.name.clone(),
        session_ms: cfg.session_ms,
        rebalance_ms: cfg.max_poll_ms,
        cooperative: cfg.cooperative,
        owned,
        owned_generation,
        instance_id: cfg.instance_id.clone(),
    };
    sh.lock().join_in_flight = true;
    let resp = conn.call(&req, Duration::from_millis(cfg.max_poll_ms + cfg.session_ms)).await;
    sh.lock().join_in_flight = false;
    sh.joined.notify_waiters();
    let now = global_ms();
    let retry = {
        let mut st = sh.lock();
        match resp {
            _ if st.phase != Phase::Joining => false,
            Ok(Response::Joined { member_id, generation, assignment }) if cfg.cooperative => {
                *next_hb = now + cfg.heartbeat_ms;
                sh.joined_incrementally(&mut st, member_id, generation, assignment, now);
                false
            }
            Ok(Response::Joined { member_id, generation, assignment }) => {
                *next_hb = now + cfg.heartbeat_ms;
                sh.joined_eagerly(&mut st, member_id, generation, assignment, now);
                false
            }
            // librdkafka resets the id and joins again, reporting nothing
            // lost (`rd_kafka_cgrp_handle_JoinGroup`): a cooperative member
            // still lists what it owns.
            Ok(Response::Error(GroupError::UnknownMember)) => {
                st.member_id = None;
                sh.trace("JoinGroup: unknown member: member id reset, joining again (no loss reported)");
                false
            }
            // Kafka's answer to that join without an id: under cooperative
            // librdkafka reports everything it owns lost before it joins.
            Ok(Response::Error(GroupError::MemberIdRequired)) => {
                sh.lose(&mut st, "JoinGroup MEMBER_ID_REQUIRED under cooperative", false);
                false
            }
            _ => true,
        }
    };
    if retry {
        wait(&sh.group, &sh.gate, 200).await;
    }
}

/// Phases `Member` and `Revoking`: the session check and, when due, one
/// group heartbeat.
async fn heartbeat_round(
    sh: &Shared,
    conn: &mut Conn,
    phase: Phase,
    member_id: Option<String>,
    generation: Option<u64>,
    next_hb: &mut u64,
) {
    if check_max_poll(sh, conn).await {
        return;
    }
    let cfg = &sh.cfg;
    let now = global_ms();
    // librdkafka checks its session only in STEADY
    // (`rd_kafka_cgrp_serve`), not while the app handles a revocation.
    let checks_session = cfg.session_expiry && phase == Phase::Member;
    let session_deadline = if checks_session { sh.lock().last_hb_ok + cfg.session_ms } else { u64::MAX };
    let hb_due = now >= *next_hb;
    // Before the call, the deadline changes what happens (a loss,
    // an earlier wake, a shorter heartbeat call) only when it
    // comes before both the next heartbeat and one heartbeat
    // interval from now; after it, where it ends the session.
    if session_deadline < (*next_hb).max(now + cfg.heartbeat_ms) {
        sh.rec.lock().acted.insert(crate::scenario::Layer::ClientSessionExpiry);
    }
    // An overdue heartbeat (after a pause, the timers fire late)
    // goes out before the session check, so a resumed member
    // learns of its eviction one round trip later: the window in
    // which the measured zombie heartbeats get written (hazard 2).
    if now >= session_deadline && !hb_due {
        let mut st = sh.lock();
        sh.lose(&mut st, "session timed out on the client", false);
        return;
    }
    if !hb_due {
        let until = (*next_hb).min(session_deadline);
        tokio::time::sleep(Duration::from_millis(until - now)).await;
        return;
    }
    *next_hb = now + cfg.heartbeat_ms;
    let (Some(id), Some(generation)) = (member_id, generation) else {
        return;
    };
    let limit =
        if now >= session_deadline { cfg.heartbeat_ms } else { cfg.heartbeat_ms.min(session_deadline - now).max(10) };
    let resp = conn.call(&Request::Heartbeat { member_id: id, generation }, Duration::from_millis(limit)).await;
    let now = global_ms();
    let mut st = sh.lock();
    if st.phase != phase || st.generation != Some(generation) {
        return;
    }
    sh.heartbeat_answered(&mut st, resp, phase, now, session_deadline);
}

/// librdkafka leaves the group when the app has not polled for
/// `max.poll.interval.ms`; returns whether it did.
async fn check_max_poll(sh: &Shared, conn: &mut Conn) -> bool {
    let now = global_ms();
    let member = {
        let mut st = sh.lock();
        if !matches!(st.phase, Phase::Member | Phase::Revoking) || now < st.last_poll + sh.cfg.max_poll_ms {
            return false;
        }
        if st.phase == Phase::Revoking {
            // Inside the Revoked barrier librdkafka leaves and resets the
            // member id but reports no loss (a rebalance is in progress:
            // `rd_kafka_cgrp_max_poll_interval_check_tmr_cb`); after the
            // handler it joins again as a new member.
            let Some(member) = st.member_id.take() else {
                return false;
            };
            sh.trace("max.poll.interval.ms exceeded while revoking: left group, no loss reported");
            Some(member)
        } else {
            let member = st.member_id.clone();
            sh.lose(&mut st, "max.poll.interval.ms exceeded, left group", true);
            st.phase = Phase::WaitPoll;
            member
        }
    };
    if let Some(member_id) = member {
        let _ = conn.call(&Request::Leave { member_id }, Duration::from_millis(sh.cfg.request_timeout_ms)).await;
    }
    true
}

async fn fetch_task(sh: Arc<Shared>) {
    let mut conn = Conn::new(&sh.cfg.partition_leader, sh.gate.clone());
    loop {
        sh.gate.pass().await;
        let (epoch, work) = {
            let st = sh.lock();
            if st.phase == Phase::Closed {
                return;
            }
            (st.fetch_epoch, st.positions.iter().map(|(p, o)| (*p, *o)).collect::<Vec<_>>())
        };
        if work.is_empty() {
            wait(&sh.fetch, &sh.gate, 500).await;
            continue;
        }
        for (partition, from) in work {
            let req = Request::Fetch { partition, from, max_wait_ms: 200 };
            let resp = conn.call(&req, Duration::from_millis(sh.cfg.request_timeout_ms)).await;
            match resp {
                Ok(Response::Fetched { records, next }) => {
                    let mut st = sh.lock();
                    if st.fetch_epoch != epoch || !st.positions.contains_key(&partition) {
                        break;
                    }
                    st.positions.insert(partition, Some(next));
                    let any = !records.is_empty();
                    for r in records {
                        st.queue.push_back(BrokerEvent::Record(Record {
                            partition,
                            offset: r.offset,
                            timestamp: Some(r.timestamp),
                            payload: r.payload,
                        }));
                    }
                    if any {
                        sh.app.notify_one();
                    }
                }
                _ => wait(&sh.fetch, &sh.gate, 100).await,
            }
        }
    }
}

/// How often the topic watcher asks for the election topic, as the Kafka
/// backend's watcher does.
const TOPIC_CHECK_MS: u64 = 1000;

/// The Kafka backend's topic watcher: `neli::log_watch::LogWatch` decides
/// from each look whether the log was lost (report `LogLost`: tokens
/// restart) and whether to recreate the topic.
async fn topic_task(sh: Arc<Shared>) {
    let mut conn = Conn::new(&sh.cfg.partition_leader, sh.gate.clone());
    let mut watch = neli::log_watch::LogWatch::default();
    loop {
        tokio::time::sleep(Duration::from_millis(TOPIC_CHECK_MS)).await;
        sh.gate.pass().await;
        if sh.lock().phase == Phase::Closed {
            return;
        }
        let timeout = Duration::from_millis(sh.cfg.request_timeout_ms);
        let look = match conn.call(&Request::Metadata, timeout).await {
            Ok(Response::UnknownTopic) => neli::log_watch::Look::Missing,
            Ok(Response::Metadata { .. }) => neli::log_watch::Look::Present,
            _ => continue,
        };
        let verdict = watch.look(look);
        if verdict.lost {
            sh.trace("election log lost: fencing tokens restart");
            sh.lock().queue.push_back(BrokerEvent::LogLost);
            sh.app.notify_one();
        }
        if verdict.recreate {
            sh.trace("election topic vanished without an end marker: recreating it");
            let _ = conn.call(&Request::CreateTopic, timeout).await;
        }
    }
}

async fn produce_task(sh: Arc<Shared>) {
    let mut conn = Conn::new(&sh.cfg.partition_leader, sh.gate.clone());
    loop {
        sh.gate.pass().await;
        let next = {
            let mut st = sh.lock();
            if st.phase == Phase::Closed {
                return;
            }
            st.produce_q.pop_front()
        };
        let Some((queued_at, partition, payload)) = next else {
            wait(&sh.produce, &sh.gate, 500).await;
            continue;
        };
        if global_ms() > queued_at + sh.cfg.delivery_timeout_ms {
            continue; // delivery timed out: dropped, as librdkafka does
        }
        let req = Request::Produce {
            partition,
            payload: payload.clone(),
            create_time: global_ms(),
            author: sh.cfg.name.clone(),
        };
        match conn.call(&req, Duration::from_millis(sh.cfg.request_timeout_ms)).await {
            Ok(Response::Produced { .. }) => {}
            _ => {
                sh.lock().produce_q.push_front((queued_at, partition, payload));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
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
            log.seen_broken.push((crate::verdict::names::NO_BUSY_WAIT, global_ms(), name.clone(), what));
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
        let mut st = self.shared.lock();
        st.last_poll = global_ms();
        let events: Vec<BrokerEvent> = st.queue.drain(..).collect();
        self.shared.note_handed_over(&events);
        if st.phase == Phase::WaitPoll {
            // The lost assignment reached the app: drop it and rejoin.
            st.assigned.clear();
            st.positions.clear();
            st.fetch_epoch += 1;
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
            st.assigned.clear();
            st.positions.clear();
            st.fetch_epoch += 1;
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
