//! The fenced-write adapter for PostgreSQL (feature `postgres`, over
//! `tokio-postgres`): a write is judged against the highest stamp of its
//! fence range and carried out in ONE SQL statement with that check, so no
//! other writer, on any connection, can write between the two
//! (ARCHITECTURE.md, "Fencing downstream").
//!
//! The same two tables as the SQLite adapter, created if missing:
//! `neli_fence` (one row per fence range: the highest accepted stamp) and
//! `neli_rows` (the key/value rows written through [`Downstream::write`]),
//! stamps as `BIGINT`, values as `BYTEA`. The statement upserts the range's
//! fence row first; `INSERT ... ON CONFLICT DO UPDATE` locks that row until
//! the statement commits, so writers of one range take turns on it and each
//! is judged against the stamp the one before it committed.
//!
//! A handle keeps one connection. When that connection breaks, every call
//! answers [`DownstreamError`]; connect again (with `connect_timeout`,
//! `keepalives` and, through `options=-c statement_timeout=...`, a statement
//! timeout in the connection string, a dead server is noticed in bounded
//! time).
//!
//! ```no_run
//! use neli::downstream::{Downstream, Written, postgres::PostgresFence};
//! use neli::{Stamp, Token};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let db = PostgresFence::connect("host=127.0.0.1 user=billing dbname=billing connect_timeout=5", "invoices").await?;
//! let (old, new) = (Stamp { log_epoch: 0, token: Token(3) }, Stamp { log_epoch: 0, token: Token(7) });
//! assert_eq!(db.write("invoice-1", b"sent", new).await?, Written::Accepted);
//! assert_eq!(db.write("invoice-2", b"sent", old).await?, Written::Refused { highest: new });
//! assert_eq!(db.count().await?, 1);
//! # Ok(()) }
//! ```

use std::future::Future;
use std::sync::Arc;

/// The `tokio-postgres` this adapter is built on, for a [`Client`] to hand
/// to [`PostgresFence::with_client`] (TLS, a pool's connection).
pub use tokio_postgres;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, Statement};

use super::{Downstream, DownstreamError, Row, Written};
use crate::core::{Stamp, Token};

