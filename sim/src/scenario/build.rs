//! Scenarios built or extended in code: the faults a test composes itself
//! (as a turmoil test calls `turmoil::partition`: a network fault where the test needs it), checked by the same
//! rules a scenario file is ([`Scenario::parse`]) and written back as a
//! file for a reproduction ([`Scenario::to_toml`]).

use super::{Dur, Fault, FaultKind, Random, Scenario, ScenarioError, Target, TimedFault, Trigger};

impl Scenario {
    /// Checks the scenario by the rules a scenario file is read with; the
    /// error names the scenario, the fault at fault (by its place among
    /// the faults and its time), and the rule.
    ///
    /// ```
    /// use neli_sim::scenario::{Dur, Fault, Target};
    /// let s = neli_sim::shipped::get("leader-pause").unwrap();
    /// let bad = s.fault(Dur::from_secs(5), Fault::Pause { target: Target::Member(7), duration: Dur::from_secs(1) });
    /// // scenario leader-pause (built in code): fault 2 (pause at 5s): … m7 …
    /// let e = bad.unwrap_err().to_string();
    /// assert!(e.contains("fault 2 (pause at 5s)") && e.contains("m7"), "{e}");
    /// ```
    pub fn check(&self) -> Result<(), ScenarioError> {
        self.validate().map_err(|(place, msg)| {
            let which = match place {
                Some(super::At::Offset(_)) | None => self.fault_named_by(&msg),
                Some(super::At::Field(path)) => Some(path),
            };
            match which {
                Some(w) => ScenarioError(format!("scenario {} (built in code): {w}: {msg}", self.name)),
                None => ScenarioError(format!("scenario {} (built in code): {msg}", self.name)),
            }
        })
    }

    /// The first fault this message is about, as `fault 2 (pause at 8s)`:
    /// a fault added in code has no line in a file to point at.
    fn fault_named_by(&self, msg: &str) -> Option<String> {
        self.faults.iter().enumerate().find_map(|(i, f)| {
            let f = f.get_ref();
            self.validate_fault(f).err().filter(|m| m == msg).map(|_| describe(i, f))
        })
    }

    /// This scenario with `fault` added at `at` (since the run's start),
    /// checked like a `[[faults]]` entry of a file.
    ///
    /// ```
    /// use neli_sim::scenario::{Dur, Fault, Host, Target};
    /// let s = neli_sim::shipped::get("leader-pause")
    ///     .unwrap()
    ///     .fault(Dur::from_secs(12), Fault::Partition { a: Host::Leader, b: Host::Broker(0), duration: Dur::from_secs(4) })
    ///     .unwrap();
    /// assert!(s.to_toml(&[]).unwrap().contains("partition"));
    /// ```
    pub fn fault(self, at: Dur, fault: Fault) -> Result<Scenario, ScenarioError> {
        self.with_fault(TimedFault { at, on: None, of: None, fault })
    }

    /// This scenario with `fault` added, checked.
    fn with_fault(mut self, fault: TimedFault) -> Result<Scenario, ScenarioError> {
        self.faults.push(toml::Spanned::new(0..0, fault));
        self.check()?;
        Ok(self)
    }

    /// This scenario with `fault` aimed at a moment of the protocol: armed
    /// at `at`, it starts at the first `on` of member `of` from then on
    /// (of its own target if `of` is `None`), as a file's `on` and `of`
    /// fields say (scenarios/FORMAT.md), checked by the same rules.
    ///
    /// ```
    /// use neli_sim::scenario::{Dur, Fault, Target, Trigger};
    /// let m = |i| Target::Member(i);
    /// // m0 stops the moment it leads, and runs again the moment m1 does.
    /// let s = neli_sim::shipped::get("leader-pause")
    ///     .unwrap()
    ///     .fault_on(Dur::from_secs(0), Trigger::Acquired, None, Fault::Pause { target: m(0), duration: Dur::from_secs(20) })
    ///     .and_then(|s| s.fault_on(Dur::from_secs(0), Trigger::Acquired, Some(m(1)), Fault::Resume { target: m(0) }))
    ///     .unwrap();
    /// assert!(s.to_toml(&[]).unwrap().contains("of = \"m1\""));
    /// // A moment is one member's: `leader` is refused, naming the rule.
    /// let e = neli_sim::shipped::get("leader-pause")
    ///     .unwrap()
    ///     .fault_on(Dur::from_secs(0), Trigger::Acquired, Some(Target::Leader), Fault::Resume { target: m(0) })
    ///     .unwrap_err();
    /// assert!(e.to_string().contains("faults.of = \"leader\""), "{e}");
    /// ```
    pub fn fault_on(self, at: Dur, on: Trigger, of: Option<Target>, fault: Fault) -> Result<Scenario, ScenarioError> {
        self.with_fault(TimedFault { at, on: Some(on), of, fault })
    }

    /// This scenario with `faults` more drawn at random per seed from
    /// `kinds`, each lasting at most `max_duration` (a file's `[random]`
    /// table; it replaces one the scenario had).
    ///
    /// ```
    /// use neli_sim::scenario::{Dur, FaultKind};
    /// let s = neli_sim::shipped::get("leader-pause").unwrap();
    /// let s = s.random_faults(3, &[FaultKind::Pause, FaultKind::Partition], Dur::from_secs(5)).unwrap();
    /// assert_eq!(s.random.as_ref().map(|r| r.faults), Some(3));
    /// ```
    pub fn random_faults(
        mut self,
        faults: u32,
        kinds: &[FaultKind],
        max_duration: Dur,
    ) -> Result<Scenario, ScenarioError> {
        self.random = Some(Random { faults, kinds: kinds.to_vec(), max_duration });
        self.check()?;
        Ok(self)
    }
}

fn describe(i: usize, f: &TimedFault) -> String {
    let when = match (f.on, f.of) {
        (None, _) => format!("at {}", f.at),
        (Some(t), None) => format!("on {t:?}"),
        (Some(t), Some(of)) => format!("on {t:?} of {of}"),
    };
    format!("fault {} ({} {when})", i + 1, f.fault.kind().name())
}

impl Dur {
    /// `secs` seconds.
    pub const fn from_secs(secs: i64) -> Dur {
        Dur(secs * 1000)
    }
    /// `ms` milliseconds.
    pub const fn from_millis(ms: i64) -> Dur {
        Dur(ms)
    }
}
