//! The rings to and from the control plane and the transmit rings: rate
//! limits and full rings are counted (punt-rate, punt-full, notices
//! dropped, tx-full on the ingress port), injected packets are transmitted
//! and counted apart.
//!
//! Rate limits are driven through `Engine::process_burst` with explicit
//! times, so that they do not depend on how fast the test runs.

mod common;

use common::*;
use dataplane::{
    ChannelConfig, ControlChannels, Engine, EngineConfig, FibSet, Injection, channels,
};
use ports::memory::{MemPort, mem_link};
use ports::{BURST, Burst, HeapBuf, PacketBuf, Port};
use rrp::Address;
use rrp::DropReason;
use rrp::PortId;
use rrp::PortStats;
use rrp::PuntClass;
use rrp::kind::PacketType;
use rrp::router::NoticeKind;
use rrp::{PuntBudget, PuntBudgets};

const DST: u16 = 0x0202;
const SEC: u64 = 1_000_000_000;

/// An engine driven by hand over three in-memory ports.
struct Bench {
    engine: Engine,
    ports: Vec<MemPort>,
    hosts: Vec<MemPort>,
    stage: Vec<Burst<HeapBuf>>,
    fib: FibSet,
    ctl: ControlChannels,
}

impl Bench {
    fn new(chan: ChannelConfig, build: impl FnOnce(&mut FibSet)) -> Bench {
        let cfg = EngineConfig {
            hrs: HRS.to_vec(),
            mtus: vec![1500; 3],
        };
        let (wch, ctl) = channels(chan);
        let (hosts, ports): (Vec<_>, Vec<_>) =
            (0..3).map(|i| mem_link(256, host(i), router(i))).unzip();
        Bench {
            engine: Engine::new(&cfg, wch),
            ports,
            hosts,
            stage: (0..3).map(|_| Burst::new()).collect(),
            fib: fib_for(3, build),
            ctl,
        }
    }

    /// Host `i` sends every packet; the engine processes them at `now_ns`.
    fn feed(&mut self, now_ns: u64, i: usize, pkts: &[Vec<u8>]) {
        for p in pkts {
            assert!(self.hosts[i].send_bytes(p));
        }
        loop {
            let mut rx = Burst::new();
            self.ports[i].rx_burst(&mut rx);
            if rx.is_empty() {
                break;
            }
            self.engine.process_burst(
                &self.fib,
                now_ns,
                PortId::new(i),
                &mut rx,
                &mut self.ports,
                &mut self.stage,
            );
        }
    }

    fn counters(&self, i: usize) -> PortStats {
        let c = self.engine.counters()[i];
        assert!(c.balanced(), "port {i}: {c:?}");
        c
    }
}

fn n_of(p: &[u8], n: usize) -> Vec<Vec<u8>> {
    vec![p.to_vec(); n]
}

#[test]
fn punt_rate_limits_each_class_on_its_own() {
    // Rate 1/s, burst 3 per class; one source's share of the local and
    // request classes is rate 1/s, burst 1 (a class's budget / 8, rounded
    // up); routing, the buddies' class, has no per-source share.
    let mut b = Bench::new(
        ChannelConfig {
            punt_budgets: PuntBudgets::uniform(PuntBudget::new(1, 3)),
            ..roomy_channels()
        },
        |f| buddy_on(f, 0),
    );
    let local = bytes(&typed(HRS[0].0, 0x0100));
    let control = bytes(&typed(HRS[0].0, PacketType::RRP.0));
    b.feed(0, 0, &n_of(&local, 10));
    b.feed(0, 0, &n_of(&control, 10));
    let c = b.counters(0);
    assert_eq!(
        c.punted,
        1 + 3,
        "the source's share of local, a burst of routing"
    );
    assert_eq!(c.punted_by_class[PuntClass::Routing], 3);
    assert_eq!(c.dropped(DropReason::PuntSource), 9);
    assert_eq!(c.dropped(DropReason::PuntRate), 7);
    // One second later: one more token for the source and per class.
    b.feed(SEC, 0, &n_of(&local, 5));
    let c = b.counters(0);
    assert_eq!((c.punted, c.dropped(DropReason::PuntSource)), (5, 13));
    // Much later: routing's bucket is full again, not more.
    b.feed(100 * SEC, 0, &n_of(&control, 5));
    let c = b.counters(0);
    assert_eq!((c.punted, c.dropped(DropReason::PuntRate)), (8, 9));
    // The same RRP packets on port 1, where their source is no buddy: the
    // request class, one source's share of it.
    b.feed(100 * SEC, 1, &n_of(&control, 5));
    let c1 = b.counters(1);
    assert_eq!(c1.punted_by_class[PuntClass::Request], 1);
    assert_eq!(c1.punt_source_by_class[PuntClass::Request], 4);
    let mut n = 0;
    while let Some(p) = b.ctl.recv_punt() {
        b.ctl.recycle(p);
        n += 1;
    }
    assert_eq!(n, 9);
    assert_eq!(c.dropped(DropReason::PuntFull), 0);
}

