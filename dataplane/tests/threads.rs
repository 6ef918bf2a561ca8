//! The worker on its own thread: FIB sets swapped under traffic never tear
//! and lose nothing; the run loop stops on its flag, drains, publishes its
//! counters, and pauses (adaptive idle) without losing packets.

mod common;

use rrp::PortId;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use dataplane::{EngineConfig, FibSet, IdlePolicy, NextHop, Worker, channels, fib_channel};
use ports::memory::{MemPort, mem_link};
use ports::{HeapBuf, PacketBuf};
use rrp::Address;
use rrp::DropReason;
use rrp::NativeAddr;
use rrp::PortStats;

/// The native address of snapshot `k`'s next hop.
fn native_of(k: u64) -> NativeAddr {
    let b = (k as u32).to_be_bytes();
    NativeAddr::mac([0x02, 0xF1, b[0], b[1], b[2], b[3]])
}

fn k_of(n: NativeAddr) -> u64 {
    let m = n.as_mac().expect("a MAC");
    assert_eq!(&m[..2], &[0x02, 0xF1], "a next hop of some snapshot");
    u32::from_be_bytes([m[2], m[3], m[4], m[5]]) as u64
}

/// Snapshot `k`: every destination arriving on port 0 (where the traffic
/// enters; the other ports' FIBs stay empty to keep a build cheap in debug
/// builds) to port 1 + k % 2, next hop `native_of(k)`.
fn snapshot(k: u64) -> FibSet {
    let mut f = FibSet::new(3, &HRS);
    let i = f.add_nexthop(NextHop {
        port: PortId(1 + (k % 2) as u16),
        native: native_of(k),
        mtu: 0,
        redirect: false,
    });
    for d in 0x0040..=0xFFFDu16 {
        if HRS.iter().all(|a| a.0 != d) {
            f.set(PortId(0), Address(d), i);
        }
    }
    f
}

fn data_packet(seq: u64) -> Vec<u8> {
    let dst = 0x0040 + (seq % 0x7F00) as u16;
    let dst = if HRS.iter().any(|a| a.0 == dst) {
        0x0200
    } else {
        dst
    };
    let mut p = pkt(dst, 8);
    p.data.copy_from_slice(&seq.to_be_bytes());
    bytes(&p)
}

fn seq_of(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[16..24].try_into().unwrap())
}

