//! [`SharedCounters`]: a counter set that one thread keeps and others read,
//! without locks (the workers' counter blocks, the control thread's
//! counters; docs/architecture.md "Threads and data flow").

use core::fmt;
use core::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use super::CounterSet;

/// A copy of a counter set that its one owner stores now and then and any
/// thread loads: one single-writer atomic per slot, so that no value is
/// ever torn; a load may mix two stores (each value whole), which counters
/// that only grow tolerate.
pub struct SharedCounters<T: CounterSet> {
    slots: Box<[AtomicU64]>,
    set: PhantomData<fn() -> T>,
}

impl<T: CounterSet> SharedCounters<T> {
    /// All zero.
    pub fn new() -> SharedCounters<T> {
        SharedCounters {
            slots: (0..T::SLOTS).map(|_| AtomicU64::new(0)).collect(),
            set: PhantomData,
        }
    }

    /// Stores `v` (by its one owner).
    pub fn store(&self, v: &T) {
        for (a, s) in self.slots.iter().zip(v.slots()) {
            a.store(*s, Ordering::Relaxed);
        }
    }

    /// The values last stored.
    pub fn load(&self) -> T {
        let mut v = T::default();
        for (s, a) in v.slots_mut().iter_mut().zip(self.slots.iter()) {
            *s = a.load(Ordering::Relaxed);
        }
        v
    }
}

impl<T: CounterSet> Default for SharedCounters<T> {
    fn default() -> Self {
        SharedCounters::new()
    }
}

impl<T: CounterSet> fmt::Debug for SharedCounters<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.load(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::PortStats;

    #[test]
    fn stores_and_loads_the_whole_set() {
        let s = SharedCounters::<PortStats>::new();
        let mut p = PortStats {
            received: 3,
            strangers: 4,
            ..PortStats::default()
        };
        p.dropped[crate::DropReason::SpoofedSource] = 5;
        s.store(&p);
        assert_eq!(s.load(), p);
    }
}
