//! The configuration of `mwrouterd` (docs/configuration.md).
//!
//! `mwrouterd --config router.toml` reads one TOML file: the router
//! (`[router]`), its HRs in port order (`[[hr]]`, each with its port backend
//! in `[hr.port]` and its static LRT entries in `[[hr.static]]`), the DPDK
//! EAL arguments (`[dpdk]`), the workers (`[workers]`), the RRP timers
//! (`[timers]`), limits (`[limits]`) and rate limits (`[rates]`), the admin
//! socket (`[admin]`), logging (`[log]`) and the in-band management agent
//! (`[management]`, docs/management.md).
//!
//! - [`Config::from_toml`] parses and validates: unknown keys are errors
//!   (typos never pass silently), and every error names its key path
//!   (`hr[1].port.bind`, `timers.hold_ms`) with the line it is on.
//! - [`Config::to_toml`] prints the configuration in the same format, every
//!   key spelled out, so that it parses back to an equal [`Config`]
//!   (`mwctl show config`).
//! - The daemon builds its parts from it: [`Config::router_config`] (the RRP
//!   engine), [`Config::engine_config`], [`Config::channel_config`] and
//!   [`Config::idle_policy`] (the dataplane), [`Config::udp_config`],
//!   [`Config::af_packet_config`] and [`Config::eal_args`] (the ports).
//! - On SIGHUP, [`Config::diff_for_reload`] tells what applies live (static
//!   entries, timers, limits, rates, logging, management) and refuses the
//!   rest, one message per key.
//! - `management.mkey`, `management.sm_key` and the `[hr.auth]` keys are
//!   secrets: no error message and no reload line shows them, nor does
//!   `Debug`; only [`Config::to_toml`] writes them (the file holds them).
//! - Each secret may instead be read from a file of its own (`mkey_file`,
//!   `sm_key_file`, `secret_file`; [`key_file`]), at every load and reload;
//!   [`Config::to_toml`] then names the file.

mod drain;
mod emit;
pub mod fuzzing;
pub mod key_file;
mod literal;
mod locate;
mod parse;
mod reload;
mod validate;

use core::fmt;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use admin::{LogLevel, PortState};
use dataplane::{ChannelConfig, EngineConfig, IdlePolicy};
use mgmt::manager::ManagerTimers;
use mgmt::perfmgr::PerfConfig;
use ports::af_packet::AfPacketConfig;
use ports::heap::{DEFAULT_BUF_SIZE, DEFAULT_HEADROOM};
use ports::udp::UdpConfig;
use rrp::router::{AuthConfig, ErrorRates, HrConfig, Limits, RouterConfig, StaticNode, Timers};
use rrp::{Address, LinkKind, NativeAddr, PuntBudgets};
use serde::Deserialize;

pub use drain::{DrainSection, MAX_DRAIN_MS};
pub use key_file::{KeyFiles, OnDisk};
pub use reload::{ReloadPlan, plan as reload_plan, runtime_changes};

/// The admin socket's default path.
pub const DEFAULT_ADMIN_SOCKET: &str = "/run/mwrouter/mwrouterd.sock";
/// The admin socket's default permissions.
pub const DEFAULT_ADMIN_MODE: u32 = 0o660;
/// The default group allowed to administer the router.
pub const DEFAULT_ADMIN_GROUP: &str = "mwadmin";
/// The applied configurations the daemon keeps for `mwctl rollback`, by
/// default (`admin.config_history`).
pub const DEFAULT_CONFIG_HISTORY: usize = 10;
/// The most applied configurations `admin.config_history` may keep.
pub const MAX_CONFIG_HISTORY: usize = 100;
/// The smallest non-zero SAN MTU in bytes.
pub const MIN_MTU: u32 = 64;
/// The largest packet the UDP and AF_PACKET ports' buffers hold (bytes):
/// the largest MTU of an HR on those backends.
pub const MAX_BUFFERED_MTU: u32 = (DEFAULT_BUF_SIZE - DEFAULT_HEADROOM) as u32;
/// The most workers (DPDK's lcore limit).
pub use rrp::limits::MAX_WORKERS;
/// The longest router, HR or node name in bytes: the engine's, which
/// bounds a static entry added by `route add` too.
pub use rrp::node::MAX_NAME;
/// A burst: the smallest pool or ring the configuration accepts.
pub const MIN_BUFFERS: usize = ports::BURST;
/// The longest node description (`management.description`, NodeDescription)
/// in bytes.
pub const MAX_DESCRIPTION: usize = 64;
/// The highest M_Key protect level (`management.protect`).
pub const MAX_PROTECT: u8 = 3;
/// Traps sent per second at most, by default (`management.traps_per_s`).
pub const DEFAULT_TRAPS_PER_S: u32 = 10;

