//! The 16-byte EEP header (Part-1, "The format of the EEP header").
//!
//! ```text
//!  0        2        3        4                 6                 8
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! | Destination-Addr|Priority| Version| Packet-type     | Type-extension  |
//! +---+----+--------+--------+--------+--------+--------+--------+--------+
//! | E | PL | Data-Length (8B-words)   | Source-Address  | Free            |
//! +---+----+--------+--------+--------+--------+--------+--------+--------+
//! ```

use crate::address::Address;
use crate::endian::Endian;
use crate::error::{Error, ErrorKind, Result};
use crate::kind::PacketType;
use crate::wire::bytes::{be16, be24};

/// Length of the EEP header in bytes.
pub const HEADER_LEN: usize = 16;
/// The only version this implementation speaks (Part-1, "Version").
pub const VERSION: u8 = 5;
/// The largest Data Length (24 bits, in 8-byte words).
pub const MAX_DATA_WORDS: u32 = (1 << 24) - 1;

/// Byte offsets of the header fields.
pub mod field {
    use core::ops::Range;
    /// Destination Address.
    pub const DST: Range<usize> = 0..2;
    /// Priority.
    pub const PRIORITY: usize = 2;
    /// Version ("magic cookie").
    pub const VERSION: usize = 3;
    /// Packet Type.
    pub const PT: Range<usize> = 4..6;
    /// Type Extension.
    pub const TE: Range<usize> = 6..8;
    /// E (high nibble) and PL (low nibble).
    pub const E_PL: usize = 8;
    /// Data Length, 24 bits.
    pub const DL: Range<usize> = 9..12;
    /// Source Address.
    pub const SRC: Range<usize> = 12..14;
    /// Free.
    pub const FREE: Range<usize> = 14..16;
}

/// A zero-copy view of an EEP header at the start of a buffer.
#[derive(Debug, Clone, Copy)]
pub struct Header<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Header<T> {
    /// Wraps a buffer without checking its length; accessors panic if it is
    /// shorter than [`HEADER_LEN`]. For callers that checked already.
    pub const fn new_unchecked(buffer: T) -> Self {
        Header { buffer }
    }

    /// Wraps a buffer of at least [`HEADER_LEN`] bytes.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let len = buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::truncated("eep.header", 0, HEADER_LEN, len));
        }
        Ok(Header { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination Address.
    #[inline]
    pub fn dst(&self) -> Address {
        Address(be16(self.buffer.as_ref(), field::DST.start))
    }
    /// Priority (all ones highest).
    #[inline]
    pub fn priority(&self) -> u8 {
        self.buffer.as_ref()[field::PRIORITY]
    }
    /// Version.
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }
    /// Packet Type.
    #[inline]
    pub fn packet_type(&self) -> PacketType {
        PacketType(be16(self.buffer.as_ref(), field::PT.start))
    }
    /// Type Extension.
    #[inline]
    pub fn type_ext(&self) -> u16 {
        be16(self.buffer.as_ref(), field::TE.start)
    }
    /// E bits.
    #[inline]
    pub fn endian(&self) -> Endian {
        Endian::from_nibble(self.buffer.as_ref()[field::E_PL] >> 4)
    }
    /// Pad Length (bytes of padding at the end of the data block).
    #[inline]
    pub fn pad_len(&self) -> u8 {
        self.buffer.as_ref()[field::E_PL] & 0x0F
    }
    /// Data Length in 8-byte words, padding included.
    #[inline]
    pub fn data_words(&self) -> u32 {
        be24(self.buffer.as_ref(), field::DL.start)
    }
    /// Source Address (0 = not specified).
    #[inline]
    pub fn src(&self) -> Address {
        Address(be16(self.buffer.as_ref(), field::SRC.start))
    }
    /// Free.
    #[inline]
    pub fn free(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FREE.start)
    }
    /// Bytes of the data block, padding included: 8 * DL.
    #[inline]
    pub fn data_block_len(&self) -> usize {
        self.data_words() as usize * 8
    }
    /// Bytes from the start of the header to the end of the trailer.
    #[inline]
    pub fn packet_len(&self) -> usize {
        HEADER_LEN + self.data_block_len() + crate::wire::packet::TRAILER_LEN
    }

    /// Checks version and pad length; `base` is the header's offset in the
    /// outer buffer, for the error.
    pub fn check(&self, base: usize) -> Result<()> {
        if self.version() != VERSION {
            return Err(Error::new(
                ErrorKind::BadVersion(self.version()),
                "eep.version",
                base + field::VERSION,
            ));
        }
        let pl = self.pad_len();
        if pl > 7 || (pl as usize) > self.data_block_len() {
            return Err(Error::new(
                ErrorKind::BadPadLength(pl),
                "eep.pl",
                base + field::E_PL,
            ));
        }
        Ok(())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    #[inline(always)]
    fn put16(&mut self, at: usize, v: u16) {
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }
    /// Sets the Destination Address.
    pub fn set_dst(&mut self, a: Address) {
        self.put16(field::DST.start, a.0)
    }
    /// Sets the Priority.
    pub fn set_priority(&mut self, p: u8) {
        self.buffer.as_mut()[field::PRIORITY] = p
    }
    /// Sets the Version.
    pub fn set_version(&mut self, v: u8) {
        self.buffer.as_mut()[field::VERSION] = v
    }
    /// Sets the Packet Type.
    pub fn set_packet_type(&mut self, pt: PacketType) {
        self.put16(field::PT.start, pt.0)
    }
    /// Sets the Type Extension.
    pub fn set_type_ext(&mut self, te: u16) {
        self.put16(field::TE.start, te)
    }
    /// Sets E and PL.
    pub fn set_endian_pad(&mut self, e: Endian, pl: u8) {
        self.buffer.as_mut()[field::E_PL] = (e.nibble() << 4) | (pl & 0x0F)
    }
    /// Sets the Data Length (low 24 bits of `words`).
    pub fn set_data_words(&mut self, words: u32) {
        let b = words.to_be_bytes();
        self.buffer.as_mut()[field::DL].copy_from_slice(&b[1..4]);
    }
    /// Sets the Source Address.
    pub fn set_src(&mut self, a: Address) {
        self.put16(field::SRC.start, a.0)
    }
    /// Sets Free.
    pub fn set_free(&mut self, f: u16) {
        self.put16(field::FREE.start, f)
    }
}

