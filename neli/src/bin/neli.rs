//! `neli`: run a command only while this process leads a Kafka election
//! (`exec`), watch an election (`watch`), end one (`end`), or tell CMD
//! whether its lease still holds (`holds`).
//!
//! Exit codes: 0 success / election ended / stopped by a signal; CMD's own
//! status when CMD exits by itself; 1 a fatal error or a failed revoke hook;
//! 2 bad flags or an unreachable broker. `holds`: 0 holds, 1 does not, 2 a
//! missing or bad lease file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use neli::cli::{Cmd, Common, ExecArgs, ExecChildArgs, HoldsArgs};
use neli::kafka::{KafkaBroker, KafkaReader, end_election};
use neli::lease_file::LeaseFile;
use neli::{Background, Clock, Config, Control, Error, Event, Neli, Outcome, Status, SystemClock};
use rustix::process::{Pid, Signal};
use tokio::process::{Child, Command};

fn main() -> ExitCode {
    let cli = neli::cli::parse_or_exit(std::env::args_os().collect());
    // CMD may call `holds` before every action: no runtime, no logging setup.
    let command = match cli.command {
        Cmd::Holds(args) => return holds(args),
        Cmd::ExecChild(args) => return exec_child(args),
        Cmd::Completions(args) => {
            neli::cli::write_completions(args.shell, &mut std::io::stdout());
            return ExitCode::SUCCESS;
        }
        Cmd::Man => return man_page(),
        command => command,
    };
    init_logging(cli.log_format);
    // One thread: children are spawned from the main thread, which lives as
    // long as the process, so the parent-death signal `exec-child` arms
    // (PR_SET_PDEATHSIG: it fires when the spawning thread ends) fires
    // exactly when neli dies.
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("neli: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = rt.block_on(async {
        match command {
            Cmd::Exec(args) => exec(args).await,
            Cmd::Watch(c) => watch(c).await,
            Cmd::End(c) => end(c).await,
            Cmd::Holds(args) => holds(args),
            Cmd::ExecChild(args) => exec_child(args),
            Cmd::Completions(_) | Cmd::Man => unreachable_command(),
        }
    });
    tracing::debug!("runtime done");
    // A librdkafka call abandoned on the blocking pool (a commit racing the
    // close) must not hold the exit: leadership is already given up.
    rt.shutdown_timeout(Duration::from_millis(200));
    code
}

/// Diagnostics on stderr, silent unless RUST_LOG asks (e.g.
/// RUST_LOG=neli=debug), as text or one JSON object per line.
fn init_logging(format: neli::cli::LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "off".into());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        neli::cli::LogFormat::Json => builder.json().try_init(),
        _ => builder.try_init(),
    };
}

/// `neli man`: the man page on stdout.
fn man_page() -> ExitCode {
    match neli::cli::write_man_page(&mut std::io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("neli man: cannot write the man page: {e}");
            ExitCode::from(1)
        }
    }
}

/// A subcommand answered before the runtime started never gets here.
fn unreachable_command() -> ExitCode {
    eprintln!("neli: internal error: a subcommand reached the runtime that answers without one");
    ExitCode::from(1)
}

/// This process's redaction step, set once its client properties are
/// known. The library already redacts every librdkafka text; this is the
/// last guard before anything reaches stderr (neli/KAFKA.md, "Secrets never printed").
static REDACTOR: std::sync::OnceLock<neli::secrets::Redactor> = std::sync::OnceLock::new();

/// The configuration from the flags, the environment and `-X`; sets the
/// redaction step from the client properties it read.
fn configure(c: &Common) -> Result<Config, neli::cli::FlagError> {
    // The redaction step first, so that a refusal is redacted too.
    if let Ok(properties) = neli::cli::client_properties(&c.properties, std::env::vars_os()) {
        let _ = REDACTOR.set(neli::secrets::Redactor::new(properties.iter().map(|p| (&p.key, &p.value))));
    }
    c.config(std::env::vars_os()).map(|(config, _)| config)
}

/// Prints `msg` on stderr, without secrets.
fn say(msg: impl std::fmt::Display) {
    let text = msg.to_string();
    match REDACTOR.get() {
        Some(r) => eprintln!("neli: {}", r.redact(&text)),
        None => eprintln!("neli: {text}"),
    }
}

