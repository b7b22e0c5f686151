//! A check of an answer's array lengths before the codec decodes it.
//!
//! The `kafka-protocol` decoders allocate an array's capacity from the
//! length on the wire, so a broker (or anything in between) answering a
//! length of 2^32 makes the allocation fail, which aborts the process: no
//! error, no panic to catch. This walks the few answers the proof
//! connection reads, at the version asked for, and refuses any array that
//! claims more entries than bytes are left. It checks lengths only; the
//! codec does the decoding.

use kafka_protocol::messages::ApiKey;

struct Walk<'a> {
    b: &'a [u8],
    flexible: bool,
}

impl<'a> Walk<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.b.len() < n {
            return None;
        }
        let (head, tail) = self.b.split_at(n);
        self.b = tail;
        Some(head)
    }

    fn i16(&mut self) -> Option<i16> {
        self.take(2).map(|b| i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Option<i32> {
        self.take(4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn varint(&mut self) -> Option<u32> {
        let mut v: u32 = 0;
        for shift in (0..35).step_by(7) {
            let byte = self.take(1)?[0];
            v |= u32::from(byte & 0x7f).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A length: i16/i32 in the classic encodings (negative: null), a
    /// varint minus one in the flexible ones (0: null).
    fn len(&mut self, classic_i32: bool) -> Option<usize> {
        if self.flexible {
            Some((self.varint()? as usize).saturating_sub(1))
        } else if classic_i32 {
            Some(self.i32()?.max(0) as usize)
        } else {
            Some(self.i16()?.max(0) as usize)
        }
    }

    fn str(&mut self) -> Option<()> {
        let n = self.len(false)?;
        self.take(n).map(drop)
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        self.take(n).map(drop)
    }

    /// An array whose length is at most the bytes left (every entry takes
    /// at least one), each entry walked by `entry`.
    fn array(&mut self, mut entry: impl FnMut(&mut Walk<'a>) -> Option<()>) -> Option<()> {
        let n = self.len(true)?;
        if n > self.b.len() {
            return None;
        }
        for _ in 0..n {
            entry(self)?;
        }
        Some(())
    }

    /// The tagged fields of a flexible structure; `known` walks the ones
    /// the codec decodes into structures.
    fn tags(&mut self, mut known: impl FnMut(u32, &mut Walk<'a>) -> Option<()>) -> Option<()> {
        if !self.flexible {
            return Some(());
        }
        let n = self.varint()? as usize;
        if n > self.b.len() {
            return None;
        }
        for _ in 0..n {
            let tag = self.varint()?;
            let size = self.varint()? as usize;
            let mut inner = Walk { b: self.take(size)?, flexible: true };
            known(tag, &mut inner)?;
        }
        Some(())
    }

    fn no_tags(&mut self) -> Option<()> {
        self.tags(|_, _| Some(()))
    }
}

/// Whether `body` (after the response header) of `api` at `version` has
/// array lengths the codec can allocate. `flexible` is whether that
/// version uses the compact encodings.
pub(super) fn arrays_fit(api: ApiKey, version: i16, flexible: bool, body: &[u8]) -> bool {
    let mut w = Walk { b: body, flexible };
    let walked = match api {
        ApiKey::ApiVersions => api_versions(&mut w, version),
        ApiKey::FindCoordinator => find_coordinator(&mut w, version),
        ApiKey::OffsetCommit => offset_commit(&mut w, version),
        ApiKey::SaslHandshake => w.i16().and_then(|_| w.array(|w| w.str())),
        // No arrays (error, message, bytes, session lifetime).
        ApiKey::SaslAuthenticate => Some(()),
        _ => None,
    };
    walked.is_some()
}

fn api_versions(w: &mut Walk<'_>, v: i16) -> Option<()> {
    w.skip(2)?; // error_code
    w.array(|w| {
        w.skip(6)?;
        w.no_tags()
    })?;
    if v >= 1 {
        w.skip(4)?; // throttle_time_ms
    }
    w.tags(|tag, w| match tag {
        // supported_features / finalized_features: (name, i16, i16, tags)
        0 | 2 => w.array(|w| {
            w.str()?;
            w.skip(4)?;
            w.no_tags()
        }),
        _ => Some(()),
    })
}

fn find_coordinator(w: &mut Walk<'_>, v: i16) -> Option<()> {
    if v >= 4 {
        w.skip(4)?; // throttle_time_ms
        w.array(|w| {
            w.str()?; // key
            w.skip(4)?; // node_id
            w.str()?; // host
            w.skip(6)?; // port, error_code
            w.str()?; // error_message
            w.no_tags()
        })?;
        w.no_tags()
    } else {
        // No arrays below v4 (the strings are checked by the codec).
        Some(())
    }
}

fn offset_commit(w: &mut Walk<'_>, v: i16) -> Option<()> {
    if v >= 3 {
        w.skip(4)?; // throttle_time_ms
    }
    w.array(|w| {
        w.str()?; // name
        w.array(|w| {
            w.skip(6)?; // partition_index, error_code
            w.no_tags()
        })?;
        w.no_tags()
    })?;
    w.no_tags()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_longer_than_the_answer_is_refused() {
        // OffsetCommit v9: throttle, compact array of 2^32 - 2 topics.
        assert!(!arrays_fit(ApiKey::OffsetCommit, 9, true, &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f]));
        // v2: an i32 count of 2^31 - 1.
        assert!(!arrays_fit(ApiKey::OffsetCommit, 2, false, &[0x7f, 0xff, 0xff, 0xff]));
        // v9, one topic "t" with one partition, no tags.
        assert!(arrays_fit(ApiKey::OffsetCommit, 9, true, &[0, 0, 0, 0, 2, 2, b't', 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
        // v2, one topic "t" with one partition.
        assert!(arrays_fit(ApiKey::OffsetCommit, 2, false, &[0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
        assert!(!arrays_fit(ApiKey::SaslHandshake, 1, false, &[0, 0, 0x7f, 0xff, 0xff, 0xff]));
        // ApiVersions v3: no keys, throttle, a supported_features tag claiming 2^31 entries.
        assert!(!arrays_fit(
            ApiKey::ApiVersions,
            3,
            true,
            &[0, 0, 1, 0, 0, 0, 0, 1, 0, 5, 0xff, 0xff, 0xff, 0xff, 0x07]
        ));
        assert!(arrays_fit(ApiKey::ApiVersions, 3, true, &[0, 0, 1, 0, 0, 0, 0, 0]));
    }
}
