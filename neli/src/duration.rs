//! The one duration grammar of every neli and neli-lab input: CLI flags
//! (`--heartbeat-timeout 1s`), scenario files (`duration = "30s"`) and
//! budgets (`--time-budget 2h`) all read durations here, so a value that
//! works in one place works in all of them.
//!
//! A duration is a whole number followed by a unit: `ms`, `s`, `m` or `h`
//! (`250ms`, `3s`, `10m`, `2h`). A bare number is refused (is `5` seconds or
//! milliseconds?), as is a fraction (`1.5s`: write `1500ms`) and anything that
//! does not fit in an `i64` of milliseconds. Only [`parse_signed_ms`] accepts
//! a leading `-` (a clock step backwards in a scenario file).
//!
//! ```
//! use std::time::Duration;
//! assert_eq!(neli::duration::parse("250ms"), Ok(Duration::from_millis(250)));
//! assert_eq!(neli::duration::parse("2h"), Ok(Duration::from_secs(7200)));
//! assert_eq!(neli::duration::parse_signed_ms("-2s"), Ok(-2000));
//! assert!(neli::duration::parse("5").unwrap_err().to_string().contains("no unit"));
//! ```

use std::fmt;
use std::time::Duration;

/// Why a text is not a duration; its `Display` quotes the text and says what
/// was expected, so callers prefix only the field or flag it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationError {
    /// No digits where the number should be (`"soon"`, `""`, `"ms"`).
    NotANumber(String),
    /// A number without a unit (`"5"`).
    NoUnit(String),
    /// A unit other than `ms`, `s`, `m`, `h` (`"5sec"`, `"1.5s"`).
    UnknownUnit {
        /// The whole text.
        text: String,
        /// What stood where the unit should be.
        unit: String,
    },
    /// More milliseconds than an `i64` holds.
    TooLarge(String),
    /// A `-` where only non-negative durations are accepted.
    Negative(String),
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::NotANumber(t) => {
                write!(f, "{t:?} is not a duration: expected a whole number with a unit, e.g. 250ms, 3s, 10m, 2h")
            }
            DurationError::NoUnit(t) => write!(f, "{t:?} has no unit: write e.g. {t}ms or {t}s"),
            DurationError::UnknownUnit { text, unit } => {
                write!(f, "{text:?}: unknown unit {unit:?} (use ms, s, m or h, with a whole number)")
            }
            DurationError::TooLarge(t) => write!(f, "{t:?} is too large a duration"),
            DurationError::Negative(t) => write!(f, "{t:?} is negative: a duration here must be 0 or more"),
        }
    }
}

impl std::error::Error for DurationError {}

/// Milliseconds, with an optional leading `-` (see the module docs).
pub fn parse_signed_ms(text: &str) -> Result<i64, DurationError> {
    let t = text.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let split = body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len());
    let (num, unit) = body.split_at(split);
    if num.is_empty() {
        return Err(DurationError::NotANumber(t.to_owned()));
    }
    let scale: i64 = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "" => return Err(DurationError::NoUnit(t.to_owned())),
        other => return Err(DurationError::UnknownUnit { text: t.to_owned(), unit: other.to_owned() }),
    };
    let too_large = || DurationError::TooLarge(t.to_owned());
    let n: i64 = num.parse().map_err(|_| too_large())?;
    let ms = n.checked_mul(scale).ok_or_else(too_large)?;
    Ok(if negative { -ms } else { ms })
}

/// A non-negative duration (see the module docs).
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let ms = parse_signed_ms(text)?;
    u64::try_from(ms).map(Duration::from_millis).map_err(|_| DurationError::Negative(text.trim().to_owned()))
}

/// `d` in this grammar, with the largest unit that keeps it whole
/// (`1250ms`, `3s`, `2m`, `1h`), so that what neli prints reads back as the
/// same duration. A duration with a fraction of a millisecond, which no
/// input can give, prints in `Debug` form.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(neli::duration::format(Duration::from_millis(1250)), "1250ms");
/// assert_eq!(neli::duration::format(Duration::from_secs(120)), "2m");
/// assert_eq!(neli::duration::parse(&neli::duration::format(Duration::from_secs(45))), Ok(Duration::from_secs(45)));
/// ```
pub fn format(d: Duration) -> String {
    if !d.subsec_nanos().is_multiple_of(1_000_000) {
        return format!("{d:?}");
    }
    let ms = d.as_millis();
    match ms {
        0 => "0ms".to_owned(),
        _ if ms.is_multiple_of(3_600_000) => format!("{}h", ms / 3_600_000),
        _ if ms.is_multiple_of(60_000) => format!("{}m", ms / 60_000),
        _ if ms.is_multiple_of(1000) => format!("{}s", ms / 1000),
        _ => format!("{ms}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatted_durations_read_back_as_themselves() {
        for ms in [0, 1, 999, 1000, 1250, 60_000, 90_000, 3_600_000, 5_400_000, 86_400_000] {
            let d = Duration::from_millis(ms);
            assert_eq!(parse(&format(d)), Ok(d), "{}", format(d));
        }
        assert_eq!(format(Duration::from_millis(90_000)), "90s");
        assert_eq!(format(Duration::from_micros(1500)), "1.5ms");
    }

    #[test]
    fn every_unit_reads_the_same_everywhere() {
        assert_eq!(parse("0ms"), Ok(Duration::ZERO));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse(" 3s "), Ok(Duration::from_secs(3)));
        assert_eq!(parse("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_signed_ms("-1m"), Ok(-60_000));
    }

    #[test]
    fn malformed_durations_say_what_is_wrong() {
        assert_eq!(parse("soon"), Err(DurationError::NotANumber("soon".into())));
        assert_eq!(parse(""), Err(DurationError::NotANumber("".into())));
        assert_eq!(parse("5"), Err(DurationError::NoUnit("5".into())));
        assert!(matches!(parse("1.5s"), Err(DurationError::UnknownUnit { .. })));
        assert!(matches!(parse("5sec"), Err(DurationError::UnknownUnit { .. })));
        assert_eq!(parse("-1s"), Err(DurationError::Negative("-1s".into())));
        assert_eq!(parse("99999999999999999999ms"), Err(DurationError::TooLarge("99999999999999999999ms".into())));
        assert_eq!(parse("9999999999999999h"), Err(DurationError::TooLarge("9999999999999999h".into())));
        assert!(parse("5").unwrap_err().to_string().contains("write e.g. 5ms or 5s"));
    }
}
