//! The invoices service in production: neli over Kafka, invoices in a
//! SQLite file, the same `serve` the harness test runs under the
//! simulator. SIGTERM or Ctrl-C closes the election (the handover waits
//! for the invoice in flight); with `--until N` it stops once invoice N is
//! in the database.
//!
//! ```text
//! invoices --bootstrap-servers 127.0.0.1:9092 --group invoices --db invoices.sqlite
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use invoices::{Settings, serve};
use neli::downstream::sqlite::SqliteFence;
use neli::{Config, SystemClock};

/// Sends invoices while this process leads the election.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Kafka's bootstrap servers.
    #[arg(long, env = "INVOICES_BOOTSTRAP_SERVERS", default_value = "127.0.0.1:9092")]
    bootstrap_servers: String,
    /// The election's consumer group.
    #[arg(long, env = "INVOICES_GROUP", default_value = "invoices")]
    group: String,
    /// This member's name in logs (default: neli's).
    #[arg(long, env = "INVOICES_NAME")]
    name: Option<String>,
    /// The SQLite database file the invoices are written to.
    #[arg(long, env = "INVOICES_DB", default_value = "invoices.sqlite")]
    db: PathBuf,
    /// Stop once invoice number N is in the database.
    #[arg(long, env = "INVOICES_UNTIL")]
    until: Option<u64>,
    /// The heartbeat timeout T, in milliseconds (neli's default if unset).
    #[arg(long, env = "INVOICES_HEARTBEAT_TIMEOUT_MS")]
    heartbeat_timeout_ms: Option<u64>,
    /// The session timeout S, in milliseconds (neli's default if unset).
    #[arg(long, env = "INVOICES_SESSION_TIMEOUT_MS")]
    session_timeout_ms: Option<u64>,
}

fn config(args: &Args) -> Result<Config, neli::ConfigError> {
    let mut b = Config::builder().bootstrap_servers(&args.bootstrap_servers).group(&args.group);
    if let Some(name) = &args.name {
        b = b.name(name);
    }
    if let Some(t) = args.heartbeat_timeout_ms {
        b = b.heartbeat_timeout(Duration::from_millis(t));
    }
    if let Some(s) = args.session_timeout_ms {
        b = b.session_timeout(Duration::from_millis(s));
    }
    b.build()
}

async fn run(args: Args) -> Result<(), String> {
    let config = config(&args).map_err(|e| format!("invalid configuration: {e}"))?;
    let db = SqliteFence::open(&args.db, "invoices").map_err(|e| e.to_string())?;
    let neli = neli::kafka::connect(&config).await.map_err(|e| e.to_string())?;
    let settings = Settings { until: args.until, ..Settings::default() };
    // On SIGTERM or Ctrl-C the election closes: Revoked, the invoice in
    // flight finished, then the member leaves the group.
    let shutdown = settings.shutdown.clone();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        eprintln!("invoices: shutting down");
        shutdown.cancel();
    });
    let outcome = serve(neli, SystemClock::new(), db, settings).await.map_err(|e| e.to_string())?;
    eprintln!("invoices: {outcome}");
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    // neli's leadership transitions (info) and broker errors on stderr;
    // RUST_LOG adjusts.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("invoices: {e}");
            ExitCode::FAILURE
        }
    }
}
