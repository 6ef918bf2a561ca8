//! MessageWay in-band management without I/O (docs/management.md).
//!
//! Management packets are EEP packets of packet type 0x0006 whose data
//! block is one 256-byte management datagram (MAD), InfiniBand's format with
//! InfiniBand's terms mapped onto MessageWay. This crate holds, like `rrp`,
//! the formats and the protocol engines and no I/O: hosts feed packets and
//! the time in and carry out what comes back:
//!
//! - [`wire`]: the MAD's zero-copy view ([`wire::Mad`]) and owned form
//!   ([`wire::MadRepr`]), classes, methods and status, the directed-route
//!   path areas, and the EEP packet around a MAD;
//! - [`attr`]: every attribute layout of docs/management.md "Attributes",
//!   each an owned struct with `parse` and `emit`;
//! - [`error`]: typed errors that name the field and its byte offset;
//! - [`agent`]: the agent a router or host runs: attributes, Sets,
//!   M_Key, traps, relaying directed routes, the response cache;
//! - [`client`]: the asking side: transactions, TIDs, retries, time-outs;
//! - [`manager`]: the SAN manager (docs/manager.md), InfiniBand's subnet
//!   manager for one SAN: the election of a master among standbys,
//!   failover and handover, the SM key, the master's database of the SAN's
//!   members, address assignment, the SubnAdm answers and the SAN's
//!   multicast groups (docs/multicast.md);
//! - [`perfmgr`]: the fabric's performance manager (docs/management.md
//!   "Fabric performance manager"): every node's PortCounters each
//!   interval, in parallel, totals kept across resets, one snapshot;
//! - [`station`]: a node's agent, client and SAN managers joined the same
//!   way in every node (docs/management.md "The station"): a request for
//!   the node itself answered without leaving it, the rest sent by the
//!   node's routes; mwrouterd's control thread and mwlab's hosts are its
//!   carriers;
//! - [`partition`]: partitions (InfiniBand's P_Key): which nodes may talk
//!   to which, and the partitions file a SAN's master reads;
//! - [`subscriptions`]: a table of event subscriptions (InformInfo) with
//!   leases, kept by a SAN's master and by an agent that is not one, and
//!   the events both report of it (docs/management.md "Events");
//! - [`simsan`]: a SAN of stations in memory on explicit time, for the
//!   tests and the SAN manager's measurements at 1,000 and more members;
//! - [`fuzzing`]: the fuzz body shared by the cargo-fuzz target and the
//!   stable corpus replay.
//!
//! Only this crate (and `rrp::wire` for the EEP packet) knows a MAD's byte
//! offsets (docs/architecture.md "Wire").

pub mod agent;
pub mod attr;
pub mod client;
pub mod error;
pub mod fuzzing;
pub mod manager;
pub mod partition;
pub mod perfmgr;
pub mod simsan;
pub mod station;
pub mod subscriptions;
pub mod wire;

#[cfg(feature = "serde")]
mod serde_util;

pub use error::{Error, ErrorKind, Result};
