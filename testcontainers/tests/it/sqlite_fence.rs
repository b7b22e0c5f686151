//! The SQLite fenced-write adapter (`neli::downstream::sqlite`) against a
//! real database file: the fencing rule's answers survive reopening the
//! file, two connections on one file are answered as the rule says, and a
//! writer killed inside its write transaction (the helper binary
//! `neli-tc-sqlite-holder`) leaves the fence and the rows as they were:
//! SQLite's rollback journal undoes the transaction, fence raise included
//! (the module docs of `neli::downstream::sqlite`: one `BEGIN IMMEDIATE`
//! transaction per write with its fence check).

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use neli::downstream::sqlite::SqliteFence;
use neli::downstream::{Row, Written, refuses};
use neli::{Stamp, Token};
use rustix::process::{Pid, Signal};

use crate::support;

/// How long the holder gets to open the file and print `ready`: a process
/// start and one local transaction, on a loaded 2-core machine.
const READY_WITHIN: Duration = Duration::from_secs(30);

fn s(log_epoch: u64, token: u64) -> Stamp {
    Stamp { log_epoch, token: Token(token) }
}

fn row(key: &str, value: &str, stamp: Stamp) -> Row {
    Row { key: key.to_owned(), value: value.as_bytes().to_vec(), stamp }
}

