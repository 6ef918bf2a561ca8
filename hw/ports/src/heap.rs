//! Heap packet buffers for the socket and in-memory backends: one
//! allocation per buffer, recycled through a per-port pool so that the
//! steady state allocates nothing.

use crate::PacketBuf;
use rrp::NativeAddr;

/// Default headroom: room for native headers prepended on transmit.
pub const DEFAULT_HEADROOM: usize = 128;
/// Default buffer size (headroom included): a 9000-byte jumbo frame fits.
pub const DEFAULT_BUF_SIZE: usize = 9216 + DEFAULT_HEADROOM;

#[derive(Debug)]
struct Inner {
    off: u32,
    len: u32,
    rx_error: bool,
    src: NativeAddr,
    dst: NativeAddr,
    mem: Box<[u8]>,
}

/// A packet buffer on the heap, with headroom and metadata (native source
/// and destination, receive-error flag).
#[derive(Debug)]
pub struct HeapBuf(Box<Inner>);

impl HeapBuf {
    /// An empty buffer of `size` bytes whose packet starts `headroom` bytes in.
    pub fn new(size: usize, headroom: usize) -> HeapBuf {
        assert!(headroom <= size, "headroom larger than the buffer");
        HeapBuf(Box::new(Inner {
            off: headroom as u32,
            len: 0,
            rx_error: false,
            src: NativeAddr::NONE,
            dst: NativeAddr::NONE,
            mem: vec![0u8; size].into_boxed_slice(),
        }))
    }

    /// A buffer holding a copy of `bytes` after the default headroom.
    pub fn from_bytes(bytes: &[u8]) -> HeapBuf {
        let mut b = HeapBuf::new(DEFAULT_HEADROOM + bytes.len().max(2048), DEFAULT_HEADROOM);
        assert!(b.set_data(bytes, DEFAULT_HEADROOM));
        b
    }

    /// Empties the buffer (metadata cleared), the packet starting `headroom` bytes in.
    pub fn reset(&mut self, headroom: usize) {
        let i = &mut *self.0;
        i.off = headroom.min(i.mem.len()) as u32;
        i.len = 0;
        i.rx_error = false;
        i.src = NativeAddr::NONE;
        i.dst = NativeAddr::NONE;
    }

    /// Replaces the contents with `bytes` placed `headroom` bytes in; false
    /// when they do not fit.
    pub fn set_data(&mut self, bytes: &[u8], headroom: usize) -> bool {
        let i = &mut *self.0;
        if headroom + bytes.len() > i.mem.len() {
            return false;
        }
        i.mem[headroom..headroom + bytes.len()].copy_from_slice(bytes);
        i.off = headroom as u32;
        i.len = bytes.len() as u32;
        true
    }

    /// Total size of the buffer.
    pub fn capacity(&self) -> usize {
        self.0.mem.len()
    }

    /// Bytes free before the packet.
    pub fn headroom(&self) -> usize {
        self.0.off as usize
    }

    /// The whole underlying memory and the packet's offset in it, for
    /// backends that receive into the buffer (e.g. recvmmsg).
    pub fn raw_mut(&mut self) -> (&mut [u8], usize) {
        let off = self.0.off as usize;
        (&mut self.0.mem, off)
    }

    /// Sets the packet length (after a backend wrote into [`HeapBuf::raw_mut`]).
    pub fn set_len(&mut self, len: usize) {
        assert!(self.0.off as usize + len <= self.0.mem.len());
        self.0.len = len as u32;
    }

    /// Marks a receive error.
    pub fn set_rx_error(&mut self, e: bool) {
        self.0.rx_error = e;
    }

    /// Sets the native source address.
    pub fn set_native_src(&mut self, n: NativeAddr) {
        self.0.src = n;
    }

    /// The native destination set by `encap` (memory and UDP backends).
    pub fn native_dst(&self) -> NativeAddr {
        self.0.dst
    }

    /// Sets the native destination.
    pub fn set_native_dst(&mut self, n: NativeAddr) {
        self.0.dst = n;
    }
}

impl PacketBuf for HeapBuf {
    #[inline]
    fn data(&self) -> &[u8] {
        let i = &*self.0;
        &i.mem[i.off as usize..(i.off + i.len) as usize]
    }
    #[inline]
    fn data_mut(&mut self) -> &mut [u8] {
        let i = &mut *self.0;
        &mut i.mem[i.off as usize..(i.off + i.len) as usize]
    }
    #[inline]
    fn len(&self) -> usize {
        self.0.len as usize
    }
    #[inline]
    fn adj(&mut self, n: usize) {
        let i = &mut *self.0;
        let n = n.min(i.len as usize) as u32;
        i.off += n;
        i.len -= n;
    }
    #[inline]
    fn prepend(&mut self, n: usize) -> Option<&mut [u8]> {
        let i = &mut *self.0;
        if n > i.off as usize {
            return None;
        }
        i.off -= n as u32;
        i.len += n as u32;
        let o = i.off as usize;
        Some(&mut i.mem[o..o + n])
    }
    #[inline]
    fn trim(&mut self, len: usize) {
        let i = &mut *self.0;
        i.len = i.len.min(len as u32);
    }
    #[inline]
    fn append(&mut self, n: usize) -> Option<&mut [u8]> {
        let i = &mut *self.0;
        let end = (i.off + i.len) as usize;
        if end + n > i.mem.len() {
            return None;
        }
        i.len += n as u32;
        Some(&mut i.mem[end..end + n])
    }
    #[inline]
    fn rx_error(&self) -> bool {
        self.0.rx_error
    }
    #[inline]
    fn native_src(&self) -> NativeAddr {
        self.0.src
    }
}

