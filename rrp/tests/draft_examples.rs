//! Every example message of the draft, byte for byte (`tests/vectors/*.hex`).
//!
//! Each vector is parsed, checked field by field against the values chosen
//! for the draft's symbolic names (the modules `part3` and `appc` below, the
//! same table as in docs/spec-notes.md), and emitted again, byte for byte.
//! The `*.as-printed.hex` files hold the bytes exactly as the draft prints
//! them where the print is inconsistent; their tests pin the exact error, or
//! the misreading where the printed bytes still parse.
//!
//! Vector format: hex bytes separated by whitespace; `#` starts a comment.

use std::collections::BTreeSet;
use std::path::PathBuf;

use rrp::NativeAddr;
use rrp::endian::swap_in_place;
use rrp::wire::record::RecordIter;
use rrp::wire::{
    Capability, InfoQuery, L2rh, L2rhRepr, Message, Packet, PacketRepr, Record, RecordType,
    RouterHop, shift_ei,
};
use rrp::{Address, AddressClass, CapabilityCode, Endian, Error, ErrorKind, PacketType, SwapWidth};

/// Values for the symbolic names of Part-3's examples (<23>-<28>).
mod part3 {
    use rrp::Address;
    use rrp::wire::Mtu;

    /// S-Address: the asking node; also the D-Address of the replies to it.
    pub const S_ADDRESS: Address = Address(0x0101);
    /// node-D / node-X (D-Address in the R1 of RRP#1 and RRP#6, X-Address
    /// elsewhere): the node asked about. Also the host (H-Address) of
    /// RRP#9's node entry.
    pub const NODE_X: Address = Address(0x0102);
    /// HR-Address: the HR asked (DA of the requests); the source of its
    /// replies and of the ERR examples; the Source-Address of RRP#7/#8 and
    /// the D-Address of RRP#9.
    pub const HR_ADDRESS: Address = Address(0x0111);
    /// H-Address of RRP#3 (the other HR on the asker's SAN); the buddy HR
    /// that RRP#8 asks and that answers with RRP#9 (HRS-Address).
    pub const H_ADDRESS: Address = Address(0x0121);
    /// UNK-Address of ERR UNK.
    pub const UNK_ADDRESS: Address = Address(0x0104);
    /// The HR that is down (ERR HRDOWN).
    pub const HR_DOWN: Address = Address(0x0122);
    /// The ends of the link that is down (ERR LINKDOWN Addr1, Addr2).
    pub const LINK: [Address; 2] = [Address(0x0121), Address(0x0122)];
    /// A1..A9: one character each.
    pub const NAME: &[u8] = b"Processor";
    /// Cx: floating-point DSP, P1 P2 = word sizes 4 and 8 bytes.
    pub const CX: (u8, &[u8]) = (7, &[4, 8]);
    /// Cy: GP computing node, no parameters.
    pub const CY: (u8, &[u8]) = (1, &[]);
    /// Cz: router, P1..P6 = SAN-IDs 0x0201, 0x0202, 0x0203.
    pub const CZ: (u8, &[u8]) = (2, &[0x02, 0x01, 0x02, 0x02, 0x02, 0x03]);
    /// C1 of RRP#9's node entry, with P1: floating-point DSP, 8 bytes.
    pub const C1: (u8, &[u8]) = (7, &[8]);
    /// Logical-Address-1..3 of RRP#9's R4.
    pub const LOGICAL: [Address; 3] = [Address(0x8001), Address(0x8002), Address(0x8003)];
    /// RRP#2: Q and MTU of the first (2 L2RHs) and second (1 L2RH) route.
    pub const RRP2_ROUTES: [(u16, Mtu); 2] = [(5, Mtu(1024)), (7, Mtu(2048))];
    /// RRP#9's R8.
    pub const SAN_ID: Address = Address(0x0204);
    /// RRP#9's R8.
    pub const SN: u16 = 0x1234;
    /// RRP#9's CSR: Q and MinMTU.
    pub const CSR: (u16, Mtu) = (3, Mtu(1024));
    /// RRP#9's RCVF, Address-1 (the most recent sender) first: 0x0150 + n.
    pub const RCVF: [Address; 5] = [
        Address(0x0151),
        Address(0x0152),
        Address(0x0153),
        Address(0x0154),
        Address(0x0155),
    ];
    /// Q of RRP#9's node entry.
    pub const NODE_Q: u16 = 2;
    /// The draft's "0x7FFF(Hey-You)" in RRP#7.
    pub const PRINTED_HEY_YOU: Address = Address(0x7FFF);
}

/// Values for the symbolic names of Appendix C (<35>-<39>).
mod appc {
    use rrp::Address;
    use rrp::PacketType;
    use rrp::wire::Mtu;

