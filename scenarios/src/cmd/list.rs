//! `neli-lab list`: the scenarios with their descriptions.

use std::process::ExitCode;

use crate::{catalog, stats};

/// Prints every scenario file (broken ones marked); exit 2 if one does not load.
pub fn run() -> ExitCode {
    let mut bad = false;
    let mut rows = Vec::new();
    for (broken, path, s) in catalog::all() {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name = if broken { format!("{name} (broken on purpose)") } else { name };
        match s {
            Ok(s) => rows.push(vec![name, s.description]),
            Err(e) => {
                bad = true;
                rows.push(vec![name, format!("INVALID: {e}")]);
            }
        }
    }
    print!("{}", stats::table(&["scenario", "description"], &rows));
    if bad { ExitCode::from(2) } else { ExitCode::SUCCESS }
}
