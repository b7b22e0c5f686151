//! The fenced-write adapter for SQLite (feature `sqlite`, the library
//! bundled): a write is judged against the highest stamp of its fence range
//! and carried out in one `BEGIN IMMEDIATE` transaction with that check,
//! so no other writer, in this process or another on the same file, can
//! write between the two (ARCHITECTURE.md, "Fencing downstream").
//!
//! Two tables, created if missing: `neli_fence` (one row per fence range:
//! the highest accepted stamp) and `neli_rows` (the key/value rows written
//! through [`Downstream::write`]). [`SqliteFence::transaction`] runs a
//! team's own statements under the same check instead.
//!
//! ```
//! use neli::downstream::{Downstream, Written, sqlite::SqliteFence};
//! use neli::{Stamp, Token};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let db = SqliteFence::in_memory("invoices")?;
//! let (old, new) = (Stamp { log_epoch: 0, token: Token(3) }, Stamp { log_epoch: 0, token: Token(7) });
//! assert_eq!(db.write("invoice-1", b"sent", new).await?, Written::Accepted);
//! assert_eq!(db.write("invoice-2", b"sent", old).await?, Written::Refused { highest: new });
//! assert_eq!(db.count().await?, 1);
//! # Ok(()) }
//! ```

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

// `sqlite::Row` keeps naming the row type, now shared with the PostgreSQL adapter.
pub use super::Row;
use super::{Downstream, DownstreamError, Written, refused_by};
use crate::core::{Stamp, Token};

/// How long a writer waits for another connection's transaction on the
/// same file before it reports no answer.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS neli_fence (
    range TEXT PRIMARY KEY,
    log_epoch INTEGER NOT NULL,
    token INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS neli_rows (
    range TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    log_epoch INTEGER NOT NULL,
    token INTEGER NOT NULL,
    PRIMARY KEY (range, key)
);";

/// One fence range of a SQLite database: the writes of one election role
/// (or whatever a team fences together). Clones share the connection.
#[derive(Clone)]
pub struct SqliteFence {
    conn: Arc<Mutex<Connection>>,
    range: Arc<str>,
}

/// What [`SqliteFence::transaction`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fenced<T> {
    /// The stamp passed the fence; the statements ran and were committed.
    Committed(T),
    /// Refused by the fence: nothing ran.
    Refused {
        /// The highest stamp the range had accepted.
        highest: Stamp,
    },
}

fn no_answer(e: impl std::fmt::Display) -> DownstreamError {
    DownstreamError(format!("sqlite: {e}"))
}

fn to_sql(n: u64, what: &str) -> Result<i64, DownstreamError> {
    i64::try_from(n).map_err(|_| DownstreamError(format!("sqlite: {what} {n} does not fit a SQLite integer")))
}

fn from_sql(n: i64, what: &str) -> rusqlite::Result<u64> {
    u64::try_from(n).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(0, n)).inspect_err(|_| {
        tracing::error!(what, n, "a negative stamp part in neli_fence or neli_rows");
    })
}

impl SqliteFence {
    /// Opens (creating if needed) the database file at `path`, fencing
    /// writes in `range`.
    pub fn open(path: impl AsRef<Path>, range: &str) -> Result<SqliteFence, DownstreamError> {
        let path = path.as_ref();
        let conn = Connection::open(path).map_err(|e| DownstreamError(format!("sqlite: {}: {e}", path.display())))?;
        SqliteFence::with_connection(conn, range)
    }

    /// A private in-memory database (deterministic: the simulator's store
    /// judges with one), fencing writes in `range`.
    pub fn in_memory(range: &str) -> Result<SqliteFence, DownstreamError> {
        SqliteFence::with_connection(Connection::open_in_memory().map_err(no_answer)?, range)
    }

    /// Fences writes in `range` over a connection the caller opened.
    pub fn with_connection(conn: Connection, range: &str) -> Result<SqliteFence, DownstreamError> {
        conn.busy_timeout(BUSY_TIMEOUT).map_err(no_answer)?;
        conn.execute_batch(SCHEMA).map_err(no_answer)?;
        Ok(SqliteFence { conn: Arc::new(Mutex::new(conn)), range: range.into() })
    }

    /// The fence range this handle writes in.
    pub fn range(&self) -> &str {
        &self.range
    }