    pub const NODE1: Address = Address(0x0101);
    pub const NODE2: Address = Address(0x0102);
    pub const NODE3: Address = Address(0x0103);
    /// RouterA on SAN1.
    pub const RTRA1: Address = Address(0x0111);
    /// RouterA on SAN3 (appears in the figure only).
    pub const RTRA3: Address = Address(0x0113);
    /// RouterB on SAN1.
    pub const RTRB1: Address = Address(0x0121);
    /// RouterB on SAN2 (appears in the figure only).
    pub const RTRB2: Address = Address(0x0122);
    /// SAN-IDs of SAN1, SAN2, SAN3 (not carried by any step's message).
    pub const SAN: [Address; 3] = [Address(0x0201), Address(0x0202), Address(0x0203)];
    /// Myrinet's message type of MessageWay ("MW", "MSGWAY=0x0300").
    pub const MW: [u8; 2] = [0x03, 0x00];
    /// Q of step 8's route.
    pub const STEP8_Q: u16 = 2;
    /// MTU of step 8's route: 1,024 words (8 KB).
    pub const STEP8_MTU: Mtu = Mtu(1024);
    /// "sensor": a user-defined packet type.
    pub const SENSOR_PT: PacketType = PacketType(0x0100);
    /// SubType (TE).
    pub const SENSOR_TE: u16 = 1;
    /// E: little endian, 64-bit swapping (1011).
    pub const SENSOR_E: u8 = 0xB;
    /// The sensor data: two IEEE doubles, little endian.
    pub const SENSOR: [f64; 2] = [1.5, -2.25];
}

use appc::*;
use part3::*;

// ------------------------------------------------------------------ helpers

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let data = line.split('#').next().unwrap_or("");
        for tok in data.split_whitespace() {
            if tok.len() != 2 {
                return Err(format!("line {}: {tok:?} is not one hex byte", n + 1));
            }
            let b =
                u8::from_str_radix(tok, 16).map_err(|e| format!("line {}: {tok:?}: {e}", n + 1))?;
            out.push(b);
        }
    }
    Ok(out)
}