#[test]
fn a_management_flood_costs_its_source_and_class_only_and_is_counted_by_class() {
    // The shape of a stranger's flood of management datagrams (issue: a
    // stranger's flood must not take routing down): host 0 floods; it gets
    // its share of the management class (burst 32 / 8 = 4) and no more;
    // host 1's management datagrams still get through, the buddy's routing
    // packets keep their own budget and room and come out first, then the
    // requests of a node that is no buddy.
    let mut b = Bench::new(
        ChannelConfig {
            punt_slots: 6,
            punt_budgets: PuntBudgets::uniform(PuntBudget::new(1000, 32)),
            ..roomy_channels()
        },
        |f| buddy_on(f, 0),
    );
    let mgmt = bytes(&typed(HRS[0].0, PacketType::MANAGEMENT.0));
    let mgmt1 = bytes(&typed(HRS[1].0, PacketType::MANAGEMENT.0));
    let rrp = bytes(&typed(HRS[0].0, PacketType::RRP.0));
    let rrp2 = bytes(&typed(HRS[2].0, PacketType::RRP.0));
    b.feed(0, 0, &n_of(&mgmt, 100));
    b.feed(0, 1, &n_of(&mgmt1, 4));
    b.feed(0, 2, &n_of(&rrp2, 2));
    b.feed(0, 0, &n_of(&rrp, 3));
    let (routing, management) = (PuntClass::Routing, PuntClass::Management);
    let c = b.counters(0);
    assert_eq!(c.punted_by_class[management], 4, "the flooder's share");
    assert_eq!(c.punt_source_by_class[management], 96);
    assert_eq!(c.punted_by_class[routing], 3);
    assert_eq!(
        c.punt_rate_by_class[routing] + c.punt_full_by_class[routing],
        0
    );
    assert_eq!(c.punted, c.punted_by_class.total());
    assert_eq!(
        c.dropped(DropReason::PuntSource),
        c.punt_source_by_class.total()
    );
    let c1 = b.counters(1);
    assert_eq!(c1.punted_by_class[management], 2, "the class's 6 slots");
    assert_eq!(c1.punt_full_by_class[management], 2);
    assert_eq!(
        c1.dropped(DropReason::PuntFull),
        c1.punt_full_by_class.total()
    );
    assert_eq!(b.counters(2).punted_by_class[PuntClass::Request], 2);
    let order: Vec<PuntClass> = std::iter::from_fn(|| b.ctl.recv_punt())
        .map(|p| {
            let class = p.class;
            b.ctl.recycle(p);
            class
        })
        .collect();
    assert_eq!(
        order,
        [
            [routing; 3].as_slice(),
            &[PuntClass::Request; 2],
            &[management; 6]
        ]
        .concat()
    );
}

#[test]
fn a_buddy_is_known_only_from_its_native_address() {
    // SRC is host 0's buddy address on HR 0; the same SA from another
    // station of SAN 0 (a spoofer) is a request, not routing.
    let mut b = Bench::new(roomy_channels(), |f| buddy_on(f, 0));
    let rrp = bytes(&typed(HRS[0].0, PacketType::ERR.0));
    b.feed(0, 0, &n_of(&rrp, 2));
    assert_eq!(b.counters(0).punted_by_class[PuntClass::Routing], 2);
    let mut f = fib_for(3, |_| {});
    f.set_buddies(std::sync::Arc::new(dataplane::Buddies::new([
        vec![(SRC, station(0, 9))],
        vec![],
        vec![],
    ])));
    b.fib = f;
    b.feed(0, 0, &n_of(&rrp, 2));
    let c = b.counters(0);
    assert_eq!(c.punted_by_class[PuntClass::Routing], 2);
    assert_eq!(c.punted_by_class[PuntClass::Request], 2);
}

