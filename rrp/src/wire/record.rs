//! RRP records R1-R8 (Part-3, "RRP record format").
//!
//! Every record starts with RTyp (1 byte), PL (1 byte) and RL (2 bytes, the
//! record's length in 8-byte words, header included). The record carries
//! `8*RL - PL - 4` data bytes after those four, either right justified with
//! the PL padding bytes first ("PBD": R1, R5, R6) or left justified with the
//! padding last ("PAD": R2, R3, R4, R7). R8's data has no padding.
//! Padding bytes ("xxx") are written as zero and ignored when read.

use crate::address::Address;
use crate::error::{Error, ErrorKind, Result};
use crate::wire::bytes::be16;
use crate::wire::l2rh::{L2rhRepr, starts_l2rh};

/// Bytes of RTyp, PL and RL.
pub const RECORD_PREFIX_LEN: usize = 4;

/// Byte offsets inside a record.
pub mod field {
    /// RTyp.
    pub const RTYP: usize = 0;
    /// PL.
    pub const PL: usize = 1;
    /// RL (16 bits).
    pub const RL: usize = 2;
    /// First byte after RTyp, PL and RL.
    pub const BODY: usize = 4;
    /// R5: Q, the route's quality (after the two PBD padding bytes).
    pub const R5_Q: usize = 6;
    /// R8: SAN-ID.
    pub const R8_SAN_ID: usize = 4;
    /// R8: serial number.
    pub const R8_SN: usize = 6;
}

crate::code_points! {
    /// Record types (Appendix A3).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum RecordType: u8 {
        /// R1: node address [PBD].
        Address = 1 => "R1",
        /// R2: node name [PAD].
        Name = 2 => "R2",
        /// R3: node capability [PAD].
        Capability = 3 => "R3",
        /// R4: node logical addresses [PAD].
        LogicalAddresses = 4 => "R4",
        /// R5: source route and its quality [PBD].
        SourceRoute = 5 => "R5",
        /// R6: MTU [PBD].
        Mtu = 6 => "R6",
        /// R7: RCVF [PAD].
        Rcvf = 7 => "R7",
        /// R8: RT header.
        RtHeader = 8 => "R8",
    }
}

/// A zero-copy view of one record at the start of a buffer.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    buf: &'a [u8],
}

impl<'a> Record<'a> {
    /// Wraps the record that starts `buf`: checks RTyp, RL (non-zero, fits
    /// `buf`) and PL (0..=7, no more than the record's data bytes).
    pub fn new_checked(buf: &'a [u8]) -> Result<Record<'a>> {
        if buf.len() < 8 {
            return Err(Error::truncated("record", 0, 8, buf.len()));
        }
        let t = buf[field::RTYP];
        if RecordType::from_code(t).is_none() {
            return Err(Error::new(ErrorKind::BadRecordType(t), "record.rtyp", 0));
        }
        let rl = be16(buf, field::RL);
        let len = rl as usize * 8;
        if rl == 0 {
            return Err(Error::new(ErrorKind::BadRecordLength(rl), "record.rl", 2));
        }
        if len > buf.len() {
            return Err(Error::truncated("record.rl", 2, len, buf.len()));
        }
        let pl = buf[field::PL];
        if pl > 7 || pl as usize + RECORD_PREFIX_LEN > len {
            return Err(Error::new(ErrorKind::BadRecordPad(pl), "record.pl", 1));
        }
        Ok(Record { buf: &buf[..len] })
    }

    /// RTyp.
    pub fn rtyp(&self) -> u8 {
        self.buf[field::RTYP]
    }
    /// The record type.
    pub fn record_type(&self) -> RecordType {
        RecordType::from_code(self.rtyp()).expect("checked")
    }
    /// PL.
    pub fn pad_len(&self) -> usize {
        self.buf[field::PL] as usize
    }
    /// RL.
    pub fn words(&self) -> usize {
        self.buf.len() / 8
    }
    /// The record's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// The data bytes of a right-justified [PBD] record.
    pub fn data_pbd(&self) -> &'a [u8] {
        &self.buf[RECORD_PREFIX_LEN + self.pad_len()..]
    }
    /// The data bytes of a left-justified [PAD] record.
    pub fn data_pad(&self) -> &'a [u8] {
        &self.buf[RECORD_PREFIX_LEN..self.buf.len() - self.pad_len()]
    }

    /// An R8 of one word: its SAN-ID and SN, read in place (not checked
    /// further: [`RecordRepr::parse`] does that).
    pub fn rt_header(&self) -> Option<(Address, u16)> {
        (self.record_type() == RecordType::RtHeader && self.words() == 1).then(|| {
            (
                Address(be16(self.buf, field::R8_SAN_ID)),
                be16(self.buf, field::R8_SN),
            )
        })
    }

    /// An R5: its Q, read in place.
    pub fn route_quality(&self) -> Option<u16> {
        (self.record_type() == RecordType::SourceRoute).then(|| be16(self.buf, field::R5_Q))
    }
}

