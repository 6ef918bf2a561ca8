//! MessageWay 16-bit addresses and their classes (Part-1, "Address Ranges";
//! docs/architecture.md "Wire").

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
    /// The last logical address.
    pub const LAST_LOGICAL: Address = Address(0xFFFD);
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

/// Text that is not a 16-bit address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressParseError(pub String);

impl fmt::Display for AddressParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a 16-bit address: {:?} (write 0x0101 or 257)",
            self.0
        )
    }
}

impl std::error::Error for AddressParseError {}

impl core::str::FromStr for Address {
    type Err = AddressParseError;

    /// `0x0101` (hexadecimal, as [`Address`] is written) or `257` (decimal).
    fn from_str(s: &str) -> Result<Address, AddressParseError> {
        let t = s.trim();
        let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => u16::from_str_radix(h, 16),
            None => t.parse::<u16>(),
        };
        r.map(Address).map_err(|_| AddressParseError(s.to_string()))
    }
}

/// In JSON an address is a string, `"0x0101"`; a number or a decimal
/// string is accepted on input.
#[cfg(feature = "serde")]
mod serde_impl {
    use super::Address;
    use core::fmt;
    use serde::de::{self, Deserializer, Visitor};
    use serde::{Deserialize, Serialize, Serializer};

    impl Serialize for Address {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(self)
        }
    }

    impl<'de> Deserialize<'de> for Address {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Address, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = Address;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a 16-bit address (\"0x0101\" or 257)")
                }
                fn visit_u64<E: de::Error>(self, v: u64) -> Result<Address, E> {
                    u16::try_from(v)
                        .map(Address)
                        .map_err(|_| E::custom(format!("address {v} is larger than 0xffff")))
                }
                fn visit_i64<E: de::Error>(self, v: i64) -> Result<Address, E> {
                    u64::try_from(v)
                        .map_err(|_| E::custom(format!("address {v} is negative")))
                        .and_then(|v| self.visit_u64(v))
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Address, E> {
                    v.parse().map_err(E::custom)
                }
            }
            d.deserialize_any(V)
        }
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
