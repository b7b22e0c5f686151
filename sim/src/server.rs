//! A simulated Kafka broker host: the group coordinator (classic protocol,
//! eager rebalances) and the election topic's partition log, with the timing
//! quirks of the broker being imitated (a [`Profile`]).
//!
//! Kept deliberately close to Apache Kafka's `GroupCoordinator`: members are
//! evicted when their session expires (heartbeats and, where the profile
//! says so, offset commits reschedule it); a rebalance waits until every
//! member rejoined or the rebalance timeout passed; members waiting in a
//! join are kept alive. SyncGroup is folded into the join answer: the
//! coordinator assigns partitions itself (round robin over member ids for
//! eager `range`; for `cooperative-sticky`, what librdkafka's group leader
//! computes: owners keep their partitions, a partition that must move is
//! withheld for one generation unless the scenario's `revoked_barrier` is
//! off), which changes no timing the election depends on.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::rt::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};

use crate::clock::global_ms;
use crate::proto::{GroupError, PORT, Request, Response, WireRecord, read_frame, write_frame};
use crate::record::{AppendObs, HeartbeatClaim, Recorder};

pub use crate::profile::Profile;

/// The name (and producer) of the foreign writer's records.
pub const STRANGER: &str = "stranger";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Empty,
    Preparing { ready_at: u64, deadline: u64 },
    Stable,
}

#[derive(Debug)]
struct GroupMember {
    client: String,
    session_ms: u64,
    rebalance_ms: u64,
    expires_at: u64,
    assignment: Vec<u32>,
    cooperative: bool,
    /// Cooperative: what the member said it owns at its last join, and
    /// since which generation.
    owned: Vec<u32>,
    owned_generation: u64,
    /// Static membership: its `group.instance.id`.
    instance_id: Option<String>,
}

#[derive(Debug)]
struct Group {
    phase: Phase,
    generation: u64,
    members: BTreeMap<String, GroupMember>,
    pending: BTreeMap<String, oneshot::Sender<Response>>,
    next_id: u64,
    last_check: u64,
    /// A group request arrived since the last expiry check.
    touched: bool,
    /// The initial rebalance's extension state, while the group forms from
    /// empty on a profile whose initial delay extends.
    initial: Option<InitialDelay>,
    /// Member ids a newer process with their instance id replaced: their
    /// requests are answered FENCED_INSTANCE_ID.
    fenced: std::collections::BTreeSet<String>,
}

/// Apache Kafka's initial delayed join: when the delay runs out and a new
/// member joined during it, wait `min(delay, remaining)` more.
#[derive(Debug, Clone, Copy)]
struct InitialDelay {
    /// The delay of the window now running.
    window_ms: u64,
    /// How much longer the join may still be extended.
    remaining_ms: u64,
    /// A member joined during the window now running.
    joined: bool,
}

impl Group {
    fn new() -> Group {
        Group {
            phase: Phase::Empty,
            generation: 0,
            members: BTreeMap::new(),
            pending: BTreeMap::new(),
            next_id: 0,
            last_check: 0,
            touched: false,
            initial: None,
            fenced: std::collections::BTreeSet::new(),
        }
    }
}

/// What a joining member says about its protocol and what it owns.
struct Claim {
    cooperative: bool,
    owned: Vec<u32>,
    owned_generation: u64,
    instance_id: Option<String>,
}

