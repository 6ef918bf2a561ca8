//! An ethdev's queues as a MessageWay port ([`DpdkPort`]): Ethernet II
//! decapsulation and encapsulation (EtherType 0x88B5), multicast replicas.

use std::cell::RefCell;
use std::ops::Range;
use std::ptr;

use dpdk_sys as sys;
use rrp::{LinkKind, LinkStats, NativeAddr};

use super::eal::DpdkError;
use super::ethdev::{BROADCAST, ETH_HLEN, ETHERTYPE_MW, ETHERTYPE_VLAN, Ethdev, MIN_FRAME};
use super::mbuf::{Mbuf, Pool, set_frame_start_raw};
use super::queue::{rx_into, tx_from};
use super::replication::{ChainPools, Replication};
use super::stats::{EthdevStats, bump};
use crate::{BURST, Burst, LinkHeader, PacketBuf, Port};
use arrayvec::ArrayVec;

impl Ethdev {
    /// Queue pair `queue` (receive and transmit queue `queue`) as a
    /// MessageWay port.
    pub fn port(&self, queue: u16) -> Result<DpdkPort, DpdkError> {
        self.port_with(queue..queue + 1, queue)
    }

    /// A MessageWay port of transmit queue `tx` and the receive queues `rx`
    /// (polled in turn; empty: this port receives nothing). A worker
    /// transmits on every port but receives from its own queue of a port
    /// that flow rules spread, and from every queue of a port it owns
    /// otherwise (docs/backends.md "More than one worker").
    pub fn port_with(&self, rx: Range<u16>, tx: u16) -> Result<DpdkPort, DpdkError> {
        self.take(rx.clone(), tx)?;
        Ok(DpdkPort {
            port_id: self.0.port_id,
            rx_first: rx.start,
            rx_count: rx.end.saturating_sub(rx.start),
            rx_next: 0,
            queue: tx,
            mac: self.0.mac,
            own: mac_word(self.0.mac),
            eth_tail: eth_tail(self.0.mac),
            pool: self.0.pool,
            chain: self.0.chain,
            chain_min: self.0.chain_min,
            spare: Spares::default(),
            dev: self.clone(),
        })
    }

    /// Every queue pair as a MessageWay port, in queue order.
    pub fn ports(&self) -> Result<Vec<DpdkPort>, DpdkError> {
        (0..self.0.rx_queues.min(self.0.tx_queues))
            .map(|q| self.port(q))
            .collect()
    }
}

/// One queue pair of an ethdev as a MessageWay port on an Ethernet SAN:
/// Ethernet II frames of EtherType 0x88B5, at most one 802.1Q tag on
/// receive, none on transmit. Owned by one worker thread (which should have
/// called [`register_thread`](super::register_thread)).
#[derive(Debug)]
pub struct DpdkPort {
    port_id: u16,
    /// The first receive queue this port polls.
    rx_first: u16,
    /// How many (0: another worker receives from this port).
    rx_count: u16,
    /// The queue (from `rx_first`) polled first next time: a full burst
    /// from one queue must not starve the others.
    rx_next: u16,
    /// The transmit queue (this worker's), which also indexes the counters.
    queue: u16,
    mac: [u8; 6],
    /// `mac` as [`decap`] compares it.
    own: u64,
    /// What follows the destination MAC in every header this port writes:
    /// its MAC and EtherType 0x88B5.
    eth_tail: [u8; 8],
    pool: Pool,
    /// Where chained replicas come from (`None`: this port copies).
    chain: Option<ChainPools>,
    /// Packets shorter than this are copied ([`StartOptions::chain_min_len`]).
    chain_min: usize,
    /// Empty mbufs for replicas, allocated a burst at a time: of the
    /// port's pool (copies), and of the header pool (chains).
    spare: Spares,
    dev: Ethdev,
}

impl Drop for DpdkPort {
    fn drop(&mut self) {
        self.dev.release(
            self.rx_first..self.rx_first + self.rx_count,
            Some(self.queue),
        );
    }
}

