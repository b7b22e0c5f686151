//! Keeps secrets out of everything neli prints: `Debug`, logs and errors.
//!
//! Two pieces, used together (neli/KAFKA.md, "Secrets never printed"):
//! - [`is_secret_key`] decides by a property's *name* whether its value is
//!   secret: librdkafka's sensitive properties, anything that looks like a
//!   password, secret, token, credential, JAAS or OAUTHBEARER configuration or
//!   private key, including misspelt names (`sasl.passwrod`) that librdkafka
//!   rejects — and echoes, value included, in its error message.
//! - [`Redactor`] is the one redaction step every error or log text that
//!   comes from librdkafka or from configuration passes through before it
//!   reaches the user. It knows the secret *values* of one configuration and
//!   removes them wherever they appear, also truncated or one PEM line at a
//!   time, and removes any PEM private key block and the value after a
//!   secret-looking key name (`key=value`, `key value`).

use std::collections::BTreeMap;

/// What a removed secret is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Name fragments that mark a property as secret wherever they appear in a
/// segment of its name (segments are separated by `.`, `_` or `-`).
const SECRET_FRAGMENTS: &[&str] = &["pass", "pwd", "secret", "token", "credential", "jaas", "private", "apikey"];

/// Words that a misspelt secret property name is close to (one or two typos).
const SECRET_WORDS: &[&str] = &["password", "passwd", "passphrase", "secret", "token", "credentials"];

/// Whether client property `key` holds a secret that must never be printed.
///
/// By name: librdkafka's sensitive properties (`sasl.password`,
/// `ssl.key.password`, `ssl.key.pem`, `ssl_key`, `ssl.keystore.password`,
/// `sasl.oauthbearer.config`, `sasl.oauthbearer.client.secret`, ...). By
/// pattern: any name with a segment containing `pass`, `pwd`, `secret`,
/// `token`, `credential`, `jaas`, `private` or `apikey`; a segment within two
/// typos of `password`, `secret`, `token`, ... (`sasl.pasword`,
/// `sasl.secert`); a name ending in `.pem`, `key` or `.config` of SASL; and
/// `sasl.oauthbearer.extensions`. Paths (`ssl.key.location`) are not secret.
pub fn is_secret_key(key: &str) -> bool {
    let key = key.trim().to_ascii_lowercase();
    let segments: Vec<&str> = key.split(['.', '_', '-']).filter(|s| !s.is_empty()).collect();
    if segments.iter().any(|s| SECRET_FRAGMENTS.iter().any(|f| s.contains(f))) {
        return true;
    }
    let typo = |s: &str| SECRET_WORDS.iter().any(|w| s.len() + 2 >= w.len() && typos(s, w) <= max_typos(w));
    if segments.iter().any(|s| s.len() >= 4 && typo(s)) {
        return true;
    }
    match segments.last() {
        Some(&"pem") | Some(&"key") => true,
        Some(&"config") | Some(&"extensions") => segments.first() == Some(&"sasl"),
        _ => false,
    }
}

fn max_typos(word: &str) -> usize {
    if word.len() >= 7 { 2 } else { 1 }
}

/// Edits and adjacent swaps between `a` and `b` (optimal string alignment,
/// strsim's): a misspelt secret key is still a secret key.
fn typos(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// The one redaction step for texts from librdkafka or configuration.
/// Built from the client properties whose secret values it removes.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Secret values, longest first (so a value containing another goes first).
    values: Vec<String>,
}

/// Shortest truncated tail of a secret that is still removed: shorter ones
/// are too likely to be ordinary words and reveal little.
const MIN_PARTIAL: usize = 6;

