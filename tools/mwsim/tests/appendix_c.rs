//! Scenario 2: Appendix C of the draft. Node1 looks for a DSP that handles
//! 64-bit IEEE floating point; the nine exchanges happen in order with the
//! appendix's message types, records and MTU (1024 words), the routes
//! carried in the project's L2RH layout (docs/spec-notes.md).

use mwsim::{Sim, SimConfig, Topology, native_of};
use rrp::Address;
use rrp::kind::PacketType;
use rrp::node::Learned;
use rrp::route::Route;
use rrp::wire::RouterHop;
use rrp::wire::{Capability, HeaderRepr, InfoQuery, Message, Mtu, NodeInfo, PacketRepr};

const NODE1: Address = Address(0x0101);
const NODE2: Address = Address(0x0102);
const NODE3: Address = Address(0x0103);
const RTRA1: Address = Address(0x0111);
const RTRB1: Address = Address(0x0121);
const RTRB2: Address = Address(0x0122);

fn cap(code: u8, params: &[u8]) -> Capability {
    Capability {
        code,
        params: params.to_vec(),
    }
}

/// The first control message of kind `kind` (e.g. "RRP#4") on the wire from
/// `sa` to `da` at or after `since`, with the time it was carried
/// (keepalives between the same pair are passed over).
fn on_wire(s: &Sim, since: u64, sa: Address, da: Address, kind: &str) -> (u64, Message) {
    s.trace
        .iter()
        .filter(|t| t.time >= since)
        .find_map(|t| {
            let (p, m) = Message::parse_packet(&t.bytes).ok()?;
            (p.header.src == sa && p.header.dst == da && m.name() == kind).then_some((t.time, m))
        })
        .unwrap_or_else(|| panic!("no message {sa} -> {da} after {since}"))
}

