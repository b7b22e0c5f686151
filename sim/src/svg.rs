//! Hand-written SVG: the leadership timeline of one run (`run --timeline`)
//! and the overlap-against-gap chart of a sweep (`tune`).
//!
//! The timeline is drawn from the run's typed history (`neli_sim::history`),
//! never from its trace text: a member leads a role from its `Acquired`
//! until `Revoked`/`Fenced`, its process stopping, or the end of the run;
//! fault bands are the faults as the simulator played them
//! (`RunReport::faults`, with `leader` resolved). Events are what the
//! application saw; the oracles judge unexpired leases (the history's
//! `Held` entries), which can end well before the member is told: each bar
//! is solid where the lease held and pale after it ended.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::history::{Entry, History, Hold};
use crate::scenario::FaultKind;
use crate::{PlayedFault, Rule, RunReport, Violation};

/// A leadership bar: slot row, role, start, end (ms), incarnation, token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lead {
    pub row: usize,
    pub role: u32,
    pub start: u64,
    pub end: u64,
    pub who: String,
    pub token: u64,
}

/// A fault band: rows hit (empty = everything), start, end, label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Band {
    pub kind: FaultKind,
    pub rows: Vec<usize>,
    pub start: u64,
    pub end: u64,
    pub label: String,
}

fn row_of(host: &str) -> Option<usize> {
    host.strip_prefix('m')?.split('.').next()?.parse().ok()
}

/// Fault bands of the faults a run played: the member rows each hit
/// (none: the fault is drawn across every row).
pub fn bands(faults: &[PlayedFault]) -> Vec<Band> {
    faults
        .iter()
        .map(|f| Band {
            kind: f.kind,
            rows: f.hosts.iter().filter_map(|h| row_of(h)).collect(),
            start: f.start,
            end: f.end,
            label: f.label.clone(),
        })
        .collect()
}

/// Leadership bars from a run's typed history: a member leads a role from
/// its `Acquired` until its `Revoked` or `Fenced` of that role, its process
/// stopping (a crash, its application finishing) or the end of the run.
pub fn leads(h: &History) -> Vec<Lead> {
    let mut slot: BTreeMap<&str, usize> = BTreeMap::new();
    // (incarnation, role) -> (start, token) of the bars still open.
    let mut open: BTreeMap<(&str, u32), (u64, u64)> = BTreeMap::new();
    let mut leads = Vec::new();
    let mut close = |open: &mut BTreeMap<(&str, u32), (u64, u64)>, who: &str, role: Option<u32>, at: u64| {
        let keys: Vec<(&str, u32)> =
            open.keys().filter(|(w, r)| *w == who && role.is_none_or(|x| x == *r)).copied().collect();
        for k in keys {
            let (start, token) = open.remove(&k).expect("a key just listed");
            leads.push((k.0.to_owned(), k.1, start, at, token));
        }
    };
    for e in &h.entries {
        match e {
            Entry::Started(p) => {
                slot.insert(&p.member, p.slot);
            }
            Entry::Acquired(t) => {
                open.insert((&t.member, t.role), (t.at, t.token.unwrap_or(0)));
            }
            Entry::Revoked(t) | Entry::Fenced(t) => close(&mut open, &t.member, Some(t.role), t.at),
            Entry::Stopped(p) => close(&mut open, &p.member, None, p.at),
            _ => {}
        }
    }
    let rest: Vec<&str> = open.keys().map(|(w, _)| *w).collect();
    for w in rest {
        close(&mut open, w, None, h.end);
    }
    let mut out: Vec<Lead> = leads
        .into_iter()
        .filter_map(|(who, role, start, end, token)| {
            let row = *slot.get(who.as_str())?;
            Some(Lead { row, role, start, end, who, token })
        })
        .collect();
    out.sort_by_key(|l| (l.row, l.start, l.role));
    out
}

const PALETTE: [&str; 6] = ["#2b6cb0", "#2f855a", "#b7791f", "#6b46c1", "#c05621", "#2c7a7b"];

/// `s` escaped for SVG text and attribute values (the HTML page's escaper:
/// the SVG is inlined there).
fn esc(s: &str) -> String {
    crate::html::escape(s)
}

fn tick_step(span_ms: u64) -> u64 {
    [1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000]
        .into_iter()
        .find(|s| span_ms / s <= 12)
        .unwrap_or(600_000)
}

