//! The best first HR as a node sees it (docs/spec-notes.md 52), on router
//! r2 of this topology:
//!
//! ```text
//! SAN X 0x0201 cost 3 · SAN Y 0x0202 cost 1 · SAN Z 0x0203 cost 1
//! r1: X 0x0112, Y 0x0113      r2: X 0x0110, Z 0x0111      r3: Z 0x0114, Y 0x0115
//! host h 0x0100 on X, host g 0x0101 on Y
//! ```
//!
//! From r2's X-side HR, g is cheaper through its twin (Z, r3: 1 + 1 + 1 + 1
//! = 4) than through r1 (X, r1, Y: 3 + 1 + 1 = 5), so a packet already at
//! r2 goes that way. From h, r2's twin route costs one more crossing of X
//! (3 + 4 = 7) while r1 is still 5: h's best first HR is r1. RRP#6 says so,
//! a packet h sends to r2 draws an RRP#3 naming r1 (and is still forwarded),
//! and RRP#2 offers the route through r1 first, with Qs as h pays them.

use rrp::route::Route;
use rrp::router::{
    HrConfig, LeaveConfig, Next, Notice, NoticeKind, Output, Q_WORST, Router, RouterConfig,
    Standing, Timers,
};
use rrp::wire::{
    Capability, Message, Mtu, NodeInfo, PacketRepr, RouteTable, RouterHop, RtNode, SourceRoute,
};
use rrp::{Address, NativeAddr, PortId};

const SAN_X: Address = Address(0x0201);
const SAN_Y: Address = Address(0x0202);
const SAN_Z: Address = Address(0x0203);
const R2_X: Address = Address(0x0110);
const R2_Z: Address = Address(0x0111);
const R1_X: Address = Address(0x0112);
const R1_Y: Address = Address(0x0113);
const R3_Z: Address = Address(0x0114);
const R3_Y: Address = Address(0x0115);
const H: Address = Address(0x0100);
const G: Address = Address(0x0101);
const X: PortId = PortId(0);
const Z: PortId = PortId(1);

fn nat(a: Address) -> NativeAddr {
    let [x, y] = a.0.to_be_bytes();
    NativeAddr::mac([2, 0, 0, 0, x, y])
}

fn r2() -> Router {
    r2_with(LeaveConfig::default())
}

fn r2_with(leave: LeaveConfig) -> Router {
    r2_with_k(leave, 4)
}

fn r2_with_k(leave: LeaveConfig, k: usize) -> Router {
    let hr = |address, san_id, cost| HrConfig {
        address,
        san_id,
        mtu: 1500,
        cost,
        native: nat(address),
        static_nodes: vec![],
        auth: None,
    };
    let mut cfg = RouterConfig::new("r2", vec![hr(R2_X, SAN_X, 3), hr(R2_Z, SAN_Z, 1)]);
    cfg.timers = Timers {
        advertise_ms: 10,
        fib_ms: 1,
        ..Timers::default()
    };
    cfg.leave = leave;
    cfg.k = k;
    Router::new(cfg, 0).unwrap()
}

fn packet(m: &Message, dst: Address, src: Address) -> Vec<u8> {
    m.to_packet(dst, src).unwrap().to_bytes().unwrap()
}

/// `who` on `port`'s SAN tells `to` about itself (RRP#5), as a router or not.
fn member(r: &mut Router, now: u64, port: PortId, to: Address, who: Address, router: bool) {
    let info = NodeInfo {
        address: who,
        name: None,
        capabilities: if router {
            vec![Capability {
                code: 2,
                params: vec![],
            }]
        } else {
            vec![]
        },
        logical: None,
    };
    r.handle_bytes(
        now,
        port,
        &nat(who),
        &packet(&Message::Info(vec![info]), to, who),
    );
}

