//! The stats area as the daemon publishes it (admin::stats, control::stats): publish/read round trip, torn
//! reads under a continuously publishing writer, baselines, the Prometheus
//! text exposition (checked by promtool when it is installed, and always by
//! a strict parser of the format here), and the HTTP listener.

use rrp::PortId;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use admin::stats::{
    self, Baseline, Error, PlaneStats, PortSnapshot, Snapshot, StatsReader, StatsWriter, prometheus,
};
use control::stats::{EngineStats, publish_blocks, serve_prometheus};
use dataplane::StatsBlock;
use rrp::counters::{CounterSet, Kind, WorkerStats};
use rrp::router::{RouterStats, RtRefusal};
use rrp::{DropReason, LinkKind, NativeAddr, PortStats, PuntClass, PuntSource};

// ----- fixtures ----------------------------------------------------------------

fn area() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mwrouter.stats");
    (dir, path)
}

/// Distinct values everywhere: port p, field i -> 1000 * (p + 1) + i.
fn port_counters(p: usize) -> PortStats {
    let b = 1000 * (p as u64 + 1);
    let mut c = PortStats {
        received: b,
        rx_errors: b + 1,
        forwarded: b + 2,
        punted: b + 3,
        transmitted: b + 4,
        injected: b + 5,
        inject_failed: b + 6,
        notices: b + 7,
        notices_dropped: b + 8,
        rx_bytes: b + 50,
        tx_bytes: b + 51,
        rx_missed: b + 52,
        rx_no_buffer: b + 53,
        rx_link_errors: b + 54,
        tx_link_errors: b + 55,
        ..PortStats::default()
    };
    for (i, d) in c.dropped.0.iter_mut().enumerate() {
        *d = b + 100 + i as u64;
    }
    c
}

fn router_stats() -> RouterStats {
    let mut r = RouterStats {
        received: 1,
        parse_errors: 2,
        not_control: 3,
        sent: 4,
        rts_received: 5,
        rts_accepted: 6,
        rts_refreshed: 7,
        rts_expired: 8,
        rts_deleted_down: 9,
        rts_sent: 10,
        requests_answered: 11,
        err_unk_sent: 12,
        redirects_sent: 13,
        err_general_sent: 14,
        errors_suppressed_err: 15,
        errors_suppressed_source: 16,
        errors_suppressed_rate: 17,
        hr_down: 18,
        fib_versions: 19,
        requests_limited: 40,
        auth_verified: 41,
        auth_refused_missing: 42,
        auth_refused_malformed: 43,
        auth_refused_unknown_key: 44,
        auth_refused_bad_digest: 45,
        auth_refused_replay: 46,
        ..RouterStats::default()
    };
    r.rts_refused[RtRefusal::Stale] = 20;
    r.rts_refused[RtRefusal::BadPart] = 21;
    r
}

fn plane() -> PlaneStats {
    PlaneStats {
        punts: 31,
        notices: 32,
        injected: 33,
        inject_full: 34,
        inject_bad_native: 35,
        fibs_published: 36,
        fib_version: 37,
    }
}

/// Every counter `n`.
fn uniform(ports: usize, n: u64) -> (Vec<PortStats>, RouterStats, PlaneStats) {
    let mut c = PortStats::default();
    c.slots_mut().fill(n);
    let mut r = RouterStats::default();
    r.slots_mut().fill(n);
    let mut p = PlaneStats::default();
    p.slots_mut().fill(n);
    (vec![c; ports], r, p)
}

/// A port's counters read back from the area.
fn counters(p: &PortSnapshot) -> PortStats {
    p.stats
}

/// Every slot of a snapshot's body.
fn all_slots(s: &Snapshot) -> Vec<u64> {
    let mut v: Vec<u64> = s.ports.iter().flat_map(|p| p.slots().to_vec()).collect();
    v.extend(s.rrp.slots());
    v.extend(s.plane.slots());
    v
}

fn same_counters(a: &Snapshot, b: &Snapshot) -> bool {
    a.ports == b.ports && a.rrp == b.rrp && a.plane == b.plane
}

// ----- the area ------------------------------------------------------------------

#[test]
fn publish_read_round_trip() {
    let (_dir, path) = area();
    let w = StatsWriter::create(&path, 3, 0).unwrap();
    let mut r = StatsReader::open(&path).unwrap();
    assert_eq!(r.ports(), 3);

    // Before the first publication: zeros, generation 0.
    let s = r.read().unwrap();
    assert_eq!(s.generation, 0);
    assert_eq!(s.published_ns, 0);
    assert_eq!(s.started_ns, w.started_ns());
    assert_eq!(s.ports.len(), 3);
    assert!(all_slots(&s).iter().all(|&v| v == 0));

    let ports: Vec<PortStats> = (0..3).map(port_counters).collect();
    w.publish(&ports, &router_stats(), &plane(), &[], &[])
        .unwrap();
    let s = r.read().unwrap();
    assert_eq!(s.generation, 2);
    assert_eq!(w.generation(), 2);
    assert!(s.published_ns >= s.started_ns && s.published_ns > 0);
    let want = Snapshot::new(&ports, &router_stats(), &plane());
    assert!(same_counters(&s, &want), "{s:#?}");
    for (i, p) in s.ports.iter().enumerate() {
        assert_eq!(p.port.index(), i);
        assert_eq!(counters(p), ports[i]);
        assert_eq!(
            p.dropped(DropReason::NoRoute),
            ports[i].dropped(DropReason::NoRoute)
        );
        assert_eq!(p.dropped_total(), ports[i].dropped_total());
        assert_eq!(p.dropped.len(), DropReason::COUNT);
    }
    assert_eq!(s.rrp.rts_accepted, 6);
    assert_eq!(s.rrp.rts_refused["stale"], 20);
    assert_eq!(s.rrp.rts_refused["bad-part"], 21);
    assert_eq!(s.rrp.rts_refused["loop"], 0);
    assert_eq!(s.rrp.rts_refused.len(), RtRefusal::COUNT);
    assert_eq!(s.plane, plane());

    // Serde: `mwctl stats --json` and back.
    let json = serde_json::to_string(&s).unwrap();
    let back: Snapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["ports"][1]["dropped"]["no-route"], 1000 * 2 + 100 + 5);
    assert_eq!(v["rrp"]["rts_accepted"], 6);
    assert_eq!(v["plane"]["fib_version"], 37);

    // A second publication; a second reader agrees.
    w.publish(
        &ports[..].iter().rev().copied().collect::<Vec<_>>(),
        &RouterStats::default(),
        &PlaneStats::default(),
        &[],
        &[],
    )
    .unwrap();
    let s2 = StatsReader::open(&path).unwrap().read().unwrap();
    assert_eq!(s2.generation, 4);
    assert_eq!(counters(&s2.ports[0]), ports[2]);
    assert_eq!(r.read().unwrap(), s2);
}

