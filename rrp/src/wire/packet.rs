//! A whole MessageWay packet (Part-1, "Message structure"): leading L2RHs,
//! the EEP header, the data block (8*DL bytes, of which the last PL are
//! padding) and the 8-byte trailer (EI). The end of a packet is found from
//! DL, never from the buffer length: bytes after the trailer (e.g. Ethernet
//! padding) are not part of the packet.

use crate::error::{Error, ErrorKind, Result};
use crate::wire::bytes::{be16, be16_checked};
use crate::wire::header::{self, HEADER_LEN, Header, HeaderRepr, MAX_DATA_WORDS, VERSION};
use crate::wire::l2rh::{L2rh, L2rhRepr, l2rh_bytes, starts_l2rh};

/// Length of the EEP trailer in bytes.
pub const TRAILER_LEN: usize = 8;
/// The smallest packet: a header and a trailer.
pub const MIN_PACKET_LEN: usize = HEADER_LEN + TRAILER_LEN;

/// Where the parts of a packet lie in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Layout {
    /// Number of leading L2RHs.
    pub l2rh_count: usize,
    /// Offset of the EEP header (= bytes of leading L2RHs).
    pub header_offset: usize,
    /// Net data bytes (8*DL - PL).
    pub data_len: usize,
    /// Padding bytes at the end of the data block (PL).
    pub pad_len: usize,
}

impl Layout {
    /// Offset of the data block.
    #[inline]
    pub const fn data_offset(&self) -> usize {
        self.header_offset + HEADER_LEN
    }
    /// Offset of the trailer.
    #[inline]
    pub const fn trailer_offset(&self) -> usize {
        self.data_offset() + self.data_len + self.pad_len
    }
    /// Bytes from the first L2RH to the end of the trailer.
    #[inline]
    pub const fn total_len(&self) -> usize {
        self.trailer_offset() + TRAILER_LEN
    }
    /// Bytes from the EEP header to the end of the trailer.
    #[inline]
    pub const fn eep_len(&self) -> usize {
        self.total_len() - self.header_offset
    }

    /// The layout of the same packet once its first L2RH, `l2rh_len`
    /// bytes long, is stripped (a router consumed it).
    #[inline]
    pub const fn without_first_l2rh(self, l2rh_len: usize) -> Layout {
        Layout {
            l2rh_count: self.l2rh_count - 1,
            header_offset: self.header_offset - l2rh_len,
            data_len: self.data_len,
            pad_len: self.pad_len,
        }
    }
}

/// The part of a packet that a buffer ends in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// The first 16 bits of an L2RH or of the EEP header.
    Start,
    /// An L2RH.
    L2rh,
    /// The EEP header.
    Header,
    /// The data block.
    Data,
    /// The trailer.
    Trailer,
}

/// Why a buffer does not hold a well-formed packet: each fault is one drop
/// reason of the forwarding path (`crate::DropReason::from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The buffer ends in this part.
    Truncated(Part),
    /// An L2RH whose length field L is 0.
    ZeroL2rh,
    /// More leading L2RHs than allowed.
    TooManyL2rhs,
    /// EEP Version is not 5.
    BadVersion,
    /// EEP PL larger than 7 or than the data block.
    BadPadLength,
}

/// A [`Fault`] and where it lies: the offset of the L2RH, or of the EEP
/// header, that the fault is in (for [`Part::Start`]: where the next L2RH
/// or header should start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Malformed {
    /// What is wrong.
    pub fault: Fault,
    /// Offset of the L2RH or header it concerns, from `buf[0]`.
    pub at: usize,
}

