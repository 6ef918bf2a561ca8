//! Property tests of the MAD format: emit-then-parse is the identity for
//! MADs of every class (directed routes with random paths that fit) and for
//! every attribute; arbitrary and mutated bytes never panic and their
//! errors stay inside the input.
//!
//! Case counts are kept small so that `cargo test -p mgmt` stays fast; set
//! `PROPTEST_CASES` for deeper runs, e.g.
//! `PROPTEST_CASES=20000 cargo test -p mgmt --profile ci --test proptest_mad`.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

use mgmt::attr::{
    AddressRecord, AddressTable, Attribute, ClassPortInfo, FibBlock, FibBlockEntry, InformInfo,
    LrtBlock, LrtBlockEntry, McGroupRecord, McMemberRecord, Neighbour, NodeDescription, NodeInfo,
    NodeRecord, Notice, PartitionTable, PartitionsText, PathRecord, PortCounters,
    PortCountersExtended, PortInfo, RouteEntry, SmInfo, SourceRoute,
};
use mgmt::fuzzing;
use mgmt::partition::{Membership, PartitionKey};
use mgmt::wire::path::{PATH_AREA_LEN, path_len};
use mgmt::wire::{DrRoute, MAD_LEN, Mad, MadRepr, Method, MgmtClass, PathHop, Status};
use rrp::{Address, NativeAddr};

/// The configuration of a block: `cases` unless `PROPTEST_CASES` is set.
fn config(cases: u32) -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    c
}

mod strategy {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

    /// Any 16-bit address.
    pub fn address() -> impl Strategy<Value = Address> {
        any::<u16>().prop_map(Address)
    }

    /// A native address: none, MAC, UDP v4/v6, or any 0..=18 bytes.
    pub fn native() -> impl Strategy<Value = NativeAddr> {
        prop_oneof![
            Just(NativeAddr::none()),
            any::<[u8; 6]>().prop_map(NativeAddr::mac),
            (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| NativeAddr::udp(
                SocketAddr::new(Ipv4Addr::from(ip).into(), port)
            )),
            (any::<[u8; 16]>(), any::<u16>()).prop_map(|(ip, port)| NativeAddr::udp(
                SocketAddr::new(Ipv6Addr::from(ip).into(), port)
            )),
            vec(any::<u8>(), 0..=18).prop_map(|b| NativeAddr::from_bytes(&b).expect("<= 18")),
        ]
    }

    /// A path entry.
    pub fn hop() -> impl Strategy<Value = PathHop> {
        (address(), native()).prop_map(|(hr, native)| PathHop { hr, native })
    }

    /// Up to 8 entries that fit a 64-byte path area (trailing ones dropped
    /// until they do).
    pub fn path() -> impl Strategy<Value = Vec<PathHop>> {
        vec(hop(), 0..=8).prop_map(|mut v| {
            while path_len(&v) > PATH_AREA_LEN {
                v.pop();
            }
            v
        })
    }

    /// A directed route: InitialPath of HopCount entries, a ReturnPath of
    /// at most as many whose last entry is not all zero (it would read as
    /// padding).
    pub fn dr() -> impl Strategy<Value = DrRoute> {
        (path(), path(), any::<bool>(), any::<u8>()).prop_map(|(initial, mut ret, d, p)| {
            ret.truncate(initial.len());
            if let Some(last) = ret.last_mut()
                && last.hr.0 == 0
                && last.native.is_empty()
            {
                last.hr = Address(0x0040);
            }
            DrRoute {
                returning: d,
                hop_pointer: p,
                hop_count: initial.len() as u8,
                initial,
                ret,
            }
        })
    }

    /// Any class, the assigned ones more often.
    pub fn class() -> impl Strategy<Value = MgmtClass> {
        prop_oneof![
            Just(MgmtClass::SUBN),
            Just(MgmtClass::SUBN_DR),
            Just(MgmtClass::SUBN_ADM),
            Just(MgmtClass::PERF),
            Just(MgmtClass::VENDOR_TRACE),
            any::<u8>().prop_map(MgmtClass),
        ]
    }

