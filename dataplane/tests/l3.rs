//! L3 decisions of the engine, through a worker over in-memory ports:
//! forward to the FIB's next hop with the EI shifted (and the error ORed
//! in), padding trimmed, the EEP header and data untouched; per-ingress
//! FIBs; punts of this box's addresses; no route; redirect and loop; MTU.

mod common;

use rrp::PortId;
use std::time::Duration;

use common::*;
use dataplane::PuntClass;
use ports::PacketBuf;
use ports::impair::ImpairConfig;
use rrp::Address;
use rrp::DropReason;
use rrp::kind::PacketType;
use rrp::router::NOTICE_BYTES;
use rrp::router::NoticeKind;
use rrp::wire::{Message, PacketRepr};

const DST: u16 = 0x0202;

fn routed(port: u16, mtu: u32) -> Rig {
    Rig::simple(|f| f.set_all(Address(DST), nh(port, station(port as usize, 1), mtu)))
}

#[test]
fn forwards_to_the_fib_next_hop_with_ei_shifted() {
    let mut rig = routed(1, 1500);
    for ei in [0u64, 1, 2, 0x5555, 0x8000_0000_0000_0000, u64::MAX] {
        let mut p = pkt(DST, 33);
        p.ei = ei;
        let (port, buf) = rig.one(0, &bytes(&p)).forwarded();
        assert_eq!(port, 1);
        assert_eq!(
            buf.native_dst(),
            station(1, 1),
            "to the next hop's native address"
        );
        assert_eq!(buf.native_src(), router(1), "from the router's port");
        assert!(!buf.rx_error());
        assert_eq!(buf.data(), &expect_l3(&p, false)[..]);
        assert_eq!(PacketRepr::parse(buf.data()).unwrap().ei, ei << 1);
    }
    let c = rig.counters();
    assert_eq!((c[0].received, c[0].forwarded), (6, 6));
    assert_eq!((c[1].transmitted, c[1].received), (6, 0));
    assert!(rig.notices().is_empty());
    rig.assert_balanced();
}

#[test]
fn rx_error_flag_ors_one_into_the_ei() {
    let mut rig = routed(2, 1500);
    let mut p = pkt(DST, 8);
    p.ei = 0b101;
    let (port, buf) = rig.one_flagged(0, &bytes(&p)).forwarded();
    assert_eq!(port, 2);
    assert_eq!(buf.data(), &expect_l3(&p, true)[..]);
    assert_eq!(PacketRepr::parse(buf.data()).unwrap().ei, 0b1011);
    assert_eq!(rig.counters()[0].rx_errors, 1);
}

#[test]
fn corruption_from_the_impairment_layer_sets_the_ei_bit_exactly() {
    let opts = Opts {
        impair: vec![
            Some(ImpairConfig {
                corrupt: 0.3,
                ..ImpairConfig::seeded(77)
            }),
            None,
            None,
        ],
        capacity: vec![512; 3],
        ..Opts::default()
    };
    let mut rig = Rig::new(opts, |f| {
        f.set_all(Address(DST), nh(1, station(1, 1), 1500))
    });
    let imp = rig.worker.ports_mut()[0].impairment().unwrap();
    let n = 400u64;
    let mut flagged = 0;
    let mut received = 0;
    for round in 0..4 {
        for s in 0..n / 4 {
            let mut p = pkt(DST, 16);
            p.data[..8].copy_from_slice(&(round * 1000 + s).to_be_bytes());
            p.ei = 1;
            rig.send(0, &bytes(&p));
        }
        rig.run();
        for b in rig.recv(1) {
            let q = PacketRepr::parse(b.data()).unwrap();
            match q.ei {
                0b10 => {}
                0b11 => flagged += 1,
                e => panic!("EI {e:#b}"),
            }
            received += 1;
        }
    }
    let st = imp.stats();
    assert_eq!(received, n);
    assert_eq!(st.seen, n);
    assert!(st.corrupted > 50, "{st:?}");
    assert_eq!(flagged, st.corrupted, "one EI bit per injected corruption");
    assert_eq!(rig.counters()[0].rx_errors, st.corrupted);
    rig.assert_balanced();
}

