//! TLS and SASL for the proof connection, read from the client properties
//! the user gave librdkafka (one source of truth; neli/KAFKA.md, "TLS and
//! SASL"). What this connection cannot speak is refused here, naming the
//! property, and the proof then goes through librdkafka.

use std::collections::BTreeMap;
use std::io;
use std::net::TcpStream;
use std::path::Path;

use openssl::pkey::PKey;
use openssl::ssl::{HandshakeError, SslConnector, SslConnectorBuilder, SslMethod, SslStream, SslVerifyMode};
use openssl::x509::{X509, X509VerifyResult};

use super::WireError;
use super::sasl::{Mechanism, ScramHash, UnsecuredJwt};

/// librdkafka's `security.protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl Protocol {
    fn parse(s: &str) -> Option<Protocol> {
        match s.to_ascii_lowercase().as_str() {
            "plaintext" => Some(Protocol::Plaintext),
            "ssl" => Some(Protocol::Ssl),
            "sasl_plaintext" => Some(Protocol::SaslPlaintext),
            "sasl_ssl" => Some(Protocol::SaslSsl),
            _ => None,
        }
    }

    fn tls(self) -> bool {
        matches!(self, Protocol::Ssl | Protocol::SaslSsl)
    }

    fn sasl(self) -> bool {
        matches!(self, Protocol::SaslPlaintext | Protocol::SaslSsl)
    }
}

/// How the proof connection secures itself: the listener's protocol, TLS
/// (when `ssl`/`sasl_ssl`) and the SASL mechanism (when `sasl_*`).
pub(crate) struct Security {
    pub(crate) protocol: Protocol,
    pub(crate) tls: Option<Tls>,
    pub(crate) sasl: Option<Mechanism>,
}

/// Properties the proof connection reads; any other `ssl.`/`sasl.` property
/// that changes how a connection is made sends the proof to librdkafka.
const TLS_KEYS: &[&str] = &[
    "ssl.ca.location",
    "ssl.ca.pem",
    "ssl.certificate.location",
    "ssl.certificate.pem",
    "ssl.key.location",
    "ssl.key.pem",
    "ssl.key.password",
    "ssl.cipher.suites",
    "ssl.curves.list",
    "ssl.sigalgs.list",
    "enable.ssl.certificate.verification",
    "ssl.endpoint.identification.algorithm",
];

/// Properties that only matter to librdkafka itself (its own key stores on
/// other platforms, or tuning of its own SASL client): ignored here.
const IGNORED_KEYS: &[&str] = &[
    "ssl.ca.certificate.stores", // Windows only
    "sasl.kerberos.service.name",
    "sasl.kerberos.principal",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.keytab",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.oauthbearer.method", // checked below
    "enable.sasl.oauthbearer.unsecure.jwt",
    "sasl.oauthbearer.config",
    "sasl.username",
    "sasl.password",
    "sasl.mechanism",
    "sasl.mechanisms",
];

impl Security {
    /// Plaintext, no SASL: what the proof connection spoke before TLS.
    #[cfg(test)]
    pub(crate) fn plaintext() -> Security {
        Security { protocol: Protocol::Plaintext, tls: None, sasl: None }
    }

    /// The security librdkafka would use for these client properties, or
    /// why the proof connection cannot match it (naming the property, and
    /// its value only if it is not a secret).
    pub(crate) fn from_properties(props: &BTreeMap<String, String>) -> Result<Security, SecurityError> {
        let get = |k: &str| props.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let protocol = match get("security.protocol") {
            None => Protocol::Plaintext,
            Some(p) => Protocol::parse(p).ok_or_else(|| SecurityError::Protocol(p.to_owned()))?,
        };
        if protocol.tls() {
            for key in props.keys() {
                if key.starts_with("ssl.") && !TLS_KEYS.contains(&key.as_str()) && !IGNORED_KEYS.contains(&key.as_str())
                {
                    return Err(SecurityError::UnreadTlsProperty(key.clone()));
                }
            }
        }
        let tls = if protocol.tls() { Some(Tls::from_properties(&get).map_err(SecurityError::Tls)?) } else { None };
        let sasl = if protocol.sasl() { Some(mechanism(&get).map_err(SecurityError::Sasl)?) } else { None };
        Ok(Security { protocol, tls, sasl })
    }

