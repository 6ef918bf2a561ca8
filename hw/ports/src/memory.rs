//! In-memory ports, for tests and benchmarks.
//!
//! [`mem_link`] makes the two ends of a point-to-point wire: two lock-free
//! bounded rings, one per direction, so that the ends may live on different
//! threads (a router worker and a test or generator thread). A full ring
//! refuses transmission (the caller counts tx-full). [`LoopbackPort`] is a
//! single-thread port whose transmit feeds its own receive, for benchmarks
//! that recycle buffers (rx burst -> engine -> tx burst -> back to rx).
//!
//! Native addresses on an in-memory SAN are 6 bytes, like MACs; there is no
//! encapsulation.

use std::collections::VecDeque;
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

use crate::heap::{BufPool, DEFAULT_BUF_SIZE, DEFAULT_HEADROOM, HeapBuf};
use crate::native::Native;
use crate::{BURST, Burst, LinkKind, PacketBuf, Port};

/// One direction of an in-memory wire.
pub type Wire = Arc<ArrayQueue<HeapBuf>>;

/// One end of an in-memory point-to-point wire.
#[derive(Debug)]
pub struct MemPort {
    rx: Wire,
    tx: Wire,
    addr: Native,
    peer: Native,
    pool: BufPool,
}

/// The two ends of a wire with `capacity` packets in flight per direction;
/// end A has native address `a`, end B `b`. Packets from A arrive at B with
/// native source `a`, and the other way round.
pub fn mem_link(capacity: usize, a: Native, b: Native) -> (MemPort, MemPort) {
    let ab: Wire = Arc::new(ArrayQueue::new(capacity));
    let ba: Wire = Arc::new(ArrayQueue::new(capacity));
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
            addr: a,
            peer: b,
            pool: pool(),
        },
        MemPort {
            rx: ab,
            tx: ba,
            addr: b,
            peer: a,
            pool: pool(),
        },
    )
}

impl MemPort {
    /// The native address of the other end.
    pub fn peer_addr(&self) -> Native {
        self.peer
    }

    /// Sends a copy of `bytes` to the other end; false when the ring is full.
    pub fn send_bytes(&mut self, bytes: &[u8]) -> bool {
        let Some(mut b) = self.pool.get() else {
            return false;
        };
        if !b.set_data(bytes, DEFAULT_HEADROOM) {
            return false;
        }
        b.set_native_src(self.addr);
        match self.tx.push(b) {
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
        self.tx.push(b)
    }

    /// Receives one packet, if any.
    pub fn recv(&mut self) -> Option<HeapBuf> {
        self.rx.pop()
    }

    /// Receives one packet's bytes, if any (the buffer goes back to the pool).
    pub fn recv_bytes(&mut self) -> Option<Vec<u8>> {
        let b = self.rx.pop()?;
        let v = b.data().to_vec();
        self.pool.put(b);
        Some(v)
    }

    /// Packets waiting to be received.
    pub fn pending(&self) -> usize {
        self.rx.len()
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
    }

    #[inline]
    fn tx_burst(&mut self, pkts: &mut Burst<HeapBuf>) -> usize {
        let mut sent = 0;
        while sent < pkts.len() {
            if self.tx.is_full() {
                break;
            }
            sent += 1;
        }
        for mut b in pkts.drain(..sent) {
            b.set_native_src(self.addr);
            if let Err(b) = self.tx.push(b) {
                // The other end drained nothing in between: impossible for a
                // single producer, but never lose a buffer silently.
                drop(b);
            }
        }
        sent
    }

    #[inline]
    fn encap(&self, buf: &mut HeapBuf, dst: &Native) -> bool {
        if dst.as_slice().len() != 6 {
            return false;
        }
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

    fn native_addr(&self) -> Native {
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
    addr: Native,
    pool: BufPool,
}

impl LoopbackPort {
    /// A loopback port holding up to `capacity` packets.
    pub fn new(capacity: usize, addr: Native) -> LoopbackPort {
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
    fn encap(&self, buf: &mut HeapBuf, dst: &Native) -> bool {
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

    fn native_addr(&self) -> Native {
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
            Native::mac([2, 0, 0, 0, 0, 1]),
            Native::mac([2, 0, 0, 0, 0, 2]),
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
    fn loopback_recycles() {
        let mut p = LoopbackPort::new(4, Native::mac([2, 0, 0, 0, 0, 9]));
        assert!(p.inject(&[7; 64], 64));
        let mut burst = Burst::new();
        p.rx_burst(&mut burst);
        assert_eq!(burst.len(), 1);
        assert_eq!(p.tx_burst(&mut burst), 1);
        assert_eq!(p.len(), 1);
    }
}