#[test]
fn frame_padding_is_trimmed_and_never_forwarded() {
    let mut rig = routed(1, 1500);
    for pad in [1usize, 7, 8, 23, 60] {
        let p = pkt(DST, 5);
        let mut b = bytes(&p);
        b.extend(std::iter::repeat_n(0xEE, pad));
        let (_, buf) = rig.one(0, &b).forwarded();
        assert_eq!(buf.data(), &expect_l3(&p, false)[..], "pad {pad}");
    }
    // Punted packets lose their padding too.
    let p = pkt(HRS[0].0, 5);
    let mut b = bytes(&p);
    b.extend([0xEE; 13]);
    assert_eq!(rig.one(0, &b).punted().data, bytes(&p));
    rig.assert_balanced();
}

#[test]
fn header_data_and_free_are_untouched_byte_for_byte() {
    let mut rig = routed(1, 0);
    for len in [0usize, 1, 7, 8, 9, 100, 1000] {
        let mut p = pkt(DST, len);
        p.header.free = 0xF00D ^ len as u16;
        p.header.priority = len as u8;
        p.header.endian = rrp::endian::Endian::from_nibble((len % 16) as u8);
        p.ei = 0x0123_4567_89AB_CDEF;
        let input = bytes(&p);
        let (_, buf) = rig.one(0, &input).forwarded();
        let out = buf.data();
        assert_eq!(out.len(), input.len());
        let t = input.len() - 8;
        assert_eq!(out[..t], input[..t], "header and data block unchanged");
        assert_eq!(
            u64::from_be_bytes(out[t..].try_into().unwrap()),
            0x0123_4567_89AB_CDEFu64 << 1
        );
    }
}

#[test]
fn each_ingress_port_has_its_own_fib() {
    let mut rig = Rig::simple(|f| {
        let a = f.add_nexthop(nh(1, station(1, 1), 1500));
        let b = f.add_nexthop(nh(2, station(2, 2), 1500));
        let c = f.add_nexthop(nh(1, station(1, 3), 1500));
        f.set(PortId(0), Address(DST), a);
        f.set(PortId(1), Address(DST), b);
        f.set(PortId(2), Address(DST), c);
    });
    let p = bytes(&pkt(DST, 10));
    let (port, buf) = rig.one(0, &p).forwarded();
    assert_eq!((port, buf.native_dst()), (1, station(1, 1)));
    let (port, buf) = rig.one(1, &p).forwarded();
    assert_eq!((port, buf.native_dst()), (2, station(2, 2)));
    let (port, buf) = rig.one(2, &p).forwarded();
    assert_eq!((port, buf.native_dst()), (1, station(1, 3)));
    let c = rig.counters();
    assert_eq!([c[0].forwarded, c[1].forwarded, c[2].forwarded], [1, 1, 1]);
    assert_eq!(
        [c[0].transmitted, c[1].transmitted, c[2].transmitted],
        [0, 2, 1]
    );
    rig.assert_balanced();
}

#[test]
fn this_box_hey_you_and_broadcast_are_punted_by_class() {
    let mut rig = routed(1, 1500);
    let dsts = [
        HRS[0].0,
        HRS[1].0,
        HRS[2].0,
        Address::HEY_YOU.0,
        Address::BROADCAST.0,
    ];
    let types = [
        (PacketType::RRP.0, PuntClass::Request),
        (PacketType::ERR.0, PuntClass::Request),
        (PacketType::MANAGEMENT.0, PuntClass::Management),
        (PacketType::EMBEDDED.0, PuntClass::Local),
        (PacketType::MEMORY_READ.0, PuntClass::Local),
        (0x0100, PuntClass::Local),
        (0x05FF, PuntClass::Local),
        (0x0800, PuntClass::Local),
    ];
    let mut punted = 0;
    for in_port in 0..3 {
        for dst in dsts {
            for (pt, class) in types {
                let p = typed(dst, pt);
                let b = bytes(&p);
                rig.send(in_port, &b);
                rig.run();
                let punt = rig.ctl.recv_punt().expect("punted");
                assert!(rig.ctl.recv_punt().is_none());
                assert_eq!(punt.data, b, "punted as received");
                assert_eq!(punt.in_port, PortId(in_port as u16));
                assert_eq!(punt.hr_port, PortId(in_port as u16));
                assert_eq!(punt.native_src, host(in_port));
                assert!(!punt.rx_error);
                // The class it was punted under, and its slot goes back
                // to that class.
                assert_eq!(punt.class, class);
                rig.ctl.recycle(punt);
                punted += 1;
            }
        }
    }
    let c = rig.counters();
    assert_eq!(c.iter().map(|c| c.punted).sum::<u64>(), punted);
    assert!(c.iter().all(|c| c.forwarded == 0 && c.dropped_total() == 0));
    rig.assert_balanced();
}

