//! The SASL mechanisms the proof connection speaks, as librdkafka speaks
//! them: PLAIN (RFC 4616), SCRAM-SHA-256/512 (RFC 5802, RFC 7677) and
//! OAUTHBEARER with librdkafka's unsecured JWT (RFC 7628). Each is a
//! sequence of tokens carried in SaslAuthenticate requests; the connection
//! (mod.rs) does the framing.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD as B64, URL_SAFE_NO_PAD as B64URL};
use hmac::{EagerHash, Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256, Sha512};

/// A SASL mechanism and its credentials, read from the client properties.
#[derive(Clone)]
pub(crate) enum Mechanism {
    Plain {
        user: String,
        password: String,
    },
    Scram {
        hash: ScramHash,
        user: String,
        password: String,
    },
    /// librdkafka's built-in unsecured JWT (`enable.sasl.oauthbearer.unsecure.jwt=true`).
    OauthbearerUnsecured(UnsecuredJwt),
}

/// The hash of a SCRAM mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScramHash {
    Sha256,
    Sha512,
}

impl Mechanism {
    /// The name SaslHandshake carries, and errors show.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Mechanism::Plain { .. } => "PLAIN",
            Mechanism::Scram { hash: ScramHash::Sha256, .. } => "SCRAM-SHA-256",
            Mechanism::Scram { hash: ScramHash::Sha512, .. } => "SCRAM-SHA-512",
            Mechanism::OauthbearerUnsecured(_) => "OAUTHBEARER",
        }
    }

    /// The user name shown in errors (never a secret), if the mechanism has one.
    pub(crate) fn user(&self) -> &str {
        match self {
            Mechanism::Plain { user, .. } | Mechanism::Scram { user, .. } => user,
            Mechanism::OauthbearerUnsecured(jwt) => &jwt.principal,
        }
    }

    /// A fresh exchange for one connection.
    pub(crate) fn start(&self) -> Exchange {
        match self {
            Mechanism::Plain { user, password } => Exchange::Plain { user: user.clone(), password: password.clone() },
            Mechanism::Scram { hash, user, password } => {
                Exchange::Scram(ScramClient::new(*hash, user, password, &client_nonce()))
            }
            Mechanism::OauthbearerUnsecured(jwt) => Exchange::Oauthbearer(jwt.clone()),
        }
    }
}

/// One authentication in progress: [`Exchange::first`], then
/// [`Exchange::next`] with each server token until it says done.
pub(crate) enum Exchange {
    Plain { user: String, password: String },
    Scram(ScramClient),
    Oauthbearer(UnsecuredJwt),
}

/// What the client does after a server token.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Send this token.
    Send(Vec<u8>),
    /// Authenticated.
    Done,
}

impl Exchange {
    /// The client's first token.
    pub(crate) fn first(&mut self) -> Vec<u8> {
        match self {
            Exchange::Plain { user, password } => {
                // authzid (empty) NUL authcid NUL passwd
                let mut t = Vec::with_capacity(user.len() + password.len() + 2);
                t.push(0);
                t.extend_from_slice(user.as_bytes());
                t.push(0);
                t.extend_from_slice(password.as_bytes());
                t
            }
            Exchange::Scram(c) => c.client_first().into_bytes(),
            Exchange::Oauthbearer(jwt) => jwt.client_first(SystemTime::now()).into_bytes(),
        }
    }

    /// The step after the server's answer to the last token. An error is
    /// a text about the exchange, without secrets.
    pub(crate) fn next(&mut self, server: &[u8]) -> Result<Step, SaslError> {
        match self {
            Exchange::Plain { .. } | Exchange::Oauthbearer(_) => {
                if server.is_empty() {
                    Ok(Step::Done)
                } else {
                    // OAUTHBEARER: an error is a JSON status; the client
                    // answers with a lone 0x01, and the broker then fails the
                    // authentication. We report the status at once.
                    Err(SaslError::Answered(String::from_utf8_lossy(server).into_owned()))
                }
            }
            Exchange::Scram(c) => {
                let server = std::str::from_utf8(server).map_err(|_| SaslError::NotUtf8)?;
                if c.server_signature.is_none() {
                    c.client_final(server).map(|t| Step::Send(t.into_bytes()))
                } else {
                    c.verify_server_final(server).map(|()| Step::Done)
                }
            }
        }
    }
}

