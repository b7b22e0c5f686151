//! Oracles (docs/background.md, Oracles), judged on the global simulated clock.
//!
//! A member incarnation *holds* role `r` at global instant `t` iff its last
//! published lease of `r` before `t` ends after its own clock's reading at
//! `t`, and the incarnation had not stopped. From those hold intervals come
//! overlap and gap; from events, token order and well-formedness; from the
//! shared resource, stale-token writes.

use std::collections::BTreeMap;

use neli::Event;

use crate::clock::ClockModel;
use crate::record::{Log, WriteObs};
use crate::scenario::Scenario;
pub use crate::verdict::secs;
use crate::verdict::{Bound, Rule, Violation};

pub mod moves;
pub mod rules;

/// The figures a run reports (milliseconds); `neli-lab`'s JSON reports
/// carry them as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Figures {
    pub overlap_count: u64,
    pub overlap_total_ms: u64,
    pub overlap_max_ms: u64,
    pub gap_total_ms: u64,
    pub gap_max_ms: u64,
    /// Per fault that cost the leader of role 0 its leadership: time until
    /// another member held it.
    pub failovers_ms: Vec<u64>,
    /// Times a holder of role 0 lost it with no fault touching it (issue:
    /// a follower joining or leaving must not stop the leader).
    #[serde(default)]
    pub interruptions: u64,
    /// Times role 0 passed from one member incarnation to another.
    #[serde(default)]
    pub leader_changes: u64,
    pub first_leader_ms: Option<u64>,
    pub acquisitions: u64,
    /// Writes to role 0's resource outside a Revoked handler (the other
    /// roles' resources, written in exclusive multi-role mode, are judged
    /// but not counted here, so the figure compares across modes).
    pub writes: u64,
    /// Writes, to any role's resource, with a token older than one its
    /// resource already saw.
    pub stale_writes: u64,
    /// Stale-term heartbeats in the partition logs (zombie writes, hazard 2).
    pub zombie_heartbeats: u64,
    /// Some member held role 0 when the run ended (liveness).
    pub leader_at_end: bool,
}

impl Figures {
    pub fn failover_max_ms(&self) -> u64 {
        self.failovers_ms.iter().copied().max().unwrap_or(0)
    }
}

/// `[start, end)` global ms during which `member` held a role.
#[derive(Debug, Clone)]
struct Hold {
    start: u64,
    end: u64,
    member: String,
}

fn holds(log: &Log, clocks: &[ClockModel], role: u32, end_of_run: u64) -> Vec<Hold> {
    let mut per_member: BTreeMap<&str, Vec<(u64, Option<u64>)>> = BTreeMap::new();
    let mut slot_of: BTreeMap<&str, usize> = BTreeMap::new();
    for o in &log.leases {
        per_member
            .entry(o.member.as_str())
            .or_default()
            .push((o.at, o.leading.get(&role).map(|l| l.until.as_millis())));
        slot_of.insert(o.member.as_str(), o.slot);
    }
    let mut out = Vec::new();
    for (member, obs) in per_member {
        let clock = &clocks[slot_of[member]];
        let stop = log.ends.get(member).copied().unwrap_or(end_of_run).min(end_of_run);
        for (i, (at, until)) in obs.iter().enumerate() {
            let Some(until) = until else { continue };
            let next = obs.get(i + 1).map_or(stop, |(t, _)| *t).min(stop);
            if *at >= next {
                continue;
            }
            let expiry = clock.global_when(*until, *at).unwrap_or(u64::MAX);
            let end = expiry.min(next);
            if end > *at {
                out.push(Hold { start: *at, end, member: member.to_owned() });
            }
        }
    }
    // Merge touching intervals of one member.
    out.sort_by(|a, b| (a.member.as_str(), a.start).cmp(&(b.member.as_str(), b.start)));
    let mut merged: Vec<Hold> = Vec::new();
    for h in out {
        match merged.last_mut() {
            Some(last) if last.member == h.member && h.start <= last.end => last.end = last.end.max(h.end),
            _ => merged.push(h),
        }
    }
    merged.sort_by_key(|h| h.start);
    merged
}

