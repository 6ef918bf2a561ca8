//! L2 (source-routed) decisions of the engine: the L2RH walk, the strip of
//! the router hop, bad and too many L2RHs, egress-only punts, MTU as
//! transmitted, EI.

mod common;

use common::*;
use dataplane::PuntClass;
use ports::PacketBuf;
use rrp::Address;
use rrp::DropReason;
use rrp::PortId;
use rrp::kind::PacketType;
use rrp::router::NoticeKind;
use rrp::wire::{L2rhRepr, PacketRepr};

const DST: u16 = 0x0999;

/// A MAC as bytes.
fn mac(n: rrp::NativeAddr) -> Vec<u8> {
    n.as_bytes().to_vec()
}

/// An L2RH of `len` content bytes that is not a router hop for this box.
fn other_l2rh(len: usize, seed: u8) -> L2rhRepr {
    let c: Vec<u8> = (0..len)
        .map(|i| seed.wrapping_add((i as u8).wrapping_mul(13)))
        .collect();
    L2rhRepr::new(&c).unwrap()
}

fn l2(first: L2rhRepr, rest: Vec<L2rhRepr>, len: usize) -> PacketRepr {
    let mut p = pkt(DST, len);
    p.l2rhs = vec![first];
    p.l2rhs.extend(rest);
    p
}

#[test]
fn chains_of_one_to_eight_l2rhs_strip_the_first_and_keep_the_rest() {
    let mut rig = Rig::simple(|_| {});
    for n in 1..=8usize {
        for (egress, port) in [(HRS[1], 1usize), (HRS[2], 2), (HRS[0], 0)] {
            let rest: Vec<L2rhRepr> = (1..n)
                .map(|i| other_l2rh(1 + (i * 17 + n) % 63, i as u8))
                .collect();
            let mut p = l2(hop(egress, &mac(station(port, 4))), rest, 3 + n);
            p.ei = n as u64;
            let (out, buf) = rig.one(0, &bytes(&p)).forwarded();
            assert_eq!(out, port, "n = {n}: leaves by the egress HR's port");
            assert_eq!(buf.native_dst(), station(port, 4));
            assert_eq!(buf.data(), &expect_l2(&p, false)[..], "n = {n}");
            let q = PacketRepr::parse(buf.data()).unwrap();
            assert_eq!(q.l2rhs, p.l2rhs[1..], "the rest left intact");
            assert_eq!(q.ei, (n as u64) << 1);
        }
    }
    assert!(
        rig.notices().is_empty(),
        "no redirect on L2, even back to the ingress SAN"
    );
    assert_eq!(rig.counters()[0].forwarded, 24);
    rig.assert_balanced();
}

#[test]
fn nine_l2rhs_are_too_many() {
    let mut rig = Rig::simple(|_| {});
    let rest: Vec<L2rhRepr> = (1..9).map(|i| other_l2rh(8, i)).collect();
    let p = l2(hop(HRS[1], &mac(station(1, 1))), rest, 8);
    assert_eq!(p.l2rhs.len(), 9);
    assert_eq!(rig.one(0, &bytes(&p)).dropped(), DropReason::TooManyL2rh);
    // Eight are fine.
    let rest: Vec<L2rhRepr> = (1..8).map(|i| other_l2rh(8, i)).collect();
    let p = l2(hop(HRS[1], &mac(station(1, 1))), rest, 8);
    assert_eq!(rig.one(0, &bytes(&p)).forwarded().0, 1);
    rig.assert_balanced();
}

#[test]
fn egress_that_is_not_an_hr_of_this_box_is_bad() {
    let mut rig = Rig::simple(|_| {});
    for egress in [
        0x0000u16, 0x0040, 0x0111, 0x0999, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF,
    ] {
        let mut content = egress.to_be_bytes().to_vec();
        content.extend(mac(station(1, 1)));
        let p = l2(L2rhRepr::new(&content).unwrap(), vec![], 8);
        assert_eq!(
            rig.one(0, &bytes(&p)).dropped(),
            DropReason::BadL2rh,
            "egress {egress:#06x}"
        );
    }
    assert!(rig.notices().is_empty());
    rig.assert_balanced();
}

