//! PathRecord (0x0035, SubnAdm): how a member of a SAN reaches a
//! destination, as the SAN's master manager answers it (docs/manager.md
//! "SubnAdm"), so that a node asks the manager instead of every HR.
//! InfiniBand's SA PathRecord with MessageWay's terms: the request carries
//! the destination (and the asker's address, 0 for the requester); the
//! answer names the first HR the node sends to (the destination itself when
//! it is on the SAN), the Q the node pays and the path's MTU.

use rrp::{Address, NativeAddr};

use crate::attr::{native_at, need, prepare, put_native};
use crate::error::Result;
use rrp::wire::bytes::{be16, be32, put16, put32};

/// Byte offsets of PathRecord.
pub mod field {
    /// DestinationAddress.
    pub const DESTINATION: usize = 0;
    /// SourceAddress (the asker; 0: the requester).
    pub const SOURCE: usize = 2;
    /// Kind (answer): 1 on this SAN, 2 through a router.
    pub const KIND: usize = 4;
    /// FirstHr (answer): where the node sends first.
    pub const FIRST_HR: usize = 6;
    /// Q (answer): the whole path's, from the node.
    pub const Q: usize = 8;
    /// MTU (answer, 32 bits): the largest EEP packet the path carries (0:
    /// unlimited).
    pub const MTU: usize = 10;
    /// Native address length of FirstHr on the SAN; the address follows
    /// (18 bytes).
    pub const NATIVE_LEN: usize = 14;
}

/// PathRecord.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PathRecord {
    /// DestinationAddress.
    pub destination: Address,
    /// SourceAddress.
    pub source: Address,
    /// Kind: [`PathRecord::ON_SAN`] or [`PathRecord::ROUTED`] (0 in a
    /// request).
    pub kind: u8,
    /// FirstHr: the HR a node of the SAN sends a packet for `destination`
    /// to, or `destination` itself when it is on the SAN.
    pub first_hr: Address,
    /// Q of the whole path as the node pays it.
    pub q: u16,
    /// MTU of the path in bytes (0: unlimited).
    pub mtu: u32,
    /// FirstHr's native address on the SAN (empty when unknown).
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_util::native"))]
    pub native: NativeAddr,
}

impl PathRecord {
    /// AttributeID (InfiniBand's SA PathRecord).
    pub const ID: u16 = 0x0035;
    /// Bytes of the layout (33 used).
    pub const LEN: usize = 64;
    /// Kind: the destination is a member of the SAN.
    pub const ON_SAN: u8 = 1;
    /// Kind: the path leaves the SAN through a router.
    pub const ROUTED: u8 = 2;

    /// A request for the path to `destination` from `source` (0: the
    /// requester).
    pub fn request(destination: Address, source: Address) -> PathRecord {
        PathRecord {
            destination,
            source,
            ..PathRecord::default()
        }
    }

    /// Reads the attribute area (at least 64 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "path_record")?;
        Ok(PathRecord {
            destination: Address(be16(area, field::DESTINATION)),
            source: Address(be16(area, field::SOURCE)),
            kind: area[field::KIND],
            first_hr: Address(be16(area, field::FIRST_HR)),
            q: be16(area, field::Q),
            mtu: be32(area, field::MTU),
            native: native_at(area, field::NATIVE_LEN, "path_record.native")?,
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "path_record")?;
        put16(area, field::DESTINATION, self.destination.0);
        put16(area, field::SOURCE, self.source.0);
        area[field::KIND] = self.kind;
        put16(area, field::FIRST_HR, self.first_hr.0);
        put16(area, field::Q, self.q);
        put32(area, field::MTU, self.mtu);
        put_native(area, field::NATIVE_LEN, &self.native);
        Ok(())
    }
}

/// The name of a PathRecord kind.
pub const fn kind_name(kind: u8) -> Option<&'static str> {
    match kind {
        PathRecord::ON_SAN => Some("on-san"),
        PathRecord::ROUTED => Some("routed"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        let r = PathRecord {
            destination: Address(0x0108),
            source: Address(0x0100),
            kind: PathRecord::ROUTED,
            first_hr: Address(0x0119),
            q: 4,
            mtu: 1500,
            native: NativeAddr::from_bytes(&[2, 0, 0, 0, 0, 0x19]).unwrap(),
        };
        let mut area = [0xAAu8; 192];
        r.emit(&mut area).unwrap();
        assert_eq!(
            &area[..21],
            &[
                0x01, 0x08, 0x01, 0x00, 2, 0, 0x01, 0x19, 0, 4, 0, 0, 0x05, 0xDC, 6, 2, 0, 0, 0, 0,
                0x19
            ]
        );
        assert!(area[21..].iter().all(|b| *b == 0));
        assert_eq!(PathRecord::parse(&area).unwrap(), r);
        area[field::NATIVE_LEN] = 40;
        assert!(PathRecord::parse(&area).is_err());
        assert!(PathRecord::parse(&area[..10]).is_err());
    }
}
