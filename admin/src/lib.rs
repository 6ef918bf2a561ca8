//! The mwrouter admin protocol (docs/admin-protocol.md): how `mwctl` (and
//! any other client) talks to the daemon over a UNIX stream socket, one
//! JSON request per line and one JSON response per line, and how the
//! daemon's counters reach readers through the stats area (docs/stats.md).
//! It depends on the protocol crate (`rrp`) and not on the dataplane, so
//! that the CLI builds without it (docs/architecture.md "Crates").
//!
//! - [`proto`]: the messages (requests, commands, responses, error codes,
//!   capture items) and the protocol's limits;
//! - [`view`]: the shapes of the answers, and their construction from the
//!   RRP engine;
//! - [`mad`]: the `mad` command (its query is [`proto::mad`]): in-band
//!   management requests and answers;
//! - [`dispatch`]: the one place where commands are answered, over the
//!   [`dispatch::Backend`] a box provides;
//! - [`sample`]: a sample box behind the same dispatcher (tests, docs);
//! - [`policy`]: peer credentials (`SO_PEERCRED`) and the access policy;
//! - [`server`]: the socket server and the [`server::Handler`] it serves;
//! - [`client`]: the client end of the socket;
//! - [`stats`]: the stats area's layout, writer and readers, snapshots and
//!   the Prometheus exposition.

pub mod client;
pub mod dispatch;
pub mod fuzzing;
pub mod mad;
pub mod policy;
pub mod proto;
pub mod sample;
pub mod server;
pub mod stats;
pub mod view;

pub use client::{Client, ClientError};
pub use dispatch::{Backend, Dispatcher};
pub use policy::{Peer, Policy};
pub use proto::{
    AdminError, AdminErrorCode, Command, LogLevel, PortState, Privilege, Request, Response,
};
pub use server::{Handler, ServerConfig, ServerHandle, StreamOut, serve};