#[test]
fn fib_swaps_under_traffic_never_tear_and_lose_nothing() {
    const N: u64 = 20_000;
    let cfg = EngineConfig {
        hrs: HRS.to_vec(),
        mtus: vec![0; 3],
    };
    let (mut gen_end, r0) = mem_link(1024, host(0), router(0));
    let (mut out1, r1) = mem_link(N as usize, host(1), router(1));
    let (mut out2, r2) = mem_link(N as usize, host(2), router(2));
    let (mut publisher, mut readers) = fib_channel(snapshot(0), 1);
    let (wch, _ctl) = channels(roomy_channels());
    let worker = Worker::new(0, &cfg, vec![r0, r1, r2], readers.remove(0), wch);
    let stop_worker = Arc::new(AtomicBool::new(false));
    let worker = worker
        .spawn(None, IdlePolicy::LAB, stop_worker.clone(), || {})
        .unwrap();

    // The control side: publish snapshot after snapshot until told to stop.
    let stop_pub = Arc::new(AtomicBool::new(false));
    let published = Arc::new(AtomicU64::new(0));
    let control = {
        let stop = stop_pub.clone();
        let published = published.clone();
        thread::spawn(move || {
            let mut k = 0u64;
            let mut max_retired = 0;
            while !stop.load(Ordering::Relaxed) {
                k += 1;
                assert_eq!(publisher.publish(snapshot(k)), k, "version = k");
                published.store(k, Ordering::Relaxed);
                max_retired = max_retired.max(publisher.retired());
            }
            (publisher, k, max_retired)
        })
    };

    // The generator: N numbered packets, waiting when the ring is full, and
    // every 1000 packets until one more snapshot is out (so that the test
    // sees many swaps however the threads are scheduled).
    let gate = published.clone();
    let generator = thread::spawn(move || {
        for s in 0..N {
            if s % 1000 == 0 {
                while gate.load(Ordering::Relaxed) < s / 1000 {
                    thread::yield_now();
                }
            }
            let p = data_packet(s);
            while !gen_end.send_bytes(&p) {
                thread::yield_now();
            }
            // Paced, so that the FIB changes many times during the run.
            if s % 64 == 63 {
                thread::sleep(Duration::from_micros(500));
            }
        }
        gen_end
    });

    // Receive on both egress SANs.
    let mut seen = vec![None; N as usize];
    let mut last_k = [0u64; 3];
    let mut per_port = [0u64; 3];
    let mut got = 0u64;
    let deadline = Instant::now() + Duration::from_secs(30);
    while got < N {
        assert!(Instant::now() < deadline, "only {got} of {N} arrived");
        let mut idle = true;
        for (port, end) in [(1usize, &mut out1), (2, &mut out2)] {
            while let Some(b) = end.recv() {
                idle = false;
                let k = k_of(b.native_dst());
                assert_eq!(port as u64, 1 + k % 2, "port and native from one snapshot");
                assert!(k >= last_k[port], "snapshots go forward on port {port}");
                last_k[port] = k;
                let s = seq_of(b.data());
                let sent = rrp::wire::PacketRepr::parse(&data_packet(s)).unwrap();
                assert_eq!(b.data(), &expect_l3(&sent, false)[..]);
                assert!(seen[s as usize].is_none(), "packet {s} twice");
                seen[s as usize] = Some(k);
                per_port[port] += 1;
                got += 1;
            }
        }
        if idle {
            thread::yield_now();
        }
    }
    let _gen_end = generator.join().unwrap();
    stop_pub.store(true, Ordering::Relaxed);
    let (mut publisher, last, max_retired) = control.join().unwrap();

    // The worker moves on to the last snapshot; then every retired set is freed.
    let deadline = Instant::now() + Duration::from_secs(10);
    while publisher.adopted() != vec![last] {
        assert!(Instant::now() < deadline, "worker never adopted {last}");
        thread::sleep(Duration::from_millis(1));
    }
    publisher.reclaim();
    assert_eq!(publisher.retired(), 0, "retired sets reclaimed");

    stop_worker.store(true, Ordering::Relaxed);
    let w = worker.join().unwrap();
    assert_eq!(w.fib_version(), last);

    // In packet order, the snapshots never go back: the worker adopts sets
    // between bursts and handles packets in order.
    let ks: Vec<u64> = seen
        .iter()
        .map(|k| k.expect("every packet arrived"))
        .collect();
    assert!(
        ks.windows(2).all(|w| w[0] <= w[1]),
        "snapshot order follows packet order"
    );
    let distinct = {
        let mut d = ks.clone();
        d.dedup();
        d.len()
    };
    assert!(
        distinct >= 10 && per_port[1] > 0 && per_port[2] > 0,
        "the FIB changed under traffic: {distinct} snapshots seen of {last} \
         (ports {per_port:?}, retired at most {max_retired})"
    );

    let c = w.counters();
    assert_balanced(c);
    assert_eq!(
        (c[0].received, c[0].forwarded, c[0].dropped_total()),
        (N, N, 0)
    );
    assert_eq!(c[1].transmitted, per_port[1]);
    assert_eq!(c[2].transmitted, per_port[2]);
    assert_eq!(c[1].dropped(DropReason::TxFull) + c[2].received, 0);
    assert_eq!(w.stats().read(), c.to_vec());
    eprintln!(
        "fib swap: {N} packets, {last} snapshots published, {distinct} seen, \
         ports {per_port:?}, retired at most {max_retired}, published {}",
        published.load(Ordering::Relaxed)
    );
}

/// A three-port worker with a route for 0x0202 to port 1.
fn worker_for_run(capacity: usize) -> (Vec<MemPort>, Worker<MemPort>, dataplane::ControlChannels) {
    let cfg = EngineConfig {
        hrs: HRS.to_vec(),
        mtus: vec![1500; 3],
    };
    let (hosts, ports): (Vec<_>, Vec<_>) = (0..3)
        .map(|i| mem_link(capacity, host(i), router(i)))
        .unzip();
    let fib = fib_for(3, |f| {
        f.set_all(Address(0x0202), nh(1, station(1, 1), 1500))
    });
    let (_p, mut readers) = fib_channel(fib, 1);
    let (wch, ctl) = channels(dataplane::ChannelConfig {
        punt_slots: 2048,
        ..roomy_channels()
    });
    (
        hosts,
        Worker::new(7, &cfg, ports, readers.remove(0), wch),
        ctl,
    )
}

