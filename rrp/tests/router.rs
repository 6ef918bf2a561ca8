//! The router engine driven directly through its sans-IO interface:
//! refusals and limits are counted, bad input never crashes it, multi-part
//! RTs are reassembled, error messages follow their manners, and the
//! configuration is validated field by field.

use proptest::prelude::*;
use rrp::Address;
use rrp::NativeAddr;
use rrp::PortId;
use rrp::kind::PacketType;
use rrp::limits::MAX_L2RHS;
use rrp::route::Route;
use rrp::router::{
    HrConfig, Notice, NoticeKind, Output, Router, RouterConfig, RtRefusal, StaticRefusal, Timers,
};
use rrp::wire::RouterHop;
use rrp::wire::{
    Capability, HeaderRepr, Message, Mtu, NodeInfo, PacketRepr, RouteTable, RtNode, RtPart,
    SourceRoute,
};

const HR0: Address = Address(0x0410);
const HR1: Address = Address(0x0420);
const SAN0: Address = Address(0x0401);
const SAN1: Address = Address(0x0402);
const BUDDY: Address = Address(0x0430);

fn nat(n: u8) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 4, n])
}

fn router(mtu0: u32) -> Router {
    let hr = |address, san_id, mtu, n| HrConfig {
        address,
        san_id,
        mtu,
        cost: 1,
        native: nat(n),
        static_nodes: vec![],
        auth: None,
    };
    let mut cfg = RouterConfig::new(
        "r",
        vec![hr(HR0, SAN0, mtu0, 0x10), hr(HR1, SAN1, 1500, 0x20)],
    );
    cfg.timers = Timers {
        advertise_ms: 10,
        fib_ms: 1,
        ..Timers::default()
    };
    cfg.limits.max_nodes_per_rt = 50;
    Router::new(cfg, 0).unwrap()
}

fn packet(m: &Message, dst: Address, src: Address, free: u16) -> Vec<u8> {
    let mut p = m.to_packet(dst, src).unwrap();
    p.header.free = free;
    p.to_bytes().unwrap()
}

/// Makes BUDDY a known router on HR0's SAN.
fn with_buddy(r: &mut Router) {
    let info = NodeInfo {
        address: BUDDY,
        name: None,
        capabilities: vec![Capability {
            code: 2,
            params: vec![0x04, 0x09],
        }],
        logical: None,
    };
    r.handle_bytes(
        1,
        PortId(0),
        &nat(0x30),
        &packet(&Message::Info(vec![info]), HR0, BUDDY, 0),
    );
    assert_eq!(r.buddies(PortId(0)), vec![BUDDY]);
    drain(r);
}

/// The router's outputs, each RRP#9 sent to several buddies at once
/// ([`Output::SendEach`]) as one send per buddy.
fn drain(r: &mut Router) -> Vec<Output> {
    std::iter::from_fn(|| r.poll_output())
        .flat_map(Output::into_sends)
        .collect()
}

fn rt(san: u16, sn: u16, rcvf: Vec<u16>, nodes: usize) -> RouteTable {
    RouteTable {
        san_id: Address(san),
        sn,
        csr: SourceRoute {
            q: 1,
            route: Route(vec![RouterHop::new(
                Address(0x0431),
                NativeAddr::mac([2, 0, 0, 0, 9, 1]),
            )])
            .to_l2rhs(),
            mtu: Some(Mtu(187)),
        },
        rcvf: rcvf.into_iter().map(Address).collect(),
        nodes: (0..nodes)
            .map(|i| RtNode {
                info: NodeInfo {
                    address: Address(0x1000 + i as u16),
                    ..Default::default()
                },
                route: SourceRoute {
                    q: 1,
                    route: Route(vec![RouterHop::native(NativeAddr::mac([
                        2, 0, 0, 0, 0x10, i as u8,
                    ]))])
                    .to_l2rhs(),
                    mtu: None,
                },
            })
            .collect(),
    }
}

fn refused(r: &Router, why: RtRefusal) -> u64 {
    r.stats().rts_refused[why]
}

/// Per port, the control packets the engine refused as spoofed-source.
fn spoofed(r: &Router) -> Vec<u64> {
    r.port_stats()
        .iter()
        .map(|p| p.dropped[rrp::DropReason::SpoofedSource])
        .collect()
}

/// Per port, the packets for this box from strangers.
fn strangers(r: &Router) -> Vec<u64> {
    r.port_stats().iter().map(|p| p.strangers).collect()
}

