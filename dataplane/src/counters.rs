//! Per-worker counters: each port's [`PortStats`] (declared once, in
//! `rrp::counters`), plain integers that only the worker writes, copied now
//! and then into a [`StatsBlock`] that readers (the control thread, the
//! admin socket) load. Nothing is shared between workers.
//!
//! Accounting per port, at quiescence: `received = forwarded + dropped + punted`.
//! Packets the control plane injects and notices sent to it are counted apart.

use std::sync::atomic::{AtomicU64, Ordering};

use rrp::PortStats;
use rrp::counters::{CounterSet, SharedCounters};

use crate::mcast::{MCAST_SLOTS, McastCount};

/// A worker's published counters: one writer (the worker), any readers.
/// Each value is a single-writer atomic so that readers never see a torn
/// value; a snapshot may mix two publications (counters are monotonic).
#[derive(Debug)]
pub struct StatsBlock {
    ports: Vec<SharedCounters<PortStats>>,
    /// Per-group counters by counter slot, then the unslotted ones
    /// ([`McastCount`]'s four fields each).
    mcast: Box<[[AtomicU64; 4]]>,
    /// Number of publications, for readers that wait for fresh values.
    pub epoch: AtomicU64,
}

impl StatsBlock {
    /// A block for `ports` ports, all zero.
    pub fn new(ports: usize) -> StatsBlock {
        StatsBlock {
            ports: (0..ports).map(|_| SharedCounters::new()).collect(),
            mcast: (0..=MCAST_SLOTS)
                .map(|_| core::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
            epoch: AtomicU64::new(0),
        }
    }

    /// Stores the worker's per-group counters (worker only).
    pub fn publish_mcast(&self, slots: &[McastCount], unslotted: &McastCount) {
        for (slot, c) in self.mcast.iter().zip(slots.iter().chain([unslotted])) {
            for (a, v) in slot
                .iter()
                .zip([c.packets, c.copies, c.branch_mtu, c.copy_failed])
            {
                a.store(v, Ordering::Relaxed);
            }
        }
    }

    /// Loads the per-group counters: by counter slot, then the unslotted.
    pub fn read_mcast(&self) -> Vec<McastCount> {
        self.mcast
            .iter()
            .map(|s| McastCount {
                packets: s[0].load(Ordering::Relaxed),
                copies: s[1].load(Ordering::Relaxed),
                branch_mtu: s[2].load(Ordering::Relaxed),
                copy_failed: s[3].load(Ordering::Relaxed),
            })
            .collect()
    }

    /// Stores the worker's counters (worker only).
    pub fn publish(&self, local: &[PortStats]) {
        for (shared, c) in self.ports.iter().zip(local) {
            shared.store(c);
        }
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Loads the counters of every port.
    pub fn read(&self) -> Vec<PortStats> {
        let _ = self.epoch.load(Ordering::Acquire);
        self.ports.iter().map(SharedCounters::load).collect()
    }
}

/// Sums the per-group counters of several workers, slot by slot (the last
/// entry: the groups without a slot).
pub fn sum_mcast(blocks: &[std::sync::Arc<StatsBlock>]) -> Vec<McastCount> {
    let mut total = vec![McastCount::default(); MCAST_SLOTS + 1];
    for b in blocks {
        for (t, c) in total.iter_mut().zip(b.read_mcast()) {
            t.add(&c);
        }
    }
    total
}

/// Sums the counters of several workers, port by port.
pub fn sum(blocks: &[std::sync::Arc<StatsBlock>]) -> Vec<PortStats> {
    let mut total: Vec<PortStats> = Vec::new();
    for b in blocks {
        let r = b.read();
        if total.len() < r.len() {
            total.resize(r.len(), PortStats::default());
        }
        for (t, c) in total.iter_mut().zip(&r) {
            t.add(c);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_and_read_back() {
        let mut c = PortStats {
            received: 10,
            forwarded: 6,
            punted: 1,
            ..Default::default()
        };
        c.dropped[rrp::DropReason::NoRoute] = 3;
        assert!(c.balanced());
        let b = StatsBlock::new(2);
        b.publish(&[c, PortStats::default()]);
        assert_eq!(b.read()[0], c);
        let s = sum(&[std::sync::Arc::new(b)]);
        assert_eq!(s[0].dropped(rrp::DropReason::NoRoute), 3);
    }
}