#[test]
fn file_size_and_header_follow_the_documented_layout() {
    let (_dir, path) = area();
    let w = StatsWriter::create(&path, 2, 1).unwrap();
    let worker = WorkerStats {
        received: 4000,
        polls: 77,
        tsc_hz: 2_000_000_000,
        ..WorkerStats::default()
    };
    let flooder = PuntSource {
        class: PuntClass::Management,
        port: PortId(1),
        link: LinkKind::Udp,
        native: NativeAddr::udp("127.0.0.1:41822".parse().unwrap()),
        offered_per_s: 180_000,
        dropped_per_s: 178_750,
    };
    w.publish(
        &[port_counters(0), port_counters(1)],
        &router_stats(),
        &plane(),
        &[flooder],
        &[worker],
    )
    .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), stats::area_slots(2, 1) * 8);
    assert_eq!(stats::area_slots(2, 1), 16 + 2 * 49 + 43 + 7 + 16 * 6 + 9);
    let slot = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
    assert_eq!(&bytes[..8], b"MWSTATS1");
    assert_eq!(slot(1), 11); // version
    assert_eq!(slot(2), 2); // generation
    assert_eq!(slot(3), w.started_ns());
    assert_eq!(slot(5), 2); // ports
    assert_eq!((slot(6), slot(7), slot(8), slot(9)), (49, 43, 7, 96));
    assert_eq!((slot(10), slot(11)), (1, 9)); // workers, words per worker
    // Port 1's `received`, `strangers` (0: the engine's, not published
    // here), its drop reason spoofed-source and, after the drop reasons,
    // the punts by class, then the link's counters.
    assert_eq!(slot(16 + 49), 2000);
    assert_eq!(slot(16 + 49 + 9), 0);
    assert_eq!(slot(16 + 49 + 24), 2000 + 100 + 14);
    assert_eq!(slot(16 + 49 + 27), 0, "punted_by_class.routing");
    assert_eq!(slot(16 + 49 + 43), 2000 + 50, "rx_bytes");
    assert_eq!(slot(16 + 49 + 48), 2000 + 55, "tx_link_errors");
    // Router: received first; requests_limited after fib_versions, then
    // the authentication counters; rts_refused.stale; plane.fib_version last.
    let router = 16 + 2 * 49;
    assert_eq!(slot(router), 1);
    assert_eq!(slot(router + 19), 40);
    assert_eq!(slot(router + 20), 41);
    assert_eq!(slot(router + 23), 42); // auth_refused_missing
    assert_eq!(slot(router + 27), 46); // auth_refused_replay
    assert_eq!(slot(router + 32 + 3), 20);
    assert_eq!(slot(router + 43 + 6), 37);
    // The heaviest sources last: class + 1 and link kind and port in the
    // first word, the native address, the rates; unused entries zero.
    let sources = router + 43 + 7;
    assert_eq!(slot(sources), (3 << 32) | (1 << 16) | 1);
    assert_eq!((slot(sources + 4), slot(sources + 5)), (180_000, 178_750));
    assert!((sources + 6..sources + 96).all(|i| slot(i) == 0));
    // Then each worker's own counters: received first, polls fourth,
    // tsc_hz last.
    let workers = sources + 96;
    assert_eq!(slot(workers), 4000);
    assert_eq!(slot(workers + 3), 77);
    assert_eq!(slot(workers + 8), 2_000_000_000);
    assert_eq!(workers + 9, stats::area_slots(2, 1));
    let read = StatsReader::open(&path).unwrap().read().unwrap();
    assert_eq!(read.punt_sources, [flooder]);
    assert_eq!(read.workers.len(), 1);
    assert_eq!(read.workers[0].stats, worker);
    let meta = std::fs::metadata(&path).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(meta.permissions().mode() & 0o444, 0o444 & !umask_bits());
}

fn umask_bits() -> u32 {
    // The test process's umask, read back from a file it creates.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("probe");
    std::fs::File::create(&p).unwrap();
    use std::os::unix::fs::PermissionsExt;
    !std::fs::metadata(&p).unwrap().permissions().mode() & 0o666
}

#[test]
fn publish_blocks_sums_the_workers() {
    let (_dir, path) = area();
    let w = StatsWriter::create(&path, 2, 2).unwrap();
    let a = Arc::new(StatsBlock::new(2));
    let b = Arc::new(StatsBlock::new(2));
    let worker = |polls: u64| WorkerStats {
        polls,
        busy_cycles: 10 * polls,
        tsc_hz: 1_000_000_000,
        ..WorkerStats::default()
    };
    a.publish(&[port_counters(0), port_counters(1)], &worker(5));
    b.publish(&[port_counters(0), PortStats::default()], &worker(7));
    let ps = PlaneStats {
        fib_version: 9,
        punts: 4,
        ..PlaneStats::default()
    };
    let engine = EngineStats {
        router: router_stats(),
        ports: Vec::new(),
    };
    publish_blocks(&w, &[a, b], &engine, &ps).unwrap();
    let s = StatsReader::open(&path).unwrap().read().unwrap();
    let mut twice = port_counters(0);
    twice.add(&port_counters(0));
    assert_eq!(counters(&s.ports[0]), twice);
    assert_eq!(counters(&s.ports[1]), port_counters(1));
    assert_eq!(s.plane.fib_version, 9);
    assert_eq!(s.plane.punts, 4);
    // Each worker's own counters, apart.
    assert_eq!(s.workers.len(), 2);
    assert_eq!((s.workers[0].worker, s.workers[0].stats), (0, worker(5)));
    assert_eq!((s.workers[1].worker, s.workers[1].stats), (1, worker(7)));
    // No worker yet: zeros.
    publish_blocks(&w, &[], &EngineStats::default(), &ps).unwrap();
    let s = StatsReader::open(&path).unwrap().read().unwrap();
    assert_eq!(s.ports[1].received, 0);
}

