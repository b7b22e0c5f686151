//! The `neli` command line: its flags (clap) and how they, the
//! environment and `-X` client properties become a [`Config`]. In the
//! library, not the binary, so the fuzz target `cli_flags` (fuzz/README.md)
//! and the tests reach exactly what `neli` parses; the binary
//! (`src/bin/neli/main.rs`) runs what this returns.

use std::ffi::OsString;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::{Config, ConfigError};

/// Shown after `--help`: how to keep secrets off the command line.
pub const AFTER_HELP: &str = "\
Client properties (librdkafka) come from, later ones winning:
  NELI_KAFKA_<NAME> environment variables: the name lower-cased, '_' for '.',
      '__' for '_' (NELI_KAFKA_SASL_PASSWORD=... sets sasl.password);
  -X KEY=VALUE and -X @FILE (a file of KEY=VALUE lines, '#' comments), in order.
Command lines are visible to every user of the machine: pass secrets
(sasl.password, ssl.key.password, ...) in a file or the environment.
Secret values never appear in neli's messages or logs.

Examples (TLS, SASL/SCRAM over TLS):
  neli exec --bootstrap-servers kafka:9093 --group billing-cron \\
      -X security.protocol=SSL -X ssl.ca.location=/etc/neli/ca.pem -- ./run-billing.sh
  NELI_KAFKA_SASL_PASSWORD=\"$(cat /run/secrets/kafka-password)\" neli exec \\
      --bootstrap-servers kafka:9093 --group billing-cron -X @/etc/neli/scram.properties \\
      -- ./run-billing.sh
  (scram.properties: security.protocol=SASL_SSL, sasl.mechanism=SCRAM-SHA-256,
   sasl.username=billing, ssl.ca.location=/etc/neli/ca.pem; see neli/KAFKA.md)";

/// The `neli` command line.
#[derive(Parser)]
#[command(name = "neli", about = "NELI leader election over Kafka", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// The subcommand and its flags.
    #[command(subcommand)]
    pub command: Cmd,
    /// How diagnostics on stderr are written (they are off unless RUST_LOG
    /// asks, e.g. RUST_LOG=neli=info): `text` for people, `json` (one
    /// object per line) for a log collector.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "NELI_LOG_FORMAT")]
    pub log_format: LogFormat,
}

/// The format of `neli`'s diagnostics (`--log-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
#[non_exhaustive]
pub enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per line: timestamp, level, target, fields.
    Json,
}

/// The flags of `neli completions`.
#[derive(Args)]
#[non_exhaustive]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes the completion script of the `neli` command line for `shell`.
///
/// ```
/// let mut script = Vec::new();
/// neli::cli::write_completions(clap_complete::Shell::Bash, &mut script);
/// assert!(String::from_utf8(script).unwrap().contains("exec"));
/// ```
pub fn write_completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    use clap::CommandFactory;
    clap_complete::generate(shell, &mut Cli::command(), "neli", out);
}

/// Parses `args` (the program's own first); a refused value that came
/// from a `NELI_*` variable rather than the command line is reported naming
/// the variable, since the flag alone would send an operator looking in the
/// wrong place. Exits 2 on a usage error, 0 after `--help`/`--version`.
pub fn parse_or_exit(args: Vec<OsString>) -> Cli {
    use clap::CommandFactory;
    let err = match Cli::try_parse_from(&args) {
        Ok(cli) => return cli,
        Err(e) => e,
    };
    let Some((var, value)) = env_source(&err, &Cli::command(), &args) else { err.exit() };
    eprint!("{}", err.render().ansi());
    eprintln!("  (the value came from the environment: {var}={value})");
    std::process::exit(2);
}

/// The variable an invalid value was read from, if it was not given on
/// the command line.
fn env_source(err: &clap::Error, cmd: &clap::Command, args: &[OsString]) -> Option<(String, String)> {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(shown)) = err.get(ContextKind::InvalidArg) else { return None };
    let long = shown.split_whitespace().next()?.strip_prefix("--")?;
    let on_line = args.iter().any(|a| a.to_string_lossy().split('=').next() == Some(&format!("--{long}")));
    if on_line {
        return None;
    }
    let arg = std::iter::once(cmd)
        .chain(cmd.get_subcommands())
        .flat_map(|c| c.get_arguments())
        .find(|a| a.get_long() == Some(long))?;
    let var = arg.get_env()?.to_string_lossy().into_owned();
    let value = std::env::var_os(&var)?.to_string_lossy().into_owned();
    Some((var, value))
}

