//! What the user asked `check` for, flag by flag: the mode, the model's
//! bounds, the search and its limits, each turned into the model's
//! configuration or refused by name ([`FlagError`]): every flag `check`
//! accepts changes what is explored.

use neli::core::UnsafeVariant;
use neli_models::{ElectionModelCfg, Faults, GroupProtocol};

use crate::parallel::{SeedFlagError, parse_budget};

/// A `check` flag refused: it would have no effect or no meaning. Each
/// names the flag at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    #[error("--members 0: need at least 1 member")]
    NoMembers,
    #[error("--threads 0: need at least 1 checker thread")]
    NoThreads,
    #[error("--heartbeat-timeout 0: must be at least 1 tick")]
    NoHeartbeatTimeout,
    #[error("--session-timeout 0: must be at least 1 tick")]
    NoSessionTimeout,
    #[error(
        "--mode non-exclusive needs T > S (that is what lets leases overlap), got --heartbeat-timeout {t} \
         and --session-timeout {s} ticks: raise T or lower S, or use --mode multi-role"
    )]
    NonExclusiveNeedsTAboveS { t: u8, s: u8 },
    #[error(
        "--roles {roles} has no effect in --mode exclusive (one role on partition 0); use --mode multi-role or non-exclusive"
    )]
    RolesInExclusive { roles: u32 },
    #[error("--roles 0: need at least 1 role")]
    NoRoles,
    #[error("--max-skew {skew} has no effect without clock steps: add --clock-steps N (N >= 1)")]
    SkewWithoutSteps { skew: u8 },
    #[error("--max-skew 0 forbids every clock step: use at least 1, or drop --clock-steps")]
    NoSkew,
    #[error("--max-skew {skew} has no effect: --clock-steps {steps} one-tick steps reach a skew of at most {steps}")]
    SkewAboveSteps { skew: u8, steps: u8 },
    #[error(
        "--static-replacements {count} has no effect with --group-protocol consumer: its coordinator refuses an \
         instance id still in use (UNRELEASED_INSTANCE_ID), so no replacement happens; use the classic protocol"
    )]
    StaticReplacementsWithConsumer { count: u8 },
    #[error(
        "--variant skip-revoked-barrier has no effect with --assignment range (eager: every \
         rebalance revokes everything before it deals): add --assignment cooperative-sticky"
    )]
    SkipBarrierWithRange,
    #[error("--no-symmetry has no effect with --simulate (random walks merge no states)")]
    NoSymmetryWithSimulate,
    #[error("--dfs has no effect with --simulate (random walks)")]
    DfsWithSimulate,
    #[error("--seed {seed} has no effect without --simulate (the search is exhaustive)")]
    SeedWithoutSimulate { seed: u64 },
    #[error(
        "--threads {threads} has no effect with --simulate (its walk runs on one thread, so a seed gives one result)"
    )]
    ThreadsWithSimulate { threads: usize },
    #[error("--max-states 0: must be at least 1 (the default is {DEFAULT_MAX_STATES})")]
    NoMaxStates,
    #[error(transparent)]
    Budget(#[from] SeedFlagError),
    #[error(transparent)]
    MemoryLimit(#[from] super::memory::MemoryLimitError),
}

/// The election mode `check` explores (`--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One role on partition 0 (goNELI parity).
    Exclusive,
    /// Roles `0..R` on `R` partitions, one leader at a time for each role.
    MultiRole,
    /// Roles `0..R` on `R` partitions, overlap allowed (`T > S`, NELI §4).
    NonExclusive,
}

impl Mode {
    /// Members when `--members` is not given: three in exclusive mode, where
    /// it takes a third member to see a handover race a returning member;
    /// two in the multi-role modes, whose state space three would take
    /// minutes to exhaust (docs/benchmarks-log.md, "check's defaults").
    pub fn default_members(self) -> u8 {
        match self {
            Mode::Exclusive => 3,
            Mode::MultiRole | Mode::NonExclusive => 2,
        }
    }