/// Empty mbufs a port keeps for its replicas, taken from their pools a
/// burst at a time (`rte_pktmbuf_alloc_bulk`: one pool access and one FFI
/// call per 32 instead of per mbuf), freed with the port: of the port's
/// pool for copies, of the header pool for chains (used by `encap`, which
/// takes `&self`, too: a `RefCell`, the port being one thread's).
#[derive(Debug, Default)]
struct Spares {
    copies: Burst<Mbuf>,
    headers: RefCell<Burst<Mbuf>>,
}

/// One empty mbuf of `pool`, from `spare` (refilled with a burst when
/// empty; one at a time when the pool has less than a burst left).
#[inline(always)]
fn take(spare: &mut Burst<Mbuf>, pool: Pool) -> Option<Mbuf> {
    if let Some(m) = spare.pop() {
        return Some(m);
    }
    refill(spare, pool)
}

#[cold]
#[inline(never)]
fn refill(spare: &mut Burst<Mbuf>, pool: Pool) -> Option<Mbuf> {
    if pool.alloc_burst(spare, BURST) == 0 {
        return pool.alloc();
    }
    spare.pop()
}

/// Where a copied replica's data starts in its buffer: 64 + 14 bytes in,
/// so that the Ethernet header (64..78) and the first 50 bytes of the
/// packet share one cache line, a whole 64-byte frame one line (mbuf
/// buffers are cache-line aligned), instead of the header's 14 bytes in the
/// line before the default headroom's. Leaves 78 bytes of headroom, more
/// than the header needs.
const COPY_DATA_START: u16 = 64 + ETH_HLEN as u16;

/// Why [`decap`] (or [`private_copy`]) refused a frame.
enum Refused {
    NotMw,
    Runt,
    Multiseg,
    NotForUs,
}

/// Whether the engine may not take `m` as it is: a chain, or a buffer that
/// others share (a reference count above 1, or an indirect mbuf), into
/// which the engine's EI update would write. Never true of what a NIC
/// delivers; true of multicast replicas passed by pointer (in-process
/// rings) or of chains from memif.
#[inline(always)]
fn shared_or_chained(m: &sys::rte_mbuf) -> bool {
    m.nb_segs != 1 || m.refcnt != 1 || m.ol_flags & sys::RTE_MBUF_F_INDIRECT != 0
}

/// What [`private_copy`] did.
enum Private {
    Linearized,
    Unshared,
}

/// Makes a received chain or shared mbuf one private segment: a chain whose
/// first segment is its own (direct, one reference) and has the tailroom is
/// linearized in place (`rte_pktmbuf_linearize`: the later segments are
/// copied after the first and freed); anything else is copied into a new
/// mbuf of `pool` with its receive flags, and freed. On failure `m` is
/// freed and the frame refused (counted as multi-segment).
#[cold]
#[inline(never)]
fn private_copy(
    m: *mut sys::rte_mbuf,
    pool: Pool,
) -> Result<(*mut sys::rte_mbuf, Private), Refused> {
    // SAFETY: `m` is a valid mbuf (chain) just received, owned by the
    // caller, which gives it to this function.
    let own = unsafe { Mbuf::from_raw(ptr::NonNull::new_unchecked(m)) };
    let chain = own.nb_segs() != 1;
    let how = if chain {
        Private::Linearized
    } else {
        Private::Unshared
    };
    if chain && own.refcnt() == 1 && own.ol_flags() & NOT_OWN_BUFFER == 0 {
        // SAFETY: a chain whose first segment's buffer is this mbuf's alone:
        // the copy goes into that buffer's tailroom (checked by the call,
        // which changes nothing when it is too small).
        if unsafe { sys::mw_pktmbuf_linearize(own.as_ptr()) } == 0 {
            return Ok((own.into_raw().as_ptr(), how));
        }
    }
    match own.copy_into(pool) {
        // `own` is dropped: the chain (or the reference) is freed.
        Some(n) => Ok((n.into_raw().as_ptr(), how)),
        None => Err(Refused::Multiseg),
    }
}

