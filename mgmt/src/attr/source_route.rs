//! SourceRoute (0x0010, vendor class 0x30, the path tracer): what the
//! tracer expects of each hop and what the hop saw (docs/management.md
//! "SourceRoute"). ibtracer's attribute with MessageWay's ports: a port is
//! an HR, named by its 16-bit address (the tracer knows the addresses of
//! the HRs it expects, not their index in their box); the answer also gives
//! the index.

use rrp::Address;

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be16, put16};

/// Hops a SourceRoute holds.
pub const MAX_HOPS: usize = 64;

/// Byte offsets of SourceRoute.
pub mod field {
    /// ActualIncomingPort: the index of the HR the request arrived on
    /// (valid on the response).
    pub const ACTUAL_PORT: usize = 0;
    /// CurrentHopCount: the hop the request is for, 1 to 64.
    pub const HOP_COUNT: usize = 1;
    /// ActualIncomingAddress: the address of that HR (valid on the
    /// response).
    pub const ACTUAL_ADDRESS: usize = 2;
    /// ExpectedIncoming: 64 HR addresses, entry k - 1 for hop k.
    pub const EXPECTED: usize = 4;
}

/// SourceRoute.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SourceRoute {
    /// ActualIncomingPort (response).
    pub actual_port: u8,
    /// CurrentHopCount, 1 to 64.
    pub hop_count: u8,
    /// ActualIncomingAddress (response).
    pub actual_address: Address,
    /// The HRs expected at hops 1, 2, ... (at most 64; the rest of the
    /// vector is 0).
    pub expected: Vec<Address>,
}

impl SourceRoute {
    /// AttributeID.
    pub const ID: u16 = 0x0010;
    /// Bytes of the layout (132 used, the rest of the 192 reserved).
    pub const LEN: usize = field::EXPECTED + 2 * MAX_HOPS;

    /// The request for hop `expected.len()`: the HRs expected so far.
    pub fn request(expected: &[Address]) -> SourceRoute {
        SourceRoute {
            actual_port: 0,
            hop_count: expected.len().min(MAX_HOPS) as u8,
            actual_address: Address::UNSPECIFIED,
            expected: expected.iter().copied().take(MAX_HOPS).collect(),
        }
    }

    /// The HR expected at the current hop, `None` when the hop count is 0,
    /// above 64, or past the vector.
    pub fn expected_here(&self) -> Option<Address> {
        let k = usize::from(self.hop_count);
        (1..=MAX_HOPS)
            .contains(&k)
            .then(|| self.expected.get(k - 1).copied())
            .flatten()
    }

    /// Reads the attribute area (at least 132 bytes); trailing zero
    /// addresses of the vector are left out.
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "source_route")?;
        let mut expected: Vec<Address> = (0..MAX_HOPS)
            .map(|i| Address(be16(area, field::EXPECTED + 2 * i)))
            .collect();
        while expected.last() == Some(&Address::UNSPECIFIED) {
            expected.pop();
        }
        Ok(SourceRoute {
            actual_port: area[field::ACTUAL_PORT],
            hop_count: area[field::HOP_COUNT],
            actual_address: Address(be16(area, field::ACTUAL_ADDRESS)),
            expected,
        })
    }

    /// Writes the attribute into `area` (at least 132 bytes), zeroing the
    /// rest; more than 64 expected HRs are refused.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        if self.expected.len() > MAX_HOPS {
            return Err(Error::new(
                ErrorKind::BadValue("more than 64 hops"),
                "source_route.expected",
                field::EXPECTED,
            ));
        }
        prepare(area, Self::LEN, "source_route")?;
        area[field::ACTUAL_PORT] = self.actual_port;
        area[field::HOP_COUNT] = self.hop_count;
        put16(area, field::ACTUAL_ADDRESS, self.actual_address.0);
        for (i, a) in self.expected.iter().enumerate() {
            put16(area, field::EXPECTED + 2 * i, a.0);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        let r = SourceRoute {
            actual_port: 1,
            hop_count: 2,
            actual_address: Address(0x0121),
            expected: vec![Address(0x0119), Address(0x0121)],
        };
        let mut area = [0xAAu8; 192];
        r.emit(&mut area).unwrap();
        assert_eq!(&area[..8], &[1, 2, 0x01, 0x21, 0x01, 0x19, 0x01, 0x21]);
        assert!(area[8..].iter().all(|b| *b == 0));
        assert_eq!(SourceRoute::parse(&area).unwrap(), r);
        assert_eq!(r.expected_here(), Some(Address(0x0121)));
        assert_eq!(SourceRoute::request(&r.expected).hop_count, 2);
    }

    #[test]
    fn bad_hops() {
        let mut r = SourceRoute::request(&[Address(0x0119)]);
        r.hop_count = 0;
        assert_eq!(r.expected_here(), None);
        r.hop_count = 2;
        assert_eq!(r.expected_here(), None);
        r.hop_count = 65;
        assert_eq!(r.expected_here(), None);
        r.expected = vec![Address(1); 65];
        assert!(r.emit(&mut [0u8; 192]).is_err());
        assert!(SourceRoute::parse(&[0u8; 100]).is_err());
    }
}
