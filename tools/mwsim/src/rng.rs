//! The simulator's only source of randomness: the project's seeded
//! generator ([`rrp::rng::Rng`]), so that a seed replays a run exactly.

use rrp::rng::{GOLDEN, Rng};

/// The generator of a run with seed `seed` (the seed is mixed once, so
/// that small seeds do not start from small states).
pub fn seeded(seed: u64) -> Rng {
    Rng::new(seed ^ GOLDEN)
}