/// A pool of heap buffers: `get` reuses a returned buffer or allocates a
/// new one up to `limit` buffers in all. A pool is a handle: clones share
/// it, so that the ports of one worker draw from and return to the same
/// buffers whichever port a packet arrived on and left by (a buffer received
/// on one port and sent on another must come back to where the first one
/// draws from, or one-way traffic would drain it). Lock-free.
#[derive(Debug, Clone)]
pub struct BufPool {
    inner: std::sync::Arc<PoolInner>,
}

/// Two handles are equal when they share one pool.
impl PartialEq for BufPool {
    fn eq(&self, o: &BufPool) -> bool {
        std::sync::Arc::ptr_eq(&self.inner, &o.inner)
    }
}

impl Eq for BufPool {}

#[derive(Debug)]
struct PoolInner {
    free: crossbeam_queue::ArrayQueue<HeapBuf>,
    size: usize,
    headroom: usize,
    allocated: std::sync::atomic::AtomicUsize,
    limit: usize,
}

impl BufPool {
    /// A pool of up to `limit` buffers of `size` bytes with `headroom`,
    /// `prealloc` of them allocated now.
    pub fn new(size: usize, headroom: usize, limit: usize, prealloc: usize) -> BufPool {
        let limit = limit.max(1);
        let inner = PoolInner {
            free: crossbeam_queue::ArrayQueue::new(limit),
            size,
            headroom,
            allocated: std::sync::atomic::AtomicUsize::new(0),
            limit,
        };
        for _ in 0..prealloc.min(limit) {
            inner
                .allocated
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let _ = inner.free.push(HeapBuf::new(size, headroom));
        }
        BufPool {
            inner: std::sync::Arc::new(inner),
        }
    }

    /// An empty buffer, or `None` when `limit` buffers are out.
    #[inline]
    pub fn get(&mut self) -> Option<HeapBuf> {
        let i = &*self.inner;
        if let Some(mut b) = i.free.pop() {
            b.reset(i.headroom);
            return Some(b);
        }
        let n = i
            .allocated
            .fetch_update(
                std::sync::atomic::Ordering::Relaxed,
                std::sync::atomic::Ordering::Relaxed,
                |n| (n < i.limit).then_some(n + 1),
            )
            .ok()?;
        let _ = n;
        Some(HeapBuf::new(i.size, i.headroom))
    }

    /// Returns a buffer to the pool (dropped if it is of another size or the
    /// pool is full).
    #[inline]
    pub fn put(&mut self, b: HeapBuf) {
        if b.capacity() == self.inner.size {
            let _ = self.inner.free.push(b);
        }
    }

    /// Buffers waiting in the pool.
    pub fn available(&self) -> usize {
        self.inner.free.len()
    }

    /// The headroom of new buffers.
    pub fn headroom(&self) -> usize {
        self.inner.headroom
    }

    /// The size of the pool's buffers.
    pub fn buf_size(&self) -> usize {
        self.inner.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_prepend_trim_append() {
        let mut b = HeapBuf::new(64, 16);
        assert!(b.set_data(&[1, 2, 3, 4, 5, 6], 16));
        b.adj(2);
        assert_eq!(b.data(), &[3, 4, 5, 6]);
        b.prepend(3).unwrap().copy_from_slice(&[9, 9, 9]);
        assert_eq!(b.data(), &[9, 9, 9, 3, 4, 5, 6]);
        b.trim(5);
        assert_eq!(b.data(), &[9, 9, 9, 3, 4]);
        b.append(1).unwrap()[0] = 7;
        assert_eq!(b.data(), &[9, 9, 9, 3, 4, 7]);
        assert!(b.prepend(100).is_none());
        assert!(b.append(100).is_none());
    }

    #[test]
    fn shared_pool_balances_one_way_traffic() {
        let mut a = BufPool::new(128, 32, 4, 4);
        let mut b = a.clone();
        // Received through `a`, returned through `b`, many times over.
        for _ in 0..100 {
            let x = a.get().expect("the shared pool never drains");
            b.put(x);
        }
        assert_eq!(a.available(), 4);
    }

    #[test]
    fn pool_recycles_and_limits() {
        let mut p = BufPool::new(128, 32, 2, 1);
        let a = p.get().unwrap();
        let b = p.get().unwrap();
        assert!(p.get().is_none());
        p.put(a);
        let a = p.get().unwrap();
        assert_eq!(a.headroom(), 32);
        drop((a, b));
    }
}
