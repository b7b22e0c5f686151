#![cfg(feature = "kafka")]
//! A member sends its group heartbeats at the interval it asked for
//! (neli/KAFKA.md, "Group heartbeats at the interval set"): librdkafka sends
//! one only when its main thread wakes, which an idle consumer does once a
//! second, so without the poll thread's wake-ups a 600 ms interval became one
//! heartbeat a second, and every handover waited up to a second longer for
//! the survivors to hear of it.
//!
//! Its own test binary: librdkafka logs from its own threads, so only a
//! process-wide subscriber sees the heartbeat lines.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use neli::Config;
use neli::kafka::mock::MockKafka;

#[path = "it/log_lines.rs"]
mod log_lines;
use log_lines::Lines;

fn heartbeats(lines: &Lines) -> usize {
    lines.text().matches("Heartbeat for group").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_heartbeats_its_group_at_the_interval_it_set() {
    let lines = Lines::default();
    let writer = lines.clone();
    tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .init();
    let mock = MockKafka::start(1).expect("mock cluster");
    let group = format!("hb-{}", std::process::id());
    let topic = format!("{group}.neli");
    mock.create_topic(&topic, 1).expect("topic");
    // Another consumer holds the only partition, and cooperative-sticky
    // leaves it there: the member is an idle follower, whose librdkafka has
    // no fetches to wake it (a leader's fetches wake it more often).
    let holder = hold_the_partition(&mock.bootstrap_servers(), &group, &topic);
    // S = 6 s gives heartbeats every S/10 = 600 ms (neli::rules::group_heartbeat_interval),
    // an interval librdkafka's idle pace (one a second) is told apart from.
    let config = Config::builder()
        .bootstrap_servers(mock.bootstrap_servers())
        .group(&group)
        .heartbeat_timeout(Duration::from_secs(1))
        .session_timeout(Duration::from_secs(6))
        .kafka("debug", "cgrp")
        .build()
        .expect("config");
    let interval = config.resolve().expect("resolves").group_heartbeat_interval();
    assert_eq!(interval, Duration::from_millis(600));
    let bg = neli::kafka::connect(&config).await.expect("connect to the mock").background();

    // The first heartbeat follows the member's first join (the mock holds
    // a forming group 3 s, then S - 1 s).
    let joined = Instant::now() + Duration::from_secs(30);
    while heartbeats(&lines) == 0 && Instant::now() < joined {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(heartbeats(&lines) > 0, "no group heartbeat within 30 s of connecting");
    // Ten intervals: ten heartbeats at the interval asked for, at most
    // seven (one a second, plus one at the window's edges) at librdkafka's
    // idle pace. Eight tells them apart; a busy machine delays each
    // heartbeat by its scheduling delay, not by a second.
    let window = interval * 10;
    let before = heartbeats(&lines);
    tokio::time::sleep(window).await;
    let sent = heartbeats(&lines) - before;
    eprintln!("{sent} group heartbeats in {window:?}");
    assert!(
        sent >= 8,
        "{sent} group heartbeats in {window:?} at an interval of {interval:?}: the member does not heartbeat at the \
         interval it set (expected 10; librdkafka's idle pace gives at most 7)"
    );
    assert!(matches!(bg.close().await, Ok(neli::Outcome::Closed)));
    holder.store(true, Ordering::SeqCst);
}

/// A plain consumer of `topic` in `group`, polled on its own thread until
/// the returned flag is set; returns once it holds the partition.
fn hold_the_partition(bootstrap: &str, group: &str, topic: &str) -> Arc<AtomicBool> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("partition.assignment.strategy", "cooperative-sticky")
        // The mock holds a rebalance S - 1 s, S the longest session in the group.
        .set("session.timeout.ms", "3000")
        .set("heartbeat.interval.ms", "1000")
        .set("log_level", "3")
        .create()
        .expect("holder consumer");
    consumer.subscribe(&[topic]).expect("subscribe");
    let (stop, holds) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (done, held) = (stop.clone(), holds.clone());
    std::thread::spawn(move || {
        while !done.load(Ordering::SeqCst) {
            let _ = consumer.poll(Duration::from_millis(20));
            held.store(consumer.assignment().is_ok_and(|a| a.count() > 0), Ordering::SeqCst);
        }
    });
    let limit = Instant::now() + Duration::from_secs(30);
    while !holds.load(Ordering::SeqCst) && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(holds.load(Ordering::SeqCst), "the holder was not dealt the partition within 30 s");
    stop
}
