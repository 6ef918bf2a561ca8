//! The shapes of the answers (docs/admin-protocol.md "Results"), and the
//! code that builds them from the RRP engine and the dataplane counters, so
//! that the daemon's handler and `mwctl` agree on every field.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rrp::counters::{CounterSet, GroupStats};
use rrp::route::Route;
use rrp::router::{Next, Origin, RouteInfo, Router};
use rrp::wire::RouterHop;
use rrp::{Address, DropReason, LinkKind, NativeAddr, PerPort, PortId, PortStats};
use serde::{Deserialize, Serialize};

use crate::proto::{AdminError, PortSpec};
use crate::stats::{PartitionSnapshot, PortSnapshot};

/// `show router`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouterInfo {
    /// The router's name.
    pub name: String,
    /// The daemon's version.
    pub version: String,
    /// Seconds since the daemon started.
    pub uptime_s: u64,
    /// Number of HRs (ports).
    pub hrs: usize,
    /// Cost of crossing the box.
    pub router_cost: u16,
    /// RTs kept per SAN.
    pub k: usize,
    /// Version of the FIB set in use.
    pub fib_version: u64,
    /// Every SAN the box knows an RT for (its own included).
    pub known_sans: Vec<Address>,
    /// LRT entries over all HRs.
    pub lrt_nodes: usize,
    /// RTs kept over all HRs.
    pub rts_kept: usize,
    /// Towards transit traffic: `starting`, `serving` or `draining`
    /// (docs/daemon.md "Draining before maintenance").
    #[serde(default)]
    pub standing: String,
    /// Changes of standing since start.
    #[serde(default)]
    pub standing_changes: u64,
}

/// `show management`: the box's in-band management agent
/// (docs/management.md). The key itself never appears.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagementInfo {
    /// The node identity, hex (`0x...`).
    pub identity: String,
    /// NodeDescription.
    pub description: String,
    /// Where traps go (none: nowhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<Address>,
    /// Whether an M_Key is set.
    pub mkey_set: bool,
    /// M_Key protect bits, 0-3.
    pub protect: u8,
    /// M_Key lease period in seconds (0: never runs out).
    pub lease_s: u16,
    /// Milliseconds left on a running lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_left_ms: Option<u64>,
    /// Failed M_Key checks.
    pub violations: u16,
    /// The agent's counters by name.
    pub agent: BTreeMap<String, u64>,
    /// The client's (`mwctl mad`) counters by name.
    pub client: BTreeMap<String, u64>,
    /// Notices received (traps to this box as a manager), oldest first.
    pub notices: Vec<NoticeRow>,
    /// The node's own addresses, one per port in port order (a host's one
    /// address, a router's HRs): where a trace from it starts.
    #[serde(default)]
    pub addresses: Vec<Address>,
    /// The SAN managers the node runs (docs/manager.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub managers: Vec<ManagerRow>,
    /// The subscriptions to this node's own traps at its agent (taken
    /// where the node is not its SAN's master; docs/management.md
    /// "Events").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscribers: Vec<SubscriptionRow>,
    /// The partitions the node's SAN managers hold (docs/partitions.md);
    /// none where the node keeps none (a host, an older daemon).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PartitionsInfo>,
    /// A router's: per HR, the partitions it enforces at the boundary of
    /// that HR's SAN and where they come from (`mwctl show partitions`;
    /// docs/partitions.md "At the routers").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub port_partitions: Vec<PortPartitionsRow>,
}

/// The partitions a router enforces at one HR (`mwctl show partitions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortPartitionsRow {
    /// The port.
    pub port: PortId,
    /// Its HR's address.
    pub hr: Address,
    /// The SAN is open: every node may talk to every node (no tables, or
    /// every node a full member of the default partition alone).
    pub open: bool,
    /// The SAN's partition keys, hex (`0x0010`), in the guard's order.
    #[serde(default)]
    pub keys: Vec<String>,
    /// The nodes whose tables it holds.
    pub nodes: usize,
    /// Where the tables come from: `this-box` (this box's SAN manager is
    /// the SAN's master), `master` (the master at `master` set them to the
    /// agent), `configured` (`management.static_partitions`: no master
    /// gives any), `none` (neither).
    pub source: String,
    /// The master that set them (`master`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master: Option<Address>,
    /// When the tables in force were taken (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_unix_s: Option<u64>,
    /// Why the last tables given were not taken (the ones before are kept);
    /// none when the last were taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// The partitions in force, where they come from, and the last refusal of
/// the partitions file (`mwctl san partitions`; docs/partitions.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PartitionsInfo {
    /// `management.partitions_file`; none: no file is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The file the partitions in force were read from; none: they are the
    /// default (every node a full member of the default partition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_from: Option<String>,
    /// When they were read (Unix seconds); none with the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_unix_s: Option<u64>,
    /// The last read of the file, when it was refused (the partitions in
    /// force did not change); none when the last read was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<PartitionsRefusal>,
    /// The box's own partitions in force (the file's, or the default), the
    /// default one among them.
    #[serde(default)]
    pub partitions: Vec<PartitionRow>,
    /// The box's SAN managers that hold their master's partitions instead
    /// (a standby's copy, or a new master's until the file is read again;
    /// docs/partitions.md "Standbys"), one per SAN; none: every manager of
    /// the box gives the partitions above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copies: Vec<PartitionsCopyInfo>,
}

