//! Mbufs and their pools.

use std::ffi::{CString, c_int};
use std::fmt;
use std::ptr::NonNull;

use dpdk_sys as sys;

use super::eal::{DpdkError, Eal, errno_error};
use super::ethdev::ETH_HLEN;
use crate::{BURST, Burst, PacketBuf};
use rrp::NativeAddr;

/// The `ol_flags` bits that DPDK uses for receive information (bits 0..=22;
/// the transmit requests and the buffer-kind flags such as
/// `RTE_MBUF_F_EXTERNAL` live above).
pub const RX_FLAGS_MASK: u64 = (1 << 23) - 1;

/// The `ol_flags` bits [`rx_error_from_flags`] reads (and that
/// [`DpdkPort::encap`](super::DpdkPort) clears, so that a stale verdict does
/// not travel with the mbuf to the next hop of an in-process link).
pub const RX_ERROR_FLAGS: u64 = sys::RTE_MBUF_F_RX_IP_CKSUM_MASK as u64
    | sys::RTE_MBUF_F_RX_L4_CKSUM_MASK as u64
    | sys::RTE_MBUF_F_RX_OUTER_IP_CKSUM_BAD as u64
    | sys::RTE_MBUF_F_RX_OUTER_L4_CKSUM_MASK as u64
    | sys::RTE_MBUF_F_RX_SEC_OFFLOAD_FAILED as u64;

/// Whether receive flags say that the NIC found the frame damaged: a bad IP,
/// L4, outer IP or outer L4 checksum, or a failed inline security
/// (IPsec/MACsec) check. The two-bit checksum states are compared whole:
/// `*_CKSUM_NONE` (bad and good bits both set: "checksum not filled in, data
/// verified") and `OUTER_L4_CKSUM_INVALID` are not errors, nor is
/// `*_UNKNOWN`. See docs/backends.md, "DPDK", for why these.
#[inline(always)]
pub const fn rx_error_from_flags(f: u64) -> bool {
    // Every error state has its "bad" bit set: one test for the common case.
    const ANY_BAD: u64 = (sys::RTE_MBUF_F_RX_IP_CKSUM_BAD
        | sys::RTE_MBUF_F_RX_L4_CKSUM_BAD
        | sys::RTE_MBUF_F_RX_OUTER_L4_CKSUM_BAD
        | sys::RTE_MBUF_F_RX_OUTER_IP_CKSUM_BAD
        | sys::RTE_MBUF_F_RX_SEC_OFFLOAD_FAILED) as u64;
    if f & ANY_BAD == 0 {
        return false;
    }
    (f & sys::RTE_MBUF_F_RX_IP_CKSUM_MASK as u64) == sys::RTE_MBUF_F_RX_IP_CKSUM_BAD as u64
        || (f & sys::RTE_MBUF_F_RX_L4_CKSUM_MASK as u64) == sys::RTE_MBUF_F_RX_L4_CKSUM_BAD as u64
        || (f & sys::RTE_MBUF_F_RX_OUTER_L4_CKSUM_MASK as u64)
            == sys::RTE_MBUF_F_RX_OUTER_L4_CKSUM_BAD as u64
        || f & (sys::RTE_MBUF_F_RX_OUTER_IP_CKSUM_BAD | sys::RTE_MBUF_F_RX_SEC_OFFLOAD_FAILED)
            as u64
            != 0
}

/// A pktmbuf mempool. Pools are never freed: a `Pool` is a plain copyable
/// handle valid for the rest of the process (mbufs may be in flight in
/// drivers and rings until the process ends).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Pool(NonNull<sys::rte_mempool>);

// SAFETY: a mempool is a process-wide object whose get/put operations are
// thread-safe (the default "ring_mp_mc" ops; per-lcore caches are indexed by
// the calling thread's lcore id), and it is never freed.
unsafe impl Send for Pool {}
// SAFETY: as for Send: every operation through a shared handle is
// thread-safe.
unsafe impl Sync for Pool {}

