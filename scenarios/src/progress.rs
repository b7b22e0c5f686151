//! Progress of long commands on stderr (scenarios/README.md, "Progress"):
//! on a terminal an indicatif bar with rate and ETA; elsewhere (CI logs)
//! nothing but one summary line per interval, 60 s unless
//! `NELI_LAB_PROGRESS_EVERY` says otherwise (e.g. `5s`). stdout is never
//! touched, so `--format json|junit` output stays clean.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The interval between summary lines when stderr is not a terminal.
pub fn every() -> Duration {
    std::env::var("NELI_LAB_PROGRESS_EVERY")
        .ok()
        .and_then(|v| crate::parallel::parse_budget(&v).ok())
        .unwrap_or(Duration::from_secs(60))
}

/// Whether stderr is a terminal a person watches.
pub fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar over `total` seeds: drawn on a terminal; otherwise hidden, with a
/// thread printing `progress NAME: POS/LEN seeds, R seeds/s, eta Ss` every
/// [`every`] until the bar is finished.
pub fn bar(total: u64) -> ProgressBar {
    bar_of(total, "seeds")
}

/// [`bar`] counting `unit` (`seeds`, `runs`).
pub fn bar_of(total: u64, unit: &'static str) -> ProgressBar {
    let b = ProgressBar::new(total);
    b.set_style(
        ProgressStyle::with_template(&format!(
            "{{prefix:>24}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{per_sec}} eta {{eta}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    if !on_terminal() {
        b.set_draw_target(ProgressDrawTarget::hidden());
        let watched = b.clone();
        let every = every();
        std::thread::spawn(move || {
            let mut last = Instant::now();
            while !watched.is_finished() {
                std::thread::sleep(every.min(Duration::from_millis(100)));
                if last.elapsed() >= every && !watched.is_finished() {
                    last = Instant::now();
                    eprintln!("{}", line(&watched, unit));
                }
            }
        });
    }
    b
}

/// The summary line of `b`, counting `unit`.
pub fn line(b: &ProgressBar, unit: &str) -> String {
    let len = b.length().unwrap_or(0);
    format!(
        "progress {}: {}/{len} {unit}, {:.1} {unit}/s, eta {}s",
        b.prefix(),
        b.position(),
        b.per_sec(),
        b.eta().as_secs()
    )
}

/// Whether a periodic report due at `now` should be printed: always on a
/// terminal (the caller's own pace), else once per [`every`] since `last`.
pub fn due(last: &mut Option<Instant>, done: bool) -> bool {
    if done || on_terminal() {
        return true;
    }
    match last {
        Some(t) if t.elapsed() < every() => false,
        _ => {
            *last = Some(Instant::now());
            true
        }
    }
}