    /// Whether a `bootstrap.servers` entry's `PROTO://` prefix fits this
    /// listener (librdkafka drops entries that do not).
    pub(crate) fn accepts_scheme(&self, scheme: &str) -> bool {
        Protocol::parse(scheme) == Some(self.protocol)
    }
}

fn mechanism<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Mechanism, String> {
    let name = get("sasl.mechanisms").or_else(|| get("sasl.mechanism")).unwrap_or("GSSAPI");
    let credentials = || -> Result<(String, String), String> {
        let user = get("sasl.username").ok_or_else(|| format!("sasl.mechanism={name} needs sasl.username"))?;
        let password = get("sasl.password").ok_or_else(|| format!("sasl.mechanism={name} needs sasl.password"))?;
        Ok((user.to_owned(), password.to_owned()))
    };
    match name.to_ascii_uppercase().as_str() {
        "PLAIN" => {
            let (user, password) = credentials()?;
            Ok(Mechanism::Plain { user, password })
        }
        "SCRAM-SHA-256" | "SCRAM-SHA-512" => {
            let hash = if name.eq_ignore_ascii_case("SCRAM-SHA-256") { ScramHash::Sha256 } else { ScramHash::Sha512 };
            let (user, password) = credentials()?;
            Ok(Mechanism::Scram { hash, user, password })
        }
        "OAUTHBEARER" => {
            if get("sasl.oauthbearer.method").is_some_and(|m| !m.eq_ignore_ascii_case("default")) {
                return Err("sasl.oauthbearer.method=oidc: it does not fetch OIDC tokens".into());
            }
            if !get("enable.sasl.oauthbearer.unsecure.jwt").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
                return Err("sasl.mechanism=OAUTHBEARER without enable.sasl.oauthbearer.unsecure.jwt=true: \
                            the token comes from a refresh callback it cannot reach"
                    .into());
            }
            let config = get("sasl.oauthbearer.config").unwrap_or("");
            UnsecuredJwt::parse(config)
                .map(Mechanism::OauthbearerUnsecured)
                .map_err(|e| format!("sasl.oauthbearer.config: {e}"))
        }
        "GSSAPI" => Err("sasl.mechanism=GSSAPI (Kerberos) is not spoken by it".into()),
        _ => Err(format!("sasl.mechanism={name} is not one it knows")),
    }
}

/// Why the proof connection cannot be secured as librdkafka would be for
/// the client properties: each names the property at fault, and its value
/// only if it is not a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SecurityError {
    /// `security.protocol` names no protocol it knows.
    #[error("security.protocol={0} is not one it knows")]
    Protocol(String),
    /// An `ssl.` property it does not read (a key store, an engine, …).
    #[error("it does not read {0}")]
    UnreadTlsProperty(String),
    /// The TLS properties cannot be loaded, or contradict each other (the
    /// text names the property).
    #[error("{0}")]
    Tls(String),
    /// The SASL properties name a mechanism it does not speak, or lack what
    /// it needs (the text names the property).
    #[error("{0}")]
    Sasl(String),
}

/// A TLS client configured like librdkafka's for the same properties.
pub(crate) struct Tls {
    connector: SslConnector,
    verify_hostname: bool,
    /// What the broker's certificate is checked against, for errors.
    trust: String,
}

/// Where librdkafka looks for the system's CA certificates when OpenSSL is
/// linked statically and `ssl.ca.location` is not set (or is `probe`):
/// the first that exists wins (librdkafka's rdkafka_ssl.c).
const CA_PROBE_PATHS: &[&str] = &[
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/certs/ca-bundle.crt",
    "/etc/pki/tls/certs/ca-bundle.trust.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/ssl/cert.pem",
    "/etc/ssl/cacert.pem",
    "/etc/certs/ca-certificates.crt",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/certs",
    "/usr/local/etc/ssl/cert.pem",
    "/usr/local/etc/ssl/cacert.pem",
    "/usr/local/etc/ssl/certs/cert.pem",
    "/usr/local/etc/ssl/certs/cacert.pem",
    "/usr/local/share/certs/ca-root-nss.crt",
    "/etc/openssl/certs/ca-certificates.crt",
];

/// An OpenSSL error about `what`, by its first reason.
fn ssl(what: &str, e: openssl::error::ErrorStack) -> String {
    format!("{what}: {}", first_reason(&e))
}