/// Where a member's lease of a role really held, on the global clock (what
/// the oracles judge), for the timeline: it can end well before the member
/// learns it (a paused member is told Revoked or Fenced only on resume).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseSpan {
    /// The member's slot (timeline row) and incarnation.
    pub slot: usize,
    pub member: String,
    pub role: u32,
    pub start: u64,
    pub end: u64,
    /// Role 0's lease ended with no fault on its member (an interruption).
    pub interrupted: bool,
}

/// The hold intervals of every role, as [`judge`] sees them.
pub fn lease_spans(s: &Scenario, log: &Log, clocks: &[ClockModel], end: u64) -> Vec<LeaseSpan> {
    let slot_of: BTreeMap<&str, usize> = log.leases.iter().map(|o| (o.member.as_str(), o.slot)).collect();
    let settle = s.election.session_timeout.ms() + s.election.heartbeat_timeout.ms();
    let mut out = Vec::new();
    for role in 0..s.roles() {
        for h in holds(log, clocks, role, end) {
            let interrupted = role == 0 && interrupts(log, &h, settle, end);
            let slot = slot_of.get(h.member.as_str()).copied().unwrap_or(0);
            out.push(LeaseSpan { slot, member: h.member, role, start: h.start, end: h.end, interrupted });
        }
    }
    out
}

/// Figures and violations of a finished run. Each oracle below adds its
/// figures and its violations, in this order.
pub fn judge(s: &Scenario, log: &Log, clocks: &[ClockModel], end: u64) -> (Figures, Vec<Violation>) {
    let mut f = Figures::default();
    let mut v = Vec::new();
    for role in 0..s.roles() {
        let hs = holds(log, clocks, role, end);
        sweep(s, role, &hs, end, &mut f, &mut v);
        if role == 0 {
            let settle = s.election.session_timeout.ms() + s.election.heartbeat_timeout.ms();
            failovers(log, &hs, settle, &mut f);
            churn(log, &hs, settle, end, &mut f);
            told_while_leading(s, log, &hs, &mut v);
            elected(s, &hs, end, &mut v);
        }
    }
    close_finishes(s, log, end, &mut v);
    resign_takes_effect(s, log, end, &mut v);
    close_reports(log, &mut v);
    v.extend(log.app_failures.iter().cloned());
    events(log, &mut f, &mut v);
    writes(log, &mut f, &mut v);
    v.extend(rules::judge(s, log));
    expectations(s, &f, &mut v);
    (f, v)
}

/// Counts holders of `role` over time: gaps, overlaps (a violation in
/// exclusive modes), the first leader and whether somebody leads at the end.
fn sweep(s: &Scenario, role: u32, hs: &[Hold], end: u64, f: &mut Figures, v: &mut Vec<Violation>) {
    let mut edges: Vec<(u64, i64)> = hs.iter().flat_map(|h| [(h.start, 1), (h.end, -1)]).collect();
    edges.sort();
    let first = hs.first().map(|h| h.start);
    if role == 0 {
        f.first_leader_ms = first;
        f.leader_at_end = hs.iter().any(|h| h.end >= end);
    }
    let (mut count, mut last) = (0i64, first.unwrap_or(end));
    let mut overlap_start = None;
    let mut gap_start = None;
    for (at, d) in edges {
        if count == 0 && at > last && first.is_some() {
            let g = at - last;
            f.gap_total_ms += g;
            f.gap_max_ms = f.gap_max_ms.max(g);
        }
        let before = count;
        count += d;
        if before < 2 && count >= 2 {
            overlap_start = Some(at);
        }
        if before >= 2
            && count < 2
            && let Some(st) = overlap_start.take()
        {
            let o = at - st;
            if o > 0 {
                f.overlap_count += 1;
                f.overlap_total_ms += o;
                f.overlap_max_ms = f.overlap_max_ms.max(o);
                if s.election.is_exclusive() && v.len() < 20 {
                    let who: Vec<&str> =
                        hs.iter().filter(|h| h.start < at && h.end > st).map(|h| h.member.as_str()).collect();
                    let text = format!(
                        "overlap: role {role} held by {} at once from {} for {o}ms",
                        who.join(" and "),
                        secs(st)
                    );
                    let mut found = Violation::new(Rule::Overlap, text).at(st);
                    found.members = who.iter().map(|m| (*m).to_owned()).collect();
                    found.lasted_ms = Some(o);
                    v.push(found);
                }
            }
        }
        if count == 0 {
            last = at;
            gap_start = Some(at);
        } else {
            gap_start = None;
        }
    }
    if let (Some(g0), Some(_)) = (gap_start, first)
        && end > g0
    {
        let g = end - g0;
        f.gap_total_ms += g;
        f.gap_max_ms = f.gap_max_ms.max(g);
    }
}

