//! The one duration grammar of every neli and neli-lab input: CLI flags
//! (`--heartbeat-timeout 1s`), scenario files (`duration = "30s"`) and
//! budgets (`--time-budget 2h`) all read durations here, so a value that
//! works in one place works in all of them.
//!
//! A duration is a number followed by a unit, `ms`, `s`, `m` or `h`
//! (`250ms`, `3s`, `10m`, `2h`), or several such parts, largest unit first,
//! each unit once (`1m30s`, `1h15m`, `2s500ms`). A number may have a
//! decimal fraction (`1.5s` is `1500ms`, `0.25h` is `15m`). Durations are
//! whole milliseconds: a value finer than that (`1.0005s`, `0.5ms`) is
//! refused, never rounded. A bare number is refused (is `5` seconds or
//! milliseconds?), as is anything that does not fit in an `i64` of
//! milliseconds. Only [`parse_signed_ms`] accepts a leading `-` (a clock
//! step backwards in a scenario file).
//!
//! ```
//! use std::time::Duration;
//! assert_eq!(neli::duration::parse("250ms"), Ok(Duration::from_millis(250)));
//! assert_eq!(neli::duration::parse("2h"), Ok(Duration::from_secs(7200)));
//! assert_eq!(neli::duration::parse("1.5s"), Ok(Duration::from_millis(1500)));
//! assert_eq!(neli::duration::parse("1m30s"), Ok(Duration::from_secs(90)));
//! assert_eq!(neli::duration::parse_signed_ms("-2s"), Ok(-2000));
//! assert!(neli::duration::parse("5").unwrap_err().to_string().contains("no unit"));
//! assert!(neli::duration::parse("0.5ms").unwrap_err().to_string().contains("finer than a millisecond"));
//! ```

use std::fmt;
use std::time::Duration;

/// What a refusal suggests writing instead.
const EXAMPLES: &str = "write e.g. 1.5s, 250ms, 1m30s";

/// Why a text is not a duration; its `Display` quotes the text and says what
/// was expected, so callers prefix only the field or flag it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationError {
    /// No digits where the number should be (`"soon"`, `""`, `"ms"`, `".5s"`).
    NotANumber(String),
    /// A number without a unit (`"5"`, `"1m30"`).
    NoUnit(String),
    /// A unit other than `ms`, `s`, `m`, `h` (`"5sec"`, `"1x"`).
    UnknownUnit {
        /// The whole text.
        text: String,
        /// What stood where the unit should be.
        unit: String,
    },
    /// A part whose unit is not smaller than the one before it (`"1s1m"`,
    /// `"1s2s"`): written that way it is most likely a typo.
    UnitOrder {
        /// The whole text.
        text: String,
        /// The unit out of place.
        unit: String,
    },
    /// More milliseconds than an `i64` holds.
    TooLarge(String),
    /// A `-` where only non-negative durations are accepted.
    Negative(String),
    /// A value that is not a whole number of milliseconds (`"1.0005s"`).
    FinerThanMs(String),
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::NotANumber(t) => {
                write!(f, "{t:?} is not a duration: expected a number with a unit ({EXAMPLES}, 2h)")
            }
            DurationError::NoUnit(t) => write!(f, "{t:?} has no unit: write e.g. {t}ms or {t}s"),
            DurationError::UnknownUnit { text, unit } => {
                write!(f, "{text:?}: unknown unit {unit:?} (use ms, s, m or h; {EXAMPLES})")
            }
            DurationError::UnitOrder { text, unit } => write!(
                f,
                "{text:?}: {unit:?} follows a unit no larger than it (write each unit once, largest first: 1h30m, 1m30s, 2s500ms)"
            ),
            DurationError::TooLarge(t) => write!(f, "{t:?} is too large a duration (at most {}ms)", i64::MAX),
            DurationError::Negative(t) => write!(f, "{t:?} is negative: a duration here must be 0 or more"),
            DurationError::FinerThanMs(t) => write!(
                f,
                "{t:?} is finer than a millisecond: durations are whole milliseconds here, so round it to one (e.g. 1.5s, 1500ms)"
            ),
        }
    }
}

impl std::error::Error for DurationError {}

/// Milliseconds in one `unit`, or `None` for a unit there is not.
fn unit_ms(unit: &str) -> Option<u128> {
    match unit {
        "ms" => Some(1),
        "s" => Some(1000),
        "m" => Some(60_000),
        "h" => Some(3_600_000),
        _ => None,
    }
}

