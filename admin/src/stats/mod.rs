//! The stats area, the shared-memory segment through which the daemon's
//! counters reach `mwctl` and any other reader (docs/stats.md), as VPP's
//! stats segment does: its layout, its writer and readers, the snapshot a
//! reader gets, the baseline that `clear counters` saves, and the
//! Prometheus text exposition.
//!
//! ```text
//! workers --SharedCounters<PortStats> (single-writer atomics)--> control thread
//!   every ~100 ms: StatsWriter::publish -> stats segment (Pod structs, seqlock)
//! mwctl / admin thread / exporter: StatsReader::read -> Snapshot
//!   displays: Snapshot::minus(&Baseline)      exports: prometheus(&Snapshot) (monotonic)
//! ```
//!
//! The area is a file mapped by the publisher (read-write) and by each
//! reader (read-only, `shm::Segment`): an [`AreaHeader`], then every port's
//! [`PortStats`], then the RRP engine's [`RouterStats`] and the control
//! thread's [`PlaneStats`], and last the heaviest punt sources
//! ([`PuntSource`] as words); the counter sets each a `#[repr(C)]` struct of `u64`s declared
//! once ([`rrp::counter_set!`]) and copied in and out whole with `bytemuck`.
//! One publisher writes it under the seqlock that the header's generation
//! is; readers copy it and retry while the generation is odd or changed
//! under them. A read is a copy of a few KiB of memory, no system call.
//!
//! The workers never touch the segment: they keep publishing into their
//! own counter blocks, and the daemon's control thread sums those and hands
//! them to [`StatsWriter::publish`] on its own timer.

mod area;
mod header;
mod plane;
mod prometheus;
mod snapshot;

use std::fmt;
use std::io;
use std::net::SocketAddr;

use rrp::counters::CounterSet;
use rrp::counters::WorkerStats;
use rrp::router::RouterStats;
use rrp::{PortStats, PuntSource};

pub use area::{PUBLISH_INTERVAL, StatsReader, StatsWriter};
pub use header::{AreaHeader, GENERATION_SLOT, HEADER_SLOTS, PUBLISHED_SLOT};
pub use plane::PlaneStats;
pub use prometheus::{
    escape_help, escape_label_value, management_exposition, mcast_exposition, partition_exposition,
    prometheus,
};
pub use snapshot::{Baseline, PartitionSnapshot, PortSnapshot, Snapshot, WorkerSnapshot};

/// The first 8 bytes of a stats file.
pub const MAGIC: [u8; 8] = *b"MWSTATS1";

/// The layout version this build writes and reads. Any change of the
/// layout (a field added, removed or moved) bumps it.
pub const VERSION: u64 = 11;

/// Most ports an area holds: a box's ([`rrp::limits::MAX_PORTS`]).
pub use rrp::limits::MAX_PORTS;

/// Words of the heaviest punt sources at the end of the area: each of the
/// [`rrp::punt_source::HEAVIEST`] entries [`PuntSource::WORDS`] words, the
/// unused ones zero (docs/stats.md "Heaviest sources").
pub const SOURCE_SLOTS: usize = rrp::punt_source::HEAVIEST * PuntSource::WORDS;

/// Most workers an area holds: a box's ([`rrp::limits::MAX_WORKERS`]).
pub use rrp::limits::MAX_WORKERS;

/// Words of an area of `ports` ports and `workers` workers.
pub const fn area_slots(ports: usize, workers: usize) -> usize {
    HEADER_SLOTS
        + ports * PortStats::SLOTS
        + RouterStats::SLOTS
        + PlaneStats::SLOTS
        + SOURCE_SLOTS
        + workers * WorkerStats::SLOTS
}

/// The slot names of one port, in order (`received`, ...,
/// `dropped.truncated`, ...), as docs/stats.md lists them.
pub fn port_slot_names() -> Vec<String> {
    PortStats::slot_names()
}

/// The names of the router-wide slots, in order (`rrp.received`, ...,
/// `rrp.rts_refused.unknown-sender`, ..., `plane.punts`, ...).
pub fn router_slot_names() -> Vec<String> {
    RouterStats::slot_names()
        .into_iter()
        .map(|n| format!("rrp.{n}"))
        .chain(
            PlaneStats::slot_names()
                .into_iter()
                .map(|n| format!("plane.{n}")),
        )
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
    /// More workers than [`MAX_WORKERS`].
    TooManyWorkers(usize),
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
            Error::TooManyWorkers(n) => write!(f, "stats: {n} workers, at most {MAX_WORKERS}"),
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
    fn slot_names_are_distinct() {
        let p = port_slot_names();
        assert_eq!(p.len(), PortStats::SLOTS);
        let r = router_slot_names();
        assert_eq!(r.len(), RouterStats::SLOTS + PlaneStats::SLOTS);
        let all: std::collections::BTreeSet<_> = p.iter().chain(&r).collect();
        assert_eq!(all.len(), p.len() + r.len());
    }
}