/// Writes the `neli(1)` man page (roff) of the `neli` command line.
pub fn write_man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use clap::CommandFactory;
    clap_mangen::Man::new(Cli::command()).render(out)
}

/// The subcommands of `neli`.
#[derive(Subcommand)]
pub enum Cmd {
    /// Run CMD only while this process leads the election.
    #[command(after_help = AFTER_HELP)]
    Exec(ExecArgs),
    /// Print one JSON line per leadership transition seen on the topic.
    #[command(after_help = AFTER_HELP)]
    Watch(Common),
    /// End the election: create its end marker, wait 3 s, delete its topic; every member stops.
    #[command(after_help = AFTER_HELP)]
    End(Common),
    /// For CMD under `neli exec`: exit 0 while the lease still holds, 1 once
    /// it ended (or is held for another token), 2 on a missing or bad lease
    /// file. Check it right before each action (neli/KAFKA.md, "neli holds").
    #[command(after_help = HOLDS_HELP)]
    Holds(HoldsArgs),
    /// Internal: what `neli exec` starts CMD through. It arms the
    /// parent-death signal, then becomes CMD (exec), so CMD never outlives
    /// neli, with no `unsafe` code between fork and exec in neli itself.
    #[command(name = "exec-child", hide = true)]
    ExecChild(ExecChildArgs),
    /// Print a completion script for bash, zsh, fish, elvish or powershell
    /// (e.g. `neli completions bash > /etc/bash_completion.d/neli`).
    Completions(CompletionsArgs),
    /// Print the neli(1) man page (e.g. `neli man | man -l -`).
    Man,
}

