//! `check --memory-limit`: the search's resident memory, read from the
//! kernel while it runs, and the limit at which it stops with a partial
//! verdict instead of being killed by the kernel's out-of-memory killer
//! (scenarios/README.md, "Model check at scale").

use bytesize::ByteSize;

/// The share of the machine's memory `check` may fill unless
/// `--memory-limit` says otherwise, in percent: the rest is left to the
/// kernel, the page cache and whatever else runs beside it.
pub const DEFAULT_MEMORY_SHARE: u64 = 90;

/// Why a `--memory-limit` value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryLimitError {
    #[error(
        "--memory-limit {text:?}: not a size ({reason}); give one such as 16GiB, 12GB or 800MiB, or `none` for no limit"
    )]
    NotASize { text: String, reason: String },
    #[error("--memory-limit {text}: must be at least 1MiB (the checker alone takes more)")]
    TooSmall { text: String },
}

/// Parses a `--memory-limit`: a size (`16GiB`, `12GB`, `800 MiB`, in
/// bytesize's grammar) or `none`/`off` (no limit: `Ok(None)`).
pub fn parse(text: &str) -> Result<Option<u64>, MemoryLimitError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let size: ByteSize =
        t.parse().map_err(|reason: String| MemoryLimitError::NotASize { text: text.to_owned(), reason })?;
    if size.as_u64() < ByteSize::mib(1).as_u64() {
        return Err(MemoryLimitError::TooSmall { text: text.to_owned() });
    }
    Ok(Some(size.as_u64()))
}

/// [`DEFAULT_MEMORY_SHARE`] of the machine's memory, or `None` where the
/// kernel does not say how much there is (only Linux's `/proc/meminfo` is read).
pub fn default_limit() -> Option<u64> {
    let total = status_kib("/proc/meminfo", "MemTotal:")?;
    Some(total * 1024 / 100 * DEFAULT_MEMORY_SHARE)
}

/// This process's resident memory now (`VmRSS`), where the kernel says.
pub fn resident() -> Option<u64> {
    status_kib("/proc/self/status", "VmRSS:").map(|k| k * 1024)
}

/// This process's peak resident memory so far (`VmHWM`), where the kernel says.
pub fn peak() -> Option<u64> {
    status_kib("/proc/self/status", "VmHWM:").map(|k| k * 1024)
}

/// The value in kB of the line starting with `key` in a `/proc` status file.
fn status_kib(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_both_unit_systems_and_none_turns_the_limit_off() {
        assert_eq!(parse("16GiB"), Ok(Some(16 << 30)));
        assert_eq!(parse("12GB"), Ok(Some(12_000_000_000)));
        assert_eq!(parse("800 MiB"), Ok(Some(800 << 20)));
        assert_eq!(parse("none"), Ok(None));
        assert_eq!(parse("OFF"), Ok(None));
    }

    #[test]
    fn a_bad_size_is_refused_with_the_value_and_what_to_give() {
        let e = parse("lots").unwrap_err().to_string();
        assert!(e.starts_with("--memory-limit \"lots\": not a size") && e.contains("16GiB"), "{e}");
        assert_eq!(parse("10KiB"), Err(MemoryLimitError::TooSmall { text: "10KiB".into() }));
    }

    #[test]
    fn the_kernel_reports_this_process_and_the_machine() {
        if cfg!(target_os = "linux") {
            let (rss, peak, limit) = (resident().unwrap(), peak().unwrap(), default_limit().unwrap());
            assert!(rss > 0 && peak >= rss && limit > peak, "{rss} {peak} {limit}");
        }
    }
}