/// Loads what the broker's certificate is checked against, as librdkafka
/// does (`ssl.ca.location`, `ssl.ca.pem`, else the system's CA store), and
/// says what it loaded, for errors.
fn load_trust<'a>(b: &mut SslConnectorBuilder, get: &impl Fn(&str) -> Option<&'a str>) -> Result<Vec<String>, String> {
    let mut trust = Vec::new();
    let ca_location = get("ssl.ca.location");
    match ca_location {
        Some(loc) if loc != "probe" => {
            let path = Path::new(loc);
            let loaded = if path.is_dir() {
                b.load_verify_locations(None, Some(path))
            } else {
                b.load_verify_locations(Some(path), None)
            };
            loaded.map_err(|e| ssl(&format!("ssl.ca.location '{loc}' cannot be loaded"), e))?;
            trust.push(format!("ssl.ca.location ('{loc}')"));
        }
        _ => {}
    }
    if let Some(pem) = get("ssl.ca.pem") {
        let cas = X509::stack_from_pem(pem.as_bytes()).map_err(|e| ssl("ssl.ca.pem holds no valid certificate", e))?;
        if cas.is_empty() {
            return Err("ssl.ca.pem holds no certificate".into());
        }
        for ca in cas {
            b.cert_store_mut().add_cert(ca).map_err(|e| ssl("ssl.ca.pem", e))?;
        }
        trust.push("ssl.ca.pem".to_owned());
    }
    if trust.is_empty() || ca_location == Some("probe") {
        if let Some(found) = CA_PROBE_PATHS.iter().map(Path::new).find(|p| p.exists()) {
            let loaded = if found.is_dir() {
                b.load_verify_locations(None, Some(found))
            } else {
                b.load_verify_locations(Some(found), None)
            };
            loaded.map_err(|e| ssl(&format!("the system CA store '{}'", found.display()), e))?;
            trust.push(format!("the system CA store ('{}', ssl.ca.location unset or probe)", found.display()));
        } else {
            trust.push("OpenSSL's default CA paths (ssl.ca.location unset, no system CA store found)".to_owned());
        }
    }
    Ok(trust)
}

/// Loads the client's certificate chain and private key, from files or
/// PEM properties (one of each at most), for mutual TLS.
fn load_client_identity<'a>(b: &mut SslConnectorBuilder, get: &impl Fn(&str) -> Option<&'a str>) -> Result<(), String> {
    let password = get("ssl.key.password").unwrap_or("");
    match (get("ssl.certificate.location"), get("ssl.certificate.pem")) {
        (Some(_), Some(_)) => return Err("both ssl.certificate.location and ssl.certificate.pem are set".into()),
        (Some(loc), None) => b
            .set_certificate_chain_file(loc)
            .map_err(|e| ssl(&format!("ssl.certificate.location '{loc}' cannot be loaded"), e))?,
        (None, Some(pem)) => {
            let mut chain = X509::stack_from_pem(pem.as_bytes())
                .map_err(|e| ssl("ssl.certificate.pem holds no valid certificate", e))?
                .into_iter();
            let leaf = chain.next().ok_or("ssl.certificate.pem holds no certificate")?;
            b.set_certificate(&leaf).map_err(|e| ssl("ssl.certificate.pem", e))?;
            for c in chain {
                b.add_extra_chain_cert(c).map_err(|e| ssl("ssl.certificate.pem", e))?;
            }
        }
        (None, None) => {}
    }
    let key = match (get("ssl.key.location"), get("ssl.key.pem")) {
        (Some(_), Some(_)) => return Err("both ssl.key.location and ssl.key.pem are set".into()),
        (Some(loc), None) => {
            let pem = std::fs::read(loc).map_err(|e| format!("ssl.key.location '{loc}' cannot be read: {e}"))?;
            Some(private_key(&pem, password).map_err(|why| format!("ssl.key.location '{loc}': {why}"))?)
        }
        (None, Some(pem)) => Some(private_key(pem.as_bytes(), password).map_err(|why| format!("ssl.key.pem: {why}"))?),
        (None, None) => None,
    };
    if let Some(key) = key {
        b.set_private_key(&key).map_err(|e| ssl("the private key", e))?;
        b.check_private_key().map_err(|e| ssl("the private key does not match the client certificate", e))?;
    }
    Ok(())
}

