//! Fuzz target `scenario_parse`: the property lives in `neli_sim::fuzzing::scenario`, where the corpus
//! replay test under `cargo test` calls it too (fuzz/README.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| neli_sim::fuzzing::scenario(data));
