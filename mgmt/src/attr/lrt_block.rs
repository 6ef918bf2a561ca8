//! LrtBlock (0xFF12, Subn): 15 entries of an HR's LRT in address order
//! (docs/management.md "LrtBlock"); modifier: port << 16 | block.
//!
//! The layout does not say how many of the 15 slots are used; an entry's
//! address is never 0x0000, so the entries end at the first slot whose
//! address is 0 (or, equally, after `total - 15 * block` of them).

use rrp::Address;

use crate::attr::{join_modifier, need, prepare, split_modifier};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be16, put16};

/// Byte offsets of LrtBlock.
pub mod field {
    /// Entries in the whole LRT (16 bits).
    pub const TOTAL: usize = 0;
    /// The first entry; entry i is at `ENTRIES + 4 * i`.
    pub const ENTRIES: usize = 4;
}

/// Entries per block.
pub const ENTRIES: usize = 15;
/// Bytes per entry.
pub const ENTRY_LEN: usize = 4;

/// One LRT entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LrtBlockEntry {
    /// The node's or router's address (never 0).
    pub address: Address,
    /// Flags: [`LrtBlockEntry::ROUTER`], [`LrtBlockEntry::STATIC`].
    pub flags: u8,
    /// Keepalives missed.
    pub keepalives_missed: u8,
}

impl LrtBlockEntry {
    /// Flag bit 0: the entry is a router.
    pub const ROUTER: u8 = 1 << 0;
    /// Flag bit 1: the entry is static.
    pub const STATIC: u8 = 1 << 1;

    /// Whether the entry is a router.
    pub const fn is_router(&self) -> bool {
        self.flags & Self::ROUTER != 0
    }
    /// Whether the entry is static.
    pub const fn is_static(&self) -> bool {
        self.flags & Self::STATIC != 0
    }
}

/// LrtBlock.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LrtBlock {
    /// Entries in the whole LRT.
    pub total: u16,
    /// This block's entries, at most 15.
    pub entries: Vec<LrtBlockEntry>,
}

impl LrtBlock {
    /// AttributeID.
    pub const ID: u16 = 0xFF12;
    /// Bytes of the layout.
    pub const LEN: usize = field::ENTRIES + ENTRIES * ENTRY_LEN;

    /// The modifier asking for `block` of `port`'s LRT: port << 16 | block.
    pub const fn modifier(port: u8, block: u16) -> u32 {
        join_modifier(port, block)
    }

    /// The port and block of a modifier; `None` when the port part does not
    /// fit 8 bits.
    pub const fn modifier_parts(m: u32) -> Option<(u8, u16)> {
        split_modifier(m)
    }

    /// Reads the attribute area (at least 64 bytes): the entries up to the
    /// first slot of address 0.
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "lrt_block")?;
        let entries = (0..ENTRIES)
            .map(|i| field::ENTRIES + i * ENTRY_LEN)
            .map(|at| LrtBlockEntry {
                address: Address(be16(area, at)),
                flags: area[at + 2],
                keepalives_missed: area[at + 3],
            })
            .take_while(|e| e.address.0 != 0)
            .collect();
        Ok(LrtBlock {
            total: be16(area, field::TOTAL),
            entries,
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest. Refuses more than 15 entries, and an entry of address 0 (it
    /// would end the block when read).
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        if self.entries.len() > ENTRIES {
            return Err(Error::new(
                ErrorKind::BadValue("more than 15 entries"),
                "lrt_block.entries",
                Self::LEN,
            ));
        }
        if let Some(i) = self.entries.iter().position(|e| e.address.0 == 0) {
            return Err(Error::new(
                ErrorKind::BadValue("an entry of address 0"),
                "lrt_block.address",
                field::ENTRIES + i * ENTRY_LEN,
            ));
        }
        prepare(area, Self::LEN, "lrt_block")?;
        put16(area, field::TOTAL, self.total);
        for (i, e) in self.entries.iter().enumerate() {
            let at = field::ENTRIES + i * ENTRY_LEN;
            put16(area, at, e.address.0);
            area[at + 2] = e.flags;
            area[at + 3] = e.keepalives_missed;
        }
        Ok(())
    }
}