impl Pool {
    /// Creates a pktmbuf pool of `n` mbufs (best `2^k - 1`) with a per-lcore
    /// cache of `cache` mbufs and `data_room` bytes per mbuf (headroom
    /// included: at least `RTE_PKTMBUF_HEADROOM` + the largest frame), on
    /// NUMA socket `socket` (`-1`: any). `name` must be unique in the process
    /// (at most 25 bytes).
    pub fn create(
        _eal: &Eal,
        name: &str,
        n: u32,
        cache: u32,
        data_room: u16,
        socket: i32,
    ) -> Result<Pool, DpdkError> {
        let cname = CString::new(name).map_err(|_| DpdkError::BadArgument(name.into()))?;
        // SAFETY: EAL is initialised (an &Eal exists); `cname` is a valid C
        // string for the duration of the call.
        let mp = unsafe {
            sys::rte_pktmbuf_pool_create(cname.as_ptr(), n, cache, 0, data_room, socket as c_int)
        };
        NonNull::new(mp)
            .map(Pool)
            .ok_or_else(|| errno_error("rte_pktmbuf_pool_create", name))
    }

    /// One empty mbuf (default headroom, no native source), `None` when the
    /// pool is exhausted.
    #[inline]
    pub fn alloc(&self) -> Option<Mbuf> {
        // SAFETY: the pool is a live pktmbuf pool.
        let m = NonNull::new(unsafe { sys::mw_pktmbuf_alloc(self.0.as_ptr()) })?;
        // rte_pktmbuf_alloc resets it: no native source recorded.
        // SAFETY: a freshly allocated mbuf is ours alone.
        Some(unsafe { Mbuf::from_raw(m) })
    }

    /// Appends up to `n` empty mbufs to `out` (no more than it has room
    /// for) with one bulk allocation, all or none; returns how many.
    #[inline]
    pub fn alloc_burst(&self, out: &mut Burst<Mbuf>, n: usize) -> usize {
        let n = n.min(out.remaining_capacity());
        if n == 0 {
            return 0;
        }
        let mut raw = [std::ptr::null_mut::<sys::rte_mbuf>(); BURST];
        // SAFETY: the pool is a live pktmbuf pool and `raw` has room for
        // `n <= BURST` pointers.
        let rc = unsafe { sys::mw_pktmbuf_alloc_bulk(self.0.as_ptr(), raw.as_mut_ptr(), n as u32) };
        if rc != 0 {
            return 0;
        }
        for &p in &raw[..n] {
            // SAFETY: a successful bulk allocation filled `n` valid mbufs,
            // now ours alone.
            // The bulk allocation resets each (no native source recorded).
            out.push(unsafe { Mbuf::from_raw(NonNull::new_unchecked(p)) });
        }
        n
    }

    /// An mbuf holding a copy of `bytes`, `None` when the pool is exhausted
    /// or the bytes do not fit one mbuf.
    pub fn mbuf_from(&self, bytes: &[u8]) -> Option<Mbuf> {
        let mut m = self.alloc()?;
        m.append(bytes.len())?.copy_from_slice(bytes);
        Some(m)
    }

    /// Mbufs in the pool, per-lcore caches included (`rte_mempool_avail_count`).
    pub fn avail_count(&self) -> u32 {
        // SAFETY: the pool is live.
        unsafe { sys::rte_mempool_avail_count(self.0.as_ptr()) }
    }

    /// Mbufs out of the pool (`rte_mempool_in_use_count`).
    pub fn in_use_count(&self) -> u32 {
        // SAFETY: the pool is live.
        unsafe { sys::rte_mempool_in_use_count(self.0.as_ptr()) }
    }

    /// The number of mbufs the pool was created with.
    pub fn size(&self) -> u32 {
        // SAFETY: the pool is live; `size` is set at creation and never
        // written again.
        unsafe { (*self.0.as_ptr()).size }
    }

    /// The data room of each mbuf, headroom included
    /// (`rte_pktmbuf_data_room_size`).
    pub fn data_room(&self) -> u16 {
        // SAFETY: the pool is a live pktmbuf pool (its private area holds the
        // data room size, set at creation).
        unsafe { sys::mw_pktmbuf_data_room_size(self.0.as_ptr()) }
    }