#[test]
fn wrong_port_count_and_bad_files_are_refused() {
    let (dir, path) = area();
    let w = StatsWriter::create(&path, 2, 0).unwrap();
    assert!(matches!(
        w.publish(
            &[PortStats::default()],
            &RouterStats::default(),
            &plane(),
            &[],
            &[],
        ),
        Err(Error::Ports {
            expected: 2,
            got: 1
        })
    ));
    assert!(matches!(
        StatsWriter::create(dir.path().join("big"), stats::MAX_PORTS + 1, 0),
        Err(Error::TooManyPorts(_))
    ));

    let other = dir.path().join("other");
    std::fs::write(
        &other,
        b"not a stats file at all, not at all, not at all....",
    )
    .unwrap();
    let e = StatsReader::open(&other).unwrap_err();
    assert!(matches!(e, Error::BadMagic), "{e}");
    std::fs::write(&other, b"short").unwrap();
    assert!(matches!(StatsReader::open(&other), Err(Error::BadMagic)));
    assert!(matches!(
        StatsReader::open(dir.path().join("missing")),
        Err(Error::Io(_))
    ));

    // Another layout version.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8..16].copy_from_slice(&99u64.to_le_bytes());
    std::fs::write(&other, &bytes).unwrap();
    assert!(matches!(StatsReader::open(&other), Err(Error::Version(99))));
    // Another number of port fields.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[48..56].copy_from_slice(&20u64.to_le_bytes());
    std::fs::write(&other, &bytes).unwrap();
    assert!(matches!(StatsReader::open(&other), Err(Error::Layout(_))));
    // A size that does not match the header.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() - 8);
    std::fs::write(&other, &bytes).unwrap();
    let e = StatsReader::open(&other).unwrap_err();
    assert!(matches!(e, Error::Layout(_)), "{e}");
}

/// A writer publishing as fast as it can while readers read: every snapshot
/// is one publication (all counters equal to the publication's number, the
/// generation twice that), never a mix of two. The writer pauses 20 us
/// between publications, 5,000 times as often as the daemon publishes (every
/// 100 ms): a writer that never leaves the area unlocked starves a reader
/// whose copy is slower than one publication (an unoptimised build) into
/// `Busy`, which is what `Busy` is for, not what this test is about.
#[test]
fn torn_reads_are_retried() {
    const PORTS: usize = 4;
    let (_dir, path) = area();
    let w = StatsWriter::create(&path, PORTS, 0).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = thread::spawn({
        let stop = stop.clone();
        move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) && n < 2_000_000 {
                n += 1;
                let (p, r, pl) = uniform(PORTS, n);
                w.publish(&p, &r, &pl, &[], &[]).unwrap();
                thread::sleep(Duration::from_micros(20));
            }
            n
        }
    });
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let path = path.clone();
            thread::spawn(move || {
                let mut r = StatsReader::open(&path).unwrap();
                let start = Instant::now();
                let mut seen = BTreeSet::new();
                let mut last = 0u64;
                let mut reads = 0u64;
                while start.elapsed() < Duration::from_millis(1500) {
                    let s = r.read().unwrap();
                    reads += 1;
                    let slots = all_slots(&s);
                    let n = slots[0];
                    assert!(
                        slots.iter().all(|&v| v == n),
                        "torn snapshot at generation {}: {slots:?}",
                        s.generation
                    );
                    assert_eq!(s.generation, 2 * n, "header and body of one publication");
                    assert!(n >= last, "went backwards: {last} -> {n}");
                    last = n;
                    seen.insert(n);
                }
                (reads, seen.len(), r.retries())
            })
        })
        .collect();
    let results: Vec<_> = readers.into_iter().map(|t| t.join().unwrap()).collect();
    stop.store(true, Ordering::Relaxed);
    let published = writer.join().unwrap();
    for (reads, distinct, retries) in &results {
        eprintln!("published {published}, read {reads}, distinct {distinct}, retries {retries}");
        assert!(*distinct > 1, "the reader saw the writer progress");
    }
}

/// Deterministic: a publisher caught half-way (odd generation) makes the
/// reader wait, then succeed; one that never finishes makes it give up.
#[test]
fn odd_generation_waits_then_busy() {
    let (_dir, path) = area();
    let w = StatsWriter::create(&path, 1, 0).unwrap();
    w.publish(&[port_counters(0)], &router_stats(), &plane(), &[], &[])
        .unwrap();
    let raw = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    raw.write_all_at(&3u64.to_le_bytes(), 16).unwrap();

    let mut r = StatsReader::open(&path).unwrap();
    r.set_timeout(Duration::from_secs(20));
    let restore = thread::spawn({
        let raw = raw.try_clone().unwrap();
        move || {
            thread::sleep(Duration::from_millis(100));
            raw.write_all_at(&2u64.to_le_bytes(), 16).unwrap();
        }
    });
    let t = Instant::now();
    let s = r.read().unwrap();
    assert!(t.elapsed() >= Duration::from_millis(90));
    assert!(r.retries() > 0);
    assert_eq!(counters(&s.ports[0]), port_counters(0));
    restore.join().unwrap();

    raw.write_all_at(&5u64.to_le_bytes(), 16).unwrap();
    r.set_timeout(Duration::from_millis(50));
    assert!(matches!(r.read(), Err(Error::Busy)));
    // The next publication makes it readable again.
    w.publish(&[port_counters(0)], &router_stats(), &plane(), &[], &[])
        .unwrap();
    assert!(r.read().is_ok());
}

