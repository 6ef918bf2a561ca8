//! Port backends behind one burst trait (docs/architecture.md "Crates", "Threads and
//! data flow").
//!
//! A [`Port`] is one queue pair of one router port, owned by one worker: it
//! receives and transmits bursts of packet buffers ([`PacketBuf`]) that start
//! at the MessageWay packet (native encapsulation stripped on receive, added
//! by [`Port::encap`] before transmit). Buffers allow a cheap strip and
//! prepend at the front and a trim or write at the tail, and carry the native
//! source address and a receive-error flag where the backend knows one.
//!
//! Backends: in-memory rings ([`memory`], for tests and benchmarks, with an
//! optional seeded impairment layer), and — added alongside — UDP sockets,
//! AF_PACKET rings and DPDK ethdev (feature `dpdk`).

pub mod af_packet;
pub mod clock;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod grace;
pub mod heap;
pub mod impair;
pub mod memory;
pub mod tsc;
pub mod udp;

use arrayvec::ArrayVec;
use rrp::{LinkKind, LinkStats, NativeAddr};

pub use heap::{BufPool, HeapBuf};

/// Packets per receive or transmit burst.
pub const BURST: usize = 32;

/// A burst of buffers.
pub type Burst<B> = ArrayVec<B, BURST>;

/// A packet buffer: a window onto bytes with room to grow at the front.
pub trait PacketBuf: Send {
    /// The packet bytes.
    fn data(&self) -> &[u8];
    /// The packet bytes, writable.
    fn data_mut(&mut self) -> &mut [u8];
    /// Length of the packet.
    fn len(&self) -> usize {
        self.data().len()
    }
    /// Whether the packet is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Strips `n` bytes at the front (`n <= len`).
    fn adj(&mut self, n: usize);
    /// Grows the packet by `n` bytes at the front and returns them; `None`
    /// when the headroom is too small.
    fn prepend(&mut self, n: usize) -> Option<&mut [u8]>;
    /// Cuts the packet to `len` bytes (`len <= self.len()`).
    fn trim(&mut self, len: usize);
    /// Grows the packet by `n` bytes at the tail and returns them; `None`
    /// when the tailroom is too small.
    fn append(&mut self, n: usize) -> Option<&mut [u8]>;
    /// Whether the port flagged a receive error on this packet.
    fn rx_error(&self) -> bool;
    /// The native address the packet came from (empty when unknown).
    fn native_src(&self) -> NativeAddr;

    /// Touches the packet's first bytes before the engine looks at the
    /// burst one packet at a time, so that the cache misses of a burst
    /// overlap (a plain load by default). A backend whose receive path has
    /// already read every packet's headers (DPDK: the Ethernet header, with
    /// the data prefetched ahead) does nothing here.
    #[inline(always)]
    fn prefetch(&self) {
        core::hint::black_box(self.data().first());
    }
}

/// A link header as [`Port::link_header`] gives it, with the smallest frame
/// the link carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkHeader {
    /// The bytes in front of the packet (an Ethernet header: 14).
    pub bytes: ArrayVec<u8, { rrp::encap::ETH_HEADER_LEN }>,
    /// Frames shorter than this are padded with zeros after the packet.
    pub min_frame: usize,
}

/// One queue pair of one router port, owned by one worker.
pub trait Port: Send {
    /// The buffer type of this backend.
    type Buf: PacketBuf;

    /// Receives up to `BURST - out.len()` packets, appending them to `out`.
    /// NativeAddr encapsulation is stripped; the buffer starts at the MessageWay
    /// packet (frame padding may follow it).
    fn rx_burst(&mut self, out: &mut Burst<Self::Buf>);

    /// Transmits packets from the front of `pkts` (each prepared by
    /// [`Port::encap`]); the sent ones are removed and the unsent ones stay
    /// for the caller to drop and count. Returns how many were sent.
    fn tx_burst(&mut self, pkts: &mut Burst<Self::Buf>) -> usize;

    /// Prepares `buf` for transmission to native address `dst` on this
    /// port's SAN (e.g. prepends the Ethernet header). An empty `dst` means
    /// every member of the SAN (Ethernet broadcast, every configured UDP
    /// member). Returns false when the address is not of this SAN's kind or
    /// the buffer has no headroom.
    fn encap(&self, buf: &mut Self::Buf, dst: &NativeAddr) -> bool;

