//! The PostgreSQL fenced-write adapter (`neli::downstream::postgres`)
//! against a real server each test starts (pg_server.rs): the fencing
//! rule's answers, two writers, log epochs, many concurrent writers, and a
//! writer that dies mid-transaction. [`Memory`] is the oracle where the
//! answers are sequential.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use neli::downstream::postgres::{PostgresFence, tokio_postgres};
use neli::downstream::{Downstream, Memory, Row, Written};
use neli::{Stamp, Token};

use crate::pg_server::PgServer;
use crate::support;

fn s(log_epoch: u64, token: u64) -> Stamp {
    Stamp { log_epoch, token: Token(token) }
}

fn row(key: &str, value: &str, stamp: Stamp) -> Row {
    Row { key: key.to_owned(), value: value.as_bytes().to_vec(), stamp }
}

/// Runs `test` with a fresh server's connection string, one such test at a
/// time (the suite's timings on 2 cores), and stops the server after it,
/// passed or failed.
fn on_server<Fut: Future<Output = ()>>(what: &str, test: impl FnOnce(String) -> Fut) {
    let _serial = support::serial();
    let started = Instant::now();
    let Some(server) = PgServer::start_or_skip(what) else { return };
    let up = started.elapsed();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let t = Instant::now();
    rt.block_on(test(server.conninfo()));
    eprintln!("{what}: server up in {} ms, test {} ms", up.as_millis(), t.elapsed().as_millis());
}

