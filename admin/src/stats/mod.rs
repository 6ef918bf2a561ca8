//! The stats area, the file through which the daemon's counters reach
//! `mwctl` and any other reader (docs/stats.md): its layout, its writer and
//! readers, the snapshot a reader gets, the baseline that `clear counters`
//! saves, and the Prometheus text exposition.
//!
//! ```text
//! workers --StatsBlock (single-writer atomics)--> control thread
//!   every ~100 ms: StatsWriter::publish -> stats file (fixed-layout u64 slots, seqlock)
//! mwctl / admin thread / exporter: StatsReader::read -> Snapshot
//!   displays: Snapshot::minus(&Baseline)      exports: prometheus(&Snapshot) (monotonic)
//! ```
//!
//! The area is a regular file of little-endian `u64` slots: a header (magic
//! `MWSTATS1`, layout version, a generation counter used as a seqlock, the
//! writer's start time, the publication time, the number of ports and of
//! fields), then every port's counters, then the router-wide counters. One
//! publisher writes it with positioned writes ([`FileExt::write_at`]); any
//! number of readers, in any process, read it with positioned reads and
//! retry while the generation is odd or changed under them. Neither side
//! maps the file, so this module has no `unsafe` (the project keeps
//! `unsafe` in `hw/`); a read costs three `pread`s of at most a few KiB.
//!
//! The workers never touch the file: they keep publishing into their own
//! counter blocks, and the daemon's control thread sums those and hands the
//! slots to [`StatsWriter::publish`] on its own timer.
//!
//! [`FileExt::write_at`]: std::os::unix::fs::FileExt::write_at

mod area;
mod prometheus;
mod snapshot;

use std::fmt;
use std::io;
use std::net::SocketAddr;

use rrp::DropReason;
use rrp::router::RtRefusal;

pub use area::{PUBLISH_INTERVAL, StatsReader, StatsWriter};
pub use prometheus::{
    escape_help, escape_label_value, management_exposition, mcast_exposition, prometheus,
};
pub use snapshot::{
    Baseline, PlaneStatsSnapshot, PortSnapshot, RouterSnapshot, Snapshot, router_slots,
};

/// The first 8 bytes of a stats file.
pub const MAGIC: [u8; 8] = *b"MWSTATS1";

/// The layout version this build writes and reads. Any change of the
/// layout (a field added, removed or moved) bumps it.
pub const VERSION: u64 = 5;

/// Slots of the header (8 bytes each); the unused ones are zero.
pub const HEADER_SLOTS: usize = 16;

/// Header slot indices.
pub mod slot {
    /// `MWSTATS1` (8 ASCII bytes).
    pub const MAGIC: usize = 0;
    /// [`super::VERSION`].
    pub const VERSION: usize = 1;
    /// The seqlock: odd while the publisher writes, even when consistent;
    /// `2 * publications` when even.
    pub const GENERATION: usize = 2;
    /// When the writer created the area (UNIX time, ns): identifies one run
    /// of the daemon (a baseline of another run is ignored).
    pub const STARTED_NS: usize = 3;
    /// When the last publication was made (UNIX time, ns; 0 before the first).
    pub const PUBLISHED_NS: usize = 4;
    /// Number of ports.
    pub const PORTS: usize = 5;
    /// Slots per port ([`super::PORT_FIELDS`]).
    pub const PORT_FIELDS: usize = 6;
    /// Slots of the RRP engine's counters ([`super::ROUTER_FIELDS`]).
    pub const ROUTER_FIELDS: usize = 7;
    /// Slots of the control thread's counters ([`super::PLANE_FIELDS`]).
    pub const PLANE_FIELDS: usize = 8;
}

