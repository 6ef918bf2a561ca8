//! PartitionTable (0x0016, Subn): one block of 32 entries of a node's table
//! of partitions, InfiniBand's P_KeyTable (docs/management.md
//! "PartitionTable", docs/partitions.md); modifier: the block number in
//! bits 0-15, and in bits 16-31 the address of the member whose table a
//! router keeps for its checks, 0 for the node's own table (as an
//! InfiniBand switch's P_KeyTable modifier carries the port;
//! docs/spec-notes.md 75).
//!
//! An entry is 16 bits: bit 15 the membership (1 full, 0 limited), bits
//! 0-14 the key ([`PartitionKey`]); 0x0000 is an empty entry, anywhere in
//! the block. A node keeps at most [`MAX_PARTITIONS`] entries: blocks 0
//! and 1 ([`BLOCKS`]).

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};
use crate::partition::{MAX_PARTITIONS, Membership, PartitionKey};
use rrp::wire::bytes::{be16, put16};

/// Byte offsets of PartitionTable.
pub mod field {
    /// The first entry; entry i is at `ENTRIES + 2 * i`.
    pub const ENTRIES: usize = 0;
}

/// Entries per block.
pub const ENTRIES: usize = 32;
/// Bytes per entry.
pub const ENTRY_LEN: usize = 2;
/// Blocks of a node's table: [`MAX_PARTITIONS`] entries.
pub const BLOCKS: u32 = (MAX_PARTITIONS / ENTRIES) as u32;

/// An entry's membership bit: a full member (the same bit as in a
/// packet's mark).
pub const FULL: u16 = rrp::partition_mark::FULL;

/// PartitionTable: the non-empty entries of one block, in slot order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PartitionTable {
    /// At most 32, no key twice.
    pub entries: Vec<(PartitionKey, Membership)>,
}

/// An entry's 16 bits.
pub fn entry_bits(key: PartitionKey, m: Membership) -> u16 {
    key.get()
        | match m {
            Membership::Full => FULL,
            Membership::Limited => 0,
        }
}

impl PartitionTable {
    /// AttributeID (InfiniBand's P_KeyTable).
    pub const ID: u16 = 0x0016;
    /// Bytes of the layout.
    pub const LEN: usize = ENTRIES * ENTRY_LEN;

    /// Whether `modifier` names a block a node keeps (0 or 1).
    pub const fn block_ok(modifier: u32) -> bool {
        modifier < BLOCKS
    }

    /// The modifier of block `block` of member `member`'s table as a
    /// router keeps it (`Address::UNSPECIFIED`: the node's own table).
    pub const fn modifier(member: rrp::Address, block: u32) -> u32 {
        (member.0 as u32) << 16 | (block & 0xFFFF)
    }

    /// A modifier's member address (`Address::UNSPECIFIED`: the node's own
    /// table) and block.
    pub const fn split_modifier(modifier: u32) -> (rrp::Address, u32) {
        (rrp::Address((modifier >> 16) as u16), modifier & 0xFFFF)
    }

    /// Block `block` of a node's `table` (at most [`MAX_PARTITIONS`]
    /// entries, in order): entries `32 * block` to `32 * block + 31`;
    /// `None` for a block past [`BLOCKS`].
    pub fn block_of(table: &[(PartitionKey, Membership)], block: u32) -> Option<PartitionTable> {
        if !Self::block_ok(block) {
            return None;
        }
        let from = block as usize * ENTRIES;
        Some(PartitionTable {
            entries: table.iter().skip(from).take(ENTRIES).copied().collect(),
        })
    }

    /// A block of these entries: more than 32, or a key twice, refused.
    pub fn from_entries(entries: &[(PartitionKey, Membership)]) -> Result<PartitionTable> {
        let t = PartitionTable {
            entries: entries.to_vec(),
        };
        t.check()?;
        Ok(t)
    }

    /// The entries, as a node's table holds them.
    pub fn to_entries(&self) -> Vec<(PartitionKey, Membership)> {
        self.entries.clone()
    }

    /// More than 32 entries, or a key twice.
    fn check(&self) -> Result<()> {
        if self.entries.len() > ENTRIES {
            return Err(Error::new(
                ErrorKind::BadValue("more than 32 entries"),
                "partition_table.entries",
                Self::LEN,
            ));
        }
        for (i, (k, _)) in self.entries.iter().enumerate() {
            if self.entries[..i].iter().any(|(j, _)| j == k) {
                return Err(Error::new(
                    ErrorKind::BadValue("a partition key twice in the block"),
                    "partition_table.entry",
                    field::ENTRIES + i * ENTRY_LEN,
                ));
            }
        }
        Ok(())
    }

