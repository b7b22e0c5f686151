//! An in-memory broker for tests of code that drives [`crate::Neli`]: one
//! [`FakeCluster`] (group coordinator + election topic) shared by any number
//! of [`FakeBroker`]s, with knobs to evict members, inject foreign records,
//! fail calls, hang `close`, lose the log and end the election. Its
//! [`FakeReader`]s read the topic as an [`crate::observer::Observer`] does,
//! without joining the group.
//!
//! Deliberately simple: rebalances are instantaneous and eager, partition
//! `p` goes to the `p mod n`-th member in name order. Sessions never expire
//! unless [`FakeCluster::session_timeout`] asks for it. A [`FakeBroker`]
//! dropped while in the group leaves it, as librdkafka's consumer does when
//! destroyed. The simulator (`neli-sim`) models Kafka's timing faithfully;
//! this is for unit tests.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;

use crate::broker::{Broker, BrokerError, BrokerEvent, Membership};
use crate::clock::Clock;
use crate::core::Record;
use crate::observer::{ReaderEvent, TopicReader};

#[derive(Default)]
struct FakeMember {
    joined: bool,
    generation: u64,
    assigned: Vec<u32>,
    queue: VecDeque<BrokerEvent>,
    fail_next: VecDeque<BrokerError>,
    hang_close: bool,
    /// Answers for the next membership proofs, whatever the group says.
    answers: VecDeque<Membership>,
    notify: Arc<Notify>,
    /// When the member last made a broker call (with a session timeout).
    last_seen: Option<tokio::time::Instant>,
}

/// One [`FakeReader`]'s pending events.
#[derive(Default)]
struct ReaderSlot {
    queue: VecDeque<ReaderEvent>,
    notify: Arc<Notify>,
}

impl ReaderSlot {
    fn push(&mut self, event: ReaderEvent) {
        self.queue.push_back(event);
        self.notify.notify_one();
    }
}

struct ClusterState {
    partitions: u32,
    generation: u64,
    session_timeout: Option<Duration>,
    members: BTreeMap<String, FakeMember>,
    logs: Vec<Vec<Vec<u8>>>,
    calls: Vec<String>,
    readers: BTreeMap<u64, ReaderSlot>,
    next_reader: u64,
}

/// The shared in-memory cluster. Clones share state.
#[derive(Clone)]
pub struct FakeCluster {
    state: Arc<Mutex<ClusterState>>,
}

impl FakeCluster {
    /// A cluster whose election topic has `partitions` partitions.
    pub fn new(partitions: u32) -> FakeCluster {
        let state = ClusterState {
            partitions,
            generation: 0,
            session_timeout: None,
            members: BTreeMap::new(),
            logs: vec![Vec::new(); partitions as usize],
            calls: Vec::new(),
            readers: BTreeMap::new(),
            next_reader: 0,
        };
        FakeCluster { state: Arc::new(Mutex::new(state)) }
    }

    /// Expires the session of a joined member that made no broker call
    /// (a poll included) for `timeout`, as a group coordinator does: it is
    /// evicted as by [`FakeCluster::evict`]. Time is tokio's (paused in
    /// tests, so the expiry is exact), and the check runs at every broker
    /// call of any member. Off by default: a member that stops calling
    /// keeps its partitions forever.
    pub fn session_timeout(self, timeout: Duration) -> FakeCluster {
        self.lock().session_timeout = Some(timeout);
        self
    }

    /// A broker connection for member `name`, waiting on `clock`.
    pub fn broker<C: Clock>(&self, name: &str, clock: C) -> FakeBroker<C> {
        self.lock().members.entry(name.to_owned()).or_default();
        FakeBroker { cluster: self.clone(), name: name.to_owned(), clock }
    }

    /// The group coordinator drops `name` (session timeout): it gets a lost
    /// revocation and stays out until it subscribes again.
    pub fn evict(&self, name: &str) {
        self.lock().evict(name);
    }

    /// A foreign writer appends `payload` to `partition`.
    pub fn write(&self, partition: u32, payload: Vec<u8>) {
        self.lock().append(partition, payload);
    }

    /// The next broker call of `name` fails with `error`.
    pub fn fail_next(&self, name: &str, error: BrokerError) {
        let mut s = self.lock();
        let m = s.members.entry(name.to_owned()).or_default();
        m.fail_next.push_back(error);
        m.notify.notify_one();
    }