    /// A MAD of any class, consistent (R bit, data length, DR for 0x81).
    pub fn mad() -> impl Strategy<Value = MadRepr> {
        (
            class(),
            any::<u8>(),
            any::<u8>(),
            any::<u16>(),
            any::<u64>(),
            any::<u16>(),
            any::<u32>(),
            any::<u64>(),
            vec(any::<u8>(), 192),
            dr(),
        )
            .prop_map(
                |(class, class_version, method, status, tid, attribute, modifier, mkey, d, dr)| {
                    let directed = class.is_directed_route();
                    MadRepr {
                        class,
                        class_version,
                        response: method & 0x80 != 0,
                        method: Method(method),
                        status: Status(if directed { status & 0x7FFF } else { status }),
                        tid,
                        attribute,
                        modifier,
                        mkey,
                        data: d[..class.attribute_len()].to_vec(),
                        dr: directed.then_some(dr),
                    }
                },
            )
    }

    pub fn class_port_info() -> impl Strategy<Value = ClassPortInfo> {
        (
            any::<u8>(),
            any::<u8>(),
            any::<u16>(),
            any::<u32>(),
            address(),
        )
            .prop_map(|(b, c, m, r, t)| ClassPortInfo {
                base_version: b,
                class_version: c,
                capability_mask: m,
                resp_time_value: r,
                trap_address: t,
            })
    }

    pub fn notice() -> impl Strategy<Value = Notice> {
        (
            any::<bool>(),
            0u8..0x80,
            0u32..0x0100_0000,
            any::<u16>(),
            address(),
            any::<bool>(),
            0u16..0x8000,
            vec(any::<u8>(), 54),
        )
            .prop_map(|(g, t, p, n, i, tg, c, d)| Notice {
                is_generic: g,
                notice_type: t,
                producer_type: p,
                trap_number: n,
                issuer: i,
                toggle: tg,
                count: c,
                details: d.try_into().expect("54 bytes"),
            })
    }

    pub fn node_description() -> impl Strategy<Value = NodeDescription> {
        ".{0,20}".prop_map(|s: String| {
            let mut t = s.trim_end_matches('\0').to_string();
            while t.len() > 64 {
                t.pop();
            }
            NodeDescription(t.trim_end_matches('\0').to_string())
        })
    }

    pub fn node_info() -> impl Strategy<Value = NodeInfo> {
        (
            (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()),
            (any::<u64>(), any::<u64>(), any::<u64>()),
            (any::<u16>(), any::<u16>(), any::<u32>()),
            (any::<u8>(), 0u32..0x0100_0000, address()),
        )
            .prop_map(
                |((b, c, t, n), (s, i, p), (pc, il, r), (l, v, a))| NodeInfo {
                    base_version: b,
                    class_version: c,
                    node_type: t,
                    num_ports: n,
                    system_image_identity: s,
                    node_identity: i,
                    port_identity: p,
                    partition_cap: pc,
                    implementation_level: il,
                    revision: r,
                    local_port_num: l,
                    vendor_id: v,
                    local_port_address: a,
                },
            )
    }

    pub fn port_counters() -> impl Strategy<Value = PortCounters> {
        (
            any::<u8>(),
            vec(any::<u64>(), 0..=PortCounters::MAX_COUNTERS),
        )
            .prop_map(|(p, c)| PortCounters {
                port_select: p,
                counters: c,
            })
    }

    pub fn port_counters_extended() -> impl Strategy<Value = PortCountersExtended> {
        (
            any::<u8>(),
            vec(any::<u64>(), 0..=PortCounters::MAX_COUNTERS),
        )
            .prop_map(|(p, c)| PortCountersExtended {
                port_select: p,
                counters: c,
            })
    }