impl Malformed {
    /// The detailed error (field, byte offset, sizes) for this fault in
    /// `buf`, as located with at most `max_l2rhs` L2RHs. Off the fast path.
    #[cold]
    pub fn error(&self, buf: &[u8], max_l2rhs: usize) -> Error {
        let at = self.at;
        let left = buf.len().saturating_sub(at);
        match self.fault {
            Fault::Truncated(Part::Start) => Error::truncated("packet", at, 2, left),
            Fault::Truncated(Part::L2rh) => {
                Error::truncated("l2rh", at, l2rh_bytes(be16(buf, at) as usize), left)
            }
            Fault::ZeroL2rh => Error::new(ErrorKind::BadL2rhLength(0), "l2rh.len", at),
            Fault::TooManyL2rhs => Error::new(ErrorKind::TooManyL2rhs(max_l2rhs), "l2rh", at),
            Fault::Truncated(Part::Header) => Error::truncated("eep.header", at, HEADER_LEN, left),
            Fault::BadVersion => Error::new(
                ErrorKind::BadVersion(buf[at + header::field::VERSION]),
                "eep.version",
                at + header::field::VERSION,
            ),
            Fault::BadPadLength => Error::new(
                ErrorKind::BadPadLength(buf[at + header::field::E_PL] & 0x0F),
                "eep.pl",
                at + header::field::E_PL,
            ),
            Fault::Truncated(part @ (Part::Data | Part::Trailer)) => {
                let h = Header::new_unchecked(&buf[at..at + HEADER_LEN]);
                let need = HEADER_LEN + h.data_block_len() + TRAILER_LEN;
                let (field, from) = if part == Part::Data {
                    ("eep.data", at + HEADER_LEN)
                } else {
                    ("eep.trailer", at + HEADER_LEN + h.data_block_len())
                };
                Error::truncated(field, from, need - (from - at), buf.len() - from)
            }
        }
    }
}

/// Walks the leading L2RHs (at most `max_l2rhs`), checks the EEP header
/// (version 5, PL) and locates data and trailer from DL: the one walk over
/// a packet's framing, for the forwarding path (which turns a [`Malformed`]
/// into a drop reason) and for everyone else ([`locate`] gives the detailed
/// error). Bytes after the trailer (frame padding) are not looked at.
#[inline(always)]
pub fn locate_fast(buf: &[u8], max_l2rhs: usize) -> core::result::Result<Layout, Malformed> {
    let Some(first) = buf.first_chunk::<2>() else {
        return Err(Malformed {
            fault: Fault::Truncated(Part::Start),
            at: 0,
        });
    };
    let l = u16::from_be_bytes(*first);
    if !starts_l2rh(l) {
        // The common case: no L2RH, the header at offset 0.
        return eep_at(buf, 0, 0);
    }
    // The common source route: one L2RH (a router hop) and the header
    // after it, without the walk's loop and call. Anything else (more
    // L2RHs, a cut one, L = 0) takes the walk, which says what is wrong.
    if l != 0 && max_l2rhs >= 1 {
        let off = l2rh_bytes(l as usize);
        if let Some(next) = buf.get(off..off + 2)
            && !starts_l2rh(be16(next, 0))
        {
            return eep_at(buf, off, 1);
        }
    }
    walk_l2rhs(buf, max_l2rhs)
}

/// The L2RHs in front of the EEP header, then the header.
#[inline]
fn walk_l2rhs(buf: &[u8], max_l2rhs: usize) -> core::result::Result<Layout, Malformed> {
    let len = buf.len();
    let bad = |fault, at| Err(Malformed { fault, at });
    let mut off = 0usize;
    let mut prev = 0usize;
    let mut count = 0usize;
    loop {
        let Some(first) = buf.get(off..off + 2) else {
            // Past the end: the L2RH before was cut; at the end: nothing
            // follows it.
            return if off > len {
                bad(Fault::Truncated(Part::L2rh), prev)
            } else {
                bad(Fault::Truncated(Part::Start), off)
            };
        };
        let l = be16(first, 0);
        if !starts_l2rh(l) {
            break;
        }
        if count == max_l2rhs {
            return bad(Fault::TooManyL2rhs, off);
        }
        if l == 0 {
            return bad(Fault::ZeroL2rh, off);
        }
        prev = off;
        off += l2rh_bytes(l as usize);
        count += 1;
    }
    eep_at(buf, off, count)
}

