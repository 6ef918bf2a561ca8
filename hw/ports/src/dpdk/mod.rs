//! The DPDK backend (feature `dpdk`): ethdev queues as [`Port`]s, mbufs as
//! [`PacketBuf`]s, zero copy from receive to transmit.
//!
//! - [`Eal`]: the Environment Abstraction Layer, initialised once per
//!   process from the router-wide EAL arguments; [`register_thread`] gives a
//!   worker thread an lcore id (and with it mempool caches).
//! - [`Pool`]: a pktmbuf mempool (one per NUMA socket in use, created by
//!   [`Eal::start_ports`] and sized from the ports' rings); pools live for the
//!   whole process.
//! - [`Mbuf`]: an owning handle on one `rte_mbuf` (`#[repr(transparent)]`, so
//!   that a `Burst<Mbuf>` is the pointer array the burst functions take);
//!   freed on drop.
//! - [`Ethdev`]: a configured, started ethdev with a transmit queue per
//!   worker and its receive queues, spread over the workers by flow rules
//!   where the device takes them ([`RxSpread`]); each queue is taken once,
//!   as a [`DpdkPort`] (Ethernet II decap/encap with EtherType 0x88B5, for a
//!   worker: its transmit queue and the receive queues it polls) or a
//!   [`RawQueue`] (whole frames, for tests and generators).
//! - [`ring_pair`]: two in-process ethdevs cross-connected by `rte_ring`s,
//!   for tests and benchmarks.
//!
//! See docs/backends.md, section "DPDK", for the EAL arguments, pool sizing,
//! ownership rules and the receive-error flags.
//!
//! [`Port`]: crate::Port
//! [`PacketBuf`]: crate::PacketBuf

const _: () = assert!(
    dpdk_sys::DPDK_FOUND,
    "the dpdk feature needs Debian's libdpdk-dev (pkg-config libdpdk)"
);

mod clock;
mod eal;
mod ethdev;
mod flow;
mod mbuf;
mod port;
mod queue;
mod replication;
mod ring;
mod stats;
pub mod unmap;

pub use clock::TscClock;
pub use eal::{DpdkError, Eal, lcore_id, register_thread, try_register_thread};
pub use ethdev::{
    DeviceSpec, ETH_HLEN, ETHERTYPE_MW, ETHERTYPE_VLAN, Ethdev, MIN_FRAME, StartOptions,
};
pub use flow::{RxSpread, Spread};
pub use mbuf::{Mbuf, Pool, RX_ERROR_FLAGS, RX_FLAGS_MASK, free_burst, rx_error_from_flags};
pub use port::DpdkPort;
pub use queue::RawQueue;
pub use replication::{
    CHAIN_FROM_LEN, CHAIN_MIN_LEN, CHAINING_DRIVERS, Replication, TX_OFFLOAD_MULTI_SEGS,
};
pub use ring::{RingPair, ring_pair};
pub use stats::EthdevStats;

/// The raw bindings (`dpdk-sys`), for the `RTE_MBUF_F_*` constants and
/// callers that need the C API (tests set `ol_flags` with them).
pub use dpdk_sys as sys;