    pub fn port_info() -> impl Strategy<Value = PortInfo> {
        (
            (any::<u64>(), address(), address(), address(), any::<u16>()),
            (
                any::<u32>(),
                any::<u16>(),
                any::<u8>(),
                any::<u8>(),
                0u8..=3,
            ),
            (
                any::<u8>(),
                any::<u16>(),
                any::<u16>(),
                any::<u16>(),
                native(),
            ),
        )
            .prop_map(
                |((k, a, s, m, l), (mtu, c, lp, ps, pb), (lk, v, e, b, n))| PortInfo {
                    mkey: k,
                    address: a,
                    san_id: s,
                    manager_address: m,
                    mkey_lease_period: l,
                    mtu,
                    cost: c,
                    local_port_num: lp,
                    port_state: ps,
                    mkey_protect_bits: pb,
                    link_kind: lk,
                    mkey_violations: v,
                    lrt_entries: e,
                    buddies: b,
                    native: n,
                },
            )
    }

    pub fn sm_info() -> impl Strategy<Value = SmInfo> {
        (any::<u64>(), any::<u64>(), any::<u32>(), 0u8..16, 0u8..16).prop_map(|(i, k, a, p, s)| {
            SmInfo {
                identity: i,
                sm_key: k,
                act_count: a,
                priority: p,
                sm_state: s,
            }
        })
    }

    pub fn route_entry() -> impl Strategy<Value = RouteEntry> {
        (
            any::<u8>(),
            any::<u8>(),
            address(),
            any::<u16>(),
            address(),
            any::<u32>(),
            native(),
            address(),
        )
            .prop_map(|(k, p, e, q, f, m, n, x)| RouteEntry {
                kind: k,
                egress_port: p,
                egress_address: e,
                q,
                first_hr: f,
                mtu: m,
                native: n,
                next_address: x,
            })
    }

    pub fn source_route() -> impl Strategy<Value = SourceRoute> {
        (
            any::<u8>(),
            any::<u8>(),
            address(),
            vec(1u16.., 0..=mgmt::attr::source_route::MAX_HOPS),
        )
            .prop_map(|(p, h, a, v)| SourceRoute {
                actual_port: p,
                hop_count: h,
                actual_address: a,
                expected: v.into_iter().map(Address).collect(),
            })
    }

    pub fn fib_block() -> impl Strategy<Value = FibBlock> {
        vec((any::<u8>(), any::<u8>(), any::<u16>()), 16).prop_map(|v| {
            let mut entries = [FibBlockEntry::default(); 16];
            for (e, (k, p, q)) in entries.iter_mut().zip(v) {
                *e = FibBlockEntry {
                    kind: k,
                    egress_port: p,
                    q,
                };
            }
            FibBlock { entries }
        })
    }

    pub fn lrt_block() -> impl Strategy<Value = LrtBlock> {
        (
            any::<u16>(),
            vec((1u16..=0xFFFF, any::<u8>(), any::<u8>()), 0..=15),
        )
            .prop_map(|(t, v)| LrtBlock {
                total: t,
                entries: v
                    .into_iter()
                    .map(|(a, f, k)| LrtBlockEntry {
                        address: Address(a),
                        flags: f,
                        keepalives_missed: k,
                    })
                    .collect(),
            })
    }

    /// A block of distinct keys, each a full or a limited member.
    pub fn partition_table() -> impl Strategy<Value = PartitionTable> {
        proptest::collection::btree_map(1u16..=0x7FFF, any::<bool>(), 0..=32)
            .prop_map(|m| {
                m.into_iter()
                    .map(|(k, full)| {
                        let key = PartitionKey::new(k).expect("a key");
                        (
                            key,
                            if full {
                                Membership::Full
                            } else {
                                Membership::Limited
                            },
                        )
                    })
                    .collect::<Vec<_>>()
            })
            // Any order: a block is in slot order, not sorted.
            .prop_shuffle()
            .prop_map(|entries| PartitionTable { entries })
    }

