//! cooperative-sticky against real brokers (neli/KAFKA.md, "Assignment
//! strategy"): a follower that
//! joins, leaves or restarts does not stop the leader, and a paused leader
//! that comes back does not take leadership back (docs/cooperative-rebalance.md).
//!
//! tansu: `neli exec` members as child processes, judged on the shared
//! tick file of `kafka_tansu` (one interval per CMD that acted as leader).
//! The membership proof is on for tansu (it goes on a connection of its own,
//! docs/cooperative-rebalance.md, "One coordinator connection").
//! Over TLS (tansu behind the proxy of `tls.rs`, plain and mutual TLS) the
//! follower churn and the paused leader's return tell the same story, and
//! every member's proof went on its own connection (it logs when it falls
//! back to librdkafka; it never may here).
//! librdkafka's mock: the same stories with `neli exec` processes over TCP,
//! and in-process members, all with the membership proof off, since the mock answers every commit REBALANCE_IN_PROGRESS while a
//! rebalance is joining (S - 1 s) without refreshing the member's session,
//! which proves nothing, so a proven lease of T < S lapses on every
//! rebalance there (neli/KAFKA.md, "Assignment strategy").

use std::path::Path;
use std::time::{Duration, Instant};

use crate::kafka_tansu::{
    Reap, S, current_leader, formation, intervals, pause_leader, spawn_exec_logged, start_tansu, takeover, tansu_bin,
    tempdir, ticks, wait_until, what_happened,
};
use crate::support::{Signal, budget, signal, signal_group};
use crate::tls::{ClientAuth, path};

const T_DUR: Duration = Duration::from_secs(1);
/// T of the `neli exec` members on librdkafka's mock (see [`mock_election`]).
const MOCK_T: Duration = Duration::from_secs(2);
/// T of the members of the cooperative churn stories on tansu. A leader
/// keeps its lease through a stall of its own process or of the broker
/// only if the stall is shorter than T minus the time since its last
/// renewal (heartbeats and proofs every T/4) minus the read-back lag
/// (`fetch.wait.max.ms` = T/40): about 0.725 to 0.975 s at T = 1 s. A stall
/// that long lapses the lease, by design, and `neli exec` restarts CMD when
/// the member leads again. One full `neli` suite run in three on 2 cores
/// saw such a stall (1 s of the leader or of tansu reproduces it exactly,
/// a CPU hog alone never did: the worst renewal delay beside one was
/// 173 ms). These stories claim that follower churn does not stop the
/// leader, not that the machine never stalls, so they take T = 2 s: a
/// stall of 1.4 to 1.9 s is survived.
const CHURN_T: Duration = Duration::from_secs(2);

/// tansu holds a JoinGroup until S/2 has passed, looking once a second.
fn join_wait() -> Duration {
    S / 2 + Duration::from_secs(1)
}

/// A rebalance after a member came or went, on tansu: the session of a
/// SIGKILLed member runs out (S), the join is held (S/2 + 1 s), and the
/// members that kept their partitions get their new generation.
fn rebalance(t: Duration) -> Duration {
    S + join_wait() + t
}

/// How many new generations the member whose stderr log is `log` was assigned.
fn generations_seen(log: &Path) -> usize {
    std::fs::read_to_string(log).unwrap_or_default().lines().filter(|l| l.contains("partitions assigned")).count()
}

struct Election {
    /// tansu's process or the in-process mock cluster, kept alive.
    _broker: Box<dyn std::any::Any>,
    bootstrap: String,
    group: String,
    members: Reap,
    /// Each member's stderr log, in `members` order.
    logs: Vec<std::path::PathBuf>,
    /// `neli exec` flags of every member.
    args: Vec<String>,
    /// Time to leave between two membership changes.
    spacing: Duration,
    /// The members' heartbeat timeout T (`--heartbeat-timeout`).
    t: Duration,
    file: std::path::PathBuf,
    _dir: tempdir::Dir,
}

impl Election {
    fn new(
        name: &str,
        broker: Box<dyn std::any::Any>,
        bootstrap: String,
        args: &[&str],
        spacing: Duration,
        t: Duration,
    ) -> Election {
        let dir = tempdir::Dir::new(name);
        let file = dir.0.join("leader.log");
        std::fs::write(&file, "").unwrap();
        let mut e = Election {
            _broker: broker,
            bootstrap,
            group: format!("{name}-{}", std::process::id()),
            members: Reap(Vec::new()),
            logs: Vec::new(),
            args: args
                .iter()
                .map(|a| (*a).to_owned())
                .chain(["--heartbeat-timeout".to_owned(), format!("{}ms", t.as_millis())])
                .collect(),
            spacing,
            t,
            file,
            _dir: dir,
        };
        for _ in 0..3 {
            e.spawn();
        }
        e
    }