/// Waits until the published counters satisfy `f`.
fn wait_stats(stats: &dataplane::StatsBlock, f: impl Fn(&[PortStats]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f(&stats.read()) {
        assert!(
            Instant::now() < deadline,
            "counters never got there: {:?}",
            stats.read()
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn run_loop_stops_on_its_flag_and_publishes_its_counters() {
    let (mut hosts, worker, ctl) = worker_for_run(4096);
    assert_eq!(worker.id(), 7);
    let stats = worker.stats();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let handle = {
        let started = started.clone();
        worker
            .spawn(None, IdlePolicy::BusyPoll, stop.clone(), move || {
                started.store(true, Ordering::Relaxed);
                assert_eq!(thread::current().name(), Some("mw-worker-7"));
            })
            .unwrap()
    };
    let fwd = bytes(&pkt(0x0202, 16));
    let punt = bytes(&typed(HRS[0].0, rrp::PacketType::RRP.0));
    let drop = bytes(&pkt(0x0777, 16));
    let n = 3000u64;
    for i in 0..n {
        let p = match i % 3 {
            0 => &fwd,
            1 => &punt,
            _ => &drop,
        };
        while !hosts[0].send_bytes(p) {
            thread::yield_now();
        }
        if i % 3 == 1 {
            // Keep the punt ring from filling up.
            while let Some(p) = ctl.recv_punt() {
                ctl.recycle(p);
            }
        }
    }
    // Busy-polling publishes every 1024 passes: wait for all of it.
    wait_stats(&stats, |c| c[0].received == n);
    stop.store(true, Ordering::Relaxed);
    let mut w = handle.join().unwrap();
    assert!(
        started.load(Ordering::Relaxed),
        "on_start ran on the worker thread"
    );
    let local = w.counters().to_vec();
    assert_eq!(stats.read(), local, "the final counters are published");
    assert_balanced(&local);
    assert_eq!(
        (
            local[0].forwarded,
            local[0].punted,
            local[0].dropped(DropReason::NoRoute)
        ),
        (n / 3, n / 3, n / 3)
    );
    assert!(stats.epoch.load(Ordering::Relaxed) >= 1);
    // The worker comes back with its ports.
    assert_eq!(w.ports_mut().len(), 3);
    let out = std::iter::from_fn(|| hosts[1].recv()).count() as u64;
    assert_eq!(out, n / 3);
}

#[test]
fn a_stopped_worker_drains_what_is_queued() {
    let (mut hosts, worker, _ctl) = worker_for_run(1024);
    let p = bytes(&pkt(0x0202, 16));
    for _ in 0..500 {
        assert!(hosts[0].send_bytes(&p));
    }
    // Stopped before it starts: it only drains.
    let stop = Arc::new(AtomicBool::new(true));
    let w = worker
        .spawn(None, IdlePolicy::BusyPoll, stop, || {})
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(w.counters()[0].forwarded, 500);
    assert_eq!(w.stats().read(), w.counters().to_vec());
    assert_eq!(hosts[1].pending(), 500);
}

/// A port that never runs dry (a NIC at line rate, a replaying pcap vdev):
/// every receive fills the burst, every transmit takes everything.
struct Endless(Vec<u8>);

impl ports::Port for Endless {
    type Buf = HeapBuf;
    fn rx_burst(&mut self, out: &mut ports::Burst<HeapBuf>) {
        while !out.is_full() {
            out.push(HeapBuf::from_bytes(&self.0));
        }
    }
    fn tx_burst(&mut self, pkts: &mut ports::Burst<HeapBuf>) -> usize {
        let n = pkts.len();
        pkts.clear();
        n
    }
    fn encap(&self, _: &mut HeapBuf, _: &NativeAddr) -> bool {
        true
    }
    fn alloc(&mut self) -> Option<HeapBuf> {
        Some(HeapBuf::new(2048, 128))
    }
    fn native_addr(&self) -> NativeAddr {
        host(0)
    }
    fn link_kind(&self) -> rrp::LinkKind {
        rrp::LinkKind::Memory
    }
}

#[test]
fn a_worker_under_sustained_load_stops() {
    let cfg = EngineConfig {
        hrs: HRS[..2].to_vec(),
        mtus: vec![0; 2],
    };
    let fib = fib_for(2, |f| {
        f.set_all(
            Address(0x0202),
            NextHop {
                port: PortId(1),
                native: host(1),
                mtu: 0,
                redirect: false,
            },
        )
    });
    let (_p, mut readers) = fib_channel(fib, 1);
    let (wch, _ctl) = channels(roomy_channels());
    let p = bytes(&pkt(0x0202, 16));
    let ports = vec![Endless(p.clone()), Endless(p)];
    let worker = Worker::new(0, &cfg, ports, readers.remove(0), wch);
    let stop = Arc::new(AtomicBool::new(false));
    let handle = worker
        .spawn(None, IdlePolicy::BusyPoll, stop.clone(), || {})
        .unwrap();
    thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    stop.store(true, Ordering::Relaxed);
    let w = handle.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(w.counters()[0].forwarded > 0);
    assert_eq!(w.stats().read(), w.counters().to_vec());
}

#[test]
fn adaptive_idle_pauses_without_losing_packets() {
    let (mut hosts, worker, _ctl) = worker_for_run(1024);
    let stats = worker.stats();
    let stop = Arc::new(AtomicBool::new(false));
    let sleep = Duration::from_millis(5);
    let handle = worker
        .spawn(
            None,
            IdlePolicy::Adaptive { spins: 8, sleep },
            stop.clone(),
            || {},
        )
        .unwrap();
    let p = bytes(&pkt(0x0202, 16));
    let mut sent = 0u64;
    let mut drained = 0u64;
    for round in 0..6 {
        // Long enough for the worker to go idle, publish and sleep.
        thread::sleep(sleep * 3);
        // Idle: the counters were published before pausing.
        wait_stats(&stats, |c| c[0].received == sent);
        let burst = 100 + round * 50;
        for _ in 0..burst {
            while !hosts[0].send_bytes(&p) {
                thread::yield_now();
            }
        }
        sent += burst;
        // Within the egress ring: drain it while the worker works.
        let mut out = 0;
        wait_stats(&stats, |c| c[0].received == sent);
        while hosts[1].recv().is_some() {
            out += 1;
        }
        drained += out;
    }
    wait_stats(&stats, |c| c[0].forwarded == sent);
    stop.store(true, Ordering::Relaxed);
    let w = handle.join().unwrap();
    let c = w.counters();
    assert_eq!(
        (c[0].received, c[0].forwarded, c[0].dropped_total()),
        (sent, sent, 0)
    );
    assert_eq!(c[1].transmitted, sent);
    drained += std::iter::from_fn(|| hosts[1].recv()).count() as u64;
    assert_eq!(drained, sent);
    assert_balanced(c);
}

#[test]
fn a_delayed_ingress_under_a_running_worker_loses_nothing() {
    // Impairment delay (real clock) and loss on the ingress of a running
    // worker: the router forwards exactly what the impairer passed.
    use ports::clock::MonotonicClock;
    use ports::impair::ImpairConfig;
    let cfg = EngineConfig {
        hrs: HRS.to_vec(),
        mtus: vec![1500; 3],
    };
    let (mut h0, r0) = mem_link(4096, host(0), router(0));
    let r0 = r0.with_impairment(
        ImpairConfig {
            loss: 0.1,
            duplicate: 0.05,
            delay: Duration::from_micros(200),
            ..ImpairConfig::seeded(5)
        },
        MonotonicClock::new(),
    );
    let imp = r0.impairment().unwrap();
    let (mut h1, r1) = mem_link(4096, host(1), router(1));
    let (_h2, r2) = mem_link(16, host(2), router(2));
    let fib = fib_for(3, |f| {
        f.set_all(Address(0x0202), nh(1, station(1, 1), 1500))
    });
    let (_p, mut readers) = fib_channel(fib, 1);
    let (wch, _ctl) = channels(roomy_channels());
    let worker = Worker::new(0, &cfg, vec![r0, r1, r2], readers.remove(0), wch);
    let stop = Arc::new(AtomicBool::new(false));
    let handle = worker
        .spawn(None, IdlePolicy::LAB, stop.clone(), || {})
        .unwrap();
    let n = 2000u64;
    for s in 0..n {
        let mut p = pkt(0x0202, 8);
        p.data.copy_from_slice(&s.to_be_bytes());
        let mut b = HeapBuf::from_bytes(&bytes(&p));
        b.set_native_dst(NativeAddr::NONE);
        while let Err(back) = h0.send(b) {
            b = back;
            thread::yield_now();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while imp.stats().held() > 0 || imp.stats().seen < n {
        assert!(Instant::now() < deadline);
        thread::sleep(Duration::from_millis(1));
    }
    let st = imp.stats();
    let mut out = 0u64;
    while out < st.passed {
        assert!(Instant::now() < deadline, "{out} of {}", st.passed);
        match h1.recv() {
            Some(_) => out += 1,
            None => thread::sleep(Duration::from_millis(1)),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let w = handle.join().unwrap();
    let c = w.counters();
    assert_eq!(st.seen, n);
    assert_eq!(c[0].received, st.passed);
    assert_eq!(c[0].forwarded, st.passed);
    assert_eq!(st.passed, n - st.lost + st.duplicated);
    assert!(h1.recv().is_none());
    assert_balanced(c);
}