/// The whole configuration of one `mwrouterd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `[router]`.
    pub router: RouterSection,
    /// `[dpdk]`: required when the ports use backend `dpdk`, ignored otherwise.
    pub dpdk: Option<DpdkSection>,
    /// `[workers]`.
    pub workers: WorkersSection,
    /// `[timers]`.
    pub timers: Timers,
    /// `[limits]`.
    pub limits: Limits,
    /// `[rates]`.
    pub rates: RatesSection,
    /// `[admin]`.
    pub admin: AdminSection,
    /// `[log]`.
    pub log: LogSection,
    /// `[management]`: the in-band management agent (optional section).
    pub management: ManagementSection,
    /// `[drain]`: leaving and coming back without losing traffic.
    pub drain: DrainSection,
    /// `[[hr]]`: the HRs in port order (port `i` is `hrs[i]`).
    pub hrs: Vec<HrSection>,
}

/// `[router]`: the box.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSection {
    /// The router's name (its HRs answer RRP#7 as `<name>/<port>`).
    pub name: String,
    /// The cost of crossing the router between twins (>= 1).
    #[serde(default = "one_u16")]
    pub router_cost: u16,
    /// RTs kept per SAN (>= 1).
    #[serde(default = "default_k")]
    pub k: usize,
    /// Where the first serial number comes from.
    #[serde(default)]
    pub sn_seed: SnSeed,
}

fn one_u16() -> u16 {
    1
}

fn default_k() -> usize {
    4
}

/// The seed of the HRs' serial numbers (docs/rrp.md: a restarted HR takes a
/// new one so that its LRT replaces the stale copies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SnSeed {
    /// From the clock at start-up (`sn_seed = "clock"`, the default).
    #[default]
    Clock,
    /// This value (tests, reproducible labs).
    Fixed(u16),
}

impl<'de> Deserialize<'de> for SnSeed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SnSeed, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = SnSeed;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"clock\" or an integer 0-65535")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SnSeed, E> {
                u16::try_from(v)
                    .map(SnSeed::Fixed)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SnSeed, E> {
                u16::try_from(v)
                    .map(SnSeed::Fixed)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SnSeed, E> {
                if v == "clock" {
                    Ok(SnSeed::Clock)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `[dpdk]`: router-wide DPDK settings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpdkSection {
    /// EAL options (without the program name). The ports' devices are not
    /// listed here: [`Config::eal_args`] adds `-a`/`--vdev` for them.
    pub eal_args: Vec<String>,
}

/// `[workers]`: the dataplane threads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkersSection {
    /// Worker threads: each transmits on every port and receives from the
    /// ports it owns, or from its queue of every port that flow rules
    /// spread (DPDK; docs/backends.md "More than one worker").
    pub count: usize,
    /// The core of each worker (as many as `count`); none: not pinned.
    pub cores: Option<Vec<usize>>,
    /// How a DPDK device's frames are spread over the workers.
    pub spread: SpreadMode,
    /// The worker that receives from each HR's port (in HR order) where
    /// flow rules do not spread it; none: HR `i` to worker `i mod count`.
    pub owners: Option<Vec<usize>>,
    /// The cores of every other thread (control, admin, stats, DPDK's
    /// interrupt and telemetry threads); none: the cores the daemon may
    /// run on less `cores` (when `cores` is given).
    pub control_cores: Option<Vec<usize>>,
    /// What an idle worker does.
    pub idle: IdleMode,
    /// Adaptive: the longest pause of an idle worker, microseconds.
    pub idle_sleep_us: u64,
    /// Adaptive: empty polling passes before pausing.
    pub spins: u32,
}

impl Default for WorkersSection {
    fn default() -> Self {
        WorkersSection {
            count: 1,
            cores: None,
            spread: SpreadMode::Auto,
            owners: None,
            control_cores: None,
            idle: IdleMode::Adaptive,
            idle_sleep_us: 1000,
            spins: 64,
        }
    }
}

/// `workers.spread`: how a DPDK device's frames reach several workers
/// (docs/backends.md "More than one worker").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SpreadMode {
    /// `"auto"`: flow rules on the source MAC where the device takes them,
    /// else one worker per port.
    #[default]
    Auto,
    /// `"ports"`: one worker per port, no rules tried.
    Ports,
    /// `"flows"`: rules on every port, or the daemon does not start.
    Flows,
}

impl SpreadMode {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SpreadMode::Auto => "auto",
            SpreadMode::Ports => "ports",
            SpreadMode::Flows => "flows",
        }
    }
}

/// `workers.idle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdleMode {
    /// `"busy-poll"`: poll without pause (pinned DPDK lcores).
    BusyPoll,
    /// `"adaptive"`: spin, then pause (or block on the ports' sockets).
    Adaptive,
}