/// The cooperative-sticky assignment of `partitions` over `members` (keyed
/// by member id), as librdkafka's group leader computes it
/// (docs/cooperative-rebalance.md, "librdkafka"): a partition stays with the
/// member that claims it in the newest generation (two claims of one
/// generation cancel each other); unowned partitions go to the least loaded
/// members, then partitions move from the most to the least loaded until
/// the loads differ by at most one; and a partition whose owner changes is
/// withheld from everyone this generation, so its owner revokes it (through
/// the Revoked barrier) before the next rebalance hands it on.
/// With `withhold` false the moving partition goes to its new owner at once.
fn sticky_assignment(
    members: &BTreeMap<String, GroupMember>,
    partitions: u32,
    withhold: bool,
) -> BTreeMap<String, Vec<u32>> {
    let mut owner: BTreeMap<u32, (u64, Option<&str>)> = BTreeMap::new();
    for (id, m) in members {
        for &p in m.owned.iter().filter(|p| **p < partitions) {
            match owner.get(&p) {
                Some((g, _)) if *g > m.owned_generation => {}
                Some((g, _)) if *g == m.owned_generation => {
                    owner.insert(p, (*g, None));
                }
                _ => {
                    owner.insert(p, (m.owned_generation, Some(id.as_str())));
                }
            }
        }
    }
    let owner: BTreeMap<u32, &str> = owner.into_iter().filter_map(|(p, (_, o))| o.map(|o| (p, o))).collect();
    let mut target: BTreeMap<&str, Vec<u32>> = members.keys().map(|id| (id.as_str(), Vec::new())).collect();
    for (p, o) in &owner {
        target.get_mut(o).expect("owners are members").push(*p);
    }
    let least = |t: &BTreeMap<&str, Vec<u32>>| -> String {
        let (id, _) = t.iter().min_by_key(|(id, ps)| (ps.len(), **id)).expect("a group has members");
        (*id).to_owned()
    };
    for p in (0..partitions).filter(|p| !owner.contains_key(p)) {
        let id = least(&target);
        target.get_mut(id.as_str()).expect("member").push(p);
    }
    loop {
        let (most, most_ps) =
            target.iter().max_by_key(|(id, ps)| (ps.len(), std::cmp::Reverse(**id))).expect("members");
        let (most, n_most) = ((*most).to_owned(), most_ps.len());
        let to = least(&target);
        if n_most <= target[to.as_str()].len() + 1 {
            break;
        }
        let p = target.get_mut(most.as_str()).expect("member").pop().expect("loaded member");
        target.get_mut(to.as_str()).expect("member").push(p);
    }
    target
        .into_iter()
        .map(|(id, mut ps)| {
            // Withheld: a partition another member still owns.
            ps.retain(|p| !withhold || owner.get(p).is_none_or(|o| *o == id));
            ps.sort_unstable();
            (id.to_owned(), ps)
        })
        .collect()
}

/// A broker's durable state: survives a restart unless the fault says the
/// state is lost.
#[derive(Debug)]
pub struct BrokerState {
    group: Group,
    logs: BTreeMap<u32, Vec<WireRecord>>,
    /// Whether the election topic exists: a restart that loses the state
    /// loses the topic too, until a member recreates it.
    topic: bool,
}

impl BrokerState {
    pub fn new(partitions: u32) -> BrokerState {
        BrokerState { group: Group::new(), logs: (0..partitions).map(|p| (p, Vec::new())).collect(), topic: true }
    }

    /// What a broker with memory storage comes back with after a crash: no
    /// group, no offsets and no election topic (neli/KAFKA.md, "Broker
    /// restart with state loss").
    pub fn lost() -> BrokerState {
        BrokerState { group: Group::new(), logs: BTreeMap::new(), topic: false }
    }

    /// Heartbeats written with an older term after a newer term was
    /// already in the log: a zombie's writes (hazard 2).
    pub fn zombie_heartbeats(&self) -> u64 {
        let mut n = 0;
        for log in self.logs.values() {
            let mut newest = 0;
            for r in log {
                // A stranger's heartbeats are foreign, not zombies.
                if let Ok(hb) = neli::core::Heartbeat::decode(&r.payload)
                    && hb.name != STRANGER
                {
                    if hb.term < newest {
                        n += 1;
                    }
                    newest = newest.max(hb.term);
                }
            }
        }
        n
    }
}

/// Everything a broker host needs; shared with the run so faults can reach it.
#[derive(Clone)]
pub struct BrokerCtx {
    pub name: String,
    pub profile: Profile,
    /// Refuse commits of an old generation (off only for layer ablation).
    pub generation_check: bool,
    /// Withhold a moving partition for one generation (cooperative-sticky;
    /// off only to replay the model's unsafe coordinator).
    pub revoked_barrier: bool,
    pub coordinator: bool,
    pub partition_leader: bool,
    pub partitions: u32,
    pub state: Arc<Mutex<BrokerState>>,
    pub appended: Arc<Notify>,
    pub rec: Recorder,
    pub tick: Duration,
    /// Member hosts (`m1`) whose group heartbeats the coordinator drops
    /// (a `heartbeat-failure` fault; nested faults count): they go
    /// unanswered and renew nothing, while its other requests are served.
    pub heartbeats_dropped: Arc<Mutex<BTreeMap<String, u32>>>,
}

impl BrokerCtx {
    fn trace(&self, text: impl Into<String>) {
        self.rec.trace(global_ms(), &self.name, text);
    }

