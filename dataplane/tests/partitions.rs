//! The partitions at a router's ports, through a worker over in-memory
//! ports (docs/partitions.md "At the routers"): packets within a partition
//! cross, others are dropped as `partition` with a notice for the source's
//! ERR and counted per key; control packets pass; group branches are
//! pruned to the SANs with a member; a box without partitions checks
//! nothing.

mod common;

use std::sync::Arc;

use common::*;
use dataplane::partitions::{PartitionGuard, SanPartitions};
use dataplane::{FibSet, McastFib};
use ports::PacketBuf;
use rrp::kind::PacketType;
use rrp::partition_mark::DEFAULT_KEY;
use rrp::router::{McastGroup, McastTables, NoticeKind, SourceSan};
use rrp::wire::PacketRepr;
use rrp::{Address, DropReason, PartitionMark, PortId};

const TENANT: u16 = 0x0010;
/// A partition of SAN A's only.
const LONELY: u16 = 0x0040;
/// On SAN A (port 0): `SRC` (0x0101) a full member of TENANT and LONELY,
/// 0x0102 a limited one, 0x0103 a full one whose native address is a
/// station's, not the host's.
const LIMITED_A: u16 = 0x0102;
const OTHER_A: u16 = 0x0103;
/// On SAN C (port 1): 0x0202 a full member of TENANT, 0x0203 a limited
/// one, 0x0204 of the default partition only; 0x0299 a node behind a
/// router of SAN C.
const FULL_C: u16 = 0x0202;
const LIMITED_C: u16 = 0x0203;
const DEFAULT_C: u16 = 0x0204;
const BEYOND_C: u16 = 0x0299;
/// A node of the open SAN on port 2.
const OPEN_N: u16 = 0x0301;

fn guard() -> PartitionGuard {
    let tenant = |full| vec![(TENANT, full), (DEFAULT_KEY, false)];
    let a = SanPartitions::new([
        (
            SRC,
            vec![(TENANT, true), (LONELY, true), (DEFAULT_KEY, true)],
        ),
        (Address(LIMITED_A), tenant(false)),
        (Address(OTHER_A), tenant(true)),
    ])
    .unwrap();
    let c = SanPartitions::new([
        (Address(FULL_C), tenant(true)),
        (Address(LIMITED_C), tenant(false)),
        (Address(DEFAULT_C), vec![(DEFAULT_KEY, true)]),
    ])
    .unwrap();
    PartitionGuard::new([Some(a), Some(c), None])
}

/// Routes: SAN A's nodes on port 0 (SRC and 0x0102 at the host, 0x0103
/// at a station), SAN C's on port 1, the open SAN's on port 2; the
/// partitions of `guard()` when `on`.
fn fib(on: bool) -> impl FnOnce(&mut FibSet) {
    move |f: &mut FibSet| {
        f.set_all(SRC, nh(0, host(0), 1500));
        f.set_all(Address(LIMITED_A), nh(0, host(0), 1500));
        f.set_all(Address(OTHER_A), nh(0, station(0, 3), 1500));
        for (d, n) in [(FULL_C, 2), (LIMITED_C, 3), (DEFAULT_C, 4)] {
            f.set_all(Address(d), nh(1, station(1, n), 1500));
        }
        f.set_all(Address(BEYOND_C), nh(1, station(1, 9), 1500));
        f.set_all(Address(OPEN_N), nh(2, host(2), 1500));
        // The router of SAN C that BEYOND_C lies behind.
        f.set_buddies(Arc::new(dataplane::Buddies::new([
            vec![],
            vec![(Address(0x0290), station(1, 9))],
            vec![],
        ])));
        if on {
            f.set_partitions(Arc::new(guard()));
        }
    }
}

fn marked(src: u16, dst: u16, key: u16, full: bool) -> PacketRepr {
    let mut p = pkt(dst, 20);
    p.header.src = Address(src);
    p.header.free = PartitionMark::new(key, full).to_free();
    p
}