/// A SAN manager's copy of its master's partitions, in force there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionsCopyInfo {
    /// The manager's port (its SAN).
    pub port: usize,
    /// The master copied from (`0x0117`).
    pub master: String,
    /// When the copy was taken (Unix seconds).
    pub at_unix_s: u64,
    /// Its version (a hash of the partitions' text, hex).
    pub version: String,
    /// Whether they are the box's own partitions (the file's, or the
    /// default), the same text.
    pub same_as_own: bool,
    /// The partitions copied, when they differ from the box's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionRow>,
}

/// A refused read of the partitions file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionsRefusal {
    /// The file.
    pub file: String,
    /// When (Unix seconds).
    pub at_unix_s: u64,
    /// How many errors it had.
    pub count: usize,
    /// The first of them (`line 3: ...`), at most
    /// [`PartitionsRefusal::MAX_SHOWN`].
    pub errors: Vec<String>,
}

impl PartitionsRefusal {
    /// The most errors of one refusal kept and shown.
    pub const MAX_SHOWN: usize = 64;
}

/// A partition in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionRow {
    /// Its key, hex (`0x7fff`).
    pub key: String,
    /// Its name.
    pub name: String,
    /// Its members as the file writes them (`0x0000000000000104=full`,
    /// `ALL=limited`), in file order.
    pub members: Vec<String>,
}

impl PartitionRow {
    /// The row of partition `p`.
    pub fn of(p: &mgmt::partition::Partition) -> PartitionRow {
        PartitionRow {
            key: p.key.to_string(),
            name: p.name.clone(),
            members: p
                .members
                .iter()
                .map(|(w, h)| format!("{w}={}", h.name()))
                .collect(),
        }
    }
}

/// A SAN manager `show management` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagerRow {
    /// The port (HR) whose SAN it manages.
    pub port: PortId,
    /// That HR's address.
    pub hr: Address,
    /// `discovering`, `standby`, `master`, `not-active`.
    pub state: String,
    /// Its priority.
    pub priority: u8,
    /// The master it polls (standby), when it knows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master: Option<Address>,
    /// Sweeps as master (SMInfo's ActCount).
    pub act_count: u32,
    /// The other managers it has heard of: address, state, priority.
    pub peers: Vec<(Address, String, u8)>,
    /// Its counters by name.
    pub counters: BTreeMap<String, u64>,
    /// The SAN's members as its sweeps found them (a master's; empty
    /// otherwise).
    #[serde(default)]
    pub members: Vec<MemberRow>,
    /// The addresses of its identity -> address map (what it would give
    /// each node again: a master's, or a standby's copy of its master's).
    #[serde(default)]
    pub assigned: Vec<Address>,
    /// The event subscriptions it keeps (a master's, or a standby's copy;
    /// docs/management.md "Events").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscriptions: Vec<SubscriptionRow>,
}

/// An event subscription a manager (or an agent) keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionRow {
    /// The subscriber.
    pub subscriber: Address,
    /// The trap it asked for (none: every trap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trap: Option<u16>,
    /// Seconds left on its lease.
    pub lease_left_s: u64,
}

/// A member of a SAN in a master manager's database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberRow {
    /// Its address.
    pub address: Address,
    /// NodeDescription.
    pub name: String,
    /// `host` or `router`.
    pub node_type: String,
    /// Its node identity, hex.
    pub identity: String,
    /// Implementation level 1-4 (A-D).
    pub level: u16,
    /// NumPorts.
    pub num_ports: u8,
    /// The state of the manager it runs, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<String>,
}

