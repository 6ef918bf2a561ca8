//! Packet tracing (docs/dataplane.md "Tracing packets"), through a worker
//! over in-memory ports: one record per traced packet with the lookup, the
//! next hop, EI before and after, the egress port and the verdict; the
//! filters; the count across bursts; a full ring loses records, not
//! packets; and packets are forwarded exactly as without a trace.

mod common;

use common::*;
use dataplane::{
    LookupEntry, PuntClass, TRACE_RING, TraceControl, TraceFilter, TraceKind, TraceLookup,
    TraceRecord, TraceVerdict, trace_rings,
};
use ports::PacketBuf;
use rrp::wire::PacketRepr;
use rrp::{Address, DropReason, PortId};

const DST: u16 = 0x0202;
const ELSEWHERE: u16 = 0x0303;

/// A box whose routes `build` makes, published as FIB version 1, with a
/// trace ring of `slots` records attached to its worker.
fn traced(slots: usize, opts: Opts, build: impl Fn(&mut dataplane::FibSet)) -> (Rig, TraceControl) {
    let mut rig = Rig::new(opts, |_| {});
    let fib = fib_for(rig.cfg.hrs.len(), build);
    assert_eq!(rig.publisher.publish(fib), 1);
    let (ctl, mut taps) = trace_rings(1, slots);
    rig.worker.set_trace(taps.remove(0));
    (rig, ctl)
}

/// Routes DST to station 1 of port 1 (MTU 1500), ELSEWHERE to station 1
/// of port 0 (the ingress SAN of port 0: a redirect) and 0x0404 to port 2
/// with a 64-byte MTU.
fn routes(f: &mut dataplane::FibSet) {
    f.set_all(Address(DST), nh(1, station(1, 1), 1500));
    f.set_all(Address(ELSEWHERE), nh(0, station(0, 1), 1500));
    f.set_all(Address(0x0404), nh(2, station(2, 1), 64));
}

fn records(ctl: &TraceControl) -> Vec<TraceRecord> {
    std::iter::from_fn(|| ctl.next()).map(|(_, r)| r).collect()
}

/// Traces one packet sent on port `i` and returns its record.
fn trace_one(rig: &mut Rig, ctl: &TraceControl, i: usize, bytes: &[u8]) -> TraceRecord {
    ctl.arm(TraceFilter::default(), 1);
    rig.send(i, bytes);
    rig.run();
    for p in 0..rig.hosts.len() {
        rig.recv(p);
    }
    rig.punts();
    rig.notices();
    let mut r = records(ctl);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(!ctl.armed().on(), "the trace ends with its count");
    r.remove(0)
}

#[test]
fn l3_forwarded_with_fib_version_entry_and_ei() {
    let (mut rig, ctl) = traced(TRACE_RING, Opts::default(), routes);
    let mut p = pkt(DST, 20);
    p.ei = 0b101;
    let b = bytes(&p);
    ctl.arm(TraceFilter::default(), 1);
    rig.send_flagged(0, &b);
    rig.run();
    let out = rig.recv(1);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].data(), &expect_l3(&p, true)[..]);
    let r = records(&ctl);
    assert_eq!(r.len(), 1);
    let r = r[0];
    assert_eq!(r.in_port, PortId(0));
    assert_eq!((r.src, r.dst), (Some(SRC), Some(Address(DST))));
    assert_eq!(r.len as usize, b.len());
    assert_eq!(
        r.lookup,
        TraceLookup::L3 {
            fib_version: 1,
            entry: LookupEntry::NextHop(dataplane::fib::NH_FIRST),
        }
    );
    assert_eq!(r.next_hop, Some((PortId(1), station(1, 1))));
    assert_eq!(r.ei_before, Some(0b101));
    assert_eq!(
        r.ei_after,
        Some(0b1011),
        "shifted, the receive error ORed in"
    );
    assert_eq!(r.egress, Some(PortId(1)));
    assert_eq!(r.verdict, TraceVerdict::Forwarded { redirect: false });
}

