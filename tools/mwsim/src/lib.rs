//! mwsim: a deterministic simulator of a whole MessageWay — the RRP control
//! plane of every router, the forwarding decision of every router, and the
//! hosts — on virtual time, with seeded faults. Used by the control plane's
//! tests and, as the `mwsim` command, by network designers.

pub mod cli;
pub mod rng;
pub mod sim;
pub mod topology;

pub use sim::{Member, Sim, SimConfig, SimStats, TraceItem, Walk, host_identity, native_of};
pub use topology::Topology;
