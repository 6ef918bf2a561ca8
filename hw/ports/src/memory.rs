//! In-memory ports, for tests and benchmarks.
//!
//! [`mem_link`] makes the two ends of a point-to-point wire: two lock-free
//! bounded rings, one per direction, so that the ends may live on different
//! threads (a router worker and a test or generator thread). A full ring
//! refuses transmission (the caller counts tx-full). [`LoopbackPort`] is a
//! single-thread port whose transmit feeds its own receive, for benchmarks
//! that recycle buffers (rx burst -> engine -> tx burst -> back to rx).
//!
//! NativeAddr addresses on an in-memory SAN are 6 bytes, like MACs; there is no
//! encapsulation.
//!
//! Either direction of a wire may be impaired ([`MemPort::with_impairment`]):
//! the packets towards that end then go through a seeded [`Impairer`]
//! (loss, duplication, reordering, delay, corruption; see [`crate::impair`]).
//!
//! The link's counters of a [`MemPort`] ([`Port::link_stats`]) are the bytes
//! of the packets it took off its wire and put on it. Nothing is dropped
//! between a wire and the end that reads it (a full ring refuses the
//! sender), and the impairer's losses are the wire's, which no counter of
//! a real receiving end sees either: they stay in [`Impairer::stats`].

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

use crossbeam_queue::ArrayQueue;

use crate::clock::Clock;
use crate::heap::{BufPool, DEFAULT_BUF_SIZE, DEFAULT_HEADROOM, HeapBuf};
use crate::impair::{ImpairConfig, Impairer};
use crate::{BURST, Burst, PacketBuf, Port};
use rrp::NativeAddr;
use rrp::{LinkKind, LinkStats};

/// One direction of an in-memory wire.
pub type Wire = Arc<ArrayQueue<HeapBuf>>;

/// The impairment of one direction of a wire, installed at most once by
/// the receiving end and seen by the sending end.
type Hook = Arc<OnceLock<Arc<Impairer>>>;

/// One end of an in-memory point-to-point wire.
#[derive(Debug)]
pub struct MemPort {
    rx: Wire,
    tx: Wire,
    rx_hook: Hook,
    tx_hook: Hook,
    addr: NativeAddr,
    peer: NativeAddr,
    pool: BufPool,
    /// Bytes taken off the wire and put on it by this end.
    link: LinkStats,
}

/// The two ends of a wire with `capacity` packets in flight per direction;
/// end A has native address `a`, end B `b`. Packets from A arrive at B with
/// native source `a`, and the other way round.
pub fn mem_link(capacity: usize, a: NativeAddr, b: NativeAddr) -> (MemPort, MemPort) {
    let ab: Wire = Arc::new(ArrayQueue::new(capacity));
    let ba: Wire = Arc::new(ArrayQueue::new(capacity));
    let ab_hook: Hook = Arc::default();
    let ba_hook: Hook = Arc::default();
    let pool = || {
        BufPool::new(
            DEFAULT_BUF_SIZE,
            DEFAULT_HEADROOM,
            capacity.max(BURST) * 2,
            0,
        )
    };
    (
        MemPort {
            rx: ba.clone(),
            tx: ab.clone(),
            rx_hook: ba_hook.clone(),
            tx_hook: ab_hook.clone(),
            addr: a,
            peer: b,
            pool: pool(),
            link: LinkStats::default(),
        },
        MemPort {
            rx: ab,
            tx: ba,
            rx_hook: ab_hook,
            tx_hook: ba_hook,
            addr: b,
            peer: a,
            pool: pool(),
            link: LinkStats::default(),
        },
    )
}

impl MemPort {
    /// The native address of the other end.
    pub fn peer_addr(&self) -> NativeAddr {
        self.peer
    }

    /// Impairs the packets that arrive at this end (the direction from the
    /// peer to this port) as `cfg` says, timing delays on `clock`. The
    /// sender hands packets to the impairer when it transmits, this end
    /// receives what the impairer releases; the wire's capacity bounds the
    /// packets the impairer holds. Panics if this direction is impaired
    /// already.
    pub fn with_impairment(self, cfg: ImpairConfig, clock: impl Clock + 'static) -> MemPort {
        let imp = Arc::new(Impairer::new(cfg, Arc::new(clock), self.rx.capacity()));
        assert!(
            self.rx_hook.set(imp).is_ok(),
            "this direction of the wire is impaired already"
        );
        self
    }

