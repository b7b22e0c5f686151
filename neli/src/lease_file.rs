//! The lease file: how `neli exec` tells CMD, before each of its actions,
//! whether the lease still holds (`NELI_LEASE_FILE`, read by `neli holds`).
//!
//! Why a file and not only `NELI_TOKEN`: when neli and CMD are frozen
//! together (SIGSTOP, a VM pause) and resume together, CMD may run before
//! neli notices that its lease ended and kills CMD. A deadline on a clock
//! both processes share lets CMD find that out alone: the file holds the
//! end of the lease on `CLOCK_MONOTONIC`, which keeps counting while the
//! processes are stopped, so a resumed CMD sees a deadline in the past.
//! neli/KAFKA.md, "`neli holds`", has the shell example.
//!
//! Format, one line: `v1 <deadline_ns> <token> <log_epoch>`, the deadline
//! in nanoseconds of `CLOCK_MONOTONIC`; a deadline of 0 means no lease.
//! With several roles (`neli exec --roles M`), one line per role:
//! `v2 <role> <deadline_ns> <token> <log_epoch>`, roles `0..M` in order
//! ([`LeaseFile::render_roles`], read back by [`LeaseFile::parse_role`]).
//! neli replaces the file atomically (write, then rename) whenever its
//! lease changes, and only ever writes a deadline at or before the lease's
//! real end (see [`LeaseFile::of`]).

use crate::core::Time;
use crate::status::Status;

/// One lease file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseFile {
    /// End of the lease on `CLOCK_MONOTONIC`, in ns; 0: no lease.
    pub deadline_ns: u64,
    /// The lease's fencing token (0 without a lease).
    pub token: u64,
    /// The election log's epoch the token belongs to ([`crate::Status::log_epoch`]).
    pub log_epoch: u64,
}

/// Why a text is not a lease file neli wrote ([`LeaseFile::parse`]),
/// naming the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseFileError {
    /// Nothing in the file.
    #[error("empty (expected 'v1 <deadline_ns> <token> <log_epoch>')")]
    Empty,
    /// The first field is neither `v1` nor `v2` (given).
    #[error("unknown format '{0}' (expected 'v1 <deadline_ns> <token> <log_epoch>')")]
    UnknownFormat(String),
    /// Not four fields (how many there are).
    #[error("{0} fields where 'v1 <deadline_ns> <token> <log_epoch>' has 4")]
    FieldCount(usize),
    /// A line of a role file (`v2`) that is not a role line (its first field).
    #[error("'{0}' where a line of a role file starts with 'v2' (v2 <role> <deadline_ns> <token> <log_epoch>)")]
    NotARoleLine(String),
    /// A role line (`v2`) that does not have five fields (how many it has).
    #[error("{0} fields where 'v2 <role> <deadline_ns> <token> <log_epoch>' has 5")]
    RoleFieldCount(usize),
    /// The file has no line for the role asked about.
    #[error("no lease line for role {role} (the file holds roles {held})")]
    NoSuchRole {
        /// The role asked about.
        role: u32,
        /// The roles the file holds, e.g. `0..16` or `0` (one role).
        held: String,
    },
    /// A field that is not a whole number.
    #[error("{field} '{value}' is not a whole number")]
    NotANumber {
        /// The field's name (`deadline_ns`, `token`, `log_epoch`).
        field: &'static str,
        /// What the file says.
        value: String,
    },
}

/// What `neli holds` concludes from a lease file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseStanding {
    /// The lease holds for this many more ns.
    Holds {
        /// Nanoseconds left.
        left_ns: u64,
    },
    /// No lease is held (neli is a follower, or lost the lease).
    NoLease,
    /// The lease ended this many ns ago (neli may not have noticed yet).
    Ended {
        /// Nanoseconds since it ended.
        ago_ns: u64,
    },
    /// The file is about another term than the caller's `NELI_TOKEN`.
    OtherTerm {
        /// The token in the file.
        file: u64,
        /// The caller's token.
        mine: u64,
    },
}

impl LeaseStanding {
    /// Whether CMD may act (`neli holds` exits 0).
    pub fn holds(&self) -> bool {
        matches!(self, LeaseStanding::Holds { .. })
    }
}

