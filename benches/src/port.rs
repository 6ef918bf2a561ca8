//! [`BenchPort`]: a single-thread in-memory port for benchmarks, like
//! [`ports::memory::LoopbackPort`] (its transmit feeds its own receive, so
//! that buffers are recycled: rx burst -> engine -> tx burst -> back to rx),
//! with one addition: on receive it restores each buffer to the packet as it
//! was first loaded.
//!
//! The engine changes a forwarded packet in three ways: it strips the
//! consumed L2RH (moves the start of the packet forward; the bytes stay in
//! the buffer's headroom), trims frame padding (moves the end back) and
//! shifts the EI (a zero EI stays zero). Resetting the start and the length
//! therefore gives back the original packet, byte for byte, at the cost of
//! a few metadata stores (start, length and native source; a NIC driver
//! writes as much into every received mbuf). Every variant, the baseline
//! included, pays exactly the same.

use ports::{BURST, BufPool, Burst, HeapBuf, PacketBuf, Port};
use rrp::{LinkKind, NativeAddr};

/// An in-memory port whose transmit feeds its own receive and which
/// restores every received buffer to its original packet.
#[derive(Debug)]
pub struct BenchPort {
    ring: Ring,
    addr: NativeAddr,
    peer: NativeAddr,
    headroom: usize,
    rx_len: usize,
    buf_size: usize,
    pool: BufPool,
}

impl BenchPort {
    /// A port holding up to `capacity` packets, with native address `addr`,
    /// stamping `peer` as the native source of every received packet. Packets
    /// are loaded `headroom` bytes into buffers of `buf_size` bytes, and are
    /// `rx_len` bytes long as received.
    pub fn new(
        capacity: usize,
        addr: NativeAddr,
        peer: NativeAddr,
        buf_size: usize,
        headroom: usize,
        rx_len: usize,
    ) -> BenchPort {
        assert!(
            headroom + rx_len <= buf_size,
            "packet does not fit a buffer"
        );
        BenchPort {
            ring: Ring::new(capacity),
            addr,
            peer,
            headroom,
            rx_len,
            buf_size,
            pool: BufPool::new(buf_size, headroom, BURST, 0),
        }
    }

    /// Queues a new buffer holding `bytes` (which must be `rx_len` long) for
    /// receive; false when the port is full.
    pub fn load(&mut self, bytes: &[u8]) -> bool {
        assert_eq!(
            bytes.len(),
            self.rx_len,
            "every packet of a port has one length"
        );
        if self.ring.is_full() {
            return false;
        }
        let mut b = HeapBuf::new(self.buf_size, self.headroom);
        assert!(b.set_data(bytes, self.headroom));
        b.set_native_src(self.peer);
        self.ring.push(b).is_ok()
    }

    /// Restores `b` to its packet as loaded (see the module documentation):
    /// moves its start back to the headroom and sets its length, the same
    /// stores whatever the engine did to it, and stamps the native source
    /// (the neighbour on this port's SAN), as a receiving backend does. The
    /// receive-error flag, which the engine never changes, stays clear.
    #[inline(always)]
    pub fn restore(&self, b: &mut HeapBuf) {
        restore(b, self.headroom, self.rx_len);
        b.set_native_src(self.peer);
    }

