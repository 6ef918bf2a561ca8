//! The mwrouter forwarding engine (docs/architecture.md "Threads and data flow").
//!
//! - [`engine`]: the per-packet decision over bursts (L2RH strip, L3 lookup,
//!   EI shift-and-OR, MTU check, punt, drop by reason);
//! - [`fib`]: the per-ingress-HR FIBs and their lock-free publication;
//! - [`buddies`]: the buddies each HR knows, published with the FIBs, by
//!   which punted RRP and ERR are classed;
//! - [`punt`]: the rings between workers and the control thread (punts,
//!   notices, injections), bounded and rate-limited;
//! - [`wake`]: how a worker wakes the sleeping control thread after it
//!   punted;
//! - [`counters`]: per-worker, per-port counters and their publication;
//! - [`capture`]: copies of received or dropped packets for `mwctl capture`;
//! - [`trace`]: what was decided for the next N matching packets, for
//!   `mwctl trace-packets`;
//! - [`worker`]: the polling loop on a (pinned) core.
//!
//! Generic over the port backend ([`ports::Port`]).

pub mod buddies;
pub mod capture;
pub mod counters;
pub mod engine;
pub mod fib;
pub mod mcast;
pub mod partition_drops;
pub mod partitions;
pub mod punt;
pub mod trace;
pub mod wake;
pub mod worker;

pub use buddies::Buddies;
pub use capture::{CaptureControl, CaptureTap, CaptureWhat, Captured, capture_rings};
pub use counters::StatsBlock;
pub use engine::{Decision, Engine, EngineConfig, NextNative};
pub use fib::{FibPublisher, FibReader, FibSet, NextHop, fib_channel, from_route_tables, patched};
pub use mcast::{McastFib, McastVerdict};
pub use partitions::{Crossing, PartitionGuard, Refusal, RefusedAt, SanPartitions};
pub use punt::{ChannelConfig, ControlChannels, Injection, Punt, PuntClass, PuntMeta, channels};
pub use trace::{
    LookupEntry, TRACE_RING, TraceControl, TraceFilter, TraceKind, TraceLookup, TraceRecord,
    TraceTap, TraceVerdict, trace_rings,
};
pub use wake::Wake;
pub use worker::{IdlePolicy, Worker};