#[test]
fn l_zero_and_l_one_are_bad() {
    let mut rig = Rig::simple(|_| {});
    let tail = bytes(&pkt(DST, 8));
    // L = 0: one word, then the header.
    let mut b = vec![0, 0, 0x01, 0x20, 2, 0, 0, 0];
    b.extend(&tail);
    assert_eq!(rig.one(0, &b).dropped(), DropReason::BadL2rh);
    // L = 1: a one-byte content cannot hold an egress HR.
    let p = l2(L2rhRepr::new(&[0x01]).unwrap(), vec![], 8);
    assert_eq!(rig.one(0, &bytes(&p)).dropped(), DropReason::BadL2rh);
    // L = 0 further down the chain.
    let mut b = Vec::new();
    hop(HRS[1], &mac(station(1, 1))).emit(&mut b);
    b.extend([0, 0, 0, 0, 0, 0, 0, 0]);
    b.extend(&tail);
    assert_eq!(rig.one(0, &b).dropped(), DropReason::BadL2rh);
    rig.assert_balanced();
}

#[test]
fn a_native_address_the_egress_port_refuses_is_bad() {
    let mut rig = Rig::simple(|_| {});
    // The in-memory SAN takes 6-byte addresses only; longer than 18 bytes
    // is no native address at all.
    for len in [1usize, 4, 5, 7, 16, 18, 19, 30, 61] {
        let native: Vec<u8> = (0..len as u8).collect();
        let p = l2(hop(HRS[1], &native), vec![], 8);
        assert_eq!(
            rig.one(0, &bytes(&p)).dropped(),
            DropReason::BadL2rh,
            "native of {len} bytes"
        );
    }
    let c = rig.counters();
    assert_eq!(c[0].dropped(DropReason::BadL2rh), 9);
    assert_eq!(c[1].transmitted, 0);
    assert_eq!(
        c[0].dropped(DropReason::Encap),
        0,
        "counted as bad-l2rh, not encap"
    );
    rig.assert_balanced();
}

#[test]
fn egress_only_punts_to_that_hr() {
    let mut rig = Rig::simple(|_| {});
    for (in_port, hr) in [(0usize, 2usize), (0, 0), (1, 2), (2, 1)] {
        for (pt, class) in [
            (PacketType::RRP.0, PuntClass::Request),
            (PacketType::ERR.0, PuntClass::Request),
            (0x0100, PuntClass::Local),
        ] {
            let mut p = typed(DST, pt);
            p.l2rhs = vec![hop(HRS[hr], &[])];
            p.ei = 3;
            let mut b = bytes(&p);
            b.extend([0xEE; 5]);
            let punt = rig.one(in_port, &b).punted();
            assert_eq!(punt.in_port, PortId(in_port as u16));
            assert_eq!(
                punt.hr_port,
                PortId(hr as u16),
                "delivered to the HR the L2RH names"
            );
            assert_eq!(punt.native_src, host(in_port));
            let mut q = p.clone();
            q.l2rhs.clear();
            assert_eq!(punt.data, bytes(&q), "stripped, trimmed, EI untouched");
            assert_eq!(punt.class, class);
            rig.ctl.recycle(punt);
        }
    }
    // With more L2RHs after it: punted from the next L2RH on, as Local.
    let mut p = typed(DST, PacketType::RRP.0);
    p.l2rhs = vec![hop(HRS[1], &[]), other_l2rh(5, 1)];
    let punt = rig.one(0, &bytes(&p)).punted();
    assert_eq!(punt.hr_port, PortId(1));
    let mut q = p.clone();
    q.l2rhs.remove(0);
    assert_eq!(punt.data, bytes(&q));
    rig.ctl.recycle(punt);
    rig.assert_balanced();
}

