//! PartitionsText (0xFF22, SubnAdm): one chunk of a SAN master's partitions
//! in force, as the text `Partitions::to_text` writes and
//! `mgmt::partition::parse` reads back (docs/partitions.md "Standbys",
//! docs/manager.md "Partition tables"). A standby copies them, so that when
//! it becomes master it gives every member the tables the master gave,
//! whatever its own partitions file says (docs/spec-notes.md 75). Read with
//! GetTable like AddressRecord: one record an answer.
//!
//! A GetTable's attribute area is a PartitionsText too: its offset is where
//! the text is read from, the other fields are ignored. The GetTableResp's
//! record holds the text's version (a hash of the whole text: a standby
//! whose copy has this version holds the master's partitions), its total
//! length in bytes, the offset of the chunk and up to [`CHUNK`] bytes of
//! it. The reader asks again from `offset + chunk length` until it has
//! `total` bytes; an answer of another version starts the copy again.

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be16, be32, be64, put16, put32, put64};

/// Byte offsets, from the attribute area's first byte.
pub mod field {
    /// The text's version (a hash of all of it).
    pub const VERSION: usize = 0;
    /// The text's length in bytes.
    pub const TOTAL: usize = 8;
    /// Where this chunk starts in the text (a GetTable: where to read from).
    pub const OFFSET: usize = 12;
    /// Bytes of text in this chunk.
    pub const LENGTH: usize = 16;
    /// The chunk's bytes (18-23 reserved).
    pub const TEXT: usize = 24;
}

/// Bytes of the layout: a SubnAdm MAD's attribute area.
pub const LEN: usize = 192;

/// Bytes of text one record holds.
pub const CHUNK: usize = LEN - field::TEXT;

/// One chunk of the master's partitions as text (or a GetTable's template).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PartitionsText {
    /// The whole text's version (`Partitions::version`).
    pub version: u64,
    /// The whole text's length in bytes.
    pub total: u32,
    /// Where `text` starts in it.
    pub offset: u32,
    /// The chunk: at most [`CHUNK`] bytes (UTF-8 only as a whole text).
    pub text: Vec<u8>,
}

impl PartitionsText {
    /// AttributeID, in the range InfiniBand leaves to vendors, next to
    /// AddressRecord.
    pub const ID: u16 = 0xFF22;

    /// The template of a GetTable reading the text from `offset` on.
    pub fn from_offset(offset: u32) -> PartitionsText {
        PartitionsText {
            offset,
            ..PartitionsText::default()
        }
    }

    /// The chunk of `text` (of version `version`) from `offset` on: as
    /// much as one record holds, none past the end.
    pub fn chunk_of(text: &[u8], version: u64, offset: u32) -> PartitionsText {
        let start = (offset as usize).min(text.len());
        let end = (start + CHUNK).min(text.len());
        PartitionsText {
            version,
            total: u32::try_from(text.len()).unwrap_or(u32::MAX),
            offset,
            text: text[start..end].to_vec(),
        }
    }

    /// Where the text goes on after this chunk.
    pub fn next(&self) -> u64 {
        u64::from(self.offset) + self.text.len() as u64
    }

    /// Reads the attribute area (at least 192 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, LEN, "partitions_text")?;
        let n = be16(area, field::LENGTH) as usize;
        if n > CHUNK {
            return Err(Error::new(
                ErrorKind::BadValue("more than 168 bytes of text"),
                "partitions_text.length",
                field::LENGTH,
            ));
        }
        Ok(PartitionsText {
            version: be64(area, field::VERSION),
            total: be32(area, field::TOTAL),
            offset: be32(area, field::OFFSET),
            text: area[field::TEXT..field::TEXT + n].to_vec(),
        })
    }

    /// Writes the attribute into `area` (at least 192 bytes), zeroing the
    /// rest. Refuses a chunk longer than [`CHUNK`].
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        if self.text.len() > CHUNK {
            return Err(Error::new(
                ErrorKind::BadValue("more than 168 bytes of text"),
                "partitions_text.text",
                field::TEXT,
            ));
        }
        prepare(area, LEN, "partitions_text")?;
        put64(area, field::VERSION, self.version);
        put32(area, field::TOTAL, self.total);
        put32(area, field::OFFSET, self.offset);
        put16(area, field::LENGTH, self.text.len() as u16);
        area[field::TEXT..field::TEXT + self.text.len()].copy_from_slice(&self.text);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        let r = PartitionsText {
            version: 0x0102_0304_0506_0708,
            total: 300,
            offset: 168,
            text: b"a=0x10 : ALL ;\n".to_vec(),
        };
        let mut area = [0xAAu8; 192];
        r.emit(&mut area).unwrap();
        assert_eq!(
            &area[..24],
            &[
                1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 1, 44, 0, 0, 0, 168, 0, 15, 0, 0, 0, 0, 0, 0
            ]
        );
        assert_eq!(&area[24..39], b"a=0x10 : ALL ;\n");
        assert!(area[39..].iter().all(|b| *b == 0));
        assert_eq!(PartitionsText::parse(&area).unwrap(), r);
        assert_eq!(r.next(), 183);
    }

    #[test]
    fn chunks_and_bounds() {
        let text: Vec<u8> = (0..400u32).map(|i| b'a' + (i % 26) as u8).collect();
        let a = PartitionsText::chunk_of(&text, 9, 0);
        assert_eq!((a.total, a.offset, a.text.len()), (400, 0, CHUNK));
        let b = PartitionsText::chunk_of(&text, 9, a.next() as u32);
        let c = PartitionsText::chunk_of(&text, 9, b.next() as u32);
        assert_eq!(c.text.len(), 400 - 2 * CHUNK);
        assert_eq!(c.next(), 400);
        let mut whole = a.text.clone();
        whole.extend(&b.text);
        whole.extend(&c.text);
        assert_eq!(whole, text);
        assert!(PartitionsText::chunk_of(&text, 9, 1000).text.is_empty());
        let mut area = [0u8; 192];
        PartitionsText::from_offset(77).emit(&mut area).unwrap();
        assert_eq!(PartitionsText::parse(&area).unwrap().offset, 77);
        let over = PartitionsText {
            text: vec![b'x'; CHUNK + 1],
            ..PartitionsText::default()
        };
        assert!(over.emit(&mut area).is_err());
        area[field::LENGTH + 1] = 169;
        assert_eq!(
            PartitionsText::parse(&area).unwrap_err().offset,
            field::LENGTH
        );
        assert!(PartitionsText::parse(&area[..191]).is_err());
    }
}
