//! [`SharedCounters`]: counter sets that one thread keeps and others read,
//! without locks (the workers' counter blocks, the control thread's
//! counters; docs/architecture.md "Threads and data flow").

use core::fmt;
use core::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use super::CounterSet;

/// A copy of `n` counter sets (one per port, one per group, or just one)
/// that their one owner stores now and then and any thread loads: one
/// single-writer atomic per value, so that no value is ever torn; a load
/// may mix two stores (each value whole), which counters that only grow
/// tolerate.
pub struct SharedCounters<T: CounterSet> {
    slots: Box<[AtomicU64]>,
    set: PhantomData<fn() -> T>,
}

impl<T: CounterSet> SharedCounters<T> {
    /// `n` sets, all zero.
    pub fn new(n: usize) -> SharedCounters<T> {
        SharedCounters {
            slots: (0..n * T::SLOTS).map(|_| AtomicU64::new(0)).collect(),
            set: PhantomData,
        }
    }

    /// How many sets.
    pub fn len(&self) -> usize {
        self.slots.len() / T::SLOTS
    }

    /// Whether there is no set.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Stores `sets` from the first on (by the owner); sets beyond
    /// [`SharedCounters::len`] are left out.
    pub fn store(&self, sets: &[T]) {
        for (shared, set) in self.slots.chunks(T::SLOTS).zip(sets) {
            for (a, v) in shared.iter().zip(set.slots()) {
                a.store(*v, Ordering::Relaxed);
            }
        }
    }

    /// Stores set `i` (by the owner); nothing beyond
    /// [`SharedCounters::len`].
    pub fn store_at(&self, i: usize, set: &T) {
        if let Some(shared) = self.slots.chunks(T::SLOTS).nth(i) {
            for (a, v) in shared.iter().zip(set.slots()) {
                a.store(*v, Ordering::Relaxed);
            }
        }
    }

    /// Set `i` as last stored (zero beyond [`SharedCounters::len`]).
    pub fn load(&self, i: usize) -> T {
        let mut set = T::default();
        if let Some(shared) = self.slots.chunks(T::SLOTS).nth(i) {
            for (v, a) in set.slots_mut().iter_mut().zip(shared) {
                *v = a.load(Ordering::Relaxed);
            }
        }
        set
    }

    /// Every set as last stored.
    pub fn load_all(&self) -> Vec<T> {
        (0..self.len()).map(|i| self.load(i)).collect()
    }
}

impl<T: CounterSet> fmt::Debug for SharedCounters<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.load_all()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::PortStats;

    #[test]
    fn stores_and_loads_whole_sets() {
        let s = SharedCounters::<PortStats>::new(2);
        let mut p = PortStats {
            received: 3,
            strangers: 4,
            ..PortStats::default()
        };
        p.dropped[crate::DropReason::SpoofedSource] = 5;
        s.store(&[PortStats::default(), p, p]);
        assert_eq!(s.len(), 2);
        assert_eq!(s.load(1), p);
        assert_eq!(s.load_all(), vec![PortStats::default(), p]);
        assert_eq!(s.load(7), PortStats::default());
    }
}