/// Iterates the records of a data block, stopping at the first error.
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    buf: &'a [u8],
    off: usize,
    base: usize,
    failed: bool,
}

impl<'a> RecordIter<'a> {
    /// Records of `buf`, whose first byte is at `base` in the outer buffer.
    pub fn new(buf: &'a [u8], base: usize) -> RecordIter<'a> {
        RecordIter {
            buf,
            off: 0,
            base,
            failed: false,
        }
    }
}

impl<'a> Iterator for RecordIter<'a> {
    /// A record and its offset in the outer buffer.
    type Item = Result<(Record<'a>, usize)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.off >= self.buf.len() {
            return None;
        }
        let at = self.base + self.off;
        match Record::new_checked(&self.buf[self.off..]) {
            Ok(r) => {
                self.off += r.bytes().len();
                Some(Ok((r, at)))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e.shifted(at)))
            }
        }
    }
}

/// An MTU in 8-byte words as R6 carries it (24 bits); 0 means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Mtu(pub u32);

impl Mtu {
    /// No limit.
    pub const UNLIMITED: Mtu = Mtu(0);
    /// The largest value R6 can carry.
    pub const MAX_WORDS: u32 = (1 << 24) - 1;

    /// The MTU of `bytes` bytes, rounded down to words (saturating at 2^24-1
    /// words; 0 bytes or more than fits means unlimited is not implied).
    pub fn from_bytes(bytes: usize) -> Mtu {
        Mtu(((bytes / 8).min(Mtu::MAX_WORDS as usize)) as u32)
    }
    /// Bytes, or `None` when unlimited.
    pub fn bytes(self) -> Option<usize> {
        (self.0 != 0).then_some(self.0 as usize * 8)
    }
    /// The smaller of two MTUs, unlimited counting as infinite (MinMTU).
    pub fn min(self, other: Mtu) -> Mtu {
        match (self.0, other.0) {
            (0, _) => other,
            (_, 0) => self,
            (a, b) => Mtu(a.min(b)),
        }
    }
}

/// A capability (R3): code and parameter bytes (Appendix A5).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Capability {
    /// Capability code CC.
    pub code: u8,
    /// Parameter bytes.
    pub params: Vec<u8>,
}

/// A source route with its quality (R5), optionally carrying its MTU (a
/// nested R6 counted in the R5's RL).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SourceRoute {
    /// Q: additive, 0 best, 0xFFFF worst.
    pub q: u16,
    /// The route: a chain of L2RHs (empty: the HR itself).
    pub route: Vec<L2rhRepr>,
    /// The nested R6, if any.
    pub mtu: Option<Mtu>,
}

/// An owned record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RecordRepr {
    /// R1.
    Address(Address),
    /// R2 (arbitrary bytes; names are usually text).
    Name(Vec<u8>),
    /// R3.
    Capability(Capability),
    /// R4.
    LogicalAddresses(Vec<Address>),
    /// R5 (with its nested R6, if any).
    SourceRoute(SourceRoute),
    /// R6 standing alone.
    Mtu(Mtu),
    /// R7.
    Rcvf(Vec<Address>),
    /// R8.
    RtHeader {
        /// SAN-ID of the SAN the RT describes.
        san_id: Address,
        /// Serial number.
        sn: u16,
    },
}

fn addresses(data: &[u8], field: &'static str, at: usize, node_only: bool) -> Result<Vec<Address>> {
    if !data.len().is_multiple_of(2) {
        return Err(Error::new(ErrorKind::OddLength(data.len()), field, at));
    }
    data.chunks_exact(2)
        .enumerate()
        .map(|(i, c)| {
            let a = Address(u16::from_be_bytes([c[0], c[1]]));
            if node_only && !a.is_node() {
                Err(Error::new(
                    ErrorKind::IllegalAddress(a.0),
                    field,
                    at + 2 * i,
                ))
            } else {
                Ok(a)
            }
        })
        .collect()
}