#[test]
fn members_of_a_partition_talk_across_the_box() {
    let mut rig = Rig::simple(fib(true));
    let p = marked(SRC.0, FULL_C, TENANT, true);
    let (port, buf) = rig.one(0, &bytes(&p)).forwarded();
    assert_eq!(port, 1);
    assert_eq!(buf.data(), &expect_l3(&p, false)[..], "Free untouched");
    // Full to limited, limited to full.
    assert_eq!(
        rig.one(0, &bytes(&marked(SRC.0, LIMITED_C, TENANT, true)))
            .forwarded()
            .0,
        1
    );
    let p = marked(LIMITED_A, FULL_C, TENANT, false);
    assert_eq!(rig.one(0, &bytes(&p)).forwarded().0, 1);
    // The default partition, full, between a member and an open SAN.
    let p = marked(SRC.0, OPEN_N, DEFAULT_KEY, true);
    assert_eq!(rig.one(0, &bytes(&p)).forwarded().0, 2);
    assert!(rig.notices().is_empty());
    assert!(rig.worker.partition_drops().tags().is_empty());
}

#[test]
fn packets_outside_their_partition_are_dropped_with_a_notice_and_counted() {
    let mut rig = Rig::simple(fib(true));
    let refused = [
        (marked(SRC.0, DEFAULT_C, TENANT, true), "not a member"),
        (marked(LIMITED_A, LIMITED_C, TENANT, false), "two limited"),
        (marked(LIMITED_A, FULL_C, TENANT, true), "claims full"),
        (
            marked(OTHER_A, FULL_C, TENANT, true),
            "spoofed: not its native",
        ),
        (marked(SRC.0, OPEN_N, TENANT, true), "onto an open SAN"),
    ];
    for (p, why) in &refused {
        assert_eq!(
            rig.one(0, &bytes(p)).dropped(),
            DropReason::Partition,
            "{why}"
        );
        let n = rig.notices();
        assert_eq!(n.len(), 1, "{why}");
        assert_eq!(n[0].kind, NoticeKind::Partition);
        assert_eq!(n[0].in_port, PortId(0));
        assert_eq!(n[0].native_src, host(0));
        assert_eq!(n[0].header().unwrap().src(), p.header.src);
    }
    // From the open SAN, in a partition: refused at the source.
    let p = marked(OPEN_N, FULL_C, TENANT, true);
    assert_eq!(rig.one(2, &bytes(&p)).dropped(), DropReason::Partition);
    let c = rig.counters();
    assert_eq!(c[0].dropped(DropReason::Partition), refused.len() as u64);
    assert_eq!(c[2].dropped(DropReason::Partition), 1);
    rig.assert_balanced();
    let d = rig.worker.partition_drops();
    let count = |key, port| {
        d.tags()
            .iter()
            .position(|t| t.key == key && t.port == PortId(port))
            .map(|i| d.counts()[i].dropped)
    };
    assert_eq!(count(TENANT, 0), Some(refused.len() as u64));
    assert_eq!(count(TENANT, 2), Some(1));
    assert_eq!(d.tags().len(), 2);
}

#[test]
fn transit_needs_a_router_beyond() {
    let mut rig = Rig::simple(fib(true));
    // To a node behind SAN C's router: the destination is further on.
    let p = marked(SRC.0, BEYOND_C, TENANT, true);
    assert_eq!(rig.one(0, &bytes(&p)).forwarded().0, 1);
}

#[test]
fn transit_from_a_router_is_checked_at_the_destination_only() {
    // The host on SAN C is a router there: what it sends entered elsewhere.
    let mut rig = Rig::simple(|f: &mut FibSet| {
        fib(true)(f);
        f.set_buddies(Arc::new(dataplane::Buddies::new([
            vec![],
            vec![(Address(0x0290), host(1))],
            vec![],
        ])));
    });
    let p = marked(0x0500, SRC.0, TENANT, true);
    assert_eq!(rig.one(1, &bytes(&p)).forwarded().0, 0);
    let p = marked(0x0500, LIMITED_A, TENANT, false);
    assert_eq!(
        rig.one(1, &bytes(&p)).dropped(),
        DropReason::Partition,
        "two limited"
    );
    // Not from a router: refused at the source.
    let mut rig = Rig::simple(fib(true));
    let p = marked(0x0500, SRC.0, TENANT, true);
    assert_eq!(rig.one(1, &bytes(&p)).dropped(), DropReason::Partition);
}

