//! Durations in scenario files, in the grammar of every neli input
//! (`neli::duration`: `"250ms"`, `"3s"`, `"1m"`, `"2h"`), written back as
//! whole seconds or milliseconds.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A duration in milliseconds; only `by` of a clock step may be negative
/// (`"-2s"`), everything else is checked positive where it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dur(pub i64);

impl Dur {
    /// Milliseconds, negative values as 0.
    pub fn ms(self) -> u64 {
        u64::try_from(self.0).unwrap_or(0)
    }
    pub fn duration(self) -> Duration {
        Duration::from_millis(self.ms())
    }
    /// Reads the one duration grammar of every neli input
    /// ([`neli::duration`]), a leading `-` allowed.
    pub fn parse(text: &str) -> Result<Dur, BadDuration> {
        neli::duration::parse_signed_ms(text).map(Dur).map_err(BadDuration)
    }
}

/// A duration that does not read ([`Dur::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration: {0}")]
pub struct BadDuration(#[source] pub neli::duration::DurationError);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        let s = String::deserialize(d)?;
        Dur::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 % 1000 == 0 { write!(f, "{}s", self.0 / 1000) } else { write!(f, "{}ms", self.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // What a written scenario file says (`Display`) reads back as the
        // same duration, negative ones (a clock step back) too.
        #[test]
        fn display_then_parse_is_the_identity(ms in any::<i64>()) {
            prop_assert_eq!(Dur::parse(&Dur(ms).to_string()), Ok(Dur(ms)));
        }
    }

    #[test]
    fn decimals_and_compounds_read_as_in_every_input() {
        assert_eq!(Dur::parse("1.5s"), Ok(Dur(1500)));
        assert_eq!(Dur::parse("1m30s"), Ok(Dur(90_000)));
        assert_eq!(Dur::parse("-0.5s"), Ok(Dur(-500)));
        assert_eq!(Dur(90_000).to_string(), "90s", "written as before");
        assert_eq!(Dur(1500).to_string(), "1500ms", "written as before");
        let err = Dur::parse("1.0005s").unwrap_err().to_string();
        assert!(err.contains("finer than a millisecond"), "{err}");
    }
}
