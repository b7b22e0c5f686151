//! The client's background work, as librdkafka's threads do it: group
//! membership (join, sync, heartbeats, the max-poll check), record fetching
//! into the prefetch buffer, the topic watcher, and produce delivery. Each
//! runs whatever the application does; pauses hold them through the host's
//! gate.

use std::time::Duration;

use neli::BrokerEvent;
use tokio::sync::Notify;

use super::*;
use crate::clock::{Gate, global_ms};
use crate::proto::{Conn, GroupError, Request, Response};

async fn wait(notify: &Notify, gate: &Gate, ms: u64) {
    let _ = tokio::time::timeout(Duration::from_millis(ms), notify.notified()).await;
    gate.pass().await;
}

/// librdkafka's group thread: joins, heartbeats and notices a rebalance or
/// the end of its session whatever the application does, one round per
/// turn of the loop.
pub(super) async fn group_task(sh: Arc<Shared>) {
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

pub(super) async fn fetch_task(sh: Arc<Shared>) {
    let mut conn = Conn::new(&sh.cfg.partition_leader, sh.gate.clone());
    loop {
        sh.gate.pass().await;
        let (epoch, work) = {
            let st = sh.lock();
            if st.phase == Phase::Closed {
                return;
            }
            let started = st.positions.iter().filter(|(p, _)| !st.unstarted.contains(p));
            (st.fetch_epoch, started.map(|(p, o)| (*p, *o)).collect::<Vec<_>>())
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
pub(super) async fn topic_task(sh: Arc<Shared>) {
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

pub(super) async fn produce_task(sh: Arc<Shared>) {
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