fn expect_fixed(r: &Record<'_>, words: usize, pl: usize, name: &'static str) -> Result<()> {
    if r.words() != words {
        return Err(Error::new(
            ErrorKind::BadRecordLength(r.words() as u16),
            name,
            2,
        ));
    }
    if r.pad_len() != pl {
        return Err(Error::new(
            ErrorKind::BadRecordPad(r.pad_len() as u8),
            name,
            1,
        ));
    }
    Ok(())
}

impl RecordRepr {
    /// The record type.
    pub fn record_type(&self) -> RecordType {
        match self {
            RecordRepr::Address(_) => RecordType::Address,
            RecordRepr::Name(_) => RecordType::Name,
            RecordRepr::Capability(_) => RecordType::Capability,
            RecordRepr::LogicalAddresses(_) => RecordType::LogicalAddresses,
            RecordRepr::SourceRoute(_) => RecordType::SourceRoute,
            RecordRepr::Mtu(_) => RecordType::Mtu,
            RecordRepr::Rcvf(_) => RecordType::Rcvf,
            RecordRepr::RtHeader { .. } => RecordType::RtHeader,
        }
    }

    /// Reads a record view; errors count from the record's first byte.
    pub fn parse(r: &Record<'_>) -> Result<RecordRepr> {
        Ok(match r.record_type() {
            RecordType::Address => {
                expect_fixed(r, 1, 2, "r1")?;
                let d = r.data_pbd();
                let a = Address(u16::from_be_bytes([d[0], d[1]]));
                if !a.is_valid_destination() {
                    return Err(Error::new(ErrorKind::IllegalAddress(a.0), "r1.address", 6));
                }
                RecordRepr::Address(a)
            }
            RecordType::Name => RecordRepr::Name(r.data_pad().to_vec()),
            RecordType::Capability => {
                let d = r.data_pad();
                let Some((&code, params)) = d.split_first() else {
                    return Err(Error::truncated("r3.cc", 4, 1, 0));
                };
                RecordRepr::Capability(Capability {
                    code,
                    params: params.to_vec(),
                })
            }
            RecordType::LogicalAddresses => {
                RecordRepr::LogicalAddresses(addresses(r.data_pad(), "r4.address", 4, false)?)
            }
            RecordType::SourceRoute => RecordRepr::SourceRoute(parse_r5(r)?),
            RecordType::Mtu => RecordRepr::Mtu(parse_r6(r)?),
            RecordType::Rcvf => RecordRepr::Rcvf(addresses(r.data_pad(), "r7.address", 4, true)?),
            RecordType::RtHeader => {
                expect_fixed(r, 1, 0, "r8")?;
                let (san_id, sn) = r.rt_header().expect("an R8 of one word");
                if !san_id.is_node() {
                    return Err(Error::new(
                        ErrorKind::IllegalAddress(san_id.0),
                        "r8.san_id",
                        4,
                    ));
                }
                RecordRepr::RtHeader { san_id, sn }
            }
        })
    }

    /// A borrowed view of this record, for emitting.
    pub fn as_ref(&self) -> RecordRef<'_> {
        match self {
            RecordRepr::Address(a) => RecordRef::Address(*a),
            RecordRepr::Name(n) => RecordRef::Name(n),
            RecordRepr::Capability(c) => RecordRef::Capability(c),
            RecordRepr::LogicalAddresses(a) => RecordRef::LogicalAddresses(a),
            RecordRepr::SourceRoute(s) => RecordRef::SourceRoute(s),
            RecordRepr::Mtu(m) => RecordRef::Mtu(*m),
            RecordRepr::Rcvf(a) => RecordRef::Rcvf(a),
            RecordRepr::RtHeader { san_id, sn } => RecordRef::RtHeader {
                san_id: *san_id,
                sn: *sn,
            },
        }
    }

    /// Bytes of the emitted record.
    pub fn buffer_len(&self) -> usize {
        self.as_ref().buffer_len()
    }

    /// Appends the record to `out`. Fails when it would exceed 65535 words.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<()> {
        self.as_ref().emit(out)
    }
}

