//! McMemberRecord (0x0038, SubnAdm): one member of a multicast group as the
//! SAN's master manager holds it (docs/multicast.md "Groups"). InfiniBand's
//! SA MCMemberRecord with MessageWay's terms: a Set joins (the checks of
//! `spec`'s "UD multicasting": the group exists, the member's MTU is not
//! above the group's, every router on the member's SAN carries the group's
//! MTU), a Delete leaves, a Get reads the `index`th member record of a
//! group (modifier: index; the template's group, 0 for every group).
//!
//! The group's partition travels as InfiniBand's P_Key does in its
//! MCMemberRecord (docs/multicast.md "Groups in partitions",
//! docs/spec-notes.md 76): a join names the partition it joins in (0: the
//! default partition), an answer carries the group's.

use rrp::Address;

use crate::attr::{need, prepare};
use crate::error::Result;
use crate::partition::PartitionKey;
use rrp::wire::bytes::{be16, be32, put16, put32};

/// Byte offsets of McMemberRecord.
pub mod field {
    /// The group (a logical address).
    pub const GROUP: usize = 0;
    /// The member (0 in a request: the requester).
    pub const MEMBER: usize = 2;
    /// JoinState.
    pub const JOIN_STATE: usize = 4;
    /// The partition (InfiniBand's P_Key): bits 0-14 the key (0 in a
    /// join: the default partition), bit 15 ignored in a join and 0 in
    /// an answer (the membership is the manager's table's, not the
    /// record's).
    pub const PARTITION: usize = 6;
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
    /// The partition as the record carries it ([`field::PARTITION`]; 0:
    /// the default partition); [`McMemberRecord::partition_key`] reads it.
    pub partition: u16,
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
            partition: be16(area, field::PARTITION),
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
        put16(area, field::PARTITION, self.partition);
        put32(area, field::MTU, self.mtu);
        put32(area, field::GROUP_MTU, self.group_mtu);
        put16(area, field::TOTAL, self.total);
        Ok(())
    }

    /// The partition the record names: its key (bits 0-14; bit 15, a
    /// membership in InfiniBand's P_Key, is not the joiner's to claim), or
    /// the default partition for 0.
    pub fn partition_key(&self) -> PartitionKey {
        PartitionKey::new(self.partition & 0x7FFF).unwrap_or(PartitionKey::DEFAULT)
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
            partition: 0x0010,
            mtu: 1500,
            group_mtu: 9000,
            total: 3,
        };
        let mut area = [0xAAu8; 192];
        r.emit(&mut area).unwrap();
        assert_eq!(
            &area[..18],
            &[
                0x81, 0x01, 0x01, 0x04, 1, 0, 0, 0x10, 0, 0, 0x05, 0xDC, 0, 0, 0x23, 0x28, 0, 3
            ]
        );
        assert!(area[18..].iter().all(|b| *b == 0));
        assert_eq!(McMemberRecord::parse(&area).unwrap(), r);
        assert!(McMemberRecord::parse(&area[..20]).is_err());
    }

    #[test]
    fn partition_keys() {
        let key = |p: u16| {
            McMemberRecord {
                partition: p,
                ..McMemberRecord::default()
            }
            .partition_key()
        };
        assert_eq!(key(0), PartitionKey::DEFAULT, "none named: the default");
        assert_eq!(key(0x0010), PartitionKey::new(0x0010).unwrap());
        assert_eq!(
            key(0x8010),
            PartitionKey::new(0x0010).unwrap(),
            "bit 15 ignored"
        );
        assert_eq!(key(0x8000), PartitionKey::DEFAULT);
        // Every key round-trips through the bytes.
        for p in [0u16, 1, 0x0010, 0x7FFF, 0x8001, 0xFFFF] {
            let r = McMemberRecord {
                partition: p,
                ..McMemberRecord::default()
            };
            let mut area = [0u8; 64];
            r.emit(&mut area).unwrap();
            assert_eq!(McMemberRecord::parse(&area).unwrap(), r);
        }
    }
}
