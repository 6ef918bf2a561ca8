//! The mwrouter daemon, `mwrouterd`, as a library (docs/architecture.md
//! "Threads and data flow"; docs/daemon.md).
//!
//! - [`config`]: the configuration file, its checks and what a reload may
//!   change (docs/configuration.md);
//! - [`plane`]: the control-plane thread, which runs the RRP engine
//!   ([`rrp::router::Router`]) on the punted packets and notices of the
//!   workers' rings and on its timers, publishes the FIBs the engine
//!   computes to the workers, and injects the packets the engine sends;
//! - [`daemon`]: the daemon itself: ports, workers, the control plane, the
//!   admin socket (the daemon's [`admin::Backend`]), signals;
//! - [`stats`]: the workers' counters published to the stats area, and
//!   the Prometheus listener;
//! - [`punt_log`]: the log lines of floods of packets for the box, within
//!   the log's rate limit ([`log_limit`]).

pub mod config;
pub mod daemon;
pub mod log_limit;
pub mod management;
pub mod partition_guard;
pub mod partitions;
pub mod plane;
pub mod punt_log;
pub mod stats;

pub use admin::stats::PlaneStats;
pub use plane::{ControlPlane, PlaneError, PlaneHandle};
