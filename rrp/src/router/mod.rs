//! The RRP control plane as a sans-IO engine (docs/architecture.md "Route tables and
//! RRP"): [`Router`] runs a whole box; its host feeds it punted packets,
//! dataplane notices, port events and the time, and carries out its
//! [`Output`]s. [`engine`] holds the `Router` and says which module does
//! which part of its work.

mod advertise;
mod answer;
pub mod auth;
pub mod config;
mod down;
pub mod engine;
pub mod event;
mod fib;
mod guard;
mod intern;
pub mod leave;
mod lrt;
pub mod mcast;
pub mod notice;
mod notice_answers;
mod receive;
mod rt;
mod select;
pub mod stats;
mod table;
mod timers;

pub use answer::RouteInfo;
pub use auth::Admission;
pub use config::{
    AuthConfig, AuthKey, ConfigError, ErrorRates, HrConfig, Limits, RouterConfig, StaticNode,
    Timers,
};
pub use engine::{Output, Router, Time, with_destination};
pub use event::{AuthRefusal, Event, EventKind, RefusalCounts, RtRefusal};
pub use intern::Interner;
pub use leave::{LeaveConfig, Q_WORST, Standing};
pub use lrt::{LrtEntry, StaticRefusal};
pub use mcast::{McastGroup, McastRefusal, McastTables, PortMask, SourceSan};
pub use notice::{NOTICE_BYTES, Notice, NoticeKind};
pub use rt::{NodeEntry, NodeList, Origin, Rt};
pub use stats::RouterStats;
pub use table::{FibEntry, Next, RouteTables};
