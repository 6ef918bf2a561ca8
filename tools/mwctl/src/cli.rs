//! The command line (clap), and its translation into protocol commands.

use std::path::PathBuf;

use admin::proto::{
    Clear, Command, LogLevel, PortSpec, PortState, ReloadRequest, RouteOp, Show, StatsFormat,
};
use admin::server::DEFAULT_SOCKET;
use clap::{Parser, Subcommand, ValueEnum};
use rrp::Address;

const AFTER_HELP: &str = "\
Ports are given by index (0, 1, ...) or by their HR's address (0x0115).
Addresses are hexadecimal with 0x (0x0101) or decimal (257).

Exit status: 0 ok; 1 the daemon refused or failed the request; 2 usage error;
3 the daemon cannot be reached (not running, no permission on the socket, no answer).";

/// mwctl: manage mwrouterd over its admin socket.
#[derive(Debug, Parser)]
#[command(
    name = "mwctl",
    version,
    about = "Manage the mwrouter daemon (mwrouterd) over its admin socket",
    long_about = "Manage the mwrouter daemon (mwrouterd) over its admin socket: show its \
                  tables and counters, set ports up or down, edit static routes, capture \
                  and trace packets, read statistics. Talks the JSON-lines protocol of \
                  docs/admin-protocol.md.",
    after_help = AFTER_HELP
)]
pub struct Cli {
    /// The daemon's admin socket.
    #[arg(
        long,
        global = true,
        env = "MWCTL_SOCKET",
        default_value = DEFAULT_SOCKET,
        value_name = "PATH"
    )]
    pub socket: PathBuf,
    /// Print the daemon's JSON answer instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
    /// Seconds to wait for the daemon's answer (default 10; 0: for ever);
    /// for `ping`, the wait for each reply (default 1).
    #[arg(
        long,
        global = true,
        value_name = "SECS",
        allow_negative_numbers = true
    )]
    pub timeout: Option<f64>,
    /// What to do.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Show the daemon's tables and counters.
    #[command(subcommand)]
    Show(ShowCmd),
    /// Set a port up or down (admin).
    Port {
        /// The port: index or HR address.
        port: PortSpec,
        /// The new state.
        state: StateArg,
    },
    /// Add or remove static LRT entries (admin).
    #[command(subcommand)]
    Route(RouteCmd),
    /// Clear counters (admin).
    #[command(subcommand)]
    Clear(ClearCmd),
    /// The daemon's logging (admin).
    #[command(subcommand)]
    Log(LogCmd),
    /// Reload the daemon's configuration file (admin): what changes live,
    /// what needs a restart (refused), which run-time changes it would drop
    /// (refused without --force).
    Reload {
        /// Only show the plan; apply nothing.
        #[arg(long)]
        dry_run: bool,
        /// Apply even though run-time changes (`route add`/`del`) would be
        /// dropped.
        #[arg(long)]
        force: bool,
        /// Return to the previous configuration unless `mwctl commit` comes
        /// within SECS seconds.
        #[arg(long, value_name = "SECS")]
        confirm: Option<u64>,
    },
    /// Confirm a reload made with `--confirm` (admin).
    Commit,
    /// Return to the Nth previous configuration (default 1) through the
    /// reload path (admin).
    Rollback {
        /// How many configurations back (see `mwctl history`).
        n: Option<u32>,
        /// Apply even though run-time changes would be dropped.
        #[arg(long)]
        force: bool,
    },
    /// The configurations the daemon keeps: when, how, who asked, what
    /// changed.
    History,
    /// Save the running configuration, run-time changes included, to the
    /// daemon's configuration file (or FILE), keeping the old one as .bak
    /// (admin).
    Write {
        /// Another file (a path on the daemon's machine).
        file: Option<PathBuf>,
    },
    /// Drain the box and stop the daemon (admin): its routes go out at the
    /// largest cost, and it stops once the traffic through it has moved.
    Drain {
        /// The longest wait for traffic to move, in seconds (default
        /// `drain.timeout_ms`).
        #[arg(long)]
        timeout: Option<f64>,
    },
    /// Capture a port's packets into a pcap file (admin).
    Capture {
        /// The port: index or HR address.
        port: PortSpec,
        /// The pcap file to write (`-`: standard output).
        #[arg(short = 'w', long = "write", value_name = "FILE")]
        file: PathBuf,
        /// Stop after this many packets (default: until interrupted).
        #[arg(short = 'c', long = "count", value_name = "N")]
        count: Option<u64>,
        /// Also capture the packets the dataplane drops on the port
        /// (their reasons are summed up at the end).
        #[arg(long, conflicts_with = "transmitted")]
        drops: bool,
        /// Capture what the port transmits (forwarded to it or sent by the
        /// control plane) instead of what it receives.
        #[arg(long)]
        transmitted: bool,
        /// Bytes kept of each packet.
        #[arg(short = 's', long, value_name = "BYTES")]
        snaplen: Option<u32>,
    },
    /// Trace what the dataplane decides for the next N received packets:
    /// lookup, next hop, EI, verdict (admin; docs/dataplane.md "Tracing
    /// packets"). Ends when N are traced or after --timeout seconds (0:
    /// only when N are).
    TracePackets(crate::trace_packets::TracePacketsArgs),
    /// Traffic and control-plane totals.
    Stats {
        /// Repeat every interval until interrupted, with rates.
        #[arg(long)]
        watch: bool,
        /// Print the Prometheus text exposition instead.
        #[arg(long)]
        prometheus: bool,
        /// Seconds between two samples with --watch.
        #[arg(long, default_value_t = 1.0, value_name = "SECS")]
        interval: f64,
        /// Stop after this many samples with --watch.
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        /// Read the daemon's counters area (`<socket>.stats`) directly
        /// instead of asking the daemon (docs/stats.md).
        #[arg(long, value_name = "FILE", conflicts_with = "watch")]
        area: Option<std::path::PathBuf>,
    },
    /// The daemon's version and protocol version.
    Version,
    /// In-band management: send one MAD to a node and print its answer
    /// (admin; docs/management.md).
    Mad(crate::mad::MadArgs),
    /// In-band management: read a node's identity, ports, counters, LRT or
    /// a route, as tables (admin; docs/management.md).
    Query(crate::query::QueryArgs),
    /// The SAN managers this box runs and the members their sweeps found
    /// (docs/manager.md).
    #[command(subcommand)]
    San(crate::san::SanCmd),
    /// Multicast groups at the SAN's master manager: create, delete, list
    /// groups and members (admin; docs/multicast.md).
    #[command(subcommand)]
    Mcast(crate::mcast::McastCmd),
    /// In-band management: echo requests to a node, with round-trip
    /// times, as ibping does (admin; docs/management.md "mwctl ping").
    /// Exit status: 0 a reply came, 1 none did.
    Ping(crate::ping::PingArgs),
    /// In-band management: walk the routers and SANs from this box, as
    /// ibnetdiscover does (admin; docs/management.md "mwctl discover").
    /// Exit status: 0 every node answered, 1 some did not, 4 --diff found a
    /// difference.
    Discover(crate::discover::DiscoverArgs),
    /// In-band management: every HR of every router, its state, SAN,
    /// MTU, cost, buddies and the routers across, as iblinkinfo does
    /// (admin; docs/management.md "mwctl links"). Exit status: 0 every
    /// router answered, 1 some did not.
    Links(crate::links::LinksArgs),
    /// In-band management: the counters of every port of every router
    /// against thresholds, as ibqueryerrors does (admin; docs/management.md
    /// "mwctl errors"). Exit status: 0 every port within its thresholds and
    /// every node answered, 1 otherwise.
    Errors(crate::errors::ErrorsArgs),
    /// In-band management: subscribe this box to its SAN's events at the
    /// master (InformInfo) and print the traps it forwards as Reports
    /// (admin; docs/management.md "Events").
    Events(crate::events::EventsArgs),
    /// Trace and validate the path to a destination hop by hop, as
    /// ibtracer does (admin; docs/mwtrace.md; the same as mwtrace). Exit
    /// status: 0 validated, 1 a hop saw the request arrive elsewhere, 2
    /// unreachable, 4 the routers would refuse the packet's partition.
    Trace(crate::trace::TraceArgs),
    /// Print shell completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
}

