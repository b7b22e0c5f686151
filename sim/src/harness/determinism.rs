//! The determinism check: the same seed run twice must give the same run
//! (docs/background.md, "Determinism: spawn order"). When it does not, the first entry of
//! the history (then of the trace) that differs is named, with what
//! usually causes it, since a run that does not replay cannot be debugged
//! from its seed.

use crate::world::RunReport;

/// What makes a seed's two runs differ, in the order they are usually found.
pub const LIKELY_CAUSES: &str = "likely causes: iterating a HashMap or HashSet (its order is random per process; use a BTreeMap or sort), reading std::time::Instant or SystemTime (use the SimMember's clock), unseeded randomness (rand::thread_rng; derive a seeded RNG from the run instead), spawning OS threads, or a build without --cfg tokio_unstable";

/// `None` if the two runs of one seed are the same; else the first
/// history entry (or trace line) where they part, and the likely causes.
pub fn difference(first: &RunReport, second: &RunReport) -> Option<String> {
    let (a, b) = (first.history.to_jsonl(), second.history.to_jsonl());
    if let Some(d) = first_difference("history entry", a.lines(), b.lines()) {
        return Some(format!("{d}; {LIKELY_CAUSES}"));
    }
    let trace =
        first_difference("trace line", first.trace.iter().map(String::as_str), second.trace.iter().map(String::as_str));
    trace.map(|d| format!("{d}; {LIKELY_CAUSES}"))
}

/// The first place two sequences of lines differ, as a sentence.
fn first_difference<'a>(
    what: &str,
    a: impl Iterator<Item = &'a str>,
    b: impl Iterator<Item = &'a str>,
) -> Option<String> {
    let (mut a, mut b) = (a.fuse(), b.fuse());
    let mut i = 0usize;
    loop {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (x, y) if x == y => i += 1,
            (x, y) => {
                let show = |l: Option<&str>| l.map_or("(nothing: the run ended)".to_owned(), |l| l.to_owned());
                return Some(format!(
                    "the same seed ran twice and its runs differ first at {what} {i}: first run {}, second run {}",
                    show(x),
                    show(y)
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_line_that_differs() {
        let d = first_difference("history entry", ["a", "b", "c"].into_iter(), ["a", "x"].into_iter()).unwrap();
        assert!(d.contains("history entry 1: first run b, second run x"), "{d}");
        let shorter = first_difference("trace line", ["a"].into_iter(), ["a", "b"].into_iter()).unwrap();
        assert!(shorter.contains("first run (nothing: the run ended), second run b"), "{shorter}");
        assert_eq!(first_difference("x", ["a"].into_iter(), ["a"].into_iter()), None);
    }
}
