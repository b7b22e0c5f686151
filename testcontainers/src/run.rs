//! Playing a scenario against the real broker: the fault plan (which
//! scenario faults have a real mechanism, and why the others are skipped),
//! member processes, the timeline, and the translation of the members' JSON
//! logs into a `neli_sim::record::Log` for `neli_sim::oracle::judge`.

use rustix::process::{Pid, Signal};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use neli::{Event, Token};
use neli_sim::clock::ClockModel;
use neli_sim::oracle;
use neli_sim::record::{EventObs, FaultObs, LeaseObs, Log, WriteObs, format_line};
use neli_sim::scenario::{Fault, ModeName, Variant};
use neli_sim::{Figures, Scenario};
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::broker::Broker;
use crate::budget::Budget;
use crate::member_log::{Entry, EventKind, Logged};
use crate::mono_ms;
use crate::run_errors::{NotStable, PlanError, RunError};

/// What happens at one instant of a real run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepKind {
    /// SIGSTOP, SIGCONT after `ms`.
    Pause {
        target: String,
        ms: u64,
    },
    /// SIGKILL; a new incarnation starts after `restart_ms` if given.
    Crash {
        target: String,
        restart_ms: Option<u64>,
    },
    /// SIGTERM: the member closes gracefully.
    Close {
        target: String,
    },
    /// SIGUSR1: the member resigns.
    Resign {
        target: String,
    },
    /// `docker pause` of the broker for `ms`.
    BrokerPause {
        ms: u64,
    },
    /// `docker network disconnect` of the broker for `ms`.
    BrokerDisconnect {
        ms: u64,
    },
    /// `docker kill` of the broker, `docker start` after `ms` (memory storage: state lost).
    BrokerCrash {
        ms: u64,
    },
    /// A stranger produces `count` records to the election partition:
    /// garbage bytes or well-formed heartbeats of a member that is not in the group.
    ForeignWriter {
        partition: u32,
        count: u32,
        garbage: bool,
    },
    // Follow-ups scheduled by the steps above.
    Cont(usize),
    Restart(usize),
    BrokerUnpause,
    BrokerReconnect,
    BrokerStart,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// ms after the run's fault origin (see [`RealRun::play`]).
    pub at: u64,
    pub kind: StepKind,
}

/// The settings of `s` that a real broker and `neli-tc-member` can play,
/// or the first one they cannot, named.
fn runs_for_real(s: &Scenario) -> Result<(), PlanError> {
    let e = &s.election;
    if s.random.is_some() {
        return Err(PlanError::Setting("random faults are drawn by neli-lab's strategies, not replayed here"));
    }
    if e.variant != Variant::Recommended || !e.membership_proof {
        return Err(PlanError::Setting(
            "an unsafe variant or the membership proof off (the real suite runs the recommended configuration)",
        ));
    }
    if e.grace.ms() != 0 || e.heartbeat_interval.is_some() || e.max_poll_interval.is_some() {
        return Err(PlanError::Setting(
            "grace/heartbeat_interval/max_poll_interval overrides are not passed to neli-tc-member",
        ));
    }
    if e.revoked_work.is_some() {
        return Err(PlanError::Setting("revoked_work: neli-tc-member's Revoked handler does no timed work"));
    }
    if e.app_work.is_some() || e.app_asks_at_lease_end {
        return Err(PlanError::Setting(
            "app_work/app_asks_at_lease_end: neli-tc-member's application asks once per pulse",
        ));
    }
    if e.app_loop != neli_sim::scenario::AppLoop::Pulse {
        return Err(PlanError::Setting("app_loop = background: neli-tc-member runs its own pulse loop"));
    }
    if !s.cluster.revoked_barrier || !s.cluster.commit_generation_check {
        return Err(PlanError::Setting(
            "cluster.revoked_barrier or cluster.commit_generation_check = false: a real coordinator cannot be \
             made unsafe (simulator only)",
        ));
    }
    if s.cluster.brokers != 1 {
        return Err(PlanError::Brokers(s.cluster.brokers));
    }
    Ok(())
}

