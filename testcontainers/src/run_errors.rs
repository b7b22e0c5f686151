//! Why a real run could not be planned ([`PlanError`]) or failed
//! ([`RunError`]): the scenario setting, step, member or client at fault.

use std::path::PathBuf;
use std::time::Duration;

use rdkafka::error::KafkaError;

use crate::broker::ContainerError;

/// Why a scenario cannot run on a real broker: the setting or fault at
/// fault, and why the suite cannot play it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A scenario setting the suite does not play (the text names it).
    #[error("{0}")]
    Setting(&'static str),
    /// More than one broker.
    #[error("{0} brokers: the suite runs one broker container")]
    Brokers(u32),
    /// A fault (its kind) that cuts one member's link.
    #[error(
        "fault `{0}` cuts one member's link: members are host processes sharing the host's network \
         (only the broker container can be disconnected, which cuts every member)"
    )]
    OneMembersLink(String),
    /// A clock fault (its kind): the members share one clock.
    #[error("fault `{0}`: the members share the host's monotonic clock")]
    SharedClock(String),
    /// A fault (its kind, and the moment it is aimed at) that waits for a
    /// moment of the protocol: the suite starts each fault at its time.
    #[error(
        "fault `{0}` is aimed at a moment (on = \"{1}\"): the real-broker suite starts each fault at its time, and \
         one started early or late would test something else (simulator only)"
    )]
    Aimed(String, String),
    /// A fault kind with no real mechanism here.
    #[error("fault `{0}` has no real mechanism in this suite")]
    NoMechanism(String),
}

/// Why a real run failed, naming what failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The observer's Kafka client could not be created.
    #[error("observer client: {0}")]
    Observer(KafkaError),
    /// The directory for the members' logs could not be created.
    #[error("{}: {error}", path.display())]
    LogDir { path: PathBuf, error: std::io::Error },
    /// A member's stderr log file could not be created.
    #[error("{0}")]
    MemberLog(std::io::Error),
    /// A member process could not be started.
    #[error("spawning {}: {error}", bin.display())]
    Spawn { bin: PathBuf, error: std::io::Error },
    /// A broker step (pause, kill, network, restart) failed.
    #[error(transparent)]
    Broker(#[from] ContainerError),
    /// The blocking task of a step failed.
    #[error("{0}")]
    Task(tokio::task::JoinError),
    /// The foreign writer could not be created or could not queue a record.
    #[error("foreign writer: {0}")]
    ForeignWriter(KafkaError),
    /// The foreign writer's records were not delivered within 5 s.
    #[error("foreign writer flush: {0}")]
    ForeignWriterFlush(KafkaError),
    /// The group did not come whole in time.
    #[error(transparent)]
    NotStable(Box<NotStable>),
    /// A member process no fault stopped exited.
    #[error("{scenario}: member {member} exited on its own ({status}); its stderr is in {}", stderr.display())]
    DiedOnItsOwn { scenario: String, member: String, status: std::process::ExitStatus, stderr: PathBuf },
    /// The run failed (`error`); the trace and the figures recorded so far.
    #[error("{error}\ntrace:\n{trace}\nfigures: {figures}")]
    Judged { error: Box<RunError>, trace: String, figures: String },
}

/// The group did not come whole (every live member in a Stable group, one
/// leading) within `limit`: what the broker and the members said.
#[derive(Debug, thiserror::Error)]
#[error(
    "{scenario}: {what}: waited {limit:?} for every live member ({live}) in a Stable group with one of them \
     leading; the broker says {described:?} (state, members), leader {leader:?}. Budget from {budget}"
)]
pub struct NotStable {
    pub scenario: String,
    pub what: String,
    pub limit: Duration,
    pub live: usize,
    pub described: Option<(String, usize)>,
    pub leader: Option<String>,
    pub budget: String,
}
