//! Malformed packets of every kind land on their drop counter, leave the
//! buffer as received, and nothing panics.

mod common;

use common::*;
use dataplane::{Decision, Engine, channels};
use ports::{HeapBuf, PacketBuf};
use rrp::Address;
use rrp::DropReason;
use rrp::PortId;
use rrp::wire::L2rhRepr;

const DST: u16 = 0x0202;

fn rig() -> Rig {
    Rig::simple(|f| f.set_all(Address(DST), nh(1, station(1, 1), 1500)))
}

fn l3() -> Vec<u8> {
    bytes(&pkt(DST, 20))
}

fn l2() -> Vec<u8> {
    let mut p = pkt(DST, 20);
    p.l2rhs = vec![
        hop(HRS[1], station(1, 1).as_bytes()),
        L2rhRepr::new(&[9; 11]).unwrap(),
    ];
    bytes(&p)
}

/// Offset of the EEP header in `l2()`.
const L2_HDR: usize = 32;

fn cases() -> Vec<(&'static str, Vec<u8>, DropReason)> {
    let mut v: Vec<(&'static str, Vec<u8>, DropReason)> = vec![
        ("empty", vec![], DropReason::Truncated),
        ("one byte", vec![0x02], DropReason::Truncated),
        ("one L2RH byte", vec![0x00], DropReason::Truncated),
        (
            "truncated header",
            l3()[..10].to_vec(),
            DropReason::Truncated,
        ),
        ("header only", l3()[..16].to_vec(), DropReason::Truncated),
        (
            "truncated trailer",
            l3()[..l3().len() - 1].to_vec(),
            DropReason::Truncated,
        ),
        (
            "no trailer",
            l3()[..l3().len() - 8].to_vec(),
            DropReason::Truncated,
        ),
        ("truncated L2RH", l2()[..5].to_vec(), DropReason::Truncated),
        (
            "L2RH chain running off the end",
            l2()[..L2_HDR].to_vec(),
            DropReason::Truncated,
        ),
        (
            "L2 truncated header",
            l2()[..L2_HDR + 9].to_vec(),
            DropReason::Truncated,
        ),
        (
            "L2 truncated trailer",
            l2()[..l2().len() - 3].to_vec(),
            DropReason::Truncated,
        ),
    ];
    for ver in [0u8, 4, 6, 0xFF] {
        let mut b = l3();
        b[3] = ver;
        v.push(("bad version", b, DropReason::BadVersion));
        let mut b = l2();
        b[L2_HDR + 3] = ver;
        v.push(("L2 bad version", b, DropReason::BadVersion));
    }
    for pl in 8u8..=15 {
        let mut b = l3();
        b[8] = (b[8] & 0xF0) | pl;
        v.push(("PL > 7", b, DropReason::BadHeader));
        let mut b = l2();
        b[L2_HDR + 8] = (b[L2_HDR + 8] & 0xF0) | pl;
        v.push(("L2 PL > 7", b, DropReason::BadHeader));
    }
    for pl in 1u8..=7 {
        // DL = 0: any padding is more than the data block.
        let mut b = bytes(&pkt(DST, 0));
        b[8] = (b[8] & 0xF0) | pl;
        v.push(("PL > data block", b, DropReason::BadHeader));
    }
    for dl in [4u32, 5, 1000, 0x00FF_FFFF] {
        let mut b = l3();
        b[9..12].copy_from_slice(&dl.to_be_bytes()[1..]);
        v.push(("DL larger than the buffer", b, DropReason::Truncated));
    }
    v
}

#[test]
fn every_malformed_packet_lands_on_its_counter() {
    let mut rig = rig();
    let mut want = [0u64; DropReason::COUNT];
    for (what, b, reason) in cases() {
        assert_eq!(rig.one(0, &b).dropped(), reason, "{what}: {b:02x?}");
        want[reason as usize] += 1;
    }
    let c = rig.counters()[0];
    assert_eq!(c.dropped.0, want);
    assert_eq!(c.received, c.dropped_total());
    assert_eq!(c.notices, 0, "malformed packets cause no notice");
    assert!(rig.notices().is_empty());
    rig.assert_balanced();
}

#[test]
fn dropped_buffers_are_left_as_received() {
    let (wch, _ctl) = channels(roomy_channels());
    let cfg = dataplane::EngineConfig {
        hrs: HRS.to_vec(),
        mtus: vec![1500; 3],
    };
    let engine = Engine::new(&cfg, wch);
    let fib = fib_for(3, |f| f.set_all(Address(DST), nh(1, station(1, 1), 1500)));
    for (what, b, reason) in cases() {
        let mut buf = HeapBuf::from_bytes(&b);
        match engine.decide(&fib, PortId(0), &mut buf) {
            Decision::Drop {
                reason: r, notice, ..
            } => {
                assert_eq!(r, reason, "{what}");
                assert!(notice.is_none());
            }
            d => panic!("{what}: {d:?}"),
        }
        assert_eq!(buf.data(), &b[..], "{what}: untouched");
    }
}

#[test]
fn every_prefix_of_a_valid_packet_is_truncated() {
    let mut rig = rig();
    for full in [l3(), l2()] {
        for n in 0..full.len() {
            assert_eq!(
                rig.one(0, &full[..n]).dropped(),
                DropReason::Truncated,
                "{n} of {} bytes",
                full.len()
            );
        }
        assert_eq!(rig.one(0, &full).forwarded().0, 1);
    }
    rig.assert_balanced();
}

#[test]
fn a_burst_mixing_good_and_bad_packets_keeps_the_accounts() {
    let mut rig = rig();
    let mut n = 0;
    for (_, b, _) in cases() {
        rig.send(0, &b);
        rig.send(0, &l3());
        n += 2;
    }
    rig.run();
    let c = rig.counters()[0];
    assert_eq!(c.received, n);
    assert_eq!(c.forwarded, n / 2);
    assert_eq!(c.dropped_total(), n / 2);
    assert_eq!(rig.recv(1).len() as u64, n / 2);
    rig.assert_balanced();
}
