//! How a DPDK port makes the copies of a group packet: mbuf chains (zero
//! copy) on devices that transmit them, copies elsewhere (docs/backends.md
//! "DPDK", docs/performance.md "Multicast replication").

use super::ethdev::{ETH_HLEN, MIN_FRAME};
use super::mbuf::Pool;

/// `RTE_ETH_TX_OFFLOAD_MULTI_SEGS` (a function-like macro in C, so not in
/// the bindings): the driver transmits mbuf chains.
pub const TX_OFFLOAD_MULTI_SEGS: u64 = 1 << 15;

/// Drivers of DPDK 22.11 that transmit mbuf chains correctly without
/// advertising [`TX_OFFLOAD_MULTI_SEGS`] (checked in their 22.11 sources and
/// by tests/dpdk_replicate.rs):
///
/// - `net_null`: `eth_null_tx` counts `pkt_len` and frees each chain with
///   `rte_pktmbuf_free` (its `copy=1` mode copies `size` bytes from the first
///   segment into a dummy buffer: wrong bytes, but inside the header mbuf's
///   buffer, and the PMD is a sink);
/// - `net_pcap`: its transmit paths read each chain with `rte_pktmbuf_read`
///   (into a snap-length buffer) before writing or sending it, and the
///   rx-only variant (`eth_tx_drop`) frees chains.
///
/// `net_ring`, `net_memif`, `net_af_packet` and `net_tap` advertise the flag
/// in 22.11; `net_af_xdp` neither advertises it nor copies more than the
/// first segment: copies there, as for every other driver without the flag.
pub const CHAINING_DRIVERS: [&str; 2] = ["net_null", "net_pcap"];

/// How a [`DpdkPort`](super::DpdkPort) makes the copies of a group packet
/// ([`Port::replicate`](crate::Port::replicate)): decided per device when it is started, from its
/// driver's transmit capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replication {
    /// Chains, a header mbuf then the packet's own (shared) mbuf (no copy of
    /// the payload); the driver advertises [`TX_OFFLOAD_MULTI_SEGS`], which
    /// is enabled on the device.
    ChainOffload,
    /// Chains, on a driver that transmits them without advertising it
    /// ([`CHAINING_DRIVERS`]).
    ChainDriver,
    /// A copy of the packet in one mbuf: the driver may not transmit
    /// chains, or [`StartOptions::chains`](super::StartOptions::chains) is off.
    Copy,
}

impl Replication {
    /// The mode for a device of `driver` with transmit capabilities
    /// `tx_offload_capa`, when chains are wanted (`chains`).
    pub fn for_driver(driver: &str, tx_offload_capa: u64, chains: bool) -> Replication {
        if !chains {
            Replication::Copy
        } else if tx_offload_capa & TX_OFFLOAD_MULTI_SEGS != 0 {
            Replication::ChainOffload
        } else if CHAINING_DRIVERS.contains(&driver) {
            Replication::ChainDriver
        } else {
            Replication::Copy
        }
    }

    /// Whether replicas are chains.
    pub fn chains(self) -> bool {
        self != Replication::Copy
    }

    /// For logs: "chain (MULTI_SEGS offload)", ...
    pub fn describe(self) -> &'static str {
        match self {
            Replication::ChainOffload => "chain (tx offload MULTI_SEGS)",
            Replication::ChainDriver => "chain (driver transmits chains)",
            Replication::Copy => "copy",
        }
    }
}

impl std::fmt::Display for Replication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// Group packets shorter than this (the MessageWay packet, without its
/// Ethernet header) are replicated by copy even on chaining ports: their
/// frame needs padding after the packet, which a replica sharing the
/// packet's buffer cannot write.
pub const CHAIN_MIN_LEN: usize = MIN_FRAME - ETH_HLEN;

/// The default [`StartOptions::chain_min_len`]: below this a copy was
/// measured faster than a chain (engine-bench's DPDK multicast variants,
/// docs/performance.md "Multicast replication").
///
/// [`StartOptions::chain_min_len`]: super::StartOptions::chain_min_len
pub const CHAIN_FROM_LEN: usize = 256;

/// The pool a chaining port's replica headers come from: header mbufs (data
/// room `2 × RTE_PKTMBUF_HEADROOM`, as DPDK's `ipv4_multicast`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ChainPools {
    pub(super) headers: Pool,
}