impl ManagementInfo {
    /// What `show management` shows of a node's management station at
    /// `now`.
    pub fn of(
        station: &mgmt::station::Station,
        now: u64,
        addresses: Vec<Address>,
    ) -> ManagementInfo {
        let a = station.agent();
        let cfg = a.config();
        let k = a.mkey();
        ManagementInfo {
            identity: format!("{:#018x}", cfg.identity),
            description: cfg.description.clone(),
            manager: (cfg.manager != Address::UNSPECIFIED).then_some(cfg.manager),
            mkey_set: k.key != 0,
            protect: k.protect,
            lease_s: k.lease_s,
            lease_left_ms: k.lease_until.map(|t| t.saturating_sub(now)),
            violations: k.violations,
            agent: a.stats().named_slots().into_iter().collect(),
            client: {
                let mut c: BTreeMap<String, u64> =
                    station.client().stats().named_slots().into_iter().collect();
                c.insert("unroutable".into(), station.unroutable());
                c
            },
            notices: a
                .notices()
                .map(|r| NoticeRow {
                    seq: r.seq,
                    age_ms: now.saturating_sub(r.at),
                    // A Trap's source is its issuer's node (as before
                    // Reports); a Report's is the master.
                    issuer: if r.report { r.notice.issuer } else { r.from },
                    from: r.from,
                    report: r.report,
                    trap: r.notice.trap_number,
                    summary: r.notice.summary(),
                })
                .collect(),
            managers: station
                .managers()
                .iter()
                .map(|(p, m)| ManagerRow {
                    port: *p,
                    hr: addresses.get(p.index()).copied().unwrap_or_default(),
                    state: m.state().name().to_string(),
                    priority: m.config().priority,
                    master: m.master(),
                    act_count: m.sm_info(0).act_count,
                    peers: m
                        .peers()
                        .iter()
                        .map(|(a, q)| (*a, q.state.name().to_string(), q.priority))
                        .collect(),
                    counters: m.stats().named_slots().into_iter().collect(),
                    members: m
                        .database()
                        .values()
                        .map(|d| MemberRow {
                            address: d.address,
                            name: d.name.clone(),
                            node_type: match d.node_type {
                                1 => "host".into(),
                                3 => "router".into(),
                                t => t.to_string(),
                            },
                            identity: format!("{:#018x}", d.identity),
                            level: d.level,
                            num_ports: d.num_ports,
                            manager: d.manager.map(|s| s.name().to_string()),
                        })
                        .collect(),
                    assigned: {
                        let mut a: Vec<Address> = m.assignments().values().copied().collect();
                        a.sort();
                        a
                    },
                    subscriptions: SubscriptionRow::rows(m.subscriptions(), now),
                })
                .collect(),
            subscribers: SubscriptionRow::rows(a.subscriptions(), now),
            addresses,
            partitions: None,
            port_partitions: Vec::new(),
        }
    }
}

impl SubscriptionRow {
    /// The rows of the subscriptions alive at `now`.
    fn rows<'a>(
        table: impl Iterator<Item = &'a mgmt::subscriptions::Subscription>,
        now: u64,
    ) -> Vec<SubscriptionRow> {
        table
            .filter(|x| x.expires > now)
            .map(|x| SubscriptionRow {
                subscriber: x.info.subscriber,
                trap: (x.info.trap_number != mgmt::attr::inform_info::ALL)
                    .then_some(x.info.trap_number),
                lease_left_s: (x.expires - now).div_ceil(1000),
            })
            .collect()
    }
}

/// A notice `show management` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoticeRow {
    /// Its number among the notices the box kept since it started, from 0
    /// (`mwctl events` prints those after the last it saw).
    #[serde(default)]
    pub seq: u64,
    /// Milliseconds since it arrived.
    pub age_ms: u64,
    /// Its issuer: a Trap's source, a Report's notice's IssuerAddress.
    pub issuer: Address,
    /// The packet's source: the issuer's node for a Trap, the master
    /// that forwarded it for a Report.
    #[serde(default)]
    pub from: Address,
    /// It came in a Report (a subscription's; docs/management.md "Events").
    #[serde(default)]
    pub report: bool,
    /// The trap number.
    pub trap: u16,
    /// What it says.
    pub summary: String,
}

/// A row of `show hrs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HrRow {
    /// Port index.
    pub port: PortId,
    /// The HR's address.
    pub hr: Address,
    /// Its SAN.
    pub san: Address,
    /// The SAN's MTU (bytes, 0 = unlimited).
    pub mtu: u32,
    /// The SAN's cost.
    pub cost: u16,
    /// The HR's native address.
    pub native: String,
    /// Whether the HR is up.
    pub up: bool,
    /// LRT entries.
    pub lrt: usize,
    /// Buddies (routers on the SAN).
    pub buddies: usize,
    /// RTs kept.
    pub rts: usize,
}

/// A row of `show ports` (the daemon fills it from its port setup and the
/// counters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortRow {
    /// Port index.
    pub port: PortId,
    /// Configured name.
    pub name: String,
    /// Backend: `dpdk`, `af_packet`, `udp`, `ring`.
    pub backend: String,
    /// Which worker receives from the port ("worker 1", "workers 0-1 (flow
    /// rules)"); empty with one worker.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub receive: String,
    /// The HR's address.
    pub hr: Address,
    /// Administrative and link state.
    pub up: bool,
    /// The port's native address.
    pub native: String,
    /// The SAN's MTU (bytes, 0 = unlimited).
    pub mtu: u32,
    /// Packets received.
    pub received: u64,
    /// Packets transmitted.
    pub transmitted: u64,
    /// Packets dropped (all reasons).
    pub dropped: u64,
    /// Packets for this box from sources the HR does not know (docs/rrp.md
    /// "What a router accepts").
    #[serde(default)]
    pub strangers: u64,
    /// Bytes the port's link received (`rx_bytes`, docs/stats.md "The
    /// link's counters").
    #[serde(default)]
    pub rx_bytes: u64,
    /// Bytes the port's link transmitted (`tx_bytes`).
    #[serde(default)]
    pub tx_bytes: u64,
    /// Packets the link lost before the port read them: `rx_missed +
    /// rx_no_buffer + rx_link_errors`.
    #[serde(default)]
    pub rx_lost: u64,
    /// Packets the port took for transmission that the link did not send
    /// (`tx_link_errors`).
    #[serde(default)]
    pub tx_lost: u64,
}

