//! The box's counters as readers see them: the workers' blocks summed, less
//! the baseline `clear counters` took (docs/stats.md "`clear counters`").
//! One value shared by the admin socket and the management agent, so that
//! counters cleared by either are cleared for both.

use std::sync::{Arc, Mutex, MutexGuard};

use admin::stats::{Baseline, PORT_FIELDS, PlaneStatsSnapshot, Snapshot};
use dataplane::StatsBlock;
use rrp::PortId;
use rrp::router::RouterStats;

use crate::PlaneStats;

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

    /// Every counter as of now (not subtracting the baseline).
    pub fn snapshot(&self, router: &RouterStats, plane: &PlaneStats) -> Snapshot {
        let ports = super::port_slots_with(&dataplane::counters::sum(&self.blocks), router);
        Snapshot::new(&ports, router, &super::plane_snapshot(plane))
    }

    /// A port's counters as of now, in the area's slot order, since the
    /// last clear.
    pub fn port_shown(&self, port: PortId, router: &RouterStats) -> Option<[u64; PORT_FIELDS]> {
        let ports = super::port_slots_with(&dataplane::counters::sum(&self.blocks), router);
        let s = Snapshot::new(
            &ports,
            &RouterStats::default(),
            &PlaneStatsSnapshot::default(),
        );
        let s = match &*self.baseline() {
            Some(b) => s.minus(b),
            None => s,
        };
        s.ports.get(port.index()).map(|p| p.slots())
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
                let zero = vec![[0; PORT_FIELDS]; current.ports.len()];
                let mut base = Baseline::new(&Snapshot::new(
                    &zero,
                    &RouterStats::default(),
                    &PlaneStatsSnapshot::default(),
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
