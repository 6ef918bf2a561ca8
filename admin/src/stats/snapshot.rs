//! What a reader gets from the area ([`Snapshot`]), and the baseline that
//! `clear counters` saves ([`Baseline`]).

use core::ops::Deref;

use rrp::counters::{CounterSet, PartitionStats, WorkerStats};
use rrp::router::RouterStats;
use rrp::{PortId, PortStats, PuntSource};
use serde::{Deserialize, Serialize};

use super::PlaneStats;

/// The counters of one port (summed over the workers, with the control
/// plane's share), and which port they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortSnapshot {
    /// The port.
    pub port: PortId,
    /// Its counters (in JSON beside `port`, by name).
    #[serde(flatten, with = "rrp::counters::json")]
    pub stats: PortStats,
}

impl PortSnapshot {
    /// Port `port`'s counters.
    pub fn new(port: PortId, stats: PortStats) -> PortSnapshot {
        PortSnapshot { port, stats }
    }
}

impl Deref for PortSnapshot {
    type Target = PortStats;
    fn deref(&self) -> &PortStats {
        &self.stats
    }
}

/// The own counters of one dataplane worker (passes, bursts, cycles), and
/// which worker they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerSnapshot {
    /// The worker's index (`mw-worker-N`).
    pub worker: usize,
    /// Its counters (in JSON beside `worker`, by name).
    #[serde(flatten, with = "rrp::counters::json")]
    pub stats: WorkerStats,
}

impl WorkerSnapshot {
    /// Worker `worker`'s counters.
    pub fn new(worker: usize, stats: WorkerStats) -> WorkerSnapshot {
        WorkerSnapshot { worker, stats }
    }
}

/// The packets the partitions refused of one partition key at one ingress
/// port, summed over the workers (docs/partitions.md "At the routers").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionSnapshot {
    /// The partition key and the ingress port; `None` for the pairs the
    /// workers had no slot for, counted together.
    pub tag: Option<(u16, PortId)>,
    /// Their counters.
    #[serde(flatten, with = "rrp::counters::json")]
    pub stats: PartitionStats,
}

impl PartitionSnapshot {
    /// The counters of `tag`.
    pub fn new(tag: Option<(u16, PortId)>, stats: PartitionStats) -> PartitionSnapshot {
        PartitionSnapshot { tag, stats }
    }

    /// The key as `stats` and Prometheus name it: `0x0010`, or `other`
    /// for the pairs without a slot.
    pub fn key_text(&self) -> String {
        match self.tag {
            Some((key, _)) => format!("{key:#06x}"),
            None => "other".to_string(),
        }
    }
}

/// Everything the area holds at one publication: what `mwctl stats --json`
/// prints. The daemon's own snapshots also carry the refusals per
/// partition, which the area does not hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The area's generation at this publication (even; twice the number of
    /// publications since the area was created; 0 for an in-memory snapshot).
    pub generation: u64,
    /// When the publisher created the area (UNIX time, ns): one run of the
    /// daemon.
    pub started_ns: u64,
    /// When this publication was made (UNIX time, ns; 0 before the first).
    pub published_ns: u64,
    /// Per-port counters, port 0 first.
    pub ports: Vec<PortSnapshot>,
    /// The RRP engine's counters.
    #[serde(with = "rrp::counters::json")]
    pub rrp: RouterStats,
    /// The control thread's counters.
    #[serde(with = "rrp::counters::json")]
    pub plane: PlaneStats,
    /// The heaviest senders of each punt class now, in class order, the
    /// heaviest first (docs/stats.md "Heaviest sources"): rates, not
    /// counters, so `clear counters` leaves them as they are.
    #[serde(default)]
    pub punt_sources: Vec<PuntSource>,
    /// Each dataplane worker's own counters, worker 0 first
    /// (docs/stats.md "Workers").
    #[serde(default)]
    pub workers: Vec<WorkerSnapshot>,
    /// The packets the partitions refused, per partition key and ingress
    /// port, by key then port, the pairs without a slot last (not in the
    /// area: empty when read from it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionSnapshot>,
}

