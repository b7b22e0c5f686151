//! JUnit XML for CI test reports, written by `quick-junit` (the writer of
//! cargo-nextest's reports): one testsuite per document, one testcase per
//! scenario, configuration or property. `scenarios/tests/it/junit.xsd` (neli-lab's reports and the harness's)
//! pins the structure CI readers rely on.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

/// One `<testcase>`.
pub struct Case {
    pub name: String,
    pub classname: String,
    pub time_s: f64,
    pub failure: Option<CaseFailure>,
    /// A `<skipped message=…>` reason (ignored when `failure` is set).
    pub skipped: Option<String>,
    /// Goes into the testcase's `<system-out>`.
    pub out: String,
}

/// A testcase's `<failure message=…>body</failure>`.
pub struct CaseFailure {
    pub message: String,
    pub body: String,
}

/// A JUnit XML document with one testsuite named `suite`, whose
/// `<system-out>` is `suite_out` (conforming to `scenarios/tests/it/junit.xsd` (neli-lab's reports and the harness's)).
pub fn junit(suite_name: &str, suite_out: &str, time_s: f64, cases: &[Case]) -> String {
    document(suite_name, time_s, vec![suite(suite_name, suite_out, time_s, cases)])
}

/// One testsuite named `name` with `cases`, for [`document`].
pub fn suite(name: &str, suite_out: &str, time_s: f64, cases: &[Case]) -> TestSuite {
    let mut ts = TestSuite::new(xml_safe(name));
    ts.set_time(seconds(time_s));
    ts.set_system_out(xml_safe(suite_out));
    for c in cases {
        ts.add_test_case(test_case(c));
    }
    ts
}

fn test_case(c: &Case) -> TestCase {
    let status = match (&c.failure, &c.skipped) {
        (Some(f), _) => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(xml_safe(&f.message));
            s.set_type("violation");
            if !f.body.is_empty() {
                s.set_description(xml_safe(&f.body));
            }
            s
        }
        (None, Some(why)) => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(xml_safe(why));
            s
        }
        (None, None) => TestCaseStatus::success(),
    };
    let mut tc = TestCase::new(xml_safe(&c.name), status);
    tc.set_classname(xml_safe(&c.classname));
    tc.set_time(seconds(c.time_s));
    tc.set_system_out(xml_safe(&c.out));
    tc
}

/// A JUnit XML document named `name` holding `suites`.
pub fn document(name: &str, time_s: f64, suites: Vec<TestSuite>) -> String {
    let mut report = Report::new(xml_safe(name));
    report.set_time(seconds(time_s));
    report.add_test_suites(suites);
    let mut xml = report.to_string().unwrap_or_else(|e| panic!("a JUnit report serialises: {e}"));
    if !xml.ends_with('\n') {
        xml.push('\n');
    }
    xml
}

fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::ZERO)
}

/// `text` with the characters XML 1.0 cannot carry at all (control
/// characters other than tab and line breaks) as U+FFFD; the XML writer
/// escapes the rest.
fn xml_safe(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_control_characters_survive_as_well_formed_xml() {
        let case = Case {
            name: "a<b & \"c\" 'd'>".into(),
            classname: "neli-lab.x".into(),
            time_s: 0.5,
            failure: Some(CaseFailure { message: "bad\u{1}".into(), body: "x\ny".into() }),
            skipped: None,
            out: "out".into(),
        };
        let xml = junit("suite", "build", 1.0, &[case]);
        assert!(xml.contains("a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"), "{xml}");
        assert!(xml.contains("bad\u{FFFD}"), "{xml}");
        assert!(!xml.contains('\u{1}'), "{xml}");
        assert!(xml.contains("type=\"violation\""), "{xml}");
        assert!(xml.contains("failures=\"1\""), "{xml}");
    }
}