#[test]
fn a_reader_follows_a_new_area_at_the_same_path() {
    let (_dir, path) = area();
    let w1 = StatsWriter::create(&path, 1, 0).unwrap();
    w1.publish(&[port_counters(0)], &router_stats(), &plane(), &[], &[])
        .unwrap();
    let mut r = StatsReader::open(&path).unwrap();
    assert_eq!(r.read().unwrap().started_ns, w1.started_ns());
    thread::sleep(Duration::from_millis(2));
    let w2 = StatsWriter::create(&path, 2, 0).unwrap();
    assert_ne!(w1.started_ns(), w2.started_ns());
    let s = r.read().unwrap();
    assert_eq!(s.started_ns, w2.started_ns());
    assert_eq!(s.ports.len(), 2);
    assert_eq!(r.ports(), 2);
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

// ----- baselines -----------------------------------------------------------------

#[test]
fn baseline_subtracts_for_displays_only() {
    let (_dir, path) = area();
    let w = StatsWriter::create(&path, 2, 0).unwrap();
    let mut r = StatsReader::open(&path).unwrap();
    let (p1, r1, pl1) = uniform(2, 10);
    w.publish(&p1, &r1, &pl1, &[], &[]).unwrap();
    let base = Baseline::new(&r.read().unwrap()); // `clear counters`

    let (p2, r2, pl2) = uniform(2, 25);
    w.publish(&p2, &r2, &pl2, &[], &[]).unwrap();
    let now = r.read().unwrap();
    let shown = now.minus(&base);
    assert_eq!(shown.ports[0].received, 15);
    assert_eq!(shown.ports[1].dropped(DropReason::NoRoute), 15);
    assert_eq!(shown.rrp.rts_accepted, 15);
    assert_eq!(shown.rrp.rts_refused["tombstone"], 15);
    assert_eq!(shown.plane.punts, 15);
    assert_eq!(shown.plane.fib_version, 25, "a gauge is not subtracted");
    assert_eq!(shown.generation, now.generation);
    assert_eq!(shown.published_ns, now.published_ns);

    // The export is the area itself: monotonic.
    let text = prometheus(&now);
    assert!(text.contains("mwrouter_port_received_packets_total{port=\"0\"} 25\n"));
    assert!(text.contains("mwrouter_rrp_rts_accepted_total 25\n"));

    // `clear counters port 1` on top.
    let mut base2 = base.clone();
    base2.clear_port(&now, PortId(1));
    let shown = now.minus(&base2);
    assert_eq!(shown.ports[0].received, 15);
    assert_eq!(shown.ports[1].received, 0);
    assert_eq!(shown.rrp.rts_accepted, 15);

    // Kept as JSON by the daemon.
    let json = serde_json::to_string(&base2).unwrap();
    assert_eq!(serde_json::from_str::<Baseline>(&json).unwrap(), base2);

    // A baseline of another run of the daemon subtracts nothing.
    thread::sleep(Duration::from_millis(2));
    let w2 = StatsWriter::create(&path, 2, 0).unwrap();
    w2.publish(&p1, &r1, &pl1, &[], &[]).unwrap();
    let fresh = r.read().unwrap();
    assert!(!base.applies_to(&fresh));
    assert_eq!(fresh.minus(&base), fresh);

    // A port-only clear against a stale baseline starts from zero.
    let mut base3 = base.clone();
    base3.clear_port(&fresh, PortId(0));
    assert!(base3.applies_to(&fresh));
    let shown = fresh.minus(&base3);
    assert_eq!(shown.ports[0].received, 0);
    assert_eq!(shown.ports[1].received, 10);
    assert_eq!(shown.rrp.rts_accepted, 10);

    // The empty baseline is the identity for in-memory snapshots.
    let s = Snapshot::new(&p1, &r1, &pl1);
    assert_eq!(s.minus(&Baseline::default()), s);
}

#[test]
fn baseline_never_goes_below_zero() {
    let (p, r, pl) = uniform(1, 5);
    let now = Snapshot::new(&p, &r, &pl);
    let (p, r, pl) = uniform(1, 9);
    let base = Baseline::new(&Snapshot::new(&p, &r, &pl));
    let shown = now.minus(&base);
    assert!(shown.ports[0].slots().iter().all(|&v| v == 0));
    assert_eq!(shown.plane.fib_version, 5);
}

// ----- the Prometheus text exposition ------------------------------------------------

/// One sample of an exposition.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// What the strict checker learned of a text.
#[derive(Debug, Default)]
struct Exposition {
    /// Family -> (type, help).
    families: BTreeMap<String, (String, String)>,
    samples: Vec<Sample>,
}

fn valid_metric_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn valid_label_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with("__")
}

/// Unescapes `\\`, `\n` (and `\"` when `quote`); any other escape is an error.
fn unescape(s: &str, quote: bool) -> Result<String, String> {
    let mut o = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            o.push(c);
            continue;
        }
        match it.next() {
            Some('\\') => o.push('\\'),
            Some('n') => o.push('\n'),
            Some('"') if quote => o.push('"'),
            e => return Err(format!("bad escape \\{e:?} in {s:?}")),
        }
    }
    Ok(o)
}

fn parse_value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" => return Ok(f64::INFINITY),
        "-Inf" => return Ok(f64::NEG_INFINITY),
        "NaN" => return Ok(f64::NAN),
        _ => {}
    }
    if s.is_empty()
        || !s
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return Err(format!("bad value {s:?}"));
    }
    s.parse::<f64>()
        .map_err(|e| format!("bad value {s:?}: {e}"))
}

