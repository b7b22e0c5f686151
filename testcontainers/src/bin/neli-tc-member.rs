//! One election member for the real-broker suite: a host process (so the
//! suite can SIGKILL/SIGSTOP it) running `neli` on `KafkaBroker` and logging
//! what it does as JSON lines on stdout, timed on the host's
//! `CLOCK_MONOTONIC`, which every process on the host shares.
//!
//! Lines: `neli_testcontainers::member_log::Entry` as JSON, one per line
//! (`{"t":ms,"k":"lease","leading":[[role,token,until_ms]],"log_epoch":n}`,
//! lease ends converted from the member's own clock to the host clock; the
//! type's docs list every kind). `act` lines come every 50 ms while
//! `is_leader()` holds: the "acting as leader" checks a guarded resource
//! would see.
//!
//! SIGTERM closes gracefully (the `close` fault), SIGUSR1 resigns.
//! Usage: `neli-tc-member BOOTSTRAP GROUP NAME T_MS S_MS`.
//!
//! Diagnostics go to stderr (the suite keeps one file per member):
//! `NELI_TC_LOG` is a tracing filter (default `info`), and
//! `NELI_TC_KAFKA_DEBUG` is passed as librdkafka's `debug` property (e.g.
//! `cgrp,topic`), which is how the broker-restart rejoin bug was traced
//! (see neli/KAFKA.md, "Broker restart with state loss").

use std::time::Duration;

use neli::{Clock, Neli, SystemClock};
use neli_testcontainers::member_log::{Entry, Logged};
use neli_testcontainers::mono_ms;
use tokio::signal::unix::{SignalKind, signal};
use tokio_stream::StreamExt;

fn emit(what: Logged) {
    println!("{}", Entry { t: mono_ms(), what }.to_json());
}

#[tokio::main]
async fn main() {
    let filter = std::env::var("NELI_TC_LOG").unwrap_or_else(|_| "info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bootstrap, group, name, t_ms, s_ms] = args.as_slice() else {
        eprintln!("usage: neli-tc-member BOOTSTRAP GROUP NAME T_MS S_MS");
        std::process::exit(2);
    };
    let (Ok(t_ms), Ok(s_ms)) = (t_ms.parse::<u64>(), s_ms.parse::<u64>()) else {
        eprintln!("T_MS and S_MS must be integers (milliseconds), got {t_ms:?} {s_ms:?}");
        std::process::exit(2);
    };
    if let Err(e) = run(bootstrap, group, name, t_ms, s_ms).await {
        emit(Logged::Error { error: e.to_string() });
        std::process::exit(1);
    }
}

async fn run(bootstrap: &str, group: &str, name: &str, t_ms: u64, s_ms: u64) -> Result<(), neli::Error> {
    let mut builder = neli::Config::builder();
    if let Ok(debug) = std::env::var("NELI_TC_KAFKA_DEBUG") {
        builder = builder.kafka("debug", debug);
    }
    let config = builder
        .bootstrap_servers(bootstrap)
        .group(group)
        .name(name)
        .heartbeat_timeout(Duration::from_millis(t_ms))
        .session_timeout(Duration::from_millis(s_ms))
        .close_timeout(Duration::from_secs(5))
        // The real-broker suite plays range scenarios only (`run::plan`
        // refuses the others): pinned, since neli's default is
        // cooperative-sticky.
        .assignment(neli::Assignment::Range)
        .build()?;
    let broker = neli::kafka::KafkaBroker::new(&config).await?;
    let clock = SystemClock::new();
    // Member clock -> host clock: both are CLOCK_MONOTONIC, only origins differ.
    let offset = mono_ms() as i64 - clock.now().as_millis() as i64;
    let to_host = move |member_ms: u64| (member_ms as i64 + offset).max(0) as u64;
    let neli = Neli::new(&config, broker, clock).await?;
    let bg = neli.background();
    let control = bg.control();
    emit(Logged::Started);

    let mut status = control.status();
    tokio::spawn(async move {
        while status.changed().await.is_ok() {
            if status.borrow().state == neli::State::Closed {
                // The election loop stopped by itself (election ended or a fatal error).
                emit(Logged::Ended);
            }
            let (leading, log_epoch) = {
                let s = status.borrow_and_update();
                let leading: Vec<_> =
                    s.leading.iter().map(|(r, l)| (*r, l.token.0, to_host(l.until.as_millis()))).collect();
                (leading, s.log_epoch)
            };
            emit(Logged::Lease { leading, log_epoch });
        }
    });
    let mut events = control.events();
    tokio::spawn(async move {
        while let Some(e) = events.next().await {
            emit(Logged::event(e));
        }
    });
    let acting = control.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            tick.tick().await;
            if let Some(token) = acting.token() {
                emit(Logged::Act { token: token.0 });
            }
        }
    });

    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut usr1 = signal(SignalKind::user_defined1()).expect("SIGUSR1 handler");
    loop {
        tokio::select! {
            _ = term.recv() => break,
            _ = usr1.recv() => control.resign(),
        }
    }
    let outcome = bg.close().await;
    emit(Logged::Closed { outcome: format!("{outcome:?}") });
    Ok(())
}