    /// [`formation`] and [`takeover`] assume T = 1 s; a longer T adds its excess.
    fn formation(&self) -> Duration {
        formation() + budget(self.t.saturating_sub(T_DUR))
    }

    fn takeover(&self) -> Duration {
        takeover() + budget(self.t.saturating_sub(T_DUR))
    }

    fn spawn(&mut self) {
        let (child, log) = spawn_exec_logged(&self.bootstrap, &self.group, &self.file, &self.args);
        self.members.0.push(child);
        self.logs.push(log);
    }
}

/// tansu and three `neli exec --assignment ASSIGNMENT` members.
fn election(name: &str, assignment: &str) -> Option<Election> {
    election_with_t(name, assignment, T_DUR)
}

/// [`election`] with the members' heartbeat timeout `t`.
fn election_with_t(name: &str, assignment: &str, t: Duration) -> Option<Election> {
    let bin = tansu_bin()?;
    let tansu = start_tansu(&bin);
    let bootstrap = tansu.bootstrap.clone();
    Some(Election::new(name, Box::new(tansu), bootstrap, &["--assignment", assignment], rebalance(t), t))
}

/// tansu behind the TLS proxy of `tls.rs` (`ClientAuth::Required`: mutual
/// TLS) and three `neli exec --assignment ASSIGNMENT` members speaking
/// `security.protocol=SSL`, the client certificate given when the proxy
/// asks for one. Timing as on plain tansu: the proxy forwards bytes.
fn tls_election(name: &str, assignment: &str, auth: ClientAuth, t: Duration) -> Option<Election> {
    let tls = crate::tls::start(name, auth, &[])?;
    let mut args = vec![
        "--assignment".to_owned(),
        assignment.to_owned(),
        "-X".to_owned(),
        "security.protocol=SSL".to_owned(),
        "-X".to_owned(),
        format!("ssl.ca.location={}", path(&tls.files.ca)),
    ];
    if auth == ClientAuth::Required {
        args.extend([
            "-X".to_owned(),
            format!("ssl.certificate.location={}", path(&tls.files.client_cert)),
            "-X".to_owned(),
            format!("ssl.key.location={}", path(&tls.files.client_key)),
        ]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let bootstrap = tls.bootstrap.clone();
    Some(Election::new(name, Box::new(tls), bootstrap, &args, rebalance(t), t))
}

/// What a member logs when its membership proof goes through librdkafka's
/// coordinator connection instead of its own (at startup, for properties
/// the own connection cannot speak; later, once the broker refused it).
const PROOF_FELL_BACK: &str = "goes through librdkafka";
/// What a member logs (once, at `info`) when the coordinator first answers a
/// proof on the proof's own connection.
const PROOF_ON_OWN_CONNECTION: &str = "answers on the proof's own connection";

/// The membership proof of every member went on its own connection: no
/// member logged a fallback to librdkafka, and each of `leaders` (neli pids)
/// logged that the coordinator answered it there.
fn assert_proof_on_own_connection(e: &Election, leaders: &[u32]) {
    for (child, log) in e.members.0.iter().zip(&e.logs) {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        assert!(
            !text.contains(PROOF_FELL_BACK),
            "member {} sent its proof through librdkafka, not its own connection:\n{text}",
            child.id()
        );
        if leaders.contains(&child.id()) {
            assert!(
                text.contains(PROOF_ON_OWN_CONNECTION),
                "leader {} never had a proof answered on its own connection:\n{text}",
                child.id()
            );
        }
    }
}

/// The librdkafka mock (in this process, members over TCP) and three
/// cooperative-sticky `neli exec` members with the membership proof off:
/// the mock refuses every commit while a rebalance is joining (see the
/// module docs).
fn mock_election(name: &str) -> Election {
    let mock = neli::kafka::mock::MockKafka::start(1).expect("mock cluster");
    mock.create_topic(&format!("{name}-{}.neli", std::process::id()), 1).expect("topic");
    let bootstrap = mock.bootstrap_servers();
    // With the proof off, the kept leader's lease rests on reading its own
    // heartbeats back through the mock's held join (S - 1 s); T = 1 s left
    // too little room beside a CPU hog (its lease lapsed once in 4 runs), so
    // the mock's members take T = 2 s, still below S.
    let t = MOCK_T;
    // The mock finds an expired session within a second, then holds the
    // join S - 1 s; T for the leader's new generation to reach it.
    let spacing = S + Duration::from_secs(1) + S + t;
    let args = ["--assignment", "cooperative-sticky", "--no-membership-proof"];
    Election::new(name, Box::new(mock), bootstrap, &args, spacing, t)
}

/// What a churn story did to the first leader.
struct Churn {
    /// The first leader's neli pid.
    leader: u32,
    /// The neli pids that led, in order ([`leader_changes`]).
    changes: Vec<u32>,
    /// The CMD intervals of the tick file ([`intervals`]).
    iv: Vec<(u64, u64, u32, u64)>,
    /// How many times the first leader was told `Revoked`.
    revoked: usize,
    /// The same two counts after the first change alone (a follower
    /// restart), taken just before the second: CMD intervals and `Revoked`s.
    after_restart: (usize, usize),
}

impl Churn {
    /// One line for the figures (BENCHMARKS.md, "Leadership under churn
    /// over TLS"): grep `CHURN-FIGURES`.
    fn report(&self, what: &str) {
        eprintln!(
            "CHURN-FIGURES {what}: restart: cmd_breaks={} revoked={}; whole story (restart, leave, join): \
             cmd_breaks={} revoked={} leader_changes={}",
            self.after_restart.0.saturating_sub(1),
            self.after_restart.1,
            self.iv.len().saturating_sub(1),
            self.revoked,
            self.changes.len().saturating_sub(1),
        );
    }
}

/// What [`follower_churn`] waits for after the last change.
#[derive(Clone, Copy, PartialEq)]
enum LastJoin {
    /// The last join must reach the leader as a new generation: a claim that
    /// the leader was never stopped is empty unless every change reached it.
    MustReachTheLeader,
    /// Stop T after it: the claim (the leader was stopped) rests on changes
    /// already seen, and tansu once took more than 22 s to form the group
    /// after a follower's leave (neli/KAFKA.md, "tansu's group coordinator").
    DoNotWait,
}

/// Three members under `assignment`; a follower restarts (SIGKILL, a new
/// member joins), another leaves (SIGTERM), another joins. Returns the
/// first leader's neli pid and the tick file's CMD intervals, once the
/// leader has seen the last change as a new generation (if `last` says so).
fn follower_churn(e: &mut Election, last: LastJoin) -> Churn {
    let (leader, _) = wait_until(e.formation(), || current_leader(&e.file, None))
        .unwrap_or_else(|| panic!("a first leader within {:?}{}", e.formation(), what_happened(&e.file)));
    let slot = e.members.0.iter().position(|c| c.id() == leader).expect("the leader is one of ours");
    let log = e.logs[slot].clone();
    let followers: Vec<usize> = (0..e.members.0.len()).filter(|i| *i != slot).collect();
    let revoked = |log: &Path| std::fs::read_to_string(log).unwrap_or_default().matches("event=Revoked").count();
    signal(e.members.0[followers[0]].id(), Signal::KILL);
    e.spawn();
    std::thread::sleep(e.spacing);
    let after_restart = (intervals(&e.file).len(), revoked(&log));
    signal(e.members.0[followers[1]].id(), Signal::TERM);
    std::thread::sleep(e.spacing);
    let before = generations_seen(&log);
    e.spawn();
    // The last change must have reached the leader as a new generation, or
    // the test proved nothing. (Earlier changes may share a rebalance: tansu
    // holds a join while the killed member's session runs out.)
    if last == LastJoin::MustReachTheLeader {
        let limit = budget(e.spacing);
        let seen = wait_until(limit, || (generations_seen(&log) > before).then_some(()));
        assert!(seen.is_some(), "the last join reached the leader within {limit:?}{}", what_happened(&e.file));
    }
    std::thread::sleep(2 * e.t);
    let tokens: Vec<u64> = ticks(&e.file).iter().map(|t| t.2).collect();
    assert!(tokens.windows(2).all(|w| w[0] <= w[1]), "tokens only increase: {tokens:?}");
    crate::kafka_tansu::assert_one_at_a_time(&e.file);
    Churn { leader, changes: leader_changes(&e.file), iv: intervals(&e.file), revoked: revoked(&log), after_restart }
}

#[test]
fn cooperative_followers_join_leave_and_restart_without_stopping_the_leader() {
    let Some(mut e) = election_with_t("coop-churn", "cooperative-sticky", CHURN_T) else { return };
    let c = follower_churn(&mut e, LastJoin::MustReachTheLeader);
    c.report("cooperative-sticky, tansu");
    cooperative_churn_kept_the_leader(&e, &c);
}

/// The claim of the cooperative churn stories: one leader, one CMD.
fn cooperative_churn_kept_the_leader(e: &Election, c: &Churn) {
    let iv = &c.iv;
    let seen = what_happened(&e.file);
    assert_eq!(c.changes, vec![c.leader], "the leader stayed the leader while followers came and went{seen}");
    // The membership proof goes on a connection of its own, so the leader's
    // own held JoinGroups do not lapse its lease (docs/cooperative-rebalance.md,
    // "One coordinator connection"): one CMD, never restarted.
    assert_eq!(iv.len(), 1, "the leader's CMD ran without a break through three follower changes: {iv:?}{seen}");
    assert_eq!(c.revoked, 0, "the leader was never told Revoked{seen}");
}

/// The same churn over TLS: the proof's own connection speaks TLS too
/// (neli/KAFKA.md, "TLS and SASL"), so the leader keeps its lease, and the
/// proof never fell back to librdkafka (which would lapse the lease while
/// the leader's own JoinGroup is held).
#[test]
fn tls_cooperative_followers_join_leave_and_restart_without_stopping_the_leader() {
    let Some(mut e) = tls_election("tls-coop-churn", "cooperative-sticky", ClientAuth::None, CHURN_T) else { return };
    let c = follower_churn(&mut e, LastJoin::MustReachTheLeader);
    c.report("cooperative-sticky, tansu over TLS");
    assert_proof_on_own_connection(&e, &[c.leader]);
    cooperative_churn_kept_the_leader(&e, &c);
}

/// The same with mutual TLS: the proof's own connection presents the client
/// certificate as librdkafka does.
#[test]
fn mtls_cooperative_followers_join_leave_and_restart_without_stopping_the_leader() {
    let Some(mut e) = tls_election("mtls-coop-churn", "cooperative-sticky", ClientAuth::Required, CHURN_T) else {
        return;
    };
    let c = follower_churn(&mut e, LastJoin::MustReachTheLeader);
    c.report("cooperative-sticky, tansu over mutual TLS");
    assert_proof_on_own_connection(&e, &[c.leader]);
    cooperative_churn_kept_the_leader(&e, &c);
}

#[test]
fn range_stops_the_leader_when_followers_come_and_go() {
    // The baseline cooperative-sticky is measured against: eager range
    // revokes partition 0 in every rebalance.
    let Some(mut e) = election("range-churn", "range") else { return };
    let c = follower_churn(&mut e, LastJoin::DoNotWait);
    c.report("range, tansu");
    range_churn_stopped_the_leader(&c);
}

/// The range baseline over TLS, for the figures beside the cooperative ones.
#[test]
fn tls_range_stops_the_leader_when_followers_come_and_go() {
    let Some(mut e) = tls_election("tls-range-churn", "range", ClientAuth::None, T_DUR) else { return };
    let c = follower_churn(&mut e, LastJoin::DoNotWait);
    c.report("range, tansu over TLS");
    range_churn_stopped_the_leader(&c);
}

fn range_churn_stopped_the_leader(c: &Churn) {
    let iv = &c.iv;
    eprintln!("range churn: {} CMD interval(s), leaders {:?}: {iv:?}", iv.len(), c.changes);
    // Eager range revokes at the start of every rebalance, whenever the
    // group forms again: the first change is enough to show it.
    assert!(c.revoked >= 1, "a follower's join or leave revoked the leader's partition (CMD intervals {iv:?})");
}

/// The neli pids that led, in order, each listed once per term run: a
/// leader change is a new entry.
fn leader_changes(file: &Path) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for (neli, ..) in ticks(file) {
        if out.last() != Some(&neli) {
            out.push(neli);
        }
    }
    out
}

#[test]
fn cooperative_paused_leader_that_returns_does_not_take_leadership_back() {
    let Some(e) = election("coop-return", "cooperative-sticky") else { return };
    paused_leader_returns(&e);
}

/// The same over TLS: one leader change for one pause, and both leaders'
/// proofs went on their own connection.
#[test]
fn tls_cooperative_paused_leader_that_returns_does_not_take_leadership_back() {
    let Some(e) = tls_election("tls-coop-return", "cooperative-sticky", ClientAuth::None, T_DUR) else { return };
    let (first, successor) = paused_leader_returns(&e);
    assert_proof_on_own_connection(&e, &[first, successor]);
}

/// SIGSTOP the leader (neli and CMD) past S, SIGCONT it once another
/// member leads: exactly one handover, and the successor's CMD runs on.
/// Returns the two leaders' neli pids.
fn paused_leader_returns(e: &Election) -> (u32, u32) {
    let (neli, cmd) = wait_until(e.formation(), || current_leader(&e.file, None))
        .unwrap_or_else(|| panic!("a first leader within {:?}{}", e.formation(), what_happened(&e.file)));
    pause_leader(&e.file, neli, cmd);
    let paused = Instant::now();
    let (successor, _) = wait_until(e.takeover(), || current_leader(&e.file, Some(neli)))
        .unwrap_or_else(|| panic!("a new leader within {:?} while paused{}", e.takeover(), what_happened(&e.file)));
    eprintln!("CHURN-FIGURES paused leader: a successor led {:?} after the pause", paused.elapsed());
    // Past S, so the coordinator dropped it: a zombie, not a slow member.
    let past_s = S.saturating_sub(paused.elapsed());
    std::thread::sleep(past_s);
    signal(neli, Signal::CONT);
    signal_group(cmd, Signal::CONT);
    // It rejoins (a rebalance) and must get nothing while the successor leads.
    std::thread::sleep(e.spacing + join_wait() + 2 * e.t);
    assert_eq!(
        leader_changes(&e.file),
        vec![neli, successor],
        "exactly one handover: the returning member must not take leadership back{}",
        what_happened(&e.file)
    );
    crate::kafka_tansu::assert_one_at_a_time(&e.file);
    // The returning member's rejoin is a follower change for the successor:
    // its CMD runs on without a break.
    let iv = intervals(&e.file);
    assert_eq!(iv.len(), 2, "the first leader's CMD and the successor's, neither restarted: {iv:?}");
    (neli, successor)
}

#[test]
fn cooperative_leader_that_crashes_and_restarts_costs_one_handover() {
    let Some(e) = election("coop-restart", "cooperative-sticky") else { return };
    crashed_leader_restarts(e);
}

#[test]
fn mock_cooperative_followers_join_leave_and_restart_without_stopping_the_leader() {
    let mut e = mock_election("mock-churn");
    let c = follower_churn(&mut e, LastJoin::MustReachTheLeader);
    c.report("cooperative-sticky, librdkafka mock, proof off");
    cooperative_churn_kept_the_leader(&e, &c);
}

#[test]
fn mock_cooperative_paused_leader_that_returns_does_not_take_leadership_back() {
    paused_leader_returns(&mock_election("mock-return"));
}

#[test]
fn mock_cooperative_leader_that_crashes_and_restarts_costs_one_handover() {
    crashed_leader_restarts(mock_election("mock-restart"));
}

/// SIGKILL the leader, then start a new member in its place: exactly one
/// handover, and the successor's CMD runs on through the new member's join.
fn crashed_leader_restarts(mut e: Election) {
    let (neli, _) = wait_until(e.formation(), || current_leader(&e.file, None))
        .unwrap_or_else(|| panic!("a first leader within {:?}{}", e.formation(), what_happened(&e.file)));
    // Its CMD dies with it.
    signal(neli, Signal::KILL);
    let (successor, _) = wait_until(e.takeover(), || current_leader(&e.file, Some(neli)))
        .unwrap_or_else(|| panic!("a new leader within {:?}{}", e.takeover(), what_happened(&e.file)));
    // The restarted instance is a new member: it joins and gets nothing.
    let slot = e.members.0.iter().position(|c| c.id() == successor).expect("the successor is one of ours");
    let log = e.logs[slot].clone();
    let before = generations_seen(&log);
    e.spawn();
    let limit = budget(rebalance(e.t) + e.t);
    let seen = wait_until(limit, || (generations_seen(&log) > before).then_some(()));
    assert!(
        seen.is_some(),
        "the restarted member's join reached the leader within {limit:?}{}",
        what_happened(&e.file)
    );
    std::thread::sleep(2 * e.t);
    assert_eq!(leader_changes(&e.file), vec![neli, successor], "one handover for one crash{}", what_happened(&e.file));
    crate::kafka_tansu::assert_one_at_a_time(&e.file);
    let iv = intervals(&e.file);
    assert_eq!(iv.len(), 2, "the successor's CMD ran on through the restarted member's join: {iv:?}");
}

mod mock {
    use std::time::Duration;

    use neli::Event;

    use crate::support::{budget, config, retry, start_member, wait_for, wait_stable};

    const T: Duration = Duration::from_millis(1000);
    const S: Duration = Duration::from_millis(3000);

    /// With the proof off, the kept leader's lease rests on its heartbeats
    /// alone, so it survives the mock's long join window.
    fn cfg(bootstrap: &str, group: &str, name: &str) -> neli::Config {
        let mut c = config(bootstrap, group, name, T, S);
        c.assignment = neli::Assignment::CooperativeSticky;
        c.membership_proof = false;
        c
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn cooperative_follower_joins_and_leaves_without_a_revoked_for_the_leader() {
        let mock = neli::kafka::mock::MockKafka::start(1).expect("mock cluster");
        let group = format!("coop-{}", std::process::id());
        mock.create_topic(&format!("{group}.neli"), 1).expect("topic");
        let bootstrap = mock.bootstrap_servers();
        let m0 = start_member(&cfg(&bootstrap, &group, "m0")).await;
        // The mock delays a forming group by 3 s, then holds the join S - 1 s.
        let alone = budget(Duration::from_secs(3) + S + retry(S) + T);
        assert!(wait_stable(std::slice::from_ref(&m0), T, alone).await, "m0 leads alone within {alone:?}");
        let token = m0.bg.as_ref().and_then(|b| b.token()).expect("m0 leads");
        let generation = || m0.bg.as_ref().and_then(|b| b.status().borrow().generation);
        let g0 = generation().expect("m0 is assigned");
        let mut m1 = start_member(&cfg(&bootstrap, &group, "m1")).await;
        // The join (S - 1 s held), a retry, and m0's Assign of the new generation.
        let joined = budget(S + retry(S) + T);
        assert!(
            wait_for(joined, || generation().is_some_and(|g| g > g0)).await,
            "m1's join reached m0 as a new generation within {joined:?}"
        );
        let g1 = generation().expect("assigned");
        if let Some(bg) = m1.bg.take() {
            let _ = bg.close().await;
        }
        assert!(
            wait_for(joined, || generation().is_some_and(|g| g > g1)).await,
            "m1's leave reached m0 as a new generation within {joined:?}"
        );
        let events: Vec<Event> = m0.events.lock().unwrap().iter().map(|(_, e)| *e).collect();
        assert_eq!(events, vec![Event::Acquired { role: 0, token }], "m0 was never stopped and kept its token");
        assert!(m0.is_leader(), "m0 still leads");
        assert!(!m1.is_leader());
    }
}

/// What an existing range group does with a member of the new default
/// (neli/KAFKA.md, "Switching an existing group"): tansu refuses its join
/// with INCONSISTENT_GROUP_PROTOCOL, which neli makes fatal, so it exits 1
/// naming it, never leads, and the range leader's CMD runs on unbroken.
#[test]
fn a_member_of_the_default_strategy_is_refused_by_a_range_group_which_leads_on() {
    let Some(e) = election("mixed", "range") else { return };
    let (leader, _) = wait_until(e.formation(), || current_leader(&e.file, None))
        .unwrap_or_else(|| panic!("a first leader within {:?}{}", e.formation(), what_happened(&e.file)));
    let before = intervals(&e.file);
    // The default assignment: no --assignment flag.
    let started = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_neli"))
        .args(["exec", "--bootstrap-servers", &e.bootstrap, "--group", &e.group, "--heartbeat-timeout", "1s"])
        .args(["--session-timeout", &format!("{}ms", S.as_millis()), "--", "true"])
        .output()
        .expect("run neli exec");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the refused member exits 1: {stderr}");
    assert!(stderr.contains("Inconsistent group protocol"), "it names the refusal: {stderr}");
    // Refused at its first join: within one rebalance, not after retries.
    let limit = budget(rebalance(T_DUR));
    assert!(took < limit, "refused within {limit:?}, took {took:?}: {stderr}");
    std::thread::sleep(2 * e.t);
    assert_eq!(leader_changes(&e.file), vec![leader], "the range leader led on{}", what_happened(&e.file));
    let after = intervals(&e.file);
    assert_eq!(after.len(), before.len(), "its CMD ran on without a break: {before:?} then {after:?}");
    assert_eq!(after.len(), 1, "one CMD interval: {after:?}");
}