#[test]
fn l3_redirect() {
    let (mut rig, ctl) = traced(TRACE_RING, Opts::default(), routes);
    let r = trace_one(&mut rig, &ctl, 0, &bytes(&pkt(ELSEWHERE, 8)));
    assert_eq!(r.verdict, TraceVerdict::Forwarded { redirect: true });
    assert_eq!(r.egress, Some(PortId(0)));
    assert_eq!(r.next_hop, Some((PortId(0), station(0, 1))));
    assert_eq!((r.ei_before, r.ei_after), (Some(0), Some(0)));
}

#[test]
fn l2_forwarded_names_the_egress_hr_and_the_hops_native() {
    let (mut rig, ctl) = traced(TRACE_RING, Opts::default(), routes);
    let mut p = pkt(0x0999, 10);
    p.l2rhs = vec![hop(HRS[2], station(2, 7).as_bytes())];
    p.ei = 3;
    let r = trace_one(&mut rig, &ctl, 0, &bytes(&p));
    assert_eq!(
        r.lookup,
        TraceLookup::L2 {
            egress_hr: Some(HRS[2])
        }
    );
    assert_eq!(r.next_hop, Some((PortId(2), station(2, 7))));
    assert_eq!(
        r.dst,
        Some(Address(0x0999)),
        "the EEP header's, behind the L2RH"
    );
    assert_eq!((r.ei_before, r.ei_after), (Some(3), Some(6)));
    assert_eq!(r.egress, Some(PortId(2)));
    assert_eq!(r.verdict, TraceVerdict::Forwarded { redirect: false });
}

#[test]
fn punted_to_the_hr_with_its_class() {
    let (mut rig, ctl) = traced(TRACE_RING, Opts::default(), routes);
    let r = trace_one(&mut rig, &ctl, 1, &bytes(&pkt(HRS[0].0, 8)));
    assert_eq!(
        r.lookup,
        TraceLookup::L3 {
            fib_version: 1,
            entry: LookupEntry::Local,
        }
    );
    assert_eq!(
        r.verdict,
        TraceVerdict::Punted {
            class: PuntClass::Local
        }
    );
    assert_eq!(r.egress, Some(PortId(1)), "the ingress HR takes it");
    assert_eq!((r.next_hop, r.ei_after), (None, None));
}

#[test]
fn dropped_for_no_route_mtu_and_bad_l2rh() {
    let (mut rig, ctl) = traced(TRACE_RING, Opts::default(), routes);
    let r = trace_one(&mut rig, &ctl, 0, &bytes(&pkt(0x0777, 8)));
    assert_eq!(
        r.lookup,
        TraceLookup::L3 {
            fib_version: 1,
            entry: LookupEntry::NoRoute,
        }
    );
    assert_eq!(
        r.verdict,
        TraceVerdict::Dropped {
            reason: DropReason::NoRoute
        }
    );
    assert_eq!((r.next_hop, r.egress, r.ei_after), (None, None, None));

    let r = trace_one(&mut rig, &ctl, 0, &bytes(&pkt(0x0404, 100)));
    assert_eq!(
        r.verdict,
        TraceVerdict::Dropped {
            reason: DropReason::Mtu
        }
    );
    assert_eq!(r.next_hop, Some((PortId(2), station(2, 1))));
    assert_eq!(r.egress, Some(PortId(2)), "where it would have left");

    let mut p = pkt(0x0999, 8);
    p.l2rhs = vec![hop(Address(0x0AAA), station(1, 1).as_bytes())];
    let r = trace_one(&mut rig, &ctl, 0, &bytes(&p));
    assert_eq!(
        r.lookup,
        TraceLookup::L2 {
            egress_hr: Some(Address(0x0AAA))
        }
    );
    assert_eq!(
        r.verdict,
        TraceVerdict::Dropped {
            reason: DropReason::BadL2rh
        }
    );
    assert_eq!(r.next_hop, None, "no HR of this box");

    // Unframed: cut short, no header to read.
    let b = bytes(&pkt(DST, 8));
    let r = trace_one(&mut rig, &ctl, 0, &b[..10]);
    assert_eq!(r.lookup, TraceLookup::Unframed);
    assert_eq!((r.src, r.dst, r.ei_before), (None, None, None));
    assert_eq!(
        r.verdict,
        TraceVerdict::Dropped {
            reason: DropReason::Truncated
        }
    );
    assert_eq!(r.len, 10);
}

