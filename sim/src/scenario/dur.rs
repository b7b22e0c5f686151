//! Durations in scenario files: a number with a unit (`"250ms"`, `"3s"`,
//! `"1m"`), written back the same way.

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
    pub fn parse(text: &str) -> Result<Dur, String> {
        let t = text.trim();
        let (neg, t) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: i64 = num.parse().map_err(|_| {
            format!("invalid duration {text:?}: expected a number with a unit, e.g. \"250ms\", \"3s\", \"1m\"")
        })?;
        let scale = match unit {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            _ => return Err(format!("invalid duration {text:?}: unit must be ms, s or m")),
        };
        let ms = n.checked_mul(scale).ok_or_else(|| format!("duration {text:?} is too large"))?;
        Ok(Dur(if neg { -ms } else { ms }))
    }
}

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