/// The bytes of a vector file.
fn vector(name: &str) -> Vec<u8> {
    let path = vectors_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_hex(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// SR01..SRnn = 0x01..n.
fn sr(n: u8) -> Vec<u8> {
    (1..=n).collect()
}

fn contents(route: &[L2rhRepr]) -> Vec<Vec<u8>> {
    route.iter().map(|l| l.content().to_vec()).collect()
}

fn cap(c: (u8, &[u8])) -> Capability {
    Capability {
        code: c.0,
        params: c.1.to_vec(),
    }
}

/// The EEP header a control vector must carry (Priority 0, Version 5, E 0,
/// PL 0 and Free 0 are checked for all of them).
struct Mh {
    dst: Address,
    src: Address,
    pt: PacketType,
    te: u16,
    /// Data Length in 8-byte words.
    words: u32,
}

fn rrp(dst: Address, src: Address, te: u16, words: u32) -> Mh {
    Mh {
        dst,
        src,
        pt: PacketType::RRP,
        te,
        words,
    }
}

fn err(dst: Address, src: Address, te: u16, words: u32) -> Mh {
    Mh {
        dst,
        src,
        pt: PacketType::ERR,
        te,
        words,
    }
}

/// Parses a control-message vector, checks its header and trailer field by
/// field, and re-emits it (as a packet, and from the parsed message alone).
fn control(name: &str, mh: &Mh) -> Message {
    let bytes = vector(name);
    let (p, m) = Message::parse_packet(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let view = Packet::new_checked(&bytes[..], rrp::limits::MAX_L2RHS).unwrap();
    let h = view.header();
    assert_eq!(h.dst(), mh.dst, "{name}: DA");
    assert_eq!(h.priority(), 0, "{name}: Priority");
    assert_eq!(h.version(), 5, "{name}: Version");
    assert_eq!(h.packet_type(), mh.pt, "{name}: PT");
    assert_eq!(h.type_ext(), mh.te, "{name}: TE");
    assert_eq!(h.endian(), Endian::BIG_BYTES, "{name}: E");
    assert_eq!(h.pad_len(), 0, "{name}: PL");
    assert_eq!(h.data_words(), mh.words, "{name}: Length");
    assert_eq!(h.src(), mh.src, "{name}: SA");
    assert_eq!(h.free(), 0, "{name}: Free");
    assert_eq!(view.layout().l2rh_count, 0, "{name}: L2RHs");
    assert_eq!(
        view.layout().total_len(),
        bytes.len(),
        "{name}: packet length"
    );
    assert_eq!(view.ei(), 0, "{name}: EI");
    assert_eq!(p.ei, 0);
    assert!(p.l2rhs.is_empty());
    assert_eq!(p.header.dst, mh.dst);
    assert_eq!(p.header.src, mh.src);
    assert_eq!(p.data.len(), mh.words as usize * 8);
    assert_eq!(p.to_bytes().unwrap(), bytes, "{name}: packet re-emitted");
    let q = m.to_packet(mh.dst, mh.src).unwrap();
    assert_eq!(q, p, "{name}: message re-emitted");
    assert_eq!(q.to_bytes().unwrap(), bytes, "{name}: message bytes");
    m
}

/// The record structure of a packet's data block as the draft draws it:
/// `RTyp PL RL` per record, with the L2RHs and the nested R6 of every R5.
fn layout(bytes: &[u8]) -> Vec<String> {
    let view = Packet::new_checked(bytes, usize::MAX).expect("packet");
    let at = view.layout().data_offset();
    let block = &bytes[at..at + view.layout().data_len];
    let mut out = Vec::new();
    for item in RecordIter::new(block, at) {
        let (r, _) = item.expect("record");
        out.push(format!("R{} PL={} RL={}", r.rtyp(), r.pad_len(), r.words()));
        if r.record_type() == RecordType::SourceRoute {
            let b = r.bytes();
            let mut off = 8;
            while off < b.len() {
                if b[off] == 0 {
                    let l = L2rh::new_checked(&b[off..]).expect("L2RH");
                    out.push(format!("  L2RH L={}", l.len_field()));
                    off += l.total_len();
                } else {
                    let inner = Record::new_checked(&b[off..]).expect("nested record");
                    out.push(format!(
                        "  R{} PL={} RL={}",
                        inner.rtyp(),
                        inner.pad_len(),
                        inner.words()
                    ));
                    off += inner.bytes().len();
                }
            }
        }
    }
    out
}

/// Asserts the error that the bytes of `name` give, exactly.
fn fails(name: &str, expected: Error) -> Vec<u8> {
    let bytes = vector(name);
    let e = Message::parse_packet(&bytes).expect_err(name);
    assert_eq!(e, expected, "{name}: {e}");
    bytes
}

/// A message printed without its trailer: the packet ends where the trailer
/// should start.
fn no_trailer(name: &str, at: usize) -> Vec<u8> {
    let bytes = fails(
        name,
        Error::new(
            ErrorKind::Truncated {
                needed: 8,
                available: 0,
            },
            "eep.trailer",
            at,
        ),
    );
    assert_eq!(bytes.len(), at, "{name}: everything before the trailer");
    bytes
}

/// The offsets at which two byte strings of equal length differ.
fn diff(a: &[u8], b: &[u8]) -> Vec<usize> {
    assert_eq!(a.len(), b.len());
    (0..a.len()).filter(|&i| a[i] != b[i]).collect()
}

fn with_trailer(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.extend_from_slice(&[0; 8]);
    bytes
}

// ------------------------------------------------------------------ the set of files

const VECTORS: &[&str] = &[
    "part1-l2rh.hex",
    "part3-rrp1.hex",
    "part3-rrp2.hex",
    "part3-rrp3.hex",
    "part3-rrp4-address.hex",
    "part3-rrp4-name.hex",
    "part3-rrp4-capabilities.hex",
    "part3-rrp5.hex",
    "part3-rrp6.hex",
    "part3-rrp7.hex",
    "part3-rrp7.as-printed.hex",
    "part3-rrp8.hex",
    "part3-rrp8.as-printed.hex",
    "part3-rrp9.hex",
    "part3-rrp9.as-printed.hex",
    "part3-err-unk.hex",
    "part3-err-hrdown.hex",
    "part3-err-linkdown.hex",
    "part3-err-linkdown.as-printed.hex",
    "part3-err-general.hex",
    "appc-1.hex",
    "appc-1.as-printed.hex",
    "appc-2.hex",
    "appc-2.as-printed.hex",
    "appc-3.hex",
    "appc-3.as-printed.hex",
    "appc-4.hex",
    "appc-4.as-printed.hex",
    "appc-5.hex",
    "appc-5.as-printed.hex",
    "appc-6.hex",
    "appc-6.as-printed.hex",
    "appc-7.hex",
    "appc-7.as-printed.hex",
    "appc-8.hex",
    "appc-8.as-printed.hex",
    "appc-9.hex",
    "appc-9.as-printed.hex",
];

#[test]
fn every_vector_is_here_and_tested() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(vectors_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".hex"))
        .collect();
    let listed: BTreeSet<String> = VECTORS.iter().map(|s| s.to_string()).collect();
    assert_eq!(on_disk, listed);
    for name in VECTORS {
        let b = vector(name);
        assert!(
            !b.is_empty() && b.len().is_multiple_of(8),
            "{name}: whole 8-byte words"
        );
    }
}

#[test]
fn hex_format() {
    assert_eq!(parse_hex("00 0b # L=11\n# x\n ff").unwrap(), [0, 11, 255]);
    assert!(parse_hex("0b0c").is_err());
    assert!(parse_hex("zz").is_err());
}

// ------------------------------------------------------------------ Part-1

#[test]
fn part1_l2rh() {
    let bytes = vector("part1-l2rh.hex");
    let v = L2rh::new_checked(&bytes[..]).unwrap();
    assert_eq!(v.len_field(), 11);
    assert_eq!(v.total_len(), 16, "(11+9)/8 = 2 words");
    assert_eq!(v.content(), &sr(11)[..]);
    let (l, n) = L2rhRepr::parse(&bytes).unwrap();
    assert_eq!(n, bytes.len());
    assert_eq!(l.content(), &sr(11)[..]);
    assert_eq!(&bytes[13..], [0, 0, 0], "xxx");
    let mut out = Vec::new();
    l.emit(&mut out);
    assert_eq!(out, bytes);
}

// ------------------------------------------------------------------ Part-3

#[test]
fn part3_rrp1() {
    let name = "part3-rrp1.hex";
    let m = control(name, &rrp(HR_ADDRESS, S_ADDRESS, 1, 1));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1"]);
    let Message::RouteRequest { dst } = m else {
        panic!("{m:?}")
    };
    assert_eq!(dst, NODE_X);
}

#[test]
fn part3_rrp2() {
    let name = "part3-rrp2.hex";
    let m = control(name, &rrp(S_ADDRESS, HR_ADDRESS, 2, 9));
    assert_eq!(
        layout(&vector(name)),
        [
            "R1 PL=2 RL=1",
            "R5 PL=2 RL=5",
            "  L2RH L=11",
            "  L2RH L=4",
            "  R6 PL=1 RL=1",
            "R5 PL=2 RL=3",
            "  L2RH L=3",
            "  R6 PL=1 RL=1",
        ]
    );
    let Message::Routes { dst, routes } = m else {
        panic!("{m:?}")
    };
    assert_eq!(dst, NODE_X);
    assert_eq!(routes.len(), 2);
    assert_eq!(routes[0].q, RRP2_ROUTES[0].0);
    assert_eq!(contents(&routes[0].route), [sr(11), sr(4)]);
    assert_eq!(routes[0].mtu, Some(RRP2_ROUTES[0].1));
    assert_eq!(routes[1].q, RRP2_ROUTES[1].0);
    assert_eq!(contents(&routes[1].route), [sr(3)]);
    assert_eq!(routes[1].mtu, Some(RRP2_ROUTES[1].1));
    assert_eq!(routes[0].mtu.unwrap().bytes(), Some(8192));
    assert_eq!(routes[1].mtu.unwrap().bytes(), Some(16384));
}

#[test]
fn part3_rrp3() {
    let name = "part3-rrp3.hex";
    let m = control(name, &rrp(S_ADDRESS, HR_ADDRESS, 3, 2));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1", "R1 PL=2 RL=1"]);
    let Message::Redirect { dst, via } = m else {
        panic!("{m:?}")
    };
    assert_eq!(dst, NODE_X);
    assert_eq!(via, H_ADDRESS);
}

#[test]
fn part3_rrp4_address() {
    let name = "part3-rrp4-address.hex";
    let m = control(name, &rrp(HR_ADDRESS, S_ADDRESS, 4, 1));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1"]);
    let Message::InfoRequest(InfoQuery::Address(x)) = m else {
        panic!("{m:?}")
    };
    assert_eq!(x, NODE_X);
}

#[test]
fn part3_rrp4_name() {
    let name = "part3-rrp4-name.hex";
    let m = control(name, &rrp(HR_ADDRESS, S_ADDRESS, 4, 2));
    assert_eq!(layout(&vector(name)), ["R2 PL=3 RL=2"]);
    let Message::InfoRequest(InfoQuery::Name(n)) = m else {
        panic!("{m:?}")
    };
    assert_eq!(n, NAME);
    assert_eq!(n.len(), 9, "A1..A9");
}

#[test]
fn part3_rrp4_capabilities() {
    let name = "part3-rrp4-capabilities.hex";
    let m = control(name, &rrp(HR_ADDRESS, S_ADDRESS, 4, 2));
    assert_eq!(layout(&vector(name)), ["R3 PL=1 RL=1", "R3 PL=3 RL=1"]);
    let Message::InfoRequest(InfoQuery::Capabilities(caps)) = m else {
        panic!("{m:?}")
    };
    assert_eq!(caps.len(), 2);
    assert_eq!(caps[0].code, CX.0);
    assert_eq!(caps[0].params, CX.1, "Cx with 2 parameter bytes");
    assert_eq!(caps[1].code, CY.0);
    assert!(caps[1].params.is_empty(), "Cy with none");
    assert_eq!(
        CapabilityCode::from_code(caps[0].code),
        Some(CapabilityCode::FloatDsp)
    );
    assert_eq!(
        CapabilityCode::from_code(caps[1].code),
        Some(CapabilityCode::GpComputing)
    );
}

#[test]
fn part3_rrp5() {
    let name = "part3-rrp5.hex";
    let m = control(name, &rrp(S_ADDRESS, HR_ADDRESS, 5, 7));
    assert_eq!(
        layout(&vector(name)),
        [
            "R1 PL=2 RL=1",
            "R2 PL=3 RL=2",
            "R3 PL=1 RL=1",
            "R3 PL=3 RL=1",
            "R3 PL=5 RL=2",
        ]
    );
    let Message::Info(nodes) = m else {
        panic!("{m:?}")
    };
    assert_eq!(nodes.len(), 1);
    let n = &nodes[0];
    assert_eq!(n.address, NODE_X);
    assert_eq!(n.name.as_deref(), Some(NAME));
    assert_eq!(n.capabilities, [cap(CX), cap(CY), cap(CZ)]);
    assert_eq!(n.capabilities[2].params.len(), 6, "Cz: P1..P6");
    assert_eq!(n.logical, None);
}

#[test]
fn part3_rrp6() {
    let name = "part3-rrp6.hex";
    let m = control(name, &rrp(HR_ADDRESS, S_ADDRESS, 6, 1));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1"]);
    let Message::WhichHr { dst } = m else {
        panic!("{m:?}")
    };
    assert_eq!(dst, NODE_X);
}

#[test]
fn part3_rrp7() {
    let name = "part3-rrp7.hex";
    let m = control(name, &rrp(Address::HEY_YOU, HR_ADDRESS, 7, 0));
    assert_eq!(m, Message::WhoAreYou);
    assert_eq!(Address::HEY_YOU, Address(0xFFFE));
    assert_eq!(Address::HEY_YOU.class(), AddressClass::HeyYou);
    assert!(layout(&vector(name)).is_empty());
}

/// The printed 0x7FFF is the highest node address: the bytes parse, as an
/// RRP#7 unicast to node 0x7FFF.
#[test]
fn part3_rrp7_as_printed() {
    let name = "part3-rrp7.as-printed.hex";
    let m = control(name, &rrp(PRINTED_HEY_YOU, HR_ADDRESS, 7, 0));
    assert_eq!(m, Message::WhoAreYou);
    assert_eq!(PRINTED_HEY_YOU.class(), AddressClass::Node);
    assert_ne!(PRINTED_HEY_YOU, Address::HEY_YOU);
    assert_eq!(diff(&vector(name), &vector("part3-rrp7.hex")), [0, 1]);
}

#[test]
fn part3_rrp8() {
    let m = control("part3-rrp8.hex", &rrp(H_ADDRESS, HR_ADDRESS, 8, 0));
    assert_eq!(m, Message::RtRequest);
}

#[test]
fn part3_rrp8_as_printed() {
    let bytes = no_trailer("part3-rrp8.as-printed.hex", 16);
    assert_eq!(with_trailer(bytes), vector("part3-rrp8.hex"));
}

#[test]
fn part3_rrp9() {
    let name = "part3-rrp9.hex";
    let m = control(name, &rrp(HR_ADDRESS, H_ADDRESS, 9, 18));
    assert_eq!(
        layout(&vector(name)),
        [
            "R8 PL=0 RL=1",
            "R5 PL=2 RL=5",
            "  L2RH L=11",
            "  L2RH L=4",
            "  R6 PL=1 RL=1",
            "R7 PL=2 RL=2",
            "R1 PL=2 RL=1",
            "R2 PL=3 RL=2",
            "R3 PL=2 RL=1",
            "R4 PL=6 RL=2",
            "R5 PL=2 RL=4",
            "  L2RH L=8",
            "  L2RH L=5",
        ]
    );
    let Message::RouteTable(rt) = m else {
        panic!("{m:?}")
    };
    assert_eq!(rt.san_id, SAN_ID);
    assert_eq!(rt.sn, SN);
    assert_eq!(rt.csr.q, CSR.0);
    assert_eq!(contents(&rt.csr.route), [sr(11), sr(4)]);
    assert_eq!(rt.csr.mtu, Some(CSR.1), "MinMTU");
    assert_eq!(rt.rcvf, RCVF, "Address-1 first");
    assert_eq!(rt.nodes.len(), 1);
    let node = &rt.nodes[0];
    assert_eq!(node.info.address, NODE_X);
    assert_eq!(node.info.name.as_deref(), Some(NAME));
    assert_eq!(node.info.capabilities, [cap(C1)]);
    assert_eq!(node.info.logical.as_deref(), Some(&LOGICAL[..]));
    assert!(LOGICAL.iter().all(|a| a.is_logical()));
    assert_eq!(node.route.q, NODE_Q);
    assert_eq!(contents(&node.route.route), [sr(8), sr(5)]);
    assert_eq!(node.route.mtu, None, "node SRs carry no R6");
}

/// The printed R7 is right justified (padding first) with Address-5 first:
/// read by the R7 definition ([PAD]), its first address is the padding.
#[test]
fn part3_rrp9_as_printed() {
    let name = "part3-rrp9.as-printed.hex";
    let bytes = fails(
        name,
        Error::new(ErrorKind::IllegalAddress(0), "r7.address", 68),
    );
    // Only the R7 (bytes 64..80) differs from the corrected vector.
    let fixed = vector("part3-rrp9.hex");
    assert!(diff(&bytes, &fixed).iter().all(|&i| (64..80).contains(&i)));
    assert_eq!(&bytes[64..70], [7, 2, 0, 2, 0, 0]);
    // Read right to left, the printed addresses are the RCVF.
    let printed: Vec<Address> = bytes[70..80]
        .chunks_exact(2)
        .rev()
        .map(|c| Address(u16::from_be_bytes([c[0], c[1]])))
        .collect();
    assert_eq!(printed, RCVF);
}

#[test]
fn part3_err_unk() {
    let name = "part3-err-unk.hex";
    let m = control(name, &err(S_ADDRESS, HR_ADDRESS, 1, 1));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1"]);
    let Message::Unknown { addr } = m else {
        panic!("{m:?}")
    };
    assert_eq!(addr, UNK_ADDRESS);
}

#[test]
fn part3_err_hrdown() {
    let name = "part3-err-hrdown.hex";
    let m = control(name, &err(S_ADDRESS, HR_ADDRESS, 2, 1));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1"]);
    let Message::HrDown { hr } = m else {
        panic!("{m:?}")
    };
    assert_eq!(hr, HR_DOWN);
}

#[test]
fn part3_err_linkdown() {
    let name = "part3-err-linkdown.hex";
    let m = control(name, &err(S_ADDRESS, HR_ADDRESS, 3, 2));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1", "R1 PL=2 RL=1"]);
    let Message::LinkDown { a, b } = m else {
        panic!("{m:?}")
    };
    assert_eq!([a, b], LINK);
}

/// Length=1 with two R1s: the packet ends after the first R1, the second is
/// read as the trailer, and the message lacks its second R1.
#[test]
fn part3_err_linkdown_as_printed() {
    let name = "part3-err-linkdown.as-printed.hex";
    let bytes = fails(
        name,
        Error::new(ErrorKind::MissingRecord(1), "err.linkdown.r1", 24),
    );
    let p = PacketRepr::parse(&bytes).unwrap();
    assert_eq!(p.data.len(), 8);
    assert_eq!(p.ei, 0x0102_0001_0000_0122, "the second R1 as EI");
    let view = Packet::new_checked(&bytes[..], 0).unwrap();
    assert_eq!(view.layout().total_len(), 32);
    assert_eq!(bytes.len(), 40);
    assert_eq!(diff(&bytes, &vector("part3-err-linkdown.hex")), [11]);
}

#[test]
fn part3_err_general() {
    let name = "part3-err-general.hex";
    let m = control(name, &err(S_ADDRESS, HR_ADDRESS, 4, 4));
    let Message::General { enclosed } = m else {
        panic!("{m:?}")
    };
    // The enclosed packet is the RRP#6 example, whole.
    assert_eq!(enclosed, vector("part3-rrp6.hex"));
    let (p, inner) = Message::parse_packet(&enclosed).unwrap();
    assert_eq!(p.header.dst, HR_ADDRESS);
    assert_eq!(p.header.src, S_ADDRESS);
    assert_eq!(inner, Message::WhichHr { dst: NODE_X });
}

// ------------------------------------------------------------------ Appendix C

#[test]
fn appc_1() {
    let name = "appc-1.hex";
    let m = control(name, &rrp(RTRA1, NODE1, 4, 1));
    assert_eq!(layout(&vector(name)), ["R3 PL=2 RL=1"]);
    let Message::InfoRequest(InfoQuery::Capabilities(caps)) = m else {
        panic!("{m:?}")
    };
    assert_eq!(caps, [cap((7, &[8]))], "IEEE floating-point DSP, 64-bit");
}

#[test]
fn appc_1_as_printed() {
    let bytes = no_trailer("appc-1.as-printed.hex", 24);
    assert_eq!(with_trailer(bytes), vector("appc-1.hex"));
}

#[test]
fn appc_2() {
    let name = "appc-2.hex";
    let m = control(name, &rrp(NODE1, RTRA1, 5, 4));
    assert_eq!(
        layout(&vector(name)),
        [
            "R1 PL=2 RL=1",
            "R3 PL=1 RL=1",
            "R1 PL=2 RL=1",
            "R3 PL=1 RL=1"
        ]
    );
    let Message::Info(nodes) = m else {
        panic!("{m:?}")
    };
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0].address, NODE2);
    assert_eq!(nodes[0].name, None);
    assert_eq!(nodes[0].capabilities, [cap((7, &[4, 8]))]);
    assert_eq!(nodes[0].logical, None);
    assert_eq!(nodes[1].address, NODE3);
    assert_eq!(nodes[1].name, None);
    assert_eq!(nodes[1].capabilities, [cap((7, &[8, 4]))]);
    assert_eq!(nodes[1].logical, None);
}