impl Snapshot {
    /// An in-memory snapshot (generation and times 0) of these counters,
    /// port 0 first.
    pub fn new(ports: &[PortStats], router: &RouterStats, plane: &PlaneStats) -> Snapshot {
        Snapshot {
            generation: 0,
            started_ns: 0,
            published_ns: 0,
            ports: ports
                .iter()
                .enumerate()
                .map(|(i, p)| PortSnapshot::new(PortId::new(i), *p))
                .collect(),
            rrp: *router,
            plane: *plane,
            punt_sources: Vec::new(),
            workers: Vec::new(),
            partitions: Vec::new(),
        }
    }

    /// The snapshot with these refusals per partition key and port.
    pub fn with_partitions(mut self, partitions: Vec<PartitionSnapshot>) -> Snapshot {
        self.partitions = partitions;
        self
    }

    /// The snapshot with these workers' own counters, worker 0 first.
    pub fn with_workers(mut self, workers: &[WorkerStats]) -> Snapshot {
        self.workers = workers
            .iter()
            .enumerate()
            .map(|(i, w)| WorkerSnapshot::new(i, *w))
            .collect();
        self
    }

    /// The snapshot with these heaviest punt sources.
    pub fn with_punt_sources(mut self, sources: Vec<PuntSource>) -> Snapshot {
        self.punt_sources = sources;
        self
    }

    /// The counters since `base` was taken, for displays: every counter
    /// less its value in the baseline (saturating at 0); gauges
    /// (`plane.fib_version`), the header and ports the baseline does not
    /// hold stay as they are. A baseline of another run of the daemon
    /// (another `started_ns`) subtracts nothing. Exports (Prometheus) use
    /// the snapshot itself, never this: exported counters stay monotonic.
    pub fn minus(&self, base: &Baseline) -> Snapshot {
        if !base.applies_to(self) {
            return self.clone();
        }
        let b = &base.snapshot;
        let ports = self
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| match b.ports.get(i) {
                Some(bp) => PortSnapshot::new(p.port, p.stats.since(&bp.stats)),
                None => p.clone(),
            })
            .collect();
        Snapshot {
            generation: self.generation,
            started_ns: self.started_ns,
            published_ns: self.published_ns,
            ports,
            rrp: self.rrp.since(&b.rrp),
            plane: self.plane.since(&b.plane),
            punt_sources: self.punt_sources.clone(),
            workers: self
                .workers
                .iter()
                .map(|w| match b.workers.get(w.worker) {
                    Some(bw) => WorkerSnapshot::new(w.worker, w.stats.since(&bw.stats)),
                    None => w.clone(),
                })
                .collect(),
            partitions: self
                .partitions
                .iter()
                .map(|p| match b.partitions.iter().find(|bp| bp.tag == p.tag) {
                    Some(bp) => PartitionSnapshot::new(p.tag, p.stats.since(&bp.stats)),
                    None => p.clone(),
                })
                .collect(),
        }
    }
}

/// What `clear counters` saves: the snapshot at the time of the clear,
/// which displays subtract ([`Snapshot::minus`]). The area itself and the
/// Prometheus export are never cleared. Serialisable, so that the daemon
/// may keep it across admin connections (or on disk).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    snapshot: Snapshot,
}

impl Baseline {
    /// `clear counters`: everything as of `current`.
    pub fn new(current: &Snapshot) -> Baseline {
        Baseline {
            snapshot: current.clone(),
        }
    }

