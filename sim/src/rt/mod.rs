//! The simulator's runtime: named hosts, simulated time and a simulated TCP
//! network ([`net`]) on one tokio current-thread runtime whose clock is
//! paused (ARCHITECTURE.md, "The simulator's runtime").
//!
//! Every host's program runs in a `LocalSet` of its own inside the one
//! runtime, so a crash drops the host's tasks and nothing else. Time moves
//! only when every host waits: the runtime then jumps to the next timer
//! (a sleep, a message's arrival), so an idle stretch costs nothing, where a
//! runtime that ticks every host at a fixed step pays for every tick. The
//! same seed gives the same run: one thread, tokio's scheduler and `select!`
//! seeded ([`Sim::new`]), message delays drawn from the run's own seeded
//! generator in the order the hosts send.

pub mod net;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::{JoinHandle, LocalSet};

use net::{HostId, Net};

/// What a host program returns: an error ends the
/// run with a `simulation-error` violation.
pub type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

type Software = Box<dyn Fn() -> Pin<Box<dyn Future<Output = Result>>>>;

thread_local! {
    /// The network of the run being stepped on this thread, while
    /// [`Sim::run_until`] runs.
    static CURRENT: RefCell<Option<Arc<Mutex<Net>>>> = const { RefCell::new(None) };
    /// The host whose task is being polled (set by [`OnHost`]).
    static HOST: Cell<Option<HostId>> = const { Cell::new(None) };
    /// Tasks a host's program spawned with `tokio::spawn`: (host, where).
    static STRAYS: RefCell<Vec<(HostId, String)>> = const { RefCell::new(Vec::new()) };
}

/// Simulated time since the run began, inside a host; `None` outside a run.
pub fn elapsed() -> Option<Duration> {
    current_net().map(|net| lock(&net).elapsed())
}

/// The network of the run being stepped on this thread, if any.
fn current_net() -> Option<Arc<Mutex<Net>>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// `m`'s guard, whether or not a panic poisoned it: a panic inside a run
/// ends that run with a violation, and the run's teardown still takes the
/// locks (`neli_sim::run_scenario`).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A panic's message, as far as it is text.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic".to_owned())
}

/// The host whose code is running, if any.
pub(crate) fn current_host() -> Option<HostId> {
    HOST.with(Cell::get)
}

/// Polls a host's program with the host set as current, so that what it
/// binds and connects is bound and sent from that host.
struct OnHost<F> {
    host: HostId,
    inner: Pin<Box<F>>,
}

impl<F: Future> Future for OnHost<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let host = self.host;
        let _previous = Restore(HOST.with(|h| h.replace(Some(host))));
        self.inner.as_mut().poll(cx)
    }
}

/// Puts the current host back when a poll ends, a panicking one too.
struct Restore(Option<HostId>);

impl Drop for Restore {
    fn drop(&mut self) {
        HOST.with(|h| h.set(self.0));
    }
}

struct HostEntry {
    name: String,
    software: Software,
    task: Option<JoinHandle<std::result::Result<(), String>>>,
}

/// One simulated run's hosts, network and clock.
///
/// Hosts are named when added ([`Sim::host`]); every method that takes a
/// name takes one of those.
///
/// # Panics
///
/// A method given a name no host has, or [`Sim::host`] given one twice,
/// panics naming it: the simulator names only hosts of its scenario, which
/// validation checked (`scenario::Scenario::parse`).
pub struct Sim {
    // The hosts' tasks drop before the runtime they ran on.
    top: LocalSet,
    rt: tokio::runtime::Runtime,
    net: Arc<Mutex<Net>>,
    hosts: Vec<HostEntry>,
    now_ms: u64,
}

impl Sim {
    /// A run seeded by `seed`, with message delays of `min` to `max` on
    /// every link unless set per link.
    pub fn new(seed: u64, min: Duration, max: Duration) -> Sim {
        let mut builder = tokio::runtime::Builder::new_current_thread();
        builder.enable_time().start_paused(true);
        // Seeding the scheduler and `select!`, and seeing `tokio::spawn`,
        // need tokio's unstable API (docs/testing-your-service.md).
        #[cfg(tokio_unstable)]
        builder.rng_seed(tokio::runtime::RngSeed::from_bytes(&seed.to_le_bytes())).on_task_spawn(|task| {
            if let Some(host) = current_host() {
                STRAYS.with(|s| s.borrow_mut().push((host, task.spawned_at().to_string())));
            }
        });
        let rt = builder.build().expect("a current-thread runtime builds");
        let start = rt.block_on(async { tokio::time::Instant::now() });
        let net = Arc::new(Mutex::new(Net::new(seed, start, min, max)));
        Sim { top: LocalSet::new(), rt, net, hosts: Vec::new(), now_ms: 0 }
    }

    /// Simulated time since the run began.
    pub fn elapsed(&self) -> Duration {
        Duration::from_millis(self.now_ms)
    }

    /// Adds host `name` running `software`, started now (and again after
    /// each [`Sim::bounce`]).
    pub fn host<F, Fut>(&mut self, name: &str, software: F)
    where
        F: Fn() -> Fut + 'static,
        Fut: Future<Output = Result> + 'static,
    {
        lock(&self.net).add_host(name);
        self.hosts.push(HostEntry {
            name: name.to_owned(),
            software: Box::new(move || Box::pin(software())),
            task: None,
        });
        self.start(self.hosts.len() - 1);
    }

