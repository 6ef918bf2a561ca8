//! Limits shared by the codec users, the dataplane and the control plane
//! (docs/architecture.md "Source routes").

/// Routes longer than this many L2RHs are neither offered (RRP#2) nor
/// forwarded (drop reason too-many-l2rh).
pub const MAX_L2RHS: usize = 8;

/// RCVF lists are capped at this many entries; longer RTs are refused.
pub const MAX_RCVF: usize = 32;

/// HRs (ports) one box holds at most: the engine computes a destination's
/// rows on every port in one pass over fixed-size state.
pub const MAX_HRS: usize = 64;
