//! The rules a scenario file obeys, table by table in file order
//! (scenarios/FORMAT.md): each names the field and the value at fault, and
//! [`Scenario::parse`] turns the first one broken into an error with its
//! file and line.

use super::*;

impl Scenario {
    /// The rules a whole scenario obeys, table by table in file order; the
    /// first one broken is the error (with the line of a fault that breaks
    /// one).
    pub(super) fn validate(&self) -> Result<(), (Option<At>, String)> {
        let whole = |msg: String| (None, msg);
        let field = |(path, msg): (String, String)| (Some(At::Field(path)), msg);
        self.validate_top().map_err(whole)?;
        self.validate_random().map_err(whole)?;
        if self.faults.len() > MAX_FAULTS as usize {
            return Err(whole(format!("{} faults: at most {MAX_FAULTS}", self.faults.len())));
        }
        self.validate_cluster().map_err(whole)?;
        self.validate_broker_timings().map_err(field)?;
        self.validate_election().map_err(whole)?;
        self.validate_neli().map_err(field)?;
        self.validate_expect_durations().map_err(field)?;
        self.validate_expect().map_err(whole)?;
        for f in &self.faults {
            self.validate_fault(f.get_ref()).map_err(|msg| (Some(At::Offset(f.span().start)), msg))?;
        }
        Ok(())
    }