    /// Isolations when `--isolations` is not given (the asymmetric partition,
    /// hazard 3): one in exclusive mode, none in the multi-role modes.
    pub fn default_isolations(self) -> u8 {
        match self {
            Mode::Exclusive => 1,
            Mode::MultiRole | Mode::NonExclusive => 0,
        }
    }

    /// (T, S) in ticks when the flags are not given: T < S where one leader
    /// per role is promised, T > S where overlap is allowed (that is what
    /// makes a mode non-exclusive).
    pub fn default_timeouts(self) -> (u8, u8) {
        match self {
            Mode::Exclusive | Mode::MultiRole => (2, 4),
            Mode::NonExclusive => (5, 3),
        }
    }
}

/// What the user asked for, flag by flag (`None`: the flag was not given).
#[derive(Debug, Clone)]
pub struct Request {
    /// `None`: the mode's default ([`Mode::default_members`]).
    pub members: Option<u8>,
    pub mode: Mode,
    pub roles: Option<u32>,
    /// T and S in ticks; `None`: the mode's default ([`Mode::default_timeouts`]).
    pub heartbeat_timeout: Option<u8>,
    pub session_timeout: Option<u8>,
    pub grace: u8,
    pub ticks: u8,
    pub membership_proof: bool,
    /// Incremental (cooperative-sticky) assignment (`--assignment`).
    pub incremental: bool,
    /// The group protocol (`--group-protocol`).
    pub protocol: GroupProtocol,
    /// `None`: 1 under the consumer protocol, else 0 (`--heartbeat-failures`).
    pub heartbeat_failures: Option<u8>,
    /// Static members replaced by a new process with the same instance id
    /// while the old one runs on (`--static-replacements`; classic only).
    pub static_replacements: u8,
    pub variant: UnsafeVariant,
    /// The coordinator hands a moving partition on without waiting for its
    /// old owner's revocation (`--variant skip-revoked-barrier`).
    pub skip_revoked_barrier: bool,
    pub pauses: u8,
    pub crashes: u8,
    /// `None`: the mode's default ([`Mode::default_isolations`]).
    pub isolations: Option<u8>,
    pub clock_steps: u8,
    pub max_skew: Option<u8>,
    pub log_losses: u8,
    pub threads: usize,
}

/// Roles (and partitions) in multi-role modes when `--roles` is not given.
pub const DEFAULT_ROLES: u32 = 2;

impl Request {
    /// What `neli-lab check --mode MODE` asks for with no other flag (the
    /// gate runs these).
    pub fn defaults(mode: Mode) -> Request {
        Request {
            members: None,
            mode,
            roles: None,
            heartbeat_timeout: None,
            session_timeout: None,
            grace: 0,
            ticks: 8,
            membership_proof: true,
            incremental: false,
            protocol: GroupProtocol::Classic,
            heartbeat_failures: None,
            static_replacements: 0,
            variant: UnsafeVariant::default(),
            skip_revoked_barrier: false,
            pauses: 1,
            crashes: 0,
            isolations: None,
            clock_steps: 0,
            max_skew: None,
            log_losses: 0,
            threads: DEFAULT_THREADS,
        }
    }
}

impl Mode {
    /// Every mode, in the order the gate checks them.
    pub const ALL: [Mode; 3] = [Mode::Exclusive, Mode::MultiRole, Mode::NonExclusive];

    /// The mode as `--mode` spells it.
    pub fn flag(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::MultiRole => "multi-role",
            Mode::NonExclusive => "non-exclusive",
        }
    }
}

