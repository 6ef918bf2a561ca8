//! Keyed authentication of control packets (docs/spec-notes.md 59) between
//! two router engines on one SAN, driven through their sans-IO interface
//! with explicit time: keyed boxes exchange routes and refuse forged,
//! tampered and replayed packets by reason; keys roll over without a
//! refusal; a SAN moves to authentication box by box.

use proptest::prelude::*;
use rrp::router::{
    AuthConfig, AuthKey, AuthRefusal, Event, HrConfig, Output, Router, RouterConfig, Timers,
};
use rrp::wire::auth;
use rrp::wire::{Message, Packet, RouteTable, SourceRoute, locate};
use rrp::{Address, NativeAddr, PortId};

const SAN: Address = Address(0x0401);
const A0: Address = Address(0x0410);
const B0: Address = Address(0x0430);
/// The SAN behind B that A learns of.
const SAN_B: Address = Address(0x0403);

const KEY1: &[u8] = b"the first key of SAN 0x0401 .....";
const KEY2: &[u8] = b"the second key of SAN 0x0401 ....";

fn nat(n: u8) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 4, n])
}

fn keys(ids: &[(u16, &[u8])], send_key: u16, accept_unsigned: bool) -> Option<AuthConfig> {
    Some(AuthConfig {
        keys: ids
            .iter()
            .map(|(id, s)| AuthKey {
                id: *id,
                secret: s.to_vec(),
            })
            .collect(),
        send_key,
        accept_unsigned,
    })
}

fn hr(address: Address, san_id: Address, n: u8, auth: Option<AuthConfig>) -> HrConfig {
    HrConfig {
        address,
        san_id,
        mtu: 1500,
        cost: 1,
        native: nat(n),
        static_nodes: vec![],
        auth,
    }
}

/// A box with HR `a` on the shared SAN (keys `auth`) and one on `other`.
fn router(
    name: &str,
    a: Address,
    n: u8,
    other: (Address, Address),
    auth: Option<AuthConfig>,
) -> Router {
    let mut cfg = RouterConfig::new(
        name,
        vec![hr(a, SAN, n, auth), hr(other.0, other.1, n + 1, None)],
    );
    cfg.timers = Timers {
        advertise_ms: 10,
        fib_ms: 1,
        ..Timers::default()
    };
    cfg.auth_seq_seed = u64::from(n) << 40;
    Router::new(cfg, 0).unwrap()
}

fn box_a(auth: Option<AuthConfig>) -> Router {
    router("a", A0, 0x10, (Address(0x0420), Address(0x0402)), auth)
}

fn box_b(auth: Option<AuthConfig>) -> Router {
    router("b", B0, 0x30, (Address(0x0440), SAN_B), auth)
}

/// Two boxes on one SAN: what each sends on its port 0 reaches the other
/// (broadcasts and what is addressed to its native address).
struct San {
    a: Router,
    b: Router,
    now: u64,
    /// Every packet B sent to A, as it was on the wire.
    b_to_a: Vec<Vec<u8>>,
}

impl San {
    fn new(a: Router, b: Router) -> San {
        San {
            a,
            b,
            now: 0,
            b_to_a: Vec::new(),
        }
    }

    fn run(&mut self, ms: u64) {
        let end = self.now + ms;
        while self.now < end {
            self.now += 5;
            for r in [&mut self.a, &mut self.b] {
                if self.now >= r.next_timer() {
                    r.on_timer(self.now);
                }
            }
            for _ in 0..4 {
                let from_a = sends(&mut self.a, nat(0x30));
                let from_b = sends(&mut self.b, nat(0x10));
                for p in &from_a {
                    self.b.handle_bytes(self.now, PortId(0), &nat(0x10), p);
                }
                for p in &from_b {
                    self.a.handle_bytes(self.now, PortId(0), &nat(0x30), p);
                }
                self.b_to_a.extend(from_b);
            }
        }
    }
}

/// What `r` sends on its port 0 to `to` (or to every member).
fn sends(r: &mut Router, to: NativeAddr) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| r.poll_output())
        .flat_map(Output::into_sends)
        .filter_map(|o| match o {
            Output::Send {
                port,
                native,
                packet,
            } if port == PortId(0) && (native.is_empty() || native == to) => Some(packet),
            _ => None,
        })
        .collect()
}

fn refused(r: &Router, why: AuthRefusal) -> u64 {
    r.stats().auth_refused(why)
}

