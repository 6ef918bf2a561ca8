//! A whole MessageWay packet (Part-1, "Message structure"): leading L2RHs,
//! the EEP header, the data block (8*DL bytes, of which the last PL are
//! padding) and the 8-byte trailer (EI). The end of a packet is found from
//! DL, never from the buffer length: bytes after the trailer (e.g. Ethernet
//! padding) are not part of the packet.

use crate::error::{Error, ErrorKind, Result};
use crate::wire::header::{HEADER_LEN, Header, HeaderRepr, MAX_DATA_WORDS};
use crate::wire::l2rh::{L2rh, L2rhRepr, l2rh_bytes, starts_l2rh};

/// Length of the EEP trailer in bytes.
pub const TRAILER_LEN: usize = 8;
/// The smallest packet: a header and a trailer.
pub const MIN_PACKET_LEN: usize = HEADER_LEN + TRAILER_LEN;

/// Where the parts of a packet lie in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

/// Walks the leading L2RHs (at most `max_l2rhs`), checks the EEP header and
/// locates data and trailer. Every offset in an error counts from `buf[0]`.
pub fn locate(buf: &[u8], max_l2rhs: usize) -> Result<Layout> {
    let mut off = 0usize;
    let mut count = 0usize;
    loop {
        let Some(first) = buf.get(off..off + 2) else {
            return Err(Error::truncated(
                "packet",
                off,
                2,
                buf.len().saturating_sub(off),
            ));
        };
        let v = u16::from_be_bytes([first[0], first[1]]);
        if !starts_l2rh(v) {
            break;
        }
        if count == max_l2rhs {
            return Err(Error::new(ErrorKind::TooManyL2rhs(max_l2rhs), "l2rh", off));
        }
        let l2 = L2rh::new_checked(&buf[off..]).map_err(|e| e.shifted(off))?;
        off += l2.total_len();
        count += 1;
    }
    let h = Header::new_checked(&buf[off..]).map_err(|e| e.shifted(off))?;
    h.check(off)?;
    let block = h.data_block_len();
    let need = HEADER_LEN + block + TRAILER_LEN;
    let avail = buf.len() - off;
    if avail < need {
        let (field, at) = if avail < HEADER_LEN + block {
            ("eep.data", off + HEADER_LEN)
        } else {
            ("eep.trailer", off + HEADER_LEN + block)
        };
        return Err(Error::truncated(
            field,
            at,
            need - (at - off),
            buf.len() - at,
        ));
    }
    let pad = h.pad_len() as usize;
    Ok(Layout {
        l2rh_count: count,
        header_offset: off,
        data_len: block - pad,
        pad_len: pad,
    })
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