impl IdleMode {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            IdleMode::BusyPoll => "busy-poll",
            IdleMode::Adaptive => "adaptive",
        }
    }
}

/// `[rates]`: rate limits of punts, notices and error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RatesSection {
    /// Each punt class's budget per worker (`[rates.punt]`,
    /// docs/dataplane.md "Punt classes").
    pub punt: PuntBudgets,
    /// Notices per second per worker (0 = unlimited).
    pub notice_per_s: u64,
    /// Notice burst (>= 1).
    pub notice_burst: u64,
    /// Error and redirect messages per second to one source (0 = none).
    pub errors_per_source: u32,
    /// Error and redirect messages per second in all (0 = none).
    pub errors_global: u32,
}

impl Default for RatesSection {
    fn default() -> Self {
        let c = ChannelConfig::default();
        let e = ErrorRates::default();
        RatesSection {
            punt: c.punt_budgets,
            notice_per_s: c.notice_rate.0,
            notice_burst: c.notice_rate.1,
            errors_per_source: e.per_source,
            errors_global: e.global,
        }
    }
}

impl RatesSection {
    /// The engine's error rate limits.
    pub fn error_rates(&self) -> ErrorRates {
        ErrorRates {
            per_source: self.errors_per_source,
            global: self.errors_global,
        }
    }

    /// The workers' channel sizes (defaults) with these rates.
    pub fn channel_config(&self) -> ChannelConfig {
        ChannelConfig {
            punt_budgets: self.punt,
            notice_rate: (self.notice_per_s, self.notice_burst),
            ..ChannelConfig::default()
        }
    }
}

/// `[admin]`: the admin socket and who may use it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdminSection {
    /// The UNIX socket's path.
    pub socket: PathBuf,
    /// The socket's permissions (e.g. `0o660`).
    pub mode: u32,
    /// The group whose members may change the router.
    pub admin_group: String,
    /// A group whose members may read (show) only.
    pub readonly_group: Option<String>,
    /// Everyone who can connect may read (needs `mode` to give others rw).
    pub readonly_everyone: bool,
    /// Prometheus metrics on this loopback address (none: off).
    pub prometheus_listen: Option<SocketAddr>,
    /// How many applied configurations the daemon keeps in memory for
    /// `mwctl history` and `mwctl rollback` (1 to [`MAX_CONFIG_HISTORY`];
    /// default [`DEFAULT_CONFIG_HISTORY`]; docs/daemon.md "Changing the
    /// configuration safely").
    pub config_history: usize,
    /// Where the daemon keeps those configurations across restarts
    /// (control::daemon::history); none: in memory only.
    pub history_file: Option<PathBuf>,
}

impl Default for AdminSection {
    fn default() -> Self {
        AdminSection {
            socket: PathBuf::from(DEFAULT_ADMIN_SOCKET),
            mode: DEFAULT_ADMIN_MODE,
            admin_group: DEFAULT_ADMIN_GROUP.to_string(),
            readonly_group: None,
            readonly_everyone: false,
            prometheus_listen: None,
            config_history: DEFAULT_CONFIG_HISTORY,
            history_file: None,
        }
    }
}

/// `[log]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogSection {
    /// The most detailed level logged.
    pub level: LogLevel,
    /// The line format.
    pub format: LogFormat,
}

/// `log.format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// `"human"` (default): one readable line per event.
    #[default]
    Human,
    /// `"json"`: one JSON object per line.
    Json,
}

impl LogFormat {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::Human => "human",
            LogFormat::Json => "json",
        }
    }
}

