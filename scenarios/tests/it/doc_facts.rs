//! The docs state what the code does, for the facts a reader acts on and
//! that changed under the docs before (CONTRIBUTING.md, "Transcripts are
//! tests"): the assignment default, static membership, the grace rule of
//! the consumer protocol, `check --max-states`' defaults and what a lease
//! carries. Each fact is read from the code, then every sentence of the
//! user-facing docs that states it is held to it; a sentence that states
//! another value fails the test with its file and line.

use std::path::Path;
use std::time::Duration;

use neli::{Assignment, Config, ConfigError, GroupProtocol};
use neli_lab::model_check::{DEFAULT_MAX_STATES, DEFAULT_SIMULATE_STATES};

/// The docs a user reads, from the repository's root.
const DOCS: [&str; 13] = [
    "README.md",
    "CONTRIBUTING.md",
    "ARCHITECTURE.md",
    "CHANGELOG.md",
    "BENCHMARKS.md",
    "neli/README.md",
    "neli/KAFKA.md",
    "scenarios/README.md",
    "scenarios/FORMAT.md",
    "docs/background.md",
    "docs/ci.md",
    "docs/harness-tour.md",
    "docs/testing-your-service.md",
];

/// A sentence of a doc, with the line it starts on.
struct Sentence {
    at: String,
    text: String,
}

/// Every sentence of every doc: a paragraph's lines joined, cut at ". ".
/// Fenced code blocks are left out (they are checked by compiling or
/// running them).
fn sentences() -> Vec<Sentence> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root.join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
        let mut in_code = false;
        let mut para = String::new();
        let mut start = 0;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if in_code {
                continue;
            }
            if line.trim().is_empty() || line.starts_with('#') || line.trim_start().starts_with("- ") {
                split_into(&mut out, doc, start, &para);
                para.clear();
                start = i + 1;
            }
            if !line.trim().is_empty() {
                para.push_str(line.trim());
                para.push(' ');
            }
        }
        split_into(&mut out, doc, start, &para);
    }
    out
}

fn split_into(out: &mut Vec<Sentence>, doc: &str, line: usize, para: &str) {
    for text in para.split(". ").filter(|t| !t.trim().is_empty()) {
        out.push(Sentence { at: format!("{doc}:{}", line + 1), text: text.to_owned() });
    }
}

/// The value a sentence gives as a default: the first of `values` named
/// within a few words after "default", or just before "(the) default".
fn stated_default<'a>(text: &str, values: &[&'a str]) -> Option<&'a str> {
    let lower = text.to_lowercase();
    let mut found = None;
    for (at, _) in lower.match_indices("default") {
        let after = &lower[at..lower.floor_char_boundary(at + 40)];
        // A claim ends at its clause: "the default; under eager `range`…"
        // names range for something else.
        let after = after.split(';').next().unwrap_or(after);
        let before = &lower[lower.ceil_char_boundary(at.saturating_sub(30))..at];
        let hit = values
            .iter()
            .filter_map(|v| {
                [format!("`{v}`"), format!("`\"{v}\"`")]
                    .iter()
                    .filter_map(|q| after.find(q.as_str()))
                    .min()
                    .map(|i| (i, *v))
            })
            .chain(values.iter().filter_map(|v| {
                // "`range` (the default", "`range` assignment by default".
                let named = before.rfind(&format!("`{v}`"))?;
                let between = &before[named + v.len() + 2..];
                let joins = ["(the ", ", the ", "(", "by ", "is the "].iter().any(|j| between.ends_with(j));
                (joins && between.len() <= 24).then_some((0, *v))
            }))
            .min_by_key(|(i, _)| *i);
        if let Some((_, v)) = hit {
            found.get_or_insert(v);
        }
    }
    found
}

/// A sentence about history ("refused before", "was") states no current fact.
fn is_history(text: &str) -> bool {
    let lower = text.to_lowercase();
    ["before", " was ", "(was ", "used to", "previous", "earlier", "no longer", "is gone"]
        .iter()
        .any(|w| lower.contains(w))
}

fn base() -> neli::ConfigBuilder {
    Config::builder().bootstrap_servers("kafka:9092").group("g").heartbeat_timeout(Duration::from_secs(1))
}

