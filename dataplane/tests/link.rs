//! The link's counters in the port's counters (docs/stats.md "The link's
//! counters"): a worker reads its ports' `link_stats` when it publishes and
//! puts them in each port's `PortStats`, outside `received = forwarded +
//! dropped + punted`: the bytes of in-memory wires, and over UDP the
//! datagrams the kernel dropped before the worker read them, so that every
//! datagram sent is received or counted.

mod common;

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use dataplane::{EngineConfig, IdlePolicy, Worker, channels, fib_channel};
use ports::Port;
use ports::udp::{UdpConfig, UdpPort};
use rrp::{Address, DropReason, LinkStats, PortStats};

#[test]
fn a_publication_carries_the_bytes_of_each_wire() {
    let mut rig = Rig::simple(|f| f.set_all(Address(0x0202), nh(1, station(1, 1), 1500)));
    let fwd = bytes(&pkt(0x0202, 40));
    let drop = bytes(&pkt(0x0777, 24));
    for _ in 0..5 {
        rig.send(0, &fwd);
        rig.send(0, &drop);
    }
    rig.run();
    assert_eq!(rig.recv(1).len(), 5);
    assert_eq!(
        rig.counters()[0].link(),
        LinkStats::default(),
        "read when the worker publishes"
    );
    rig.worker.publish();
    let published = rig.worker.stats().read();
    assert_eq!(published, rig.counters(), "the local and published agree");
    let (rx0, tx1) = (published[0], published[1]);
    assert_eq!(rx0.rx_bytes, 5 * (fwd.len() + drop.len()) as u64);
    assert_eq!(rx0.tx_bytes, 0);
    assert_eq!(tx1.tx_bytes, 5 * fwd.len() as u64, "L3 keeps the length");
    assert_eq!(tx1.transmitted, 5);
    assert_eq!(published[2].link(), LinkStats::default());
    // Outside the packet accounting.
    assert_balanced(&published);
    assert_eq!(rx0.dropped(DropReason::NoRoute), 5);
}

/// Waits until the worker's published counters satisfy `f`.
fn wait_published(stats: &dataplane::StatsBlock, f: impl Fn(&[PortStats]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f(&stats.read()) {
        assert!(
            Instant::now() < deadline,
            "counters never got there: {:?}",
            stats.read()
        );
        thread::sleep(Duration::from_millis(5));
    }
}

/// A flood into a UDP port's small socket buffer before its worker polls:
/// the kernel drops most of it, and the worker's published counters hold
/// every datagram sent, received (and dropped, no route) or missed.
#[test]
fn datagrams_the_kernel_dropped_reach_the_ports_counters() {
    let mut small = UdpConfig::new("127.0.0.1:0".parse().unwrap()).pool_size(64);
    small.socket_buf = 4096;
    let a = UdpPort::open(small).unwrap();
    let b = UdpPort::open(UdpConfig::new("127.0.0.1:0".parse().unwrap()).pool_size(64)).unwrap();
    let to = a.local_addr();
    let cfg = EngineConfig {
        hrs: HRS[..2].to_vec(),
        mtus: vec![1500; 2],
    };
    let (_publisher, mut readers) = fib_channel(fib_for(2, |_| {}), 1);
    let (wch, _ctl) = channels(roomy_channels());
    let worker = Worker::new(0, &cfg, vec![a, b], readers.remove(0), wch);
    let stats = worker.stats();

    // The worker is not polling yet: fewer than the kernel's backlog of
    // 1000 per CPU, so that nothing is lost before the socket.
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let p = bytes(&pkt(0x0777, 56));
    let mut sent = 0u64;
    for _ in 0..500 {
        if tx.send_to(&p, to).is_ok() {
            sent += 1;
        }
    }

    let stop = Arc::new(AtomicBool::new(false));
    let handle = worker
        .spawn(None, IdlePolicy::LAB, stop.clone(), || {})
        .unwrap();
    // Idle, the worker publishes every pause and reads the link's counters
    // at most every LINK_EVERY_NS.
    wait_published(&stats, |c| c[0].received + c[0].rx_missed >= sent);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut w = handle.join().unwrap();
    let c = stats.read();
    assert_eq!(c, w.counters().to_vec(), "the final counters are published");
    let port = c[0];
    assert!(port.rx_missed > 0, "the socket buffer overflowed");
    assert_eq!(
        port.received + port.rx_missed,
        sent,
        "received or missed, exactly"
    );
    assert_eq!(port.rx_bytes, port.received * p.len() as u64);
    assert_eq!(port.dropped(DropReason::NoRoute), port.received);
    assert_balanced(&c);
    assert_eq!(port.link(), w.ports_mut()[0].link_stats());
}
