//! Hand-written SVG: the leadership timeline of one run (`run --timeline`)
//! and the overlap-against-gap chart of a sweep (`tune`).
//!
//! The timeline is derived from the run's trace: a member leads a role from
//! its `Acquired` event until `Revoked`/`Fenced`, its crash or close, or the
//! end of the run; fault bands come from the `sim` lines (`pause m1 for
//! 5s`). Events are what the application saw; the oracles judge unexpired
//! leases, which can end a little earlier than the `Revoked` event.

use std::collections::BTreeMap;
use std::fmt::Write;

use neli_sim::RunReport;

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
    pub rows: Vec<usize>,
    pub start: u64,
    pub end: u64,
    pub label: String,
}

fn parse_at(t: &str) -> Option<u64> {
    let t = t.strip_suffix('s')?;
    let (s, ms) = t.split_once('.')?;
    Some(s.trim().parse::<u64>().ok()? * 1000 + ms.parse::<u64>().ok()?)
}

fn row_of(host: &str) -> Option<usize> {
    host.strip_prefix('m')?.split('.').next()?.parse().ok()
}

fn field(text: &str, key: &str) -> Option<u64> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|v| v.parse().ok())
}

fn dur_ms(text: &str) -> Option<u64> {
    neli_sim::scenario::Dur::parse(text).ok().map(|d| d.ms())
}