/// The hidden `exec-child` subcommand's arguments (see [`Cmd::ExecChild`]).
#[derive(Args)]
#[non_exhaustive]
pub struct ExecChildArgs {
    /// The pid of the `neli exec` that started this process: if it is no
    /// longer the parent, neli died before the signal was armed.
    #[arg(long)]
    pub parent: u32,
    /// CMD and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

const HOLDS_HELP: &str = r#"Example, in CMD's loop:
  while :; do
    neli holds || { sleep 0.1; continue; }
    do-one-step --fencing-token "$NELI_TOKEN"
  done"#;

/// The flags of `neli holds`.
#[derive(Args)]
#[non_exhaustive]
pub struct HoldsArgs {
    /// The lease file `neli exec` keeps (default: $NELI_LEASE_FILE, which
    /// neli exec gives CMD).
    #[arg(long, value_name = "PATH")]
    pub lease_file: Option<std::path::PathBuf>,
    /// Hold only for this token (default: $NELI_TOKEN when set), so a CMD
    /// of an earlier term never borrows a later lease.
    #[arg(long)]
    pub token: Option<u64>,
    /// The role whose lease to check (default: $NELI_ROLE_NUMBER, which
    /// `neli exec --roles` gives each CMD; else 0, the one role).
    #[arg(long, value_name = "J")]
    pub role: Option<u32>,
    /// Say why on stderr (the lease's time left, or how long ago it ended).
    #[arg(short, long)]
    pub verbose: bool,
}

/// The flags every subcommand that talks to Kafka takes.
#[derive(Args, Clone)]
#[non_exhaustive]
pub struct Common {
    /// Kafka brokers to connect to first (librdkafka's `bootstrap.servers`).
    #[arg(long, value_name = "HOST:PORT", env = "NELI_BOOTSTRAP_SERVERS")]
    pub bootstrap_servers: String,
    /// Election group: every member of one election uses the same.
    #[arg(long, value_name = "G", env = "NELI_GROUP")]
    pub group: String,
    /// Election topic (default `<group>.neli`).
    #[arg(long, value_name = "T", env = "NELI_TOPIC")]
    pub topic: Option<String>,
    /// Lease length T (e.g. 500ms, 2s).
    #[arg(long, value_parser = parse_duration, default_value = "5s", env = "NELI_HEARTBEAT_TIMEOUT")]
    pub heartbeat_timeout: Duration,
    /// Kafka session timeout S (default 3 × heartbeat timeout). Under
    /// `--group-protocol consumer` the broker sets it: then the value neli
    /// assumes where the broker cannot say (default 45s, Kafka's).
    #[arg(long, value_parser = parse_duration, env = "NELI_SESSION_TIMEOUT")]
    pub session_timeout: Option<Duration>,
    /// Acquisition grace G: a new owner of the partition leads no sooner
    /// than this after its assignment. Must be at least the heartbeat
    /// timeout + 10 % under `--group-protocol consumer`.
    #[arg(long, value_parser = parse_duration, default_value = "0s", env = "NELI_GRACE")]
    pub grace: Duration,
    /// Group protocol: `classic` (the default) or `consumer` (Kafka 4's
    /// KIP-848: the broker assigns and sets the session timeout; the
    /// successor then waits a grace of at least the heartbeat timeout + 10 %,
    /// neli/KAFKA.md "The consumer group protocol").
    #[arg(long, value_parser = parse_group_protocol, default_value = "classic", env = "NELI_GROUP_PROTOCOL")]
    pub group_protocol: crate::config::GroupProtocol,
    /// Partition assignment strategy, the same for every member of the group:
    /// `cooperative-sticky` (the default: only a partition that moves is
    /// revoked) or `range` (eager: the leader stops whenever a member joins
    /// or leaves; the default before neli 0.1, needed to join a group
    /// whose members use it).
    #[arg(long, value_parser = parse_assignment, default_value = "cooperative-sticky", env = "NELI_ASSIGNMENT")]
    pub assignment: crate::config::Assignment,
    /// Turn the membership proof off (goNELI): the lease then rests on the
    /// member's own heartbeats alone, and a resumed zombie may lead until
    /// its client learns of the eviction (docs/background.md, Hazards 2).
    #[arg(long, env = "NELI_NO_MEMBERSHIP_PROOF", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_membership_proof: bool,
    /// Extra librdkafka property (repeatable), e.g. -X security.protocol=SSL;
    /// -X @FILE reads KEY=VALUE lines from FILE.
    #[arg(short = 'X', value_name = "KEY=VALUE|@FILE")]
    pub properties: Vec<String>,
    /// Instance name (default `{hostname}_{pid}_{unix}`).
    #[arg(long, env = "NELI_NAME")]
    pub name: Option<String>,
    /// Give up (exit 2) if the cluster does not answer within this.
    #[arg(long, value_parser = parse_duration, default_value = "10s", env = "NELI_CONNECT_TIMEOUT")]
    pub connect_timeout: Duration,
}

/// The flags of `neli exec`.
#[derive(Args)]
#[non_exhaustive]
pub struct ExecArgs {
    /// The election's flags.
    #[command(flatten)]
    pub common: Common,
    /// How long CMD may take to stop after SIGTERM before SIGKILL.
    #[arg(long, value_parser = parse_duration, default_value = "10s", env = "NELI_STOP_TIMEOUT")]
    pub stop_timeout: Duration,
    /// Shell command run on acquiring leadership, before CMD starts.
    #[arg(long, value_name = "SHELL", env = "NELI_ON_ACQUIRE")]
    pub on_acquire: Option<String>,
    /// Shell command run after CMD stopped on losing leadership.
    #[arg(long, value_name = "SHELL", env = "NELI_ON_REVOKE")]
    pub on_revoke: Option<String>,
    /// Print the bounds this configuration implies (failover on a crash,
    /// handover on close, resign hold-off, the rebalance timeout it needs,
    /// the clock drift it tolerates) and exit 0, without connecting. CMD
    /// may be left out.
    #[arg(long)]
    pub explain: bool,
    /// Serve /metrics (Prometheus text), /healthz (200 while the election
    /// loop is alive) and /leader (200 while this member leads) over HTTP
    /// on HOST:PORT; port 0 takes a free port. The address is printed on
    /// stderr. Loopback only (e.g. 127.0.0.1:9464 or localhost:9464)
    /// unless --metrics-allow-remote.
    #[arg(long, value_name = "HOST:PORT", env = "NELI_METRICS_ADDR")]
    pub metrics_addr: Option<String>,
    /// Allow --metrics-addr on an address other than loopback: the
    /// endpoints have no authentication.
    #[arg(long, requires = "metrics_addr", env = "NELI_METRICS_ALLOW_REMOTE", value_parser = clap::builder::FalseyValueParser::new())]
    pub metrics_allow_remote: bool,
    /// Elect M roles over the group (multi-role mode: role j on partition
    /// j mod P) and run one CMD per role this member leads, with the role's
    /// number in `NELI_ROLE_NUMBER` and in place of every `{role}` in CMD's
    /// arguments (neli/KAFKA.md, "Many roles: one CMD per led role").
    /// Without it, one role and no placeholder.
    #[arg(long, value_name = "M", env = "NELI_ROLES")]
    pub roles: Option<u32>,
    /// Partitions of the election topic with --roles (default: M, one role
    /// per partition); at most M.
    #[arg(long, value_name = "P", requires = "roles", env = "NELI_PARTITIONS")]
    pub partitions: Option<u32>,
    /// With --roles: continuous availability instead of one leader per
    /// role; a role may have two leaders for a while. Needs a heartbeat
    /// timeout above the session timeout (docs/background.md, "Modes").
    #[arg(long, requires = "roles", env = "NELI_NON_EXCLUSIVE", value_parser = clap::builder::FalseyValueParser::new())]
    pub non_exclusive: bool,
    /// The command to run while leading (once per led role with --roles).
    #[arg(last = true, required_unless_present = "explain", value_name = "CMD")]
    pub cmd: Vec<String>,
}

/// Where `neli exec` puts a role's number in CMD's arguments (`--roles`).
pub const ROLE_PLACEHOLDER: &str = "{role}";

/// CMD's arguments for `role`: every [`ROLE_PLACEHOLDER`] replaced by the
/// role's number, within an argument too (`--shard={role}`).
///
/// ```
/// let cmd = ["worker".to_owned(), "--shard={role}".to_owned()];
/// assert_eq!(neli::cli::cmd_for_role(&cmd, 7), ["worker", "--shard=7"]);
/// ```
pub fn cmd_for_role(cmd: &[String], role: u32) -> Vec<String> {
    cmd.iter().map(|a| a.replace(ROLE_PLACEHOLDER, &role.to_string())).collect()
}

impl ExecArgs {
    /// The election mode `--roles`, `--partitions` and `--non-exclusive`
    /// ask for, or a message naming the flag at fault.
    pub fn mode(&self) -> Result<crate::config::Mode, FlagError> {
        let Some(roles) = self.roles else { return Ok(crate::config::Mode::Exclusive) };
        let partitions = self.partitions.unwrap_or(roles);
        if partitions > roles {
            return Err(FlagError::PartitionsAboveRoles { partitions, roles });
        }
        Ok(crate::config::Mode::MultiRole { roles, partitions, exclusive: !self.non_exclusive })
    }

