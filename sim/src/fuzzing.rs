//! The entry point for the `scenario_parse` fuzz target in `fuzz/`
//! (cargo-fuzz) and for the test that replays its corpus under
//! `cargo test` (`tests/it/fuzz_corpus.rs`). Panics only when a property
//! breaks. Not an API for applications.

use crate::Scenario;
use crate::scenario::schedule;

/// Scenario files are user input: whatever the bytes, parsing returns an
/// error naming the file, or a scenario that writes back to a file that
/// parses to the same text, and whose random faults (if any) can be drawn
/// without exhausting memory (the fault count is capped when read).
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Scenario::parse(text, "fuzz.toml") {
        Err(e) => assert!(e.to_string().starts_with("fuzz.toml"), "an error names the file: {e}"),
        Ok(s) => {
            let written = s.to_toml(&[]).unwrap_or_else(|e| panic!("a parsed scenario writes back: {e}\n{text}"));
            let back = Scenario::parse(&written, "written.toml").unwrap_or_else(|e| {
                panic!("what was written parses again: {e}\n--- input\n{text}\n--- written\n{written}")
            });
            assert_eq!(back.to_toml(&[]).ok().as_deref(), Some(written.as_str()), "the round trip is stable");
            let drawn = schedule::materialize(&s, 0);
            let cap = 2 * crate::scenario::MAX_FAULTS as usize;
            assert!(drawn.timed_faults().count() <= cap, "listed and random faults stay capped");
        }
    }
}
