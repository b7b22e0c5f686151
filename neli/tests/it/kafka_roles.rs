//! `neli exec --roles M` end to end on tansu and on librdkafka's mock: one
//! CMD per led role, and a membership change moves only the roles it must
//! (cooperative-sticky, the default), each led again within the failover
//! bound of `Config::explain` plus the broker's rebalance delay, never by two
//! CMDs at once (neli/KAFKA.md, "Many roles: one CMD per led role"). On the
//! mock the membership proof is off and T = 2 s, as in `kafka_coop` (the
//! mock refuses every commit while a rebalance is joining).
//!
//! Every CMD appends `tick <role> <neli pid> <cmd pid> <token> <unix ms>`
//! to one shared file every 100 ms, under `flock`, and only if its token is
//! not older than the newest of its role there (kept in `FILE.max-<role>`,
//! so a tick stays cheap on a busy machine): per role, the file is a
//! downstream resource that rejects older tokens (docs/background.md,
//! Protocol semantics), and its accepted lines give each CMD's interval.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::kafka_tansu::{
    Reap, S, T, alive, freeze_holding_the_tick_lock, start_tansu, tansu_bin, tempdir, unix_ms, wait_until,
};
use crate::support::{Signal, budget, signal, signal_group};

/// T on tansu (`kafka_tansu::T`).
const T_DUR: Duration = Duration::from_secs(1);

/// The CMD of every role: `$1` the tick file, `$2` the role (`{role}`).
const ROLE_CMD: &str = r#"
f=$1; export NELIPID=$PPID ME=$$ ROLE=$2
[ "$ROLE" = "$NELI_ROLE_NUMBER" ] || { echo "{role} $ROLE is not NELI_ROLE_NUMBER $NELI_ROLE_NUMBER" >&2; exit 3; }
trap 'exit 0' TERM
while :; do
  flock "$f.lock" sh -c '
    max=$(cat "$0.max-$ROLE" 2>/dev/null)
    now=$(date +%s%3N)
    if [ "$NELI_TOKEN" -ge "${max:-0}" ]; then
      echo "tick $ROLE $NELIPID $ME $NELI_TOKEN $now" >> "$0"; echo "$NELI_TOKEN" > "$0.max-$ROLE"
    else echo "rejected $ROLE $NELIPID $ME $NELI_TOKEN $now" >> "$0.rejected"; fi' "$f"
  sleep 0.1
done
"#;

/// One accepted tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tick {
    role: u32,
    neli: u32,
    cmd: u32,
    token: u64,
    ms: u64,
}

fn ticks(file: &Path) -> Vec<Tick> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 6 || f[0] != "tick" {
                return None;
            }
            Some(Tick {
                role: f[1].parse().ok()?,
                neli: f[2].parse().ok()?,
                cmd: f[3].parse().ok()?,
                token: f[4].parse().ok()?,
                ms: f[5].parse().ok()?,
            })
        })
        .collect()
}

/// Per role, the newest tick: who acts for it now.
fn holders(file: &Path) -> BTreeMap<u32, Tick> {
    ticks(file).into_iter().map(|t| (t.role, t)).collect()
}

/// Per role and CMD, the first and last accepted tick, in time order.
fn intervals(file: &Path) -> BTreeMap<u32, Vec<(u64, u64, u32)>> {
    let mut by: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for t in ticks(file) {
        let e = by.entry((t.role, t.cmd)).or_insert((t.ms, t.ms));
        e.0 = e.0.min(t.ms);
        e.1 = e.1.max(t.ms);
    }
    let mut out: BTreeMap<u32, Vec<(u64, u64, u32)>> = BTreeMap::new();
    for ((role, cmd), (a, b)) in by {
        out.entry(role).or_default().push((a, b, cmd));
    }
    out.values_mut().for_each(|v| v.sort());
    out
}

