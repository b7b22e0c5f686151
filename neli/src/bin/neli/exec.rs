//! `neli exec`: run CMD only while this process leads; with `--roles M`,
//! one CMD per led role (neli/KAFKA.md, "neli exec" and "Many roles: one
//! CMD per led role"). CMD never outlives its role's lease: it is stopped on
//! the role's revoke (SIGTERM, then SIGKILL after `--stop-timeout`), killed
//! at once on a fence, and killed by the kernel when neli dies
//! (`exec-child`'s parent-death signal).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use neli::cli::{ExecArgs, ExecChildArgs};
use neli::kafka::KafkaBroker;
use neli::lease_file::LeaseFile;
use neli::{Background, Clock, Control, Error, Event, Neli, Outcome, Status, SystemClock};
use rustix::process::{Pid, Signal};
use tokio::process::{Child, Command};

use crate::{configure_with, say, unless_signalled, usage_error};

/// What the exec loop shares with the event handler.
#[derive(Default)]
struct Running {
    /// The CMD of each led role.
    children: BTreeMap<u32, Child>,
    /// Set when a CMD exited on its own: neli resigns and exits with this.
    exited: Option<i32>,
    /// A revoke hook failed for good.
    hook_failed: bool,
}

pub(crate) async fn exec(args: ExecArgs) -> ExitCode {
    let cfg = match configure_with(&args.common, |vars| args.config(vars)) {
        Ok(cfg) => cfg,
        Err(e) => return usage_error(e),
    };
    let metrics_addr = match args.metrics_addr() {
        Ok(addr) => addr,
        Err(e) => return usage_error(e),
    };
    if args.explain {
        return match cfg.explain() {
            Ok(bounds) => {
                println!("{bounds}");
                ExitCode::SUCCESS
            }
            Err(e) => usage_error(e),
        };
    }
    // Listening before connecting: a port in use is bad input, found at once.
    let endpoints = match metrics_addr.map(serve_metrics).transpose() {
        Ok(endpoints) => endpoints,
        Err(code) => return code,
    };
    let clock = SystemClock::new();
    let connect = async {
        let mut broker =
            KafkaBroker::with_connect_timeout(&cfg, args.common.connect_timeout).await.map_err(|e| e.to_string())?;
        if args.roles.is_some() {
            matching_partitions(&mut broker, &cfg).await?;
        }
        Neli::new(&cfg, broker, clock.clone()).await.map_err(|e| e.to_string())
    };
    let mut neli = match unless_signalled("connecting", connect).await {
        None => return ExitCode::SUCCESS,
        Some(Ok(n)) => n,
        Some(Err(e)) => return usage_error(e),
    };
    if let Some(endpoints) = &endpoints {
        endpoints.serve(neli.control());
    }
    let lease_file = LeaseFilePath::new(args.roles);
    let _remove = RemoveOnDrop(lease_file.path.clone());
    if let Err(e) = lease_file.write(&neli.control().status().borrow().clone(), &clock) {
        return usage_error(format!("cannot write the lease file {}: {e}", lease_file.path.display()));
    }
    let state = Arc::new(tokio::sync::Mutex::new(Running::default()));
    let spec = Arc::new(Spec {
        started: std::sync::Mutex::default(),
        cmd: args.cmd,
        stop_timeout: args.stop_timeout,
        on_acquire: args.on_acquire,
        on_revoke: args.on_revoke,
        lease_file: lease_file.clone(),
        clock: clock.clone(),
    });
    {
        let (state, spec) = (state.clone(), spec.clone());
        neli.on_event(move |event, control| {
            let (state, spec) = (state.clone(), spec.clone());
            async move { handle(event, control, &state, &spec).await }
        });
    }
    let bg = neli.background();
    keep_lease_file(&bg, clock, lease_file.clone());
    kill_without_lease(&bg, spec.clone());
    let outcome = match supervise(bg, &state).await {
        Ok(outcome) => outcome,
        Err(code) => return code,
    };
    tracing::debug!(?outcome, "election loop ended");
    // Whatever ended the loop, no CMD outlives leadership.
    let mut s = state.lock().await;
    for (_, child) in std::mem::take(&mut s.children) {
        stop_child(child, spec.stop_timeout).await;
    }
    exit_code(outcome, &s)
}

