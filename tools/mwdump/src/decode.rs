//! Decoding one frame into a [`Report`].

use rrp::wire::{
    Header, L2rh, Message, Packet, Record, RecordRepr, RouterHop, RtPart, SourceRoute,
    header::HEADER_LEN, record::RecordIter,
};
use rrp::{Address, CapabilityCode, ErrorCode, PacketType, RrpType};

use crate::capture::Timestamp;
use crate::hex;
use crate::link::{self, Link};
use crate::mad;
use crate::model::*;

/// How many data bytes are shown in hex.
pub const DATA_HEX_LIMIT: usize = 64;

/// One frame to decode.
#[derive(Debug, Clone, Copy)]
pub struct FrameInput<'a> {
    /// 1-based frame number.
    pub index: u64,
    /// Capture timestamp, if any.
    pub timestamp: Option<Timestamp>,
    /// The capture's link type, if the frame came from a capture.
    pub linktype: Option<u32>,
    /// How to read the frame.
    pub link: Link,
    /// Length on the wire, from the capture.
    pub orig_len: Option<usize>,
    /// The frame's bytes.
    pub data: &'a [u8],
    /// Whether a frame without MessageWay is skipped (captures) rather than
    /// an error (a single frame given on its own).
    pub allow_skip: bool,
}

/// Decodes a frame: locates the packet in its link layer, then decodes the
/// packet and, for ERR and RRP, the message. Never panics.
pub fn decode_frame(input: &FrameInput<'_>) -> Report {
    let timestamp = input.timestamp.map(TimeInfo::from);
    let frame = input.data;
    let located = match link::locate(input.link, frame) {
        Ok(l) => l,
        Err(b) => {
            let (encap, p) = *b;
            if p.skip && input.allow_skip {
                return Report::Skipped(Box::new(SkippedReport {
                    index: input.index,
                    timestamp,
                    linktype: input.linktype,
                    link: input.link.name(),
                    frame_len: frame.len(),
                    orig_len: input.orig_len,
                    encap,
                    skipped: SkipInfo {
                        field: p.field.into(),
                        offset: p.offset,
                        reason: p.message,
                    },
                }));
            }
            return Report::Error(Box::new(ErrorReport {
                index: input.index,
                timestamp,
                frame_len: frame.len(),
                error: ErrorInfo {
                    field: p.field.into(),
                    offset: p.offset,
                    packet_offset: None,
                    kind: p.kind.into(),
                    message: p.message,
                },
            }));
        }
    };
    let start = located.start;
    match decode_packet(&frame[start..located.end], start) {
        Ok(d) => Report::Packet(Box::new(PacketReport {
            index: input.index,
            timestamp,
            linktype: input.linktype,
            link: input.link.name(),
            frame_len: frame.len(),
            orig_len: input.orig_len,
            encap: located.encap,
            packet_offset: start,
            packet_len: d.packet_len,
            padding_len: frame.len() - start - d.packet_len,
            kind: d.kind,
            l2rhs: d.l2rhs,
            header: d.header,
            data_len: d.data_len,
            data_hex: d.data_hex,
            data_truncated: d.data_truncated,
            ei: d.ei,
            ei_hex: format!("0x{:016x}", d.ei),
            message: d.message,
            mad: d.mad,
        })),
        Err(error) => Report::Error(Box::new(ErrorReport {
            index: input.index,
            timestamp,
            frame_len: frame.len(),
            error,
        })),
    }
}

/// An rrp error whose offsets count from a packet at `base` in the frame.
pub fn rrp_error(e: &rrp::Error, base: usize) -> ErrorInfo {
    ErrorInfo {
        field: e.field.into(),
        offset: base + e.offset,
        packet_offset: Some(base),
        kind: snake_kind(&e.kind),
        message: e.kind.to_string(),
    }
}

