//! Property tests of the wire formats: strategies for every owned type,
//! emit-then-parse round trips, arbitrary bytes and mutated encodings.
//!
//! Case counts are kept small so that `cargo test -p rrp` stays fast; set
//! `PROPTEST_CASES` for deeper runs, e.g.
//! `PROPTEST_CASES=20000 cargo test -p rrp --profile ci --test proptest_wire`.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::Index;

use rrp::NativeAddr;
use rrp::error::Error;
use rrp::fuzzing;
use rrp::limits::MAX_L2RHS;
use rrp::native::MAX_NATIVE_LEN;
use rrp::wire::header::MAX_DATA_WORDS;
use rrp::wire::l2rh::MAX_L2RH_CONTENT;
use rrp::wire::record::RecordIter;
use rrp::wire::{
    Capability, HEADER_LEN, Header, HeaderRepr, InfoQuery, L2rh, L2rhRepr, Message, Mtu, NodeInfo,
    Packet, PacketRepr, Record, RecordRepr, RouteTable, RouterHop, RtNode, SourceRoute,
    TRAILER_LEN, locate,
};
use rrp::{Address, Endian, PacketType};

/// The configuration of a block: `cases` unless `PROPTEST_CASES` is set.
fn config(cases: u32) -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    c
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

mod strategy {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

    /// Any 16-bit address.
    pub fn any_address() -> impl Strategy<Value = Address> {
        any::<u16>().prop_map(Address)
    }

    /// An address a packet may be sent to, and the R1 range: 0x0040 and up.
    pub fn destination() -> impl Strategy<Value = Address> {
        prop_oneof![
            (0x0040u16..=0xFFFF).prop_map(Address),
            Just(Address::FIRST_NODE),
            Just(Address::LAST_NODE),
            Just(Address::HEY_YOU),
            Just(Address::BROADCAST),
        ]
    }

    /// A node, HR or SAN-ID address: 0x0040..=0x7FFF.
    pub fn node() -> impl Strategy<Value = Address> {
        (0x0040u16..=0x7FFF).prop_map(Address)
    }

    /// An L2RH with 1..=63 content bytes.
    pub fn l2rh() -> impl Strategy<Value = L2rhRepr> {
        vec(any::<u8>(), 1..=MAX_L2RH_CONTENT).prop_map(|c| L2rhRepr::new(&c).expect("1..=63"))
    }