/// One `number unit` part at the start of `rest`: the number's whole digits,
/// its fraction's digits (trailing zeros dropped), the unit, and what follows.
fn split_part(rest: &str) -> (&str, &str, &str, &str) {
    let whole_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (whole, after) = rest.split_at(whole_end);
    // A `.` counts as the decimal point only between digits (`1.5s`); else
    // it is part of the unit and refused as one.
    let (frac, after) = match after.strip_prefix('.') {
        Some(f) if !whole.is_empty() && f.starts_with(|c: char| c.is_ascii_digit()) => {
            let end = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
            (&f[..end], &f[end..])
        }
        _ => ("", after),
    };
    let unit_end = after.find(|c: char| c.is_ascii_digit()).unwrap_or(after.len());
    let (unit, after) = after.split_at(unit_end);
    (whole, frac.trim_end_matches('0'), unit, after)
}

/// The milliseconds of `whole.frac` times `scale` ms, exactly; `t` (the
/// whole text) names the value in an error.
fn part_ms(t: &str, whole: &str, frac: &str, scale: u128) -> Result<u128, DurationError> {
    // A fraction of more than 7 significant digits is finer than a
    // millisecond in every unit (an hour is 2^7 * 3^2 * 5^5 ms).
    if frac.len() > 7 {
        return Err(DurationError::FinerThanMs(t.to_owned()));
    }
    let too_large = || DurationError::TooLarge(t.to_owned());
    let digits = whole.bytes().chain(frac.bytes());
    let mut n: u128 = 0;
    for d in digits {
        n = n.checked_mul(10).and_then(|n| n.checked_add(u128::from(d - b'0'))).ok_or_else(too_large)?;
    }
    let denominator = 10u128.pow(frac.len() as u32);
    let scaled = n.checked_mul(scale).ok_or_else(too_large)?;
    if !scaled.is_multiple_of(denominator) {
        return Err(DurationError::FinerThanMs(t.to_owned()));
    }
    Ok(scaled / denominator)
}

/// Milliseconds, with an optional leading `-` (see the module docs).
pub fn parse_signed_ms(text: &str) -> Result<i64, DurationError> {
    let t = text.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let mut rest = body;
    let mut total: u128 = 0;
    let mut last_scale: Option<u128> = None;
    loop {
        let (whole, frac, unit, after) = split_part(rest);
        if whole.is_empty() {
            return Err(DurationError::NotANumber(t.to_owned()));
        }
        let scale = match unit_ms(unit) {
            Some(s) => s,
            None if unit.is_empty() => return Err(DurationError::NoUnit(t.to_owned())),
            None => return Err(DurationError::UnknownUnit { text: t.to_owned(), unit: unit.to_owned() }),
        };
        if last_scale.is_some_and(|last| scale >= last) {
            return Err(DurationError::UnitOrder { text: t.to_owned(), unit: unit.to_owned() });
        }
        last_scale = Some(scale);
        let ms = part_ms(t, whole, frac, scale)?;
        total = total.checked_add(ms).ok_or_else(|| DurationError::TooLarge(t.to_owned()))?;
        if after.is_empty() {
            break;
        }
        rest = after;
    }
    let total = i128::try_from(total).unwrap_or(i128::MAX);
    let signed = if negative { -total } else { total };
    i64::try_from(signed).map_err(|_| DurationError::TooLarge(t.to_owned()))
}

/// A non-negative duration (see the module docs).
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let ms = parse_signed_ms(text)?;
    u64::try_from(ms).map(Duration::from_millis).map_err(|_| DurationError::Negative(text.trim().to_owned()))
}

