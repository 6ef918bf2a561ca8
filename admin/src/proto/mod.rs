//! The admin protocol's messages (docs/admin-protocol.md).
//!
//! One JSON object per line each way. A request carries the protocol
//! version `v`, an optional `id` the answer echoes, and a command tagged by
//! `cmd` whose fields sit beside `v` and `id`:
//!
//! ```text
//! {"v":1,"id":7,"cmd":"show","what":"lrt","port":0}
//! {"v":1,"id":7,"ok":true,"result":[...]}
//! {"v":1,"id":7,"ok":false,"error":{"code":"forbidden","message":"..."}}
//! ```
//!
//! A streaming command (`capture`, `trace_packets`) is answered by several
//! lines: each but the last has `"more":true`.
//!
//! Files: `command` (the commands and who may run them), `mad` (the `mad`
//! command's query), `request`, `response`, `error` (the error codes),
//! `capture` (a capture's request and streamed items), `trace` (a packet
//! trace's request and streamed items), `port` (a port as commands name
//! it), `config` (reloads, the kept configurations, `write`), `base64`.

mod base64;
mod capture;
mod command;
mod config;
mod error;
pub mod mad;
mod port;
mod request;
mod response;
mod trace;

pub use base64::{base64_decode, base64_encode};
pub use capture::{CaptureEvent, CaptureRequest, CaptureSummary, CapturedPacket, Direction};
pub use command::{Clear, Command, LogLevel, PortState, Privilege, RouteOp, Show, StatsFormat};
pub use config::{
    HistoryEntry, MAX_CONFIRM_S, ReloadAnswer, ReloadRequest, Requester, WriteAnswer,
};
pub use error::{AdminError, AdminErrorCode};
pub use port::PortSpec;
pub use request::{BadRequest, Request};
pub use response::{Response, object};
pub use trace::{
    TraceEvent, TraceKind, TraceRequest, TraceSummary, TracedEntry, TracedHop, TracedLookup,
    TracedPacket, TracedVerdict,
};

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest request or response line, newline included (64 KiB).
/// A longer request is refused with [`AdminErrorCode::TooLong`] and the
/// connection closed. Streamed packets are cut to fit (see
/// [`CAPTURE_MAX_SNAPLEN`]).
pub const MAX_LINE: usize = 64 * 1024;

/// The largest snap length a capture may ask for: a captured packet's
/// base64 text then still fits one line.
pub const CAPTURE_MAX_SNAPLEN: u32 = 16 * 1024;

/// The most packets one `trace_packets` may ask for: a trace is for
/// looking at particular packets, and each costs the forwarding path a
/// record built on its cold path and the admin thread a line (a larger
/// count is refused with `bad_request`).
pub const TRACE_MAX_COUNT: u32 = 10_000;

/// For serde's `skip_serializing_if`: a flag that is off.
fn is_false(b: &bool) -> bool {
    !*b
}
