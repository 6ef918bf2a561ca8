//! Group packets through a worker over in-memory ports (docs/multicast.md):
//! one copy per branch to every member of that port's SAN, the received
//! buffer on the last branch and replicas on the others, EI shifted once
//! for all; the reverse-path check (upstream port, designated forwarder's
//! native), pruning, the MTU of each branch on its own, the conflict
//! notice, per-group counters, and the port accounts balanced throughout.

mod common;

use std::sync::Arc;

use common::*;
use dataplane::{FibSet, McastFib};
use ports::PacketBuf;
use rrp::router::{McastGroup, McastTables, NoticeKind, SourceSan};
use rrp::wire::PacketRepr;
use rrp::{Address, DropReason, PortId};

const G: u16 = 0x8123;
/// A source on SAN 0 (the SAN of port 0).
const SRC0: u16 = 0x0101;
/// A source on a SAN behind port 1, whose designated forwarder there is
/// `station(1, 7)`.
const SRC1: u16 = 0x0301;

fn tables(branches: u32) -> McastTables {
    McastTables {
        version: 1,
        sans: vec![
            SourceSan {
                san: Address(0x0201),
                up: PortId(0),
                from: None,
                df: 0b110,
            },
            SourceSan {
                san: Address(0x0203),
                up: PortId(1),
                from: Some(station(1, 7)),
                df: 0b101,
            },
        ],
        sources: vec![(Address(SRC0), 0), (Address(SRC1), 1)],
        groups: vec![McastGroup {
            group: Address(G),
            member_sans: vec![Address(0x0202)],
            branches,
            local: 0,
        }],
    }
}

fn with_mcast(t: McastTables) -> impl FnOnce(&mut FibSet) {
    move |f: &mut FibSet| f.set_mcast(Arc::new(McastFib::from_tables(&t)))
}

fn group_pkt(src: u16, len: usize) -> PacketRepr {
    let mut p = pkt(G, len);
    p.header.src = Address(src);
    p
}

#[test]
fn one_copy_on_each_branch_to_every_member() {
    let mut rig = Rig::simple(with_mcast(tables(0b111)));
    let mut p = group_pkt(SRC0, 40);
    p.ei = 0b1;
    rig.send(0, &bytes(&p));
    rig.run();
    for port in [1, 2] {
        let got = rig.recv(port);
        assert_eq!(got.len(), 1, "port {port}: one copy");
        let b = &got[0];
        // To every member: on an in-memory wire, the one at its other end.
        assert_eq!(b.native_dst(), host(port));
        assert_eq!(b.native_src(), router(port));
        let back = PacketRepr::parse(b.data()).unwrap();
        assert_eq!(back.ei, 0b10, "EI shifted once");
        assert_eq!((back.header, back.data.clone()), (p.header, p.data.clone()));
    }
    assert!(rig.recv(0).is_empty(), "never back where it came from");
    let c = rig.counters();
    assert_eq!((c[0].received, c[0].forwarded), (1, 1));
    assert_eq!((c[1].transmitted, c[2].transmitted), (1, 1));
    rig.assert_balanced();
    let (slots, unslotted) = rig.worker.mcast_counters();
    assert_eq!((slots[0].packets, slots[0].copies), (1, 2));
    assert_eq!(unslotted.packets, 0);
}

#[test]
fn pruned_branches_and_the_reverse_path() {
    // Only port 2 leads to members.
    let mut rig = Rig::simple(with_mcast(tables(0b100)));
    rig.send(0, &bytes(&group_pkt(SRC0, 8)));
    rig.run();
    assert_eq!(rig.recv(2).len(), 1);
    assert!(rig.recv(1).is_empty(), "pruned");
    // No branch at all: dropped, counted.
    let mut rig = Rig::simple(with_mcast(tables(0b001)));
    assert_eq!(
        rig.one(0, &bytes(&group_pkt(SRC0, 8))).dropped(),
        DropReason::McastPruned
    );
    // A source on SAN 0 arriving on port 2, not its upstream, and a SAN
    // this box forwards onto itself: dropped, and the sender there is one
    // to ask for RTs.
    let mut rig = Rig::simple(with_mcast(tables(0b111)));
    assert_eq!(
        rig.one(2, &bytes(&group_pkt(SRC0, 8))).dropped(),
        DropReason::McastRpf
    );
    assert_eq!(rig.notices()[0].kind, NoticeKind::McastConflict);
    // On a port that is neither: dropped, nothing to tell.
    let mut t = tables(0b111);
    t.sans[0].df = 0b010;
    let mut rig = Rig::simple(with_mcast(t));
    assert_eq!(
        rig.one(2, &bytes(&group_pkt(SRC0, 8))).dropped(),
        DropReason::McastRpf
    );
    assert!(rig.notices().is_empty());
    // An unknown source, and no source at all.
    assert_eq!(
        rig.one(0, &bytes(&group_pkt(0x0777, 8))).dropped(),
        DropReason::McastRpf
    );
    assert_eq!(
        rig.one(0, &bytes(&group_pkt(0, 8))).dropped(),
        DropReason::McastRpf
    );
    rig.assert_balanced();
}

