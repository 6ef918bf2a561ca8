//! RRP messages RRP#1-#9 and ERR UNK/HRDOWN/LINKDOWN/GENERAL (Part-3, "The
//! structure of the RRP messages" and "RRP message format"). A message is
//! the data block of an EEP packet whose PT is RRP (TE = message number) or
//! ERR (TE = error code); the block is a sequence of records, except for ERR
//! GENERAL, whose block is the enclosed packet's first bytes.

use crate::address::Address;
use crate::error::{Error, ErrorKind, Result};
use crate::kind::{ErrorCode, PacketType, RrpType};
use crate::wire::header::HeaderRepr;
use crate::wire::packet::{Packet, PacketRepr};
use crate::wire::record::{Capability, RecordIter, RecordRef, RecordRepr, RecordType, SourceRoute};

/// What an RRP#4 asks about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InfoQuery {
    /// The node of this address (R1).
    Address(Address),
    /// The node of this name (R2).
    Name(Vec<u8>),
    /// Every node with any of these capabilities (one R3 each).
    Capabilities(Vec<Capability>),
}

/// A node's attributes as RRP#5 and the node entries of RRP#9 carry them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NodeInfo {
    /// R1.
    pub address: Address,
    /// R2, optional.
    pub name: Option<Vec<u8>>,
    /// R3s, one per capability.
    pub capabilities: Vec<Capability>,
    /// R4, optional.
    pub logical: Option<Vec<Address>>,
}

/// A node entry of an RT: attributes and the SR from the mapper to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RtNode {
    /// R1, R2, R3s, R4.
    pub info: NodeInfo,
    /// R5: the SR from the HR that made the LRT to this node, with its Q.
    pub route: SourceRoute,
}

/// A routing table as RRP#9 carries it (Part-2, "Routing tables").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RouteTable {
    /// R8: SAN-ID of the SAN this RT describes.
    pub san_id: Address,
    /// R8: serial number.
    pub sn: u16,
    /// R5 (+ nested R6 MinMTU): the common source route to the mapper.
    pub csr: SourceRoute,
    /// R7: the received-from list, most recent sender first.
    pub rcvf: Vec<Address>,
    /// The node entries.
    pub nodes: Vec<RtNode>,
}

/// An RRP or ERR message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Message {
    /// RRP#1: please give me L2-routes to `dst`.
    RouteRequest {
        /// The node asked about.
        dst: Address,
    },
    /// RRP#2: here are L2-routes to `dst`, best first.
    Routes {
        /// The node the routes lead to.
        dst: Address,
        /// The routes, each an R5 with its nested R6.
        routes: Vec<SourceRoute>,
    },
    /// RRP#3: redirect to `dst` via the HR `via`.
    Redirect {
        /// The destination the redirect is about.
        dst: Address,
        /// The HR on the asker's SAN to use.
        via: Address,
    },
    /// RRP#4: please tell me about a node.
    InfoRequest(InfoQuery),
    /// RRP#5: info about one or more nodes.
    Info(Vec<NodeInfo>),
    /// RRP#6: which HR should I use for `dst`?
    WhichHr {
        /// The node asked about.
        dst: Address,
    },
    /// RRP#7: who/what are you?
    WhoAreYou,
    /// RRP#8: please give me your RTs.
    RtRequest,
    /// RRP#9: here is an RT.
    RouteTable(RouteTable),
    /// ERR UNK: destination unknown.
    Unknown {
        /// The destination for which no route is available.
        addr: Address,
    },
    /// ERR HRDOWN: this HR is down.
    HrDown {
        /// The HR that is down.
        hr: Address,
    },
    /// ERR LINKDOWN: the link between `a` and `b` is down.
    LinkDown {
        /// One end of the link.
        a: Address,
        /// The other end.
        b: Address,
    },
    /// ERR GENERAL: the enclosed packet (its first bytes, from its first
    /// L2RH or EEP header) could not be handled.
    General {
        /// The enclosed bytes.
        enclosed: Vec<u8>,
    },
}