    /// Restores every queued buffer and calls `f` on each (checks between runs).
    pub fn for_each_restored(&mut self, mut f: impl FnMut(&HeapBuf)) {
        for _ in 0..self.ring.len() {
            let mut b = self.ring.pop().expect("counted");
            self.restore(&mut b);
            assert!(!b.rx_error(), "receive error set");
            f(&b);
            assert!(self.ring.push(b).is_ok());
        }
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether no packet is queued.
    pub fn is_empty(&self) -> bool {
        self.ring.len() == 0
    }

    /// The native source stamped on received packets.
    pub fn peer(&self) -> NativeAddr {
        self.peer
    }

    /// Takes the oldest transmitted (or loaded) buffer off the port's ring,
    /// as a sink would (the multicast rig, `crate::mcast`).
    #[inline(always)]
    pub fn take_sent(&mut self) -> Option<HeapBuf> {
        self.ring.pop()
    }

    /// Puts a buffer on the port's ring to be received (restored) by the
    /// next receive burst; false when the ring is full.
    #[inline(always)]
    pub fn give(&mut self, b: HeapBuf) -> bool {
        self.ring.push(b).is_ok()
    }

    /// Returns a buffer to the port's pool (where [`Port::alloc`] and the
    /// default [`Port::replicate`] take buffers from).
    #[inline(always)]
    pub fn release(&mut self, b: HeapBuf) {
        self.pool.put(b);
    }

    /// Buffers waiting in the port's pool.
    pub fn pool_available(&self) -> usize {
        self.pool.available()
    }
}

/// A fixed FIFO of buffers (a power-of-two array of slots, like a NIC's
/// descriptor ring): cheaper per packet than a `VecDeque`'s drain/extend.
#[derive(Debug)]
struct Ring {
    slots: Box<[Option<HeapBuf>]>,
    mask: usize,
    head: usize,
    tail: usize,
    capacity: usize,
}

impl Ring {
    fn new(capacity: usize) -> Ring {
        let size = capacity.max(1).next_power_of_two();
        Ring {
            slots: (0..size).map(|_| None).collect(),
            mask: size - 1,
            head: 0,
            tail: 0,
            capacity,
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.tail.wrapping_sub(self.head)
    }

    #[inline(always)]
    fn room(&self) -> usize {
        self.capacity - self.len()
    }

    #[inline(always)]
    fn is_full(&self) -> bool {
        self.len() >= self.capacity
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<HeapBuf> {
        if self.head == self.tail {
            return None;
        }
        let b = self.slots[self.head & self.mask].take();
        self.head = self.head.wrapping_add(1);
        b
    }

    #[inline(always)]
    fn push(&mut self, b: HeapBuf) -> Result<(), HeapBuf> {
        if self.is_full() {
            return Err(b);
        }
        self.slots[self.tail & self.mask] = Some(b);
        self.tail = self.tail.wrapping_add(1);
        Ok(())
    }
}

/// Moves the start of `b` back to `headroom` and sets its length to `len`
/// (with the inlined `PacketBuf` methods: `HeapBuf::set_len` is not
/// `#[inline]` and would cost a call per packet).
#[inline(always)]
pub fn restore(b: &mut HeapBuf, headroom: usize, len: usize) {
    let back = b.headroom() - headroom;
    let _ = b.prepend(back);
    b.trim(len);
    let _ = b.append(len - b.len());
}

impl Port for BenchPort {
    type Buf = HeapBuf;

    #[inline]
    fn rx_burst(&mut self, out: &mut Burst<HeapBuf>) {
        let n = out.remaining_capacity().min(self.ring.len());
        for _ in 0..n {
            let mut b = self.ring.pop().expect("counted");
            self.restore(&mut b);
            out.push(b);
        }
    }

    #[inline]
    fn tx_burst(&mut self, pkts: &mut Burst<HeapBuf>) -> usize {
        let n = pkts.len().min(self.ring.room());
        for b in pkts.drain(..n) {
            let _ = self.ring.push(b);
        }
        n
    }

    #[inline]
    fn encap(&self, buf: &mut HeapBuf, dst: &NativeAddr) -> bool {
        // A MAC, or none: every member of the SAN (multicast replicas).
        if dst.len() != 6 && !dst.is_empty() {
            return false;
        }
        buf.set_native_dst(*dst);
        true
    }

    fn alloc(&mut self) -> Option<HeapBuf> {
        self.pool.get()
    }

    /// A dropped or punted buffer goes back on the ring, so that the number
    /// of packets in flight stays the same; the counters report the drop.
    #[inline]
    fn recycle(&mut self, buf: HeapBuf) {
        if buf.capacity() != self.buf_size {
            return;
        }
        if let Err(buf) = self.ring.push(buf) {
            self.pool.put(buf);
        }
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
    fn restores_stripped_and_trimmed_packets() {
        let me = NativeAddr::mac([2, 0, 0, 0, 0, 1]);
        let peer = NativeAddr::mac([2, 0, 0, 0, 0, 2]);
        let mut p = BenchPort::new(4, me, peer, 256, 64, 40);
        let pkt: Vec<u8> = (0..40).collect();
        assert!(p.load(&pkt));
        let mut burst = Burst::new();
        p.rx_burst(&mut burst);
        let mut b = burst.pop().unwrap();
        b.adj(16);
        b.trim(20);
        b.data_mut()[0] = 0xFF;
        burst.push(b);
        assert_eq!(p.tx_burst(&mut burst), 1);
        p.rx_burst(&mut burst);
        let mut want = pkt.clone();
        want[16] = 0xFF;
        assert_eq!(burst[0].data(), &want[..]);
        assert_eq!(burst[0].native_src(), peer);
    }
}