#[test]
fn rts_are_taken_refreshed_and_refused_by_reason() {
    let mut r = router(1500);
    with_buddy(&mut r);
    let send = |r: &mut Router, t: RouteTable, src: Address, n: u8| {
        r.handle_bytes(
            10,
            PortId(0),
            &nat(n),
            &packet(&Message::RouteTable(t), HR0, src, 0),
        );
    };
    send(&mut r, rt(0x0409, 5, vec![0x0431], 3), BUDDY, 0x30);
    assert_eq!(r.stats().rts_accepted, 1);
    assert_eq!(r.kept(PortId(0), Address(0x0409)).len(), 1);
    // The twin sees it derived: RCVF (HR0, BUDDY, 0x0431), Q + router cost.
    let twin = r.kept(PortId(1), Address(0x0409));
    assert_eq!(twin[0].0.rcvf, vec![HR0, BUDDY, Address(0x0431)]);
    assert_eq!(twin[0].0.q, 1 + 1 + 1);
    // Equal SN: a refresh; older: stale.
    send(&mut r, rt(0x0409, 5, vec![0x0431], 3), BUDDY, 0x30);
    assert_eq!(r.stats().rts_refreshed, 1);
    send(&mut r, rt(0x0409, 4, vec![0x0431], 3), BUDDY, 0x30);
    assert_eq!(refused(&r, RtRefusal::Stale), 1);
    // Newer SN replaces it.
    send(&mut r, rt(0x0409, 6, vec![0x0431], 4), BUDDY, 0x30);
    assert_eq!(r.kept(PortId(0), Address(0x0409))[0].0.sn, 6);
    // Unknown sender, wrong native, own SAN, loop, RCVF too long, too many nodes.
    send(
        &mut r,
        rt(0x0409, 9, vec![0x0432], 1),
        Address(0x0999),
        0x30,
    );
    send(&mut r, rt(0x0409, 9, vec![0x0432], 1), BUDDY, 0x31);
    assert_eq!(refused(&r, RtRefusal::UnknownSender), 1);
    // A buddy's SA from another native address: a spoofed source, dropped
    // before the RT is looked at.
    assert_eq!(spoofed(&r), vec![1, 0]);
    // Strangers: BUDDY's first RRP#5 (before it was a member) and 0x0999.
    assert_eq!(strangers(&r), vec![2, 0]);
    send(&mut r, rt(SAN0.0, 9, vec![0x0432], 1), BUDDY, 0x30);
    assert_eq!(refused(&r, RtRefusal::OwnSan), 1);
    send(&mut r, rt(0x0409, 9, vec![0x0432, HR1.0], 1), BUDDY, 0x30);
    assert_eq!(refused(&r, RtRefusal::Loop), 1);
    send(
        &mut r,
        rt(0x0409, 9, (0x0500..0x0520).collect(), 1),
        BUDDY,
        0x30,
    );
    assert_eq!(refused(&r, RtRefusal::RcvfTooLong), 1);
    send(&mut r, rt(0x0409, 9, vec![0x0433], 51), BUDDY, 0x30);
    assert_eq!(refused(&r, RtRefusal::TooManyNodes), 1);
    // A CSR that is not in the router-hop layout.
    let mut bad = rt(0x0409, 9, vec![0x0434], 1);
    bad.csr.route = vec![rrp::wire::L2rhRepr::new(&[7]).unwrap()];
    send(&mut r, bad, BUDDY, 0x30);
    assert_eq!(refused(&r, RtRefusal::BadRoute), 1);
    // Only the k = 4 best per SAN are kept.
    for i in 0..6u16 {
        send(&mut r, rt(0x040A, 1, vec![0x0440 + i], 1), BUDDY, 0x30);
    }
    assert_eq!(r.kept(PortId(0), Address(0x040A)).len(), 4);
}

#[test]
fn an_hr_down_deletes_and_relays() {
    let mut r = router(1500);
    with_buddy(&mut r);
    r.handle_bytes(
        10,
        PortId(0),
        &nat(0x30),
        &packet(
            &Message::RouteTable(rt(0x0409, 5, vec![0x0431], 2)),
            HR0,
            BUDDY,
            0,
        ),
    );
    r.handle_bytes(
        10,
        PortId(0),
        &nat(0x30),
        &packet(
            &Message::RouteTable(rt(0x040A, 5, vec![0x0432], 2)),
            HR0,
            BUDDY,
            0,
        ),
    );
    drain(&mut r);
    r.handle_bytes(
        20,
        PortId(0),
        &nat(0x30),
        &packet(
            &Message::HrDown {
                hr: Address(0x0431),
            },
            HR0,
            BUDDY,
            0,
        ),
    );
    assert!(r.kept(PortId(0), Address(0x0409)).is_empty());
    assert_eq!(r.kept(PortId(0), Address(0x040A)).len(), 1);
    assert_eq!(r.stats().rts_deleted_down, 1);
    // RTs through the downed HR are refused for a while.
    r.handle_bytes(
        30,
        PortId(0),
        &nat(0x30),
        &packet(
            &Message::RouteTable(rt(0x0409, 6, vec![0x0431], 2)),
            HR0,
            BUDDY,
            0,
        ),
    );
    assert_eq!(refused(&r, RtRefusal::Tombstone), 1);
    // The same ERR again is not relayed twice.
    let before = r.stats().hr_down;
    r.handle_bytes(
        40,
        PortId(0),
        &nat(0x30),
        &packet(
            &Message::HrDown {
                hr: Address(0x0431),
            },
            HR0,
            BUDDY,
            0,
        ),
    );
    assert_eq!(r.stats().hr_down, before);
}