/// The RT of SAN Y that router HR `from` advertises on its own SAN:
/// derived from its twin `y_hr`'s LRT (CSR = the twin hop, Q = `q`, the
/// router's cost), holding the twin and g.
fn rt_of_y(y_hr: Address, q: u16) -> RouteTable {
    let node = |a: Address, q: u16, route: Route| RtNode {
        info: NodeInfo {
            address: a,
            ..Default::default()
        },
        route: SourceRoute {
            q,
            route: route.to_l2rhs(),
            mtu: None,
        },
    };
    RouteTable {
        san_id: SAN_Y,
        sn: 1,
        csr: SourceRoute {
            q,
            route: Route(vec![RouterHop::egress(y_hr)]).to_l2rhs(),
            mtu: Some(Mtu::from_bytes(1500)),
        },
        rcvf: vec![y_hr],
        nodes: vec![
            node(y_hr, 0, Route::empty()),
            node(G, 1, Route(vec![RouterHop::native(nat(G))])),
        ],
    }
}

/// The router's outputs, each RRP#9 sent to several buddies at once
/// ([`Output::SendEach`]) as one send per buddy.
fn drain(r: &mut Router) -> Vec<Output> {
    std::iter::from_fn(|| r.poll_output())
        .flat_map(Output::into_sends)
        .collect()
}

/// r2 with h and r1 on X, r3 on Z, and the RTs of Y from r1 (Q `r1_q`) and
/// r3 (Q 1); FIBs computed.
fn converged(r1_q: u16) -> Router {
    converged_from(r2(), r1_q)
}

fn converged_from(mut r: Router, r1_q: u16) -> Router {
    member(&mut r, 1, X, R2_X, H, false);
    member(&mut r, 1, X, R2_X, R1_X, true);
    member(&mut r, 1, Z, R2_Z, R3_Z, true);
    let rt = |r: &mut Router, port, to, from, t| {
        r.handle_bytes(
            2,
            port,
            &nat(from),
            &packet(&Message::RouteTable(t), to, from),
        );
    };
    rt(&mut r, X, R2_X, R1_X, rt_of_y(R1_Y, r1_q));
    rt(&mut r, Z, R2_Z, R3_Z, rt_of_y(R3_Y, 1));
    assert_eq!(r.stats().rts_accepted, 2);
    r.on_timer(10);
    drain(&mut r);
    r
}

#[test]
fn a_packet_at_r2_goes_through_the_twin() {
    let r = converged(1);
    let fib = r.fib();
    let e = fib.lookup(X, G).expect("a route to g");
    assert_eq!(
        e.next,
        Next::Forward {
            port: Z,
            native: nat(R3_Z)
        }
    );
    // X side: twin (1) + Z (1) + r3 (1) + Y (1).
    assert_eq!(e.q, 4);
    assert_eq!(e.redirect, Some(R1_X), "h is better off at r1");
    // The Z side: no node there is better off elsewhere.
    assert_eq!(fib.lookup(Z, G).unwrap().redirect, Some(R3_Z));
}

#[test]
fn rrp6_names_the_best_first_hr_from_the_node() {
    let mut r = converged(1);
    assert_eq!(r.which_hr(X, G), Some(R1_X));
    r.handle_bytes(
        20,
        X,
        &nat(H),
        &packet(&Message::WhichHr { dst: G }, R2_X, H),
    );
    let out = drain(&mut r);
    let answer = out.iter().find_map(|o| match o {
        Output::Send {
            port,
            native,
            packet,
        } if *port == X && *native == nat(H) => Some(PacketRepr::parse(packet).unwrap()),
        _ => None,
    });
    let p = answer.expect("an answer to h");
    let m = Message::parse(
        p.header.packet_type,
        p.header.type_ext,
        &p.data,
        rrp::wire::HEADER_LEN,
    )
    .unwrap();
    assert_eq!(m, Message::Redirect { dst: G, via: R1_X });
}

