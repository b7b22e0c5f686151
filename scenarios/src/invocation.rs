//! How this program was started, as a command a person can paste: the
//! prefix of every reproduction line `neli-lab` prints or writes
//! (scenarios/README.md, "Reproduction lines"). It is computed once, from
//! the process, unless a test or an embedding program sets it first
//! ([`init`]), so reports stay deterministic under test.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::sync::OnceLock;

/// The command that reruns `neli-lab` the way it was run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    prefix: String,
}

/// The prefix when `cargo run` started the program in this workspace.
pub const CARGO_RUN: &str = "cargo run --release -p neli-lab --";

impl Invocation {
    /// From this process: `cargo run` (which sets `CARGO` and
    /// `CARGO_PKG_NAME` for the program it runs), else argv[0] as given,
    /// and `NELI_LAB_SCENARIOS` when it is set.
    pub fn from_process() -> Invocation {
        let by_cargo_run =
            std::env::var_os("CARGO").is_some() && std::env::var_os("CARGO_PKG_NAME").is_some_and(|n| n == "neli-lab");
        let argv0 = std::env::args_os().next();
        let scenarios = std::env::var_os("NELI_LAB_SCENARIOS");
        Invocation::of(by_cargo_run, argv0.as_deref(), scenarios.as_deref())
    }

    /// The invocation of a program started by `cargo run` in this
    /// workspace (`by_cargo_run`), else as `argv0` (a bare name was found
    /// on `PATH` and stays bare; a path stays as given, relative or not),
    /// with `NELI_LAB_SCENARIOS=<scenarios>` in front when it is set to
    /// anything but the directory the scenarios are found in without it
    /// (this crate's own, `catalog::dir`).
    pub fn of(by_cargo_run: bool, argv0: Option<&OsStr>, scenarios: Option<&OsStr>) -> Invocation {
        let program = match argv0 {
            _ if by_cargo_run => CARGO_RUN.to_owned(),
            Some(a) if !a.is_empty() => quote(&a.to_string_lossy()).into_owned(),
            _ => "neli-lab".to_owned(),
        };
        let prefix = match scenarios {
            Some(d) if d != OsStr::new(env!("CARGO_MANIFEST_DIR")) => {
                format!("NELI_LAB_SCENARIOS={} {program}", quote(&d.to_string_lossy()))
            }
            _ => program,
        };
        Invocation { prefix }
    }

    /// A fixed prefix, for tests and programs that print their own.
    pub fn fixed(prefix: &str) -> Invocation {
        Invocation { prefix: prefix.to_owned() }
    }

    /// The command, without its arguments.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}

static CURRENT: OnceLock<Invocation> = OnceLock::new();

/// Sets the invocation reproduction lines use; `false` when one was
/// already in use (it never changes once read).
pub fn init(i: Invocation) -> bool {
    CURRENT.set(i).is_ok()
}

/// The prefix of every reproduction line: what [`init`] set, else
/// [`Invocation::from_process`].
pub fn repro() -> &'static str {
    CURRENT.get_or_init(Invocation::from_process).prefix()
}

/// `s` as one POSIX shell word: unchanged when it holds only characters
/// no shell treats specially, else in single quotes.
pub fn quote(s: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(format!("'{}'", s.replace('\'', r"'\''")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(cargo: bool, argv0: &str, dir: Option<&str>) -> String {
        Invocation::of(cargo, Some(OsStr::new(argv0)), dir.map(OsStr::new)).prefix().to_owned()
    }

    #[test]
    fn cargo_run_keeps_the_workspace_command() {
        assert_eq!(of(true, "/w/target/release/neli-lab", None), CARGO_RUN);
        assert_eq!(of(true, "x", Some("my dir")), format!("NELI_LAB_SCENARIOS='my dir' {CARGO_RUN}"));
    }

    #[test]
    fn a_binary_is_named_as_it_was_invoked() {
        assert_eq!(of(false, "neli-lab", None), "neli-lab");
        assert_eq!(of(false, "./bin/neli-lab", Some("scenarios")), "NELI_LAB_SCENARIOS=scenarios ./bin/neli-lab");
        assert_eq!(of(false, "/opt/my tools/neli-lab", None), "'/opt/my tools/neli-lab'");
    }

    #[test]
    fn the_default_scenario_directory_is_not_repeated() {
        assert_eq!(of(false, "neli-lab", Some(env!("CARGO_MANIFEST_DIR"))), "neli-lab");
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(quote("a'b"), r"'a'\''b'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("x$y"), "'x$y'");
    }
}