fn refused_total(r: &Router) -> u64 {
    r.stats().auth_refused_total()
}

fn learned_san_b(r: &Router) -> bool {
    !r.kept(PortId(0), SAN_B).is_empty()
}

/// An RRP#9 "from B" offering a SAN A never heard of.
fn forged_rt(san: u16, sn: u16) -> Vec<u8> {
    let t = RouteTable {
        san_id: Address(san),
        sn,
        csr: SourceRoute {
            q: 1,
            route: rrp::route::Route(vec![]).to_l2rhs(),
            mtu: None,
        },
        rcvf: vec![B0],
        nodes: vec![],
    };
    Message::RouteTable(t)
        .to_packet(A0, B0)
        .unwrap()
        .to_bytes()
        .unwrap()
}

fn signed(mut p: Vec<u8>, key_id: u16, key: &[u8], seq: u64) -> Vec<u8> {
    let l = locate(&p, usize::MAX).unwrap();
    assert!(auth::sign(&mut p, l, key_id, key, seq));
    p
}

#[test]
fn keyed_boxes_exchange_routes_and_refuse_forgeries_by_reason() {
    let k = || keys(&[(1, KEY1)], 1, false);
    let mut san = San::new(box_a(k()), box_b(k()));
    san.run(200);
    assert!(learned_san_b(&san.a), "A learned B's SAN over signed RRP");
    assert_eq!(san.a.buddies(PortId(0)), vec![B0]);
    assert!(san.a.stats().auth_verified > 0);
    assert_eq!(refused_total(&san.a), 0);
    assert_eq!(refused_total(&san.b), 0);
    let now = san.now;
    let a = &mut san.a;
    let from_b = nat(0x30);

    // Unsigned, from B's own native address: refused, not taken.
    a.handle_bytes(now, PortId(0), &from_b, &forged_rt(0x0409, 0x7000));
    assert_eq!(refused(a, AuthRefusal::Missing), 1);
    // Signed with a guessed secret under B's key ID.
    let guess = signed(
        forged_rt(0x0409, 0x7001),
        1,
        b"a guess at the key of the SAN...",
        u64::MAX / 2,
    );
    a.handle_bytes(now, PortId(0), &from_b, &guess);
    assert_eq!(refused(a, AuthRefusal::BadDigest), 1);
    // Under a key ID the SAN does not use.
    let other = signed(forged_rt(0x0409, 0x7002), 9, KEY1, u64::MAX / 2);
    a.handle_bytes(now, PortId(0), &from_b, &other);
    assert_eq!(refused(a, AuthRefusal::UnknownKey), 1);
    // A forged HR-DOWN about B, unsigned.
    let down = Message::HrDown { hr: B0 }
        .to_packet(A0, Address(0x0499))
        .unwrap();
    a.handle_bytes(now, PortId(0), &from_b, &down.to_bytes().unwrap());
    assert_eq!(refused(a, AuthRefusal::Missing), 2);
    assert!(
        a.kept(PortId(0), Address(0x0409)).is_empty(),
        "nothing forged was taken"
    );
    assert!(learned_san_b(a), "B's routes stand");

    // Every packet B sent, sent again: each one a replay.
    let replays = san.b_to_a.clone();
    for p in &replays {
        san.a.handle_bytes(now, PortId(0), &from_b, p);
    }
    assert_eq!(refused(&san.a, AuthRefusal::Replay), replays.len() as u64);

    // One bit changed anywhere in a real packet (trailer aside): refused.
    let real = replays.last().unwrap().clone();
    let l = locate(&real, usize::MAX).unwrap();
    let counted = |r: &Router| refused_total(r) + r.stats().parse_errors + r.stats().not_control;
    let before = counted(&san.a);
    let mut n = 0;
    for i in l.header_offset..l.trailer_offset() {
        let mut t = real.clone();
        t[i] ^= 0x40;
        san.a.handle_bytes(now, PortId(0), &from_b, &t);
        n += 1;
    }
    assert_eq!(
        counted(&san.a) - before,
        n,
        "each refused, unparseable or no control packet"
    );
    assert!(learned_san_b(&san.a));
    san.run(200);
    assert!(learned_san_b(&san.a), "the exchange goes on");
}