    /// Any attribute, with a class that has it.
    pub fn attribute() -> impl Strategy<Value = (MgmtClass, Attribute)> {
        let smp = prop_oneof![Just(MgmtClass::SUBN), Just(MgmtClass::SUBN_DR)];
        prop_oneof![
            (class(), class_port_info()).prop_map(|(c, a)| (c, Attribute::ClassPortInfo(a))),
            (smp.clone(), notice()).prop_map(|(c, a)| (c, Attribute::Notice(a))),
            (smp.clone(), node_description()).prop_map(|(c, a)| (c, Attribute::NodeDescription(a))),
            (smp.clone(), node_info()).prop_map(|(c, a)| (c, Attribute::NodeInfo(a))),
            port_counters().prop_map(|a| (MgmtClass::PERF, Attribute::PortCounters(a))),
            port_counters_extended()
                .prop_map(|a| (MgmtClass::PERF, Attribute::PortCountersExtended(a))),
            (smp.clone(), port_info()).prop_map(|(c, a)| (c, Attribute::PortInfo(a))),
            (smp.clone(), partition_table()).prop_map(|(c, a)| (c, Attribute::PartitionTable(a))),
            (smp.clone(), sm_info()).prop_map(|(c, a)| (c, Attribute::SmInfo(a))),
            (smp.clone(), route_entry()).prop_map(|(c, a)| (c, Attribute::RouteEntry(a))),
            (smp.clone(), fib_block()).prop_map(|(c, a)| (c, Attribute::FibBlock(a))),
            (smp.clone(), lrt_block()).prop_map(|(c, a)| (c, Attribute::LrtBlock(a))),
            source_route().prop_map(|a| (MgmtClass::VENDOR_TRACE, Attribute::SourceRoute(a))),
            (
                any::<(u16, u16, u64, u8, u8, u8, u8)>(),
                "[a-zA-Z0-9 ]{0,64}"
            )
                .prop_map(|((t, a, i, ty, l, p, m), d)| (
                    MgmtClass::SUBN_ADM,
                    Attribute::NodeRecord(NodeRecord {
                        total: t,
                        address: Address(a),
                        identity: i,
                        node_type: ty,
                        level: l,
                        num_ports: p,
                        manager: m,
                        description: d,
                    })
                )),
            (any::<(u16, u16, u8, u16, u16, u32)>(), native()).prop_map(
                |((d, s, k, f, q, m), n)| (
                    MgmtClass::SUBN_ADM,
                    Attribute::PathRecord(PathRecord {
                        destination: Address(d),
                        source: Address(s),
                        kind: k,
                        first_hr: Address(f),
                        q,
                        mtu: m,
                        native: n,
                    })
                )
            ),
            vec((1u64..=u64::MAX, any::<u16>()), 0..=12).prop_map(|v| (
                MgmtClass::SUBN_ADM,
                Attribute::AddressTable(AddressTable {
                    records: v
                        .into_iter()
                        .map(|(identity, a)| AddressRecord {
                            identity,
                            address: Address(a),
                        })
                        .collect(),
                })
            )),
            (
                any::<u64>(),
                any::<u32>(),
                any::<u32>(),
                vec(any::<u8>(), 0..=168)
            )
                .prop_map(|(version, total, offset, text)| (
                    MgmtClass::SUBN_ADM,
                    Attribute::PartitionsText(PartitionsText {
                        version,
                        total,
                        offset,
                        text,
                    })
                )),
            (
                (address(), any::<u16>(), address(), address(), any::<u16>()),
                (any::<(bool, bool, u8)>(), 0u32..0x0100_0000, any::<u32>())
            )
                .prop_map(|((s, t, f, l, n), ((g, sub, ty), p, lease))| (
                    MgmtClass::SUBN_ADM,
                    Attribute::InformInfo(InformInfo {
                        subscriber: s,
                        total: t,
                        issuer_first: f,
                        issuer_last: l,
                        trap_number: n,
                        is_generic: g,
                        subscribe: sub,
                        notice_type: ty,
                        producer_type: p,
                        lease_s: lease,
                    })
                )),
            // Any partition field: a key, 0 (the default partition), bit 15 set.
            any::<(u16, u16, u8, u16, u32, u32, u16)>().prop_map(|(g, mb, js, p, mtu, gm, t)| (
                MgmtClass::SUBN_ADM,
                Attribute::McMemberRecord(McMemberRecord {
                    group: Address(g),
                    member: Address(mb),
                    join_state: js,
                    partition: p,
                    mtu,
                    group_mtu: gm,
                    total: t,
                })
            )),
            any::<(u16, u16, u32, u16, u16, u8, u16)>().prop_map(|(g, t, mtu, n, f, fl, p)| (
                MgmtClass::SUBN_ADM,
                Attribute::McGroupRecord(McGroupRecord {
                    group: Address(g),
                    total: t,
                    mtu,
                    members: n,
                    full_members: f,
                    flags: fl,
                    partition: p,
                })
            )),
            (smp, address(), native()).prop_map(|(c, a, n)| (
                c,
                Attribute::Neighbour(Neighbour {
                    address: a,
                    native: n
                })
            )),
        ]
    }
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn mad_round_trip(m in strategy::mad()) {
        let b = m.to_bytes().expect("a consistent MAD emits");
        let v = Mad::new_checked(&b[..]).expect("view");
        prop_assert_eq!(v.class(), m.class);
        prop_assert_eq!(v.method(), m.method);
        prop_assert_eq!(v.status(), m.status);
        prop_assert_eq!(v.attribute_data(), &m.data[..]);
        prop_assert_eq!(MadRepr::parse(&v).expect("parse"), m.clone());
        // And through the EEP packet.
        let p = mgmt::wire::mad_packet(Address(0xFFFE), Address(0x0101), &b).expect("packet");
        let pv = rrp::wire::Packet::new_checked(&p[..], 0).expect("packet view");
        let inner = mgmt::wire::mad_in(&pv).expect("a MAD");
        prop_assert_eq!(MadRepr::parse(&inner).expect("parse"), m);
    }