/// No role ever had two CMDs acting at once, and each role's accepted
/// tokens only increase.
fn assert_one_per_role_at_a_time(file: &Path) {
    for (role, iv) in intervals(file) {
        for w in iv.windows(2) {
            assert!(w[0].1 < w[1].0, "role {role}: two CMDs acted at once: {:?} overlaps {:?}", w[0], w[1]);
        }
    }
    let mut last: BTreeMap<u32, u64> = BTreeMap::new();
    for t in ticks(file) {
        let prev = last.insert(t.role, t.token).unwrap_or(0);
        assert!(prev <= t.token, "role {}: accepted token {} after {prev}", t.role, t.token);
    }
}

/// `neli exec --roles` running [`ROLE_CMD`], with `extra` before `--`; its
/// stderr in `roles-<n>.stderr` beside `file`.
pub(crate) fn spawn_member(bootstrap: &str, group: &str, file: &Path, roles: u32, extra: &[String]) -> Child {
    static MEMBERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = MEMBERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let log = file.with_file_name(format!("roles-{n}.stderr"));
    let stderr = std::fs::File::create(&log).map(Stdio::from).unwrap_or_else(|_| Stdio::null());
    // `extra` may set its own T; clap refuses a flag given twice.
    let t: &[&str] = if extra.iter().any(|a| a == "--heartbeat-timeout") { &[] } else { &["--heartbeat-timeout", T] };
    Command::new(env!("CARGO_BIN_EXE_neli"))
        .args(["exec", "--bootstrap-servers", bootstrap, "--group", group])
        .args(t)
        .args(["--session-timeout", &format!("{}ms", S.as_millis()), "--stop-timeout", "2s"])
        .args(["--roles", &roles.to_string()])
        .args(extra)
        .args(["--", "sh", "-c", ROLE_CMD, "cmd"])
        .arg(file)
        .arg("{role}")
        .env("RUST_LOG", "neli=info")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("spawn neli exec --roles")
}

/// The group and leadership lines of every member's log beside `file`
/// (`spawn_member` writes them there), for failure messages.
fn member_logs(file: &Path) -> String {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut logs: Vec<_> =
        std::fs::read_dir(dir).map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect()).unwrap_or_default();
    logs.retain(|p| p.to_string_lossy().ends_with(".stderr"));
    logs.sort();
    let mut out = String::new();
    for log in logs {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let wanted = ["assigned", "revoked", "lost", "transition", "WARN", "ERROR", "rebalance"];
        let lines: Vec<&str> = text.lines().filter(|l| wanted.iter().any(|w| l.contains(w))).collect();
        out.push_str(&format!("\n--- {} (last of {} lines):", log.display(), lines.len()));
        for l in &lines[lines.len().saturating_sub(15)..] {
            out.push_str("\n  ");
            out.push_str(l);
        }
    }
    out
}

/// Who holds the tick lock beside `file` (from /proc/locks) and the state of
/// every process, for failure messages: a CMD stopped inside its critical
/// section would stop every other CMD's ticks.
fn lock_holders(file: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let lock = format!("{}.lock", file.display());
    let Ok(meta) = std::fs::metadata(&lock) else { return format!("\n--- no lock file {lock}") };
    let suffix = format!(":{} ", meta.ino());
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let mut out = format!("\n--- /proc/locks on {lock} (inode {}):", meta.ino());
    for l in locks.lines().filter(|l| l.contains(&suffix)) {
        out.push_str(&format!("\n  {l}"));
    }
    let ps = Command::new("ps").args(["-eo", "pid,ppid,pgid,stat,wchan:20,args"]).output();
    let ps = ps.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    out.push_str("\n--- processes:");
    for l in ps.lines().filter(|l| l.contains("flock") || l.contains("sh -c") || l.contains("neli")) {
        out.push_str(&format!("\n  {l}"));
    }
    out
}

