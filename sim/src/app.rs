//! A team's own application inside the simulation (the harness API,
//! `harness`): what its code gets per member process ([`SimMember`]:
//! a real `neli::Neli` over the simulated client and clock, that clock, and
//! a client of the downstream [`Store`], a `neli::downstream::Downstream`),
//! and the store itself, a host of its own on the simulated network that
//! judges each write by its fencing stamp with the SQLite adapter
//! production uses (ARCHITECTURE.md, "Fencing downstream") and records it
//! in the run's history.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::rt::net::TcpListener;
use crate::rt::panic_text;
use serde::{Deserialize, Serialize};

use crate::client::SimBroker;
use crate::clock::{SimClock, global_ms};
use crate::proto::{Conn, PORT, read_frame, write_frame};
use crate::record::{Recorder, StampJson, Write};
use neli::Stamp;
use neli::downstream::sqlite::SqliteFence;
use neli::downstream::{Downstream, DownstreamError, Written};

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
    /// it has accepted (every write carries one: [`Store::write`] takes a
    /// `Stamp`). What a fenced
    /// downstream (a database with a conditional update, an API that takes
    /// the token) does.
    #[default]
    Fenced,
    /// Accepts every write, whatever its stamp: a downstream that does not
    /// fence, to show what fencing prevents.
    Unfenced,
}

/// What one member process of a harness run gets: what a production
/// service has around neli.
///
/// `neli` is the real driver (the same `Neli` as production) over the
/// simulated Kafka client and the member's simulated clock, configured from
/// the scenario's `[election]` table; register its `on_event` handlers or
/// `on_term` work and run it as the service would (`pulse` loop or
/// `background`). A service generic over `neli::Broker`, `neli::Clock` and
/// `neli::downstream::Downstream` takes `neli`, `clock` and `store` as they
/// are, as in production. Use `clock`
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

/// A store request that got no answer in time: the network cut it or
/// delayed it (it may still have landed).
pub type StoreError = DownstreamError;

#[derive(Debug, Serialize, Deserialize)]
enum StoreRequest {
    Write { member: String, key: String, value: Vec<u8>, stamp: StampJson, sent_at: u64 },
    Count,
}

#[derive(Debug, Serialize, Deserialize)]
enum StoreReply {
    Accepted,
    Refused(StampJson),
    Count(u64),
    Failed(String),
}

/// A member's client of the downstream store: a [`Downstream`] (cheap to
/// clone, `Send`, so term work and event handlers can write with it; one
/// request in flight at a time, as over one connection).
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

    async fn ask(&self, req: StoreRequest) -> Result<StoreReply, StoreError> {
        self.clock.wait_out_stall().await;
        let reply: StoreReply =
            self.conn.lock().await.exchange(&req, STORE_TIMEOUT).await.map_err(|e| DownstreamError(e.to_string()))?;
        match reply {
            StoreReply::Failed(why) => Err(DownstreamError(why)),
            r => Ok(r),
        }
    }
}

/// The history records each write with its send and arrival times,
/// whatever the answer.
impl Downstream for Store {
    fn write(&self, key: &str, value: &[u8], stamp: Stamp) -> impl Future<Output = Result<Written, StoreError>> + Send {
        let req = StoreRequest::Write {
            member: self.member.clone(),
            key: key.to_owned(),
            value: value.to_vec(),
            stamp: stamp.into(),
            sent_at: global_ms(),
        };
        async move {
            match self.ask(req).await? {
                StoreReply::Accepted => Ok(Written::Accepted),
                StoreReply::Refused(highest) => Ok(Written::Refused { highest: highest.into() }),
                _ => Err(DownstreamError("the store answered another request".into())),
            }
        }
    }

    async fn count(&self) -> Result<u64, StoreError> {
        match self.ask(StoreRequest::Count).await? {
            StoreReply::Count(n) => Ok(n),
            _ => Err(DownstreamError("the store answered another request".into())),
        }
    }
}

/// Judges one request with the SQLite adapter, as a production
/// downstream would, and records a write in the history.
fn answer(mode: StoreMode, db: &SqliteFence, rec: &Recorder, req: StoreRequest) -> StoreReply {
    let (member, key, value, stamp, sent_at) = match req {
        StoreRequest::Count => return db.count_now().map_or_else(|e| StoreReply::Failed(e.0), StoreReply::Count),
        StoreRequest::Write { member, key, value, stamp, sent_at } => (member, key, value, Stamp::from(stamp), sent_at),
    };
    let written = match mode {
        StoreMode::Fenced => db.write_now(&key, &value, stamp),
        StoreMode::Unfenced => db.write_unfenced(&key, &value, stamp).map(|()| Written::Accepted),
    };
    let reply = match written {
        Ok(Written::Accepted) => StoreReply::Accepted,
        Ok(Written::Refused { highest }) => StoreReply::Refused(highest.into()),
        Ok(other) => return StoreReply::Failed(format!("an answer the store does not know: {other:?}")),
        Err(e) => return StoreReply::Failed(e.0),
    };
    let accepted = matches!(reply, StoreReply::Accepted);
    let write = Write { at: global_ms(), sent_at, member, key, stamp: Some(stamp), accepted, in_handler: false };
    rec.lock().store_writes.push(write);
    reply
}

/// The store's database: the SQLite adapter on a private in-memory
/// database (deterministic), kept across restarts of the store host.
pub(crate) fn store_database() -> SqliteFence {
    SqliteFence::in_memory("store").expect("an in-memory SQLite database opens")
}

/// The store host: answers each connection's requests in order.
pub(crate) async fn store_main(mode: StoreMode, db: SqliteFence, rec: Recorder) -> crate::rt::Result {
    let listener = TcpListener::bind(("0.0.0.0", PORT)).await?;
    loop {
        let (mut stream, _) = listener.accept().await?;
        let (db, rec) = (db.clone(), rec.clone());
        tokio::task::spawn_local(async move {
            while let Ok(req) = read_frame::<StoreRequest>(&mut stream).await {
                let reply = answer(mode, &db, &rec, req);
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

#[cfg(test)]
mod tests {
    use neli::Token;

    use super::*;

    fn write(mode: StoreMode, db: &SqliteFence, token: u64) -> StoreReply {
        let rec = Recorder::default();
        let stamp = Stamp { log_epoch: 0, token: Token(token) }.into();
        answer(
            mode,
            db,
            &rec,
            StoreRequest::Write { member: "m1".into(), key: "k".into(), value: vec![], stamp, sent_at: 0 },
        )
    }

    #[test]
    fn the_fenced_store_judges_with_the_sqlite_adapter_and_the_unfenced_one_takes_everything() {
        let db = store_database();
        assert!(matches!(write(StoreMode::Fenced, &db, 5), StoreReply::Accepted));
        assert!(matches!(write(StoreMode::Fenced, &db, 5), StoreReply::Accepted), "the same term writes again");
        let StoreReply::Refused(highest) = write(StoreMode::Fenced, &db, 3) else { panic!("a stale stamp is refused") };
        assert_eq!(Stamp::from(highest).token, Token(5));
        let open = store_database();
        assert!(matches!(write(StoreMode::Unfenced, &open, 5), StoreReply::Accepted));
        assert!(matches!(write(StoreMode::Unfenced, &open, 3), StoreReply::Accepted));
        assert_eq!(open.rows().expect("rows")[0].stamp.token, Token(3), "the older write overwrote the newer");
    }
}