    /// A native address: MAC, UDP v4/v6 endpoint, none, or any 0..=61 bytes.
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
            vec(any::<u8>(), 0..=MAX_NATIVE_LEN)
                .prop_map(|b| NativeAddr::from_bytes(&b).expect("<= 18 bytes")),
        ]
    }

    /// A router hop: egress 0x0000 (native only) or a node address.
    pub fn router_hop() -> impl Strategy<Value = RouterHop> {
        (prop_oneof![Just(Address(0)), node()], native())
            .prop_map(|(egress, native)| RouterHop::new(egress, native))
    }

    /// Any of the 16 E nibbles.
    pub fn endian() -> impl Strategy<Value = Endian> {
        (0u8..16).prop_map(Endian::from_nibble)
    }

    /// Every header field; the destination is one a packet may carry.
    pub fn header() -> impl Strategy<Value = HeaderRepr> {
        (
            destination(),
            any::<u8>(),
            any::<u16>(),
            any::<u16>(),
            endian(),
            any_address(),
            any::<u16>(),
        )
            .prop_map(
                |(dst, priority, pt, type_ext, endian, src, free)| HeaderRepr {
                    dst,
                    priority,
                    packet_type: PacketType(pt),
                    type_ext,
                    endian,
                    src,
                    free,
                },
            )
    }

    /// A packet: 0..=10 L2RHs, 0..300 data bytes, any EI.
    pub fn packet() -> impl Strategy<Value = PacketRepr> {
        (
            vec(l2rh(), 0..=10),
            header(),
            vec(any::<u8>(), 0..300),
            any::<u64>(),
        )
            .prop_map(|(l2rhs, header, data, ei)| PacketRepr {
                l2rhs,
                header,
                data,
                ei,
            })
    }

    /// A capability with 0..16 parameter bytes.
    pub fn capability() -> impl Strategy<Value = Capability> {
        (any::<u8>(), vec(any::<u8>(), 0..16))
            .prop_map(|(code, params)| Capability { code, params })
    }

    /// An MTU R6 can carry.
    pub fn mtu() -> impl Strategy<Value = Mtu> {
        prop_oneof![
            Just(Mtu::UNLIMITED),
            Just(Mtu(Mtu::MAX_WORDS)),
            (0..=Mtu::MAX_WORDS).prop_map(Mtu),
        ]
    }

    /// A source route: 0..=8 L2RHs (router hops or arbitrary), with or without MTU.
    pub fn source_route() -> impl Strategy<Value = SourceRoute> {
        let hop = prop_oneof![l2rh(), router_hop().prop_map(|h| h.to_l2rh())];
        (any::<u16>(), vec(hop, 0..=MAX_L2RHS), option::of(mtu()))
            .prop_map(|(q, route, mtu)| SourceRoute { q, route, mtu })
    }

    /// Every record variant, with addresses valid for the record.
    pub fn record() -> impl Strategy<Value = RecordRepr> {
        prop_oneof![
            destination().prop_map(RecordRepr::Address),
            vec(any::<u8>(), 0..40).prop_map(RecordRepr::Name),
            capability().prop_map(RecordRepr::Capability),
            vec(any_address(), 0..12).prop_map(RecordRepr::LogicalAddresses),
            source_route().prop_map(RecordRepr::SourceRoute),
            mtu().prop_map(RecordRepr::Mtu),
            vec(node(), 0..=32).prop_map(RecordRepr::Rcvf),
            (node(), any::<u16>()).prop_map(|(san_id, sn)| RecordRepr::RtHeader { san_id, sn }),
        ]
    }

    /// A node's attributes.
    pub fn node_info() -> impl Strategy<Value = NodeInfo> {
        (
            destination(),
            option::of(vec(any::<u8>(), 0..20)),
            vec(capability(), 0..3),
            option::of(vec(any_address(), 0..4)),
        )
            .prop_map(|(address, name, capabilities, logical)| NodeInfo {
                address,
                name,
                capabilities,
                logical,
            })
    }

    /// A routing table with 0..4 node entries.
    pub fn route_table() -> impl Strategy<Value = RouteTable> {
        let entry = (node_info(), source_route()).prop_map(|(info, route)| RtNode { info, route });
        (
            node(),
            any::<u16>(),
            source_route(),
            vec(node(), 0..=6),
            vec(entry, 0..4),
        )
            .prop_map(|(san_id, sn, csr, rcvf, nodes)| RouteTable {
                san_id,
                sn,
                csr,
                rcvf,
                nodes,
            })
    }

    /// What an RRP#4 may ask about (at least one capability).
    pub fn info_query() -> impl Strategy<Value = InfoQuery> {
        prop_oneof![
            destination().prop_map(InfoQuery::Address),
            vec(any::<u8>(), 0..20).prop_map(InfoQuery::Name),
            vec(capability(), 1..4).prop_map(InfoQuery::Capabilities),
        ]
    }

    /// Every message variant.
    pub fn message() -> impl Strategy<Value = Message> {
        prop_oneof![
            destination().prop_map(|dst| Message::RouteRequest { dst }),
            (destination(), vec(source_route(), 1..4))
                .prop_map(|(dst, routes)| Message::Routes { dst, routes }),
            (destination(), destination()).prop_map(|(dst, via)| Message::Redirect { dst, via }),
            info_query().prop_map(Message::InfoRequest),
            vec(node_info(), 1..4).prop_map(Message::Info),
            destination().prop_map(|dst| Message::WhichHr { dst }),
            Just(Message::WhoAreYou),
            Just(Message::RtRequest),
            route_table().prop_map(Message::RouteTable),
            destination().prop_map(|addr| Message::Unknown { addr }),
            destination().prop_map(|hr| Message::HrDown { hr }),
            (destination(), destination()).prop_map(|(a, b)| Message::LinkDown { a, b }),
            vec(any::<u8>(), 0..64).prop_map(|enclosed| Message::General { enclosed }),
        ]
    }

    /// A message as a whole packet, sometimes behind L2RHs.
    pub fn message_packet() -> impl Strategy<Value = (Message, PacketRepr)> {
        (message(), destination(), any_address(), vec(l2rh(), 0..3)).prop_map(
            |(m, dst, src, l2rhs)| {
                let mut p = m.to_packet(dst, src).expect("fits");
                p.l2rhs = l2rhs;
                (m, p)
            },
        )
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Every error names a field and points into (or just past) the buffer.
fn check_error(e: &Error, len: usize) {
    assert!(!e.field.is_empty(), "error without a field: {e:?}");
    assert!(e.offset <= len, "offset past the {len}-byte buffer: {e:?}");
    assert!(!e.to_string().is_empty());
}

fn record_bytes(r: &RecordRepr) -> Vec<u8> {
    let mut out = Vec::new();
    r.emit(&mut out).expect("fits");
    out
}

fn parse_record(b: &[u8]) -> Result<RecordRepr, Error> {
    Record::new_checked(b).and_then(|r| RecordRepr::parse(&r))
}

/// Every parser over `b`: none may panic, errors are well formed, and what
/// parses emits and parses back to itself (the fuzz bodies check that).
fn all_parsers(b: &[u8]) {
    for max in [0, 1, MAX_L2RHS, usize::MAX] {
        if let Err(e) = locate(b, max) {
            check_error(&e, b.len());
        }
    }
    if let Err(e) = PacketRepr::parse(b) {
        check_error(&e, b.len());
    }
    if let Err(e) = Message::parse_packet(b) {
        check_error(&e, b.len());
    }
    if let Err(e) = parse_record(b) {
        check_error(&e, b.len());
    }
    if let Err(e) = L2rhRepr::parse(b) {
        check_error(&e, b.len());
    }
    if let Err(e) = RouterHop::from_content(b) {
        check_error(&e, b.len());
    }
    // The data block of a control packet whose header ends at byte 16.
    for pt in [PacketType::ERR, PacketType::RRP, PacketType(0x0100)] {
        for te in 0..=10 {
            if let Err(e) = Message::parse(pt, te, b, HEADER_LEN) {
                check_error(&e, HEADER_LEN + b.len());
            }
        }
    }
    fuzzing::packet(b);
    fuzzing::message(b);
    fuzzing::record(b);
}

/// If `b` parses as a packet (or a message packet), emitting the result and
/// parsing again is the identity.
fn reparse_packet(b: &[u8]) {
    if let Ok(p) = PacketRepr::parse(b) {
        let again = p.to_bytes().expect("fits");
        assert_eq!(PacketRepr::parse(&again).expect("re-parse"), p);
    }
    if let Ok((p, m)) = Message::parse_packet(b) {
        let mut q = m.to_packet(p.header.dst, p.header.src).expect("fits");
        q.l2rhs = p.l2rhs.clone();
        let (_, m2) = Message::parse_packet(&q.to_bytes().expect("fits")).expect("re-parse");
        assert_eq!(m2, m);
    }
}

fn reparse_record(b: &[u8]) {
    if let Ok(r) = parse_record(b) {
        assert_eq!(parse_record(&record_bytes(&r)).expect("re-parse"), r);
    }
}

/// Byte offset of the EEP header in an emitted packet.
fn header_offset(p: &PacketRepr) -> usize {
    p.l2rhs.iter().map(L2rhRepr::buffer_len).sum()
}

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn l2rh_round_trip(l in strategy::l2rh(), tail in vec(any::<u8>(), 0..16)) {
        let mut b = Vec::new();
        l.emit(&mut b);
        prop_assert_eq!(b.len(), l.buffer_len());
        prop_assert_eq!(b.len() % 8, 0);
        let v = L2rh::new_checked(&b[..]).unwrap();
        prop_assert_eq!(v.len_field(), l.content().len());
        prop_assert_eq!(v.content(), l.content());
        prop_assert_eq!(v.total_len(), b.len());
        prop_assert_eq!(L2rhRepr::parse(&b).unwrap(), (l.clone(), b.len()));
        b.extend_from_slice(&tail);
        prop_assert_eq!(L2rhRepr::parse(&b).unwrap(), (l, b.len() - tail.len()));
    }

    #[test]
    fn router_hop_round_trip(h in strategy::router_hop()) {
        let l = h.to_l2rh();
        prop_assert_eq!(l.content().len(), 2 + h.native.as_bytes().len());
        let mut b = Vec::new();
        l.emit(&mut b);
        let (l2, n) = L2rhRepr::parse(&b).unwrap();
        prop_assert_eq!(n, b.len());
        prop_assert_eq!(RouterHop::from_content(l2.content()).unwrap(), h);
        prop_assert_eq!(h.is_native_only(), h.egress.0 == 0);
        prop_assert_eq!(h.is_egress_only(), h.native.is_empty());
    }

    #[test]
    fn header_round_trip(h in strategy::header(), net_len in 0usize..2048) {
        let mut b = [0u8; HEADER_LEN];
        h.emit(&mut Header::new_unchecked(&mut b[..]), net_len);
        let v = Header::new_checked(&b[..]).unwrap();
        prop_assert_eq!(v.data_block_len(), net_len.div_ceil(8) * 8);
        prop_assert_eq!(v.data_block_len() - v.pad_len() as usize, net_len);
        prop_assert_eq!(v.packet_len(), HEADER_LEN + v.data_block_len() + TRAILER_LEN);
        prop_assert_eq!(v.endian().nibble(), h.endian.nibble());
        prop_assert_eq!(HeaderRepr::parse(&v, 0).unwrap(), h);
    }

    #[test]
    fn packet_round_trip(p in strategy::packet(), pad in vec(any::<u8>(), 0..64)) {
        let mut b = p.to_bytes().unwrap();
        prop_assert_eq!(b.len(), p.buffer_len());
        prop_assert_eq!(PacketRepr::parse(&b).unwrap(), p.clone());
        // The view agrees with the owned packet.
        {
            let v = Packet::new_checked(&b[..], usize::MAX).unwrap();
            let lay = *v.layout();
            prop_assert_eq!(lay.l2rh_count, p.l2rhs.len());
            prop_assert_eq!(lay.header_offset, header_offset(&p));
            prop_assert_eq!(lay.data_len, p.data.len());
            prop_assert_eq!(lay.pad_len, p.data.len().div_ceil(8) * 8 - p.data.len());
            prop_assert_eq!(lay.total_len(), b.len());
            prop_assert_eq!(lay.eep_len(), b.len() - lay.header_offset);
            prop_assert_eq!(v.bytes(), &b[..]);
            prop_assert_eq!(v.data(), &p.data[..]);
            prop_assert_eq!(v.ei(), p.ei);
            let contents: Vec<Vec<u8>> = v.l2rhs().map(|l| l.content().to_vec()).collect();
            let expected: Vec<Vec<u8>> = p.l2rhs.iter().map(|l| l.content().to_vec()).collect();
            prop_assert_eq!(contents, expected);
            prop_assert_eq!(HeaderRepr::parse(&v.header(), lay.header_offset).unwrap(), p.header);
            prop_assert_eq!(
                Packet::new_checked(&b[..], MAX_L2RHS).is_ok(),
                p.l2rhs.len() <= MAX_L2RHS
            );
        }
        // Frame padding after the trailer changes nothing.
        b.extend_from_slice(&pad);
        prop_assert_eq!(PacketRepr::parse(&b).unwrap(), p.clone());
        let v = Packet::new_checked(&b[..], usize::MAX).unwrap();
        prop_assert_eq!(v.layout().total_len(), p.buffer_len());
        fuzzing::packet(&b);
    }

    #[test]
    fn packet_with_any_destination(mut p in strategy::packet(), dst in strategy::any_address()) {
        // Emit refuses what would read back as an L2RH; whatever it emits parses back.
        p.header.dst = dst;
        match p.to_bytes() {
            Ok(b) => {
                prop_assert!(dst.is_valid_destination());
                prop_assert_eq!(PacketRepr::parse(&b).unwrap(), p);
            }
            Err(e) => {
                prop_assert!(!dst.is_valid_destination());
                prop_assert_eq!(e.field, "eep.dst");
                prop_assert_eq!(e.offset, header_offset(&p));
            }
        }
    }

    #[test]
    fn record_round_trip(r in strategy::record(), tail in vec(any::<u8>(), 0..24)) {
        let mut b = record_bytes(&r);
        prop_assert_eq!(b.len(), r.buffer_len());
        prop_assert_eq!(b.len() % 8, 0);
        let v = Record::new_checked(&b).unwrap();
        prop_assert_eq!(v.rtyp(), r.record_type() as u8);
        prop_assert_eq!(v.record_type(), r.record_type());
        prop_assert_eq!(v.words() * 8, b.len());
        prop_assert_eq!(RecordRepr::parse(&v).unwrap(), r.clone());
        // Bytes after the record are not part of it.
        b.extend_from_slice(&tail);
        let v = Record::new_checked(&b).unwrap();
        prop_assert_eq!(v.bytes().len(), r.buffer_len());
        prop_assert_eq!(RecordRepr::parse(&v).unwrap(), r);
        fuzzing::record(&b);
    }

    #[test]
    fn record_sequence_round_trip(rs in vec(strategy::record(), 0..6), base in 0usize..64) {
        let mut b = Vec::new();
        for r in &rs {
            r.emit(&mut b).unwrap();
        }
        let mut at = base;
        let mut parsed = Vec::new();
        for item in RecordIter::new(&b, base) {
            let (v, off) = item.unwrap();
            prop_assert_eq!(off, at);
            at += v.bytes().len();
            parsed.push(RecordRepr::parse(&v).unwrap());
        }
        prop_assert_eq!(at, base + b.len());
        prop_assert_eq!(parsed, rs);
    }

    #[test]
    fn message_round_trip((m, p) in strategy::message_packet(), pad in vec(any::<u8>(), 0..16)) {
        let (pt, te) = m.kind();
        prop_assert_eq!(p.header.packet_type, pt);
        prop_assert_eq!(p.header.type_ext, te);
        let mut data = Vec::new();
        m.emit(&mut data).unwrap();
        prop_assert_eq!(&data, &p.data);
        prop_assert_eq!(Message::parse(pt, te, &data, HEADER_LEN).unwrap(), m.clone());
        let mut b = p.to_bytes().unwrap();
        prop_assert_eq!(b.len(), p.buffer_len());
        let (p2, m2) = Message::parse_packet(&b).unwrap();
        prop_assert_eq!(p2, p.clone());
        prop_assert_eq!(m2, m.clone());
        b.extend_from_slice(&pad);
        let (p3, m3) = Message::parse_packet(&b).unwrap();
        prop_assert_eq!(p3, p);
        prop_assert_eq!(m3, m);
        fuzzing::message(&b);
    }

    #[test]
    fn capability_and_source_route_records(
        c in strategy::capability(),
        s in strategy::source_route(),
    ) {
        let rc = RecordRepr::Capability(c);
        prop_assert_eq!(parse_record(&record_bytes(&rc)).unwrap(), rc);
        let rs = RecordRepr::SourceRoute(s.clone());
        let b = record_bytes(&rs);
        let expect = 8 + s.route.iter().map(L2rhRepr::buffer_len).sum::<usize>()
            + if s.mtu.is_some() { 8 } else { 0 };
        prop_assert_eq!(b.len(), expect);
        prop_assert_eq!(parse_record(&b).unwrap(), rs);
    }

    #[test]
    fn node_info_route_table_and_query(
        n in vec(strategy::node_info(), 1..4),
        rt in strategy::route_table(),
        q in strategy::info_query(),
    ) {
        for m in [Message::Info(n), Message::RouteTable(rt), Message::InfoRequest(q)] {
            let p = m.to_packet(Address(0x100), Address(0x101)).unwrap();
            let b = p.to_bytes().unwrap();
            prop_assert_eq!(Message::parse_packet(&b).unwrap(), (p, m));
        }
    }
}