/// The owned EEP header fields, without DL and PL, which follow from the data
/// block that goes with the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct HeaderRepr {
    /// Destination Address.
    pub dst: Address,
    /// Priority.
    pub priority: u8,
    /// Packet Type.
    pub packet_type: PacketType,
    /// Type Extension.
    pub type_ext: u16,
    /// E bits.
    pub endian: Endian,
    /// Source Address.
    pub src: Address,
    /// Free.
    pub free: u16,
}

impl HeaderRepr {
    /// Reads the fields of a header after checking it (version 5, PL).
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>, base: usize) -> Result<HeaderRepr> {
        h.check(base)?;
        Ok(HeaderRepr {
            dst: h.dst(),
            priority: h.priority(),
            packet_type: h.packet_type(),
            type_ext: h.type_ext(),
            endian: h.endian(),
            src: h.src(),
            free: h.free(),
        })
    }

    /// Writes the header for a data block of `net_len` bytes (DL and PL
    /// follow from it). `net_len` must be below 2^27.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, net_len: usize) {
        let words = net_len.div_ceil(8);
        let pl = (words * 8 - net_len) as u8;
        h.set_dst(self.dst);
        h.set_priority(self.priority);
        h.set_version(VERSION);
        h.set_packet_type(self.packet_type);
        h.set_type_ext(self.type_ext);
        h.set_endian_pad(self.endian, pl);
        h.set_data_words(words as u32);
        h.set_src(self.src);
        h.set_free(self.free);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_at_their_offsets() {
        let bytes = [
            0x01, 0x02, 0x03, 0x05, 0x00, 0x02, 0x00, 0x04, 0xB3, 0x00, 0x00, 0x02, 0x01, 0x01,
            0xAB, 0xCD,
        ];
        let h = Header::new_checked(&bytes[..]).unwrap();
        assert_eq!(h.dst(), Address(0x0102));
        assert_eq!(h.priority(), 3);
        assert_eq!(h.version(), 5);
        assert_eq!(h.packet_type(), PacketType::RRP);
        assert_eq!(h.type_ext(), 4);
        assert_eq!(h.endian(), Endian::from_nibble(0xB));
        assert_eq!(h.pad_len(), 3);
        assert_eq!(h.data_words(), 2);
        assert_eq!(h.src(), Address(0x0101));
        assert_eq!(h.free(), 0xABCD);
        h.check(0).unwrap();
        let r = HeaderRepr::parse(&h, 0).unwrap();
        let mut out = [0u8; 16];
        r.emit(&mut Header::new_unchecked(&mut out[..]), 13);
        assert_eq!(out, bytes);
    }

    #[test]
    fn rejects_short_and_bad_version() {
        assert_eq!(
            Header::new_checked(&[0u8; 15][..]).unwrap_err().kind,
            ErrorKind::Truncated {
                needed: 16,
                available: 15
            }
        );
        let mut b = [0u8; 16];
        b[3] = 4;
        let e = Header::new_checked(&b[..]).unwrap().check(10).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadVersion(4));
        assert_eq!(e.offset, 13);
        b[3] = 5;
        b[8] = 0x01; // PL=1 with DL=0
        assert_eq!(
            Header::new_checked(&b[..])
                .unwrap()
                .check(0)
                .unwrap_err()
                .kind,
            ErrorKind::BadPadLength(1)
        );
    }
}