struct Cursor {
    recs: Vec<(RecordRepr, usize)>,
    i: usize,
    end: usize,
}

impl Cursor {
    fn peek(&self) -> Option<RecordType> {
        self.recs.get(self.i).map(|(r, _)| r.record_type())
    }
    fn at(&self) -> usize {
        self.recs.get(self.i).map_or(self.end, |(_, o)| *o)
    }
    fn take(&mut self, t: RecordType, field: &'static str) -> Result<RecordRepr> {
        match self.recs.get(self.i) {
            None => Err(Error::new(
                ErrorKind::MissingRecord(t as u8),
                field,
                self.end,
            )),
            Some((r, o)) if r.record_type() != t => Err(Error::new(
                ErrorKind::UnexpectedRecord(r.record_type() as u8),
                field,
                *o,
            )),
            Some(_) => {
                self.i += 1;
                Ok(std::mem::replace(
                    &mut self.recs[self.i - 1].0,
                    RecordRepr::Address(Address::UNSPECIFIED),
                ))
            }
        }
    }
    fn take_if(&mut self, t: RecordType) -> Option<RecordRepr> {
        if self.peek() == Some(t) {
            self.i += 1;
            Some(std::mem::replace(
                &mut self.recs[self.i - 1].0,
                RecordRepr::Address(Address::UNSPECIFIED),
            ))
        } else {
            None
        }
    }
    fn address(&mut self, field: &'static str) -> Result<Address> {
        match self.take(RecordType::Address, field)? {
            RecordRepr::Address(a) => Ok(a),
            _ => unreachable!("type checked"),
        }
    }
    fn source_route(&mut self, field: &'static str) -> Result<SourceRoute> {
        match self.take(RecordType::SourceRoute, field)? {
            RecordRepr::SourceRoute(s) => Ok(s),
            _ => unreachable!("type checked"),
        }
    }
    fn done(&self) -> bool {
        self.i == self.recs.len()
    }
    fn finish(&self, field: &'static str) -> Result<()> {
        match self.recs.get(self.i) {
            None => Ok(()),
            Some((r, o)) => Err(Error::new(
                ErrorKind::UnexpectedRecord(r.record_type() as u8),
                field,
                *o,
            )),
        }
    }
    /// R1, R2?, R3*, R4?
    fn node_info(&mut self, field: &'static str) -> Result<NodeInfo> {
        let address = self.address(field)?;
        let name = match self.take_if(RecordType::Name) {
            Some(RecordRepr::Name(n)) => Some(n),
            _ => None,
        };
        let mut capabilities = Vec::new();
        while let Some(RecordRepr::Capability(c)) = self.take_if(RecordType::Capability) {
            capabilities.push(c);
        }
        let logical = match self.take_if(RecordType::LogicalAddresses) {
            Some(RecordRepr::LogicalAddresses(l)) => Some(l),
            _ => None,
        };
        Ok(NodeInfo {
            address,
            name,
            capabilities,
            logical,
        })
    }
}

fn records(data: &[u8], base: usize) -> Result<Cursor> {
    let mut recs = Vec::new();
    for item in RecordIter::new(data, base) {
        let (r, at) = item?;
        let repr = RecordRepr::parse(&r).map_err(|e| e.shifted(at))?;
        recs.push((repr, at));
    }
    Ok(Cursor {
        recs,
        i: 0,
        end: base + data.len(),
    })
}

/// Appends one RT node entry (R1, R2?, R3*, R4?, then its R5) to `out`, as
/// RRP#9 carries it.
pub fn emit_rt_node(info: &NodeInfo, route: &SourceRoute, out: &mut Vec<u8>) -> Result<()> {
    emit_node_info(info, out)?;
    RecordRef::SourceRoute(route).emit(out)
}