/// 32 printable characters without a comma, as librdkafka's nonce.
fn client_nonce() -> String {
    let mut raw = [0u8; 32];
    if openssl::rand::rand_bytes(&mut raw).is_err() {
        // OpenSSL's generator failing is near impossible; a nonce from the
        // clock still makes the exchange work (its secrecy is not needed).
        let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
        raw.iter_mut().enumerate().for_each(|(i, b)| *b = (t >> (i % 16 * 8)) as u8 ^ i as u8);
    }
    // 0x2d..=0x7e: 82 characters, none of them ','.
    raw.iter().map(|b| char::from(0x2d + b % 82)).collect()
}

fn hmac<D: EagerHash>(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut m = <Hmac<D> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    m.update(msg);
    m.finalize().into_bytes().to_vec()
}

fn salted<D: EagerHash>(password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
    let mut out = vec![0u8; <D as Digest>::output_size()];
    pbkdf2::pbkdf2_hmac::<D>(password, salt, iterations, &mut out);
    out
}

/// The keys SCRAM derives from a password: (ClientKey, ServerKey).
fn keys(hash: ScramHash, password: &str, salt: &[u8], iterations: u32) -> (Vec<u8>, Vec<u8>) {
    fn both<D: EagerHash>(password: &str, salt: &[u8], i: u32) -> (Vec<u8>, Vec<u8>) {
        let salted = salted::<D>(password.as_bytes(), salt, i);
        (hmac::<D>(&salted, b"Client Key"), hmac::<D>(&salted, b"Server Key"))
    }
    match hash {
        ScramHash::Sha256 => both::<Sha256>(password, salt, iterations),
        ScramHash::Sha512 => both::<Sha512>(password, salt, iterations),
    }
}

fn mac(hash: ScramHash, key: &[u8], msg: &[u8]) -> Vec<u8> {
    match hash {
        ScramHash::Sha256 => hmac::<Sha256>(key, msg),
        ScramHash::Sha512 => hmac::<Sha512>(key, msg),
    }
}

fn digest(hash: ScramHash, data: &[u8]) -> Vec<u8> {
    match hash {
        ScramHash::Sha256 => Sha256::digest(data).to_vec(),
        ScramHash::Sha512 => Sha512::digest(data).to_vec(),
    }
}

/// `=` → `=3D`, `,` → `=2C` (RFC 5802 saslname), as librdkafka does.
fn saslname(user: &str) -> String {
    user.replace('=', "=3D").replace(',', "=2C")
}

