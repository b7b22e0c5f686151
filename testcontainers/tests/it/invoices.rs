//! The invoices service's production binary (`examples/invoices`, feature
//! `kafka`) on tansu: three processes in one group writing to one SQLite
//! file. The leader is SIGKILLed; a successor must go on numbering
//! invoices, and the database must then hold each invoice once, numbered
//! 1..=N without a gap, its stamps never going down (README, "Testing your
//! own service"; the module docs of `neli::downstream`).
//!
//! The binary is built as `sim/tests/it/outside.rs` builds the example (its
//! own workspace, target directory `target/outside-crate`). The leader is
//! found by its stamp: an observer on the election topic
//! (`neli::kafka::observe`) names the member whose claimed stamp is the
//! database's highest, i.e. the writer of the latest invoice. Every write
//! is logged in commit order by a trigger the test adds to the database
//! (`test_audit`), so a key written twice or a stamp going down between
//! two commits is seen even where the final rows could hide it.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use neli::downstream::sqlite::SqliteFence;
use neli::{Config, Stamp, Token};
use neli_testcontainers::{Budget, docker_or_skip, mono_ms};
use rustix::process::{Pid, Signal};

use crate::support;

/// T and S as the suite's other stories (faults.rs).
const T: Duration = Duration::from_secs(1);
const S: Duration = Duration::from_secs(3);
const MEMBERS: u32 = 3;
/// One invoice's work in `examples/invoices/src/lib.rs`: `RENDER` (200 ms)
/// then `ROUND` (100 ms).
const ONE_INVOICE: Duration = Duration::from_millis(300);
/// Invoices in the database before the leader is killed.
const BEFORE_KILL: u64 = 3;
/// The fence range the binary writes in (`SqliteFence::open(db, "invoices")`).
const RANGE: &str = "invoices";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// Builds the binary; `None` (with a NOTICE) if that fails outside CI.
fn build_invoices() -> Option<PathBuf> {
    let target = root().join("target/outside-crate");
    let started = Instant::now();
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        // From the workspace root: its .cargo/config.toml has the same
        // rustflags as the example's own, as outside.rs's copy builds with.
        .current_dir(root())
        .args(["build", "--offline", "--manifest-path", "examples/invoices/Cargo.toml"])
        .args(["--features", "kafka", "--bin", "invoices"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let took = started.elapsed();
    if !out.status.success() {
        let why = format!("{}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("building the invoices binary (examples/invoices, --features kafka) failed: {why}");
        }
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "NOTICE: skipping the invoices story: building its binary failed: {why}");
        return None;
    }
    eprintln!("invoices binary built in {:.1} s ({})", took.as_secs_f64(), target.display());
    Some(target.join("debug/invoices"))
}

/// One invoices process.
struct Member {
    name: String,
    child: Child,
    stderr: PathBuf,
    /// Signalled by the test (killed or told to close).
    stopped: bool,
}

impl Member {
    /// `sig` to this member's PID (a child of this test, not yet reaped).
    fn signal(&mut self, sig: Signal) {
        self.stopped = true;
        if let Ok(None) = self.child.try_wait()
            && let Some(pid) = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, sig);
        }
    }
}

/// The run's processes and files: every process still running is
/// SIGKILLed by its PID on drop; the directory (database, stderr logs) is
/// removed after a pass and kept, named on stderr, after a failure.
struct Story {
    dir: PathBuf,
    db: PathBuf,
    members: Vec<Member>,
    t0: Instant,
}

