//! Per-rule oracles: each rule the core promises (ARCHITECTURE.md, "The
//! core"; docs/background.md, "Per-rule oracles"), judged on its own from facts the simulator knows
//! better than the member does — who really wrote each record, when each
//! accepted membership proof was sent, what the client handed the driver.
//!
//! The overlap oracle only sees the end result, and the layers of the
//! design mask each other there: with the membership proof on, a lease that
//! outlives its heartbeats is still cut short by the proof, and vice versa.
//! These checks hold every published lease to every rule at once, so a
//! weakened rule is caught even when another layer saves the run.
//!
//! The facts are ordered by `Log::next_seq`: the client notes what it hands
//! the driver in `poll`, the member host notes the driver's leases after each
//! `pulse`, so a lease is judged against exactly what its member knew.

use std::collections::{BTreeMap, BTreeSet};

use neli::Event;

use crate::record::{AppendObs, AssignmentChange, AssignmentObs, ClaimObs, Log, ProofObs};
use crate::scenario::Scenario;

use super::secs;
use crate::verdict::{Rule, Violation};

/// Collects violations per rule: the first one in full (who, when, what),
/// then a count.
///
/// Keyed by the rule's printed name, so reports list the rules in the
/// order of their names, whatever the order of [`Rule`]'s variants.
#[derive(Default)]
struct Found(BTreeMap<&'static str, (Violation, u64)>);

impl Found {
    /// A breach of `rule` by incarnation `member`, at global `at` if the
    /// rule knows; `text` is only built for the first of its rule.
    fn add(&mut self, rule: Rule, member: &str, at: Option<u64>, text: impl FnOnce() -> String) {
        let e = self.0.entry(rule.oracle_name().unwrap_or_default()).or_insert_with(|| {
            let v = Violation::new(rule, text()).by(member);
            (Violation { at, ..v }, 0)
        });
        e.1 += 1;
    }

    fn into_violations(self) -> Vec<Violation> {
        self.0
            .into_iter()
            .map(|(_, (v, n))| {
                let more = if n > 1 { format!(" ({} more)", n - 1) } else { String::new() };
                Violation { detail: format!("{}: {}{more}", v.rule.class(), v.detail), ..v }
            })
            .collect()
    }
}

/// One member incarnation's knowledge as the rules replay it.
#[derive(Default)]
struct Knows {
    generation: Option<u64>,
    /// Partition -> the first generation of its current uninterrupted
    /// ownership (evidence from that generation on is "current term").
    owned_since: BTreeMap<u32, u64>,
    /// Partition -> when (global time) the assignment that started its
    /// current uninterrupted ownership was handed over: the acquisition
    /// grace G runs from then.
    owned_at: BTreeMap<u32, u64>,
    /// The last change per partition, for the violation text.
    last_change: BTreeMap<u32, String>,
    /// Role -> the token of its last claimed lease and the log epoch then.
    last_token: BTreeMap<u32, (u64, u64)>,
    /// Role -> the lease last claimed (to judge only changes).
    claimed: BTreeMap<u32, (u64, u64)>,
    /// How many times its client told it the election log was lost.
    told_lost: u64,
    /// The highest log epoch it published.
    max_epoch: u64,
    /// New terms seen in its claims.
    terms: u64,
    /// The generation its status must report: that of the last assignment
    /// it took, none after it resigned (until it takes one again).
    reports: Option<u64>,
    /// It resigned through this generation: a later hand-over of an
    /// assignment of this generation or an older one is not taken.
    resigned_through: Option<u64>,
    /// When it last resigned, until its next assignment.
    resigned_at: Option<u64>,
    /// Generation -> when (global time) an assignment of it was first
    /// handed over.
    handed: BTreeMap<u64, u64>,
}

impl Knows {
    /// Takes the assignment of `generation` handed over at `at`: partitions
    /// it keeps stay owned since their first generation and hand-over.
    fn take_assignment(&mut self, generation: u64, ps: &[u32], at: u64, what: &str) {
        if self.resigned_through.is_none_or(|g| generation > g) {
            self.reports = Some(generation);
        }
        self.generation = Some(generation);
        self.handed.entry(generation).or_insert(at);
        self.owned_since.retain(|p, _| ps.contains(p));
        self.owned_at.retain(|p, _| ps.contains(p));
        for p in ps {
            self.owned_since.entry(*p).or_insert(generation);
            self.owned_at.entry(*p).or_insert(at);
            self.last_change.insert(*p, what.to_owned());
        }
    }

    /// Revoked or lost partitions end their ownership.
    fn give_up(&mut self, ps: &[u32], what: &str) {
        for p in ps {
            self.owned_since.remove(p);
            self.owned_at.remove(p);
            self.last_change.insert(*p, what.to_owned());
        }
    }

    /// It resigned: its status reports no generation until it takes an
    /// assignment of a newer one than it resigned through.
    fn resign(&mut self, at: u64) {
        self.resigned_at = Some(at);
        self.resigned_through = Some(self.reports.unwrap_or(0));
        self.reports = None;
    }
}

/// What the rules take from the scenario.
struct Bounds {
    /// T, in ms.
    t: u64,
    proof: bool,
    partitions: u32,
    /// G, in ms, and whether it can be judged here.
    grace: u64,
    judge_grace: bool,
    /// 2S + T, in ms, where it can be judged.
    hold_off: Option<u64>,
}

impl Bounds {
    fn of(s: &Scenario) -> Bounds {
        // G is judged on the global clock, which equals the member's own in
        // rate only when no clock fault can strike: a stepped or drifting
        // clock reaches G sooner or later, as the member's clock is the one
        // the core counts on.
        let grace = s.election.grace.ms();
        // A member that resigned stays out of the group for 2S + T
        // (`neli::rules::resign_hold_off`: a held rebalance and its
        // successor's evidence), on its own clock: judged on the global one
        // only without clock faults.
        let hold_off = (!clock_faults(s)).then(|| {
            let e = &s.election;
            neli::rules::resign_hold_off(e.session_timeout.duration(), e.heartbeat_timeout.duration()).as_millis()
                as u64
        });
        Bounds {
            t: s.election.heartbeat_timeout.ms(),
            proof: s.election.membership_proof,
            partitions: s.partitions().max(1),
            grace,
            judge_grace: grace > 0 && !clock_faults(s),
            hold_off,
        }
    }
}

/// Records and proofs seen so far, by what the rules look them up by.
#[derive(Default)]
struct Seen<'a> {
    /// (partition, offset) -> the records written there (a lost log
    /// reuses offsets).
    at_offset: BTreeMap<(u32, u64), Vec<&'a AppendObs>>,
    /// (author, partition, role, term) -> its newest heartbeat's send time.
    newest_sent: BTreeMap<(&'a str, u32, u32, u64), u64>,
    /// (member, generation) -> its newest accepted proof's send time.
    newest_proof: BTreeMap<(&'a str, u64), u64>,
}

impl<'a> Seen<'a> {
    fn append(&mut self, a: &'a AppendObs) {
        self.at_offset.entry((a.partition, a.offset)).or_default().push(a);
        if let Some(hb) = a.heartbeat {
            let e = self.newest_sent.entry((a.author.as_str(), a.partition, hb.role, hb.term)).or_insert(0);
            *e = (*e).max(hb.sent_at);
        }
    }

    fn proof(&mut self, p: &'a ProofObs) {
        let e = self.newest_proof.entry((p.member.as_str(), p.generation)).or_insert(0);
        *e = (*e).max(p.sent_local);
    }
}

/// The log replayed in recorded order: what each member knew when it
/// claimed a lease, and what the rules found so far.
struct Replay<'a> {
    bounds: Bounds,
    /// Member -> when the coordinator removed it (session or rebalance
    /// timeout): ground truth the member learns late or never.
    removals: BTreeMap<&'a str, Vec<u64>>,
    seen: Seen<'a>,
    knows: BTreeMap<&'a str, Knows>,
    /// (member, role, token) of every `Acquired` event: a published token
    /// that changes is a new term only if its member acquired it.
    acquisitions: BTreeSet<(&'a str, u32, u64)>,
    found: Found,
}

/// One lease a claim published anew (acquired, extended or changed).
struct LeaseClaim<'a> {
    m: &'a str,
    role: u32,
    lease: &'a neli::Lease,
    claim: &'a ClaimObs,
    /// The partition the role lives on.
    p: u32,
    /// The claim's instant, as violation texts print it.
    at: String,
    /// Not claimed at the last pulse, or under another token its member
    /// acquired: a new term.
    acquired: bool,
}

/// Judges every lease claim against the rules that bound it; returns
/// violations named `rule <name>: ...`.
pub fn judge(s: &Scenario, log: &Log) -> Vec<Violation> {
    let mut removals: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (at, m) in &log.removals {
        removals.entry(m.as_str()).or_default().push(*at);
    }
    let mut replay = Replay {
        bounds: Bounds::of(s),
        removals,
        seen: Seen::default(),
        knows: BTreeMap::new(),
        acquisitions: log
            .events
            .iter()
            .filter_map(|e| match e.event {
                Event::Acquired { role, token } => Some((e.member.as_str(), role, token.0)),
                _ => None,
            })
            .collect(),
        found: Found::default(),
    };
    for fact in facts(log) {
        match fact {
            Fact::Append(a) => replay.seen.append(a),
            Fact::Proof(p) => replay.seen.proof(p),
            Fact::Assignment(a) => replay.assignment(a),
            Fact::Claim(c) => replay.claim(c),
        }
    }
    let Replay { bounds, knows, mut found, .. } = replay;
    epoch_not_ahead_of_losses(log, &knows, &mut found);
    heartbeat_lease(log, bounds.t, &mut found);
    for v in &log.seen_broken {
        let (m, at) = (v.members.first().map_or("", String::as_str), v.at.unwrap_or_default());
        found.add(v.rule.clone(), m, v.at, || match v.rule {
            Rule::HandlesAgree => format!("{m}'s handles disagreed at {}: {}", secs(at), v.detail),
            _ => format!("{m} at {}: {}", secs(at), v.detail),
        });
    }
    lost_is_fenced(log, s.roles(), bounds.partitions, &mut found);
    revoked_barrier(log, &mut found);
    found.into_violations()
}

impl<'a> Replay<'a> {
    /// What the client handed the driver changes what the member owns.
    fn assignment(&mut self, a: &'a AssignmentObs) {
        let k = self.knows.entry(a.member.as_str()).or_default();
        let what = format!("{:?} at {}", a.change, secs(a.at));
        match &a.change {
            AssignmentChange::Assigned { generation, partitions: ps } => {
                resign_holds_off(a, *generation, k, self.bounds.hold_off, &mut self.found);
                k.take_assignment(*generation, ps, a.at, &what);
            }
            AssignmentChange::Revoked(ps) | AssignmentChange::Lost(ps) => k.give_up(ps, &what),
            AssignmentChange::LogLost => k.told_lost += 1,
            AssignmentChange::ProofRejected { generation } => {
                if k.reports == Some(*generation) {
                    k.reports = None;
                }
            }
            AssignmentChange::Resigned => k.resign(a.at),
        }
    }

    /// A status the driver published: its generation and log epoch, and
    /// each lease in it that changed since the last one.
    fn claim(&mut self, c: &'a ClaimObs) {
        let m = c.member.as_str();
        let k = self.knows.entry(m).or_default();
        status_generation(c, k, &mut self.found);
        k.max_epoch = k.max_epoch.max(c.log_epoch);
        log_epoch_raised(c, k, &mut self.found);
        for (&role, lease) in &c.leading {
            let before = k.claimed.insert(role, (lease.token.0, lease.until.as_millis()));
            if before == Some((lease.token.0, lease.until.as_millis())) {
                continue;
            }
            // A lease that was not claimed at the last pulse is a new term,
            // and so is one under a token the member acquired: one pulse
            // can fence an ended term and acquire again (docs/background.md,
            // "Protocol semantics": a lease is over at its end). Any other
            // change of token is one within a term.
            let token = lease.token.0;
            let acquired =
                before.is_none_or(|(last, _)| last != token && self.acquisitions.contains(&(m, role, token)));
            k.terms += u64::from(acquired);
            let p = role % self.bounds.partitions;
            let l = LeaseClaim { m, role, lease, claim: c, p, at: secs(c.at), acquired };
            if acquired {
                let removed = self.removals.get(m).map_or(&[][..], Vec::as_slice);
                current_generation(&self.seen, &l, k, removed, &mut self.found);
            }
            judge_lease(&self.bounds, &self.seen, &l, k, &mut self.found);
        }
        k.claimed.retain(|role, _| c.leading.contains_key(role));
    }
}

/// Rule `resign-holds-off`: an assignment handed to a member that resigned
/// comes no sooner than 2S + T after the resign, or the resign did not
/// move leadership.
fn resign_holds_off(a: &AssignmentObs, generation: u64, k: &mut Knows, hold_off: Option<u64>, found: &mut Found) {
    if let (Some(resigned), Some(hold)) = (k.resigned_at.take(), hold_off)
        && a.at < resigned + hold
    {
        found.add(Rule::ResignHoldsOff, &a.member, Some(a.at), || {
            format!(
                "{} was assigned generation {generation} at {}, {}ms after it resigned at {}: a member that resigned stays out of the group for 2S + T = {hold}ms so another takes over",
                a.member,
                secs(a.at),
                a.at - resigned,
                secs(resigned)
            )
        });
    }
}

/// Rule `status-generation`: the status reports the generation of the
/// assignment the member took (what a cooperative user reads to tell its
/// lease moved to a new generation), none once it resigned.
fn status_generation(c: &ClaimObs, k: &Knows, found: &mut Found) {
    if c.generation != k.reports {
        let (m, want, at) = (&c.member, k.reports, secs(c.at));
        found.add(Rule::StatusGeneration, &c.member, Some(c.at), || {
            format!(
                "{m}'s status reported generation {:?} at {at}, where the last assignment it took (none after it resigned, nor one of a generation it resigned through) was {want:?}",
                c.generation
            )
        });
    }
}

/// Rule `log-epoch`, first half: each loss its client told it of starts a
/// new log epoch in what it publishes (tokens restart with the log;
/// downstream orders on (log_epoch, token): neli/KAFKA.md, "Fencing tokens
/// after a broker lost its log").
fn log_epoch_raised(c: &ClaimObs, k: &Knows, found: &mut Found) {
    if c.log_epoch < k.told_lost {
        let (m, told, at) = (&c.member, k.told_lost, secs(c.at));
        found.add(Rule::LogEpoch, &c.member, Some(c.at), || {
            format!(
                "{m} published log epoch {} at {at} after its client told it {told} time(s) that the election log was lost: each told loss must raise the log epoch, or downstream takes the new log's tokens for stale ones",
                c.log_epoch
            )
        });
    }
}

/// Holds one published lease to every rule that bounds it, in the order
/// the core applies them: assignment, grace, evidence, send time, proof,
/// token order.
fn judge_lease(b: &Bounds, seen: &Seen<'_>, l: &LeaseClaim<'_>, k: &mut Knows, found: &mut Found) {
    let Some(&since) = k.owned_since.get(&l.p) else {
        assigned_only(l, k, found);
        return;
    };
    grace(b, l, k, found);
    let generation = k.generation.unwrap_or(since);
    let terms = since..=generation;
    own_token(seen, l, &terms, found);
    send_time(b, seen, l, &terms, generation, found);
    if b.proof {
        membership_proof(b, seen, l, &terms, generation, found);
    }
    token_order(l, k, found);
    k.last_token.insert(l.role, (l.lease.token.0, l.claim.log_epoch));
}

/// Rule `assigned-only`: a lost or revoked partition ends leadership at once.
fn assigned_only(l: &LeaseClaim<'_>, k: &Knows, found: &mut Found) {
    let (m, role, p, at) = (l.m, l.role, l.p, &l.at);
    found.add(Rule::AssignedOnly, l.m, Some(l.claim.at), || {
        let last = k.last_change.get(&p).map_or("never assigned".to_owned(), Clone::clone);
        format!(
            "{m} claimed a lease of role {role} at {at} while partition {p} was not assigned to it (last change: {last}); a lost or revoked partition ends leadership at once"
        )
    });
}

/// Rule `grace`: a new assignment leads only G after it was handed over.
fn grace(b: &Bounds, l: &LeaseClaim<'_>, k: &Knows, found: &mut Found) {
    let (m, role, p, at, grace) = (l.m, l.role, l.p, &l.at, b.grace);
    if l.acquired
        && b.judge_grace
        && let Some(&handed) = k.owned_at.get(&p)
        && l.claim.at < handed + grace
    {
        found.add(Rule::Grace, l.m, Some(l.claim.at), || {
            format!(
                "{m} took a new lease of role {role} at {at}, {}ms after partition {p} was handed to it at {}: a new assignment may lead only G = {grace}ms after it",
                l.claim.at - handed,
                secs(handed)
            )
        });
    }
}

/// Rules `own-evidence` and `current-term`: the token is the offset of the
/// heartbeat that confirmed the term, so it must be this member's own, of
/// this ownership.
fn own_token(seen: &Seen<'_>, l: &LeaseClaim<'_>, terms: &std::ops::RangeInclusive<u64>, found: &mut Found) {
    let (m, role) = (l.m, l.role);
    let records = seen.at_offset.get(&(l.p, l.lease.token.0)).map_or(&[][..], Vec::as_slice);
    let own = records
        .iter()
        .any(|a| a.author == m && a.heartbeat.is_some_and(|hb| hb.role == role && terms.contains(&hb.term)));
    if !own {
        let (rule, text) = explain_token(m, role, l.lease.token.0, l.p, records, terms);
        found.add(rule, l.m, Some(l.claim.at), || format!("{text} at {}", l.at));
    }
}

/// Rule `current-generation`: a term is confirmed by a heartbeat of the
/// generation the member holds when it takes the lease. A candidate's
/// evidence of an older term does not survive a new generation (the core's
/// `new_term` arm of `Member::handle_assigned`): a member the coordinator
/// removed (session or rebalance timeout: ground truth it learns late or
/// never) and assigned the partition again with no `Lost` in between
/// (librdkafka's JoinGroup UNKNOWN_MEMBER_ID rejoin; docs/background.md,
/// "librdkafka's rejoin paths") would otherwise lead on a heartbeat of the
/// membership the coordinator ended, whose offset may lie below its
/// successor's token. Judged where the removal fell between the hand-over
/// of the heartbeat's generation and that of the current one: `current-term`
/// accepts the older term there, because the client handed no `Lost`.
fn current_generation(seen: &Seen<'_>, l: &LeaseClaim<'_>, k: &Knows, removed: &[u64], found: &mut Found) {
    let (m, role, p, token) = (l.m, l.role, l.p, l.lease.token.0);
    let Some(generation) = k.generation else { return };
    let Some(&now_handed) = k.handed.get(&generation) else { return };
    let records = seen.at_offset.get(&(p, token)).map_or(&[][..], Vec::as_slice);
    let terms: BTreeSet<u64> = records
        .iter()
        .filter(|a| a.author == m)
        .filter_map(|a| a.heartbeat.filter(|hb| hb.role == role).map(|hb| hb.term))
        .collect();
    if terms.contains(&generation) {
        return;
    }
    for term in terms {
        let Some(&then_handed) = k.handed.get(&term) else { continue };
        if let Some(&r) = removed.iter().find(|r| then_handed < **r && **r <= now_handed) {
            found.add(Rule::CurrentGeneration, l.m, Some(l.claim.at), || {
                format!(
                    "{m} took a lease of role {role} at {} in generation {generation} (handed over at {}) on its heartbeat of generation {term} (token {token}), but the coordinator had removed it at {} in between: evidence of an ended membership confirms no new term",
                    l.at,
                    secs(now_handed),
                    secs(r)
                )
            });
            return;
        }
    }
}

/// Rules `send-time` and `own-evidence`: the lease ends no later than its
/// newest own current-term heartbeat's send time + T.
fn send_time(
    b: &Bounds,
    seen: &Seen<'_>,
    l: &LeaseClaim<'_>,
    terms: &std::ops::RangeInclusive<u64>,
    generation: u64,
    found: &mut Found,
) {
    let (m, role, p, at, t, until) = (l.m, l.role, l.p, &l.at, b.t, l.lease.until.as_millis());
    let sent = terms.clone().filter_map(|g| seen.newest_sent.get(&(m, p, role, g))).max().copied();
    match sent {
        Some(sent) if until > sent + t => found.add(Rule::SendTime, l.m, Some(l.claim.at), || {
            format!(
                "{}: a lease runs from when the heartbeat was sent, not when it was read",
                past_cap(m, role, at, until, sent + t, "its newest own heartbeat's")
            )
        }),
        Some(_) => {}
        None => found.add(Rule::OwnEvidence, l.m, Some(l.claim.at), || {
            format!("{m} claimed a lease of role {role} at {at} without any own heartbeat of generation {generation} in partition {p}")
        }),
    }
}

/// Rule `membership-proof`: with the proof on, the lease also ends no later
/// than the newest accepted proof's send time + T, a proof of this
/// ownership (incremental rebalancing keeps a partition, and the proof,
/// across generations; eager starts afresh each one).
fn membership_proof(
    b: &Bounds,
    seen: &Seen<'_>,
    l: &LeaseClaim<'_>,
    terms: &std::ops::RangeInclusive<u64>,
    generation: u64,
    found: &mut Found,
) {
    let (m, role, at, t, until) = (l.m, l.role, &l.at, b.t, l.lease.until.as_millis());
    let newest = terms.clone().filter_map(|g| seen.newest_proof.get(&(m, g))).max();
    match newest {
        Some(sent) if until > sent + t => found.add(Rule::MembershipProof, l.m, Some(l.claim.at), || {
            past_cap(m, role, at, until, sent + t, "its newest accepted membership proof's")
        }),
        Some(_) => {}
        None => found.add(Rule::MembershipProof, l.m, Some(l.claim.at), || {
            let of = if *terms.start() == generation {
                format!("generation {generation}")
            } else {
                format!("generations {}..={generation}", terms.start())
            };
            format!("{m} claimed a lease of role {role} at {at} with no accepted membership proof of {of}")
        }),
    }
}

/// Rule `token-order`: a member's own tokens for a role strictly increase
/// from term to term, and stay put within one. Across a lost log they may
/// restart, but only loudly: with the member's own published log epoch
/// higher than at its last token.
fn token_order(l: &LeaseClaim<'_>, k: &Knows, found: &mut Found) {
    let (m, role, at, token, log_epoch) = (l.m, l.role, &l.at, l.lease.token.0, l.claim.log_epoch);
    let Some(&(last, epoch)) = k.last_token.get(&role) else { return };
    let wrong = if l.acquired { token <= last && log_epoch <= epoch } else { token != last };
    if wrong {
        found.add(Rule::TokenOrder, l.m, Some(l.claim.at), || {
            let what = if l.acquired { "a new term" } else { "the same lease" };
            format!(
                "{m}'s token for role {role} went from {last} (log epoch {epoch}) to {token} (log epoch {log_epoch}) at {at} for {what}: a member's tokens only increase, so downstream never takes its new term for a stale one"
            )
        });
    }
}

/// Rule `log-epoch`, second half: nor does the epoch run ahead of the
/// losses. Beyond the told ones, a member finds one by itself only when it
/// acquires a role (its own heartbeat came back at or below a token it led
/// with).
fn epoch_not_ahead_of_losses(log: &Log, knows: &BTreeMap<&str, Knows>, found: &mut Found) {
    for (m, k) in knows {
        // Acquired events are recorded by a subscriber, claims after each
        // pulse: either may miss one the other saw, so the larger count.
        let events = log.events.iter().filter(|e| e.member == *m && matches!(e.event, Event::Acquired { .. })).count();
        let acquired = k.terms.max(events as u64);
        let most = k.told_lost + acquired;
        if k.max_epoch > most {
            found.add(Rule::LogEpoch, m, None, || {
                format!(
                    "{m} published log epoch {} but was told of {} lost log(s) and acquired {acquired} term(s): a new epoch only per lost log",
                    k.max_epoch, k.told_lost
                )
            });
        }
    }
}

/// Whether a member clock can be stepped or drift in this scenario.
fn clock_faults(s: &Scenario) -> bool {
    use crate::scenario::{Fault, FaultKind};
    let listed = s.timed_faults().any(|f| matches!(f.fault, Fault::ClockStep { .. } | Fault::ClockDrift { .. }));
    let random = s.random.as_ref().is_some_and(|r| {
        r.faults > 0 && r.kinds.iter().any(|k| matches!(k, FaultKind::ClockStep | FaultKind::ClockDrift))
    });
    listed || random
}

/// Each heartbeat says whether its sender led the role when it sent it, and
/// with which token (what `neli watch` shows): a heartbeat may claim only a
/// term its sender published, sent before that lease ended on its clock,
/// and a term held for 2T or more is claimed by some heartbeat (a leader
/// sends several while it holds a lease that long).
fn heartbeat_lease(log: &Log, t: u64, found: &mut Found) {
    // (member, role, token) -> (first and last claim, latest lease end).
    let mut terms: BTreeMap<(&str, u32, u64), (u64, u64, u64)> = BTreeMap::new();
    for c in &log.claims {
        for (&role, lease) in &c.leading {
            let e =
                terms.entry((c.member.as_str(), role, lease.token.0)).or_insert((c.at, c.at, lease.until.as_millis()));
            e.1 = e.1.max(c.at);
            e.2 = e.2.max(lease.until.as_millis());
        }
    }
    let mut claimed: BTreeSet<(&str, u32, u64)> = BTreeSet::new();
    for a in &log.appends {
        let Some(hb) = a.heartbeat else { continue };
        let (Some(token), true) = (hb.lease, log.slots.contains_key(&a.author)) else { continue };
        let m = a.author.as_str();
        // A background member's terms are not claims (world/member/,
        // `run_background`): nothing here to hold its heartbeats to.
        if log.background.contains(m) {
            continue;
        }
        claimed.insert((m, hb.role, token));
        match terms.get(&(m, hb.role, token)) {
            None => found.add(Rule::HeartbeatLease, m, Some(a.at), || {
                format!(
                    "{m}'s heartbeat sent at {}ms on its clock (offset {} of partition {}) says it leads role {} with token {token}, a term it never published",
                    hb.sent_at, a.offset, a.partition, hb.role
                )
            }),
            Some(&(_, _, until)) if hb.sent_at >= until => found.add(Rule::HeartbeatLease, m, Some(a.at), || {
                format!(
                    "{m}'s heartbeat sent at {}ms on its clock says it leads role {} with token {token}, but that lease ended at {until}ms: a lease is over at its end",
                    hb.sent_at, hb.role
                )
            }),
            Some(_) => {}
        }
    }
    for (&(m, role, token), &(first, last, _)) in &terms {
        if last - first >= 2 * t && !claimed.contains(&(m, role, token)) {
            found.add(Rule::HeartbeatLease, m, Some(first), || {
                format!(
                    "{m} held role {role} with token {token} from {} to {} but none of its heartbeats said so: `neli watch` would show no leader",
                    secs(first),
                    secs(last)
                )
            });
        }
    }
}

/// Which rule a token that is not the member's own current-term heartbeat breaks.
fn explain_token(
    m: &str,
    role: u32,
    token: u64,
    p: u32,
    records: &[&AppendObs],
    terms: &std::ops::RangeInclusive<u64>,
) -> (Rule, String) {
    let Some(a) = records.last() else {
        return (
            Rule::OwnEvidence,
            format!("{m} leads role {role} with token {token}, but partition {p} has no record at that offset"),
        );
    };
    match a.heartbeat {
        Some(hb) if a.author == m && hb.role == role => (
            Rule::CurrentTerm,
            format!(
                "{m} leads role {role} with token {token}, its own heartbeat of generation {} while it owns partition {p} since generation {} (now {}): only current-term heartbeats are evidence",
                hb.term,
                terms.start(),
                terms.end()
            ),
        ),
        _ => (
            Rule::OwnEvidence,
            format!(
                "{m} leads role {role} with token {token}, the offset of a record written by {}{}: only the member's own heartbeats are evidence",
                a.author,
                if a.heartbeat.is_none() { " that is not a heartbeat" } else { "" }
            ),
        ),
    }
}

/// A lost assignment fences at once: after the client handed the driver
/// `Lost` for a partition whose role it led, the member's next event for the
/// role is `Fenced` (not `Revoked`: nothing may finish work on a lost lease),
/// and it does no leader work until it acquires again.
fn lost_is_fenced(log: &Log, roles: u32, partitions: u32, found: &mut Found) {
    for lost in &log.assignments {
        let AssignmentChange::Lost(ps) = &lost.change else { continue };
        let m = lost.member.as_str();
        for role in 0..roles {
            let p = role % partitions;
            if !ps.contains(&p) {
                continue;
            }
            let next = log
                .events
                .iter()
                .filter(|e| e.member == m && e.at >= lost.at && e.event.role() == role)
                .min_by_key(|e| e.at);
            if let Some(e) = next
                && matches!(e.event, Event::Revoked { .. })
            {
                found.add(Rule::LostIsFenced, m, Some(lost.at), || {
                    format!(
                        "{m} lost partition {p} at {} but its next event for role {role} was Revoked at {}: a lost lease must be Fenced, so no handler finishes work on it",
                        secs(lost.at),
                        secs(e.at)
                    )
                });
            }
        }
    }
}

/// The application's work in a Revoked handler finishes before the next
/// leader's first act: no handler write after another member acquired with a
/// newer token in the same log epoch, unless the coordinator had dropped the
/// writer (its session or rebalance timeout ran out: the barrier only holds
/// while the member is in the group).
fn revoked_barrier(log: &Log, found: &mut Found) {
    let dropped: BTreeSet<(&str, u64)> = log.removals.iter().map(|(at, m)| (m.as_str(), *at)).collect();
    for w in log.writes.iter().filter(|w| w.in_handler) {
        let successor = log
            .events
            .iter()
            .filter(|e| e.member != w.member && e.log_epoch == w.log_epoch && e.at < w.at)
            .filter(|e| matches!(e.event, Event::Acquired { role: 0, token } if token.0 > w.token))
            .min_by_key(|e| e.at);
        let Some(e) = successor else { continue };
        if dropped.iter().any(|(m, at)| *m == w.member && *at <= e.at) {
            continue;
        }
        found.add(Rule::RevokedBarrier, &w.member, Some(w.at), || {
            format!(
                "{}'s Revoked handler still wrote with token {} at {}, after {} acquired role 0 with token {} at {}: the handover must wait for the handler",
                w.member,
                w.token,
                secs(w.at),
                e.member,
                match e.event {
                    Event::Acquired { token, .. } => token.0,
                    _ => 0,
                },
                secs(e.at)
            )
        });
    }
}

enum Fact<'a> {
    Append(&'a AppendObs),
    Proof(&'a ProofObs),
    Assignment(&'a AssignmentObs),
    Claim(&'a ClaimObs),
}

/// Every fact the rules use, in the order it was recorded.
fn facts(log: &Log) -> Vec<Fact<'_>> {
    let mut all: Vec<(u64, Fact<'_>)> = Vec::new();
    all.extend(log.appends.iter().map(|a| (a.seq, Fact::Append(a))));
    all.extend(log.proofs.iter().map(|p| (p.seq, Fact::Proof(p))));
    all.extend(log.assignments.iter().map(|a| (a.seq, Fact::Assignment(a))));
    all.extend(log.claims.iter().map(|c| (c.seq, Fact::Claim(c))));
    all.sort_by_key(|(seq, _)| *seq);
    all.into_iter().map(|(_, f)| f).collect()
}

/// "m's lease of role r claimed at A ends at U ms on its clock, D ms after
/// WHAT send time + T (C ms)": a lease that outlived the cap `cap`.
fn past_cap(m: &str, role: u32, at: &dyn std::fmt::Display, until: u64, cap: u64, what: &str) -> String {
    format!(
        "{m}'s lease of role {role} claimed at {at} ends at {until}ms on its clock, {}ms after {what} send time + T ({cap}ms)",
        until - cap
    )
}
