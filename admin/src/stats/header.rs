//! [`AreaHeader`]: the first 16 words of the stats area (docs/stats.md
//! "Header").

use bytemuck::{Pod, Zeroable};
use rrp::PortStats;
use rrp::counters::{CounterSet, WorkerStats};
use rrp::router::RouterStats;

use super::{MAGIC, PlaneStats, SOURCE_SLOTS, VERSION};

/// The stats area's header: what a reader checks before it trusts the
/// rest, and the seqlock's generation.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct AreaHeader {
    /// `MWSTATS1`.
    pub magic: [u8; 8],
    /// The layout version ([`VERSION`]).
    pub version: u64,
    /// The seqlock: odd while the publisher writes, even when consistent;
    /// `2 * publications` when even.
    pub generation: u64,
    /// When the writer created the area (UNIX time, ns): identifies one run
    /// of the daemon (a baseline of another run is ignored).
    pub started_ns: u64,
    /// When the last publication was made (UNIX time, ns; 0 before the first).
    pub published_ns: u64,
    /// Number of ports.
    pub ports: u64,
    /// Words per port ([`PortStats`]).
    pub port_slots: u64,
    /// Words of the RRP engine's counters ([`RouterStats`]).
    pub router_slots: u64,
    /// Words of the control thread's counters ([`PlaneStats`]).
    pub plane_slots: u64,
    /// Words of the heaviest punt sources ([`SOURCE_SLOTS`]).
    pub source_slots: u64,
    /// Number of dataplane workers.
    pub workers: u64,
    /// Words per worker ([`WorkerStats`]).
    pub worker_slots: u64,
    /// Zero.
    pub reserved: [u64; 4],
}

/// Words of the header.
pub const HEADER_SLOTS: usize = core::mem::size_of::<AreaHeader>() / 8;

/// The word of the generation (the seqlock).
pub const GENERATION_SLOT: usize = core::mem::offset_of!(AreaHeader, generation) / 8;

/// The word of the publication time.
pub const PUBLISHED_SLOT: usize = core::mem::offset_of!(AreaHeader, published_ns) / 8;

impl AreaHeader {
    /// The header of a new area of `ports` ports and `workers` workers
    /// created at `started_ns`.
    pub fn new(ports: usize, workers: usize, started_ns: u64) -> AreaHeader {
        AreaHeader {
            magic: MAGIC,
            version: VERSION,
            generation: 0,
            started_ns,
            published_ns: 0,
            ports: ports as u64,
            port_slots: PortStats::SLOTS as u64,
            router_slots: RouterStats::SLOTS as u64,
            plane_slots: PlaneStats::SLOTS as u64,
            source_slots: SOURCE_SLOTS as u64,
            workers: workers as u64,
            worker_slots: WorkerStats::SLOTS as u64,
            reserved: [0; 4],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_words_as_documented() {
        assert_eq!(HEADER_SLOTS, 16);
        assert_eq!(GENERATION_SLOT, 2);
        assert_eq!(PUBLISHED_SLOT, 4);
        let h = AreaHeader::new(3, 2, 9);
        let w: &[u64] = bytemuck::cast_slice(core::slice::from_ref(&h));
        assert_eq!(w[0].to_le_bytes(), *b"MWSTATS1");
        assert_eq!(
            (w[1], w[3], w[5], w[6], w[7], w[8], w[9], w[10], w[11]),
            (VERSION, 9, 3, 49, 43, 7, 96, 2, 9)
        );
    }
}
