//! FibBlock (0xFF11, Subn): 16 destinations of one ingress port's FIB,
//! block b covering addresses 16b to 16b+15 (docs/management.md
//! "FibBlock"); modifier: port << 16 | block.

use rrp::Address;

use crate::attr::{join_modifier, need, prepare, split_modifier};
use crate::error::Result;
use rrp::wire::bytes::{be16, put16};

/// Destinations per block.
pub const ENTRIES: usize = 16;
/// Bytes per destination: Kind, EgressPort, Q.
pub const ENTRY_LEN: usize = 4;
/// Blocks of a whole FIB (65,536 addresses).
pub const BLOCKS: u32 = 65_536 / ENTRIES as u32;

/// One destination of a FibBlock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FibBlockEntry {
    /// Kind: `RouteEntry::NONE`, `LOCAL`, `FORWARD`.
    pub kind: u8,
    /// EgressPort.
    pub egress_port: u8,
    /// Q.
    pub q: u16,
}

/// FibBlock.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FibBlock {
    /// The 16 destinations, lowest address first.
    pub entries: [FibBlockEntry; ENTRIES],
}

impl FibBlock {
    /// AttributeID.
    pub const ID: u16 = 0xFF11;
    /// Bytes of the layout.
    pub const LEN: usize = ENTRIES * ENTRY_LEN;

    /// The modifier asking for `block` on ingress `port`: port << 16 | block.
    pub const fn modifier(port: u8, block: u16) -> u32 {
        join_modifier(port, block)
    }

    /// The port and block of a modifier; `None` when the port does not fit
    /// 8 bits or the block is past the last one (4095).
    pub const fn modifier_parts(m: u32) -> Option<(u8, u16)> {
        match split_modifier(m) {
            Some((p, b)) if (b as u32) < BLOCKS => Some((p, b)),
            _ => None,
        }
    }

    /// The block holding `a`, and `a`'s index in it.
    pub const fn block_of(a: Address) -> (u16, usize) {
        (a.0 / ENTRIES as u16, (a.0 as usize) % ENTRIES)
    }

    /// The first address of `block`, when there is such a block.
    pub const fn first_address(block: u16) -> Option<Address> {
        if (block as u32) < BLOCKS {
            Some(Address(block * ENTRIES as u16))
        } else {
            None
        }
    }

    /// Reads the attribute area (at least 64 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "fib_block")?;
        let mut entries = [FibBlockEntry::default(); ENTRIES];
        for (i, e) in entries.iter_mut().enumerate() {
            let at = i * ENTRY_LEN;
            *e = FibBlockEntry {
                kind: area[at],
                egress_port: area[at + 1],
                q: be16(area, at + 2),
            };
        }
        Ok(FibBlock { entries })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the rest.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "fib_block")?;
        for (i, e) in self.entries.iter().enumerate() {
            let at = i * ENTRY_LEN;
            area[at] = e.kind;
            area[at + 1] = e.egress_port;
            put16(area, at + 2, e.q);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_modifiers() {
        assert_eq!(FibBlock::block_of(Address(0x0142)), (0x14, 2));
        assert_eq!(FibBlock::first_address(0x14), Some(Address(0x0140)));
        assert_eq!(FibBlock::first_address(4096), None);
        assert_eq!(FibBlock::modifier(2, 0x14), 0x0002_0014);
        assert_eq!(FibBlock::modifier_parts(0x0002_0014), Some((2, 0x14)));
        assert_eq!(FibBlock::modifier_parts(0x0002_1000), None);
    }
}
