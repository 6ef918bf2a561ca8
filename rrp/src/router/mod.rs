//! The RRP control plane as a sans-IO engine (docs/architecture.md "Route tables and
//! RRP"): [`Router`] runs a whole box; its host feeds it punted packets,
//! dataplane notices, port events and the time, and carries out its
//! [`Output`]s.

pub mod config;
pub mod engine;
pub mod event;
pub mod notice;

pub use config::{ConfigError, ErrorRates, HrConfig, Limits, RouterConfig, StaticNode, Timers};
pub use engine::{
    FibEntry, LrtEntry, Next, NodeEntry, Origin, Output, RouteInfo, RouteTables, Router, Rt, Time,
};
pub use event::{Event, RouterStats, RtRefusal};
pub use notice::{NOTICE_BYTES, Notice, NoticeKind};