/// Leadership bars and fault bands from a trace ending at `end` ms.
pub fn parse_trace(trace: &[String], end: u64) -> (Vec<Lead>, Vec<Band>) {
    let mut open: BTreeMap<(String, u32), (u64, u64)> = BTreeMap::new();
    let mut leads = Vec::new();
    let mut bands = Vec::new();
    let close = |open: &mut BTreeMap<(String, u32), (u64, u64)>,
                 leads: &mut Vec<Lead>,
                 who: &str,
                 role: Option<u32>,
                 at: u64| {
        let keys: Vec<(String, u32)> = open
            .keys()
            .filter(|(w, r)| w == who && role.is_none_or(|x| x == *r))
            .cloned()
            .collect();
        for k in keys {
            if let (Some((start, token)), Some(row)) = (open.remove(&k), row_of(&k.0)) {
                leads.push(Lead {
                    row,
                    role: k.1,
                    start,
                    end: at,
                    who: k.0,
                    token,
                });
            }
        }
    };
    for line in trace {
        let mut parts = line.trim_start().splitn(3, ' ');
        let (Some(at), Some(host), Some(text)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Some(at) = parse_at(at) else { continue };
        if host == "sim" {
            let words: Vec<&str> = text.split_whitespace().collect();
            let kind = words.first().copied().unwrap_or("");
            if kind == "resume" || kind == "restart" {
                continue;
            }
            let rows: Vec<usize> = words.iter().skip(1).filter_map(|w| row_of(w)).collect();
            let length = words
                .iter()
                .position(|w| *w == "for")
                .and_then(|i| words.get(i + 1))
                .and_then(|d| dur_ms(d))
                .unwrap_or(0);
            if kind == "crash" {
                for w in words.iter().skip(1) {
                    let incarnations: Vec<String> = open
                        .keys()
                        .filter(|(h, _)| row_of(h) == row_of(w) && row_of(w).is_some())
                        .map(|(h, _)| h.clone())
                        .collect();
                    for h in incarnations {
                        close(&mut open, &mut leads, &h, None, at);
                    }
                }
            }
            bands.push(Band {
                rows,
                start: at,
                end: (at + length).min(end),
                label: text.to_owned(),
            });
            continue;
        }
        if text.starts_with("Acquired") {
            let role = field(text, "role=").unwrap_or(0) as u32;
            let token = field(text, "token=").unwrap_or(0);
            open.insert((host.to_owned(), role), (at, token));
        } else if text.starts_with("Revoked") || text.starts_with("Fenced") {
            let role = field(text, "role=").map(|r| r as u32);
            close(&mut open, &mut leads, host, role, at);
        } else if text.starts_with("closed") {
            close(&mut open, &mut leads, host, None, at);
        }
    }
    let rest: Vec<String> = open.keys().map(|(h, _)| h.clone()).collect();
    for h in rest {
        close(&mut open, &mut leads, &h, None, end);
    }
    leads.sort_by_key(|l| (l.row, l.start, l.role));
    (leads, bands)
}

const PALETTE: [&str; 6] = [
    "#2b6cb0", "#2f855a", "#b7791f", "#6b46c1", "#c05621", "#2c7a7b",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn tick_step(span_ms: u64) -> u64 {
    [
        1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000,
    ]
    .into_iter()
    .find(|s| span_ms / s <= 12)
    .unwrap_or(600_000)
}

/// The timeline picture of `r` for a run of `end` ms with `members` rows.
pub fn timeline(r: &RunReport, members: u32, end: u64) -> String {
    let (leads, bands) = parse_trace(&r.trace, end);
    let rows = members.max(1) as usize;
    let (left, top, width, row_h) = (70.0, 60.0, 900.0, 36.0);
    let height = top + row_h * rows as f64 + 50.0 + 14.0 * bands.len().min(6) as f64;
    let x = |ms: u64| left + width * ms as f64 / end.max(1) as f64;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="sans-serif" font-size="12">"#,
        w = left + width + 30.0
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let verdict = if r.passed() { "PASS" } else { "FAIL" };
    let f = &r.figures;
    let _ = writeln!(
        o,
        r#"<text x="{left}" y="22" font-size="15" font-weight="bold">{} seed {} — {verdict}</text>"#,
        esc(&r.scenario),
        r.seed
    );
    let _ = writeln!(
        o,
        r#"<text x="{left}" y="42">overlap {} ms (max {} ms) · longest gap {} ms · failover max {} ms · acquisitions {}</text>"#,
        f.overlap_total_ms,
        f.overlap_max_ms,
        f.gap_max_ms,
        f.failover_max_ms(),
        f.acquisitions
    );
    let y0 = top;
    let y1 = top + row_h * rows as f64;
    // Rows and time grid.
    for i in 0..rows {
        let y = top + row_h * i as f64;
        let fill = if i % 2 == 0 { "#f7fafc" } else { "#edf2f7" };
        let _ = writeln!(
            o,
            r#"<rect x="{left}" y="{y}" width="{width}" height="{row_h}" fill="{fill}"/><text x="{}" y="{}" text-anchor="end">m{i}</text>"#,
            left - 8.0,
            y + row_h / 2.0 + 4.0
        );
    }
    let step = tick_step(end);
    let mut t = 0;
    while t <= end {
        let _ = writeln!(
            o,
            r##"<line x1="{xx}" y1="{y0}" x2="{xx}" y2="{y1}" stroke="#cbd5e0" stroke-width="0.5"/><text x="{xx}" y="{}" text-anchor="middle">{}s</text>"##,
            y1 + 14.0,
            t / 1000,
            xx = x(t)
        );
        t += step;
    }
    // Fault bands under the bars.
    for b in &bands {
        let w = (x(b.end) - x(b.start)).max(2.0);
        let title = format!(
            "<title>{} at {}</title>",
            esc(&b.label),
            crate::secs(b.start)
        );
        if b.rows.is_empty() {
            let _ = writeln!(
                o,
                r##"<rect x="{}" y="{y0}" width="{w}" height="{}" fill="#e53e3e" fill-opacity="0.12" stroke="#e53e3e" stroke-dasharray="3,2">{title}</rect>"##,
                x(b.start),
                y1 - y0
            );
        }
        for row in &b.rows {
            if *row < rows {
                let _ = writeln!(
                    o,
                    r##"<rect x="{}" y="{}" width="{w}" height="{row_h}" fill="#e53e3e" fill-opacity="0.25">{title}</rect>"##,
                    x(b.start),
                    top + row_h * *row as f64
                );
            }
        }
    }
    // Leadership bars: one lane per role inside the member's row.
    let roles = leads.iter().map(|l| l.role).max().map_or(1, |m| m + 1) as f64;
    for l in leads.iter().filter(|l| l.row < rows) {
        let lane = (row_h - 12.0) / roles;
        let y = top + row_h * l.row as f64 + 6.0 + lane * f64::from(l.role);
        // While its member is paused a leader's lease runs out on its own
        // clock, but the Revoked event only comes after it resumes: that
        // part is drawn pale.
        let paused = bands
            .iter()
            .filter(|b| b.label.starts_with("pause") && b.rows.contains(&l.row))
            .filter(|b| b.start > l.start && b.start < l.end)
            .map(|b| b.start)
            .min();
        let solid_end = paused.unwrap_or(l.end);
        if let Some(p) = paused {
            let _ = writeln!(
                o,
                r#"<rect x="{}" y="{y}" width="{}" height="{}" fill="{}" fill-opacity="0.3" rx="2"><title>{} paused while leading: its lease expires on its own clock; Revoked at {}</title></rect>"#,
                x(p),
                (x(l.end) - x(p)).max(1.5),
                (lane - 1.0).max(2.0),
                PALETTE[l.role as usize % PALETTE.len()],
                esc(&l.who),
                crate::secs(l.end)
            );
        }
        let l = &Lead {
            end: solid_end,
            ..l.clone()
        };
        let _ = writeln!(
            o,
            r#"<rect x="{}" y="{y}" width="{}" height="{}" fill="{}" rx="2"><title>{} leads role {} (token {}) {} – {}</title></rect>"#,
            x(l.start),
            (x(l.end) - x(l.start)).max(1.5),
            (lane - 1.0).max(2.0),
            PALETTE[l.role as usize % PALETTE.len()],
            esc(&l.who),
            l.role,
            l.token,
            crate::secs(l.start),
            crate::secs(l.end)
        );
    }
    // Fault labels below the axis, and the legend.
    let mut ly = y1 + 34.0;
    for b in bands.iter().take(6) {
        let _ = writeln!(
            o,
            r##"<text x="{left}" y="{ly}" fill="#c53030">▮ {} {}</text>"##,
            crate::secs(b.start),
            esc(&b.label)
        );
        ly += 14.0;
    }
    let _ = writeln!(
        o,
        r##"<text x="{}" y="{}" text-anchor="end"><tspan fill="{}">▮</tspan> leads (Acquired → Revoked/Fenced/end; pale: paused)  <tspan fill="#e53e3e">▮</tspan> fault</text>"##,
        left + width,
        y1 + 34.0,
        PALETTE[0]
    );
    o.push_str("</svg>\n");
    o
}

/// One configuration's point in the tune chart.
#[derive(Debug, Clone)]
pub struct Point {
    pub label: String,
    pub gap_ms: u64,
    pub overlap_ms: u64,
    pub safe: bool,
    pub recommended: bool,
}

/// Overlap (y) against leaderless gap (x), one point per configuration.
pub fn chart(title: &str, points: &[Point]) -> String {
    let (left, top, w, h) = (80.0, 50.0, 760.0, 420.0);
    let max_gap = points.iter().map(|p| p.gap_ms).max().unwrap_or(1).max(1) as f64 * 1.1;
    let max_ov = points
        .iter()
        .map(|p| p.overlap_ms)
        .max()
        .unwrap_or(0)
        .max(1) as f64
        * 1.15;
    let x = |v: u64| left + w * v as f64 / max_gap;
    let y = |v: u64| top + h - h * v as f64 / max_ov;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">"#,
        left + w + 220.0,
        top + h + 70.0
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{left}" y="25" font-size="15" font-weight="bold">{}</text>"#,
        esc(title)
    );
    // The safe band: zero overlap.
    let _ = writeln!(
        o,
        r##"<rect x="{left}" y="{}" width="{w}" height="8" fill="#c6f6d5"/><text x="{}" y="{}" fill="#276749">safe: no overlap</text>"##,
        y(0) - 4.0,
        left + w - 110.0,
        y(0) - 8.0
    );
    let _ = writeln!(
        o,
        r##"<line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="black"/>"##,
        top + h,
        left + w,
        top + h,
        top + h
    );
    for i in 0..=5u64 {
        let gv = (max_gap / 1.1 * i as f64 / 5.0) as u64;
        let ov = (max_ov / 1.15 * i as f64 / 5.0) as u64;
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text><text x="{}" y="{}" text-anchor="end">{}</text>"#,
            x(gv),
            top + h + 16.0,
            gv,
            left - 6.0,
            y(ov) + 4.0,
            ov
        );
    }
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">longest leaderless gap, p99 over seeds (ms)</text>"#,
        left + w / 2.0,
        top + h + 36.0
    );
    let _ = writeln!(
        o,
        r#"<text transform="translate(20,{}) rotate(-90)" text-anchor="middle">overlap, worst seed (ms)</text>"#,
        top + h / 2.0
    );
    for (i, p) in points.iter().enumerate() {
        let (fill, r) = match (p.recommended, p.safe) {
            (true, _) => ("#2f855a", 7.0),
            (false, true) => ("#68d391", 5.0),
            (false, false) => ("#e53e3e", 5.0),
        };
        let _ = writeln!(
            o,
            r#"<circle cx="{}" cy="{}" r="{r}" fill="{fill}" stroke="black" stroke-width="0.5"><title>{}: gap {} ms, overlap {} ms</title></circle><text x="{}" y="{}" font-size="10">{}</text>"#,
            x(p.gap_ms),
            y(p.overlap_ms),
            esc(&p.label),
            p.gap_ms,
            p.overlap_ms,
            x(p.gap_ms) + 7.0,
            y(p.overlap_ms) - 4.0 - 11.0 * (i % 2) as f64,
            esc(&p.label)
        );
    }
    let lx = left + w + 20.0;
    for (i, (fill, text)) in [
        ("#2f855a", "recommended"),
        ("#68d391", "safe"),
        ("#e53e3e", "overlaps"),
    ]
    .iter()
    .enumerate()
    {
        let ly = top + 20.0 * i as f64;
        let _ = writeln!(
            o,
            r#"<circle cx="{lx}" cy="{ly}" r="5" fill="{fill}"/><text x="{}" y="{}">{text}</text>"#,
            lx + 10.0,
            ly + 4.0
        );
    }
    o.push_str("</svg>\n");
    o
}
