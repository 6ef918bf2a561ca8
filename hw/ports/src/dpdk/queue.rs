//! An ethdev queue: its burst receive and transmit (shared by
//! [`DpdkPort`](super::DpdkPort)), and the queue as a [`RawQueue`] of whole
//! frames.

use std::ptr;

use dpdk_sys as sys;

use super::eal::DpdkError;
use super::ethdev::Ethdev;
use super::mbuf::{Mbuf, Pool, set_frame_start_raw};
use crate::{BURST, Burst};

/// How many packets ahead of the one being checked [`rx_into`] prefetches.
const PREFETCH_AHEAD: usize = 4;

/// Asks for the first cache line of a received mbuf's data (the Ethernet
/// and EEP headers), as DPDK's l3fwd does (`rte_prefetch0`).
#[inline(always)]
fn prefetch_data(m: *mut sys::rte_mbuf) {
    // SAFETY: `m` is a valid mbuf the driver just handed over: its fields
    // are readable. A prefetch never faults, whatever the address.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        let p = (*m).buf_addr.cast::<i8>().add((*m).data_off as usize);
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = m;
}

/// `rte_eth_rx_burst` written straight into `out`'s spare capacity; each
/// new mbuf is passed to `keep`, which returns the mbuf to keep (itself or
/// a replacement) or `None` when it disposed of it (freed it). The kept ones
/// stay in order.
#[inline(always)]
pub(super) fn rx_into(
    port: u16,
    queue: u16,
    out: &mut Burst<Mbuf>,
    mut keep: impl FnMut(*mut sys::rte_mbuf) -> Option<*mut sys::rte_mbuf>,
) -> usize {
    let have = out.len();
    let room = BURST - have;
    if room == 0 {
        return 0;
    }
    // `Mbuf` is a transparent NonNull<rte_mbuf>: the spare capacity of
    // `out` is an array of `room` rte_mbuf pointer slots.
    // SAFETY: have <= BURST, so the pointer stays within (or one past) the
    // ArrayVec's buffer.
    let base = unsafe { out.as_mut_ptr().add(have) }.cast::<*mut sys::rte_mbuf>();
    // SAFETY: (port, queue) is a started queue that this thread owns (the
    // queue was taken by exactly one DpdkPort/RawQueue); `base` has room for
    // `room` pointers.
    let n = unsafe { sys::mw_eth_rx_burst(port, queue, base, room as u16) } as usize;
    // The first packets' data is asked for before the first is looked at;
    // then, while packet i is checked, that of packet i + PREFETCH_AHEAD
    // (the misses overlap instead of coming one packet at a time).
    for i in 0..n.min(PREFETCH_AHEAD) {
        // SAFETY: the driver wrote n valid mbuf pointers at base[..n].
        prefetch_data(unsafe { *base.add(i) });
    }
    let mut kept = 0;
    for i in 0..n {
        if i + PREFETCH_AHEAD < n {
            // SAFETY: as above, i + PREFETCH_AHEAD < n.
            prefetch_data(unsafe { *base.add(i + PREFETCH_AHEAD) });
        }
        // SAFETY: the driver wrote n valid mbuf pointers at base[..n].
        let m = unsafe { *base.add(i) };
        if let Some(m) = keep(m) {
            // SAFETY: kept <= i < n <= room: inside the spare capacity.
            unsafe { *base.add(kept) = m };
            kept += 1;
        }
    }
    // SAFETY: slots have..have + kept hold owned, non-null mbuf pointers,
    // i.e. valid `Mbuf`s (repr(transparent)).
    unsafe { out.set_len(have + kept) };
    kept
}

/// Transmits the front of `pkts` with one `rte_eth_tx_burst` over its
/// pointers, then removes the sent ones (now the driver's) without dropping
/// them, keeping the unsent in order.
#[inline(always)]
pub(super) fn tx_from(port: u16, queue: u16, pkts: &mut Burst<Mbuf>) -> usize {
    let len = pkts.len();
    if len == 0 {
        return 0;
    }
    let p = pkts.as_mut_ptr().cast::<*mut sys::rte_mbuf>();
    // SAFETY: (port, queue) is a started queue owned by this thread; `p`
    // points to `len` owned mbuf pointers (repr(transparent)).
    let sent = unsafe { sys::mw_eth_tx_burst(port, queue, p, len as u16) } as usize;
    if sent > 0 {
        // SAFETY: the first `sent` mbufs belong to the driver now: the
        // unsent ones move to the front (overlapping copy) and the length
        // shrinks, so no Mbuf is dropped or duplicated. Nothing between the
        // burst and set_len can panic.
        unsafe {
            ptr::copy(p.add(sent), p, len - sent);
            pkts.set_len(len - sent);
        }
    }
    sent
}

/// One queue pair of an ethdev for whole frames: no decap, no filter, no
/// encap. For tests (the "host" end of a [`ring_pair`](super::ring_pair))
/// and packet generators. Owned by one thread at a time.
#[derive(Debug)]
pub struct RawQueue {
    port_id: u16,
    queue: u16,
    pool: Pool,
    dev: Ethdev,
}

impl Drop for RawQueue {
    fn drop(&mut self) {
        self.dev
            .release(self.queue..self.queue + 1, Some(self.queue));
    }
}

impl RawQueue {
    /// Receives up to the free room of `out` (one `rte_eth_rx_burst`);
    /// returns how many. The mbufs carry no native source.
    pub fn rx_burst(&mut self, out: &mut Burst<Mbuf>) -> usize {
        rx_into(self.port_id, self.queue, out, |m| {
            set_frame_start_raw(m, None);
            Some(m)
        })
    }

    /// Transmits from the front of `pkts` (one `rte_eth_tx_burst`); the sent
    /// ones are removed, the unsent stay. Returns how many were sent.
    pub fn tx_burst(&mut self, pkts: &mut Burst<Mbuf>) -> usize {
        tx_from(self.port_id, self.queue, pkts)
    }

    /// Sends one frame (a copy of `frame`); false when no mbuf was free or
    /// the queue was full.
    pub fn send_frame(&mut self, frame: &[u8]) -> bool {
        let Some(m) = self.pool.mbuf_from(frame) else {
            return false;
        };
        self.send(m).is_ok()
    }

    /// Sends one mbuf; gives it back when the queue was full.
    pub fn send(&mut self, m: Mbuf) -> Result<(), Mbuf> {
        let mut b = Burst::new();
        b.push(m);
        if self.tx_burst(&mut b) == 1 {
            Ok(())
        } else {
            Err(b.pop().expect("unsent mbuf"))
        }
    }

    /// An empty mbuf from the ethdev's pool.
    pub fn alloc(&mut self) -> Option<Mbuf> {
        self.pool.alloc()
    }

    /// The ethdev's MAC address.
    pub fn mac(&self) -> [u8; 6] {
        self.dev.0.mac
    }

    /// The pool of the ethdev.
    pub fn pool(&self) -> Pool {
        self.pool
    }

    /// The ethdev this queue belongs to.
    pub fn ethdev(&self) -> &Ethdev {
        &self.dev
    }
}

impl Ethdev {
    /// Queue pair `queue` for whole frames, without MessageWay
    /// encapsulation (tests, packet generators).
    pub fn raw_queue(&self, queue: u16) -> Result<RawQueue, DpdkError> {
        self.take(queue..queue + 1, queue)?;
        Ok(RawQueue {
            port_id: self.0.port_id,
            queue,
            pool: self.0.pool,
            dev: self.clone(),
        })
    }
}