fn emit_node_info(n: &NodeInfo, out: &mut Vec<u8>) -> Result<()> {
    RecordRef::Address(n.address).emit(out)?;
    if let Some(name) = &n.name {
        RecordRef::Name(name).emit(out)?;
    }
    for c in &n.capabilities {
        RecordRef::Capability(c).emit(out)?;
    }
    if let Some(l) = &n.logical {
        RecordRef::LogicalAddresses(l).emit(out)?;
    }
    Ok(())
}

/// What a message is, as the draft numbers it: an RRP message or an ERR code.
#[derive(Clone, Copy)]
enum Code {
    Rrp(RrpType),
    Err(ErrorCode),
}

impl Message {
    /// The message's number in the draft (Appendix A2, A4).
    fn code(&self) -> Code {
        match self {
            Message::RouteRequest { .. } => Code::Rrp(RrpType::RouteRequest),
            Message::Routes { .. } => Code::Rrp(RrpType::Routes),
            Message::Redirect { .. } => Code::Rrp(RrpType::Redirect),
            Message::InfoRequest(_) => Code::Rrp(RrpType::InfoRequest),
            Message::Info(_) => Code::Rrp(RrpType::Info),
            Message::WhichHr { .. } => Code::Rrp(RrpType::WhichHr),
            Message::WhoAreYou => Code::Rrp(RrpType::WhoAreYou),
            Message::RtRequest => Code::Rrp(RrpType::RtRequest),
            Message::RouteTable(_) => Code::Rrp(RrpType::RouteTable),
            Message::Unknown { .. } => Code::Err(ErrorCode::Unknown),
            Message::HrDown { .. } => Code::Err(ErrorCode::HrDown),
            Message::LinkDown { .. } => Code::Err(ErrorCode::LinkDown),
            Message::General { .. } => Code::Err(ErrorCode::General),
        }
    }

    /// PT and TE of this message.
    pub fn kind(&self) -> (PacketType, u16) {
        match self.code() {
            Code::Rrp(t) => (PacketType::RRP, t as u16),
            Code::Err(c) => (PacketType::ERR, c as u16),
        }
    }

