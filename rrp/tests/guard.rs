//! What a router takes from whom without keys (docs/spec-notes.md 60),
//! each check through the engine's sans-IO interface with explicit time:
//! the source check (a buddy's SA from another native address, this box's
//! own SA from the wire), strangers counted, HR-DOWN and LINK-DOWN from
//! buddies only and at a bounded rate, and a live HR probed before a third
//! party's HR-DOWN about it is taken.

use rrp::router::{Event, HrConfig, Output, Router, RouterConfig, Timers};
use rrp::wire::{Capability, Message, NodeInfo, RouteTable, RouterHop, SourceRoute};
use rrp::{Address, NativeAddr, PortId};

const HR0: Address = Address(0x0410);
const HR1: Address = Address(0x0420);
/// A buddy on HR0's SAN that relays HR-DOWNs.
const B: Address = Address(0x0430);
/// A buddy on HR0's SAN that advertises SAN 0x0409.
const X: Address = Address(0x0432);
const SAN_X: Address = Address(0x0409);

fn nat(n: u8) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 4, n])
}

fn router() -> Router {
    let hr = |address, san_id, n| HrConfig {
        address,
        san_id,
        mtu: 1500,
        cost: 1,
        native: nat(n),
        static_nodes: vec![],
        auth: None,
    };
    let mut cfg = RouterConfig::new(
        "r",
        vec![
            hr(HR0, Address(0x0401), 0x10),
            hr(HR1, Address(0x0402), 0x20),
        ],
    );
    cfg.timers = Timers {
        advertise_ms: 10,
        fib_ms: 1,
        probe_ms: 50,
        ..Timers::default()
    };
    cfg.limits.downs_per_source = 3;
    Router::new(cfg, 0).unwrap()
}

fn bytes(m: &Message, dst: Address, src: Address) -> Vec<u8> {
    m.to_packet(dst, src).unwrap().to_bytes().unwrap()
}

fn info(a: Address) -> Message {
    Message::Info(vec![NodeInfo {
        address: a,
        name: None,
        capabilities: vec![Capability {
            code: 2,
            params: vec![0x04, 0x09],
        }],
        logical: None,
    }])
}

/// A router with buddies B (native 0x30) and X (0x32) on HR0's SAN, and
/// X's RT for SAN 0x0409 taken.
fn with_buddies() -> Router {
    let mut r = router();
    r.handle_bytes(1, PortId(0), &nat(0x30), &bytes(&info(B), HR0, B));
    r.handle_bytes(1, PortId(0), &nat(0x32), &bytes(&info(X), HR0, X));
    assert_eq!(r.buddies(PortId(0)), vec![B, X]);
    let rt = RouteTable {
        san_id: SAN_X,
        sn: 5,
        csr: SourceRoute {
            q: 1,
            route: rrp::route::Route(vec![RouterHop::new(Address(0x0433), nat(0x99))]).to_l2rhs(),
            mtu: None,
        },
        rcvf: vec![Address(0x0433)],
        nodes: vec![],
    };
    r.handle_bytes(
        2,
        PortId(0),
        &nat(0x32),
        &bytes(&Message::RouteTable(rt), HR0, X),
    );
    assert_eq!(r.kept(PortId(0), SAN_X).len(), 1);
    drain(&mut r);
    r
}

fn drain(r: &mut Router) -> Vec<Output> {
    std::iter::from_fn(|| r.poll_output())
        .flat_map(Output::into_sends)
        .collect()
}