async fn connect(conninfo: &str, range: &str) -> PostgresFence {
    PostgresFence::connect(conninfo, range).await.unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_stale_stamp_is_refused_and_the_newer_value_stays() {
    on_server("postgres fence: a stale stamp", |url| async move {
        let db = connect(&url, "stale").await;
        assert_eq!(db.highest().await, Ok(None));
        assert_eq!(db.write("a", b"new", s(0, 5)).await, Ok(Written::Accepted));
        assert_eq!(db.write("a", b"old", s(0, 3)).await, Ok(Written::Refused { highest: s(0, 5) }));
        assert_eq!(db.write("b", b"old", s(0, 3)).await, Ok(Written::Refused { highest: s(0, 5) }));
        assert_eq!(db.write("a", b"again", s(0, 5)).await, Ok(Written::Accepted), "a term writes again");
        assert_eq!(db.rows().await, Ok(vec![row("a", "again", s(0, 5))]));
        assert_eq!((db.highest().await, db.count().await), (Ok(Some(s(0, 5))), Ok(1)));
        let other = connect(&url, "another range").await;
        assert_eq!(other.write("a", b"own fence", s(0, 1)).await, Ok(Written::Accepted), "ranges fence apart");
        assert_eq!(db.rows().await, Ok(vec![row("a", "again", s(0, 5))]));
    });
}

#[test]
fn two_writers_with_interleaved_stamps_are_answered_by_the_fencing_rule() {
    on_server("postgres fence: two writers", |url| async move {
        let (a, b) = (connect(&url, "report").await, connect(&url, "report").await);
        let oracle = Memory::new();
        let refused = |token| Written::Refused { highest: s(0, token) };
        let steps = [
            (&a, "a", 3, Written::Accepted),
            (&b, "b", 5, Written::Accepted),
            (&a, "a", 4, refused(5)),
            (&b, "b", 6, Written::Accepted),
            (&a, "a", 5, refused(6)),
        ];
        for (db, who, token, want) in steps {
            let value = format!("{who}@{token}");
            // The shared key, then the writer's own.
            for key in ["shared", who] {
                let got = db.write(key, value.as_bytes(), s(0, token)).await;
                assert_eq!(got, Ok(want), "{who} writing {key} with token {token}");
                assert_eq!(oracle.write(key, value.as_bytes(), s(0, token)).await, Ok(want), "the oracle agrees");
            }
        }
        let want = vec![row("a", "a@3", s(0, 3)), row("b", "b@6", s(0, 6)), row("shared", "b@6", s(0, 6))];
        assert_eq!(a.rows().await, Ok(want.clone()));
        assert_eq!(b.rows().await, Ok(want.clone()), "both connections read the same rows");
        for r in &want {
            assert_eq!(oracle.get(&r.key), Some((r.value.clone(), r.stamp)));
        }
        assert_eq!(a.highest().await, Ok(oracle.highest()));
    });
}

#[test]
fn a_new_log_epoch_outranks_any_token_of_the_old_one() {
    on_server("postgres fence: log epochs", |url| async move {
        let db = connect(&url, "epochs").await;
        let biggest = i64::MAX as u64;
        assert_eq!(db.write("k", b"old log", s(0, 9_000)).await, Ok(Written::Accepted));
        assert_eq!(db.write("k", b"new log", s(1, 1)).await, Ok(Written::Accepted), "token 1 of epoch 1 > 9000 of 0");
        assert_eq!(db.write("k", b"late", s(0, 9_001)).await, Ok(Written::Refused { highest: s(1, 1) }));
        assert_eq!(db.write("k", b"late", s(0, biggest)).await, Ok(Written::Refused { highest: s(1, 1) }));
        assert_eq!(db.write("j", b"new log", s(1, 1)).await, Ok(Written::Accepted));
        assert_eq!(db.rows().await, Ok(vec![row("j", "new log", s(1, 1)), row("k", "new log", s(1, 1))]));
        assert_eq!(db.highest().await, Ok(Some(s(1, 1))));
    });
}

#[test]
fn a_stamp_past_the_bigint_range_is_an_error_naming_it_and_writes_nothing() {
    on_server("postgres fence: stamps past i64::MAX", |url| async move {
        let db = connect(&url, "big").await;
        let err = db.write("k", b"v", s(0, u64::MAX)).await.expect_err("token past i64::MAX");
        assert!(err.0.contains("token 18446744073709551615"), "{err}");
        let err = db.write("k", b"v", s(1 << 63, 0)).await.expect_err("log epoch past i64::MAX");
        assert!(err.0.contains("log epoch 9223372036854775808"), "{err}");
        assert_eq!((db.highest().await, db.rows().await), (Ok(None), Ok(vec![])));
        assert_eq!(db.write("k", b"v", s(i64::MAX as u64, i64::MAX as u64)).await, Ok(Written::Accepted));
    });
}

#[test]
fn a_writer_dying_mid_transaction_leaves_the_fence_unchanged() {
    on_server("postgres fence: a writer dies mid-transaction", |url| async move {
        let db = connect(&url, "crash").await;
        assert_eq!(db.write("k", b"before", s(0, 5)).await, Ok(Written::Accepted));
        let (raw, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("raw connection");
        let connection = tokio::spawn(connection);
        raw.batch_execute(
            "BEGIN;
             UPDATE neli_fence SET token = 99 WHERE range = 'crash';
             UPDATE neli_rows SET value = 'half-done', token = 99 WHERE range = 'crash'",
        )
        .await
        .expect("the dying writer's uncommitted update");
        assert_eq!(db.highest().await, Ok(Some(s(0, 5))), "an uncommitted stamp is not read");
        // A fenced write now waits on the fence row the open transaction holds.
        let waiting = tokio::spawn({
            let db = db.clone();
            async move { db.write("k", b"after", s(0, 6)).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiting.is_finished(), "a write passed a fence row another transaction holds");
        // The writer dies: its connection closes without COMMIT.
        connection.abort();
        drop(raw);
        let answer = tokio::time::timeout(Duration::from_secs(10), waiting).await;
        let answer = answer.expect("the waiting write, answered once the dead writer's transaction ended");
        assert_eq!(answer.expect("write task"), Ok(Written::Accepted), "judged against 5, not the dead writer's 99");
        assert_eq!(db.highest().await, Ok(Some(s(0, 6))));
        assert_eq!(db.rows().await, Ok(vec![row("k", "after", s(0, 6))]));
    });
}

/// One write of the concurrent test, as its task saw it.
#[derive(Debug, Clone)]
struct Seen {
    key: String,
    value: String,
    stamp: Stamp,
    sent: Instant,
    answered: Instant,
    answer: Written,
}

/// A small deterministic generator (xorshift64*), seeded per task.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// Task `task`'s writes. The stamps follow a clock all tasks share (a new
/// log epoch every 100 ticks), jittered so that writers race near the same
/// stamp, as terms do around a failover: about half of them are refused.
async fn writer(db: PostgresFence, clock: Arc<AtomicU64>, task: u64, writes: u64) -> Vec<Seen> {
    let mut rng = (task + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut seen = Vec::new();
    for n in 0..writes {
        let tick = clock.fetch_add(1, Ordering::Relaxed);
        let stamp = s(tick / 100, tick % 100 + next(&mut rng) % 8);
        let key = format!("k{}", next(&mut rng) % 4);
        let value = format!("task {task} write {n}");
        let sent = Instant::now();
        let answer = db.write(&key, value.as_bytes(), stamp).await.unwrap_or_else(|e| panic!("{e}"));
        seen.push(Seen { key, value, stamp, sent, answered: Instant::now(), answer });
    }
    seen
}

#[test]
fn concurrent_writers_never_leave_a_stamp_below_one_accepted_before_it() {
    on_server("postgres fence: concurrent writers", |url| async move {
        const CONNECTIONS: usize = 4;
        const TASKS: u64 = 16;
        const WRITES: u64 = 30;
        // Connected at once on a fresh database: the tables are created once.
        let connecting: Vec<_> = (0..CONNECTIONS)
            .map(|_| {
                let url = url.clone();
                tokio::spawn(async move { connect(&url, "many").await })
            })
            .collect();
        let mut fences = Vec::new();
        for c in connecting {
            fences.push(c.await.expect("connect task"));
        }
        let clock = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..TASKS)
            .map(|t| tokio::spawn(writer(fences[t as usize % CONNECTIONS].clone(), clock.clone(), t, WRITES)))
            .collect();
        let mut seen = Vec::new();
        for t in tasks {
            seen.extend(t.await.expect("writer task"));
        }
        check_concurrent(&fences[0], &seen).await;
    });
}

async fn check_concurrent(db: &PostgresFence, seen: &[Seen]) {
    let accepted: Vec<&Seen> = seen.iter().filter(|w| w.answer == Written::Accepted).collect();
    let accepted_stamps: BTreeSet<Stamp> = accepted.iter().map(|w| w.stamp).collect();
    eprintln!("{} writes: {} accepted, {} refused", seen.len(), accepted.len(), seen.len() - accepted.len());
    assert!(!accepted.is_empty() && accepted.len() < seen.len(), "both answers exercised");
    for w in seen {
        if let Written::Refused { highest } = w.answer {
            assert!(highest > w.stamp, "{w:?} refused by a highest stamp not above it");
            assert!(accepted_stamps.contains(&highest), "{w:?} refused by a stamp nobody wrote");
        }
    }
    // Real-time order: a write sent after an accepted one was answered is
    // judged after it, so a lower stamp is refused.
    for a in &accepted {
        for b in seen.iter().filter(|b| b.sent > a.answered && b.stamp < a.stamp) {
            assert_ne!(b.answer, Written::Accepted, "{b:?} accepted after {a:?} was");
        }
    }
    assert_eq!(db.highest().await, Ok(accepted_stamps.last().copied()));
    // Accepted stamps rise in commit order, so each key holds the highest
    // stamp accepted for it, with a value written under that stamp.
    let mut per_key: BTreeMap<&str, Vec<&Seen>> = BTreeMap::new();
    for w in &accepted {
        per_key.entry(w.key.as_str()).or_default().push(w);
    }
    let rows = db.rows().await.expect("rows");
    assert_eq!(rows.len(), per_key.len());
    assert_eq!(db.count().await, Ok(per_key.len() as u64));
    for r in rows {
        let writes = &per_key[r.key.as_str()];
        let top = writes.iter().map(|w| w.stamp).max().expect("an accepted write");
        assert_eq!(r.stamp, top, "key {} holds a stamp below one accepted for it", r.key);
        let value = String::from_utf8(r.value).expect("utf-8");
        assert!(writes.iter().any(|w| w.stamp == top && w.value == value), "{} holds {value}", r.key);
    }
}
