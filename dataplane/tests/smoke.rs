//! A worker over two in-memory ports forwards L3 and L2 packets, punts
//! packets for this box, and counts a no-route drop.

use dataplane::{ChannelConfig, EngineConfig, FibSet, NextHop, Worker, channels, fib_channel};
use ports::PacketBuf;
use ports::memory::{MemPort, mem_link};
use rrp::Address;
use rrp::DropReason;
use rrp::NativeAddr;
use rrp::PortId;
use rrp::kind::PacketType;
use rrp::wire::{HeaderRepr, L2rhRepr, Message, PacketRepr, RouterHop};

const HR0: Address = Address(0x0110);
const HR1: Address = Address(0x0120);
const HOST_A: NativeAddr = NativeAddr::mac([2, 0, 0, 0, 0, 0xA]);
const HOST_B: NativeAddr = NativeAddr::mac([2, 0, 0, 0, 0, 0xB]);

fn data_packet(dst: u16, l2rhs: Vec<L2rhRepr>, ei: u64) -> Vec<u8> {
    PacketRepr {
        l2rhs,
        header: HeaderRepr {
            dst: Address(dst),
            src: Address(0x0101),
            packet_type: PacketType(0x0100),
            ..Default::default()
        },
        data: (0..20).collect(),
        ei,
    }
    .to_bytes()
    .unwrap()
}

/// A box of two ports, host A on port 0 and host B on port 1, with a route
/// to 0x0202 through host B: the hosts' ends, the worker, the control
/// plane's channels and the FIB's publisher (kept for the worker's reader).
fn box_of_two() -> (
    MemPort,
    MemPort,
    Worker<MemPort>,
    dataplane::ControlChannels,
    dataplane::FibPublisher,
) {
    let (host_a, r0) = mem_link(64, HOST_A, NativeAddr::mac([2, 0, 0, 0, 1, 0]));
    let (host_b, r1) = mem_link(64, HOST_B, NativeAddr::mac([2, 0, 0, 0, 1, 1]));
    let cfg = EngineConfig {
        hrs: vec![HR0, HR1],
        mtus: vec![1500, 1500],
    };
    let mut fib = FibSet::new(2, &cfg.hrs);
    fib.set_all(
        Address(0x0202),
        NextHop {
            port: PortId(1),
            native: HOST_B,
            mtu: 1500,
            redirect: false,
        },
    );
    let (publisher, mut readers) = fib_channel(fib, 1);
    let (wch, cch) = channels(ChannelConfig::default());
    let w = Worker::new(0, &cfg, vec![r0, r1], readers.remove(0), wch);
    (host_a, host_b, w, cch, publisher)
}

#[test]
fn forwards_punts_and_drops() {
    let (mut host_a, mut host_b, mut w, cch, _publisher) = box_of_two();

    // L3 to 0x0202 leaves on port 1 towards host B with EI shifted; padding trimmed.
    let mut p = data_packet(0x0202, vec![], 1);
    let want_len = p.len();
    p.extend_from_slice(&[0xEE; 5]);
    assert!(host_a.send_bytes(&p));
    // L2 through HR1 to host B's native address.
    let hop = RouterHop::new(HR1, NativeAddr::mac(HOST_B.as_mac().unwrap()));
    let l2 = data_packet(0x0999, vec![hop.to_l2rh()], 0);
    assert!(host_a.send_bytes(&l2));
    // RRP#7 for HR0: punted.
    let who = Message::WhoAreYou
        .to_packet(HR0, Address(0x0101))
        .unwrap()
        .to_bytes()
        .unwrap();
    assert!(host_a.send_bytes(&who));
    // No route.
    assert!(host_a.send_bytes(&data_packet(0x0777, vec![], 0)));
    while w.poll_once() > 0 {}

    let b = host_b.recv().unwrap();
    assert_eq!(b.data().len(), want_len);
    let got = PacketRepr::parse(b.data()).unwrap();
    assert_eq!(got.ei, 2);
    assert_eq!(got.header.dst, Address(0x0202));
    let b = host_b.recv().unwrap();
    let got = PacketRepr::parse(b.data()).unwrap();
    assert!(got.l2rhs.is_empty(), "the consumed L2RH is stripped");
    assert_eq!(got.header.dst, Address(0x0999));
    assert!(host_b.recv().is_none());

    let punt = cch.recv_punt().unwrap();
    assert_eq!(punt.data, who);
    assert_eq!(punt.native_src, HOST_A);
    cch.recycle(punt);
    let n = cch.recv_notice().unwrap();
    assert_eq!(n.kind, rrp::router::NoticeKind::NoRoute);

    let c = w.counters()[0];
    assert_eq!(c.received, 4);
    assert_eq!(c.forwarded, 2);
    assert_eq!(c.punted, 1);
    assert_eq!(c.dropped(DropReason::NoRoute), 1);
    assert!(c.balanced());
    assert_eq!(w.counters()[1].transmitted, 2);
}

/// The worker's own counters: passes, bursts and where the cycles went
/// (docs/stats.md "Workers"), published with the ports' counters.
#[test]
fn counts_passes_bursts_and_cycles() {
    let (mut host_a, _host_b, mut w, _cch, _publisher) = box_of_two();

    // Three idle passes, one of 40 packets (a full burst of 32 now, 8 on
    // the next pass), then idle again.
    for _ in 0..3 {
        assert_eq!(w.poll_once(), 0);
    }
    for _ in 0..40 {
        assert!(host_a.send_bytes(&data_packet(0x0202, vec![], 0)));
    }
    assert_eq!(w.poll_once(), 32);
    std::thread::sleep(std::time::Duration::from_millis(2));
    assert_eq!(w.poll_once(), 8);
    assert_eq!(w.poll_once(), 0);
    assert_eq!(w.poll_once(), 0);
    w.publish();
    let p = *w.perf();
    assert_eq!((p.polls, p.idle_polls, p.bursts), (7, 5, 2));
    assert_eq!((p.received, p.transmitted, p.dropped), (40, 40, 0));
    // The pass of 32 packets slept 2 ms before the next began: busy.
    assert!(p.busy_cycles > p.tsc_hz / 1000, "{p:?}");
    assert!(p.idle_cycles > 0, "{p:?}");
    assert_eq!(p.average_burst(), 20.0);
    // What the worker published is what it holds.
    assert_eq!(w.stats().read_worker(), p);
}