/// Failover times: from a fault that cost the leader of role 0 its
/// leadership to the next hold by another member. A fault costs it when the
/// leader's hold ends within S + T (`settle`) of the fault's end and the
/// next holder is somebody else: a clock drift that changed nothing, or a
/// leader that kept or took back the role, is no failover.
fn failovers(log: &Log, hs: &[Hold], settle: u64, f: &mut Figures) {
    for fault in &log.faults {
        let (Some(m), true) = (&fault.member, fault.held_role0) else {
            continue;
        };
        let Some(held) = hs.iter().find(|h| &h.member == m && h.start <= fault.at && fault.at <= h.end) else {
            continue;
        };
        if held.end > fault.until + settle {
            continue;
        }
        let next = hs
            .iter()
            .filter(|h| h.start >= held.end || (h.start >= fault.at && &h.member != m))
            .min_by_key(|h| h.start);
        if let Some(h) = next.filter(|h| &h.member != m) {
            f.failovers_ms.push(h.start.saturating_sub(fault.at));
        }
    }
}

/// Interruptions and leader changes of role 0. A hold that ends before the
/// run does is an interruption unless a fault touching its member was on
/// within S + T (`settle`) before: the leader stopped because somebody else
/// came or went, or because the cluster did something to everybody.
fn churn(log: &Log, hs: &[Hold], settle: u64, end: u64, f: &mut Figures) {
    f.interruptions = hs.iter().filter(|h| interrupts(log, h, settle, end)).count() as u64;
    f.leader_changes = hs.windows(2).filter(|w| w[0].member != w[1].member).count() as u64;
}

/// Whether hold `h` of role 0 ended, before the run did, with no fault
/// touching its member within `settle` (S + T) before and its member still
/// running.
fn interrupts(log: &Log, h: &Hold, settle: u64, end: u64) -> bool {
    let own = log.faults.iter().any(|x| x.touches.contains(&h.member) && x.at <= h.end && h.end <= x.until + settle);
    let stopped = log.ends.get(&h.member).is_some_and(|e| *e <= h.end);
    h.end < end && !own && !stopped
}

/// Events are well formed (no Acquired twice, no loss of what was not
/// held, no role held in silence when the election finished) and tokens
/// strictly increase per role (within one log epoch: a
/// broker that lost its log restarts offsets, which the token contract
/// excludes; the rules judge each member's own tokens across epochs).
fn events(log: &Log, f: &mut Figures, v: &mut Vec<Violation>) {
    let mut last_token: BTreeMap<u32, (u64, String, u64)> = BTreeMap::new();
    let mut state: BTreeMap<(&str, u32), bool> = BTreeMap::new();
    let mut events: Vec<_> = log.events.iter().collect();
    events.sort_by_key(|e| e.at);
    for e in events {
        let role = e.event.role();
        let held = state.entry((e.member.as_str(), role)).or_insert(false);
        match e.event {
            Event::Acquired { token, .. } => {
                f.acquisitions += 1;
                if *held {
                    let text = format!("ill-formed events: {} Acquired role {role} twice at {}", e.member, secs(e.at));
                    v.push(Violation::new(Rule::IllFormedEvents, text).by(&e.member).at(e.at));
                }
                *held = true;
                if let Some((t, who, epoch)) = last_token.get(&role)
                    && *t >= token.0
                    && *epoch == e.log_epoch
                {
                    let text = format!(
                        "token not increasing: {} got token {} for role {role} at {} after {who} had {t}",
                        e.member,
                        token.0,
                        secs(e.at)
                    );
                    v.push(Violation::new(Rule::TokenNotIncreasing, text).by(&e.member).at(e.at));
                }
                last_token.insert(role, (token.0, e.member.clone(), e.log_epoch));
            }
            Event::Revoked { .. } | Event::Fenced { .. } => {
                if !*held {
                    let text =
                        format!("ill-formed events: {} lost role {role} it never acquired at {}", e.member, secs(e.at));
                    v.push(Violation::new(Rule::IllFormedEvents, text).by(&e.member).at(e.at));
                }
                *held = false;
            }
            other => {
                let text = format!("ill-formed events: {} was told {other:?}, which no oracle judges", e.member);
                v.push(Violation::new(Rule::IllFormedEvents, text).by(&e.member).at(e.at));
            }
        }
    }
    // A finished election gave up what it held with an event: a close
    // revokes every role (its Revoked handler runs before the member
    // leaves), so no lease the application was told of ends in silence.
    for ((member, role), held) in state {
        if held && log.finished.contains(member) {
            let text = format!(
                "ill-formed events: {member}'s election finished while it held role {role} and it was never told Revoked or Fenced"
            );
            v.push(Violation::new(Rule::IllFormedEvents, text).by(member));
        }
    }
}

