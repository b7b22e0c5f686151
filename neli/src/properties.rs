//! Client properties from places other than the command line: a properties
//! file (`neli -X @FILE`) and `NELI_KAFKA_*` environment variables. Command
//! lines are visible to every user of a machine (`ps`), so secrets such as
//! `sasl.password` belong in one of these (neli/KAFKA.md, "Passing secrets").
//!
//! Errors name the file and line, or the variable, but never show a line or
//! value: a malformed line may well hold a secret.

use std::ffi::OsString;
use std::path::Path;

/// The prefix of environment variables that set client properties.
pub const ENV_PREFIX: &str = "NELI_KAFKA_";

/// A properties file or environment variable that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PropertiesError {
    /// The file cannot be read (missing, unreadable, too large, not UTF-8).
    #[error("cannot read properties file '{path}': {reason}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A line that is neither `KEY=VALUE`, a comment nor blank.
    #[error(
        "{path}:{line}: expected KEY=VALUE, a comment (#) or a blank line (the line is not shown: it may hold a secret)"
    )]
    Malformed {
        /// The file.
        path: String,
        /// The line number (from 1).
        line: usize,
    },
    /// `=VALUE` with no name.
    #[error("{path}:{line}: the property name before '=' is empty")]
    EmptyKey {
        /// The file.
        path: String,
        /// The line number (from 1).
        line: usize,
    },
    /// A line continued with a trailing backslash.
    #[error("{path}:{line}: a line ending in '\\' (a continuation) is not supported; put the value on one line")]
    Continuation {
        /// The file.
        path: String,
        /// The line number (from 1).
        line: usize,
    },
    /// A `NELI_KAFKA_*` variable that gives no usable property (the rule says why).
    #[error("environment variable {name}: {rule}")]
    BadVariable {
        /// The variable.
        name: String,
        /// The rule it breaks.
        rule: &'static str,
    },
}

/// Parses the text of a properties file: one `KEY=VALUE` per line; blank
/// lines and lines starting with `#` or `!` are skipped; key and value are
/// trimmed of surrounding whitespace; the value is everything after the
/// first `=`. No escapes, no continuation lines.
pub fn parse_properties(path: &str, text: &str) -> Result<Vec<(String, String)>, PropertiesError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(PropertiesError::Malformed { path: path.to_owned(), line: line_no });
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(PropertiesError::EmptyKey { path: path.to_owned(), line: line_no });
        }
        if value.ends_with('\\') {
            return Err(PropertiesError::Continuation { path: path.to_owned(), line: line_no });
        }
        out.push((key.to_owned(), value.trim().to_owned()));
    }
    Ok(out)
}

/// Reads and parses a properties file ([`parse_properties`]).
/// Files over [`MAX_PROPERTIES_FILE`] bytes are refused (`-X @/dev/zero`
/// must end with an error, not fill the memory).
pub fn read_properties_file(path: &Path) -> Result<Vec<(String, String)>, PropertiesError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let unreadable = |reason: String| PropertiesError::Unreadable { path: shown.clone(), reason };
    let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_PROPERTIES_FILE + 1).read_to_end(&mut bytes).map_err(|e| unreadable(e.to_string()))?;
    if bytes.len() as u64 > MAX_PROPERTIES_FILE {
        return Err(unreadable(format!("larger than {MAX_PROPERTIES_FILE} bytes; a properties file is a few lines")));
    }
    let text = String::from_utf8(bytes).map_err(|_| unreadable("not valid UTF-8".into()))?;
    parse_properties(&shown, &text)
}

/// The largest properties file `read_properties_file` reads: 1 MiB.
pub const MAX_PROPERTIES_FILE: u64 = 1 << 20;

/// Client properties from `NELI_KAFKA_*` variables among `vars`: the rest
/// of the name, lower-cased, with `__` for `_` and `_` for `.`
/// (`NELI_KAFKA_SASL_PASSWORD` → `sasl.password`, `NELI_KAFKA_LOG__LEVEL` →
/// `log_level`). Sorted by property name.
pub fn properties_from_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Vec<(String, String)>, PropertiesError> {
    let mut out = Vec::new();
    for (name, value) in vars {
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name.strip_prefix(ENV_PREFIX) else { continue };
        let bad = |rule| PropertiesError::BadVariable { name: name.to_owned(), rule };
        if rest.is_empty() {
            return Err(bad("names no property (expected NELI_KAFKA_<PROPERTY>, e.g. NELI_KAFKA_SASL_PASSWORD)"));
        }
        let value = value.into_string().map_err(|_| bad("its value is not valid UTF-8"))?;
        let key = rest.to_ascii_lowercase().replace("__", "\u{0}").replace('_', ".").replace('\u{0}', "_");
        out.push((key, value));
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_lines_comments_and_trimming() {
        let text =
            "# TLS\n\nsecurity.protocol = SASL_SSL\n! also a comment\nsasl.password=a=b  \n  sasl.username=alice\r\n";
        let props = parse_properties("f", text).unwrap();
        assert_eq!(
            props,
            [
                ("security.protocol".into(), "SASL_SSL".into()),
                ("sasl.password".into(), "a=b".into()),
                ("sasl.username".into(), "alice".into()),
            ]
        );
    }

    #[test]
    fn malformed_lines_name_file_and_line_but_never_show_the_line() {
        let err = parse_properties("/etc/neli.properties", "a=b\nsasl.password hunter2\n").unwrap_err();
        assert_eq!(err, PropertiesError::Malformed { path: "/etc/neli.properties".into(), line: 2 });
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(err.to_string().starts_with("/etc/neli.properties:2: expected KEY=VALUE"), "{err}");
        let err = parse_properties("p", "=x").unwrap_err();
        assert_eq!(err.to_string(), "p:1: the property name before '=' is empty");
        let err = parse_properties("p", "a=b\\\n c").unwrap_err();
        assert!(matches!(err, PropertiesError::Continuation { line: 1, .. }), "{err}");
    }

    #[test]
    fn missing_file_is_named() {
        let err = read_properties_file(Path::new("/nonexistent/neli.properties")).unwrap_err();
        assert!(err.to_string().starts_with("cannot read properties file '/nonexistent/neli.properties': "), "{err}");
    }

    // An endless "file" ends with an error naming it, not a hang or an
    // exhausted memory.
    #[test]
    fn an_endless_or_binary_file_is_refused() {
        let err = read_properties_file(Path::new("/dev/zero")).unwrap_err();
        assert!(
            err.to_string().starts_with("cannot read properties file '/dev/zero': larger than 1048576 bytes"),
            "{err}"
        );
        let dir = std::env::temp_dir().join(format!("neli-props-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("bin.properties");
        std::fs::write(&bin, b"a=\xff\xfe\n").unwrap();
        let err = read_properties_file(&bin).unwrap_err();
        assert!(err.to_string().ends_with("not valid UTF-8"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn environment_names_map_to_properties() {
        let vars = [
            ("NELI_KAFKA_SASL_PASSWORD", "s"),
            ("NELI_KAFKA_LOG__LEVEL", "7"),
            ("PATH", "/bin"),
            ("NELI_KAFKA_SSL_KEY_PASSWORD", "k"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let props = properties_from_env(vars).unwrap();
        assert_eq!(
            props,
            [
                ("log_level".into(), "7".into()),
                ("sasl.password".into(), "s".into()),
                ("ssl.key.password".into(), "k".into()),
            ]
        );
        let err = properties_from_env([(OsString::from("NELI_KAFKA_"), OsString::from("x"))]).unwrap_err();
        assert!(err.to_string().starts_with("environment variable NELI_KAFKA_: names no property"), "{err}");
    }
}
