//! The simulated network: hosts by name, links with a delay and a cut per
//! direction, and TCP-like streams between a [`TcpStream::connect`] and a
//! [`TcpListener`] (ARCHITECTURE.md, "The simulator's runtime").
//!
//! What the simulator's protocols rely on, and nothing more:
//! - a write is one segment, delayed by the link's delay (drawn per
//!   segment from the run's seeded generator) and delivered in order;
//! - a segment sent on a cut link is lost, and the stream never delivers
//!   anything after it (no retransmission): the caller's timeout ends it;
//! - a stream dropped by its program (or by a crash), or shut down, sends
//!   its end of stream; a write to a closed end is answered with a reset
//!   one round trip later; a reset stream fails every later read and write;
//! - a connection to a host that is down or does not listen is refused
//!   one round trip later; a connection attempt whose SYN or answer is
//!   lost on a cut link tries again as TCP does, 1 s later, then 2 s, 4 s,
//!   ..., until the link carries both or the caller gives up (no
//!   half-open connection reaches the listener meanwhile);
//! - [`Net::reset`] breaks every connection of a host at once: both ends
//!   read a reset next, whatever was in flight.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::lock;

/// A host's index in the order hosts were added.
pub type HostId = usize;

/// Delays of messages on a link: the least and the greatest, in ms.
#[derive(Debug, Clone, Copy)]
struct Delay {
    min: u64,
    max: u64,
}

/// The network of one run.
pub struct Net {
    rng: u64,
    start: Instant,
    names: Vec<String>,
    up: Vec<bool>,
    /// Cut directions (from, to).
    cut: BTreeSet<(HostId, HostId)>,
    /// Per link (lower id first): its own least and greatest delay.
    delays: BTreeMap<(HostId, HostId), (Option<u64>, Option<u64>)>,
    default: Delay,
    listeners: BTreeMap<(HostId, u16), Arc<Mutex<Listen>>>,
    /// Every connection made, for [`Net::reset`] (pruned as they end).
    connections: Vec<Weak<Mutex<Connection>>>,
    /// The run is over: streams dropped with it send nothing.
    closed: bool,
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Net {
    pub(super) fn new(seed: u64, start: Instant, min: Duration, max: Duration) -> Net {
        Net {
            rng: seed ^ 0x6e65_6c69_2d73_696d,
            start,
            names: Vec::new(),
            up: Vec::new(),
            cut: BTreeSet::new(),
            delays: BTreeMap::new(),
            default: Delay { min: ms(min), max: ms(max).max(ms(min)) },
            listeners: BTreeMap::new(),
            connections: Vec::new(),
            closed: false,
        }
    }

    pub(super) fn add_host(&mut self, name: &str) {
        assert!(self.lookup(name).is_none(), "host {name} added twice");
        self.names.push(name.to_owned());
        self.up.push(false);
    }

    fn lookup(&self, name: &str) -> Option<HostId> {
        self.names.iter().position(|n| n == name)
    }

    fn id(&self, name: &str) -> HostId {
        self.lookup(name).unwrap_or_else(|| panic!("no host named {name}"))
    }

    pub(super) fn up(&mut self, name: &str) -> HostId {
        let id = self.id(name);
        self.up[id] = true;
        id
    }

    /// The host is down: it listens no more (its program's tasks, and
    /// with them its streams, are dropped when the runtime next runs).
    pub(super) fn down(&mut self, name: &str) {
        let id = self.id(name);
        self.up[id] = false;
        self.listeners.retain(|(h, _), _| *h != id);
    }

    /// Breaks every open connection of host `name`: each end reads a
    /// reset next (what a middlebox that drops a host's connections does).
    pub(super) fn reset(&mut self, name: &str) {
        let id = self.id(name);
        self.connections.retain(|c| c.strong_count() > 0);
        for c in self.connections.iter().filter_map(Weak::upgrade) {
            let mut c = lock(&c);
            if !c.hosts.contains(&id) || !(c.open[0] || c.open[1]) {
                continue;
            }
            for pipe in &mut c.pipes {
                // What was in flight is gone; the reset is there at once.
                pipe.queue.clear();
                pipe.last_at = 0;
                pipe.push(0, Segment::Rst);
                pipe.lost = true;
            }
        }
    }

    pub(super) fn close(&mut self) {
        self.closed = true;
    }

    pub(super) fn instant(&self, at_ms: u64) -> Instant {
        self.start + Duration::from_millis(at_ms)
    }

    pub(super) fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(self.start)
    }