#[test]
fn a_key_rollover_refuses_nothing() {
    let mut san = San::new(
        box_a(keys(&[(1, KEY1)], 1, false)),
        box_b(keys(&[(1, KEY1)], 1, false)),
    );
    san.run(200);
    assert!(learned_san_b(&san.a));
    // 1. Both boxes take key 2 too; they still send with key 1.
    let both = |send| keys(&[(1, KEY1), (2, KEY2)], send, false);
    san.a.set_auth(PortId(0), both(1)).unwrap();
    san.b.set_auth(PortId(0), both(1)).unwrap();
    san.run(200);
    // 2. Box by box, they send with key 2.
    san.b.set_auth(PortId(0), both(2)).unwrap();
    san.run(200);
    san.a.set_auth(PortId(0), both(2)).unwrap();
    san.run(200);
    // 3. Key 1 is withdrawn.
    san.a
        .set_auth(PortId(0), keys(&[(2, KEY2)], 2, false))
        .unwrap();
    san.b
        .set_auth(PortId(0), keys(&[(2, KEY2)], 2, false))
        .unwrap();
    let verified = san.a.stats().auth_verified;
    san.run(40_000);
    assert!(san.a.stats().auth_verified > verified);
    assert_eq!(refused_total(&san.a), 0);
    assert_eq!(refused_total(&san.b), 0);
    assert!(learned_san_b(&san.a));
    assert_eq!(san.a.buddies(PortId(0)), vec![B0]);
    // Now a packet under key 1 is refused.
    let old = signed(forged_rt(0x0409, 1), 1, KEY1, u64::MAX / 2);
    san.a.handle_bytes(san.now, PortId(0), &nat(0x30), &old);
    assert_eq!(refused(&san.a, AuthRefusal::UnknownKey), 1);
}

#[test]
fn a_san_moves_to_authentication_box_by_box() {
    // A has keys and takes unsigned packets; B has none yet.
    let mut san = San::new(box_a(keys(&[(1, KEY1)], 1, true)), box_b(None));
    san.run(300);
    assert!(learned_san_b(&san.a), "A takes B's unsigned RTs");
    assert!(
        !san.b.kept(PortId(0), Address(0x0402)).is_empty(),
        "B takes A's signed ones"
    );
    assert!(san.a.stats().auth_unsigned > 0);
    assert!(san.b.stats().auth_unchecked > 0);
    assert_eq!(refused_total(&san.a) + refused_total(&san.b), 0);
    // B gets the key; then A stops taking unsigned packets.
    san.b
        .set_auth(PortId(0), keys(&[(1, KEY1)], 1, true))
        .unwrap();
    san.run(200);
    san.a
        .set_auth(PortId(0), keys(&[(1, KEY1)], 1, false))
        .unwrap();
    san.b
        .set_auth(PortId(0), keys(&[(1, KEY1)], 1, false))
        .unwrap();
    let unsigned = san.a.stats().auth_unsigned;
    san.run(40_000);
    assert_eq!(san.a.stats().auth_unsigned, unsigned);
    assert_eq!(refused_total(&san.a) + refused_total(&san.b), 0);
    assert!(learned_san_b(&san.a));
}

#[test]
fn keys_are_validated_and_never_shown() {
    let mut a = box_a(None);
    let short = keys(&[(1, b"short")], 1, false);
    assert_eq!(
        a.set_auth(PortId(0), short).unwrap_err().field,
        "hrs[0].auth.keys[0].secret"
    );
    let no_send = keys(&[(1, KEY1)], 2, false);
    assert_eq!(
        a.set_auth(PortId(0), no_send).unwrap_err().field,
        "hrs[0].auth.send_key"
    );
    let twice = keys(&[(1, KEY1), (1, KEY2)], 1, false);
    assert_eq!(
        a.set_auth(PortId(0), twice).unwrap_err().field,
        "hrs[0].auth.keys[1].id"
    );
    let shown = format!("{:?}", keys(&[(1, KEY1)], 1, false));
    assert!(!shown.contains("first key"), "{shown}");
}