/// `ol_flags` of an mbuf whose data buffer is not its own.
const NOT_OWN_BUFFER: u64 = sys::RTE_MBUF_F_INDIRECT | sys::RTE_MBUF_F_EXTERNAL;

/// Strips the Ethernet header (and one 802.1Q tag) of a received frame and
/// records where the frame started (the source MAC stays there, in the
/// headroom: [`Mbuf::native_src`](ports::PacketBuf::native_src)), or says
/// why the frame is refused. `own` is the port's MAC as the low 48 bits of a
/// little-endian u64 (the first 8 bytes of a frame, masked).
#[inline(always)]
fn decap(m: *mut sys::rte_mbuf, own: u64) -> Result<(), Refused> {
    // SAFETY: `m` is a valid mbuf just received and owned by the caller;
    // nothing else borrows it while `mb` lives.
    let mb = unsafe { &mut *m };
    debug_assert_eq!(mb.nb_segs, 1, "chains are made contiguous first");
    let len = mb.data_len as usize;
    if len < ETH_HLEN {
        return Err(Refused::Runt);
    }
    let start = mb.data_off;
    // SAFETY: a single-segment mbuf's data is data_len >= 14 bytes at
    // buf_addr + data_off: the 8-byte read at 0 and the 2-byte one at 12
    // stay inside it.
    let (head, et) = unsafe {
        let p = mb.buf_addr.cast::<u8>().add(start as usize);
        (
            u64::from_le_bytes(p.cast::<[u8; 8]>().read_unaligned()),
            u16::from_be_bytes(p.add(12).cast::<[u8; 2]>().read_unaligned()),
        )
    };
    // The group bit is the low bit of the first byte.
    let dst = head & 0xFFFF_FFFF_FFFF;
    if dst & 1 == 0 && dst != own {
        return Err(Refused::NotForUs);
    }
    let mut hl = ETH_HLEN as u16;
    let mut et = et;
    if et == ETHERTYPE_VLAN {
        if len < ETH_HLEN + 4 {
            return Err(Refused::Runt);
        }
        hl += 4;
        // SAFETY: data_len >= 18, so bytes 16..18 are inside the data.
        et = u16::from_be_bytes(unsafe {
            mb.buf_addr
                .cast::<u8>()
                .add(start as usize + 16)
                .cast::<[u8; 2]>()
                .read_unaligned()
        });
    }
    if et != ETHERTYPE_MW {
        return Err(Refused::NotMw);
    }
    // rte_pktmbuf_adj on the single segment, without a call per packet
    // (hl <= data_len).
    mb.data_off += hl;
    mb.data_len -= hl;
    mb.pkt_len -= u32::from(hl);
    set_frame_start_raw(m, Some(start));
    Ok(())
}

/// The source MAC and EtherType 0x88B5 of the headers a port with `mac`
/// writes.
fn eth_tail(mac: [u8; 6]) -> [u8; 8] {
    let mut t = [0u8; 8];
    t[..6].copy_from_slice(&mac);
    t[6..].copy_from_slice(&ETHERTYPE_MW.to_be_bytes());
    t
}

/// A MAC as the low 48 bits of a little-endian u64 (see [`decap`]).
fn mac_word(mac: [u8; 6]) -> u64 {
    let mut w = [0u8; 8];
    w[..6].copy_from_slice(&mac);
    u64::from_le_bytes(w)
}

impl DpdkPort {
    /// The ethdev port id.
    pub fn port_id(&self) -> u16 {
        self.port_id
    }

    /// The transmit queue.
    pub fn queue(&self) -> u16 {
        self.queue
    }

    /// The receive queues it polls (empty: another worker receives from
    /// this port).
    pub fn rx_queues(&self) -> Range<u16> {
        self.rx_first..self.rx_first + self.rx_count
    }