/// `show punt`: the packets for the box by punt class on each port
/// (docs/dataplane.md "Punt classes"), the classes' budgets, and the
/// heaviest sources now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PuntInfo {
    /// The budget of each class per worker, where the box has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<rrp::PuntBudgets>,
    /// One row per port and class, ports in order, classes in their order
    /// of service (since `clear counters`).
    pub classes: Vec<PuntRow>,
    /// The heaviest senders of each class now (rates, never cleared).
    pub sources: Vec<rrp::PuntSource>,
}

/// One port's packets for the box of one punt class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PuntRow {
    /// The port they arrived on.
    pub port: PortId,
    /// The class, by name.
    pub class: String,
    /// Handed to the control plane.
    pub punted: u64,
    /// Dropped over the class's rate.
    pub over_rate: u64,
    /// Dropped with the class's ring full (or too large for a slot).
    pub ring_full: u64,
    /// Dropped over their source's share of the class.
    pub over_share: u64,
}

impl PuntInfo {
    /// The rows of `ports`' counters, with `sources` and `budgets`.
    pub fn new(
        ports: &[PortSnapshot],
        sources: Vec<rrp::PuntSource>,
        budgets: Option<rrp::PuntBudgets>,
    ) -> PuntInfo {
        let classes = ports
            .iter()
            .flat_map(|p| {
                rrp::PuntClass::ALL.into_iter().map(move |c| PuntRow {
                    port: p.port,
                    class: c.name().to_string(),
                    punted: p.punted_by_class[c],
                    over_rate: p.punt_rate_by_class[c],
                    ring_full: p.punt_full_by_class[c],
                    over_share: p.punt_source_by_class[c],
                })
            })
            .collect();
        PuntInfo {
            budgets,
            classes,
            sources,
        }
    }
}

/// A row of `show workers`: one dataplane worker and what it did since
/// the daemon started or the last `clear counters` (docs/stats.md
/// "Workers").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerRow {
    /// The worker's index (`mw-worker-N`).
    pub worker: usize,
    /// Its core (`None`: not pinned).
    pub core: Option<usize>,
    /// The ports it receives from (it transmits on all).
    pub receives: Vec<PortId>,
    /// Its counters: packets received, transmitted and dropped, passes,
    /// bursts and cycles (in JSON beside `worker`, by name).
    #[serde(flatten, with = "rrp::counters::json")]
    pub stats: rrp::counters::WorkerStats,
    /// The share of its cycles spent on passes that received packets (%).
    pub busy_percent: f64,
    /// Busy cycles per packet received.
    pub cycles_per_packet: f64,
    /// Packets per burst that brought any (at most 32).
    pub average_burst: f64,
}

impl WorkerRow {
    /// The row of worker `worker` on `core`, receiving from `receives`,
    /// with these counters; the derived figures computed from them.
    pub fn new(
        worker: usize,
        core: Option<usize>,
        receives: Vec<PortId>,
        stats: rrp::counters::WorkerStats,
    ) -> WorkerRow {
        let round = |x: f64| (x * 10.0).round() / 10.0;
        WorkerRow {
            worker,
            core,
            receives,
            busy_percent: round(stats.busy_percent()),
            cycles_per_packet: round(stats.cycles_per_packet()),
            average_burst: round(stats.average_burst()),
            stats,
        }
    }
}

/// A row of `show lrt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LrtRow {
    /// Port index.
    pub port: PortId,
    /// The HR whose LRT this is.
    pub hr: Address,
    /// The node's address.
    pub address: Address,
    /// Its name (lossy UTF-8).
    pub name: String,
    /// Its native address.
    pub native: String,
    /// Configured, exempt from keepalives.
    #[serde(rename = "static")]
    pub is_static: bool,
    /// A router HR (a buddy).
    pub router: bool,
    /// Keepalives missed in a row.
    pub missed: u32,
    /// Its logical addresses.
    #[serde(default)]
    pub logical: Vec<Address>,
}

/// A row of `show rts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtRow {
    /// Port index.
    pub port: PortId,
    /// The HR keeping it.
    pub hr: Address,
    /// The SAN it describes.
    pub san: Address,
    /// Its serial number.
    pub sn: u16,
    /// Q of the CSR.
    pub q: u16,
    /// MinMTU (bytes, 0 = unlimited).
    pub mtu: u32,
    /// `buddy 0x0116` or `twin 1`.
    pub origin: String,
    /// Received-from list, most recent sender first.
    pub rcvf: Vec<Address>,
    /// Common source route, hop by hop ([`hop_string`]).
    pub csr: Vec<String>,
    /// Node entries.
    pub nodes: usize,
}

/// A route of an HR to a destination (`show routes`, and the alternatives
/// of `show route`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteRow {
    /// Port index of the HR.
    pub port: PortId,
    /// The HR.
    pub hr: Address,
    /// Destination.
    pub dst: Address,
    /// Total Q.
    pub q: u16,
    /// Largest EEP packet the route carries (bytes, 0 = unlimited).
    pub mtu: u32,
    /// `local` or `port N -> NATIVE`.
    pub next: String,
    /// The hops from the HR onward ([`hop_string`]).
    pub path: Vec<String>,
    /// RCVF of the RT it comes from (empty on the HR's own SAN).
    pub rcvf: Vec<Address>,
}