/// Checks the EEP header at `off` (after `count` L2RHs) and finds the
/// packet's end from DL.
#[inline(always)]
fn eep_at(buf: &[u8], off: usize, count: usize) -> core::result::Result<Layout, Malformed> {
    let bad = |fault| Err(Malformed { fault, at: off });
    let Some(h) = buf.get(off..off + HEADER_LEN) else {
        return bad(Fault::Truncated(Part::Header));
    };
    let h = Header::new_unchecked(h);
    if h.version() != VERSION {
        return bad(Fault::BadVersion);
    }
    let pl = h.pad_len() as usize;
    let block = h.data_block_len();
    if pl > 7 || pl > block {
        return bad(Fault::BadPadLength);
    }
    let avail = buf.len() - off;
    if avail < HEADER_LEN + block + TRAILER_LEN {
        let part = if avail < HEADER_LEN + block {
            Part::Data
        } else {
            Part::Trailer
        };
        return bad(Fault::Truncated(part));
    }
    Ok(Layout {
        l2rh_count: count,
        header_offset: off,
        data_len: block - pl,
        pad_len: pl,
    })
}

/// Walks the leading L2RHs (at most `max_l2rhs`), checks the EEP header and
/// locates data and trailer ([`locate_fast`] with the detailed error). Every
/// offset in an error counts from `buf[0]`.
pub fn locate(buf: &[u8], max_l2rhs: usize) -> Result<Layout> {
    locate_fast(buf, max_l2rhs).map_err(|m| m.error(buf, max_l2rhs))
}

/// The EEP header at the start of possibly truncated packet bytes (an ERR
/// GENERAL's enclosed bytes, a notice's first bytes): the leading L2RHs
/// are walked (at most `max_l2rhs`, each whole), then 16 header bytes must
/// follow; nothing after them is looked at. Returns the header and its
/// offset.
pub fn header_of(buf: &[u8], max_l2rhs: usize) -> Option<(Header<&[u8]>, usize)> {
    let mut off = 0usize;
    for _ in 0..=max_l2rhs {
        let l = be16_checked(buf, off)?;
        if !starts_l2rh(l) {
            let h = buf.get(off..off + HEADER_LEN)?;
            return Some((Header::new_unchecked(h), off));
        }
        if l == 0 {
            return None;
        }
        off += l2rh_bytes(l as usize);
    }
    None
}

/// A zero-copy view of a located packet.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
    layout: Layout,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Locates the packet in `buffer`, allowing at most `max_l2rhs` leading L2RHs.
    pub fn new_checked(buffer: T, max_l2rhs: usize) -> Result<Self> {
        let layout = locate(buffer.as_ref(), max_l2rhs)?;
        Ok(Packet { buffer, layout })
    }

    /// The packet in `buffer` as located before (by the forwarding path,
    /// which hands a punted packet over with its layout): only checked to
    /// lie within the buffer, not walked again.
    pub fn with_layout(buffer: T, layout: Layout) -> Result<Self> {
        let len = buffer.as_ref().len();
        let end = [HEADER_LEN, layout.data_len, layout.pad_len, TRAILER_LEN]
            .iter()
            .try_fold(layout.header_offset, |a, b| a.checked_add(*b));
        match end {
            Some(end) if end <= len => Ok(Packet { buffer, layout }),
            _ => Err(Error::truncated(
                "packet",
                0,
                end.unwrap_or(usize::MAX),
                len,
            )),
        }
    }

    /// The packet in `buffer` as [`locate_fast`] (or [`locate`]) located it
    /// in that same buffer, taken without any check: for the per-packet
    /// paths that just located it. Accessors panic if `layout` does not
    /// describe `buffer`.
    #[inline(always)]
    pub const fn with_layout_unchecked(buffer: T, layout: Layout) -> Self {
        Packet { buffer, layout }
    }

    /// Where the parts lie.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The leading L2RHs, first to last.
    pub fn l2rhs(&self) -> L2rhIter<'_> {
        L2rhIter {
            buf: &self.buffer.as_ref()[..self.layout.header_offset],
        }
    }

    /// The EEP header.
    pub fn header(&self) -> Header<&[u8]> {
        let o = self.layout.header_offset;
        Header::new_unchecked(&self.buffer.as_ref()[o..o + HEADER_LEN])
    }

    /// The net data bytes (padding excluded).
    pub fn data(&self) -> &[u8] {
        let o = self.layout.data_offset();
        &self.buffer.as_ref()[o..o + self.layout.data_len]
    }

    /// The packet's bytes, from the first L2RH to the end of the trailer.
    pub fn bytes(&self) -> &[u8] {
        &self.buffer.as_ref()[..self.layout.total_len()]
    }

    /// The Error Indication of the trailer.
    pub fn ei(&self) -> u64 {
        let o = self.layout.trailer_offset();
        u64::from_be_bytes(self.buffer.as_ref()[o..o + 8].try_into().expect("8 bytes"))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the Error Indication.
    pub fn set_ei(&mut self, ei: u64) {
        let o = self.layout.trailer_offset();
        self.buffer.as_mut()[o..o + 8].copy_from_slice(&ei.to_be_bytes());
    }
}