impl Story {
    fn new() -> Story {
        let dir = std::env::temp_dir().join(format!("neli-tc-invoices-{}-{}", std::process::id(), mono_ms()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        eprintln!("invoices story: database and member stderr logs in {}", dir.display());
        Story { db: dir.join("invoices.sqlite"), dir, members: Vec::new(), t0: Instant::now() }
    }

    fn at(&self) -> String {
        format!("{:>6} ms", self.t0.elapsed().as_millis())
    }

    fn spawn(&mut self, bin: &Path, bootstrap: &str, group: &str, name: &str) {
        let stderr = self.dir.join(format!("{name}.stderr"));
        let file = std::fs::File::create(&stderr).unwrap_or_else(|e| panic!("{}: {e}", stderr.display()));
        let mut cmd = Command::new(bin);
        cmd.args(["--bootstrap-servers", bootstrap, "--group", group, "--name", name])
            .arg("--db")
            .arg(&self.db)
            .args(["--heartbeat-timeout-ms", &T.as_millis().to_string()])
            .args(["--session-timeout-ms", &S.as_millis().to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file);
        for var in ["BOOTSTRAP_SERVERS", "GROUP", "NAME", "DB", "UNTIL", "HEARTBEAT_TIMEOUT_MS", "SESSION_TIMEOUT_MS"] {
            cmd.env_remove(format!("INVOICES_{var}"));
        }
        let child = cmd.spawn().unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        self.members.push(Member { name: name.to_owned(), child, stderr, stopped: false });
    }

    /// Fails if a process the test did not stop has exited, naming its log.
    fn none_died(&mut self) {
        for m in self.members.iter_mut().filter(|m| !m.stopped) {
            if let Ok(Some(status)) = m.child.try_wait() {
                let log = std::fs::read_to_string(&m.stderr).unwrap_or_default();
                panic!("{} exited on its own ({status}); {}:\n{log}", m.name, m.stderr.display());
            }
        }
    }
}

impl Drop for Story {
    fn drop(&mut self) {
        for m in &mut self.members {
            m.signal(Signal::KILL);
            let _ = m.child.wait();
        }
        if std::thread::panicking() {
            eprintln!("kept the invoices story's database and logs: {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Polls `check` every 100 ms until it gives a value, for at most
/// `budget`; the failure says what was waited for and why that long.
async fn wait_for<V>(
    story: &mut Story,
    what: &str,
    budget: Duration,
    why: &str,
    mut check: impl FnMut(&mut Story) -> Option<V>,
) -> V {
    let deadline = Instant::now() + budget;
    loop {
        story.none_died();
        if let Some(v) = check(story) {
            return v;
        }
        assert!(Instant::now() < deadline, "waited {budget:?} for {what} (budget: {why})");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The test's own trigger: every write to `neli_rows`, in commit order
/// (the adapter writes in one transaction at a time per file).
const AUDIT: &str = "
CREATE TABLE test_audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, op TEXT NOT NULL, key TEXT NOT NULL,
                         log_epoch INTEGER NOT NULL, token INTEGER NOT NULL);
CREATE TRIGGER test_audit_insert AFTER INSERT ON neli_rows BEGIN
    INSERT INTO test_audit (op, key, log_epoch, token) VALUES ('insert', NEW.key, NEW.log_epoch, NEW.token);
END;
CREATE TRIGGER test_audit_update AFTER UPDATE ON neli_rows BEGIN
    INSERT INTO test_audit (op, key, log_epoch, token) VALUES ('update', NEW.key, NEW.log_epoch, NEW.token);
END;";

/// One logged write: (op, key, stamp), in commit order.
fn audit(db: &Path) -> Vec<(String, String, Stamp)> {
    let conn = rusqlite::Connection::open(db).expect("the database opens");
    let mut q = conn.prepare("SELECT op, key, log_epoch, token FROM test_audit ORDER BY seq").expect("audit query");
    let rows = q
        .query_map([], |r| {
            let stamp = Stamp { log_epoch: r.get::<_, i64>(2)? as u64, token: Token(r.get::<_, i64>(3)? as u64) };
            Ok((r.get(0)?, r.get(1)?, stamp))
        })
        .expect("audit rows");
    rows.collect::<rusqlite::Result<_>>().expect("audit rows read")
}

/// The invoice number of `invoice-N`.
fn number(key: &str) -> u64 {
    key.strip_prefix("invoice-").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("not an invoice key: {key}"))
}

#[test]
fn sigkill_of_the_invoices_leader_hands_the_numbering_to_a_successor() {
    // The build and the run one at a time with the other real runs (support.rs).
    let _serial = support::serial();
    if !docker_or_skip("the invoices story").unwrap_or_else(|e| panic!("{e}")) {
        return;
    }
    let Some(bin) = build_invoices() else { return };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(invoices_story(&bin));
}

/// What the story's steps share.
struct Run {
    story: Story,
    db: SqliteFence,
    config: Config,
    bounds: neli::Explanation,
    budget: Budget,
    rebalance_pause: Duration,
}

async fn invoices_story(bin: &Path) {
    let started = Instant::now();
    let broker = support::start_broker().await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("broker up in {} ms", started.elapsed().as_millis());
    let mut run = start_members(bin, &broker).await;
    let observer = neli::kafka::observe(&run.config).await.unwrap_or_else(|e| panic!("an observer: {e}"));
    let (killed, at_kill) = kill_the_leader(&mut run, &observer).await;
    let failover = the_successor_goes_on(&mut run, &observer, killed, at_kill).await;
    let _ = observer.close().await;
    close_the_rest(&mut run.story, &run.bounds, &run.budget).await;
    let stamps = check_the_invoices(&run.db, &run.story.db, killed);
    let stamps: Vec<String> =
        stamps.iter().map(|(s, n)| format!("{n} x (epoch {}, token {})", s.log_epoch, s.token.0)).collect();
    eprintln!(
        "invoices story: {} invoices, stamps {}; failover {} ms; {} ms in all",
        run.db.count_now().unwrap_or(0),
        stamps.join(", "),
        failover.as_millis(),
        started.elapsed().as_millis()
    );
}

/// The database with the audit trigger, three members on it, and the
/// first invoices written.
async fn start_members(bin: &Path, broker: &neli_testcontainers::Broker) -> Run {
    let group = format!("invoices-{}", mono_ms());
    // The members' configuration, as the binary builds it from its flags.
    let config = Config::builder()
        .bootstrap_servers(&broker.bootstrap)
        .group(&group)
        .heartbeat_timeout(T)
        .session_timeout(S)
        .build()
        .expect("the members' configuration");
    let bounds = config.explain().expect("its bounds");
    let budget = Budget::new(T, S, MEMBERS, broker.rebalance_pause);
    eprintln!("timing budget from {budget}");
    let mut story = Story::new();
    let db = SqliteFence::open(&story.db, RANGE).unwrap_or_else(|e| panic!("{e}"));
    rusqlite::Connection::open(&story.db).and_then(|c| c.execute_batch(AUDIT)).expect("the audit trigger");
    for i in 0..MEMBERS {
        story.spawn(bin, &broker.bootstrap, &group, &format!("m{i}"));
    }
    let formation = budget.formation() + budget.within(ONE_INVOICE * BEFORE_KILL as u32);
    let why = format!("formation, then {BEFORE_KILL} invoices of {ONE_INVOICE:?}");
    let what = format!("{BEFORE_KILL} invoices in the database");
    wait_for(&mut story, &what, formation, &why, |_| (db.count_now().ok()? >= BEFORE_KILL).then_some(())).await;
    eprintln!("{}: {BEFORE_KILL} invoices in the database", story.at());
    Run { story, db, config, bounds, budget, rebalance_pause: broker.rebalance_pause }
}

/// SIGKILL to the writer of the latest invoice; its stamp and the
/// invoices written when it died.
async fn kill_the_leader(run: &mut Run, observer: &neli::observer::Observer) -> (Stamp, u64) {
    let (leader, killed) = leader_of_the_latest_invoice(&mut run.story, observer, &run.db, &run.budget).await;
    let member = &mut run.story.members[leader];
    member.signal(Signal::KILL);
    let status = member.child.wait().expect("the leader reaped");
    assert_eq!(status.signal(), Some(Signal::KILL.as_raw()), "the leader died of SIGKILL: {status}");
    let at_kill = run.db.count_now().expect("count");
    assert_eq!(run.db.highest(), Ok(Some(killed)), "nobody wrote above the leader's stamp before its kill");
    let name = &run.story.members[leader].name;
    eprintln!("{}: SIGKILL to {name} (stamp {killed:?}) with {at_kill} invoices written", run.story.at());
    (killed, at_kill)
}

/// Waits for the successor's first invoice and two more; how long the
/// first took after the kill.
async fn the_successor_goes_on(
    run: &mut Run,
    observer: &neli::observer::Observer,
    killed: Stamp,
    at_kill: u64,
) -> Duration {
    let killed_at = Instant::now();
    // A failover (the bound neli derives from T and S, which leaves out
    // the broker's rebalance pause: neli::Explanation), then one invoice.
    let bound = run.bounds.failover + run.rebalance_pause + ONE_INVOICE;
    let why = format!(
        "failover {:?} + rebalance pause {:?} + one invoice {ONE_INVOICE:?}",
        run.bounds.failover, run.rebalance_pause
    );
    let what = format!("an invoice past invoice-{at_kill}, stamped above {killed:?}");
    let db = run.db.clone();
    let next = |_: &mut Story| (db.count_now().ok()? > at_kill).then(|| db.highest().ok().flatten()).flatten();
    let successor = wait_for(&mut run.story, &what, run.budget.within(bound), &why, next).await;
    let failover = killed_at.elapsed();
    assert!(successor > killed, "the successor's invoice is stamped {successor:?}, not above {killed:?}");
    let heir = observed_writer(&mut run.story, observer, successor, &run.budget).await;
    let ms = failover.as_millis();
    eprintln!("{}: {heir} wrote invoice-{} {ms} ms after the kill (bound {bound:?})", run.story.at(), at_kill + 1);
    // It goes on numbering.
    let (what, why) = (format!("invoice-{}", at_kill + 3), format!("two invoices of {ONE_INVOICE:?}"));
    let more = |_: &mut Story| (db.count_now().ok()? >= at_kill + 3).then_some(());
    wait_for(&mut run.story, &what, run.budget.within(ONE_INVOICE * 2), &why, more).await;
    failover
}

/// The member the observer sees claiming the stamp of the latest invoice:
/// the member that wrote it. Its index and the stamp.
async fn leader_of_the_latest_invoice(
    story: &mut Story,
    observer: &neli::observer::Observer,
    db: &SqliteFence,
    budget: &Budget,
) -> (usize, Stamp) {
    let stamp = db.highest().expect("highest").expect("invoices were written");
    let name = observed_writer(story, observer, stamp, budget).await;
    let leader = story.members.iter().position(|m| m.name == name).unwrap_or_else(|| panic!("no member {name}"));
    (leader, stamp)
}

/// The name of the member the observer reads claiming `stamp`.
async fn observed_writer(
    story: &mut Story,
    observer: &neli::observer::Observer,
    stamp: Stamp,
    budget: &Budget,
) -> String {
    // The reader's first fetch (a client retry at most) and the leader's
    // next heartbeat (within T).
    let why = format!("one client retry {:?} + T {T:?}", budget.retry);
    let what = format!("the observer to read a heartbeat claiming {stamp:?}");
    let claim = |_: &mut Story| observer.leader(0).filter(|v| v.stamp() == stamp).map(|v| v.member);
    wait_for(story, &what, budget.within(budget.retry + T), &why, claim).await
}

/// SIGTERM to every member still running; each closes gracefully (the
/// invoice in flight finished, the group left) and exits 0.
async fn close_the_rest(story: &mut Story, bounds: &neli::Explanation, budget: &Budget) {
    let running: Vec<usize> = (0..story.members.len()).filter(|i| !story.members[*i].stopped).collect();
    for &i in &running {
        story.members[i].signal(Signal::TERM);
    }
    let closing = Instant::now();
    let why = format!("close timeout {:?} + one invoice {ONE_INVOICE:?}", bounds.close_timeout);
    let exited = |story: &mut Story| {
        let statuses: Vec<_> = running.iter().map(|&i| story.members[i].child.try_wait().ok().flatten()).collect();
        statuses.iter().all(Option::is_some).then(|| statuses.into_iter().flatten().collect::<Vec<_>>())
    };
    let what = "every member still running to exit after SIGTERM";
    let statuses = wait_for(story, what, budget.within(bounds.close_timeout + ONE_INVOICE), &why, exited).await;
    for (&i, status) in running.iter().zip(&statuses) {
        let m = &story.members[i];
        let log = std::fs::read_to_string(&m.stderr).unwrap_or_default();
        assert!(status.success(), "{} closed with {status}; {}:\n{log}", m.name, m.stderr.display());
    }
    eprintln!("{}: {} members closed in {} ms", story.at(), running.len(), closing.elapsed().as_millis());
}

/// The database after the run: invoice-1..=N each written once (no
/// update in the audit), numbered in commit order, stamps never going
/// down (in invoice order and in commit order), at least two terms, the
/// killed leader's stamp followed only by higher ones. The distinct stamps, in order.
fn check_the_invoices(db: &SqliteFence, file: &Path, killed: Stamp) -> Vec<(Stamp, usize)> {
    let mut rows = db.rows().expect("rows");
    rows.sort_by_key(|r| number(&r.key));
    let numbers: Vec<u64> = rows.iter().map(|r| number(&r.key)).collect();
    let n = rows.len() as u64;
    assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "invoices numbered 1..={n} without a gap");
    let log = audit(file);
    let rewritten: Vec<_> = log.iter().filter(|(op, ..)| op != "insert").collect();
    assert!(rewritten.is_empty(), "an invoice written twice: {rewritten:?}");
    let committed: Vec<&str> = log.iter().map(|(_, key, _)| key.as_str()).collect();
    let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(committed, keys, "invoices committed in number order, each once");
    for (r, (_, _, stamp)) in rows.iter().zip(&log) {
        assert_eq!(r.stamp, *stamp, "{} holds the stamp it was committed with", r.key);
    }
    for w in rows.windows(2) {
        assert!(
            w[1].stamp >= w[0].stamp,
            "{} stamped {:?} after {} stamped {:?}",
            w[1].key,
            w[1].stamp,
            w[0].key,
            w[0].stamp
        );
    }
    let mut stamps: Vec<(Stamp, usize)> = Vec::new();
    for r in &rows {
        match stamps.last_mut() {
            Some((s, count)) if *s == r.stamp => *count += 1,
            _ => stamps.push((r.stamp, 1)),
        }
    }
    assert!(stamps.len() >= 2, "two terms at least: {stamps:?}");
    assert!(stamps.iter().any(|(s, _)| *s == killed), "the killed leader's invoices are there: {stamps:?}");
    stamps
}

/// A database to check: its name, its writes as (invoice number, token),
/// what the failure says ("" = the checks pass).
type Case = (&'static str, &'static [(u64, u64)], &'static str);

/// The database checks fail on what they are there to catch (a passing
/// story never takes those branches): a gap, an invoice written twice,
/// invoices committed out of order, a stamp going down. No broker needed.
#[test]
fn the_invoice_checks_refuse_a_gap_a_rewrite_an_order_and_a_stamp_going_down() {
    let dir = std::env::temp_dir().join(format!("neli-tc-invoice-checks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let s = |token| Stamp { log_epoch: 0, token: Token(token) };
    let cases: [Case; 5] = [
        ("fine", &[(1, 3), (2, 3), (3, 5)], ""),
        ("gap", &[(1, 3), (3, 5)], "without a gap"),
        ("rewrite", &[(1, 3), (2, 3), (2, 5)], "an invoice written twice"),
        ("order", &[(2, 3), (1, 3)], "committed in number order"),
        ("down", &[(1, 5), (2, 3)], "invoice-2 stamped"),
    ];
    for (name, writes, want) in cases {
        let file = dir.join(format!("{name}.sqlite"));
        let db = SqliteFence::open(&file, RANGE).unwrap_or_else(|e| panic!("{e}"));
        rusqlite::Connection::open(&file).and_then(|c| c.execute_batch(AUDIT)).expect("the audit trigger");
        for (n, token) in writes {
            // Unfenced: these are the writes a broken service would make.
            db.write_unfenced(&format!("invoice-{n}"), b"x", s(*token)).unwrap_or_else(|e| panic!("{e}"));
        }
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_the_invoices(&db, &file, s(3))));
        match checked {
            Ok(_) => assert!(want.is_empty(), "{name}: the checks passed"),
            Err(panic) => {
                let said = panic.downcast_ref::<String>().cloned().unwrap_or_default();
                assert!(!want.is_empty() && said.contains(want), "{name}: the checks said {said:?}, not {want:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
