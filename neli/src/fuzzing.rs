//! Entry points for the fuzz targets in `fuzz/` (cargo-fuzz) and for the
//! tests that replay their corpus under `cargo test` (`tests/it/fuzz_corpus.rs`).
//! Each takes arbitrary bytes and panics only when a property breaks, so a
//! crash the fuzzer finds is a bug, not noise. Not an API for applications.

use crate::core::Heartbeat;

/// The heartbeat decoder reads bytes anyone can write to the election
/// topic: whatever they are, decoding returns (no panic, no huge
/// allocation), and a record that decodes re-encodes to one that decodes
/// to the same heartbeat.
pub fn heartbeat(data: &[u8]) {
    if let Ok(hb) = Heartbeat::decode(data) {
        let again = Heartbeat::decode(&hb.encode());
        assert_eq!(again.as_ref(), Ok(&hb), "decode(encode(hb)) != hb for input {data:02x?}");
    }
}

/// The `neli` command line: arguments are the input split at NUL bytes.
/// Parsing either fails with a message clap can render, or gives flags
/// whose configuration is built or refused with a message; never a panic.
/// `-X @FILE` arguments are skipped: a fuzzer must not read this machine's
/// files (the file reader has its own tests).
#[cfg(feature = "cli")]
pub fn cli_flags(data: &[u8]) {
    use clap::Parser;

    use crate::cli::{Cli, Cmd};

    let args: Vec<String> = data.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    if args.iter().any(|a| a.contains('@')) {
        return;
    }
    match Cli::try_parse_from(std::iter::once("neli".to_owned()).chain(args)) {
        Err(e) => {
            let shown = e.render().to_string();
            assert!(!shown.trim().is_empty(), "clap error without text for {data:02x?}");
        }
        Ok(cli) => {
            let built = match cli.command {
                // `exec`'s own: its roles too, as `neli exec` builds it.
                Cmd::Exec(a) => a.config(std::iter::empty()),
                Cmd::Watch(c) | Cmd::End(c) => c.config(std::iter::empty()),
                // No configuration: `holds` only reads a lease file,
                // `exec-child` only becomes CMD, the others print text.
                Cmd::Holds(_) | Cmd::ExecChild(_) | Cmd::Completions(_) | Cmd::Man => return,
            };
            if let Err(e) = built {
                let msg = e.to_string();
                assert!(!msg.trim().is_empty(), "a refused configuration says why, for {data:02x?}");
            }
        }
    }
}
