//! Property tests against a model of the forwarding decision written with
//! the rrp codec (`locate`, `PacketRepr`, `RouterHop`), independent of the
//! engine's own parsing:
//! - arbitrary and mutated byte strings never panic, keep the accounts and
//!   get the outcome the model predicts (a malformed packet is dropped with
//!   the reason rrp's parser gives);
//! - random valid packets (L3 over a random per-ingress FIB, L2 chains of
//!   router hops) come out exactly as the model computes, or are punted or
//!   dropped with the predicted reason and notice.

mod common;

use common::*;
use dataplane::{Decision, Engine, EngineConfig, FibSet, NextHop, PuntClass, channels};
use ports::{HeapBuf, PacketBuf};
use proptest::prelude::*;
use rrp::DropReason;
use rrp::NativeAddr;
use rrp::PortId;
use rrp::limits::MAX_L2RHS;
use rrp::router::NOTICE_BYTES;
use rrp::router::NoticeKind;
use rrp::wire::{L2rhRepr, PacketRepr, RouterHop, locate, shift_ei};
use rrp::{Address, ErrorKind, PacketType};

/// Destinations the random FIBs route.
const DSTS: [u16; 7] = [0x0040, 0x0200, 0x0201, 0x0202, 0x7FFF, 0x8001, 0xC000];

/// A box: MTUs and routes `(in_port, dst, next hop)`, later ones winning.
#[derive(Debug, Clone)]
struct World {
    mtus: Vec<u32>,
    routes: Vec<(usize, u16, NextHop)>,
    /// Whether [`SRC`] from the host of port `i` is a buddy of HR `i`.
    buddies: [bool; 3],
}

enum Route {
    Local,
    None,
    Nh(NextHop),
}

impl World {
    fn apply(&self, f: &mut FibSet) {
        for &(p, d, nh) in &self.routes {
            let i = f.add_nexthop(nh);
            f.set(PortId::new(p), Address(d), i);
        }
        f.set_buddies(std::sync::Arc::new(dataplane::Buddies::new(
            (0..3).map(|i| self.buddies[i].then_some((SRC, host(i)))),
        )));
    }

    /// Whether a packet with SA `sa` from `native` on `port` is a buddy's.
    fn sent_by_buddy(&self, port: usize, sa: Address, native: NativeAddr) -> bool {
        self.buddies[port] && sa == SRC && native == host(port)
    }