#[test]
fn a_large_rt_goes_out_in_parts_and_comes_back_whole() {
    // HR0's SAN has a small MTU: an RT of 60 nodes needs several RRP#9.
    let mut a = router(256);
    with_buddy(&mut a);
    // Give HR1 a big LRT: 40 static-like nodes discovered on SAN1.
    for i in 0..40u16 {
        let info = NodeInfo {
            address: Address(0x2000 + i),
            ..Default::default()
        };
        a.handle_bytes(
            2,
            PortId(1),
            &NativeAddr::mac([2, 0, 0, 1, 0, i as u8]),
            &packet(&Message::Info(vec![info]), HR1, Address(0x2000 + i), 0),
        );
    }
    drain(&mut a);
    a.on_timer(1_000);
    let parts: Vec<Vec<u8>> = drain(&mut a)
        .into_iter()
        .filter_map(|o| match o {
            Output::Send {
                port: PortId(0),
                packet,
                ..
            } => {
                let (p, m) = Message::parse_packet(&packet).ok()?;
                (matches!(m, Message::RouteTable(_)) && p.header.dst == BUDDY).then_some(packet)
            }
            _ => None,
        })
        .collect();
    assert!(
        parts.len() > 1,
        "expected several parts, got {}",
        parts.len()
    );
    for p in &parts {
        assert!(
            p.len() <= 256,
            "a part of {} bytes on a 256-byte SAN",
            p.len()
        );
        let (h, _) = Message::parse_packet(p).unwrap();
        let part = RtPart::from_free(h.header.free).unwrap();
        assert_eq!(part.count as usize, parts.len());
    }
    // A second router (on the buddy's side) reassembles them.
    let mut b = router(256);
    let info = NodeInfo {
        address: HR0,
        capabilities: vec![Capability {
            code: 2,
            params: vec![],
        }],
        ..Default::default()
    };
    // b's HR0 is the same address; use a separate box whose buddy is a's HR0.
    let mut cfg = b.config().clone();
    cfg.hrs[PortId(0)].address = BUDDY;
    cfg.hrs[PortId(1)].address = Address(0x0450);
    cfg.hrs[PortId(1)].san_id = Address(0x0403);
    b = Router::new(cfg, 0).unwrap();
    b.handle_bytes(
        1,
        PortId(0),
        &nat(0x10),
        &packet(&Message::Info(vec![info]), BUDDY, HR0, 0),
    );
    for p in parts.iter().rev() {
        let mut bytes = p.clone();
        bytes[0..2].copy_from_slice(&BUDDY.0.to_be_bytes());
        b.handle_bytes(5, PortId(0), &nat(0x10), &bytes);
    }
    let kept = b.kept(PortId(0), SAN1);
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].0.nodes.len(), 41, "40 nodes and the HR itself");
}

#[test]
fn error_messages_follow_their_manners() {
    let mut r = router(1500);
    let data = |src: u16, pt: u16| {
        PacketRepr {
            l2rhs: vec![],
            header: HeaderRepr {
                dst: Address(0x0777),
                src: Address(src),
                packet_type: PacketType(pt),
                ..Default::default()
            },
            data: vec![0; 16],
            ei: 0,
        }
        .to_bytes()
        .unwrap()
    };
    let notice = |bytes: Vec<u8>| {
        Notice::new(
            NoticeKind::NoRoute,
            PortId(0),
            PortId(0),
            nat(0x50),
            &bytes,
            0,
        )
    };
    drain(&mut r);
    r.handle_notice(0, &notice(data(0x0501, 0x0100)));
    assert_eq!(r.stats().err_unk_sent, 1);
    let out = drain(&mut r);
    let Output::Send { packet, .. } = &out[0] else {
        panic!("{out:?}")
    };
    let (p, m) = Message::parse_packet(packet).unwrap();
    assert_eq!(p.header.dst, Address(0x0501));
    assert_eq!(
        m,
        Message::Unknown {
            addr: Address(0x0777)
        }
    );
    r.handle_notice(0, &notice(data(0x0501, PacketType::ERR.0)));
    assert_eq!(r.stats().errors_suppressed_err, 1);
    r.handle_notice(0, &notice(data(0x0000, 0x0100)));
    r.handle_notice(0, &notice(data(0x8001, 0x0100)));
    assert_eq!(r.stats().errors_suppressed_source, 2);
    for _ in 0..20 {
        r.handle_notice(0, &notice(data(0x0502, 0x0100)));
    }
    assert_eq!(
        r.stats().errors_suppressed_rate,
        10,
        "10 per second per source"
    );
    // A redirect only to a source in the ingress HR's LRT.
    let mut red = notice(data(0x0503, 0x0100));
    red.kind = NoticeKind::Redirect;
    r.handle_notice(0, &red);
    assert_eq!(r.stats().errors_suppressed_source, 3);
    // ERR GENERAL encloses the packet's first bytes.
    let mut big = notice(data(0x0504, 0x0100));
    big.kind = NoticeKind::Mtu;
    r.handle_notice(0, &big);
    assert_eq!(r.stats().err_general_sent, 1);
}

