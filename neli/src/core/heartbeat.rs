//! The heartbeat record: what a member writes to its role's partition and
//! reads back as evidence that it still owns the log.
//!
//! Encoding (version 1, big-endian, no delimiters so any member name is legal):
//!
//! ```text
//! "NELI" | version u8 = 1 | role u32 | term u64 | seq u64 | sent_at_ms u64
//!        | name_len u16 | name (UTF-8)
//! ```
//!
//! Decoding never panics: anything else on the topic (a foreign writer's
//! bytes, a future version) is a [`DecodeError`] the core counts and ignores.

use super::time::Time;

const MAGIC: &[u8; 4] = b"NELI";
const VERSION: u8 = 1;
const FIXED_LEN: usize = 4 + 1 + 4 + 8 + 8 + 8 + 2;

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
    /// The writer's instance name.
    pub name: String,
}

/// Why a record is not a heartbeat we understand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("record too short for a heartbeat ({0} bytes)")]
    TooShort(usize),
    #[error("record does not start with the NELI magic")]
    BadMagic,
    #[error("unsupported heartbeat version {0}")]
    UnsupportedVersion(u8),
    #[error("heartbeat name length {declared} does not match the {actual} bytes present")]
    BadLength { declared: usize, actual: usize },
    #[error("heartbeat name is not UTF-8")]
    NameNotUtf8,
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
        if bytes[4] != VERSION {
            return Err(DecodeError::UnsupportedVersion(bytes[4]));
        }
        if bytes.len() < FIXED_LEN {
            return Err(DecodeError::TooShort(bytes.len()));
        }
        let mut r = Reader { bytes, at: 5 };
        let role = u32::from_be_bytes(r.take());
        let term = u64::from_be_bytes(r.take());
        let seq = u64::from_be_bytes(r.take());
        let sent_at = Time::from_millis(u64::from_be_bytes(r.take()));
        let declared = u16::from_be_bytes(r.take()) as usize;
        let rest = &bytes[FIXED_LEN..];
        if rest.len() != declared {
            return Err(DecodeError::BadLength { declared, actual: rest.len() });
        }
        let name = std::str::from_utf8(rest).map_err(|_| DecodeError::NameNotUtf8)?.to_owned();
        Ok(Heartbeat { role, term, seq, sent_at, name })
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
        let hb = Heartbeat { role: 3, term: 7, seq: 42, sent_at: Time::from_millis(1234), name: "host_1_2".into() };
        assert_eq!(Heartbeat::decode(&hb.encode()), Ok(hb));
    }

    #[test]
    fn rejects_foreign_bytes_by_reason() {
        assert_eq!(Heartbeat::decode(b""), Err(DecodeError::TooShort(0)));
        assert_eq!(Heartbeat::decode(b"hello world"), Err(DecodeError::BadMagic));
        assert_eq!(Heartbeat::decode(b"NELI\x02rest"), Err(DecodeError::UnsupportedVersion(2)));
        let mut bytes = Heartbeat { role: 0, term: 1, seq: 1, sent_at: Time::ZERO, name: "ab".into() }.encode();
        bytes.push(b'c');
        assert_eq!(Heartbeat::decode(&bytes), Err(DecodeError::BadLength { declared: 2, actual: 3 }));
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Heartbeat::decode(&bytes);
        }

        #[test]
        fn encode_decode_is_identity(role: u32, term: u64, seq: u64, ms: u64, name in "\\PC{0,40}") {
            let hb = Heartbeat { role, term, seq, sent_at: Time::from_millis(ms), name };
            prop_assert_eq!(Heartbeat::decode(&hb.encode()), Ok(hb));
        }
    }
}
