//! Where the driver's tasks run (the event handler, `background`'s loop and
//! `on_term` work): on the tokio runtime, or, in a simulator that runs each
//! simulated process in a `tokio::task::LocalSet` of its own inside one
//! runtime, on the current `LocalSet`, so that they end with the process
//! they belong to (a crash drops its `LocalSet`; ARCHITECTURE.md, "The
//! simulator's runtime").

use std::cell::Cell;
use std::future::Future;

use tokio::task::JoinHandle;

thread_local! {
    static ON_LOCAL_SET: Cell<bool> = const { Cell::new(false) };
}

/// Makes the driver spawn its tasks on this thread with
/// `tokio::task::spawn_local` (`true`) or `tokio::spawn` (`false`, the
/// default) from now on. For simulators; a service never calls it.
#[doc(hidden)]
pub fn spawn_on_local_set(local: bool) {
    ON_LOCAL_SET.with(|l| l.set(local));
}

/// Spawns one of the driver's tasks (see the module's docs).
pub(crate) fn spawn<F>(task: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if ON_LOCAL_SET.with(Cell::get) { tokio::task::spawn_local(task) } else { tokio::spawn(task) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_simulator_gets_the_tasks_on_its_local_set() {
        let local = tokio::task::LocalSet::new();
        spawn_on_local_set(true);
        // spawn_local panics outside a LocalSet: inside one the task runs there.
        let on_local = local.run_until(async { spawn(async { 7 }).await }).await;
        spawn_on_local_set(false);
        assert_eq!(on_local.expect("the local task ran"), 7);
        assert_eq!(spawn(async { 8 }).await.expect("the runtime task ran"), 8);
    }
}
