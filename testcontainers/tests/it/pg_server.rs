//! A throwaway PostgreSQL server for the fence tests: Debian's `postgresql`
//! binaries (no container, no system service), a data directory in a temp
//! dir, trust auth, 127.0.0.1 on a free port. PostgreSQL refuses to run as
//! root, so under root it runs as the `postgres` user. The guard stops it
//! by its PID when dropped, which a failing test does too.

use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// How long the server gets to accept connections, and to stop.
const READY_WITHIN: Duration = Duration::from_secs(30);
const STOP_WITHIN: Duration = Duration::from_secs(10);

static SERVERS: AtomicU32 = AtomicU32::new(0);

/// A running server; dropping it stops the server and removes its files.
pub struct PgServer {
    child: Child,
    dir: PathBuf,
    port: u16,
}

/// The newest `/usr/lib/postgresql/<major>/bin` with `initdb` and `postgres`.
fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("postgres").is_file()).then_some((major, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// The `postgres` user's uid and gid, from /etc/passwd.
fn postgres_user() -> Result<(u32, u32), String> {
    let passwd = fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .ok_or("running as root and there is no `postgres` user to run PostgreSQL as")?;
    let f: Vec<&str> = line.split(':').collect();
    match (f.get(2).and_then(|u| u.parse().ok()), f.get(3).and_then(|g| g.parse().ok())) {
        (Some(uid), Some(gid)) => Ok((uid, gid)),
        _ => Err(format!("cannot read the postgres user's ids from /etc/passwd: {line}")),
    }
}

/// `program`, as the `postgres` user when we are root (`setpriv` execs, so
/// the child's PID is the program's own: that is the PID the guard stops).
fn command(program: &Path, user: Option<(u32, u32)>) -> Command {
    match user {
        Some((uid, gid)) => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid", &uid.to_string(), "--regid", &gid.to_string(), "--clear-groups", "--"]).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// A port free on 127.0.0.1 a moment ago (another process may take it
/// before the server binds; the server's start then fails, loudly).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

impl PgServer {
    /// Starts a server, or, without the PostgreSQL binaries, fails under
    /// `CI=true` and otherwise says SKIPPED and returns `None`.
    pub fn start_or_skip(what: &str) -> Option<PgServer> {
        let Some(bin) = bin_dir() else {
            let why = "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb and postgres)";
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("{what}: {why}; install them: apt-get install postgresql");
            }
            // Straight to stderr: the harness captures eprintln! of a passing test.
            let _ = writeln!(std::io::stderr(), "SKIPPED: {what}: {why}; `apt-get install postgresql` to run it");
            return None;
        };
        Some(PgServer::start(&bin).unwrap_or_else(|e| panic!("{what}: starting PostgreSQL: {e}")))
    }

    fn start(bin: &Path) -> Result<PgServer, String> {
        let user = if rustix::process::geteuid().is_root() { Some(postgres_user()?) } else { None };
        let n = SERVERS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("neli-pg-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", dir.display()))?;
        }
        let data = dir.join("data");
        let init = command(&bin.join("initdb"), user)
            .current_dir(&dir)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync", "-D"])
            .arg(&data)
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !init.status.success() {
            let _ = fs::remove_dir_all(&dir);
            return Err(format!("initdb: {}\n{}", init.status, String::from_utf8_lossy(&init.stderr)));
        }
        let port = free_port();
        let log = fs::File::create(dir.join("server.log")).map_err(|e| format!("server.log: {e}"))?;
        let err_log = log.try_clone().map_err(|e| format!("server.log: {e}"))?;
        // Durability is not under test (no server crashes here): skip the syncs.
        let child = command(&bin.join("postgres"), user)
            .current_dir(&dir)
            .arg("-D")
            .arg(&data)
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
            .arg(&dir)
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err_log)
            .spawn()
            .map_err(|e| format!("postgres: {e}"))?;
        let mut server = PgServer { child, dir, port };
        server.wait_ready(&data)?;
        Ok(server)
    }

    /// Waits for postmaster.pid's status line to say `ready` (it does once
    /// the server accepts connections).
    fn wait_ready(&mut self, data: &Path) -> Result<(), String> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let pid_file = fs::read_to_string(data.join("postmaster.pid")).unwrap_or_default();
            if pid_file.lines().nth(7).is_some_and(|status| status.trim() == "ready") {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("postgres exited ({status}):\n{}", self.log()));
            }
            if Instant::now() > deadline {
                return Err(format!("not ready within {READY_WITHIN:?}:\n{}", self.log()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// A libpq connection string for the superuser on this server.
    pub fn conninfo(&self) -> String {
        format!("host=127.0.0.1 port={} user=postgres dbname=postgres connect_timeout=10", self.port)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // SIGINT is PostgreSQL's fast shutdown: sessions are ended, open
        // transactions rolled back, and the server exits.
        let pid = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw);
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, Signal::INT);
        }
        let deadline = Instant::now() + STOP_WITHIN;
        while !matches!(self.child.try_wait(), Ok(Some(_))) {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}
