//! The MessageWay protocol without I/O.
//!
//! MessageWay (draft-ietf-msgway-protocol-spec-00, December 1995) moves
//! packets between System Area Networks through routers. This crate holds
//! its wire formats (Part-1: the EEP header, trailer and L2RHs; Part-3: the
//! RRP records R1-R8 and messages RRP#1-#9 and ERR), the address, packet-type
//! and error-code assignments of docs/architecture.md "Wire", and the
//! concepts shared by the dataplane and the control plane (docs/architecture.md
//! "Crates"). Readings of the draft that the code
//! follows are in `docs/spec-notes.md`.

// The counter-set and named-enum macros name the crate by its path, as
// other crates see it.
extern crate self as rrp;

pub mod address;
pub mod auth;
pub mod code_points;
pub mod counters;
pub mod drop_reason;
pub mod encap;
pub mod endian;
pub mod error;
pub mod fuzzing;
pub mod fxhash;
pub mod kind;
pub mod limits;
pub mod located_error;
pub mod named_enum;
pub mod native;
pub mod node;
pub mod partition_mark;
pub mod port;
pub mod punt_budget;
pub mod punt_class;
pub mod punt_source;
pub mod rate;
pub mod rng;
pub mod route;
pub mod router;
pub mod serial;
pub mod wire;

pub use address::{Address, AddressClass};
pub use counters::{LinkStats, PortStats};
pub use drop_reason::{DropCounts, DropReason};
pub use encap::LinkKind;
pub use endian::{Endian, SwapWidth};
pub use error::{Error, ErrorKind, Result};
pub use kind::{CapabilityCode, ErrorCode, PacketClass, PacketType, RrpType};
pub use native::NativeAddr;
pub use partition_mark::PartitionMark;
pub use port::{PerPort, PortId};
pub use punt_budget::{PuntBudget, PuntBudgets};
pub use punt_class::{PuntClass, PuntCounts};
pub use punt_source::PuntSource;
