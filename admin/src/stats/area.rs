//! The stats segment: [`StatsWriter`] (the control thread) and
//! [`StatsReader`] (anyone). Layout and protocol: docs/stats.md.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rrp::counters::{CounterSet, WorkerStats};
use rrp::router::RouterStats;
use rrp::{PortId, PortStats, PuntSource};
use shm::{Segment, seqlock};

use super::{
    AreaHeader, Error, GENERATION_SLOT, HEADER_SLOTS, MAGIC, MAX_PORTS, MAX_WORKERS,
    PUBLISHED_SLOT, PlaneStats, PortSnapshot, Result, SOURCE_SLOTS, Snapshot, VERSION,
    WorkerSnapshot, area_slots,
};

/// How often the daemon publishes: counters read from the area are at most
/// this old.
pub const PUBLISH_INTERVAL: Duration = Duration::from_millis(100);

/// How long [`StatsReader::read`] retries by default before [`Error::Busy`].
const READ_TIMEOUT: Duration = Duration::from_secs(1);

/// Mode of a new area (less the umask): readers need no privilege beyond
/// reading the directory.
const MODE: u32 = 0o644;

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Where each part of an area of `ports` ports starts, in words.
#[derive(Debug, Clone, Copy)]
struct Offsets {
    ports: usize,
    router: usize,
    plane: usize,
    sources: usize,
    workers: usize,
    end: usize,
}

impl Offsets {
    fn new(ports: usize, workers: usize) -> Offsets {
        let router = HEADER_SLOTS + ports * PortStats::SLOTS;
        let plane = router + RouterStats::SLOTS;
        let sources = plane + PlaneStats::SLOTS;
        let first_worker = sources + SOURCE_SLOTS;
        Offsets {
            ports: HEADER_SLOTS,
            router,
            plane,
            sources,
            workers: first_worker,
            end: first_worker + workers * WorkerStats::SLOTS,
        }
    }
}

/// The publisher of a stats area: one per daemon, used by one thread (the
/// control thread, every [`PUBLISH_INTERVAL`]). Publications are serialised
/// by a lock, so a second publishing thread would be correct, only slower.
#[derive(Debug)]
pub struct StatsWriter {
    segment: Segment,
    path: PathBuf,
    ports: usize,
    workers: usize,
    started_ns: u64,
    /// The last even generation written (and the publication lock).
    generation: Mutex<u64>,
}

impl StatsWriter {
    /// Creates the area for `ports` ports and `workers` dataplane workers
    /// at `path`, all counters zero: the
    /// file is written whole under a temporary name in the same directory
    /// and renamed over `path` (`shm::Segment::create`), so a reader never
    /// sees a partial area, and a reader of a previous run's area switches
    /// to the new one on its next read. Mode 0644 (less the umask).
    pub fn create(path: impl AsRef<Path>, ports: usize, workers: usize) -> Result<StatsWriter> {
        if ports > MAX_PORTS {
            return Err(Error::TooManyPorts(ports));
        }
        if workers > MAX_WORKERS {
            return Err(Error::TooManyWorkers(workers));
        }
        let path = path.as_ref().to_path_buf();
        let started_ns = now_ns();
        let mut init = vec![0u64; area_slots(ports, workers)];
        let header = AreaHeader::new(ports, workers, started_ns);
        init[..HEADER_SLOTS].copy_from_slice(bytemuck::cast_slice(core::slice::from_ref(&header)));
        let segment = Segment::create(&path, &init, MODE)?;
        Ok(StatsWriter {
            segment,
            path,
            ports,
            workers,
            started_ns,
            generation: Mutex::new(0),
        })
    }

    /// Publishes one set of counters, the heaviest punt sources (at
    /// most [`rrp::punt_source::HEAVIEST`]; more are left out) and the
    /// workers' own counters (those beyond the area's workers left out,
    /// those missing zero) under the seqlock: the generation made odd, the
    /// publication time and every counter set stored, the generation made
    /// even again.
    pub fn publish(
        &self,
        ports: &[PortStats],
        router: &RouterStats,
        plane: &PlaneStats,
        sources: &[PuntSource],
        workers: &[WorkerStats],
    ) -> Result<()> {
        if ports.len() != self.ports {
            return Err(Error::Ports {
                expected: self.ports,
                got: ports.len(),
            });
        }
        let mut generation = self
            .generation
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let at = Offsets::new(self.ports, self.workers);
        *generation = seqlock::publish(self.segment.words(), GENERATION_SLOT, |w| {
            seqlock::store(w, PUBLISHED_SLOT, &[now_ns()]);
            seqlock::store(w, at.ports, bytemuck::cast_slice(ports));
            seqlock::store(w, at.router, router.slots());
            seqlock::store(w, at.plane, plane.slots());
            for i in 0..SOURCE_SLOTS / PuntSource::WORDS {
                let words = sources
                    .get(i)
                    .map_or([0; PuntSource::WORDS], PuntSource::to_words);
                seqlock::store(w, at.sources + i * PuntSource::WORDS, &words);
            }
            for i in 0..self.workers {
                let set = workers.get(i).copied().unwrap_or_default();
                seqlock::store(w, at.workers + i * WorkerStats::SLOTS, set.slots());
            }
        });
        Ok(())
    }

    /// The area's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The area's number of ports.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// The area's number of workers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// When the area was created (UNIX time, ns).
    pub fn started_ns(&self) -> u64 {
        self.started_ns
    }

