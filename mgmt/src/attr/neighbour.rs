//! Neighbour (0xFF13, Subn): who a box believes is at a native address on
//! one of its SANs (its LRT; a host's neighbours), for the path tracer's L2
//! mode: the HR an L2RH's native address should reach (docs/management.md
//! "Neighbour"). A Get carries the native address; the modifier is the
//! address of the box's HR on that SAN.

use rrp::{Address, NativeAddr};

use crate::attr::{native_at, need, prepare, put_native};
use crate::error::Result;
use rrp::wire::bytes::{be16, put16};

/// Byte offsets of Neighbour.
pub mod field {
    /// Address: the node at the native address (answer; 0: unknown).
    pub const ADDRESS: usize = 0;
    /// Native address length (request).
    pub const NATIVE_LEN: usize = 12;
}

/// Neighbour.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Neighbour {
    /// The node at `native` (0: unknown).
    pub address: Address,
    /// The native address asked about.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_util::native"))]
    pub native: NativeAddr,
}

impl Neighbour {
    /// AttributeID.
    pub const ID: u16 = 0xFF13;
    /// Bytes of the layout (31 used).
    pub const LEN: usize = 64;

    /// Reads the attribute area (at least 64 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "neighbour")?;
        Ok(Neighbour {
            address: Address(be16(area, field::ADDRESS)),
            native: native_at(area, field::NATIVE_LEN, "neighbour.native_len")?,
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the rest.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "neighbour")?;
        put16(area, field::ADDRESS, self.address.0);
        put_native(area, field::NATIVE_LEN, &self.native);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        let n = Neighbour {
            address: Address(0x0121),
            native: NativeAddr::mac([2, 0, 0, 0, 1, 0x21]),
        };
        let mut area = [0xFFu8; 64];
        n.emit(&mut area).unwrap();
        assert_eq!(&area[..2], &[0x01, 0x21]);
        assert!(area[2..12].iter().all(|b| *b == 0));
        assert_eq!(&area[12..19], &[6, 2, 0, 0, 0, 1, 0x21]);
        assert!(area[19..].iter().all(|b| *b == 0));
        assert_eq!(Neighbour::parse(&area).unwrap(), n);
        area[12] = 19;
        assert!(Neighbour::parse(&area).is_err());
    }
}
