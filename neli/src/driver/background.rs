//! [`Background`]: the handle of an election running on a task of its own,
//! which owns the election (dropping it closes it) and dereferences to its
//! [`Control`].

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::task::JoinHandle;
use tokio_util::sync::DropGuard;

use super::control::Control;
use super::{Error, Outcome};

/// The handle of an election running in the background. Awaiting it waits
/// for the loop to end.
///
/// The handle owns the election: dropping it (or the future awaiting it,
/// before it completed) closes the election on its task as
/// [`Background::close`] does (the `Revoked` handlers are awaited, then
/// the member leaves the group), bounded by twice the close timeout. So a
/// leader whose handle goes out of scope hands over within the graceful
/// handover time ([`crate::config::Explanation::handover`]) instead of
/// leading on, with nobody doing the work, until the process exits.
/// [`Control`]s do not keep the election alive. To close on a signal of
/// your own, see [`Neli::background_until`](super::Neli::background_until).
///
/// It dereferences to the election's [`Control`], so everything a `Control`
/// answers or requests is asked of the handle directly:
///
/// ```
/// use neli::{Config, Outcome, State, SystemClock, testing::FakeCluster};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), neli::Error> {
/// let config = Config::builder().bootstrap_servers("127.0.0.1:9092").group("billing-cron").build()?;
/// let clock = SystemClock::new();
/// let cluster = FakeCluster::new(1);
/// let election = neli::Neli::new(&config, cluster.broker("a", clock.clone()), clock).await?.background();
/// if election.is_leader() {
///     // work, fencing each write with `election.token()`
/// }
/// let control = election.control(); // an owned one, for another task
/// assert_eq!(control.state(), State::Live);
/// assert_eq!(election.close().await?, Outcome::Closed);
/// # Ok(()) }
/// ```
pub struct Background {
    pub(super) task: JoinHandle<Result<Outcome, Error>>,
    pub(super) control: Control,
    /// Twice the close timeout: how long a close may take before the loop
    /// is abandoned, whether `close()` asked for it or the handle was
    /// dropped (the close itself is bounded by the close timeout; the loop
    /// gets as long again to start it, from a poll or a handler under way).
    pub(super) abandon_after: Duration,
    pub(super) sleep: Box<dyn Fn(Duration) -> BoxFuture<'static, ()> + Send>,
    /// Cancels the task's token when the handle (or the future awaiting
    /// it) is dropped: the task then closes the election.
    pub(super) guard: DropGuard,
}

impl std::ops::Deref for Background {
    type Target = Control;
    fn deref(&self) -> &Control {
        &self.control
    }
}

impl Background {
    /// A `Control` of its own (for a handler or another task); the handle
    /// itself answers as one too (`Deref`).
    pub fn control(&self) -> Control {
        self.control.clone()
    }

    /// Closes the election and waits for the loop, never longer than twice
    /// the close timeout: the close itself is bounded by the close timeout
    /// (then [`Error::CloseTimedOut`] with it); a loop that cannot start
    /// closing (stuck in a `Revoked` handler or a broker call) is abandoned
    /// at twice the close timeout, and the error gives that.
    ///
    /// Closing after the election was cancelled (its token), or after it
    /// ended, closes nothing twice: it waits for the close under way, or
    /// reports how the election ended.
    pub async fn close(self) -> Result<Outcome, Error> {
        let Background { mut task, control, abandon_after, sleep, guard } = self;
        control.close();
        let result = tokio::select! {
            biased;
            joined = &mut task => flatten(joined),
            _ = sleep(abandon_after) => {
                task.abort();
                Err(Error::CloseTimedOut(abandon_after))
            }
        };
        // The task has ended: cancelling it now changes nothing.
        drop(guard);
        result
    }
}

fn flatten(joined: Result<Result<Outcome, Error>, tokio::task::JoinError>) -> Result<Outcome, Error> {
    match joined {
        Ok(r) => r,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(Error::Finished(Outcome::Closed)),
    }
}

impl IntoFuture for Background {
    type Output = Result<Outcome, Error>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;
    fn into_future(self) -> Self::IntoFuture {
        let Background { task, guard, .. } = self;
        Box::pin(async move {
            let joined = task.await;
            // Held until the loop ended: a future dropped before that
            // closes the election, as the handle would.
            drop(guard);
            flatten(joined)
        })
    }
}
