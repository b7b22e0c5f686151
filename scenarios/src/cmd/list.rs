//! `neli-lab list`: the scenarios with their descriptions.

use std::process::ExitCode;

use crate::{catalog, stats};

/// The profile's name, `+` when the scenario overrides its timings.
fn broker_column(c: &neli_sim::scenario::Cluster) -> String {
    if !c.overridden() { c.profile.name.to_owned() } else { format!("{}+", c.profile.name) }
}

/// Prints every scenario file (broken ones marked); exit 2 if one does
/// not load, or the scenario folder is missing or empty.
pub fn run() -> ExitCode {
    let mut bad = false;
    let mut rows = Vec::new();
    let files = match catalog::all() {
        Ok(files) => files,
        Err(err) => return super::fail(err),
    };
    for (broken, path, s) in files {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name = if broken { format!("{name} (broken on purpose)") } else { name };
        match s {
            Ok(s) => rows.push(vec![name, broker_column(&s.cluster), s.description]),
            Err(e) => {
                bad = true;
                rows.push(vec![name, String::new(), format!("INVALID: {e}")]);
            }
        }
    }
    print!("{}", stats::table(&["scenario", "broker", "description"], &rows));
    println!("\nbroker profiles (a scenario's [cluster] may override their timings: scenarios/FORMAT.md):");
    for p in neli_sim::profile::PROFILES {
        println!("  {:<16} {}", p.name, p.provenance);
    }
    if bad { ExitCode::from(2) } else { ExitCode::SUCCESS }
}