/// `d` in this grammar, with the largest unit that keeps it whole
/// (`1250ms`, `3s`, `2m`, `1h`), so that what neli prints reads back as the
/// same duration. A duration with a fraction of a millisecond, which no
/// input can give, prints in `Debug` form (and is refused when read back).
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
    use proptest::prelude::*;

    #[test]
    fn formatted_durations_read_back_as_themselves() {
        for ms in [0, 1, 999, 1000, 1250, 60_000, 90_000, 3_600_000, 5_400_000, 86_400_000] {
            let d = Duration::from_millis(ms);
            assert_eq!(parse(&format(d)), Ok(d), "{}", format(d));
        }
        assert_eq!(format(Duration::from_millis(90_000)), "90s");
        assert_eq!(format(Duration::from_micros(1500)), "1.5ms");
    }

    proptest! {
        // Whatever neli prints reads back as the same duration, up to the
        // largest an i64 of milliseconds holds.
        #[test]
        fn format_then_parse_is_the_identity(ms in 0..=i64::MAX as u64) {
            let d = Duration::from_millis(ms);
            prop_assert_eq!(parse(&format(d)), Ok(d));
        }

        // A value split into parts (`1h2m3s4ms`) and a decimal one read as
        // the same milliseconds as the plain `Nms`.
        #[test]
        fn compound_and_decimal_forms_agree(h in 0u64..1000, m in 0u64..60, s in 0u64..60, ms in 0u64..1000) {
            let total = ((h * 60 + m) * 60 + s) * 1000 + ms;
            prop_assert_eq!(parse(&format!("{h}h{m}m{s}s{ms}ms")), Ok(Duration::from_millis(total)));
            prop_assert_eq!(parse(&format!("{}.{ms:03}s", total / 1000)), Ok(Duration::from_millis(total)));
        }
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
    fn decimals_and_compounds_are_exact() {
        let ms = |t: &str| parse_signed_ms(t);
        assert_eq!(ms("1.5s"), Ok(1500));
        assert_eq!(ms("1m30s"), Ok(90_000));
        assert_eq!(ms("1h15m"), Ok(4_500_000));
        assert_eq!(ms("2s500ms"), Ok(2500));
        assert_eq!(ms("0.25h"), Ok(900_000));
        assert_eq!(ms("1.500000000000s"), Ok(1500));
        assert_eq!(ms("0.001s"), Ok(1));
        assert_eq!(ms("-1.5s"), Ok(-1500));
        assert_eq!(ms("-1m30s"), Ok(-90_000));
        assert_eq!(ms("-9223372036854775808ms"), Ok(i64::MIN));
        assert_eq!(ms("9223372036854775807ms"), Ok(i64::MAX));
    }

    #[test]
    fn malformed_durations_say_what_is_wrong() {
        assert_eq!(parse("soon"), Err(DurationError::NotANumber("soon".into())));
        assert_eq!(parse(""), Err(DurationError::NotANumber("".into())));
        assert_eq!(parse(".5s"), Err(DurationError::NotANumber(".5s".into())));
        assert_eq!(parse("5"), Err(DurationError::NoUnit("5".into())));
        assert_eq!(parse("1m30"), Err(DurationError::NoUnit("1m30".into())));
        assert_eq!(parse("1x"), Err(DurationError::UnknownUnit { text: "1x".into(), unit: "x".into() }));
        assert_eq!(parse("1.s"), Err(DurationError::UnknownUnit { text: "1.s".into(), unit: ".s".into() }));
        assert_eq!(parse("1e3ms"), Err(DurationError::UnknownUnit { text: "1e3ms".into(), unit: "e".into() }));
        assert!(matches!(parse("5sec"), Err(DurationError::UnknownUnit { .. })));
        assert_eq!(parse("1s1m"), Err(DurationError::UnitOrder { text: "1s1m".into(), unit: "m".into() }));
        assert_eq!(parse("1s2s"), Err(DurationError::UnitOrder { text: "1s2s".into(), unit: "s".into() }));
        assert_eq!(parse("-1s"), Err(DurationError::Negative("-1s".into())));
        assert_eq!(parse("0.5ms"), Err(DurationError::FinerThanMs("0.5ms".into())));
        assert_eq!(parse("1.0005s"), Err(DurationError::FinerThanMs("1.0005s".into())));
        assert_eq!(parse("1.00000001h"), Err(DurationError::FinerThanMs("1.00000001h".into())));
        assert_eq!(parse("99999999999999999999ms"), Err(DurationError::TooLarge("99999999999999999999ms".into())));
        assert_eq!(parse("9999999999999999h"), Err(DurationError::TooLarge("9999999999999999h".into())));
        assert_eq!(
            parse_signed_ms("9223372036854775808ms"),
            Err(DurationError::TooLarge("9223372036854775808ms".into()))
        );
        let huge = "9".repeat(60) + "h";
        assert_eq!(parse(&huge), Err(DurationError::TooLarge(huge.clone())));
        assert!(parse("5").unwrap_err().to_string().contains("write e.g. 5ms or 5s"));
        let x = parse("1x").unwrap_err().to_string();
        assert_eq!(x, "\"1x\": unknown unit \"x\" (use ms, s, m or h; write e.g. 1.5s, 250ms, 1m30s)");
    }
}