    fn lookup(&self, in_port: usize, dst: u16) -> Route {
        if let Some(&(_, _, nh)) = self
            .routes
            .iter()
            .rev()
            .find(|(p, d, _)| *p == in_port && *d == dst)
        {
            return Route::Nh(nh);
        }
        if HRS.iter().any(|a| a.0 == dst) || dst >= 0xFFFE {
            Route::Local
        } else {
            Route::None
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct ExpNotice {
    kind: NoticeKind,
    out_port: PortId,
    mtu: u32,
    next_hop: NativeAddr,
    /// The packet as received, without frame padding.
    packet: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq)]
enum Expect {
    Forward {
        port: usize,
        native: NativeAddr,
        bytes: Vec<u8>,
        redirect: bool,
    },
    Punt {
        class: PuntClass,
        hr_port: usize,
        data: Vec<u8>,
    },
    /// Dropped for one of `reasons` (rrp's parser and the engine may name a
    /// different first fault for a packet with several).
    Drop {
        reasons: Vec<DropReason>,
        notice: Option<ExpNotice>,
    },
}

/// `packet` from byte `from` on, with its EI shifted and `err` ORed in:
/// every other byte (padding of L2RHs and of the data block included)
/// stays as it was.
fn forwarded(packet: &[u8], from: usize, ei: u64, err: bool) -> Vec<u8> {
    let mut out = packet[from..].to_vec();
    let t = out.len() - 8;
    out[t..].copy_from_slice(&shift_ei(ei, err).to_be_bytes());
    // For a packet as the codec emits it (zero padding), the same as the
    // codec's own packet with the first L2RH removed and the EI updated.
    let p = PacketRepr::parse(packet).expect("located");
    if p.to_bytes().is_ok_and(|c| c == packet) {
        let mut q = p.clone();
        if from > 0 {
            q.l2rhs.remove(0);
        }
        q.ei = shift_ei(p.ei, err);
        assert_eq!(q.to_bytes().unwrap(), out, "codec and splice agree");
    }
    out
}

fn drop1(r: DropReason) -> Expect {
    Expect::Drop {
        reasons: vec![r],
        notice: None,
    }
}

/// The class of a packet for this box: RRP and ERR from a buddy, from
/// anyone else, management, the rest (docs/dataplane.md "Punt classes").
fn class_of(pt: PacketType, from_buddy: bool) -> PuntClass {
    if [PacketType::RRP, PacketType::ERR].contains(&pt) {
        if from_buddy {
            PuntClass::Routing
        } else {
            PuntClass::Request
        }
    } else if pt == PacketType::MANAGEMENT {
        PuntClass::Management
    } else {
        PuntClass::Local
    }
}

/// What the router should do with `b` arriving on `in_port` from `src`.
fn model(w: &World, in_port: usize, src: NativeAddr, err: bool, b: &[u8]) -> Expect {
    let lay = match locate(b, MAX_L2RHS) {
        Ok(l) => l,
        Err(e) => {
            let reasons = match e.kind {
                ErrorKind::Truncated { .. } => vec![DropReason::Truncated],
                ErrorKind::BadVersion(_) => vec![DropReason::BadVersion],
                ErrorKind::BadPadLength(_) => vec![DropReason::BadHeader],
                ErrorKind::BadL2rhLength(0) => vec![DropReason::BadL2rh],
                // The engine reports an L = 0 ninth L2RH as bad-l2rh.
                ErrorKind::TooManyL2rhs(_) => vec![DropReason::TooManyL2rh, DropReason::BadL2rh],
                k => panic!("unexpected parse error {k:?}"),
            };
            return Expect::Drop {
                reasons,
                notice: None,
            };
        }
    };
    let total = lay.total_len();
    let packet = &b[..total];
    let p = PacketRepr::parse(packet).expect("located");
    if lay.l2rh_count == 0 {
        // A group destination: the world has no multicast table, so no
        // source is known (the multicast path has its own tests,
        // dataplane/tests/mcast.rs).
        if p.header.dst.is_logical() {
            return Expect::Drop {
                reasons: vec![DropReason::McastRpf],
                notice: None,
            };
        }
        return match w.lookup(in_port, p.header.dst.0) {
            Route::Local => Expect::Punt {
                class: class_of(
                    p.header.packet_type,
                    w.sent_by_buddy(in_port, p.header.src, src),
                ),
                hr_port: in_port,
                data: packet.to_vec(),
            },
            Route::None => Expect::Drop {
                reasons: vec![DropReason::NoRoute],
                notice: Some(ExpNotice {
                    kind: NoticeKind::NoRoute,
                    out_port: PortId::new(in_port),
                    mtu: 0,
                    next_hop: NativeAddr::NONE,
                    packet: packet.to_vec(),
                }),
            },
            Route::Nh(nh) => {
                let same = nh.port.index() == in_port;
                if same && nh.native == src {
                    return drop1(DropReason::Loop);
                }
                if nh.mtu != 0 && total > nh.mtu as usize {
                    return Expect::Drop {
                        reasons: vec![DropReason::Mtu],
                        notice: Some(ExpNotice {
                            kind: NoticeKind::Mtu,
                            out_port: nh.port,
                            mtu: nh.mtu,
                            next_hop: nh.native,
                            packet: packet.to_vec(),
                        }),
                    };
                }
                Expect::Forward {
                    port: nh.port.index(),
                    native: nh.native,
                    bytes: forwarded(packet, 0, p.ei, err),
                    redirect: same,
                }
            }
        };
    }
    // L2: the first L2RH is a router hop through one of this box's HRs.
    let Ok(h) = RouterHop::from_content(p.l2rhs[0].content()) else {
        return drop1(DropReason::BadL2rh);
    };
    let Some(eport) = HRS.iter().position(|a| *a == h.egress) else {
        return drop1(DropReason::BadL2rh);
    };
    let strip = p.l2rhs[0].buffer_len();
    if h.native.is_empty() {
        let class = if p.l2rhs.len() == 1 {
            class_of(
                p.header.packet_type,
                w.sent_by_buddy(in_port, p.header.src, src),
            )
        } else {
            PuntClass::Local
        };
        return Expect::Punt {
            class,
            hr_port: eport,
            data: packet[strip..].to_vec(),
        };
    }
    let Some(native) = NativeAddr::from_bytes(h.native.as_bytes()) else {
        return drop1(DropReason::BadL2rh);
    };
    let mtu = w.mtus[eport];
    if mtu != 0 && total - strip > mtu as usize {
        return Expect::Drop {
            reasons: vec![DropReason::Mtu],
            notice: Some(ExpNotice {
                kind: NoticeKind::Mtu,
                out_port: PortId::new(eport),
                mtu,
                next_hop: NativeAddr::NONE,
                packet: packet.to_vec(),
            }),
        };
    }
    if native.len() != 6 {
        // The in-memory SAN refuses it.
        return drop1(DropReason::BadL2rh);
    }
    Expect::Forward {
        port: eport,
        native,
        bytes: forwarded(packet, strip, p.ei, err),
        redirect: false,
    }
}

/// Runs `inputs` through a box made from `w` and checks every outcome
/// against the model, the engine's own decision and the accounts.
fn check(w: &World, inputs: &[(usize, bool, Vec<u8>)]) -> Result<(), TestCaseError> {
    let opts = Opts {
        mtus: w.mtus.clone(),
        ..Opts::default()
    };
    let mut rig = Rig::new(opts, |f| w.apply(f));
    let cfg = EngineConfig {
        hrs: HRS.to_vec(),
        mtus: w.mtus.clone(),
    };
    let engine = Engine::new(&cfg, channels(roomy_channels()).0);
    let fib = fib_for(3, |f| w.apply(f));
    for (in_port, err, b) in inputs {
        let (in_port, err) = (*in_port, *err);
        let want = model(w, in_port, host(in_port), err, b);
        // The engine's decision, for what the outcome does not show.
        let mut buf = HeapBuf::from_bytes(b);
        buf.set_rx_error(err);
        buf.set_native_src(host(in_port));
        let decision = engine.decide(&fib, PortId::new(in_port), &mut buf);
        let got = if err {
            rig.one_flagged(in_port, b)
        } else {
            rig.one(in_port, b)
        };
        let notices = rig.notices();
        match want {
            Expect::Forward {
                port,
                native,
                bytes,
                redirect,
            } => {
                let Outcome::Forward { port: p, buf } = got else {
                    return Err(TestCaseError::fail(format!(
                        "expected a forward on {port}, got {got:?}"
                    )));
                };
                prop_assert_eq!(p, port);
                prop_assert_eq!(buf.native_dst(), native);
                prop_assert_eq!(buf.data(), &bytes[..]);
                if redirect {
                    prop_assert_eq!(notices.len(), 1);
                    prop_assert_eq!(notices[0].kind, NoticeKind::Redirect);
                    prop_assert_eq!(notices[0].next_hop, native);
                    prop_assert_eq!(notices[0].out_port.index(), port);
                } else {
                    prop_assert!(notices.is_empty());
                }
            }
            Expect::Punt {
                class,
                hr_port,
                data,
            } => {
                let Outcome::Punt(p) = got else {
                    return Err(TestCaseError::fail(format!(
                        "expected a punt to {hr_port}, got {got:?}"
                    )));
                };
                prop_assert_eq!(p.hr_port.index(), hr_port);
                prop_assert_eq!(p.in_port.index(), in_port);
                prop_assert_eq!(p.rx_error, err);
                prop_assert_eq!(p.native_src, host(in_port));
                prop_assert_eq!(&p.data, &data);
                let Decision::Punt { class: c, .. } = decision else {
                    return Err(TestCaseError::fail(format!("decide: {decision:?}")));
                };
                prop_assert_eq!(c, class);
                prop_assert!(notices.is_empty());
            }
            Expect::Drop { reasons, notice } => {
                let Outcome::Drop(r) = got else {
                    return Err(TestCaseError::fail(format!(
                        "expected a drop ({reasons:?}), got {got:?}"
                    )));
                };
                prop_assert!(
                    reasons.contains(&r),
                    "dropped {:?}, expected {:?}",
                    r,
                    reasons
                );
                match notice {
                    None => prop_assert!(notices.is_empty(), "{:?}", notices),
                    Some(n) => {
                        prop_assert_eq!(notices.len(), 1);
                        let g = notices[0];
                        prop_assert_eq!(g.kind, n.kind);
                        prop_assert_eq!(g.in_port.index(), in_port);
                        prop_assert_eq!(g.out_port, n.out_port);
                        prop_assert_eq!(g.mtu, n.mtu);
                        prop_assert_eq!(g.next_hop, n.next_hop);
                        prop_assert_eq!(g.native_src, host(in_port));
                        prop_assert_eq!(g.packet_len as usize, n.packet.len());
                        prop_assert_eq!(g.bytes(), &n.packet[..n.packet.len().min(NOTICE_BYTES)]);
                    }
                }
            }
        }
    }
    rig.assert_balanced();
    let c = rig.counters();
    let received: u64 = c.iter().map(|c| c.received).sum();
    prop_assert_eq!(received, inputs.len() as u64);
    Ok(())
}

// ---- strategies ----

fn native_on(port: usize) -> impl Strategy<Value = NativeAddr> {
    prop_oneof![
        Just(host(port)),
        (0u8..3).prop_map(move |k| station(port, k))
    ]
}

fn nexthop() -> impl Strategy<Value = NextHop> {
    (0usize..3).prop_flat_map(|p| {
        (
            native_on(p),
            prop::sample::select(vec![0u32, 64, 100, 200, 1500]),
        )
            .prop_map(move |(native, mtu)| nh(p as u16, native, mtu))
    })
}

fn world() -> impl Strategy<Value = World> {
    (
        prop::collection::vec(prop::sample::select(vec![0u32, 64, 96, 200, 1500]), 3),
        prop::collection::vec(
            (0usize..3, prop::sample::select(DSTS.to_vec()), nexthop()),
            0..16,
        ),
        prop::array::uniform3(any::<bool>()),
    )
        .prop_map(|(mtus, routes, buddies)| World {
            mtus,
            routes,
            buddies,
        })
}

fn packet_type() -> impl Strategy<Value = PacketType> {
    prop::sample::select(vec![
        PacketType::ERR,
        PacketType::RRP,
        PacketType::EMBEDDED,
        PacketType::MANAGEMENT,
        PacketType(0x0100),
        PacketType(0x0800),
    ])
}

fn dst() -> impl Strategy<Value = u16> {
    let mut d = DSTS.to_vec();
    d.extend([HRS[0].0, HRS[1].0, HRS[2].0, 0xFFFE, 0xFFFF, 0x0555]);
    prop::sample::select(d)
}

/// An EEP packet without L2RHs.
fn eep() -> impl Strategy<Value = PacketRepr> {
    (
        dst(),
        packet_type(),
        0usize..160,
        any::<u64>(),
        any::<u16>(),
    )
        .prop_map(|(d, pt, len, ei, free)| {
            let mut p = pkt(d, len);
            p.header.packet_type = pt;
            p.header.free = free;
            p.ei = ei;
            p
        })
}

/// The first L2RH: mostly a router hop through some HR (of this box or
/// not), sometimes too short.
fn first_l2rh() -> impl Strategy<Value = L2rhRepr> {
    let egress = prop::sample::select(vec![
        HRS[0].0, HRS[1].0, HRS[2].0, HRS[1].0, 0x0000, 0x0999, 0x0010, 0xFFFF,
    ]);
    let native_len = prop::sample::select(vec![0usize, 6, 6, 6, 6, 4, 18, 19, 61]);
    prop_oneof![
        8 => (egress, native_len, any::<u8>()).prop_map(|(e, n, s)| {
            let mut c = e.to_be_bytes().to_vec();
            c.extend((0..n).map(|i| s.wrapping_add(i as u8)));
            L2rhRepr::new(&c).unwrap()
        }),
        1 => any::<u8>().prop_map(|x| L2rhRepr::new(&[x]).unwrap()),
    ]
}

fn any_l2rh() -> impl Strategy<Value = L2rhRepr> {
    prop::collection::vec(any::<u8>(), 1..=63).prop_map(|c| L2rhRepr::new(&c).unwrap())
}

/// A valid packet: L3, or L2 with 1..=10 L2RHs; with frame padding.
fn valid() -> impl Strategy<Value = Vec<u8>> {
    let l3 = eep().boxed();
    let l2 = (
        eep(),
        first_l2rh(),
        prop::collection::vec(any_l2rh(), 0..10),
    )
        .prop_map(|(mut p, first, rest)| {
            p.l2rhs = vec![first];
            p.l2rhs.extend(rest);
            p
        })
        .boxed();
    (prop_oneof![l3, l2], 0usize..24).prop_map(|(p, pad)| {
        let mut b = bytes(&p);
        b.extend(std::iter::repeat_n(0xEE, pad));
        b
    })
}

/// Anything: random bytes, or a valid packet with bytes changed and cut.
fn anything() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..120),
        (
            valid(),
            prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            any::<prop::sample::Index>(),
            any::<bool>(),
        )
            .prop_map(|(mut b, edits, cut, do_cut)| {
                if !b.is_empty() {
                    for (i, v) in edits {
                        let i = i.index(b.len());
                        b[i] = v;
                    }
                }
                if do_cut {
                    b.truncate(cut.index(b.len() + 1));
                }
                b
            }),
    ]
}

