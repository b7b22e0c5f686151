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
//! Usage: `neli-tc-member BOOTSTRAP GROUP NAME T_MS S_MS [KEY=VALUE...]`,
//! the options being the scenario's election settings: `assignment=range`
//! (the default) or `assignment=cooperative-sticky`, and multi-role mode as
//! `roles=M partitions=P exclusive=true|false` (all three, or none).
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
    let (Some([bootstrap, group, name, t_ms, s_ms]), options) =
        (args.get(..5).and_then(|a| <&[String; 5]>::try_from(a).ok()), args.get(5..).unwrap_or_default())
    else {
        eprintln!("usage: neli-tc-member BOOTSTRAP GROUP NAME T_MS S_MS [KEY=VALUE...]");
        std::process::exit(2);
    };
    let (Ok(t_ms), Ok(s_ms)) = (t_ms.parse::<u64>(), s_ms.parse::<u64>()) else {
        eprintln!("T_MS and S_MS must be integers (milliseconds), got {t_ms:?} {s_ms:?}");
        std::process::exit(2);
    };
    let settings = match Settings::parse(options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("neli-tc-member: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(bootstrap, group, name, t_ms, s_ms, settings).await {
        emit(Logged::Error { error: e.to_string() });
        std::process::exit(1);
    }
}

/// The election settings after the five positional arguments.
struct Settings {
    assignment: neli::Assignment,
    mode: neli::Mode,
}

impl Settings {
    fn parse(options: &[String]) -> Result<Settings, String> {
        let mut assignment = neli::Assignment::Range;
        let (mut roles, mut partitions, mut exclusive) = (None, None, None);
        for option in options {
            let (key, value) = option.split_once('=').ok_or_else(|| format!("option '{option}' is not KEY=VALUE"))?;
            let number = || value.parse::<u32>().map_err(|_| format!("{key} '{value}' is not a whole number"));
            match key {
                "assignment" => assignment = neli::Assignment::parse(value).map_err(|e| format!("assignment: {e}"))?,
                "roles" => roles = Some(number()?),
                "partitions" => partitions = Some(number()?),
                "exclusive" => {
                    exclusive =
                        Some(value.parse::<bool>().map_err(|_| format!("exclusive '{value}' is not true or false"))?)
                }
                _ => return Err(format!("unknown option '{key}' (assignment, roles, partitions, exclusive)")),
            }
        }
        let mode = match (roles, partitions, exclusive) {
            (None, None, None) => neli::Mode::Exclusive,
            (Some(roles), Some(partitions), Some(exclusive)) => neli::Mode::MultiRole { roles, partitions, exclusive },
            _ => return Err("multi-role mode needs roles, partitions and exclusive together".into()),
        };
        Ok(Settings { assignment, mode })
    }
}

async fn run(
    bootstrap: &str,
    group: &str,
    name: &str,
    t_ms: u64,
    s_ms: u64,
    settings: Settings,
) -> Result<(), neli::Error> {
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
        // The scenario's, passed by `RealRun::spawn`: range unless told,
        // so a run without options means what it meant before.
        .assignment(settings.assignment)
        .mode(settings.mode)
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
