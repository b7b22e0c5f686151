//! A team's own application inside the simulation (the harness API,
//! `harness`): what its code gets per member process ([`SimMember`]:
//! a real `neli::Neli` over the simulated client and clock, that clock, and
//! a client of the downstream [`Store`]), and the store itself, a host of
//! its own on the simulated network that judges each write by its fencing
//! stamp and records it in the run's history.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use turmoil::net::TcpListener;

use crate::client::SimBroker;
use crate::clock::{SimClock, global_ms};
use crate::proto::{Conn, PORT, read_frame, write_frame};
use crate::record::{Recorder, Stamp, Write};

/// The downstream store's host name on the simulated network.
pub const STORE_HOST: &str = "store";

/// How long a store request may take before the client gives up on it
/// (the request may still have landed).
const STORE_TIMEOUT: Duration = Duration::from_secs(1);

/// A user application: called once per member process (again after each
/// restart), it runs until it returns or the run ends.
pub(crate) type AppFn = Arc<dyn Fn(SimMember) -> Pin<Box<dyn Future<Output = ()>>> + Send + Sync>;

/// What a run with a user application needs besides its scenario.
#[derive(Clone)]
pub(crate) struct AppSetup {
    pub app: AppFn,
    pub store: StoreMode,
}

/// How the downstream store judges writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StoreMode {
    /// Accepts a write only if its stamp is not below the highest stamp
    /// it has accepted; refuses unstamped writes. What a fenced
    /// downstream (a database with a conditional update, an API that takes
    /// the token) does.
    #[default]
    Fenced,
    /// Accepts every write, stamped or not: a downstream that does not
    /// fence, to show what fencing prevents.
    Unfenced,
}

/// What one member process of a harness run gets: what a production
/// service has around neli.
///
/// `neli` is the real driver (the same `Neli` as production) over the
/// simulated Kafka client and the member's simulated clock, configured from
/// the scenario's `[election]` table; register its `on_event` handlers and
/// run it as the service would (`pulse` loop or `background`). Use `clock`
/// for the application's own waits: a `pause` fault stops it as it stops
/// the whole process, and a `stall-poll` fault holds the application loop
/// there while the client's background work goes on. Awaiting
/// `tokio::time::sleep` directly also works, but a pause or stall does not
/// hold it.
pub struct SimMember {
    /// The member incarnation (`m1`; `m1.2` after its second restart), as
    /// the history and violations name it.
    pub name: String,
    /// The member slot (its host `m<slot>`), the same across restarts.
    pub slot: usize,
    pub neli: neli::Neli<SimBroker, SimClock>,
    pub clock: SimClock,
    pub store: Store,
}

/// The store's answer to a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoreAnswer {
    /// Taken.
    Accepted,
    /// Refused: its stamp was below `highest` (or it had none, and the
    /// store is fenced).
    Refused { highest: Option<Stamp> },
}

/// A store request that got no answer in time: the network cut it or
/// delayed it (it may still have landed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the store did not answer: {0}")]
pub struct StoreError(pub String);

#[derive(Debug, Serialize, Deserialize)]
enum StoreRequest {
    Write { member: String, key: String, stamp: Option<Stamp>, sent_at: u64 },
    Accepted,
}

#[derive(Debug, Serialize, Deserialize)]
enum StoreReply {
    Written(StoreAnswer),
    Accepted(u64),
}

/// A member's client of the downstream store (cheap to clone, `Send`, so
/// an event handler can finish its work with it; one request in flight at
/// a time, as over one connection).
#[derive(Clone)]
pub struct Store {
    conn: Arc<tokio::sync::Mutex<Conn>>,
    member: String,
    clock: SimClock,
}

impl Store {
    pub(crate) fn new(member: &str, clock: SimClock, gate: crate::clock::Gate) -> Store {
        Store { conn: Arc::new(tokio::sync::Mutex::new(Conn::new(STORE_HOST, gate))), member: member.to_owned(), clock }
    }

    /// Writes `key` with fencing stamp `stamp` (`None`: unfenced) and
    /// returns the store's answer. The history records the write with its
    /// send and arrival times, whatever the answer.
    pub async fn write(&self, key: impl Into<String>, stamp: Option<Stamp>) -> Result<StoreAnswer, StoreError> {
        self.clock.wait_out_stall().await;
        let req = StoreRequest::Write { member: self.member.clone(), key: key.into(), stamp, sent_at: global_ms() };
        match self.conn.lock().await.exchange(&req, STORE_TIMEOUT).await.map_err(|e| StoreError(e.to_string()))? {
            StoreReply::Written(o) => Ok(o),
            StoreReply::Accepted(_) => Err(StoreError("the store answered another request".into())),
        }
    }

