//! McGroupRecord (0xFF20, SubnAdm): a multicast group as the SAN's master
//! manager holds it (docs/multicast.md "Groups"), the record InfiniBand's
//! administrative application creates in the SA. A Set creates it (group 0:
//! the manager chooses an address), a Delete deletes it with its member
//! records, a Get reads the `index`th (modifier) or, with
//! `BY_GROUP | address`, that group.

use rrp::Address;

use crate::attr::{need, prepare};
use crate::error::Result;
use rrp::wire::bytes::{be16, be32, put16, put32};

/// Byte offsets of McGroupRecord.
pub mod field {
    /// The group (a logical address; 0 in a create: the manager chooses).
    pub const GROUP: usize = 0;
    /// Records in the manager's table (answers).
    pub const TOTAL: usize = 2;
    /// The group's MTU in bytes (0: unlimited).
    pub const MTU: usize = 4;
    /// Member records.
    pub const MEMBERS: usize = 8;
    /// Of them, full members.
    pub const FULL_MEMBERS: usize = 10;
    /// Flags.
    pub const FLAGS: usize = 12;
    /// The group's partition key (0 in a create: the first join's,
    /// docs/multicast.md "Groups in partitions"; 0 in an answer: not
    /// fixed yet).
    pub const PARTITION: usize = 14;
}

/// The modifier of a Get for one group: `BY_GROUP | address`.
pub const BY_GROUP: u32 = 0x8000_0000;
/// Flags: the manager chose the address.
pub const ALLOCATED: u8 = 0x01;
/// Flags: the group had members elsewhere when it was created here (its
/// MTU was learned from the routers).
pub const KNOWN_ELSEWHERE: u8 = 0x02;

/// McGroupRecord.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct McGroupRecord {
    /// The group.
    pub group: Address,
    /// Records in the manager's table (answers).
    pub total: u16,
    /// The group's MTU in bytes (0: unlimited).
    pub mtu: u32,
    /// Member records.
    pub members: u16,
    /// Of them, full members.
    pub full_members: u16,
    /// Flags: [`ALLOCATED`], [`KNOWN_ELSEWHERE`].
    pub flags: u8,
    /// The group's partition key, 1-0x7FFF (0: not fixed yet, the first
    /// join fixes it).
    pub partition: u16,
}

impl McGroupRecord {
    /// AttributeID (mwrouter's; InfiniBand keeps group records in the SA
    /// without an attribute of their own).
    pub const ID: u16 = 0xFF20;
    /// Bytes of the layout (16 used).
    pub const LEN: usize = 64;

    /// Reads the attribute area (at least 64 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "mc_group_record")?;
        Ok(McGroupRecord {
            group: Address(be16(area, field::GROUP)),
            total: be16(area, field::TOTAL),
            mtu: be32(area, field::MTU),
            members: be16(area, field::MEMBERS),
            full_members: be16(area, field::FULL_MEMBERS),
            flags: area[field::FLAGS],
            partition: be16(area, field::PARTITION),
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "mc_group_record")?;
        put16(area, field::GROUP, self.group.0);
        put16(area, field::TOTAL, self.total);
        put32(area, field::MTU, self.mtu);
        put16(area, field::MEMBERS, self.members);
        put16(area, field::FULL_MEMBERS, self.full_members);
        area[field::FLAGS] = self.flags;
        put16(area, field::PARTITION, self.partition);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        let r = McGroupRecord {
            group: Address(0x8101),
            total: 2,
            mtu: 1500,
            members: 3,
            full_members: 2,
            flags: ALLOCATED,
            partition: 0x0010,
        };
        let mut area = [0xAAu8; 192];
        r.emit(&mut area).unwrap();
        assert_eq!(
            &area[..16],
            &[
                0x81, 0x01, 0, 2, 0, 0, 0x05, 0xDC, 0, 3, 0, 2, 1, 0, 0, 0x10
            ]
        );
        assert!(area[16..].iter().all(|b| *b == 0));
        assert_eq!(McGroupRecord::parse(&area).unwrap(), r);
    }
}