    /// The draft's name of the message, e.g. `"RRP#9"` or `"ERR UNK"`
    /// ([`PacketType::control_name`] of its PT and TE).
    pub fn name(&self) -> &'static str {
        match self.code() {
            Code::Rrp(t) => t.name(),
            Code::Err(c) => c.message_name(),
        }
    }

    /// Parses the data block `data` of a packet with type `pt` and extension
    /// `te`; `base` is the offset of `data` in the outer buffer.
    pub fn parse(pt: PacketType, te: u16, data: &[u8], base: usize) -> Result<Message> {
        const TE_AT: usize = 6;
        let te_offset = base.saturating_sub(crate::wire::header::HEADER_LEN) + TE_AT;
        if pt == PacketType::ERR {
            let code = ErrorCode::from_code(te).ok_or(Error::new(
                ErrorKind::BadMessageType(te),
                "eep.te",
                te_offset,
            ))?;
            if code == ErrorCode::General {
                return Ok(Message::General {
                    enclosed: data.to_vec(),
                });
            }
            let mut c = records(data, base)?;
            let m = match code {
                ErrorCode::Unknown => Message::Unknown {
                    addr: c.address("err.unk.r1")?,
                },
                ErrorCode::HrDown => Message::HrDown {
                    hr: c.address("err.hrdown.r1")?,
                },
                ErrorCode::LinkDown => Message::LinkDown {
                    a: c.address("err.linkdown.r1")?,
                    b: c.address("err.linkdown.r1")?,
                },
                ErrorCode::General => unreachable!("handled above"),
            };
            c.finish("err")?;
            return Ok(m);
        }
        if pt != PacketType::RRP {
            return Err(Error::new(
                ErrorKind::NotControl(pt.0),
                "eep.pt",
                te_offset - 2,
            ));
        }
        let ty = RrpType::from_code(te).ok_or(Error::new(
            ErrorKind::BadMessageType(te),
            "eep.te",
            te_offset,
        ))?;
        let mut c = records(data, base)?;
        let m = match ty {
            RrpType::RouteRequest => Message::RouteRequest {
                dst: c.address("rrp1.r1")?,
            },
            RrpType::Routes => {
                let dst = c.address("rrp2.r1")?;
                let mut routes = vec![c.source_route("rrp2.r5")?];
                while c.peek() == Some(RecordType::SourceRoute) {
                    routes.push(c.source_route("rrp2.r5")?);
                }
                Message::Routes { dst, routes }
            }
            RrpType::Redirect => Message::Redirect {
                dst: c.address("rrp3.r1")?,
                via: c.address("rrp3.r1")?,
            },
            RrpType::InfoRequest => match c.peek() {
                Some(RecordType::Address) => {
                    Message::InfoRequest(InfoQuery::Address(c.address("rrp4.r1")?))
                }
                Some(RecordType::Name) => match c.take(RecordType::Name, "rrp4.r2")? {
                    RecordRepr::Name(n) => Message::InfoRequest(InfoQuery::Name(n)),
                    _ => unreachable!("type checked"),
                },
                Some(RecordType::Capability) => {
                    let mut caps = Vec::new();
                    while let Some(RecordRepr::Capability(cap)) = c.take_if(RecordType::Capability)
                    {
                        caps.push(cap);
                    }
                    Message::InfoRequest(InfoQuery::Capabilities(caps))
                }
                Some(other) => {
                    return Err(Error::new(
                        ErrorKind::UnexpectedRecord(other as u8),
                        "rrp4",
                        c.at(),
                    ));
                }
                None => {
                    return Err(Error::new(
                        ErrorKind::MissingRecord(RecordType::Address as u8),
                        "rrp4",
                        c.at(),
                    ));
                }
            },
            RrpType::Info => {
                let mut nodes = vec![c.node_info("rrp5.r1")?];
                while !c.done() {
                    nodes.push(c.node_info("rrp5.r1")?);
                }
                Message::Info(nodes)
            }
            RrpType::WhichHr => Message::WhichHr {
                dst: c.address("rrp6.r1")?,
            },
            RrpType::WhoAreYou => Message::WhoAreYou,
            RrpType::RtRequest => Message::RtRequest,
            RrpType::RouteTable => {
                let (san_id, sn) = match c.take(RecordType::RtHeader, "rrp9.r8")? {
                    RecordRepr::RtHeader { san_id, sn } => (san_id, sn),
                    _ => unreachable!("type checked"),
                };
                let csr = c.source_route("rrp9.csr")?;
                let rcvf = match c.take(RecordType::Rcvf, "rrp9.r7")? {
                    RecordRepr::Rcvf(r) => r,
                    _ => unreachable!("type checked"),
                };
                let mut nodes = Vec::new();
                while !c.done() {
                    let info = c.node_info("rrp9.node.r1")?;
                    let route = c.source_route("rrp9.node.r5")?;
                    nodes.push(RtNode { info, route });
                }
                Message::RouteTable(RouteTable {
                    san_id,
                    sn,
                    csr,
                    rcvf,
                    nodes,
                })
            }
        };
        c.finish(m.name())?;
        Ok(m)
    }

    /// Appends the message's data block to `out` (ERR GENERAL: the enclosed
    /// bytes; otherwise its records).
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<()> {
        match self {
            Message::RouteRequest { dst } | Message::WhichHr { dst } => {
                RecordRepr::Address(*dst).emit(out)
            }
            Message::Unknown { addr } => RecordRepr::Address(*addr).emit(out),
            Message::HrDown { hr } => RecordRepr::Address(*hr).emit(out),
            Message::Routes { dst, routes } => {
                RecordRepr::Address(*dst).emit(out)?;
                for r in routes {
                    RecordRef::SourceRoute(r).emit(out)?;
                }
                Ok(())
            }
            Message::Redirect { dst: a, via: b } | Message::LinkDown { a, b } => {
                RecordRepr::Address(*a).emit(out)?;
                RecordRepr::Address(*b).emit(out)
            }
            Message::InfoRequest(q) => match q {
                InfoQuery::Address(a) => RecordRepr::Address(*a).emit(out),
                InfoQuery::Name(n) => RecordRef::Name(n).emit(out),
                InfoQuery::Capabilities(cs) => {
                    for c in cs {
                        RecordRef::Capability(c).emit(out)?;
                    }
                    Ok(())
                }
            },
            Message::Info(nodes) => {
                for n in nodes {
                    emit_node_info(n, out)?;
                }
                Ok(())
            }
            Message::WhoAreYou | Message::RtRequest => Ok(()),
            Message::RouteTable(rt) => {
                RecordRepr::RtHeader {
                    san_id: rt.san_id,
                    sn: rt.sn,
                }
                .emit(out)?;
                RecordRef::SourceRoute(&rt.csr).emit(out)?;
                RecordRef::Rcvf(&rt.rcvf).emit(out)?;
                for n in &rt.nodes {
                    emit_node_info(&n.info, out)?;
                    RecordRef::SourceRoute(&n.route).emit(out)?;
                }
                Ok(())
            }
            Message::General { enclosed } => {
                out.extend_from_slice(enclosed);
                Ok(())
            }
        }
    }

    /// The message as a packet from `src` to `dst` (priority 0, E=0, Free 0,
    /// EI 0, no L2RHs).
    pub fn to_packet(&self, dst: Address, src: Address) -> Result<PacketRepr> {
        let (packet_type, type_ext) = self.kind();
        let mut data = Vec::new();
        self.emit(&mut data)?;
        Ok(PacketRepr {
            l2rhs: Vec::new(),
            header: HeaderRepr {
                dst,
                packet_type,
                type_ext,
                src,
                ..HeaderRepr::default()
            },
            data,
            ei: 0,
        })
    }

    /// Parses a whole packet (leading L2RHs allowed) and the message it
    /// carries; bytes after the trailer are ignored.
    pub fn parse_packet(buf: &[u8]) -> Result<(PacketRepr, Message)> {
        let p = PacketRepr::parse(buf)?;
        let view = Packet::new_checked(buf, usize::MAX)?;
        let m = Message::parse(
            p.header.packet_type,
            p.header.type_ext,
            &p.data,
            view.layout().data_offset(),
        )?;
        Ok((p, m))
    }
}