/// Every role led, by the same CMDs for `quiet` (no move under way), each
/// still acting: a CMD that stopped ticking stays the role's newest holder
/// in the file, so a role counts only while its newest tick is recent
/// (ticks come every 100 ms).
fn settled(file: &Path, roles: u32, quiet: Duration, limit: Duration) -> BTreeMap<u32, Tick> {
    let mut seen: Option<(BTreeMap<u32, u32>, Instant)> = None;
    wait_until(limit, || {
        let now = holders(file);
        let cmds: BTreeMap<u32, u32> = now.iter().map(|(r, t)| (*r, t.cmd)).collect();
        let at = unix_ms();
        if cmds.len() != roles as usize || now.values().any(|t| at.saturating_sub(t.ms) > 1_000) {
            seen = None;
            return None;
        }
        match &seen {
            Some((before, since)) if *before == cmds => (since.elapsed() >= quiet).then_some(now),
            _ => {
                seen = Some((cmds, Instant::now()));
                None
            }
        }
    })
    .unwrap_or_else(|| {
        panic!("every one of {roles} roles led, unchanged for {quiet:?}, within {limit:?}: {:?}", holders(file))
    })
}

/// The broker's pause on a rebalance: tansu holds a JoinGroup until S/2 has
/// passed, looking once a second; the mock holds it S - 1 s, after finding
/// an expired session within a second.
#[derive(Clone, Copy)]
pub(crate) enum On {
    Tansu,
    Mock,
    /// The mock, non-exclusive (`--non-exclusive`, T = 4 s > S): a role
    /// may have two leaders for a while, never none for long.
    MockNonExclusive,
}

impl On {
    /// The flags of every member on this broker.
    fn args(self) -> Vec<String> {
        match self {
            On::Tansu => Vec::new(),
            On::Mock => ["--heartbeat-timeout", "2s", "--no-membership-proof"].map(String::from).to_vec(),
            On::MockNonExclusive => {
                ["--heartbeat-timeout", "4s", "--no-membership-proof", "--non-exclusive"].map(String::from).to_vec()
            }
        }
    }

    fn t(self) -> Duration {
        match self {
            On::Tansu => T_DUR,
            On::Mock => Duration::from_secs(2),
            On::MockNonExclusive => Duration::from_secs(4),
        }
    }

    fn exclusive(self) -> bool {
        !matches!(self, On::MockNonExclusive)
    }

    /// `Config::explain`'s failover bound for these members, plus the
    /// broker's rebalance delay, within the machine's budget.
    pub(crate) fn failover(self) -> Duration {
        let config = neli::Config::builder()
            .bootstrap_servers("127.0.0.1:1")
            .group("bound")
            .mode(neli::Mode::MultiRole { roles: 4, partitions: 4, exclusive: self.exclusive() })
            .heartbeat_timeout(self.t())
            .session_timeout(S)
            .build()
            .expect("the suite's configuration is valid");
        let delay = match self {
            On::Tansu => S / 2 + Duration::from_secs(1),
            On::Mock | On::MockNonExclusive => Duration::from_secs(1) + S - Duration::from_secs(1),
        };
        budget(config.explain().expect("valid").failover + delay)
    }

    /// Members join one after another, each join a rebalance that may move
    /// roles: one failover per member, and one more to settle.
    fn formation(self, members: usize) -> Duration {
        self.failover() * (members as u32 + 1)
    }
}

struct Election {
    /// tansu's process or the in-process mock cluster, kept alive.
    _broker: Box<dyn std::any::Any>,
    on: On,
    members: Reap,
    file: std::path::PathBuf,
    _dir: tempdir::Dir,
    bootstrap: String,
    group: String,
}

fn election(name: &str, on: On, members: usize, roles: u32) -> Option<Election> {
    let dir = tempdir::Dir::new(name);
    let file = dir.0.join("roles.log");
    std::fs::write(&file, "").unwrap();
    let group = format!("{name}-{}", std::process::id());
    let (broker, bootstrap): (Box<dyn std::any::Any>, String) = match on {
        On::Tansu => {
            let tansu = start_tansu(&tansu_bin()?);
            let bootstrap = tansu.bootstrap.clone();
            (Box::new(tansu), bootstrap)
        }
        On::Mock | On::MockNonExclusive => {
            let mock = neli::kafka::mock::MockKafka::start(1).expect("mock cluster");
            mock.create_topic(&format!("{group}.neli"), roles).expect("topic");
            let bootstrap = mock.bootstrap_servers();
            (Box::new(mock), bootstrap)
        }
    };
    let args = on.args();
    let members = Reap((0..members).map(|_| spawn_member(&bootstrap, &group, &file, roles, &args)).collect());
    Some(Election { _broker: broker, on, members, file, _dir: dir, bootstrap, group })
}