/// Overlaps the oracle reported (each [`Rule::Overlap`] violation names its
/// holders, start and length): rows, start, end.
pub fn overlaps(violations: &[Violation]) -> Vec<(Vec<usize>, u64, u64)> {
    violations
        .iter()
        .filter(|v| v.rule == Rule::Overlap)
        .filter_map(|v| {
            let start = v.at?;
            let rows = v.members.iter().filter_map(|m| row_of(m)).collect();
            Some((rows, start, start + v.lasted_ms.unwrap_or(0)))
        })
        .collect()
}

/// The timeline picture of `r` for a run of `end` ms with `members` rows.
pub fn timeline(r: &RunReport, members: u32, end: u64) -> String {
    let (leads, bands) = (leads(&r.history), bands(&r.faults));
    let f = Frame { left: 70.0, top: 60.0, width: 900.0, row_h: 36.0, rows: members.max(1) as usize, end };
    let height = f.y1() + 50.0 + 14.0 * bands.len().min(6) as f64;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="sans-serif" font-size="12">"#,
        w = f.left + f.width + 30.0
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let verdict = if r.passed() { "PASS" } else { "FAIL" };
    let fig = &r.figures;
    let _ = writeln!(
        o,
        r#"<text x="{}" y="22" font-size="15" font-weight="bold">{} seed {} — {verdict}</text>"#,
        f.left,
        esc(&r.scenario),
        r.seed
    );
    let _ = writeln!(
        o,
        r#"<text x="{}" y="42">overlap {} ms (max {} ms) · longest gap {} ms · failover max {} ms · acquisitions {}</text>"#,
        f.left,
        fig.overlap_total_ms,
        fig.overlap_max_ms,
        fig.gap_max_ms,
        fig.failover_max_ms(),
        fig.acquisitions
    );
    f.grid(&mut o);
    f.bands(&mut o, &bands);
    let holds: Vec<&Hold> = r.history.holds().collect();
    f.leads(&mut o, &leads, &holds);
    f.overlaps(&mut o, &r.violations);
    f.legend(&mut o, &bands);
    o.push_str("</svg>\n");
    o
}

/// The timeline's geometry: rows of members under a time axis of `end` ms.
struct Frame {
    left: f64,
    top: f64,
    width: f64,
    row_h: f64,
    rows: usize,
    end: u64,
}

impl Frame {
    fn x(&self, ms: u64) -> f64 {
        self.left + self.width * ms as f64 / self.end.max(1) as f64
    }

    fn row_y(&self, row: usize) -> f64 {
        self.top + self.row_h * row as f64
    }

    fn y1(&self) -> f64 {
        self.row_y(self.rows)
    }

    /// Rows and time grid.
    fn grid(&self, o: &mut String) {
        let (left, width, row_h) = (self.left, self.width, self.row_h);
        for i in 0..self.rows {
            let y = self.row_y(i);
            let fill = if i % 2 == 0 { "#f7fafc" } else { "#edf2f7" };
            let _ = writeln!(
                o,
                r#"<rect x="{left}" y="{y}" width="{width}" height="{row_h}" fill="{fill}"/><text x="{}" y="{}" text-anchor="end">m{i}</text>"#,
                left - 8.0,
                y + row_h / 2.0 + 4.0
            );
        }
        let (y0, y1) = (self.top, self.y1());
        let step = tick_step(self.end);
        let mut t = 0;
        while t <= self.end {
            let _ = writeln!(
                o,
                r##"<line x1="{xx}" y1="{y0}" x2="{xx}" y2="{y1}" stroke="#cbd5e0" stroke-width="0.5"/><text x="{xx}" y="{}" text-anchor="middle">{}s</text>"##,
                y1 + 14.0,
                t / 1000,
                xx = self.x(t)
            );
            t += step;
        }
    }