#[test]
fn a_full_transmit_queue_is_traced_as_tx_full() {
    let opts = Opts {
        capacity: vec![64, 2, 64],
        ..Opts::default()
    };
    let (mut rig, ctl) = traced(TRACE_RING, opts, routes);
    ctl.arm(TraceFilter::default(), 4);
    for _ in 0..4 {
        rig.send(0, &bytes(&pkt(DST, 8)));
    }
    rig.worker.poll_once();
    let v: Vec<TraceVerdict> = records(&ctl).iter().map(|r| r.verdict).collect();
    assert_eq!(
        v,
        [
            TraceVerdict::Forwarded { redirect: false },
            TraceVerdict::Forwarded { redirect: false },
            TraceVerdict::Dropped {
                reason: DropReason::TxFull
            },
            TraceVerdict::Dropped {
                reason: DropReason::TxFull
            },
        ]
    );
    assert_eq!(rig.counters()[0].dropped(DropReason::TxFull), 2);
}

/// A traced packet's ingress port, destination and whether it was L2.
type Seen = (u16, Option<u16>, bool);

#[test]
fn filters_by_destination_kind_and_port() {
    let (mut rig, ctl) = traced(TRACE_RING, Opts::default(), routes);
    let l2 = {
        let mut p = pkt(DST, 8);
        p.l2rhs = vec![hop(HRS[2], station(2, 7).as_bytes())];
        bytes(&p)
    };
    let send_all = |rig: &mut Rig| {
        rig.send(0, &bytes(&pkt(DST, 8)));
        rig.send(0, &bytes(&pkt(0x0777, 8)));
        rig.send(0, &l2);
        rig.send(2, &bytes(&pkt(DST, 8)));
        rig.run();
    };
    let seen = |ctl: &TraceControl| -> Vec<Seen> {
        records(ctl)
            .iter()
            .map(|r| {
                (
                    r.in_port.0,
                    r.dst.map(|a| a.0),
                    matches!(r.lookup, TraceLookup::L2 { .. }),
                )
            })
            .collect()
    };
    let cases: [(TraceFilter, &[Seen]); 5] = [
        (
            TraceFilter::default(),
            &[
                (0, Some(DST), false),
                (0, Some(0x0777), false),
                (0, Some(DST), true),
                (2, Some(DST), false),
            ],
        ),
        (
            TraceFilter {
                dst: Some(Address(DST)),
                ..TraceFilter::default()
            },
            &[
                (0, Some(DST), false),
                (0, Some(DST), true),
                (2, Some(DST), false),
            ],
        ),
        (
            TraceFilter {
                kind: Some(TraceKind::L2),
                ..TraceFilter::default()
            },
            &[(0, Some(DST), true)],
        ),
        (
            TraceFilter {
                kind: Some(TraceKind::L3),
                port: Some(PortId(0)),
                ..TraceFilter::default()
            },
            &[(0, Some(DST), false), (0, Some(0x0777), false)],
        ),
        (
            TraceFilter {
                port: Some(PortId(2)),
                ..TraceFilter::default()
            },
            &[(2, Some(DST), false)],
        ),
    ];
    for (f, want) in cases {
        ctl.arm(f, 100);
        send_all(&mut rig);
        assert_eq!(seen(&ctl), want, "{f:?}");
        ctl.disarm();
    }
    rig.assert_balanced();
}

