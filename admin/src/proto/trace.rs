//! `trace_packets`: its request, checked, and the items it streams
//! (docs/admin-protocol.md "Tracing packets"): what the dataplane decided
//! for the next N received packets that match a filter (the dataplane's
//! side is `dataplane::trace`, docs/dataplane.md "Tracing packets").

use rrp::{Address, PortId};
use serde::{Deserialize, Serialize};

use super::TRACE_MAX_COUNT;
use super::command::Command;
use super::error::AdminError;
use super::port::PortSpec;

/// Which packets a trace takes, by how the forwarding path reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// Source-routed packets (a leading L2RH).
    L2,
    /// Packets routed by destination (an EEP header first).
    L3,
}

impl TraceKind {
    /// The kind's name (`l2`, `l3`).
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::L2 => "l2",
            TraceKind::L3 => "l3",
        }
    }
}

/// A `trace_packets` command's request, checked: what every handler of
/// the command serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRequest {
    /// Only packets received on this port (`None`: any port).
    pub port: Option<PortSpec>,
    /// How many packets to record (1 to [`TRACE_MAX_COUNT`]).
    pub count: u32,
    /// Only packets to this destination (the EEP header's).
    pub dst: Option<Address>,
    /// Only L2 or only L3 packets.
    pub only: Option<TraceKind>,
    /// Stop after this many milliseconds, however many were recorded
    /// (`None`: when `count` are, or the client leaves).
    pub timeout_ms: Option<u64>,
}

impl TraceRequest {
    /// The request of `cmd`: `None` when it is not `trace_packets`, a
    /// `bad_request` error for a count of 0 or above [`TRACE_MAX_COUNT`] or
    /// a destination that no packet can have (checked before anything is
    /// streamed; a port the box does not have is the dispatcher's
    /// `not_found`).
    pub fn of(cmd: &Command) -> Option<Result<TraceRequest, AdminError>> {
        let Command::TracePackets {
            port,
            count,
            dst,
            only,
            timeout_ms,
        } = cmd
        else {
            return None;
        };
        let count = match u32::try_from(*count) {
            Ok(n @ 1..=TRACE_MAX_COUNT) => n,
            _ => {
                return Some(Err(AdminError::bad_request(format!(
                    "trace_packets: count must be 1 to {TRACE_MAX_COUNT}, not {count}"
                ))));
            }
        };
        if let Some(d) = dst
            && !d.is_valid_destination()
        {
            return Some(Err(AdminError::bad_request(format!(
                "trace_packets: {d} is not a destination (0x0000-0x003F are L2RH lengths)"
            ))));
        }
        Some(Ok(TraceRequest {
            port: *port,
            count,
            dst: *dst,
            only: *only,
            timeout_ms: timeout_ms.filter(|&t| t > 0),
        }))
    }
}

/// What an L3 lookup in the ingress HR's FIB returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TracedEntry {
    /// No route (FIB index 0).
    NoRoute,
    /// This box (FIB index 1): punted.
    Local,
    /// A next hop: its index in the FIB set's next-hop table.
    NextHop(u16),
}

/// How the dataplane decided a traced packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TracedLookup {
    /// No lookup: the packet's framing was refused first.
    Unframed,
    /// L3: a lookup of the destination in the ingress HR's FIB.
    L3 {
        /// The FIB set's version (`show router`'s `fib_version`).
        fib_version: u64,
        /// What the lookup returned.
        entry: TracedEntry,
    },
    /// L3 to a logical address: the multicast table (docs/multicast.md).
    Group {
        /// The FIB set's version.
        fib_version: u64,
    },
    /// L2: the leading L2RH, a hop of a source route.
    L2 {
        /// The egress HR it names (absent: too short to name one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress_hr: Option<Address>,
    },
}

/// The next hop a traced packet's lookup named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TracedHop {
    /// The egress port.
    pub port: PortId,
    /// Its HR.
    pub hr: Address,
    /// The native address on the egress SAN.
    pub native: String,
}

/// What became of a traced packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TracedVerdict {
    /// Transmitted on the egress port.
    Forwarded {
        /// Back onto its ingress SAN (the control plane may redirect the
        /// source).
        #[serde(default)]
        redirect: bool,
    },
    /// A group packet, copied onto these ports.
    Replicated {
        /// The egress ports.
        ports: Vec<PortId>,
    },
    /// Handed to the control plane.
    Punted {
        /// Its punt class (`routing`, `request`, `management`, `local`).
        class: String,
    },
    /// Dropped.
    Dropped {
        /// Why (the names of `rrp::DropReason`: `no-route`, `mtu`, ...).
        reason: String,
    },
}

/// One traced packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TracedPacket {
    /// When the daemon took the record from the dataplane, nanoseconds
    /// since the UNIX epoch.
    pub ts_ns: u64,
    /// The worker that decided it.
    pub worker: usize,
    /// The port it was received on.
    pub port: PortId,
    /// That port's HR.
    pub hr: Address,
    /// Its length as received.
    pub len: u32,
    /// The EEP header's source address (absent: no header found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<Address>,
    /// The EEP header's destination address (absent: no header found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<Address>,
    /// How it was decided.
    pub lookup: TracedLookup,
    /// The next hop the lookup named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_hop: Option<TracedHop>,
    /// The trailer's EI as received (absent: no trailer found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ei_before: Option<u64>,
    /// The trailer's EI as transmitted (forwarded and replicated packets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ei_after: Option<u64>,
    /// The port it left by, was delivered to (punted), or would have left
    /// by (dropped for `mtu`, `tx-full`, `encap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<PortId>,
    /// What became of it.
    pub verdict: TracedVerdict,
}

/// The streamed items of a trace (each a `"more": true` line's result).
/// The final line's result is a [`TraceSummary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEvent {
    /// First item: the trace is armed, and what it takes.
    Start {
        /// Packets to record.
        count: u32,
        /// Only this port's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortId>,
        /// That port's HR.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hr: Option<Address>,
        /// Only packets to this destination.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dst: Option<Address>,
        /// Only L2 or only L3 packets.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        only: Option<TraceKind>,
        /// The trace ends after this many milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// A traced packet.
    Packet(TracedPacket),
}

/// The final answer to a trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Packets recorded and sent to the client.
    pub recorded: u64,
    /// Packets asked for.
    pub requested: u32,
    /// Records the dataplane could not keep (its rings were full): their
    /// packets were traced, their records not sent.
    #[serde(default)]
    pub lost: u64,
    /// Why the trace ended: `count` (every packet asked for was traced),
    /// `timeout`, `client` (the client left), `stopped` (the daemon
    /// stops).
    #[serde(default)]
    pub ended: String,
}