    /// The configuration of this `neli exec`: [`Common::config`] with the
    /// mode of [`ExecArgs::mode`].
    pub fn config(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<(Config, Vec<Property>), FlagError> {
        self.common.config_in(vars, self.mode()?)
    }

    /// The address `--metrics-addr` names, if given: an IP address and
    /// port (`localhost:PORT` is 127.0.0.1), on loopback unless
    /// `--metrics-allow-remote`; otherwise a message naming the flag and
    /// its value.
    pub fn metrics_addr(&self) -> Result<Option<std::net::SocketAddr>, MetricsAddrError> {
        let Some(text) = &self.metrics_addr else { return Ok(None) };
        let addr = parse_socket_addr(text).ok_or_else(|| MetricsAddrError::NotAnAddress(text.clone()))?;
        if !addr.ip().is_loopback() && !self.metrics_allow_remote {
            return Err(MetricsAddrError::NotLoopback(text.clone()));
        }
        Ok(Some(addr))
    }
}

/// Why `--metrics-addr` was refused (the value given, which is no secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsAddrError {
    /// Not an IP address and port.
    #[error("--metrics-addr '{0}' is not an IP address and port (e.g. 127.0.0.1:9464, [::1]:9464)")]
    NotAnAddress(String),
    /// Not a loopback address, and `--metrics-allow-remote` not given.
    #[error(
        "--metrics-addr '{0}' is not a loopback address: the endpoints have no authentication; \
         add --metrics-allow-remote to serve them on it anyway"
    )]
    NotLoopback(String),
}

