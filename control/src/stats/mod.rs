//! The daemon's side of the stats area (docs/stats.md): the workers'
//! counter blocks summed per port with the engine's share, the control
//! thread's counters, and the Prometheus listener. The area's format, writer and
//! readers are the admin protocol's ([`admin::stats`]).

mod counters;
mod fabric;
mod http;

use std::sync::Arc;

use admin::stats::{PlaneStats, Result, StatsWriter};
use dataplane::StatsBlock;
use rrp::router::{Router, RouterStats};
use rrp::{DropReason, PortStats};

pub use counters::Counters;
pub use fabric::fabric_exposition;
pub use http::{Handle, Source, serve_paths, serve_prometheus};

/// What the RRP engine counts: its own counters, and its share of each
/// port's ([`Router::port_stats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// The engine's counters.
    pub router: RouterStats,
    /// Its share of each port's counters, port 0 first.
    pub ports: Vec<PortStats>,
}

impl EngineStats {
    /// The engine's counters now.
    pub fn of(r: &Router) -> EngineStats {
        EngineStats {
            router: *r.stats(),
            ports: r.port_stats().to_vec(),
        }
    }
}

/// Each port's counters: the workers' `ports` with the control plane's
/// share (docs/spec-notes.md 60): its strangers, and the packets it
/// refused as spoofed, which move from `punted` to `dropped.spoofed-source`
/// so that received = forwarded + dropped + punted still holds.
pub fn with_engine_share(mut ports: Vec<PortStats>, engine: &[PortStats]) -> Vec<PortStats> {
    for (p, e) in ports.iter_mut().zip(engine) {
        p.strangers += e.strangers;
        let refused = e.dropped[DropReason::SpoofedSource];
        // The worker's count may lag the engine's by a publication.
        let moved = refused.min(p.punted);
        p.punted -= moved;
        p.dropped[DropReason::SpoofedSource] += moved;
    }
    ports
}

/// Publishes the workers' counters with the engine's share (ports beyond
/// the area's are left out), the engine's counters, the control thread's,
/// and the workers' heaviest punt sources merged.
pub fn publish_blocks(
    w: &StatsWriter,
    blocks: &[Arc<StatsBlock>],
    engine: &EngineStats,
    plane: &PlaneStats,
) -> Result<()> {
    let mut ports = dataplane::counters::sum(blocks);
    ports.resize(w.ports(), PortStats::default());
    w.publish(
        &with_engine_share(ports, &engine.ports),
        &engine.router,
        plane,
        &dataplane::counters::heaviest_sources(blocks),
        &dataplane::counters::workers(blocks),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spoofed_packets_move_from_punted_to_their_drop_reason() {
        let block = Arc::new(StatsBlock::new(2));
        block.publish(
            &[
                PortStats {
                    received: 10,
                    punted: 4,
                    forwarded: 6,
                    ..PortStats::default()
                },
                PortStats::default(),
            ],
            &Default::default(),
        );
        let mut engine = vec![PortStats::default(); 2];
        engine[0].strangers = 2;
        engine[0].dropped[DropReason::SpoofedSource] = 3;
        let p = with_engine_share(dataplane::counters::sum(&[block]), &engine);
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].punted, p[0].strangers), (1, 2));
        assert_eq!(p[0].dropped(DropReason::SpoofedSource), 3);
        assert!(p[0].balanced());
    }
}
