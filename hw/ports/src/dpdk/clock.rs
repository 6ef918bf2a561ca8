//! The TSC as a [`Clock`]: a cheap nanosecond time source for code that runs
//! on DPDK lcores (packet generators stamping every burst).

use dpdk_sys as sys;

use crate::clock::Clock;

/// Nanoseconds from the time-stamp counter, counted from creation, at the
/// frequency EAL measured (`rte_get_tsc_hz`). Needs EAL initialised.
#[derive(Debug, Clone, Copy)]
pub struct TscClock {
    start: u64,
    /// Nanoseconds per cycle, as a 32.32 fixed-point number.
    mult: u64,
}

impl TscClock {
    /// A clock from now; `None` when EAL has not measured the TSC (not
    /// initialised).
    pub fn new() -> Option<TscClock> {
        let hz = sys::mw_get_tsc_hz();
        if hz == 0 {
            return None;
        }
        Some(TscClock {
            start: sys::mw_get_tsc_cycles(),
            mult: ((1_000_000_000u128 << 32) / u128::from(hz)) as u64,
        })
    }
}

impl Clock for TscClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        let c = sys::mw_get_tsc_cycles().wrapping_sub(self.start);
        ((u128::from(c) * u128::from(self.mult)) >> 32) as u64
    }
}