    /// The NUMA socket the pool's memory is on (`-1`: any).
    pub fn socket(&self) -> i32 {
        // SAFETY: as for `size`.
        unsafe { (*self.0.as_ptr()).socket_id }
    }

    /// The raw pool.
    pub fn as_ptr(&self) -> *mut sys::rte_mempool {
        self.0.as_ptr()
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("ptr", &self.0)
            .field("size", &self.size())
            .field("avail", &self.avail_count())
            .finish()
    }
}

/// Frees every mbuf of `bufs` with one `rte_pktmbuf_free_bulk` call and
/// leaves it empty.
#[inline]
pub fn free_burst(bufs: &mut Burst<Mbuf>) {
    let n = bufs.len();
    if n == 0 {
        return;
    }
    // SAFETY: `Mbuf` is `repr(transparent)` over a non-null `rte_mbuf`
    // pointer, so the burst is an array of `n` owned mbuf pointers; DPDK
    // frees each (any pool, any segment count), and `set_len(0)` then forgets
    // them so that none is dropped (freed) again.
    unsafe {
        sys::mw_pktmbuf_free_bulk(bufs.as_mut_ptr().cast::<*mut sys::rte_mbuf>(), n as u32);
        bufs.set_len(0);
    }
}

/// An owned mbuf: the packet buffer of the DPDK backend.
///
/// `#[repr(transparent)]` over the `rte_mbuf` pointer, so that a slice or an
/// `ArrayVec` of `Mbuf`s is the `struct rte_mbuf **` array that
/// `rte_eth_rx_burst` fills and `rte_eth_tx_burst` reads. Dropping it frees
/// the mbuf (`rte_pktmbuf_free`: back to its pool, into the calling lcore's
/// cache where there is one).
///
/// The [`PacketBuf`] view is the first segment's data (`mtod` and
/// `data_len`), read straight from the `rte_mbuf` fields (bindgen's layout
/// assertions pin their offsets; a test checks them against the C
/// accessors). A [`DpdkPort`](super::DpdkPort) hands the engine
/// single-segment mbufs only (it makes received chains contiguous, or drops
/// them), so that view is the whole packet; the one chain it makes is a
/// multicast replica ([`Port::replicate`](crate::Port::replicate): an empty
/// header mbuf, then the packet's own mbuf, shared), whose view is the
/// header alone until [`Port::encap`](crate::Port::encap) writes the
/// Ethernet header there. The growth operations of chains use the
/// `rte_pktmbuf_*` functions (through the C shim).
#[repr(transparent)]
pub struct Mbuf(NonNull<sys::rte_mbuf>);

// SAFETY: an Mbuf owns its mbuf exclusively (the contract of `from_raw`);
// mbufs are plain memory that any thread may use and free (freeing from a
// thread without an lcore id bypasses the per-lcore cache).
unsafe impl Send for Mbuf {}

impl Mbuf {
    /// Takes ownership of `m`.
    ///
    /// # Safety
    ///
    /// `m` is a valid mbuf from a pktmbuf pool that the caller owns: nothing
    /// else reads, writes or frees it (or its data) from now on, and the
    /// caller gives up its reference, which the `Mbuf` frees on drop.
    #[inline(always)]
    pub unsafe fn from_raw(m: NonNull<sys::rte_mbuf>) -> Mbuf {
        Mbuf(m)
    }

    /// Gives up ownership without freeing.
    #[inline(always)]
    pub fn into_raw(self) -> NonNull<sys::rte_mbuf> {
        let m = self.0;
        std::mem::forget(self);
        m
    }

    /// The raw mbuf (still owned by `self`).
    #[inline(always)]
    pub fn as_ptr(&self) -> *mut sys::rte_mbuf {
        self.0.as_ptr()
    }

    #[inline(always)]
    fn raw_mut(&mut self) -> &mut sys::rte_mbuf {
        // SAFETY: the mbuf is valid and owned by `self` alone (from_raw's
        // contract); `&mut self` makes the borrow exclusive.
        unsafe { self.0.as_mut() }
    }