/// `BadL2rhLength(0)` -> `bad_l2rh_length` (rrp's and mgmt's error kinds).
pub fn snake_kind(k: &impl core::fmt::Debug) -> String {
    let dbg = format!("{k:?}");
    let mut s = String::new();
    for (i, c) in dbg.chars().take_while(|c| c.is_alphanumeric()).enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                s.push('_');
            }
            s.extend(c.to_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

struct Decoded {
    packet_len: usize,
    kind: String,
    l2rhs: Vec<L2rhInfo>,
    header: HeaderInfo,
    data_len: usize,
    data_hex: Option<String>,
    data_truncated: bool,
    ei: u64,
    message: Option<MessageInfo>,
    mad: Option<MadInfo>,
}

/// Decodes the packet at the start of `buf`, which lies at `base` in the
/// frame, and for a management packet its MAD (`crate::mad`). Error
/// offsets count from the frame.
fn decode_packet(buf: &[u8], base: usize) -> Result<Decoded, ErrorInfo> {
    let mut d = decode_eep(buf, base).map_err(|e| rrp_error(&e, base))?;
    if d.header.packet_type == PacketType::MANAGEMENT.0 {
        let p = Packet::new_checked(buf, usize::MAX).map_err(|e| rrp_error(&e, base))?;
        d.mad = Some(mad::mad_info(&p, base).map_err(|e| mad::mgmt_error(&e, base))?);
    }
    Ok(d)
}

/// Decodes the packet at the start of `buf` (which lies at `base` in the
/// frame) and its ERR/RRP message. Error offsets count from `buf[0]`.
fn decode_eep(buf: &[u8], base: usize) -> rrp::Result<Decoded> {
    let p = Packet::new_checked(buf, usize::MAX)?;
    let lay = *p.layout();
    let mut l2rhs = Vec::with_capacity(lay.l2rh_count);
    let mut off = 0;
    for l in p.l2rhs() {
        l2rhs.push(l2rh_info(l.content(), base + off));
        off += l.total_len();
    }
    let h = p.header();
    let header = header_info(&h, base + lay.header_offset);
    let (pt, te) = (h.packet_type(), h.type_ext());
    let data = p.data();
    let (message, data_hex, data_truncated) = if pt.is_control() {
        let m = Message::parse(pt, te, data, lay.data_offset())?;
        // ERR GENERAL's data block is the enclosed bytes, not records.
        let views = if matches!(m, Message::General { .. }) {
            Vec::new()
        } else {
            RecordIter::new(data, lay.data_offset()).collect::<rrp::Result<Vec<_>>>()?
        };
        (
            Some(message_info(
                &m,
                &views,
                base,
                h.free(),
                base + lay.data_offset(),
                data,
            )?),
            None,
            false,
        )
    } else {
        let n = data.len().min(DATA_HEX_LIMIT);
        (
            None,
            Some(hex::encode(&data[..n])),
            data.len() > DATA_HEX_LIMIT,
        )
    };
    Ok(Decoded {
        packet_len: lay.total_len(),
        kind: match &message {
            Some(m) => m.kind.clone(),
            None => pt.class().to_string(),
        },
        l2rhs,
        header,
        data_len: lay.data_len,
        data_hex,
        data_truncated,
        ei: p.ei(),
        message,
        mad: None,
    })
}

/// An L2RH of content `content` whose length field is at `offset` in the frame.
pub fn l2rh_info(content: &[u8], offset: usize) -> L2rhInfo {
    L2rhInfo {
        offset,
        len: content.len(),
        words: rrp::wire::l2rh::l2rh_words(content.len()),
        content_hex: hex::encode(content),
        hop: hop_info(content),
    }
}

/// The content read as a router hop, when it has that shape: a valid egress
/// and a native part of 0, 6 or 18 bytes.
pub fn hop_info(content: &[u8]) -> Option<HopInfo> {
    let hop = RouterHop::from_content(content).ok()?;
    let native = hop.native.as_bytes();
    if !matches!(native.len(), 0 | 6 | 18) {
        return None;
    }
    Some(HopInfo {
        egress: hop.egress.0,
        native_len: native.len(),
        native_hex: hex::encode(native),
        mac: hop.native.as_mac().map(|m| hex::colons(&m)),
        udp: hop.native.as_udp().map(|s| s.to_string()),
        native_only: hop.is_native_only(),
        egress_only: hop.is_egress_only(),
    })
}

/// The header's `type_name`: an RRP message's draft name (`"RRP#9"`), an
/// ERR code's (`"UNK"`).
fn type_name(pt: PacketType, te: u16) -> Option<String> {
    if pt == PacketType::RRP {
        RrpType::from_code(te).map(|t| t.name().to_string())
    } else if pt == PacketType::ERR {
        ErrorCode::from_code(te).map(|c| c.name().to_string())
    } else {
        None
    }
}

/// The `kind` of a packet from its PT and TE alone: the control message's
/// draft name, else the class.
fn kind_from_header(pt: PacketType, te: u16) -> String {
    match pt.control_name(te) {
        Some(n) => n.to_string(),
        None => pt.class().to_string(),
    }
}

/// The header at `offset` in the frame.
pub fn header_info<T: AsRef<[u8]>>(h: &Header<T>, offset: usize) -> HeaderInfo {
    let e = h.endian();
    HeaderInfo {
        offset,
        dst: h.dst().0,
        dst_class: h.dst().class().to_string(),
        priority: h.priority(),
        version: h.version(),
        packet_type: h.packet_type().0,
        packet_class: h.packet_type().class().to_string(),
        type_ext: h.type_ext(),
        type_name: type_name(h.packet_type(), h.type_ext()),
        e: e.nibble(),
        little_endian: e.little,
        swap_bits: e.swap.bytes().ok().map(|b| b as u32 * 8),
        pad_len: h.pad_len(),
        data_words: h.data_words(),
        src: h.src().0,
        src_class: h.src().class().to_string(),
        free: h.free(),
    }
}

fn description(m: &Message) -> &'static str {
    match m {
        Message::RouteRequest { .. } => "please give me L2-routes to node",
        Message::Routes { .. } => "here are L2-routes to node",
        Message::Redirect { .. } => "redirect to node via a neighbour HR",
        Message::InfoRequest(_) => "please tell me about node (address | name | capabilities)",
        Message::Info(_) => "info about node (address, name, capabilities)",
        Message::WhichHr { .. } => "which HR should I use for node",
        Message::WhoAreYou => "who/what are you?",
        Message::RtRequest => "please give me your RTs",
        Message::RouteTable(_) => "here is an RT",
        Message::Unknown { .. } => "destination unknown",
        Message::HrDown { .. } => "HR down",
        Message::LinkDown { .. } => "link down",
        Message::General { .. } => "general error: the enclosed packet could not be handled",
    }
}