/// `[management]`: the in-band management agent (docs/management.md).
///
/// `mkey` and `sm_key` are secrets: `Debug` does not show them (nor does any
/// configuration error or reload line); [`Config::to_toml`] writes them, or
/// the files they are read from (`mkey_file`, `sm_key_file`).
#[derive(Clone, PartialEq, Eq)]
pub struct ManagementSection {
    /// The node identity (`NodeInfo.NodeIdentity`, 64 bits, not 0); none:
    /// derived from the router's name and HR addresses
    /// ([`Config::node_identity`]).
    pub identity: Option<u64>,
    /// The node's description (NodeDescription), 1-64 bytes of UTF-8; none:
    /// `router.name` ([`Config::node_description`]).
    pub description: Option<String>,
    /// The box's management key (M_Key); 0: no protection. Read from
    /// `mkey_file` when that is set.
    pub mkey: u64,
    /// The file `mkey` is read from (an absolute path; docs/configuration.md
    /// "Keys in files"); none: `mkey` is written in the configuration.
    pub mkey_file: Option<PathBuf>,
    /// The M_Key protect bits, 0-3.
    pub protect: u8,
    /// The M_Key lease period in seconds; 0: the lease never runs out.
    pub lease_s: u16,
    /// Where traps go (a node address, 0x0040-0x7FFF); none: no traps.
    pub manager: Option<Address>,
    /// Drops on one port within 10 s that raise a trap; 0: off.
    pub drop_threshold: u64,
    /// Traps sent per second at most (>= 1).
    pub traps_per_s: u32,
    /// Whether the path tracer's agent (vendor class 0x30) answers.
    pub tracer: bool,
    /// Answers per second at most to one requester (its SA), directed-route
    /// relays included (>= 1; `mgmt::agent::AgentConfig::answers_per_source`).
    pub answers_per_source: u32,
    /// Answers per second at most in all (>= 1;
    /// `mgmt::agent::AgentConfig::answers_global`).
    pub answers_global: u32,
    /// The priority (0-15) of the SAN manager this box runs on its HRs
    /// (docs/manager.md); none: no manager.
    pub manager_priority: Option<u8>,
    /// The HRs whose SANs the manager runs on; empty: every HR.
    pub manager_hrs: Vec<Address>,
    /// The SANs' SM key (0: none): a secret, as `mkey`.
    pub sm_key: u64,
    /// The file `sm_key` is read from, as `mkey_file`.
    pub sm_key_file: Option<PathBuf>,
    /// The addresses the manager on an HR's SAN gives nodes that start
    /// without one (docs/manager.md "Address assignment").
    pub address_pools: Vec<AddressPool>,
    /// The SAN managers' timers and counts (docs/manager.md "Timers and
    /// counts").
    pub manager_timers: ManagerTimers,
    /// The fabric's performance manager (docs/management.md "Fabric
    /// performance manager"): polled where this box is a SAN's master, or
    /// everywhere with `enabled`.
    pub perf_manager: PerfConfig,
    /// The partitions file the SAN managers read (an absolute path;
    /// docs/partitions.md), at start and at every reload; none: every node
    /// a full member of the default partition. Not a secret: read by
    /// [`crate::partitions`], not as a key file.
    pub partitions_file: Option<PathBuf>,
    /// The tables of nodes of SANs on which no SAN manager gives this box
    /// any (docs/partitions.md "Without a SAN manager"): what the routers
    /// enforce there, as they would a master's.
    pub static_partitions: Vec<StaticPartitions>,
}

/// `{ hr = .., node = .., table = ["0x0010=full", ..] }` in
/// `management.static_partitions`: the table of node `node` on HR `hr`'s
/// SAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticPartitions {
    /// The HR whose SAN the node is on.
    pub hr: Address,
    /// The node.
    pub node: Address,
    /// Its partitions and memberships.
    pub table: Vec<(mgmt::partition::PartitionKey, mgmt::partition::Membership)>,
}

/// A SAN manager's address pool: on HR `hr`'s SAN, `first` to `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddressPool {
    /// The HR whose SAN it is.
    pub hr: Address,
    /// The first address given.
    pub first: Address,
    /// The last.
    pub last: Address,
}

impl Default for ManagementSection {
    fn default() -> Self {
        ManagementSection {
            identity: None,
            description: None,
            mkey: 0,
            mkey_file: None,
            protect: 0,
            lease_s: 0,
            manager: None,
            drop_threshold: 0,
            traps_per_s: DEFAULT_TRAPS_PER_S,
            tracer: true,
            answers_per_source: mgmt::agent::ANSWERS_PER_SOURCE,
            answers_global: mgmt::agent::ANSWERS_GLOBAL,
            manager_priority: None,
            manager_hrs: Vec::new(),
            sm_key: 0,
            sm_key_file: None,
            address_pools: Vec::new(),
            manager_timers: ManagerTimers::default(),
            perf_manager: PerfConfig::default(),
            partitions_file: None,
            static_partitions: Vec::new(),
        }
    }
}

impl fmt::Debug for ManagementSection {
    /// Every field but the keys' values: `mkey` and `sm_key` show as `0` or
    /// `(secret)` (their files' names show).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Secret(u64);
        impl fmt::Debug for Secret {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(if self.0 == 0 { "0" } else { "(secret)" })
            }
        }
        f.debug_struct("ManagementSection")
            .field("identity", &self.identity)
            .field("description", &self.description)
            .field("mkey", &Secret(self.mkey))
            .field("mkey_file", &self.mkey_file)
            .field("protect", &self.protect)
            .field("lease_s", &self.lease_s)
            .field("manager", &self.manager)
            .field("drop_threshold", &self.drop_threshold)
            .field("traps_per_s", &self.traps_per_s)
            .field("tracer", &self.tracer)
            .field("answers_per_source", &self.answers_per_source)
            .field("answers_global", &self.answers_global)
            .field("manager_priority", &self.manager_priority)
            .field("manager_hrs", &self.manager_hrs)
            .field("sm_key", &Secret(self.sm_key))
            .field("sm_key_file", &self.sm_key_file)
            .field("address_pools", &self.address_pools)
            .field("manager_timers", &self.manager_timers)
            .field("perf_manager", &self.perf_manager)
            .field("partitions_file", &self.partitions_file)
            .field("static_partitions", &self.static_partitions)
            .finish()
    }
}

