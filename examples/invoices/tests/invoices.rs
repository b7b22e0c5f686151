//! The invoices service under neli-sim's faults: the correct variant
//! passes every seed of `leader-pause` and `swarm`; each wrong one fails on
//! some seed with a named invariant and a reproduction line.

use invoices::{Variant, serve};
use neli_sim::harness::{Harness, Report};
use neli_sim::history::History;

/// Every accepted invoice number is taken once.
fn no_invoice_twice(h: &History) -> Result<(), String> {
    let mut seen = std::collections::BTreeMap::new();
    for w in h.writes().filter(|w| w.accepted) {
        if let Some(first) = seen.insert(w.key.clone(), w) {
            return Err(format!(
                "{} was sent by {} at {} ms and again by {} at {} ms",
                w.key, first.member, first.at, w.member, w.at
            ));
        }
    }
    Ok(())
}

/// Nobody sends an invoice while its lease is over.
fn no_invoice_without_a_lease(h: &History) -> Result<(), String> {
    match h.writes().find(|w| !h.held(&w.member, 0, w.sent_at)) {
        Some(w) => Err(format!("{} sent {} at {} ms, when its lease had ended", w.member, w.key, w.sent_at)),
        None => Ok(()),
    }
}

fn harness(scenario: &str, variant: Variant) -> Harness {
    Harness::shipped(scenario)
        .expect("a shipped scenario")
        .app(move |m| serve(m, variant))
        .store(variant.store())
        .invariant("no invoice sent twice", no_invoice_twice)
        .invariant("no invoice sent without a lease", no_invoice_without_a_lease)
        .seeds(0..200)
}

fn show(r: &Report) -> &Report {
    println!("{r}");
    r
}

#[test]
fn correct_survives_leader_pause() {
    show(&harness("leader-pause", Variant::Correct).run()).assert_passed();
}

#[test]
fn correct_survives_swarm() {
    show(&harness("swarm", Variant::Correct).run()).assert_passed();
}

#[test]
fn no_recheck_sends_without_a_lease() {
    let r = harness("leader-pause", Variant::NoRecheck).run();
    assert!(!show(&r).passed(), "the wrong variant must fail");
}

#[test]
fn unfenced_sends_an_invoice_twice() {
    let r = harness("leader-pause", Variant::Unfenced).run();
    assert!(!show(&r).passed(), "the wrong variant must fail");
}
