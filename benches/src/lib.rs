//! mwrouter benchmarks (docs/architecture.md "Crates").
//!
//! - [`port`]: an in-memory port for benchmarks whose transmit feeds its own
//!   receive and which restores every packet to its original form on
//!   receive, so that buffers circulate for ever;
//! - [`scenario`]: the engine benchmark's box (4 ports), full FIB, packets
//!   (L3 and L2 at 64 and 1500 bytes), the baseline step and the
//!   rx -> process -> tx loop shared by the `engine-bench` binary and the
//!   criterion benchmarks;
//! - [`manager_scale`]: the SAN manager on a simulated SAN of 1,000 and
//!   more members (binary `manager-scale`);
//! - [`mcast`]: the multicast variant: group packets into port 0 of a
//!   5-port box, replicated to the 4 others, in memory (copies) and on DPDK
//!   vdevs (feature `dpdk`: chains, zero copy);
//! - [`sysinfo`]: what the reports say about the machine and the build;
//! - [`e2e`]: the end-to-end benchmark against dpdk-testpmd and with the
//!   generator (binary `e2e`, run through the `benches/e2e` wrapper).

pub mod e2e;
pub mod manager_scale;
pub mod mcast;
pub mod port;
pub mod scaling;
pub mod scenario;
pub mod sysinfo;

pub use rrp::rng::{Rng, mix64};

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