/// The port counters other than drops, in slot order: field name (JSON),
/// Prometheus family (`mwrouter_port_<family>_total`) and help text. The
/// order is that of the workers' counter blocks.
pub const PORT_COUNTERS: [(&str, &str, &str); 10] = [
    (
        "received",
        "received_packets",
        "Packets received on the port.",
    ),
    (
        "rx_errors",
        "rx_error_packets",
        "Packets received on the port with a receive-error flag.",
    ),
    (
        "forwarded",
        "forwarded_packets",
        "Packets received on the port and forwarded.",
    ),
    (
        "punted",
        "punted_packets",
        "Packets received on the port and handed to the control plane.",
    ),
    (
        "transmitted",
        "transmitted_packets",
        "Packets transmitted on the port (forwarded from any port, and injected).",
    ),
    (
        "injected",
        "injected_packets",
        "Packets the control plane injected for transmission on the port.",
    ),
    (
        "inject_failed",
        "inject_failed_packets",
        "Injections the port could not send (no buffer, encapsulation, queue full).",
    ),
    (
        "notices",
        "notices",
        "Notices (no route, MTU, redirect) queued for the control plane.",
    ),
    (
        "notices_dropped",
        "notices_dropped",
        "Notices not queued (ring full or rate limit).",
    ),
    (
        "strangers",
        "stranger_packets",
        "Packets for this box from a source the port's HR does not know (an SA not in its LRT, or a node's SA from another native address).",
    ),
];

/// Slots per port: [`PORT_COUNTERS`], then one per [`DropReason`] in
/// [`DropReason::ALL`] order.
pub const PORT_FIELDS: usize = PORT_COUNTERS.len() + DropReason::COUNT;

/// The RRP engine's counters ([`rrp::router::RouterStats`]) other than the
/// refusals, in slot order: field name (JSON, and the Prometheus family
/// `mwrouter_rrp_<field>_total`) and help text.
pub const ROUTER_COUNTERS: [(&str, &str); 32] = [
    ("received", "Control packets received (parsed or not)."),
    ("parse_errors", "Control packets that failed to parse."),
    (
        "not_control",
        "Packets for this box that are not RRP or ERR.",
    ),
    ("sent", "Control packets sent."),
    ("rts_received", "RRP#9 messages received."),
    ("rts_accepted", "RTs taken (new or newer SN)."),
    (
        "rts_refreshed",
        "RTs whose hold timer an equal SN refreshed.",
    ),
    ("rts_expired", "RTs deleted by hold expiry."),
    ("rts_deleted_down", "RTs deleted by HR-DOWN or LINK-DOWN."),
    (
        "rts_sent",
        "RRP#9 messages sent (parts counted one by one).",
    ),
    (
        "requests_answered",
        "Requests answered (RRP#1, #4, #6, #7, #8).",
    ),
    ("err_unk_sent", "ERR UNK sent."),
    ("redirects_sent", "RRP#3 sent for redirect notices."),
    ("err_general_sent", "ERR GENERAL sent."),
    (
        "errors_suppressed_err",
        "Error messages not sent: the failed packet was an ERR.",
    ),
    (
        "errors_suppressed_source",
        "Error messages not sent: invalid source address (or, for a redirect, a source not in the ingress HR's LRT).",
    ),
    (
        "errors_suppressed_rate",
        "Error messages not sent: rate limit.",
    ),
    ("hr_down", "HR-DOWN events handled."),
    ("fib_versions", "FIB computations that changed something."),
    (
        "requests_limited",
        "Requests not answered: over the answer rate (per sender or in all).",
    ),
    (
        "auth_verified",
        "Signed control packets whose signature verified.",
    ),
    (
        "auth_unsigned",
        "Unsigned control packets taken by an HR with keys that accepts them.",
    ),
    (
        "auth_unchecked",
        "Signed control packets taken unchecked by an HR without keys.",
    ),
    (
        "auth_refused_missing",
        "Control packets refused: unsigned, on an HR that asks for a signature.",
    ),
    (
        "auth_refused_malformed",
        "Control packets refused: an authentication record of an unknown algorithm.",
    ),
    (
        "auth_refused_unknown_key",
        "Control packets refused: signed with a key the HR does not hold.",
    ),
    (
        "auth_refused_bad_digest",
        "Control packets refused: the digest is not the key's.",
    ),
    (
        "auth_refused_replay",
        "Control packets refused: a sequence number seen already or too old.",
    ),
    (
        "downs_not_buddy",
        "HR-DOWN and LINK-DOWN refused: the sender is no buddy of the HR.",
    ),
    (
        "downs_limited",
        "HR-DOWN and LINK-DOWN refused: over limits.downs_per_source.",
    ),
    (
        "hr_down_probes",
        "A third party's HR-DOWN about an HR that answered its last keepalive: the HR probed.",
    ),
    (
        "hr_down_disproved",
        "Probed HRs that answered: their HR-DOWN not taken.",
    ),
];

