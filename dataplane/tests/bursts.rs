//! Whole bursts through a worker over in-memory ports: a burst whose
//! packets all leave by one port is transmitted as it is (the engine's
//! single-egress path), a mixed one is staged per egress port; either way
//! each egress port sends its packets in arrival order, and the accounts
//! hold (drops, punts, a full transmit ring).

mod common;

use common::*;
use ports::PacketBuf;
use rrp::wire::PacketRepr;
use rrp::{Address, DropReason};

/// Routed to port 1 and to port 2; unrouted; this box's HR on port 0.
const TO1: u16 = 0x0202;
const TO2: u16 = 0x0303;
const NOWHERE: u16 = 0x0404;

fn rig(capacity: usize) -> Rig {
    let opts = Opts {
        capacity: vec![256, capacity, 256],
        ..Opts::default()
    };
    Rig::new(opts, |f| {
        f.set_all(Address(TO1), nh(1, station(1, 1), 1500));
        f.set_all(Address(TO2), nh(2, station(2, 1), 1500));
    })
}

/// A packet to `dst` whose first data byte is `seq`.
fn numbered(dst: u16, seq: u8) -> Vec<u8> {
    let mut p = pkt(dst, 16);
    p.data[0] = seq;
    bytes(&p)
}

/// The sequence numbers host `i` received, in order.
fn seqs(rig: &mut Rig, i: usize) -> Vec<u8> {
    rig.recv(i)
        .iter()
        .map(|b| PacketRepr::parse(b.data()).expect("a packet").data[0])
        .collect()
}

#[test]
fn a_burst_to_one_port_leaves_in_order() {
    let mut rig = rig(256);
    for s in 0..32 {
        rig.send(0, &numbered(TO1, s));
    }
    rig.run();
    assert_eq!(seqs(&mut rig, 1), (0..32).collect::<Vec<_>>());
    let c = rig.counters();
    assert_eq!(
        (c[0].received, c[0].forwarded, c[1].transmitted),
        (32, 32, 32)
    );
    rig.assert_balanced();
}

#[test]
fn a_mixed_burst_keeps_each_ports_order_and_the_accounts() {
    let mut rig = rig(256);
    let own = HRS[0].0;
    // 0..40: to 1, to 2, unrouted, to this box, in a pattern that never
    // leaves a burst with one egress.
    let dst = |s: u8| match s % 5 {
        0 | 3 => TO1,
        1 => TO2,
        2 => NOWHERE,
        _ => own,
    };
    for s in 0..40 {
        rig.send(0, &numbered(dst(s), s));
    }
    rig.run();
    let want = |d: u16| (0..40).filter(|&s| dst(s) == d).collect::<Vec<u8>>();
    assert_eq!(seqs(&mut rig, 1), want(TO1));
    assert_eq!(seqs(&mut rig, 2), want(TO2));
    assert_eq!(rig.punts().len(), want(own).len());
    let c = rig.counters();
    assert_eq!(c[0].received, 40);
    assert_eq!(c[0].forwarded as usize, want(TO1).len() + want(TO2).len());
    assert_eq!(
        c[0].dropped(DropReason::NoRoute) as usize,
        want(NOWHERE).len()
    );
    assert_eq!(c[0].punted as usize, want(own).len());
    rig.assert_balanced();
}

#[test]
fn a_full_transmit_ring_drops_the_rest_of_a_single_egress_burst() {
    // Port 1's wire holds 10 packets: a burst of 32 to it sends 10.
    let mut rig = rig(10);
    for s in 0..32 {
        rig.send(0, &numbered(TO1, s));
    }
    rig.run();
    assert_eq!(seqs(&mut rig, 1), (0..10).collect::<Vec<_>>());
    let c = rig.counters();
    assert_eq!((c[0].forwarded, c[1].transmitted), (10, 10));
    assert_eq!(c[0].dropped(DropReason::TxFull), 22);
    rig.assert_balanced();
}
