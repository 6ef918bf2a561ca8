//! NodeRecord (0x0011, SubnAdm): one member of a SAN as its master
//! manager's database holds it (docs/manager.md "SubnAdm"), so that a node
//! asks the manager instead of every HR. InfiniBand's SA NodeRecord, one
//! record per Get. A request carries a template record and, as InfiniBand's
//! SA header does, a component mask that says which of its fields must
//! match (here in the modifier: `mask << 16 | index`, [`query`]); the answer
//! is the `index`th matching record, with `total` the number of matches.
//! `0x8000_0000 | address` asks for the member at that address.

use rrp::Address;

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be16, be64, put16, put64};

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

/// Component mask bits of a NodeRecord query (bits 16-30 of the modifier):
/// which fields of the request's template a record must match.
pub mod component {
    /// The address.
    pub const ADDRESS: u16 = 0x0001;
    /// The node identity.
    pub const IDENTITY: u16 = 0x0002;
    /// NodeType (a capability: host or router).
    pub const NODE_TYPE: u16 = 0x0004;
    /// Implementation level (a capability: level A-D).
    pub const LEVEL: u16 = 0x0008;
    /// NodeDescription (the node's name).
    pub const DESCRIPTION: u16 = 0x0010;
    /// The state of the manager it runs.
    pub const MANAGER: u16 = 0x0020;
    /// Every bit a query may use.
    pub const ALL: u16 = 0x003F;
}

/// The modifier of a NodeRecord query: the `index`th record whose fields
/// under `mask` ([`component`]) equal the template's.
pub const fn query(mask: u16, index: u16) -> u32 {
    ((mask as u32 & component::ALL as u32) << 16) | index as u32
}

/// A modifier read back: `(mask, index)`; `None` for a mask bit that is not
/// a component (the Get is refused, status 7).
pub const fn split_query(modifier: u32) -> Option<(u16, u16)> {
    if modifier & BY_ADDRESS != 0 {
        return Some((component::ADDRESS, 0));
    }
    let mask = (modifier >> 16) as u16;
    if mask & !component::ALL != 0 {
        return None;
    }
    Some((mask, modifier as u16))
}
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

    /// Whether this record matches `template` in every component of `mask`.
    pub fn matches(&self, template: &NodeRecord, mask: u16) -> bool {
        let on = |bit: u16| mask & bit != 0;
        (!on(component::ADDRESS) || self.address == template.address)
            && (!on(component::IDENTITY) || self.identity == template.identity)
            && (!on(component::NODE_TYPE) || self.node_type == template.node_type)
            && (!on(component::LEVEL) || self.level == template.level)
            && (!on(component::DESCRIPTION) || self.description == template.description)
            && (!on(component::MANAGER) || self.manager == template.manager)
    }

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

    #[test]
    fn queries() {
        assert_eq!(query(component::DESCRIPTION, 2), 0x0010_0002);
        assert_eq!(split_query(0x0010_0002), Some((component::DESCRIPTION, 2)));
        assert_eq!(
            split_query(BY_ADDRESS | 0x0121),
            Some((component::ADDRESS, 0))
        );
        assert_eq!(split_query(0x0040_0000), None);
        assert_eq!(split_query(7), Some((0, 7)));
        let r = NodeRecord {
            address: Address(0x0121),
            identity: 9,
            node_type: 3,
            level: 4,
            description: "de".into(),
            ..NodeRecord::default()
        };
        let t = NodeRecord {
            node_type: 3,
            description: "de".into(),
            ..NodeRecord::default()
        };
        assert!(r.matches(&t, 0));
        assert!(r.matches(&t, component::NODE_TYPE | component::DESCRIPTION));
        assert!(!r.matches(&t, component::NODE_TYPE | component::IDENTITY));
        assert!(!r.matches(&t, component::LEVEL));
    }
}
