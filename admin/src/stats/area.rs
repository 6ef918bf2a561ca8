//! The stats file: [`StatsWriter`] (the control thread) and [`StatsReader`]
//! (anyone). Layout and protocol: docs/stats.md.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rrp::PortId;
use rrp::router::RouterStats;

use super::snapshot::router_slots;
use super::{
    Error, HEADER_SLOTS, MAGIC, MAX_PORTS, PLANE_FIELDS, PORT_FIELDS, PlaneStatsSnapshot,
    PortSnapshot, ROUTER_FIELDS, Result, RouterSnapshot, Snapshot, VERSION, area_slots, slot,
};

/// How often the daemon publishes: counters read from the area are at most
/// this old.
pub const PUBLISH_INTERVAL: Duration = Duration::from_millis(100);

/// How long [`StatsReader::read`] retries by default before [`Error::Busy`].
const READ_TIMEOUT: Duration = Duration::from_secs(1);

const GENERATION_OFFSET: u64 = (slot::GENERATION * 8) as u64;

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn put(buf: &mut [u8], slot: usize, v: u64) {
    buf[slot * 8..slot * 8 + 8].copy_from_slice(&v.to_le_bytes());
}

fn get(buf: &[u8], slot: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[slot * 8..slot * 8 + 8]);
    u64::from_le_bytes(b)
}

/// Fills `buf` (a whole area) with a header and the given body slots.
fn fill(buf: &mut [u8], ports: usize, generation: u64, started_ns: u64, published_ns: u64) {
    buf[..8].copy_from_slice(&MAGIC);
    put(buf, slot::VERSION, VERSION);
    put(buf, slot::GENERATION, generation);
    put(buf, slot::STARTED_NS, started_ns);
    put(buf, slot::PUBLISHED_NS, published_ns);
    put(buf, slot::PORTS, ports as u64);
    put(buf, slot::PORT_FIELDS, PORT_FIELDS as u64);
    put(buf, slot::ROUTER_FIELDS, ROUTER_FIELDS as u64);
    put(buf, slot::PLANE_FIELDS, PLANE_FIELDS as u64);
}

/// The publisher of a stats area: one per daemon, used by one thread (the
/// control thread, every [`PUBLISH_INTERVAL`]). Publications are serialised
/// by a lock, so a second publishing thread would be correct, only slower.
#[derive(Debug)]
pub struct StatsWriter {
    file: File,
    path: PathBuf,
    ports: usize,
    started_ns: u64,
    /// The last even generation written (and the publication lock).
    generation: Mutex<u64>,
}

