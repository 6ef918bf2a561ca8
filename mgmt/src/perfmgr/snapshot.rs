//! The snapshot of the fabric (docs/management.md "Fabric performance
//! manager"): every node the performance manager polls, whether it answered
//! the last sweep, and each port's counters accumulated across resets;
//! the last sweep's duration and the manager's counters. What the fabric
//! scrape renders.

use rrp::Address;

use super::{PerfStats, SweepSummary, Time};

/// The fabric as the last sweeps read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FabricSnapshot {
    /// The nodes, in address order.
    pub nodes: Vec<NodeSnapshot>,
    /// The last finished sweep.
    pub last_sweep: Option<SweepSummary>,
    /// The manager's counters.
    pub stats: PerfStats,
}

/// A node of the fabric.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeSnapshot {
    /// The address it is polled at.
    pub address: Address,
    /// Its NodeDescription when known (the SAN manager's database), else
    /// its address.
    pub name: String,
    /// Its NodeIdentity (0: not known yet).
    pub identity: u64,
    /// Whether it answered every poll of the last sweep that polled it
    /// (false before its first answered sweep).
    pub ok: bool,
    /// When it last answered a whole sweep.
    pub answered_at: Option<Time>,
    /// Its ports, in port order.
    pub ports: Vec<PortSnapshot>,
}

/// A port's counters, accumulated across resets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortSnapshot {
    /// The port (PortSelect).
    pub port: u8,
    /// PortCounters' counters (`PortCounters::NAMES` order), totals.
    pub counters: Vec<u64>,
    /// PortCountersExtended's (`PortCountersExtended::NAMES` order),
    /// totals; empty where the node does not count its links.
    pub extended: Vec<u64>,
    /// Resets seen on the port.
    pub resets: u64,
}
