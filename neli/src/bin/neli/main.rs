//! `neli`: run a command only while this process leads a Kafka election
//! (`exec`), watch an election (`watch`), end one (`end`), or tell CMD
//! whether its lease still holds (`holds`).
//!
//! Exit codes: 0 success / election ended / stopped by a signal; CMD's own
//! status when CMD exits by itself (127 when it cannot start); 1 a fatal
//! error of a running election or a failed revoke hook; 2 bad flags, a
//! broker that cannot be reached or authenticated with, and the failures
//! before an election runs (`watch` without its observer, `exec` without its
//! lease file or signal handlers) or of `end`. `holds`: 0 holds, 1 does
//! not, 2 a missing or bad lease file.

mod exec;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use neli::cli::{Cmd, Common, FlagError, HoldsArgs, Property};
use neli::kafka::{KafkaReader, end_election};
use neli::lease_file::LeaseFile;
use neli::{Config, SystemClock};

use crate::exec::{exec, exec_child, monotonic_ns};

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
fn configure(c: &Common) -> Result<Config, FlagError> {
    configure_with(c, |vars| c.config(vars))
}

/// [`configure`] through `build` (`neli exec` adds its roles).
pub(crate) fn configure_with(
    c: &Common,
    build: impl FnOnce(std::env::VarsOs) -> Result<(Config, Vec<Property>), FlagError>,
) -> Result<Config, FlagError> {
    // The redaction step first, so that a refusal is redacted too.
    if let Ok(properties) = neli::cli::client_properties(&c.properties, std::env::vars_os()) {
        let _ = REDACTOR.set(neli::secrets::Redactor::new(properties.iter().map(|p| (&p.key, &p.value))));
    }
    build(std::env::vars_os()).map(|(config, _)| config)
}

/// Prints `msg` on stderr, without secrets.
pub(crate) fn say(msg: impl std::fmt::Display) {
    let text = msg.to_string();
    match REDACTOR.get() {
        Some(r) => eprintln!("neli: {}", r.redact(&text)),
        None => eprintln!("neli: {text}"),
    }
}

pub(crate) fn usage_error(msg: impl std::fmt::Display) -> ExitCode {
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
pub(crate) async fn unless_signalled<T>(doing: &str, work: impl std::future::Future<Output = T>) -> Option<T> {
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

/// A flag's value, else the variable `neli exec` gives CMD, else `None`;
/// a variable that is not a whole number is exit 2, naming it.
fn given_or_env<N: std::str::FromStr>(flag: Option<N>, var: &str) -> Result<Option<N>, ExitCode> {
    match (flag, std::env::var(var)) {
        (Some(n), _) => Ok(Some(n)),
        (None, Ok(text)) => text.trim().parse::<N>().map(Some).map_err(|_| {
            eprintln!("neli holds: {var} '{text}' is not a whole number");
            ExitCode::from(2)
        }),
        (None, Err(_)) => Ok(None),
    }
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
    let mine = match given_or_env(args.token, "NELI_TOKEN") {
        Ok(t) => t,
        Err(code) => return code,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("neli holds: cannot read the lease file {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let role = match given_or_env(args.role, "NELI_ROLE_NUMBER") {
        Ok(r) => r.unwrap_or(0),
        Err(code) => return code,
    };
    let lease = match LeaseFile::parse_role(&text, role) {
        Ok(l) => l,
        Err(e @ neli::lease_file::LeaseFileError::NoSuchRole { .. }) => {
            eprintln!("neli holds: the lease file {}: {e}", path.display());
            return ExitCode::from(2);
        }
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