/// The router's EI update (Part-1, "Error Indication"): an arithmetic shift
/// left by one bit, then a one ORed in when this router detected an error.
#[inline]
pub const fn shift_ei(ei: u64, error: bool) -> u64 {
    (ei << 1) | error as u64
}

/// Iterates the L2RHs of a buffer that holds only well-formed L2RHs (as
/// checked by [`locate`]).
#[derive(Debug, Clone)]
pub struct L2rhIter<'a> {
    buf: &'a [u8],
}

impl<'a> Iterator for L2rhIter<'a> {
    type Item = L2rh<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.len() < 2 {
            return None;
        }
        let l = L2rh::new_checked(self.buf).ok()?;
        let n = l.total_len();
        let (this, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(L2rh::new_checked(this).expect("checked above"))
    }
}

/// An owned packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PacketRepr {
    /// Leading L2RHs, first to last.
    pub l2rhs: Vec<L2rhRepr>,
    /// The EEP header fields (DL and PL follow from `data`).
    pub header: HeaderRepr,
    /// The net data block (padding excluded).
    pub data: Vec<u8>,
    /// The Error Indication.
    pub ei: u64,
}

impl PacketRepr {
    /// Parses the packet at the start of `buf`; bytes after its trailer are ignored.
    pub fn parse(buf: &[u8]) -> Result<PacketRepr> {
        let p = Packet::new_checked(buf, usize::MAX)?;
        let l2rhs = p
            .l2rhs()
            .map(|l| L2rhRepr::new(l.content()).expect("checked"))
            .collect();
        let header = HeaderRepr::parse(&p.header(), p.layout.header_offset)?;
        Ok(PacketRepr {
            l2rhs,
            header,
            data: p.data().to_vec(),
            ei: p.ei(),
        })
    }

    /// Bytes of the emitted packet.
    pub fn buffer_len(&self) -> usize {
        self.l2rhs
            .iter()
            .map(|l| l2rh_bytes(l.content().len()))
            .sum::<usize>()
            + HEADER_LEN
            + self.data.len().div_ceil(8) * 8
            + TRAILER_LEN
    }

    /// Appends the packet to `out`. Fails when the data block exceeds
    /// 2^24-1 words, or when the destination is below 0x0040 (it would read
    /// back as an L2RH length).
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<()> {
        if !self.header.dst.is_valid_destination() {
            let at = self.l2rhs.iter().map(L2rhRepr::buffer_len).sum();
            return Err(Error::new(
                ErrorKind::IllegalAddress(self.header.dst.0),
                "eep.dst",
                at,
            ));
        }
        let words = self.data.len().div_ceil(8);
        if words > MAX_DATA_WORDS as usize {
            return Err(Error::new(
                ErrorKind::TooLarge(self.data.len()),
                "eep.dl",
                0,
            ));
        }
        out.reserve(self.buffer_len());
        for l in &self.l2rhs {
            l.emit(out);
        }
        let h = out.len();
        out.resize(h + HEADER_LEN, 0);
        self.header
            .emit(&mut Header::new_unchecked(&mut out[h..]), self.data.len());
        out.extend_from_slice(&self.data);
        out.resize(h + HEADER_LEN + words * 8, 0);
        out.extend_from_slice(&self.ei.to_be_bytes());
        Ok(())
    }

    /// The packet as a new byte vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.emit(&mut v)?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Address;
    use crate::kind::PacketType;

    /// The walk over every L2RH, as `locate_fast` was before its inline
    /// case for one L2RH: the reference that case must agree with.
    fn locate_by_walk(b: &[u8], max: usize) -> core::result::Result<Layout, Malformed> {
        match b.first_chunk::<2>() {
            Some(f) if starts_l2rh(u16::from_be_bytes(*f)) => walk_l2rhs(b, max),
            _ => locate_fast(b, max),
        }
    }

