//! The commands of the admin protocol (docs/admin-protocol.md "Requests"),
//! and the privilege each needs.

use rrp::Address;
use serde::{Deserialize, Serialize};

use super::config::ReloadRequest;
use super::is_false;
use super::mad::MadQuery;
use super::port::PortSpec;
use super::trace::TraceKind;

/// What `show` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Show {
    /// The box: name, HR count, FIB version, known SANs, uptime.
    Router {},
    /// The running configuration, in the TOML the daemon reads
    /// (`{"toml": "..."}`).
    Config {},
    /// Every HR: address, SAN, MTU, cost, state, table sizes.
    Hrs {},
    /// Every port: backend, state, HR, traffic totals.
    Ports {},
    /// The LRT of one HR (or of all).
    Lrt {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The RTs an HR keeps (learned and twin-derived).
    Rts {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
        /// Only RTs of this SAN.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        san: Option<Address>,
    },
    /// The best route of an HR to every destination it knows.
    Routes {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The FIB entries the workers use.
    Fib {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The other routers (buddies) on each HR's SAN.
    Neighbors {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The dataplane counters per port, drops by reason.
    Counters {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The lookup a packet to `dst` gets on each ingress HR (or one).
    Route {
        /// The destination.
        dst: Address,
        /// Only this ingress port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The in-band management agent: identity, M_Key state (never the
    /// key), counters, the notices received
    /// ([`crate::view::ManagementInfo`]).
    Management {},
    /// The multicast groups: member SANs, branches, counters
    /// ([`crate::view::McastInfo`]).
    Mcast {},
    /// The dataplane's workers: core, the ports each receives from, its
    /// packets ([`crate::view::WorkerRow`]).
    Workers {},
    /// Packets for the box by punt class and port, the classes' budgets,
    /// and the heaviest sources now ([`crate::view::PuntInfo`]).
    Punt {},
}

impl Show {
    /// The `what` of this target.
    pub fn name(&self) -> &'static str {
        match self {
            Show::Router {} => "router",
            Show::Config {} => "config",
            Show::Hrs {} => "hrs",
            Show::Ports {} => "ports",
            Show::Lrt { .. } => "lrt",
            Show::Rts { .. } => "rts",
            Show::Routes { .. } => "routes",
            Show::Fib { .. } => "fib",
            Show::Neighbors { .. } => "neighbors",
            Show::Counters { .. } => "counters",
            Show::Route { .. } => "route",
            Show::Management {} => "management",
            Show::Mcast {} => "mcast",
            Show::Workers {} => "workers",
            Show::Punt {} => "punt",
        }
    }
}

/// A port's administrative state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortState {
    /// Enabled.
    Up,
    /// Disabled: the HR is down (LINK-DOWN handling).
    Down,
}

impl PortState {
    /// The name in commands and configuration files.
    pub fn as_str(self) -> &'static str {
        match self {
            PortState::Up => "up",
            PortState::Down => "down",
        }
    }

    /// The state of a port that is up or not.
    pub fn of(up: bool) -> PortState {
        if up { PortState::Up } else { PortState::Down }
    }
}

/// A change of the static LRT entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum RouteOp {
    /// Adds (or replaces) a static LRT entry on one HR.
    Add {
        /// The HR (port) whose SAN the node is on.
        port: PortSpec,
        /// The node's address.
        dst: Address,
        /// Its native address on that SAN: `02:00:00:00:00:01` (MAC),
        /// `127.0.0.1:7000` or `[::1]:7000` (UDP), or colon-separated hex.
        native: String,
        /// Its name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Whether it is a router HR (capability 2).
        #[serde(default, skip_serializing_if = "is_false")]
        router: bool,
        /// The groups (logical addresses) it listens to (docs/multicast.md).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        groups: Vec<Address>,
    },
    /// Removes a static LRT entry.
    Del {
        /// The HR (port).
        port: PortSpec,
        /// The node's address.
        dst: Address,
    },
}

/// What `clear` clears.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Clear {
    /// The dataplane counters (of one port, or all).
    Counters {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
}

/// The daemon's log level: `log.level` in its configuration, `log_level`
/// here (the most detailed level logged).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warn,
    /// The default.
    #[default]
    Info,
    /// Protocol events.
    Debug,
    /// Everything.
    Trace,
}

impl LogLevel {
    /// The level's name (also what `tracing`'s filters take).
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// How `stats` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatsFormat {
    /// A [`crate::view::Stats`] object.
    #[default]
    Json,
    /// `{"text": "..."}` in the Prometheus text exposition format.
    Prometheus,
}

