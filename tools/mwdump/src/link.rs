//! Link layers around a MessageWay packet: bare, Ethernet II (EtherType
//! 0x88B5, one VLAN tag allowed, or IP/UDP inside), and IPv4/IPv6 + UDP on
//! port 34997 (docs/architecture.md "Wire"; `rrp::encap`).
//!
//! [`locate`] finds the bytes that hold the MessageWay packet. The packet's
//! own end comes later from its Data Length (`rrp::wire::locate`); whatever
//! follows it in the frame is padding.

use std::net::{Ipv4Addr, Ipv6Addr};

use rrp::encap;
use rrp::wire::bytes::be16;
use serde::Serialize;

use crate::hex;

/// How the bytes of a frame are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Link {
    /// A bare MessageWay packet (LINKTYPE_USER0, 147).
    Raw,
    /// An Ethernet II frame (LINKTYPE_ETHERNET, 1).
    Eth,
    /// An IPv4 or IPv6 header, a UDP header, then the packet
    /// (LINKTYPE_RAW 101, LINKTYPE_IPV4 228, LINKTYPE_IPV6 229).
    Udp,
}

impl Link {
    /// The link of a pcap link type, if mwdump reads it.
    pub fn from_linktype(linktype: u32) -> Option<Link> {
        match linktype {
            encap::LINKTYPE_MESSAGEWAY => Some(Link::Raw),
            encap::LINKTYPE_ETHERNET => Some(Link::Eth),
            encap::LINKTYPE_RAW | encap::LINKTYPE_IPV4 | encap::LINKTYPE_IPV6 => Some(Link::Udp),
            _ => None,
        }
    }

    /// `"raw"`, `"eth"` or `"udp"`, as on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Link::Raw => "raw",
            Link::Eth => "eth",
            Link::Udp => "udp",
        }
    }
}

/// The headers in front of the MessageWay packet, as far as they were read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Encap {
    /// The Ethernet header, for Ethernet frames.
    pub eth: Option<EthInfo>,
    /// The IP header, for MessageWay over UDP.
    pub ip: Option<IpInfo>,
    /// The UDP header, for MessageWay over UDP.
    pub udp: Option<UdpInfo>,
}

/// An Ethernet II header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthInfo {
    /// Destination MAC, `"02:00:00:00:00:07"`.
    pub dst: String,
    /// Source MAC.
    pub src: String,
    /// The VLAN tag, if there is one.
    pub vlan: Option<VlanInfo>,
    /// The EtherType after the tag (0x88B5 = 34997 for MessageWay).
    pub ethertype: u16,
}

/// An 802.1Q (or 802.1ad) tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VlanInfo {
    /// Tag protocol identifier (0x8100 or 0x88A8).
    pub tpid: u16,
    /// Priority code point, 0..=7.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0..=4095.
    pub vid: u16,
}

/// An IPv4 or IPv6 header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpInfo {
    /// 4 or 6.
    pub version: u8,
    /// Source address, text.
    pub src: String,
    /// Destination address, text.
    pub dst: String,
    /// Protocol (IPv4) or the last next-header value (IPv6): 17 for UDP.
    pub protocol: u8,
    /// TTL (IPv4) or hop limit (IPv6).
    pub ttl: u8,
    /// Bytes of the IP packet, header included.
    pub len: usize,
}

/// A UDP header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UdpInfo {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// The UDP length field: header and payload bytes.
    pub len: usize,
    /// The checksum field as sent (not verified).
    pub checksum: u16,
}

/// Where the MessageWay packet may lie in a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The headers in front of it.
    pub encap: Encap,
    /// Offset of the packet's first byte in the frame.
    pub start: usize,
    /// End of the bytes that may hold the packet (the UDP payload's end, or
    /// the frame's end).
    pub end: usize,
}