/// With `--roles`: an election topic that already exists with another
/// partition count than `--partitions` would lay the roles out differently
/// (role j on partition j mod its count: with fewer, one member may lead
/// every role), so it is refused, naming the topic, its count and the flag.
async fn matching_partitions(broker: &mut KafkaBroker, cfg: &neli::Config) -> Result<(), String> {
    use neli::Broker;
    let wanted = cfg.mode.partitions();
    let has = broker.partition_count().await.map_err(|e| e.to_string())?;
    if has == wanted {
        return Ok(());
    }
    let topic = cfg.resolve().map(|r| r.topic).unwrap_or_default();
    Err(format!(
        "--partitions {wanted} (the default is --roles): the election topic {topic} has {has} partition(s); \
         pass --partitions {has}, or end the election (neli end) so that it is created again with {wanted}"
    ))
}

/// `--metrics-addr`: installs the Prometheus recorder (before the election
/// registers its metrics) and listens on `addr`; says where on stderr.
fn serve_metrics(addr: std::net::SocketAddr) -> Result<neli::endpoints::Endpoints, ExitCode> {
    use neli::endpoints::{Endpoints, PrometheusBuilder};
    let prometheus = PrometheusBuilder::new()
        .install_recorder()
        .map_err(|e| usage_error(format!("--metrics-addr {addr}: cannot install the metrics recorder: {e}")))?;
    let endpoints = Endpoints::bind(addr, prometheus)
        .map_err(|e| usage_error(format!("--metrics-addr {addr}: cannot listen: {e}")))?;
    eprintln!("neli: serving /metrics, /healthz and /leader on http://{}", endpoints.local_addr());
    Ok(endpoints)
}

/// Runs the election until it ends; SIGINT, SIGTERM or a CMD exiting by
/// itself close it. `Err`: a signal handler could not be installed.
async fn supervise(bg: Background, state: &tokio::sync::Mutex<Running>) -> Result<Result<Outcome, Error>, ExitCode> {
    use tokio::signal::unix::{SignalKind, signal};
    let control = bg.control();
    // Each stream is made once: a signal that comes while no stream exists is lost.
    let (mut sigint, mut sigterm) = match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(i), Ok(t)) => (i, t),
        (Err(e), _) | (_, Err(e)) => return Err(usage_error(format!("cannot install the signal handlers: {e}"))),
    };
    let mut bg = std::pin::pin!(bg.into_future_boxed());
    loop {
        tokio::select! {
            r = &mut bg => return Ok(r),
            _ = sigint.recv() => {
                eprintln!("neli: SIGINT: stopping CMD and giving up leadership");
                control.close();
            }
            _ = sigterm.recv() => {
                eprintln!("neli: SIGTERM: stopping CMD and giving up leadership");
                control.close();
            }
            _ = tokio::time::sleep(Duration::from_millis(50)) => {
                // A handler holding the state is starting or stopping a CMD: next time.
                let Ok(mut s) = state.try_lock() else { continue };
                let done = s.children.iter_mut().find_map(|(role, c)| Some((*role, c.try_wait().ok()??)));
                if let Some((role, status)) = done {
                    s.children.remove(&role);
                    s.exited = Some(status.code().unwrap_or(1));
                    eprintln!("neli: CMD of role {role} exited ({status}); resigning");
                    control.close();
                }
            }
        }
    }
}

/// `neli exec`'s exit code once the election ended and CMD stopped.
fn exit_code(outcome: Result<Outcome, Error>, s: &Running) -> ExitCode {
    if s.hook_failed {
        eprintln!("neli: the revoke hook kept failing; exiting");
        return ExitCode::from(1);
    }
    match outcome {
        Ok(Outcome::ElectionEnded) => {
            eprintln!("neli: the election was ended");
            ExitCode::SUCCESS
        }
        Ok(Outcome::Closed) => ExitCode::from(u8::try_from(s.exited.unwrap_or(0)).unwrap_or(1)),
        Ok(other) => {
            eprintln!("neli: the election ended ({other:?})");
            ExitCode::from(1)
        }
        Err(e) => {
            say(e);
            ExitCode::from(1)
        }
    }
}