/// `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT` (no name lookup).
fn parse_socket_addr(text: &str) -> Option<std::net::SocketAddr> {
    if let Ok(addr) = text.parse() {
        return Some(addr);
    }
    let port = text.strip_prefix("localhost:")?.parse::<u16>().ok()?;
    Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
}

fn parse_duration(s: &str) -> Result<Duration, crate::duration::DurationError> {
    crate::duration::parse(s)
}

fn parse_assignment(s: &str) -> Result<crate::config::Assignment, crate::config::UnknownName> {
    crate::config::Assignment::parse(s)
}

fn parse_group_protocol(s: &str) -> Result<crate::config::GroupProtocol, crate::config::UnknownName> {
    crate::config::GroupProtocol::parse(s)
}

/// A client property and where it came from (`-X`, `-X @FILE`, or the
/// environment variable), for messages that must not show its value.
pub struct Property {
    /// The property's name (`sasl.mechanism`).
    pub key: String,
    /// Its value: never shown, it may be a secret.
    pub value: String,
    /// Where it came from: `-X`, `-X @FILE` or the `NELI_KAFKA_*` variable.
    pub source: String,
}

/// The client properties from the environment and the `-X` arguments, in
/// that order. Errors never show an argument: it may hold a secret.
pub fn client_properties(
    args: &[String],
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Vec<Property>, FlagError> {
    let env = crate::properties::properties_from_env(vars)?;
    let mut out: Vec<Property> = env
        .into_iter()
        .map(|(key, value)| {
            let source = format!("NELI_KAFKA_{}", key.replace('_', "__").replace('.', "_").to_uppercase());
            Property { key, value, source }
        })
        .collect();
    for (i, arg) in args.iter().enumerate() {
        if let Some(path) = arg.strip_prefix('@') {
            let props = crate::properties::read_properties_file(std::path::Path::new(path))?;
            let source = format!("-X @{path}");
            out.extend(props.into_iter().map(|(key, value)| Property { key, value, source: source.clone() }));
            continue;
        }
        let Some((k, v)) = arg.split_once('=') else {
            return Err(FlagError::NotAProperty(i + 1));
        };
        if k.trim().is_empty() {
            return Err(FlagError::EmptyName(i + 1));
        }
        out.push(Property { key: k.trim().to_owned(), value: v.to_owned(), source: "-X".into() });
    }
    Ok(out)
}

/// Why the flags, `-X` properties and `NELI_KAFKA_*` variables give no
/// configuration, naming the flag, variable or `-X` at fault (never a
/// property's value: it may be a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlagError {
    /// A `NELI_KAFKA_*` variable or a `-X @FILE` properties file.
    #[error(transparent)]
    Properties(#[from] crate::properties::PropertiesError),
    /// The `-X` argument with this number (from 1) is neither `KEY=VALUE`
    /// nor `@FILE`.
    #[error("-X argument {0} is neither KEY=VALUE nor @FILE (it is not shown: it may hold a secret)")]
    NotAProperty(usize),
    /// The `-X` argument with this number (from 1) has no name before `=`.
    #[error("-X argument {0}: the property name before '=' is empty")]
    EmptyName(usize),
    /// A setting given by its flag and as a client property.
    #[error("{by} sets {key} that {flag} also sets: give it once")]
    SetTwice {
        /// Where the property came from (`-X`, `-X @FILE`, the variable).
        by: String,
        /// The property.
        key: String,
        /// The flag that sets it too.
        flag: &'static str,
    },
    /// The configuration was refused; `at` is what the user typed: the
    /// property's source and name, or the flag.
    #[error("{at}: {error}")]
    RefusedAt {
        /// The property's source and name, or the flag.
        at: String,
        /// Why.
        error: ConfigError,
    },
    /// The configuration was refused for a field no flag sets.
    #[error("{0}")]
    Refused(ConfigError),
    /// `--partitions` above `--roles`: a partition above the roles would
    /// elect nobody.
    #[error("--partitions {partitions} is more than --roles {roles}: a partition above the roles elects nobody")]
    PartitionsAboveRoles {
        /// `--partitions`.
        partitions: u32,
        /// `--roles`.
        roles: u32,
    },
}

/// The flag that sets a configuration field, for error messages.
fn flag_of(field: &str) -> Option<&'static str> {
    match field {
        "group" => Some("--group"),
        "leader_topic" | "topic" => Some("--topic"),
        "name" => Some("--name"),
        "heartbeat_timeout" => Some("--heartbeat-timeout"),
        "session.timeout.ms" | "broker_session_timeout" => Some("--session-timeout"),
        "grace" => Some("--grace"),
        "membership_proof" => Some("--no-membership-proof"),
        "bootstrap.servers" => Some("--bootstrap-servers"),
        "roles" => Some("--roles"),
        "partitions" => Some("--partitions"),
        _ => None,
    }
}