    #[inline(always)]
    fn raw(&self) -> &sys::rte_mbuf {
        // SAFETY: the mbuf is valid and owned by `self` (from_raw's contract).
        unsafe { self.0.as_ref() }
    }

    /// The offload flags (`ol_flags`).
    #[inline(always)]
    pub fn ol_flags(&self) -> u64 {
        self.raw().ol_flags
    }

    /// Replaces the receive part of `ol_flags` ([`RX_FLAGS_MASK`]) with
    /// `flags & RX_FLAGS_MASK`, keeping the other bits (buffer kind, transmit
    /// requests). For tests and generators that mark frames as a NIC would.
    pub fn set_rx_flags(&mut self, flags: u64) {
        // SAFETY: owned by `self`; only receive-information bits change,
        // which DPDK never uses to manage the buffer.
        let m = unsafe { self.0.as_mut() };
        m.ol_flags = (m.ol_flags & !RX_FLAGS_MASK) | (flags & RX_FLAGS_MASK);
    }

    /// Free bytes before the data.
    #[inline(always)]
    pub fn headroom(&self) -> usize {
        self.raw().data_off as usize
    }

    /// Free bytes after the data of the first segment.
    #[inline(always)]
    pub fn tailroom(&self) -> usize {
        let m = self.raw();
        (m.buf_len as usize).saturating_sub(m.data_off as usize + m.data_len as usize)
    }

    /// Segments in the chain.
    #[inline(always)]
    pub fn nb_segs(&self) -> u16 {
        self.raw().nb_segs
    }

    /// Bytes of the whole chain (`pkt_len`).
    #[inline(always)]
    pub fn pkt_len(&self) -> usize {
        self.raw().pkt_len as usize
    }

    /// The reference count of this mbuf (`rte_mbuf_refcnt_read`): above 1
    /// while replicas ([`Mbuf::share_chain`]) or indirect mbufs
    /// ([`Mbuf::clone_chain`]) share it.
    #[inline]
    pub fn refcnt(&self) -> u16 {
        self.raw().refcnt
    }

    /// Whether this mbuf is indirect: its data is another mbuf's buffer
    /// (`RTE_MBUF_F_INDIRECT`).
    #[inline]
    pub fn is_indirect(&self) -> bool {
        self.raw().ol_flags & sys::RTE_MBUF_F_INDIRECT != 0
    }

    /// The next segment of the chain, if any (still owned by `self`).
    pub fn next_segment(&self) -> Option<&Mbuf> {
        let next = &self.raw().next;
        if next.is_null() {
            return None;
        }
        // SAFETY: `Mbuf` is a transparent non-null mbuf pointer and `next`
        // is a non-null pointer field of this owned mbuf, valid as long as
        // `self` (the chain's segments are freed with its head).
        Some(unsafe { &*(next as *const *mut sys::rte_mbuf).cast::<Mbuf>() })
    }

    /// Splits the first segment off the chain: the first segment alone, and
    /// the rest of the chain (if any) as a packet of its own (its `pkt_len`
    /// and segment count recomputed). For tools and benchmarks that take
    /// replicas apart.
    pub fn split_first(self) -> (Mbuf, Option<Mbuf>) {
        let me = self.as_ptr();
        // SAFETY: `self` owns the chain; the first segment is unlinked from
        // the rest (next, nb_segs, pkt_len), after which each part is an
        // mbuf chain owned by exactly one `Mbuf`. Every segment of a valid
        // chain is a valid mbuf.
        unsafe {
            let next = (*me).next;
            if next.is_null() {
                return (self, None);
            }
            (*me).next = std::ptr::null_mut();
            (*me).nb_segs = 1;
            (*me).pkt_len = u32::from((*me).data_len);
            let (mut segs, mut len, mut p) = (0u16, 0u32, next);
            while !p.is_null() {
                segs += 1;
                len += u32::from((*p).data_len);
                p = (*p).next;
            }
            (*next).nb_segs = segs;
            (*next).pkt_len = len;
            (self, Some(Mbuf::from_raw(NonNull::new_unchecked(next))))
        }
    }

