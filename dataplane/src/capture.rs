//! Packet capture from the dataplane without stopping forwarding (`mwctl
//! capture PORT -w FILE [--drops]`).
//!
//! The control side arms a capture of one port, of its received packets or
//! of its dropped packets (with the reason); each worker reads the armed
//! state once per burst (one relaxed load) and, only while armed, copies up
//! to a snap length of each matching packet into preallocated slots of a
//! bounded ring. A full ring drops the copy, never the packet, and counts it.

use rrp::PortId;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crossbeam_queue::ArrayQueue;

use rrp::DropReason;

/// Bytes of a packet a capture keeps at most.
pub const SNAPLEN: usize = 2048;

/// What is captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureWhat {
    /// Every packet received on the port.
    Received,
    /// Packets received on the port and dropped, with their reason.
    Dropped,
    /// Every packet queued for transmission on the port: forwarded to it
    /// (as it leaves: EI shifted, leading L2RH stripped, padding trimmed) or
    /// injected by the control plane (RRP and ERR messages). Captured before
    /// the link header is added, like received packets.
    Transmitted,
}

/// One captured packet.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// Nanoseconds since the worker started (the capture's clock).
    pub time_ns: u64,
    /// The port.
    pub port: PortId,
    /// The drop reason, for a capture of drops.
    pub reason: Option<DropReason>,
    /// The packet's length.
    pub len: u32,
    /// Its first bytes (at most [`SNAPLEN`]).
    pub data: Vec<u8>,
}

/// Armed state: 0 = off; else port + 1 in the low 16 bits, bit 16 = drops.
#[derive(Debug)]
struct Shared {
    armed: AtomicU32,
    free: ArrayQueue<Captured>,
    full: ArrayQueue<Captured>,
    lost: AtomicU64,
}

/// The control side of the captures of every worker.
#[derive(Debug, Clone)]
pub struct CaptureControl {
    shared: Vec<Arc<Shared>>,
}

/// A worker's side of its capture ring.
#[derive(Debug)]
pub struct CaptureTap {
    shared: Arc<Shared>,
}

/// Capture rings for `workers` workers with `slots` packets in flight each.
pub fn capture_rings(workers: usize, slots: usize) -> (CaptureControl, Vec<CaptureTap>) {
    let slots = slots.max(1);
    let shared: Vec<Arc<Shared>> = (0..workers)
        .map(|_| {
            let free = ArrayQueue::new(slots);
            for _ in 0..slots {
                let _ = free.push(Captured {
                    data: Vec::with_capacity(SNAPLEN),
                    ..Captured::default()
                });
            }
            Arc::new(Shared {
                armed: AtomicU32::new(0),
                free,
                full: ArrayQueue::new(slots),
                lost: AtomicU64::new(0),
            })
        })
        .collect();
    let taps = shared
        .iter()
        .map(|s| CaptureTap { shared: s.clone() })
        .collect();
    (CaptureControl { shared }, taps)
}

impl CaptureControl {
    /// Starts capturing `what` on `port` in every worker (replacing any
    /// capture in progress).
    pub fn arm(&self, port: PortId, what: CaptureWhat) {
        let v = (u32::from(port.0) + 1)
            | match what {
                CaptureWhat::Received => 0,
                CaptureWhat::Dropped => 1 << 16,
                CaptureWhat::Transmitted => 1 << 17,
            };
        for s in &self.shared {
            s.armed.store(v, Ordering::Relaxed);
        }
    }

    /// Stops capturing.
    pub fn disarm(&self) {
        for s in &self.shared {
            s.armed.store(0, Ordering::Relaxed);
        }
    }

    /// The next captured packet from any worker; give it back with
    /// [`CaptureControl::recycle`].
    pub fn next(&self) -> Option<(usize, Captured)> {
        self.shared
            .iter()
            .enumerate()
            .find_map(|(w, s)| s.full.pop().map(|c| (w, c)))
    }

    /// Returns a slot to worker `w`.
    pub fn recycle(&self, w: usize, c: Captured) {
        if let Some(s) = self.shared.get(w) {
            let _ = s.free.push(c);
        }
    }

    /// Copies lost because a ring was full, all workers.
    pub fn lost(&self) -> u64 {
        self.shared
            .iter()
            .map(|s| s.lost.load(Ordering::Relaxed))
            .sum()
    }
}

impl CaptureTap {
    /// What this worker should capture during the next burst: `None` when
    /// nothing is armed (the common case: one relaxed load).
    #[inline]
    pub fn armed(&self) -> Option<(PortId, CaptureWhat)> {
        let v = self.shared.armed.load(Ordering::Relaxed);
        if v == 0 {
            return None;
        }
        let what = if v & (1 << 17) != 0 {
            CaptureWhat::Transmitted
        } else if v & (1 << 16) != 0 {
            CaptureWhat::Dropped
        } else {
            CaptureWhat::Received
        };
        Some((PortId(((v & 0xFFFF) - 1) as u16), what))
    }

    /// Copies a packet into the ring (cold: only while a capture is armed).
    #[cold]
    pub fn copy(&self, time_ns: u64, port: PortId, reason: Option<DropReason>, packet: &[u8]) {
        let Some(mut slot) = self.shared.free.pop() else {
            self.shared.lost.fetch_add(1, Ordering::Relaxed);
            return;
        };
        slot.time_ns = time_ns;
        slot.port = port;
        slot.reason = reason;
        slot.len = packet.len() as u32;
        slot.data.clear();
        slot.data
            .extend_from_slice(&packet[..packet.len().min(SNAPLEN)]);
        // `full` has as many places as there are slots.
        let _ = self.shared.full.push(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_copy_collect_recycle() {
        let (ctl, taps) = capture_rings(2, 2);
        assert_eq!(taps[0].armed(), None);
        ctl.arm(PortId(9), CaptureWhat::Transmitted);
        assert_eq!(taps[0].armed(), Some((PortId(9), CaptureWhat::Transmitted)));
        ctl.arm(PortId(3), CaptureWhat::Dropped);
        assert_eq!(taps[1].armed(), Some((PortId(3), CaptureWhat::Dropped)));
        taps[1].copy(5, PortId(3), Some(DropReason::NoRoute), &[1, 2, 3]);
        taps[1].copy(6, PortId(3), None, &vec![7; 5000]);
        taps[1].copy(7, PortId(3), None, &[9]);
        assert_eq!(ctl.lost(), 1, "two slots");
        let (w, c) = ctl.next().unwrap();
        assert_eq!(
            (w, c.time_ns, c.reason, c.data.clone()),
            (1, 5, Some(DropReason::NoRoute), vec![1, 2, 3])
        );
        ctl.recycle(w, c);
        let (_, c) = ctl.next().unwrap();
        assert_eq!((c.len, c.data.len()), (5000, SNAPLEN));
        ctl.disarm();
        assert_eq!(taps[0].armed(), None);
    }
}
