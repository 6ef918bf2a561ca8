//! The time-stamp counter, for the cycle accounting of workers
//! (docs/stats.md "Workers"): [`cycles`] reads it (one instruction, no
//! system call) and [`hz`] is its rate, measured once per process against
//! the monotonic clock. On machines without a TSC (not x86-64) the
//! monotonic clock stands in, in nanoseconds at 1 GHz.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long [`hz`] measures the counter against the monotonic clock: long
/// enough for a rate within 0.01 % (the clock's microsecond-scale jitter
/// over 20 ms), short enough for a daemon's start.
const CALIBRATION: Duration = Duration::from_millis(20);

/// The time-stamp counter now (cycles from an arbitrary origin; constant
/// rate on machines with `constant_tsc`, which every x86-64 server of the
/// last decade has).
#[inline(always)]
pub fn cycles() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC reads a register, touches no memory and is present
        // on every x86-64 processor.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns()
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn monotonic_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The counter's rate in cycles a second, measured on the first call
/// (blocking for [`CALIBRATION`]) and kept for the process.
pub fn hz() -> u64 {
    static HZ: OnceLock<u64> = OnceLock::new();
    *HZ.get_or_init(measure)
}

fn measure() -> u64 {
    if !cfg!(target_arch = "x86_64") {
        return 1_000_000_000;
    }
    let (t0, c0) = (Instant::now(), cycles());
    std::thread::sleep(CALIBRATION);
    let (t1, c1) = (Instant::now(), cycles());
    let ns = (t1 - t0).as_nanos().max(1);
    (u128::from(c1.wrapping_sub(c0)) * 1_000_000_000 / ns) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_moves_forward_at_a_plausible_rate() {
        let a = cycles();
        std::thread::sleep(Duration::from_millis(2));
        let b = cycles();
        assert!(b > a);
        let hz = hz();
        // Any processor of this century: between 100 MHz and 10 GHz.
        assert!((100_000_000..10_000_000_000).contains(&hz), "{hz}");
        assert_eq!(hz, super::hz(), "measured once");
    }
}