/// Why a frame does not lead to a MessageWay packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Well formed, but not MessageWay (another EtherType, protocol or
    /// port), or a form mwdump does not take apart (IP fragments, stacked
    /// VLAN tags): a capture skips it.
    pub skip: bool,
    /// The header field, e.g. `"eth.type"` or `"udp.len"`.
    pub field: &'static str,
    /// Byte offset of the field in the frame.
    pub offset: usize,
    /// A short snake_case class: `truncated`, `malformed`, `not_messageway`, `unsupported`.
    pub kind: &'static str,
    /// What is wrong.
    pub message: String,
}

fn truncated(field: &'static str, offset: usize, needed: usize, available: usize) -> Problem {
    Problem {
        skip: false,
        field,
        offset,
        kind: "truncated",
        message: format!("truncated: needs {needed} bytes, {available} left"),
    }
}

fn problem(
    skip: bool,
    field: &'static str,
    offset: usize,
    kind: &'static str,
    message: String,
) -> Problem {
    Problem {
        skip,
        field,
        offset,
        kind,
        message,
    }
}

/// Finds the MessageWay packet's bytes in `frame` read as `link`. On failure
/// the headers read so far come back with the problem.
pub fn locate(link: Link, frame: &[u8]) -> Result<Located, Box<(Encap, Problem)>> {
    let mut encap = Encap::default();
    let r = match link {
        Link::Raw => Ok((0, frame.len())),
        Link::Eth => eth(frame, &mut encap),
        Link::Udp => ip_udp(frame, 0, frame.len(), &mut encap),
    };
    match r {
        Ok((start, end)) => Ok(Located { encap, start, end }),
        Err(p) => Err(Box::new((encap, p))),
    }
}

fn eth(f: &[u8], encap: &mut Encap) -> Result<(usize, usize), Problem> {
    if f.len() < encap::ETH_HEADER_LEN {
        return Err(truncated("eth", 0, encap::ETH_HEADER_LEN, f.len()));
    }
    let mut info = EthInfo {
        dst: hex::colons(&f[0..6]),
        src: hex::colons(&f[6..12]),
        vlan: None,
        ethertype: be16(f, 12),
    };
    let mut off = 12;
    if matches!(info.ethertype, 0x8100 | 0x88A8) {
        if f.len() < 18 {
            encap.eth = Some(info);
            return Err(truncated("eth.vlan", 12, 6, f.len() - 12));
        }
        let tci = be16(f, 14);
        info.vlan = Some(VlanInfo {
            tpid: info.ethertype,
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0FFF,
        });
        off = 16;
        info.ethertype = be16(f, 16);
    }
    let et = info.ethertype;
    encap.eth = Some(info);
    let payload = off + 2;
    match et {
        encap::ETHERTYPE => Ok((payload, f.len())),
        0x0800 | 0x86DD => ip_udp(f, payload, f.len(), encap),
        0x8100 | 0x88A8 => Err(problem(
            true,
            "eth.type",
            off,
            "unsupported",
            "stacked VLAN tags are not supported".into(),
        )),
        t if t < 0x0600 => Err(problem(
            true,
            "eth.type",
            off,
            "not_messageway",
            format!("802.3 length field {t}, not an Ethernet II frame"),
        )),
        t => Err(problem(
            true,
            "eth.type",
            off,
            "not_messageway",
            format!("EtherType 0x{t:04x} is not MessageWay (0x88b5) nor IP"),
        )),
    }
}

