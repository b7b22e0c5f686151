//! The translation of a counterexample's steps into a scenario's fault
//! timeline: which fault each model step becomes, where it is aimed (a time,
//! or a moment of the protocol), and how the timing of the model's tick is
//! carried over to the simulator's (scenarios/README.md, "Counterexamples
//! that replay").

use neli_sim::Scenario;
use neli_sim::scenario::{AppLoop, BrokerId, Dur, Fault, Target, Trigger};

use super::{Replay, actor, ticks};
use crate::election::{Callback, ElectionAction, ElectionModelCfg, ElectionState, GroupProtocol};

/// The scenario's faults, built step by step along the path.
pub(super) struct Timeline<'a> {
    cfg: &'a ElectionModelCfg,
    steps: &'a [(ElectionState, Option<ElectionAction>)],
    /// [`sim_members`] of the path.
    sim: &'a [u8],
    /// The path's last tick, and the run's.
    end: u64,
    run_end: u64,
    scenario: Scenario,
    notes: Vec<String>,
    /// Open faults (pause, crash, isolation), each ended by the matching
    /// healing step: the opening action, its tick, its target, and the
    /// moment it is aimed at, if it is.
    open: Vec<(ElectionAction, u64, Target, Option<Aim>)>,
    /// Resumes already written with the pause they end.
    skip_resume: Vec<usize>,
    /// Per model member, the last pause ended by a resume: where it was
    /// aimed and how long it lasted.
    resumed: Vec<Option<(Aim, Dur)>>,
}

/// Where a fault is written: at `at`, or, with `on`, armed at `at` and
/// started at the member's next such moment of the protocol.
#[derive(Debug, Clone, Copy)]
struct Aim {
    at: Dur,
    on: Option<Trigger>,
}

impl<'a> Timeline<'a> {
    /// An empty timeline for the path `steps` of `cfg`'s model, its members
    /// named `sim` in the simulator, ending at tick `end` (the run at
    /// `run_end`), written into `scenario`.
    pub(super) fn new(
        cfg: &'a ElectionModelCfg,
        steps: &'a [(ElectionState, Option<ElectionAction>)],
        sim: &'a [u8],
        (end, run_end): (u64, u64),
        scenario: Scenario,
        notes: Vec<String>,
    ) -> Timeline<'a> {
        let resumed = vec![None; sim.len()];
        Timeline { cfg, steps, sim, end, run_end, scenario, notes, open: Vec::new(), skip_resume: Vec::new(), resumed }
    }
}