    /// The broker's host program.
    pub async fn run(self) -> crate::rt::Result {
        // Answers to joins from before a restart can never be delivered.
        self.state.lock().expect("broker lock").group.pending.clear();
        let listener = TcpListener::bind(("0.0.0.0", PORT)).await?;
        if self.coordinator {
            let ctx = self.clone();
            tokio::task::spawn_local(async move {
                loop {
                    tokio::time::sleep(ctx.tick).await;
                    ctx.tick_group();
                }
            });
        }
        loop {
            let (stream, _) = listener.accept().await?;
            let ctx = self.clone();
            tokio::task::spawn_local(async move {
                let _ = ctx.serve(stream).await;
            });
        }
    }

    async fn serve(&self, mut stream: TcpStream) -> std::io::Result<()> {
        loop {
            let req: Request = read_frame(&mut stream).await?;
            let resp = self.handle(req).await;
            write_frame(&mut stream, &resp).await?;
        }
    }

    async fn handle(&self, req: Request) -> Response {
        let now = global_ms();
        let topic = self.state.lock().expect("broker lock").topic;
        match req {
            Request::Metadata if !topic => Response::UnknownTopic,
            Request::Metadata => Response::Metadata { partitions: self.partitions },
            Request::CreateTopic => {
                let mut s = self.state.lock().expect("broker lock");
                if !s.topic {
                    s.topic = true;
                    s.logs = (0..self.partitions).map(|p| (p, Vec::new())).collect();
                    drop(s);
                    self.trace("election topic created");
                }
                Response::Ok
            }
            Request::Produce { .. } | Request::Fetch { .. } if !topic => Response::UnknownTopic,
            Request::Produce { partition, payload, create_time, author } => {
                self.produce(now, partition, payload, create_time, author)
            }
            Request::Fetch { partition, from, max_wait_ms } => self.fetch(partition, from, max_wait_ms).await,
            _ if !self.coordinator => Response::Error(GroupError::NotCoordinator),
            Request::Join {
                member_id,
                client,
                session_ms,
                rebalance_ms,
                cooperative,
                owned,
                owned_generation,
                instance_id,
            } => {
                let rx = {
                    let mut s = self.state.lock().expect("broker lock");
                    s.group.touched = true;
                    let claim = Claim { cooperative, owned, owned_generation, instance_id };
                    match self.join(&mut s.group, now, member_id, client, session_ms, rebalance_ms, claim) {
                        Ok(rx) => rx,
                        Err(e) => return Response::Error(e),
                    }
                };
                // The coordinator answers when the rebalance completes; a
                // dropped sender means a newer join replaced this one.
                rx.await.unwrap_or(Response::Error(GroupError::RebalanceInProgress))
            }
            Request::Heartbeat { member_id, generation } => {
                if self.drops_heartbeats_of(&member_id) {
                    // Unanswered: the client's request times out.
                    return std::future::pending().await;
                }
                self.heartbeat(now, &member_id, generation)
            }
            Request::Commit { member_id, generation } => self.commit(now, &member_id, generation),
            Request::Leave { member_id } => self.leave(now, &member_id),
        }
    }

    /// Whether a `heartbeat-failure` fault is on for the member host that
    /// `member_id` belongs to, also after the coordinator evicted it (a
    /// member whose heartbeats fail hears nothing, not even that). This
    /// coordinator names members `{client}-{n}`, and clients are named
    /// `m<slot>` or `m<slot>.<incarnation>`.
    fn drops_heartbeats_of(&self, member_id: &str) -> bool {
        let host = member_id.split(['.', '-']).next().unwrap_or_default();
        self.heartbeats_dropped.lock().expect("drop lock").get(host).is_some_and(|n| *n > 0)
    }

    fn produce(&self, now: u64, partition: u32, payload: Vec<u8>, create_time: u64, author: String) -> Response {
        if !self.partition_leader {
            return Response::NotLeader;
        }
        let mut s = self.state.lock().expect("broker lock");
        let Some(log) = s.logs.get_mut(&partition) else {
            return Response::NotLeader;
        };
        let offset = log.len() as u64;
        let timestamp = if self.profile.log_append_time { now } else { create_time };
        let heartbeat = neli::core::Heartbeat::decode(&payload).ok().map(|hb| HeartbeatClaim {
            role: hb.role,
            term: hb.term,
            sent_at: hb.sent_at.as_millis(),
            lease: hb.lease.map(|t| t.0),
        });
        log.push(WireRecord { offset, timestamp, payload });
        {
            let mut rec = self.rec.lock();
            let seq = rec.next_seq();
            rec.appends.push(AppendObs { seq, at: now, partition, offset, author, heartbeat });
        }
        self.appended.notify_waiters();
        Response::Produced { offset }
    }