/// A record borrowing its contents: emits without copying them first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordRef<'a> {
    /// R1.
    Address(Address),
    /// R2.
    Name(&'a [u8]),
    /// R3.
    Capability(&'a Capability),
    /// R4.
    LogicalAddresses(&'a [Address]),
    /// R5 (with its nested R6, if any).
    SourceRoute(&'a SourceRoute),
    /// R6 standing alone.
    Mtu(Mtu),
    /// R7.
    Rcvf(&'a [Address]),
    /// R8.
    RtHeader {
        /// SAN-ID.
        san_id: Address,
        /// Serial number.
        sn: u16,
    },
}

impl RecordRef<'_> {
    /// The record type.
    pub fn record_type(&self) -> RecordType {
        match self {
            RecordRef::Address(_) => RecordType::Address,
            RecordRef::Name(_) => RecordType::Name,
            RecordRef::Capability(_) => RecordType::Capability,
            RecordRef::LogicalAddresses(_) => RecordType::LogicalAddresses,
            RecordRef::SourceRoute(_) => RecordType::SourceRoute,
            RecordRef::Mtu(_) => RecordType::Mtu,
            RecordRef::Rcvf(_) => RecordType::Rcvf,
            RecordRef::RtHeader { .. } => RecordType::RtHeader,
        }
    }

    /// Bytes of the emitted record.
    pub fn buffer_len(&self) -> usize {
        fn pad(data: usize) -> usize {
            (RECORD_PREFIX_LEN + data).div_ceil(8) * 8
        }
        match self {
            RecordRef::Address(_) | RecordRef::Mtu(_) | RecordRef::RtHeader { .. } => 8,
            RecordRef::Name(n) => pad(n.len()),
            RecordRef::Capability(c) => pad(1 + c.params.len()),
            RecordRef::LogicalAddresses(a) | RecordRef::Rcvf(a) => pad(2 * a.len()),
            RecordRef::SourceRoute(s) => {
                8 + s.route.iter().map(L2rhRepr::buffer_len).sum::<usize>()
                    + if s.mtu.is_some() { 8 } else { 0 }
            }
        }
    }

    /// Appends the record to `out`. Fails when it would exceed 65535 words.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<()> {
        let len = self.buffer_len();
        if len / 8 > u16::MAX as usize {
            return Err(Error::new(
                ErrorKind::TooLarge(len),
                "record.rl",
                out.len() + 2,
            ));
        }
        let start = out.len();
        let rl = (len / 8) as u16;
        let t = self.record_type() as u8;
        let prefix = |out: &mut Vec<u8>, pl: usize| {
            out.push(t);
            out.push(pl as u8);
            out.extend_from_slice(&rl.to_be_bytes());
        };
        let pad_after = |out: &mut Vec<u8>, data: &[u8]| {
            let pl = len - RECORD_PREFIX_LEN - data.len();
            prefix(out, pl);
            out.extend_from_slice(data);
            out.resize(start + len, 0);
        };
        match self {
            RecordRef::Address(a) => {
                prefix(out, 2);
                out.extend_from_slice(&[0, 0]);
                out.extend_from_slice(&a.0.to_be_bytes());
            }
            RecordRef::Name(n) => pad_after(out, n),
            RecordRef::Capability(c) => {
                let pl = len - RECORD_PREFIX_LEN - 1 - c.params.len();
                prefix(out, pl);
                out.push(c.code);
                out.extend_from_slice(&c.params);
                out.resize(start + len, 0);
            }
            RecordRef::LogicalAddresses(a) | RecordRef::Rcvf(a) => {
                let pl = len - RECORD_PREFIX_LEN - 2 * a.len();
                prefix(out, pl);
                for x in a.iter() {
                    out.extend_from_slice(&x.0.to_be_bytes());
                }
                out.resize(start + len, 0);
            }
            RecordRef::SourceRoute(s) => {
                prefix(out, 2);
                out.extend_from_slice(&[0, 0]);
                out.extend_from_slice(&s.q.to_be_bytes());
                for l in &s.route {
                    l.emit(out);
                }
                if let Some(m) = s.mtu {
                    RecordRef::Mtu(m).emit(out)?;
                }
            }
            RecordRef::Mtu(m) => {
                prefix(out, 1);
                out.push(0);
                out.extend_from_slice(&m.0.min(Mtu::MAX_WORDS).to_be_bytes()[1..4]);
            }
            RecordRef::RtHeader { san_id, sn } => {
                prefix(out, 0);
                out.extend_from_slice(&san_id.0.to_be_bytes());
                out.extend_from_slice(&sn.to_be_bytes());
            }
        }
        debug_assert_eq!(out.len() - start, len);
        Ok(())
    }
}

fn parse_r6(r: &Record<'_>) -> Result<Mtu> {
    expect_fixed(r, 1, 1, "r6")?;
    let d = r.data_pbd();
    Ok(Mtu(u32::from_be_bytes([0, d[0], d[1], d[2]])))
}

/// R5: PL=2, then Q, then L2RHs, then optionally one R6 that ends the record.
fn parse_r5(r: &Record<'_>) -> Result<SourceRoute> {
    if r.pad_len() != 2 {
        return Err(Error::new(
            ErrorKind::BadRecordPad(r.pad_len() as u8),
            "r5.pl",
            1,
        ));
    }
    let b = r.bytes();
    let q = r.route_quality().expect("an R5");
    let mut off = 8;
    let mut route = Vec::new();
    let mut mtu = None;
    while off < b.len() {
        let first = be16(b, off);
        if starts_l2rh(first) {
            let (l, n) = L2rhRepr::parse(&b[off..]).map_err(|e| {
                // An L2RH overrunning the record is a record-length error.
                if matches!(e.kind, ErrorKind::Truncated { .. }) {
                    Error::new(ErrorKind::BadRecordLength(r.words() as u16), "r5.l2rh", off)
                } else {
                    e.shifted(off)
                }
            })?;
            route.push(l);
            off += n;
        } else if b[off] == RecordType::Mtu as u8 {
            let inner = Record::new_checked(&b[off..]).map_err(|e| e.shifted(off))?;
            mtu = Some(parse_r6(&inner).map_err(|e| e.shifted(off))?);
            off += inner.bytes().len();
            if off != b.len() {
                return Err(Error::new(
                    ErrorKind::TrailingBytes(b.len() - off),
                    "r5",
                    off,
                ));
            }
        } else {
            return Err(Error::new(
                ErrorKind::UnexpectedRecord(b[off]),
                "r5.element",
                off,
            ));
        }
    }
    Ok(SourceRoute { q, route, mtu })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bytes: &[u8]) -> RecordRepr {
        let r = Record::new_checked(bytes).unwrap();
        let repr = RecordRepr::parse(&r).unwrap();
        let mut out = Vec::new();
        repr.emit(&mut out).unwrap();
        assert_eq!(out, bytes, "{repr:?}");
        repr
    }

    #[test]
    fn draft_record_examples() {
        assert_eq!(
            round_trip(&[1, 2, 0, 1, 0, 0, 0x01, 0x02]),
            RecordRepr::Address(Address(0x0102))
        );
        // R2 with 9 characters, PL=3, RL=2.
        let r2 = [
            2, 3, 0, 2, b'A', b'1', b'A', b'2', b'A', b'3', b'A', b'4', b'A', 0, 0, 0,
        ];
        assert_eq!(round_trip(&r2), RecordRepr::Name(b"A1A2A3A4A".to_vec()));
        // R3 with 9 parameter bytes, PL=2, RL=2.
        let r3 = [3, 2, 0, 2, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0];
        assert_eq!(
            round_trip(&r3),
            RecordRepr::Capability(Capability {
                code: 7,
                params: (1..=9).collect()
            })
        );
        // R4 with 3 logical addresses, PL=6, RL=2.
        let r4 = [4, 6, 0, 2, 0x80, 1, 0x80, 2, 0x80, 3, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            round_trip(&r4),
            RecordRepr::LogicalAddresses(vec![Address(0x8001), Address(0x8002), Address(0x8003)])
        );
        // R6 and R8.
        assert_eq!(
            round_trip(&[6, 1, 0, 1, 0, 0, 4, 0]),
            RecordRepr::Mtu(Mtu(1024))
        );
        assert_eq!(
            round_trip(&[8, 0, 0, 1, 0x02, 0x01, 0x12, 0x34]),
            RecordRepr::RtHeader {
                san_id: Address(0x0201),
                sn: 0x1234
            }
        );
        // R7 with 5 addresses, PL=2, RL=2.
        let r7 = [
            7, 2, 0, 2, 1, 0x41, 1, 0x42, 1, 0x43, 1, 0x44, 1, 0x45, 0, 0,
        ];
        assert_eq!(
            round_trip(&r7),
            RecordRepr::Rcvf((0x141..=0x145).map(Address).collect())
        );
    }

    #[test]
    fn r5_with_nested_r6() {
        // A combined SR of 14 bytes and an SR of 6 bytes, then R6: RL=5.
        let mut b = vec![5, 2, 0, 5, 0, 0, 0, 9];
        b.extend_from_slice(&[0, 14]);
        b.extend((1..=14).map(|x| x as u8));
        b.extend_from_slice(&[0, 6, 1, 2, 3, 4, 5, 6]);
        b.extend_from_slice(&[6, 1, 0, 1, 0, 0, 0, 100]);
        assert_eq!(b.len(), 40);
        match round_trip(&b) {
            RecordRepr::SourceRoute(s) => {
                assert_eq!(s.q, 9);
                assert_eq!(s.route.len(), 2);
                assert_eq!(s.mtu, Some(Mtu(100)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn empty_lists_and_routes() {
        round_trip(&[7, 4, 0, 1, 0, 0, 0, 0]);
        round_trip(&[5, 2, 0, 1, 0, 0, 0, 0]);
        round_trip(&[2, 4, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn malformed_records() {
        let e = |b: &[u8]| {
            Record::new_checked(b)
                .and_then(|r| RecordRepr::parse(&r))
                .unwrap_err()
        };
        assert_eq!(
            e(&[9, 0, 0, 1, 0, 0, 0, 0]).kind,
            ErrorKind::BadRecordType(9)
        );
        assert_eq!(
            e(&[1, 2, 0, 0, 0, 0, 0, 0]).kind,
            ErrorKind::BadRecordLength(0)
        );
        assert_eq!(e(&[1, 2, 0, 2, 0, 0, 0, 0]).field, "record.rl");
        assert_eq!(
            e(&[1, 8, 0, 1, 0, 0, 0, 0x40]).kind,
            ErrorKind::BadRecordPad(8)
        );
        assert_eq!(
            e(&[1, 5, 0, 1, 0, 0, 0, 0x40]).kind,
            ErrorKind::BadRecordPad(5)
        );
        assert_eq!(
            e(&[1, 2, 0, 1, 0, 0, 0, 0x3F]).kind,
            ErrorKind::IllegalAddress(0x3F)
        );
        assert_eq!(
            e(&[7, 3, 0, 1, 1, 0x41, 1, 0]).kind,
            ErrorKind::OddLength(1)
        );
        assert_eq!(
            e(&[7, 0, 0, 1, 1, 0x41, 0, 0]).kind,
            ErrorKind::IllegalAddress(0)
        );
        assert_eq!(e(&[3, 4, 0, 1, 0, 0, 0, 0]).field, "r3.cc");
        // R5 whose L2RH overruns the record.
        assert_eq!(
            e(&[5, 2, 0, 2, 0, 0, 0, 0, 0, 14, 0, 0, 0, 0, 0, 0]).kind,
            ErrorKind::BadRecordLength(2)
        );
        // R5 with an R6 that is not last.
        let mut b = vec![5, 2, 0, 3, 0, 0, 0, 0, 6, 1, 0, 1, 0, 0, 0, 1];
        b.extend_from_slice(&[0, 6, 1, 2, 3, 4, 5, 6]);
        assert_eq!(e(&b).kind, ErrorKind::TrailingBytes(8));
        // R5 with something that is neither an L2RH nor an R6.
        assert_eq!(
            e(&[5, 2, 0, 2, 0, 0, 0, 0, 1, 2, 0, 1, 0, 0, 0, 0x40]).kind,
            ErrorKind::UnexpectedRecord(1)
        );
    }

    #[test]
    fn mtu_min_treats_zero_as_infinite() {
        assert_eq!(Mtu(0).min(Mtu(5)), Mtu(5));
        assert_eq!(Mtu(5).min(Mtu(0)), Mtu(5));
        assert_eq!(Mtu(7).min(Mtu(5)), Mtu(5));
        assert_eq!(Mtu::from_bytes(8191), Mtu(1023));
        assert_eq!(Mtu(1024).bytes(), Some(8192));
        assert_eq!(Mtu(0).bytes(), None);
    }
}