    /// The next membership proof of `name` is answered `answer`, whatever
    /// the group's state says (queued: one answer per call). For the paths
    /// a real coordinator takes: [`Membership::Undetermined`] while a
    /// rebalance is in progress (`REBALANCE_IN_PROGRESS`),
    /// [`Membership::Rejected`] once it fenced the member's generation
    /// (`ILLEGAL_GENERATION`) before the member heard of it.
    ///
    /// ```
    /// use neli::Membership;
    /// let cluster = neli::testing::FakeCluster::new(1);
    /// cluster.answer_next("a", Membership::Undetermined);
    /// cluster.answer_next("a", Membership::Rejected);
    /// ```
    pub fn answer_next(&self, name: &str, answer: Membership) {
        self.lock().members.entry(name.to_owned()).or_default().answers.push_back(answer);
    }

    /// `close` of `name` never returns (a hung client).
    pub fn hang_close(&self, name: &str) {
        self.lock().members.entry(name.to_owned()).or_default().hang_close = true;
    }

    /// Deletes the election: every member and every reader observes
    /// `ElectionEnded`.
    pub fn end_election(&self) {
        let mut s = self.lock();
        for m in s.members.values_mut() {
            m.queue.push_back(BrokerEvent::ElectionEnded);
            m.notify.notify_one();
        }
        for r in s.readers.values_mut() {
            r.push(ReaderEvent::ElectionEnded);
        }
    }

    /// The broker loses the election log and it is recreated empty (a
    /// restart without its data): offsets, and so fencing tokens, start
    /// again from 0. Every member is told `LogLost` (as a member's topic
    /// watcher would: neli::log_watch), every reader `LogLost` and then
    /// `Reading` the new log. Assignments stay as they were.
    pub fn lose_log(&self) {
        let mut s = self.lock();
        for log in s.logs.iter_mut() {
            log.clear();
        }
        for m in s.members.values_mut() {
            m.queue.push_back(BrokerEvent::LogLost);
            m.notify.notify_one();
        }
        let partitions = s.partitions;
        for r in s.readers.values_mut() {
            r.push(ReaderEvent::LogLost);
            r.push(ReaderEvent::Reading { partitions });
        }
        s.calls.push("lose_log".into());
    }

    /// A reader of the election topic that joins no group (what an
    /// [`crate::observer::Observer`] reads through), waiting on `clock`. It
    /// reads every partition from the current end: its first event is
    /// [`ReaderEvent::Reading`], then every record appended from now on.
    ///
    /// ```
    /// use neli::observer::{ReaderEvent, TopicReader};
    /// use neli::{SystemClock, testing::FakeCluster};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let cluster = FakeCluster::new(2);
    /// cluster.write(0, b"before".to_vec()); // not read: the reader starts at the end
    /// let mut reader = cluster.reader(SystemClock::new());
    /// cluster.write(1, b"after".to_vec());
    /// let events = reader.poll(std::time::Duration::from_millis(10)).await.unwrap();
    /// assert_eq!(events[0], ReaderEvent::Reading { partitions: 2 });
    /// assert!(matches!(&events[1], ReaderEvent::Record(r) if r.partition == 1 && r.payload == b"after"));
    /// # }
    /// ```
    pub fn reader<C: Clock>(&self, clock: C) -> FakeReader<C> {
        let mut s = self.lock();
        let id = s.next_reader;
        s.next_reader += 1;
        let mut slot = ReaderSlot::default();
        slot.push(ReaderEvent::Reading { partitions: s.partitions });
        s.readers.insert(id, slot);
        s.calls.push(format!("reader {id} started"));
        FakeReader { cluster: self.clone(), id, clock }
    }

    /// Which member holds `partition` now.
    pub fn owner(&self, partition: u32) -> Option<String> {
        let s = self.lock();
        s.members.iter().find(|(_, m)| m.assigned.contains(&partition)).map(|(n, _)| n.clone())
    }

    /// Every broker call so far, as `"<member> <call>"` lines.
    pub fn calls(&self) -> Vec<String> {
        self.lock().calls.clone()
    }