#[test]
fn punt_full_when_the_ring_is_full_or_the_packet_too_big() {
    let mut b = Bench::new(
        ChannelConfig {
            punt_slots: 2,
            punt_slot_bytes: 64,
            ..roomy_channels()
        },
        |_| {},
    );
    let local = bytes(&typed(HRS[1].0, 0x0100));
    assert!(local.len() <= 64);
    b.feed(0, 1, &n_of(&local, 5));
    let c = b.counters(1);
    assert_eq!((c.punted, c.dropped(DropReason::PuntFull)), (2, 3));
    // A slot given back is used again.
    let p = b.ctl.recv_punt().unwrap();
    b.ctl.recycle(p);
    b.feed(0, 1, &n_of(&local, 2));
    let c = b.counters(1);
    assert_eq!((c.punted, c.dropped(DropReason::PuntFull)), (3, 4));
    // The control class has its own slots; a packet larger than a slot is
    // refused as punt-full.
    let rrp = bytes(&typed(HRS[1].0, PacketType::RRP.0));
    let mut big = pkt(HRS[1].0, 100);
    big.header.packet_type = PacketType::RRP;
    b.feed(0, 1, &[rrp, bytes(&big)]);
    let c = b.counters(1);
    assert_eq!((c.punted, c.dropped(DropReason::PuntFull)), (4, 5));
}

#[test]
fn notices_beyond_the_ring_are_counted_as_dropped() {
    let mut b = Bench::new(
        ChannelConfig {
            notices: 2,
            ..roomy_channels()
        },
        |f| f.set_all(Address(DST), nh(0, station(0, 1), 1500)),
    );
    b.feed(0, 2, &n_of(&bytes(&pkt(0x0777, 4)), 5));
    let c = b.counters(2);
    assert_eq!(c.dropped(DropReason::NoRoute), 5, "every drop is counted");
    assert_eq!((c.notices, c.notices_dropped), (2, 3));
    assert_eq!(b.ctl.recv_notice().unwrap().kind, NoticeKind::NoRoute);
    assert_eq!(b.ctl.recv_notice().unwrap().kind, NoticeKind::NoRoute);
    assert!(b.ctl.recv_notice().is_none());
    // Redirects: forwarded all the same, the notice dropped.
    b.feed(0, 0, &n_of(&bytes(&pkt(DST, 4)), 4));
    let c = b.counters(0);
    assert_eq!((c.forwarded, c.notices, c.notices_dropped), (4, 2, 2));
    assert_eq!(b.hosts[0].pending(), 4);
}

#[test]
fn notices_beyond_the_rate_are_counted_as_dropped() {
    let mut b = Bench::new(
        ChannelConfig {
            notice_rate: (1, 2),
            ..roomy_channels()
        },
        |f| f.set_all(Address(DST), nh(1, station(1, 1), 64)),
    );
    let over = bytes(&pkt(DST, 100));
    b.feed(0, 0, &n_of(&over, 3));
    b.feed(0, 0, &n_of(&bytes(&pkt(0x0777, 4)), 2));
    let c = b.counters(0);
    assert_eq!(c.dropped(DropReason::Mtu), 3);
    assert_eq!(c.dropped(DropReason::NoRoute), 2);
    assert_eq!((c.notices, c.notices_dropped), (2, 3));
    b.feed(2 * SEC, 0, &n_of(&over, 3));
    let c = b.counters(0);
    assert_eq!((c.notices, c.notices_dropped), (4, 4));
}

#[test]
fn tx_full_is_counted_on_the_ingress_port() {
    let opts = Opts {
        capacity: vec![256, 4, 256],
        ..Opts::default()
    };
    let mut rig = Rig::new(opts, |f| {
        f.set_all(Address(DST), nh(1, station(1, 1), 1500))
    });
    let p = bytes(&pkt(DST, 8));
    for _ in 0..10 {
        rig.send(0, &p);
    }
    rig.run();
    let c = rig.counters();
    assert_eq!((c[0].received, c[0].forwarded), (10, 4));
    assert_eq!(c[0].dropped(DropReason::TxFull), 6);
    assert_eq!(c[1].transmitted, 4);
    assert_eq!(c[1].dropped_total(), 0, "not on the egress port");
    rig.assert_balanced();
    // Two ingress ports competing for the same egress ring in one pass.
    assert_eq!(rig.recv(1).len(), 4);
    for _ in 0..3 {
        rig.send(0, &p);
        rig.send(2, &p);
    }
    rig.run();
    let c = rig.counters();
    assert_eq!(c[0].forwarded + c[2].forwarded, 4 + 4);
    assert_eq!(
        c[0].dropped(DropReason::TxFull) + c[2].dropped(DropReason::TxFull),
        6 + 2
    );
    assert_eq!(c[1].transmitted, 8);
    rig.assert_balanced();
}

