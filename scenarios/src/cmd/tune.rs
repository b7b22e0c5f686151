//! `neli-lab tune`: a sweep of T, S and G over seeds, with the safe region
//! and a recommendation.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use super::{SeedRange, fail, jobs, verdict_code};
use crate::report::Format;
use crate::{catalog, sweep};

#[derive(clap::Args, Debug)]
pub struct TuneArgs {
    scenario: String,
    /// Heartbeat timeouts T, comma separated: `500ms,1s,2s`.
    #[arg(long)]
    heartbeat_timeout: String,
    /// Session timeouts S, comma separated.
    #[arg(long)]
    session_timeout: String,
    /// Grace periods G, comma separated (default: the scenario's).
    #[arg(long)]
    grace: Option<String>,
    #[command(flatten)]
    range: SeedRange,
    /// Output directory for tune.csv and tune.svg.
    #[arg(long)]
    out: PathBuf,
    /// Output: text tables, one JSON document, JUnit XML (one testcase
    /// per configuration), JSON Lines or Markdown.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(a: TuneArgs) -> ExitCode {
    let e = match catalog::load(&a.scenario) {
        Ok(e) => e,
        Err(err) => return fail(err),
    };
    let lists = (|| {
        let ts = sweep::parse_list("heartbeat-timeout", &a.heartbeat_timeout).map_err(|e| e.to_string())?;
        let ss = sweep::parse_list("session-timeout", &a.session_timeout).map_err(|e| e.to_string())?;
        let gs = match &a.grace {
            None => vec![e.scenario.election.grace],
            Some(g) => sweep::parse_list("grace", g).map_err(|e| e.to_string())?,
        };
        if a.range.seeds == 0 {
            return Err("--seeds must be at least 1".to_owned());
        }
        std::fs::create_dir_all(&a.out).map_err(|err| format!("{}: cannot create: {err}", a.out.display()))?;
        Ok((ts, ss, gs))
    })();
    let (ts, ss, gs) = match lists {
        Ok(l) => l,
        Err(err) => return fail(err),
    };
    let (start, seeds) = (a.range.start.resolve(false), a.range.seeds);
    let total = (ts.len() * ss.len() * gs.len()) as u64 * seeds;
    let b = crate::progress::bar(total);
    b.set_prefix(e.scenario.name.clone());
    let t0 = Instant::now();
    let seed_list: Vec<u64> = (start..start + seeds).collect();
    let cs = sweep::sweep(&e.scenario, &ts, &ss, &gs, &seed_list, jobs(a.range.jobs), &b);
    b.finish_and_clear();
    if crate::interrupt::requested() {
        // Configurations swept in part cannot be compared: no table, no recommendation.
        let ran: u64 = cs.iter().map(|c| c.seeds).sum();
        eprintln!(
            "neli-lab: interrupted after {ran} of {total} run(s): the sweep is incomplete, so nothing is recommended"
        );
        return ExitCode::from(crate::interrupt::EXIT);
    }
    match sweep::write_report(&a.scenario, &e.scenario, start, seeds, &cs, &a.out) {
        Ok(r) => {
            print!("{}", r.render(a.format, t0.elapsed().as_secs_f64()));
            verdict_code(!r.failed())
        }
        Err(err) => fail(err),
    }
}
