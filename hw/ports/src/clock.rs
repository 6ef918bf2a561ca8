//! Time sources in nanoseconds for the code that paces, stamps or delays
//! packets: the [`Clock`] trait, the machine's [`MonotonicClock`], and a
//! [`TestClock`] that moves only when told to (tests share one with the
//! impairment layer, [`crate::impair`], and with packet generators). The
//! TSC clock of DPDK lcores is `dpdk::TscClock`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A source of time in nanoseconds.
pub trait Clock: Send + Sync {
    /// Nanoseconds since an arbitrary, fixed origin; never decreases.
    fn now_ns(&self) -> u64;
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
}

/// The machine's monotonic clock, counted from the moment of creation.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    start: Instant,
}

impl MonotonicClock {
    /// A clock that reads 0 now.
    pub fn new() -> MonotonicClock {
        MonotonicClock {
            start: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock::new()
    }
}

impl Clock for MonotonicClock {
    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

/// A clock that moves only when told to. Clones share the same time, so
/// that a test, the impairment layer and a packet generator can read one
/// clock.
#[derive(Debug, Clone, Default)]
pub struct TestClock(Arc<AtomicU64>);

impl TestClock {
    /// A clock at 0.
    pub fn new() -> TestClock {
        TestClock::default()
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.advance_ns(d.as_nanos() as u64);
    }

    /// Moves the clock forward by `ns` nanoseconds.
    pub fn advance_ns(&self, ns: u64) {
        self.0.fetch_add(ns, Ordering::AcqRel);
    }

    /// Sets the clock to `ns`; panics if that would move it backwards.
    pub fn set_ns(&self, ns: u64) {
        let old = self.0.swap(ns, Ordering::AcqRel);
        assert!(
            ns >= old,
            "a TestClock never goes backwards ({old} -> {ns})"
        );
    }
}

impl Clock for TestClock {
    fn now_ns(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}
