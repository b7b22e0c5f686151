//! The fuzz corpus kept in the repository (`fuzz/corpus/`, fuzz/README.md)
//! replayed through the same properties the fuzz targets check, so every
//! input a fuzzer once found interesting stays a regression test without
//! nightly or libFuzzer.

use std::path::PathBuf;

/// Every file of `fuzz/corpus/<target>/`; an empty or missing corpus is a
/// failure (it is part of the repository).
pub fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: the fuzz corpus is missing: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: the fuzz corpus is empty", dir.display());
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).expect("corpus file"))).collect()
}

/// Runs `check` on every input, naming the file that broke it.
fn replay(target: &str, check: fn(&[u8])) {
    for (path, data) in corpus(target) {
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            panic!("fuzz corpus input {} breaks {target}'s property (see the panic above)", path.display());
        }
    }
}

#[test]
fn heartbeat_decode_corpus_holds() {
    replay("heartbeat_decode", neli::fuzzing::heartbeat);
}

#[cfg(feature = "cli")]
#[test]
fn cli_flags_corpus_holds() {
    replay("cli_flags", neli::fuzzing::cli_flags);
}

// The property itself bites: a record that decodes but does not round-trip
// would fail, and malformed records are rejected, not decoded.
#[test]
fn the_heartbeat_property_accepts_valid_and_rejects_nothing_silently() {
    use neli::Time;
    use neli::core::Heartbeat;
    let hb = Heartbeat { role: 0, term: 3, seq: 1, sent_at: Time::from_millis(7), lease: None, name: "m0".into() };
    let bytes = hb.encode();
    neli::fuzzing::heartbeat(&bytes);
    assert_eq!(Heartbeat::decode(&bytes), Ok(hb));
    let mut bad_flag = bytes.clone();
    bad_flag[33] = 7; // magic 4, version 1, role 4, term 8, seq 8, sent_at 8
    assert!(Heartbeat::decode(&bad_flag).is_err(), "lease flag 7 is refused");
    neli::fuzzing::heartbeat(&bad_flag);
}