impl Common {
    /// The configuration these flags, `vars` (the environment's
    /// `NELI_KAFKA_*`) and the `-X` properties give, with the properties
    /// (to redact their secrets from what is printed), or a message naming
    /// the flag, variable or `-X` at fault.
    pub fn config(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<(Config, Vec<Property>), FlagError> {
        self.config_in(vars, crate::config::Mode::Exclusive)
    }

    fn config_in(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        mode: crate::config::Mode,
    ) -> Result<(Config, Vec<Property>), FlagError> {
        let mut b = Config::builder()
            .mode(mode)
            .bootstrap_servers(self.bootstrap_servers.clone())
            .group(self.group.clone())
            .heartbeat_timeout(self.heartbeat_timeout)
            .assignment(self.assignment)
            .group_protocol(self.group_protocol)
            .grace(self.grace)
            .membership_proof(!self.no_membership_proof)
            .min_poll_interval(Duration::from_millis(20))
            .kafka("log_level", "3");
        if let Some(t) = &self.topic {
            b = b.topic(t.clone());
        }
        match (self.session_timeout, self.group_protocol) {
            (Some(s), crate::config::GroupProtocol::Consumer) => b = b.broker_session_timeout(s),
            (Some(s), crate::config::GroupProtocol::Classic) => b = b.session_timeout(s),
            (None, _) => {}
        }
        if let Some(n) = &self.name {
            b = b.name(n.clone());
        }
        let properties = client_properties(&self.properties, vars)?;
        // A setting given twice, by its flag and as a client property, is
        // a mistake either way round: refuse it rather than pick one.
        for p in &properties {
            let flagged = match p.key.as_str() {
                "bootstrap.servers" => true,
                "session.timeout.ms" => self.session_timeout.is_some(),
                _ => false,
            };
            if flagged {
                let flag = flag_of(&p.key).unwrap_or("its flag");
                return Err(FlagError::SetTwice { by: p.source.clone(), key: p.key.clone(), flag });
            }
        }
        for p in &properties {
            b = b.kafka(p.key.clone(), p.value.clone());
        }
        // Name what the user typed: the property's source, else the flag.
        let config = b.build().map_err(|error| {
            let field = error.field();
            match (properties.iter().rev().find(|p| p.key == field), flag_of(field)) {
                (Some(p), _) => FlagError::RefusedAt { at: format!("{} {field}", p.source), error },
                (None, Some(flag)) => FlagError::RefusedAt { at: flag.to_owned(), error },
                (None, None) => FlagError::Refused(error),
            }
        })?;
        Ok((config, properties))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, Cmd, MetricsAddrError};

    fn exec_config(extra: &[&str]) -> crate::Config {
        let mut args = vec!["neli", "exec", "--bootstrap-servers", "h:1", "--group", "g"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "true"]);
        let Cmd::Exec(e) = Cli::try_parse_from(args).expect("parses").command else { panic!("exec") };
        e.common.config(Vec::new()).expect("a valid configuration").0
    }

