//! RouteEntry (0xFF10, Subn): the FIB entry of one destination on one
//! ingress port (docs/management.md "RouteEntry"); modifier: port << 16 |
//! destination address.

use rrp::{Address, NativeAddr};

use crate::attr::{join_modifier, native_at, need, prepare, put_native, split_modifier};
use crate::error::Result;
use rrp::wire::bytes::{be16, be32, put16, put32};

/// Byte offsets of RouteEntry.
pub mod field {
    /// Kind.
    pub const KIND: usize = 0;
    /// EgressPort.
    pub const EGRESS_PORT: usize = 1;
    /// EgressAddress.
    pub const EGRESS_ADDRESS: usize = 2;
    /// Q.
    pub const Q: usize = 4;
    /// FirstHr.
    pub const FIRST_HR: usize = 6;
    /// MTU (32 bits).
    pub const MTU: usize = 8;
    /// Native address length; the address follows (18 bytes).
    pub const NATIVE_LEN: usize = 12;
    /// NextAddress: the next hop's MessageWay address (0: unknown, or
    /// not forwarded).
    pub const NEXT_ADDRESS: usize = 31;
}

/// RouteEntry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RouteEntry {
    /// Kind: [`RouteEntry::NONE`], [`RouteEntry::LOCAL`], [`RouteEntry::FORWARD`].
    pub kind: u8,
    /// EgressPort.
    pub egress_port: u8,
    /// EgressAddress: the egress HR's address.
    pub egress_address: Address,
    /// Q.
    pub q: u16,
    /// FirstHr: the best first HR for a node on the ingress SAN (0: this HR).
    pub first_hr: Address,
    /// MTU of the egress SAN in bytes.
    pub mtu: u32,
    /// Native address of the next hop.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_util::native"))]
    pub native: NativeAddr,
    /// NextAddress: the address of the node at `native` (the next router's
    /// HR, or the destination), as this box knows it; 0 when unknown.
    pub next_address: Address,
}

impl RouteEntry {
    /// AttributeID.
    pub const ID: u16 = 0xFF10;
    /// Bytes of the layout (31 used, 33 reserved).
    pub const LEN: usize = 64;
    /// Kind: no route.
    pub const NONE: u8 = 0;
    /// Kind: this box.
    pub const LOCAL: u8 = 1;
    /// Kind: forward.
    pub const FORWARD: u8 = 2;

    /// `"none"`, `"local"`, `"forward"`, or `None`.
    pub const fn kind_name(&self) -> Option<&'static str> {
        kind_name(self.kind)
    }

    /// The modifier asking for `dst` on ingress `port`: port << 16 | dst.
    pub const fn modifier(port: u8, dst: Address) -> u32 {
        join_modifier(port, dst.0)
    }

    /// The port and destination of a modifier; `None` when the port part
    /// does not fit 8 bits.
    pub const fn modifier_parts(m: u32) -> Option<(u8, Address)> {
        match split_modifier(m) {
            Some((p, a)) => Some((p, Address(a))),
            None => None,
        }
    }

    /// Reads the attribute area (at least 64 bytes). A native address
    /// length above 18 is `ErrorKind::BadNative`.
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "route_entry")?;
        Ok(RouteEntry {
            kind: area[field::KIND],
            egress_port: area[field::EGRESS_PORT],
            egress_address: Address(be16(area, field::EGRESS_ADDRESS)),
            q: be16(area, field::Q),
            first_hr: Address(be16(area, field::FIRST_HR)),
            mtu: be32(area, field::MTU),
            native: native_at(area, field::NATIVE_LEN, "route_entry.native_len")?,
            next_address: Address(be16(area, field::NEXT_ADDRESS)),
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the rest.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "route_entry")?;
        area[field::KIND] = self.kind;
        area[field::EGRESS_PORT] = self.egress_port;
        put16(area, field::EGRESS_ADDRESS, self.egress_address.0);
        put16(area, field::Q, self.q);
        put16(area, field::FIRST_HR, self.first_hr.0);
        put32(area, field::MTU, self.mtu);
        put_native(area, field::NATIVE_LEN, &self.native);
        put16(area, field::NEXT_ADDRESS, self.next_address.0);
        Ok(())
    }
}

/// The name of a route kind (RouteEntry's and FibBlock's Kind).
pub const fn kind_name(kind: u8) -> Option<&'static str> {
    match kind {
        RouteEntry::NONE => Some("none"),
        RouteEntry::LOCAL => Some("local"),
        RouteEntry::FORWARD => Some("forward"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifiers() {
        let m = RouteEntry::modifier(3, Address(0x0142));
        assert_eq!(m, 0x0003_0142);
        assert_eq!(RouteEntry::modifier_parts(m), Some((3, Address(0x0142))));
        assert_eq!(RouteEntry::modifier_parts(0x0100_0000), None);
    }
}