fn injection(port: u16, native: rrp::NativeAddr, data: &[u8]) -> Injection {
    Injection {
        port: PortId(port),
        native_dst: native,
        data: data.to_vec(),
    }
}

#[test]
fn injected_packets_are_transmitted_and_counted_apart() {
    let mut rig = Rig::simple(|_| {});
    let rrp = bytes(&typed(0x0555, PacketType::RRP.0));
    rig.ctl.inject(injection(1, station(1, 5), &rrp)).unwrap();
    rig.ctl.inject(injection(2, host(2), &rrp)).unwrap();
    rig.worker.poll_once();
    let got = rig.recv(1);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data(), &rrp[..], "as given, EI untouched");
    assert_eq!(got[0].native_dst(), station(1, 5));
    assert_eq!(got[0].native_src(), router(1));
    assert_eq!(rig.recv(2).len(), 1);
    let c = rig.counters();
    for p in [1, 2] {
        assert_eq!(
            (c[p].injected, c[p].transmitted, c[p].inject_failed),
            (1, 1, 0)
        );
        assert_eq!((c[p].received, c[p].forwarded), (0, 0));
    }
    rig.assert_balanced();
}

#[test]
fn injections_that_cannot_be_sent_count_inject_failed() {
    let opts = Opts {
        capacity: vec![256, 2, 256],
        ..Opts::default()
    };
    let mut rig = Rig::new(opts, |_| {});
    let rrp = bytes(&typed(0x0555, PacketType::RRP.0));
    // A native address the in-memory SAN refuses (4 bytes), and an empty one
    // (every member of the SAN: on a wire, its peer).
    rig.ctl
        .inject(injection(
            0,
            rrp::NativeAddr::from_bytes(&[1, 2, 3, 4]).unwrap(),
            &rrp,
        ))
        .unwrap();
    rig.ctl
        .inject(injection(0, rrp::NativeAddr::NONE, &rrp))
        .unwrap();
    // A port this box does not have.
    rig.ctl.inject(injection(3, host(0), &rrp)).unwrap();
    rig.ctl.inject(injection(u16::MAX, host(0), &rrp)).unwrap();
    // More than port 1's ring holds.
    for _ in 0..4 {
        rig.ctl.inject(injection(1, station(1, 1), &rrp)).unwrap();
    }
    // More than a buffer holds.
    rig.ctl
        .inject(injection(2, station(2, 1), &vec![0; 20_000]))
        .unwrap();
    rig.worker.poll_once();
    let c = rig.counters();
    assert_eq!((c[0].injected, c[0].inject_failed), (1, 1));
    assert_eq!(
        (c[1].injected, c[1].transmitted, c[1].inject_failed),
        (2, 2, 2)
    );
    assert_eq!((c[2].injected, c[2].inject_failed), (0, 1));
    assert_eq!(rig.worker.inject_bad_port(), 2, "bad ports are counted too");
    assert_eq!(rig.recv(0).len(), 1, "the broadcast one reached the peer");
    assert_eq!(rig.recv(1).len(), 2);
    rig.assert_balanced();
}

#[test]
fn at_most_a_burst_of_injections_per_pass() {
    let mut rig = Rig::simple(|_| {});
    let rrp = bytes(&typed(0x0555, PacketType::RRP.0));
    for _ in 0..BURST + 8 {
        rig.ctl.inject(injection(1, station(1, 1), &rrp)).unwrap();
    }
    rig.worker.poll_once();
    assert_eq!(rig.counters()[1].injected, BURST as u64);
    rig.worker.poll_once();
    assert_eq!(rig.counters()[1].injected, BURST as u64 + 8);
    assert_eq!(rig.recv(1).len(), BURST + 8);
}

#[test]
fn injection_ring_full_is_refused_to_the_control_plane() {
    let (_w, ctl) = channels(ChannelConfig {
        injections: 2,
        ..roomy_channels()
    });
    let rrp = bytes(&typed(0x0555, PacketType::RRP.0));
    assert!(ctl.inject(injection(1, station(1, 1), &rrp)).is_ok());
    assert!(ctl.inject(injection(1, station(1, 1), &rrp)).is_ok());
    let back = ctl.inject(injection(1, station(1, 1), &rrp)).unwrap_err();
    assert_eq!(back.data, rrp, "given back to the caller");
}