#[test]
fn mtu_counts_the_remaining_l2rhs_header_data_and_trailer() {
    // As transmitted on port 1: second L2RH (16) + header (16) + data + trailer (8).
    let mtu = 16 + 16 + 32 + 8;
    let opts = Opts {
        mtus: vec![1500, mtu, 0],
        ..Opts::default()
    };
    let mut rig = Rig::new(opts, |_| {});
    let first = hop(HRS[1], &mac(station(1, 1)));
    let fits = l2(first.clone(), vec![other_l2rh(14, 9)], 32);
    assert_eq!(
        bytes(&fits).len(),
        16 + mtu as usize,
        "the stripped L2RH does not count"
    );
    let (port, buf) = rig.one(0, &bytes(&fits)).forwarded();
    assert_eq!((port, buf.data().len()), (1, mtu as usize));
    let over = l2(first, vec![other_l2rh(14, 9)], 33);
    let b = bytes(&over);
    assert_eq!(rig.one(0, &b).dropped(), DropReason::Mtu);
    let n = rig.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].kind, NoticeKind::Mtu);
    assert_eq!(
        (n[0].in_port, n[0].out_port, n[0].mtu),
        (PortId(0), PortId(1), mtu)
    );
    assert_eq!(n[0].packet_len as usize, b.len(), "the packet as received");
    assert_eq!(n[0].bytes(), &b[..b.len().min(128)]);
    // MTU 0 on port 2: unlimited.
    let big = l2(hop(HRS[2], &mac(station(2, 1))), vec![], 8000);
    assert_eq!(rig.one(0, &bytes(&big)).forwarded().0, 2);
    rig.assert_balanced();
}

#[test]
fn ei_is_shifted_on_l2_too() {
    let mut rig = Rig::simple(|_| {});
    let mut p = l2(hop(HRS[2], &mac(station(2, 7))), vec![other_l2rh(3, 3)], 11);
    p.ei = 0x8000_0000_0000_0003;
    let (_, buf) = rig.one(0, &bytes(&p)).forwarded();
    assert_eq!(buf.data(), &expect_l2(&p, false)[..]);
    assert_eq!(PacketRepr::parse(buf.data()).unwrap().ei, 6);
    let (_, buf) = rig.one_flagged(1, &bytes(&p)).forwarded();
    assert_eq!(buf.data(), &expect_l2(&p, true)[..]);
    assert_eq!(PacketRepr::parse(buf.data()).unwrap().ei, 7);
    assert_eq!(rig.counters()[1].rx_errors, 1);
}

#[test]
fn frame_padding_after_an_l2_packet_is_trimmed() {
    let mut rig = Rig::simple(|_| {});
    let p = l2(hop(HRS[1], &mac(station(1, 1))), vec![], 1);
    let mut b = bytes(&p);
    b.extend([0xEE; 31]);
    let (_, buf) = rig.one(0, &b).forwarded();
    assert_eq!(buf.data(), &expect_l2(&p, false)[..]);
}

#[test]
fn the_fib_does_not_matter_on_l2() {
    // The EEP destination has a route elsewhere (and one that is this box):
    // the L2RH decides.
    let mut rig = Rig::simple(|f| f.set_all(Address(DST), nh(2, station(2, 1), 1500)));
    let p = l2(hop(HRS[1], &mac(station(1, 1))), vec![], 4);
    assert_eq!(rig.one(0, &bytes(&p)).forwarded().0, 1);
    let mut p = l2(hop(HRS[1], &mac(station(1, 1))), vec![], 4);
    p.header.dst = HRS[0];
    assert_eq!(rig.one(0, &bytes(&p)).forwarded().0, 1);
}

#[test]
fn the_published_port_mtu_overrides_the_configured_one() {
    // Configured 1500 on port 1, published 72 (a management Set of the
    // MTU): the control plane's value applies to source routes.
    let mtu = 16 + 16 + 32 + 8;
    let mut rig = Rig::new(Opts::default(), |f| f.set_port_mtus([1500, mtu, 0]));
    let first = hop(HRS[1], &mac(station(1, 1)));
    let fits = l2(first.clone(), vec![other_l2rh(14, 9)], 32);
    assert_eq!(rig.one(0, &bytes(&fits)).forwarded().0, 1);
    let over = l2(first, vec![other_l2rh(14, 9)], 33);
    assert_eq!(rig.one(0, &bytes(&over)).dropped(), DropReason::Mtu);
    let n = rig.notices();
    assert_eq!((n.len(), n[0].mtu), (1, mtu));
    rig.assert_balanced();
}