/// Printed without trailer, and cap3 with PL=2 over three data bytes: with a
/// trailer the bytes parse, but the parameter 4 falls into the padding.
#[test]
fn appc_2_as_printed() {
    let printed = with_trailer(no_trailer("appc-2.as-printed.hex", 48));
    let (_, m) = Message::parse_packet(&printed).unwrap();
    let Message::Info(nodes) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(nodes[1].address, NODE3);
    assert_eq!(nodes[1].capabilities, [cap((7, &[8]))]);
    assert_eq!(printed[46], 4, "the 4, in cap3's padding");
    // Emitted again, the padding is zero; the correction is PL=1 (byte 41).
    let again = m.to_packet(NODE1, RTRA1).unwrap().to_bytes().unwrap();
    assert_eq!(diff(&printed, &again), [46]);
    assert_eq!(diff(&printed, &vector("appc-2.hex")), [41]);
}

#[test]
fn appc_3() {
    let name = "appc-3.hex";
    let m = control(name, &rrp(RTRA1, NODE1, 6, 1));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1"]);
    assert_eq!(m, Message::WhichHr { dst: NODE2 });
}

#[test]
fn appc_3_as_printed() {
    let bytes = no_trailer("appc-3.as-printed.hex", 24);
    assert_eq!(with_trailer(bytes), vector("appc-3.hex"));
}

