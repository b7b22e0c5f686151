//! The heartbeat record: what a member writes to its role's partition and
//! reads back as evidence that it still owns the log.
//!
//! Encoding (big-endian, no delimiters so any member name is legal):
//!
//! ```text
//! version 2: "NELI" | 2 | role u32 | term u64 | seq u64 | sent_at_ms u64
//!            | leads u8 (0 or 1) | token u64 | name_len u16 | name (UTF-8)
//! version 1: "NELI" | 1 | role u32 | term u64 | seq u64 | sent_at_ms u64
//!            | name_len u16 | name (UTF-8)
//! ```
//!
//! Members write version 2: `leads` says whether the sender held a live
//! lease of the role when it sent the heartbeat, and `token` is that term's
//! fencing token (what `neli watch` reports, so it shows the core's own
//! tokens, never a guess). Version 1 (written by neli before version 2 existed) is
//! still read, as a heartbeat that claims no lease.
//!
//! Decoding never panics: anything else on the topic (a foreign writer's
//! bytes, a future version) is a [`DecodeError`] the core counts and ignores.

use super::Token;
use super::time::Time;

const MAGIC: &[u8; 4] = b"NELI";
const VERSION: u8 = 2;
/// Bytes before the name in version 1.
const FIXED_LEN_V1: usize = 4 + 1 + 4 + 8 + 8 + 8 + 2;
/// Bytes before the name in version 2.
const FIXED_LEN: usize = FIXED_LEN_V1 + 1 + 8;

/// One heartbeat as written by a member.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Heartbeat {
    /// The role this heartbeat claims.
    pub role: u32,
    /// The writer's term: the group generation of the assignment it holds.
    pub term: u64,
    /// Per-member sequence number, increasing with every heartbeat sent.
    pub seq: u64,
    /// The writer's monotonic clock at the moment it produced the record.
    pub sent_at: Time,
    /// The fencing token of the term the writer led the role in when it
    /// sent this heartbeat (a live lease); `None` while it is a candidate.
    pub lease: Option<Token>,
    /// The writer's instance name.
    pub name: String,
}

/// Why a record is not a heartbeat we understand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes than a heartbeat's fixed part (the count given).
    #[error("record too short for a heartbeat ({0} bytes)")]
    TooShort(usize),
    /// Not a NELI record at all.
    #[error("record does not start with the NELI magic")]
    BadMagic,
    /// A format version this build does not read.
    #[error("unsupported heartbeat version {0}")]
    UnsupportedVersion(u8),
    /// The name's declared length disagrees with the record's.
    #[error("heartbeat name length {declared} does not match the {actual} bytes present")]
    BadLength {
        /// The length the record declares.
        declared: usize,
        /// The bytes it has.
        actual: usize,
    },
    /// The member name is not UTF-8.
    #[error("heartbeat name is not UTF-8")]
    NameNotUtf8,
    /// The lease flag byte is neither 0 nor 1.
    #[error("heartbeat lease flag {0} is neither 0 nor 1")]
    BadLeaseFlag(u8),
}

impl Heartbeat {
    /// The record payload for this heartbeat.
    pub fn encode(&self) -> Vec<u8> {
        let name = self.name.as_bytes();
        // Names longer than u16::MAX are refused by config validation; clamp
        // defensively so encode stays total.
        let name = &name[..name.len().min(u16::MAX as usize)];
        let mut out = Vec::with_capacity(FIXED_LEN + name.len());
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.extend_from_slice(&self.role.to_be_bytes());
        out.extend_from_slice(&self.term.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.sent_at.as_millis().to_be_bytes());
        out.push(u8::from(self.lease.is_some()));
        out.extend_from_slice(&self.lease.map_or(0, |t| t.0).to_be_bytes());
        out.extend_from_slice(&(name.len() as u16).to_be_bytes());
        out.extend_from_slice(name);
        out
    }