impl std::fmt::Display for LeaseStanding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |ns: u64| ns / 1_000_000;
        match *self {
            LeaseStanding::Holds { left_ns } => write!(f, "the lease holds for {} ms more", ms(left_ns)),
            LeaseStanding::NoLease => f.write_str("no lease is held"),
            LeaseStanding::Ended { ago_ns } => write!(f, "the lease ended {} ms ago", ms(ago_ns)),
            LeaseStanding::OtherTerm { file, mine } => {
                write!(f, "the lease file is about token {file}, this process was started for token {mine}")
            }
        }
    }
}

impl LeaseFile {
    /// No lease held.
    pub const NONE: LeaseFile = LeaseFile { deadline_ns: 0, token: 0, log_epoch: 0 };

    /// The file for `status`'s lease of role 0 (the role `neli exec` runs
    /// CMD for). `clock_now` is the member's clock read *after*
    /// `monotonic_ns`, so the deadline written is never later than the
    /// lease's end: the two readings are apart by a few µs, which only
    /// shortens the lease as CMD sees it.
    pub fn of(status: &Status, clock_now: Time, monotonic_ns: u64) -> LeaseFile {
        LeaseFile::of_role(status, 0, clock_now, monotonic_ns)
    }

    /// [`LeaseFile::of`] for `role`: the line `neli exec --roles M` writes
    /// for the CMD of that role.
    pub fn of_role(status: &Status, role: u32, clock_now: Time, monotonic_ns: u64) -> LeaseFile {
        match status.lease(role, clock_now) {
            Some(lease) => {
                let left_ns = (lease.until.as_millis() - clock_now.as_millis()).saturating_mul(1_000_000);
                let stamp = lease.stamp();
                LeaseFile {
                    deadline_ns: monotonic_ns.saturating_add(left_ns),
                    token: stamp.token.0,
                    log_epoch: stamp.log_epoch,
                }
            }
            None => LeaseFile { log_epoch: status.log_epoch, ..LeaseFile::NONE },
        }
    }

    /// The file's one line: `v1 <deadline ns> <token> <log epoch>`.
    pub fn render(&self) -> String {
        format!("v1 {} {} {}\n", self.deadline_ns, self.token, self.log_epoch)
    }

