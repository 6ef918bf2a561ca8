//! mwrouter's router hop: the L2RH content that a router consumes
//! (docs/architecture.md "Source routes").
//!
//! Content = the egress HR's 16-bit MessageWay address, then the native
//! address on the egress SAN (6-byte MAC on Ethernet; IPv4 address and UDP
//! port, 6 bytes, or IPv6 address and UDP port, 18 bytes, on a UDP SAN).
//! Egress 0x0000 means "native hop only, on the SAN where the route starts";
//! an empty native part means "egress only" (deliver to that HR itself).

use arrayvec::ArrayVec;

use crate::address::Address;
use crate::error::{Error, ErrorKind, Result};
use crate::native::NativeAddr;
use crate::wire::bytes::be16;
use crate::wire::l2rh::{L2RH_LEN_FIELD, L2rhRepr, MAX_L2RH_CONTENT};

/// Where the parts of a router hop lie in its L2RH: the egress HR right
/// after the length field, then the native address.
pub mod field {
    use core::ops::Range;
    /// The egress HR (16 bits).
    pub const EGRESS: Range<usize> = 2..4;
    /// First byte of the native address.
    pub const NATIVE: usize = 4;
}

/// One hop of a route in mwrouter's L2RH layout: on a SAN a native
/// address, crossing a router an egress HR (`crate::route::Route` is a list
/// of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RouterHop {
    /// The egress HR (0x0000: native hop only).
    pub egress: Address,
    /// The native address on the egress SAN (empty: egress only).
    pub native: NativeAddr,
}

impl RouterHop {
    /// A hop through HR `egress` to `native` on its SAN.
    pub fn new(egress: Address, native: NativeAddr) -> RouterHop {
        RouterHop { egress, native }
    }

    /// A native-only hop on the SAN where the route starts.
    pub fn native(native: NativeAddr) -> RouterHop {
        RouterHop {
            egress: Address::UNSPECIFIED,
            native,
        }
    }

    /// An egress-only hop through HR `egress`.
    pub fn egress(egress: Address) -> RouterHop {
        RouterHop {
            egress,
            native: NativeAddr::NONE,
        }
    }

    /// Reads a router hop from L2RH content; the content must hold at least
    /// the 2-byte egress address and at most the 63 bytes of an L2RH, the
    /// egress must be 0x0000 or a node address, and the native part at most
    /// [`crate::native::MAX_NATIVE_LEN`] bytes (docs/spec-notes.md).
    pub fn from_content(content: &[u8]) -> Result<RouterHop> {
        if content.len() > MAX_L2RH_CONTENT {
            let l = u16::try_from(content.len()).unwrap_or(u16::MAX);
            return Err(Error::new(ErrorKind::BadL2rhLength(l), "l2rh.hop", 0));
        }
        if content.len() < 2 {
            return Err(Error::new(
                ErrorKind::NotRouterHop(content.len() as u16),
                "l2rh.hop",
                0,
            ));
        }
        let egress = Address(be16(content, field::EGRESS.start - L2RH_LEN_FIELD));
        if egress.0 != 0 && !egress.is_node() {
            return Err(Error::new(
                ErrorKind::IllegalAddress(egress.0),
                "l2rh.hop.egress",
                2,
            ));
        }
        let Some(native) = NativeAddr::from_bytes(&content[field::NATIVE - L2RH_LEN_FIELD..])
        else {
            return Err(Error::new(
                ErrorKind::NativeTooLong(content.len() as u16 - 2),
                "l2rh.hop.native",
                2,
            ));
        };
        Ok(RouterHop { egress, native })
    }

    /// The hop as an L2RH. Never fails: 2 + 18 bytes fit the 63-byte limit.
    pub fn to_l2rh(&self) -> L2rhRepr {
        let mut c: ArrayVec<u8, MAX_L2RH_CONTENT> = ArrayVec::new();
        c.try_extend_from_slice(&self.egress.0.to_be_bytes())
            .expect("fits");
        c.try_extend_from_slice(self.native.as_bytes())
            .expect("fits");
        L2rhRepr::new(&c).expect("2..=63 bytes")
    }

    /// Native hop only (on the SAN where the route starts).
    pub fn is_native_only(&self) -> bool {
        self.egress.0 == 0
    }

    /// Egress only (deliver to that HR itself).
    pub fn is_egress_only(&self) -> bool {
        self.native.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::MAX_NATIVE_LEN;
    use std::net::SocketAddr;

    #[test]
    fn ethernet_hop_is_two_words() {
        let hop = RouterHop::new(Address(0x0115), NativeAddr::mac([2, 0, 0, 0, 0, 7]));
        let l = hop.to_l2rh();
        assert_eq!(l.content().len(), 8);
        assert_eq!(l.buffer_len(), 16);
        assert_eq!(RouterHop::from_content(l.content()).unwrap(), hop);
    }

    #[test]
    fn udp_hops() {
        let v4: SocketAddr = "127.0.0.1:34997".parse().unwrap();
        let n = NativeAddr::udp(v4);
        assert_eq!(n.as_bytes().len(), 6);
        assert_eq!(n.as_udp(), Some(v4));
        let v6: SocketAddr = "[::1]:34997".parse().unwrap();
        let n = NativeAddr::udp(v6);
        assert_eq!(n.as_bytes().len(), 18);
        assert_eq!(n.as_udp(), Some(v6));
        let hop = RouterHop::new(Address(0x40), n);
        assert_eq!(hop.to_l2rh().buffer_len(), 24);
    }

    #[test]
    fn content_longer_than_an_l2rh_is_refused() {
        // Regression: 64+ bytes of content used to panic in NativeAddr::from_bytes.
        let mut c = vec![0u8; 64];
        c[1] = 0x40;
        assert_eq!(
            RouterHop::from_content(&c).unwrap_err().kind,
            ErrorKind::BadL2rhLength(64)
        );
        assert_eq!(
            RouterHop::from_content(&vec![0u8; 70_000])
                .unwrap_err()
                .kind,
            ErrorKind::BadL2rhLength(u16::MAX)
        );
        // A native part longer than any SAN's address is not a router hop.
        assert_eq!(
            RouterHop::from_content(&c[..63]).unwrap_err().kind,
            ErrorKind::NativeTooLong(61)
        );
        let hop = RouterHop::from_content(&c[..2 + MAX_NATIVE_LEN]).unwrap();
        assert_eq!(hop.native.as_bytes().len(), MAX_NATIVE_LEN);
    }

    #[test]
    fn not_a_hop() {
        assert!(RouterHop::from_content(&[1]).is_err());
        assert!(RouterHop::from_content(&[0, 0x3F]).is_err());
        assert!(RouterHop::from_content(&[0, 0]).unwrap().is_native_only());
        assert!(
            RouterHop::from_content(&[0, 0x40])
                .unwrap()
                .is_egress_only()
        );
    }
}