    /// Parses a record payload.
    pub fn decode(bytes: &[u8]) -> Result<Heartbeat, DecodeError> {
        if bytes.len() < 5 {
            return Err(DecodeError::TooShort(bytes.len()));
        }
        if &bytes[..4] != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let version = bytes[4];
        let fixed = match version {
            1 => FIXED_LEN_V1,
            2 => FIXED_LEN,
            v => return Err(DecodeError::UnsupportedVersion(v)),
        };
        if bytes.len() < fixed {
            return Err(DecodeError::TooShort(bytes.len()));
        }
        let mut r = Reader { bytes, at: 5 };
        let role = u32::from_be_bytes(r.take());
        let term = u64::from_be_bytes(r.take());
        let seq = u64::from_be_bytes(r.take());
        let sent_at = Time::from_millis(u64::from_be_bytes(r.take()));
        let lease = if version == 1 {
            None
        } else {
            let [flag] = r.take::<1>();
            let token = Token(u64::from_be_bytes(r.take()));
            match flag {
                0 => None,
                1 => Some(token),
                other => return Err(DecodeError::BadLeaseFlag(other)),
            }
        };
        let declared = u16::from_be_bytes(r.take()) as usize;
        let rest = &bytes[fixed..];
        if rest.len() != declared {
            return Err(DecodeError::BadLength { declared, actual: rest.len() });
        }
        let name = std::str::from_utf8(rest).map_err(|_| DecodeError::NameNotUtf8)?.to_owned();
        Ok(Heartbeat { role, term, seq, sent_at, lease, name })
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// Takes the next `N` bytes; callers checked the length beforehand.
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(&self.bytes[self.at..self.at + N]);
        self.at += N;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trips() {
        let hb = Heartbeat {
            role: 3,
            term: 7,
            seq: 42,
            sent_at: Time::from_millis(1234),
            lease: Some(Token(40)),
            name: "host_1_2".into(),
        };
        assert_eq!(Heartbeat::decode(&hb.encode()), Ok(hb));
    }

    // A version-1 heartbeat (no lease fields) still reads, as one that
    // claims no lease.
    #[test]
    fn reads_version_1() {
        let mut v1 = b"NELI\x01".to_vec();
        v1.extend_from_slice(&3u32.to_be_bytes());
        v1.extend_from_slice(&7u64.to_be_bytes());
        v1.extend_from_slice(&42u64.to_be_bytes());
        v1.extend_from_slice(&1234u64.to_be_bytes());
        v1.extend_from_slice(&2u16.to_be_bytes());
        v1.extend_from_slice(b"m1");
        let want =
            Heartbeat { role: 3, term: 7, seq: 42, sent_at: Time::from_millis(1234), lease: None, name: "m1".into() };
        assert_eq!(Heartbeat::decode(&v1), Ok(want));
    }

    /// No member writes one (a member's name is never empty), but a
    /// payload of exactly the fixed part is well formed, not too short.
    #[test]
    fn a_heartbeat_with_an_empty_name_round_trips() {
        let hb =
            Heartbeat { role: 1, term: 2, seq: 3, sent_at: Time::from_millis(4), lease: None, name: String::new() };
        assert_eq!(hb.encode().len(), FIXED_LEN);
        assert_eq!(Heartbeat::decode(&hb.encode()), Ok(hb));
    }

    #[test]
    fn rejects_foreign_bytes_by_reason() {
        assert_eq!(Heartbeat::decode(b""), Err(DecodeError::TooShort(0)));
        assert_eq!(Heartbeat::decode(b"hello world"), Err(DecodeError::BadMagic));
        assert_eq!(Heartbeat::decode(b"NELI\x03rest"), Err(DecodeError::UnsupportedVersion(3)));
        assert_eq!(Heartbeat::decode(b"NELI\x02rest"), Err(DecodeError::TooShort(9)));
        // Five bytes are enough to read the magic and the version.
        assert_eq!(Heartbeat::decode(b"NELI\x07"), Err(DecodeError::UnsupportedVersion(7)));
        let hb = Heartbeat { role: 0, term: 1, seq: 1, sent_at: Time::ZERO, lease: None, name: "ab".into() };
        let mut bytes = hb.encode();
        bytes.push(b'c');
        assert_eq!(Heartbeat::decode(&bytes), Err(DecodeError::BadLength { declared: 2, actual: 3 }));
        let mut bytes = hb.encode();
        bytes[FIXED_LEN_V1 - 2] = 7;
        assert_eq!(Heartbeat::decode(&bytes), Err(DecodeError::BadLeaseFlag(7)));
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Heartbeat::decode(&bytes);
        }

        #[test]
        fn encode_decode_is_identity(role: u32, term: u64, seq: u64, ms: u64, lease: Option<u64>, name in "\\PC{0,40}") {
            let hb = Heartbeat { role, term, seq, sent_at: Time::from_millis(ms), lease: lease.map(Token), name };
            prop_assert_eq!(Heartbeat::decode(&hb.encode()), Ok(hb));
        }
    }
}