/// `show` targets.
#[derive(Debug, Subcommand)]
pub enum ShowCmd {
    /// The box: name, HRs, FIB version, known SANs.
    Router,
    /// The running configuration, in the TOML mwrouterd reads (save it and
    /// load it again).
    Config,
    /// Every HR: address, SAN, MTU, cost, state, table sizes.
    Hrs,
    /// Every port: backend, state, traffic totals.
    Ports,
    /// The LRT (nodes on the SAN) of each HR.
    Lrt {
        /// Only this port.
        #[arg(short, long)]
        port: Option<PortSpec>,
    },
    /// The RTs each HR keeps.
    Rts {
        /// Only this port.
        #[arg(short, long)]
        port: Option<PortSpec>,
        /// Only RTs of this SAN.
        #[arg(long)]
        san: Option<Address>,
    },
    /// The best route of each HR to every destination.
    Routes {
        /// Only this port.
        #[arg(short, long)]
        port: Option<PortSpec>,
    },
    /// The route a packet to ADDR gets: path, Q, MTU, RCVF.
    Route {
        /// The destination.
        dst: Address,
        /// Only from this ingress port.
        #[arg(short, long)]
        port: Option<PortSpec>,
    },
    /// The FIB entries the workers use.
    Fib {
        /// Only this port.
        #[arg(short, long)]
        port: Option<PortSpec>,
    },
    /// The other routers on each HR's SAN.
    Neighbors {
        /// Only this port.
        #[arg(short, long)]
        port: Option<PortSpec>,
    },
    /// The dataplane counters, drops by reason.
    Counters {
        /// Only this port.
        #[arg(short, long)]
        port: Option<PortSpec>,
    },
    /// The in-band management agent: M_Key state, counters, notices.
    Management,
    /// The multicast groups: member SANs, branches from this box, counters.
    Mcast,
    /// The dataplane's workers: core, the ports each receives from, packets.
    Workers,
    /// Packets for the box by punt class and port, the classes' budgets,
    /// and the heaviest sources now.
    Punt,
    /// The partitions enforced at each HR: open, or the SAN's partition
    /// keys and nodes, and where the tables come from.
    Partitions,
}