    fn now_ms(&self) -> u64 {
        ms(self.elapsed())
    }

    pub(super) fn set_cut(&mut self, a: &str, b: &str, cut: bool, both_ways: bool) {
        let (a, b) = (self.id(a), self.id(b));
        let directions = if both_ways { vec![(a, b), (b, a)] } else { vec![(a, b)] };
        for d in directions {
            if cut {
                self.cut.insert(d);
            } else {
                self.cut.remove(&d);
            }
        }
    }

    pub(super) fn set_latency(&mut self, a: &str, b: &str, min: Option<Duration>, max: Option<Duration>) {
        let (a, b) = (self.id(a), self.id(b));
        let entry = self.delays.entry((a.min(b), a.max(b))).or_default();
        if let Some(min) = min {
            entry.0 = Some(ms(min));
        }
        if let Some(max) = max {
            entry.1 = Some(ms(max));
        }
    }

    fn is_cut(&self, from: HostId, to: HostId) -> bool {
        self.cut.contains(&(from, to))
    }

    /// The next number of the run's generator (splitmix64).
    fn next(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A message's delay from `from` to `to`: the link's least delay plus
    /// an exponentially distributed share (mean a fifth) of the span to its
    /// greatest, capped there: most messages are fast, a few are slow.
    fn delay(&mut self, from: HostId, to: HostId) -> u64 {
        let own = self.delays.get(&(from.min(to), from.max(to))).copied().unwrap_or_default();
        let min = own.0.unwrap_or(self.default.min);
        let max = own.1.unwrap_or(self.default.max).max(min);
        // A uniform draw in (0, 1]: 53 random bits.
        let u = ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64;
        // libm's own logarithm, not the platform's: the same draw everywhere.
        let share = -libm::log(u) / 5.0;
        let extra = ((max - min) as f64 * share) as u64;
        (min + extra).min(max)
    }
}

enum Segment {
    Data(Vec<u8>),
    Fin,
    Rst,
}

/// One direction of a connection.
#[derive(Default)]
struct Pipe {
    /// Segments in flight, with their arrival time (ms since the run began).
    queue: VecDeque<(u64, Segment)>,
    last_at: u64,
    /// A segment was lost: nothing after it is delivered.
    lost: bool,
    reader: Option<Waker>,
}

impl Pipe {
    /// Queues `segment` to arrive at `at`, or behind the last one queued
    /// (in order), and wakes the reader.
    fn push(&mut self, at: u64, segment: Segment) {
        self.last_at = at.max(self.last_at);
        self.queue.push_back((self.last_at, segment));
        if let Some(w) = self.reader.take() {
            w.wake();
        }
    }
}

/// Both directions of a connection: side 0 connected, side 1 accepted;
/// `pipes[s]` carries what side `s` sends.
struct Connection {
    pipes: [Pipe; 2],
    hosts: [HostId; 2],
    open: [bool; 2],
    reset_sent: [bool; 2],
    /// Side `s` sent its end of stream (shut down or dropped).
    fin_sent: [bool; 2],
}

impl Connection {
    /// Sends `segment` from side `s` now.
    fn send(&mut self, net: &mut Net, s: usize, segment: Segment) {
        let now = net.now_ms();
        let (src, dst) = (self.hosts[s], self.hosts[1 - s]);
        if !self.open[1 - s] {
            // The other end is closed: data is answered with a reset.
            if matches!(segment, Segment::Data(_))
                && !self.reset_sent[s]
                && !net.is_cut(src, dst)
                && !net.is_cut(dst, src)
            {
                self.reset_sent[s] = true;
                self.pipes[1 - s].push(now + net.delay(src, dst) + net.delay(dst, src), Segment::Rst);
            }
            return;
        }
        let pipe = &mut self.pipes[s];
        if pipe.lost {
            return;
        }
        if net.is_cut(src, dst) {
            pipe.lost = true;
            return;
        }
        pipe.push(now + net.delay(src, dst), segment);
    }
}

/// A connected stream of one host's program.
pub struct TcpStream {
    net: Arc<Mutex<Net>>,
    conn: Arc<Mutex<Connection>>,
    side: usize,
    start: Instant,
    /// The part of the last delivered segment not read yet.
    partial: Vec<u8>,
    pos: usize,
    eof: bool,
    /// A reset was read: every later read and write fails.
    reset: bool,
    /// Waits for the next segment's arrival.
    sleep: Option<(u64, Pin<Box<Sleep>>)>,
}

fn outside_a_host() -> io::Error {
    io::Error::other("the simulated network is used outside a simulated host")
}

impl TcpStream {
    /// Connects to `addr` (`host:port`) from the current host.
    pub async fn connect(addr: &str) -> io::Result<TcpStream> {
        let net = super::current_net().ok_or_else(outside_a_host)?;
        let src = super::current_host().ok_or_else(outside_a_host)?;
        let (host, port) = addr
            .rsplit_once(':')
            .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("not host:port: {addr}")))?;
        let (dst, start) = {
            let n = lock(&net);
            let dst = n
                .lookup(host)
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no host named {host}")))?;
            (dst, n.start)
        };
        // The SYN, sent again after 1 s, 2 s, 4 s, ... while it or its
        // answer is lost on a cut link.
        let mut retry = Duration::from_secs(1);
        loop {
            let (there, lost) = {
                let mut n = lock(&net);
                (n.delay(src, dst), n.is_cut(src, dst))
            };
            if !lost {
                tokio::time::sleep(Duration::from_millis(there)).await;
                if let Some(answer) = TcpStream::answer(&net, (src, dst), port, start) {
                    let (back, stream) = answer;
                    tokio::time::sleep(Duration::from_millis(back)).await;
                    return stream.ok_or_else(|| {
                        io::Error::new(io::ErrorKind::ConnectionRefused, format!("{addr} refused the connection"))
                    });
                }
            }
            tokio::time::sleep(retry).await;
            retry *= 2;
        }
    }

    /// What `dst` answers a SYN from `src` that reached it now: the delay of
    /// the answer and a stream (the other end queued to the listener), or
    /// `None` for a refusal; `None` at all if the answer is lost.
    fn answer(
        net: &Arc<Mutex<Net>>,
        (src, dst): (HostId, HostId),
        port: u16,
        start: Instant,
    ) -> Option<(u64, Option<TcpStream>)> {
        let mut n = lock(net);
        if n.is_cut(dst, src) {
            return None;
        }
        let back = n.delay(dst, src);
        let listener = if n.up[dst] { n.listeners.get(&(dst, port)).cloned() } else { None };
        let Some(listener) = listener else { return Some((back, None)) };
        let conn = Arc::new(Mutex::new(Connection {
            pipes: [Pipe::default(), Pipe::default()],
            hosts: [src, dst],
            open: [true, true],
            reset_sent: [false, false],
            fin_sent: [false, false],
        }));
        if n.connections.len().is_power_of_two() {
            n.connections.retain(|c| c.strong_count() > 0);
        }
        n.connections.push(Arc::downgrade(&conn));
        drop(n);
        let accepted = TcpStream::new(net.clone(), conn.clone(), 1, start);
        let mut l = lock(&listener);
        l.queue.push_back((accepted, src));
        if let Some(w) = l.acceptor.take() {
            w.wake();
        }
        Some((back, Some(TcpStream::new(net.clone(), conn, 0, start))))
    }

    fn new(net: Arc<Mutex<Net>>, conn: Arc<Mutex<Connection>>, side: usize, start: Instant) -> TcpStream {
        TcpStream { net, conn, side, start, partial: Vec::new(), pos: 0, eof: false, reset: false, sleep: None }
    }

    /// Sends the end of stream, once.
    fn finish(&self) {
        let mut net = lock(&self.net);
        let mut conn = lock(&self.conn);
        if !net.closed && !conn.fin_sent[self.side] {
            conn.fin_sent[self.side] = true;
            conn.send(&mut net, self.side, Segment::Fin);
        }
    }

    fn send(&self, segment: Segment) {
        let mut net = lock(&self.net);
        if net.closed {
            return;
        }
        lock(&self.conn).send(&mut net, self.side, segment);
    }
}

