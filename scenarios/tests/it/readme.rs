//! The README's transcripts are tested. Every `$ neli-lab …` line in a
//! fenced block of README.md and docs/harness-tour.md (the pages of
//! [`PAGES`]) runs (in a scratch directory, on the shipped
//! scenarios), and the lines under it, up to the next `$` line or the end of
//! the block, must match its output: a line `...` stands for any number of
//! lines, `…` inside a line for any text, and the two things that differ
//! from run to run are masked (the build's commit and state, and the wall
//! time and rate of an `explored` line). The output compared is stdout, or
//! stderr for a command that prints nothing on stdout (`shrink -o`). A
//! command with no lines under it is not run. A ` # comment` after a command is not part of it. So a change to an
//! output a page shows fails this test until the page shows the new one.

use std::os::unix::process::CommandExt;
use std::path::Path;

/// (command, expected lines) for every `$ neli-lab` line of `markdown`.
fn transcripts(markdown: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_block = false;
    let mut current: Option<(String, Vec<String>)> = None;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            out.extend(current.take());
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.extend(current.take());
            if cmd.starts_with("neli-lab ") {
                let cmd = cmd.split(" # ").next().unwrap_or(cmd).trim().to_owned();
                current = Some((cmd, Vec::new()));
            }
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line.to_owned());
        }
    }
    out
}

/// The parts of an output that differ between runs, made equal.
fn mask(line: &str) -> String {
    let mut l = line.to_owned();
    if let Some(i) = l.find(" commit ") {
        // The commit and whether the tree was clean: which build ran.
        l = format!("{} commit …", &l[..i]);
    }
    if l.starts_with("explored ")
        && let (Some(a), Some(b)) = (l.find(" in "), l.find(" seeds/s)"))
    {
        l = format!("{} in …{}", &l[..a], &l[b + " seeds/s)".len()..]);
    }
    l
}

/// Whether `text` matches `pattern`, where `…` stands for any text.
fn line_matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the `actual` lines match the `expected` ones (`...` = any lines).
fn lines_match(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e.trim() == "..." => (0..=actual.len()).any(|k| lines_match(rest, &actual[k..])),
        Some((e, rest)) => {
            actual.first().is_some_and(|a| line_matches(&mask(e), &mask(a))) && lines_match(rest, &actual[1..])
        }
    }
}

/// The pages whose transcripts run, from the repository's root.
const PAGES: [&str; 2] = ["README.md", "docs/harness-tour.md"];

#[test]
fn readme_transcripts_match_the_program() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = crate::scratch("readme");
    let mut wrong = Vec::new();
    let mut shown = 0;
    for page in PAGES {
        let text = std::fs::read_to_string(root.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        let cases = transcripts(&text);
        let with_output: Vec<_> = cases.iter().filter(|(_, e)| e.iter().any(|l| !l.trim().is_empty())).collect();
        assert!(with_output.len() >= 2, "{page}: expected transcripts with output, found {}", with_output.len());
        shown += with_output.len();
        for (cmd, expected) in with_output {
            if let Some(diff) = mismatch(&dir, cmd, expected) {
                wrong.push(format!("{page}:\n{diff}"));
            }
        }
    }
    assert!(shown >= 5, "expected the tour's transcripts with output, found {shown}");
    assert!(wrong.is_empty(), "transcripts that no longer match:\n\n{}", wrong.join("\n\n"));
}

/// Runs `cmd` in `dir` and says how its output differs from `expected`, if it does.
fn mismatch(dir: &Path, cmd: &str, expected: &[String]) -> Option<String> {
    let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    // As the tour's `alias neli-lab=target/release/neli-lab` runs it, so
    // its reproduction lines name that path (scenarios/README.md,
    // "Reproduction lines").
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_neli-lab"))
        .arg0("target/release/neli-lab")
        .args(&args)
        .current_dir(dir)
        .env("NELI_LAB_SCENARIOS", env!("CARGO_MANIFEST_DIR"))
        .env_remove("CARGO")
        .env_remove("CARGO_PKG_NAME")
        .output()
        .expect("neli-lab runs");
    // What a command says goes to stdout; a command that writes a file
    // (`shrink -o`) says what it did on stderr.
    let shown = if o.stdout.is_empty() { &o.stderr } else { &o.stdout };
    let actual: Vec<String> = String::from_utf8_lossy(shown).lines().map(str::to_owned).collect();
    (!lines_match(expected, &actual)).then(|| {
        format!("$ {cmd}\n--- the page shows:\n{}\n--- the program prints:\n{}", expected.join("\n"), actual.join("\n"))
    })
}

#[test]
fn transcript_matching_rules() {
    let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&e(&["a", "...", "d"]), &e(&["a", "b", "c", "d"])));
    assert!(!lines_match(&e(&["a", "d"]), &e(&["a", "b", "d"])));
    assert!(line_matches("seed … of x", "seed 12 of x") && !line_matches("seed … of x", "seed 12 of y"));
    assert_eq!(mask("build     neli-lab 0.0.0 commit 2f101a7 clean"), "build     neli-lab 0.0.0 commit …");
    assert_eq!(
        mask("explored 1 scenario(s) x 20 seed(s) from 0 on 2 thread(s) in 0.5s (44.4 seeds/s)"),
        "explored 1 scenario(s) x 20 seed(s) from 0 on 2 thread(s) in …"
    );
}