/// `route` operations.
#[derive(Debug, Subcommand)]
pub enum RouteCmd {
    /// Add (or replace) a static LRT entry.
    Add {
        /// The node's address.
        dst: Address,
        /// The port (HR) whose SAN the node is on.
        #[arg(short, long)]
        port: PortSpec,
        /// Its native address: 02:00:00:00:00:01, 127.0.0.1:7000, [::1]:7000.
        #[arg(short, long)]
        native: String,
        /// Its name.
        #[arg(long)]
        name: Option<String>,
        /// It is a router HR.
        #[arg(long)]
        router: bool,
        /// A group (logical address) it listens to; repeatable.
        #[arg(long = "group", value_name = "ADDR")]
        groups: Vec<Address>,
    },
    /// Remove a static LRT entry.
    Del {
        /// The node's address.
        dst: Address,
        /// The port (HR).
        #[arg(short, long)]
        port: PortSpec,
    },
}

/// `clear` targets.
#[derive(Debug, Subcommand)]
pub enum ClearCmd {
    /// The dataplane counters.
    Counters {
        /// Only this port.
        #[arg(short, long)]
        port: Option<PortSpec>,
    },
}

/// `log` settings.
#[derive(Debug, Subcommand)]
pub enum LogCmd {
    /// Set the log level.
    Level {
        /// The level.
        level: LevelArg,
    },
}

/// A port state.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StateArg {
    /// Enabled.
    Up,
    /// Disabled.
    Down,
}

/// A log level.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LevelArg {
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warn,
    /// The default.
    Info,
    /// Protocol events.
    Debug,
    /// Everything.
    Trace,
}

impl Cli {
    /// Seconds to wait for the daemon's answer when `--timeout` is not
    /// given.
    pub const DEFAULT_TIMEOUT: f64 = 10.0;

    /// `--timeout`, or its default: seconds to wait for the daemon's answer
    /// (0: for ever).
    pub fn daemon_timeout(&self) -> f64 {
        self.timeout.unwrap_or(Self::DEFAULT_TIMEOUT)
    }
}