#[test]
fn appc_4() {
    let name = "appc-4.hex";
    let m = control(name, &rrp(NODE1, RTRA1, 3, 2));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1", "R1 PL=2 RL=1"]);
    let Message::Redirect { dst, via } = m else {
        panic!("{m:?}")
    };
    assert_eq!(
        dst, NODE2,
        "the text says node3; the message is about Node2"
    );
    assert_eq!(via, RTRB1);
}

#[test]
fn appc_4_as_printed() {
    let bytes = no_trailer("appc-4.as-printed.hex", 32);
    assert_eq!(with_trailer(bytes), vector("appc-4.hex"));
}

#[test]
fn appc_5() {
    let name = "appc-5.hex";
    let m = control(name, &rrp(NODE2, NODE1, 4, 1));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1"]);
    assert_eq!(m, Message::InfoRequest(InfoQuery::Address(NODE2)));
}

#[test]
fn appc_5_as_printed() {
    let bytes = no_trailer("appc-5.as-printed.hex", 24);
    assert_eq!(with_trailer(bytes), vector("appc-5.hex"));
}

#[test]
fn appc_6() {
    let name = "appc-6.hex";
    let m = control(name, &rrp(NODE1, NODE2, 5, 5));
    assert_eq!(
        layout(&vector(name)),
        [
            "R1 PL=2 RL=1",
            "R2 PL=7 RL=2",
            "R3 PL=1 RL=1",
            "R3 PL=3 RL=1"
        ]
    );
    let Message::Info(nodes) = m else {
        panic!("{m:?}")
    };
    assert_eq!(nodes.len(), 1);
    let n = &nodes[0];
    assert_eq!(n.address, NODE2);
    assert_eq!(n.name.as_deref(), Some(&b"Super"[..]));
    assert_eq!(n.capabilities, [cap((7, &[4, 8])), cap((42, &[]))]);
    assert_eq!(n.logical, None);
    // Capability 42 is not in Appendix A5: carried through as a code.
    assert_eq!(CapabilityCode::from_code(42), None);
}