/// The role of each record of `m`, in wire order, with its node entry.
fn roles(m: &Message) -> Vec<(&'static str, Option<usize>)> {
    fn node(out: &mut Vec<(&'static str, Option<usize>)>, i: usize, info: &rrp::wire::NodeInfo) {
        out.push(("address", Some(i)));
        if info.name.is_some() {
            out.push(("name", Some(i)));
        }
        for _ in &info.capabilities {
            out.push(("capability", Some(i)));
        }
        if info.logical.is_some() {
            out.push(("logical", Some(i)));
        }
    }
    let mut out = Vec::new();
    match m {
        Message::RouteRequest { .. } | Message::WhichHr { .. } => out.push(("dst", None)),
        Message::Routes { routes, .. } => {
            out.push(("dst", None));
            out.extend(routes.iter().map(|_| ("route", None)));
        }
        Message::Redirect { .. } => out.extend([("dst", None), ("via", None)]),
        Message::InfoRequest(q) => {
            let n = match q {
                rrp::wire::InfoQuery::Capabilities(c) => c.len(),
                _ => 1,
            };
            out.extend((0..n).map(|_| ("query", None)));
        }
        Message::Info(nodes) => {
            for (i, n) in nodes.iter().enumerate() {
                node(&mut out, i, n);
            }
        }
        Message::WhoAreYou | Message::RtRequest | Message::General { .. } => {}
        Message::RouteTable(rt) => {
            out.extend([("rt_header", None), ("csr", None), ("rcvf", None)]);
            for (i, n) in rt.nodes.iter().enumerate() {
                node(&mut out, i, &n.info);
                out.push(("route", Some(i)));
            }
        }
        Message::Unknown { .. } => out.push(("addr", None)),
        Message::HrDown { .. } => out.push(("hr", None)),
        Message::LinkDown { .. } => out.extend([("a", None), ("b", None)]),
    }
    out
}

fn printable(b: &[u8]) -> Option<String> {
    b.iter()
        .all(|c| (0x20..=0x7E).contains(c))
        .then(|| String::from_utf8_lossy(b).into_owned())
}

fn mtu_info(m: rrp::wire::Mtu) -> MtuInfo {
    MtuInfo {
        words: m.0,
        bytes: m.bytes().map(|b| b as u64),
        unlimited: m.0 == 0,
    }
}

fn route_l2rhs(s: &SourceRoute, first: usize) -> Vec<L2rhInfo> {
    let mut off = first;
    s.route
        .iter()
        .map(|l| {
            let i = l2rh_info(l.content(), off);
            off += l.buffer_len();
            i
        })
        .collect()
}

/// A record at `offset` in the frame.
fn record_body(r: &RecordRepr, offset: usize) -> RecordBody {
    match r {
        RecordRepr::Address(a) => RecordBody::Address {
            address: a.0,
            address_class: a.class().to_string(),
        },
        RecordRepr::Name(n) => RecordBody::Name {
            name: printable(n),
            name_hex: hex::encode(n),
        },
        RecordRepr::Capability(c) => RecordBody::Capability {
            code: c.code,
            code_name: CapabilityCode::from_code(c.code).map(|c| c.name().to_string()),
            params: c.params.clone(),
        },
        RecordRepr::LogicalAddresses(a) | RecordRepr::Rcvf(a) => RecordBody::Addresses {
            addresses: a.iter().map(|a| a.0).collect(),
        },
        RecordRepr::SourceRoute(s) => RecordBody::SourceRoute {
            q: s.q,
            l2rhs: route_l2rhs(s, offset + 8),
            mtu: s.mtu.map(mtu_info),
        },
        RecordRepr::Mtu(m) => RecordBody::Mtu { mtu: mtu_info(*m) },
        RecordRepr::RtHeader { san_id, sn } => RecordBody::RtHeader {
            san_id: san_id.0,
            sn: *sn,
        },
    }
}

fn type_label(r: &RecordRepr) -> String {
    format!("R{}", r.record_type() as u8)
}

fn message_info(
    m: &Message,
    views: &[(Record<'_>, usize)],
    base: usize,
    free: u16,
    data_offset: usize,
    data: &[u8],
) -> rrp::Result<MessageInfo> {
    let roles = roles(m);
    let mut records = Vec::with_capacity(views.len());
    for (i, (view, at)) in views.iter().enumerate() {
        let repr = RecordRepr::parse(view).map_err(|e| e.shifted(*at))?;
        let (role, node) = roles.get(i).copied().unwrap_or(("extra", None));
        records.push(RecordInfo {
            offset: base + at,
            rtyp: view.rtyp(),
            type_name: type_label(&repr),
            pl: view.pad_len() as u8,
            rl: view.words() as u16,
            role: role.into(),
            node,
            body: record_body(&repr, base + at),
        });
    }
    let rt_part = matches!(m, Message::RouteTable(_)).then(|| match RtPart::from_free(free) {
        Some(p) => RtPartInfo {
            index: p.index,
            count: p.count,
            valid: true,
        },
        None => RtPartInfo {
            index: (free >> 8) as u8,
            count: free as u8,
            valid: false,
        },
    });
    let enclosed = matches!(m, Message::General { .. }).then(|| enclosed_info(data, data_offset));
    Ok(MessageInfo {
        kind: m.name().into(),
        description: description(m).into(),
        records,
        rt_part,
        enclosed,
    })
}

/// Reads the bytes an ERR GENERAL encloses (at `offset` in the frame) as a
/// possibly truncated packet: its L2RHs and EEP header as far as they go.
pub fn enclosed_info(e: &[u8], offset: usize) -> EnclosedInfo {
    let complete = rrp::wire::locate(e, usize::MAX).is_ok();
    let mut l2rhs = Vec::new();
    let mut note = None;
    let mut header = None;
    let mut kind = None;
    let mut off = 0;
    let at_header = loop {
        if e.len() - off < 2 {
            note = Some(if e.is_empty() {
                "nothing enclosed".to_string()
            } else {
                format!(
                    "the enclosed bytes end at byte {}, before an EEP header",
                    e.len()
                )
            });
            break false;
        }
        if !rrp::wire::l2rh::starts_l2rh(rrp::wire::bytes::be16(e, off)) {
            break true;
        }
        match L2rh::new_checked(&e[off..]) {
            Ok(l) => {
                l2rhs.push(l2rh_info(l.content(), offset + off));
                off += l.total_len();
            }
            Err(err) => {
                note = Some(format!("{} (in the enclosed bytes)", err.shifted(off)));
                break false;
            }
        }
    };
    if at_header {
        if e.len() - off < HEADER_LEN {
            note = Some(format!(
                "the enclosed bytes end inside the EEP header ({} of {HEADER_LEN} bytes)",
                e.len() - off
            ));
        } else {
            let h = Header::new_unchecked(&e[off..off + HEADER_LEN]);
            header = Some(header_info(&h, offset + off));
            kind = Some(kind_from_header(h.packet_type(), h.type_ext()));
            if let Err(err) = rrp::wire::locate(e, usize::MAX) {
                note = Some(format!("{err} (in the enclosed bytes)"));
            }
        }
    }
    let n = e.len().min(DATA_HEX_LIMIT);
    EnclosedInfo {
        offset,
        len: e.len(),
        hex: hex::encode(&e[..n]),
        hex_truncated: e.len() > DATA_HEX_LIMIT,
        complete,
        l2rhs,
        header,
        kind,
        note,
    }
}

/// An address with its class, `0x0102 (node)`.
pub fn addr_text(a: u16) -> String {
    format!("0x{a:04x} ({})", Address(a).class())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::NativeAddr;
    use rrp::wire::{HeaderRepr, L2rhRepr, PacketRepr};

    fn input(data: &[u8], link: Link) -> FrameInput<'_> {
        FrameInput {
            index: 1,
            timestamp: None,
            linktype: None,
            link,
            orig_len: None,
            data,
            allow_skip: false,
        }
    }

    fn packet(r: Report) -> PacketReport {
        match r {
            Report::Packet(p) => *p,
            other => panic!("not a packet: {other:?}"),
        }
    }

    fn error(r: Report) -> ErrorInfo {
        match r {
            Report::Error(e) => e.error,
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn rrp1_with_a_router_hop_and_padding() {
        let mut p = Message::RouteRequest {
            dst: Address(0x0102),
        }
        .to_packet(Address(0x0121), Address(0x0101))
        .unwrap();
        p.l2rhs
            .push(RouterHop::new(Address(0x0115), NativeAddr::mac([2, 0, 0, 0, 0, 7])).to_l2rh());
        let mut b = p.to_bytes().unwrap();
        b.extend_from_slice(&[0xEE; 5]);
        let r = packet(decode_frame(&input(&b, Link::Raw)));
        assert_eq!(r.kind, "RRP#1");
        assert_eq!(r.packet_len, 16 + 16 + 8 + 8);
        assert_eq!(r.padding_len, 5);
        let hop = r.l2rhs[0].hop.as_ref().unwrap();
        assert_eq!(hop.egress, 0x0115);
        assert_eq!(hop.mac.as_deref(), Some("02:00:00:00:00:07"));
        assert_eq!(hop.udp.as_deref(), Some("2.0.0.0:7"));
        assert_eq!(r.header.offset, 16);
        assert_eq!(r.header.type_name.as_deref(), Some("RRP#1"));
        let m = r.message.unwrap();
        assert_eq!(m.records.len(), 1);
        assert_eq!(m.records[0].offset, 32);
        assert_eq!(m.records[0].role, "dst");
        assert_eq!(
            m.records[0].body,
            RecordBody::Address {
                address: 0x0102,
                address_class: "node".into()
            }
        );
    }

    #[test]
    fn hops_only_in_their_shapes() {
        assert!(hop_info(&[3, 0, 3, 0]).is_none()); // 2-byte native part
        assert!(hop_info(&[0, 0x3F, 1, 2, 3, 4, 5, 6]).is_none()); // egress not a node
        let h = hop_info(&[1, 0x15]).unwrap();
        assert!(h.egress_only && h.udp.is_none() && h.mac.is_none());
        let mut c = vec![0, 0];
        c.extend_from_slice(&[0; 15]);
        c.push(1);
        c.extend_from_slice(&34997u16.to_be_bytes());
        let h = hop_info(&c).unwrap();
        assert!(h.native_only);
        assert_eq!(h.udp.as_deref(), Some("[::1]:34997"));
        assert_eq!(h.mac, None);
    }

    #[test]
    fn errors_count_from_the_frame() {
        let p = PacketRepr {
            l2rhs: vec![],
            header: HeaderRepr {
                dst: Address(0x100),
                packet_type: PacketType(0x100),
                ..Default::default()
            },
            data: vec![1, 2, 3],
            ei: 0,
        };
        let mut b = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x88, 0xB5];
        b.extend(p.to_bytes().unwrap());
        b[14 + 3] = 4;
        let e = error(decode_frame(&input(&b, Link::Eth)));
        assert_eq!(e.field, "eep.version");
        assert_eq!(e.offset, 17);
        assert_eq!(e.packet_offset, Some(14));
        assert_eq!(e.kind, "bad_version");
        b[14 + 3] = 5;
        b.truncate(b.len() - 1);
        let e = error(decode_frame(&input(&b, Link::Eth)));
        assert_eq!(e.field, "eep.trailer");
        assert_eq!(e.kind, "truncated");
        let e = error(decode_frame(&input(&[0, 0, 0, 0, 0, 0, 0, 0], Link::Raw)));
        assert_eq!(
            (e.field.as_str(), e.kind.as_str()),
            ("l2rh.len", "bad_l2rh_length")
        );
    }

    #[test]
    fn enclosed_packets_read_as_far_as_they_go() {
        let p = Message::RouteRequest { dst: Address(0x40) }
            .to_packet(Address(0x41), Address(0x42))
            .unwrap();
        let mut p2 = p.clone();
        p2.l2rhs.push(L2rhRepr::new(&[3, 0, 3, 0]).unwrap());
        let b = p2.to_bytes().unwrap();
        let whole = enclosed_info(&b, 100);
        assert!(whole.complete);
        assert_eq!(whole.note, None);
        assert_eq!(whole.kind.as_deref(), Some("RRP#1"));
        assert_eq!(whole.header.as_ref().unwrap().offset, 108);
        let cut = enclosed_info(&b[..30], 0);
        assert!(!cut.complete);
        assert_eq!(cut.kind.as_deref(), Some("RRP#1"));
        assert!(cut.note.unwrap().contains("eep.data"));
        let tiny = enclosed_info(&b[..12], 0);
        assert!(tiny.header.is_none());
        assert_eq!(tiny.l2rhs.len(), 1);
        assert!(tiny.note.unwrap().contains("inside the EEP header"));
        assert_eq!(
            enclosed_info(&[], 0).note.as_deref(),
            Some("nothing enclosed")
        );
    }

    #[test]
    fn snake_kinds() {
        assert_eq!(
            snake_kind(&rrp::ErrorKind::BadL2rhLength(0)),
            "bad_l2rh_length"
        );
        assert_eq!(
            snake_kind(&rrp::ErrorKind::Truncated {
                needed: 1,
                available: 0
            }),
            "truncated"
        );
    }
}