/// SIGKILL of a member that leads roles: its CMDs die with it, exactly its
/// roles are led again (each within the takeover bound), the others keep
/// their CMD throughout; one CMD per role at a time.
pub(crate) fn sigkill_moves_exactly_the_killed_members_roles(file: &Path, roles: u32, on: On, members: usize) {
    let before = settled(file, roles, 2 * S, on.formation(members));
    let victim = before.values().next().expect("a holder").neli;
    let moved: Vec<u32> = before.values().filter(|t| t.neli == victim).map(|t| t.role).collect();
    signal(victim, Signal::KILL);
    for t in before.values().filter(|t| t.neli == victim) {
        assert!(wait_until(budget(Duration::ZERO), || (!alive(t.cmd)).then_some(())).is_some(), "CMD {} died", t.cmd);
    }
    let limit = on.failover();
    let after = wait_until(limit, || {
        let now = holders(file);
        moved.iter().all(|r| now.get(r).is_some_and(|t| t.neli != victim)).then_some(now)
    })
    .unwrap_or_else(|| panic!("roles {moved:?} led again within {limit:?}: {:?}", holders(file)));
    std::thread::sleep(2 * S);
    let after_quiet = holders(file);
    let who = |h: &BTreeMap<u32, Tick>| h.iter().map(|(r, t)| format!("{r}:{}/{}", t.neli, t.cmd)).collect::<Vec<_>>();
    eprintln!("killed {victim} leading {moved:?}; roles before {:?}, after {:?}", who(&before), who(&after_quiet));
    for (role, t) in &before {
        if moved.contains(role) {
            assert_ne!(after[role].neli, victim, "role {role} moved off the killed member");
        } else {
            assert_eq!(after_quiet[role].cmd, t.cmd, "role {role} was not the killed member's: it kept its CMD");
        }
    }
    // Non-exclusive mode allows two leaders of a role for a while.
    if on.exclusive() {
        assert_one_per_role_at_a_time(file);
    }
}

#[test]
fn sigkill_of_a_member_moves_exactly_its_roles() {
    let Some(e) = election("roles-kill", On::Tansu, 3, 4) else { return };
    sigkill_moves_exactly_the_killed_members_roles(&e.file, 4, e.on, 3);
}

#[test]
fn mock_sigkill_of_a_member_moves_exactly_its_roles() {
    let Some(e) = election("roles-mock-kill", On::Mock, 3, 4) else { return };
    sigkill_moves_exactly_the_killed_members_roles(&e.file, 4, e.on, 3);
}

#[test]
fn mock_non_exclusive_roles_of_a_sigkilled_member_are_led_again() {
    let Some(e) = election("roles-mock-nonexclusive", On::MockNonExclusive, 3, 4) else { return };
    sigkill_moves_exactly_the_killed_members_roles(&e.file, 4, e.on, 3);
}