proptest! {
    /// Whatever arrives on a keyed HR is refused, unparseable or signed:
    /// never a panic, and every packet counted once.
    #[test]
    fn anything_on_a_keyed_hr_is_accounted(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut a = box_a(keys(&[(1, KEY1)], 1, false));
        let before = *a.stats();
        a.handle_bytes(1, PortId(0), &nat(0x30), &bytes);
        let s = a.stats();
        let refusals: u64 = s.auth_refused_total() - before.auth_refused_total();
        let counted = refusals + (s.parse_errors - before.parse_errors) + (s.not_control - before.not_control);
        prop_assert_eq!(s.received - before.received, 1);
        prop_assert_eq!(counted, 1);
    }

    /// A packet signed by a holder of the key is taken once, as it was.
    #[test]
    fn signed_packets_verify_and_strip_to_the_original(data in proptest::collection::vec(any::<u8>(), 0..120), seq in any::<u64>()) {
        let mut p = Message::General { enclosed: data }.to_packet(A0, B0).unwrap().to_bytes().unwrap();
        let orig = p.clone();
        let l = locate(&p, usize::MAX).unwrap();
        prop_assert!(auth::sign(&mut p, l, 3, KEY1, seq));
        let v = Packet::new_checked(&p[..], usize::MAX).unwrap();
        let r = auth::record(&v).unwrap();
        prop_assert!(auth::verify(&v, KEY1));
        prop_assert_eq!(auth::strip(&v, r.opl), orig);
    }
}

#[test]
fn a_keyed_node_and_a_keyed_router_hear_each_other_and_no_one_else() {
    use rrp::node::{Level, Node, NodeConfig};
    let mut a = box_a(keys(&[(1, KEY1)], 1, false));
    let mut node = Node::new(NodeConfig {
        address: Address(0x0450),
        name: None,
        capabilities: vec![],
        logical: None,
        level: Level::C,
    });
    node.set_auth(keys(&[(1, KEY1)], 1, false), 1 << 30);
    // A's sweep (signed RRP#7) is answered by a signed RRP#5 that A takes.
    a.on_timer(1);
    let mut answered = 0;
    for p in sends(&mut a, nat(0x50)) {
        if let (Some(reply), _) = node.handle_packet(&p).unwrap() {
            answered += 1;
            a.handle_bytes(2, PortId(0), &nat(0x50), &reply);
        }
    }
    assert!(answered > 0);
    assert_eq!(refused_total(&a), 0);
    assert!(a.stats().auth_verified >= 1);
    assert!(
        a.lrt(PortId(0)).contains_key(&Address(0x0450)),
        "A knows the node"
    );
    // An unsigned RRP#7, or a redirect from anyone, is refused by the node.
    let who = Message::WhoAreYou
        .to_packet(Address(0x0450), A0)
        .unwrap()
        .to_bytes()
        .unwrap();
    let e = node.handle_packet(&who).unwrap_err();
    assert_eq!(
        e.kind,
        rrp::error::ErrorKind::Unauthenticated(AuthRefusal::Missing)
    );
    let redirect = signed(
        Message::Redirect {
            dst: Address(0x0999),
            via: Address(0x0666),
        }
        .to_packet(Address(0x0450), A0)
        .unwrap()
        .to_bytes()
        .unwrap(),
        1,
        b"not the SAN's key, but as long...",
        u64::MAX / 2,
    );
    let e = node.handle_packet(&redirect).unwrap_err();
    assert_eq!(
        e.kind,
        rrp::error::ErrorKind::Unauthenticated(AuthRefusal::BadDigest)
    );
    assert!(node.redirects.is_empty());
}

#[test]
fn a_refusal_is_reported_with_its_port_source_native_address_and_reason() {
    let mut a = box_a(keys(&[(1, KEY1)], 1, false));
    while a.poll_output().is_some() {}
    let stranger = nat(0x77);
    // Unsigned, then under a key ID A does not hold, both "from B".
    a.handle_bytes(0, PortId(0), &stranger, &forged_rt(0x0409, 1));
    let unknown = signed(forged_rt(0x0409, 2), 7, KEY1, 5);
    a.handle_bytes(0, PortId(0), &stranger, &unknown);
    let events: Vec<Event> = std::iter::from_fn(|| a.poll_output())
        .filter_map(|o| match o {
            Output::Event(e @ Event::AuthRefused { .. }) => Some(e),
            _ => None,
        })
        .collect();
    let refusal = |why| Event::AuthRefused {
        port: PortId(0),
        from: B0,
        native: stranger,
        why,
    };
    assert_eq!(
        events,
        [
            refusal(AuthRefusal::Missing),
            refusal(AuthRefusal::UnknownKey)
        ]
    );
    assert_eq!(
        events[1].to_string(),
        "port 0: control packet with SA 0x0430 from 02:00:00:00:04:77 refused: authentication unknown-key"
    );
    assert_eq!(events[0].source(), Some(B0));
}