/// The value of `key=` in a SCRAM message.
fn attr(msg: &str, key: char) -> Option<&str> {
    msg.split(',').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// More iterations than any broker uses (Kafka allows up to 16384): a
/// broker asking for more would keep the proof busy for seconds.
const MAX_ITERATIONS: u32 = 100_000;

/// The client side of SCRAM (no channel binding, no SASLprep: librdkafka's
/// and Kafka's behaviour).
pub(crate) struct ScramClient {
    hash: ScramHash,
    password: String,
    nonce: String,
    /// client-first-message-bare
    bare: String,
    /// Set by the client-final: what the server must prove it knows.
    server_signature: Option<Vec<u8>>,
}

impl ScramClient {
    pub(crate) fn new(hash: ScramHash, user: &str, password: &str, nonce: &str) -> ScramClient {
        ScramClient {
            hash,
            password: password.to_owned(),
            nonce: nonce.to_owned(),
            bare: format!("n={},r={nonce}", saslname(user)),
            server_signature: None,
        }
    }

    pub(crate) fn client_first(&self) -> String {
        format!("n,,{}", self.bare)
    }

    pub(crate) fn client_final(&mut self, server_first: &str) -> Result<String, SaslError> {
        if let Some(e) = attr(server_first, 'e') {
            return Err(SaslError::Refused(e.to_owned()));
        }
        let nonce = attr(server_first, 'r').ok_or(SaslError::Malformed("the broker's first message has no nonce"))?;
        if !nonce.starts_with(&self.nonce) || nonce.len() <= self.nonce.len() {
            return Err(SaslError::NonceMismatch);
        }
        let salt = attr(server_first, 's')
            .and_then(|s| B64.decode(s).ok())
            .ok_or(SaslError::Malformed("the broker's first message has no valid salt"))?;
        let iterations: u32 = attr(server_first, 'i')
            .and_then(|i| i.parse().ok())
            .filter(|i| (1..=MAX_ITERATIONS).contains(i))
            .ok_or(SaslError::Iterations)?;
        let (client_key, server_key) = keys(self.hash, &self.password, &salt, iterations);
        let stored_key = digest(self.hash, &client_key);
        let without_proof = format!("c=biws,r={nonce}"); // biws = base64("n,,")
        let auth = format!("{},{server_first},{without_proof}", self.bare);
        let signature = mac(self.hash, &stored_key, auth.as_bytes());
        let proof: Vec<u8> = client_key.iter().zip(&signature).map(|(a, b)| a ^ b).collect();
        self.server_signature = Some(mac(self.hash, &server_key, auth.as_bytes()));
        Ok(format!("{without_proof},p={}", B64.encode(proof)))
    }

    pub(crate) fn verify_server_final(&self, server_final: &str) -> Result<(), SaslError> {
        if let Some(e) = attr(server_final, 'e') {
            return Err(SaslError::Refused(e.to_owned()));
        }
        let v = attr(server_final, 'v')
            .and_then(|v| B64.decode(v).ok())
            .ok_or(SaslError::Malformed("the broker's final message has no valid signature"))?;
        if Some(&v) == self.server_signature.as_ref() { Ok(()) } else { Err(SaslError::SignatureMismatch) }
    }
}

/// Why a SASL exchange failed on the client's side: what the broker sent
/// (never a secret of ours).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SaslError {
    /// PLAIN or OAUTHBEARER: the broker answered where success is empty
    /// (OAUTHBEARER's error is a JSON status, reported at once).
    #[error("the broker answered {0}")]
    Answered(String),
    /// SCRAM: the broker's message is not UTF-8.
    #[error("the broker's SCRAM message is not UTF-8")]
    NotUtf8,
    /// SCRAM: the broker refused (its `e=` attribute).
    #[error("the broker refused: {0}")]
    Refused(String),
    /// SCRAM: the broker's message lacks an attribute (which one, said).
    #[error("{0}")]
    Malformed(&'static str),
    /// SCRAM: the broker's nonce does not start with ours.
    #[error("the broker's nonce does not extend the client's")]
    NonceMismatch,
    /// SCRAM: the broker's iteration count is missing or out of bounds.
    #[error("the broker's iteration count is missing or not within 1..={MAX_ITERATIONS}")]
    Iterations,
    /// SCRAM: the broker's signature is not the one our password gives.
    #[error("the broker's signature does not match: it does not know this user's password")]
    SignatureMismatch,
}

/// What is wrong with a `sasl.oauthbearer.config` value: the key at
/// fault, never a value (the property is a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JwtConfigError {
    /// An entry that is not `key=value`.
    #[error("an entry without '=' (expected key=value)")]
    NoEquals,
    /// `lifeSeconds` is not a positive number.
    #[error("lifeSeconds is not a positive number")]
    LifeSeconds,
    /// A key librdkafka's unsecured JWT does not have.
    #[error("unknown key '{0}'")]
    UnknownKey(String),
    /// No `principal=`.
    #[error("no principal=")]
    NoPrincipal,
}

/// librdkafka's unsecured JWT (`sasl.oauthbearer.config`:
/// `principal=… [principalClaimName=…] [scope=a,b] [scopeClaimName=…]
/// [lifeSeconds=…] [extension_NAME=value]…`).
#[derive(Clone, Debug)]
pub(crate) struct UnsecuredJwt {
    principal: String,
    principal_claim: String,
    scope: Vec<String>,
    scope_claim: String,
    life_seconds: u64,
    extensions: Vec<(String, String)>,
}