    /// `clear counters port N`: port `port` as of `current`, the rest as
    /// before (or zero when the baseline is of another run).
    pub fn clear_port(&mut self, current: &Snapshot, port: PortId) {
        if !self.applies_to(current) {
            self.snapshot = Snapshot {
                generation: current.generation,
                started_ns: current.started_ns,
                published_ns: current.published_ns,
                ..Snapshot::default()
            };
        }
        let Some(now) = current.ports.get(port.index()) else {
            return;
        };
        let ports = &mut self.snapshot.ports;
        while ports.len() <= port.index() {
            let i = PortId::new(ports.len());
            ports.push(PortSnapshot::new(i, PortStats::default()));
        }
        ports[port.index()] = now.clone();
        let of_port = |p: &PartitionSnapshot| p.tag.is_some_and(|(_, at)| at == port);
        self.snapshot.partitions.retain(|p| !of_port(p));
        self.snapshot
            .partitions
            .extend(current.partitions.iter().filter(|p| of_port(p)).cloned());
    }

    /// The snapshot saved.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Whether the baseline was taken in the same run of the daemon as `s`.
    pub fn applies_to(&self, s: &Snapshot) -> bool {
        self.snapshot.started_ns == s.started_ns
    }
}

impl From<Snapshot> for Baseline {
    fn from(snapshot: Snapshot) -> Baseline {
        Baseline { snapshot }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::DropReason;
    use rrp::router::RtRefusal;

    /// The JSON names are the fields' and the enums' names.
    #[test]
    fn json_names_follow_the_declarations() {
        let mut p = PortStats::default();
        for (i, s) in p.slots_mut().iter_mut().enumerate() {
            *s = i as u64 + 1;
        }
        let v = serde_json::to_value(PortSnapshot::new(PortId(0), p)).unwrap();
        assert_eq!(v["port"], 0);
        for (name, n) in p.named_slots() {
            match name.split_once('.') {
                Some((f, r)) => assert_eq!(v[f][r], n, "{name}"),
                None => assert_eq!(v[&name], n, "{name}"),
            }
        }
        assert_eq!(
            v["dropped"][DropReason::Mtu.name()],
            p.dropped[DropReason::Mtu]
        );
        let mut r = RouterStats::default();
        r.rts_refused[RtRefusal::Stale] = 20;
        r.auth_refused_replay = 4;
        let s = Snapshot::new(&[p], &r, &PlaneStats::default());
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["rrp"]["rts_refused"]["stale"], 20);
        assert_eq!(v["rrp"]["auth_refused_replay"], 4);
        assert_eq!(v["plane"]["fib_version"], 0);
        let back: Snapshot = serde_json::from_value(v).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn minus_keeps_gauges() {
        let plane = PlaneStats {
            punts: 10,
            fib_version: 7,
            ..PlaneStats::default()
        };
        let base = Baseline::new(&Snapshot::new(&[], &RouterStats::default(), &plane));
        let later = PlaneStats {
            punts: 15,
            fib_version: 9,
            ..PlaneStats::default()
        };
        let shown = Snapshot::new(&[], &RouterStats::default(), &later).minus(&base);
        assert_eq!((shown.plane.punts, shown.plane.fib_version), (5, 9));
    }

    #[test]
    fn clear_counters_clears_the_partitions_of_its_ports() {
        let p = |key, port, dropped| {
            PartitionSnapshot::new(Some((key, PortId(port))), PartitionStats { dropped })
        };
        let at = |drops: Vec<PartitionSnapshot>| {
            Snapshot::new(
                &[PortStats::default(); 2],
                &RouterStats::default(),
                &PlaneStats::default(),
            )
            .with_partitions(drops)
        };
        let then = at(vec![p(0x10, 0, 3), p(0x10, 1, 4)]);
        let now = at(vec![p(0x10, 0, 5), p(0x10, 1, 9), p(0x20, 1, 1)]);
        let mut one = Baseline::new(&at(Vec::new()));
        one.clear_port(&then, PortId(1));
        let shown: Vec<u64> = now
            .minus(&one)
            .partitions
            .iter()
            .map(|p| p.stats.dropped)
            .collect();
        assert_eq!(shown, [5, 5, 1]);
        let all = Baseline::new(&then);
        let shown: Vec<u64> = now
            .minus(&all)
            .partitions
            .iter()
            .map(|p| p.stats.dropped)
            .collect();
        assert_eq!(shown, [2, 5, 1]);
    }
}
