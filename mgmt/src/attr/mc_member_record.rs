//! McMemberRecord (0x0038, SubnAdm): one member of a multicast group as the
//! SAN's master manager holds it (docs/multicast.md "Groups"). InfiniBand's
//! SA MCMemberRecord with MessageWay's terms: a Set joins (the checks of
//! `spec`'s "UD multicasting": the group exists, the member's MTU is not
//! above the group's, every router on the member's SAN carries the group's
//! MTU), a Delete leaves, a Get reads the `index`th member record of a
//! group (modifier: index; the template's group, 0 for every group).

use rrp::Address;

use crate::attr::{need, prepare};
use crate::error::Result;
use rrp::wire::bytes::{be16, be32, put16, put32};

/// Byte offsets of McMemberRecord.
pub mod field {
    /// The group (a logical address).
    pub const GROUP: usize = 0;
    /// The member (0 in a request: the requester).
    pub const MEMBER: usize = 2;
    /// JoinState.
    pub const JOIN_STATE: usize = 4;
    /// The member's MTU in bytes (0: any): a join is refused when it is
    /// above the group's.
    pub const MTU: usize = 8;
    /// The group's MTU (answers).
    pub const GROUP_MTU: usize = 12;
    /// Records that match a Get (answers).
    pub const TOTAL: usize = 16;
}

/// JoinState: a full member (receives and sends).
pub const FULL_MEMBER: u8 = 0x01;
/// JoinState: a send-only member (InfiniBand's SendOnlyNonMember: sends,
/// does not receive).
pub const SEND_ONLY: u8 = 0x04;

/// McMemberRecord.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct McMemberRecord {
    /// The group.
    pub group: Address,
    /// The member.
    pub member: Address,
    /// JoinState: [`FULL_MEMBER`] or [`SEND_ONLY`].
    pub join_state: u8,
    /// The member's MTU in bytes (0: any).
    pub mtu: u32,
    /// The group's MTU in bytes (answers; 0: unlimited).
    pub group_mtu: u32,
    /// Records that match a Get (answers).
    pub total: u16,
}

impl McMemberRecord {
    /// AttributeID (InfiniBand's SA MCMemberRecord).
    pub const ID: u16 = 0x0038;
    /// Bytes of the layout (18 used).
    pub const LEN: usize = 64;

    /// Reads the attribute area (at least 64 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "mc_member_record")?;
        Ok(McMemberRecord {
            group: Address(be16(area, field::GROUP)),
            member: Address(be16(area, field::MEMBER)),
            join_state: area[field::JOIN_STATE],
            mtu: be32(area, field::MTU),
            group_mtu: be32(area, field::GROUP_MTU),
            total: be16(area, field::TOTAL),
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "mc_member_record")?;
        put16(area, field::GROUP, self.group.0);
        put16(area, field::MEMBER, self.member.0);
        area[field::JOIN_STATE] = self.join_state;
        put32(area, field::MTU, self.mtu);
        put32(area, field::GROUP_MTU, self.group_mtu);
        put16(area, field::TOTAL, self.total);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        let r = McMemberRecord {
            group: Address(0x8101),
            member: Address(0x0104),
            join_state: FULL_MEMBER,
            mtu: 1500,
            group_mtu: 9000,
            total: 3,
        };
        let mut area = [0xAAu8; 192];
        r.emit(&mut area).unwrap();
        assert_eq!(
            &area[..18],
            &[
                0x81, 0x01, 0x01, 0x04, 1, 0, 0, 0, 0, 0, 0x05, 0xDC, 0, 0, 0x23, 0x28, 0, 3
            ]
        );
        assert!(area[18..].iter().all(|b| *b == 0));
        assert_eq!(McMemberRecord::parse(&area).unwrap(), r);
        assert!(McMemberRecord::parse(&area[..20]).is_err());
    }
}
