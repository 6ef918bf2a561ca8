//! NodeRecord (0x0011, SubnAdm): one member of a SAN as its master
//! manager's database holds it (docs/manager.md "SubnAdm"), so that a node
//! asks the manager instead of every HR. InfiniBand's SA NodeRecord, one
//! record per Get: the modifier is the record's index (0, 1, ...), or
//! `0x8000_0000 | address` for the member at that address.

use rrp::Address;

use crate::attr::{need, prepare};
use crate::bytes::{be16, be64, put16, put64};
use crate::error::{Error, ErrorKind, Result};

/// Byte offsets of NodeRecord.
pub mod field {
    /// Records in the whole table.
    pub const TOTAL: usize = 0;
    /// The member's address.
    pub const ADDRESS: usize = 2;
    /// Its node identity.
    pub const IDENTITY: usize = 4;
    /// NodeType (1 host, 3 router).
    pub const NODE_TYPE: usize = 12;
    /// Implementation level (1-4).
    pub const LEVEL: usize = 13;
    /// NumPorts.
    pub const NUM_PORTS: usize = 14;
    /// The state of the manager it runs (0xFF: none).
    pub const MANAGER: usize = 15;
    /// NodeDescription (64 bytes, zero-padded UTF-8).
    pub const DESCRIPTION: usize = 16;
}

/// The modifier asking for the member at an address.
pub const BY_ADDRESS: u32 = 0x8000_0000;
/// [`NodeRecord::manager`] when the member runs no manager.
pub const NO_MANAGER: u8 = 0xFF;

/// NodeRecord.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeRecord {
    /// Records in the whole table.
    pub total: u16,
    /// The member's address.
    pub address: Address,
    /// Its node identity.
    pub identity: u64,
    /// NodeType.
    pub node_type: u8,
    /// Implementation level.
    pub level: u8,
    /// NumPorts.
    pub num_ports: u8,
    /// The state of the manager it runs ([`NO_MANAGER`]: none).
    pub manager: u8,
    /// NodeDescription.
    pub description: String,
}

impl NodeRecord {
    /// AttributeID (InfiniBand's SA NodeRecord).
    pub const ID: u16 = 0x0011;
    /// Bytes of the layout.
    pub const LEN: usize = field::DESCRIPTION + 64;

    /// Reads the attribute area (at least 80 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "node_record")?;
        let d = &area[field::DESCRIPTION..field::DESCRIPTION + 64];
        let end = d.iter().position(|b| *b == 0).unwrap_or(d.len());
        let description = std::str::from_utf8(&d[..end])
            .map_err(|_| {
                Error::new(
                    ErrorKind::BadValue("not UTF-8"),
                    "node_record.description",
                    field::DESCRIPTION,
                )
            })?
            .to_string();
        Ok(NodeRecord {
            total: be16(area, field::TOTAL),
            address: Address(be16(area, field::ADDRESS)),
            identity: be64(area, field::IDENTITY),
            node_type: area[field::NODE_TYPE],
            level: area[field::LEVEL],
            num_ports: area[field::NUM_PORTS],
            manager: area[field::MANAGER],
            description,
        })
    }

    /// Writes the attribute into `area` (at least 80 bytes), zeroing the
    /// rest; a description longer than 64 bytes is cut at a character.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "node_record")?;
        put16(area, field::TOTAL, self.total);
        put16(area, field::ADDRESS, self.address.0);
        put64(area, field::IDENTITY, self.identity);
        area[field::NODE_TYPE] = self.node_type;
        area[field::LEVEL] = self.level;
        area[field::NUM_PORTS] = self.num_ports;
        area[field::MANAGER] = self.manager;
        let mut n = self.description.len().min(64);
        while !self.description.is_char_boundary(n) {
            n -= 1;
        }
        area[field::DESCRIPTION..field::DESCRIPTION + n]
            .copy_from_slice(&self.description.as_bytes()[..n]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        let r = NodeRecord {
            total: 7,
            address: Address(0x0121),
            identity: 0x0102_0304_0506_0708,
            node_type: 3,
            level: 4,
            num_ports: 2,
            manager: NO_MANAGER,
            description: "de".into(),
        };
        let mut area = [0xAAu8; 192];
        r.emit(&mut area).unwrap();
        assert_eq!(
            &area[..18],
            &[
                0, 7, 0x01, 0x21, 1, 2, 3, 4, 5, 6, 7, 8, 3, 4, 2, 0xFF, b'd', b'e'
            ]
        );
        assert!(area[18..].iter().all(|b| *b == 0));
        assert_eq!(NodeRecord::parse(&area).unwrap(), r);
        area[16] = 0xFF;
        assert!(NodeRecord::parse(&area).is_err());
    }
}