/// The real steps of a scenario file, or why it cannot run on a real broker.
/// Times are relative to the scenario's first fault.
pub fn plan(s: &Scenario) -> Result<Vec<Step>, PlanError> {
    runs_for_real(s)?;
    let first = s.timed_faults().map(|f| f.at.ms()).min().unwrap_or(0);
    let mut steps = Vec::new();
    for f in s.timed_faults() {
        if let Some(on) = f.on {
            return Err(PlanError::Aimed(f.fault.kind().to_string(), on.to_string()));
        }
        let at = f.at.ms() - first;
        let kind = match f.fault {
            Fault::Pause { target, duration } => StepKind::Pause { target: target.to_string(), ms: duration.ms() },
            Fault::Crash { target, duration } => {
                StepKind::Crash { target: target.to_string(), restart_ms: duration.map(|d| d.ms()) }
            }
            Fault::Close { target } => StepKind::Close { target: target.to_string() },
            Fault::ForeignWriter { misplaced: true, .. } => {
                return Err(PlanError::Setting(
                    "foreign-writer with misplaced = true: the real-broker suite's writer knows no member names \
                            or role layout (simulator only)",
                ));
            }
            Fault::ForeignWriter { partition, count, garbage, .. } => {
                StepKind::ForeignWriter { partition, count, garbage }
            }
            Fault::Resign { target } => StepKind::Resign { target: target.to_string() },
            Fault::BrokerCrash { lose_state: true, duration, .. } => {
                StepKind::BrokerCrash { ms: duration.map_or(0, |d| d.ms()) }
            }
            Fault::BrokerCrash { lose_state: false, .. } => {
                return Err(PlanError::Setting(
                    "broker-crash without lose_state = true: tansu's memory storage always loses state",
                ));
            }
            Fault::Partition { .. } | Fault::OneWay { .. } | Fault::IsolateCoordinator { .. } => {
                return Err(PlanError::OneMembersLink(f.fault.kind().to_string()));
            }
            Fault::ClockStep { .. } | Fault::ClockDrift { .. } => {
                return Err(PlanError::SharedClock(f.fault.kind().to_string()));
            }
            _ => return Err(PlanError::NoMechanism(f.fault.kind().to_string())),
        };
        steps.push(Step { at, kind });
    }
    steps.sort_by_key(|s| s.at);
    Ok(steps)
}

/// One line a member printed, on the run's clock.
#[derive(Debug, Clone)]
struct Line {
    at: u64,
    member: String,
    what: Logged,
}

struct Slot {
    name: String,
    incarnations: u32,
    child: Option<Child>,
    pid: u32,
    /// Crashed without restart, or closed.
    gone: bool,
}

/// What a finished real run reports.
#[derive(Debug)]
pub struct RealRunReport {
    pub scenario: String,
    pub figures: Figures,
    pub violations: Vec<String>,
    pub trace: Vec<String>,
    /// ms from launching the members until the group was stable with a leader.
    pub formed_ms: u64,
    /// ms from the last fault step until the group was first found whole
    /// again (every live member in a Stable group, one leading), polled every
    /// 100 ms through the scenario's tail; or, if that never happened in the
    /// tail, until the recovery wait after it found it.
    pub recovered_ms: u64,
    /// Per member incarnation, the highest `log_epoch` it published: how
    /// many lost election logs it noticed (tokens restart with each).
    pub log_epochs: BTreeMap<String, u64>,
    /// Every role's hold intervals, as the oracles judged them.
    pub spans: Vec<oracle::LeaseSpan>,
    /// The faults played, on the run's clock (a crash with a restart lasts
    /// until the restart).
    pub faults: Vec<FaultObs>,
}

/// Members, broker and recording of one real run.
pub struct RealRun<'a> {
    s: &'a Scenario,
    broker: &'a Broker,
    member_bin: PathBuf,
    t0: u64,
    group: String,
    lines: Arc<Mutex<Vec<Line>>>,
    slots: Vec<Slot>,
    faults: Vec<FaultObs>,
    trace: Vec<(u64, String, String)>,
    /// Run times at which the broker lost its state.
    state_losses: Vec<u64>,
    admin: BaseConsumer,
    log_dir: PathBuf,
    require_recovery: bool,
    budget: Budget,
}

