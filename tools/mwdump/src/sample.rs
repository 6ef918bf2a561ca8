//! The sample capture `examples/sample.pcap`: a set of varied MessageWay
//! frames on Ethernet, built through rrp's emit APIs. The file is generated
//! by `cargo run -p mwdump --example make_sample_capture -- examples/sample.pcap`,
//! and a test checks that the checked-in file is exactly what
//! [`sample_capture`] makes, so this code stays its source of truth.
//!
//! Addresses follow Appendix C, remapped into the legal range
//! (docs/spec-notes.md): Node1 0x0101, Node2 0x0102, Node3 0x0103, RouterA's
//! HRs RTRA1 0x0111 (SAN1) and RTRA3 0x0113 (SAN3), RouterB's HRs RTRB1
//! 0x0121 (SAN1) and RTRB2 0x0122 (SAN2); SAN-IDs 0x0201-0x0203.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use rrp::NativeAddr;
use rrp::encap;
use rrp::wire::{
    Capability, InfoQuery, Message, Mtu, NodeInfo, PacketRepr, RouteTable, RouterHop, RtNode,
    RtPart, SourceRoute,
};
use rrp::{Address, Endian, PacketType, SwapWidth};

use crate::capture::PcapWriter;

/// Seconds of the first frame's timestamp: 2024-01-01T00:00:00Z.
pub const START_SEC: u32 = 1_704_067_200;

/// Node1.
pub const NODE1: Address = Address(0x0101);
/// Node2.
pub const NODE2: Address = Address(0x0102);
/// Node3.
pub const NODE3: Address = Address(0x0103);
/// RouterA's HR on SAN1.
pub const RTRA1: Address = Address(0x0111);
/// RouterA's HR on SAN3.
pub const RTRA3: Address = Address(0x0113);
/// RouterB's HR on SAN1.
pub const RTRB1: Address = Address(0x0121);
/// RouterB's HR on SAN2.
pub const RTRB2: Address = Address(0x0122);
/// SAN1's SAN-ID.
pub const SAN1: Address = Address(0x0201);
/// SAN2's SAN-ID.
pub const SAN2: Address = Address(0x0202);

/// The MAC of the station with MessageWay address `a`: 02:00:00:00:hi:lo.
pub fn mac(a: Address) -> [u8; 6] {
    let [hi, lo] = a.0.to_be_bytes();
    [2, 0, 0, 0, hi, lo]
}

const BROADCAST_MAC: [u8; 6] = [0xFF; 6];

/// One frame of the sample and what it is meant to show.
#[derive(Debug, Clone)]
pub struct SampleFrame {
    /// The `kind` mwdump reports for it.
    pub kind: &'static str,
    /// What the frame shows.
    pub note: &'static str,
    /// The Ethernet frame.
    pub frame: Vec<u8>,
}

