//! Limits shared by the codec users, the dataplane and the control plane
//! (docs/architecture.md "Source routes").

/// Routes longer than this many L2RHs are neither offered (RRP#2) nor
/// forwarded (drop reason too-many-l2rh).
pub const MAX_L2RHS: usize = 8;

/// RCVF lists are capped at this many entries; longer RTs are refused.
pub const MAX_RCVF: usize = 32;

/// Ports (= HRs) one box has at most, the one bound every layer sizes its
/// per-port state by: the engine computes a destination's rows on every
/// port in one pass over fixed-size state, the forwarding path keeps each
/// port's address and MTU in fixed arrays and a group's branches in a
/// [`crate::router::PortMask`] (a const assertion there ties its width to
/// this), and the daemon's configuration refuses more `[[hr]]`
/// (docs/configuration.md).
///
/// 16: what the daemon has always accepted and the dataplane's arrays have
/// held; a box of the draft attaches a handful of SANs (the routers of
/// mwsim's random topologies have 2 to 4 HRs, those of the shipped
/// examples at most 3), and a NIC-based appliance has a few ports.
pub const MAX_PORTS: usize = 16;

/// The most dataplane workers of one box (DPDK's lcore limit): the
/// configuration's bound on `workers.count` and the stats area's room.
pub const MAX_WORKERS: usize = 128;