/// Somebody leads at all: every safety oracle holds trivially in a run
/// where no member ever publishes a lease (a driver that stops telling, a
/// core that stops electing), so a run long enough for the group to form
/// and one lease to be proven must see role 0 held at least once. Scenarios
/// where nobody may lead end sooner than that.
fn elected(s: &Scenario, hs: &[Hold], end: u64, v: &mut Vec<Violation>) {
    let e = &s.election;
    let broker = s.cluster.broker();
    // Kafka extends the initial delay while members keep joining, up to
    // the rebalance timeout (docs/background.md, "The kafka profile").
    let initial = if broker.initial_delay_extends {
        broker.initial_delay_ms.max(e.max_poll_ms())
    } else {
        broker.initial_delay_ms
    };
    let bound = initial
        + broker.rebalance_pause_ms
        + 2 * e.session_timeout.ms()
        + 2 * e.heartbeat_timeout.ms()
        + 4 * e.poll_interval.ms();
    if hs.is_empty() && end > bound {
        let text = format!(
            "rule leader-elected: no member held role 0 in {} (a run longer than {} must elect: the group forms, a lease is proven)",
            secs(end),
            secs(bound)
        );
        v.push(Violation::new(Rule::LeaderElected, text).at(bound));
    }
}

/// A close the application asked for, or a fatal error of its client,
/// ends the election: the member's loop is told it finished
/// (`Pulse::Finished`, or the fatal error) within the close timeout
/// (docs/background.md, "Per-rule oracles"). Else a member asked to stop
/// from a handler (`Control::close`) would run on, leading, and a closed
/// one would poll forever. The timeout runs on the member's clock, so a
/// second of slack for drift, two polls, and the time its faults held it
/// (a paused loop asks nothing); an ask too close to the end is not judged.
fn close_finishes(s: &Scenario, log: &Log, end: u64, v: &mut Vec<Violation>) {
    let limit = neli::rules::DEFAULT_CLOSE_TIMEOUT.as_millis() as u64 + 2 * s.election.poll_interval.ms() + 1_000;
    let asked = log.close_asked.iter().map(|(m, at)| (m, *at, "its application asked to close"));
    let failed = log.fatal_at.iter().map(|(m, at)| (m, *at, "its client failed fatally"));
    for (member, at, why) in asked.chain(failed) {
        let due = at + limit + held_by_faults(log, member);
        let ended = log.ends.get(member).copied();
        if due <= end && ended.is_none_or(|e| e > due) {
            let text = format!(
                "rule close-finishes: {why} ({member}, at {}) but its loop {} (due by {}: the close timeout, two polls and its faults)",
                secs(at),
                ended.map_or("was never told the election finished".to_owned(), |e| format!(
                    "ended only at {}",
                    secs(e)
                )),
                secs(due)
            );
            v.push(Violation::new(Rule::CloseFinishes, text).by(member).at(due));
        }
    }
}

/// A close reports what the application can act on: `Ok` (also when the
/// client's own close failed retriably: the member has left the group, by
/// its leave or by its session's timeout, either way), the close timeout, or,
/// once the client failed fatally, that fatal error; never a retriable
/// broker error, and never `Ok` after a fatal one (docs/background.md,
/// "Per-rule oracles").
fn close_reports(log: &Log, v: &mut Vec<Violation>) {
    for c in &log.close_results {
        let failed = log.fatal_at.get(&c.member).is_some_and(|f| *f <= c.at);
        let right = c.timed_out || if failed { c.fatal } else { c.result.is_ok() };
        if !right {
            let expected = if failed { "the client's fatal error" } else { "Ok (its client never failed fatally)" };
            let text = format!(
                "rule close-reports: {}'s close returned {:?} at {}; expected {expected} or CloseTimedOut",
                c.member,
                c.result,
                secs(c.at)
            );
            v.push(Violation::new(Rule::CloseReports, text).by(&c.member).at(c.at));
        }
    }
}