impl Timeline<'_> {
    /// The scenario's faults for step `k` (the action taken in state `k`).
    pub(super) fn step(&mut self, k: usize) {
        use ElectionAction::*;
        let (c, steps) = (self.cfg, self.steps);
        let (s, action) = (&steps[k].0, steps[k].1.expect("non-final step"));
        let t = u64::from(s.now);
        let at = ticks(c, t);
        match action {
            Pause(m) if self.right_after_assignment(k, m) => self.pause_at_proof(k, m, t),
            Pause(m) | Crash(m) | Isolate(m) | HeartbeatsFail(m) if self.before_its_deal(k, m) => {
                // Armed half a tick early: the simulator's rebalance may
                // complete a little before the model's tick.
                let at = if t == 0 { Dur(0) } else { Dur(at.0 - (c.tick_ms / 2) as i64) };
                self.open.push((action, t, self.member(m), Some(Aim { at, on: Some(Trigger::Dealt) })));
            }
            Pause(m) | Crash(m) | Isolate(m) if self.led_since_resume(k, m) => self.cut_after_acquiring(action, m, t),
            // The simulator's group forms at a seed's own pace, sometimes
            // after the instant tick 0 stands for: a cut of the first
            // leader in its first tick is aimed at its acquisition.
            Pause(m) | Crash(m) | Isolate(m)
                if t == 0 && (0..c.roles).any(|r| s.leaders(r).iter().any(|(l, _)| l.0 == m)) =>
            {
                self.open.push((action, t, self.member(m), Some(Aim { at: Dur(0), on: Some(Trigger::Acquired) })))
            }
            Pause(m) | Crash(m) | Isolate(m) | HeartbeatsFail(m) => {
                self.open.push((action, t, self.target(s, m), None))
            }
            Resume(_) if self.skip_resume.contains(&k) => {}
            Resume(m) => {
                self.hold_read_backs(k, m);
                match self.resumed_after_acquisition(k, m) {
                    Some(x) => self.resume_at_acquisition(action, m, x, t),
                    None => {
                        self.heal(action, m, t, self.resume_lag(k, m));
                    }
                }
            }
            Restart(m) | Heal(m) | HeartbeatsHeal(m) => {
                self.heal(action, m, t, Dur(0));
            }
            ClockFast(m) => {
                self.scenario.push_fault(at, Fault::ClockStep { target: self.target(s, m), by: ticks(c, 1) })
            }
            Replace(m) => self.scenario.push_fault(at, Fault::StaticReplace { target: self.target(s, m) }),
            Tick { slow: Some(m) } => self
                .scenario
                .push_fault(at, Fault::ClockStep { target: self.target(s, m), by: Dur(-(c.tick_ms as i64)) }),
            Foreign => self
                .scenario
                .push_fault(at, Fault::ForeignWriter { partition: 0, count: 1, garbage: true, misplaced: false }),
            // The log alone goes: its broker (b1) restarts empty at once,
            // while the group lives on the coordinator (b0).
            LogLoss => {
                self.scenario.cluster.brokers = 2;
                self.scenario.cluster.partition_leader = BrokerId(1);
                self.scenario.push_fault(
                    at,
                    Fault::BrokerCrash { target: BrokerId(1), duration: Some(ticks(c, 1)), lose_state: true },
                )
            }
            Lose(m, k) => self.notes.push(format!(
                "at {at}: message {k} in flight from m{} lost (not expressible in v1)",
                self.sim[m as usize]
            )),
            Send(m, k) if k > 0 => self.notes.push(format!(
                "at {at}: message {k} from m{} delivered out of order (not expressible in v1)",
                self.sim[m as usize]
            )),
            _ => {}
        }
    }

    /// Model member `m` by its simulator name: a fault aimed at a moment
    /// names one member, never `leader`.
    fn member(&self, m: u8) -> Target {
        Target::Member(u32::from(self.sim[m as usize]))
    }

    /// Whether member `m`, at step `k`, was dealt an assignment in this
    /// tick that it has not polled yet. In the simulator that assignment
    /// is on the wire for milliseconds: only a fault started at the
    /// coordinator's deal (`on = "dealt"`) finds the member before it
    /// handles it, as the model's does.
    fn before_its_deal(&self, k: usize, m: u8) -> bool {
        let steps = self.steps;
        let sync = steps[..k].iter().rposition(|(_, a)| matches!(a, Some(ElectionAction::Sync { .. })));
        sync.is_some_and(|j| {
            steps[j].0.now == steps[k].0.now
                && !steps[j..k].iter().any(|(_, a)| *a == Some(ElectionAction::Poll(m)))
                && steps[k].0.slots[m as usize].callbacks.iter().any(|c| matches!(c, Callback::Assigned { .. }))
        })
    }

    /// Whether member `m`, at step `k`, resumed from a pause in this tick
    /// and has acquired a role since.
    fn led_since_resume(&self, k: usize, m: u8) -> bool {
        let steps = self.steps;
        let resume = steps[..k].iter().rposition(|(_, a)| *a == Some(ElectionAction::Resume(m)));
        let leads =
            |j: usize| (0..self.cfg.roles).filter(|r| steps[j].0.leaders(*r).iter().any(|((x, _), _)| *x == m)).count();
        resume.is_some_and(|r| {
            self.resumed[m as usize].is_some()
                && steps[r].0.now == steps[k].0.now
                && (r..k).any(|j| actor(&steps[j].1.expect("non-final step")) == Some(m) && leads(j + 1) > leads(j))
        })
    }

    /// A pause, crash or isolation of member `m` that the model takes
    /// after `m` acquired a role in the tick it resumed in: aimed at the
    /// moment it acquires, armed where the pause was. Under the consumer
    /// protocol only heartbeats keep a session, and the model's
    /// coordinator hears a member at a tick's start (`steps::tick`), so it
    /// heard none of `m` between the resume and the cut: its group
    /// heartbeats fail from the pause until half a tick after the resume,
    /// while its membership proof goes through.
    fn cut_after_acquiring(&mut self, action: ElectionAction, m: u8, t: u64) {
        let Some((pause, length)) = self.resumed[m as usize] else { return };
        let member = self.member(m);
        if self.cfg.protocol == GroupProtocol::Consumer {
            let duration = Dur(length.0 + (self.cfg.tick_ms / 2).max(1) as i64);
            self.push_aimed(pause, Fault::HeartbeatFailure { target: member, duration });
        }
        let aim = Aim { at: pause.at, on: Some(Trigger::Acquired) };
        self.open.push((action, t, member, Some(aim)));
    }

    /// Writes `fault` where `aim` says.
    fn push_aimed(&mut self, aim: Aim, fault: Fault) {
        self.scenario.push_fault(aim.at, fault);
        if let Some(last) = self.scenario.faults.last_mut() {
            last.get_mut().on = aim.on;
        }
    }

    /// Who a fault on model member `m` in state `s` targets.
    fn target(&self, s: &ElectionState, m: u8) -> Target {
        let leads = s.leaders(0);
        if leads.len() == 1 && leads[0].0.0 == m {
            Target::Leader
        } else {
            Target::Member(u32::from(self.sim[m as usize]))
        }
    }

    /// A pause, crash or isolation from `since` for `length` ticks; one
    /// healed within its tick (length 0) lasts half a tick, since a scenario
    /// fault must last a while.
    fn lasting(&self, action: &ElectionAction, target: Target, length: u64) -> Fault {
        let c = self.cfg;
        let duration = if length == 0 { Dur((c.tick_ms / 2).max(1) as i64) } else { ticks(c, length) };
        match action {
            ElectionAction::Pause(_) => Fault::Pause { target, duration },
            ElectionAction::Crash(_) => Fault::Crash { target, duration: Some(duration) },
            ElectionAction::HeartbeatsFail(_) => Fault::HeartbeatFailure { target, duration },
            _ => Fault::IsolateCoordinator { target, duration },
        }
    }

    /// Whether member `m`'s last step before step `k` was the poll that
    /// handed it an assignment (and so sent its heartbeat and membership
    /// proof), within the tick, before it read anything back: a window of
    /// milliseconds in the simulator.
    fn right_after_assignment(&self, k: usize, m: u8) -> bool {
        let steps = self.steps;
        let mine = steps[..k].iter().rposition(|(_, a)| a.is_some_and(|a| actor(&a) == Some(m)));
        mine.is_some_and(|j| {
            steps[j].1 == Some(ElectionAction::Poll(m)) && steps[j].0.now == steps[k].0.now && self.holds(j + 1, m)
        })
    }

    /// A pause of member `m` at step `k` right after its assignment
    /// ([`Self::right_after_assignment`]), aimed at the moment its proof is
    /// accepted, not at a time, and written with the resume that ends it.
    /// Without the proof there is no such moment (a fault aimed at it would
    /// never start): the pause is aimed at the assignment, with which the
    /// member sends its heartbeat.
    fn pause_at_proof(&mut self, k: usize, m: u8, t: u64) {
        let (c, steps) = (self.cfg, self.steps);
        let resume = steps[k..].iter().position(|(_, a)| *a == Some(ElectionAction::Resume(m))).map(|i| k + i);
        let until = resume.map_or(self.end + 1, |i| u64::from(steps[i].0.now));
        let lag = resume.map_or(Dur(0), |i| self.resume_lag(i, m));
        let length = Dur(ticks(c, (until - t).max(1)).0 + lag.0);
        let member = Target::Member(u32::from(self.sim[m as usize]));
        self.scenario.push_fault(ticks(c, t), Fault::Pause { target: member, duration: length });
        // The model's client hears of its eviction only when it
        // polls; librdkafka's background heartbeat (and the
        // simulator's) hears at once after a pause. Cut the member
        // off the coordinator for the pause and T after it, so the
        // resumed member acts on what it read first, as in the path.
        let cut = Dur(length.0 + ticks(c, c.heartbeat_timeout.into()).0);
        self.scenario.cluster.brokers = 2;
        self.scenario.cluster.partition_leader = BrokerId(1);
        self.scenario.push_fault(ticks(c, t), Fault::IsolateCoordinator { target: member, duration: cut });
        let moment = Trigger::in_the_group(c.membership_proof);
        for f in self.scenario.faults.iter_mut().rev().take(2) {
            f.get_mut().on = Some(moment);
        }
        if let Some(i) = resume {
            // Its resume is written here, with the pause: the stall that
            // its lag stands on too.
            self.hold_read_backs(i, m);
            self.skip_resume.push(i);
        }
    }

    /// How much later than its tick the resume of member `m` at step `i`
    /// comes in the simulator: half a tick where others were handed a
    /// partition in the tick and read back after `m` resumes
    /// ([`Self::reading_back`]), so that `m` resumes after their
    /// assignment; else a quarter of a tick where another member took a role
    /// earlier in the same model tick, so that the resumed member acts after
    /// that acquisition there too (the simulator's takes tens of
    /// milliseconds into the tick, and a round trip more since its client
    /// asks for the start offset as the assignment reaches the
    /// application; the order decides which token comes first; a first
    /// acquisition is aimed at instead where the pause was not written with
    /// its assignment, [`Self::resumed_after_acquisition`]); nothing
    /// otherwise. Either lag grows by a tick and a half
    /// where the tick's deal followed an eager revocation
    /// ([`Self::eager_revoke`]).
    fn resume_lag(&self, i: usize, m: u8) -> Dur {
        let steps = self.steps;
        let first = self.tick_start(i);
        let took = |j: usize| {
            (0..self.cfg.roles).any(|r| {
                let before = steps[j].0.leaders(r);
                steps[j + 1].0.leaders(r).iter().any(|(key, _)| key.0 != m && !before.iter().any(|(b, _)| b == key))
            })
        };
        let tick = self.cfg.tick_ms as i64;
        let lag = if !self.reading_back(i, m).is_empty() {
            tick / 2
        } else if (first..i).any(took) {
            tick / 4
        } else {
            return Dur(0);
        };
        Dur(lag.max(1) + if self.eager_revoke(first, i) { tick * 3 / 2 } else { 0 })
    }

    /// The member that took a role earlier in the tick of step `i`, a
    /// resume of `m` that comes after that acquisition, if the acquisition
    /// was that member's first on the path and nothing else lags the resume
    /// ([`Self::resume_lag`]'s quarter of a tick): the resume is then aimed at
    /// that acquisition itself ([`Self::resume_at_acquisition`]).
    fn resumed_after_acquisition(&self, i: usize, m: u8) -> Option<u8> {
        let steps = self.steps;
        let first = self.tick_start(i);
        if !self.reading_back(i, m).is_empty() || self.eager_revoke(first, i) {
            return None;
        }
        // A pause written for `leader` names whoever leads when it starts;
        // the resume must name the same process.
        let paused = self.open.iter().find(|(a, ..)| *a == ElectionAction::Pause(m));
        if !paused.is_some_and(|(_, _, who, _)| matches!(who, Target::Member(_))) {
            return None;
        }
        let leads = |j: usize, x: u8| (0..self.cfg.roles).any(|r| steps[j].0.leaders(r).iter().any(|(k, _)| k.0 == x));
        let took: Vec<(usize, u8)> = (first..i)
            .flat_map(|j| (0..self.cfg.members).filter(move |&x| x != m).map(move |x| (j, x)))
            .filter(|&(j, x)| !leads(j, x) && leads(j + 1, x))
            .collect();
        // One acquisition in the tick, that member's first on the path.
        match took[..] {
            [(j, x)] if !(0..=j).any(|k| leads(k, x)) => Some(x),
            _ => None,
        }
    }

    /// The resume of `m` at tick `t`, after member `x` took its first role
    /// in the same model tick: the simulator's acquisition comes at a
    /// seed's own instant, often later than a fixed lag reaches, and a
    /// member that resumes before it acts first. So the pause lasts a tick
    /// longer than the model's, and a `resume` aimed at `x`'s acquisition
    /// (`on = "acquired"`, `of` = `x`) ends it there, armed where the pause
    /// was aimed.
    fn resume_at_acquisition(&mut self, action: ElectionAction, m: u8, x: u8, t: u64) {
        let tick = ticks(self.cfg, 1);
        let Some((aim, length)) = self.heal(action, m, t, tick) else { return };
        // What a later cut of `m` counts from: the model's length.
        self.resumed[m as usize] = Some((aim, Dur(length.0 - tick.0)));
        self.push_aimed(Aim { at: aim.at, on: Some(Trigger::Acquired) }, Fault::Resume { target: self.member(m) });
        let of = self.member(x);
        if let Some(last) = self.scenario.faults.last_mut() {
            last.get_mut().of = Some(of);
        }
    }

    /// The first step of the model tick step `i` is in.
    fn tick_start(&self, i: usize) -> usize {
        let now = self.steps[i].0.now;
        self.steps[..i].iter().rposition(|(s, _)| s.now != now).map_or(0, |j| j + 1)
    }

    /// Whether member `x`'s core holds any partition in state `j`.
    fn holds(&self, j: usize, x: u8) -> bool {
        self.steps[j].0.slots[x as usize].core().is_some_and(|c| !c.assigned().is_empty())
    }

    /// Whether, in the model's tick from step `first` to step `i`, a member
    /// revoked its partitions (an eager rebalance) and the coordinator
    /// dealt after it: the model's coordinator deals at once, the
    /// simulator's waits for that member's group heartbeat to hear of the
    /// rebalance and its revocation, and the new assignment is read back at
    /// the next poll, so the tick's later steps come about a tick and a
    /// half later there.
    fn eager_revoke(&self, first: usize, i: usize) -> bool {
        let steps = self.steps;
        let rejoin = |j: usize, x: u8| steps[j].0.slots[x as usize].callbacks.front() == Some(&Callback::Rejoin);
        let revoked = |j: usize| matches!(steps[j].1, Some(ElectionAction::Poll(x)) if rejoin(j, x) && self.holds(j, x) && !self.holds(j + 1, x));
        let dealt = |j: usize| matches!(steps[j].1, Some(ElectionAction::Sync { .. }));
        !self.cfg.incremental && (first..i).any(|j| revoked(j) && (j..i).any(dealt))
    }

    /// The members other than `m` that, by step `i` (a resume of `m`), were
    /// handed an assignment in this tick (and so wrote their heartbeat) and
    /// lead nothing yet, but take a role later in the tick: the model's
    /// order is their heartbeat, then `m`'s, then their read-back.
    fn reading_back(&self, i: usize, m: u8) -> Vec<u8> {
        let steps = self.steps;
        let now = steps[i].0.now;
        let leads = |j: usize, y: u8| (0..self.cfg.roles).any(|r| steps[j].0.leaders(r).iter().any(|(k, _)| k.0 == y));
        let first = self.tick_start(i);
        let later = steps[i..].iter().take_while(|(s, _)| s.now == now).count();
        (0..self.cfg.members)
            .filter(|&y| y != m && !leads(i, y))
            .filter(|&y| (i..i + later).any(|j| leads(j, y)))
            .filter(|&y| {
                (first..i)
                    .any(|j| steps[j].1 == Some(ElectionAction::Poll(y)) && !self.holds(j, y) && self.holds(j + 1, y))
            })
            .collect()
    }

    /// In the simulator the resumed member `m` (its resume lagged,
    /// [`Self::resume_lag`]) writes after the members
    /// [`Self::reading_back`] were assigned, but their loops read their
    /// heartbeat back within milliseconds, before `m` acts. So each one's
    /// loop stalls from its assignment for `m`'s lag and half a tick more
    /// (a tick without an eager revocation): the application runs
    /// the election in the background, where `stall-poll` holds neli's
    /// loop (`scenarios/FORMAT.md`), and `m` reads and acquires first.
    /// Armed a tick early: the simulator's rebalance may come before the
    /// model's tick or after it (13 of seeds 0..20 replay the tokens out of
    /// order after a pause without the proof; 9 armed half a tick early).
    fn hold_read_backs(&mut self, i: usize, m: u8) {
        let c = self.cfg;
        for y in self.reading_back(i, m) {
            let at = ticks(c, u64::from(self.steps[i].0.now).saturating_sub(1));
            let lag = self.resume_lag(i, m).0;
            let fault = Fault::StallPoll { target: self.member(y), duration: Dur(lag + ticks(c, 1).0 / 2) };
            self.push_aimed(Aim { at, on: Some(Trigger::Assigned) }, fault);
            let e = &mut self.scenario.election;
            (e.app_loop, e.app_work) = (AppLoop::Background, None);
        }
    }

    /// `healing` (a resume, restart or heal of member `m` at tick `t`) ends
    /// the open fault it matches; a pause lasts `lag` longer
    /// ([`Self::resume_lag`]). Returns the pause it wrote, where it is aimed
    /// and how long it lasts, if it closed a pause.
    fn heal(&mut self, healing: ElectionAction, m: u8, t: u64, lag: Dur) -> Option<(Aim, Dur)> {
        use ElectionAction::*;
        let opener = |a: &ElectionAction| match (a, healing) {
            (Pause(x), Resume(_))
            | (Crash(x), Restart(_))
            | (Isolate(x), Heal(_))
            | (HeartbeatsFail(x), HeartbeatsHeal(_)) => *x == m,
            _ => false,
        };
        let i = self.open.iter().position(|(a, ..)| opener(a))?;
        let (a, since, who, aim) = self.open.remove(i);
        let mut fault = self.lasting(&a, who, t - since);
        if let Fault::Pause { duration, .. } = &mut fault {
            duration.0 += lag.0;
        }
        let aim = aim.unwrap_or(Aim { at: ticks(self.cfg, since), on: None });
        let paused = match fault {
            Fault::Pause { duration, .. } => Some((aim, duration)),
            _ => None,
        };
        if paused.is_some() {
            self.resumed[m as usize] = paused;
        }
        self.push_aimed(aim, fault);
        paused
    }

    /// A member that ends the path leading while the model left it idle
    /// goes on leading there because the model's interleaving had it take
    /// no step: it has a `Lost` or `Rejoin` callback it never polled, or it
    /// took no step in the path's last tick, where its successor acquired.
    /// In the simulator its poll loop would act within milliseconds
    /// (hand it the callback, have its next proof refused), so its poll
    /// loop stalls (`stall-poll`: the client's background heartbeats go
    /// on, its lease runs out on its own) from half a tick before it went
    /// idle until a tick after the path ends.
    fn stall_idle_leaders(&mut self) {
        let Some((last, _)) = self.steps.last() else { return };
        let half = (self.cfg.tick_ms / 2).max(1) as i64;
        for m in 0..self.cfg.members {
            let unheard = |s: &ElectionState| {
                s.slots[m as usize].callbacks.iter().any(|c| matches!(c, Callback::Lost | Callback::Rejoin))
            };
            let leads = (0..self.cfg.roles).any(|r| last.leaders(r).iter().any(|((x, _), _)| *x == m));
            let acted_last_tick =
                self.steps.iter().any(|(s, a)| u64::from(s.now) == self.end && a.is_some_and(|a| actor(&a) == Some(m)));
            let since = if unheard(last) {
                let came = self.steps.iter().rposition(|(s, _)| !unheard(s)).map_or(0, |j| j + 1);
                // Heard on resuming from a pause: the stall would also
                // keep back what the member polled before it (a stale
                // assignment), which the simulator's client hands over first.
                let resumed =
                    self.steps[came.saturating_sub(1)..].iter().any(|(_, a)| *a == Some(ElectionAction::Resume(m)));
                if resumed {
                    continue;
                }
                u64::from(self.steps[came].0.now)
            } else if !acted_last_tick && self.end > 0 {
                self.end
            } else {
                continue;
            };
            if !leads {
                continue;
            }
            let at = Dur((ticks(self.cfg, since).0 - half).max(0));
            let duration = Dur(ticks(self.cfg, self.end + 1).0 - at.0);
            self.scenario.push_fault(at, Fault::StallPoll { target: self.member(m), duration });
        }
    }

    /// A pause still open resumes one tick after the path ends (the member
    /// runs again); other open faults last until the end of the run.
    pub(super) fn close(mut self) -> Replay {
        self.stall_idle_leaders();
        for (a, since, who, aim) in std::mem::take(&mut self.open) {
            let until = if matches!(a, ElectionAction::Pause(_)) { self.end + 1 } else { self.run_end };
            let fault = self.lasting(&a, who, until - since);
            self.push_aimed(aim.unwrap_or(Aim { at: ticks(self.cfg, since), on: None }), fault);
        }
        Replay { scenario: self.scenario, notes: self.notes }
    }
}