/// A row of `show fib`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FibRow {
    /// Ingress port.
    pub port: PortId,
    /// Its HR.
    pub hr: Address,
    /// Destination.
    pub dst: Address,
    /// `local` or `forward`.
    pub next: String,
    /// Egress port (`forward`).
    #[serde(default)]
    pub egress: Option<PortId>,
    /// NativeAddr next hop on the egress SAN (`forward`).
    #[serde(default)]
    pub native: String,
    /// Total Q.
    pub q: u16,
    /// MTU of the egress SAN (bytes, 0 = unlimited).
    pub mtu: u32,
}

/// A row of `show neighbors`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeighborRow {
    /// Port index.
    pub port: PortId,
    /// Our HR on that SAN.
    pub hr: Address,
    /// The buddy's address.
    pub address: Address,
    /// Its name.
    pub name: String,
    /// Its native address.
    pub native: String,
    /// Keepalives missed in a row.
    pub missed: u32,
    /// RTs learned from it that the HR keeps.
    pub rts: usize,
}

/// A row of `show counters` (and of `stats`): a port's counters, in JSON
/// with the drops' total as `dropped` and the drops by reason as `drops`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "CounterRowJson", from = "CounterRowJson")]
pub struct CounterRow {
    /// Port index.
    pub port: PortId,
    /// Its counters.
    pub stats: PortStats,
}

impl CounterRow {
    /// The row of a port's counters.
    pub fn new(c: &PortSnapshot) -> CounterRow {
        CounterRow {
            port: c.port,
            stats: c.stats,
        }
    }

    /// Drops by reason name (every reason, zeros included).
    pub fn drops(&self) -> BTreeMap<String, u64> {
        self.stats
            .dropped
            .iter()
            .map(|(r, n)| (r.name().to_string(), n))
            .collect()
    }
}

impl core::ops::Deref for CounterRow {
    type Target = PortStats;
    fn deref(&self) -> &PortStats {
        &self.stats
    }
}

/// [`CounterRow`] as the admin protocol carries it.
#[derive(Serialize, Deserialize)]
struct CounterRowJson {
    port: PortId,
    #[serde(flatten, with = "rrp::counters::json::scalars")]
    stats: PortStats,
    /// Received and dropped (all reasons).
    #[serde(default)]
    dropped: u64,
    /// Drops by reason (every reason, zeros included).
    #[serde(default)]
    drops: BTreeMap<String, u64>,
}

impl From<CounterRow> for CounterRowJson {
    fn from(r: CounterRow) -> CounterRowJson {
        CounterRowJson {
            port: r.port,
            dropped: r.stats.dropped_total(),
            drops: r.drops(),
            stats: r.stats,
        }
    }
}

impl From<CounterRowJson> for CounterRow {
    fn from(j: CounterRowJson) -> CounterRow {
        let mut stats = j.stats;
        for (k, n) in &j.drops {
            if let Some(r) = DropReason::from_name(k) {
                stats.dropped[r] = *n;
            }
        }
        CounterRow {
            port: j.port,
            stats,
        }
    }
}

/// `show route ADDR`: the lookup a packet to `dst` gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteLookup {
    /// The destination.
    pub dst: Address,
    /// One lookup per ingress HR asked about.
    pub lookups: Vec<Lookup>,
}

/// The lookup of one ingress HR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lookup {
    /// Ingress port.
    pub port: PortId,
    /// Its HR.
    pub hr: Address,
    /// `forward`, `local` (punted to this box) or `no_route` (dropped).
    pub result: String,
    /// Egress port (`forward`).
    #[serde(default)]
    pub egress: Option<PortId>,
    /// The egress HR (`forward`).
    #[serde(default)]
    pub egress_hr: Option<Address>,
    /// NativeAddr next hop on the egress SAN (`forward`).
    #[serde(default)]
    pub next_hop: String,
    /// Total Q.
    #[serde(default)]
    pub q: Option<u16>,
    /// Largest EEP packet the route carries (bytes, 0 = unlimited).
    #[serde(default)]
    pub mtu: Option<u32>,
    /// The hops from the HR onward ([`hop_string`]).
    #[serde(default)]
    pub path: Vec<String>,
    /// RCVF of the RT the route comes from.
    #[serde(default)]
    pub rcvf: Vec<Address>,
    /// The other routes the HR knows, best first.
    #[serde(default)]
    pub alternatives: Vec<RouteRow>,
}

/// `stats` (JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Seconds since the daemon started.
    pub uptime_s: u64,
    /// Per-port counters.
    pub ports: Vec<CounterRow>,
    /// Control-plane counters (`punts`, `notices`, `injected`, `fib_version`, ...).
    #[serde(default)]
    pub plane: BTreeMap<String, u64>,
    /// The RRP engine's counters by their slot names without `rrp.`
    /// (`received`, `auth_refused_missing`, `rts_refused.stale`, ...;
    /// docs/stats.md).
    #[serde(default)]
    pub rrp: BTreeMap<String, u64>,
    /// The packets the partitions refused, per partition key and ingress
    /// port: the pairs with a refusal since the last clear, by key then
    /// port (docs/partitions.md "At the routers").
    #[serde(default)]
    pub partitions: Vec<PartitionDropRow>,
}