/// Part index and count of a multi-part RRP#9, carried in the EEP Free field
/// (docs/architecture.md "Route tables and RRP"): high byte = part number (1-based),
/// low byte = number of parts; Free = 0 means a whole RT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RtPart {
    /// Part number, 1..=count.
    pub index: u8,
    /// Number of parts, >= 1.
    pub count: u8,
}

impl RtPart {
    /// The whole RT in one message.
    pub const WHOLE: RtPart = RtPart { index: 1, count: 1 };

    /// Reads the Free field; `None` when it is not a valid part marker.
    pub fn from_free(free: u16) -> Option<RtPart> {
        if free == 0 {
            return Some(RtPart::WHOLE);
        }
        let (index, count) = ((free >> 8) as u8, free as u8);
        (index >= 1 && index <= count).then_some(RtPart { index, count })
    }

    /// The Free field value (0 for a whole RT).
    pub fn to_free(self) -> u16 {
        if self == RtPart::WHOLE {
            0
        } else {
            (u16::from(self.index) << 8) | u16::from(self.count)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::l2rh::L2rhRepr;
    use crate::wire::record::Mtu;

    fn rt(m: &Message) -> Message {
        let p = m.to_packet(Address(0x100), Address(0x101)).unwrap();
        let bytes = p.to_bytes().unwrap();
        let (p2, m2) = Message::parse_packet(&bytes).unwrap();
        assert_eq!(p2, p);
        assert_eq!(&m2, m);
        m2
    }

    #[test]
    fn every_message_round_trips() {
        let sr = SourceRoute {
            q: 3,
            route: vec![L2rhRepr::new(&[1, 2, 3]).unwrap()],
            mtu: Some(Mtu(1024)),
        };
        let node = NodeInfo {
            address: Address(0x102),
            name: Some(b"Super".to_vec()),
            capabilities: vec![Capability {
                code: 7,
                params: vec![4, 8],
            }],
            logical: Some(vec![Address(0x8001)]),
        };
        for m in [
            Message::RouteRequest { dst: Address(0x40) },
            Message::Routes {
                dst: Address(0x40),
                routes: vec![sr.clone(), SourceRoute::default()],
            },
            Message::Redirect {
                dst: Address(0x40),
                via: Address(0x41),
            },
            Message::InfoRequest(InfoQuery::Address(Address(0x40))),
            Message::InfoRequest(InfoQuery::Name(b"x".to_vec())),
            Message::InfoRequest(InfoQuery::Capabilities(vec![
                Capability {
                    code: 7,
                    params: vec![8],
                },
                Capability {
                    code: 2,
                    params: vec![],
                },
            ])),
            Message::Info(vec![
                node.clone(),
                NodeInfo {
                    address: Address(0x103),
                    ..Default::default()
                },
            ]),
            Message::WhichHr { dst: Address(0x40) },
            Message::WhoAreYou,
            Message::RtRequest,
            Message::RouteTable(RouteTable {
                san_id: Address(0x201),
                sn: 7,
                csr: sr.clone(),
                rcvf: vec![Address(0x111), Address(0x112)],
                nodes: vec![RtNode {
                    info: node.clone(),
                    route: SourceRoute {
                        mtu: None,
                        ..sr.clone()
                    },
                }],
            }),
            Message::Unknown {
                addr: Address(0x40),
            },
            Message::HrDown { hr: Address(0x40) },
            Message::LinkDown {
                a: Address(0x40),
                b: Address(0x41),
            },
            Message::General {
                enclosed: vec![1, 2, 3],
            },
        ] {
            rt(&m);
        }
    }

    #[test]
    fn grammar_errors_name_the_record() {
        // RRP#3 with a single R1.
        let m = Message::RouteRequest { dst: Address(0x40) };
        let mut p = m.to_packet(Address(0x100), Address(0x101)).unwrap();
        p.header.type_ext = 3;
        let e = Message::parse_packet(&p.to_bytes().unwrap()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::MissingRecord(1));
        assert_eq!(e.offset, 24);
        // RRP#1 with an extra record.
        let mut p = Message::Redirect {
            dst: Address(0x40),
            via: Address(0x41),
        }
        .to_packet(Address(0x100), Address(0x101))
        .unwrap();
        p.header.type_ext = 1;
        let e = Message::parse_packet(&p.to_bytes().unwrap()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnexpectedRecord(1));
        assert_eq!(e.offset, 24);
        // Unknown message number and a non-control type.
        p.header.type_ext = 10;
        let e = Message::parse_packet(&p.to_bytes().unwrap()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadMessageType(10));
        assert_eq!(e.offset, 6);
        p.header.packet_type = PacketType(0x100);
        let e = Message::parse_packet(&p.to_bytes().unwrap()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotControl(0x100));
        assert_eq!(e.offset, 4);
    }

    #[test]
    fn rt_part_marker() {
        assert_eq!(RtPart::from_free(0), Some(RtPart::WHOLE));
        assert_eq!(RtPart::WHOLE.to_free(), 0);
        let p = RtPart { index: 2, count: 3 };
        assert_eq!(RtPart::from_free(p.to_free()), Some(p));
        assert_eq!(RtPart::from_free(0x0402), None);
        assert_eq!(RtPart::from_free(0x0003), None);
    }
}