#[test]
fn the_docs_name_the_assignment_default_the_library_has() {
    let library = Config::default().assignment.name();
    // `neli-lab check` models range unless told: its own default, from its help.
    let help = String::from_utf8_lossy(&crate::lab(&["check", "--help"]).stdout).into_owned();
    let check = ["range", "cooperative-sticky"]
        .into_iter()
        .find(|v| help.contains(&format!("[default: {v}]")))
        .expect("check --help shows its --assignment default");
    let names = [Assignment::Range.name(), Assignment::CooperativeSticky.name()];
    let mut wrong = Vec::new();
    let mut stated = 0;
    for s in sentences().iter().filter(|s| !is_history(&s.text)) {
        let Some(value) = stated_default(&s.text, &names) else { continue };
        let about_check = s.text.contains("check") || s.text.contains("model");
        let expected = if about_check { check } else { library };
        stated += usize::from(!about_check);
        if value != expected {
            wrong.push(format!("{}: says the default is `{value}`, the code's is `{expected}`: {}", s.at, s.text));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(stated >= 3, "expected the docs to state the assignment default, found {stated} sentences");
}

#[test]
fn the_docs_say_static_membership_is_accepted_under_the_grace_rule() {
    let t = Duration::from_secs(1);
    let with_id = |grace: Duration| base().kafka("group.instance.id", "m-1").grace(grace).build();
    assert!(with_id(t + t / 10).is_ok(), "static membership with G = T + 10 % builds");
    assert!(matches!(with_id(Duration::ZERO), Err(ConfigError::GraceBelowLease { .. })), "and is refused below it");
    let mut wrong = Vec::new();
    for s in sentences().iter().filter(|s| !is_history(&s.text)) {
        let lower = s.text.to_lowercase();
        let about = lower.contains("static membership") || lower.contains("group.instance.id");
        let refusal = ["is refused", "are refused", "not supported", "unsupported", "refused for now", "refused)"]
            .iter()
            .any(|w| lower.contains(w));
        let conditional = ["grace", "below", "unless", "smaller", "consumer protocol", "broker"];
        if about && refusal && !conditional.iter().any(|w| lower.contains(w)) {
            wrong.push(format!(
                "{}: says static membership is refused; the code accepts it with G >= T + 10 %: {}",
                s.at, s.text
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_docs_give_the_grace_rule_the_validation_holds() {
    let t = Duration::from_secs(1);
    let consumer = |grace: Duration| base().group_protocol(GroupProtocol::Consumer).grace(grace).build();
    assert!(consumer(t + t / 10).is_ok(), "the consumer protocol with G = T + 10 % builds");
    assert!(
        matches!(consumer(t + t / 20), Err(ConfigError::GraceBelowLease { suggest, .. }) if suggest == t + t / 10),
        "and G = T + 5 % is refused, suggesting T + 10 %"
    );
    // A library rule stated as G >= T (without the 10 %) is the model's rule
    // in ticks, not what validation holds.
    let mut wrong = Vec::new();
    for s in sentences().iter().filter(|s| !is_history(&s.text)) {
        // "unchecked" (a scenario's reason to skip validation) is no
        // sentence about `check`.
        let lower = s.text.to_lowercase().replace('≥', ">=").replace("unchecked", "");
        let about_model =
            ["model", "check", "tick", "simulat", "scenario", "g = t + 1"].iter().any(|w| lower.contains(w));
        // The rule as a bound, or as the refusal below it.
        for rule in ["grace >= t", "g >= t", "grace of at least t", "grace at least t", "grace below t"] {
            for (at, _) in lower.match_indices(rule) {
                // "t" ends the word ("g >= t or", not "g >= the"), and no
                // "+ 10 %" follows.
                let after = &lower[at + rule.len()..];
                let whole = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
                if whole && !after.trim_start().starts_with('+') && !about_model {
                    wrong.push(format!("{}: states `{rule}`; validation holds G >= T + 10 %: {}", s.at, s.text));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_docs_give_checks_max_states_defaults() {
    let mut wrong = Vec::new();
    let mut stated = 0;
    for s in sentences() {
        for (at, _) in s.text.match_indices("--max-states") {
            // "`--max-states` defaults to 250 M", "(`--max-states`, default
            // 250,000,000 …", "`--max-states` (default 1000000 there)".
            let tail = &s.text[at + "--max-states".len()..];
            let tail = tail.trim_start_matches(['`', ',', ' ', '(']);
            let Some(rest) = tail.strip_prefix("defaults to").or_else(|| tail.strip_prefix("default")) else {
                continue;
            };
            let Some(n) = number_after(rest) else { continue };
            stated += 1;
            let near = &rest[..rest.floor_char_boundary(30)];
            let expected = if near.contains("there") { DEFAULT_SIMULATE_STATES } else { DEFAULT_MAX_STATES };
            if n != expected as u64 {
                wrong
                    .push(format!("{}: says --max-states defaults to {n}, the code's is {expected}: {}", s.at, s.text));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(stated >= 3, "expected the docs to state both --max-states defaults, found {stated}");
}

/// The number at the start of `text` ("s to 250 M", " 1000000", " 250,000,000 generated").
fn number_after(text: &str) -> Option<u64> {
    let text = text.trim_start_matches(|c: char| c.is_alphabetic() || c == ' ' || c == ':' || c == '`');
    let digits: String = text.chars().take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '_').collect();
    if digits.is_empty() {
        return None;
    }
    let n: u64 = digits.replace([',', '_'], "").parse().ok()?;
    let unit = text[digits.len()..].trim_start();
    Some(if unit.starts_with("M ") || unit.starts_with("M,") || unit == "M" { n * 1_000_000 } else { n })
}

#[test]
fn the_docs_say_what_a_lease_carries() {
    // Every field, by name: a field added or removed breaks this line.
    let lease = neli::Lease { token: neli::Token(3), until: neli::Time::from_millis(10), log_epoch: 1 };
    assert_eq!(lease.stamp(), neli::Stamp { log_epoch: 1, token: neli::Token(3) });
    let architecture = sentences().into_iter().filter(|s| s.at.starts_with("ARCHITECTURE.md"));
    let shown: Vec<Sentence> = architecture.filter(|s| s.text.contains("a `Lease` (")).collect();
    assert!(
        shown.iter().any(|s| s.text.contains("a `Lease` (token, end, log epoch)")),
        "ARCHITECTURE.md names the lease's fields as the type has them: token, end, log epoch"
    );
}