impl<'a> RealRun<'a> {
    pub fn new(s: &'a Scenario, broker: &'a Broker, member_bin: &Path) -> Result<RealRun<'a>, RunError> {
        let t0 = mono_ms();
        let admin: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &broker.bootstrap)
            .set("group.id", "neli-tc-observer")
            .set("log_level", "0")
            .create()
            .map_err(RunError::Observer)?;
        let log_dir = std::env::temp_dir().join(format!("neli-tc-{}-{}-{t0}", std::process::id(), s.name));
        std::fs::create_dir_all(&log_dir).map_err(|error| RunError::LogDir { path: log_dir.clone(), error })?;
        Ok(RealRun {
            s,
            broker,
            member_bin: member_bin.to_owned(),
            t0,
            group: format!("tc-{}-{t0}", s.name),
            lines: Arc::default(),
            slots: Vec::new(),
            faults: Vec::new(),
            trace: Vec::new(),
            state_losses: Vec::new(),
            admin,
            log_dir,
            require_recovery: true,
            budget: Budget::for_scenario(s, broker.rebalance_pause),
        })
    }

    /// Ends the run after the timeline without waiting for a stable group
    /// (for faults after which the members are known not to recover).
    pub fn without_recovery(mut self) -> Self {
        self.require_recovery = false;
        self
    }

    fn now(&self) -> u64 {
        mono_ms().saturating_sub(self.t0)
    }

    fn note(&mut self, host: &str, text: String) {
        let now = self.now();
        self.trace.push((now, host.to_owned(), text));
    }

    /// Launches every member, waits for a stable group with a leader, plays
    /// `steps` from 2 s after that, runs `tail` ms past the first step's
    /// origin, waits for recovery and judges the recording.
    pub async fn play(mut self, steps: Vec<Step>, tail: u64) -> Result<RealRunReport, RunError> {
        let result = self.play_inner(steps, tail).await;
        self.stop_all().await;
        match result {
            Ok((formed_ms, recovered_ms)) => Ok(self.judge(formed_ms, recovered_ms)),
            Err(e) => {
                let out = self.judge(0, 0);
                Err(RunError::Judged {
                    error: Box::new(e),
                    trace: out.trace.join("\n"),
                    figures: format!("{:?}", out.figures),
                })
            }
        }
    }

    async fn play_inner(&mut self, steps: Vec<Step>, tail: u64) -> Result<(u64, u64), RunError> {
        let logs = format!("member stderr logs in {}", self.log_dir.display());
        self.note("real", logs);
        for i in 0..self.s.election.members as usize {
            self.slots.push(Slot { name: String::new(), incarnations: 0, child: None, pid: 0, gone: false });
            self.spawn(i)?;
        }
        let budget = self.budget;
        self.note("real", format!("timing budget from {budget}"));
        let formed_ms = self.wait_stable("formation", budget.formation()).await?;
        let origin = self.now() + 2000;
        let mut queue: Vec<(u64, u64, StepKind)> =
            steps.into_iter().enumerate().map(|(i, s)| (origin + s.at, i as u64, s.kind)).collect();
        let mut order = queue.len() as u64;
        let mut last_step = origin;
        while !queue.is_empty() {
            queue.sort_by_key(|(at, o, _)| (*at, *o));
            let (at, _, kind) = queue.remove(0);
            self.sleep_until(at).await;
            last_step = self.now();
            if let Some((delay, next)) = self.apply(kind).await? {
                order += 1;
                queue.push((at + delay, order, next));
            }
        }
        // Through the tail, note the first instant the group is whole again
        // (every live member in a Stable group, one of them leading): that is
        // the recovery time; the wait after the tail then requires it to hold.
        let mut first_whole = None;
        while self.now() < origin + tail {
            if first_whole.is_none() && self.group_whole().await.is_some() {
                first_whole = Some(self.now());
                self.note("real", "group whole again (every live member in a Stable group, one leading)".into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let recovered =
            if self.require_recovery { self.wait_stable("recovery", budget.recovery()).await? } else { self.now() };
        Ok((formed_ms, first_whole.unwrap_or(recovered).saturating_sub(last_step)))
    }

    /// Every live member in a Stable group (as the broker describes it) and
    /// one of them holding role 0: that member's slot.
    async fn group_whole(&mut self) -> Option<usize> {
        let live = self.slots.iter().filter(|s| !s.gone).count();
        let described = self.describe_group().await;
        let leader = self.leader(self.now())?;
        matches!(&described, Some((state, members)) if state == "Stable" && *members == live).then_some(leader)
    }

    async fn sleep_until(&self, at: u64) {
        let now = self.now();
        if at > now {
            tokio::time::sleep(Duration::from_millis(at - now)).await;
        }
    }

    fn spawn(&mut self, idx: usize) -> Result<(), RunError> {
        let e = &self.s.election;
        let slot = &mut self.slots[idx];
        let name = if slot.incarnations == 0 { format!("m{idx}") } else { format!("m{idx}.{}", slot.incarnations) };
        slot.incarnations += 1;
        let stderr = std::fs::File::create(self.log_dir.join(format!("{name}.stderr"))).map_err(RunError::MemberLog)?;
        let mut child = Command::new(&self.member_bin)
            .args([
                self.broker.bootstrap.as_str(),
                self.group.as_str(),
                name.as_str(),
                &e.heartbeat_timeout.ms().to_string(),
                &e.session_timeout.ms().to_string(),
            ])
            .args(member_options(e))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| RunError::Spawn { bin: self.member_bin.clone(), error })?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (lines, t0, member) = (self.lines.clone(), self.t0, name.clone());
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(text)) = reader.next_line().await {
                // Anything else on stdout (a stray print) is not a log line.
                let Ok(Entry { t, mut what }) = serde_json::from_str::<Entry>(&text) else { continue };
                if let Logged::Lease { leading, .. } = &mut what {
                    for (_, _, until) in leading {
                        *until = until.saturating_sub(t0);
                    }
                }
                lines.lock().expect("lines lock").push(Line { at: t.saturating_sub(t0), member: member.clone(), what });
            }
        });
        slot.pid = child.id().unwrap_or(0);
        slot.child = Some(child);
        slot.name = name.clone();
        slot.gone = false;
        self.note(&name, "started".into());
        Ok(())
    }

    /// The incarnation holding role 0 at run time `now`, judged from its
    /// latest published lease.
    fn leader(&self, now: u64) -> Option<usize> {
        let (log, clocks) = self.log_so_far(now);
        self.slots.iter().position(|slot| !slot.gone && log.holds_role0(&clocks, &slot.name, now))
    }

    /// The run's log up to `now`, as the oracles will see it, and the
    /// members' clocks (all the host's one clock): "who leads" is answered
    /// by the same `Log::holds_role0` as in the simulator.
    fn log_so_far(&self, now: u64) -> (Log, Vec<ClockModel>) {
        let mut lines = self.lines.lock().expect("lines lock").clone();
        lines.sort_by_key(|l| l.at);
        let log = build_log(&lines, &self.faults, &self.state_losses, &self.slots, now);
        (log, vec![ClockModel::new(0); self.slots.len()])
    }

    fn resolve(&self, target: &str) -> Option<usize> {
        if target == "leader" {
            self.leader(self.now())
        } else {
            target.strip_prefix('m').and_then(|i| i.parse().ok()).filter(|i: &usize| *i < self.slots.len())
        }
    }

    /// Records a fault that starts now and lasts `ms`.
    fn record_fault(&mut self, kind: &str, slot: Option<usize>, ms: u64) {
        let now = self.now();
        let member = slot.map(|i| self.slots[i].name.clone());
        let held = member.as_ref().is_some_and(|m| {
            let (log, clocks) = self.log_so_far(now);
            log.holds_role0(&clocks, m, now)
        });
        self.faults.push(FaultObs {
            at: now,
            until: now + ms,
            kills: kind == "crash",
            member: member.clone(),
            touches: member.iter().cloned().collect(),
            held_role0: held,
        });
        let who = member.unwrap_or_else(|| "b0".into());
        self.note("real", format!("fault {kind} on {who}{}", if held { " (leader)" } else { "" }));
    }

    /// `sig` to member `idx`'s process, a child this run spawned and has
    /// not reaped (pid 0: none running).
    fn signal(&self, idx: usize, sig: Signal) {
        if let Some(pid) = i32::try_from(self.slots[idx].pid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, sig);
        }
    }

    /// Carries out one step; returns the step that ends it (a resume, a
    /// restart) and when, if it has one.
    async fn apply(&mut self, kind: StepKind) -> Result<Option<(u64, StepKind)>, RunError> {
        match kind {
            StepKind::Pause { .. }
            | StepKind::Cont(_)
            | StepKind::Crash { .. }
            | StepKind::Restart(_)
            | StepKind::Close { .. }
            | StepKind::Resign { .. } => self.apply_to_member(kind).await,
            _ => self.apply_to_broker(kind).await,
        }
    }

    /// A step on a member process (signals).
    async fn apply_to_member(&mut self, kind: StepKind) -> Result<Option<(u64, StepKind)>, RunError> {
        Ok(match kind {
            StepKind::Pause { target, ms } => {
                let Some(i) = self.resolve(&target) else { return self.no_target("pause", &target) };
                self.record_fault("pause", Some(i), ms);
                self.signal(i, Signal::STOP);
                Some((ms, StepKind::Cont(i)))
            }
            StepKind::Cont(i) => {
                self.signal(i, Signal::CONT);
                let name = self.slots[i].name.clone();
                self.note(&name, "SIGCONT".into());
                None
            }
            StepKind::Crash { target, restart_ms } => {
                let Some(i) = self.resolve(&target) else { return self.no_target("crash", &target) };
                self.record_fault("crash", Some(i), restart_ms.unwrap_or(0));
                self.signal(i, Signal::KILL);
                if let Some(mut c) = self.slots[i].child.take() {
                    let _ = c.wait().await;
                }
                self.slots[i].gone = true;
                restart_ms.map(|ms| (ms, StepKind::Restart(i)))
            }
            StepKind::Restart(i) => {
                self.spawn(i)?;
                None
            }
            StepKind::Close { target } => {
                let Some(i) = self.resolve(&target) else { return self.no_target("close", &target) };
                self.record_fault("close", Some(i), 0);
                self.signal(i, Signal::TERM);
                self.slots[i].gone = true;
                None
            }
            StepKind::Resign { target } => {
                let Some(i) = self.resolve(&target) else { return self.no_target("resign", &target) };
                self.record_fault("resign", Some(i), 0);
                self.signal(i, Signal::USR1);
                None
            }
            _ => unreachable!("apply routes only member steps here"),
        })
    }

    /// A step on the broker container or the topic.
    async fn apply_to_broker(&mut self, kind: StepKind) -> Result<Option<(u64, StepKind)>, RunError> {
        Ok(match kind {
            StepKind::BrokerPause { ms } => {
                self.record_fault("broker-pause", None, ms);
                self.broker.pause().await?;
                Some((ms, StepKind::BrokerUnpause))
            }
            StepKind::BrokerUnpause => {
                self.broker.unpause().await?;
                self.note("b0", "unpaused".into());
                None
            }
            StepKind::BrokerDisconnect { ms } => {
                self.record_fault("broker-disconnect", None, ms);
                self.broker.disconnect().await?;
                Some((ms, StepKind::BrokerReconnect))
            }
            StepKind::BrokerReconnect => {
                self.broker.reconnect().await?;
                self.note("b0", "reconnected".into());
                None
            }
            StepKind::BrokerCrash { ms } => {
                self.record_fault("broker-crash", None, ms);
                self.broker.kill().await?;
                let now = self.now();
                self.state_losses.push(now);
                Some((ms, StepKind::BrokerStart))
            }
            StepKind::ForeignWriter { partition, count, garbage } => {
                self.record_fault("foreign-writer", None, 0);
                let (bootstrap, topic) = (self.broker.bootstrap.clone(), format!("{}.neli", self.group));
                let sent =
                    tokio::task::spawn_blocking(move || foreign_write(&bootstrap, &topic, partition, count, garbage))
                        .await
                        .map_err(RunError::Task)??;
                self.note(
                    "fw",
                    format!("produced {sent} {} records", if garbage { "garbage" } else { "foreign heartbeat" }),
                );
                None
            }
            StepKind::BrokerStart => {
                self.broker.restart().await?;
                self.note("b0", "restarted (empty memory storage)".into());
                None
            }
            _ => unreachable!("apply routes only broker steps here"),
        })
    }

    fn no_target(&mut self, what: &str, target: &str) -> Result<Option<(u64, StepKind)>, RunError> {
        self.note("real", format!("{what}: no member `{target}` at this instant; fault not applied"));
        Ok(None)
    }

    /// Waits until every live member has joined a Stable group (as the
    /// broker describes it) and one of them holds role 0. Returns the run time.
    async fn wait_stable(&mut self, what: &str, limit: Duration) -> Result<u64, RunError> {
        let deadline = self.now() + limit.as_millis() as u64;
        loop {
            self.died_on_its_own()?;
            let whole = self.group_whole().await;
            if let Some(leader) = whole {
                let now = self.now();
                let live = self.slots.iter().filter(|s| !s.gone).count();
                self.note("real", format!("group stable: {live} members, leader {}", self.slots[leader].name));
                return Ok(now);
            }
            if self.now() > deadline {
                let live = self.slots.iter().filter(|s| !s.gone).count();
                let described = self.describe_group().await;
                let leader = self.leader(self.now());
                return Err(RunError::NotStable(Box::new(NotStable {
                    scenario: self.s.name.clone(),
                    what: what.to_owned(),
                    limit,
                    live,
                    described,
                    leader: leader.map(|i| self.slots[i].name.clone()),
                    budget: self.budget.to_string(),
                })));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Fails if a member process that no fault stopped has exited (a crash
    /// inside the client, for instance): the broker would otherwise keep
    /// describing a smaller group and the run would only time out.
    fn died_on_its_own(&mut self) -> Result<(), RunError> {
        for i in 0..self.slots.len() {
            if self.slots[i].gone {
                continue;
            }
            let Some(child) = self.slots[i].child.as_mut() else { continue };
            if let Ok(Some(status)) = child.try_wait() {
                let name = self.slots[i].name.clone();
                self.slots[i].gone = true;
                self.slots[i].pid = 0;
                self.note(&name, format!("exited on its own: {status}"));
                return Err(RunError::DiedOnItsOwn {
                    scenario: self.s.name.clone(),
                    stderr: self.log_dir.join(format!("{name}.stderr")),
                    member: name,
                    status,
                });
            }
        }
        Ok(())
    }

    async fn describe_group(&self) -> Option<(String, usize)> {
        let list = self.admin.fetch_group_list(Some(&self.group), Duration::from_secs(1)).ok()?;
        let g = list.groups().first()?;
        Some((g.state().to_owned(), g.members().len()))
    }

    /// SIGCONT then SIGKILL every member still running (only our children).
    async fn stop_all(&mut self) {
        let end = self.now();
        for i in 0..self.slots.len() {
            self.signal(i, Signal::CONT);
            self.signal(i, Signal::KILL);
            if let Some(mut c) = self.slots[i].child.take() {
                let _ = c.wait().await;
            }
            self.slots[i].pid = 0;
        }
        self.trace.push((end, "real".into(), "end of run".into()));
    }

    fn judge(&self, formed_ms: u64, recovered_ms: u64) -> RealRunReport {
        let end = self.trace.last().map_or(0, |t| t.0);
        let mut lines = self.lines.lock().expect("lines lock").clone();
        lines.sort_by_key(|l| l.at);
        let log = build_log(&lines, &self.faults, &self.state_losses, &self.slots, end);
        let clocks = vec![ClockModel::new(0); self.slots.len()];
        let (figures, violations) = oracle::judge(self.s, &log, &clocks, end);
        let mut trace: Vec<(u64, String, String)> = self.trace.clone();
        trace.extend(log.trace.iter().cloned());
        trace.sort_by_key(|t| t.0);
        let mut log_epochs = BTreeMap::new();
        for l in &lines {
            if let Logged::Lease { log_epoch, .. } = l.what {
                let e = log_epochs.entry(l.member.clone()).or_insert(0);
                *e = (*e).max(log_epoch);
            }
        }
        RealRunReport {
            spans: oracle::lease_spans(self.s, &log, &clocks, end),
            faults: self.faults.clone(),
            log_epochs,
            scenario: self.s.name.clone(),
            figures,
            violations: violations.iter().map(ToString::to_string).collect(),
            trace: trace.iter().map(|(at, h, t)| format_line(*at, h, t)).collect(),
            formed_ms,
            recovered_ms,
        }
    }
}

/// The scenario's election settings as `neli-tc-member`'s `KEY=VALUE`
/// options: the assignment, and the roles in multi-role mode.
fn member_options(e: &neli_sim::scenario::ElectionSpec) -> Vec<String> {
    let mut options = vec![format!("assignment={}", e.assignment.neli().name())];
    if e.mode == ModeName::MultiRole {
        options.push(format!("roles={}", e.roles));
        options.push(format!("partitions={}", e.partitions));
        options.push(format!("exclusive={}", e.exclusive));
    }
    options
}

/// Produces `count` records as a stranger would; returns how many were acknowledged.
fn foreign_write(bootstrap: &str, topic: &str, partition: u32, count: u32, garbage: bool) -> Result<u32, RunError> {
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    let producer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("log_level", "0")
        .create()
        .map_err(RunError::ForeignWriter)?;
    for seq in 1..=u64::from(count) {
        let payload = if garbage {
            format!("garbage-{seq}").into_bytes()
        } else {
            // Four roles, as the simulator's stranger: some records name a
            // role the election may not have (scenarios/FORMAT.md).
            neli::core::Heartbeat {
                role: (seq % 4) as u32,
                term: 1_000_000 + seq,
                seq,
                sent_at: neli::Time::from_millis(mono_ms()),
                lease: None,
                name: "stranger".into(),
            }
            .encode()
        };
        let record = BaseRecord::<(), [u8]>::to(topic).partition(partition as i32).payload(&payload);
        producer.send(record).map_err(|(e, _)| RunError::ForeignWriter(e))?;
    }
    producer.flush(Duration::from_secs(5)).map_err(RunError::ForeignWriterFlush)?;
    Ok(count)
}

/// The oracle's view of a real run: the members' lines as the simulator
/// would have recorded them, with every member on the identity clock (all
/// times come from the host's one monotonic clock).
fn build_log(lines: &[Line], faults: &[FaultObs], state_losses: &[u64], slots: &[Slot], end: u64) -> Log {
    let mut log = Log::default();
    let slot_of = |m: &str| m.trim_start_matches('m').split('.').next().and_then(|i| i.parse().ok()).unwrap_or(0);
    let epoch_at = |t: u64| state_losses.iter().filter(|l| **l <= t).count() as u64;
    let mut acquired_epoch: BTreeMap<(String, u64), u64> = BTreeMap::new();
    for l in lines {
        let (at, m) = (l.at, l.member.clone());
        log.slots.insert(m.clone(), slot_of(&m));
        match &l.what {
            Logged::Lease { leading, log_epoch } => {
                let lease = |token: u64, until: u64| neli::Lease {
                    token: neli::Token(token),
                    until: neli::Time::from_millis(until),
                    log_epoch: *log_epoch,
                };
                let leading = leading.iter().map(|(role, token, until)| (*role, lease(*token, *until))).collect();
                log.leases.push(LeaseObs { at, member: m, slot: slot_of(&l.member), leading });
            }
            Logged::Event { event, role, token } => {
                let role = *role;
                let event = match event {
                    EventKind::Acquired => {
                        let token = token.unwrap_or(0);
                        acquired_epoch.insert((m.clone(), token), epoch_at(at));
                        Event::Acquired { role, token: Token(token) }
                    }
                    EventKind::Revoked => Event::Revoked { role },
                    EventKind::Fenced => Event::Fenced { role },
                };
                log.trace.push((at, m.clone(), format!("{event:?}")));
                log.events.push(EventObs { at, member: m, event, log_epoch: epoch_at(at) });
            }
            Logged::Act { token } => {
                let token = *token;
                let log_epoch = acquired_epoch.get(&(m.clone(), token)).copied().unwrap_or_else(|| epoch_at(at));
                log.writes.push(WriteObs { at, member: m, role: 0, token, log_epoch, told: None, in_handler: false });
            }
            Logged::Ended => {
                log.trace.push((at, m.clone(), "election loop ended".into()));
                log.ends.entry(m).or_insert(at);
            }
            Logged::Closed { .. } => {
                log.trace.push((at, m.clone(), "closed".into()));
                log.ends.insert(m, at);
            }
            Logged::Error { error } => log.trace.push((at, m, format!("error: {error:?}"))),
            Logged::Started => {}
        }
    }
    for f in faults {
        if f.kills
            && let Some(m) = &f.member
        {
            log.ends.insert(m.clone(), f.at);
        }
    }
    log.faults = faults.to_vec();
    log.log_epoch = state_losses.len() as u64;
    for (i, s) in slots.iter().enumerate() {
        log.current.insert(i, s.name.clone());
    }
    log.ends.retain(|_, at| *at <= end);
    log
}