#[test]
fn punt_classes_are_told_apart_by_ring_order() {
    // Sent local, management, routing: the control thread gets them in the
    // classes' order, routing first (docs/dataplane.md "Punt classes").
    let mut rig = routed(1, 1500);
    let local = bytes(&typed(HRS[0].0, 0x0100));
    let control = bytes(&typed(HRS[0].0, PacketType::RRP.0));
    let mgmt = bytes(&typed(0xFFFF, PacketType::MANAGEMENT.0));
    rig.send(0, &local);
    rig.send(0, &mgmt);
    rig.send(0, &control);
    rig.run();
    let got: Vec<Vec<u8>> = rig.punts().into_iter().map(|p| p.data).collect();
    assert_eq!(got, vec![control, mgmt, local]);
    let flagged = bytes(&typed(HRS[0].0, 0x0100));
    let p = rig.one_flagged(0, &flagged).punted();
    assert!(p.rx_error, "the receive error travels with the punt");
    assert_eq!(p.data, flagged, "a punt is not an EI update");
}

#[test]
fn rrp_and_err_for_other_destinations_are_forwarded() {
    let mut rig = routed(1, 1500);
    let rrp = Message::WhoAreYou
        .to_packet(Address(DST), Address(0x0101))
        .unwrap();
    let (port, buf) = rig.one(0, &bytes(&rrp)).forwarded();
    assert_eq!(port, 1);
    assert_eq!(buf.data(), &expect_l3(&rrp, false)[..]);
    for pt in [PacketType::ERR.0, PacketType::MANAGEMENT.0] {
        let p = typed(DST, pt);
        let (port, buf) = rig.one(0, &bytes(&p)).forwarded();
        assert_eq!(port, 1);
        assert_eq!(buf.data(), &expect_l3(&p, false)[..]);
    }
    assert!(rig.punts().is_empty());
}

#[test]
fn no_route_drops_with_a_notice_carrying_the_first_bytes() {
    let mut rig = routed(1, 1500);
    for len in [3usize, 300] {
        let p = pkt(0x0777, len);
        let b = bytes(&p);
        assert_eq!(rig.one(2, &b).dropped(), DropReason::NoRoute);
        let n = rig.notices();
        assert_eq!(n.len(), 1);
        let n = n[0];
        assert_eq!(n.kind, NoticeKind::NoRoute);
        assert_eq!((n.in_port, n.out_port), (PortId(2), PortId(2)));
        assert_eq!(n.native_src, host(2));
        assert_eq!(n.packet_len as usize, b.len());
        assert_eq!(n.bytes(), &b[..b.len().min(NOTICE_BYTES)]);
    }
    let c = rig.counters()[2];
    assert_eq!((c.dropped(DropReason::NoRoute), c.notices), (2, 2));
    rig.assert_balanced();
}

#[test]
fn a_notice_never_carries_frame_padding() {
    // The notice carries "the packet's first bytes" and its length "from
    // its first L2RH or header to its trailer": padding after the trailer
    // is not part of the packet.
    let mut rig = routed(1, 64);
    let p = pkt(0x0777, 3);
    let b = bytes(&p);
    let mut padded = b.clone();
    padded.extend([0xEE; 20]);
    assert_eq!(rig.one(0, &padded).dropped(), DropReason::NoRoute);
    let n = rig.notices()[0];
    assert_eq!(n.packet_len as usize, b.len());
    assert_eq!(n.bytes(), &b[..]);
    // Same for an MTU notice.
    let p = pkt(DST, 48);
    let b = bytes(&p);
    let mut padded = b.clone();
    padded.extend([0xEE; 9]);
    assert_eq!(rig.one(0, &padded).dropped(), DropReason::Mtu);
    let n = rig.notices()[0];
    assert_eq!(n.kind, NoticeKind::Mtu);
    assert_eq!(n.packet_len as usize, b.len());
    assert_eq!(n.bytes(), &b[..]);
}

#[test]
fn next_hop_on_the_ingress_san_is_forwarded_with_a_redirect_notice() {
    let mut rig = Rig::simple(|f| f.set_all(Address(DST), nh(0, station(0, 9), 1500)));
    let p = pkt(DST, 20);
    let b = bytes(&p);
    let (port, buf) = rig.one(0, &b).forwarded();
    assert_eq!(port, 0, "back onto the SAN it came from");
    assert_eq!(buf.native_dst(), station(0, 9));
    assert_eq!(buf.data(), &expect_l3(&p, false)[..]);
    let n = rig.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].kind, NoticeKind::Redirect);
    assert_eq!((n[0].in_port, n[0].out_port), (PortId(0), PortId(0)));
    assert_eq!(n[0].native_src, host(0));
    assert_eq!(n[0].next_hop, station(0, 9));
    assert_eq!(n[0].packet_len as usize, b.len());
    let c = rig.counters()[0];
    assert_eq!((c.forwarded, c.transmitted, c.notices), (1, 1, 1));
    rig.assert_balanced();
}

