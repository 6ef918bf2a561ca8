//! Grace periods: when memory that a worker may be reading in the middle of
//! a burst can be given back. A worker marks the start of every pass over
//! its queues ([`Mark::quiescent`]: it holds no pointer from an earlier pass
//! then); code that frees such memory asks for a [`Ticket`] first and frees
//! only once every live worker has started a pass since
//! ([`Ticket::elapsed`]). The scheme is quiescent-state-based reclamation
//! (DPDK's `rte_rcu_qsbr`, VPP's worker barrier in spirit, without stopping
//! anyone): a worker's cost is one load of a rarely written word and one
//! store to its own cache line per pass.
//!
//! The DPDK backend uses it for what DPDK's drivers unmap from EAL's
//! interrupt thread while a worker may still be inside the driver's burst
//! function (`dpdk::unmap`, docs/reliability.md "Default mode").

use std::sync::atomic::{AtomicU64, Ordering};

/// The most workers that hold a [`Mark`] at once (a box's most workers).
pub const MAX_MARKS: usize = rrp::limits::MAX_WORKERS;

/// A slot's value when no worker holds it.
const FREE: u64 = u64::MAX;

/// One worker's slot: the epoch it saw at the start of its last pass, on a
/// cache line of its own (only that worker writes it).
#[repr(align(64))]
struct Slot(AtomicU64);

/// The epoch: raised by each [`ticket`], read by the workers.
static EPOCH: AtomicU64 = AtomicU64::new(0);

static SLOTS: [Slot; MAX_MARKS] = [const { Slot(AtomicU64::new(FREE)) }; MAX_MARKS];

/// A worker's place in the grace periods, held for its life; dropping it
/// lets every pending ticket pass without it.
#[derive(Debug)]
pub struct Mark {
    slot: Option<&'static AtomicU64>,
}

impl Mark {
    /// Takes a free slot (none when [`MAX_MARKS`] workers hold one: this
    /// worker is then not waited for, which only the DPDK backend's
    /// reclamation relies on, and a box has at most that many workers).
    pub fn new() -> Mark {
        let now = EPOCH.load(Ordering::Acquire);
        let slot = SLOTS.iter().map(|s| &s.0).find(|s| {
            s.compare_exchange(FREE, now, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        });
        Mark { slot }
    }

    /// The worker starts a pass: nothing it read before is still in use.
    #[inline(always)]
    pub fn quiescent(&self) {
        if let Some(s) = self.slot {
            s.store(EPOCH.load(Ordering::Acquire), Ordering::Release);
        }
    }
}

impl Default for Mark {
    fn default() -> Self {
        Mark::new()
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        if let Some(s) = self.slot {
            s.store(FREE, Ordering::Release);
        }
    }
}

/// What must pass before memory that workers may be reading now is freed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

/// A ticket for memory that workers may be reading now.
pub fn ticket() -> Ticket {
    Ticket(EPOCH.fetch_add(1, Ordering::AcqRel) + 1)
}

impl Ticket {
    /// Whether every worker that holds a mark has started a pass since the
    /// ticket was taken (or let its mark go).
    pub fn elapsed(&self) -> bool {
        SLOTS.iter().all(|s| {
            let seen = s.0.load(Ordering::Acquire);
            seen == FREE || seen >= self.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_waits_for_every_marked_worker() {
        let (a, b) = (Mark::new(), Mark::new());
        let t = ticket();
        assert!(!t.elapsed(), "neither has passed");
        a.quiescent();
        assert!(!t.elapsed(), "b has not passed");
        b.quiescent();
        assert!(t.elapsed());
        // A later ticket waits again; a worker that goes away is not waited for.
        let t2 = ticket();
        assert!(!t2.elapsed());
        a.quiescent();
        drop(b);
        assert!(t2.elapsed());
        assert!(t.elapsed());
    }
}