    /// The impairer of the packets arriving at this end, if any: its counts
    /// ([`Impairer::stats`]) stay readable from any thread after the port
    /// moved to a worker.
    pub fn impairment(&self) -> Option<Arc<Impairer>> {
        self.rx_hook.get().cloned()
    }

    /// A buffer from the pool, or a new one when the pool is empty: buffers
    /// sent to the other end never come back to this end's pool.
    fn buf(&mut self) -> HeapBuf {
        self.pool
            .get()
            .unwrap_or_else(|| HeapBuf::new(DEFAULT_BUF_SIZE, DEFAULT_HEADROOM))
    }

    #[inline]
    fn push(&mut self, b: HeapBuf) -> Result<(), HeapBuf> {
        let len = b.len() as u64;
        match self.tx_hook.get() {
            Some(imp) => imp.push(b),
            None => self.tx.push(b),
        }?;
        self.link.tx_bytes += len;
        Ok(())
    }

    #[inline]
    fn pop(&mut self) -> Option<HeapBuf> {
        let b = self
            .rx
            .pop()
            .or_else(|| self.rx_hook.get().and_then(|imp| imp.pop()))?;
        self.link.rx_bytes += b.len() as u64;
        Some(b)
    }

    /// Sends a copy of `bytes` to the other end; false when the ring is full.
    pub fn send_bytes(&mut self, bytes: &[u8]) -> bool {
        let mut b = self.buf();
        if !b.set_data(bytes, DEFAULT_HEADROOM) {
            return false;
        }
        b.set_native_src(self.addr);
        match self.push(b) {
            Ok(()) => true,
            Err(b) => {
                self.pool.put(b);
                false
            }
        }
    }

    /// Sends a prepared buffer; gives it back when the ring is full.
    pub fn send(&mut self, mut b: HeapBuf) -> Result<(), HeapBuf> {
        b.set_native_src(self.addr);
        self.push(b)
    }

    /// Receives one packet, if any.
    pub fn recv(&mut self) -> Option<HeapBuf> {
        self.pop()
    }

    /// Receives one packet's bytes, if any (the buffer goes back to the pool).
    pub fn recv_bytes(&mut self) -> Option<Vec<u8>> {
        let b = self.pop()?;
        let v = b.data().to_vec();
        self.pool.put(b);
        Some(v)
    }

    /// Packets waiting to be received (on an impaired direction: those due now).
    pub fn pending(&self) -> usize {
        self.rx.len() + self.rx_hook.get().map_or(0, |imp| imp.ready())
    }
}

impl Port for MemPort {
    type Buf = HeapBuf;

    #[inline]
    fn rx_burst(&mut self, out: &mut Burst<HeapBuf>) {
        let first = out.len();
        while !out.is_full() {
            match self.rx.pop() {
                Some(b) => out.push(b),
                None => break,
            }
        }
        if let Some(imp) = self.rx_hook.get() {
            imp.pop_burst(out);
        }
        let bytes: usize = out[first..].iter().map(|b| b.len()).sum();
        self.link.rx_bytes += bytes as u64;
    }

    #[inline]
    fn tx_burst(&mut self, pkts: &mut Burst<HeapBuf>) -> usize {
        let mut bytes = 0;
        for b in pkts.iter_mut() {
            b.set_native_src(self.addr);
            bytes += b.len();
        }
        if let Some(imp) = self.tx_hook.get() {
            // The refused ones stay in the burst.
            let sent = imp.push_burst(pkts);
            let left: usize = pkts.iter().map(|b| b.len()).sum();
            self.link.tx_bytes += (bytes - left) as u64;
            return sent;
        }
        // Push one at a time: the ring may fill up in the middle of the
        // burst (checking for room without pushing would count packets as
        // sent that the ring then refuses).
        let all = core::mem::take(pkts);
        let mut sent = 0;
        for b in all {
            if !pkts.is_empty() {
                pkts.push(b);
                continue;
            }
            let len = b.len();
            match self.tx.push(b) {
                Ok(()) => {
                    sent += 1;
                    self.link.tx_bytes += len as u64;
                }
                Err(b) => pkts.push(b),
            }
        }
        sent
    }

    #[inline]
    fn encap(&self, buf: &mut HeapBuf, dst: &NativeAddr) -> bool {
        // A wire has one other member: "every member" is the peer.
        let dst = if dst.is_empty() { self.peer } else { *dst };
        if dst.len() != 6 {
            return false;
        }
        buf.set_native_dst(dst);
        true
    }

    fn alloc(&mut self) -> Option<HeapBuf> {
        Some(self.buf())
    }