impl UnsecuredJwt {
    /// Parses the `sasl.oauthbearer.config` value. The error names the
    /// offending key, never a value (the property is a secret).
    pub(crate) fn parse(config: &str) -> Result<UnsecuredJwt, JwtConfigError> {
        let mut jwt = UnsecuredJwt {
            principal: String::new(),
            principal_claim: "sub".into(),
            scope: Vec::new(),
            scope_claim: "scope".into(),
            life_seconds: 3600,
            extensions: Vec::new(),
        };
        for item in config.split_whitespace() {
            let Some((key, value)) = item.split_once('=') else {
                return Err(JwtConfigError::NoEquals);
            };
            match key {
                "principal" => jwt.principal = value.to_owned(),
                "principalClaimName" => jwt.principal_claim = value.to_owned(),
                "scope" => jwt.scope = value.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect(),
                "scopeClaimName" => jwt.scope_claim = value.to_owned(),
                "lifeSeconds" => {
                    jwt.life_seconds = value.parse().ok().filter(|s| *s > 0).ok_or(JwtConfigError::LifeSeconds)?
                }
                _ => match key.strip_prefix("extension_") {
                    Some(name) if !name.is_empty() => jwt.extensions.push((name.to_owned(), value.to_owned())),
                    _ => return Err(JwtConfigError::UnknownKey(key.to_owned())),
                },
            }
        }
        if jwt.principal.is_empty() {
            return Err(JwtConfigError::NoPrincipal);
        }
        Ok(jwt)
    }