#[test]
fn appc_6_as_printed() {
    let bytes = no_trailer("appc-6.as-printed.hex", 56);
    assert_eq!(with_trailer(bytes), vector("appc-6.hex"));
}

#[test]
fn appc_7() {
    let name = "appc-7.hex";
    let m = control(name, &rrp(RTRB1, NODE1, 1, 1));
    assert_eq!(layout(&vector(name)), ["R1 PL=2 RL=1"]);
    assert_eq!(m, Message::RouteRequest { dst: NODE2 });
}

/// Printed with DA RTRA1: a request to RouterA, not to RouterB.
#[test]
fn appc_7_as_printed() {
    let printed = with_trailer(no_trailer("appc-7.as-printed.hex", 24));
    let (p, m) = Message::parse_packet(&printed).unwrap();
    assert_eq!(p.header.dst, RTRA1);
    assert_eq!(m, Message::RouteRequest { dst: NODE2 });
    assert_eq!(diff(&printed, &vector("appc-7.hex")), [1]);
}

#[test]
fn appc_8() {
    let name = "appc-8.hex";
    let m = control(name, &rrp(NODE1, RTRB1, 2, 4));
    assert_eq!(
        layout(&vector(name)),
        [
            "R1 PL=2 RL=1",
            "R5 PL=2 RL=3",
            "  L2RH L=4",
            "  R6 PL=1 RL=1"
        ]
    );
    let Message::Routes { dst, routes } = m else {
        panic!("{m:?}")
    };
    assert_eq!(dst, NODE2);
    assert_eq!(routes.len(), 1);
    let r = &routes[0];
    assert_eq!(r.q, STEP8_Q);
    assert_eq!(contents(&r.route), [vec![3, 0, MW[0], MW[1]]], "{{3,0,MW}}");
    assert_eq!(r.mtu, Some(STEP8_MTU));
    assert_eq!(r.mtu.unwrap().bytes(), Some(8 * 1024), "8 KB");
    // The content is Myrinet's (route 3 0, then the type MW); read as
    // mwrouter's router hop it would name egress 0x0300.
    let hop = RouterHop::from_content(r.route[0].content()).unwrap();
    assert_eq!(hop.egress, Address(0x0300));
    assert_eq!(hop.native, NativeAddr::from_bytes(&[3, 0]).unwrap());
}