    #[inline]
    fn recycle(&mut self, buf: HeapBuf) {
        self.pool.put(buf)
    }

    fn native_addr(&self) -> NativeAddr {
        self.addr
    }

    fn link_kind(&self) -> LinkKind {
        LinkKind::Memory
    }

    /// The bytes of the packets this end took off its wire and put on it
    /// (through [`Port`] and [`MemPort::send`], [`MemPort::recv`] and
    /// their byte forms alike); nothing else.
    fn link_stats(&mut self) -> LinkStats {
        self.link
    }
}

/// A single-thread in-memory port whose transmit feeds its own receive.
#[derive(Debug)]
pub struct LoopbackPort {
    ring: VecDeque<HeapBuf>,
    capacity: usize,
    addr: NativeAddr,
    pool: BufPool,
}

impl LoopbackPort {
    /// A loopback port holding up to `capacity` packets.
    pub fn new(capacity: usize, addr: NativeAddr) -> LoopbackPort {
        LoopbackPort {
            ring: VecDeque::with_capacity(capacity),
            capacity,
            addr,
            pool: BufPool::new(DEFAULT_BUF_SIZE, DEFAULT_HEADROOM, capacity, 0),
        }
    }

    /// Queues a copy of `bytes` for receive; false when full.
    pub fn inject(&mut self, bytes: &[u8], headroom: usize) -> bool {
        if self.ring.len() >= self.capacity {
            return false;
        }
        let mut b = HeapBuf::new(headroom + bytes.len().max(2048), headroom);
        b.set_data(bytes, headroom);
        b.set_native_src(self.addr);
        self.ring.push_back(b);
        true
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether no packet is queued.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

impl Port for LoopbackPort {
    type Buf = HeapBuf;

    #[inline]
    fn rx_burst(&mut self, out: &mut Burst<HeapBuf>) {
        while !out.is_full() {
            match self.ring.pop_front() {
                Some(b) => out.push(b),
                None => break,
            }
        }
    }

    #[inline]
    fn tx_burst(&mut self, pkts: &mut Burst<HeapBuf>) -> usize {
        let room = self.capacity - self.ring.len();
        let n = pkts.len().min(room);
        self.ring.extend(pkts.drain(..n));
        n
    }

    #[inline]
    fn encap(&self, buf: &mut HeapBuf, dst: &NativeAddr) -> bool {
        buf.set_native_dst(*dst);
        true
    }

    fn alloc(&mut self) -> Option<HeapBuf> {
        self.pool.get()
    }

    #[inline]
    fn recycle(&mut self, buf: HeapBuf) {
        self.pool.put(buf)
    }

    fn native_addr(&self) -> NativeAddr {
        self.addr
    }

    fn link_kind(&self) -> LinkKind {
        LinkKind::Memory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_carries_both_ways_and_refuses_when_full() {
        let (mut a, mut b) = mem_link(
            2,
            NativeAddr::mac([2, 0, 0, 0, 0, 1]),
            NativeAddr::mac([2, 0, 0, 0, 0, 2]),
        );
        assert!(a.send_bytes(&[1]));
        assert!(a.send_bytes(&[2]));
        assert!(!a.send_bytes(&[3]));
        let mut burst = Burst::new();
        b.rx_burst(&mut burst);
        assert_eq!(burst.len(), 2);
        assert_eq!(burst[0].data(), &[1]);
        assert_eq!(burst[0].native_src(), a.native_addr());
        assert_eq!(b.tx_burst(&mut burst), 2);
        assert_eq!(a.recv_bytes().unwrap(), vec![1]);
        assert_eq!(a.recv().unwrap().native_src(), b.native_addr());
    }

    #[test]
    fn tx_burst_stops_when_the_ring_fills_and_keeps_the_rest() {
        // Regression: tx_burst counted room without pushing, so a burst
        // larger than the room left was reported sent in full and the
        // packets the ring refused were dropped silently.
        let (mut a, mut b) = mem_link(
            4,
            NativeAddr::mac([2, 0, 0, 0, 0, 1]),
            NativeAddr::mac([2, 0, 0, 0, 0, 2]),
        );
        let mut burst = Burst::new();
        for i in 0..10u8 {
            burst.push(HeapBuf::from_bytes(&[i]));
        }
        assert_eq!(a.tx_burst(&mut burst), 4);
        let left: Vec<u8> = burst.iter().map(|x| x.data()[0]).collect();
        assert_eq!(left, vec![4, 5, 6, 7, 8, 9]);
        assert_eq!(a.tx_burst(&mut burst), 0, "still full");
        assert_eq!(burst.len(), 6);
        let got: Vec<u8> = std::iter::from_fn(|| b.recv_bytes())
            .map(|v| v[0])
            .collect();
        assert_eq!(got, vec![0, 1, 2, 3]);
        assert_eq!(a.tx_burst(&mut burst), 4);
        assert_eq!(burst.len(), 2);
    }

    #[test]
    fn an_end_that_only_sends_never_runs_out_of_buffers() {
        // Regression: an end's pool allocated at most 2 * max(capacity,
        // BURST) buffers in all, and buffers sent to the other end never
        // come back to it, so an end that only sent was refused ("ring
        // full") after 64 packets with an empty ring, and alloc() failed
        // likewise.
        let (mut a, mut b) = mem_link(
            4,
            NativeAddr::mac([2, 0, 0, 0, 0, 1]),
            NativeAddr::mac([2, 0, 0, 0, 0, 2]),
        );
        for i in 0..500u32 {
            assert!(a.send_bytes(&i.to_be_bytes()), "packet {i} refused");
            assert_eq!(b.recv().unwrap().data(), &i.to_be_bytes());
            let mut x = b.alloc().expect("a buffer");
            x.append(4).unwrap().copy_from_slice(&i.to_be_bytes());
            let mut burst = Burst::new();
            burst.push(x);
            assert_eq!(b.tx_burst(&mut burst), 1);
            assert_eq!(a.recv_bytes().unwrap(), i.to_be_bytes());
        }
    }

    #[test]
    fn the_link_counts_the_bytes_each_end_took_and_gave() {
        let (mut a, mut b) = mem_link(
            2,
            NativeAddr::mac([2, 0, 0, 0, 0, 1]),
            NativeAddr::mac([2, 0, 0, 0, 0, 2]),
        );
        let mut burst = Burst::new();
        for n in [10usize, 20, 30] {
            burst.push(HeapBuf::from_bytes(&vec![n as u8; n]));
        }
        assert_eq!(a.tx_burst(&mut burst), 2, "the ring holds two");
        assert_eq!(a.link_stats().tx_bytes, 30, "the refused one not counted");
        assert!(!a.send_bytes(&[0; 5]), "still full");
        assert_eq!(a.link_stats().tx_bytes, 30);
        let mut got = Burst::new();
        b.rx_burst(&mut got);
        assert_eq!(b.link_stats().rx_bytes, 30);
        assert!(b.recv().is_none());
        assert!(a.send_bytes(&[0; 5]));
        assert_eq!(b.recv_bytes().unwrap().len(), 5);
        assert_eq!(a.link_stats().tx_bytes, 35);
        assert_eq!(
            b.link_stats(),
            LinkStats {
                rx_bytes: 35,
                ..LinkStats::default()
            }
        );
    }

    #[test]
    fn an_impaired_wire_counts_what_the_impairer_took_and_released() {
        use crate::clock::TestClock;
        let (mut a, b) = mem_link(
            64,
            NativeAddr::mac([2, 0, 0, 0, 0, 1]),
            NativeAddr::mac([2, 0, 0, 0, 0, 2]),
        );
        let cfg = ImpairConfig {
            seed: 7,
            loss: 0.5,
            ..ImpairConfig::default()
        };
        let mut b = b.with_impairment(cfg, TestClock::new());
        let mut burst = Burst::new();
        for _ in 0..20 {
            burst.push(HeapBuf::from_bytes(&[1; 10]));
        }
        assert_eq!(a.tx_burst(&mut burst), 20);
        assert_eq!(a.link_stats().tx_bytes, 200, "all handed to the wire");
        let mut got = Burst::new();
        b.rx_burst(&mut got);
        let lost = b.impairment().unwrap().stats().lost;
        assert!(lost > 0 && lost < 20);
        assert_eq!(got.len() as u64, 20 - lost);
        let l = b.link_stats();
        assert_eq!(l.rx_bytes, 10 * (20 - lost));
        assert_eq!(l.rx_missed, 0, "the wire's losses are no receiver's count");
    }

    #[test]
    fn loopback_recycles() {
        let mut p = LoopbackPort::new(4, NativeAddr::mac([2, 0, 0, 0, 0, 9]));
        assert!(p.inject(&[7; 64], 64));
        let mut burst = Burst::new();
        p.rx_burst(&mut burst);
        assert_eq!(burst.len(), 1);
        assert_eq!(p.tx_burst(&mut burst), 1);
        assert_eq!(p.len(), 1);
    }
}
