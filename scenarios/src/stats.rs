//! Percentiles and the per-scenario summary of many seeds.

use neli_sim::RunReport;

/// Nearest-rank percentile `p` (0..=100) of `v`; 0 for an empty slice.
pub fn percentile(v: &[u64], p: u32) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let rank = (u64::from(p) * s.len() as u64).div_ceil(100).max(1) as usize;
    s[rank.min(s.len()) - 1]
}

/// What one seed left for the summary (the trace is dropped early).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeedResult {
    pub seed: u64,
    pub violations: Vec<String>,
    pub overlap_total_ms: u64,
    pub gap_max_ms: u64,
    pub failover_max_ms: Option<u64>,
    pub leader_at_end: bool,
    pub simulated_ms: u64,
    /// Leases of role 0 ended with no fault on their member
    /// (docs/cooperative-rebalance.md, "What the harness checks").
    #[serde(default)]
    pub interruptions: u64,
    /// Times role 0 changed hands.
    #[serde(default)]
    pub leader_changes: u64,
    /// The layers of the lease whose setting made a difference in the run
    /// (`RunReport::acted`): what `explore --ablate` decides reuse by.
    #[serde(skip)]
    pub acted: std::collections::BTreeSet<neli_sim::scenario::Layer>,
    /// An ablated seed not run again but taken from the scenario's own run
    /// of the seed, where the ablated layer never acted: switched off, it
    /// would have changed nothing ([`SeedResult::reusable_without`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
}

impl SeedResult {
    pub fn of(r: &RunReport, simulated_ms: u64) -> SeedResult {
        SeedResult {
            seed: r.seed,
            violations: r.violations.iter().map(ToString::to_string).collect(),
            overlap_total_ms: r.figures.overlap_total_ms,
            gap_max_ms: r.figures.gap_max_ms,
            failover_max_ms: (!r.figures.failovers_ms.is_empty()).then(|| r.figures.failover_max_ms()),
            leader_at_end: r.figures.leader_at_end,
            simulated_ms,
            interruptions: r.figures.interruptions,
            leader_changes: r.figures.leader_changes,
            acted: r.acted.clone(),
            reused: false,
        }
    }

    /// This seed's result as the run with `layer` off would give it, when
    /// that run would be the same, byte for byte: the layer is one that
    /// only changes a run when it acts (the client's session expiry, the
    /// coordinator's generation check; not the membership proof, whose
    /// commits are part of every run), and it never acted in this one.
    /// Pinned by `scenarios/tests/it/ablation.rs`.
    pub fn reusable_without(&self, layer: neli_sim::scenario::Layer) -> Option<SeedResult> {
        use neli_sim::scenario::Layer;
        let acts_only_when_needed = matches!(layer, Layer::ClientSessionExpiry | Layer::CommitGenerationCheck);
        (acts_only_when_needed && !self.acted.contains(&layer)).then(|| SeedResult { reused: true, ..self.clone() })
    }
}

/// `p50/p99/max` of a column.
pub fn triple(v: &[u64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    format!("{}/{}/{}", percentile(v, 50), percentile(v, 99), percentile(v, 100))
}

/// One row of the explore summary table.
pub fn row(name: &str, rs: &[SeedResult]) -> [String; 6] {
    let overlap: Vec<u64> = rs.iter().map(|r| r.overlap_total_ms).collect();
    let gap: Vec<u64> = rs.iter().map(|r| r.gap_max_ms).collect();
    let fo: Vec<u64> = rs.iter().filter_map(|r| r.failover_max_ms).collect();
    let bad = rs.iter().filter(|r| !r.violations.is_empty()).count();
    [name.to_owned(), rs.len().to_string(), bad.to_string(), triple(&overlap), triple(&gap), triple(&fo)]
}

/// Left-aligned columns separated by two spaces.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        let s: Vec<String> = cells.iter().enumerate().map(|(i, c)| format!("{c:<width$}", width = w[i])).collect();
        out.push_str(s.join("  ").trim_end());
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    for r in rows {
        line(r.iter().map(String::as_str).collect(), &mut out);
    }
    out
}