impl Redactor {
    /// A redactor for the secret values among `properties`.
    pub fn new<'a>(properties: impl IntoIterator<Item = (&'a String, &'a String)>) -> Redactor {
        let mut values: Vec<String> = Vec::new();
        for (key, value) in properties {
            if !is_secret_key(key) || value.is_empty() {
                continue;
            }
            values.push(value.clone());
            let trimmed = value.trim();
            if trimmed != value && !trimmed.is_empty() {
                values.push(trimmed.to_owned());
            }
            // A multi-line value (a PEM key) may be echoed one line at a time.
            values.extend(value.lines().map(str::trim).filter(|l| l.len() >= MIN_PARTIAL).map(str::to_owned));
        }
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Redactor { values }
    }

    /// A redactor for a configuration's client properties.
    pub fn for_properties(properties: &BTreeMap<String, String>) -> Redactor {
        Redactor::new(properties)
    }

    /// `text` without any secret: known secret values (whole, per line, or
    /// cut off at the end of the text), PEM private key blocks, and the value
    /// after a secret-looking key name.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), REDACTED);
            }
        }
        // librdkafka cuts its messages at a fixed length: a secret echoed last
        // may be cut too. Remove the longest tail of the text that starts a
        // secret value.
        for v in &self.values {
            if let Some(n) = truncated_tail(&out, v) {
                out.truncate(out.len() - n);
                out.push_str(REDACTED);
            }
        }
        out = redact_pem_private_keys(&out);
        redact_after_secret_keys(&out)
    }
}

/// Length of the longest suffix of `text` (at least [`MIN_PARTIAL`] bytes)
/// that is a proper prefix of `value`.
fn truncated_tail(text: &str, value: &str) -> Option<usize> {
    let max = value.len().saturating_sub(1).min(text.len());
    (MIN_PARTIAL..=max)
        .rev()
        .find(|&n| text.is_char_boundary(text.len() - n) && value.is_char_boundary(n) && text.ends_with(&value[..n]))
}

