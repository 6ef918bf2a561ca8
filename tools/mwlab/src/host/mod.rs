//! The host role: a real MessageWay end node of the lab, in its own process.
//!
//! A host is a node of Level A, B or C ([`rrp::node::Level`], Part-2 "node
//! levels") on one SAN ([`HostLink`]): a UDP SAN on loopback (docs/architecture.md
//! "Wire": one MessageWay packet per datagram) or an Ethernet SAN, where it
//! sends and receives Ethernet II frames (EtherType 0x88B5, padded to 60
//! bytes, the end of a packet taken from its DL) on one interface through
//! the AF_PACKET backend of `ports` (`mwlab --netns`: the host runs inside
//! its own network namespace, the interface a veth whose peer is on the
//! SAN's bridge). Its native address is its UDP endpoint or the interface's
//! MAC. Routers (mwrouterd processes) sweep the SAN with RRP#7s to each
//! member; the host answers them (Level B
//! and C, as [`rrp::node::Node`] does), learns what routers tell it (RRP#2
//! routes, RRP#3 redirects, ERR UNK/HRDOWN/LINKDOWN/GENERAL) and sends and
//! receives mwgen probes ([`mwgen::probe`]) so that the lab can measure
//! loss, duplication, reordering and latency end to end.
//!
//! # Threads
//! [`run`] holds everything in one [`std::thread::scope`]:
//! - the receive loop owns the link's receive side (short timeout, so that
//!   a stop is seen), feeds [`Node::handle_packet`], sends replies to the
//!   packet's sender (its native source) and counts every packet exactly
//!   once;
//! - the control listener accepts connections on a UNIX stream socket; each
//!   connection is served by its own thread (JSON lines, see below);
//! - each `send`/`send_l2` runs in a background thread of its own.
//!
//! State is shared behind one [`Mutex`] (a lab host, not the fast path); a
//! [`Condvar`] wakes requests waiting for an answer (`route`, `which_hr`).
//!
//! On UDP the socket is shared as is (`recv_from` and `send_to` take
//! `&self`). On Ethernet there is one [`AfPacketPort`] (a [`Port`], which
//! needs `&mut`) behind its own [`Mutex`]: the receive loop polls a
//! duplicate of the port's descriptor *without* the lock (50 ms timeout)
//! and takes the lock only for `rx_burst` and for handing the buffers back;
//! senders (replies, control requests, `send` threads) take it for
//! `alloc`/`encap`/`tx_burst`. One port rather than a receive port and a
//! transmit port: a second packet socket bound to the EtherType would get a
//! copy of every MessageWay frame in its receive ring too; left unread, that
//! ring fills and the kernel then drops its copies (harmless, but a second
//! ring of memory and a second copy per frame for nothing).
//!
//! The control protocol (what a host is asked, what `stats` reports) is
//! described in `control.rs`; how probes are numbered, in `send.rs`.
//!
//! Files: `spec` (what a host is), `link` (its link to its SAN), `state`
//! (the running host and what its threads share), `receive` and `send`
//! (its traffic, counted in `traffic`), `impair` (its receive side's
//! impairment), `groups` (joining and leaving), `control` (the control
//! protocol) and `client` (its other end), `format` (addresses and routes
//! as text), [`management`] (in-band management) and `host_side` (what
//! management sees of the host), `process` ([`run`]).
//!
//! [`AfPacketPort`]: ports::af_packet::AfPacketPort
//! [`Port`]: ports::Port
//! [`Mutex`]: std::sync::Mutex
//! [`Condvar`]: std::sync::Condvar
//! [`Node::handle_packet`]: rrp::node::Node::handle_packet

mod client;
mod control;
mod format;
mod groups;
mod host_side;
mod impair;
mod link;
pub mod management;
mod partitions;
mod process;
mod receive;
mod send;
mod spec;
mod state;
mod traffic;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use client::Client;
pub use format::{format_hop, format_hop_on, format_native, format_route, format_route_on};
pub use process::{main_from_spec_file, run};
pub use send::REDIRECT_TTL;
pub use spec::{HostLink, HostSpec, auth_config, interface_mac, read_spec};

/// How long the receive loop and the control threads block before they look
/// at the stop flags again.
const POLL: Duration = Duration::from_millis(50);

/// Wall-clock nanoseconds: the clock probes carry (shared by every process
/// of the lab, unlike a process's `Instant`).
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