/// A packet the partitions refused: ERR GENERAL back to its source with
/// the packet's first bytes (docs/spec-notes.md 77), at most the error
/// rate a source however many it sends, none for an ERR or an unknown SA.
#[test]
fn a_partition_refusal_tells_the_source_within_the_error_rates() {
    let mut r = router(1500);
    drain(&mut r);
    let refused = |src: u16, pt: PacketType| {
        let bytes = PacketRepr {
            l2rhs: vec![],
            header: HeaderRepr {
                dst: Address(0x0777),
                src: Address(src),
                packet_type: pt,
                free: 0x8010,
                ..Default::default()
            },
            data: vec![7; 16],
            ei: 0,
        }
        .to_bytes()
        .unwrap();
        Notice::new(
            NoticeKind::Partition,
            PortId(0),
            PortId(1),
            nat(0x50),
            &bytes,
            0,
        )
    };
    let n = refused(0x0501, PacketType(0x0100));
    r.handle_notice(0, &n);
    assert_eq!(r.stats().err_general_sent, 1);
    let out = drain(&mut r);
    let Output::Send {
        port,
        native,
        packet,
    } = &out[0]
    else {
        panic!("{out:?}")
    };
    assert_eq!(
        (*port, *native),
        (PortId(0), nat(0x50)),
        "back where it came from"
    );
    let (p, m) = Message::parse_packet(packet).unwrap();
    assert_eq!(p.header.dst, Address(0x0501));
    assert_eq!(
        m,
        Message::General {
            enclosed: n.bytes().to_vec()
        }
    );
    // A flood from one source: the per-source rate a second.
    for _ in 0..1000 {
        r.handle_notice(0, &refused(0x0502, PacketType(0x0100)));
    }
    let sent = r.stats().err_general_sent - 1;
    assert_eq!(sent, 10, "10 a second per source");
    assert_eq!(r.stats().errors_suppressed_rate, 990);
    assert_eq!(drain(&mut r).len() as u64, sent);
    // The next second, again at most the rate.
    for _ in 0..1000 {
        r.handle_notice(1000, &refused(0x0502, PacketType(0x0100)));
    }
    assert_eq!(r.stats().err_general_sent, 21);
    // Never about an ERR, never to no source.
    r.handle_notice(2000, &refused(0x0503, PacketType::ERR));
    r.handle_notice(2000, &refused(0x0000, PacketType(0x0100)));
    assert_eq!(r.stats().err_general_sent, 21);
}

#[test]
fn configuration_errors_name_the_field() {
    let mut cfg = router(1500).config().clone();
    cfg.hrs[PortId(1)].cost = 0;
    assert_eq!(cfg.validate().unwrap_err().field, "hrs[1].cost");
    let mut cfg = router(1500).config().clone();
    cfg.hrs[PortId(1)].san_id = cfg.hrs[PortId(0)].san_id;
    assert_eq!(cfg.validate().unwrap_err().field, "hrs[1].san_id");
    let mut cfg = router(1500).config().clone();
    cfg.timers.hold_ms = cfg.timers.refresh_ms;
    assert_eq!(cfg.validate().unwrap_err().field, "timers.hold_ms");
    let mut cfg = router(1500).config().clone();
    cfg.hrs[PortId(0)].address = Address(0x0010);
    assert_eq!(cfg.validate().unwrap_err().field, "hrs[0].address");
}