// ---------------------------------------------------------------------------
// Arbitrary bytes
// ---------------------------------------------------------------------------

/// Arbitrary bytes, biased to look like MessageWay: small leading values
/// (L2RH lengths), version 5 at byte 3, small record types.
fn noise() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..128),
        vec(
            prop_oneof![Just(0u8), 1u8..10, Just(5), any::<u8>()],
            0..128
        ),
        (vec(any::<u8>(), 0..128), 0u16..0x60).prop_map(|(mut v, first)| {
            if v.len() >= 2 {
                v[..2].copy_from_slice(&first.to_be_bytes());
            }
            if v.len() >= 4 {
                v[3] = 5;
            }
            v
        }),
    ]
}

/// A valid encoding of some kind: packet, message packet, record, L2RH.
fn valid_encoding() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        strategy::packet().prop_map(|p| p.to_bytes().unwrap()),
        strategy::message_packet().prop_map(|(_, p)| p.to_bytes().unwrap()),
        strategy::record().prop_map(|r| record_bytes(&r)),
        strategy::l2rh().prop_map(|l| {
            let mut b = Vec::new();
            l.emit(&mut b);
            b
        }),
    ]
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn arbitrary_bytes_never_panic(b in noise()) {
        all_parsers(&b);
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_prefix(
        valid in valid_encoding(),
        cut in any::<Index>(),
        tail in noise(),
    ) {
        let keep = cut.index(valid.len() + 1);
        let mut b = valid[..keep].to_vec();
        b.extend_from_slice(&tail);
        all_parsers(&b);
        reparse_packet(&b);
        reparse_record(&b);
    }

    #[test]
    fn router_hop_content_of_any_length(b in vec(any::<u8>(), 0..100)) {
        match RouterHop::from_content(&b) {
            Ok(h) => {
                prop_assert!(b.len() >= 2 && b.len() <= 2 + MAX_NATIVE_LEN);
                let l = h.to_l2rh();
                prop_assert_eq!(l.content(), &b[..]);
            }
            Err(e) => check_error(&e, b.len()),
        }
    }
}