/// A row of `stats`' `partitions`: the packets of one partition refused
/// after they came in on one port.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionDropRow {
    /// The partition key, as `0x0010`; `other` for the pairs the workers
    /// had no slot for, counted together.
    pub key: String,
    /// The ingress port (`None` with `other`).
    #[serde(default)]
    pub port: Option<PortId>,
    /// Packets refused.
    pub dropped: u64,
}

impl PartitionDropRow {
    /// The rows of `partitions` with a refusal, by key then port, `other`
    /// last.
    pub fn rows(partitions: &[PartitionSnapshot]) -> Vec<PartitionDropRow> {
        let mut refused: Vec<&PartitionSnapshot> =
            partitions.iter().filter(|p| p.stats.dropped != 0).collect();
        refused.sort_by_key(|p| (p.tag.is_none(), p.tag));
        refused
            .into_iter()
            .map(|p| PartitionDropRow {
                key: p.key_text(),
                port: p.tag.map(|(_, port)| port),
                dropped: p.stats.dropped,
            })
            .collect()
    }
}

/// `version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    /// The daemon's version.
    pub daemon: String,
    /// The protocol version it speaks.
    pub protocol: u32,
}

/// `stats` with `"format":"prometheus"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrometheusText {
    /// The Prometheus text exposition.
    pub text: String,
}

// ----- formatting --------------------------------------------------------------

/// One hop of a route: `EGRESS@NATIVE`, `@NATIVE` (native hop only, on the
/// SAN where the route starts) or `EGRESS@` (egress only).
/// Natives as [`NativeAddr::on`] writes them for a SAN of `kind`.
pub fn hop_string(h: &RouterHop, kind: LinkKind) -> String {
    let mut s = String::new();
    if !h.is_native_only() {
        let _ = write!(s, "{}", h.egress);
    }
    let _ = write!(s, "@{}", h.native.on(kind));
    s
}

fn route_strings(r: &Route, kind: LinkKind) -> Vec<String> {
    r.0.iter().map(|h| hop_string(h, kind)).collect()
}

/// The port index `sel` names among HRs `hrs` (in port order).
pub fn resolve_port(hrs: &[Address], sel: PortSpec) -> Result<PortId, AdminError> {
    match sel {
        PortSpec::Index(i) if i.index() < hrs.len() => Ok(i),
        PortSpec::Index(i) => Err(AdminError::not_found(format!(
            "no port {i} (the box has {} ports)",
            hrs.len()
        ))),
        PortSpec::Hr(a) => hrs
            .iter()
            .position(|h| *h == a)
            .map(PortId::new)
            .ok_or_else(|| AdminError::not_found(format!("no HR {a} in this box"))),
    }
}

/// The answers that come from the RRP engine.
pub struct View<'a> {
    /// The engine.
    pub router: &'a Router,
    /// The kind of each port's SAN, for writing native addresses
    /// ([`NativeAddr::on`]); missing entries count as Ethernet.
    pub kinds: &'a [LinkKind],
}