/// FNV-1a's offset basis and prime (64 bits), for [`Config::node_identity`].
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// `[[hr]]`: one HR, one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HrSection {
    /// The HR's MessageWay address (0x0040-0x7FFF).
    pub address: Address,
    /// Its SAN's SAN-ID (0x0040-0x7FFF).
    pub san_id: Address,
    /// The SAN's MTU in bytes: 0 (unlimited) or at least 64.
    pub mtu: u32,
    /// The cost of crossing the SAN (>= 1).
    pub cost: u16,
    /// `admin_state`: `"down"` keeps the HR down from start, as `mwctl port
    /// N down` does at run time (which `mwctl write` saves here).
    pub admin_state: PortState,
    /// A label for the port (logs, `mwctl`).
    pub name: Option<String>,
    /// `[hr.port]`: the port backend and its parameters.
    pub port: PortConfig,
    /// `[[hr.static]]`: static LRT entries (exempt from keepalives).
    pub statics: Vec<StaticNode>,
    /// `[hr.auth]`: the SAN's authentication keys (docs/configuration.md
    /// "Authentication"); none: the HR signs nothing and asks for nothing.
    pub auth: Option<AuthConfig>,
    /// The keys of `auth` whose secret is read from a file (`secret_file`),
    /// by key ID: the file (an absolute path; docs/configuration.md "Keys in
    /// files"). The other keys are written in the configuration.
    pub key_files: BTreeMap<u16, PathBuf>,
}

impl HrSection {
    /// An HR with cost 1, no name and no static entries.
    pub fn new(address: u16, san_id: u16, mtu: u32, port: PortConfig) -> HrSection {
        HrSection {
            address: Address(address),
            san_id: Address(san_id),
            mtu,
            cost: 1,
            admin_state: PortState::Up,
            name: None,
            port,
            statics: Vec::new(),
            auth: None,
            key_files: BTreeMap::new(),
        }
    }

    /// The HR's native address when the configuration tells it: the UDP
    /// bind address (unless its port is 0), a DPDK port's configured MAC.
    /// AF_PACKET ports and DPDK ports without `mac` learn it at open.
    pub fn configured_native(&self) -> Option<NativeAddr> {
        match &self.port {
            PortConfig::Udp(u) if u.bind.port() != 0 => Some(NativeAddr::udp(u.bind)),
            PortConfig::Dpdk(d) => d.mac.map(NativeAddr::mac),
            _ => None,
        }
    }

    /// The label of this HR in messages: its name, else `hr[i]`.
    pub fn label(&self, i: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("hr[{i}]"))
    }
}

/// The port backends (`hr.port.backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// `"udp"`: MessageWay over UDP, unprivileged.
    Udp,
    /// `"af_packet"`: Ethernet through a packet socket with mmap rings.
    AfPacket,
    /// `"dpdk"`: a DPDK ethdev (PCI NIC or vdev).
    Dpdk,
}

