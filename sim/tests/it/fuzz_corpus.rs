//! The `scenario_parse` fuzz corpus kept in the repository
//! (`fuzz/corpus/scenario_parse/`, fuzz/README.md) replayed through the
//! property the fuzz target checks, under plain `cargo test`.

use std::path::PathBuf;

#[test]
fn scenario_parse_corpus_holds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/scenario_parse");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: the fuzz corpus is missing: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "{}: {} inputs, the corpus holds at least the shipped scenarios",
        dir.display(),
        files.len()
    );
    for path in files {
        let data = std::fs::read(&path).expect("corpus file");
        if std::panic::catch_unwind(|| neli_sim::fuzzing::scenario(&data)).is_err() {
            panic!("fuzz corpus input {} breaks the scenario property (see the panic above)", path.display());
        }
    }
}