    #[test]
    fn attribute_round_trip(
        (class, a) in strategy::attribute(),
        fill in any::<u8>(),
    ) {
        let mut area = vec![fill; class.attribute_len()];
        a.emit(&mut area).expect("a valid attribute emits");
        let back = Attribute::parse(class, a.id(), &area).expect("parse");
        prop_assert_eq!(back, Some(a.clone()));
        // Inside a whole MAD too.
        let mut m = MadRepr::new(class, Method::GET_RESP, 1, a.id(), 0);
        m.data = area;
        let b = m.to_bytes().expect("emit");
        let v = Mad::new_checked(&b[..]).expect("view");
        prop_assert_eq!(
            Attribute::parse(class, a.id(), v.attribute_data()).expect("parse"),
            Some(a)
        );
    }

    #[test]
    fn response_keeps_the_transaction(m in strategy::mad(), s in 0u16..0x8000) {
        let r = m.response(Status(s));
        prop_assert!(r.response && r.method.is_response());
        prop_assert_eq!(r.tid, m.tid);
        prop_assert_eq!(&r.dr, &m.dr);
        let b = r.to_bytes().expect("emit");
        prop_assert_eq!(MadRepr::parse(&Mad::new_checked(&b[..]).expect("view")).expect("parse"), r);
    }
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn arbitrary_mads_never_panic(mut b in vec(any::<u8>(), MAD_LEN), class in strategy::class()) {
        b[0] = 1;
        b[1] = class.0;
        fuzzing::mad(&b);
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in vec(any::<u8>(), 0..600)) {
        fuzzing::mad(&b);
    }

    #[test]
    fn mutated_mads_never_panic(
        m in strategy::mad(),
        flips in vec((any::<Index>(), any::<u8>()), 1..8),
    ) {
        let mut b = m.to_bytes().expect("emit");
        for (i, x) in flips {
            b[i.index(MAD_LEN)] ^= x;
        }
        fuzzing::mad(&b);
    }
}
