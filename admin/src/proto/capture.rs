//! `capture`: its request, checked, and the items it streams
//! (docs/admin-protocol.md "Capture").

use std::collections::BTreeMap;

use rrp::{Address, PortId};
use serde::{Deserialize, Serialize};

use super::CAPTURE_MAX_SNAPLEN;
use super::base64::{base64_decode, base64_encode};
use super::command::Command;
use super::error::AdminError;
use super::port::PortSpec;

/// Direction of a captured packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Received on the port.
    Rx,
    /// Transmitted on the port.
    Tx,
}

/// A `capture` command's request, checked: what every handler of the
/// command serves (the daemon, the sample).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureRequest {
    /// The port.
    pub port: PortSpec,
    /// Stop after this many packets (`None`: until the client leaves).
    pub count: Option<u64>,
    /// Also the packets dropped on the port, with their reasons.
    pub drops: bool,
    /// What the port transmits instead of what it receives.
    pub transmitted: bool,
    /// Bytes kept of each packet (at most [`CAPTURE_MAX_SNAPLEN`]).
    pub snaplen: u32,
}

impl CaptureRequest {
    /// The request of `cmd`: `None` when it is not `capture`, a
    /// `bad-request` error when it asks for `drops` and `transmitted`
    /// together (checked before anything is streamed).
    pub fn of(cmd: &Command) -> Option<Result<CaptureRequest, AdminError>> {
        let Command::Capture {
            port,
            count,
            drops,
            transmitted,
            snaplen,
        } = cmd
        else {
            return None;
        };
        if *drops && *transmitted {
            return Some(Err(AdminError::bad_request(
                "capture: `drops` and `transmitted` exclude each other",
            )));
        }
        Some(Ok(CaptureRequest {
            port: *port,
            count: *count,
            drops: *drops,
            transmitted: *transmitted,
            snaplen: snaplen
                .unwrap_or(CAPTURE_MAX_SNAPLEN)
                .min(CAPTURE_MAX_SNAPLEN),
        }))
    }

    /// The direction of the packets it captures.
    pub fn direction(&self) -> Direction {
        if self.transmitted {
            Direction::Tx
        } else {
            Direction::Rx
        }
    }
}

/// A captured packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedPacket {
    /// Time, nanoseconds since the UNIX epoch.
    pub ts_ns: u64,
    /// Received or transmitted.
    pub dir: Direction,
    /// The packet's length on the wire (the data may be shorter: snap length).
    pub len: u32,
    /// The bytes kept, base64 (RFC 4648, with padding).
    pub data: String,
    /// The dataplane dropped it, for this reason (`no-route`, `mtu`, ...;
    /// the names of `rrp::DropReason::name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<String>,
}

impl CapturedPacket {
    /// A packet from its bytes, keeping at most `snaplen` of them.
    pub fn new(ts_ns: u64, dir: Direction, bytes: &[u8], snaplen: u32) -> CapturedPacket {
        let keep = bytes.len().min(snaplen as usize);
        CapturedPacket {
            ts_ns,
            dir,
            len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
            data: base64_encode(&bytes[..keep]),
            drop: None,
        }
    }

    /// The bytes kept.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        base64_decode(&self.data)
    }
}

/// The streamed items of a capture (each a `"more": true` line's result).
/// The final line's result is a [`CaptureSummary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CaptureEvent {
    /// First item: what the packets are.
    Start {
        /// The port.
        port: PortId,
        /// Its HR's address.
        hr: Address,
        /// pcap link type: 1 (Ethernet frames as on the wire) or 147
        /// (LINKTYPE_USER0: raw MessageWay packets, e.g. UDP payloads).
        linktype: u32,
        /// Bytes kept per packet.
        snaplen: u32,
    },
    /// A packet.
    Packet(CapturedPacket),
}

/// The final answer to a capture.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureSummary {
    /// Packets sent to the client.
    pub captured: u64,
    /// Packets the capture could not keep up with (not sent).
    #[serde(default)]
    pub lost: u64,
    /// Why the capture ended: `count` (reached), `client` (the client
    /// left), `stopped` (the daemon stops), `port` (the port went away).
    #[serde(default)]
    pub ended: String,
    /// Captured drops by reason (`--drops`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub drops: BTreeMap<String, u64>,
}