/// The time the faults that targeted `member` held it (a paused or stalled
/// application asks and acts late).
fn held_by_faults(log: &Log, member: &str) -> u64 {
    log.faults.iter().filter(|f| f.member.as_deref() == Some(member)).map(|f| f.until - f.at).sum()
}

/// A resign the application asked for (`Control::resign`,
/// `Background::resign`) takes effect: the member leaves the group within
/// two polls and a second, plus its Revoked handler's work (the leave waits
/// for that barrier) and the time its faults held it, unless it stopped
/// first. Else a resign would be a no-op that no other rule sees
/// (docs/background.md, "Per-rule oracles").
fn resign_takes_effect(s: &Scenario, log: &Log, end: u64, v: &mut Vec<Violation>) {
    use crate::record::AssignmentChange;
    for (asked, member) in &log.resign_asked {
        let handler =
            s.election.revoked_work.map_or(crate::scenario::DEFAULT_REVOKED_WORK.as_millis() as u64, |w| w.ms());
        let due = asked + 2 * s.election.poll_interval.ms() + 1_000 + handler + held_by_faults(log, member);
        let left = log.assignments.iter().any(|a| {
            a.member == *member && matches!(a.change, AssignmentChange::Resigned) && (*asked..=due).contains(&a.at)
        });
        let stopped = log.ends.get(member).is_some_and(|e| *e <= due);
        if due <= end && !left && !stopped {
            let text = format!(
                "rule resign-takes-effect: {member}'s application asked to resign at {} but it had not left the group by {} (two polls and a second, plus its Revoked handler's work and its faults)",
                secs(*asked),
                secs(due)
            );
            v.push(Violation::new(Rule::ResignTakesEffect, text).by(member).at(due));
        }
    }
}

/// The application gets to act: a member that held role 0 for longer, in
/// total, than one lease plus a few polls (and its `app_work`) was told at
/// least once that it leads (`token()`), else an election that never lets
/// its application work would pass every safety oracle. One lease of slack
/// covers a hold spent paused; the member's incarnations count separately.
fn told_while_leading(s: &Scenario, log: &Log, hs: &[Hold], v: &mut Vec<Violation>) {
    let e = &s.election;
    let bound = e.heartbeat_timeout.ms() + 4 * e.poll_interval.ms() + e.app_work.map_or(0, |w| w.ms());
    let mut held: BTreeMap<&str, u64> = BTreeMap::new();
    for h in hs {
        *held.entry(h.member.as_str()).or_default() += h.end - h.start;
    }
    // A harness application decides itself when it writes.
    let judged = |m: &str| !log.user_apps.contains(m);
    for (member, total) in held.into_iter().filter(|(m, t)| *t > bound && judged(m)) {
        if !log.writes.iter().any(|w| w.member == member && w.role == 0 && !w.in_handler) {
            let text = format!(
                "rule told-while-leading: {member} held role 0 for {} in total but its application was never told it leads (token() was None at every poll; at most {bound}ms may pass untold)",
                secs(total)
            );
            v.push(Violation::new(Rule::ToldWhileLeading, text).by(member));
        }
    }
}

/// The token-guarded resources, one a role: nobody is told it leads
/// without a lease, and no write uses a token older than one already used
/// on its role's resource. Each role's resource is judged on its own, role
/// 0's first, so role 0's verdicts read as they do where it is the only one.
fn writes(log: &Log, f: &mut Figures, v: &mut Vec<Violation>) {
    // A Revoked handler's writes are judged by the barrier rule (`rules`):
    // once the coordinator dropped a member, its old token being refused is
    // the fencing token doing its job.
    let mut by_role: BTreeMap<u32, Vec<&WriteObs>> = BTreeMap::new();
    for w in log.writes.iter().filter(|w| !w.in_handler) {
        by_role.entry(w.role).or_default().push(w);
    }
    f.writes += by_role.get(&0).map_or(0, Vec::len) as u64;
    for writes in by_role.values_mut() {
        writes.sort_by_key(|w| w.at);
        told_without_lease(writes, v);
        stale_writes(writes, f, v);
    }
}