fn eth(dst: [u8; 6], src: [u8; 6], vlan: Option<u16>, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(64 + payload.len());
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    if let Some(tci) = vlan {
        f.extend_from_slice(&0x8100u16.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    // A NIC pads short frames to the minimum (FCS excluded).
    if f.len() < encap::ETH_MIN_FRAME {
        f.resize(encap::ETH_MIN_FRAME, 0);
    }
    f
}

fn mw_eth(dst: Address, src: Address, p: &PacketRepr) -> Vec<u8> {
    eth(mac(dst), mac(src), None, encap::ETHERTYPE, &bytes(p))
}

fn bytes(p: &PacketRepr) -> Vec<u8> {
    p.to_bytes().expect("sample packets fit their fields")
}

fn msg(m: Message, dst: Address, src: Address) -> PacketRepr {
    m.to_packet(dst, src).expect("sample messages fit")
}

fn checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum: u32 = 0;
    for c in chunks {
        for pair in c.chunks(2) {
            let w = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
            sum += u32::from(w);
        }
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

fn udp_header(src: u16, dst: u16, payload: &[u8]) -> [u8; 8] {
    let len = (8 + payload.len()) as u16;
    let mut h = [0u8; 8];
    h[0..2].copy_from_slice(&src.to_be_bytes());
    h[2..4].copy_from_slice(&dst.to_be_bytes());
    h[4..6].copy_from_slice(&len.to_be_bytes());
    h
}

/// IPv4 + UDP datagram carrying `payload`, with both checksums.
fn udp4(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
    let (SocketAddr::V4(s), SocketAddr::V4(d)) = (src, dst) else {
        panic!("IPv4 endpoints");
    };
    let mut udp = udp_header(s.port(), d.port(), payload);
    let len = (8 + payload.len()) as u16;
    let pseudo = [
        &s.ip().octets()[..],
        &d.ip().octets()[..],
        &[0, 17],
        &len.to_be_bytes(),
    ]
    .concat();
    let c = checksum(&[&pseudo, &udp, payload]);
    udp[6..8].copy_from_slice(&(if c == 0 { 0xFFFF } else { c }).to_be_bytes());
    let total = 20 + 8 + payload.len();
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&(total as u16).to_be_bytes());
    ip.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, 64, 17, 0, 0]);
    ip.extend_from_slice(&s.ip().octets());
    ip.extend_from_slice(&d.ip().octets());
    let c = checksum(&[&ip]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    ip.extend_from_slice(&udp);
    ip.extend_from_slice(payload);
    ip
}

/// IPv6 + UDP datagram carrying `payload`, with the UDP checksum.
fn udp6(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
    let (SocketAddr::V6(s), SocketAddr::V6(d)) = (src, dst) else {
        panic!("IPv6 endpoints");
    };
    let mut udp = udp_header(s.port(), d.port(), payload);
    let len = (8 + payload.len()) as u32;
    let pseudo = [
        &s.ip().octets()[..],
        &d.ip().octets()[..],
        &len.to_be_bytes(),
        &[0, 0, 0, 17],
    ]
    .concat();
    let c = checksum(&[&pseudo, &udp, payload]);
    udp[6..8].copy_from_slice(&(if c == 0 { 0xFFFF } else { c }).to_be_bytes());
    let mut ip = vec![0x60, 0, 0, 0];
    ip.extend_from_slice(&(len as u16).to_be_bytes());
    ip.extend_from_slice(&[17, 64]);
    ip.extend_from_slice(&s.ip().octets());
    ip.extend_from_slice(&d.ip().octets());
    ip.extend_from_slice(&udp);
    ip.extend_from_slice(payload);
    ip
}

fn v4(a: [u8; 4], port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::from(a), port))
}

fn v6(last: u16, port: u16) -> SocketAddr {
    SocketAddr::from((Ipv6Addr::new(0xfd00, 1, 0, 0, 0, 0, 0, last), port))
}

fn hop_mac(egress: Address, to: Address) -> RouterHop {
    RouterHop::new(egress, NativeAddr::mac(mac(to)))
}

fn cap(code: u8, params: &[u8]) -> Capability {
    Capability {
        code,
        params: params.to_vec(),
    }
}