    /// The ethdev this queue belongs to (for statistics).
    pub fn ethdev(&self) -> &Ethdev {
        &self.dev
    }

    /// The pool this port allocates from.
    pub fn pool(&self) -> Pool {
        self.pool
    }

    /// The port's statistics now.
    pub fn stats(&self) -> Result<EthdevStats, DpdkError> {
        self.dev.stats()
    }

    /// Whether this port reports the device's counters in
    /// [`Port::link_stats`]: the port of transmit queue 0 (every worker
    /// transmits on a queue of its own, worker 0 on queue 0).
    pub fn link_reporter(&self) -> bool {
        self.queue == 0
    }

    /// How this port makes multicast replicas.
    pub fn replication(&self) -> Replication {
        self.dev.0.replication
    }

    /// Packets shorter than this are replicated by copy even when the port
    /// chains ([`StartOptions::chain_min_len`], at least [`CHAIN_MIN_LEN`]).
    ///
    /// [`StartOptions::chain_min_len`]: super::StartOptions::chain_min_len
    /// [`CHAIN_MIN_LEN`]: super::CHAIN_MIN_LEN
    pub fn chain_min_len(&self) -> usize {
        self.chain_min
    }

    /// The header pool of a chaining port (statistics, tests).
    pub fn header_pool(&self) -> Option<Pool> {
        self.chain.map(|c| c.headers)
    }

    /// Gives the spare mbufs this port keeps for replicas (at most 32 per
    /// pool, taken a burst at a time) back to their pools: for accounts of
    /// the pools (tests); the port takes new ones when it needs them.
    pub fn release_spares(&mut self) {
        super::mbuf::free_burst(&mut self.spare.copies);
        super::mbuf::free_burst(&mut self.spare.headers.borrow_mut());
    }

    /// `encap` of a packet whose mbuf replicas share
    /// ([`Mbuf::share_chain`]): its fields may not change, so on a chaining
    /// port the Ethernet header goes into a header mbuf put in front of it
    /// (which takes over the caller's reference), and on a copying port the
    /// packet is copied first.
    #[inline(never)]
    fn encap_shared(&self, buf: &mut Mbuf, dmac: &[u8; 6]) -> bool {
        match self.chain {
            Some(c) => {
                let h = take(&mut self.spare.headers.borrow_mut(), c.headers);
                let Some(h) = h else {
                    return false;
                };
                let orig = std::mem::replace(buf, h);
                buf.chain_after(orig);
                buf.push_eth(dmac, self.eth_tail)
            }
            None => {
                let Some(copy) = buf.copy_into(self.pool) else {
                    return false;
                };
                // The caller's reference to the shared packet is dropped.
                *buf = copy;
                let short = buf.pkt_len() + ETH_HLEN < MIN_FRAME;
                if short && !buf.pad_to(MIN_FRAME - ETH_HLEN) {
                    return false;
                }
                buf.push_eth(dmac, self.eth_tail)
            }
        }
    }

    /// A replica of `buf` as a copy in one mbuf of this port's pool (the
    /// packet's bytes only: `encap` clears the receive flags anyway), its
    /// frame aligned on a cache line ([`COPY_DATA_START`]).
    #[inline]
    fn replicate_copy(&mut self, buf: &Mbuf) -> Option<Mbuf> {
        let r = if buf.nb_segs() == 1 {
            let mut r = take(&mut self.spare.copies, self.pool)?;
            r.set_data_start(COPY_DATA_START);
            r.append(buf.len())?.copy_from_slice(buf.data());
            r
        } else {
            buf.copy_into(self.pool)?
        };
        let q = &self.dev.0.counters[self.queue as usize];
        bump(&q.replicas_copied, 1);
        Some(r)
    }
}

