//! Writes a [`Scenario`] back as a scenario file (`scenarios/FORMAT.md`),
//! which `shrink` and `check` use for the files they produce.

use std::fmt::Write;

use neli_sim::Scenario;
use neli_sim::scenario::{Fault, ModeName, ProfileName, Variant};

fn q(s: &str) -> String {
    format!("{s:?}")
}

pub fn profile(p: ProfileName) -> &'static str {
    match p {
        ProfileName::Kafka => "kafka",
        ProfileName::Tansu => "tansu",
        ProfileName::LibrdkafkaMock => "librdkafka-mock",
    }
}

pub fn variant(v: Variant) -> &'static str {
    match v {
        Variant::Recommended => "recommended",
        Variant::LeaseFromReceipt => "lease-from-receipt",
        Variant::AnyRecordCounts => "any-record-counts",
    }
}

fn fault(out: &mut String, f: &Fault) {
    let _ = writeln!(out, "\n[[faults]]\nat = \"{}\"\nkind = \"{}\"", f.at, f.kind.name());
    for (k, v) in [("target", &f.target), ("a", &f.a), ("b", &f.b), ("from", &f.from), ("to", &f.to)] {
        if let Some(v) = v {
            let _ = writeln!(out, "{k} = {}", q(v));
        }
    }
    for (k, v) in [("duration", f.duration), ("latency", f.latency), ("jitter", f.jitter), ("by", f.by)] {
        if let Some(v) = v {
            let _ = writeln!(out, "{k} = \"{v}\"");
        }
    }
    if let Some(v) = f.lose_state {
        let _ = writeln!(out, "lose_state = {v}");
    }
    if let Some(v) = f.ppm {
        let _ = writeln!(out, "ppm = {v}");
    }
    if let Some(v) = f.partition {
        let _ = writeln!(out, "partition = {v}");
    }
    if let Some(v) = f.count {
        let _ = writeln!(out, "count = {v}");
    }
    if let Some(v) = f.garbage {
        let _ = writeln!(out, "garbage = {v}");
    }
}

/// The scenario as TOML; `header` lines become leading `#` comments.
pub fn to_toml(s: &Scenario, header: &[String]) -> String {
    let mut o = String::new();
    for h in header {
        let _ = writeln!(o, "# {h}");
    }
    let _ = writeln!(o, "name = {}", q(&s.name));
    let _ = writeln!(o, "description = {}", q(&s.description));
    let _ = writeln!(o, "duration = \"{}\"", s.duration);
    if let Some(seed) = s.seed {
        let _ = writeln!(o, "seed = {seed}");
    }
    let c = &s.cluster;
    let _ = writeln!(
        o,
        "\n[cluster]\nbrokers = {}\ncoordinator = {}\npartition_leader = {}\nprofile = \"{}\"",
        c.brokers,
        q(&c.coordinator),
        q(&c.partition_leader),
        profile(c.profile)
    );
    let e = &s.election;
    let _ = writeln!(o, "\n[election]\nmembers = {}", e.members);
    if e.mode == ModeName::MultiRole {
        let _ = writeln!(
            o,
            "mode = \"multi-role\"\nroles = {}\npartitions = {}\nexclusive = {}",
            e.roles, e.partitions, e.exclusive
        );
    }
    let _ = writeln!(
        o,
        "heartbeat_timeout = \"{}\"\nsession_timeout = \"{}\"\ngrace = \"{}\"",
        e.heartbeat_timeout, e.session_timeout, e.grace
    );
    if let Some(i) = e.heartbeat_interval {
        let _ = writeln!(o, "heartbeat_interval = \"{i}\"");
    }
    let _ = writeln!(
        o,
        "poll_interval = \"{}\"\nmembership_proof = {}\nvariant = \"{}\"",
        e.poll_interval,
        e.membership_proof,
        variant(e.variant)
    );
    if let Some(m) = e.max_poll_interval {
        let _ = writeln!(o, "max_poll_interval = \"{m}\"");
    }
    if let Some(w) = e.app_work {
        let _ = writeln!(o, "app_work = \"{w}\"");
    }
    for f in &s.faults {
        fault(&mut o, f.get_ref());
    }
    if let Some(r) = &s.random {
        let kinds: Vec<String> = r.kinds.iter().map(|k| q(k.name())).collect();
        let _ = writeln!(
            o,
            "\n[random]\nfaults = {}\nkinds = [{}]\nmax_duration = \"{}\"",
            r.faults,
            kinds.join(", "),
            r.max_duration
        );
    }
    let x = &s.expect;
    if x.max_overlap.is_some() || x.max_gap.is_some() || x.max_failover.is_some() {
        let _ = writeln!(o, "\n[expect]");
        for (k, v) in [("max_overlap", x.max_overlap), ("max_gap", x.max_gap), ("max_failover", x.max_failover)] {
            if let Some(v) = v {
                let _ = writeln!(o, "{k} = \"{v}\"");
            }
        }
    }
    o
}