impl AsyncRead for TcpStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            if self.pos < self.partial.len() {
                let n = buf.remaining().min(self.partial.len() - self.pos);
                let pos = self.pos;
                buf.put_slice(&self.partial[pos..pos + n]);
                self.pos += n;
                return Poll::Ready(Ok(()));
            }
            if self.reset {
                return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
            }
            if self.eof {
                return Poll::Ready(Ok(()));
            }
            let now = ms(Instant::now().saturating_duration_since(self.start));
            let next = {
                let mut conn = lock(&self.conn);
                let pipe = &mut conn.pipes[1 - self.side];
                match pipe.queue.front() {
                    Some((at, _)) if *at <= now => Ok(pipe.queue.pop_front().expect("front above").1),
                    Some((at, _)) => {
                        pipe.reader = Some(cx.waker().clone());
                        Err(Some(*at))
                    }
                    None => {
                        pipe.reader = Some(cx.waker().clone());
                        Err(None)
                    }
                }
            };
            match next {
                Ok(Segment::Data(bytes)) => (self.partial, self.pos) = (bytes, 0),
                Ok(Segment::Fin) => self.eof = true,
                Ok(Segment::Rst) => self.reset = true,
                Err(None) => return Poll::Pending,
                Err(Some(at)) => {
                    let start = self.start;
                    if self.sleep.as_ref().is_none_or(|(t, _)| *t != at) {
                        let deadline = start + Duration::from_millis(at);
                        self.sleep = Some((at, Box::pin(tokio::time::sleep_until(deadline))));
                    }
                    let (_, sleep) = self.sleep.as_mut().expect("set above");
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    self.sleep = None;
                }
            }
        }
    }
}