    /// Every byte of the chain, copied (tests and tools; the forwarding path
    /// never reads chains).
    pub fn chain_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.pkt_len());
        let mut seg = Some(self);
        while let Some(m) = seg {
            v.extend_from_slice(m.data());
            seg = m.next_segment();
        }
        v
    }

    /// A replica of this single-segment packet without copying it (what
    /// DPDK's `ipv4_multicast` example does for at most two ports): an
    /// empty mbuf from `headers` (with the default headroom, where
    /// [`Port::encap`](crate::Port::encap) writes a header), chained to an
    /// indirect mbuf
    /// from `clones` attached to this packet's data as `rte_pktmbuf_clone`
    /// does (`rte_pktmbuf_attach`: a reference on this mbuf's buffer, given
    /// back when the replica is freed), in one call to the C shim. `None`
    /// when either pool is empty or `self` is a chain. (Ports share the
    /// packet's mbuf instead, [`Mbuf::share_chain`]: cheaper, measured.)
    ///
    /// The packet's bytes are then shared: neither this mbuf's data nor the
    /// replica's may be written (moving `self`'s start and end, and
    /// prepending into its headroom, are fine: the clone keeps its own
    /// offsets and length).
    #[inline]
    pub fn clone_chain(&self, headers: Pool, clones: Pool) -> Option<Mbuf> {
        // SAFETY: `self` is a valid pktmbuf and both pools live pktmbuf
        // pools. The call refuses a chain, allocates the header and the
        // indirect mbuf (freeing what it took on failure), attaches the
        // latter to `self`'s buffer (raising `self`'s reference count, a
        // field of the mbuf, not of any Rust object borrowed here) and
        // returns the chain, which nothing else holds.
        let h = unsafe {
            sys::mw_pktmbuf_header_clone(self.as_ptr(), headers.as_ptr(), clones.as_ptr())
        };
        // SAFETY: a non-null result is a new chain owned by the caller.
        NonNull::new(h).map(|h| unsafe { Mbuf::from_raw(h) })
    }

    /// A replica of this packet that shares this very mbuf (what DPDK's
    /// `ipv4_multicast` does for more than two ports): the empty header
    /// mbuf `h` (fresh, of a header pool) chained to `self`, whose
    /// reference count goes up by one (atomically when it is above 1, as
    /// `rte_mbuf_refcnt_update` does). `Err(h)` when `self` is a chain or
    /// does not own its buffer (indirect or external).
    ///
    /// From then on this mbuf is a segment of other chains: neither its
    /// bytes nor its fields (start, length) may change while they exist;
    /// [`DpdkPort::encap`](super::DpdkPort) puts a header in front of it
    /// instead of into its headroom when it is shared.
    #[inline]
    pub fn share_chain(&self, h: Mbuf) -> Result<Mbuf, Mbuf> {
        let m = self.raw();
        if m.nb_segs != 1 || m.ol_flags & (sys::RTE_MBUF_F_INDIRECT | sys::RTE_MBUF_F_EXTERNAL) != 0
        {
            return Err(h);
        }
        let len = m.pkt_len;
        let me = self.as_ptr();
        // SAFETY: `me` is a valid mbuf; its refcnt field is a naturally
        // aligned u16 that DPDK updates atomically when it is above 1 (other
        // holders may free their references concurrently); at 1 the caller
        // holds the only reference, so a plain store is enough (what
        // rte_mbuf_refcnt_update does).
        unsafe {
            let rc = &raw mut (*me).refcnt;
            if *rc == 1 {
                *rc = 2;
            } else {
                std::sync::atomic::AtomicU16::from_ptr(rc)
                    .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            }
        }
        let hm = h.as_ptr();
        // SAFETY: `h` is a fresh single-segment mbuf owned here; it takes
        // the reference just added as its second (last) segment, as
        // rte_pktmbuf_chain would (next, nb_segs, pkt_len), and gives it
        // back when freed.
        unsafe {
            (*hm).next = me;
            (*hm).nb_segs = 2;
            (*hm).pkt_len = u32::from((*hm).data_len) + len;
        }
        Ok(h)
    }

    /// Makes the single-segment packet `tail` (with the reference `tail`
    /// holds) the second and last segment of this single-segment mbuf, as
    /// `rte_pktmbuf_chain` does. For a header mbuf in front of a shared
    /// packet.
    pub(crate) fn chain_after(&mut self, tail: Mbuf) {
        let len = tail.pkt_len() as u32;
        let t = tail.into_raw().as_ptr();
        let m = self.raw_mut();
        debug_assert_eq!(m.nb_segs, 1);
        m.next = t;
        m.nb_segs = 2;
        m.pkt_len = u32::from(m.data_len) + len;
    }

    /// Sets the start of this empty single-segment mbuf's data `at` bytes
    /// into its buffer (e.g. so that a frame's header and first bytes share
    /// a cache line); false, with nothing changed, when the mbuf holds data
    /// or `at` is beyond its buffer.
    #[inline]
    pub fn set_data_start(&mut self, at: u16) -> bool {
        let m = self.raw_mut();
        if m.data_len != 0 || m.nb_segs != 1 || at > m.buf_len {
            return false;
        }
        m.data_off = at;
        true
    }

    /// A copy of this packet (every segment) in one mbuf of `pool`, with
    /// its receive flags; `None` when the pool is empty or the bytes do not
    /// fit one mbuf.
    pub fn copy_into(&self, pool: Pool) -> Option<Mbuf> {
        let len = self.pkt_len();
        let mut n = pool.alloc()?;
        let dst = n.append(len)?;
        let mut at = 0;
        let mut seg = Some(self);
        while let Some(m) = seg {
            let d = m.data();
            dst[at..at + d.len()].copy_from_slice(d);
            at += d.len();
            seg = m.next_segment();
        }
        n.set_rx_flags(self.ol_flags());
        Some(n)
    }
    /// The pool the mbuf returns to.
    pub fn pool(&self) -> Option<Pool> {
        NonNull::new(self.raw().pool).map(Pool)
    }

    /// Sets (or clears, with `None`) the native source MAC: written where
    /// an Ethernet header before the data would hold it (the 14 bytes of
    /// headroom before the data), and that frame start recorded (see
    /// [`set_frame_start_raw`]). Without 14 bytes of headroom the source is
    /// cleared.
    pub fn set_native_src(&mut self, mac: Option<[u8; 6]>) {
        let m = self.raw_mut();
        match mac {
            Some(mac) if m.data_off as usize >= ETH_HLEN => {
                let start = m.data_off - ETH_HLEN as u16;
                // SAFETY: `start + 6 .. start + 12` lies in the headroom of
                // the mbuf's buffer (start + 14 = data_off <= buf_len), which
                // `self` owns.
                unsafe {
                    m.buf_addr
                        .cast::<u8>()
                        .add(start as usize + 6)
                        .cast::<[u8; 6]>()
                        .write_unaligned(mac)
                };
                set_frame_start_raw(self.as_ptr(), Some(start));
            }
            _ => set_frame_start_raw(self.as_ptr(), None),
        }
    }

    /// Grows a packet shorter than `len` (at most [`PAD_MAX`]) to `len`
    /// bytes with zeros at the tail; false, with nothing changed, when the
    /// tailroom is too small. A single segment with [`PAD_MAX`] bytes of
    /// tailroom gets that many zeros (fixed-size stores, no memset call), of
    /// which only the padding is counted in the lengths.
    #[inline(always)]
    pub(crate) fn pad_to(&mut self, len: usize) -> bool {
        let have = self.len();
        if have >= len {
            return true;
        }
        if len > PAD_MAX {
            return false;
        }
        if self.raw().nb_segs == 1 && self.tailroom() >= PAD_MAX {
            let m = self.raw_mut();
            // SAFETY: the PAD_MAX bytes after the data lie in this owned
            // mbuf's buffer (tailroom checked).
            unsafe {
                m.buf_addr
                    .cast::<u8>()
                    .add(m.data_off as usize + have)
                    .cast::<[u8; PAD_MAX]>()
                    .write_unaligned([0; PAD_MAX])
            };
            m.data_len = len as u16;
            m.pkt_len = len as u32;
            return true;
        }
        match self.append(len - have) {
            Some(p) => {
                p.fill(0);
                true
            }
            None => false,
        }
    }

    /// Prepends an Ethernet header to the first segment's data: `dmac`, then
    /// `tail` (source MAC and EtherType), and clears the receive-error flags
    /// ([`RX_ERROR_FLAGS`]). Two stores and the length fields, no call: the
    /// forwarding path's encapsulation. False, with nothing changed, when
    /// the headroom is under 14 bytes.
    #[inline(always)]
    pub(crate) fn push_eth(&mut self, dmac: &[u8; 6], tail: [u8; 8]) -> bool {
        let m = self.raw_mut();
        if (m.data_off as usize) < ETH_HLEN {
            return false;
        }
        m.data_off -= ETH_HLEN as u16;
        m.data_len += ETH_HLEN as u16;
        m.pkt_len += ETH_HLEN as u32;
        m.ol_flags &= !(RX_ERROR_FLAGS & RX_FLAGS_MASK);
        // SAFETY: the 14 bytes at the new data_off were headroom of this
        // owned mbuf's buffer (checked above): 6 + 8 bytes written there;
        // `dmac` is another object (a native address), not this buffer.
        unsafe {
            let p = m.buf_addr.cast::<u8>().add(m.data_off as usize);
            p.copy_from_nonoverlapping(dmac.as_ptr(), 6);
            p.add(6).cast::<[u8; 8]>().write_unaligned(tail);
        }
        true
    }
}