/// A directory for one test's database file: removed when the test
/// passes, kept (and named on stderr) when it fails.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("neli-sqlite-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        Scratch(dir)
    }

    fn db(&self) -> PathBuf {
        self.0.join("fence.sqlite")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept the database for inspection: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn open(path: &Path, range: &str) -> SqliteFence {
    SqliteFence::open(path, range).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_stale_stamp_is_refused_in_a_file_and_the_fence_outlives_reopening_it() {
    let dir = Scratch::new("stale");
    {
        let db = open(&dir.db(), "stale");
        assert_eq!(db.highest(), Ok(None));
        assert_eq!(db.write_now("a", b"new", s(0, 5)), Ok(Written::Accepted));
        assert_eq!(db.write_now("a", b"old", s(0, 3)), Ok(Written::Refused { highest: s(0, 5) }));
        assert_eq!(db.write_now("b", b"old", s(0, 3)), Ok(Written::Refused { highest: s(0, 5) }));
        assert_eq!(db.write_now("a", b"again", s(0, 5)), Ok(Written::Accepted), "a term writes again");
    }
    // A new connection to the same file, as after a restart of the service.
    let db = open(&dir.db(), "stale");
    assert_eq!(db.rows(), Ok(vec![row("a", "again", s(0, 5))]), "the newer value is in the file");
    assert_eq!((db.highest(), db.count_now()), (Ok(Some(s(0, 5))), Ok(1)), "the fence is in the file");
    assert_eq!(db.write_now("a", b"old", s(0, 4)), Ok(Written::Refused { highest: s(0, 5) }));
    let other = open(&dir.db(), "another range");
    assert_eq!(other.write_now("a", b"own fence", s(0, 1)), Ok(Written::Accepted), "ranges fence apart");
    assert_eq!(db.rows(), Ok(vec![row("a", "again", s(0, 5))]));
}

#[test]
fn two_connections_on_one_file_with_interleaved_stamps_are_answered_by_the_fencing_rule() {
    let dir = Scratch::new("two-writers");
    // Two handles, two connections to one file: two writers in one process
    // are judged as two processes would be (file locks, not the handle's mutex).
    let (a, b) = (open(&dir.db(), "report"), open(&dir.db(), "report"));
    let mut highest: Option<Stamp> = None;
    for (db, who, token) in [(&a, "a", 3), (&b, "b", 5), (&a, "a", 4), (&b, "b", 6), (&a, "a", 5)] {
        let (stamp, value) = (s(0, token), format!("{who}@{token}"));
        // The shared key, then the writer's own.
        for key in ["shared", who] {
            let want = match highest.filter(|_| refuses(highest, stamp)) {
                Some(h) => Written::Refused { highest: h },
                None => Written::Accepted,
            };
            assert_eq!(db.write_now(key, value.as_bytes(), stamp), Ok(want), "{who} writing {key} with {stamp:?}");
            if want == Written::Accepted {
                highest = highest.max(Some(stamp));
            }
        }
    }
    let want = vec![row("a", "a@3", s(0, 3)), row("b", "b@6", s(0, 6)), row("shared", "b@6", s(0, 6))];
    assert_eq!(a.rows(), Ok(want.clone()));
    assert_eq!(b.rows(), Ok(want), "both connections read the same rows");
    assert_eq!((a.highest(), b.highest()), (Ok(highest), Ok(highest)));
    assert_eq!(highest, Some(s(0, 6)));
}

/// The holder's ballast: twice SQLite's default page cache (2,000 KiB),
/// so its transaction spills uncommitted pages into the database file.
const BALLAST: u64 = 4 << 20;
/// The first bytes of a rollback journal SQLite would play back (a hot
/// journal): written once the transaction's pages may reach the file.
const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

/// The holder process, killed by its own PID when dropped (a failing test
/// leaves no writer behind).
struct Holder(Child);

impl Holder {
    /// Starts the holder and waits for its `ready`: its transaction is then
    /// open, the fence raised to `stamp`, `key` and the ballast written,
    /// uncommitted.
    fn start(db: &Path, range: &str, stamp: Stamp, key: &str, value: &str) -> Holder {
        let mut child = Command::new(env!("CARGO_BIN_EXE_neli-tc-sqlite-holder"))
            .arg(db)
            .args([range, &stamp.log_epoch.to_string(), &stamp.token.0.to_string(), key, value])
            .arg(BALLAST.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the holder starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut holder = Holder(child);
        match rx.recv_timeout(READY_WITHIN) {
            Ok(line) if line.trim() == "ready" => holder,
            got => {
                holder.kill();
                let mut stderr = String::new();
                if let Some(mut e) = holder.0.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
                }
                panic!("waited {READY_WITHIN:?} for the holder's `ready` (its transaction open), got {got:?}: {stderr}")
            }
        }
    }

    /// SIGKILL to the holder's PID (a child of this test, not yet reaped), then reaps it.
    fn kill(&mut self) -> std::process::ExitStatus {
        if let Ok(None) = self.0.try_wait()
            && let Some(pid) = i32::try_from(self.0.id()).ok().and_then(Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
        self.0.wait().expect("the holder reaped")
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        self.kill();
    }
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_writer_killed_inside_its_transaction_leaves_the_fence_and_rows_as_they_were() {
    // One process at a time beside the real-broker runs (support.rs).
    let _serial = support::serial();
    let dir = Scratch::new("killed-writer");
    let (file, journal) = (dir.db(), dir.0.join("fence.sqlite-journal"));
    let db = open(&file, "crash");
    assert_eq!(db.write_now("k", b"before", s(0, 5)), Ok(Written::Accepted));
    let size_before = file_len(&file);
    let started = Instant::now();
    let mut holder = Holder::start(&file, "crash", s(0, 99), "k", "half-done");
    // The dead writer-to-be's pages are in the file, its journal is hot.
    let spilled = file_len(&file);
    assert!(spilled > size_before + BALLAST / 2, "the open transaction spilled: {size_before} -> {spilled} bytes");
    let head = std::fs::read(&journal).unwrap_or_else(|e| panic!("{}: {e}", journal.display()));
    assert_eq!(head.get(..8), Some(&JOURNAL_MAGIC[..]), "a hot rollback journal at {}", journal.display());

    let status = holder.kill();
    assert_eq!(status.signal(), Some(Signal::KILL.as_raw()), "the holder died of SIGKILL: {status}");
    eprintln!("holder held its transaction for {} ms, then SIGKILL", started.elapsed().as_millis());
    // A new connection, as a restarted service would open: its first read
    // plays the journal back, undoing the fence raise and both rows.
    let after = open(&file, "crash");
    assert_eq!(after.highest(), Ok(Some(s(0, 5))), "the fence is as before the dead transaction");
    assert_eq!(after.rows(), Ok(vec![row("k", "before", s(0, 5))]), "the rows are as before it");
    assert!(!journal.exists(), "the journal was played back and removed");
    assert_eq!(file_len(&file), size_before, "the file is back to its committed size");
    // The next term's stamp is below the dead writer's 99 and is accepted.
    assert_eq!(after.write_now("k", b"after", s(0, 6)), Ok(Written::Accepted), "judged against 5, not 99");
    assert_eq!(db.rows(), Ok(vec![row("k", "after", s(0, 6))]), "the first connection reads it too");
    assert_eq!(db.highest(), Ok(Some(s(0, 6))));
}