    fn id(&self, name: &str) -> usize {
        self.hosts.iter().position(|h| h.name == name).unwrap_or_else(|| panic!("no host named {name}"))
    }

    fn start(&mut self, i: usize) {
        let id = lock(&self.net).up(&self.hosts[i].name);
        let program = (self.hosts[i].software)();
        let run = async move {
            #[allow(unused_mut)]
            let mut local = LocalSet::new();
            // A panic in any of the host's tasks ends the run, as in the host's main task.
            #[cfg(tokio_unstable)]
            local.unhandled_panic(tokio::runtime::UnhandledPanic::ShutdownRuntime);
            local.run_until(program).await.map_err(|e| e.to_string())
        };
        self.hosts[i].task = Some(self.top.spawn_local(OnHost { host: id, inner: Box::pin(run) }));
    }

    /// Kills host `name`'s program and every task it started: its
    /// connections close (as a killed process's do) and it binds nothing
    /// until [`Sim::bounce`] starts it again.
    pub fn crash(&mut self, name: &str) {
        let i = self.id(name);
        if let Some(task) = self.hosts[i].task.take() {
            task.abort();
        }
        lock(&self.net).down(name);
    }

    /// Restarts host `name`'s program from the start.
    pub fn bounce(&mut self, name: &str) {
        self.crash(name);
        let i = self.id(name);
        self.start(i);
    }

    /// Breaks every connection of host `name` (both ends read a reset).
    pub fn reset_connections(&self, name: &str) {
        lock(&self.net).reset(name);
    }

    /// Cuts the link a–b both ways: what is sent on it is lost.
    pub fn partition(&self, a: &str, b: &str) {
        lock(&self.net).set_cut(a, b, true, true);
    }

    /// Cuts the link from `a` to `b` only.
    pub fn partition_oneway(&self, a: &str, b: &str) {
        lock(&self.net).set_cut(a, b, true, false);
    }

    /// Heals the link a–b both ways.
    pub fn repair(&self, a: &str, b: &str) {
        lock(&self.net).set_cut(a, b, false, true);
    }

    /// Heals the link from `a` to `b` only.
    pub fn repair_oneway(&self, a: &str, b: &str) {
        lock(&self.net).set_cut(a, b, false, false);
    }

    /// Sets the least delay of the link a–b (both ways).
    pub fn set_link_latency(&self, a: &str, b: &str, min: Duration) {
        lock(&self.net).set_latency(a, b, Some(min), None);
    }

    /// Sets the greatest delay of the link a–b (both ways).
    pub fn set_link_max_message_latency(&self, a: &str, b: &str, max: Duration) {
        lock(&self.net).set_latency(a, b, None, Some(max));
    }

    /// Runs every host until simulated time `until_ms` (since the run
    /// began), jumping over every stretch in which no host has anything to
    /// do. What is due at `until_ms` itself runs in the next call, after
    /// what the caller does at that instant (the world's faults come first
    /// at their instant). Returns the first host program's error or panic.
    pub fn run_until(&mut self, until_ms: u64) -> std::result::Result<(), String> {
        self.run_until_or(until_ms, None)
    }

    /// [`Sim::run_until`], stopping early at the instant `stop` is
    /// notified (the tasks ready at that instant may still run first).
    pub fn run_until_or(&mut self, until_ms: u64, stop: Option<Arc<Notify>>) -> std::result::Result<(), String> {
        if until_ms > self.now_ms {
            let (deadline, start) = {
                let net = lock(&self.net);
                (net.instant(until_ms), net.instant(0))
            };
            let previous = CURRENT.with(|c| c.borrow_mut().replace(self.net.clone()));
            neli::spawn_on_local_set(true);
            let reached = self.rt.block_on(self.top.run_until(async move {
                match stop {
                    Some(stop) => tokio::select! {
                        biased;
                        () = stop.notified() => {}
                        () = tokio::time::sleep_until(deadline) => {}
                    },
                    None => tokio::time::sleep_until(deadline).await,
                }
                tokio::time::Instant::now()
            }));
            neli::spawn_on_local_set(false);
            CURRENT.with(|c| *c.borrow_mut() = previous);
            self.now_ms = u64::try_from(reached.saturating_duration_since(start).as_millis()).unwrap_or(u64::MAX);
        }
        if let Some((host, at)) = STRAYS.with(|s| s.borrow_mut().drain(..).next()) {
            // Hosts are numbered in the order they were added.
            let name = self.hosts.get(host).map_or("?", |h| h.name.as_str());
            return Err(format!(
                "host {name} spawned a task with tokio::spawn at {at}: such a task would outlive a crash of its host; \
                 spawn it with tokio::task::spawn_local (docs/testing-your-service.md)"
            ));
        }
        self.ended_hosts()
    }

    /// Collects the hosts whose program returned: an error or a panic ends
    /// the run; a program that returned `Ok` leaves its host idle.
    fn ended_hosts(&mut self) -> std::result::Result<(), String> {
        for h in &mut self.hosts {
            if !h.task.as_ref().is_some_and(JoinHandle::is_finished) {
                continue;
            }
            let task = h.task.take().expect("checked above");
            match self.rt.block_on(task) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(format!("host {}: {e}", h.name)),
                Err(e) if e.is_panic() => {
                    return Err(format!("host {} panicked: {}", h.name, panic_text(&*e.into_panic())));
                }
                Err(_) => {}
            }
        }
        Ok(())
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        // Tasks dropped with the run close their connections; nothing is
        // sent any more.
        lock(&self.net).close();
    }
}