impl Backend {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Udp => "udp",
            Backend::AfPacket => "af_packet",
            Backend::Dpdk => "dpdk",
        }
    }

    /// Whether its SAN is Ethernet (native addresses are MACs).
    pub fn is_ethernet(self) -> bool {
        !matches!(self, Backend::Udp)
    }

    /// The kind of its SAN's native addresses.
    pub fn link_kind(self) -> LinkKind {
        if self.is_ethernet() {
            LinkKind::Ethernet
        } else {
            LinkKind::Udp
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[hr.port]`: a port and its backend's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortConfig {
    /// `backend = "udp"`.
    Udp(UdpPortConfig),
    /// `backend = "af_packet"`.
    AfPacket(AfPacketPortConfig),
    /// `backend = "dpdk"`.
    Dpdk(DpdkPortConfig),
}

impl PortConfig {
    /// Its backend.
    pub fn backend(&self) -> Backend {
        match self {
            PortConfig::Udp(_) => Backend::Udp,
            PortConfig::AfPacket(_) => Backend::AfPacket,
            PortConfig::Dpdk(_) => Backend::Dpdk,
        }
    }
}

/// A UDP port (docs/backends.md "UDP").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpPortConfig {
    /// The address to bind: the HR's native address on its SAN (a specific
    /// IP address; port 0 takes an ephemeral port).
    pub bind: SocketAddr,
    /// The SAN's members: where sweeps and other packets for every member go.
    pub members: Vec<SocketAddr>,
    /// Buffers in the port's pool.
    pub pool_size: usize,
    /// SO_RCVBUF/SO_SNDBUF in bytes (0: the kernel's defaults).
    pub socket_buf: usize,
}

impl UdpPortConfig {
    /// Binding `bind`, no members, the port's default pool and socket buffers.
    pub fn new(bind: SocketAddr) -> UdpPortConfig {
        let d = UdpConfig::new(bind);
        UdpPortConfig {
            bind,
            members: Vec::new(),
            pool_size: d.pool_size,
            socket_buf: d.socket_buf,
        }
    }
}

/// An AF_PACKET port (docs/backends.md "AF_PACKET").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfPacketPortConfig {
    /// The Ethernet interface.
    pub interface: String,
    /// Frames in the receive ring.
    pub rx_frames: u32,
    /// Frames in the transmit ring.
    pub tx_frames: u32,
    /// Buffers in the port's pool.
    pub pool_size: usize,
    /// SO_RCVBUF/SO_SNDBUF in bytes (0: the kernel's defaults).
    pub socket_buf: usize,
}

impl AfPacketPortConfig {
    /// On `interface`, with the port's default rings, pool and socket buffers.
    pub fn new(interface: &str) -> AfPacketPortConfig {
        let d = AfPacketConfig::new(interface);
        AfPacketPortConfig {
            interface: interface.to_string(),
            rx_frames: d.rx_frames,
            tx_frames: d.tx_frames,
            pool_size: d.pool_size,
            socket_buf: d.socket_buf,
        }
    }
}

/// A DPDK port (docs/backends.md "DPDK").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpdkPortConfig {
    /// A PCI address (`0000:3b:00.0`) or a vdev with its parameters
    /// (`net_memif0,role=server,socket=/run/mwrouter/memif-a.sock`).
    pub device: String,
    /// Receive descriptors per queue.
    pub rx_ring: u16,
    /// Transmit descriptors per queue.
    pub tx_ring: u16,
    /// A MAC address to use instead of the device's.
    pub mac: Option<[u8; 6]>,
}

impl DpdkPortConfig {
    /// The device with 1024 descriptors per ring and its own MAC.
    pub fn new(device: &str) -> DpdkPortConfig {
        DpdkPortConfig {
            device: device.to_string(),
            rx_ring: 1024,
            tx_ring: 1024,
            mac: None,
        }
    }

    /// The ethdev's name (`PortSpec::device`): the PCI address, or the vdev
    /// name without its parameters.
    pub fn name(&self) -> &str {
        self.device.split(',').next().unwrap_or("")
    }

    /// Whether the device is a PCI address (else a vdev).
    pub fn is_pci(&self) -> bool {
        validate::is_pci_address(self.name())
    }
}

/// A configuration error: the key path and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The key path, e.g. `hr[1].port.bind`; empty for a TOML syntax error
    /// (whose message tells the line and column itself).
    pub key: String,
    /// Why the value is refused.
    pub why: String,
    /// Where in the file (1-based line and column), when known.
    pub location: Option<(usize, usize)>,
}

impl ConfigError {
    /// An error about `key`.
    pub fn new(key: impl Into<String>, why: impl Into<String>) -> ConfigError {
        ConfigError {
            key: key.into(),
            why: why.into(),
            location: None,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            return f.write_str(&self.why);
        }
        write!(f, "{}: {}", self.key, self.why)?;
        if let Some((line, col)) = self.location {
            write!(f, " (line {line}, column {col})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// A configuration with these HRs and every other setting at its default.
    pub fn new(name: &str, hrs: Vec<HrSection>) -> Config {
        Config {
            router: RouterSection {
                name: name.to_string(),
                router_cost: 1,
                k: default_k(),
                sn_seed: SnSeed::Clock,
            },
            dpdk: None,
            workers: WorkersSection::default(),
            timers: Timers::default(),
            limits: Limits::default(),
            rates: RatesSection::default(),
            admin: AdminSection::default(),
            log: LogSection::default(),
            management: ManagementSection::default(),
            drain: DrainSection::default(),
            hrs,
        }
    }

    /// Parses and validates a configuration, reading the key files it names
    /// ([`OnDisk`]); the error is the first problem in file order
    /// ([`Config::check_toml`] lists them all).
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        Config::from_toml_with(text, &OnDisk)
    }

    /// As [`Config::from_toml`], reading the key files through `files`.
    pub fn from_toml_with(text: &str, files: &dyn KeyFiles) -> Result<Config, ConfigError> {
        Config::check_toml_with(text, files).map_err(|mut v| v.swap_remove(0))
    }

    /// Parses and validates a configuration, reading the key files it names
    /// ([`OnDisk`]), and lists every problem found (`mwrouterd --check`). A
    /// file that does not parse gives one error.
    pub fn check_toml(text: &str) -> Result<Config, Vec<ConfigError>> {
        Config::check_toml_with(text, &OnDisk)
    }

    /// As [`Config::check_toml`], reading the key files through `files`.
    pub fn check_toml_with(text: &str, files: &dyn KeyFiles) -> Result<Config, Vec<ConfigError>> {
        let cfg = parse::parse(text, files).map_err(|e| vec![e])?;
        let cfg = cfg.map_err(|errs| locate::locate_all(text, errs))?;
        cfg.validate()
            .map_err(|errs| locate::locate_all(text, errs))?;
        Ok(cfg)
    }

    /// Reads, parses and validates the file at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new("", format!("cannot read {}: {e}", path.display())))?;
        Config::from_toml(&text)
    }

    /// Checks the configuration (also one built in code), every problem at
    /// once, in file order; the errors name the TOML keys.
    pub fn validate(&self) -> Result<(), Vec<ConfigError>> {
        validate::validate(self)
    }

    /// The configuration as TOML, every key spelled out (defaults included),
    /// in the format [`Config::from_toml`] reads: it parses back to an
    /// equal `Config`.
    pub fn to_toml(&self) -> String {
        emit::render(&emit::tables(self))
    }

    /// As [`Config::to_toml`] without the secrets: `mkey`, `sm_key` and the
    /// `[hr.auth]` keys are left out (`mkey_file` and `sm_key_file`, which
    /// name files, stay) and a comment says whether an M_Key is set (what
    /// `show config` gives a read-only peer).
    pub fn to_toml_redacted(&self) -> String {
        let mut t = emit::tables(self);
        for table in t.iter_mut().filter(|t| t.path == "management") {
            table
                .entries
                .retain(|(k, _)| *k != "mkey" && *k != "sm_key");
        }
        // The SANs' keys: their IDs only.
        for table in t.iter_mut().filter(|t| t.path.ends_with("].auth")) {
            table.entries.retain(|(k, _)| *k != "keys");
        }
        let note = if self.management.mkey == 0 {
            "# management.mkey: none set"
        } else {
            "# management.mkey: set, shown to admin peers only"
        };
        format!("{note}\n{}", emit::render(&t))
    }

    /// What a reload from `self` (running) to `new` changes, or why it is
    /// refused: one message per key that cannot change while running.
    pub fn diff_for_reload(&self, new: &Config) -> Result<ReloadPlan, Vec<String>> {
        reload::diff(self, new)
    }

    /// The node identity (`NodeInfo.NodeIdentity`): `management.identity`,
    /// else a value derived from `router.name` and the HRs' addresses, the
    /// same on every start and with every Rust version (never 0): FNV-1a
    /// over the name's bytes, a 0 byte and each HR address (two bytes,
    /// big-endian, in port order), then SplitMix64's finaliser
    /// ([`rrp::rng::mix64`]).
    pub fn node_identity(&self) -> u64 {
        if let Some(id) = self.management.identity {
            return id;
        }
        let fold = |h: u64, b: u8| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        let mut h = self.router.name.bytes().fold(FNV_OFFSET, fold);
        h = fold(h, 0);
        for hr in &self.hrs {
            h = hr.address.0.to_be_bytes().into_iter().fold(h, fold);
        }
        // mix64 is a bijection with mix64(0) == 0: only h == 0 gives 0.
        match rrp::rng::mix64(h) {
            0 => rrp::rng::GOLDEN,
            id => id,
        }
    }

    /// The node description (NodeDescription): `management.description`,
    /// else `router.name`.
    pub fn node_description(&self) -> String {
        self.management
            .description
            .clone()
            .unwrap_or_else(|| self.router.name.clone())
    }

    /// The port backend (every port uses the same one; `None` without HRs).
    pub fn backend(&self) -> Option<Backend> {
        self.hrs.first().map(|h| h.port.backend())
    }

    /// The serial-number seed: the configured one, else `sn_seed_now` (the
    /// daemon passes a value from the clock).
    pub fn sn_seed(&self, sn_seed_now: u16) -> u16 {
        match self.router.sn_seed {
            SnSeed::Clock => sn_seed_now,
            SnSeed::Fixed(s) => s,
        }
    }

    /// The RRP engine's configuration with the natives the configuration
    /// knows ([`HrSection::configured_native`]; empty where only the open
    /// port knows it: use [`Config::router_config_with_natives`] then).
    pub fn router_config(&self, sn_seed_now: u16) -> RouterConfig {
        let natives: Vec<NativeAddr> = self
            .hrs
            .iter()
            .map(|h| h.configured_native().unwrap_or_else(NativeAddr::none))
            .collect();
        self.router_config_with_natives(&natives, sn_seed_now)
    }

    /// The RRP engine's configuration with each HR's native address as the
    /// opened port reports it (`natives[i]` for port `i`: the MAC of an
    /// Ethernet port, the bound address of a UDP port).
    ///
    /// # Panics
    /// When `natives` does not have one address per HR.
    pub fn router_config_with_natives(
        &self,
        natives: &[NativeAddr],
        sn_seed_now: u16,
    ) -> RouterConfig {
        assert_eq!(natives.len(), self.hrs.len(), "one native address per HR");
        let hrs = self
            .hrs
            .iter()
            .zip(natives)
            .map(|(h, n)| HrConfig {
                address: h.address,
                san_id: h.san_id,
                mtu: h.mtu,
                cost: h.cost,
                native: *n,
                static_nodes: h.statics.clone(),
                auth: h.auth.clone(),
            })
            .collect();
        RouterConfig {
            name: self.router.name.clone(),
            hrs,
            router_cost: self.router.router_cost,
            k: self.router.k,
            timers: self.timers,
            limits: self.limits,
            error_rates: self.rates.error_rates(),
            sn_seed: self.sn_seed(sn_seed_now),
            auth_seq_seed: 0,
            leave: self.drain.engine(),
        }
    }

    /// The forwarding engine's configuration (HR addresses and MTUs).
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            hrs: self.hrs.iter().map(|h| h.address).collect(),
            mtus: self.hrs.iter().map(|h| h.mtu).collect(),
        }
    }

    /// Each worker's channels: the default sizes with `[rates]`.
    pub fn channel_config(&self) -> ChannelConfig {
        self.rates.channel_config()
    }

    /// What idle workers do.
    pub fn idle_policy(&self) -> IdlePolicy {
        match self.workers.idle {
            IdleMode::BusyPoll => IdlePolicy::BusyPoll,
            IdleMode::Adaptive => IdlePolicy::Adaptive {
                spins: self.workers.spins,
                sleep: Duration::from_micros(self.workers.idle_sleep_us),
            },
        }
    }

    /// The worker that receives from HR `hr`'s port where no flow rules
    /// spread it (`workers.owners`, default `hr mod count`).
    pub fn port_owner(&self, hr: usize) -> usize {
        match &self.workers.owners {
            Some(o) => o.get(hr).copied().unwrap_or(0),
            None => hr % self.workers.count.max(1),
        }
    }

    /// The core of each worker (`None`: not pinned), `workers.count` long.
    pub fn worker_cores(&self) -> Vec<Option<usize>> {
        (0..self.workers.count)
            .map(|i| self.workers.cores.as_ref().and_then(|c| c.get(i).copied()))
            .collect()
    }

    /// The UDP port configuration of HR `hr` (`None` when it is not a UDP
    /// port, or there is no such HR).
    pub fn udp_config(&self, hr: usize) -> Option<UdpConfig> {
        match &self.hrs.get(hr)?.port {
            PortConfig::Udp(u) => {
                let mut c = UdpConfig::new(u.bind)
                    .members(u.members.iter().copied())
                    .pool_size(u.pool_size);
                c.socket_buf = u.socket_buf;
                Some(c)
            }
            _ => None,
        }
    }

    /// The AF_PACKET port configuration of HR `hr` (`None` when it is not
    /// an AF_PACKET port, or there is no such HR).
    pub fn af_packet_config(&self, hr: usize) -> Option<AfPacketConfig> {
        match &self.hrs.get(hr)?.port {
            PortConfig::AfPacket(a) => {
                let mut c = AfPacketConfig::new(&a.interface);
                c.rx_frames = a.rx_frames;
                c.tx_frames = a.tx_frames;
                c.pool_size = a.pool_size;
                c.socket_buf = a.socket_buf;
                Some(c)
            }
            _ => None,
        }
    }

    /// The DPDK port of HR `hr` (`None` when it is not a DPDK port).
    pub fn dpdk_port(&self, hr: usize) -> Option<&DpdkPortConfig> {
        match &self.hrs.get(hr)?.port {
            PortConfig::Dpdk(d) => Some(d),
            _ => None,
        }
    }

    /// The arguments for `Eal::init`: `dpdk.eal_args`, then `-a ADDRESS`
    /// for each PCI device and `--vdev=DEVICE` for each vdev of the ports.
    /// Empty when no port uses DPDK.
    pub fn eal_args(&self) -> Vec<String> {
        if self.backend() != Some(Backend::Dpdk) {
            return Vec::new();
        }
        let mut args = self
            .dpdk
            .as_ref()
            .map(|d| d.eal_args.clone())
            .unwrap_or_default();
        for d in self.hrs.iter().filter_map(|h| match &h.port {
            PortConfig::Dpdk(d) => Some(d),
            _ => None,
        }) {
            if d.is_pci() {
                args.push("-a".to_string());
                args.push(d.device.clone());
            } else {
                args.push(format!("--vdev={}", d.device));
            }
        }
        args
    }
}