    /// `name`, `description` and `duration`.
    fn validate_top(&self) -> Result<(), String> {
        if self.name.is_empty() || !self.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(format!("name = {:?}: must match [a-z0-9-]+", self.name));
        }
        if self.name.len() > MAX_NAME {
            return Err(format!("name: {} characters, at most {MAX_NAME} allowed", self.name.len()));
        }
        if self.description.chars().count() > MAX_DESCRIPTION {
            let n = self.description.chars().count();
            return Err(format!("description: {n} characters, at most {MAX_DESCRIPTION} allowed"));
        }
        if self.duration.0 <= 0 {
            return Err(format!("duration = \"{}\": must be positive", self.duration));
        }
        if self.duration.0 > MAX_RUN.0 {
            return Err(format!("duration = \"{}\": at most \"{MAX_RUN}\" of simulated time", self.duration));
        }
        Ok(())
    }

    /// `[random]`: a schedule the generator can draw.
    fn validate_random(&self) -> Result<(), String> {
        let Some(r) = &self.random else {
            return Ok(());
        };
        if r.faults > MAX_FAULTS {
            return Err(format!("random.faults = {}: at most {MAX_FAULTS}", r.faults));
        }
        if r.kinds.is_empty() && r.faults > 0 {
            return Err(format!("random.kinds = []: {} faults need at least one kind to draw from", r.faults));
        }
        if r.max_duration.0 <= 0 {
            return Err(format!("random.max_duration = \"{}\": must be positive", r.max_duration));
        }
        if r.kinds.contains(&FaultKind::StaticReplace) {
            return Err("random.kinds: static-replace is not drawn at random (each one needs a spare process): \
                 write it as a [[faults]] entry"
                .into());
        }
        if r.kinds.contains(&FaultKind::Resume) {
            return Err("random.kinds: resume is not drawn at random (it ends a pause at a moment of the protocol): \
                 write it as a [[faults]] entry with `on` (and `of`)"
                .into());
        }
        Ok(())
    }

    /// `[cluster]`: brokers that exist, and a barrier skipped only where
    /// the assignment has one.
    fn validate_cluster(&self) -> Result<(), String> {
        let c = &self.cluster;
        if c.brokers == 0 {
            return Err("cluster.brokers = 0: need at least one broker".into());
        }
        if c.brokers > MAX_BROKERS {
            return Err(format!("cluster.brokers = {}: at most {MAX_BROKERS}", c.brokers));
        }
        for (field, b) in [("coordinator", c.coordinator), ("partition_leader", c.partition_leader)] {
            if b.0 >= c.brokers {
                return Err(format!("cluster.{field} = \"{b}\": no such broker (brokers are b0..b{})", c.brokers - 1));
            }
        }
        if !c.revoked_barrier && self.election.assignment != AssignmentName::CooperativeSticky {
            return Err("cluster.revoked_barrier = false: only the cooperative-sticky assignment withholds a moving \
                 partition (election.assignment = \"range\" here)"
                .into());
        }
        Ok(())
    }

    /// `[cluster]` timing overrides: not negative, and no longer than a
    /// run may be (a pause past the run's end would hide every figure).
    /// Errors name the field's path, for its line.
    fn validate_broker_timings(&self) -> Result<(), (String, String)> {
        for (key, d) in self.cluster.overrides() {
            let Some(d) = d else { continue };
            let rule = if d.0 < 0 {
                "must not be negative (\"0s\" for none)".to_owned()
            } else if d.0 > MAX_RUN.0 {
                format!("at most \"{MAX_RUN}\", the longest run")
            } else {
                continue;
            };
            return Err((format!("cluster.{key}"), format!("cluster.{key} = \"{d}\": {rule}")));
        }
        Ok(())
    }

    /// `[election]`: settings a member can run with, and application
    /// timings that do not contradict each other.
    fn validate_election(&self) -> Result<(), String> {
        let e = &self.election;
        if e.members == 0 {
            return Err("election.members = 0: need at least one member".into());
        }
        if e.members > MAX_MEMBERS {
            return Err(format!("election.members = {}: at most {MAX_MEMBERS}", e.members));
        }
        if e.heartbeat_timeout.0 <= 0 || e.session_timeout.0 <= 0 || e.poll_interval.0 <= 0 {
            return Err("election: heartbeat_timeout, session_timeout and poll_interval must be positive".into());
        }
        if e.grace.0 < 0 {
            return Err(format!("election.grace = \"{}\": must not be negative", e.grace));
        }
        if e.roles == 0 || e.partitions == 0 {
            return Err("election: roles and partitions must be at least 1".into());
        }
        if let Some(w) = e.app_work
            && w.0 <= 0
        {
            return Err(format!("election.app_work = \"{w}\": must be positive"));
        }
        if e.app_loop == AppLoop::Background && (e.app_work.is_some() || e.app_asks_at_lease_end) {
            return Err("election.app_loop = \"background\": app_work and app_asks_at_lease_end time the asks of the application's own pulse loop; leave them out".into());
        }
        if e.spares > 0 && !e.static_membership {
            return Err(format!(
                "election.spares = {}: spares take over a member's static instance id; set static_membership = true",
                e.spares
            ));
        }
        if e.static_membership && e.group_protocol == GroupProtocolName::Consumer {
            return Err("election.static_membership: simulated for the classic protocol only (the consumer protocol \
                 refuses an instance id still in use, UNRELEASED_INSTANCE_ID)"
                .into());
        }
        if e.members + e.spares > MAX_MEMBERS {
            return Err(format!("election: members + spares = {}: at most {MAX_MEMBERS}", e.members + e.spares));
        }
        if e.app_asks_at_lease_end && e.app_work.is_some() {
            return Err(
                "election: app_work and app_asks_at_lease_end both say when the application asks again; set one".into(),
            );
        }
        if let Some(w) = e.revoked_work
            && (w.0 < 0 || w.ms() >= e.max_poll_ms())
        {
            return Err(format!(
                "election.revoked_work = \"{w}\": must be at least 0 and below max_poll_interval ({} ms), the rebalance timeout that bounds a Revoked handler",
                e.max_poll_ms()
            ));
        }
        if let Some(i) = e.heartbeat_interval
            && (i.0 <= 0 || i >= e.heartbeat_timeout)
        {
            return Err(format!("election.heartbeat_interval = \"{i}\": must be positive and below heartbeat_timeout"));
        }
        Ok(())
    }

    /// `[election]` against neli's own validation ([`Election::neli_refusal`]):
    /// settings neli refuses run only with `unchecked` saying why; then
    /// what neli leaves to the client (`max_poll_interval`) is positive.
    /// Errors name the field's path, for its line.
    fn validate_neli(&self) -> Result<(), (String, String)> {
        let e = &self.election;
        let positive = |m: Dur| {
            ("election.max_poll_interval".to_owned(), format!("election.max_poll_interval = \"{m}\": must be positive"))
        };
        if let Some(m) = e.max_poll_interval
            && m.0 < 0
        {
            return Err(positive(m));
        }
        match &e.unchecked {
            Some(why) if why.trim().is_empty() => {
                return Err((
                    "election.unchecked".into(),
                    format!(
                        "election.unchecked = {why:?}: give the reason these settings run although neli refuses them (unsafe on purpose: what the scenario shows)"
                    ),
                ));
            }
            Some(why) if why.chars().count() > MAX_DESCRIPTION => {
                let n = why.chars().count();
                return Err((
                    "election.unchecked".into(),
                    format!("election.unchecked: {n} characters, at most {MAX_DESCRIPTION} allowed"),
                ));
            }
            Some(_) => {}
            None => {
                if let Some((key, rule)) = e.neli_refusal() {
                    return Err((
                        format!("election.{key}"),
                        format!(
                            "{}: neli refuses this configuration: {rule}; a scenario that runs it on purpose says why in election.unchecked = \"...\"",
                            e.shown(key)
                        ),
                    ));
                }
            }
        }
        // Refused above with the membership proof; without it neli leaves
        // the value to the client, which needs one.
        if let Some(m) = e.max_poll_interval
            && m.0 == 0
        {
            return Err(positive(m));
        }
        Ok(())
    }

    /// `[expect]`: the longest overlap, gap and failover a run may show
    /// are not negative. Errors name the field's path, for its line.
    fn validate_expect_durations(&self) -> Result<(), (String, String)> {
        let x = &self.expect;
        for (key, d) in [("max_overlap", x.max_overlap), ("max_gap", x.max_gap), ("max_failover", x.max_failover)] {
            if let Some(d) = d
                && d.0 < 0
            {
                return Err((
                    format!("expect.{key}"),
                    format!("expect.{key} = \"{d}\": must not be negative (the most a run may show, \"0s\" for none)"),
                ));
            }
        }
        Ok(())
    }

    /// `[expect]`: each layer named once, and only a layer that is on (a
    /// run without it must exist to fail).
    fn validate_expect(&self) -> Result<(), String> {
        for (field, needs) in
            [("fails_without", &self.expect.fails_without), ("may_fail_without", &self.expect.may_fail_without)]
        {
            for (i, l) in needs.iter().enumerate() {
                if needs[..i].contains(l) {
                    return Err(format!("expect.{field}: {l} is named twice"));
                }
                if !self.has(*l) {
                    return Err(format!(
                        "expect.{field}: {l} is already off in this scenario ({} = false), so there is no run without it to expect a failure from",
                        l.field()
                    ));
                }
            }
        }
        if let Some(l) = self.expect.fails_without.iter().find(|l| self.expect.may_fail_without.contains(l)) {
            return Err(format!(
                "expect: {l} is in both fails_without (must fail) and may_fail_without (may fail); choose one"
            ));
        }
        Ok(())
    }

    /// The rules a fault obeys: its own values (`Fault::check`), its aim
    /// (`TimedFault::check_aim`), and what it names within this scenario.
    pub(super) fn validate_fault(&self, f: &TimedFault) -> Result<(), String> {
        let (c, e) = (&self.cluster, &self.election);
        // Read from a file or built in code alike.
        f.fault.check()?;
        f.check_aim()?;
        if f.at.0 < 0 {
            return Err(format!("faults.at = \"{}\": must not be negative", f.at));
        }
        if f.at >= self.duration {
            return Err(format!(
                "faults.at = \"{}\": at or after the end of the run (duration = \"{}\")",
                f.at, self.duration
            ));
        }
        if let Some(on) = f.on
            && !e.membership_proof
            && on.without_proof() != on
        {
            return Err(format!(
                "faults.on = \"{on}\": membership_proof = false, so no proof is ever sent and the fault would never start; aim it at \"{}\" (the member's heartbeat is sent as it is assigned)",
                on.without_proof()
            ));
        }
        let of = f.of.map(|m| ("of", Host::from(m)));
        for (field, host) in f.fault.hosts().into_iter().chain(of) {
            match host {
                Host::Member(i) if i >= e.members => {
                    // `of` names one member: `leader` is no choice there.
                    let or_leader = if field == "of" { "" } else { " or \"leader\"" };
                    return Err(format!(
                        "faults.{field} = \"{host}\": not a member (m0..m{}){or_leader}",
                        e.members - 1
                    ));
                }
                Host::Broker(b) if b >= c.brokers => {
                    return Err(format!(
                        "faults.{field} = \"{host}\": no such broker (brokers are b0..b{})",
                        c.brokers - 1
                    ));
                }
                _ => {}
            }
        }
        match f.fault {
            // The generator never draws one (`FaultKind::draw`); a latency
            // on a host's link to itself is allowed (it draws those), and
            // does nothing.
            Fault::Partition { a, b, .. } if a == b => Err(format!(
                "faults.b = \"{b}\": the same host as a = \"{a}\"; a partition cuts the link between two different hosts (one of a host from itself would do nothing)"
            )),
            Fault::OneWay { from, to, .. } if from == to => Err(format!(
                "faults.to = \"{to}\": the same host as from = \"{from}\"; a one-way cut drops messages between two different hosts (one from a host to itself would do nothing)"
            )),
            Fault::IsolateCoordinator { .. } if c.coordinator == c.partition_leader => {
                Err("faults: isolate-coordinator needs cluster.coordinator != cluster.partition_leader".into())
            }
            Fault::StaticReplace { .. } if !e.static_membership => {
                Err("faults: static-replace needs election.static_membership = true (and a spare: election.spares)"
                    .into())
            }
            Fault::StaticReplace { .. }
                if self.timed_faults().filter(|t| t.fault.kind() == FaultKind::StaticReplace).count()
                    > e.spares as usize =>
            {
                Err(format!(
                    "faults: more static-replace faults than spare processes (election.spares = {}): each one starts a spare",
                    e.spares
                ))
            }
            Fault::ForeignWriter { partition, .. } if partition >= self.partitions() => Err(format!(
                "faults.partition = {partition}: the election topic has partitions 0..{}",
                self.partitions() - 1
            )),
            _ => Ok(()),
        }
    }
}