impl DpdkPort {
    /// One `rte_eth_rx_burst` of receive queue `queue` into the free slots
    /// of `out`, each frame checked and decapsulated ([`Port::rx_burst`]).
    #[inline(always)]
    fn rx_queue(&mut self, queue: u16, out: &mut Burst<Mbuf>) {
        let (mut not_mw, mut runt, mut multiseg, mut not_for_us) = (0, 0, 0, 0);
        let (mut linearized, mut unshared) = (0, 0);
        let own = self.own;
        let pool = self.pool;
        rx_into(self.port_id, queue, out, |m| {
            // SAFETY: `m` is a valid mbuf just received; only read here.
            let m = if shared_or_chained(unsafe { &*m }) {
                match private_copy(m, pool) {
                    Ok((p, Private::Linearized)) => {
                        linearized += 1;
                        p
                    }
                    Ok((p, Private::Unshared)) => {
                        unshared += 1;
                        p
                    }
                    Err(_) => {
                        multiseg += 1;
                        return None;
                    }
                }
            } else {
                m
            };
            match decap(m, own) {
                Ok(()) => Some(m),
                Err(r) => {
                    match r {
                        Refused::NotMw => not_mw += 1,
                        Refused::Runt => runt += 1,
                        Refused::Multiseg => multiseg += 1,
                        Refused::NotForUs => not_for_us += 1,
                    }
                    // SAFETY: the driver (or private_copy) handed us this
                    // mbuf; nobody else has it.
                    unsafe { sys::mw_pktmbuf_free(m) };
                    None
                }
            }
        });
        if not_mw + runt + multiseg + not_for_us + linearized + unshared != 0 {
            let c = &self.dev.0.counters[self.queue as usize];
            bump(&c.not_mw, not_mw);
            bump(&c.runt, runt);
            bump(&c.multiseg, multiseg);
            bump(&c.not_for_us, not_for_us);
            bump(&c.linearized, linearized);
            bump(&c.unshared, unshared);
        }
    }
}

impl Port for DpdkPort {
    type Buf = Mbuf;

    /// One `rte_eth_rx_burst` into the free slots of `out` (per receive
    /// queue the port polls, until `out` is full); then each frame is
    /// checked and its Ethernet header stripped (see [`EthdevStats`] for the
    /// frames refused, which are freed and counted here).
    #[inline]
    fn rx_burst(&mut self, out: &mut Burst<Mbuf>) {
        match self.rx_count {
            0 => {}
            1 => self.rx_queue(self.rx_first, out),
            n => {
                // Every queue in turn, from a different one each time,
                // until the burst is full.
                let first = self.rx_next;
                self.rx_next = (first + 1) % n;
                for i in 0..n {
                    if out.len() == BURST {
                        break;
                    }
                    self.rx_queue(self.rx_first + (first + i) % n, out);
                }
            }
        }
    }

    #[inline]
    fn tx_burst(&mut self, pkts: &mut Burst<Mbuf>) -> usize {
        tx_from(self.port_id, self.queue, pkts)
    }

    /// Prepends destination MAC (`dst`: 6 bytes; empty: broadcast), own MAC
    /// and EtherType 0x88B5; pads frames shorter than 60 bytes with zeros.
    /// Clears the receive-error flags ([`RX_ERROR_FLAGS`](super::RX_ERROR_FLAGS)).
    #[inline(always)]
    fn encap(&self, buf: &mut Mbuf, dst: &NativeAddr) -> bool {
        let dmac = match dst.mac_ref() {
            Some(m) => m,
            None if dst.is_empty() => &BROADCAST,
            None => return false,
        };
        self.encap_mac(buf, dmac)
    }

