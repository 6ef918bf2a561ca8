//! Per-worker counters: each port's [`PortStats`] (declared once, in
//! `rrp::counters`), plain integers that only the worker writes, copied now
//! and then into a [`StatsBlock`] that readers (the control thread, the
//! admin socket) load. Nothing is shared between workers.
//!
//! Accounting per port, at quiescence: `received = forwarded + dropped + punted`.
//! Packets the control plane injects and notices sent to it are counted apart.

use std::sync::atomic::{AtomicU64, Ordering};

use rrp::PortStats;
use rrp::counters::{CounterSet, SharedCounters, WorkerStats};

use crate::mcast::MCAST_SLOTS;
use crate::partition_drops::{PARTITION_SLOTS, PartitionDrops, PartitionTag};
use crate::punt::HEAVIEST;
use rrp::PuntSource;
use rrp::counters::GroupStats;
use rrp::counters::PartitionStats;

/// Attempts of a reader to read a consistent report of heaviest sources
/// before it gives up (the worker rewrites it at most every
/// [`SOURCES_EVERY_NS`], so the first attempt all but always succeeds).
const SOURCES_READ_TRIES: usize = 64;

/// How often a worker reports its heaviest punt sources.
pub const SOURCES_EVERY_NS: u64 = 100_000_000;

/// A worker's published counters: one writer (the worker), any readers.
/// Each value is a single-writer atomic so that readers never see a torn
/// value; a snapshot may mix two publications (counters are monotonic).
#[derive(Debug)]
pub struct StatsBlock {
    ports: SharedCounters<PortStats>,
    /// The worker's passes, bursts and cycles (docs/stats.md "Workers").
    worker: SharedCounters<WorkerStats>,
    /// Per-group counters by counter slot, then the unslotted ones.
    mcast: SharedCounters<GroupStats>,
    /// Per partition key and ingress port, the refused packets: the slots'
    /// tags ([`PartitionTag::to_word`], 0 for an empty slot), and their
    /// counts, then the count of the pairs without a slot.
    partition_tags: Box<[AtomicU64]>,
    partitions: SharedCounters<PartitionStats>,
    /// The heaviest sources of each punt class, as the worker last
    /// reported them: a generation word, then [`HEAVIEST`] entries of
    /// [`PuntSource::WORDS`] words (empty entries zero), under a seqlock.
    sources: Box<[AtomicU64]>,
    /// Number of publications, for readers that wait for fresh values.
    pub epoch: AtomicU64,
}