/// The frames of the sample capture, in order.
pub fn sample_frames() -> Vec<SampleFrame> {
    let mut out = Vec::new();
    let mut push = |kind, note, frame| out.push(SampleFrame { kind, note, frame });

    // Appendix C (1): Node1 asks RouterA for 64-bit floating-point DSPs.
    let p = msg(
        Message::InfoRequest(InfoQuery::Capabilities(vec![cap(7, &[8])])),
        RTRA1,
        NODE1,
    );
    push("RRP#4", "capability query", mw_eth(RTRA1, NODE1, &p));

    // Appendix C (6): Node2 describes itself; a second node has a name that is not text.
    let p = msg(
        Message::Info(vec![
            NodeInfo {
                address: NODE2,
                name: Some(b"Super".to_vec()),
                capabilities: vec![cap(7, &[4, 8]), cap(42, &[])],
                logical: Some(vec![Address(0x8001), Address(0x8002)]),
            },
            NodeInfo {
                address: NODE3,
                name: Some(vec![0x4E, 0x00, 0xFF]),
                capabilities: vec![cap(7, &[8, 4])],
                logical: None,
            },
        ]),
        NODE1,
        NODE2,
    );
    push(
        "RRP#5",
        "two nodes: name, capabilities, logical addresses",
        mw_eth(NODE1, RTRB1, &p),
    );

    let p = msg(Message::WhichHr { dst: NODE2 }, RTRA1, NODE1);
    push("RRP#6", "which HR for Node2", mw_eth(RTRA1, NODE1, &p));

    let p = msg(
        Message::Redirect {
            dst: NODE2,
            via: RTRB1,
        },
        NODE1,
        RTRA1,
    );
    push("RRP#3", "redirect via RouterB", mw_eth(NODE1, RTRA1, &p));

    let p = msg(Message::RouteRequest { dst: NODE2 }, RTRB1, NODE1);
    push("RRP#1", "route request", mw_eth(RTRB1, NODE1, &p));

    // Two routes: one router hop with an MTU; a native hop then a router hop
    // to a UDP SAN, without an MTU.
    let p = msg(
        Message::Routes {
            dst: NODE2,
            routes: vec![
                SourceRoute {
                    q: 2,
                    route: vec![hop_mac(RTRB2, NODE2).to_l2rh()],
                    mtu: Some(Mtu(1024)),
                },
                SourceRoute {
                    q: 5,
                    route: vec![
                        hop_mac(Address(0), RTRA1).to_l2rh(),
                        RouterHop::new(RTRA3, NativeAddr::udp(v4([10, 3, 0, 2], 34997))).to_l2rh(),
                    ],
                    mtu: None,
                },
            ],
        },
        NODE1,
        RTRB1,
    );
    push(
        "RRP#2",
        "two routes with Q and MTU",
        mw_eth(NODE1, RTRB1, &p),
    );

    let p = msg(Message::WhoAreYou, Address::HEY_YOU, RTRA1);
    push(
        "RRP#7",
        "Hey-You on the Ethernet broadcast address",
        eth(
            BROADCAST_MAC,
            mac(RTRA1),
            None,
            encap::ETHERTYPE,
            &bytes(&p),
        ),
    );

    let p = msg(Message::RtRequest, RTRB1, RTRA1);
    push(
        "RRP#8",
        "in an 802.1Q VLAN (vid 7, pcp 5)",
        eth(
            mac(RTRB1),
            mac(RTRA1),
            Some((5 << 13) | 7),
            encap::ETHERTYPE,
            &bytes(&p),
        ),
    );

    // RouterB tells RouterA about SAN2: part 1 of 2, a CSR of router hops.
    let mut p = msg(
        Message::RouteTable(RouteTable {
            san_id: SAN2,
            sn: 0x1234,
            csr: SourceRoute {
                q: 3,
                route: vec![
                    RouterHop::new(RTRA3, NativeAddr::udp(v4([10, 3, 0, 2], 34997))).to_l2rh(),
                    RouterHop::new(RTRB2, NativeAddr::none()).to_l2rh(),
                ],
                mtu: Some(Mtu(1024)),
            },
            rcvf: vec![RTRB2, RTRA3],
            nodes: vec![
                RtNode {
                    info: NodeInfo {
                        address: NODE2,
                        name: Some(b"Super".to_vec()),
                        capabilities: vec![cap(7, &[4, 8])],
                        logical: Some(vec![Address(0x8001)]),
                    },
                    route: SourceRoute {
                        q: 1,
                        route: vec![hop_mac(Address(0), NODE2).to_l2rh()],
                        mtu: None,
                    },
                },
                RtNode {
                    info: NodeInfo {
                        address: Address(0x0104),
                        ..NodeInfo::default()
                    },
                    route: SourceRoute {
                        q: 1,
                        route: vec![hop_mac(Address(0), Address(0x0104)).to_l2rh()],
                        mtu: None,
                    },
                },
                RtNode {
                    info: NodeInfo {
                        address: RTRB2,
                        name: None,
                        capabilities: vec![cap(2, &[0x02, 0x01, 0x02, 0x02])],
                        logical: None,
                    },
                    route: SourceRoute::default(),
                },
            ],
        }),
        RTRA1,
        RTRB1,
    );
    p.header.free = RtPart { index: 1, count: 2 }.to_free();
    push(
        "RRP#9",
        "route table, part 1 of 2, CSR of router hops, RCVF, three nodes",
        mw_eth(RTRA1, RTRB1, &p),
    );

    let p = msg(
        Message::Unknown {
            addr: Address(0x0105),
        },
        NODE1,
        RTRA1,
    );
    push("ERR UNK", "destination unknown", mw_eth(NODE1, RTRA1, &p));

    let p = msg(Message::HrDown { hr: RTRB2 }, NODE1, RTRA1);
    push("ERR HRDOWN", "HR down", mw_eth(NODE1, RTRA1, &p));

    let p = msg(Message::LinkDown { a: RTRA3, b: RTRB2 }, NODE1, RTRA1);
    push("ERR LINKDOWN", "link down", mw_eth(NODE1, RTRA1, &p));

    // An L2 data packet with two router hops: to Node2 on SAN2 through
    // RouterB, then on to a UDP SAN behind another router. EI shows that one
    // router flagged an error.
    let mut l2 = PacketRepr {
        l2rhs: vec![
            hop_mac(RTRB2, NODE2).to_l2rh(),
            RouterHop::new(Address(0x0131), NativeAddr::udp(v6(0x31, 34997))).to_l2rh(),
        ],
        header: rrp::wire::HeaderRepr {
            dst: Address(0x0106),
            priority: 3,
            packet_type: PacketType(0x0100),
            type_ext: 1,
            src: NODE1,
            ..Default::default()
        },
        data: b"hello, MessageWay".to_vec(),
        ei: 0b10,
    };

    // ERR GENERAL encloses the first 60 bytes of that L2 packet: both L2RHs,
    // the EEP header and the first 4 data bytes.
    let enclosed = bytes(&l2)[..60].to_vec();
    let p = msg(Message::General { enclosed }, NODE1, RTRB1);
    push(
        "ERR GENERAL",
        "encloses the truncated start of an L2 packet",
        mw_eth(NODE1, RTRB1, &p),
    );

    push(
        "USER",
        "L2 packet with two router-hop L2RHs and EI 0b10",
        mw_eth(RTRB1, NODE1, &l2),
    );
    l2.l2rhs.clear();

    // A plain L3 packet of 32 bytes: the frame is padded to 60.
    let small = PacketRepr {
        l2rhs: vec![],
        header: rrp::wire::HeaderRepr {
            dst: NODE2,
            packet_type: PacketType(0x0100),
            type_ext: 2,
            src: NODE1,
            ..Default::default()
        },
        data: b"ping".to_vec(),
        ei: 0,
    };
    push(
        "USER",
        "L3 packet shorter than 60 bytes: Ethernet padding",
        mw_eth(RTRA1, NODE1, &small),
    );

    // Sensor data in little-endian 64-bit words (E = 0xB).
    let mut data = Vec::new();
    for v in [1u64, 0x0102_0304_0506_0708, u64::MAX - 1] {
        data.extend_from_slice(&v.to_le_bytes());
    }
    let le = PacketRepr {
        l2rhs: vec![],
        header: rrp::wire::HeaderRepr {
            dst: NODE2,
            priority: 0x80,
            packet_type: PacketType(0x0101),
            type_ext: 7,
            endian: Endian {
                little: true,
                swap: SwapWidth::W64,
            },
            src: NODE1,
            free: 0xBEEF,
        },
        data,
        ei: 0,
    };
    push(
        "USER",
        "little-endian 64-bit data (E = 0xb)",
        mw_eth(RTRA1, NODE1, &le),
    );

    // MessageWay over UDP: IPv4 inside Ethernet, IPv6 inside Ethernet.
    let p = msg(Message::RouteRequest { dst: NODE3 }, RTRA1, NODE1);
    let dgram = udp4(
        v4([10, 1, 0, 1], 40000),
        v4([10, 1, 0, 17], 34997),
        &bytes(&p),
    );
    push(
        "RRP#1",
        "over UDP/IPv4 port 34997",
        eth(mac(RTRA1), mac(NODE1), None, 0x0800, &dgram),
    );
    let p = msg(
        Message::Unknown {
            addr: Address(0x0107),
        },
        NODE1,
        RTRA1,
    );
    let dgram = udp6(v6(0x11, 34997), v6(0x01, 34997), &bytes(&p));
    push(
        "ERR UNK",
        "over UDP/IPv6 port 34997",
        eth(mac(NODE1), mac(RTRA1), None, 0x86DD, &dgram),
    );

    out
}