    /// Payloads written to `partition`, in offset order.
    pub fn log(&self, partition: u32) -> Vec<Vec<u8>> {
        self.lock().logs.get(partition as usize).cloned().unwrap_or_default()
    }

    fn lock(&self) -> MutexGuard<'_, ClusterState> {
        self.state.lock().expect("fake cluster lock")
    }
}

impl ClusterState {
    fn evict(&mut self, name: &str) {
        if let Some(m) = self.members.get_mut(name) {
            m.joined = false;
            let lost = std::mem::take(&mut m.assigned);
            if !lost.is_empty() {
                m.queue.push_back(BrokerEvent::Lost { partitions: lost });
            }
            m.notify.notify_one();
        }
        self.calls.push(format!("evict {name}"));
        self.rebalance();
    }

    /// `name` made a broker call: with a session timeout, its session
    /// starts over, and every joined member silent for longer is evicted.
    fn seen(&mut self, name: &str) {
        let Some(timeout) = self.session_timeout else { return };
        let now = tokio::time::Instant::now();
        if let Some(m) = self.members.get_mut(name) {
            m.last_seen = Some(now);
        }
        let expired: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| m.joined && m.last_seen.is_some_and(|at| now.duration_since(at) >= timeout))
            .map(|(n, _)| n.clone())
            .collect();
        for name in expired {
            self.evict(&name);
        }
    }

    fn rebalance(&mut self) {
        self.generation += 1;
        let generation = self.generation;
        let names: Vec<String> = self.members.iter().filter(|(_, m)| m.joined).map(|(n, _)| n.clone()).collect();
        for m in self.members.values_mut().filter(|m| m.joined) {
            let old = std::mem::take(&mut m.assigned);
            if !old.is_empty() {
                m.queue.push_back(BrokerEvent::Revoked { partitions: old });
            }
        }
        for (i, name) in names.iter().enumerate() {
            let partitions: Vec<u32> = (0..self.partitions).filter(|p| *p as usize % names.len() == i).collect();
            let m = self.members.get_mut(name).expect("joined member exists");
            m.generation = generation;
            m.assigned = partitions.clone();
            m.queue.push_back(BrokerEvent::Assigned { generation, partitions });
            m.notify.notify_one();
        }
    }

    fn append(&mut self, partition: u32, payload: Vec<u8>) {
        let Some(log) = self.logs.get_mut(partition as usize) else { return };
        let offset = log.len() as u64;
        log.push(payload.clone());
        for r in self.readers.values_mut() {
            r.push(ReaderEvent::Record(Record { partition, offset, timestamp: None, payload: payload.clone() }));
        }
        for m in self.members.values_mut().filter(|m| m.assigned.contains(&partition)) {
            let record = Record { partition, offset, timestamp: None, payload: payload.clone() };
            m.queue.push_back(BrokerEvent::Record(record));
            m.notify.notify_one();
        }
    }
}

/// One member's connection to a [`FakeCluster`].
pub struct FakeBroker<C: Clock> {
    cluster: FakeCluster,
    name: String,
    clock: C,
}

impl<C: Clock> FakeBroker<C> {
    fn enter(&self, call: &str) -> Result<MutexGuard<'_, ClusterState>, BrokerError> {
        let mut s = self.cluster.lock();
        s.seen(&self.name);
        s.calls.push(format!("{} {call}", self.name));
        let m = s.members.get_mut(&self.name).expect("member registered by FakeCluster::broker");
        match m.fail_next.pop_front() {
            Some(e) => Err(e),
            None => Ok(s),
        }
    }

    fn member<'a>(&self, s: &'a mut ClusterState) -> &'a mut FakeMember {
        s.members.get_mut(&self.name).expect("member registered by FakeCluster::broker")
    }
}

impl<C: Clock> Broker for FakeBroker<C> {
    async fn subscribe(&mut self) -> Result<(), BrokerError> {
        let mut s = self.enter("subscribe")?;
        self.member(&mut s).joined = true;
        s.rebalance();
        Ok(())
    }