    /// Fault bands under the bars.
    fn bands(&self, o: &mut String, bands: &[Band]) {
        let (y0, y1, row_h) = (self.top, self.y1(), self.row_h);
        for b in bands {
            let w = (self.x(b.end) - self.x(b.start)).max(2.0);
            let title = format!("<title>{} at {}</title>", esc(&b.label), crate::oracle::secs(b.start));
            if b.rows.is_empty() {
                let _ = writeln!(
                    o,
                    r##"<rect x="{}" y="{y0}" width="{w}" height="{}" fill="#e53e3e" fill-opacity="0.12" stroke="#e53e3e" stroke-dasharray="3,2">{title}</rect>"##,
                    self.x(b.start),
                    y1 - y0
                );
            }
            for row in b.rows.iter().filter(|r| **r < self.rows) {
                let _ = writeln!(
                    o,
                    r##"<rect x="{}" y="{}" width="{w}" height="{row_h}" fill="#e53e3e" fill-opacity="0.25">{title}</rect>"##,
                    self.x(b.start),
                    self.row_y(*row)
                );
            }
        }
    }

    /// Leadership bars: one lane per role inside the member's row.
    /// A bar per term from `Acquired` to `Revoked`/`Fenced` (what the
    /// member was told), solid where its lease really held on the global
    /// clock (`RunReport::leases`, what the oracles judge) and pale where it
    /// had already ended: a paused member is told only on resume, so its
    /// pale tail never overlaps its successor's solid bar. A lease of role 0
    /// that ended with no fault on its member (an interruption) is marked ▼.
    fn leads(&self, o: &mut String, leads: &[Lead], spans: &[&Hold]) {
        let roles = leads.iter().map(|l| l.role).max().map_or(1, |m| m + 1) as f64;
        let x = |ms| self.x(ms);
        let lane = (self.row_h - 12.0) / roles;
        for l in leads.iter().filter(|l| l.row < self.rows) {
            let y = self.row_y(l.row) + 6.0 + lane * f64::from(l.role);
            let colour = PALETTE[l.role as usize % PALETTE.len()];
            let _ = writeln!(
                o,
                r#"<rect x="{}" y="{y}" width="{}" height="{}" fill="{colour}" fill-opacity="0.3" rx="2"><title>{} told it leads role {} (token {}) {} – {}; pale: its lease had ended</title></rect>"#,
                x(l.start),
                (x(l.end) - x(l.start)).max(1.5),
                (lane - 1.0).max(2.0),
                esc(&l.who),
                l.role,
                l.token,
                crate::oracle::secs(l.start),
                crate::oracle::secs(l.end)
            );
            let held = spans.iter().filter(|s| s.member == l.who && s.role == l.role);
            for s in held.filter(|s| s.at < l.end && s.until > l.start) {
                let (a, b) = (s.at.max(l.start), s.until.min(l.end));
                let _ = writeln!(
                    o,
                    r#"<rect x="{}" y="{y}" width="{}" height="{}" fill="{colour}" rx="2"><title>{}'s lease of role {} (token {}) held {} – {}</title></rect>"#,
                    x(a),
                    (x(b) - x(a)).max(1.5),
                    (lane - 1.0).max(2.0),
                    esc(&l.who),
                    l.role,
                    l.token,
                    crate::oracle::secs(s.at),
                    crate::oracle::secs(s.until)
                );
            }
        }
        for s in spans.iter().filter(|s| s.interrupted && s.slot < self.rows) {
            let y = self.row_y(s.slot) + 4.0;
            let _ = writeln!(
                o,
                r##"<text x="{}" y="{y}" text-anchor="middle" fill="#9b2c2c">▼<title>interruption: {}'s lease ended at {} with no fault on it</title></text>"##,
                x(s.until),
                esc(&s.member),
                crate::oracle::secs(s.until)
            );
        }
    }

    /// Overlaps on top of everything, so a failure is seen at once.
    fn overlaps(&self, o: &mut String, violations: &[Violation]) {
        let row_h = self.row_h;
        for (rs, start, stop) in overlaps(violations) {
            for row in rs.iter().filter(|r| **r < self.rows) {
                let _ = writeln!(
                    o,
                    r##"<rect x="{}" y="{}" width="{}" height="{row_h}" fill="none" stroke="#9b2c2c" stroke-width="2.5"><title>overlap {} – {}</title></rect>"##,
                    self.x(start),
                    self.row_y(*row),
                    (self.x(stop) - self.x(start)).max(3.0),
                    crate::oracle::secs(start),
                    crate::oracle::secs(stop)
                );
            }
        }
    }

