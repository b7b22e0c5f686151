//! Fuzz target `cli_flags`: the property lives in `neli::fuzzing::cli_flags`, where the corpus
//! replay test under `cargo test` calls it too (fuzz/README.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| neli::fuzzing::cli_flags(data));