#[test]
fn a_packet_from_h_draws_a_redirect_to_r1() {
    let mut r = converged(1);
    let data = PacketRepr {
        l2rhs: vec![],
        header: rrp::wire::HeaderRepr {
            dst: G,
            src: H,
            packet_type: rrp::kind::PacketType(0x0100),
            ..Default::default()
        },
        data: vec![0; 8],
        ei: 0,
    }
    .to_bytes()
    .unwrap();
    let mut n = Notice::new(NoticeKind::Redirect, X, Z, nat(H), &data, 0);
    n.next_hop = nat(R3_Z);
    r.handle_notice(30, &n);
    let out = drain(&mut r);
    let sent: Vec<Message> = out
        .iter()
        .filter_map(|o| match o {
            Output::Send {
                port,
                native,
                packet,
            } if *port == X && *native == nat(H) => {
                let p = PacketRepr::parse(packet).unwrap();
                Message::parse(
                    p.header.packet_type,
                    p.header.type_ext,
                    &p.data,
                    rrp::wire::HEADER_LEN,
                )
                .ok()
            }
            _ => None,
        })
        .collect();
    assert_eq!(sent, vec![Message::Redirect { dst: G, via: R1_X }]);
    assert_eq!(r.stats().redirects_sent, 1);
}

#[test]
fn rrp2_offers_routes_as_the_node_pays_them() {
    let r = converged(1);
    let routes = r.routes_for_node(X, G);
    // Through r1: X (3) + r1 (1) + Y (1), starting with r1's native address.
    assert_eq!(routes[0].q, 5);
    assert_eq!(routes[0].route.first().map(|h| h.native), Some(nat(R1_X)));
    assert!(routes[0].route.first().unwrap().is_native_only());
    // Through r2's twin: one more crossing of X for the node: 3 + 4.
    assert_eq!(routes[1].q, 7);
    assert_eq!(routes[1].route.first().map(|h| h.egress), Some(R2_Z));
    // The HR's own view (mwctl show route) is unchanged: the twin first.
    let own = r.routes_to(X, G);
    assert_eq!((own[0].q, own[1].q), (4, 5));
}

#[test]
fn when_the_twin_is_better_for_the_node_too_r2_answers_itself() {
    // r1 crosses at a cost of 5: from h, 3 + 5 + 1 = 9 through r1 against
    // 7 through r2.
    let r = converged(5);
    assert_eq!(r.which_hr(X, G), Some(R2_X));
    assert_eq!(r.fib().lookup(X, G).unwrap().redirect, None);
    let routes = r.routes_for_node(X, G);
    assert_eq!((routes[0].q, routes[1].q), (7, 9));
}

#[test]
fn nodes_of_the_san_are_reached_directly() {
    let r = converged(1);
    // h asks for r1's HR on X: send it there yourself.
    assert_eq!(r.which_hr(X, R1_X), Some(R1_X));
    // And for r2's own HRs: this HR.
    assert_eq!(r.which_hr(X, R2_X), Some(R2_X));
    assert_eq!(r.which_hr(X, R2_Z), Some(R2_X));
    assert_eq!(r.which_hr(X, Address(0x0999)), None);
}