    /// Fault labels below the axis, and the legend.
    fn legend(&self, o: &mut String, bands: &[Band]) {
        let (left, y1) = (self.left, self.y1());
        let mut ly = y1 + 34.0;
        for b in bands.iter().take(6) {
            let _ = writeln!(
                o,
                r##"<text x="{left}" y="{ly}" fill="#c53030">▮ {} {}</text>"##,
                crate::oracle::secs(b.start),
                esc(&b.label)
            );
            ly += 14.0;
        }
        let _ = writeln!(
            o,
            r##"<text x="{}" y="{}" text-anchor="end"><tspan fill="{}">▮</tspan> leads (solid: lease held; pale: told it leads after its lease ended)  <tspan fill="#9b2c2c">▼</tspan> interruption  <tspan fill="#e53e3e">▮</tspan> fault  <tspan fill="#9b2c2c">□</tspan> overlap</text>"##,
            left + self.width,
            y1 + 34.0,
            PALETTE[0]
        );
    }
}

/// One configuration's point in the tune chart.
#[derive(Debug, Clone)]
pub struct Point {
    pub label: String,
    /// Median of the runs' longest gaps; the whisker reaches the p99.
    pub gap_ms: u64,
    pub gap_p99_ms: u64,
    pub overlap_ms: u64,
    pub safe: bool,
    /// Accepted by neli's config validation.
    pub valid: bool,
    pub recommended: bool,
}

fn colour(p: &Point) -> (&'static str, f64) {
    match (p.recommended, p.safe, p.valid) {
        (true, _, _) => ("#2f855a", 7.0),
        (false, true, true) => ("#68d391", 5.0),
        (false, _, false) => ("#a0aec0", 5.0),
        (false, false, true) => ("#e53e3e", 5.0),
    }
}

/// Round axis ticks for values up to `max`: a step of 1, 2 or 5 times a
/// power of ten giving at most `most` intervals, and the axis end (the
/// first tick at or above `max`). Zero is always the first tick.
pub fn ticks(max: u64, most: u64) -> (u64, u64) {
    let max = max.max(1);
    let mut pow = 1u64;
    while let Some(next) = pow.checked_mul(10) {
        for m in [1, 2, 5] {
            let step = m * pow;
            if max.div_ceil(step) <= most.max(1) {
                return (step, (max.div_ceil(step)).saturating_mul(step));
            }
        }
        pow = next;
    }
    (pow, max)
}

