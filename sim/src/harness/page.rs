//! The harness report as one self-contained HTML page (no script, no
//! fetched resource: it opens from a CI artifact as it is): the summary,
//! then each failing seed with its violations, its reproduction, its
//! leadership timeline (inline SVG, both clocks: the run's global time on
//! the axis, each member's own clock in its history entries) and its
//! history. `neli-lab explore --artifacts` writes the same page
//! ([`crate::html`]).

use std::path::{Path, PathBuf};

use super::report::Report;
use crate::html::{Page, Section};

/// Writes `r` to each of `paths`, in the format its extension names
/// (`.json`, `.xml` JUnit, `.md`, `.html`, else text); a file that cannot
/// be written fails the report, naming it.
pub(super) fn write_reports(r: &mut Report, paths: &[PathBuf]) {
    for path in paths {
        let body = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => r.to_json(),
            Some("xml") => r.to_junit(),
            Some("md") => r.to_markdown(),
            Some("html") => page(r),
            _ => r.to_string(),
        };
        if let Err(e) = write(path, &body) {
            r.error.get_or_insert(format!("report {}: cannot write: {e}", path.display()));
        }
    }
}

fn write(path: &Path, body: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, body)
}

/// The page of `r`.
pub(super) fn page(r: &Report) -> String {
    let title = format!("harness {}: {}", r.scenario, r.verdict());
    let mut summary = vec![
        ("scenario".to_owned(), r.scenario.clone()),
        ("test".to_owned(), r.test.clone().unwrap_or_else(|| "-".into())),
        ("seeds".to_owned(), r.seeds_text()),
        ("failed".to_owned(), r.failures.len().to_string()),
        ("verdict".to_owned(), r.verdict().to_owned()),
    ];
    if !r.regressions.is_empty() {
        let failed = r.regressions.iter().filter(|k| !k.passed()).count();
        summary.push(("kept failures replayed".into(), format!("{} ({failed} failed)", r.regressions.len())));
    }
    if let Some(e) = &r.error {
        summary.push(("error".into(), e.clone()));
    }
    for w in &r.warnings {
        summary.push(("warning".into(), w.clone()));
    }
    let mut sections = Vec::new();
    for k in r.regressions.iter().filter(|k| !k.passed()) {
        sections.push(Section {
            id: format!("kept-{}", k.seed),
            title: format!("kept failure {} (seed {})", k.file.display(), k.seed),
            violations: k.violations.iter().map(ToString::to_string).collect(),
            reproduce: k.reproduce.clone(),
            timeline: None,
            history: None,
            extra: Vec::new(),
        });
    }
    for f in &r.failures {
        let mut extra = Vec::new();
        if let Some(s) = &f.shrunk {
            extra.push((
                format!(
                    "shrunk in {} runs: {} fault(s), {} ms, {} member(s), still {}",
                    s.runs, s.faults, s.duration_ms, s.members, s.class
                ),
                s.toml.clone(),
            ));
        }
        sections.push(Section {
            id: format!("seed-{}", f.seed),
            title: format!("seed {}", f.seed),
            violations: f.violations.iter().map(ToString::to_string).collect(),
            reproduce: f.reproduce.clone(),
            timeline: f.timeline.clone(),
            history: f.history.clone(),
            extra,
        });
    }
    Page { title, summary, sections }.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::escape;

    #[test]
    fn text_from_the_run_is_escaped() {
        let mut r = Report::empty("leader-pause", Some("a<b>&\"c\"".into()));
        r.seeds = vec![0];
        let page = page(&r);
        assert!(page.contains("a&lt;b&gt;&amp;&quot;c&quot;") && !page.contains("a<b>"), "{page}");
        assert_eq!(escape("<&>"), "&lt;&amp;&gt;");
    }
}
