//! The box's counters as readers see them: the workers' blocks summed, less
//! the baseline `clear counters` took (docs/stats.md "`clear counters`").
//! One value shared by the admin socket and the management agent, so that
//! counters cleared by either are cleared for both.

use std::sync::{Arc, Mutex, MutexGuard};

use admin::stats::{Baseline, PartitionSnapshot, PlaneStats, Snapshot};
use dataplane::StatsBlock;
use rrp::router::RouterStats;
use rrp::{PortId, PortStats};

use super::EngineStats;

/// The workers' counter blocks and the clear baseline.
#[derive(Debug, Clone)]
pub struct Counters {
    blocks: Vec<Arc<StatsBlock>>,
    baseline: Arc<Mutex<Option<Baseline>>>,
}

impl Counters {
    /// Counters over the workers' `blocks`, nothing cleared yet.
    pub fn new(blocks: Vec<Arc<StatsBlock>>) -> Counters {
        Counters {
            blocks,
            baseline: Arc::new(Mutex::new(None)),
        }
    }

    /// The workers' blocks.
    pub fn blocks(&self) -> &[Arc<StatsBlock>] {
        &self.blocks
    }

    fn baseline(&self) -> MutexGuard<'_, Option<Baseline>> {
        self.baseline.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Each port's counters now, the engine's share included.
    fn ports(&self, engine: &EngineStats) -> Vec<PortStats> {
        super::with_engine_share(dataplane::counters::sum(&self.blocks), &engine.ports)
    }

    /// Every counter as of now (not subtracting the baseline).
    pub fn snapshot(&self, engine: &EngineStats, plane: &PlaneStats) -> Snapshot {
        Snapshot::new(&self.ports(engine), &engine.router, plane)
            .with_punt_sources(dataplane::counters::heaviest_sources(&self.blocks))
            .with_workers(&dataplane::counters::workers(&self.blocks))
            .with_partitions(self.partitions())
    }

    /// The packets the partitions refused per key and ingress port, summed
    /// over the workers: what `stats` and the Prometheus exposition show.
    fn partitions(&self) -> Vec<PartitionSnapshot> {
        dataplane::counters::sum_partitions(&self.blocks)
            .into_iter()
            .map(|(tag, c)| PartitionSnapshot::new(tag.map(|t| (t.key, t.port)), c))
            .collect()
    }

    /// A port's counters as of now, since the last clear.
    pub fn port_shown(&self, port: PortId, engine: &EngineStats) -> Option<PortStats> {
        let s = Snapshot::new(
            &self.ports(engine),
            &RouterStats::default(),
            &PlaneStats::default(),
        );
        let s = match &*self.baseline() {
            Some(b) => s.minus(b),
            None => s,
        };
        s.ports.get(port.index()).map(|p| p.stats)
    }

    /// `current` less the baseline: what displays show.
    pub fn shown(&self, current: Snapshot) -> Snapshot {
        match &*self.baseline() {
            Some(b) => current.minus(b),
            None => current,
        }
    }

    /// Clears the counters of `ports` (all when `None`) as of `current`.
    pub fn clear(&self, current: &Snapshot, ports: Option<&[PortId]>) {
        let mut b = self.baseline();
        match (ports, b.as_mut()) {
            (Some(ports), Some(base)) => {
                for p in ports {
                    base.clear_port(current, *p);
                }
            }
            (Some(ports), None) => {
                let zero = vec![PortStats::default(); current.ports.len()];
                let mut base = Baseline::new(&Snapshot::new(
                    &zero,
                    &RouterStats::default(),
                    &PlaneStats::default(),
                ));
                for p in ports {
                    base.clear_port(current, *p);
                }
                *b = Some(base);
            }
            (None, _) => *b = Some(Baseline::new(current)),
        }
    }
}