/// Two roles over three members: one member leads nothing; it stops
/// (SIGTERM: it leaves the group) and a new member joins. Neither
/// rebalance moves or interrupts a role.
fn follower_restart_moves_no_role(mut e: Election) {
    let before = settled(&e.file, 2, 2 * S, e.on.formation(3));
    let leading: Vec<u32> = before.values().map(|t| t.neli).collect();
    let follower = e.members.0.iter_mut().find(|c| !leading.contains(&c.id())).expect("a member leading no role");
    signal(follower.id(), Signal::TERM);
    let _ = follower.wait();
    e.members.0.push(spawn_member(&e.bootstrap, &e.group, &e.file, 2, &e.on.args()));
    // Two rebalances (the leave, the join), each within a failover bound.
    std::thread::sleep(2 * e.on.failover());
    let after = holders(&e.file);
    let iv = intervals(&e.file);
    for (role, t) in &before {
        assert_eq!(after[role].cmd, t.cmd, "role {role} kept its CMD through the follower's restart: {iv:?}");
        let others: Vec<_> = iv[role].iter().filter(|i| i.2 != t.cmd && i.0 > before[role].ms).collect();
        assert!(others.is_empty(), "role {role}: no other CMD acted after the group settled: {iv:?}");
        // Still acting: its newest tick is recent (ticks every 100 ms).
        let newest = ticks(&e.file).iter().filter(|x| x.role == *role).map(|x| x.ms).max().unwrap_or(0);
        assert!(
            unix_ms().saturating_sub(newest) < budget(Duration::from_millis(500)).as_millis() as u64,
            "role {role} still acting"
        );
    }
    // No pause either. A revoke and re-acquire stops CMD for at least the
    // broker's join hold (S/2 on tansu, S - 1 s on the mock), while a CMD
    // that runs on ticks every 100 ms; S/2 tells the two apart with room
    // for a busy machine.
    for role in before.keys() {
        let ms: Vec<u64> =
            ticks(&e.file).iter().filter(|x| x.role == *role && x.ms >= before[role].ms).map(|x| x.ms).collect();
        let worst = ms.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        assert!(worst < (S / 2).as_millis() as u64, "role {role} paused {worst} ms: it was revoked and led again");
    }
    assert_one_per_role_at_a_time(&e.file);
}

#[test]
fn a_follower_restart_moves_no_role_under_cooperative_sticky() {
    let Some(e) = election("roles-follower", On::Tansu, 3, 2) else { return };
    follower_restart_moves_no_role(e);
}

#[test]
fn mock_a_follower_restart_moves_no_role_under_cooperative_sticky() {
    let Some(e) = election("roles-mock-follower", On::Mock, 3, 2) else { return };
    follower_restart_moves_no_role(e);
}

/// A member leading roles is frozen with its CMDs past its session: its
/// roles move; resumed, its lease long over, neli kills its CMDs at once
/// (fenced), and no role ever had two CMDs acting.
fn stopped_members_roles_move_without_overlap(e: Election) {
    let before = settled(&e.file, 4, 2 * S, e.on.formation(3));
    let victim = before.values().next().expect("a holder").neli;
    let cmds: Vec<u32> = before.values().filter(|t| t.neli == victim).map(|t| t.cmd).collect();
    let moved: Vec<u32> = before.values().filter(|t| t.neli == victim).map(|t| t.role).collect();
    // A CMD stopped holding the tick lock would wedge every other CMD's ticks.
    freeze_holding_the_tick_lock(&e.file, &cmds, &[victim]);
    let limit = e.on.failover();
    wait_until(limit, || {
        let now = holders(&e.file);
        moved.iter().all(|r| now.get(r).is_some_and(|t| t.neli != victim)).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "roles {moved:?} led by others within {limit:?}: {:?}{}{}",
            holders(&e.file),
            member_logs(&e.file),
            lock_holders(&e.file)
        )
    });
    std::thread::sleep(e.on.t());
    for cmd in &cmds {
        signal_group(*cmd, Signal::CONT);
    }
    signal_group(victim, Signal::CONT);
    signal(victim, Signal::CONT);
    let stop = budget(e.on.t());
    for cmd in &cmds {
        assert!(wait_until(stop, || (!alive(*cmd)).then_some(())).is_some(), "CMD {cmd} stopped within {stop:?}");
    }
    std::thread::sleep(2 * e.on.t());
    assert_one_per_role_at_a_time(&e.file);
}

#[test]
fn a_stopped_members_roles_move_and_its_cmds_are_stopped_on_resume_without_overlap() {
    let Some(e) = election("roles-pause", On::Tansu, 3, 4) else { return };
    stopped_members_roles_move_without_overlap(e);
}

#[test]
fn mock_a_stopped_members_roles_move_and_its_cmds_are_stopped_on_resume_without_overlap() {
    let Some(e) = election("roles-mock-pause", On::Mock, 3, 4) else { return };
    stopped_members_roles_move_without_overlap(e);
}