    proptest::proptest! {
        /// The one-L2RH fast path gives the walk's layout or error on any
        /// bytes that start like an L2RH (random L, random next word).
        #[test]
        fn one_l2rh_fast_path_agrees_with_the_walk(
            l in 0u16..0x40,
            next in proptest::prelude::any::<u16>(),
            rest in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
            at in 0usize..80,
            max in 0usize..4,
        ) {
            let mut b = l.to_be_bytes().to_vec();
            b.extend_from_slice(&rest);
            let off = l2rh_bytes(l as usize);
            if off + 2 <= b.len() {
                b[off..off + 2].copy_from_slice(&next.to_be_bytes());
            }
            // A valid header after one L2RH now and then.
            if off + HEADER_LEN <= b.len() && at % 3 == 0 {
                b[off] |= 0x01;
                b[off + crate::wire::header::field::VERSION] = VERSION;
                b[off + 8] &= 0x03;
                b[off + 9] = 0;
                b[off + 10] = 0;
                b[off + 11] &= 0x03;
            }
            let cut = &b[..b.len().min(at.max(2))];
            proptest::prop_assert_eq!(locate_fast(cut, max), locate_by_walk(cut, max));
            proptest::prop_assert_eq!(locate_fast(&b, max), locate_by_walk(&b, max));
        }
    }

    fn sample() -> PacketRepr {
        PacketRepr {
            l2rhs: vec![L2rhRepr::new(&[3, 0, 3, 0]).unwrap()],
            header: HeaderRepr {
                dst: Address(0x0102),
                src: Address(0x0101),
                packet_type: PacketType(0x0100),
                ..Default::default()
            },
            data: vec![1, 2, 3, 4, 5, 6, 7, 8, 9],
            ei: 0,
        }
    }

    #[test]
    fn layout_and_round_trip() {
        let p = sample();
        let mut b = p.to_bytes().unwrap();
        assert_eq!(b.len(), 8 + 16 + 16 + 8);
        assert_eq!(b.len(), p.buffer_len());
        b.extend_from_slice(&[0xEE; 7]); // frame padding is ignored
        let view = Packet::new_checked(&b[..], 8).unwrap();
        assert_eq!(view.layout().l2rh_count, 1);
        assert_eq!(view.layout().header_offset, 8);
        assert_eq!(view.layout().data_len, 9);
        assert_eq!(view.layout().pad_len, 7);
        assert_eq!(view.layout().total_len(), 48);
        assert_eq!(view.data(), &p.data[..]);
        assert_eq!(PacketRepr::parse(&b).unwrap(), p);
    }

    #[test]
    fn l2rh_limit_and_truncation() {
        let p = sample();
        let b = p.to_bytes().unwrap();
        assert_eq!(
            locate(&b, 0).unwrap_err(),
            Error::new(ErrorKind::TooManyL2rhs(0), "l2rh", 0)
        );
        let e = locate(&b[..b.len() - 1], 8).unwrap_err();
        assert_eq!(e.field, "eep.trailer");
        assert_eq!(e.offset, 40);
        let e = locate(&b[..30], 8).unwrap_err();
        assert_eq!(e.field, "eep.data");
        assert_eq!(e.offset, 24);
        let e = locate(&b[..3], 8).unwrap_err();
        assert_eq!(e.field, "l2rh");
    }

    #[test]
    fn emit_refuses_a_destination_that_reads_as_an_l2rh() {
        // Regression: dst 0x0008 used to be emitted and read back as an L2RH
        // of 8 bytes, i.e. as a different packet.
        let mut p = sample();
        p.header.dst = Address(0x0008);
        let e = p.to_bytes().unwrap_err();
        assert_eq!(e.kind, ErrorKind::IllegalAddress(0x0008));
        assert_eq!(e.field, "eep.dst");
        assert_eq!(e.offset, 8);
        p.header.dst = Address(0x0040);
        assert_eq!(PacketRepr::parse(&p.to_bytes().unwrap()).unwrap(), p);
    }

    #[test]
    fn ei_shift() {
        assert_eq!(shift_ei(0, false), 0);
        assert_eq!(shift_ei(0, true), 1);
        assert_eq!(shift_ei(1, false), 2);
        assert_eq!(shift_ei(0x8000_0000_0000_0001, true), 3);
    }
}
