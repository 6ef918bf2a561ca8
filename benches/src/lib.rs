//! mwrouter benchmarks (DESIGN.md "Workspace").
//!
//! - [`port`]: an in-memory port for benchmarks whose transmit feeds its own
//!   receive and which restores every packet to its original form on
//!   receive, so that buffers circulate for ever;
//! - [`scenario`]: the engine benchmark's box (4 ports), full FIB, packets
//!   (L3 and L2 at 64 and 1500 bytes), the baseline step and the
//!   rx -> process -> tx loop shared by the `engine-bench` binary and the
//!   criterion benchmarks;
//! - [`sysinfo`]: what the reports say about the machine and the build;
//! - [`e2e`]: the end-to-end benchmark against dpdk-testpmd and with the
//!   generator (binary `e2e`, run through the `benches/e2e` wrapper).

pub mod e2e;
pub mod port;
pub mod scenario;
pub mod sysinfo;

/// A small seeded generator (SplitMix64): reproducible packets and routes
/// without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator with seed `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// SplitMix64's finaliser: a good 64-bit hash of `z`.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The median of `v` (the mean of the middle two for an even count); 0 when empty.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| r.below(7) < 7));
    }
}