/// Every [`RtRefusal`], in slot order.
pub const REFUSALS: [RtRefusal; 11] = [
    RtRefusal::UnknownSender,
    RtRefusal::OwnSan,
    RtRefusal::Loop,
    RtRefusal::Stale,
    RtRefusal::Tombstone,
    RtRefusal::RcvfTooLong,
    RtRefusal::TooManyNodes,
    RtRefusal::TooManyRts,
    RtRefusal::BadRoute,
    RtRefusal::BadPart,
    RtRefusal::HrFull,
];

/// The name of a refusal in counters (the `reason` label).
pub const fn refusal_name(r: RtRefusal) -> &'static str {
    // Exhaustive on purpose: a new refusal does not build until it has a
    // name here, a place in REFUSALS (tests check both) and a slot.
    match r {
        RtRefusal::UnknownSender => "unknown-sender",
        RtRefusal::OwnSan => "own-san",
        RtRefusal::Loop => "loop",
        RtRefusal::Stale => "stale",
        RtRefusal::Tombstone => "tombstone",
        RtRefusal::RcvfTooLong => "rcvf-too-long",
        RtRefusal::TooManyNodes => "too-many-nodes",
        RtRefusal::TooManyRts => "too-many-rts",
        RtRefusal::BadRoute => "bad-route",
        RtRefusal::BadPart => "bad-part",
        RtRefusal::HrFull => "hr-full",
    }
}

/// The slot of a refusal within [`REFUSALS`].
pub const fn refusal_index(r: RtRefusal) -> usize {
    match r {
        RtRefusal::UnknownSender => 0,
        RtRefusal::OwnSan => 1,
        RtRefusal::Loop => 2,
        RtRefusal::Stale => 3,
        RtRefusal::Tombstone => 4,
        RtRefusal::RcvfTooLong => 5,
        RtRefusal::TooManyNodes => 6,
        RtRefusal::TooManyRts => 7,
        RtRefusal::BadRoute => 8,
        RtRefusal::BadPart => 9,
        RtRefusal::HrFull => 10,
    }
}

/// Slots of the RRP engine's counters: [`ROUTER_COUNTERS`], then one per
/// refusal in [`REFUSALS`] order.
pub const ROUTER_FIELDS: usize = ROUTER_COUNTERS.len() + REFUSALS.len();

/// The daemon's control-thread counters, in slot order:
/// field name (JSON), help text, and whether the value is a gauge (not
/// subtracted by a baseline; a Prometheus gauge `mwrouter_plane_<field>`)
/// rather than a counter (`mwrouter_plane_<field>_total`).
pub const PLANE_COUNTERS: [(&str, &str, bool); 7] = [
    ("punts", "Punted packets handed to the RRP engine.", false),
    ("notices", "Notices handed to the RRP engine.", false),
    ("injected", "Packets injected into a worker's ring.", false),
    (
        "inject_full",
        "Packets the engine sent that found the injection ring full.",
        false,
    ),
    (
        "inject_bad_native",
        "Packets the engine sent to a native address the port cannot hold.",
        false,
    ),
    ("fibs_published", "FIB sets published.", false),
    (
        "fib_version",
        "Version of the last published FIB set.",
        true,
    ),
];