/// The RTs `r` sent out of `port` to `to` (RRP#9): (SAN, SN, Q).
fn rts_sent(out: &[Output], port: PortId, to: Address) -> Vec<(Address, u16, u16)> {
    out.iter()
        .filter_map(|o| match o {
            Output::Send {
                port: p,
                native,
                packet,
            } if *p == port && *native == nat(to) => {
                let p = PacketRepr::parse(packet).unwrap();
                match Message::parse(
                    p.header.packet_type,
                    p.header.type_ext,
                    &p.data,
                    rrp::wire::HEADER_LEN,
                ) {
                    Ok(Message::RouteTable(t)) => Some((t.san_id, t.sn, t.csr.q)),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_draining_box_advertises_every_route_at_the_largest_cost_with_a_newer_sn() {
    let mut r = converged(1);
    r.on_timer(30_000);
    let before = rts_sent(&drain(&mut r), X, R1_X);
    assert!(!before.is_empty() && before.iter().all(|(_, _, q)| *q < Q_WORST));
    r.drain(30_001);
    assert!(matches!(r.standing(), Standing::Draining { since: 30_001 }));
    assert_eq!(r.standing_changes(), 1);
    // At once, without waiting for the refresh: every RT, to every buddy.
    let now = rts_sent(&drain(&mut r), X, R1_X);
    assert_eq!(now.len(), before.len());
    for (san, sn, q) in &now {
        assert_eq!(*q, Q_WORST, "SAN {san:?}");
        let (_, old, _) = before.iter().find(|(s, _, _)| s == san).unwrap();
        assert_eq!(*sn, old.wrapping_add(1), "a buddy takes it as newer");
    }
    assert!(rts_sent(&drain(&mut r), Z, R3_Z).is_empty());
    // Draining again changes nothing.
    r.drain(30_002);
    assert!(drain(&mut r).is_empty());
    assert_eq!(r.standing_changes(), 1);
    // Serving again: normal costs, newer SNs again.
    r.serve(30_003);
    let after = rts_sent(&drain(&mut r), X, R1_X);
    assert_eq!(after.len(), before.len());
    assert!(after.iter().all(|(_, _, q)| *q < Q_WORST));
}

#[test]
fn a_draining_box_names_another_first_hr_and_still_forwards() {
    // r2 is h's best first HR to g (7 against 9 through r1) ...
    let mut r = converged(5);
    assert_eq!(r.which_hr(X, G), Some(R2_X));
    let serving = r.fib().lookup(X, G).expect("a route to g").next;
    assert!(
        !matches!(serving, Next::Forward { port: X, .. }),
        "through its own twin: {serving:?}"
    );
    r.drain(20);
    r.on_timer(21);
    drain(&mut r);
    // ... until it drains: its twin hop costs the worst Q, r1 is named,
    // and a packet that still arrives goes on through the box's own twin
    // as before (r1 may not have heard of the drain yet and still route
    // through this box: sent back to r1 it would come back), with a
    // redirect to r1.
    assert_eq!(r.which_hr(X, G), Some(R1_X));
    let e = r.fib().lookup(X, G).expect("still a route to g");
    assert_eq!(e.next, serving);
    assert_eq!(e.redirect, Some(R1_X));
}

#[test]
fn a_starting_box_attracts_no_transit_until_its_fibs_are_quiet() {
    let leave = LeaveConfig {
        start_quiet_ms: 100,
        start_max_ms: 5_000,
    };
    let r = r2_with(leave);
    assert!(matches!(r.standing(), Standing::Starting { .. }));
    let mut r = converged_from(r, 5);
    // FIBs still moving at 10 ms: starting, r1 named to h.
    assert_eq!(r.which_hr(X, G), Some(R1_X));
    r.on_timer(50);
    assert!(matches!(r.standing(), Standing::Starting { .. }));
    let held = rts_sent(&drain(&mut r), X, R1_X);
    assert!(held.iter().all(|(_, _, q)| *q == Q_WORST));
    // Quiet for 100 ms: serving, and the routes go out at normal costs.
    assert!(r.next_timer() <= 110);
    r.on_timer(110);
    assert_eq!(r.standing(), Standing::Serving);
    let out = drain(&mut r);
    let sent = rts_sent(&out, X, R1_X);
    assert!(!sent.is_empty() && sent.iter().all(|(_, _, q)| *q < Q_WORST));
    r.on_timer(111);
    assert_eq!(r.which_hr(X, G), Some(R2_X));
}

#[test]
fn a_starting_box_serves_at_its_bound_even_when_its_fibs_keep_moving() {
    let leave = LeaveConfig {
        start_quiet_ms: 10_000,
        start_max_ms: 500,
    };
    let mut r = converged_from(r2_with(leave), 5);
    r.on_timer(499);
    assert!(matches!(r.standing(), Standing::Starting { .. }));
    r.on_timer(500);
    assert_eq!(r.standing(), Standing::Serving);
}

#[test]
fn a_draining_box_still_offers_its_own_rts_when_its_buddies_rank_above_them() {
    // k = 1: on Z, r3's RT of Y (learned) ranks above the twin's (through
    // r1) once the twin hop costs the worst Q; r2 must still send r3 its
    // own at the worst Q, or r3 keeps the cheap copy.
    let mut r = converged_from(r2_with_k(LeaveConfig::default(), 1), 1);
    r.drain(20);
    let sent = rts_sent(&drain(&mut r), Z, R3_Z);
    assert!(
        sent.iter()
            .any(|(san, _, q)| *san == SAN_Y && *q == Q_WORST),
        "{sent:?}"
    );
}