    /// The generation of the last publication (twice the number of
    /// publications).
    pub fn generation(&self) -> u64 {
        *self
            .generation
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A reader of a stats area: `mwctl`, the admin thread, an exporter. It
/// maps the area read-only and never blocks the publisher.
#[derive(Debug)]
pub struct StatsReader {
    path: PathBuf,
    segment: Segment,
    /// Device and inode of the mapped file, to notice a new daemon's area.
    id: (u64, u64),
    ports: usize,
    workers: usize,
    /// The last copy of the area (words, so that the counter sets can be
    /// cast out of it).
    buf: Vec<u64>,
    timeout: Duration,
    retries: u64,
}

impl StatsReader {
    /// Opens the area at `path` and checks its header against this build's
    /// layout.
    pub fn open(path: impl AsRef<Path>) -> Result<StatsReader> {
        let path = path.as_ref().to_path_buf();
        let segment = match Segment::open(&path) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => return Err(Error::BadMagic),
            Err(e) => return Err(e.into()),
        };
        let meta = segment.file().metadata()?;
        let words = segment.words();
        if words.len() < HEADER_SLOTS {
            return Err(Error::BadMagic);
        }
        let mut first = [0u64; HEADER_SLOTS];
        for (f, w) in first.iter_mut().zip(words) {
            *f = w.load(std::sync::atomic::Ordering::Relaxed);
        }
        let header: AreaHeader = bytemuck::cast(first);
        if header.magic != MAGIC {
            return Err(Error::BadMagic);
        }
        if header.version != VERSION {
            return Err(Error::Version(header.version));
        }
        let want = AreaHeader::new(0, 0, 0);
        for (what, got, want) in [
            ("port fields", header.port_slots, want.port_slots),
            ("router fields", header.router_slots, want.router_slots),
            ("plane fields", header.plane_slots, want.plane_slots),
            ("source fields", header.source_slots, want.source_slots),
            ("worker fields", header.worker_slots, want.worker_slots),
        ] {
            if got != want {
                return Err(Error::Layout(format!(
                    "{got} {what}, this build has {want}"
                )));
            }
        }
        let ports = match usize::try_from(header.ports) {
            Ok(p) if p <= MAX_PORTS => p,
            _ => return Err(Error::Layout(format!("{} ports", header.ports))),
        };
        let workers = match usize::try_from(header.workers) {
            Ok(w) if w <= MAX_WORKERS => w,
            _ => return Err(Error::Layout(format!("{} workers", header.workers))),
        };
        let len = area_slots(ports, workers);
        if words.len() != len {
            return Err(Error::Layout(format!(
                "{} bytes for {ports} ports and {workers} workers, expected {}",
                meta.len(),
                len * 8
            )));
        }
        Ok(StatsReader {
            path,
            segment,
            id: (meta.dev(), meta.ino()),
            ports,
            workers,
            buf: vec![0u64; len],
            timeout: READ_TIMEOUT,
            retries: 0,
        })
    }

    /// A consistent snapshot of the last publication. Retries (spinning
    /// briefly, then sleeping 1 ms between tries) while the publisher is
    /// writing, up to the timeout (1 s unless [`StatsReader::set_timeout`]),
    /// then fails with [`Error::Busy`]. If another area has replaced the
    /// file at the path (the daemon restarted), switches to it first.
    pub fn read(&mut self) -> Result<Snapshot> {
        self.follow_replacement()?;
        let deadline = Instant::now() + self.timeout;
        let mut tries = 0u32;
        loop {
            if seqlock::read(self.segment.words(), GENERATION_SLOT, &mut self.buf).is_some() {
                return Ok(self.parse());
            }
            self.retries += 1;
            tries += 1;
            if Instant::now() >= deadline {
                return Err(Error::Busy);
            }
            if tries < 16 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    fn follow_replacement(&mut self) -> Result<()> {
        if let Ok(m) = fs::metadata(&self.path)
            && (m.dev(), m.ino()) != self.id
        {
            let mut new = StatsReader::open(&self.path)?;
            new.timeout = self.timeout;
            new.retries = self.retries;
            *self = new;
        }
        Ok(())
    }

    /// The snapshot in the last consistent copy: the counter sets cast out
    /// of it.
    fn parse(&self) -> Snapshot {
        let at = Offsets::new(self.ports, self.workers);
        let header: AreaHeader = bytemuck::cast_slice(&self.buf[..HEADER_SLOTS])[0];
        let ports: &[PortStats] = bytemuck::cast_slice(&self.buf[at.ports..at.router]);
        let router: RouterStats = bytemuck::cast_slice(&self.buf[at.router..at.plane])[0];
        let plane: PlaneStats = bytemuck::cast_slice(&self.buf[at.plane..at.sources])[0];
        let punt_sources = self.buf[at.sources..at.workers]
            .chunks(PuntSource::WORDS)
            .filter_map(PuntSource::from_words)
            .collect();
        let workers: &[WorkerStats] = bytemuck::cast_slice(&self.buf[at.workers..at.end]);
        Snapshot {
            generation: header.generation,
            started_ns: header.started_ns,
            published_ns: header.published_ns,
            ports: ports
                .iter()
                .enumerate()
                .map(|(i, p)| PortSnapshot::new(PortId::new(i), *p))
                .collect(),
            rrp: router,
            plane,
            punt_sources,
            workers: workers
                .iter()
                .enumerate()
                .map(|(i, w)| WorkerSnapshot::new(i, *w))
                .collect(),
            partitions: Vec::new(),
        }
    }

    /// How long [`StatsReader::read`] retries before [`Error::Busy`].
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The area's number of ports.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// The area's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads retried so far (the publisher was writing): a diagnostic.
    pub fn retries(&self) -> u64 {
        self.retries
    }
}
