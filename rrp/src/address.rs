//! MessageWay 16-bit addresses and their classes (Part-1, "Address Ranges";
//! DESIGN.md "Wire").

use core::fmt;

/// A 16-bit MessageWay address: a node, an HR, a SAN-ID or a logical address.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Address(pub u16);

/// The class of an address, from its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// 0x0000: never a destination; as a source address, "not specified".
    Illegal,
    /// 0x0001-0x003F: never a destination; a leading value in this range is an L2RH length.
    L2rhMarker,
    /// 0x0040-0x7FFF: nodes, HRs and SAN-IDs.
    Node,
    /// 0x8000-0xFFFD: logical (multicast) addresses.
    Logical,
    /// 0xFFFE: "Hey-You!", for the router at the other end of a point-to-point link.
    HeyYou,
    /// 0xFFFF: broadcast.
    Broadcast,
}

impl Address {
    /// 0x0000: as a source address, "not specified".
    pub const UNSPECIFIED: Address = Address(0x0000);
    /// The lowest address that may be a destination.
    pub const FIRST_NODE: Address = Address(0x0040);
    /// The highest node address.
    pub const LAST_NODE: Address = Address(0x7FFF);
    /// The first logical address.
    pub const FIRST_LOGICAL: Address = Address(0x8000);
    /// "Hey-You!" (Part-1; the RRP#7 example's 0x7FFF is a slip, see docs/spec-notes.md).
    pub const HEY_YOU: Address = Address(0xFFFE);
    /// Broadcast.
    pub const BROADCAST: Address = Address(0xFFFF);

    /// The class of this address.
    pub const fn class(self) -> AddressClass {
        match self.0 {
            0x0000 => AddressClass::Illegal,
            0x0001..=0x003F => AddressClass::L2rhMarker,
            0x0040..=0x7FFF => AddressClass::Node,
            0x8000..=0xFFFD => AddressClass::Logical,
            0xFFFE => AddressClass::HeyYou,
            0xFFFF => AddressClass::Broadcast,
        }
    }

    /// A node, HR or SAN-ID address (0x0040-0x7FFF): the only valid error-report target.
    pub const fn is_node(self) -> bool {
        matches!(self.class(), AddressClass::Node)
    }

    /// A logical (multicast) address.
    pub const fn is_logical(self) -> bool {
        matches!(self.class(), AddressClass::Logical)
    }

    /// Whether a packet may carry this as its destination (0x0040 and up).
    pub const fn is_valid_destination(self) -> bool {
        self.0 >= 0x0040
    }
}

impl From<u16> for Address {
    fn from(v: u16) -> Self {
        Address(v)
    }
}

impl From<Address> for u16 {
    fn from(a: Address) -> Self {
        a.0
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04x}", self.0)
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04x}", self.0)
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressClass::Illegal => "illegal",
            AddressClass::L2rhMarker => "l2rh-marker",
            AddressClass::Node => "node",
            AddressClass::Logical => "logical",
            AddressClass::HeyYou => "hey-you",
            AddressClass::Broadcast => "broadcast",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_the_ranges() {
        assert_eq!(Address(0).class(), AddressClass::Illegal);
        assert_eq!(Address(1).class(), AddressClass::L2rhMarker);
        assert_eq!(Address(0x3F).class(), AddressClass::L2rhMarker);
        assert_eq!(Address(0x40).class(), AddressClass::Node);
        assert_eq!(Address(0x7FFF).class(), AddressClass::Node);
        assert_eq!(Address(0x8000).class(), AddressClass::Logical);
        assert_eq!(Address(0xFFFD).class(), AddressClass::Logical);
        assert_eq!(Address::HEY_YOU.class(), AddressClass::HeyYou);
        assert_eq!(Address::BROADCAST.class(), AddressClass::Broadcast);
        assert!(!Address(0x3F).is_valid_destination());
        assert!(Address(0x40).is_valid_destination());
    }
}