fn usage_error(msg: impl std::fmt::Display) -> ExitCode {
    say(msg);
    ExitCode::from(2)
}

async fn end(c: Common) -> ExitCode {
    let cfg = match configure(&c) {
        Ok(cfg) => cfg,
        Err(e) => return usage_error(e),
    };
    match unless_signalled("ending the election", end_election(&cfg, c.connect_timeout)).await {
        None => ExitCode::SUCCESS,
        Some(Ok(())) => ExitCode::SUCCESS,
        Some(Err(e)) => usage_error(e),
    }
}

/// Runs `work` unless SIGINT or SIGTERM comes first; then says so and
/// returns `None` (a signal ends neli with exit 0, neli/KAFKA.md).
async fn unless_signalled<T>(doing: &str, work: impl std::future::Future<Output = T>) -> Option<T> {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("neli: cannot install the SIGTERM handler ({e}); SIGTERM will end neli abruptly");
            return Some(work.await);
        }
    };
    tracing::debug!("{doing}; SIGINT or SIGTERM ends neli");
    tokio::select! {
        r = work => Some(r),
        _ = tokio::signal::ctrl_c() => {
            eprintln!("neli: SIGINT while {doing}: exiting");
            None
        }
        _ = term.recv() => {
            eprintln!("neli: SIGTERM while {doing}: exiting");
            None
        }
    }
}

/// What the exec loop shares with the event handler.
#[derive(Default)]
struct Running {
    child: Option<Child>,
    /// Set when CMD exited on its own: neli resigns and exits with this.
    exited: Option<i32>,
    /// A revoke hook failed for good.
    hook_failed: bool,
}