    /// Parses [`LeaseFile::render`]'s line; the error names the field at fault.
    pub fn parse(text: &str) -> Result<LeaseFile, LeaseFileError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        match fields.first() {
            Some(&"v1") => {}
            Some(other) => return Err(LeaseFileError::UnknownFormat((*other).to_owned())),
            None => return Err(LeaseFileError::Empty),
        }
        if fields.len() != 4 {
            return Err(LeaseFileError::FieldCount(fields.len()));
        }
        let number = |i: usize, field: &'static str| {
            fields[i].parse::<u64>().map_err(|_| LeaseFileError::NotANumber { field, value: fields[i].to_owned() })
        };
        Ok(LeaseFile {
            deadline_ns: number(1, "deadline_ns")?,
            token: number(2, "token")?,
            log_epoch: number(3, "log_epoch")?,
        })
    }

    /// The file of several roles: one `v2 <role> <deadline ns> <token> <log
    /// epoch>` line per role, in the order given.
    ///
    /// ```
    /// use neli::lease_file::LeaseFile;
    ///
    /// let led = LeaseFile { deadline_ns: 9_000, token: 4, log_epoch: 0 };
    /// let text = LeaseFile::render_roles(&[(0, LeaseFile::NONE), (1, led)]);
    /// assert_eq!(text, "v2 0 0 0 0\nv2 1 9000 4 0\n");
    /// assert_eq!(LeaseFile::parse_role(&text, 1), Ok(led));
    /// assert!(LeaseFile::parse_role(&text, 2).is_err());
    /// ```
    pub fn render_roles(roles: &[(u32, LeaseFile)]) -> String {
        roles.iter().map(|(role, f)| format!("v2 {role} {} {} {}\n", f.deadline_ns, f.token, f.log_epoch)).collect()
    }

    /// The lease of `role` in a file of either format: a `v1` file
    /// ([`LeaseFile::render`]) holds role 0 only, a `v2` file one line per
    /// role ([`LeaseFile::render_roles`]). The error names the line's field
    /// at fault, or the roles the file holds when `role` is not among them.
    pub fn parse_role(text: &str, role: u32) -> Result<LeaseFile, LeaseFileError> {
        if !text.trim_start().starts_with("v2") {
            let file = LeaseFile::parse(text)?;
            return if role == 0 { Ok(file) } else { Err(LeaseFileError::NoSuchRole { role, held: "0".into() }) };
        }
        let mut roles = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields[0] != "v2" {
                return Err(LeaseFileError::NotARoleLine(fields[0].to_owned()));
            }
            if fields.len() != 5 {
                return Err(LeaseFileError::RoleFieldCount(fields.len()));
            }
            let number = |i: usize, field: &'static str| {
                fields[i].parse::<u64>().map_err(|_| LeaseFileError::NotANumber { field, value: fields[i].to_owned() })
            };
            let line_role = fields[1]
                .parse::<u32>()
                .map_err(|_| LeaseFileError::NotANumber { field: "role", value: fields[1].to_owned() })?;
            roles.push(line_role);
            if line_role == role {
                return Ok(LeaseFile {
                    deadline_ns: number(2, "deadline_ns")?,
                    token: number(3, "token")?,
                    log_epoch: number(4, "log_epoch")?,
                });
            }
        }
        // `0..16` for the file neli writes (every role, in order), else a list.
        let contiguous = roles.windows(2).all(|w| w[0].checked_add(1) == Some(w[1]));
        let held = match (roles.first(), roles.last()) {
            (Some(a), Some(b)) if a != b && contiguous => format!("{a}..{}", u64::from(*b) + 1),
            (Some(_), _) => roles.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            _ => "none".into(),
        };
        Err(LeaseFileError::NoSuchRole { role, held })
    }

    /// Whether the lease holds at `now_ns` (`CLOCK_MONOTONIC`) for a
    /// process started for token `mine` (its `NELI_TOKEN`, if it has one).
    pub fn standing(&self, now_ns: u64, mine: Option<u64>) -> LeaseStanding {
        if self.deadline_ns == 0 {
            return LeaseStanding::NoLease;
        }
        if let Some(mine) = mine
            && mine != self.token
        {
            return LeaseStanding::OtherTerm { file: self.token, mine };
        }
        if now_ns < self.deadline_ns {
            LeaseStanding::Holds { left_ns: self.deadline_ns - now_ns }
        } else {
            LeaseStanding::Ended { ago_ns: now_ns - self.deadline_ns }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::core::{Lease, Token};
    use crate::status::State;

    fn status(lease: Option<(u64, u64)>) -> Status {
        let mut leading = BTreeMap::new();
        if let Some((token, until)) = lease {
            leading.insert(0, Lease { token: Token(token), until: Time::from_millis(until), log_epoch: 2 });
        }
        Status { state: State::Live, leading, log_epoch: 2, generation: Some(1) }
    }

    #[test]
    fn the_deadline_is_the_lease_end_carried_onto_the_monotonic_clock() {
        // Lease until 5 000 ms on the member's clock, read at 4 200 ms, when
        // CLOCK_MONOTONIC read 1 000 s: 800 ms left.
        let f = LeaseFile::of(&status(Some((42, 5_000))), Time::from_millis(4_200), 1_000_000_000_000);
        assert_eq!(f, LeaseFile { deadline_ns: 1_000_800_000_000, token: 42, log_epoch: 2 });
        assert_eq!(LeaseFile::parse(&f.render()), Ok(f));
    }

    #[test]
    fn an_ended_or_missing_lease_writes_no_deadline() {
        let ended = LeaseFile::of(&status(Some((42, 5_000))), Time::from_millis(5_000), 7);
        assert_eq!(ended.deadline_ns, 0);
        assert_eq!(
            LeaseFile::of(&status(None), Time::from_millis(1), 7),
            LeaseFile { log_epoch: 2, ..LeaseFile::NONE }
        );
    }

    #[test]
    fn a_resumed_process_sees_the_lease_ended() {
        let f = LeaseFile { deadline_ns: 10_000_000, token: 7, log_epoch: 0 };
        assert_eq!(f.standing(4_000_000, Some(7)), LeaseStanding::Holds { left_ns: 6_000_000 });
        assert!(f.standing(9_999_999, None).holds());
        // Frozen across the deadline: the monotonic clock kept counting.
        assert_eq!(f.standing(10_000_000, Some(7)), LeaseStanding::Ended { ago_ns: 0 });
        assert_eq!(f.standing(3_010_000_000, Some(7)).to_string(), "the lease ended 3000 ms ago");
        // A CMD of an earlier term never borrows a later lease.
        assert_eq!(f.standing(1, Some(6)), LeaseStanding::OtherTerm { file: 7, mine: 6 });
        assert_eq!(LeaseFile::NONE.standing(1, None), LeaseStanding::NoLease);
    }

    #[test]
    fn malformed_files_name_the_field_at_fault() {
        assert_eq!(
            LeaseFile::parse("").unwrap_err().to_string(),
            "empty (expected 'v1 <deadline_ns> <token> <log_epoch>')"
        );
        assert!(LeaseFile::parse("v2 1 2 3").unwrap_err().to_string().starts_with("unknown format 'v2'"));
        assert_eq!(
            LeaseFile::parse("v1 1 2").unwrap_err().to_string(),
            "3 fields where 'v1 <deadline_ns> <token> <log_epoch>' has 4"
        );
        assert_eq!(LeaseFile::parse("v1 1 x 3").unwrap_err().to_string(), "token 'x' is not a whole number");
        assert_eq!(LeaseFile::parse("v1 -1 2 3").unwrap_err().to_string(), "deadline_ns '-1' is not a whole number");
    }

    #[test]
    fn each_role_reads_its_own_line_and_a_missing_role_is_named() {
        let mut s = status(Some((42, 5_000)));
        s.leading.insert(3, Lease { token: Token(9), until: Time::from_millis(4_500), log_epoch: 2 });
        let now = Time::from_millis(4_200);
        let lines: Vec<(u32, LeaseFile)> = (0..4).map(|r| (r, LeaseFile::of_role(&s, r, now, 1_000))).collect();
        let text = LeaseFile::render_roles(&lines);
        assert_eq!(LeaseFile::parse_role(&text, 3), Ok(LeaseFile { deadline_ns: 300_001_000, token: 9, log_epoch: 2 }));
        assert_eq!(LeaseFile::parse_role(&text, 1), Ok(LeaseFile { log_epoch: 2, ..LeaseFile::NONE }));
        assert_eq!(
            LeaseFile::parse_role(&text, 4).unwrap_err().to_string(),
            "no lease line for role 4 (the file holds roles 0..4)"
        );
        // A one-role file answers for role 0 only.
        let single = LeaseFile::of(&s, now, 1_000).render();
        assert_eq!(LeaseFile::parse_role(&single, 0), LeaseFile::parse(&single));
        assert_eq!(
            LeaseFile::parse_role(&single, 1).unwrap_err().to_string(),
            "no lease line for role 1 (the file holds roles 0)"
        );
        assert_eq!(
            LeaseFile::parse_role("v2 0 1 2", 0).unwrap_err().to_string(),
            "4 fields where 'v2 <role> <deadline_ns> <token> <log_epoch>' has 5"
        );
        assert!(
            LeaseFile::parse_role("v2 0 1 2 3\nv1 1 2 3", 1)
                .unwrap_err()
                .to_string()
                .starts_with("'v1' where a line of a role file starts with 'v2'")
        );
        assert_eq!(
            LeaseFile::parse_role("v2 5 0 0 0\nv2 3 0 0 0", 4).unwrap_err().to_string(),
            "no lease line for role 4 (the file holds roles 5, 3)"
        );
        assert_eq!(
            LeaseFile::parse_role("v2 4294967296 0 0 0", 0).unwrap_err().to_string(),
            "role '4294967296' is not a whole number"
        );
        assert!(LeaseFile::parse_role("v2\n", 0).is_err() && LeaseFile::parse_role("\n\n", 0).is_err());
    }
}