    /// Destination MAC (`dst`: 6 bytes; empty: broadcast), own MAC and
    /// EtherType 0x88B5: what [`Port::encap`] prepends, frames padded to 60
    /// bytes.
    fn link_header(&self, dst: &NativeAddr) -> Option<LinkHeader> {
        let dmac = match dst.mac_ref() {
            Some(m) => m,
            None if dst.is_empty() => &BROADCAST,
            None => return None,
        };
        let mut bytes = ArrayVec::new();
        bytes.try_extend_from_slice(dmac).ok()?;
        bytes.try_extend_from_slice(&self.eth_tail).ok()?;
        Some(LinkHeader {
            bytes,
            min_frame: MIN_FRAME,
        })
    }

    /// [`Port::encap`] to the MAC `dmac`.
    #[inline(always)]
    fn encap_mac(&self, buf: &mut Mbuf, dmac: &[u8; 6]) -> bool {
        // Shared by replicas (never by what a NIC delivers): a header in
        // front, or a copy.
        if buf.refcnt() != 1 && buf.nb_segs() == 1 {
            return self.encap_shared(buf, dmac);
        }
        // The whole packet's length: a replica's first segment is an empty
        // header mbuf (the packet is in the next one).
        let short = buf.pkt_len() + ETH_HLEN < MIN_FRAME;
        if short && (buf.headroom() < ETH_HLEN || !buf.pad_to(MIN_FRAME - ETH_HLEN)) {
            return false;
        }
        buf.push_eth(dmac, self.eth_tail)
    }

    /// A replica of `buf` for this port: on a chaining port
    /// ([`Replication`]) a header mbuf chained to `buf`'s own mbuf, whose
    /// reference count goes up (no payload copy; [`Mbuf::share_chain`],
    /// what DPDK's `ipv4_multicast` does for more than two ports), else,
    /// and for packets shorter than [`StartOptions::chain_min_len`] or when
    /// the header pool is empty, a copy in one mbuf of this port's pool.
    /// Counted in [`EthdevStats::replicas_chained`] /
    /// [`EthdevStats::replicas_copied`]. Once shared, `buf` may only be
    /// encapsulated (which then puts its header in front of it, see
    /// [`Port::encap`]) or dropped.
    ///
    /// [`StartOptions::chain_min_len`]: super::StartOptions::chain_min_len
    #[inline]
    fn replicate(&mut self, buf: &Mbuf) -> Option<Mbuf> {
        if let Some(c) = self.chain
            && buf.pkt_len() >= self.chain_min
        {
            let headers = self.spare.headers.get_mut();
            if let Some(h) = take(headers, c.headers) {
                match buf.share_chain(h) {
                    Ok(r) => {
                        let q = &self.dev.0.counters[self.queue as usize];
                        bump(&q.replicas_chained, 1);
                        return Some(r);
                    }
                    Err(h) => headers.push(h),
                }
            }
        }
        self.replicate_copy(buf)
    }

    #[inline]
    fn alloc(&mut self) -> Option<Mbuf> {
        self.pool.alloc()
    }

    #[inline]
    fn alloc_burst(&mut self, out: &mut Burst<Mbuf>, n: usize) -> usize {
        self.pool.alloc_burst(out, n)
    }

    #[inline]
    fn recycle_burst(&mut self, bufs: &mut Burst<Mbuf>) {
        super::mbuf::free_burst(bufs);
    }

    fn native_addr(&self) -> NativeAddr {
        NativeAddr::mac(self.mac)
    }

    fn link_kind(&self) -> LinkKind {
        LinkKind::Ethernet
    }

    /// The device's counters (`rte_eth_stats_get`: no system call, but
    /// driver work, a register read per counter on some NICs) on the port
    /// of transmit queue 0 and zeros on the others (one per worker), so
    /// that the workers' sum counts the device once: `ibytes`, `obytes`,
    /// `imissed`, `rx_nombuf`, `ierrors`, `oerrors`
    /// ([`DpdkPort::link_reporter`]). Zeros when the driver fails the read.
    fn link_stats(&mut self) -> LinkStats {
        if !self.link_reporter() {
            return LinkStats::default();
        }
        self.dev
            .stats()
            .map_or_else(|_| LinkStats::default(), |s| s.link())
    }
}
