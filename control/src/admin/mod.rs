//! The admin socket (docs/admin-protocol.md): `mwctl` talks to the daemon
//! over a UNIX stream socket, one JSON request per line, one JSON response
//! per line.
//!
//! - [`proto`]: the messages (requests, commands, responses, error codes,
//!   capture items) and the protocol's limits;
//! - [`view`]: the shapes of the answers, and their construction from the
//!   RRP engine and the dataplane counters;
//! - [`policy`]: peer credentials (`SO_PEERCRED`) and the access policy;
//! - [`server`]: the server and the [`server::Handler`] the daemon plugs in;
//! - [`sample`]: a handler with canned data (tests, docs, trying `mwctl`).

pub mod policy;
pub mod proto;
pub mod sample;
pub mod server;
pub mod view;

pub use policy::{Peer, Policy};
pub use proto::{AdminError, Command, ErrorCode, Privilege, Request, Response};
pub use server::{Handler, ServerConfig, ServerHandle, StreamOut, serve};