/// Timestamp of frame `i` (0-based): one second apart, with a fraction.
pub fn timestamp(i: usize) -> (u32, u32) {
    (START_SEC + i as u32, (i as u32) * 1_250)
}

/// The sample capture's bytes (pcap, LINKTYPE_ETHERNET, microseconds).
pub fn sample_capture() -> Vec<u8> {
    let mut w = PcapWriter::in_memory(encap::LINKTYPE_ETHERNET);
    for (i, f) in sample_frames().iter().enumerate() {
        let (sec, usec) = timestamp(i);
        w.push(sec, usec, &f.frame);
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{FrameInput, decode_frame};
    use crate::link::Link;
    use crate::model::Report;

    fn decode_all_ways(data: &[u8]) {
        for link in [Link::Raw, Link::Eth, Link::Udp] {
            for allow_skip in [false, true] {
                let r = decode_frame(&FrameInput {
                    index: 1,
                    timestamp: None,
                    linktype: None,
                    link,
                    orig_len: None,
                    data,
                    allow_skip,
                });
                // Rendering and serializing never fail either.
                let _ = crate::text::render(&r);
                serde_json::to_string(&r).expect("serializes");
                if let Report::Packet(p) = &r {
                    assert_eq!(p.packet_offset + p.packet_len + p.padding_len, data.len());
                }
            }
        }
    }

    #[test]
    fn every_sample_frame_is_what_it_says() {
        for (i, f) in sample_frames().iter().enumerate() {
            let r = decode_frame(&FrameInput {
                index: i as u64 + 1,
                timestamp: None,
                linktype: Some(1),
                link: Link::Eth,
                orig_len: None,
                data: &f.frame,
                allow_skip: false,
            });
            match r {
                Report::Packet(p) => assert_eq!(p.kind, f.kind, "{}", f.note),
                other => panic!("frame {}: {other:?}", i + 1),
            }
            assert!(f.frame.len() >= encap::ETH_MIN_FRAME);
        }
    }

    #[test]
    fn no_panic_on_prefixes_and_mutations() {
        let mut rng = rrp::rng::Rng::new(1);
        for f in sample_frames() {
            for n in 0..=f.frame.len() {
                decode_all_ways(&f.frame[..n]);
                decode_all_ways(&f.frame[14.min(n)..n]);
            }
            for _ in 0..100 {
                let mut m = f.frame.clone();
                for _ in 0..1 + rng.next_u64() % 4 {
                    let at = (rng.next_u64() as usize) % m.len();
                    m[at] = rng.next_u64() as u8;
                }
                decode_all_ways(&m);
                decode_all_ways(&m[14..]);
            }
        }
        let cap = sample_capture();
        for n in 0..cap.len() {
            let _ = crate::capture::read(&cap[..n]);
        }
        for _ in 0..500 {
            let mut m = cap.clone();
            let at = (rng.next_u64() as usize) % m.len();
            m[at] = rng.next_u64() as u8;
            if let Ok(c) = crate::capture::read(&m) {
                for fr in &c.frames {
                    decode_all_ways(&fr.data);
                }
            }
        }
    }
}
