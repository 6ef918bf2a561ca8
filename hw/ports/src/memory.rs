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

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

use crossbeam_queue::ArrayQueue;

use crate::clock::Clock;
use crate::heap::{BufPool, DEFAULT_BUF_SIZE, DEFAULT_HEADROOM, HeapBuf};
use crate::impair::{ImpairConfig, Impairer};
use crate::{BURST, Burst, PacketBuf, Port};
use rrp::LinkKind;
use rrp::NativeAddr;

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
        },
        MemPort {
            rx: ab,
            tx: ba,
            rx_hook: ab_hook,
            tx_hook: ba_hook,
            addr: b,
            peer: a,
            pool: pool(),
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
    fn push(&self, b: HeapBuf) -> Result<(), HeapBuf> {
        match self.tx_hook.get() {
            Some(imp) => imp.push(b),
            None => self.tx.push(b),
        }
    }

    #[inline]
    fn pop(&self) -> Option<HeapBuf> {
        self.rx
            .pop()
            .or_else(|| self.rx_hook.get().and_then(|imp| imp.pop()))
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
        while !out.is_full() {
            match self.rx.pop() {
                Some(b) => out.push(b),
                None => break,
            }
        }
        if let Some(imp) = self.rx_hook.get() {
            imp.pop_burst(out);
        }
    }

    #[inline]
    fn tx_burst(&mut self, pkts: &mut Burst<HeapBuf>) -> usize {
        for b in pkts.iter_mut() {
            b.set_native_src(self.addr);
        }
        if let Some(imp) = self.tx_hook.get() {
            return imp.push_burst(pkts);
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
            match self.tx.push(b) {
                Ok(()) => sent += 1,
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
