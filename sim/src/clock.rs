//! Per-member clocks and the process-pause gate.
//!
//! The runtime gives every host the same simulated time and does not pause
//! a host, so both live here. A [`ClockModel`] maps global simulated time to a
//! member's monotonic clock as a piecewise-linear function (offset, drift in
//! ppm, forward and backward steps); the oracles use the same function to
//! decide when a lease ran out on the member's own clock. A [`Gate`] is
//! closed while the member's process is paused: every future of the member
//! (client tasks, broker calls, clock sleeps) passes it after each wake-up,
//! so nothing of the member runs, timers fire late and input is delivered on
//! resume.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use neli::Time;
use tokio::sync::watch;

/// Global simulated time in milliseconds (inside a host).
pub fn global_ms() -> u64 {
    crate::rt::elapsed().map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One linear piece of a member clock, valid from global `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    start: u64,
    local: u64,
    /// Rate in parts per million of global time (1_000_000 = exact).
    rate_ppm: u64,
}

/// A member's clock as a pure, monotonic function of global time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockModel {
    pieces: Vec<Piece>,
    drift_ppm: i64,
}

impl ClockModel {
    /// A clock reading `offset_ms` at global time 0, running at real rate.
    pub fn new(offset_ms: u64) -> ClockModel {
        ClockModel { pieces: vec![Piece { start: 0, local: offset_ms, rate_ppm: 1_000_000 }], drift_ppm: 0 }
    }

    fn piece_at(&self, g: u64) -> &Piece {
        let idx = self.pieces.partition_point(|p| p.start <= g);
        &self.pieces[idx.saturating_sub(1)]
    }

    /// The member's clock reading at global time `g` (ms).
    pub fn local_at(&self, g: u64) -> u64 {
        let p = self.piece_at(g);
        p.local + (g.saturating_sub(p.start) * p.rate_ppm) / 1_000_000
    }

    /// The first global time at or after `from` when the clock reads at
    /// least `local`; `None` if it never does (a stopped clock).
    pub fn global_when(&self, local: u64, from: u64) -> Option<u64> {
        if self.local_at(from) >= local {
            return Some(from);
        }
        let first = self.pieces.partition_point(|p| p.start <= from).saturating_sub(1);
        for (i, p) in self.pieces.iter().enumerate().skip(first) {
            let begin = p.start.max(from);
            let end = self.pieces.get(i + 1).map(|n| n.start);
            if p.rate_ppm > 0 {
                let base = p.local + (begin - p.start) * p.rate_ppm / 1_000_000;
                let need = local.saturating_sub(base);
                // Smallest dg with floor(dg * rate / 1e6) >= need.
                let mut dg = (need * 1_000_000).div_ceil(p.rate_ppm);
                while (begin - p.start + dg) * p.rate_ppm / 1_000_000 + p.local < local {
                    dg += 1;
                }
                let at = begin + dg;
                if end.is_none_or(|e| at < e) {
                    return Some(at);
                }
            }
            if let Some(e) = end
                && self.local_at(e) >= local
            {
                return Some(e);
            }
        }
        None
    }

    fn rate(&self) -> u64 {
        u64::try_from(1_000_000 + self.drift_ppm).unwrap_or(0)
    }

    /// From global `g` on, the clock runs `ppm` parts per million fast
    /// (negative: slow).
    pub fn set_drift(&mut self, g: u64, ppm: i64) {
        self.drift_ppm = ppm.max(-999_999);
        let local = self.local_at(g);
        let rate = self.rate();
        self.cut(g);
        self.pieces.push(Piece { start: g, local, rate_ppm: rate });
    }

    /// At global `g` the clock jumps by `by_ms`. A backward step holds the
    /// clock still until the stepped-back reading catches up, so `now`
    /// stays monotonic as the `Clock` contract requires.
    pub fn step(&mut self, g: u64, by_ms: i64) {
        let local = self.local_at(g);
        let rate = self.rate();
        self.cut(g);
        if by_ms >= 0 {
            self.pieces.push(Piece { start: g, local: local + by_ms.unsigned_abs(), rate_ppm: rate });
        } else {
            let back = by_ms.unsigned_abs();
            let resume = g + (back * 1_000_000).div_ceil(rate.max(1));
            self.pieces.push(Piece { start: g, local, rate_ppm: 0 });
            self.pieces.push(Piece { start: resume, local, rate_ppm: rate });
        }
    }

    fn cut(&mut self, g: u64) {
        self.pieces.retain(|p| p.start < g);
    }
}

/// Closed while the member's process is paused.
#[derive(Debug, Clone)]
pub struct Gate {
    paused: Arc<watch::Sender<bool>>,
}

impl Default for Gate {
    fn default() -> Self {
        Gate { paused: Arc::new(watch::Sender::new(false)) }
    }
}

impl Gate {
    pub fn set_paused(&self, paused: bool) {
        self.paused.send_replace(paused);
    }

    pub fn is_paused(&self) -> bool {
        *self.paused.borrow()
    }

    /// Returns at once when running; waits for resume when paused.
    pub async fn pass(&self) {
        if !self.is_paused() {
            return;
        }
        let mut rx = self.paused.subscribe();
        let _ = rx.wait_for(|p| !*p).await;
    }
}

/// The clock a member's driver reads: its [`ClockModel`] at the current
/// global time, with sleeps that also wait out a pause.
#[derive(Debug, Clone)]
pub struct SimClock {
    model: Arc<Mutex<ClockModel>>,
    gate: Gate,
    /// A harness application's clock: sleeps also wait out a `stall-poll`
    /// of its loop (global ms it is stalled until). The driver's clock has
    /// none; under `app_loop = "background"` the client's polls hold a
    /// stalled copy (`SimBroker::polls_stalled_by`).
    stall: Option<Arc<AtomicU64>>,
}

impl SimClock {
    pub fn new(model: Arc<Mutex<ClockModel>>, gate: Gate) -> SimClock {
        SimClock { model, gate, stall: None }
    }

    /// The same clock for a loop that a `stall-poll` fault holds (a harness
    /// application's, or neli's own under `Neli::background`; `stall`:
    /// global ms it is stalled until).
    pub(crate) fn stalled_by(mut self, stall: Arc<AtomicU64>) -> SimClock {
        self.stall = Some(stall);
        self
    }

    /// Waits while the stalled loop is held or its process paused.
    pub(crate) async fn wait_out_stall(&self) {
        self.gate.pass().await;
        while let Some(until) = self.stall.as_ref().map(|s| s.load(Ordering::SeqCst)) {
            let g = global_ms();
            if until <= g {
                break;
            }
            tokio::time::sleep(Duration::from_millis(until - g)).await;
            self.gate.pass().await;
        }
    }
}

impl neli::Clock for SimClock {
    fn now(&self) -> Time {
        Time::from_millis(self.model.lock().expect("clock lock").local_at(global_ms()))
    }

    fn sleep(&self, duration: Duration) -> impl std::future::Future<Output = ()> + Send {
        let model = self.model.clone();
        let gate = self.gate.clone();
        let stall = self.stall.clone();
        async move {
            let target = {
                let m = model.lock().expect("clock lock");
                m.local_at(global_ms()) + u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
            };
            loop {
                let g = global_ms();
                let when = model.lock().expect("clock lock").global_when(target, g);
                match when {
                    Some(at) if at <= g => break,
                    Some(at) => tokio::time::sleep(Duration::from_millis(at - g)).await,
                    None => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
            gate.pass().await;
            if let Some(stall) = stall {
                SimClock { model, gate, stall: Some(stall) }.wait_out_stall().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_and_steps_stay_monotonic_and_invertible() {
        let mut c = ClockModel::new(500);
        assert_eq!(c.local_at(1000), 1500);
        c.set_drift(1000, 100_000); // 10% fast
        assert_eq!(c.local_at(2000), 2600);
        assert_eq!(c.global_when(2600, 1000), Some(2000));
        c.step(2000, -1000);
        // Held still for 1000 / 1.1 ms of global time, then runs again.
        assert_eq!(c.local_at(2500), 2600);
        assert!(c.local_at(3000) > 2600);
        assert_eq!(c.global_when(2601, 2000), Some(2911));
        c.step(4000, 3000);
        assert!(c.local_at(4000) >= c.local_at(3999) + 3000);
    }
}