    async fn poll(&mut self, timeout: Duration) -> Result<Vec<BrokerEvent>, BrokerError> {
        let notify = {
            let mut s = self.cluster.lock();
            s.seen(&self.name);
            let m = self.member(&mut s);
            if let Some(e) = m.fail_next.pop_front() {
                return Err(e);
            }
            if !m.queue.is_empty() {
                return Ok(m.queue.drain(..).collect());
            }
            m.notify.clone()
        };
        tokio::select! {
            _ = notify.notified() => {}
            _ = self.clock.sleep(timeout) => {}
        }
        let mut s = self.cluster.lock();
        s.seen(&self.name);
        Ok(self.member(&mut s).queue.drain(..).collect())
    }

    async fn produce(&mut self, partition: u32, payload: Vec<u8>) -> Result<(), BrokerError> {
        let mut s = self.enter(&format!("produce {partition}"))?;
        s.append(partition, payload);
        Ok(())
    }

    async fn confirm_membership(&mut self, generation: u64) -> Result<Membership, BrokerError> {
        let mut s = self.enter(&format!("confirm {generation}"))?;
        let m = self.member(&mut s);
        if let Some(answer) = m.answers.pop_front() {
            return Ok(answer);
        }
        Ok(if m.joined && m.generation == generation { Membership::Confirmed } else { Membership::Rejected })
    }

    async fn ack_revoked(&mut self, partitions: &[u32]) -> Result<(), BrokerError> {
        drop(self.enter(&format!("ack_revoked {partitions:?}"))?);
        Ok(())
    }

    async fn leave(&mut self) -> Result<(), BrokerError> {
        let mut s = self.enter("leave")?;
        let m = self.member(&mut s);
        m.joined = false;
        m.assigned.clear();
        s.rebalance();
        Ok(())
    }

    async fn partition_count(&mut self) -> Result<u32, BrokerError> {
        Ok(self.enter("partition_count")?.partitions)
    }

    async fn close(&mut self) -> Result<(), BrokerError> {
        let hang = {
            let mut s = self.enter("close")?;
            let m = self.member(&mut s);
            let hang = m.hang_close;
            if !hang {
                m.joined = false;
                m.assigned.clear();
                s.rebalance();
            }
            hang
        };
        if hang {
            std::future::pending::<()>().await;
        }
        Ok(())
    }
}

impl<C: Clock> Drop for FakeBroker<C> {
    /// A connection dropped while in the group leaves it (librdkafka's
    /// consumer sends LeaveGroup when destroyed), unless its `close` hangs.
    fn drop(&mut self) {
        let Ok(mut s) = self.cluster.state.lock() else { return };
        let Some(m) = s.members.get_mut(&self.name) else { return };
        if !m.joined || m.hang_close {
            return;
        }
        m.joined = false;
        m.assigned.clear();
        s.calls.push(format!("{} dropped", self.name));
        s.rebalance();
    }
}

/// A reader of a [`FakeCluster`]'s election topic that joins no group:
/// made by [`FakeCluster::reader`], read by an
/// [`crate::observer::Observer`]. Dropping or closing it stops its reading.
pub struct FakeReader<C: Clock> {
    cluster: FakeCluster,
    id: u64,
    clock: C,
}

impl<C: Clock> FakeReader<C> {
    fn drain(&self) -> Vec<ReaderEvent> {
        let mut s = self.cluster.lock();
        s.readers.get_mut(&self.id).map(|r| r.queue.drain(..).collect()).unwrap_or_default()
    }
}

impl<C: Clock> TopicReader for FakeReader<C> {
    async fn poll(&mut self, timeout: Duration) -> Result<Vec<ReaderEvent>, BrokerError> {
        let notify = {
            let mut s = self.cluster.lock();
            let Some(slot) = s.readers.get_mut(&self.id) else {
                return Err(BrokerError::fatal("the fake reader is closed"));
            };
            if !slot.queue.is_empty() {
                return Ok(slot.queue.drain(..).collect());
            }
            slot.notify.clone()
        };
        tokio::select! {
            _ = notify.notified() => {}
            _ = self.clock.sleep(timeout) => {}
        }
        Ok(self.drain())
    }

    async fn close(&mut self) {
        let mut s = self.cluster.lock();
        if s.readers.remove(&self.id).is_some() {
            s.calls.push(format!("reader {} closed", self.id));
        }
    }
}

impl<C: Clock> Drop for FakeReader<C> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.cluster.state.lock() {
            s.readers.remove(&self.id);
        }
    }
}