    /// How many writes the store has accepted so far (an application reads
    /// it to number its next write).
    pub async fn accepted(&self) -> Result<u64, StoreError> {
        self.clock.wait_out_stall().await;
        match self
            .conn
            .lock()
            .await
            .exchange(&StoreRequest::Accepted, STORE_TIMEOUT)
            .await
            .map_err(|e| StoreError(e.to_string()))?
        {
            StoreReply::Accepted(n) => Ok(n),
            StoreReply::Written(_) => Err(StoreError("the store answered another request".into())),
        }
    }
}

/// The store's state: the highest stamp it accepted and how many it took.
#[derive(Debug, Default)]
pub(crate) struct StoreState {
    highest: Option<Stamp>,
    accepted: u64,
}

impl StoreState {
    fn judge(&mut self, mode: StoreMode, stamp: Option<Stamp>) -> StoreAnswer {
        let fenced_out = match (mode, stamp) {
            (StoreMode::Unfenced, _) => false,
            (StoreMode::Fenced, None) => true,
            (StoreMode::Fenced, Some(s)) => self.highest.is_some_and(|h| s < h),
        };
        if fenced_out {
            return StoreAnswer::Refused { highest: self.highest };
        }
        self.accepted += 1;
        self.highest = self.highest.max(stamp);
        StoreAnswer::Accepted
    }
}

/// The store host: answers each connection's requests in order.
pub(crate) async fn store_main(mode: StoreMode, state: Arc<Mutex<StoreState>>, rec: Recorder) -> turmoil::Result {
    let listener = TcpListener::bind(("0.0.0.0", PORT)).await?;
    loop {
        let (mut stream, _) = listener.accept().await?;
        let (state, rec) = (state.clone(), rec.clone());
        tokio::task::spawn_local(async move {
            while let Ok(req) = read_frame::<StoreRequest>(&mut stream).await {
                let reply = match req {
                    StoreRequest::Write { member, key, stamp, sent_at } => {
                        let outcome = state.lock().expect("store lock").judge(mode, stamp);
                        let accepted = outcome == StoreAnswer::Accepted;
                        let at = global_ms();
                        let write = Write { at, sent_at, member, key, stamp, accepted, in_handler: false };
                        rec.lock().store_writes.push(write);
                        StoreReply::Written(outcome)
                    }
                    StoreRequest::Accepted => StoreReply::Accepted(state.lock().expect("store lock").accepted),
                };
                if write_frame(&mut stream, &reply).await.is_err() {
                    break;
                }
            }
        });
    }
}

/// A future that reports a panic of the one it wraps as an error (the
/// panic's message) instead of unwinding through the simulation: a user
/// application that panics is a reported failure of its seed.
pub(crate) struct CatchUnwind<F: ?Sized>(pub Pin<Box<F>>);

impl<F: Future + ?Sized> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.get_mut().0.as_mut();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(panic_text(&*payload))),
        }
    }
}

/// A panic's message, as far as it is text.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_store_refuses_stamps_below_the_highest_and_unstamped_writes() {
        let s = |token| Some(Stamp { log_epoch: 0, token });
        let mut st = StoreState::default();
        assert_eq!(st.judge(StoreMode::Fenced, s(5)), StoreAnswer::Accepted);
        assert_eq!(st.judge(StoreMode::Fenced, s(5)), StoreAnswer::Accepted, "the same term writes again");
        assert_eq!(st.judge(StoreMode::Fenced, s(3)), StoreAnswer::Refused { highest: s(5) });
        assert_eq!(st.judge(StoreMode::Fenced, None), StoreAnswer::Refused { highest: s(5) });
        // A new log epoch outranks every token of the old one.
        assert_eq!(st.judge(StoreMode::Fenced, Some(Stamp { log_epoch: 1, token: 0 })), StoreAnswer::Accepted);
        let mut open = StoreState::default();
        assert_eq!(open.judge(StoreMode::Unfenced, s(5)), StoreAnswer::Accepted);
        assert_eq!(open.judge(StoreMode::Unfenced, s(3)), StoreAnswer::Accepted);
        assert_eq!(open.judge(StoreMode::Unfenced, None), StoreAnswer::Accepted);
        assert_eq!((st.accepted, open.accepted), (3, 3));
    }
}