trait IntoBoxed {
    fn into_future_boxed(self) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Outcome, Error>> + Send>>;
}

impl IntoBoxed for Background {
    fn into_future_boxed(self) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Outcome, Error>> + Send>> {
        std::future::IntoFuture::into_future(self)
    }
}

struct Spec {
    /// Per role, the pid of its CMD and the token it was started for, for
    /// [`kill_without_lease`] (a plain mutex: never held across an await).
    started: std::sync::Mutex<BTreeMap<u32, (u32, u64)>>,
    cmd: Vec<String>,
    stop_timeout: Duration,
    on_acquire: Option<String>,
    on_revoke: Option<String>,
    lease_file: LeaseFilePath,
    clock: SystemClock,
}

/// The lease file of this `neli exec` (neli/KAFKA.md, "neli holds"): one
/// line for the one role, or one per role with `--roles M`. neli removes it
/// when it exits.
#[derive(Clone)]
struct LeaseFilePath {
    path: PathBuf,
    /// `--roles`: how many lines the file has.
    roles: Option<u32>,
}

impl LeaseFilePath {
    fn new(roles: Option<u32>) -> LeaseFilePath {
        let dir = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        LeaseFilePath { path: dir.join(format!("neli-lease-{}", std::process::id())), roles }
    }

    /// Replaces the file with `status`'s leases, atomically (write, then
    /// rename), so `neli holds` never reads half a line. CLOCK_MONOTONIC is
    /// read before the member's clock, so no deadline is past its lease's end.
    fn write(&self, status: &Status, clock: &SystemClock) -> std::io::Result<()> {
        let monotonic = monotonic_ns();
        let now = clock.now();
        let content = match self.roles {
            None => LeaseFile::of(status, now, monotonic).render(),
            Some(m) => LeaseFile::render_roles(
                &(0..m).map(|r| (r, LeaseFile::of_role(status, r, now, monotonic))).collect::<Vec<_>>(),
            ),
        };
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, content)?;
        std::fs::rename(&tmp, &self.path)
    }
}

/// Removes the lease file when `neli exec` returns, however it returns.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Rewrites the lease file on every status change for as long as the
/// election runs (the runtime has one thread, so writes never interleave).
fn keep_lease_file(control: &Control, clock: SystemClock, file: LeaseFilePath) {
    let mut status = control.status();
    tokio::spawn(async move {
        loop {
            let current = status.borrow_and_update().clone();
            if let Err(e) = file.write(&current, &clock) {
                say(format!("cannot update the lease file {}: {e}", file.path.display()));
            }
            if status.changed().await.is_err() {
                break;
            }
        }
    });
}

