//! "Did you mean": the known name closest to a misspelt one, for a
//! scenario file's unknown key or fault kind and for a scenario name
//! `neli-lab` cannot find.

/// The name among `known` closest to `given` by edit distance (a swap of
/// two neighbours counting once), if one is close enough to be the name
/// meant: at most one edit per three characters of `given`, and at least
/// one. Ties go to the first.
pub fn closest<'a>(given: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let most = (given.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = strsim::osa_distance(given, k);
        if d <= most && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// The TOML reader's ``unknown field `x`, expected one of `a`, `b` `` (or
/// ``unknown variant``), with the table it is in (`table`, for a field)
/// and the closest expected name suggested in between: ``unknown field
/// `x` in [election]; did you mean `a`? (expected one of …)``. Any other
/// message comes back as it was.
pub(super) fn with_suggestion(message: &str, table: Option<&str>) -> String {
    let Some((head, expected)) = message.split_once(", expected ") else {
        return message.to_owned();
    };
    let unknown = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| head.strip_prefix(p))
        .and_then(|r| r.strip_suffix('`'));
    let Some(unknown) = unknown else {
        return message.to_owned();
    };
    // The names stand between backticks: odd pieces of a split on them.
    let names = expected.split('`').skip(1).step_by(2);
    let place = match table {
        Some(t) if head.starts_with("unknown field") => format!(" in [{t}]"),
        _ => String::new(),
    };
    match closest(unknown, names) {
        Some(best) => format!("{head}{place}; did you mean `{best}`? (expected {})", expected.trim_end()),
        None => format!("{head}{place}, expected {expected}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_name_is_suggested_and_a_far_one_is_not() {
        let kinds = ["pause", "crash", "partition"];
        assert_eq!(closest("paus", kinds), Some("pause"));
        assert_eq!(closest("crahs", kinds), Some("crash"));
        assert_eq!(closest("nap", kinds), None);
        assert_eq!(closest("x", ["y", "xy"]), Some("y"));
        assert_eq!(closest("leader-paus", ["leader-pause", "short-pause"]), Some("leader-pause"));
    }

    #[test]
    fn serde_messages_get_the_suggestion() {
        let m = "unknown field `heartbeat_timout`, expected one of `members`, `heartbeat_timeout`, `grace`";
        assert_eq!(
            with_suggestion(m, Some("election")),
            "unknown field `heartbeat_timout` in [election]; did you mean `heartbeat_timeout`? (expected one of `members`, `heartbeat_timeout`, `grace`)"
        );
        let v = "unknown variant `paus`, expected `pause` or `crash`";
        let suggested = "unknown variant `paus`; did you mean `pause`? (expected `pause` or `crash`)";
        assert_eq!(with_suggestion(v, Some("faults")), suggested);
        let far = "unknown field `zzzzzz`, expected `members`";
        assert_eq!(with_suggestion(far, None), far);
        assert_eq!(with_suggestion(far, Some("cluster")), "unknown field `zzzzzz` in [cluster], expected `members`");
        assert_eq!(with_suggestion("invalid type: integer", None), "invalid type: integer");
    }
}