fn ip_udp(f: &[u8], off: usize, end: usize, encap: &mut Encap) -> Result<(usize, usize), Problem> {
    let Some(&first) = f.get(off) else {
        return Err(truncated("ip", off, 1, 0));
    };
    let avail = end - off;
    let (udp_off, ip_end) = match first >> 4 {
        4 => {
            if avail < 20 {
                return Err(truncated("ip", off, 20, avail));
            }
            let ihl = usize::from(first & 0x0F) * 4;
            if ihl < 20 {
                return Err(problem(
                    false,
                    "ip.ihl",
                    off,
                    "malformed",
                    format!("IPv4 header length {ihl} below 20"),
                ));
            }
            let total = usize::from(be16(f, off + 2));
            encap.ip = Some(IpInfo {
                version: 4,
                src: Ipv4Addr::from(<[u8; 4]>::try_from(&f[off + 12..off + 16]).expect("4"))
                    .to_string(),
                dst: Ipv4Addr::from(<[u8; 4]>::try_from(&f[off + 16..off + 20]).expect("4"))
                    .to_string(),
                protocol: f[off + 9],
                ttl: f[off + 8],
                len: total,
            });
            if total < ihl {
                return Err(problem(
                    false,
                    "ip.len",
                    off + 2,
                    "malformed",
                    format!("IPv4 total length {total} below the header length {ihl}"),
                ));
            }
            if total > avail {
                return Err(truncated("ip.len", off + 2, total, avail));
            }
            let frag = be16(f, off + 6);
            if frag & 0x3FFF != 0 {
                return Err(problem(
                    true,
                    "ip.frag",
                    off + 6,
                    "unsupported",
                    "IPv4 fragment (not reassembled)".into(),
                ));
            }
            if f[off + 9] != 17 {
                return Err(problem(
                    true,
                    "ip.protocol",
                    off + 9,
                    "not_messageway",
                    format!("IP protocol {} is not UDP", f[off + 9]),
                ));
            }
            (off + ihl, off + total)
        }
        6 => {
            if avail < 40 {
                return Err(truncated("ip", off, 40, avail));
            }
            let plen = usize::from(be16(f, off + 4));
            let mut nh = f[off + 6];
            let addr = |at: usize| {
                Ipv6Addr::from(<[u8; 16]>::try_from(&f[at..at + 16]).expect("16")).to_string()
            };
            let mut info = IpInfo {
                version: 6,
                src: addr(off + 8),
                dst: addr(off + 24),
                protocol: nh,
                ttl: f[off + 7],
                len: 40 + plen,
            };
            if 40 + plen > avail {
                encap.ip = Some(info);
                return Err(truncated("ip.len", off + 4, 40 + plen, avail));
            }
            let ip_end = off + 40 + plen;
            let mut at = off + 40;
            // Hop-by-hop, routing and destination options may precede UDP.
            while matches!(nh, 0 | 43 | 60) {
                if ip_end - at < 8 {
                    encap.ip = Some(info);
                    return Err(truncated("ip.ext", at, 8, ip_end - at));
                }
                let len = (usize::from(f[at + 1]) + 1) * 8;
                if ip_end - at < len {
                    encap.ip = Some(info);
                    return Err(truncated("ip.ext", at, len, ip_end - at));
                }
                nh = f[at];
                at += len;
            }
            info.protocol = nh;
            encap.ip = Some(info);
            if nh == 44 {
                return Err(problem(
                    true,
                    "ip.frag",
                    at,
                    "unsupported",
                    "IPv6 fragment (not reassembled)".into(),
                ));
            }
            if nh != 17 {
                return Err(problem(
                    true,
                    "ip.next_header",
                    off + 6,
                    "not_messageway",
                    format!("IPv6 next header {nh} is not UDP"),
                ));
            }
            (at, ip_end)
        }
        v => {
            return Err(problem(
                false,
                "ip.version",
                off,
                "malformed",
                format!("IP version {v}, expected 4 or 6"),
            ));
        }
    };
    if ip_end - udp_off < 8 {
        return Err(truncated("udp", udp_off, 8, ip_end - udp_off));
    }
    let info = UdpInfo {
        src_port: be16(f, udp_off),
        dst_port: be16(f, udp_off + 2),
        len: usize::from(be16(f, udp_off + 4)),
        checksum: be16(f, udp_off + 6),
    };
    let (sp, dp, len) = (info.src_port, info.dst_port, info.len);
    encap.udp = Some(info);
    if len < 8 || len > ip_end - udp_off {
        return Err(problem(
            false,
            "udp.len",
            udp_off + 4,
            "malformed",
            format!(
                "UDP length {len} does not fit the IP payload of {} bytes",
                ip_end - udp_off
            ),
        ));
    }
    if sp != encap::UDP_PORT && dp != encap::UDP_PORT {
        return Err(problem(
            true,
            "udp.port",
            udp_off,
            "not_messageway",
            format!(
                "UDP ports {sp} > {dp}: neither is MessageWay's {}",
                encap::UDP_PORT
            ),
        ));
    }
    Ok((udp_off + 8, udp_off + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eth_frame(ethertype: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn udp4(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
        let total = 28 + payload.len();
        let mut f = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            17,
            0,
            0,
        ];
        f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn ethernet_with_and_without_vlan() {
        let f = eth_frame(0x88B5, &[1, 2, 3]);
        let l = locate(Link::Eth, &f).unwrap();
        assert_eq!((l.start, l.end), (14, 17));
        let e = l.encap.eth.unwrap();
        assert_eq!(e.dst, "02:00:00:00:00:02");
        assert_eq!(e.ethertype, 0x88B5);
        let mut tagged = eth_frame(0x8100, &[0xA0, 0x07, 0x88, 0xB5, 9]);
        let l = locate(Link::Eth, &tagged).unwrap();
        assert_eq!(l.start, 18);
        let v = l.encap.eth.unwrap().vlan.unwrap();
        assert_eq!((v.pcp, v.dei, v.vid), (5, false, 7));
        tagged[16] = 0x81;
        tagged[17] = 0x00;
        assert!(locate(Link::Eth, &tagged).unwrap_err().1.skip);
        let p = locate(Link::Eth, &eth_frame(0x0806, &[])).unwrap_err().1;
        assert!(p.skip);
        assert_eq!((p.field, p.offset), ("eth.type", 12));
        let p = locate(Link::Eth, &[0; 10]).unwrap_err().1;
        assert_eq!((p.field, p.kind, p.skip), ("eth", "truncated", false));
    }

    #[test]
    fn udp_over_ipv4_in_ethernet_with_padding() {
        let mut f = eth_frame(0x0800, &udp4(1000, 34997, &[7; 4]));
        f.resize(60, 0);
        let l = locate(Link::Eth, &f).unwrap();
        assert_eq!((l.start, l.end), (14 + 28, 14 + 32));
        assert_eq!(l.encap.ip.as_ref().unwrap().src, "10.0.0.1");
        assert_eq!(l.encap.udp.as_ref().unwrap().dst_port, 34997);
        // Source port alone is enough.
        assert!(locate(Link::Udp, &udp4(34997, 9, &[])).is_ok());
        let p = locate(Link::Udp, &udp4(53, 9, &[])).unwrap_err().1;
        assert_eq!((p.field, p.skip), ("udp.port", true));
        let mut bad = udp4(1, 34997, &[1, 2]);
        bad[25] = 50; // UDP length beyond the IP payload
        let p = locate(Link::Udp, &bad).unwrap_err().1;
        assert_eq!((p.field, p.offset, p.skip), ("udp.len", 24, false));
        let p = locate(Link::Udp, &udp4(1, 34997, &[1, 2])[..25])
            .unwrap_err()
            .1;
        assert_eq!((p.field, p.kind), ("ip.len", "truncated"));
        let p = locate(Link::Udp, &[0x35, 0]).unwrap_err().1;
        assert_eq!(p.field, "ip.version");
    }

    #[test]
    fn udp_over_ipv6_with_an_extension_header() {
        let payload = [1u8, 2, 3, 4];
        let mut f = vec![0x60, 0, 0, 0];
        f.extend_from_slice(&((8 + 8 + payload.len()) as u16).to_be_bytes());
        f.push(60); // destination options
        f.push(64);
        f.extend_from_slice(&[0xFD; 16]);
        f.extend_from_slice(&[0xFE; 16]);
        f.extend_from_slice(&[17, 0, 1, 4, 0, 0, 0, 0]);
        f.extend_from_slice(&34997u16.to_be_bytes());
        f.extend_from_slice(&34997u16.to_be_bytes());
        f.extend_from_slice(&12u16.to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(&payload);
        let l = locate(Link::Udp, &f).unwrap();
        assert_eq!((l.start, l.end), (56, 60));
        let ip = l.encap.ip.unwrap();
        assert_eq!((ip.version, ip.protocol), (6, 17));
        assert!(ip.src.starts_with("fdfd:"));
    }
}