#[test]
fn timers_and_limits_list_every_problem_under_their_keys() {
    let t = rrp::router::Timers {
        sweep_ms: 0,
        fib_ms: rrp::router::config::MAX_TIMER_MS + 1,
        keepalive_misses: 0,
        hold_ms: 1000,
        refresh_ms: 1000,
        ..rrp::router::Timers::default()
    };
    let fields: Vec<String> = t
        .validate()
        .unwrap_err()
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(
        fields,
        [
            "timers.sweep_ms",
            "timers.fib_ms",
            "timers.keepalive_misses",
            "timers.hold_ms"
        ]
    );
    assert_eq!(rrp::router::Timers::default().validate(), Ok(()));
    let l = rrp::router::Limits {
        max_lrt: 0,
        max_rcvf: 33,
        answers_global: 0,
        ..rrp::router::Limits::default()
    };
    let fields: Vec<String> = l
        .validate()
        .unwrap_err()
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(
        fields,
        ["limits.max_rcvf", "limits.max_lrt", "limits.answers_global"]
    );
    assert_eq!(rrp::router::Limits::default().validate(), Ok(()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary bytes, and mutated valid messages, never crash the engine
    /// and are counted.
    #[test]
    fn bad_input_never_crashes(bytes in proptest::collection::vec(any::<u8>(), 0..300), port in 0usize..3) {
        let mut r = router(1500);
        with_buddy(&mut r);
        r.handle_bytes(5, PortId::new(port), &nat(0x30), &bytes);
        // Where the header would be, as the forwarding path would have found it.
        let at = rrp::wire::packet::header_of(&bytes, MAX_L2RHS).map_or(usize::MAX, |(_, at)| at);
        let mut n = Notice::new(NoticeKind::Mtu, PortId::new(port), PortId::new(port), nat(0x30), &bytes, at);
        n.next_hop = nat(0x31);
        r.handle_notice(6, &n);
        r.on_timer(10_000);
        drain(&mut r);
        prop_assert!(r.stats().received >= 1);
    }

    #[test]
    fn mutated_rts_never_crash(flip in 0usize..400, val in any::<u8>(), cut in 0usize..400) {
        let mut r = router(1500);
        with_buddy(&mut r);
        let mut b = packet(&Message::RouteTable(rt(0x0409, 5, vec![0x0431, 0x0432], 3)), HR0, BUDDY, RtPart { index: 1, count: 2 }.to_free());
        let i = flip % b.len();
        b[i] = val;
        b.truncate(cut.max(2).min(b.len()));
        r.handle_bytes(5, PortId(0), &nat(0x30), &b);
        r.on_timer(1_000);
        drain(&mut r);
    }
}

#[test]
fn static_entries_are_bounded() {
    let mut r = router(1500);
    let node = |a: u16| rrp::router::StaticNode {
        groups: Vec::new(),
        address: Address(a),
        native: nat(a as u8),
        name: None,
        capabilities: vec![],
    };
    let mut limits = r.config().limits;
    limits.max_lrt = r.lrt(PortId(0)).len() + 2;
    r.set_tunables(r.config().timers, limits, r.config().error_rates)
        .unwrap();
    assert_eq!(r.add_static(PortId(0), node(0x0555)), Ok(()));
    assert_eq!(r.add_static(PortId(0), node(0x0556)), Ok(()));
    assert_eq!(
        r.add_static(PortId(0), node(0x0557)),
        Err(StaticRefusal::LrtFull(limits.max_lrt)),
        "a new entry in a full LRT"
    );
    assert_eq!(
        r.add_static(PortId(0), node(0x0556)),
        Ok(()),
        "an entry replaced in a full LRT"
    );
    assert_eq!(
        r.add_static(PortId(1), node(0x0557)),
        Ok(()),
        "the other HR's LRT has room"
    );
    assert!(!r.lrt(PortId(0)).contains_key(&Address(0x0557)));

    let groups = |n: u16| (0..n).map(|i| Address(0x8000 + i)).collect::<Vec<_>>();
    let n = rrp::node::MAX_GROUPS as u16;
    assert_eq!(
        r.add_static(
            PortId(0),
            rrp::router::StaticNode {
                groups: groups(n + 1),
                ..node(0x0555)
            }
        ),
        Err(StaticRefusal::TooManyGroups(usize::from(n) + 1))
    );
    assert_eq!(
        r.add_static(
            PortId(0),
            rrp::router::StaticNode {
                groups: vec![Address(0x8001), Address(0x0102)],
                ..node(0x0555)
            }
        ),
        Err(StaticRefusal::NotLogical(Address(0x0102)))
    );
    let name = |len: usize| Some(vec![b'n'; len]);
    assert_eq!(
        r.add_static(
            PortId(0),
            rrp::router::StaticNode {
                name: name(rrp::node::MAX_NAME + 1),
                ..node(0x0555)
            }
        ),
        Err(StaticRefusal::NameTooLong(rrp::node::MAX_NAME + 1))
    );
    assert_eq!(
        r.add_static(PortId(0), node(0x0030)),
        Err(StaticRefusal::NotANode)
    );
    // At the bounds: taken.
    assert_eq!(
        r.add_static(
            PortId(0),
            rrp::router::StaticNode {
                groups: groups(n),
                name: name(rrp::node::MAX_NAME),
                ..node(0x0555)
            }
        ),
        Ok(())
    );
    let e = &r.lrt(PortId(0))[&Address(0x0555)];
    assert_eq!(e.info.logical.as_ref().map(Vec::len), Some(usize::from(n)));
}

#[test]
fn static_entries_and_tunables_change_at_run_time() {
    let mut r = router(1500);
    let node = rrp::router::StaticNode {
        groups: Vec::new(),
        address: Address(0x0555),
        native: nat(0x55),
        name: Some(b"printer".to_vec()),
        capabilities: vec![Capability {
            code: 9,
            params: vec![],
        }],
    };
    assert_eq!(r.add_static(PortId(0), node.clone()), Ok(()));
    assert!(r.lrt(PortId(0))[&Address(0x0555)].is_static);
    r.on_timer(10);
    assert!(
        r.fib().lookup(PortId(1), Address(0x0555)).is_some(),
        "routed from the twin too"
    );
    assert_eq!(
        r.add_static(PortId(5), node.clone()),
        Err(StaticRefusal::NoSuchPort)
    );
    assert_eq!(
        r.add_static(
            PortId(0),
            rrp::router::StaticNode {
                address: HR1,
                ..node.clone()
            }
        ),
        Err(StaticRefusal::OwnAddress)
    );
    assert!(r.remove_static(PortId(0), Address(0x0555)));
    assert!(!r.remove_static(PortId(0), Address(0x0555)));
    r.on_timer(1_000);
    assert!(r.fib().lookup(PortId(1), Address(0x0555)).is_none());
    let mut t = r.config().timers;
    t.advertise_ms = 50;
    r.set_tunables(t, r.config().limits, r.config().error_rates)
        .unwrap();
    assert_eq!(r.config().timers.advertise_ms, 50);
    t.hold_ms = 1;
    assert_eq!(
        r.set_tunables(t, r.config().limits, r.config().error_rates)
            .unwrap_err()
            .field,
        "timers.hold_ms"
    );
}

#[test]
fn a_buddy_is_held_to_its_share_of_rts() {
    let mut r = router(1500);
    let mut cfg = r.config().clone();
    cfg.limits.max_rts_per_neighbour = 3;
    r = Router::new(cfg, 0).unwrap();
    with_buddy(&mut r);
    let send = |r: &mut Router, t: RouteTable, now: u64| {
        r.handle_bytes(
            now,
            PortId(0),
            &nat(0x30),
            &packet(&Message::RouteTable(t), HR0, BUDDY, 0),
        );
    };
    for san in 0..5u16 {
        send(&mut r, rt(0x0500 + san, 1, vec![0x0431], 2), 10);
    }
    assert_eq!(r.stats().rts_accepted, 3);
    assert_eq!(refused(&r, RtRefusal::TooManyRts), 2);
    // A newer version of an RT it holds replaces it: not one more.
    send(&mut r, rt(0x0500, 2, vec![0x0431], 2), 20);
    assert_eq!(r.stats().rts_accepted, 4);
    assert_eq!(refused(&r, RtRefusal::TooManyRts), 2);
    assert_eq!(r.kept(PortId(0), Address(0x0500))[0].0.sn, 2);
    // Once its RTs have expired, the buddy has room again.
    let hold = r.config().timers.hold_ms;
    r.on_timer(30 + hold);
    send(&mut r, rt(0x0503, 1, vec![0x0431], 2), 40 + hold);
    assert_eq!(r.stats().rts_accepted, 5);
    assert_eq!(r.kept(PortId(0), Address(0x0503)).len(), 1);
    assert!(r.kept(PortId(0), Address(0x0500)).is_empty());
}

#[test]
fn cost_mtu_and_name_change_at_run_time() {
    let mut r = router(1500);
    with_buddy(&mut r);
    r.handle_bytes(
        10,
        PortId(0),
        &nat(0x30),
        &packet(
            &Message::RouteTable(rt(0x0409, 5, vec![0x0431], 3)),
            HR0,
            BUDDY,
            0,
        ),
    );
    r.on_timer(20);
    drain(&mut r);
    let q = |r: &Router| r.fib().lookup(PortId(0), Address(0x1000)).unwrap().q;
    // CSR Q 1 + SAN cost 1, node 1.
    assert_eq!(q(&r), 3);
    r.set_cost(PortId(0), 5).unwrap();
    r.on_timer(40);
    assert_eq!(q(&r), 7);
    assert_eq!(r.kept(PortId(0), Address(0x0409))[0].0.q, 6);
    assert!(r.set_cost(PortId(0), 0).is_err(), "costs are >= 1");
    assert!(r.set_cost(PortId(9), 1).is_err());
    // The MTU: RTs held and FIB entries follow.
    r.set_mtu(PortId(0), 1024).unwrap();
    r.on_timer(60);
    assert_eq!(
        r.fib().lookup(PortId(0), Address(0x1000)).unwrap().mtu,
        1024
    );
    assert_eq!(
        r.kept(PortId(0), Address(0x0409))[0].0.mtu,
        Mtu::from_bytes(1024)
    );
    assert!(r.set_mtu(PortId(0), 10).is_err());
    // The name: every HR re-advertises its LRT under the new one.
    r.set_name("renamed");
    assert_eq!(r.config().name, "renamed");
    r.on_timer(80);
    let sent = drain(&mut r);
    assert!(sent.iter().any(|o| matches!(o, Output::Send { .. })));
}

#[test]
fn group_state_follows_r4_and_a_conflict_asks_the_router_for_its_rts() {
    let mut r = router(1500);
    with_buddy(&mut r);
    // A host on SAN0 listens to 0x8001 (its RRP#5, as after a join).
    let host = NodeInfo {
        address: Address(0x0411),
        logical: Some(vec![Address(0x8001)]),
        ..Default::default()
    };
    r.handle_bytes(
        2,
        PortId(0),
        &nat(0x11),
        &packet(
            &Message::Info(vec![host.clone()]),
            Address::BROADCAST,
            host.address,
            0,
        ),
    );
    // A SAN behind the buddy, whose RT says a node there listens too.
    let mut t = rt(0x0405, 1, vec![0x0431], 1);
    t.nodes[0].info.logical = Some(vec![Address(0x8001), Address(0x8002)]);
    r.handle_bytes(
        3,
        PortId(0),
        &nat(0x30),
        &packet(&Message::RouteTable(t), HR0, BUDDY, 0),
    );
    r.on_timer(100);
    let outs = drain(&mut r);
    assert!(outs.iter().any(|o| matches!(o, Output::McastChanged(_))));
    let m = r.mcast();
    let g = m.group(Address(0x8001)).expect("members known");
    assert_eq!(g.member_sans, vec![SAN0, Address(0x0405)]);
    // SAN0 is attached to port 0; SAN 0x0405 is reached through port 0
    // too (the buddy): one branch, port 0.
    assert_eq!((g.branches, g.local), (0b01, 0b01));
    assert!(m.group(Address(0x8002)).is_some());
    // From the host on SAN0 (its own SAN): accepted on port 0, forwarded
    // onto SAN1 (this box is SAN1's only router, its designated forwarder)
    // only if SAN1 leads to members: it does not.
    assert_eq!(
        m.decide(Address(0x8001), host.address, PortId(0), &nat(0x11)),
        Err(rrp::router::McastRefusal::NoBranch)
    );
    let s = m.source(host.address).unwrap();
    assert_eq!((s.up, s.from, s.df), (PortId(0), None, 0b10));
    // From the node behind the buddy: accepted on port 0 only from it.
    let far = Address(0x1000);
    assert_eq!(m.source(far).unwrap().from, Some(nat(0x30)));
    assert_eq!(
        m.decide(Address(0x8001), far, PortId(0), &nat(0x11)),
        Err(rrp::router::McastRefusal::NotUpstream)
    );
    // A conflict notice about the buddy: it is asked for its RTs, once
    // within two seconds.
    let mut n = Notice::new(
        NoticeKind::McastConflict,
        PortId(0),
        PortId(0),
        nat(0x30),
        &packet(&Message::WhoAreYou, Address(0x8001), far, 0),
        0,
    );
    n.mtu = 0;
    r.handle_notice(200, &n);
    r.handle_notice(300, &n);
    let asks = |outs: &[Output]| {
        outs.iter()
            .filter(|o| match o {
                Output::Send { packet, .. } => matches!(
                    Message::parse_packet(packet).map(|(_, m)| m),
                    Ok(Message::RtRequest)
                ),
                _ => false,
            })
            .count()
    };
    assert_eq!(asks(&drain(&mut r)), 1);
    r.handle_notice(2_300, &n);
    assert_eq!(asks(&drain(&mut r)), 1);
    // From a station that is no router: nothing to ask.
    n.native_src = nat(0x11);
    r.handle_notice(5_000, &n);
    assert_eq!(asks(&drain(&mut r)), 0);
    // The host leaves: the group has no member on SAN0 any more.
    let left = NodeInfo {
        logical: None,
        ..host.clone()
    };
    r.handle_bytes(
        6_000,
        PortId(0),
        &nat(0x11),
        &packet(
            &Message::Info(vec![left]),
            Address::BROADCAST,
            host.address,
            0,
        ),
    );
    r.on_timer(6_100);
    drain(&mut r);
    assert_eq!(
        r.mcast().group(Address(0x8001)).unwrap().member_sans,
        vec![Address(0x0405)]
    );
}

#[test]
fn a_node_listing_too_many_groups_is_held_to_the_bound() {
    let mut r = router(1500);
    let mut logical: Vec<Address> = (0..100u16).map(|i| Address(0x9000 + i)).collect();
    logical.push(Address(0x0105));
    logical.push(Address(0x9000));
    let host = NodeInfo {
        address: Address(0x0411),
        logical: Some(logical),
        ..Default::default()
    };
    r.handle_bytes(
        2,
        PortId(0),
        &nat(0x11),
        &packet(
            &Message::Info(vec![host.clone()]),
            Address::BROADCAST,
            host.address,
            0,
        ),
    );
    let kept = r.lrt(PortId(0))[&host.address]
        .info
        .logical
        .clone()
        .unwrap();
    assert_eq!(kept.len(), rrp::node::MAX_GROUPS);
    assert!(kept.iter().all(|a| a.is_logical()));
    assert!(drain(&mut r).iter().any(|o| matches!(
        o,
        Output::Event(rrp::router::Event::GroupsTrimmed { kept: 64, .. })
    )));
}

#[test]
fn configured_static_members_listen_from_the_start() {
    let hr = |address, san_id, n| HrConfig {
        address,
        san_id,
        mtu: 1500,
        cost: 1,
        native: nat(n),
        static_nodes: vec![],
        auth: None,
    };
    let mut h1 = hr(HR1, SAN1, 0x20);
    h1.static_nodes.push(rrp::router::StaticNode {
        address: Address(0x0421),
        native: nat(0x21),
        name: None,
        capabilities: vec![],
        groups: vec![Address(0x8101)],
    });
    let mut cfg = RouterConfig::new("r", vec![hr(HR0, SAN0, 0x10), h1]);
    cfg.timers.fib_ms = 1;
    let mut r = Router::new(cfg, 0).unwrap();
    r.on_timer(10);
    let g = r.mcast();
    let g = g.group(Address(0x8101)).expect("a member from the start");
    assert_eq!((g.member_sans.clone(), g.local), (vec![SAN1], 0b10));
}

#[test]
fn requests_are_answered_at_a_bounded_rate() {
    let mut r = router(1500);
    r.set_tunables(
        r.config().timers,
        rrp::router::Limits {
            answers_per_source: 5,
            answers_global: 8,
            ..r.config().limits
        },
        r.config().error_rates,
    )
    .unwrap();
    drain(&mut r);
    let answers = |outs: &[Output], to: Address| {
        outs.iter()
            .filter(|o| match o {
                Output::Send { packet, .. } => Message::parse_packet(packet)
                    .is_ok_and(|(p, m)| p.header.dst == to && matches!(m, Message::Info(_))),
                _ => false,
            })
            .count()
    };
    let (a, b) = (Address(0x0450), Address(0x0451));
    let ask = |r: &mut Router, t, who: Address| {
        r.handle_bytes(
            t,
            PortId(0),
            &nat(0x50),
            &packet(&Message::WhoAreYou, HR0, who, 0),
        );
    };
    // 20 RRP#7 from a within one second: 5 answered.
    for i in 0..20 {
        ask(&mut r, 5_000 + i, a);
    }
    let outs = drain(&mut r);
    assert_eq!(answers(&outs, a), 5);
    assert_eq!(r.stats().requests_limited, 15);
    // b in the same second: the global 8 leaves 3.
    for i in 0..20 {
        ask(&mut r, 5_100 + i, b);
    }
    let outs = drain(&mut r);
    assert_eq!(answers(&outs, b), 3);
    assert_eq!(r.stats().requests_limited, 32);
    // The next second: answered again.
    ask(&mut r, 6_000, a);
    assert_eq!(answers(&drain(&mut r), a), 1);
    assert_eq!(r.stats().requests_answered, 9);
}

#[test]
fn an_hr_is_held_to_its_share_of_rts_from_all_neighbours() {
    let mut r = router(1500);
    let mut cfg = r.config().clone();
    cfg.limits.max_rts_per_neighbour = 3;
    cfg.limits.max_rts_per_hr = 4;
    r = Router::new(cfg, 0).unwrap();
    with_buddy(&mut r);
    // A second router on HR0's SAN.
    let other = Address(0x0432);
    let info = NodeInfo {
        address: other,
        name: None,
        capabilities: vec![Capability {
            code: 2,
            params: vec![0x04, 0x09],
        }],
        logical: None,
    };
    r.handle_bytes(
        1,
        PortId(0),
        &nat(0x32),
        &packet(&Message::Info(vec![info]), HR0, other, 0),
    );
    assert_eq!(r.buddies(PortId(0)).len(), 2);
    drain(&mut r);
    let send = |r: &mut Router, from: Address, n: u8, t: RouteTable| {
        r.handle_bytes(
            10,
            PortId(0),
            &nat(n),
            &packet(&Message::RouteTable(t), HR0, from, 0),
        );
    };
    for san in 0..3u16 {
        send(&mut r, BUDDY, 0x30, rt(0x0500 + san, 1, vec![0x0431], 2));
    }
    for san in 0..3u16 {
        send(&mut r, other, 0x32, rt(0x0600 + san, 1, vec![0x0433], 2));
    }
    assert_eq!(r.stats().rts_accepted, 4);
    assert_eq!(refused(&r, RtRefusal::HrFull), 2);
    assert_eq!(refused(&r, RtRefusal::TooManyRts), 0);
    // The limit raised one event (the daemon's trap), not one per refusal.
    let limits: Vec<_> = drain(&mut r)
        .into_iter()
        .filter_map(|o| match o {
            Output::Event(rrp::router::Event::RtLimit {
                port,
                from,
                limit,
                max,
            }) => Some((port, from, limit, max)),
            _ => None,
        })
        .collect();
    assert_eq!(limits, vec![(PortId(0), other, RtRefusal::HrFull, 4)]);
    // A fourth from BUDDY: its own limit (3), one event of its own.
    send(&mut r, BUDDY, 0x30, rt(0x0503, 1, vec![0x0431], 2));
    send(&mut r, BUDDY, 0x30, rt(0x0504, 1, vec![0x0431], 2));
    assert_eq!(refused(&r, RtRefusal::TooManyRts), 2);
    let limits = drain(&mut r)
        .into_iter()
        .filter(|o| matches!(o, Output::Event(rrp::router::Event::RtLimit { .. })))
        .count();
    assert_eq!(limits, 1);
    // One it holds is still refreshed (not a new one).
    send(&mut r, other, 0x32, rt(0x0600, 1, vec![0x0433], 2));
    assert_eq!(r.stats().rts_refreshed, 1);
    assert_eq!(refused(&r, RtRefusal::HrFull), 2);
}
