//! An ethdev's statistics: the device's counters and the frames its ports
//! dropped in software, counted per queue.

use std::sync::atomic::{AtomicU64, Ordering};

use dpdk_sys as sys;
use rrp::LinkStats;

use super::eal::{DpdkError, rc_error};
use super::ethdev::Ethdev;

/// Per-queue software counters of a [`DpdkPort`]: frames the port dropped
/// before they became packets (they never reach the engine's counters).
#[derive(Debug, Default)]
#[repr(align(64))]
pub(super) struct QueueCounters {
    pub(super) not_mw: AtomicU64,
    pub(super) runt: AtomicU64,
    pub(super) multiseg: AtomicU64,
    pub(super) not_for_us: AtomicU64,
    pub(super) linearized: AtomicU64,
    pub(super) unshared: AtomicU64,
    pub(super) replicas_chained: AtomicU64,
    pub(super) replicas_copied: AtomicU64,
}

#[inline(always)]
pub(super) fn bump(c: &AtomicU64, n: u64) {
    if n != 0 {
        // One writer per queue: a plain load and store, no locked RMW.
        c.store(c.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }
}

/// Port statistics: the ethdev's (`rte_eth_stats_get`) and the frames the
/// backend dropped on receive (summed over queues).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EthdevStats {
    /// Frames received by the device.
    pub ipackets: u64,
    /// Frames transmitted by the device.
    pub opackets: u64,
    /// Bytes received.
    pub ibytes: u64,
    /// Bytes transmitted.
    pub obytes: u64,
    /// Frames the device dropped because the rx queues were full.
    pub imissed: u64,
    /// Erroneous frames received (e.g. bad FCS), dropped by the device.
    pub ierrors: u64,
    /// Failed transmissions.
    pub oerrors: u64,
    /// Receive mbuf allocation failures.
    pub rx_nombuf: u64,
    /// Frames dropped by the backend: EtherType not 0x88B5 (after at most one
    /// 802.1Q tag).
    pub rx_not_mw: u64,
    /// Frames dropped by the backend: shorter than their Ethernet header.
    pub rx_runt: u64,
    /// Frames dropped by the backend: spread over several segments (or
    /// sharing their buffer) and too long for one mbuf of the port's pool,
    /// or no mbuf was free to copy them into.
    pub rx_multiseg: u64,
    /// Frames dropped by the backend: unicast to another MAC (seen in
    /// promiscuous mode).
    pub rx_not_for_us: u64,
    /// Chains received (e.g. another port's multicast replicas over an
    /// in-process ring, or memif) and made one segment before the engine
    /// saw them: in place (`rte_pktmbuf_linearize`) when the first segment
    /// had the room, else copied into a new mbuf.
    pub rx_linearized: u64,
    /// Single-segment frames whose buffer was shared (an mbuf with
    /// references from clones, or an indirect one: the original of a
    /// replicated packet passed by pointer), copied before the engine writes
    /// into them.
    pub rx_unshared: u64,
    /// Multicast replicas made as chains (zero copy), see [`Replication`](super::Replication).
    pub replicas_chained: u64,
    /// Multicast replicas made as copies (copying ports, packets shorter
    /// than [`CHAIN_MIN_LEN`](super::CHAIN_MIN_LEN), or a chain pool ran empty).
    pub replicas_copied: u64,
}

impl EthdevStats {
    /// The device's counters as the link's counters of a port
    /// ([`crate::Port::link_stats`]): `ibytes`, `obytes`, `imissed`,
    /// `rx_nombuf`, `ierrors`, `oerrors`.
    pub fn link(&self) -> LinkStats {
        LinkStats {
            rx_bytes: self.ibytes,
            tx_bytes: self.obytes,
            rx_missed: self.imissed,
            rx_no_buffer: self.rx_nombuf,
            rx_link_errors: self.ierrors,
            tx_link_errors: self.oerrors,
        }
    }
}

impl Ethdev {
    /// The statistics now (readable from any thread).
    pub fn stats(&self) -> Result<EthdevStats, DpdkError> {
        let mut s = sys::rte_eth_stats::default();
        // SAFETY: valid port; `s` is a valid out-pointer.
        let rc = unsafe { sys::rte_eth_stats_get(self.0.port_id, &mut s) };
        if rc != 0 {
            return Err(rc_error("rte_eth_stats_get", self.0.name.as_str(), rc));
        }
        let mut st = EthdevStats {
            ipackets: s.ipackets,
            opackets: s.opackets,
            ibytes: s.ibytes,
            obytes: s.obytes,
            imissed: s.imissed,
            ierrors: s.ierrors,
            oerrors: s.oerrors,
            rx_nombuf: s.rx_nombuf,
            ..EthdevStats::default()
        };
        for c in self.0.counters.iter() {
            st.rx_not_mw += c.not_mw.load(Ordering::Relaxed);
            st.rx_runt += c.runt.load(Ordering::Relaxed);
            st.rx_multiseg += c.multiseg.load(Ordering::Relaxed);
            st.rx_not_for_us += c.not_for_us.load(Ordering::Relaxed);
            st.rx_linearized += c.linearized.load(Ordering::Relaxed);
            st.rx_unshared += c.unshared.load(Ordering::Relaxed);
            st.replicas_chained += c.replicas_chained.load(Ordering::Relaxed);
            st.replicas_copied += c.replicas_copied.load(Ordering::Relaxed);
        }
        Ok(st)
    }
}