/// Printed with SA RTRA1: an answer from RouterA, not from RouterB.
#[test]
fn appc_8_as_printed() {
    let printed = with_trailer(no_trailer("appc-8.as-printed.hex", 48));
    let (p, _) = Message::parse_packet(&printed).unwrap();
    assert_eq!(p.header.src, RTRA1);
    assert_eq!(diff(&printed, &vector("appc-8.hex")), [13]);
}

fn sensor_values(data: &[u8], decode: fn([u8; 8]) -> f64) -> Vec<u64> {
    data.chunks_exact(8)
        .map(|c| decode(c.try_into().unwrap()).to_bits())
        .collect()
}

fn sensor_bits() -> Vec<u64> {
    SENSOR.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn appc_9() {
    let bytes = vector("appc-9.hex");
    let p = PacketRepr::parse(&bytes).unwrap();
    // The L2RH that RouterB consumes.
    assert_eq!(p.l2rhs.len(), 1);
    assert_eq!(p.l2rhs[0].content(), [3, 0, MW[0], MW[1]]);
    // The EEP header.
    let view = Packet::new_checked(&bytes[..], rrp::limits::MAX_L2RHS).unwrap();
    let l = view.layout();
    assert_eq!(l.l2rh_count, 1);
    assert_eq!(l.header_offset, 8);
    assert_eq!(l.data_len, 16);
    assert_eq!(l.pad_len, 0);
    assert_eq!(l.total_len(), bytes.len());
    let h = view.header();
    assert_eq!(h.dst(), NODE2);
    assert_eq!(h.priority(), 0);
    assert_eq!(h.version(), 5);
    assert_eq!(h.packet_type(), SENSOR_PT);
    assert_eq!(h.packet_type().class(), rrp::PacketClass::User);
    assert_eq!(h.type_ext(), SENSOR_TE);
    assert_eq!(h.endian().nibble(), SENSOR_E);
    assert_eq!(h.pad_len(), 0);
    assert_eq!(h.data_words(), 2);
    assert_eq!(h.src(), NODE1);
    assert_eq!(h.free(), 0);
    assert_eq!(p.header, rrp::wire::HeaderRepr::parse(&h, 8).unwrap());
    assert_eq!(view.ei(), 0);
    assert_eq!(p.ei, 0);
    // E = 1011: little endian, 64-bit words.
    let e = p.header.endian;
    assert!(e.little);
    assert_eq!(e.swap, SwapWidth::W64);
    assert_eq!(sensor_values(&p.data, f64::from_le_bytes), sensor_bits());
    let mut swapped = p.data.clone();
    assert!(swap_in_place(&mut swapped, e.swap).unwrap());
    assert_eq!(sensor_values(&swapped, f64::from_be_bytes), sensor_bits());
    let mut host = p.data.clone();
    e.swap_to_host(&mut host).unwrap();
    assert_eq!(sensor_values(&host, f64::from_ne_bytes), sensor_bits());
    // Re-emitted byte for byte.
    assert_eq!(p.to_bytes().unwrap(), bytes);
    // RouterB consumes the L2RH and shifts EI; the EEP part is unchanged.
    let mut fwd = bytes[8..].to_vec();
    let mut v = Packet::new_checked(&mut fwd[..], 0).unwrap();
    v.set_ei(shift_ei(v.ei(), false));
    assert_eq!(v.ei(), 0);
    let q = PacketRepr::parse(&fwd).unwrap();
    assert!(q.l2rhs.is_empty());
    assert_eq!((q.header, &q.data, q.ei), (p.header, &p.data, 0));
    let mut v = Packet::new_checked(&mut fwd[..], 0).unwrap();
    v.set_ei(shift_ei(v.ei(), true));
    assert_eq!(v.ei(), 1);
}

/// E=3 (0011) is big endian with 64-bit swapping, not "Little Endian 64-bit".
#[test]
fn appc_9_as_printed() {
    let bytes = vector("appc-9.as-printed.hex");
    let p = PacketRepr::parse(&bytes).unwrap();
    assert_eq!(p.to_bytes().unwrap(), bytes);
    let e = p.header.endian;
    assert_eq!(e.nibble(), 3);
    assert_eq!(e, Endian::from_nibble(3));
    assert!(!e.little, "MSbit 0: big endian");
    assert_eq!(e.swap, SwapWidth::W64);
    let mut host = p.data.clone();
    e.swap_to_host(&mut host).unwrap();
    assert_ne!(sensor_values(&host, f64::from_ne_bytes), sensor_bits());
    // Only the E nibble differs from the corrected vector (byte 16: E, PL).
    assert_eq!(diff(&bytes, &vector("appc-9.hex")), [16]);
    assert_eq!((bytes[16], vector("appc-9.hex")[16]), (0x30, 0xB0));
}

// ------------------------------------------------------------------ the values table

/// The values of the table are distinct where the draft's names are, and in
/// the node range (0x0040-0x7FFF).
#[test]
fn chosen_values() {
    let nodes = [
        S_ADDRESS,
        NODE_X,
        HR_ADDRESS,
        H_ADDRESS,
        UNK_ADDRESS,
        HR_DOWN,
        SAN_ID,
        NODE1,
        NODE2,
        NODE3,
        RTRA1,
        RTRA3,
        RTRB1,
        RTRB2,
    ];
    assert!(nodes.iter().chain(&RCVF).chain(&SAN).all(|a| a.is_node()));
    let appc: BTreeSet<Address> = [NODE1, NODE2, NODE3, RTRA1, RTRA3, RTRB1, RTRB2]
        .into_iter()
        .chain(SAN)
        .collect();
    assert_eq!(appc.len(), 10);
    // Part-3 reuses the Appendix C network: S = Node1, X = Node2, HR = RTRA1, H = RTRB1.
    assert_eq!(
        [S_ADDRESS, NODE_X, HR_ADDRESS, H_ADDRESS],
        [NODE1, NODE2, RTRA1, RTRB1]
    );
    assert_eq!(LINK, [RTRB1, RTRB2]);
    assert_eq!(HR_DOWN, RTRB2);
}
