//! Fuzz target `heartbeat_decode`: the property lives in `neli::fuzzing::heartbeat`, where the corpus
//! replay test under `cargo test` calls it too (fuzz/README.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| neli::fuzzing::heartbeat(data));