#[test]
fn from_the_designated_forwarder_only_and_conflicts_are_told() {
    let mut rig = Rig::simple(with_mcast(tables(0b111)));
    // From the host on SAN 1 (not the designated forwarder for SRC1's SAN):
    // dropped, and the control plane told (it asks that router for RTs).
    assert_eq!(
        rig.one(1, &bytes(&group_pkt(SRC1, 8))).dropped(),
        DropReason::McastRpf
    );
    let n = rig.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].kind, NoticeKind::McastConflict);
    assert_eq!((n[0].in_port, n[0].native_src), (PortId(1), host(1)));
    // From the designated forwarder (here the station at the other end
    // of port 1's wire): forwarded to ports 0 and 2.
    let mut t = tables(0b111);
    t.sans[1].from = Some(host(1));
    let mut rig = Rig::simple(with_mcast(t));
    rig.send(1, &bytes(&group_pkt(SRC1, 8)));
    rig.run();
    assert_eq!((rig.recv(0).len(), rig.recv(2).len()), (1, 1));
    assert!(rig.notices().is_empty());
    rig.assert_balanced();
}

#[test]
fn a_branch_too_small_drops_its_copy_only_and_tells_the_source() {
    let opts = Opts {
        mtus: vec![1500, 1500, 96],
        ..Opts::default()
    };
    let mut rig = Rig::new(opts, with_mcast(tables(0b111)));
    // 16 + 120 + 8 = 144 bytes: too large for port 2's SAN.
    rig.send(0, &bytes(&group_pkt(SRC0, 120)));
    rig.run();
    assert_eq!(rig.recv(1).len(), 1);
    assert!(rig.recv(2).is_empty());
    let n = rig.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(
        (n[0].kind, n[0].out_port, n[0].mtu),
        (NoticeKind::Mtu, PortId(2), 96)
    );
    let c = rig.counters();
    assert_eq!(c[0].forwarded, 1, "forwarded on the branch that fits");
    rig.assert_balanced();
    let (slots, _) = rig.worker.mcast_counters();
    assert_eq!((slots[0].copies, slots[0].branch_mtu), (1, 1));
    // Too large for every branch: dropped, reason mtu.
    let opts = Opts {
        mtus: vec![1500, 64, 64],
        ..Opts::default()
    };
    let mut rig = Rig::new(opts, with_mcast(tables(0b111)));
    assert_eq!(
        rig.one(0, &bytes(&group_pkt(SRC0, 120))).dropped(),
        DropReason::Mtu
    );
}

#[test]
fn a_burst_of_group_packets_keeps_the_accounts() {
    let mut rig = Rig::simple(with_mcast(tables(0b111)));
    for i in 0..100u32 {
        let src = if i % 3 == 0 { 0x0777 } else { SRC0 };
        rig.send(0, &bytes(&group_pkt(src, 8 + (i as usize % 5) * 8)));
    }
    rig.run();
    let c = rig.counters();
    assert_eq!(c[0].received, 100);
    assert_eq!(c[0].dropped(DropReason::McastRpf), 34);
    assert_eq!(c[0].forwarded, 66);
    assert_eq!((c[1].transmitted, c[2].transmitted), (66, 66));
    assert_eq!((rig.recv(1).len(), rig.recv(2).len()), (66, 66));
    rig.assert_balanced();
    let (slots, _) = rig.worker.mcast_counters();
    assert_eq!((slots[0].packets, slots[0].copies), (66, 132));
}