    /// [`Port::encap`] to a 6-byte native address (a MAC, or an IPv4 UDP
    /// endpoint) given as bytes: the forwarding path of a source-routed
    /// packet, whose next hop is in its L2RH, without building a
    /// [`NativeAddr`] first where the backend can (DPDK).
    #[inline]
    fn encap_mac(&self, buf: &mut Self::Buf, dst: &[u8; 6]) -> bool {
        self.encap(buf, &NativeAddr::mac(*dst))
    }

    /// The link header this port writes in front of every packet to `dst`,
    /// when its encapsulation is those bytes and nothing else, and frames
    /// shorter than `min_frame` bytes are padded with zeros after the
    /// packet: on such a port a buffer holding the header, the packet and
    /// the padding is ready for [`Port::tx_burst`] as it is. A sender that
    /// sends the same packets again (mwgen) builds each frame once and
    /// copies it, instead of calling [`Port::encap`] per packet. `None`
    /// (the default): the encapsulation also records something in the
    /// buffer (a destination), so every buffer goes through `encap`.
    fn link_header(&self, dst: &NativeAddr) -> Option<LinkHeader> {
        let _ = dst;
        None
    }

    /// A new empty buffer (for packets the control plane injects); `None`
    /// when the pool is exhausted.
    fn alloc(&mut self) -> Option<Self::Buf>;

    /// A copy of `buf`'s packet to transmit on this port (multicast
    /// replication, docs/multicast.md): the same bytes, in a buffer that
    /// [`Port::encap`] and [`Port::tx_burst`] take like any other. By
    /// default a buffer of this port's pool with the bytes copied; a
    /// backend that can share the payload does so instead (DPDK: a header
    /// mbuf chained to `buf`'s own mbuf, whose reference count goes up).
    /// After the first replica, `buf` may only be encapsulated (by any
    /// port: a shared buffer gets its header without being changed) or
    /// dropped, and its bytes must not be written. `None`: no buffer left.
    #[inline]
    fn replicate(&mut self, buf: &Self::Buf) -> Option<Self::Buf> {
        let mut b = self.alloc()?;
        match b.append(buf.len()) {
            Some(d) => {
                d.copy_from_slice(buf.data());
                Some(b)
            }
            None => {
                self.recycle(b);
                None
            }
        }
    }

    /// This port's own native address on its SAN.
    fn native_addr(&self) -> NativeAddr;

    /// The kind of native addresses this port uses.
    fn link_kind(&self) -> LinkKind;

    /// Takes back a buffer that will not be transmitted (a dropped packet),
    /// so that pooled backends reuse it instead of freeing it.
    #[inline]
    fn recycle(&mut self, buf: Self::Buf) {
        drop(buf)
    }

    /// Appends up to `n` new empty buffers to `out` (no more than it has
    /// room for) and returns how many: for senders that build whole bursts.
    /// Pooled backends take them from the pool in one operation.
    #[inline]
    fn alloc_burst(&mut self, out: &mut Burst<Self::Buf>, n: usize) -> usize {
        let n = n.min(out.remaining_capacity());
        for i in 0..n {
            match self.alloc() {
                Some(b) => out.push(b),
                None => return i,
            }
        }
        n
    }

    /// Takes back every buffer of `bufs` (leaving it empty), as
    /// [`Port::recycle`] does one: pooled backends return them in one
    /// operation.
    #[inline]
    fn recycle_burst(&mut self, bufs: &mut Burst<Self::Buf>) {
        for b in bufs.drain(..) {
            self.recycle(b);
        }
    }

    /// A file descriptor that becomes readable when packets arrive, for
    /// workers that block when idle; `None` for polled-only backends.
    fn wait_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }

    /// The link's own counters, as running totals since the port was
    /// opened: the bytes it received and transmitted, the packets the
    /// kernel or the device dropped before the port read them, and the
    /// device's errors (docs/backends.md "The link's counters" says what
    /// each backend reports). Read when the worker publishes its counters,
    /// never per burst: a backend may make a system call here or read the
    /// device's counters. Where several ports share one device (a DPDK
    /// ethdev's queues), one of them reports the device's counters and the
    /// others zeros, so that a sum over the ports counts them once. Zeros
    /// by default.
    fn link_stats(&mut self) -> LinkStats {
        LinkStats::default()
    }
}