    fn metrics_addr(extra: &[&str]) -> Result<Option<std::net::SocketAddr>, MetricsAddrError> {
        let mut args = vec!["neli", "exec", "--bootstrap-servers", "h:1", "--group", "g"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "true"]);
        let Cmd::Exec(e) = Cli::try_parse_from(args).expect("parses").command else { panic!("exec") };
        e.metrics_addr()
    }

    #[test]
    fn metrics_addr_is_loopback_unless_remote_is_allowed() {
        assert_eq!(metrics_addr(&[]), Ok(None));
        let ok = |a: &str| metrics_addr(&["--metrics-addr", a]).expect("accepted").expect("given").to_string();
        assert_eq!(ok("127.0.0.1:9464"), "127.0.0.1:9464");
        assert_eq!(ok("127.0.0.2:0"), "127.0.0.2:0");
        assert_eq!(ok("[::1]:9464"), "[::1]:9464");
        assert_eq!(ok("localhost:9464"), "127.0.0.1:9464");
        let err = metrics_addr(&["--metrics-addr", "0.0.0.0:9464"]).unwrap_err().to_string();
        assert!(err.contains("--metrics-addr '0.0.0.0:9464' is not a loopback address"), "{err}");
        assert!(err.contains("--metrics-allow-remote"), "{err}");
        let remote = metrics_addr(&["--metrics-addr", "0.0.0.0:9464", "--metrics-allow-remote"]);
        assert_eq!(remote.map(|a| a.map(|a| a.to_string())), Ok(Some("0.0.0.0:9464".into())));
        for bad in ["9464", "localhost", "example.com:9464", "127.0.0.1:99999", "127.0.0.1:"] {
            let err = metrics_addr(&["--metrics-addr", bad]).unwrap_err().to_string();
            assert!(err.contains(&format!("--metrics-addr '{bad}' is not an IP address and port")), "{err}");
        }
    }

    fn exec_error(extra: &[&str]) -> String {
        let mut args = vec!["neli", "exec", "--bootstrap-servers", "h:1", "--group", "g"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "true"]);
        let Cmd::Exec(e) = Cli::try_parse_from(args).expect("parses").command else { panic!("exec") };
        e.common.config(Vec::new()).err().expect("refused").to_string()
    }

    #[test]
    fn group_protocol_consumer_takes_the_session_timeout_as_the_brokers_and_needs_a_grace() {
        use crate::config::GroupProtocol;
        assert_eq!(exec_config(&[]).group_protocol, GroupProtocol::Classic);
        let c = exec_config(&["--group-protocol", "consumer", "--grace", "6s", "--session-timeout", "30s"]);
        assert_eq!(c.group_protocol, GroupProtocol::Consumer);
        assert_eq!(c.broker_session_timeout, Some(std::time::Duration::from_secs(30)));
        assert!(!c.kafka_config.contains_key("session.timeout.ms"), "{:?}", c.kafka_config.keys());
        let err = exec_error(&["--group-protocol", "consumer"]);
        assert!(
            err.starts_with(
                "--grace: grace (0ns) must be at least heartbeat_timeout + 10% (5.5s, with T = 5s) with group protocol consumer"
            ),
            "{err}"
        );
        let err = exec_error(&["--group-protocol", "consumer", "--grace", "5s", "--no-membership-proof"]);
        assert!(
            err.starts_with("--no-membership-proof: membership_proof cannot be off with group protocol consumer"),
            "{err}"
        );
        let err = exec_error(&["--group-protocol", "consumer", "--grace", "5s", "-X", "heartbeat.interval.ms=500"]);
        assert!(
            err.starts_with(
                "-X heartbeat.interval.ms: cannot set 'heartbeat.interval.ms' with group protocol consumer"
            ),
            "{err}"
        );
        let Err(e) = Cli::try_parse_from([
            "neli",
            "exec",
            "--bootstrap-servers",
            "h:1",
            "--group",
            "g",
            "--group-protocol",
            "kip848",
            "--",
            "true",
        ]) else {
            panic!("an unknown protocol is refused")
        };
        assert!(
            e.to_string().contains("\"kip848\" is not a group protocol (expected \"classic\" or \"consumer\")"),
            "{e}"
        );
    }

    #[test]
    fn the_membership_proof_is_on_unless_turned_off() {
        assert!(exec_config(&[]).membership_proof);
        assert!(!exec_config(&["--no-membership-proof"]).membership_proof);
    }
}
