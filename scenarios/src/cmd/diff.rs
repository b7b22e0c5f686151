//! `neli-lab diff`: two `explore --format json` reports compared figure by
//! figure, each figure against its `--max-regress` threshold.

use std::path::PathBuf;
use std::process::ExitCode;

use super::fail;
use crate::report::{self, DEFAULT_MAX_REGRESS, Format, Thresholds};

/// `diff`'s flags: two report files and the thresholds.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The baseline report (`explore --format json`, or `merge --format json`).
    base: PathBuf,
    /// The report to judge against it, of the same scenarios and seeds.
    head: PathBuf,
    /// How much each figure may get worse: `FIGURE.STAT=N%` (relative to
    /// BASE) or `FIGURE.STAT=Nms`/`Ns` (absolute), comma-separated, FIGURE
    /// one of overlap, gap, failover and STAT one of p50, p99, max. Default
    /// `gap.p99=10%,failover.p99=10%`; more violating seeds always regress.
    #[arg(long, value_name = "FIGURE.STAT=LIMIT,...")]
    max_regress: Option<String>,
    /// Output: text, one JSON document (schema `neli-lab/diff/1`), JUnit XML, JSON Lines or Markdown.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Compares the two reports and prints the diff: exit 0 when no figure
/// regressed, 1 when one did (each named in a `regressed:` line, also on
/// stderr in the JSON and JUnit forms), 2 on bad input.
pub fn run(a: DiffArgs) -> ExitCode {
    let thresholds = match Thresholds::parse(a.max_regress.as_deref().unwrap_or(DEFAULT_MAX_REGRESS)) {
        Ok(t) => t,
        Err(err) => return fail(err),
    };
    let (base, head) = match (report::load(&a.base), report::load(&a.head)) {
        (Ok(b), Ok(h)) => (b, h),
        (Err(err), _) | (_, Err(err)) => return fail(err),
    };
    let (base_file, head_file) = (a.base.display().to_string(), a.head.display().to_string());
    match report::Diff::new((&base_file, &base), (&head_file, &head), &thresholds) {
        Ok(d) => {
            print!("{}", d.render(a.format));
            if a.format != Format::Text {
                for r in &d.regressions {
                    eprintln!("regressed: {r}");
                }
            }
            ExitCode::from(d.exit_code())
        }
        Err(err) => fail(err),
    }
}