/// Removes `-----BEGIN ... PRIVATE KEY-----` blocks up to their END line (or
/// the end of the text, if cut off).
fn redact_pem_private_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let header_end = rest[start + 11..].find("-----").map(|i| start + 11 + i + 5);
        let is_private = header_end.is_some_and(|e| rest[start..e].contains("PRIVATE KEY"));
        let Some(header_end) = header_end.filter(|_| is_private) else {
            out.push_str(&rest[..start + 11]);
            rest = &rest[start + 11..];
            continue;
        };
        out.push_str(&rest[..start]);
        out.push_str(REDACTED);
        let after = &rest[header_end..];
        rest = match after.find("-----END ") {
            Some(i) => {
                let tail = &after[i + 9..];
                match tail.find("-----") {
                    Some(j) => &tail[j + 5..],
                    None => "",
                }
            }
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// Replaces the token after a secret-looking key name (`key=value`,
/// `key: value`, `key value`, `key "value"`).
fn redact_after_secret_keys(text: &str) -> String {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(is_name_char) {
        out.push_str(&rest[..start]);
        let word_len = rest[start..].find(|c: char| !is_name_char(c)).unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        out.push_str(word);
        rest = &rest[start + word_len..];
        // A secret key name with at least one '.' or '_' (a property, not prose).
        if !(word.contains(['.', '_']) && is_secret_key(word)) {
            continue;
        }
        let sep_len = rest.find(|c: char| !matches!(c, ' ' | '=' | ':' | '"' | '\'')).unwrap_or(rest.len());
        let (sep, after) = rest.split_at(sep_len);
        if sep.is_empty() || after.is_empty() {
            continue;
        }
        let quoted = sep.ends_with(['"', '\'']);
        let value_len = if quoted {
            let q = sep.chars().last().unwrap_or('"');
            after.find(q).unwrap_or(after.len())
        } else {
            after.find(char::is_whitespace).unwrap_or(after.len())
        };
        let value = &after[..value_len];
        // A redaction, the same name again (librdkafka writes `"key" key
        // value`) or a word of the message is not a value.
        let same_name = value.trim_matches(['"', '\'']) == word;
        if value.is_empty() || value.starts_with(REDACTED) || same_name || (!quoted && looks_like_message_word(value)) {
            continue;
        }
        out.push_str(sep);
        out.push_str(REDACTED);
        rest = &after[value_len..];
    }
    out.push_str(rest);
    out
}

/// Words librdkafka's messages put after a property name that are not its
/// value ("sasl.password is not supported", "... property sasl.password: ...").
fn looks_like_message_word(word: &str) -> bool {
    matches!(
        word.trim_end_matches([',', ';', ':', ')']),
        "is" | "was" | "requires" | "must" | "not" | "and" | "or" | "for" | "failed" | "in" | "to" | "(" | "at"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_by_list_pattern_and_typo() {
        for key in [
            "sasl.password",
            "ssl.key.password",
            "ssl.keystore.password",
            "ssl.key.pem",
            "ssl_key",
            "sasl.jaas.config",
            "sasl.oauthbearer.config",
            "sasl.oauthbearer.client.secret",
            "sasl.oauthbearer.client.credentials.client.secret",
            "sasl.oauthbearer.assertion.private.key.pem",
            "sasl.oauthbearer.assertion.private.key.passphrase",
            "sasl.oauthbearer.extensions",
            "sasl.passwrod",
            "sasl.pasword",
            "sasl.secert",
            "SASL.PASSWORD",
            "my.api_token",
            "vault.apikey",
            "some.client_secret_value",
            "ssl.ca.pem",
        ] {
            assert!(is_secret_key(key), "{key} must count as secret");
        }
        for key in [
            "bootstrap.servers",
            "security.protocol",
            "sasl.mechanism",
            "sasl.mechanisms",
            "sasl.username",
            "ssl.key.location",
            "ssl.keystore.location",
            "ssl.ca.location",
            "ssl.certificate.location",
            "ssl.endpoint.identification.algorithm",
            "sasl.oauthbearer.method",
            "session.timeout.ms",
            "client.id",
            "log_level",
            "debug",
        ] {
            assert!(!is_secret_key(key), "{key} is not secret (it is useful in diagnostics)");
        }
    }

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn known_values_are_removed_whole_per_line_and_truncated() {
        let pem = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0w\nQTApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----\n";
        let r = Redactor::for_properties(&props(&[
            ("sasl.password", "hunter2-marker"),
            ("ssl.key.pem", pem),
            ("client.id", "visible"),
        ]));
        let text = "Client config error: Invalid value for configuration property sasl.password hunter2-marker";
        assert_eq!(
            r.redact(text),
            format!("Client config error: Invalid value for configuration property sasl.password {REDACTED}")
        );
        let one_line = "ssl.key.pem failed: bad line QTApBgkqhkiG9w0BBQwwHAQI here";
        assert!(!r.redact(one_line).contains("QTApBgkqhkiG9w0BBQwwHAQI"), "{}", r.redact(one_line));
        let cut = "error: value hunter2-ma";
        assert_eq!(r.redact(cut), format!("error: value {REDACTED}"));
        assert_eq!(r.redact("client.id visible"), "client.id visible");
    }

    #[test]
    fn unknown_secret_keys_and_private_keys_are_removed_by_pattern() {
        let r = Redactor::default();
        assert_eq!(
            r.redact("No such configuration property: \"sasl.passwrod\" s3cr3t"),
            format!("No such configuration property: \"sasl.passwrod\" {REDACTED}")
        );
        assert_eq!(r.redact("sasl.password=abc def"), format!("sasl.password={REDACTED} def"));
        assert_eq!(
            r.redact("No such configuration property: \"sasl.passwrod\" sasl.passwrod s3cr3t"),
            format!("No such configuration property: \"sasl.passwrod\" sasl.passwrod {REDACTED}")
        );
        assert_eq!(r.redact("sasl.password is not supported"), "sasl.password is not supported");
        let pem = "key: -----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY----- done";
        assert_eq!(r.redact(pem), format!("key: {REDACTED} done"));
        assert_eq!(r.redact("cut -----BEGIN RSA PRIVATE KEY-----\nAAA"), format!("cut {REDACTED}"));
        let cert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----";
        assert_eq!(r.redact(cert), cert, "certificates are public");
    }
}