#[test]
fn the_count_holds_across_bursts() {
    let (mut rig, ctl) = traced(TRACE_RING, Opts::default(), routes);
    ctl.arm(TraceFilter::default(), 5);
    for round in 0..4u8 {
        for _ in 0..3 {
            let mut p = pkt(DST, 8);
            p.data[0] = round;
            rig.send(0, &bytes(&p));
        }
        // One burst of three each round.
        assert_eq!(rig.worker.poll_once(), 3);
    }
    let r = records(&ctl);
    assert_eq!(r.len(), 5, "{r:?}");
    assert!(!ctl.armed().on());
    assert_eq!(ctl.remaining(), 0);
    assert_eq!(rig.recv(1).len(), 12, "every packet forwarded");
    assert_eq!(ctl.lost(), 0);
}

#[test]
fn a_full_ring_loses_records_never_packets() {
    let (mut rig, ctl) = traced(2, Opts::default(), routes);
    ctl.arm(TraceFilter::default(), 10);
    for _ in 0..5 {
        rig.send(0, &bytes(&pkt(DST, 8)));
    }
    rig.run();
    assert_eq!(records(&ctl).len(), 2);
    assert_eq!(ctl.lost(), 3);
    assert_eq!(rig.recv(1).len(), 5);
    assert_eq!(ctl.remaining(), 5, "lost records took their packets");
}

/// What a box did with a mix of packets: what each host received, the
/// punts, the notices and the counters.
fn outcome(trace: Option<TraceFilter>) -> (Vec<Vec<Vec<u8>>>, usize, usize, Vec<rrp::PortStats>) {
    let (mut rig, ctl) = traced(TRACE_RING, Opts::default(), routes);
    if let Some(f) = trace {
        ctl.arm(f, 1000);
    }
    let mut l2 = pkt(0x0999, 10);
    l2.l2rhs = vec![hop(HRS[2], station(2, 7).as_bytes())];
    let mut bad = pkt(0x0999, 10);
    bad.l2rhs = vec![hop(Address(0x0AAA), station(1, 1).as_bytes())];
    let mut sent = 0;
    for round in 0..3u64 {
        for (i, p) in [
            pkt(DST, 20),
            pkt(ELSEWHERE, 8),
            l2.clone(),
            pkt(HRS[0].0, 8),
            pkt(0x0777, 8),
            pkt(0x0404, 100),
            bad.clone(),
        ]
        .into_iter()
        .enumerate()
        {
            let mut p = p;
            p.ei = round * 7 + i as u64;
            if i % 2 == 0 {
                rig.send(0, &bytes(&p));
            } else {
                rig.send_flagged(0, &bytes(&p));
            }
            sent += 1;
        }
        rig.run();
    }
    let got: Vec<Vec<Vec<u8>>> = (0..3)
        .map(|p| rig.recv(p).iter().map(|b| b.data().to_vec()).collect())
        .collect();
    if let Some(f) = trace {
        let n = records(&ctl).len();
        if f == TraceFilter::default() {
            assert_eq!(n, sent, "every packet traced");
        } else {
            assert_eq!(n, 0);
        }
    }
    let punts = rig.punts().len();
    let notices = rig.notices().len();
    (got, punts, notices, rig.counters())
}

#[test]
fn packets_are_forwarded_exactly_as_without_a_trace() {
    let plain = outcome(None);
    assert_eq!(plain.0[1].len(), 3);
    assert!(PacketRepr::parse(&plain.0[1][0]).is_ok());
    let traced = outcome(Some(TraceFilter::default()));
    let other = outcome(Some(TraceFilter {
        port: Some(PortId(1)),
        ..TraceFilter::default()
    }));
    for (name, o) in [("traced", traced), ("traced elsewhere", other)] {
        assert_eq!(o.0, plain.0, "{name}: what the hosts received");
        assert_eq!((o.1, o.2), (plain.1, plain.2), "{name}: punts and notices");
        assert_eq!(o.3, plain.3, "{name}: counters");
    }
}