impl Request {
    /// The model configuration, or why a flag would have no effect or no
    /// meaning (each message names the flag): every flag `check` accepts
    /// changes what is explored, or is refused.
    pub fn config(&self) -> Result<ElectionModelCfg, FlagError> {
        let members = self.members.unwrap_or(self.mode.default_members());
        if members == 0 {
            return Err(FlagError::NoMembers);
        }
        let (t, s) = self.timeouts()?;
        if self.threads == 0 {
            return Err(FlagError::NoThreads);
        }
        let roles = self.roles()?;
        let max_skew = self.max_skew()?;
        self.refuse_inert_group_flags()?;
        let mut c = ElectionModelCfg::exclusive(members);
        c.roles = roles;
        c.partitions = roles;
        c.exclusive = self.mode != Mode::NonExclusive;
        c.heartbeat_timeout = t;
        c.session_timeout = s;
        c.grace = self.grace;
        c.heartbeat_interval = (t / 2).max(1);
        c.max_ticks = self.ticks;
        c.membership_proof = self.membership_proof;
        c.incremental = self.incremental;
        c.protocol = self.protocol;
        c.variant = self.variant;
        c.skip_revoked_barrier = self.skip_revoked_barrier;
        c.faults = self.faults(max_skew);
        Ok(c)
    }

    /// T and S in ticks, after the mode's defaults, or why they are refused.
    fn timeouts(&self) -> Result<(u8, u8), FlagError> {
        let (default_t, default_s) = self.mode.default_timeouts();
        let (t, s) = (self.heartbeat_timeout.unwrap_or(default_t), self.session_timeout.unwrap_or(default_s));
        if t == 0 {
            return Err(FlagError::NoHeartbeatTimeout);
        }
        if s == 0 {
            return Err(FlagError::NoSessionTimeout);
        }
        if self.mode == Mode::NonExclusive && t <= s {
            return Err(FlagError::NonExclusiveNeedsTAboveS { t, s });
        }
        Ok((t, s))
    }

    /// The number of roles (and partitions), or why `--roles` is refused.
    fn roles(&self) -> Result<u32, FlagError> {
        match (self.mode, self.roles) {
            (Mode::Exclusive, Some(roles)) => Err(FlagError::RolesInExclusive { roles }),
            (Mode::Exclusive, None) => Ok(1),
            (_, Some(0)) => Err(FlagError::NoRoles),
            (_, r) => Ok(r.unwrap_or(DEFAULT_ROLES)),
        }
    }

    /// The skew bound. A clock step moves one member's clock by one tick,
    /// so N steps can reach a skew of at most N: the bound defaults to
    /// that, and a bound that could never bind (or forbids every step) is
    /// refused.
    fn max_skew(&self) -> Result<u8, FlagError> {
        match (self.clock_steps, self.max_skew) {
            (0, None) => Ok(0),
            (0, Some(skew)) => Err(FlagError::SkewWithoutSteps { skew }),
            (n, None) => Ok(n),
            (_, Some(0)) => Err(FlagError::NoSkew),
            (n, Some(k)) if k > n => Err(FlagError::SkewAboveSteps { skew: k, steps: n }),
            (_, Some(k)) => Ok(k),
        }
    }

    /// Refuses the group flags that the chosen protocol or assignment
    /// would ignore.
    fn refuse_inert_group_flags(&self) -> Result<(), FlagError> {
        if self.static_replacements > 0 && self.protocol == GroupProtocol::Consumer {
            return Err(FlagError::StaticReplacementsWithConsumer { count: self.static_replacements });
        }
        if self.skip_revoked_barrier && !self.incremental {
            return Err(FlagError::SkipBarrierWithRange);
        }
        Ok(())
    }

    /// The fault budgets, after the mode's and the protocol's defaults.
    fn faults(&self, max_skew: u8) -> Faults {
        Faults {
            pauses: self.pauses,
            crashes: self.crashes,
            isolations: self.isolations.unwrap_or(self.mode.default_isolations()),
            clock_steps: self.clock_steps,
            max_skew,
            log_losses: self.log_losses,
            heartbeat_failures: self.heartbeat_failures.unwrap_or(if self.protocol == GroupProtocol::Consumer {
                1
            } else {
                0
            }),
            static_replacements: self.static_replacements,
            ..Faults::default()
        }
    }
}

/// Generated states `check` stops at unless `--max-states` says otherwise:
/// enough for every bound in docs/benchmarks-log.md (the largest, all four fault
/// kinds with 3 members and 10 ticks, generates 103 M; `--dfs` holds its
/// 52 M unique states in 2.4 GB), and well below what fills the 24 GiB
/// these machines have.
pub const DEFAULT_MAX_STATES: usize = 250_000_000;