fn hr_down(x: Address, from: Address) -> Vec<u8> {
    bytes(&Message::HrDown { hr: x }, HR0, from)
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
fn a_buddys_sa_from_another_native_is_dropped_as_spoofed() {
    let mut r = with_buddies();
    // The issue's forgery: B's SA, from a stranger's native address.
    r.handle_bytes(10, PortId(0), &nat(0x77), &hr_down(X, B));
    assert_eq!(spoofed(&r), vec![1, 0]);
    assert_eq!(r.stats().hr_down, 0);
    assert_eq!(r.kept(PortId(0), SAN_X).len(), 1, "X's RT stands");
    let events = drain(&mut r);
    assert!(events.iter().any(|o| matches!(
        o,
        Output::Event(Event::Spoofed { port: PortId(0), from, native }) if *from == B && *native == nat(0x77)
    )));
    // This box's own HR's SA from the wire: spoofed too.
    let own = bytes(&Message::HrDown { hr: X }, HR0, HR1);
    r.handle_bytes(11, PortId(0), &nat(0x20), &own);
    assert_eq!(spoofed(&r), vec![2, 0]);
    // An RRP#5 claiming to be X from elsewhere does not move X's native.
    r.handle_bytes(12, PortId(0), &nat(0x78), &bytes(&info(X), HR0, X));
    assert_eq!(spoofed(&r), vec![3, 0]);
    assert_eq!(r.lrt(PortId(0))[&X].native, nat(0x32));
}

#[test]
fn strangers_are_counted_per_port_and_still_answered() {
    let mut r = with_buddies();
    let before = strangers(&r);
    // A node no HR knows asks which HR to use: answered, and counted.
    let q = bytes(&Message::WhichHr { dst: SAN_X }, HR0, Address(0x0555));
    r.handle_bytes(10, PortId(0), &nat(0x55), &q);
    assert_eq!(strangers(&r)[0], before[0] + 1);
    assert_eq!(spoofed(&r), vec![0, 0]);
    assert!(
        drain(&mut r)
            .iter()
            .any(|o| matches!(o, Output::Send { .. }))
    );
}

#[test]
fn downs_are_taken_from_buddies_only() {
    let mut r = with_buddies();
    // A node (no router) says X is down: not taken.
    r.handle_bytes(
        5,
        PortId(0),
        &nat(0x55),
        &bytes(&info_node(Address(0x0555)), HR0, Address(0x0555)),
    );
    r.handle_bytes(10, PortId(0), &nat(0x55), &hr_down(X, Address(0x0555)));
    r.handle_bytes(
        10,
        PortId(0),
        &nat(0x55),
        &bytes(
            &Message::LinkDown {
                a: X,
                b: Address(0x0433),
            },
            HR0,
            Address(0x0555),
        ),
    );
    assert_eq!(r.stats().downs_not_buddy, 2);
    assert_eq!(r.stats().hr_down, 0);
    assert_eq!(r.kept(PortId(0), SAN_X).len(), 1);
}

fn info_node(a: Address) -> Message {
    Message::Info(vec![NodeInfo {
        address: a,
        ..Default::default()
    }])
}

#[test]
fn downs_from_one_buddy_are_bounded_per_second() {
    let mut r = with_buddies();
    // HR-DOWNs about remote HRs (no probe): 3 a second taken, the rest counted.
    for i in 0..8u16 {
        r.handle_bytes(
            1_000,
            PortId(0),
            &nat(0x30),
            &hr_down(Address(0x0700 + i), B),
        );
    }
    assert_eq!(r.stats().hr_down, 3);
    assert_eq!(r.stats().downs_limited, 5);
    // The next second: taken again.
    r.handle_bytes(2_000, PortId(0), &nat(0x30), &hr_down(Address(0x0710), B));
    assert_eq!(r.stats().hr_down, 4);
}

#[test]
fn a_live_hr_is_probed_and_its_answer_voids_the_hr_down() {
    let mut r = with_buddies();
    r.handle_bytes(10, PortId(0), &nat(0x30), &hr_down(X, B));
    assert_eq!(r.stats().hr_down_probes, 1);
    assert_eq!(r.stats().hr_down, 0, "not taken yet");
    // The probe: an RRP#7 to X's native address.
    let outs = drain(&mut r);
    let probe = outs.iter().find_map(|o| match o {
        Output::Send { native, packet, .. } if *native == nat(0x32) => Some(packet.clone()),
        _ => None,
    });
    let (p, m) = Message::parse_packet(&probe.expect("a probe to X")).unwrap();
    assert_eq!((p.header.dst, m), (X, Message::WhoAreYou));
    assert!(r.next_timer() <= 60, "the probe's deadline is a timer");
    // X answers within the time: the HR-DOWN is void.
    r.handle_bytes(30, PortId(0), &nat(0x32), &bytes(&info(X), HR0, X));
    assert_eq!(r.stats().hr_down_disproved, 1);
    r.on_timer(60);
    assert_eq!(r.stats().hr_down, 0);
    assert_eq!(r.kept(PortId(0), SAN_X).len(), 1, "X's RT stands");
}

#[test]
fn a_dead_hr_does_not_answer_the_probe_and_the_hr_down_is_taken() {
    let mut r = with_buddies();
    r.handle_bytes(10, PortId(0), &nat(0x30), &hr_down(X, B));
    drain(&mut r);
    r.on_timer(59);
    assert_eq!(r.stats().hr_down, 0);
    r.on_timer(60);
    assert_eq!(r.stats().hr_down, 1, "taken at the deadline, 50 ms late");
    assert!(r.kept(PortId(0), SAN_X).is_empty(), "X's RT deleted");
    // An HR that missed its last keepalive is not probed: taken at once.
    let mut r = with_buddies();
    r.on_timer(1_000); // keepalives sent; X does not answer
    drain(&mut r);
    r.handle_bytes(1_010, PortId(0), &nat(0x30), &hr_down(X, B));
    assert_eq!(r.stats().hr_down_probes, 0);
    assert_eq!(r.stats().hr_down, 1);
}