fn input(bytes: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = (usize, bool, Vec<u8>)> {
    (0usize..3, prop::bool::weighted(0.2), bytes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn valid_packets_follow_the_model(
        w in world(),
        inputs in prop::collection::vec(input(valid()), 1..24),
    ) {
        check(&w, &inputs)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_follow_the_model(
        w in world(),
        inputs in prop::collection::vec(input(anything()), 1..24),
    ) {
        check(&w, &inputs)?;
    }

    #[test]
    fn a_burst_of_anything_keeps_the_accounts(
        w in world(),
        inputs in prop::collection::vec(input(anything()), 1..100),
    ) {
        // All at once, through bursts, rather than one at a time.
        let opts = Opts { mtus: w.mtus.clone(), ..Opts::default() };
        let mut rig = Rig::new(opts, |f| w.apply(f));
        let mut expected = [[0u64; 3]; 3]; // per ingress: forwarded, punted, dropped
        for (in_port, err, b) in &inputs {
            match model(&w, *in_port, host(*in_port), *err, b) {
                Expect::Forward { .. } => expected[*in_port][0] += 1,
                Expect::Punt { .. } => expected[*in_port][1] += 1,
                Expect::Drop { .. } => expected[*in_port][2] += 1,
            }
            if *err { rig.send_flagged(*in_port, b) } else { rig.send(*in_port, b) }
        }
        rig.run();
        rig.assert_balanced();
        let c = rig.counters();
        for p in 0..3 {
            prop_assert_eq!([c[p].forwarded, c[p].punted, c[p].dropped_total()], expected[p]);
        }
        let out: usize = (0..3).map(|p| rig.recv(p).len()).sum();
        prop_assert_eq!(out as u64, c.iter().map(|c| c.forwarded).sum::<u64>());
        prop_assert_eq!(out as u64, c.iter().map(|c| c.transmitted).sum::<u64>());
    }
}