impl StatsBlock {
    /// A block for `ports` ports, all zero.
    pub fn new(ports: usize) -> StatsBlock {
        StatsBlock {
            ports: SharedCounters::new(ports),
            worker: SharedCounters::new(1),
            mcast: SharedCounters::new(MCAST_SLOTS + 1),
            partition_tags: (0..PARTITION_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            partitions: SharedCounters::new(PARTITION_SLOTS + 1),
            sources: (0..1 + HEAVIEST * PuntSource::WORDS)
                .map(|_| AtomicU64::new(0))
                .collect(),
            epoch: AtomicU64::new(0),
        }
    }

    /// Stores the worker's per-group counters (worker only).
    pub fn publish_mcast(&self, slots: &[GroupStats], unslotted: &GroupStats) {
        self.mcast.store(&slots[..slots.len().min(MCAST_SLOTS)]);
        self.mcast.store_at(MCAST_SLOTS, unslotted);
    }

    /// Loads the per-group counters: by counter slot, then the unslotted.
    pub fn read_mcast(&self) -> Vec<GroupStats> {
        self.mcast.load_all()
    }

    /// Stores the worker's counts of refused packets per partition
    /// (worker only): a slot's tag before its count, and a slot never
    /// changes its tag.
    pub fn publish_partitions(&self, d: &PartitionDrops) {
        for (a, t) in self.partition_tags.iter().zip(d.tags()) {
            a.store(t.to_word(), Ordering::Release);
        }
        self.partitions.store(d.counts());
        self.partitions.store_at(PARTITION_SLOTS, d.other());
    }

    /// Loads the counts of refused packets per partition: each slot with
    /// a tag, then (`None`) the pairs without a slot.
    pub fn read_partitions(&self) -> Vec<(Option<PartitionTag>, PartitionStats)> {
        let counts = self.partitions.load_all();
        let mut out: Vec<_> = self
            .partition_tags
            .iter()
            .zip(&counts)
            .filter_map(|(a, c)| {
                Some((
                    Some(PartitionTag::from_word(a.load(Ordering::Acquire))?),
                    *c,
                ))
            })
            .collect();
        out.push((None, counts.last().copied().unwrap_or_default()));
        out
    }

    /// Stores the worker's heaviest punt sources (worker only; at most
    /// [`HEAVIEST`]).
    pub fn publish_sources(&self, sources: &[PuntSource]) {
        shm::seqlock::publish(&self.sources, 0, |words| {
            for i in 0..HEAVIEST {
                let w = sources
                    .get(i)
                    .map_or([0; PuntSource::WORDS], PuntSource::to_words);
                shm::seqlock::store(words, 1 + i * PuntSource::WORDS, &w);
            }
        });
    }

    /// The worker's heaviest punt sources as it last reported them (none
    /// if no consistent copy could be read).
    pub fn read_sources(&self) -> Vec<PuntSource> {
        let mut words = vec![0u64; self.sources.len()];
        for _ in 0..SOURCES_READ_TRIES {
            if shm::seqlock::read(&self.sources, 0, &mut words).is_some() {
                return words[1..]
                    .chunks(PuntSource::WORDS)
                    .filter_map(PuntSource::from_words)
                    .collect();
            }
            std::hint::spin_loop();
        }
        Vec::new()
    }

    /// Stores the worker's counters (worker only): its ports' and its own.
    pub fn publish(&self, local: &[PortStats], worker: &WorkerStats) {
        self.ports.store(local);
        self.worker.store_at(0, worker);
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Loads the counters of every port.
    pub fn read(&self) -> Vec<PortStats> {
        let _ = self.epoch.load(Ordering::Acquire);
        self.ports.load_all()
    }

    /// Loads the worker's own counters (passes, bursts, cycles).
    pub fn read_worker(&self) -> WorkerStats {
        let _ = self.epoch.load(Ordering::Acquire);
        self.worker.load(0)
    }
}

/// Sums the per-group counters of several workers, slot by slot (the last
/// entry: the groups without a slot).
pub fn sum_mcast(blocks: &[std::sync::Arc<StatsBlock>]) -> Vec<GroupStats> {
    let mut total = vec![GroupStats::default(); MCAST_SLOTS + 1];
    for b in blocks {
        for (t, c) in total.iter_mut().zip(b.read_mcast()) {
            t.add(&c);
        }
    }
    total
}

/// Sums the counts of refused packets per partition of several workers,
/// by (key, ingress port), sorted; the last entry (`None`): the pairs a
/// worker had no slot for.
pub fn sum_partitions(
    blocks: &[std::sync::Arc<StatsBlock>],
) -> Vec<(Option<PartitionTag>, PartitionStats)> {
    let mut total: std::collections::BTreeMap<(u16, u16), PartitionStats> = Default::default();
    let mut other = PartitionStats::default();
    for b in blocks {
        for (tag, c) in b.read_partitions() {
            match tag {
                Some(t) => total.entry((t.key, t.port.0)).or_default().add(&c),
                None => other.add(&c),
            }
        }
    }
    total
        .into_iter()
        .map(|((key, port), c)| {
            let tag = PartitionTag {
                key,
                port: rrp::PortId(port),
            };
            (Some(tag), c)
        })
        .chain([(None, other)])
        .collect()
}

/// The box's heaviest punt sources: the workers' reports merged
/// ([`PuntSource::heaviest`]).
pub fn heaviest_sources(blocks: &[std::sync::Arc<StatsBlock>]) -> Vec<PuntSource> {
    PuntSource::heaviest(blocks.iter().flat_map(|b| b.read_sources()))
}

/// Each worker's own counters (passes, bursts, cycles), worker 0 first.
pub fn workers(blocks: &[std::sync::Arc<StatsBlock>]) -> Vec<WorkerStats> {
    blocks.iter().map(|b| b.read_worker()).collect()
}

/// Sums the counters of several workers, port by port.
pub fn sum(blocks: &[std::sync::Arc<StatsBlock>]) -> Vec<PortStats> {
    let mut total: Vec<PortStats> = Vec::new();
    for b in blocks {
        let r = b.read();
        if total.len() < r.len() {
            total.resize(r.len(), PortStats::default());
        }
        for (t, c) in total.iter_mut().zip(&r) {
            t.add(c);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_and_read_back() {
        let mut c = PortStats {
            received: 10,
            forwarded: 6,
            punted: 1,
            ..Default::default()
        };
        c.dropped[rrp::DropReason::NoRoute] = 3;
        assert!(c.balanced());
        let b = StatsBlock::new(2);
        let w = WorkerStats {
            received: 10,
            polls: 3,
            ..WorkerStats::default()
        };
        b.publish(&[c, PortStats::default()], &w);
        assert_eq!(b.read()[0], c);
        assert_eq!(b.read_worker(), w);
        let s = sum(&[std::sync::Arc::new(b)]);
        assert_eq!(s[0].dropped(rrp::DropReason::NoRoute), 3);
    }

    #[test]
    fn partition_drops_published_and_summed() {
        use rrp::PortId;
        let (a, b) = (StatsBlock::new(2), StatsBlock::new(2));
        let mut d = PartitionDrops::default();
        d.count(0x10, PortId(1));
        d.count(0x20, PortId(0));
        d.count(0x10, PortId(1));
        a.publish_partitions(&d);
        let mut e = PartitionDrops::default();
        e.count(0x10, PortId(1));
        b.publish_partitions(&e);
        let s = sum_partitions(&[std::sync::Arc::new(a), std::sync::Arc::new(b)]);
        let tag = |key, p| {
            Some(PartitionTag {
                key,
                port: PortId(p),
            })
        };
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].0, s[0].1.dropped), (tag(0x10, 1), 3));
        assert_eq!((s[1].0, s[1].1.dropped), (tag(0x20, 0), 1));
        assert_eq!((s[2].0, s[2].1.dropped), (None, 0));
    }

    #[test]
    fn heaviest_sources_published_and_merged() {
        use rrp::{NativeAddr, PortId, PuntClass};
        let src = |n: u8, offered: u64| PuntSource {
            class: PuntClass::Management,
            port: PortId(1),
            link: rrp::LinkKind::Ethernet,
            native: NativeAddr::mac([2, 0, 0, 0, 0, n]),
            offered_per_s: offered,
            dropped_per_s: 0,
        };
        let (a, b) = (StatsBlock::new(2), StatsBlock::new(2));
        assert!(a.read_sources().is_empty());
        a.publish_sources(&[src(1, 10), src(2, 5)]);
        b.publish_sources(&[src(2, 7)]);
        let h = heaviest_sources(&[std::sync::Arc::new(a), std::sync::Arc::new(b)]);
        assert_eq!(h, [src(2, 12), src(1, 10)]);
    }
}