    /// Reads the attribute area (at least 64 bytes): the non-empty entries.
    /// An entry of key 0 with the full bit (0x8000), and a key twice, are
    /// [`ErrorKind::BadValue`] at that entry.
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "partition_table")?;
        let mut entries: Vec<(PartitionKey, Membership)> = Vec::new();
        for i in 0..ENTRIES {
            let at = field::ENTRIES + i * ENTRY_LEN;
            let v = be16(area, at);
            if v == 0 {
                continue;
            }
            let Some(key) = PartitionKey::new(v & !FULL) else {
                return Err(Error::new(
                    ErrorKind::BadValue("a full member of key 0"),
                    "partition_table.entry",
                    at,
                ));
            };
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(Error::new(
                    ErrorKind::BadValue("a partition key twice in the block"),
                    "partition_table.entry",
                    at,
                ));
            }
            let m = if v & FULL != 0 {
                Membership::Full
            } else {
                Membership::Limited
            };
            entries.push((key, m));
        }
        Ok(PartitionTable { entries })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest: the entries from slot 0, the others empty. Refuses more than
    /// 32 entries, and a key twice.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        self.check()?;
        prepare(area, Self::LEN, "partition_table")?;
        for (i, (k, m)) in self.entries.iter().enumerate() {
            put16(area, field::ENTRIES + i * ENTRY_LEN, entry_bits(*k, *m));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: u16) -> PartitionKey {
        PartitionKey::new(k).unwrap()
    }

    #[test]
    fn entries_are_membership_and_key() {
        let t = PartitionTable::from_entries(&[
            (PartitionKey::DEFAULT, Membership::Full),
            (key(0x10), Membership::Limited),
        ])
        .unwrap();
        let mut area = [0xAAu8; 64];
        t.emit(&mut area).unwrap();
        assert_eq!(&area[..6], &[0xFF, 0xFF, 0x00, 0x10, 0x00, 0x00]);
        assert!(area[4..].iter().all(|b| *b == 0));
        assert_eq!(PartitionTable::parse(&area).unwrap(), t);
        assert_eq!(t.to_entries().len(), 2);
    }

    #[test]
    fn empty_entries_are_skipped_anywhere() {
        let mut area = [0u8; 64];
        area[10..12].copy_from_slice(&[0x80, 0x20]);
        area[62..64].copy_from_slice(&[0x00, 0x21]);
        let t = PartitionTable::parse(&area).unwrap();
        assert_eq!(
            t.entries,
            [
                (key(0x20), Membership::Full),
                (key(0x21), Membership::Limited)
            ]
        );
    }

    #[test]
    fn refusals_name_the_entry() {
        let mut area = [0u8; 64];
        area[4..6].copy_from_slice(&[0x80, 0x00]);
        let e = PartitionTable::parse(&area).unwrap_err();
        assert_eq!((e.field, e.offset), ("partition_table.entry", 4));
        let mut area = [0u8; 64];
        area[0..2].copy_from_slice(&[0x80, 0x10]);
        area[8..10].copy_from_slice(&[0x00, 0x10]);
        let e = PartitionTable::parse(&area).unwrap_err();
        assert_eq!(e.offset, 8);
        assert!(e.to_string().contains("twice"), "{e}");
        assert!(PartitionTable::parse(&area[..63]).is_err());
        let twice = PartitionTable {
            entries: vec![(key(5), Membership::Full), (key(5), Membership::Limited)],
        };
        assert!(twice.emit(&mut [0u8; 64]).is_err());
        let many: Vec<_> = (1..=33).map(|k| (key(k), Membership::Full)).collect();
        assert!(PartitionTable::from_entries(&many).is_err());
    }

    #[test]
    fn a_modifier_carries_the_member_and_the_block() {
        let m = PartitionTable::modifier(rrp::Address(0x0102), 1);
        assert_eq!(m, 0x0102_0001);
        assert_eq!(PartitionTable::split_modifier(m), (rrp::Address(0x0102), 1));
        assert_eq!(
            PartitionTable::split_modifier(1),
            (rrp::Address::UNSPECIFIED, 1)
        );
    }

    #[test]
    fn blocks_of_a_table() {
        let table: Vec<_> = (1..=40).map(|k| (key(k), Membership::Limited)).collect();
        assert_eq!(
            PartitionTable::block_of(&table, 0).unwrap().entries.len(),
            32
        );
        let b1 = PartitionTable::block_of(&table, 1).unwrap();
        assert_eq!(b1.entries[0].0, key(33));
        assert_eq!(b1.entries.len(), 8);
        assert!(PartitionTable::block_of(&table, 2).is_none());
        assert!(PartitionTable::block_ok(1) && !PartitionTable::block_ok(2));
    }
}
