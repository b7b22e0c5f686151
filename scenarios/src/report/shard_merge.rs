//! `merge`: the shard reports of one sharded explore combined into the
//! report one run over all seeds gives, refusing shards that are not of
//! one explore (scenarios/README.md, "Sharding and merge").

use super::{Explore, Regression, SCHEMA, ScenarioResults, Shard};
use crate::stats::SeedResult;

/// Why shard reports do not merge: the file at fault and what differs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("merge: give the shard reports (explore --shard i/n --format json) to merge")]
    NoReports,
    #[error("{file}: schema {schema:?}, expected {SCHEMA:?}")]
    Schema { file: String, schema: String },
    #[error("{file}: {what} {value} differs from {first} in {first_file}; all shards must come from one explore")]
    Differs { file: String, what: String, value: String, first: String, first_file: String },
    #[error("{file}: already a merged report; merge the shard reports themselves")]
    AlreadyMerged { file: String },
    #[error("{file}: shard {index}/{of} is out of range")]
    ShardOutOfRange { file: String, index: u64, of: u64 },
    #[error("{file}: shard {index}/{of} given twice (also {other})")]
    ShardTwice { file: String, index: u64, of: u64, other: String },
    #[error("merge: shard(s) {missing} missing (given: {given})")]
    ShardsMissing { missing: String, given: String },
    #[error("merge: seed {seed} of {scenario} is reported by two shards")]
    SeedTwice { seed: u64, scenario: String },
}

/// Refuses `r` (read from `file`) as a shard of the explore that `first`
/// (from `first_file`) is a shard of, naming what differs.
fn same_explore(file: &str, r: &Explore, first_file: &str, first: &Explore) -> Result<(), MergeError> {
    let names = |r: &Explore| -> Vec<(String, String, bool, bool)> {
        r.scenarios.iter().map(|s| (s.name.clone(), s.arg.clone(), s.expect_fail, s.may_fail)).collect()
    };
    if r.schema != SCHEMA {
        return Err(MergeError::Schema { file: file.to_owned(), schema: r.schema.clone() });
    }
    let differs = |what: &str, value: String, first: String| {
        Err(MergeError::Differs {
            file: file.to_owned(),
            what: what.to_owned(),
            value,
            first,
            first_file: first_file.to_owned(),
        })
    };
    if r.build != first.build {
        return differs("build", format!("{:?}", r.build), format!("{:?}", first.build));
    }
    if (r.start, r.seeds) != (first.start, first.seeds) {
        return differs(
            "seed range",
            format!("--start {} --seeds {}", r.start, r.seeds),
            format!("--start {} --seeds {}", first.start, first.seeds),
        );
    }
    if r.shard.of != first.shard.of {
        return differs("shard count", format!("/{}", r.shard.of), format!("/{}", first.shard.of));
    }
    if r.ablate_seeds != first.ablate_seeds {
        return differs("--ablate-seeds", format!("{:?}", r.ablate_seeds), format!("{:?}", first.ablate_seeds));
    }
    if names(r) != names(first) {
        return differs("scenario list", format!("{:?}", names(r)), format!("{:?}", names(first)));
    }
    if r.merged_shards != 0 {
        return Err(MergeError::AlreadyMerged { file: file.to_owned() });
    }
    Ok(())
}

/// Combines the shard reports `inputs` (`(file name, report)`) of one
/// sharded explore into the report of one run over all seeds. Refuses,
/// naming the file, reports of another schema, build, seed range, shard
/// count or scenario list than the first, a shard given twice, a missing
/// shard, and a seed reported twice.
pub fn merge(inputs: Vec<(String, Explore)>) -> Result<Explore, MergeError> {
    let Some((first_file, first)) = inputs.first() else {
        return Err(MergeError::NoReports);
    };
    let mut seen: Vec<Option<&str>> = vec![None; usize::try_from(first.shard.of).unwrap_or(0)];
    for (file, r) in &inputs {
        same_explore(file, r, first_file, first)?;
        let slot = usize::try_from(r.shard.index)
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| seen.get_mut(i))
            .ok_or_else(|| MergeError::ShardOutOfRange { file: file.clone(), index: r.shard.index, of: r.shard.of })?;
        if let Some(other) = slot {
            return Err(MergeError::ShardTwice {
                file: file.clone(),
                index: r.shard.index,
                of: r.shard.of,
                other: (*other).to_owned(),
            });
        }
        *slot = Some(file);
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_none())
        .map(|(i, _)| format!("{}/{}", i + 1, first.shard.of))
        .collect();
    if !missing.is_empty() {
        let given: Vec<&str> = inputs.iter().map(|(f, _)| f.as_str()).collect();
        return Err(MergeError::ShardsMissing { missing: missing.join(", "), given: given.join(", ") });
    }
    let mut scenarios = Vec::new();
    for (k, s) in first.scenarios.iter().enumerate() {
        let mut results: Vec<SeedResult> = inputs.iter().flat_map(|(_, r)| r.scenarios[k].results.clone()).collect();
        results.sort_by_key(|r| r.seed);
        if let Some(w) = results.windows(2).find(|w| w[0].seed == w[1].seed) {
            return Err(MergeError::SeedTwice { seed: w[0].seed, scenario: s.name.clone() });
        }
        let wall = inputs.iter().map(|(_, r)| r.scenarios[k].wall_s).fold(0.0, f64::max);
        let mut merged = ScenarioResults::new(&s.name, &s.arg, wall, results)
            .expecting_failure(s.expect_fail)
            .allowing_failure(s.may_fail);
        merged.without = s.without.clone();
        scenarios.push(merged);
    }
    Ok(Explore {
        schema: SCHEMA.into(),
        build: first.build.clone(),
        start: first.start,
        start_auto: first.start_auto,
        regressions: merged_regressions(&inputs),
        seeds: first.seeds,
        shard: Shard { index: 1, of: 1 },
        jobs: inputs.iter().map(|(_, r)| r.jobs).sum(),
        wall_s: inputs.iter().map(|(_, r)| r.wall_s).fold(0.0, f64::max),
        time_budget: inputs.iter().find_map(|(_, r)| r.time_budget.clone()),
        merged_shards: inputs.len() as u64,
        interrupted: inputs.iter().any(|(_, r)| r.interrupted),
        ablate_seeds: first.ablate_seeds,
        scenarios,
    })
}

/// The regressions every shard replayed, once each (every shard of a
/// nightly replays the same kept failures).
fn merged_regressions(inputs: &[(String, Explore)]) -> Vec<Regression> {
    let mut out: Vec<Regression> = Vec::new();
    for r in inputs.iter().flat_map(|(_, e)| &e.regressions) {
        if !out.iter().any(|o| o.file == r.file && o.seed == r.seed) {
            out.push(r.clone());
        }
    }
    out
}