async fn exec(args: ExecArgs) -> ExitCode {
    let cfg = match configure(&args.common) {
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
        let broker =
            KafkaBroker::with_connect_timeout(&cfg, args.common.connect_timeout).await.map_err(|e| e.to_string())?;
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
    let lease_file = LeaseFilePath::new();
    if let Err(e) = write_lease_file(&lease_file.0, &neli.control().status().borrow().clone(), &clock) {
        return usage_error(format!("cannot write the lease file {}: {e}", lease_file.0.display()));
    }
    let state = Arc::new(tokio::sync::Mutex::new(Running::default()));
    let spec = Arc::new(Spec {
        cmd: args.cmd,
        stop_timeout: args.stop_timeout,
        on_acquire: args.on_acquire,
        on_revoke: args.on_revoke,
        lease_file: lease_file.0.clone(),
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
    keep_lease_file(&bg, clock, lease_file.0.clone());
    let outcome = match supervise(bg, &state).await {
        Ok(outcome) => outcome,
        Err(code) => return code,
    };
    tracing::debug!(?outcome, "election loop ended");
    // Whatever ended the loop, CMD never outlives leadership.
    let mut s = state.lock().await;
    if let Some(child) = s.child.take() {
        stop_child(child, spec.stop_timeout).await;
    }
    exit_code(outcome, &s)
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

/// Runs the election until it ends; SIGINT, SIGTERM or CMD exiting by
/// itself close it. `Err`: the SIGTERM handler could not be installed.
async fn supervise(bg: Background, state: &tokio::sync::Mutex<Running>) -> Result<Result<Outcome, Error>, ExitCode> {
    let control = bg.control();
    let mut sigterm = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => return Err(usage_error(format!("cannot install the SIGTERM handler: {e}"))),
    };
    let mut bg = std::pin::pin!(bg.into_future_boxed());
    loop {
        tokio::select! {
            r = &mut bg => return Ok(r),
            _ = tokio::signal::ctrl_c() => {
                eprintln!("neli: SIGINT: stopping CMD and giving up leadership");
                control.close();
            }
            _ = sigterm.recv() => {
                eprintln!("neli: SIGTERM: stopping CMD and giving up leadership");
                control.close();
            }
            _ = tokio::time::sleep(Duration::from_millis(50)) => {
                let mut s = state.lock().await;
                if let Some(child) = s.child.as_mut()
                    && let Ok(Some(status)) = child.try_wait()
                {
                    s.child = None;
                    s.exited = Some(status.code().unwrap_or(1));
                    eprintln!("neli: CMD exited ({status}); resigning");
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
    cmd: Vec<String>,
    stop_timeout: Duration,
    on_acquire: Option<String>,
    on_revoke: Option<String>,
    lease_file: PathBuf,
    clock: SystemClock,
}

/// The lease file of this `neli exec` (neli/KAFKA.md, "neli holds");
/// removed when neli exits.
struct LeaseFilePath(PathBuf);

impl LeaseFilePath {
    fn new() -> LeaseFilePath {
        let dir = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        LeaseFilePath(dir.join(format!("neli-lease-{}", std::process::id())))
    }
}

impl Drop for LeaseFilePath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Replaces the lease file with `status`'s lease, atomically (write, then
/// rename), so `neli holds` never reads half a line. CLOCK_MONOTONIC is read
/// before the member's clock, so the deadline is never past the lease's end.
fn write_lease_file(path: &Path, status: &Status, clock: &SystemClock) -> std::io::Result<()> {
    let monotonic = monotonic_ns();
    let content = LeaseFile::of(status, clock.now(), monotonic).render();
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, path)
}

/// Rewrites the lease file on every status change for as long as the
/// election runs (the runtime has one thread, so writes never interleave).
fn keep_lease_file(control: &Control, clock: SystemClock, path: PathBuf) {
    let mut status = control.status();
    tokio::spawn(async move {
        loop {
            let current = status.borrow_and_update().clone();
            if let Err(e) = write_lease_file(&path, &current, &clock) {
                say(format!("cannot update the lease file {}: {e}", path.display()));
            }
            if status.changed().await.is_err() {
                break;
            }
        }
    });
}

/// CLOCK_MONOTONIC in ns: it keeps counting while processes are stopped,
/// and every process on the machine reads the same one.
fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(u64::try_from(ts.tv_nsec).unwrap_or(0))
}

/// `neli holds`: 0 while the lease file shows a live lease for this
/// process's token, 1 otherwise, 2 when there is no usable lease file.
fn holds(args: HoldsArgs) -> ExitCode {
    // An empty NELI_LEASE_FILE is no lease file, not a file named "".
    let from_env = std::env::var_os("NELI_LEASE_FILE").filter(|v| !v.is_empty()).map(PathBuf::from);
    let Some(path) = args.lease_file.or(from_env) else {
        eprintln!(
            "neli holds: no lease file: pass --lease-file PATH, or run it from CMD under `neli exec` (which sets NELI_LEASE_FILE; it is unset or empty here)"
        );
        return ExitCode::from(2);
    };
    let mine = match (args.token, std::env::var("NELI_TOKEN")) {
        (Some(t), _) => Some(t),
        (None, Ok(text)) => match text.trim().parse::<u64>() {
            Ok(t) => Some(t),
            Err(_) => {
                eprintln!("neli holds: NELI_TOKEN '{text}' is not a whole number");
                return ExitCode::from(2);
            }
        },
        (None, Err(_)) => None,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("neli holds: cannot read the lease file {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let lease = match LeaseFile::parse(&text) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("neli holds: the lease file {} is not one neli wrote: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let standing = lease.standing(monotonic_ns(), mine);
    if args.verbose {
        eprintln!("neli holds: {standing}");
    }
    if standing.holds() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

async fn handle(event: Event, control: Control, state: &tokio::sync::Mutex<Running>, spec: &Spec) {
    match event {
        Event::Acquired { token, role } => {
            let mut s = state.lock().await;
            if s.exited.is_some() || s.hook_failed {
                return;
            }
            if let Some(hook) = &spec.on_acquire
                && !run_hook(hook, token.0, "leader").await
            {
                eprintln!("neli: on-acquire hook failed; resigning");
                control.resign();
                return;
            }
            let status = control.status().borrow().clone();
            if let Err(e) = write_lease_file(&spec.lease_file, &status, &spec.clock) {
                say(format!("cannot update the lease file {}: {e}", spec.lease_file.display()));
            }
            match spawn_cmd(&spec.cmd, token.0, status.log_epoch, &spec.lease_file) {
                Ok(child) => {
                    eprintln!("neli: leading role {role} with token {token}; started CMD (pid {:?})", child.id());
                    s.child = Some(child);
                }
                Err(e) => {
                    eprintln!("neli: cannot start CMD: {e}");
                    s.exited = Some(127);
                    control.close();
                }
            }
        }
        Event::Revoked { .. } | Event::Fenced { .. } => {
            let fenced = matches!(event, Event::Fenced { .. });
            let mut s = state.lock().await;
            if let Some(child) = s.child.take() {
                if fenced {
                    // Someone else may lead already: stop now, no grace.
                    kill_group(&child, Signal::KILL);
                    let mut child = child;
                    let _ = child.wait().await;
                } else {
                    stop_child(child, spec.stop_timeout).await;
                }
                eprintln!("neli: {} — CMD stopped", if fenced { "fenced" } else { "revoked" });
            }
            if let Some(hook) = &spec.on_revoke {
                let mut ok = false;
                for attempt in 1..=3 {
                    if run_hook(hook, 0, "follower").await {
                        ok = true;
                        break;
                    }
                    eprintln!("neli: on-revoke hook failed (attempt {attempt}/3)");
                    tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
                }
                if !ok {
                    // Never keep running (or lead again) after a failed stop.
                    s.hook_failed = true;
                    control.close();
                }
            }
        }
        other => tracing::warn!(event = ?other, "neli exec: an event it does not act on"),
    }
}

/// Starts CMD through this binary's hidden `exec-child` subcommand
/// ([`exec_child`]), which becomes CMD: the same process, so CMD keeps the
/// pid, the process group and the environment set here.
fn spawn_cmd(cmd: &[String], token: u64, log_epoch: u64, lease_file: &Path) -> std::io::Result<Child> {
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
        .process_group(0);
    c.spawn()
}

/// `neli exec-child --parent PID -- CMD`: arms the parent-death signal, so
/// that CMD is killed when neli dies (also by SIGKILL: no orphan keeps
/// working without a lease), then becomes CMD. The signal stays armed across
/// exec. Exit 1 if neli died before it was armed, 127 if CMD cannot start.
fn exec_child(args: ExecChildArgs) -> ExitCode {
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

async fn run_hook(hook: &str, token: u64, role: &str) -> bool {
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(hook)
        .env("NELI_TOKEN", token.to_string())
        .env("NELI_ROLE", role)
        .status()
        .await;
    matches!(status, Ok(s) if s.success())
}

/// Follows the topic's heartbeats through the library's observer
/// (`neli::observer`: no group membership, so watching never takes part in
/// the election) and prints a JSON line per transition it reports: a member
/// claims a role's lease (`acquired`), a claim ends (`expired`: its holder's
/// heartbeats stop claiming it, another claim of the role, or nothing for
/// T), the election ended (`election_ended`, then exit 0).
async fn watch(c: Common) -> ExitCode {
    use futures::StreamExt;
    use neli::observer::{Observer, Update};
    let cfg = match configure(&c) {
        Ok(cfg) => cfg,
        Err(e) => return usage_error(e),
    };
    if let Err(e) = cfg.resolve() {
        return usage_error(e);
    }
    let reader = match unless_signalled("connecting", KafkaReader::connect(&cfg, c.connect_timeout)).await {
        None => return ExitCode::SUCCESS,
        Some(Ok(r)) => r,
        Some(Err(e)) => return usage_error(e),
    };
    let observer = match Observer::new(&cfg, reader, SystemClock::new()) {
        Ok(o) => o,
        Err(e) => return usage_error(e),
    };
    let mut updates = observer.updates();
    let mut sigterm = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => return usage_error(e),
    };
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = sigterm.recv() => break,
            update = updates.next() => match update {
                Some(Update::Acquired(v)) => emit(&v.member, "acquired", v.role, Some(v.token.0)),
                Some(Update::Ended { view: v, .. }) => emit(&v.member, "expired", v.role, Some(v.token.0)),
                Some(Update::ElectionEnded) => emit("", "election_ended", 0, None),
                Some(Update::LogLost { log_epoch }) => {
                    say(format!("the election log was lost (log epoch {log_epoch}): fencing tokens restart"));
                }
                Some(other) => tracing::debug!(update = ?other, "neli watch: an update it does not print"),
                None => break,
            },
        }
    }
    match observer.close().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            say(e);
            ExitCode::from(1)
        }
    }
}

fn emit(name: &str, event: &str, role: u32, token: Option<u64>) {
    let time_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let line = serde_json::json!({
        "time_ms": time_ms as u64,
        "member": name,
        "event": event,
        "role": role,
        "token": token,
    });
    println!("{line}");
}
