//! One self-contained HTML page of a run's results (the harness's
//! `.html` report, `neli-lab explore --artifacts`' `index.html`): a
//! summary table, then one section per failing seed with its violations,
//! its reproduction line, its timeline (inline SVG from `svg::timeline`)
//! and its history (JSON Lines, one entry per row). No script and no
//! fetched resource, so it opens from a CI artifact as it is.

use std::fmt::Write;

/// A page: a title, the summary rows, the failing seeds.
pub struct Page {
    pub title: String,
    /// Label and value, in order.
    pub summary: Vec<(String, String)>,
    pub sections: Vec<Section>,
}

/// One failing seed (or kept failure).
pub struct Section {
    /// The anchor (`seed-17`), linked from the summary.
    pub id: String,
    pub title: String,
    pub violations: Vec<String>,
    pub reproduce: String,
    /// Inline SVG (trusted: drawn by `svg::timeline`).
    pub timeline: Option<String>,
    /// The history as JSON Lines.
    pub history: Option<String>,
    /// More labelled blocks of text (a shrunk scenario file).
    pub extra: Vec<(String, String)>,
}

/// `text` safe inside HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}\
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.2em .6em;text-align:left;vertical-align:top}\
pre{background:#f4f4f4;padding:.6em;overflow-x:auto}code{background:#f4f4f4}\
.fail{color:#a00}.pass{color:#070}section{border-top:2px solid #ddd;margin-top:2em}";

impl Page {
    /// The page as HTML.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1 id=\"title\">{}</h1>\n<table id=\"summary\">\n",
            escape(&self.title),
            escape(&self.title)
        );
        for (k, v) in &self.summary {
            let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
        }
        o.push_str("</table>\n");
        if !self.sections.is_empty() {
            o.push_str("<h2>Failing</h2><ul id=\"failing\">\n");
            for s in &self.sections {
                let first = s.violations.first().map(String::as_str).unwrap_or("");
                let _ =
                    writeln!(o, "<li><a href=\"#{}\">{}</a>: {}</li>", escape(&s.id), escape(&s.title), escape(first));
            }
            o.push_str("</ul>\n");
        }
        for s in &self.sections {
            s.render(&mut o);
        }
        o.push_str("</body></html>\n");
        o
    }
}

impl Section {
    fn render(&self, o: &mut String) {
        let _ = writeln!(o, "<section class=\"failure\" id=\"{}\"><h2>{}</h2>", escape(&self.id), escape(&self.title));
        o.push_str("<ul class=\"violations\">\n");
        for v in &self.violations {
            let _ = writeln!(o, "<li class=\"fail\">{}</li>", escape(v));
        }
        o.push_str("</ul>\n");
        let _ = writeln!(o, "<p>reproduce: <code class=\"reproduce\">{}</code></p>", escape(&self.reproduce));
        if let Some(svg) = &self.timeline {
            let _ = writeln!(
                o,
                "<h3>timeline (global time; bars: leases, bands: faults)</h3><div class=\"timeline\">{svg}</div>"
            );
        }
        for (label, text) in &self.extra {
            let _ = writeln!(o, "<h3>{}</h3><pre>{}</pre>", escape(label), escape(text));
        }
        if let Some(h) = &self.history {
            let _ = writeln!(
                o,
                "<details class=\"history\"><summary>history ({} entries: each at global time, with the member's own clock where it has one)</summary><pre>{}</pre></details>",
                h.lines().count(),
                escape(h)
            );
        }
        o.push_str("</section>\n");
    }
}