impl AsyncWrite for TcpStream {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.reset {
            return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
        }
        self.send(Segment::Data(buf.to_vec()));
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.finish();
        Poll::Ready(Ok(()))
    }
}

impl Drop for TcpStream {
    fn drop(&mut self) {
        self.finish();
        lock(&self.conn).open[self.side] = false;
    }
}

/// The streams connected to a listener and not yet accepted.
#[derive(Default)]
struct Listen {
    queue: VecDeque<(TcpStream, HostId)>,
    acceptor: Option<Waker>,
}

/// A listening port of one host's program.
pub struct TcpListener {
    net: Arc<Mutex<Net>>,
    key: (HostId, u16),
    listen: Arc<Mutex<Listen>>,
}

impl TcpListener {
    /// Listens on `port` of the current host (the address part is
    /// ignored: a host has one address).
    pub async fn bind((_, port): (&str, u16)) -> io::Result<TcpListener> {
        let net = super::current_net().ok_or_else(outside_a_host)?;
        let host = super::current_host().ok_or_else(outside_a_host)?;
        let listen = Arc::new(Mutex::new(Listen::default()));
        lock(&net).listeners.insert((host, port), listen.clone());
        Ok(TcpListener { net, key: (host, port), listen })
    }

    /// The next connection, and the name of the host it came from.
    pub async fn accept(&self) -> io::Result<(TcpStream, String)> {
        let (stream, from) = poll_fn(|cx| {
            let mut l = lock(&self.listen);
            match l.queue.pop_front() {
                Some(next) => Poll::Ready(next),
                None => {
                    l.acceptor = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await;
        let name = lock(&self.net).names[from].clone();
        Ok((stream, name))
    }
}

impl Drop for TcpListener {
    fn drop(&mut self) {
        let mut net = lock(&self.net);
        if net.listeners.get(&self.key).is_some_and(|l| Arc::ptr_eq(l, &self.listen)) {
            net.listeners.remove(&self.key);
        }
    }
}