/// The CMD of [`a_fenced_roles_cmd_is_killed_while_another_roles_cmd_is_still_stopping`]:
/// it ignores SIGTERM (noting it in `$1/term-N`) and writes its pid to `$1/pid-N`.
const STUBBORN_CMD: &str = r#"trap 'echo term > "$1/term-$NELI_ROLE_NUMBER"' TERM
echo $$ > "$1/pid-$NELI_ROLE_NUMBER.tmp"; mv "$1/pid-$NELI_ROLE_NUMBER.tmp" "$1/pid-$NELI_ROLE_NUMBER"
while :; do sleep 0.1; done"#;

/// Handlers run one at a time, so a role's `Fenced` can come while another
/// role's `Revoked` handler still waits for its CMD to stop
/// (`--stop-timeout`). The fenced role's CMD is killed at once all the same:
/// a member leads two roles with CMDs that ignore SIGTERM; a second member
/// joins and takes one role (its CMD gets SIGTERM and a long stop timeout);
/// then the first member's neli is stopped past T but within S, so on
/// resume its other lease has ended: that role's CMD must die within T,
/// long before the first CMD's stop timeout.
#[test]
fn mock_a_fenced_roles_cmd_is_killed_while_another_roles_cmd_is_still_stopping() {
    let t = On::Mock.t();
    let s = Duration::from_secs(6);
    let stop_timeout = Duration::from_secs(60);
    let dir = tempdir::Dir::new("roles-mock-fence-while-stopping");
    let group = format!("roles-fence-{}", std::process::id());
    let mock = neli::kafka::mock::MockKafka::start(1).expect("mock cluster");
    mock.create_topic(&format!("{group}.neli"), 2).expect("topic");
    let spawn = |n: usize| {
        let stderr = std::fs::File::create(dir.0.join(format!("m{n}.stderr"))).map(Stdio::from).unwrap();
        Command::new(env!("CARGO_BIN_EXE_neli"))
            .args(["exec", "--bootstrap-servers", &mock.bootstrap_servers(), "--group", &group, "--roles", "2"])
            .args(["--heartbeat-timeout", &format!("{}ms", t.as_millis())])
            .args(["--session-timeout", &format!("{}ms", s.as_millis()), "--no-membership-proof"])
            .args(["--stop-timeout", &format!("{}s", stop_timeout.as_secs())])
            .args(["--", "sh", "-c", STUBBORN_CMD, "cmd"])
            .arg(&dir.0)
            .env("RUST_LOG", "neli=info")
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn neli exec --roles 2")
    };
    let first = spawn(0);
    let pid_of =
        |role: u32| std::fs::read_to_string(dir.0.join(format!("pid-{role}"))).ok()?.trim().parse::<u32>().ok();
    let lead = budget(Duration::from_secs(3) + s + t);
    let pids = wait_until(lead, || Some([pid_of(0)?, pid_of(1)?]))
        .unwrap_or_else(|| panic!("the first member runs both roles' CMDs within {lead:?}"));
    let _members = Reap(vec![first, spawn(1)]);
    let term = |role: u32| dir.0.join(format!("term-{role}")).exists();
    let limit = On::Mock.failover() + budget(s);
    let revoked = wait_until(limit, || (0..2).find(|r| term(*r)))
        .unwrap_or_else(|| panic!("the second member takes a role within {limit:?}: no CMD got SIGTERM"));
    let other = 1 - revoked;
    let neli = _members.0[0].id();
    signal(neli, Signal::STOP);
    std::thread::sleep(t + t / 2);
    signal(neli, Signal::CONT);
    let within = budget(t);
    assert!(
        wait_until(within, || (!alive(pids[other as usize])).then_some(())).is_some(),
        "role {other}'s CMD killed within {within:?} of its fence, while role {revoked}'s still stops"
    );
    assert!(alive(pids[revoked as usize]), "role {revoked}'s CMD is still within its {stop_timeout:?} stop timeout");
}