#[test]
fn control_packets_are_never_refused() {
    let mut rig = Rig::simple(fib(true));
    for pt in [PacketType::RRP, PacketType::ERR, PacketType::MANAGEMENT] {
        // Spoofed, unmarked in a partition, onto a non-member: still passes.
        let mut p = marked(OTHER_A, DEFAULT_C, TENANT, true);
        p.header.packet_type = pt;
        assert_eq!(rig.one(0, &bytes(&p)).forwarded().0, 1, "{pt:?}");
    }
    let mut p = marked(OTHER_A, DEFAULT_C, TENANT, true);
    p.header.packet_type = PacketType(0x0004);
    assert_eq!(rig.one(0, &bytes(&p)).dropped(), DropReason::Partition);
}

#[test]
fn source_routed_packets_are_checked_at_their_egress_hr() {
    let mut rig = Rig::simple(fib(true));
    let hop1 = hop(HRS[1], &[2, 0, 0, 0, 0x11, 9]);
    // To a node SAN C's tables do not have, with no L2RH after this HR's.
    let mut p = marked(SRC.0, BEYOND_C, TENANT, true);
    p.l2rhs = vec![hop1.clone()];
    assert_eq!(rig.one(0, &bytes(&p)).dropped(), DropReason::Partition);
    let n = rig.notices();
    assert_eq!((n.len(), n[0].out_port), (1, PortId(1)));
    assert!(n[0].header().is_some(), "the header after the L2RH");
    // Another L2RH follows: the destination is beyond a router of SAN C.
    p.l2rhs.push(hop(Address(0x0290), &[2, 0, 0, 0, 0x22, 1]));
    let (port, buf) = rig.one(0, &bytes(&p)).forwarded();
    assert_eq!(port, 1);
    assert_eq!(buf.data(), &expect_l2(&p, false)[..]);
    // Within the partition, one L2RH.
    let mut p = marked(SRC.0, FULL_C, TENANT, true);
    p.l2rhs = vec![hop1];
    assert_eq!(rig.one(0, &bytes(&p)).forwarded().0, 1);
}

#[test]
fn a_box_without_partitions_checks_nothing() {
    let mut rig = Rig::simple(fib(false));
    for (src, dst, key) in [(OTHER_A, DEFAULT_C, TENANT), (SRC.0, OPEN_N, 0x1234)] {
        let p = marked(src, dst, key, false);
        rig.one(0, &bytes(&p)).forwarded();
    }
    assert_eq!(rig.counters()[0].dropped(DropReason::Partition), 0);
}

const G: u16 = 0x8123;

fn with_group(on: bool) -> impl FnOnce(&mut FibSet) {
    move |f: &mut FibSet| {
        fib(on)(f);
        let t = McastTables {
            version: 1,
            sans: vec![SourceSan {
                san: Address(0x0201),
                up: PortId(0),
                from: None,
                df: 0b110,
            }],
            sources: vec![(SRC, 0), (Address(OTHER_A), 0)],
            groups: vec![McastGroup {
                group: Address(G),
                member_sans: vec![Address(0x0202)],
                branches: 0b110,
                local: 0,
            }],
        };
        f.set_mcast(Arc::new(McastFib::from_tables(&t)));
    }
}

#[test]
fn group_branches_go_only_to_sans_with_a_member() {
    let mut rig = Rig::simple(with_group(true));
    let send = |rig: &mut Rig, src: u16, key: u16| {
        rig.send(0, &bytes(&marked(src, G, key, true)));
        rig.run();
        (rig.recv(1).len(), rig.recv(2).len())
    };
    assert_eq!(send(&mut rig, SRC.0, DEFAULT_KEY), (1, 1), "default: both");
    assert_eq!(send(&mut rig, SRC.0, TENANT), (1, 0), "the open SAN pruned");
    assert_eq!(send(&mut rig, SRC.0, LONELY), (0, 0), "every branch pruned");
    assert_eq!(send(&mut rig, OTHER_A, TENANT), (0, 0), "spoofed source");
    let c = rig.counters();
    assert_eq!(c[0].dropped(DropReason::Partition), 2);
    rig.assert_balanced();
    // Without partitions, every branch.
    let mut rig = Rig::simple(with_group(false));
    assert_eq!(send(&mut rig, SRC.0, LONELY), (1, 1));
}
