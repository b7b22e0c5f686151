//! Ctrl-C (SIGINT) and SIGTERM during a long command: the first asks the
//! running command to stop taking new seeds, finish the ones in flight and
//! print a summary of what it ran (exit 130); a second ends the process at
//! once. Commands that run seeds ask [`requested`] between seeds.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Exit status of a command stopped by a signal (128 + SIGINT).
pub const EXIT: u8 = 130;

/// Installs the handler; without one (an error installing it) a signal
/// ends the process as it would have anyway.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(EXIT));
        }
        eprintln!(
            "\nneli-lab: interrupted: finishing the seeds in flight, then a summary of what ran (again to quit at once)"
        );
    });
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
