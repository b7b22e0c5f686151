//! `neli-lab merge`: shard reports of one `explore` combined into the
//! report one run over all seeds gives.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{fail, verdict_code};
use crate::report::{self, Format};

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The shard reports, e.g. `shard-*.json`.
    files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(a: MergeArgs) -> ExitCode {
    let mut inputs = Vec::new();
    for f in &a.files {
        let name = f.display().to_string();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(err) => return fail(format!("{name}: cannot read: {err}")),
        };
        match serde_json::from_str::<report::Explore>(&text) {
            Ok(r) => inputs.push((name, r)),
            Err(err) => return fail(format!("{name}: not an explore JSON report ({err})")),
        }
    }
    match report::merge(inputs) {
        Ok(r) => {
            print!("{}", r.render(a.format));
            verdict_code(!r.failed())
        }
        Err(err) => fail(err),
    }
}