    /// Runs `statements` in one transaction if `stamp` is not below the
    /// range's highest accepted stamp, raising that stamp to `stamp` in the
    /// same transaction; otherwise runs nothing. An error from
    /// `statements` rolls everything back, the stamp included.
    ///
    /// ```
    /// use neli::downstream::sqlite::{Fenced, SqliteFence};
    /// use neli::{Stamp, Token};
    ///
    /// let db = SqliteFence::in_memory("billing")?;
    /// let stamp = Stamp { log_epoch: 0, token: Token(12) };
    /// let done = db.transaction(stamp, |tx| {
    ///     tx.execute_batch("CREATE TABLE IF NOT EXISTS runs (day TEXT PRIMARY KEY)")?;
    ///     tx.execute("INSERT OR IGNORE INTO runs (day) VALUES ('2026-11-28')", [])
    /// })?;
    /// assert_eq!(done, Fenced::Committed(1));
    /// # Ok::<(), neli::downstream::DownstreamError>(())
    /// ```
    pub fn transaction<T>(
        &self,
        stamp: Stamp,
        statements: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<Fenced<T>, DownstreamError> {
        let (epoch, token) = (to_sql(stamp.log_epoch, "log epoch")?, to_sql(stamp.token.0, "token")?);
        let mut conn = self.conn.lock().map_err(|_| DownstreamError("sqlite: a writer panicked".into()))?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(no_answer)?;
        let highest = highest_in(&tx, &self.range).map_err(no_answer)?;
        if let Some(highest) = refused_by(highest, stamp) {
            // Dropping the transaction rolls back; it wrote nothing anyway.
            return Ok(Fenced::Refused { highest });
        }
        tx.execute(
            "INSERT INTO neli_fence (range, log_epoch, token) VALUES (?1, ?2, ?3)
             ON CONFLICT (range) DO UPDATE SET log_epoch = excluded.log_epoch, token = excluded.token",
            params![&*self.range, epoch, token],
        )
        .map_err(no_answer)?;
        let out = statements(&tx).map_err(no_answer)?;
        tx.commit().map_err(no_answer)?;
        Ok(Fenced::Committed(out))
    }

    /// Writes `value` under `key` with no fence at all: what a downstream
    /// that does not fence does. For tests that show what fencing prevents
    /// (the simulator's unfenced store); a service never wants it.
    pub fn write_unfenced(&self, key: &str, value: &[u8], stamp: Stamp) -> Result<(), DownstreamError> {
        to_sql(stamp.log_epoch, "log epoch")?;
        to_sql(stamp.token.0, "token")?;
        let conn = self.conn.lock().map_err(|_| DownstreamError("sqlite: a writer panicked".into()))?;
        put_row(&conn, &self.range, key, value, stamp).map_err(no_answer)
    }

    /// [`Downstream::write`], without the future: judges and writes now.
    pub fn write_now(&self, key: &str, value: &[u8], stamp: Stamp) -> Result<Written, DownstreamError> {
        let range = self.range.clone();
        match self.transaction(stamp, |tx| put_row(tx, &range, key, value, stamp))? {
            Fenced::Committed(()) => Ok(Written::Accepted),
            Fenced::Refused { highest } => Ok(Written::Refused { highest }),
        }
    }

    /// The highest stamp the range has accepted.
    pub fn highest(&self) -> Result<Option<Stamp>, DownstreamError> {
        let conn = self.conn.lock().map_err(|_| DownstreamError("sqlite: a writer panicked".into()))?;
        highest_in(&conn, &self.range).map_err(no_answer)
    }

    /// The range's rows, by key.
    pub fn rows(&self) -> Result<Vec<Row>, DownstreamError> {
        let conn = self.conn.lock().map_err(|_| DownstreamError("sqlite: a writer panicked".into()))?;
        let mut q = conn
            .prepare("SELECT key, value, log_epoch, token FROM neli_rows WHERE range = ?1 ORDER BY key")
            .map_err(no_answer)?;
        let rows = q
            .query_map([&*self.range], |r| {
                let stamp =
                    Stamp { log_epoch: from_sql(r.get(2)?, "log_epoch")?, token: Token(from_sql(r.get(3)?, "token")?) };
                Ok(Row { key: r.get(0)?, value: r.get(1)?, stamp })
            })
            .map_err(no_answer)?;
        rows.collect::<rusqlite::Result<Vec<Row>>>().map_err(no_answer)
    }

    /// How many rows the range holds.
    pub fn count_now(&self) -> Result<u64, DownstreamError> {
        let conn = self.conn.lock().map_err(|_| DownstreamError("sqlite: a writer panicked".into()))?;
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM neli_rows WHERE range = ?1", [&*self.range], |r| r.get(0))
            .map_err(no_answer)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

fn highest_in(conn: &Connection, range: &str) -> rusqlite::Result<Option<Stamp>> {
    conn.query_row("SELECT log_epoch, token FROM neli_fence WHERE range = ?1", [range], |r| {
        Ok(Stamp { log_epoch: from_sql(r.get(0)?, "log_epoch")?, token: Token(from_sql(r.get(1)?, "token")?) })
    })
    .optional()
}

fn put_row(conn: &Connection, range: &str, key: &str, value: &[u8], stamp: Stamp) -> rusqlite::Result<()> {
    // Stamps past i64::MAX were refused by the caller (`to_sql`).
    let (epoch, token) = (stamp.log_epoch as i64, stamp.token.0 as i64);
    conn.execute(
        "INSERT INTO neli_rows (range, key, value, log_epoch, token) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (range, key) DO UPDATE SET value = excluded.value, log_epoch = excluded.log_epoch, token = excluded.token",
        params![range, key, value, epoch, token],
    )?;
    Ok(())
}

/// Runs on the calling task: SQLite answers a local write in well under a
/// millisecond. For a slow disk, call [`SqliteFence::write_now`] from
/// `tokio::task::spawn_blocking` instead.
impl Downstream for SqliteFence {
    fn write(
        &self,
        key: &str,
        value: &[u8],
        stamp: Stamp,
    ) -> impl Future<Output = Result<Written, DownstreamError>> + Send {
        std::future::ready(self.write_now(key, value, stamp))
    }

    fn count(&self) -> impl Future<Output = Result<u64, DownstreamError>> + Send {
        std::future::ready(self.count_now())
    }
}