    /// A long poll: records from `from` on, waiting up to `max_wait_ms` for one.
    async fn fetch(&self, partition: u32, from: Option<u64>, max_wait_ms: u64) -> Response {
        if !self.partition_leader {
            return Response::NotLeader;
        }
        let deadline = tokio::time::Instant::now() + Duration::from_millis(max_wait_ms);
        loop {
            let notified = self.appended.notified();
            {
                let s = self.state.lock().expect("broker lock");
                let Some(log) = s.logs.get(&partition) else {
                    return Response::NotLeader;
                };
                let end = log.len() as u64;
                match from {
                    // Out of range (the log was lost): reset to the end.
                    Some(o) if o > end => {
                        return Response::Fetched { records: Vec::new(), next: end };
                    }
                    None => {
                        return Response::Fetched { records: Vec::new(), next: end };
                    }
                    Some(o) if o < end => {
                        let records: Vec<WireRecord> = log[o as usize..].iter().take(64).cloned().collect();
                        let next = o + records.len() as u64;
                        return Response::Fetched { records, next };
                    }
                    Some(_) => {}
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Response::Fetched { records: Vec::new(), next: from.unwrap_or(0) };
            }
        }
    }

    fn heartbeat(&self, now: u64, member_id: &str, generation: u64) -> Response {
        let mut s = self.state.lock().expect("broker lock");
        let g = &mut s.group;
        g.touched = true;
        if g.fenced.contains(member_id) {
            return Response::Error(GroupError::FencedInstanceId);
        }
        let Some(m) = g.members.get_mut(member_id) else {
            return Response::Error(GroupError::UnknownMember);
        };
        if self.profile.heartbeat_generation_first && generation != g.generation {
            return Response::Error(GroupError::IllegalGeneration);
        }
        if let Phase::Preparing { .. } = g.phase {
            m.expires_at = now + m.session_ms;
            return Response::Error(GroupError::RebalanceInProgress);
        }
        if generation != g.generation {
            return Response::Error(GroupError::IllegalGeneration);
        }
        m.expires_at = now + m.session_ms;
        Response::Ok
    }

    fn commit(&self, now: u64, member_id: &str, generation: u64) -> Response {
        let mut s = self.state.lock().expect("broker lock");
        let g = &mut s.group;
        g.touched = true;
        if g.fenced.contains(member_id) {
            return Response::Error(GroupError::FencedInstanceId);
        }
        if self.profile.commit_generation_first && self.generation_check && generation != g.generation {
            self.rec.lock().acted.insert(crate::scenario::Layer::CommitGenerationCheck);
            return Response::Error(GroupError::IllegalGeneration);
        }
        let Some(m) = g.members.get_mut(member_id) else {
            return Response::Error(GroupError::UnknownMember);
        };
        if generation != g.generation {
            // The layer decides this commit, whether it is on or off.
            self.rec.lock().acted.insert(crate::scenario::Layer::CommitGenerationCheck);
        }
        if self.generation_check && generation != g.generation {
            return Response::Error(GroupError::IllegalGeneration);
        }
        match g.phase {
            // librdkafka's mock: JOINING (and SYNCING, folded into the join
            // answer here) refuse a commit of the current generation, and
            // the refusal is no contact.
            Phase::Preparing { .. } if self.profile.commit_rebalance_in_progress => {
                Response::Error(GroupError::RebalanceInProgress)
            }
            // doCommitOffsets: accepted in Stable and PreparingRebalance,
            // rescheduling the session like a heartbeat.
            Phase::Stable | Phase::Preparing { .. } => {
                if self.profile.commit_resets_session {
                    m.expires_at = now + m.session_ms;
                }
                Response::Ok
            }
            Phase::Empty => Response::Error(GroupError::UnknownMember),
        }
    }

    fn leave(&self, now: u64, member_id: &str) -> Response {
        let mut s = self.state.lock().expect("broker lock");
        let g = &mut s.group;
        g.touched = true;
        if g.members.remove(member_id).is_some() {
            g.pending.remove(member_id);
            self.trace(format!("member {member_id} left"));
            if g.phase == Phase::Stable {
                self.start_rebalance_paused(g, now, "member left", self.profile.leave_pause_ms);
            }
        }
        Response::Ok
    }

    #[allow(clippy::too_many_arguments)]
    fn join(
        &self,
        g: &mut Group,
        now: u64,
        member_id: Option<String>,
        client: String,
        session_ms: u64,
        rebalance_ms: u64,
        claim: Claim,
    ) -> Result<oneshot::Receiver<Response>, GroupError> {
        if let Some(rx) = self.replace_static(g, now, &member_id, &client, session_ms, rebalance_ms, &claim) {
            return Ok(rx);
        }
        let member_id = match (&claim.instance_id, member_id) {
            // Mid-rebalance the replacement joins the rebalance under the id
            // it took over (`replace_static`).
            (Some(instance), None) => {
                g.members.iter().find(|(_, m)| m.instance_id.as_ref() == Some(instance)).map(|(id, _)| id.clone())
            }
            (_, id) => id,
        };
        let id = match member_id {
            Some(id) if g.members.contains_key(&id) => id,
            // librdkafka's mock adds an unknown member id as a new member
            // (`rd_kafka_mock_cgrp_classic_member_add`); Kafka and tansu
            // answer UNKNOWN_MEMBER_ID (docs/background.md, "librdkafka's
            // rejoin paths").
            Some(id) if self.profile.join_adopts_unknown_id => id,
            Some(_) => return Err(GroupError::UnknownMember),
            // Kafka (KIP-394) answers every JoinGroup without a member id
            // MEMBER_ID_REQUIRED with an id to join with. Answered here only
            // where librdkafka does something with it other than join again
            // at once (a cooperative member that still owns partitions
            // reports them lost), so that other joins keep their timing.
            None if self.profile.member_id_required && claim.cooperative && !claim.owned.is_empty() => {
                return Err(GroupError::MemberIdRequired);
            }
            None => {
                g.next_id += 1;
                format!("{client}-{}", g.next_id)
            }
        };
        if !g.members.contains_key(&id) {
            if let Some(initial) = &mut g.initial {
                initial.joined = true;
            }
            let member = GroupMember {
                client,
                session_ms,
                rebalance_ms,
                expires_at: now + session_ms,
                assignment: Vec::new(),
                cooperative: claim.cooperative,
                owned: Vec::new(),
                owned_generation: 0,
                instance_id: claim.instance_id.clone(),
            };
            g.members.insert(id.clone(), member);
        }
        if let Some(m) = g.members.get_mut(&id) {
            m.cooperative = claim.cooperative;
            m.owned = claim.owned;
            m.owned_generation = claim.owned_generation;
        }
        let (tx, rx) = oneshot::channel();
        g.pending.insert(id, tx);
        if !matches!(g.phase, Phase::Preparing { .. }) {
            self.start_rebalance(g, now, "member joined");
        }
        Ok(rx)
    }

    /// KIP-345: a join with the instance id of another member id replaces
    /// that member: a new member id takes over its entry, and the old one
    /// is answered FENCED_INSTANCE_ID from now on. In a stable group the
    /// newcomer gets the old member's assignment in the current generation
    /// at once, without a rebalance (Kafka: "static member which joins
    /// during Stable stage ... will not trigger a rebalance"); `None` there,
    /// and mid-rebalance, after the swap, the join goes on as a rejoin.
    #[allow(clippy::too_many_arguments)]
    fn replace_static(
        &self,
        g: &mut Group,
        now: u64,
        member_id: &Option<String>,
        client: &str,
        session_ms: u64,
        rebalance_ms: u64,
        claim: &Claim,
    ) -> Option<oneshot::Receiver<Response>> {
        let instance = claim.instance_id.as_ref()?;
        let old = g.members.iter().find(|(_, m)| m.instance_id.as_ref() == Some(instance)).map(|(id, _)| id.clone())?;
        if member_id.as_ref() == Some(&old) {
            return None;
        }
        let mut m = g.members.remove(&old)?;
        g.pending.remove(&old);
        g.fenced.insert(old.clone());
        self.rec.lock().removals.push((now, m.client.clone()));
        g.next_id += 1;
        let id = format!("{client}-{}", g.next_id);
        (m.client, m.session_ms, m.rebalance_ms, m.expires_at) =
            (client.to_owned(), session_ms, rebalance_ms, now + session_ms);
        self.trace(format!("static member {instance}: {id} replaces {old}"));
        if g.phase != Phase::Stable {
            g.members.insert(id, m);
            return None;
        }
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(Response::Joined {
            member_id: id.clone(),
            generation: g.generation,
            assignment: m.assignment.clone(),
        });
        g.members.insert(id, m);
        Some(rx)
    }

    fn start_rebalance(&self, g: &mut Group, now: u64, why: &str) {
        self.start_rebalance_paused(g, now, why, self.profile.rebalance_pause_ms);
    }

    fn start_rebalance_paused(&self, g: &mut Group, now: u64, why: &str, pause_ms: u64) {
        let delay = if g.phase == Phase::Empty { self.profile.initial_delay_ms } else { 0 };
        let rebalance = g.members.values().map(|m| m.rebalance_ms).max().unwrap_or(0);
        let session = g.members.values().map(|m| m.session_ms).max().unwrap_or(0);
        let pause_ms = if self.profile.rebalance_waits_session && g.phase != Phase::Empty {
            if session > 1000 { session - 1000 } else { session }
        } else {
            pause_ms
        };
        if g.phase == Phase::Empty && self.profile.initial_delay_extends {
            g.initial =
                Some(InitialDelay { window_ms: delay, remaining_ms: rebalance.saturating_sub(delay), joined: false });
        }
        g.phase = Phase::Preparing { ready_at: now + delay + pause_ms, deadline: now + rebalance };
        self.trace(format!("rebalance ({why}) after generation {}", g.generation));
    }

    fn tick_group(&self) {
        let now = global_ms();
        let mut s = self.state.lock().expect("broker lock");
        let g = &mut s.group;
        let check_due = if self.profile.expiry_on_request {
            std::mem::take(&mut g.touched)
        } else {
            self.profile.expiry_check_ms == 0 || now >= g.last_check + self.profile.expiry_check_ms
        };
        if check_due {
            self.expire_sessions(g, now);
        }
        let Phase::Preparing { ready_at, deadline } = g.phase else {
            return;
        };
        if now >= ready_at
            && let Some(initial) = &mut g.initial
            && initial.joined
            && initial.remaining_ms > 0
        {
            let window = self.profile.initial_delay_ms.min(initial.remaining_ms);
            initial.remaining_ms = initial.remaining_ms.saturating_sub(initial.window_ms);
            initial.window_ms = window;
            initial.joined = false;
            g.phase = Phase::Preparing { ready_at: now + window, deadline };
            self.trace(format!("initial rebalance delay extended by {window}ms (a member joined)"));
            return;
        }
        let all_joined = g.members.keys().all(|id| g.pending.contains_key(id));
        if now < ready_at || !(all_joined || now >= deadline) {
            return;
        }
        self.complete_rebalance(g, now);
    }

    /// Evicts the members whose session ran out (not those waiting in a
    /// join), and starts a rebalance if the group was stable.
    fn expire_sessions(&self, g: &mut Group, now: u64) {
        g.last_check = now;
        let expired: Vec<String> = g
            .members
            .iter()
            .filter(|(id, m)| m.expires_at <= now && !g.pending.contains_key(*id))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            if let Some(m) = g.members.remove(id) {
                self.rec.lock().removals.push((now, m.client));
            }
            self.trace(format!("member {id} evicted (session timeout)"));
        }
        if !expired.is_empty() && g.phase == Phase::Stable {
            self.start_rebalance(g, now, "session timeout");
        }
    }

