//! The `mad` command's query (docs/admin-protocol.md "`mad`"): one MAD to
//! one node, by address, directed route or source route. What the query
//! means, its checks and the request it makes, and how a box runs it, are
//! [`crate::mad`]'s.

use std::collections::BTreeMap;

use rrp::Address;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Get or Set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MadMethod {
    /// Reads the attribute.
    #[default]
    Get,
    /// Writes it.
    Set,
    /// Removes a record (SubnAdm: a leave, a group deleted); the data is
    /// the record.
    Delete,
}

/// One hop of a directed route: the HR it leaves by (an HR of the node the
/// hop starts at) and the native address of the next node there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrHop {
    /// The HR the MAD leaves by.
    pub hr: Address,
    /// The next node's native address on that SAN (`02:00:00:00:00:07`,
    /// `127.0.0.1:34997`).
    pub native: String,
}

/// The `mad` command: one MAD to one node.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MadQuery {
    /// The node, by address (with `dr`: not allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<Address>,
    /// The node, by directed route: the hops from this box (the first
    /// leaves by one of this box's HRs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dr: Vec<DrHop>,
    /// Along an L2 source route: the first router's HR (a neighbour of this
    /// box), then `route`'s hops; `dst` is then the EEP destination
    /// (default Hey-You: whoever is at the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Address>,
    /// The router hops after `via`, `EGRESS@NATIVE` each (as RRP#2 routes
    /// are printed: `0x011a@127.0.0.1:4001`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub route: Vec<String>,
    /// The class: `subn`, `subn_dr`, `perf`, `trace`, or a number; by
    /// default `perf` for PortCounters, `subn_dr` with `dr`, else `subn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Get (default) or Set.
    #[serde(default)]
    pub method: MadMethod,
    /// The attribute: a name (`port_info`, `PortInfo`, `counters`) or a
    /// number (`0x0015`).
    pub attribute: String,
    /// The attribute modifier (the port for PortInfo and PortCounters).
    #[serde(default)]
    pub modifier: u32,
    /// The M_Key to give: hex (`0x...`) or decimal text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mkey: Option<String>,
    /// For a Set: the fields to change in the attribute as it reads now.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, Value>,
    /// For a Set: the whole attribute area as hex, instead of `set`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// How long one try waits (ms; default 1000, at most 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Tries after the first (default 2, at most 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
}