/// The sweep as a dot-and-whisker chart, one row per configuration: the
/// dot is the median over seeds of each run's longest leaderless gap, the
/// whisker reaches its p99 (with a cap, so it shows even when short), the
/// x axis starts at zero with round ticks, and the worst overlap is written
/// beside each row (red when any), since overlap is the verdict, not a
/// position.
pub fn chart(title: &str, points: &[Point]) -> String {
    let (left, top, w, row) = (200.0, 70.0, 560.0, 26.0);
    let h = row * points.len().max(1) as f64;
    let max = points.iter().map(|p| p.gap_ms.max(p.gap_p99_ms)).max().unwrap_or(0);
    let (step, end) = ticks(max, 8);
    let x = |v: u64| left + w * v as f64 / end as f64;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">"#,
        left + w + 300.0,
        top + h + 110.0
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(o, r#"<text x="20" y="25" font-size="15" font-weight="bold">{}</text>"#, esc(title));
    let _ = writeln!(
        o,
        r##"<text x="20" y="45" fill="#4a5568">dot: median over seeds of each run's longest leaderless gap; whisker: to its p99. Right: worst overlap of any seed.</text>"##
    );
    // Grid and ticks: every `step` ms from zero.
    for v in (0..=end / step).map(|k| k * step) {
        let gx = x(v);
        let _ = writeln!(
            o,
            r##"<line x1="{gx}" y1="{top}" x2="{gx}" y2="{}" stroke="{}" stroke-width="1"/><text x="{gx}" y="{}" text-anchor="middle">{v}</text>"##,
            top + h,
            if v == 0 { "black" } else { "#e2e8f0" },
            top + h + 16.0
        );
    }
    let _ = writeln!(
        o,
        r#"<line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="black"/><text x="{}" y="{}" text-anchor="middle">longest leaderless gap per run (ms)</text>"#,
        top + h,
        left + w,
        top + h,
        left + w / 2.0,
        top + h + 36.0
    );
    for (i, p) in points.iter().enumerate() {
        chart_row(&mut o, p, top + row * (i as f64 + 0.5), left, left + w, &x);
    }
    chart_legend(&mut o, left, top + h + 62.0);
    o.push_str("</svg>\n");
    o
}

/// One configuration's row of the chart at height `cy`: its label left of
/// `left`, the dot and whisker on the `x` scale, the overlap verdict right
/// of `right`.
fn chart_row(o: &mut String, p: &Point, cy: f64, left: f64, right: f64, x: &dyn Fn(u64) -> f64) {
    let (fill, r) = colour(p);
    let (x50, x99) = (x(p.gap_ms), x(p.gap_p99_ms.max(p.gap_ms)));
    let mark = if p.recommended { " (recommended)" } else { "" };
    let _ = writeln!(
        o,
        r##"<text x="{}" y="{}" text-anchor="end"{}>{}{mark}</text>"##,
        left - 10.0,
        cy + 4.0,
        if p.recommended { r#" font-weight="bold""# } else { "" },
        esc(&p.label)
    );
    let _ = writeln!(
        o,
        r##"<line x1="{x50}" y1="{cy}" x2="{x99}" y2="{cy}" stroke="{fill}" stroke-width="2"/><line x1="{x99}" y1="{}" x2="{x99}" y2="{}" stroke="{fill}" stroke-width="2"/><circle cx="{x50}" cy="{cy}" r="{r}" fill="{fill}" stroke="black" stroke-width="0.5"><title>{}: gap p50 {} ms, p99 {} ms, overlap {} ms</title></circle>"##,
        cy - 5.0,
        cy + 5.0,
        esc(&p.label),
        p.gap_ms,
        p.gap_p99_ms,
        p.overlap_ms,
    );
    let verdict = match (p.valid, p.overlap_ms) {
        (false, 0) => ("#718096", "no overlap; refused by validation".to_owned()),
        (false, ms) => ("#718096", format!("overlap {ms} ms; refused by validation")),
        (true, 0) => ("#276749", "no overlap".to_owned()),
        (true, ms) => ("#c53030", format!("OVERLAP {ms} ms")),
    };
    let _ = writeln!(o, r#"<text x="{}" y="{}" fill="{}">{}</text>"#, right + 15.0, cy + 4.0, verdict.0, verdict.1);
}

/// The chart's legend at height `ly`, from `left`.
fn chart_legend(o: &mut String, left: f64, ly: f64) {
    for (i, (fill, text)) in [
        ("#2f855a", "recommended"),
        ("#68d391", "safe"),
        ("#e53e3e", "overlaps"),
        ("#a0aec0", "rejected by validation"),
    ]
    .iter()
    .enumerate()
    {
        let lx = left + 150.0 * i as f64;
        let _ = writeln!(
            o,
            r#"<circle cx="{lx}" cy="{ly}" r="5" fill="{fill}"/><text x="{}" y="{}">{text}</text>"#,
            lx + 10.0,
            ly + 4.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Ticks are round (1, 2 or 5 times a power of ten), start at zero and
    // end at or past the largest value.
    #[test]
    fn ticks_are_round_and_cover_the_data() {
        assert_eq!(ticks(10_505, 8), (2000, 12_000));
        assert_eq!(ticks(880, 8), (200, 1000));
        assert_eq!(ticks(8000, 8), (1000, 8000));
        assert_eq!(ticks(0, 8), (1, 1));
        assert!(ticks(u64::MAX, 8).1 >= u64::MAX / 2);
    }

    // Every configuration gets its row, its whisker cap and its overlap
    // verdict; the axis starts at a 0 tick.
    #[test]
    fn chart_has_a_row_per_configuration_with_whisker_and_verdict() {
        let p = |label: &str, gap, p99, overlap, valid| Point {
            label: label.into(),
            gap_ms: gap,
            gap_p99_ms: p99,
            overlap_ms: overlap,
            safe: overlap == 0,
            valid,
            recommended: false,
        };
        let svg = chart("t", &[p("T=1s S=3s", 2900, 10_100, 0, true), p("T=4s S=3s", 1900, 8300, 880, false)]);
        assert!(svg.contains(">0</text>") && svg.contains(">12000</text>"), "{svg}");
        assert!(svg.contains(">T=1s S=3s</text>") && svg.contains(">no overlap</text>"), "{svg}");
        assert!(svg.contains(">overlap 880 ms; refused by validation</text>"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 2 + 4, "two rows and four legend dots");
    }
}