    /// Every member joined (or the rebalance timeout passed): removes the
    /// late ones, bumps the generation and answers each waiting join with
    /// its assignment (sticky when every member is cooperative).
    fn complete_rebalance(&self, g: &mut Group, now: u64) {
        let late: Vec<String> = g.members.keys().filter(|id| !g.pending.contains_key(*id)).cloned().collect();
        for id in &late {
            if let Some(m) = g.members.remove(id) {
                self.rec.lock().removals.push((now, m.client));
            }
            self.trace(format!("member {id} removed (rebalance timeout)"));
        }
        g.initial = None;
        if g.members.is_empty() {
            if self.profile.empty_bumps_generation {
                g.generation += 1;
            }
            g.phase = Phase::Empty;
            return;
        }
        g.generation += 1;
        let ids: Vec<String> = g.members.keys().cloned().collect();
        let cooperative = g.members.values().all(|m| m.cooperative);
        let sticky = cooperative.then(|| sticky_assignment(&g.members, self.partitions, self.revoked_barrier));
        for m in g.members.values_mut() {
            m.assignment.clear();
            m.expires_at = now + m.session_ms;
        }
        match sticky {
            Some(sticky) => {
                for (id, ps) in sticky {
                    g.members.get_mut(&id).expect("listed member").assignment = ps;
                }
            }
            None => {
                for p in 0..self.partitions {
                    let id = &ids[p as usize % ids.len()];
                    g.members.get_mut(id).expect("listed member").assignment.push(p);
                }
            }
        }
        let mut summary = Vec::new();
        let mut rec = self.rec.lock();
        for (id, m) in &g.members {
            summary.push(format!("{}={:?}", m.client, m.assignment));
            rec.dealt.push((now, m.client.clone()));
            if let Some(tx) = g.pending.remove(id) {
                let _ = tx.send(Response::Joined {
                    member_id: id.clone(),
                    generation: g.generation,
                    assignment: m.assignment.clone(),
                });
            }
        }
        drop(rec);
        self.rec.moment();
        g.phase = Phase::Stable;
        self.trace(format!("generation {} assigned {}", g.generation, summary.join(" ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(owned: &[u32], owned_generation: u64) -> GroupMember {
        GroupMember {
            client: String::new(),
            session_ms: 3000,
            rebalance_ms: 10_000,
            expires_at: 0,
            assignment: Vec::new(),
            cooperative: true,
            owned: owned.to_vec(),
            owned_generation,
            instance_id: None,
        }
    }

    fn deal(members: &[(&str, &[u32], u64)], partitions: u32) -> BTreeMap<String, Vec<u32>> {
        let m = members.iter().map(|(id, owned, g)| ((*id).to_owned(), member(owned, *g))).collect();
        sticky_assignment(&m, partitions, true)
    }

    fn of(d: &BTreeMap<String, Vec<u32>>, id: &str) -> Vec<u32> {
        d[id].clone()
    }

    #[test]
    fn the_owner_keeps_partition_0_and_a_newcomer_gets_nothing() {
        let d = deal(&[("a-1", &[], 0), ("m9-1", &[0], 4)], 1);
        assert_eq!(of(&d, "m9-1"), vec![0], "sticky, although a-1 sorts first");
        assert_eq!(of(&d, "a-1"), Vec::<u32>::new());
    }

    #[test]
    fn the_newest_claim_wins_and_equal_claims_cancel() {
        let d = deal(&[("a-1", &[0], 3), ("b-1", &[0], 5)], 1);
        assert_eq!((of(&d, "a-1"), of(&d, "b-1")), (vec![], vec![0]), "a stale claimant loses to the newer one");
        let d = deal(&[("a-1", &[0], 5), ("b-1", &[0], 5)], 1);
        assert_eq!((of(&d, "a-1"), of(&d, "b-1")), (vec![0], vec![]), "both lose the claim; dealt afresh");
    }

    #[test]
    fn a_partition_that_must_move_is_withheld_for_one_generation() {
        let d = deal(&[("a-1", &[0, 1, 2, 3], 2), ("b-1", &[], 0)], 4);
        let (a, b) = (of(&d, "a-1"), of(&d, "b-1"));
        assert_eq!(a.len(), 2, "balanced to 2 + 2: {a:?}");
        assert!(b.is_empty(), "nothing that a still owns goes straight to b: {b:?}");
        // Next generation: a no longer claims what it revoked, so b gets it.
        let d = deal(&[("a-1", &a, 3), ("b-1", &[], 0)], 4);
        assert_eq!(of(&d, "b-1").len(), 2);
        assert_eq!(of(&d, "a-1"), a, "a keeps what it kept");
    }

    #[test]
    fn without_the_revoked_barrier_a_moving_partition_goes_to_its_new_owner_at_once() {
        let m = [("a-1", &[0u32, 1, 2, 3][..], 2u64), ("b-1", &[][..], 0)]
            .iter()
            .map(|(id, owned, g)| ((*id).to_owned(), member(owned, *g)))
            .collect();
        let d = sticky_assignment(&m, 4, false);
        let (a, b) = (of(&d, "a-1"), of(&d, "b-1"));
        assert_eq!((a.len(), b.len()), (2, 2), "balanced at once: {d:?}");
        assert!(b.iter().all(|p| !a.contains(p)), "each partition has one owner in the deal: {d:?}");
    }
}