/// The most bytes [`Mbuf::pad_to`] pads to (a minimum Ethernet payload).
pub(crate) const PAD_MAX: usize = 48;

/// Records where the received frame of `m` started (its Ethernet header, the
/// source MAC 6 bytes in), or that there is none. The record is the frame's
/// buffer offset + 1 in `vlan_tci_outer`, 0 meaning none: a first-cache-line
/// field that is meaningful only with `RTE_MBUF_F_RX_QINQ` (which the
/// engine never reads, and which no transmit path consults without the
/// transmit flag `RTE_MBUF_F_TX_QINQ`, never set here), and that
/// `rte_pktmbuf_reset` (every allocation) zeroes. A write to the line the
/// receive path already dirties, instead of a dynamic field in the second.
#[inline(always)]
pub(crate) fn set_frame_start_raw(m: *mut sys::rte_mbuf, start: Option<u16>) {
    // SAFETY: `m` is a valid mbuf its caller owns.
    unsafe { (*m).vlan_tci_outer = start.map_or(0, |s| s + 1) };
}

impl Drop for Mbuf {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: owned by `self` and not used after this.
        unsafe { sys::mw_pktmbuf_free(self.0.as_ptr()) }
    }
}

impl fmt::Debug for Mbuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mbuf")
            .field("ptr", &self.0)
            .field("len", &self.len())
            .field("headroom", &self.headroom())
            .field("ol_flags", &format_args!("{:#x}", self.ol_flags()))
            .field("native_src", &self.native_src())
            .finish()
    }
}