    /// `n,,\x01auth=Bearer <jws>\x01[key=value\x01]…\x01`
    fn client_first(&self, now: SystemTime) -> String {
        let secs = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
        let mut claims = format!(
            "{{{}:{},\"iat\":{secs:.3},\"exp\":{:.3}",
            json_str(&self.principal_claim),
            json_str(&self.principal),
            secs + self.life_seconds as f64
        );
        if !self.scope.is_empty() {
            let scopes: Vec<String> = self.scope.iter().map(|s| json_str(s)).collect();
            claims.push_str(&format!(",{}:[{}]", json_str(&self.scope_claim), scopes.join(",")));
        }
        claims.push('}');
        let jws = format!("{}.{}.", B64URL.encode(br#"{"alg":"none"}"#), B64URL.encode(claims));
        let mut token = format!("n,,\x01auth=Bearer {jws}\x01");
        for (k, v) in &self.extensions {
            token.push_str(&format!("{k}={v}\x01"));
        }
        token.push('\x01');
        token
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What a broker keeps per user and SCRAM mechanism, and its side of the
/// exchange: for the test server only.
#[cfg(test)]
pub(crate) mod server {
    use super::*;

    pub(crate) struct Credential {
        pub hash: ScramHash,
        pub salt: Vec<u8>,
        pub iterations: u32,
        stored_key: Vec<u8>,
        server_key: Vec<u8>,
    }

    impl Credential {
        pub(crate) fn new(hash: ScramHash, password: &str, salt: &[u8], iterations: u32) -> Credential {
            let (client_key, server_key) = keys(hash, password, salt, iterations);
            Credential { hash, salt: salt.to_vec(), iterations, stored_key: digest(hash, &client_key), server_key }
        }

        /// The server-first message for a client-first, with the server's nonce part.
        pub(crate) fn server_first(&self, client_first: &str, server_nonce: &str) -> Result<(String, String), String> {
            let bare = client_first.strip_prefix("n,,").ok_or("no gs2 header")?;
            let cnonce = attr(bare, 'r').ok_or("no nonce")?;
            Ok((
                bare.to_owned(),
                format!("r={cnonce}{server_nonce},s={},i={}", B64.encode(&self.salt), self.iterations),
            ))
        }

        /// Checks a client-final; returns the server-final (`v=…`).
        pub(crate) fn verify(&self, bare: &str, server_first: &str, client_final: &str) -> Result<String, String> {
            let (without_proof, proof) = client_final.rsplit_once(",p=").ok_or("no proof")?;
            if attr(without_proof, 'r') != attr(server_first, 'r') {
                return Err("Invalid client nonce".into());
            }
            let proof = B64.decode(proof).map_err(|e| e.to_string())?;
            let auth = format!("{bare},{server_first},{without_proof}");
            let signature = mac(self.hash, &self.stored_key, auth.as_bytes());
            let client_key: Vec<u8> = proof.iter().zip(&signature).map(|(a, b)| a ^ b).collect();
            if digest(self.hash, &client_key) != self.stored_key {
                return Err("invalid credentials".into());
            }
            Ok(format!("v={}", B64.encode(mac(self.hash, &self.server_key, auth.as_bytes()))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677, section 3.
    #[test]
    fn scram_sha_256_matches_the_rfc_7677_example() {
        let mut c = ScramClient::new(ScramHash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(c.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        assert_eq!(
            c.client_final(first).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        c.verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=").unwrap();
        assert!(c.verify_server_final("v=AAAA").is_err(), "a server that does not know the password");
        assert!(c.verify_server_final("e=other-error").unwrap_err().to_string().contains("other-error"));

        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let cred = server::Credential::new(ScramHash::Sha256, "pencil", &salt, 4096);
        let (bare, sf) = cred.server_first(&c.client_first(), "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0").unwrap();
        assert_eq!(sf, first);
        let mut again = ScramClient::new(ScramHash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        let cf = again.client_final(first).unwrap();
        assert_eq!(cred.verify(&bare, &sf, &cf).unwrap(), "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
    }

    #[test]
    fn scram_sha_512_round_trips_and_a_wrong_password_fails() {
        let cred = server::Credential::new(ScramHash::Sha512, "s3cret", b"0123456789abcdef", 4096);
        for (password, ok) in [("s3cret", true), ("wrong", false)] {
            let mut c = ScramClient::new(ScramHash::Sha512, "al=ice,", password, "abcdefgh");
            assert_eq!(c.client_first(), "n,,n=al=3Dice=2C,r=abcdefgh");
            let (bare, sf) = cred.server_first(&c.client_first(), "XYZ").unwrap();
            let cf = c.client_final(&sf).unwrap();
            match cred.verify(&bare, &sf, &cf) {
                Ok(v) => {
                    assert!(ok);
                    c.verify_server_final(&v).unwrap();
                }
                Err(e) => assert!(!ok, "{e}"),
            }
        }
    }

    #[test]
    fn a_bad_server_first_is_an_error_not_a_panic() {
        let mut c = ScramClient::new(ScramHash::Sha256, "u", "p", "abc");
        for bad in [
            "",
            "r=abc,s=AAAA,i=4096",
            "r=xyzdef,s=AAAA,i=4096",
            "r=abcd,s=!!,i=4096",
            "r=abcd,s=AAAA",
            "r=abcd,s=AAAA,i=0",
            "r=abcd,s=AAAA,i=99999999999",
            "e=unknown-user",
        ] {
            assert!(c.client_final(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nonces_are_printable_without_commas_and_differ() {
        let (a, b) = (client_nonce(), client_nonce());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| ('\x2d'..='\x7e').contains(&c) && c != ','));
        assert_ne!(a, b);
    }

    #[test]
    fn plain_sends_the_password_once_and_is_done_on_an_empty_answer() {
        let m = Mechanism::Plain { user: "u".into(), password: "p".into() };
        let mut e = m.start();
        assert_eq!(e.first(), b"\0u\0p");
        assert_eq!(e.next(b"").unwrap(), Step::Done);
    }

    #[test]
    fn the_unsecured_jwt_is_librdkafkas() {
        let jwt = UnsecuredJwt::parse("principal=admin scope=a,b extension_traceId=123 lifeSeconds=60").unwrap();
        let t = jwt.client_first(UNIX_EPOCH + std::time::Duration::from_secs(1000));
        let (head, rest) = t.split_once("auth=Bearer ").unwrap();
        assert_eq!(head, "n,,\x01");
        let (jws, tail) = rest.split_once('\x01').unwrap();
        assert_eq!(tail, "traceId=123\x01\x01");
        let parts: Vec<&str> = jws.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(B64URL.decode(parts[0]).unwrap(), br#"{"alg":"none"}"#);
        assert_eq!(
            String::from_utf8(B64URL.decode(parts[1]).unwrap()).unwrap(),
            r#"{"sub":"admin","iat":1000.000,"exp":1060.000,"scope":["a","b"]}"#
        );
        assert_eq!(parts[2], "");
        assert!(UnsecuredJwt::parse("scope=a").unwrap_err().to_string().contains("principal"));
        assert!(UnsecuredJwt::parse("principal=a bogus=1").unwrap_err().to_string().contains("bogus"));
        assert!(UnsecuredJwt::parse("principal=a lifeSeconds=x").is_err());
    }
}