impl Cmd {
    /// The protocol command, for the commands that send one.
    pub fn command(&self) -> Option<Command> {
        Some(match self {
            Cmd::Show(s) => Command::Show(match s {
                ShowCmd::Router => Show::Router {},
                ShowCmd::Config => Show::Config {},
                ShowCmd::Hrs => Show::Hrs {},
                ShowCmd::Ports => Show::Ports {},
                ShowCmd::Lrt { port } => Show::Lrt { port: *port },
                ShowCmd::Rts { port, san } => Show::Rts {
                    port: *port,
                    san: *san,
                },
                ShowCmd::Routes { port } => Show::Routes { port: *port },
                ShowCmd::Route { dst, port } => Show::Route {
                    dst: *dst,
                    port: *port,
                },
                ShowCmd::Fib { port } => Show::Fib { port: *port },
                ShowCmd::Neighbors { port } => Show::Neighbors { port: *port },
                ShowCmd::Counters { port } => Show::Counters { port: *port },
                ShowCmd::Management => Show::Management {},
                ShowCmd::Mcast => Show::Mcast {},
                ShowCmd::Workers => Show::Workers {},
                ShowCmd::Punt => Show::Punt {},
                // Read from `show management`'s `port_partitions`.
                ShowCmd::Partitions => Show::Management {},
            }),
            Cmd::Port { port, state } => Command::Port {
                port: *port,
                state: match state {
                    StateArg::Up => PortState::Up,
                    StateArg::Down => PortState::Down,
                },
            },
            Cmd::Route(RouteCmd::Add {
                dst,
                port,
                native,
                name,
                router,
                groups,
            }) => Command::Route(RouteOp::Add {
                port: *port,
                dst: *dst,
                native: native.clone(),
                name: name.clone(),
                router: *router,
                groups: groups.clone(),
            }),
            Cmd::Route(RouteCmd::Del { dst, port }) => Command::Route(RouteOp::Del {
                port: *port,
                dst: *dst,
            }),
            Cmd::Clear(ClearCmd::Counters { port }) => {
                Command::Clear(Clear::Counters { port: *port })
            }
            Cmd::Log(LogCmd::Level { level }) => Command::LogLevel {
                level: match level {
                    LevelArg::Error => LogLevel::Error,
                    LevelArg::Warn => LogLevel::Warn,
                    LevelArg::Info => LogLevel::Info,
                    LevelArg::Debug => LogLevel::Debug,
                    LevelArg::Trace => LogLevel::Trace,
                },
            },
            Cmd::Reload {
                dry_run,
                force,
                confirm,
            } => Command::Reload(ReloadRequest {
                dry_run: *dry_run,
                force: *force,
                confirm_s: *confirm,
            }),
            Cmd::Commit => Command::Commit {},
            Cmd::Rollback { n, force } => Command::Rollback {
                n: *n,
                force: *force,
            },
            Cmd::History => Command::History {},
            Cmd::Write { file } => Command::Write {
                file: file.as_ref().map(|f| {
                    std::path::absolute(f)
                        .unwrap_or_else(|_| f.clone())
                        .display()
                        .to_string()
                }),
            },
            Cmd::Drain { timeout } => Command::Drain {
                timeout_ms: timeout.map(|s| (s.max(0.0) * 1000.0) as u64),
            },
            Cmd::Capture {
                port,
                count,
                drops,
                transmitted,
                snaplen,
                ..
            } => Command::Capture {
                port: *port,
                count: *count,
                drops: *drops,
                transmitted: *transmitted,
                snaplen: *snaplen,
            },
            Cmd::Stats { prometheus, .. } => Command::Stats {
                format: if *prometheus {
                    StatsFormat::Prometheus
                } else {
                    StatsFormat::Json
                },
            },
            Cmd::Version => Command::Version {},
            Cmd::Mad(m) => Command::Mad(m.query().ok()?),
            Cmd::San(_) => Command::Show(Show::Management {}),
            Cmd::Completions { .. }
            | Cmd::Man
            | Cmd::Query(_)
            | Cmd::Ping(_)
            | Cmd::Discover(_)
            | Cmd::Links(_)
            | Cmd::Errors(_)
            | Cmd::Events(_)
            | Cmd::Trace(_)
            | Cmd::Mcast(_)
            | Cmd::TracePackets(_) => {
                return None;
            }
        })
    }
}
