//! `neli-lab check`: runs the stateright election model of `neli-models`
//! (the real `neli::core::Member` against an abstract coordinator and log,
//! exhaustive BFS within bounds) with a progress line and a verdict per
//! property; each counterexample is written as a scenario file that
//! `neli-lab run` replays on the simulator.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::io::Write;
use std::path::{Path, PathBuf};

use neli::core::UnsafeVariant;
use neli_models::{ElectionModel, ElectionModelCfg, Faults, counterexample_to_scenario, cut_at_violation, format_path};
use stateright::report::{ReportData, ReportDiscovery, Reporter};
use stateright::{Checker, Expectation, Model};

/// Progress on stderr, once a second.
struct Progress;

impl<M: Model> Reporter<M> for Progress {
    fn report_checking(&mut self, d: ReportData) {
        let _ = writeln!(
            std::io::stderr(),
            "{} states={} unique={} depth={} {:.1}s",
            if d.done { "done    " } else { "checking" },
            d.total_states,
            d.unique_states,
            d.max_depth,
            d.duration.as_secs_f64()
        );
    }
    fn report_discoveries(&mut self, _: &M, _: BTreeMap<&'static str, ReportDiscovery<M>>)
    where
        M::Action: Debug + PartialEq,
        M::State: Debug + Hash + PartialEq,
    {
    }
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Request {
    pub members: u8,
    pub roles: u32,
    pub exclusive: bool,
    pub heartbeat_timeout: u8,
    pub session_timeout: u8,
    pub grace: u8,
    pub ticks: u8,
    pub membership_proof: bool,
    pub variant: UnsafeVariant,
    pub faults: Faults,
    pub threads: usize,
}

impl Request {
    pub fn config(&self) -> Result<ElectionModelCfg, String> {
        if self.members == 0 {
            return Err("--members must be at least 1".into());
        }
        if self.heartbeat_timeout == 0 || self.session_timeout == 0 {
            return Err("--heartbeat-timeout and --session-timeout must be at least 1 tick".into());
        }
        let mut c = ElectionModelCfg::exclusive(self.members);
        c.roles = self.roles.max(1);
        c.partitions = self.roles.max(1);
        c.exclusive = self.exclusive;
        c.heartbeat_timeout = self.heartbeat_timeout;
        c.session_timeout = self.session_timeout;
        c.grace = self.grace;
        c.heartbeat_interval = (self.heartbeat_timeout / 2).max(1);
        c.max_ticks = self.ticks;
        c.membership_proof = self.membership_proof;
        c.variant = self.variant;
        c.faults = self.faults;
        Ok(c)
    }
}

/// One property's outcome.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub property: &'static str,
    pub always: bool,
    /// For an `always` property: the counterexample; for `sometimes`: an example.
    pub found: Option<String>,
    pub file: Option<PathBuf>,
    /// Why the written scenario does not load in the simulator, if it does not.
    pub file_error: Option<String>,
}

pub struct Summary {
    pub states: usize,
    pub unique: usize,
    pub depth: usize,
    pub outcomes: Vec<Outcome>,
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// Simulated time the group needs to form (members start, join, rebalance,
/// first heartbeat): the model's tick 0 is an already formed group.
pub const SETTLE_MS: i64 = 5000;

/// The model's scenario, adapted so the simulator accepts and replays it:
/// a coordinator isolation needs the coordinator and the partition leader
/// on two brokers, and every fault moves by [`SETTLE_MS`] so that it hits a
/// formed group (the run grows by as much).
fn adapt(text: &str) -> String {
    let text = if text.contains("kind = \"isolate-coordinator\"") {
        text.replace(
            "brokers = 1\ncoordinator = \"b0\"\npartition_leader = \"b0\"",
            "brokers = 2\ncoordinator = \"b0\"\npartition_leader = \"b1\"",
        )
    } else {
        text.to_owned()
    };
    let Ok(mut s) = neli_sim::Scenario::parse(&text, "<model>") else {
        return text;
    };
    s.duration = neli_sim::scenario::Dur(s.duration.0 + SETTLE_MS);
    for f in &mut s.faults {
        let f = f.get_mut();
        f.at = neli_sim::scenario::Dur(f.at.0 + SETTLE_MS);
    }
    let comments: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# ").map(str::to_owned))
        .chain([format!(
            "written by neli-lab check from a neli-models counterexample; faults moved by {SETTLE_MS}ms so the group has formed"
        )])
        .collect();
    crate::write::to_toml(&s, &comments)
}

/// Runs the check; counterexamples go to `out` as scenario files. With
/// `symmetry`, members are interchangeable (stateright applies symmetry
/// reduction in DFS only, so counterexamples are then not the shortest).
pub fn check(cfg: ElectionModelCfg, threads: usize, symmetry: bool, out: &Path) -> Result<Summary, String> {
    let model: ElectionModel = cfg.into_model();
    let builder = model.clone().checker().threads(threads.max(1));
    if symmetry {
        let c = builder.symmetry_fn(neli_models::election::representative).spawn_dfs().join_and_report(&mut Progress);
        summarise(&model, &c, out)
    } else {
        let c = builder.spawn_bfs().join_and_report(&mut Progress);
        summarise(&model, &c, out)
    }
}

fn summarise(model: &ElectionModel, checker: &impl Checker<ElectionModel>, out: &Path) -> Result<Summary, String> {
    let mut outcomes = Vec::new();
    for p in model.properties() {
        let always = matches!(p.expectation, Expectation::Always);
        let mut o = Outcome { property: p.name, always, found: None, file: None, file_error: None };
        if let Some(path) = checker.discovery(p.name) {
            if always {
                let path = cut_at_violation(model, &path, p.name);
                o.found = Some(format_path(model, &path));
                let name = format!("check-{}", slug(p.name));
                let text = adapt(&counterexample_to_scenario(model, &name, &path));
                std::fs::create_dir_all(out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
                let file = out.join(format!("{name}.toml"));
                std::fs::write(&file, &text).map_err(|e| format!("{}: cannot write: {e}", file.display()))?;
                o.file_error =
                    neli_sim::Scenario::parse(&text, &file.display().to_string()).err().map(|e| e.to_string());
                o.file = Some(file);
            } else {
                o.found = Some(format_path(model, &path));
            }
        }
        outcomes.push(o);
    }
    Ok(Summary {
        states: checker.state_count(),
        unique: checker.unique_state_count(),
        depth: checker.max_depth(),
        outcomes,
    })
}
