//! Per-worker counters: plain integers that only the worker writes, copied
//! now and then into a [`StatsBlock`] that readers (the control thread, the
//! admin socket) load. Nothing is shared between workers.
//!
//! Accounting per port, at quiescence: `received = forwarded + dropped + punted`.
//! Packets the control plane injects and notices sent to it are counted apart.

use std::sync::atomic::{AtomicU64, Ordering};

use rrp::DropReason;

use crate::mcast::{MCAST_SLOTS, McastCount};

/// The counters of one port, as seen by one worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Packets received.
    pub received: u64,
    /// Received packets flagged with a receive error by the port.
    pub rx_errors: u64,
    /// Received packets transmitted on some port.
    pub forwarded: u64,
    /// Received packets handed to the control plane.
    pub punted: u64,
    /// Received packets dropped, by reason.
    pub dropped: [u64; DropReason::COUNT],
    /// Packets transmitted on this port (forwarded from any port, and injected).
    pub transmitted: u64,
    /// Packets the control plane injected for transmission on this port.
    pub injected: u64,
    /// Injections this port could not send (no buffer, encap, queue full).
    pub inject_failed: u64,
    /// Notices (no route, MTU, redirect) queued for the control plane.
    pub notices: u64,
    /// Notices not queued (ring full or rate limit).
    pub notices_dropped: u64,
}

impl PortCounters {
    /// All drops.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }

    /// Drops of one reason.
    pub fn dropped(&self, r: DropReason) -> u64 {
        self.dropped[r as usize]
    }

    /// Whether `received = forwarded + dropped + punted`.
    pub fn balanced(&self) -> bool {
        self.received == self.forwarded + self.dropped_total() + self.punted
    }

    /// Adds another set (e.g. of another worker).
    pub fn add(&mut self, o: &PortCounters) {
        self.received += o.received;
        self.rx_errors += o.rx_errors;
        self.forwarded += o.forwarded;
        self.punted += o.punted;
        for (a, b) in self.dropped.iter_mut().zip(o.dropped.iter()) {
            *a += b;
        }
        self.transmitted += o.transmitted;
        self.injected += o.injected;
        self.inject_failed += o.inject_failed;
        self.notices += o.notices;
        self.notices_dropped += o.notices_dropped;
    }
}

const FIELDS: usize = 9 + DropReason::COUNT;

fn to_array(c: &PortCounters) -> [u64; FIELDS] {
    let mut a = [0u64; FIELDS];
    a[0] = c.received;
    a[1] = c.rx_errors;
    a[2] = c.forwarded;
    a[3] = c.punted;
    a[4] = c.transmitted;
    a[5] = c.injected;
    a[6] = c.inject_failed;
    a[7] = c.notices;
    a[8] = c.notices_dropped;
    a[9..].copy_from_slice(&c.dropped);
    a
}

fn from_array(a: &[u64; FIELDS]) -> PortCounters {
    let mut dropped = [0u64; DropReason::COUNT];
    dropped.copy_from_slice(&a[9..]);
    PortCounters {
        received: a[0],
        rx_errors: a[1],
        forwarded: a[2],
        punted: a[3],
        transmitted: a[4],
        injected: a[5],
        inject_failed: a[6],
        notices: a[7],
        notices_dropped: a[8],
        dropped,
    }
}

/// A worker's published counters: one writer (the worker), any readers.
/// Each value is a single-writer atomic so that readers never see a torn
/// value; a snapshot may mix two publications (counters are monotonic).
#[derive(Debug)]
pub struct StatsBlock {
    ports: Vec<[AtomicU64; FIELDS]>,
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
            ports: (0..ports)
                .map(|_| core::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
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
    pub fn publish(&self, local: &[PortCounters]) {
        for (slot, c) in self.ports.iter().zip(local) {
            for (a, v) in slot.iter().zip(to_array(c)) {
                a.store(v, Ordering::Relaxed);
            }
        }
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Loads the counters of every port.
    pub fn read(&self) -> Vec<PortCounters> {
        let _ = self.epoch.load(Ordering::Acquire);
        self.ports
            .iter()
            .map(|slot| {
                let a: [u64; FIELDS] = core::array::from_fn(|i| slot[i].load(Ordering::Relaxed));
                from_array(&a)
            })
            .collect()
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
pub fn sum(blocks: &[std::sync::Arc<StatsBlock>]) -> Vec<PortCounters> {
    let mut total: Vec<PortCounters> = Vec::new();
    for b in blocks {
        let r = b.read();
        if total.len() < r.len() {
            total.resize(r.len(), PortCounters::default());
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
        let mut c = PortCounters {
            received: 10,
            forwarded: 6,
            punted: 1,
            ..Default::default()
        };
        c.dropped[DropReason::NoRoute as usize] = 3;
        assert!(c.balanced());
        let b = StatsBlock::new(2);
        b.publish(&[c, PortCounters::default()]);
        assert_eq!(b.read()[0], c);
        let s = sum(&[std::sync::Arc::new(b)]);
        assert_eq!(s[0].dropped(DropReason::NoRoute), 3);
    }
}