impl<'a> View<'a> {
    /// A view of `router`, whose ports' SANs are of `kinds`.
    pub fn new(router: &'a Router, kinds: &'a [LinkKind]) -> View<'a> {
        View { router, kinds }
    }

    fn kind(&self, port: PortId) -> LinkKind {
        self.kinds
            .get(port.index())
            .copied()
            .unwrap_or(LinkKind::Ethernet)
    }

    fn native(&self, port: PortId, n: &NativeAddr) -> String {
        n.on(self.kind(port)).to_string()
    }

    fn hr(&self, port: PortId) -> Address {
        self.router.config().hrs[port].address
    }

    /// The HR addresses in port order.
    pub fn hr_addrs(&self) -> PerPort<Address> {
        self.router.config().hrs.iter().map(|h| h.address).collect()
    }

    /// The ports `sel` names (all when `None`).
    pub fn ports(&self, sel: Option<PortSpec>) -> Result<Vec<PortId>, AdminError> {
        match sel {
            None => Ok(self.router.config().hrs.ids().collect()),
            Some(s) => resolve_port(&self.hr_addrs(), s).map(|p| vec![p]),
        }
    }

    /// `show router` (the daemon supplies its version, uptime and FIB version).
    pub fn router_info(&self, version: &str, uptime_s: u64) -> RouterInfo {
        let cfg = self.router.config();
        let n = cfg.hrs.len();
        RouterInfo {
            name: cfg.name.clone(),
            version: version.to_string(),
            uptime_s,
            hrs: n,
            router_cost: cfg.router_cost,
            k: cfg.k,
            fib_version: self.router.fib().version,
            known_sans: self.router.known_sans().into_iter().collect(),
            lrt_nodes: PortId::all(n).map(|p| self.router.lrt(p).len()).sum(),
            rts_kept: PortId::all(n).map(|p| self.router.rts_kept(p)).sum(),
            standing: self.router.standing().name().to_string(),
            standing_changes: self.router.standing_changes(),
        }
    }

    /// `show hrs`.
    pub fn hrs(&self) -> Vec<HrRow> {
        let cfg = self.router.config();
        cfg.hrs
            .enumerate()
            .map(|(p, h)| HrRow {
                port: p,
                hr: h.address,
                san: h.san_id,
                mtu: h.mtu,
                cost: h.cost,
                native: self.native(p, &h.native),
                up: self.router.port_is_up(p),
                lrt: self.router.lrt(p).len(),
                buddies: self.router.buddies(p).len(),
                rts: self.router.rts_kept(p),
            })
            .collect()
    }

    /// `show lrt`.
    pub fn lrt(&self, sel: Option<PortSpec>) -> Result<Vec<LrtRow>, AdminError> {
        let mut rows = Vec::new();
        for p in self.ports(sel)? {
            for e in self.router.lrt(p).values() {
                rows.push(LrtRow {
                    port: p,
                    hr: self.hr(p),
                    address: e.info.address,
                    name: e
                        .info
                        .name
                        .as_deref()
                        .map(|n| String::from_utf8_lossy(n).into_owned())
                        .unwrap_or_default(),
                    native: self.native(p, &e.native),
                    is_static: e.is_static,
                    router: e.router,
                    missed: e.missed,
                    logical: e.info.logical.clone().unwrap_or_default(),
                });
            }
        }
        Ok(rows)
    }

    /// `show rts`.
    pub fn rts(
        &self,
        sel: Option<PortSpec>,
        san: Option<Address>,
    ) -> Result<Vec<RtRow>, AdminError> {
        let mut rows = Vec::new();
        let sans = self.router.known_sans();
        for p in self.ports(sel)? {
            for s in &sans {
                if san.is_some_and(|want| *s != want) {
                    continue;
                }
                for (rt, origin) in self.router.kept(p, *s) {
                    rows.push(RtRow {
                        port: p,
                        hr: self.hr(p),
                        san: rt.san_id,
                        sn: rt.sn,
                        q: rt.q,
                        mtu: rt.mtu.0.saturating_mul(8),
                        origin: match origin {
                            Origin::Buddy { from } => format!("buddy {from}"),
                            Origin::Twin { port } => format!("twin {port}"),
                        },
                        rcvf: rt.rcvf.clone(),
                        csr: route_strings(&rt.csr, self.kind(p)),
                        nodes: rt.nodes.len(),
                    });
                }
            }
        }
        Ok(rows)
    }

    fn next_string(&self, next: &Next) -> String {
        match next {
            Next::Local => "local".into(),
            Next::Forward { port, native } => {
                format!("port {port} -> {}", self.native(*port, native))
            }
        }
    }

    fn route_row(&self, port: PortId, r: &RouteInfo) -> RouteRow {
        RouteRow {
            port,
            hr: self.hr(port),
            dst: r.dst,
            q: r.q,
            mtu: r.mtu,
            next: self.next_string(&r.next),
            path: route_strings(&r.route, self.kind(port)),
            rcvf: r.rcvf.clone(),
        }
    }

    /// `show routes`: the best route of each HR to every destination in
    /// its FIB.
    pub fn routes(&self, sel: Option<PortSpec>) -> Result<Vec<RouteRow>, AdminError> {
        let fib = self.router.fib();
        let mut rows = Vec::new();
        for p in self.ports(sel)? {
            for e in fib.entries(p) {
                if let Some(best) = self.router.routes_to(p, e.dst).first() {
                    rows.push(self.route_row(p, best));
                }
            }
        }
        Ok(rows)
    }

    /// `show fib`.
    pub fn fib(&self, sel: Option<PortSpec>) -> Result<Vec<FibRow>, AdminError> {
        let fib = self.router.fib();
        let mut rows = Vec::new();
        for p in self.ports(sel)? {
            for e in fib.entries(p) {
                let (next, egress, native) = match &e.next {
                    Next::Local => ("local", None, String::new()),
                    Next::Forward { port, native } => {
                        ("forward", Some(*port), self.native(*port, native))
                    }
                };
                rows.push(FibRow {
                    port: p,
                    hr: self.hr(p),
                    dst: e.dst,
                    next: next.into(),
                    egress,
                    native,
                    q: e.q,
                    mtu: e.mtu,
                });
            }
        }
        Ok(rows)
    }

    /// `show neighbors`.
    pub fn neighbors(&self, sel: Option<PortSpec>) -> Result<Vec<NeighborRow>, AdminError> {
        let sans = self.router.known_sans();
        let mut rows = Vec::new();
        for p in self.ports(sel)? {
            let kept: Vec<Origin> = sans
                .iter()
                .flat_map(|s| self.router.kept(p, *s))
                .map(|(_, o)| o)
                .collect();
            for e in self.router.lrt(p).values().filter(|e| e.router) {
                let a = e.info.address;
                rows.push(NeighborRow {
                    port: p,
                    hr: self.hr(p),
                    address: a,
                    name: e
                        .info
                        .name
                        .as_deref()
                        .map(|n| String::from_utf8_lossy(n).into_owned())
                        .unwrap_or_default(),
                    native: self.native(p, &e.native),
                    missed: e.missed,
                    rts: kept
                        .iter()
                        .filter(|o| matches!(o, Origin::Buddy { from } if *from == a))
                        .count(),
                });
            }
        }
        Ok(rows)
    }

    /// `show route DST`.
    pub fn route(&self, dst: Address, sel: Option<PortSpec>) -> Result<RouteLookup, AdminError> {
        let fib = self.router.fib();
        let hrs = self.hr_addrs();
        let mut lookups = Vec::new();
        for p in self.ports(sel)? {
            let routes = self.router.routes_to(p, dst);
            let entry = fib.lookup(p, dst);
            let mut l = Lookup {
                port: p,
                hr: hrs[p],
                result: "no_route".into(),
                egress: None,
                egress_hr: None,
                next_hop: String::new(),
                q: None,
                mtu: None,
                path: Vec::new(),
                rcvf: Vec::new(),
                alternatives: Vec::new(),
            };
            if let Some(e) = entry {
                l.q = Some(e.q);
                l.mtu = Some(e.mtu);
                match &e.next {
                    Next::Local => l.result = "local".into(),
                    Next::Forward { port, native } => {
                        l.result = "forward".into();
                        l.egress = Some(*port);
                        l.egress_hr = hrs.get(*port).copied();
                        l.next_hop = self.native(*port, native);
                    }
                }
                // The route the FIB entry was made from: the best one with
                // the same next hop (else the best one).
                let best = routes
                    .iter()
                    .position(|r| r.next == e.next)
                    .or(if routes.is_empty() { None } else { Some(0) });
                if let Some(i) = best {
                    let r = &routes[i];
                    l.q = Some(r.q);
                    l.mtu = Some(r.mtu);
                    l.path = route_strings(&r.route, self.kind(p));
                    l.rcvf = r.rcvf.clone();
                    l.alternatives = routes
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, r)| self.route_row(p, r))
                        .collect();
                }
            }
            lookups.push(l);
        }
        Ok(RouteLookup { dst, lookups })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(b: &[u8]) -> NativeAddr {
        NativeAddr::from_bytes(b).unwrap()
    }

    #[test]
    fn hops() {
        assert_eq!(
            hop_string(&RouterHop::egress(Address(0x116)), LinkKind::Ethernet),
            "0x0116@"
        );
        assert_eq!(
            hop_string(
                &RouterHop::native(n(&[2, 0, 0, 0, 0, 1])),
                LinkKind::Ethernet
            ),
            "@02:00:00:00:00:01"
        );
    }

    #[test]
    fn partition_drop_rows_are_the_refusals_by_key_then_port_other_last() {
        use rrp::counters::PartitionStats;
        let p = |tag, dropped| PartitionSnapshot::new(tag, PartitionStats { dropped });
        let rows = PartitionDropRow::rows(&[
            p(None, 2),
            p(Some((0x20, PortId(0))), 4),
            p(Some((0x10, PortId(1))), 0),
            p(Some((0x10, PortId(0))), 1),
        ]);
        let got: Vec<(&str, Option<PortId>, u64)> = rows
            .iter()
            .map(|r| (r.key.as_str(), r.port, r.dropped))
            .collect();
        assert_eq!(
            got,
            [
                ("0x0010", Some(PortId(0)), 1),
                ("0x0020", Some(PortId(0)), 4),
                ("other", None, 2)
            ]
        );
        let v = serde_json::to_value(&rows[0]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"key": "0x0010", "port": 0, "dropped": 1})
        );
    }
}