impl PacketBuf for Mbuf {
    /// Nothing: the port's receive path read each frame's Ethernet header
    /// (with the data prefetched a few packets ahead) just before.
    #[inline(always)]
    fn prefetch(&self) {}

    #[inline(always)]
    fn data(&self) -> &[u8] {
        let m = self.raw();
        // SAFETY: data_off + data_len <= buf_len for a valid mbuf, so the
        // range lies in its buffer; the buffer is ours (owned mbuf) and is
        // borrowed as long as `self`.
        unsafe {
            std::slice::from_raw_parts(
                m.buf_addr.cast::<u8>().add(m.data_off as usize),
                m.data_len as usize,
            )
        }
    }

    #[inline(always)]
    fn data_mut(&mut self) -> &mut [u8] {
        let m = self.raw();
        let (p, n) = (
            // SAFETY: as in `data`.
            unsafe { m.buf_addr.cast::<u8>().add(m.data_off as usize) },
            m.data_len as usize,
        );
        // SAFETY: as in `data`, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(p, n) }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.raw().data_len as usize
    }

    // The growth operations below are `rte_pktmbuf_adj/prepend/trim/append`
    // written out on the first segment's fields, so that the forwarding path
    // makes no call per packet for them (measured: four calls were about 8 %
    // of a forwarding core, docs/performance.md). A chained mbuf, which a
    // DpdkPort never hands out, takes DPDK's own functions.

