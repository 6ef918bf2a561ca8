//! The mwrouter daemon's library (DESIGN.md "Threads and data flow").
//!
//! [`plane`] runs the RRP engine ([`rrp::router::Router`]) on its own
//! thread: it takes punted packets and notices from the workers' rings,
//! runs the engine's timers, publishes the FIBs the engine computes to the
//! workers, and injects the packets the engine sends through a worker.
//! Configuration files, the admin socket and the daemon itself come with
//! the daemon's issue.

pub mod admin;
pub mod config;
pub mod daemon;
pub mod plane;
pub mod stats;

pub use plane::{ControlPlane, PlaneError, PlaneHandle, PlaneStats};