// ---------------------------------------------------------------------------
// Mutations of valid encodings
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn truncated_packets_are_refused((_, p) in strategy::message_packet(), q in strategy::packet()) {
        for b in [p.to_bytes().unwrap(), q.to_bytes().unwrap()] {
            for n in 0..b.len() {
                let cut = &b[..n];
                let e = PacketRepr::parse(cut).unwrap_err();
                check_error(&e, n);
                prop_assert!(Packet::new_checked(cut, usize::MAX).is_err());
                let e = Message::parse_packet(cut).unwrap_err();
                check_error(&e, n);
                fuzzing::packet(cut);
                fuzzing::message(cut);
            }
        }
    }

    #[test]
    fn truncated_records_are_refused(r in strategy::record()) {
        let b = record_bytes(&r);
        for n in 0..b.len() {
            let e = parse_record(&b[..n]).unwrap_err();
            check_error(&e, n);
            fuzzing::record(&b[..n]);
        }
    }

    #[test]
    fn flipped_byte(
        valid in valid_encoding(),
        at in any::<Index>(),
        mask in 1u8..=255,
    ) {
        let mut b = valid;
        let i = at.index(b.len());
        b[i] ^= mask;
        all_parsers(&b);
        reparse_packet(&b);
        reparse_record(&b);
    }

    #[test]
    fn changed_dl_and_pl(
        (_, p) in strategy::message_packet(),
        dl in prop_oneof![0u32..64, Just(MAX_DATA_WORDS), any::<u32>()],
        pl in 0u8..16,
        e_bits in 0u8..16,
        pad in vec(any::<u8>(), 0..32),
    ) {
        let mut b = p.to_bytes().unwrap();
        let h = header_offset(&p);
        {
            let mut hv = Header::new_unchecked(&mut b[h..h + HEADER_LEN]);
            hv.set_data_words(dl);
            hv.set_endian_pad(Endian::from_nibble(e_bits), pl);
        }
        b.extend_from_slice(&pad);
        all_parsers(&b);
        reparse_packet(&b);
        if let Ok(q) = PacketRepr::parse(&b) {
            // Whatever parses is what DL and PL say.
            let words = (dl & MAX_DATA_WORDS) as usize;
            prop_assert!(pl <= 7);
            prop_assert_eq!(q.data.len(), words * 8 - pl as usize);
            prop_assert_eq!(q.buffer_len(), h + HEADER_LEN + words * 8 + TRAILER_LEN);
        }
    }

    #[test]
    fn changed_rl_and_record_pl(
        (_, p) in strategy::message_packet(),
        r in strategy::record(),
        which in any::<Index>(),
        rl in prop_oneof![0u16..8, any::<u16>()],
        pl in prop_oneof![0u8..8, any::<u8>()],
        change_pl in any::<bool>(),
    ) {
        // A record standing alone.
        let mut b = record_bytes(&r);
        if change_pl {
            b[1] = pl;
        } else {
            b[2..4].copy_from_slice(&rl.to_be_bytes());
        }
        all_parsers(&b);
        reparse_record(&b);

        // One record of a message's data block.
        let mut b = p.to_bytes().unwrap();
        let data_at = header_offset(&p) + HEADER_LEN;
        let starts: Vec<usize> = RecordIter::new(&p.data, data_at)
            .map_while(|item| item.ok().map(|(_, at)| at))
            .collect();
        if !starts.is_empty() {
            let at = starts[which.index(starts.len())];
            if change_pl {
                b[at + 1] = pl;
            } else {
                b[at + 2..at + 4].copy_from_slice(&rl.to_be_bytes());
            }
        }
        all_parsers(&b);
        reparse_packet(&b);
    }

    #[test]
    fn changed_l2rh_length(
        valid in valid_encoding(),
        len in prop_oneof![0u16..70, any::<u16>()],
    ) {
        let mut b = valid;
        if b.len() >= 2 {
            b[..2].copy_from_slice(&len.to_be_bytes());
        }
        all_parsers(&b);
        reparse_packet(&b);
        reparse_record(&b);
    }
}