/// What the application is told: `is_leader()` (or, for another role,
/// `lease(role)`) must never answer yes once the member's own lease has
/// ended on its own clock (docs/background.md, Protocol semantics "a lease,
/// not a flag"). The hold intervals judge the published lease end; this
/// judges the answer the application acted on. `writes`: one role's.
fn told_without_lease(writes: &[&WriteObs], v: &mut Vec<Violation>) {
    let told_late: Vec<_> = writes
        .iter()
        .filter_map(|w| w.told.map(|t| (w, t)))
        .filter(|(_, t)| t.lease_until.is_none_or(|u| t.local >= u))
        .collect();
    let Some((w, t)) = told_late.first() else {
        return;
    };
    let asked = if w.role == 0 { "is_leader() = true".to_owned() } else { format!("lease({}) was Some", w.role) };
    let text = format!(
        "told without a lease: {} was told it leads role {} ({asked}, token {}) at {} when its clock read {}ms, but its lease {} ({} such answer(s))",
        w.member,
        w.role,
        w.token,
        secs(w.at),
        t.local,
        t.lease_until.map_or("was not published".to_owned(), |u| format!("had ended at {u}ms")),
        told_late.len()
    );
    v.push(Violation::new(Rule::ToldWithoutLease, text).by(&w.member).at(w.at));
}

/// Writes with a token older than one already used, ordered as a downstream
/// that knows each token's log would order them: (log epoch of the
/// acquisition, token). `writes`: one role's, in time order; the first
/// stale one is reported, every one counted.
fn stale_writes(writes: &[&WriteObs], f: &mut Figures, v: &mut Vec<Violation>) {
    let mut newest: Option<(u64, u64)> = None;
    let mut reported = false;
    for w in writes {
        let this = (w.log_epoch, w.token);
        if let Some((epoch, n)) = newest.filter(|n| this < *n) {
            f.stale_writes += 1;
            if !reported {
                reported = true;
                let log = if epoch == w.log_epoch { String::new() } else { format!(" of log epoch {epoch}") };
                let of = if w.role == 0 { String::new() } else { format!(" for role {}", w.role) };
                let text = format!(
                    "stale write: {} wrote{of} with token {} at {} after token {n}{log} was used",
                    w.member,
                    w.token,
                    secs(w.at)
                );
                v.push(Violation::new(Rule::StaleWrite, text).by(&w.member).at(w.at));
            }
        }
        newest = Some(newest.map_or(this, |n| n.max(this)));
    }
}

/// The scenario's own `[expect]` bounds.
fn expectations(s: &Scenario, f: &Figures, v: &mut Vec<Violation>) {
    let x = &s.expect;
    if let Some(m) = x.max_overlap
        && f.overlap_total_ms > m.ms()
    {
        v.push(Violation::new(
            Rule::Expect(Bound::MaxOverlap),
            format!("expect.max_overlap = \"{m}\" exceeded: {}ms", f.overlap_total_ms),
        ));
    }
    if let Some(m) = x.max_gap
        && f.gap_max_ms > m.ms()
    {
        v.push(Violation::new(
            Rule::Expect(Bound::MaxGap),
            format!("expect.max_gap = \"{m}\" exceeded: {}ms", f.gap_max_ms),
        ));
    }
    if let Some(m) = x.max_failover
        && f.failover_max_ms() > m.ms()
    {
        v.push(Violation::new(
            Rule::Expect(Bound::MaxFailover),
            format!("expect.max_failover = \"{m}\" exceeded: {}ms", f.failover_max_ms()),
        ));
    }
    if let Some(m) = x.max_interruptions
        && f.interruptions > m
    {
        let text = format!(
            "expect.max_interruptions = {m} exceeded: the leader of role 0 lost it {} time(s) with no fault on itself",
            f.interruptions
        );
        v.push(Violation::new(Rule::Expect(Bound::MaxInterruptions), text));
    }
    if let Some(m) = x.max_leader_changes
        && f.leader_changes > m
    {
        let text =
            format!("expect.max_leader_changes = {m} exceeded: role 0 changed hands {} time(s)", f.leader_changes);
        v.push(Violation::new(Rule::Expect(Bound::MaxLeaderChanges), text));
    }
}