/// `show mcast`: the box's multicast state (docs/multicast.md): every group
/// with members somewhere, the ports it leaves by from here, and its
/// counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct McastInfo {
    /// The groups, by logical address.
    pub groups: Vec<McastRow>,
    /// Source SANs the box has a reverse-path entry for.
    pub source_sans: usize,
    /// Source nodes it knows.
    pub sources: usize,
    /// Counters of the group packets of groups that have no counter slot
    /// (more groups than the dataplane counts one by one).
    #[serde(with = "rrp::counters::json")]
    pub unslotted: GroupStats,
}

/// One group in `show mcast`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McastRow {
    /// The logical address.
    pub group: Address,
    /// The SANs (SAN-IDs) with members.
    pub member_sans: Vec<Address>,
    /// The ports on a best route to a member SAN.
    pub branches: Vec<u16>,
    /// The ports whose own SAN has members.
    pub local: Vec<u16>,
    /// Its counters.
    #[serde(with = "rrp::counters::json")]
    pub counters: GroupStats,
}

fn ports_of(mask: u32) -> Vec<u16> {
    (0..32u16).filter(|p| mask & (1 << p) != 0).collect()
}

impl McastInfo {
    /// The view of the engine's multicast state `t`, with each group's
    /// counters from `counts` (none: zero).
    pub fn build(
        t: &rrp::router::McastTables,
        counts: impl Fn(Address) -> Option<GroupStats>,
        unslotted: GroupStats,
    ) -> McastInfo {
        McastInfo {
            groups: t
                .groups
                .iter()
                .map(|g| McastRow {
                    group: g.group,
                    member_sans: g.member_sans.clone(),
                    branches: ports_of(g.branches),
                    local: ports_of(g.local),
                    counters: counts(g.group).unwrap_or_default(),
                })
                .collect(),
            source_sans: t.sans.len(),
            sources: t.sources.len(),
            unslotted,
        }
    }
}