    #[inline]
    fn adj(&mut self, n: usize) {
        let m = self.raw_mut();
        let n = n.min(m.data_len as usize) as u16;
        if n == 0 {
            return;
        }
        if m.nb_segs == 1 {
            m.data_off += n;
            m.data_len -= n;
            m.pkt_len -= u32::from(n);
        } else {
            // SAFETY: owned mbuf; n <= data_len <= u16::MAX, so the call
            // cannot fail.
            unsafe { sys::mw_pktmbuf_adj(self.as_ptr(), n) };
        }
    }

    #[inline]
    fn prepend(&mut self, n: usize) -> Option<&mut [u8]> {
        let n16 = u16::try_from(n).ok()?;
        let m = self.raw_mut();
        if n16 > m.data_off {
            return None;
        }
        m.data_off -= n16;
        m.data_len += n16;
        m.pkt_len += u32::from(n16);
        // SAFETY: the new data start lies `data_off` bytes into the mbuf's
        // buffer, followed by the `n` bytes just added, borrowed mutably
        // through `self`.
        Some(unsafe {
            std::slice::from_raw_parts_mut(m.buf_addr.cast::<u8>().add(m.data_off as usize), n)
        })
    }

    #[inline]
    fn trim(&mut self, len: usize) {
        let m = self.raw_mut();
        let cur = m.data_len as usize;
        if len >= cur {
            return;
        }
        if m.nb_segs == 1 {
            m.data_len = len as u16;
            m.pkt_len = len as u32;
        } else {
            // SAFETY: owned mbuf; cur - len <= data_len, so the call cannot
            // fail.
            unsafe { sys::mw_pktmbuf_trim(self.as_ptr(), (cur - len) as u16) };
        }
    }

    #[inline]
    fn append(&mut self, n: usize) -> Option<&mut [u8]> {
        let n16 = u16::try_from(n).ok()?;
        let m = self.raw_mut();
        if m.nb_segs != 1 {
            // SAFETY: owned mbuf; the call checks the tailroom and returns
            // null when it is too small.
            let p = unsafe { sys::mw_pktmbuf_append(self.as_ptr(), n16) };
            let p = NonNull::new(p.cast::<u8>())?;
            // SAFETY: `p` is the start of the `n` bytes just added to this
            // mbuf's data, borrowed mutably through `self`.
            return Some(unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), n) });
        }
        let end = m.data_off as usize + m.data_len as usize;
        if end + n > m.buf_len as usize {
            return None;
        }
        m.data_len += n16;
        m.pkt_len += u32::from(n16);
        // SAFETY: `end..end + n` lies inside the mbuf's buffer (checked
        // against buf_len), the bytes just added, borrowed mutably through
        // `self`.
        Some(unsafe { std::slice::from_raw_parts_mut(m.buf_addr.cast::<u8>().add(end), n) })
    }

    #[inline(always)]
    fn rx_error(&self) -> bool {
        rx_error_from_flags(self.ol_flags())
    }

    /// The source MAC of the frame this packet arrived in, read from the
    /// frame's Ethernet header in the headroom (recorded on receive; see
    /// [`set_frame_start_raw`]): valid until something is prepended, which
    /// the engine does only after its last use (the encapsulation).
    #[inline]
    fn native_src(&self) -> NativeAddr {
        let m = self.raw();
        let Some(start) = (m.vlan_tci_outer as usize).checked_sub(1) else {
            return NativeAddr::NONE;
        };
        if start + ETH_HLEN > m.buf_len as usize {
            return NativeAddr::NONE;
        }
        // SAFETY: `start + 6 .. start + 12` lies inside the mbuf's buffer
        // (checked against buf_len), which `self` owns.
        let mac = unsafe {
            m.buf_addr
                .cast::<u8>()
                .add(start + 6)
                .cast::<[u8; 6]>()
                .read_unaligned()
        };
        NativeAddr::mac(mac)
    }
}
