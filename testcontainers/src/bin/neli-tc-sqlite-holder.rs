//! A writer that dies inside its write transaction, for the SQLite fence
//! tests (`tests/it/sqlite_fence.rs`): it opens the database file through
//! the adapter, starts one fenced transaction (`SqliteFence::transaction`:
//! `BEGIN IMMEDIATE`, the fence raised to STAMP), writes KEY = VALUE and a
//! row `ballast` of BALLAST zero bytes in it, prints `ready` and sleeps until
//! it is killed. A ballast larger than SQLite's page cache (2,000 KiB by
//! default) makes the transaction spill its pages into the database file
//! before any commit, so the file holds the uncommitted writes and the
//! rollback journal is hot. The transaction is never committed: SQLite's
//! rollback journal undoes it after the process dies,
//! so the fence check and the write stand or fall together (the module
//! docs of `neli::downstream::sqlite`).
//!
//! Usage: `neli-tc-sqlite-holder DB RANGE LOG_EPOCH TOKEN KEY VALUE BALLAST`.

use std::io::Write;
use std::time::Duration;

use neli::downstream::sqlite::{Fenced, SqliteFence};
use neli::{Stamp, Token};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, range, log_epoch, token, key, value, ballast] = args.as_slice() else {
        eprintln!("usage: neli-tc-sqlite-holder DB RANGE LOG_EPOCH TOKEN KEY VALUE BALLAST");
        std::process::exit(2);
    };
    let (Ok(log_epoch), Ok(token), Ok(ballast)) =
        (log_epoch.parse::<i64>(), token.parse::<i64>(), ballast.parse::<i64>())
    else {
        eprintln!("LOG_EPOCH, TOKEN and BALLAST must be integers, got {log_epoch:?} {token:?} {ballast:?}");
        std::process::exit(2);
    };
    let fence = SqliteFence::open(db, range).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let stamp = Stamp { log_epoch: log_epoch as u64, token: Token(token as u64) };
    let held = fence.transaction(stamp, |tx| {
        tx.execute(
            "INSERT INTO neli_rows (range, key, value, log_epoch, token) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (range, key) DO UPDATE SET value = excluded.value,
                 log_epoch = excluded.log_epoch, token = excluded.token",
            (range, key, value.as_bytes(), log_epoch, token),
        )?;
        tx.execute(
            "INSERT INTO neli_rows (range, key, value, log_epoch, token) VALUES (?1, 'ballast', zeroblob(?2), ?3, ?4)",
            (range, ballast, log_epoch, token),
        )?;
        // The fence row and the row are written, not committed: the test
        // kills this process now.
        println!("ready");
        let _ = std::io::stdout().flush();
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    });
    // Reached only if the fence refused the stamp or SQLite failed.
    match held {
        Ok(Fenced::Refused { highest }) => eprintln!("refused: the range's highest stamp is {highest:?}"),
        Ok(Fenced::Committed(())) => unreachable!("the transaction sleeps until killed"),
        Err(e) => eprintln!("{e}"),
    }
    std::process::exit(1);
}