impl StatsWriter {
    /// Creates the area for `ports` ports at `path`, all counters zero: the
    /// file is written whole under a temporary name in the same directory
    /// and renamed over `path`, so a reader never sees a partial file, and
    /// a reader of a previous run's file switches to the new one on its
    /// next read. Mode 0644 (less the umask): readers need no privilege
    /// beyond reading the directory.
    pub fn create(path: impl AsRef<Path>, ports: usize) -> Result<StatsWriter> {
        if ports > MAX_PORTS {
            return Err(Error::TooManyPorts(ports));
        }
        let path = path.as_ref().to_path_buf();
        let name = path.file_name().ok_or_else(|| {
            Error::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a file path", path.display()),
            ))
        })?;
        let tmp = path.with_file_name(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(&tmp)?;
        let started_ns = now_ns();
        let mut buf = vec![0u8; area_slots(ports) * 8];
        fill(&mut buf, ports, 0, started_ns, 0);
        let done = file
            .write_all_at(&buf, 0)
            .and_then(|()| fs::rename(&tmp, &path));
        if let Err(e) = done {
            let _ = fs::remove_file(&tmp);
            return Err(e.into());
        }
        Ok(StatsWriter {
            file,
            path,
            ports,
            started_ns,
            generation: Mutex::new(0),
        })
    }

    /// Publishes one set of counters: generation made odd, the whole area
    /// written, generation made even again (three positioned writes). The
    /// ports' counters come as slots (the workers' counters summed).
    pub fn publish(
        &self,
        ports: &[[u64; PORT_FIELDS]],
        router: &RouterStats,
        plane: &PlaneStatsSnapshot,
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
        let odd = *generation + 1;
        let mut buf = vec![0u8; area_slots(self.ports) * 8];
        fill(&mut buf, self.ports, odd, self.started_ns, now_ns());
        let mut at = HEADER_SLOTS;
        for c in ports {
            for v in c {
                put(&mut buf, at, *v);
                at += 1;
            }
        }
        for v in router_slots(router).into_iter().chain(plane.slots()) {
            put(&mut buf, at, v);
            at += 1;
        }
        debug_assert_eq!(at, area_slots(self.ports));
        // Readers that see an odd generation, or one that changed between
        // their first and last read, retry.
        self.file
            .write_all_at(&odd.to_le_bytes(), GENERATION_OFFSET)?;
        self.file.write_all_at(&buf, 0)?;
        self.file
            .write_all_at(&(odd + 1).to_le_bytes(), GENERATION_OFFSET)?;
        *generation = odd + 1;
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
/// only reads the file (opened read-only) and never blocks the publisher.
#[derive(Debug)]
pub struct StatsReader {
    path: PathBuf,
    file: File,
    /// Device and inode of `file`, to notice a new daemon's area.
    id: (u64, u64),
    ports: usize,
    buf: Vec<u8>,
    timeout: Duration,
    retries: u64,
}

impl StatsReader {
    /// Opens the area at `path` and checks its header against this build's
    /// layout.
    pub fn open(path: impl AsRef<Path>) -> Result<StatsReader> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path)?;
        let meta = file.metadata()?;
        let mut header = [0u8; HEADER_SLOTS * 8];
        file.read_exact_at(&mut header, 0).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                Error::BadMagic
            } else {
                Error::Io(e)
            }
        })?;
        if header[..8] != MAGIC {
            return Err(Error::BadMagic);
        }
        let version = get(&header, slot::VERSION);
        if version != VERSION {
            return Err(Error::Version(version));
        }
        let ports = get(&header, slot::PORTS);
        for (what, at, want) in [
            ("port fields", slot::PORT_FIELDS, PORT_FIELDS),
            ("router fields", slot::ROUTER_FIELDS, ROUTER_FIELDS),
            ("plane fields", slot::PLANE_FIELDS, PLANE_FIELDS),
        ] {
            let got = get(&header, at);
            if got != want as u64 {
                return Err(Error::Layout(format!(
                    "{got} {what}, this build has {want}"
                )));
            }
        }
        let ports = match usize::try_from(ports) {
            Ok(p) if p <= MAX_PORTS => p,
            _ => return Err(Error::Layout(format!("{ports} ports"))),
        };
        let len = (area_slots(ports) * 8) as u64;
        if meta.len() != len {
            return Err(Error::Layout(format!(
                "{} bytes for {ports} ports, expected {len}",
                meta.len()
            )));
        }
        Ok(StatsReader {
            path,
            file,
            id: (meta.dev(), meta.ino()),
            ports,
            buf: vec![0u8; len as usize],
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
            let first = self.generation()?;
            if first % 2 == 0 {
                self.file.read_exact_at(&mut self.buf, 0)?;
                let last = self.generation()?;
                if last == first && get(&self.buf, slot::GENERATION) == first {
                    return Ok(self.parse());
                }
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

    fn generation(&self) -> Result<u64> {
        let mut b = [0u8; 8];
        self.file.read_exact_at(&mut b, GENERATION_OFFSET)?;
        Ok(u64::from_le_bytes(b))
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

    fn parse(&self) -> Snapshot {
        let b = &self.buf;
        let mut at = HEADER_SLOTS;
        let ports = (0..self.ports)
            .map(|p| {
                let s: [u64; PORT_FIELDS] = core::array::from_fn(|i| get(b, at + i));
                at += PORT_FIELDS;
                PortSnapshot::from_slots(PortId::new(p), &s)
            })
            .collect();
        let r: [u64; ROUTER_FIELDS] = core::array::from_fn(|i| get(b, at + i));
        at += ROUTER_FIELDS;
        let p: [u64; PLANE_FIELDS] = core::array::from_fn(|i| get(b, at + i));
        Snapshot {
            generation: get(b, slot::GENERATION),
            started_ns: get(b, slot::STARTED_NS),
            published_ns: get(b, slot::PUBLISHED_NS),
            ports,
            rrp: RouterSnapshot::from_slots(&r),
            plane: PlaneStatsSnapshot::from_slots(&p),
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