/// States `check --simulate` walks unless `--max-states` says otherwise.
pub const DEFAULT_SIMULATE_STATES: usize = 1_000_000;

/// Limits on one search. The checker may pass `max_states` by a few
/// states per thread before it notices.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_states: usize,
    pub time_budget: Option<std::time::Duration>,
    /// Resident bytes at which the search stops (`--memory-limit`).
    pub memory: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_states: DEFAULT_MAX_STATES, time_budget: None, memory: super::memory::default_limit() }
    }
}

impl Limits {
    /// Whether a finished search reached `--max-states` (the time budget
    /// is kept by `drive`). A search that ended exactly at the limit is
    /// reported as stopped: a partial result is never presented as a proof.
    pub(super) fn states_reached(&self, states: usize) -> Option<String> {
        (states >= self.max_states).then(|| format!("--max-states {} reached", self.max_states))
    }
}

/// How `check` searches the state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// Breadth first: shortest counterexamples (the default).
    Bfs,
    /// Depth first, every state (faster, longer counterexamples).
    Dfs,
    /// Breadth first with members interchangeable (`neli_models::bfs`, level
    /// by level: shortest counterexamples on a sixth of the states with 3
    /// members; sound in every mode, see `neli_models::election::deal`).
    BfsSymmetry,
    /// Depth first with members interchangeable (stateright's DFS).
    DfsSymmetry,
    /// Random walks from the initial state until `--max-states` states
    /// (stateright's simulation checker, on one thread so that a seed gives
    /// one result): deeper than the exhaustive bounds reach, never a proof.
    Simulate { seed: u64 },
}

/// Threads `check` uses unless `--threads` says otherwise.
pub const DEFAULT_THREADS: usize = 2;

impl Search {
    /// The search `--simulate`, `--no-symmetry` (`symmetry` false), `--dfs`,
    /// `--seed` and `--threads` ask for, or the flag that would change
    /// nothing (each refusal names it): every flag `check` accepts changes
    /// what is explored, except `--threads 1` with `--simulate`, which says
    /// what the walk does anyway.
    pub fn from_flags(
        simulate: bool,
        symmetry: bool,
        dfs: bool,
        seed: Option<u64>,
        threads: Option<usize>,
    ) -> Result<Search, FlagError> {
        let search = match (simulate, symmetry, dfs, seed) {
            (true, false, _, _) => {
                return Err(FlagError::NoSymmetryWithSimulate);
            }
            (true, _, true, _) => return Err(FlagError::DfsWithSimulate),
            (true, _, _, seed) => Search::Simulate { seed: seed.unwrap_or(0) },
            (false, _, _, Some(s)) => {
                return Err(FlagError::SeedWithoutSimulate { seed: s });
            }
            (false, true, true, None) => Search::DfsSymmetry,
            (false, true, false, None) => Search::BfsSymmetry,
            (false, false, true, None) => Search::Dfs,
            (false, false, false, None) => Search::Bfs,
        };
        match threads {
            Some(threads) if simulate && threads != 1 => Err(FlagError::ThreadsWithSimulate { threads }),
            _ => Ok(search),
        }
    }
}

impl Limits {
    /// The limits `--max-states`, `--time-budget` and `--memory-limit` ask
    /// for (`None`: not given) for `search`, or why a value is refused.
    pub fn from_flags(
        max_states: Option<usize>,
        search: Search,
        time_budget: Option<&str>,
        memory_limit: Option<&str>,
    ) -> Result<Limits, FlagError> {
        let simulate = matches!(search, Search::Simulate { .. });
        let max_states = match max_states {
            Some(0) => return Err(FlagError::NoMaxStates),
            Some(n) => n,
            None if simulate => DEFAULT_SIMULATE_STATES,
            None => DEFAULT_MAX_STATES,
        };
        let time_budget = time_budget.map(parse_budget).transpose()?;
        let memory = match memory_limit {
            Some(text) => super::memory::parse(text)?,
            None => super::memory::default_limit(),
        };
        Ok(Limits { max_states, time_budget, memory })
    }
}