/// Parses `name{a="b",...} value [timestamp]`.
fn parse_sample(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(['{', ' '])
        .ok_or_else(|| format!("no value: {line:?}"))?;
    let name = &line[..name_end];
    if !valid_metric_name(name) {
        return Err(format!("bad metric name {name:?}"));
    }
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(r) = rest.strip_prefix('{') {
        rest = r;
        loop {
            if let Some(r) = rest.strip_prefix('}') {
                if !labels.is_empty() {
                    return Err(format!("trailing comma or empty label set: {line:?}"));
                }
                rest = r;
                break;
            }
            let eq = rest
                .find('=')
                .ok_or_else(|| format!("label without '=': {line:?}"))?;
            let lname = &rest[..eq];
            if !valid_label_name(lname) {
                return Err(format!("bad label name {lname:?}"));
            }
            rest = rest[eq + 1..]
                .strip_prefix('"')
                .ok_or_else(|| format!("unquoted label value: {line:?}"))?;
            // The closing quote: the first '"' not escaped.
            let mut end = None;
            let mut esc = false;
            for (i, c) in rest.char_indices() {
                match (esc, c) {
                    (true, _) => esc = false,
                    (false, '\\') => esc = true,
                    (false, '"') => {
                        end = Some(i);
                        break;
                    }
                    (false, '\n') => return Err("raw line feed in a label value".into()),
                    _ => {}
                }
            }
            let end = end.ok_or_else(|| format!("unterminated label value: {line:?}"))?;
            let value = unescape(&rest[..end], true)?;
            if labels.insert(lname.to_string(), value).is_some() {
                return Err(format!("label {lname} twice: {line:?}"));
            }
            rest = &rest[end + 1..];
            if let Some(r) = rest.strip_prefix(',') {
                rest = r;
                if rest.starts_with('}') {
                    return Err(format!("trailing comma: {line:?}"));
                }
            } else if let Some(r) = rest.strip_prefix('}') {
                rest = r;
                break;
            } else {
                return Err(format!("expected ',' or '}}': {line:?}"));
            }
        }
    }
    let rest = rest
        .strip_prefix(' ')
        .ok_or_else(|| format!("no space before the value: {line:?}"))?;
    let mut parts = rest.split(' ');
    let value = parse_value(parts.next().unwrap_or(""))?;
    if let Some(ts) = parts.next()
        && ts.parse::<i64>().is_err()
    {
        return Err(format!("bad timestamp {ts:?}"));
    }
    if parts.next().is_some() {
        return Err(format!("trailing text: {line:?}"));
    }
    Ok(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// A strict checker of the text exposition format 0.0.4 as this project
/// writes it: names and labels by the grammar, escapes, HELP and TYPE at
/// most once per family and before its samples, families not interleaved,
/// no series twice; and promtool's lints that apply (every family has HELP
/// and TYPE, counters end in `_total` and are finite and >= 0, gauges do
/// not end in `_total`).
fn check_exposition(text: &str) -> Result<Exposition, String> {
    if text.is_empty() || !text.ends_with('\n') {
        return Err("must end with a line feed".into());
    }
    if text.contains('\r') {
        return Err("carriage return".into());
    }
    let mut x = Exposition::default();
    let mut help: BTreeMap<String, String> = BTreeMap::new();
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut with_samples: BTreeSet<String> = BTreeSet::new();
    let mut current: Option<String> = None;
    let mut series = BTreeSet::new();
    let family_of = |name: &str, types: &BTreeMap<String, String>| -> String {
        if types.contains_key(name) {
            return name.to_string();
        }
        for suffix in ["_sum", "_count", "_bucket"] {
            if let Some(base) = name.strip_suffix(suffix)
                && matches!(
                    types.get(base).map(String::as_str),
                    Some("histogram" | "summary")
                )
            {
                return base.to_string();
            }
        }
        name.to_string()
    };
    for (no, line) in text.split_terminator('\n').enumerate() {
        let at = |e: String| format!("line {}: {e}", no + 1);
        if line.is_empty() {
            return Err(at("empty line".into()));
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut t = comment.trim_start_matches(' ').splitn(3, ' ');
            let kw = t.next().unwrap_or("");
            if kw != "HELP" && kw != "TYPE" {
                continue; // a plain comment
            }
            let name = t.next().unwrap_or("");
            if !valid_metric_name(name) {
                return Err(at(format!("bad metric name {name:?} in {kw}")));
            }
            if with_samples.contains(name) {
                return Err(at(format!("{kw} of {name} after its samples")));
            }
            let arg = t.next().unwrap_or("");
            if kw == "HELP" {
                let doc = unescape(arg, false).map_err(at)?;
                if help.insert(name.to_string(), doc).is_some() {
                    return Err(at(format!("HELP of {name} twice")));
                }
            } else {
                if !matches!(
                    arg,
                    "counter" | "gauge" | "histogram" | "summary" | "untyped"
                ) {
                    return Err(at(format!("bad type {arg:?}")));
                }
                if types.insert(name.to_string(), arg.to_string()).is_some() {
                    return Err(at(format!("TYPE of {name} twice")));
                }
            }
            continue;
        }
        let s = parse_sample(line).map_err(at)?;
        let family = family_of(&s.name, &types);
        if current.as_deref() != Some(family.as_str()) {
            if with_samples.contains(&family) {
                return Err(at(format!("samples of {family} not together")));
            }
            current = Some(family.clone());
        }
        with_samples.insert(family.clone());
        let key = format!("{}{:?}", s.name, s.labels);
        if !series.insert(key.clone()) {
            return Err(at(format!("series twice: {key}")));
        }
        x.samples.push(s);
    }
    for f in &with_samples {
        let ty = types.get(f).ok_or_else(|| format!("{f}: no TYPE"))?;
        let doc = help.get(f).ok_or_else(|| format!("{f}: no HELP"))?;
        if doc.is_empty() {
            return Err(format!("{f}: empty HELP"));
        }
        match ty.as_str() {
            "counter" if !f.ends_with("_total") => {
                return Err(format!("counter {f} does not end in _total"));
            }
            "gauge" if f.ends_with("_total") => return Err(format!("gauge {f} ends in _total")),
            _ => {}
        }
        x.families.insert(f.clone(), (ty.clone(), doc.clone()));
    }
    for s in &x.samples {
        let f = family_of(&s.name, &types);
        if x.families[&f].0 == "counter" && !(s.value.is_finite() && s.value >= 0.0) {
            return Err(format!("counter {} = {}", s.name, s.value));
        }
    }
    Ok(x)
}

/// `promtool check metrics` on the text, when promtool is installed
/// (Debian: `apt-get install prometheus`). Returns whether it ran.
fn promtool(text: &str) -> bool {
    let child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("promtool not on PATH: checked with the strict parser only");
        return false;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

fn sample_snapshot() -> Snapshot {
    let ports: Vec<PortStats> = (0..3).map(port_counters).collect();
    let mut s = Snapshot::new(&ports, &router_stats(), &plane());
    s.started_ns = 1_700_000_000_123_456_789;
    s.published_ns = 1_700_000_100_000_000_000;
    s.generation = 84;
    s.punt_sources = vec![PuntSource {
        class: PuntClass::Management,
        port: PortId(0),
        link: LinkKind::Udp,
        native: NativeAddr::udp("127.0.0.1:41822".parse().unwrap()),
        offered_per_s: 180_000,
        dropped_per_s: 178_750,
    }];
    s.with_workers(&[WorkerStats {
        received: 3000,
        transmitted: 2990,
        dropped: 10,
        polls: 500,
        idle_polls: 400,
        bursts: 100,
        busy_cycles: 300_000,
        idle_cycles: 900_000,
        tsc_hz: 2_000_000_000,
    }])
}

/// `show management` of a box with managers on two HRs.
fn sample_management() -> admin::view::ManagementInfo {
    let row = |port: u16, hr: u16, state: &str, members: usize| admin::view::ManagerRow {
        port: PortId(port),
        hr: rrp::Address(hr),
        state: state.into(),
        priority: 7,
        master: None,
        act_count: 3,
        peers: Vec::new(),
        counters: [("transitions".to_string(), 2u64)].into_iter().collect(),
        members: (0..members)
            .map(|i| admin::view::MemberRow {
                address: rrp::Address(0x0100 + i as u16),
                name: format!("H{i}"),
                node_type: "host".into(),
                identity: format!("{:#018x}", i),
                level: 3,
                num_ports: 1,
                manager: None,
            })
            .collect(),
        assigned: Vec::new(),
        subscriptions: Vec::new(),
    };
    admin::view::ManagementInfo {
        identity: "0x0000000000000001".into(),
        description: "r".into(),
        manager: None,
        mkey_set: true,
        protect: 1,
        lease_s: 0,
        lease_left_ms: None,
        violations: 4,
        agent: BTreeMap::new(),
        client: BTreeMap::new(),
        notices: Vec::new(),
        addresses: vec![rrp::Address(0x0115), rrp::Address(0x0116)],
        managers: vec![row(0, 0x0115, "master", 2), row(1, 0x0116, "standby", 0)],
        subscribers: Vec::new(),
        partitions: None,
    }
}

#[test]
fn management_families_are_valid_and_documented() {
    let text = format!(
        "{}{}",
        prometheus(&sample_snapshot()),
        stats::management_exposition(&sample_management())
    );
    let x = check_exposition(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let ran = promtool(&text);
    eprintln!("promtool ran: {ran}");
    for line in [
        "mwrouter_mgmt_mkey_violations_total 4",
        "mwrouter_san_manager_state{hr=\"0x0115\"} 3",
        "mwrouter_san_manager_state{hr=\"0x0116\"} 2",
        "mwrouter_san_manager_members{hr=\"0x0115\"} 2",
        "mwrouter_san_manager_transitions_total{hr=\"0x0116\"} 2",
    ] {
        assert!(text.contains(line), "{line} missing:\n{text}");
    }
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/stats.md"))
            .unwrap();
    for f in x.families.keys() {
        assert!(
            doc.contains(f.as_str()),
            "docs/stats.md: metric {f} missing"
        );
    }
}

/// A fabric of two nodes: b answered (two ports, one reset), c did not
/// (its name has a quote, its series kept).
fn sample_fabric() -> mgmt::perfmgr::FabricSnapshot {
    use mgmt::perfmgr::{FabricSnapshot, NodeSnapshot, PerfStats, PortSnapshot, SweepSummary};
    let port = |p: u8, base: u64, ext: bool| PortSnapshot {
        port: p,
        counters: (0..mgmt::attr::PortCounters::COUNT as u64)
            .map(|i| base + i)
            .collect(),
        extended: if ext {
            (0..6).map(|i| base * 100 + i).collect()
        } else {
            Vec::new()
        },
        resets: u64::from(p),
    };
    FabricSnapshot {
        nodes: vec![
            NodeSnapshot {
                address: rrp::Address(0x0521),
                name: "b".into(),
                identity: 2,
                ok: true,
                answered_at: Some(1000),
                ports: vec![port(0, 1000, true), port(1, 2000, true)],
            },
            NodeSnapshot {
                address: rrp::Address(0x0150),
                name: "host \"c\"".into(),
                identity: 3,
                ok: false,
                answered_at: None,
                ports: vec![port(0, 10, false)],
            },
        ],
        last_sweep: Some(SweepSummary {
            started: 0,
            duration_ms: 1234,
            nodes: 2,
            unanswered: 1,
        }),
        stats: PerfStats {
            sweeps: 7,
            nodes_unanswered: 1,
            resets: 1,
            ..PerfStats::default()
        },
    }
}

#[test]
fn fabric_families_are_valid_and_documented() {
    let text = control::stats::fabric_exposition(&sample_fabric());
    let x = check_exposition(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let ran = promtool(&text);
    eprintln!("promtool ran: {ran}");
    for line in [
        "mwrouter_fabric_sweep_duration_seconds 1.234",
        "mwrouter_fabric_scrape_ok{node=\"b\",address=\"0x0521\"} 1",
        "mwrouter_fabric_scrape_ok{node=\"host \\\"c\\\"\",address=\"0x0150\"} 0",
        "mwrouter_fabric_port_received_packets_total{node=\"b\",address=\"0x0521\",port=\"1\"} 2000",
        "mwrouter_fabric_port_received_packets_total{node=\"host \\\"c\\\"\",address=\"0x0150\",port=\"0\"} 10",
        "mwrouter_fabric_port_dropped_packets_total{node=\"b\",address=\"0x0521\",port=\"0\",reason=\"no-route\"} 1014",
        "mwrouter_fabric_port_received_bytes_total{node=\"b\",address=\"0x0521\",port=\"0\"} 100000",
        "mwrouter_fabric_port_resets_total{node=\"b\",address=\"0x0521\",port=\"1\"} 1",
        "mwrouter_perfmgr_sweeps_total 7",
        "mwrouter_perfmgr_nodes_unanswered_total 1",
    ] {
        assert!(
            text.contains(&format!("{line}\n")),
            "{line} missing:\n{text}"
        );
    }
    // c counts no link: no link series of it.
    assert!(!text.contains("mwrouter_fabric_port_received_bytes_total{node=\"host"));
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/stats.md"))
            .unwrap();
    for f in x.families.keys() {
        let generic = f
            .strip_prefix("mwrouter_fabric_port_")
            .map(|rest| format!("mwrouter_port_{rest}"));
        assert!(
            doc.contains(f.as_str()) || generic.is_some_and(|g| doc.contains(&g)),
            "docs/stats.md: metric {f} missing"
        );
    }
    for name in mgmt::perfmgr::PerfStats::slot_names() {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/stats.md: counter `{name}` missing"
        );
    }
    // Nothing polled: the sweep families and the counters, valid.
    let empty = control::stats::fabric_exposition(&Default::default());
    check_exposition(&empty).unwrap_or_else(|e| panic!("{e}\n{empty}"));
    assert!(empty.contains("mwrouter_fabric_sweep_nodes 0\n"));
}

#[test]
fn prometheus_text_is_valid() {
    let s = sample_snapshot();
    let text = prometheus(&s);
    let x = check_exposition(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let ran = promtool(&text);
    eprintln!("promtool ran: {ran}");

    // The names the issue asks for.
    for line in [
        "mwrouter_port_received_packets_total{port=\"0\"} 1000",
        "mwrouter_port_dropped_packets_total{port=\"0\",reason=\"no-route\"} 1105",
        "mwrouter_port_dropped_packets_total{port=\"2\",reason=\"encap\"} 3111",
        "mwrouter_rrp_rts_accepted_total 6",
        "mwrouter_rrp_rts_refused_total{reason=\"stale\"} 20",
        "mwrouter_plane_fib_version 37",
        "mwrouter_plane_punts_total 31",
        "mwrouter_start_time_seconds 1700000000.123456789",
    ] {
        assert!(
            text.contains(&format!("{line}\n")),
            "{line} missing:\n{text}"
        );
    }
    // Every port field and every drop reason of every port; every refusal.
    let series = |f: &str| x.samples.iter().filter(|s| s.name == f).count();
    for f in PortStats::FIELDS.iter().filter(|f| f.labels.is_none()) {
        assert_eq!(series(&format!("mwrouter_port_{}_total", f.family)), 3);
    }
    assert_eq!(
        series("mwrouter_port_dropped_packets_total"),
        3 * DropReason::COUNT
    );
    for r in DropReason::ALL {
        for p in 0..3 {
            assert!(
                x.samples
                    .iter()
                    .any(|s| s.name == "mwrouter_port_dropped_packets_total"
                        && s.labels["port"] == p.to_string()
                        && s.labels["reason"] == r.name()
                        && s.value == (1000 * (p + 1) + 100 + r as usize) as f64)
            );
        }
    }
    for f in RouterStats::FIELDS.iter().filter(|f| f.labels.is_none()) {
        assert_eq!(series(&format!("mwrouter_rrp_{}_total", f.name)), 1);
    }
    assert_eq!(series("mwrouter_rrp_rts_refused_total"), RtRefusal::COUNT);
    for f in PlaneStats::FIELDS {
        let gauge = f.kind == Kind::Gauge;
        let n = if gauge {
            format!("mwrouter_plane_{}", f.name)
        } else {
            format!("mwrouter_plane_{}_total", f.name)
        };
        assert_eq!(x.families[&n].0, if gauge { "gauge" } else { "counter" });
    }
    // The heaviest punt sources: one sample each, labelled.
    let offered: Vec<_> = x
        .samples
        .iter()
        .filter(|s| s.name == "mwrouter_punt_source_offered_packets_per_second")
        .collect();
    assert_eq!(offered.len(), 1);
    assert_eq!(offered[0].labels["class"], "management");
    assert_eq!(offered[0].labels["source"], "127.0.0.1:41822");
    assert_eq!(
        x.families["mwrouter_punt_source_dropped_packets_per_second"].0,
        "gauge"
    );
    // The link's counters, one family each.
    for (f, v) in [
        ("mwrouter_port_received_bytes_total", 50),
        ("mwrouter_port_tx_link_error_packets_total", 55),
    ] {
        assert!(
            x.samples
                .iter()
                .any(|s| s.name == f && s.labels["port"] == "1" && s.value == (2000 + v) as f64),
            "{f}"
        );
    }
    // Each worker's own counters, labelled with the worker.
    assert!(
        x.samples
            .iter()
            .any(|s| s.name == "mwrouter_worker_busy_cycles_total"
                && s.labels["worker"] == "0"
                && s.value == 300_000.0),
        "worker busy cycles"
    );
    assert_eq!(x.families["mwrouter_worker_tsc_hz"].0, "gauge");
    // Counters and families: 10 port + drops + 4 by punt class + 6 link +
    // 32 rrp + refusals + 7 plane + 2 meta + 2 punt sources + 9 worker.
    assert_eq!(x.families.len(), 10 + 1 + 4 + 6 + 32 + 1 + 7 + 2 + 2 + 9);

    // No port yet: still valid.
    let empty = prometheus(&Snapshot::default());
    check_exposition(&empty).unwrap();
    promtool(&empty);
}

#[test]
fn label_values_are_escaped() {
    let v = stats::escape_label_value("a\"b\\c\nd");
    let line = format!("m_total{{l=\"{v}\"}} 1\n");
    let text = format!("# HELP m_total h\\\\x\n# TYPE m_total counter\n{line}");
    let x = check_exposition(&text).unwrap();
    assert_eq!(x.samples[0].labels["l"], "a\"b\\c\nd");
    assert_eq!(x.families["m_total"].1, "h\\x");
    promtool(&text);
    assert_eq!(stats::escape_help("x\\y\nz\""), "x\\\\y\\nz\"");
}

/// The checker itself: each rule rejects what it should.
#[test]
fn the_checker_is_strict() {
    let ok = "# HELP a_total h\n# TYPE a_total counter\na_total{x=\"1\"} 1\na_total{x=\"2\"} 2\n";
    check_exposition(ok).unwrap();
    for (bad, why) in [
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total 1",
            "no final line feed",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\n\na_total 1\n",
            "empty line",
        ),
        ("# HELP 1a h\n# TYPE 1a counter\n1a 1\n", "bad name"),
        (
            "# HELP a_total h\n# HELP a_total h\n# TYPE a_total counter\na_total 1\n",
            "HELP twice",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\n# TYPE a_total counter\na_total 1\n",
            "TYPE twice",
        ),
        (
            "# HELP a_total h\na_total 1\n# TYPE a_total counter\n",
            "TYPE after samples",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total 1\na_total 2\n",
            "duplicate series",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total{x=\"1\"} 1\n# HELP b h\n# TYPE b gauge\nb 1\na_total{x=\"2\"} 1\n",
            "interleaved",
        ),
        (
            "# HELP a h\n# TYPE a counter\na 1\n",
            "counter without _total",
        ),
        (
            "# HELP a_total h\n# TYPE a_total gauge\na_total 1\n",
            "gauge with _total",
        ),
        ("# TYPE a_total counter\na_total 1\n", "no HELP"),
        ("# HELP a_total h\na_total 1\n", "no TYPE"),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total -1\n",
            "negative counter",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total{x=\"\\t\"} 1\n",
            "bad escape",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total{x=\"1\",} 1\n",
            "trailing comma",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total{x=\"1\",x=\"2\"} 1\n",
            "label twice",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total{__x=\"1\"} 1\n",
            "reserved label",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total{x=1} 1\n",
            "unquoted",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total one\n",
            "bad value",
        ),
        (
            "# HELP a_total h\n# TYPE a_total bogus\na_total 1\n",
            "bad type",
        ),
        (
            "# HELP a_total h\n# TYPE a_total counter\na_total  1\n",
            "two spaces",
        ),
    ] {
        assert!(check_exposition(bad).is_err(), "accepted ({why}): {bad:?}");
    }
}

// ----- docs --------------------------------------------------------------------------

/// docs/stats.md names every slot and every metric family.
#[test]
fn the_documentation_lists_every_slot_and_metric() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/stats.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    for name in stats::port_slot_names()
        .iter()
        .chain(&stats::router_slot_names())
        .chain(&WorkerStats::slot_names())
    {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/stats.md: slot `{name}` missing"
        );
    }
    let x = check_exposition(&prometheus(&sample_snapshot())).unwrap();
    for f in x.families.keys() {
        assert!(
            doc.contains(f.as_str()),
            "docs/stats.md: metric {f} missing"
        );
    }
    for (name, _) in mgmt::manager::ManagerStats::default().named_slots() {
        assert!(
            doc.contains(&format!("| `{name}` |")),
            "docs/stats.md: manager counter `{name}` missing"
        );
    }
    let agents = &doc[doc
        .find("### Agents' counters")
        .expect("the agents' section")..];
    for (name, _) in mgmt::agent::AgentStats::default().named_slots() {
        assert!(
            agents.contains(&format!("| `{name}` |")),
            "docs/stats.md \"Agents' counters\": `{name}` missing"
        );
    }
    for r in DropReason::ALL {
        assert!(doc.contains(&format!("`{}`", r.name())), "reason {r}");
    }
    for r in RtRefusal::ALL {
        assert!(doc.contains(&format!("`{}`", r.name())), "refusal {r:?}");
    }
}

// ----- the HTTP listener ---------------------------------------------------------------

/// Sends `request`, returns (status, headers lower-cased, body).
fn http(addr: SocketAddr, request: &str) -> (u16, BTreeMap<String, String>, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap();
    assert!(status.starts_with("HTTP/1.1 "), "{status}");
    let code = status[9..12].parse().unwrap();
    let headers = lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    (code, headers, body.to_string())
}

#[test]
fn http_listener_serves_metrics() {
    let (_dir, path) = area();
    let w = StatsWriter::create(&path, 2, 0).unwrap();
    w.publish(
        &[port_counters(0), port_counters(1)],
        &router_stats(),
        &plane(),
        &[],
        &[],
    )
    .unwrap();
    let reader = Mutex::new(StatsReader::open(&path).unwrap());
    let h = serve_prometheus("127.0.0.1:0".parse().unwrap(), move || {
        prometheus(&reader.lock().unwrap().read().unwrap())
    })
    .unwrap();
    let addr = h.local_addr();
    assert!(addr.ip().is_loopback() && addr.port() != 0);

    let (code, headers, body) = http(
        addr,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n",
    );
    assert_eq!(code, 200);
    assert!(headers["content-type"].starts_with("text/plain; version=0.0.4"));
    assert_eq!(
        headers["content-length"].parse::<usize>().unwrap(),
        body.len()
    );
    check_exposition(&body).unwrap();
    assert!(body.contains("mwrouter_port_received_packets_total{port=\"1\"} 2000\n"));

    // Fresh values on each scrape.
    w.publish(
        &[port_counters(1), port_counters(1)],
        &router_stats(),
        &plane(),
        &[],
        &[],
    )
    .unwrap();
    let (_, _, body) = http(addr, "GET /metrics?x=1 HTTP/1.0\r\n\r\n");
    assert!(body.contains("mwrouter_port_received_packets_total{port=\"0\"} 2000\n"));

    let (code, headers, body) = http(addr, "HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(code, 200);
    assert!(body.is_empty());
    assert!(headers["content-length"].parse::<usize>().unwrap() > 0);
    assert_eq!(http(addr, "GET / HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(addr, "GET /metricsx HTTP/1.1\r\n\r\n").0, 404);
    let (code, headers, _) = http(addr, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(code, 405);
    assert_eq!(headers["allow"], "GET, HEAD");
    assert_eq!(http(addr, "hello\r\n\r\n").0, 400);
    assert_eq!(http(addr, "GET /metrics SPDY/3\r\n\r\n").0, 400);

    // Dropping the handle stops it.
    drop(h);
    assert!(TcpStream::connect(addr).is_err());
}

/// Several paths, each answered by its own source (mwrouterd's `/metrics`
/// and `/fabric/metrics`); the rest as for one path.
#[test]
fn http_listener_serves_each_path_from_its_source() {
    let routes: Vec<(&'static str, control::stats::Source)> = vec![
        (
            "/metrics",
            Box::new(|| "# HELP a_total h\n# TYPE a_total counter\na_total 1\n".into()),
        ),
        (
            "/fabric/metrics",
            Box::new(|| "# HELP b_total h\n# TYPE b_total counter\nb_total 2\n".into()),
        ),
    ];
    let h = control::stats::serve_paths("127.0.0.1:0".parse().unwrap(), routes).unwrap();
    let addr = h.local_addr();
    let (code, headers, body) = http(addr, "GET /fabric/metrics HTTP/1.1\r\n\r\n");
    assert_eq!(code, 200);
    assert!(headers["content-type"].starts_with("text/plain; version=0.0.4"));
    assert_eq!(
        body,
        "# HELP b_total h\n# TYPE b_total counter\nb_total 2\n"
    );
    assert!(
        http(addr, "GET /metrics?x HTTP/1.0\r\n\r\n")
            .2
            .contains("a_total 1\n")
    );
    let (code, headers, body) = http(addr, "HEAD /fabric/metrics HTTP/1.1\r\n\r\n");
    assert_eq!((code, body.as_str()), (200, ""));
    assert!(headers["content-length"].parse::<usize>().unwrap() > 0);
    let (code, headers, _) = http(addr, "DELETE /fabric/metrics HTTP/1.1\r\n\r\n");
    assert_eq!(code, 405);
    assert_eq!(headers["allow"], "GET, HEAD");
    assert_eq!(http(addr, "GET /fabric HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(addr, "GET fabric/metrics HTTP/1.1\r\n\r\n").0, 400);
    assert_eq!(http(addr, "GET /metrics HTTP/2.0\r\n\r\n").0, 400);
    assert!(matches!(
        control::stats::serve_paths("0.0.0.0:0".parse().unwrap(), Vec::new()),
        Err(Error::NotLoopback(_))
    ));
}

#[test]
fn http_listener_is_loopback_only_and_bounded() {
    for a in ["0.0.0.0:0", "[::]:0", "192.0.2.1:9100"] {
        let e = serve_prometheus(a.parse().unwrap(), String::new).unwrap_err();
        assert!(matches!(e, Error::NotLoopback(_)), "{a}: {e}");
    }
    // ::1 where the machine has IPv6.
    match serve_prometheus("[::1]:0".parse().unwrap(), || "x_total 1\n".to_string()) {
        Ok(h) => assert_eq!(http(h.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n").0, 200),
        Err(Error::Io(e)) => eprintln!("no IPv6 loopback here: {e}"),
        Err(e) => panic!("{e}"),
    }

    let h = serve_prometheus("127.0.0.1:0".parse().unwrap(), || {
        "# HELP x_total h\n# TYPE x_total counter\nx_total 1\n".to_string()
    })
    .unwrap();
    let addr = h.local_addr();
    // Four idle clients hold every connection slot...
    let idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
    thread::sleep(Duration::from_millis(300));
    // ...so a fifth is closed unanswered.
    let mut extra = TcpStream::connect(addr).unwrap();
    extra
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = extra.write_all(b"GET /metrics HTTP/1.1\r\n\r\n");
    let mut buf = Vec::new();
    let _ = extra.read_to_end(&mut buf);
    assert!(buf.is_empty(), "{}", String::from_utf8_lossy(&buf));
    // Once they go, it answers again.
    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n");
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        if buf.starts_with(b"HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "the slots were not freed");
        thread::sleep(Duration::from_millis(50));
    }
    // A panicking source answers 500 and leaves the listener up.
    let h2 = serve_prometheus("127.0.0.1:0".parse().unwrap(), || -> String {
        panic!("source failed")
    })
    .unwrap();
    assert_eq!(
        http(h2.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n").0,
        500
    );
    assert_eq!(
        http(h2.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n").0,
        500
    );
}