/// Whether the broker's certificate is verified, and its host name
/// checked: `(enable.ssl.certificate.verification,
/// ssl.endpoint.identification.algorithm)` as librdkafka reads them.
fn verification<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<(bool, bool), String> {
    let verify = match get("enable.ssl.certificate.verification").map(str::to_ascii_lowercase).as_deref() {
        None | Some("true") => true,
        Some("false") => false,
        Some(v) => return Err(format!("enable.ssl.certificate.verification={v} is not true or false")),
    };
    let verify_hostname = match get("ssl.endpoint.identification.algorithm").map(str::to_ascii_lowercase).as_deref() {
        None | Some("https") => verify,
        Some("none") => false,
        Some(v) => return Err(format!("ssl.endpoint.identification.algorithm={v} is not https or none")),
    };
    Ok((verify, verify_hostname))
}

impl Tls {
    fn from_properties<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Tls, String> {
        let mut b = SslConnector::builder(SslMethod::tls_client()).map_err(|e| ssl("TLS setup", e))?;
        let trust = load_trust(&mut b, get)?;
        load_client_identity(&mut b, get)?;
        if let Some(list) = get("ssl.cipher.suites") {
            b.set_cipher_list(list).map_err(|e| ssl("ssl.cipher.suites", e))?;
        }
        if let Some(list) = get("ssl.curves.list") {
            b.set_groups_list(list).map_err(|e| ssl("ssl.curves.list", e))?;
        }
        if let Some(list) = get("ssl.sigalgs.list") {
            b.set_sigalgs_list(list).map_err(|e| ssl("ssl.sigalgs.list", e))?;
        }
        let (verify, verify_hostname) = verification(get)?;
        if !verify {
            b.set_verify(SslVerifyMode::NONE);
        }
        Ok(Tls { connector: b.build(), verify_hostname, trust: trust.join(" and ") })
    }

    /// The TLS handshake on a connected socket whose timeouts are set;
    /// `host` is the broker's name (SNI and, unless
    /// `ssl.endpoint.identification.algorithm=none`, the name checked).
    pub(crate) fn connect(&self, host: &str, tcp: TcpStream) -> Result<SslStream<TcpStream>, WireError> {
        let mut cfg = self.connector.configure().map_err(|e| WireError::Tls(first_reason(&e)))?;
        cfg.set_verify_hostname(self.verify_hostname);
        match cfg.connect(host, tcp) {
            Ok(s) => Ok(s),
            Err(HandshakeError::WouldBlock(_)) => Err(WireError::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("TLS handshake with {host}: no answer before the request timeout"),
            ))),
            Err(HandshakeError::SetupFailure(e)) => Err(WireError::Tls(format!("TLS setup: {}", first_reason(&e)))),
            Err(HandshakeError::Failure(mid)) => {
                let verify = mid.ssl().verify_result();
                if verify != X509VerifyResult::OK {
                    // X509_V_ERR_HOSTNAME_MISMATCH / _IP_ADDRESS_MISMATCH
                    let name = if matches!(verify.as_raw(), 62 | 64) {
                        format!(
                            " (the certificate does not name '{host}'; \
                             ssl.endpoint.identification.algorithm=none skips this check)"
                        )
                    } else {
                        String::new()
                    };
                    return Err(WireError::Tls(format!(
                        "TLS handshake with {host} failed: the broker's certificate could not be verified \
                         against {}: {}{name}",
                        self.trust,
                        verify.error_string()
                    )));
                }
                let e = mid.error();
                match e.ssl_error() {
                    Some(stack) => {
                        Err(WireError::Tls(format!("TLS handshake with {host} failed: {}", first_reason(stack))))
                    }
                    None => Err(WireError::Io(io::Error::other(format!("TLS handshake with {host}: {e}")))),
                }
            }
        }
    }
}

/// The PEM private key, encrypted or not (PKCS#8 or the traditional
/// format), as librdkafka reads it.
fn private_key(pem: &[u8], password: &str) -> Result<PKey<openssl::pkey::Private>, String> {
    let encrypted = pem.windows(9).any(|w| w == b"ENCRYPTED");
    PKey::private_key_from_pem_passphrase(pem, password.as_bytes()).map_err(|e| {
        if encrypted && password.is_empty() {
            "the key is encrypted and ssl.key.password is not set".to_owned()
        } else if encrypted {
            format!("the key cannot be decrypted with ssl.key.password ({})", first_reason(&e))
        } else {
            format!("no PEM private key in it ({})", first_reason(&e))
        }
    })
}