#[test]
fn next_hop_that_is_the_sender_is_a_loop() {
    let mut rig = Rig::simple(|f| f.set_all(Address(DST), nh(1, host(1), 1500)));
    // From host 1 on port 1, back to host 1: loop. From host 0: forwarded.
    let b = bytes(&pkt(DST, 20));
    assert_eq!(rig.one(1, &b).dropped(), DropReason::Loop);
    assert!(rig.notices().is_empty(), "a loop is not reported");
    let (port, buf) = rig.one(0, &b).forwarded();
    assert_eq!((port, buf.native_dst()), (1, host(1)));
    assert!(rig.notices().is_empty(), "not a redirect: another SAN");
    let c = rig.counters();
    assert_eq!(c[1].dropped(DropReason::Loop), 1);
    rig.assert_balanced();
}

#[test]
fn mtu_boundary_on_the_packet_as_transmitted() {
    // header 16 + data + trailer 8.
    let mtu = 16 + 40 + 8;
    let mut rig = routed(1, mtu);
    let fits = pkt(DST, 40);
    assert_eq!(bytes(&fits).len(), mtu as usize);
    assert_eq!(rig.one(0, &bytes(&fits)).forwarded().0, 1);
    // Padding does not count.
    let mut padded = bytes(&fits);
    padded.extend([0; 8]);
    assert_eq!(rig.one(0, &padded).forwarded().0, 1);
    assert!(rig.notices().is_empty());
    // One byte more of data is one word more: MTU + 8.
    let over = pkt(DST, 41);
    let b = bytes(&over);
    assert_eq!(b.len(), mtu as usize + 8);
    assert_eq!(rig.one(0, &b).dropped(), DropReason::Mtu);
    let n = rig.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].kind, NoticeKind::Mtu);
    assert_eq!(
        (n[0].in_port, n[0].out_port, n[0].mtu),
        (PortId(0), PortId(1), mtu)
    );
    assert_eq!(n[0].next_hop, station(1, 1), "the L3 next hop");
    assert_eq!(n[0].bytes(), &b[..]);
    let c = rig.counters()[0];
    assert_eq!((c.dropped(DropReason::Mtu), c.notices), (1, 1));
    rig.assert_balanced();
}

#[test]
fn mtu_zero_is_unlimited() {
    let mut rig = routed(1, 0);
    let p = pkt(DST, 8000);
    let (port, buf) = rig.one(0, &bytes(&p)).forwarded();
    assert_eq!(port, 1);
    assert_eq!(buf.data().len(), 16 + 8000 + 8);
}

#[test]
fn the_fib_mtu_is_used_for_l3() {
    // The next hop's MTU (from the routes), not the port's configured one.
    let opts = Opts {
        mtus: vec![9000, 64, 9000],
        ..Opts::default()
    };
    let mut rig = Rig::new(opts, |f| {
        f.set_all(Address(DST), nh(1, station(1, 1), 128));
    });
    assert_eq!(rig.one(0, &bytes(&pkt(DST, 100))).forwarded().0, 1);
    assert_eq!(
        rig.one(0, &bytes(&pkt(DST, 105))).dropped(),
        DropReason::Mtu
    );
}

#[test]
fn delayed_ingress_packets_are_forwarded_when_due() {
    // The impairment delay on the router's ingress: nothing is received
    // before the test clock passes it.
    let opts = Opts {
        impair: vec![
            Some(ImpairConfig {
                delay: Duration::from_micros(10),
                ..ImpairConfig::seeded(1)
            }),
            None,
            None,
        ],
        ..Opts::default()
    };
    let clock = opts.clock.clone();
    let mut rig = Rig::new(opts, |f| {
        f.set_all(Address(DST), nh(1, station(1, 1), 1500))
    });
    rig.send(0, &bytes(&pkt(DST, 4)));
    rig.run();
    assert!(rig.recv(1).is_empty());
    assert_eq!(rig.counters()[0].received, 0);
    clock.advance(Duration::from_micros(10));
    rig.run();
    assert_eq!(rig.recv(1).len(), 1);
    rig.assert_balanced();
}