/// Slots of the control thread's counters.
pub const PLANE_FIELDS: usize = PLANE_COUNTERS.len();

/// Most ports an area holds.
pub const MAX_PORTS: usize = 4096;

/// Slots of an area of `ports` ports.
pub const fn area_slots(ports: usize) -> usize {
    HEADER_SLOTS + ports * PORT_FIELDS + ROUTER_FIELDS + PLANE_FIELDS
}

/// The slot names of one port, in order (`received`, ...,
/// `dropped.truncated`, ...), as docs/stats.md lists them.
pub fn port_slot_names() -> Vec<String> {
    PORT_COUNTERS
        .iter()
        .map(|(f, _, _)| f.to_string())
        .chain(
            DropReason::ALL
                .iter()
                .map(|r| format!("dropped.{}", r.name())),
        )
        .collect()
}

/// The names of the router-wide slots, in order (`rrp.received`, ...,
/// `rrp.rts_refused.unknown-sender`, ..., `plane.punts`, ...).
pub fn router_slot_names() -> Vec<String> {
    ROUTER_COUNTERS
        .iter()
        .map(|(f, _)| format!("rrp.{f}"))
        .chain(
            REFUSALS
                .iter()
                .map(|r| format!("rrp.rts_refused.{}", refusal_name(*r))),
        )
        .chain(PLANE_COUNTERS.iter().map(|(f, _, _)| format!("plane.{f}")))
        .collect()
}

/// What can go wrong with a stats area or the metrics listener.
#[derive(Debug)]
pub enum Error {
    /// Reading or writing the file, or the socket.
    Io(io::Error),
    /// The file does not start with [`MAGIC`].
    BadMagic,
    /// The file has a layout version this build does not read.
    Version(u64),
    /// The header's counts do not match this build's layout, or the file's
    /// size does not match the header.
    Layout(String),
    /// No consistent read within the reader's timeout: the publisher kept
    /// changing the area, or died while publishing (the generation stays
    /// odd until the next daemon re-creates the area).
    Busy,
    /// `publish` got a number of ports other than the area's.
    Ports {
        /// The area's.
        expected: usize,
        /// Given.
        got: usize,
    },
    /// More ports than [`MAX_PORTS`].
    TooManyPorts(usize),
    /// The metrics listener only binds loopback addresses.
    NotLoopback(SocketAddr),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "stats: {e}"),
            Error::BadMagic => write!(f, "stats: not a stats file (no MWSTATS1 magic)"),
            Error::Version(v) => {
                write!(f, "stats: layout version {v}, this build reads {VERSION}")
            }
            Error::Layout(s) => write!(f, "stats: layout mismatch: {s}"),
            Error::Busy => write!(f, "stats: no consistent read (publisher busy or dead)"),
            Error::Ports { expected, got } => {
                write!(f, "stats: {got} ports published, the area has {expected}")
            }
            Error::TooManyPorts(n) => write!(f, "stats: {n} ports, at most {MAX_PORTS}"),
            Error::NotLoopback(a) => {
                write!(f, "metrics listener: {a} is not a loopback address")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

/// The result of this module's fallible functions.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_in_slot_order_with_distinct_names() {
        let mut names = std::collections::BTreeSet::new();
        for (i, r) in REFUSALS.iter().enumerate() {
            assert_eq!(refusal_index(*r), i);
            assert!(names.insert(refusal_name(*r)));
        }
    }

    #[test]
    fn slot_names_are_distinct() {
        let p = port_slot_names();
        assert_eq!(p.len(), PORT_FIELDS);
        let r = router_slot_names();
        assert_eq!(r.len(), ROUTER_FIELDS + PLANE_FIELDS);
        let all: std::collections::BTreeSet<_> = p.iter().chain(&r).collect();
        assert_eq!(all.len(), p.len() + r.len());
    }
}