/// Kills (SIGKILL) a role's CMD the moment the role is fenced or its lease
/// ends without an orderly revoke. The event handler stops CMDs too, but
/// handlers run one at a time and the election loop waits for a `Revoked`
/// handler (the handover barrier): while one role's CMD is given its
/// `--stop-timeout`, another role's `Fenced` waits, and that role's lease
/// may even end with no event at all. So this task, which hears every
/// event as it is emitted, also looks at every lease every 50 ms. A role
/// being revoked is left to its handler; the token guards against killing
/// a later term's CMD of the same role.
fn kill_without_lease(control: &Control, spec: Arc<Spec>) {
    let mut events = control.events().into_inner();
    let control = control.clone();
    tokio::spawn(async move {
        let mut watch = Watch { spec, term: BTreeMap::new(), revoked: std::collections::BTreeSet::new() };
        loop {
            // Every event emitted so far first, so a revoke is known before
            // the lease it ended is looked at.
            while let Ok(event) = events.try_recv() {
                watch.note(event);
            }
            watch.check(&control);
            tokio::select! {
                event = events.recv() => match event {
                    Some(event) => watch.note(event),
                    None => break,
                },
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    });
}

/// What [`kill_without_lease`] knows: each role's current term, and the roles
/// being revoked (their handler stops the CMD, with its stop timeout).
struct Watch {
    spec: Arc<Spec>,
    term: BTreeMap<u32, u64>,
    revoked: std::collections::BTreeSet<u32>,
}

impl Watch {
    fn note(&mut self, event: Event) {
        match event {
            Event::Acquired { role, token } => {
                self.term.insert(role, token.0);
                self.revoked.remove(&role);
            }
            Event::Revoked { role } => {
                self.revoked.insert(role);
            }
            Event::Fenced { role } => self.kill(role),
            _ => {}
        }
    }

    /// Kills the CMD of every role whose lease ended with no revoke.
    fn check(&self, control: &Control) {
        let roles: Vec<u32> = self.spec.started.lock().unwrap_or_else(|e| e.into_inner()).keys().copied().collect();
        for role in roles {
            if !self.revoked.contains(&role) && control.lease(role).is_none() {
                self.kill(role);
            }
        }
    }

    /// SIGKILL to the CMD of `role`'s current term, if it runs.
    fn kill(&self, role: u32) {
        let started = self.spec.started.lock().unwrap_or_else(|e| e.into_inner()).get(&role).copied();
        if let Some((pid, token)) = started
            && self.term.get(&role) == Some(&token)
            && let Some(pid) = Pid::from_raw(i32::try_from(pid).unwrap_or(0))
        {
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }
}

/// CLOCK_MONOTONIC in ns: it keeps counting while processes are stopped,
/// and every process on the machine reads the same one.
pub(crate) fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(u64::try_from(ts.tv_nsec).unwrap_or(0))
}

async fn handle(event: Event, control: Control, state: &tokio::sync::Mutex<Running>, spec: &Spec) {
    match event {
        Event::Acquired { token, role } => acquired(role, token.0, &control, state, spec).await,
        Event::Revoked { role } => given_up(role, false, &control, state, spec).await,
        Event::Fenced { role } => given_up(role, true, &control, state, spec).await,
        other => tracing::warn!(event = ?other, "neli exec: an event it does not act on"),
    }
}

/// A role acquired: the acquire hook, then the role's CMD.
async fn acquired(role: u32, token: u64, control: &Control, state: &tokio::sync::Mutex<Running>, spec: &Spec) {
    let mut s = state.lock().await;
    if s.exited.is_some() || s.hook_failed {
        return;
    }
    if let Some(hook) = &spec.on_acquire
        && !run_hook(hook, token, "leader", role).await
    {
        eprintln!("neli: on-acquire hook failed for role {role}; resigning every role");
        control.resign();
        return;
    }
    let status = control.status().borrow().clone();
    if let Err(e) = spec.lease_file.write(&status, &spec.clock) {
        say(format!("cannot update the lease file {}: {e}", spec.lease_file.path.display()));
    }
    let cmd = if spec.lease_file.roles.is_some() { neli::cli::cmd_for_role(&spec.cmd, role) } else { spec.cmd.clone() };
    match spawn_cmd(&cmd, token, status.log_epoch, role, &spec.lease_file.path) {
        Ok(child) => {
            eprintln!("neli: leading role {role} with token {token}; started CMD (pid {:?})", child.id());
            if let Some(pid) = child.id() {
                spec.started.lock().unwrap_or_else(|e| e.into_inner()).insert(role, (pid, token));
            }
            s.children.insert(role, child);
        }
        Err(e) => {
            eprintln!("neli: cannot start CMD for role {role}: {e}");
            s.exited = Some(127);
            control.close();
        }
    }
}

/// A role revoked (orderly: its CMD gets `--stop-timeout`) or fenced
/// (someone else may lead already: its CMD is killed at once); then the
/// revoke hook, up to 3 times. The state is not held while the CMD stops,
/// so [`supervise`] still sees another role's CMD exit meanwhile.
async fn given_up(role: u32, fenced: bool, control: &Control, state: &tokio::sync::Mutex<Running>, spec: &Spec) {
    let child = state.lock().await.children.remove(&role);
    spec.started.lock().unwrap_or_else(|e| e.into_inner()).remove(&role);
    if let Some(mut child) = child {
        if fenced {
            kill_group(&child, Signal::KILL);
            let _ = child.wait().await;
        } else {
            stop_child(child, spec.stop_timeout).await;
        }
        eprintln!("neli: role {role} {} — CMD stopped", if fenced { "fenced" } else { "revoked" });
    }
    if let Some(hook) = &spec.on_revoke {
        let mut ok = false;
        for attempt in 1..=3 {
            if run_hook(hook, 0, "follower", role).await {
                ok = true;
                break;
            }
            eprintln!("neli: on-revoke hook failed for role {role} (attempt {attempt}/3)");
            tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
        }
        if !ok {
            // Never keep running (or lead again) after a failed stop.
            state.lock().await.hook_failed = true;
            control.close();
        }
    }
}

/// Starts CMD through this binary's hidden `exec-child` subcommand
/// ([`exec_child`]), which becomes CMD: the same process, so CMD keeps the
/// pid, the process group and the environment set here.
fn spawn_cmd(cmd: &[String], token: u64, log_epoch: u64, role: u32, lease_file: &Path) -> std::io::Result<Child> {
    // This very binary, also when its file was replaced since neli started
    // (an upgrade in place).
    let mut c = Command::new("/proc/self/exe");
    c.arg0("neli")
        .args(["exec-child", "--parent", &std::process::id().to_string(), "--"])
        .args(cmd)
        .env("NELI_TOKEN", token.to_string())
        .env("NELI_LOG_EPOCH", log_epoch.to_string())
        .env("NELI_LEASE_FILE", lease_file)
        .env("NELI_ROLE", "leader")
        .env("NELI_ROLE_NUMBER", role.to_string())
        .process_group(0);
    c.spawn()
}

/// `neli exec-child --parent PID -- CMD`: arms the parent-death signal, so
/// that CMD is killed when neli dies (also by SIGKILL: no orphan keeps
/// working without a lease), then becomes CMD. The signal stays armed across
/// exec. Exit 1 if neli died before it was armed, 127 if CMD cannot start.
pub(crate) fn exec_child(args: ExecChildArgs) -> ExitCode {
    use std::os::unix::process::CommandExt;
    if let Err(e) = rustix::process::set_parent_process_death_signal(Some(Signal::KILL)) {
        eprintln!("neli: cannot start CMD: the parent-death signal: {e}");
        return ExitCode::from(127);
    }
    // neli may have died before the signal was armed, which then never comes.
    if rustix::process::getppid() != i32::try_from(args.parent).ok().and_then(Pid::from_raw) {
        return ExitCode::from(1);
    }
    let e = std::process::Command::new(&args.cmd[0]).args(&args.cmd[1..]).exec();
    eprintln!("neli: cannot start CMD: {e}");
    ExitCode::from(127)
}

fn kill_group(child: &Child, signal: Signal) {
    // CMD leads its own process group: signal everything it started.
    if let Some(pid) = child.id().and_then(|id| Pid::from_raw(i32::try_from(id).ok()?)) {
        let _ = rustix::process::kill_process_group(pid, signal);
    }
}

/// SIGTERM, up to `timeout` to exit, then SIGKILL.
async fn stop_child(mut child: Child, timeout: Duration) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    kill_group(&child, Signal::TERM);
    if tokio::time::timeout(timeout, child.wait()).await.is_err() {
        kill_group(&child, Signal::KILL);
        let _ = child.wait().await;
    }
}

async fn run_hook(hook: &str, token: u64, standing: &str, role: u32) -> bool {
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(hook)
        .env("NELI_TOKEN", token.to_string())
        .env("NELI_ROLE", standing)
        .env("NELI_ROLE_NUMBER", role.to_string())
        .status()
        .await;
    matches!(status, Ok(s) if s.success())
}