/// The tables, created in one simple-protocol batch (which runs as one
/// transaction) under an advisory lock held until it commits: two handles
/// connecting at once to a fresh database would otherwise race on `CREATE
/// TABLE IF NOT EXISTS` (both see no table, one fails on the catalog's
/// unique index). The lock's key is any constant; this one is "neli" in ASCII.
const SCHEMA: &str = "
SELECT pg_advisory_xact_lock(1852140649);
CREATE TABLE IF NOT EXISTS neli_fence (
    range TEXT PRIMARY KEY,
    log_epoch BIGINT NOT NULL,
    token BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS neli_rows (
    range TEXT NOT NULL,
    key TEXT NOT NULL,
    value BYTEA NOT NULL,
    log_epoch BIGINT NOT NULL,
    token BIGINT NOT NULL,
    PRIMARY KEY (range, key)
);";

/// The fenced write: $1 range, $2 log epoch, $3 token, $4 key, $5 value.
///
/// `fence` raises the range's stamp to the greater of the stored one and
/// ours and returns the result; `put` writes the row only if that result is
/// our stamp (we were not below the highest). The fence row is updated even
/// when it keeps its stamp, so that `RETURNING` names the stamp we were
/// judged against (a refusal's `highest`) in this same statement; a
/// `WHERE` on the update would return nothing on refusal, and a second
/// `SELECT` in the statement reads its snapshot, not the row as locked.
const WRITE: &str = "
WITH fence AS (
    INSERT INTO neli_fence AS f (range, log_epoch, token) VALUES ($1, $2, $3)
    ON CONFLICT (range) DO UPDATE SET
        log_epoch = CASE WHEN (f.log_epoch, f.token) <= (excluded.log_epoch, excluded.token)
                         THEN excluded.log_epoch ELSE f.log_epoch END,
        token = CASE WHEN (f.log_epoch, f.token) <= (excluded.log_epoch, excluded.token)
                     THEN excluded.token ELSE f.token END
    RETURNING f.log_epoch, f.token
), put AS (
    INSERT INTO neli_rows (range, key, value, log_epoch, token)
    SELECT $1, $4, $5, $2, $3 FROM fence WHERE (fence.log_epoch, fence.token) = ($2, $3)
    ON CONFLICT (range, key) DO UPDATE
        SET value = excluded.value, log_epoch = excluded.log_epoch, token = excluded.token
)
SELECT log_epoch, token FROM fence";

/// One fence range of a PostgreSQL database: the writes of one election
/// role (or whatever a team fences together). Clones share the connection
/// (tokio-postgres pipelines their statements on it).
#[derive(Clone)]
pub struct PostgresFence {
    client: Arc<Client>,
    range: Arc<str>,
    write: Statement,
}

/// The error's whole chain: tokio-postgres's own message is only its kind
/// ("db error"), the server's words are in its source.
fn no_answer(e: &(dyn std::error::Error + 'static)) -> DownstreamError {
    let mut msg = format!("postgres: {e}");
    let mut cause = e.source();
    while let Some(c) = cause {
        msg.push_str(&format!(": {c}"));
        cause = c.source();
    }
    DownstreamError(msg)
}

fn to_sql(n: u64, what: &str) -> Result<i64, DownstreamError> {
    i64::try_from(n).map_err(|_| {
        DownstreamError(format!("postgres: {what} {n} does not fit a PostgreSQL BIGINT (at most {})", i64::MAX))
    })
}

fn from_sql(n: i64, what: &str) -> Result<u64, DownstreamError> {
    u64::try_from(n).map_err(|_| {
        tracing::error!(what, n, "a negative stamp part in neli_fence or neli_rows");
        DownstreamError(format!("postgres: a negative {what} ({n}) in the fence tables"))
    })
}

fn stamp_of(row: &tokio_postgres::Row, epoch: usize, token: usize) -> Result<Stamp, DownstreamError> {
    let (e, t): (i64, i64) =
        (row.try_get(epoch).map_err(|e| no_answer(&e))?, row.try_get(token).map_err(|e| no_answer(&e))?);
    Ok(Stamp { log_epoch: from_sql(e, "log_epoch")?, token: Token(from_sql(t, "token")?) })
}

impl PostgresFence {
    /// Connects without TLS (`conninfo` as libpq takes it, key=value or a
    /// `postgresql://` URL), creates the tables if missing and fences
    /// writes in `range`. The connection runs on a task of its own
    /// (`tokio::spawn`), so call this inside a Tokio runtime.
    pub async fn connect(conninfo: &str, range: &str) -> Result<PostgresFence, DownstreamError> {
        // The connection string is not echoed: it may hold a password.
        let (client, connection) = tokio_postgres::connect(conninfo, NoTls).await.map_err(|e| no_answer(&e))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %no_answer(&e), "the PostgreSQL fence's connection ended");
            }
        });
        PostgresFence::with_client(Arc::new(client), range).await
    }

    /// Fences writes in `range` over a client the caller connected (with
    /// TLS, say), whose connection task the caller runs; creates the tables
    /// if missing.
    pub async fn with_client(client: Arc<Client>, range: &str) -> Result<PostgresFence, DownstreamError> {
        // Created only when missing: a service's role may be allowed to
        // write the tables without being allowed to create any.
        let present = client
            .query_one("SELECT to_regclass('neli_fence') IS NOT NULL AND to_regclass('neli_rows') IS NOT NULL", &[])
            .await
            .map_err(|e| no_answer(&e))?;
        if !present.try_get::<_, bool>(0).map_err(|e| no_answer(&e))? {
            client.batch_execute(SCHEMA).await.map_err(|e| no_answer(&e))?;
        }
        // Prepared once, with the types given, so a write is one round trip.
        let types = [Type::TEXT, Type::INT8, Type::INT8, Type::TEXT, Type::BYTEA];
        let write = client.prepare_typed(WRITE, &types).await.map_err(|e| no_answer(&e))?;
        Ok(PostgresFence { client, range: range.into(), write })
    }

    /// The fence range this handle writes in.
    pub fn range(&self) -> &str {
        &self.range
    }

    /// The highest stamp the range has accepted.
    pub async fn highest(&self) -> Result<Option<Stamp>, DownstreamError> {
        let row = self
            .client
            .query_opt("SELECT log_epoch, token FROM neli_fence WHERE range = $1", &[&&*self.range])
            .await
            .map_err(|e| no_answer(&e))?;
        row.map(|r| stamp_of(&r, 0, 1)).transpose()
    }

    /// The range's rows, by key.
    pub async fn rows(&self) -> Result<Vec<Row>, DownstreamError> {
        let rows = self
            .client
            .query("SELECT key, value, log_epoch, token FROM neli_rows WHERE range = $1 ORDER BY key", &[&&*self.range])
            .await
            .map_err(|e| no_answer(&e))?;
        rows.iter()
            .map(|r| {
                Ok(Row {
                    key: r.try_get(0).map_err(|e| no_answer(&e))?,
                    value: r.try_get(1).map_err(|e| no_answer(&e))?,
                    stamp: stamp_of(r, 2, 3)?,
                })
            })
            .collect()
    }

    async fn judge_and_write(&self, key: &str, value: &[u8], stamp: Stamp) -> Result<Written, DownstreamError> {
        let (epoch, token) = (to_sql(stamp.log_epoch, "log epoch")?, to_sql(stamp.token.0, "token")?);
        let fence = self
            .client
            .query_one(&self.write, &[&&*self.range, &epoch, &token, &key, &value])
            .await
            .map_err(|e| no_answer(&e))?;
        let highest = stamp_of(&fence, 0, 1)?;
        if highest == stamp {
            Ok(Written::Accepted)
        } else {
            // The fence keeps the greater stamp, so one that is not ours is above it.
            debug_assert!(highest > stamp, "fence {highest:?} below the write's {stamp:?}");
            Ok(Written::Refused { highest })
        }
    }

    async fn count_rows(&self) -> Result<u64, DownstreamError> {
        let row = self
            .client
            .query_one("SELECT COUNT(*) FROM neli_rows WHERE range = $1", &[&&*self.range])
            .await
            .map_err(|e| no_answer(&e))?;
        let n: i64 = row.try_get(0).map_err(|e| no_answer(&e))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// One statement and one round trip per write; the module's doc says why no
/// other writer gets between the check and the write.
impl Downstream for PostgresFence {
    fn write(
        &self,
        key: &str,
        value: &[u8],
        stamp: Stamp,
    ) -> impl Future<Output = Result<Written, DownstreamError>> + Send {
        self.judge_and_write(key, value, stamp)
    }

    fn count(&self) -> impl Future<Output = Result<u64, DownstreamError>> + Send {
        self.count_rows()
    }
}