#[test]
fn the_nine_exchanges() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/appendix-c.toml"
    ))
    .unwrap();
    let topo = Topology::from_toml(&text).unwrap();
    let mut s = Sim::new(
        topo,
        SimConfig {
            trace: true,
            ..SimConfig::default()
        },
    )
    .unwrap();
    assert!(s.run_until_converged(30_000).is_some(), "no convergence");
    let n1 = s.host_index("Node1").unwrap();
    let n2 = s.host_index("Node2").unwrap();
    let step = 200;

    // (1) Node1 asks RouterA (RTRA1) for floating-point DSPs with 64-bit data.
    let t1 = s.now;
    let q = s.hosts[n1]
        .node
        .info_request(RTRA1, InfoQuery::Capabilities(vec![cap(7, &[8])]));
    s.host_send(n1, Some(RTRA1), q);
    s.run_until(s.now + step);
    let (_, m1) = on_wire(&s, t1, NODE1, RTRA1, "RRP#4");
    assert_eq!(
        m1,
        Message::InfoRequest(InfoQuery::Capabilities(vec![cap(7, &[8])]))
    );
    // (2) RouterA answers with Node2 and Node3: address and capability each.
    let (t2, m2) = on_wire(&s, t1, RTRA1, NODE1, "RRP#5");
    assert_eq!(
        m2,
        Message::Info(vec![
            NodeInfo {
                address: NODE2,
                capabilities: vec![cap(7, &[4, 8])],
                ..Default::default()
            },
            NodeInfo {
                address: NODE3,
                capabilities: vec![cap(7, &[8, 4])],
                ..Default::default()
            },
        ])
    );

    // (3) Node1 asks RouterA which HR to use for Node2; (4) RouterA redirects to RTRB1.
    let q = s.hosts[n1].node.which_hr(RTRA1, NODE2);
    s.host_send(n1, Some(RTRA1), q);
    s.run_until(s.now + step);
    let (t3, m3) = on_wire(&s, t2, NODE1, RTRA1, "RRP#6");
    assert_eq!(m3, Message::WhichHr { dst: NODE2 });
    let (t4, m4) = on_wire(&s, t3, RTRA1, NODE1, "RRP#3");
    assert_eq!(
        m4,
        Message::Redirect {
            dst: NODE2,
            via: RTRB1
        }
    );
    assert_eq!(s.hosts[n1].node.first_hr(NODE2, RTRA1), RTRB1);

    // (5) Node1 asks Node2 about itself, L3-forwarded through RouterB.
    let q = s.hosts[n1]
        .node
        .info_request(NODE2, InfoQuery::Address(NODE2));
    s.host_send(n1, Some(RTRB1), q);
    s.run_until(s.now + step);
    let (t5, m5) = on_wire(&s, t4, NODE1, NODE2, "RRP#4");
    assert_eq!(m5, Message::InfoRequest(InfoQuery::Address(NODE2)));
    // (6) Node2 answers with its name "Super" and capabilities 7 and 42,
    // L3-forwarded back through RouterB.
    let (t6, m6) = on_wire(&s, t5, NODE2, NODE1, "RRP#5");
    assert_eq!(
        m6,
        Message::Info(vec![NodeInfo {
            address: NODE2,
            name: Some(b"Super".to_vec()),
            capabilities: vec![cap(7, &[4, 8]), cap(42, &[])],
            logical: None,
        }])
    );
    assert!(
        s.hosts[n1]
            .inbox
            .iter()
            .any(|(_, l)| matches!(l, Learned::Info(i) if i[0].name.as_deref() == Some(b"Super")))
    );

    // (7) Node1 asks RouterB for L2 routes to Node2; (8) RouterB answers with
    // one L2RH (egress RTRB2, Node2's native address), Q and MTU 1024 words.
    let q = s.hosts[n1].node.route_request(RTRB1, NODE2);
    s.host_send(n1, Some(RTRB1), q);
    s.run_until(s.now + step);
    let (t7, m7) = on_wire(&s, t6, NODE1, RTRB1, "RRP#1");
    assert_eq!(m7, Message::RouteRequest { dst: NODE2 });
    let (t8, m8) = on_wire(&s, t7, RTRB1, NODE1, "RRP#2");
    let Message::Routes { dst, routes } = m8 else {
        panic!("RRP#2 expected")
    };
    assert_eq!(dst, NODE2);
    assert_eq!(routes.len(), 1, "{routes:?}");
    // Q as Node1 pays it, like the MTU "of both networks" (docs/spec-notes.md
    // 52): SAN1 (1) + RouterB (1) + SAN2 (1).
    assert_eq!(routes[0].q, 3);
    assert_eq!(
        routes[0].mtu,
        Some(Mtu(1024)),
        "the lesser of 16 KB and 8 KB"
    );
    let route = Route::from_l2rhs(&routes[0].route).unwrap();
    assert_eq!(route, Route(vec![RouterHop::new(RTRB2, native_of(NODE2))]));

    // (9) Node1 sends sensor data to Node2 by L2 forwarding: the L2RH of
    // step 8 in front, sent to RouterB, which consumes it.
    let data = PacketRepr {
        l2rhs: routes[0].route.clone(),
        header: HeaderRepr {
            dst: NODE2,
            src: NODE1,
            packet_type: PacketType(0x0100),
            type_ext: 1,
            endian: rrp::Endian::from_nibble(0xB),
            ..Default::default()
        },
        data: (1..=16).collect(),
        ei: 0,
    };
    s.host_send(n1, Some(RTRB1), data.to_bytes().unwrap());
    s.run_until(s.now + step);
    let got = s.hosts[n2]
        .inbox
        .iter()
        .find_map(|(t, l)| match l {
            Learned::Data(p) if *t >= t8 => Some(p.clone()),
            _ => None,
        })
        .expect("Node2 received the data");
    assert!(got.l2rhs.is_empty(), "RouterB consumed the L2RH");
    assert_eq!(got.header, data.header);
    assert_eq!(got.data, data.data);
    assert_eq!(got.ei, 0, "EI shifted by RouterB, no error");
}