/// OpenSSL's reason for the first error of a stack, e.g. "certificate
/// verify failed" (never a secret: OpenSSL does not echo key material).
pub(crate) fn first_reason(e: &openssl::error::ErrorStack) -> String {
    e.errors().iter().find_map(|e| e.reason()).map(str::to_owned).unwrap_or_else(|| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn refusal(pairs: &[(&str, &str)]) -> String {
        match Security::from_properties(&props(pairs)) {
            Ok(_) => panic!("{pairs:?} accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn mechanisms_are_read_from_librdkafkas_properties() {
        let s = Security::from_properties(&props(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "scram-sha-512"),
            ("sasl.username", "u"),
            ("sasl.password", "p"),
        ]))
        .unwrap();
        assert_eq!(s.protocol, Protocol::SaslPlaintext);
        assert!(s.tls.is_none());
        assert_eq!(s.sasl.as_ref().unwrap().name(), "SCRAM-SHA-512");
        let s = Security::from_properties(&props(&[
            ("security.protocol", "sasl_plaintext"),
            ("sasl.mechanisms", "PLAIN"),
            ("sasl.username", "u"),
            ("sasl.password", "p"),
        ]))
        .unwrap();
        assert_eq!(s.sasl.as_ref().unwrap().name(), "PLAIN");
        let s = Security::from_properties(&props(&[])).unwrap();
        assert_eq!(s.protocol, Protocol::Plaintext);
        assert!(s.accepts_scheme("PLAINTEXT") && !s.accepts_scheme("ssl"));
    }

    #[test]
    fn what_it_cannot_speak_is_refused_by_name_without_the_secret() {
        let e = refusal(&[("security.protocol", "SASL_PLAINTEXT")]);
        assert!(e.contains("GSSAPI"), "librdkafka's default mechanism: {e}");
        let e = refusal(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "GSSAPI"),
            ("ssl.ca.location", "/nonexistent"),
        ]);
        assert!(e.contains("ssl.ca.location") || e.contains("GSSAPI"), "{e}");
        let e = refusal(&[("security.protocol", "SASL_PLAINTEXT"), ("sasl.mechanism", "GSSAPI")]);
        assert!(e.contains("sasl.mechanism=GSSAPI"), "{e}");
        let e = refusal(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("sasl.oauthbearer.method", "oidc"),
        ]);
        assert!(e.contains("sasl.oauthbearer.method=oidc"), "{e}");
        let e = refusal(&[("security.protocol", "SASL_PLAINTEXT"), ("sasl.mechanism", "OAUTHBEARER")]);
        assert!(e.contains("enable.sasl.oauthbearer.unsecure.jwt"), "{e}");
        let e = refusal(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("enable.sasl.oauthbearer.unsecure.jwt", "true"),
            ("sasl.oauthbearer.config", "principal=a MARKER-SECRET"),
        ]);
        assert!(e.contains("sasl.oauthbearer.config") && !e.contains("MARKER-SECRET"), "{e}");
        let e =
            refusal(&[("security.protocol", "SASL_PLAINTEXT"), ("sasl.mechanism", "PLAIN"), ("sasl.username", "u")]);
        assert!(e.contains("sasl.password"), "{e}");
        let e = refusal(&[("security.protocol", "SSL"), ("ssl.keystore.location", "/x.p12")]);
        assert!(e.contains("ssl.keystore.location"), "{e}");
        let e = refusal(&[("security.protocol", "SSL"), ("ssl.ca.location", "/nonexistent/ca.pem")]);
        assert!(e.contains("ssl.ca.location '/nonexistent/ca.pem'"), "{e}");
        let e = refusal(&[("security.protocol", "SSL"), ("ssl.key.pem", "MARKER-SECRET not a key")]);
        assert!(e.contains("ssl.key.pem") && !e.contains("MARKER-SECRET"), "{e}");
        let e = refusal(&[("security.protocol", "carrier-pigeon")]);
        assert!(e.contains("security.protocol=carrier-pigeon"), "{e}");
    }
}