/// A request's command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// Reads a table (read-only).
    Show(Show),
    /// Sets a port up or down (admin).
    Port {
        /// The port.
        port: PortSpec,
        /// Its new state.
        state: PortState,
    },
    /// Adds or removes a static LRT entry (admin).
    Route(RouteOp),
    /// Clears counters (admin).
    Clear(Clear),
    /// Sets the daemon's log level (admin).
    LogLevel {
        /// The level.
        level: LogLevel,
    },
    /// Reloads the configuration file (admin): its plan only (`dry_run`),
    /// forced past run-time changes it drops, or to be confirmed.
    Reload(ReloadRequest),
    /// Confirms a reload made with `confirm_s` (admin).
    Commit {},
    /// Returns to the `n`th previous kept configuration (default 1) through
    /// the reload path (admin).
    Rollback {
        /// How many configurations back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n: Option<u32>,
        /// Apply even though run-time changes would be dropped.
        #[serde(default, skip_serializing_if = "is_false")]
        force: bool,
    },
    /// The kept configurations, newest first (read-only).
    History {},
    /// Saves the running configuration, run-time changes included, to the
    /// configuration file or `file` (admin).
    Write {
        /// Another file than the daemon's configuration file, in the same
        /// directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
    /// Drains the box and stops the daemon (admin; docs/daemon.md
    /// "Draining before maintenance"): its routes go out at the largest
    /// cost, and it stops once its forwarded counters are quiet or after
    /// the timeout. Answered when the drain begins.
    Drain {
        /// The longest wait for traffic to move (default `drain.timeout_ms`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Streams the packets of a port (admin; see [`CaptureEvent`](super::CaptureEvent)).
    Capture {
        /// The port.
        port: PortSpec,
        /// Stop after this many packets (default: until the client leaves).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
        /// Also the packets the dataplane drops on this port, each with
        /// its reason.
        #[serde(default, skip_serializing_if = "is_false")]
        drops: bool,
        /// The packets queued for transmission on this port instead of those
        /// received: forwarded to it, or sent by the control plane.
        #[serde(default, skip_serializing_if = "is_false")]
        transmitted: bool,
        /// Bytes kept of each packet (default and maximum
        /// [`CAPTURE_MAX_SNAPLEN`](super::CAPTURE_MAX_SNAPLEN)).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snaplen: Option<u32>,
    },
    /// Traces what the dataplane decides for the next `count` received
    /// packets that match (admin; see [`TraceEvent`](super::TraceEvent)).
    TracePackets {
        /// Only packets received on this port (default: any).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
        /// How many packets to trace (1 to
        /// [`TRACE_MAX_COUNT`](super::TRACE_MAX_COUNT)).
        count: u64,
        /// Only packets to this destination.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dst: Option<Address>,
        /// Only L2 (source-routed) or only L3 packets.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        only: Option<TraceKind>,
        /// End the trace after this many milliseconds (default, and 0:
        /// when `count` packets are traced or the client leaves).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Traffic and control-plane totals (read-only).
    Stats {
        /// JSON or Prometheus text.
        #[serde(default, skip_serializing_if = "is_default_format")]
        format: StatsFormat,
    },
    /// The daemon's and the protocol's versions (read-only).
    Version {},
    /// Sends one management datagram to a node and answers with its
    /// response (admin; [`crate::mad`]).
    Mad(MadQuery),
}

fn is_default_format(f: &StatsFormat) -> bool {
    *f == StatsFormat::Json
}

/// Who may do what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Privilege {
    /// May only read.
    ReadOnly,
    /// May change things.
    Admin,
}

impl Privilege {
    /// The privilege's name.
    pub fn name(self) -> &'static str {
        match self {
            Privilege::ReadOnly => "read_only",
            Privilege::Admin => "admin",
        }
    }
}

impl Command {
    /// Every `cmd` name, in documentation order.
    pub const NAMES: [&'static str; 16] = [
        "show",
        "port",
        "route",
        "clear",
        "log_level",
        "reload",
        "commit",
        "rollback",
        "history",
        "write",
        "drain",
        "capture",
        "trace_packets",
        "stats",
        "version",
        "mad",
    ];

    /// The command's `cmd` name.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Show(_) => "show",
            Command::Port { .. } => "port",
            Command::Route(_) => "route",
            Command::Clear(_) => "clear",
            Command::LogLevel { .. } => "log_level",
            Command::Reload(_) => "reload",
            Command::Commit {} => "commit",
            Command::Rollback { .. } => "rollback",
            Command::History {} => "history",
            Command::Write { .. } => "write",
            Command::Drain { .. } => "drain",
            Command::Capture { .. } => "capture",
            Command::TracePackets { .. } => "trace_packets",
            Command::Stats { .. } => "stats",
            Command::Version {} => "version",
            Command::Mad(_) => "mad",
        }
    }

    /// Whether the command changes something (or, for `capture` and
    /// `trace_packets`, reveals traffic) and so needs [`Privilege::Admin`].
    pub fn needs_admin(&self) -> bool {
        match self {
            Command::Show(_)
            | Command::Stats { .. }
            | Command::Version {}
            | Command::History {} => false,
            Command::Port { .. }
            | Command::Route(_)
            | Command::Clear(_)
            | Command::LogLevel { .. }
            | Command::Reload(_)
            | Command::Commit {}
            | Command::Rollback { .. }
            | Command::Write { .. }
            | Command::Drain { .. }
            | Command::Capture { .. }
            | Command::TracePackets { .. }
            | Command::Mad(_) => true,
        }
    }

    /// The privilege the command needs.
    pub fn privilege(&self) -> Privilege {
        if self.needs_admin() {
            Privilege::Admin
        } else {
            Privilege::ReadOnly
        }
    }

    /// Whether the answer is a stream of lines (`capture`,
    /// `trace_packets`).
    pub fn streams(&self) -> bool {
        matches!(self, Command::Capture { .. } | Command::TracePackets { .. })
    }
}
