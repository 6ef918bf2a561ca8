//! AddressRecord (0xFF21, SubnAdm): one entry of a SAN master's identity ->
//! address map (docs/manager.md "Address assignment"), the addresses it gave
//! and the ones its sweeps found, which a standby copies to give the same
//! address to the same node after a change of master. OpenSM keeps this map
//! as its guid2lid file; here the master serves it, read with GetTable
//! (docs/spec-notes.md 63).
//!
//! A GetTable's attribute area is an [`AddressTable`] too: its first
//! record's identity is where the table is read from (the records whose
//! identity is at least it; 0: from the start), its address is ignored. The
//! GetTableResp holds up to [`PER_MAD`] records in identity order, packed
//! from the area's first byte; an identity is never 0, so the records end at
//! the first slot whose identity is 0. A full answer may have more after
//! it: the reader asks again from its last identity + 1, until an answer is
//! not full.

use rrp::Address;

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be16, be64, put16, put64};

/// Byte offsets of one record, from the record's first byte.
pub mod field {
    /// The node identity (never 0).
    pub const IDENTITY: usize = 0;
    /// Its address.
    pub const ADDRESS: usize = 8;
}

/// Bytes of one record (two 8-byte words, InfiniBand's AttributeOffset 2).
pub const RECORD_LEN: usize = 16;

/// Records in one SubnAdm MAD's attribute area (192 bytes).
pub const PER_MAD: usize = 12;

/// One entry of the identity -> address map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AddressRecord {
    /// The node identity (NodeInfo's NodeIdentity; never 0).
    pub identity: u64,
    /// The address it was given, or answered at.
    pub address: Address,
}

impl AddressRecord {
    /// AttributeID, in the range InfiniBand leaves to vendors.
    pub const ID: u16 = 0xFF21;
}

/// The records of one attribute area: a GetTable's template (its first
/// record), a GetTableResp's table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AddressTable {
    /// At most [`PER_MAD`], none of identity 0.
    pub records: Vec<AddressRecord>,
}

impl AddressTable {
    /// Bytes of the layout.
    pub const LEN: usize = PER_MAD * RECORD_LEN;

    /// The template of a GetTable reading the table from `identity` on.
    pub fn from_identity(identity: u64) -> AddressTable {
        AddressTable {
            records: vec![AddressRecord {
                identity,
                address: Address::UNSPECIFIED,
            }],
        }
    }

    /// Where a GetTable reads from: the first record's identity (0 when
    /// there is none).
    pub fn start(&self) -> u64 {
        self.records.first().map_or(0, |r| r.identity)
    }

    /// Whether the table may go on after these records: the area is full.
    pub fn full(&self) -> bool {
        self.records.len() >= PER_MAD
    }

    /// Reads the attribute area (at least 192 bytes): the records up to the
    /// first of identity 0.
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "address_record")?;
        let records = (0..PER_MAD)
            .map(|i| i * RECORD_LEN)
            .map(|at| AddressRecord {
                identity: be64(area, at + field::IDENTITY),
                address: Address(be16(area, at + field::ADDRESS)),
            })
            .take_while(|r| r.identity != 0)
            .collect();
        Ok(AddressTable { records })
    }

    /// Writes the attribute into `area` (at least 192 bytes), zeroing the
    /// rest. Refuses more than [`PER_MAD`] records and, after the first, a
    /// record of identity 0 (it would end the table when read; a first one
    /// of 0 is the template "from the start", which reads as no record).
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        if self.records.len() > PER_MAD {
            return Err(Error::new(
                ErrorKind::BadValue("more than 12 records"),
                "address_record.records",
                Self::LEN,
            ));
        }
        if let Some(i) = self.records.iter().skip(1).position(|r| r.identity == 0) {
            return Err(Error::new(
                ErrorKind::BadValue("a record of identity 0"),
                "address_record.identity",
                (i + 1) * RECORD_LEN,
            ));
        }
        prepare(area, Self::LEN, "address_record")?;
        for (i, r) in self.records.iter().enumerate() {
            let at = i * RECORD_LEN;
            put64(area, at + field::IDENTITY, r.identity);
            put16(area, at + field::ADDRESS, r.address.0);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(identity: u64, address: u16) -> AddressRecord {
        AddressRecord {
            identity,
            address: Address(address),
        }
    }

    #[test]
    fn bytes() {
        let t = AddressTable {
            records: vec![rec(0x0102_0304_0506_0708, 0x0181), rec(9, 0x0182)],
        };
        let mut area = [0xAAu8; 192];
        t.emit(&mut area).unwrap();
        assert_eq!(
            &area[..34],
            &[
                1, 2, 3, 4, 5, 6, 7, 8, 0x01, 0x81, 0, 0, 0, 0, 0, 0, //
                0, 0, 0, 0, 0, 0, 0, 9, 0x01, 0x82, 0, 0, 0, 0, 0, 0, //
                0, 0
            ]
        );
        assert!(area[32..].iter().all(|b| *b == 0));
        assert_eq!(AddressTable::parse(&area).unwrap(), t);
        assert!(!t.full());
        assert_eq!(t.start(), 0x0102_0304_0506_0708);
    }

    #[test]
    fn templates_and_bounds() {
        let mut area = [0u8; 192];
        AddressTable::from_identity(0).emit(&mut area).unwrap();
        let read = AddressTable::parse(&area).unwrap();
        assert!(read.records.is_empty());
        assert_eq!(read.start(), 0);
        AddressTable::from_identity(77).emit(&mut area).unwrap();
        assert_eq!(AddressTable::parse(&area).unwrap().start(), 77);
        let full = AddressTable {
            records: (1..=12).map(|i| rec(i, 0x0100 + i as u16)).collect(),
        };
        full.emit(&mut area).unwrap();
        assert!(AddressTable::parse(&area).unwrap().full());
        let mut over = full.clone();
        over.records.push(rec(13, 0x0200));
        assert!(over.emit(&mut area).is_err());
        let zero = AddressTable {
            records: vec![rec(1, 0x0100), rec(0, 0x0101)],
        };
        assert_eq!(zero.emit(&mut area).unwrap_err().offset, 16);
        assert!(AddressTable::parse(&area[..191]).is_err());
    }
}
