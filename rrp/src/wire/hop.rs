//! mwrouter's router hop: the L2RH content that a router consumes
//! (DESIGN.md "Source routes: the router is one hop").
//!
//! Content = the egress HR's 16-bit MessageWay address, then the native
//! address on the egress SAN (6-byte MAC on Ethernet; IPv4 address and UDP
//! port, 6 bytes, or IPv6 address and UDP port, 18 bytes, on a UDP SAN).
//! Egress 0x0000 means "native hop only, on the SAN where the route starts";
//! an empty native part means "egress only" (deliver to that HR itself).

use core::fmt;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use arrayvec::ArrayVec;

use crate::address::Address;
use crate::error::{Error, ErrorKind, Result};
use crate::wire::l2rh::{L2rhRepr, MAX_L2RH_CONTENT};

/// The largest native address a router hop can carry.
pub const MAX_NATIVE_LEN: usize = MAX_L2RH_CONTENT - 2;

/// A native address on a SAN: the hop inside that SAN.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct NativeAddr(ArrayVec<u8, MAX_NATIVE_LEN>);

impl NativeAddr {
    /// No native part ("egress only").
    pub const fn none() -> NativeAddr {
        NativeAddr(ArrayVec::new_const())
    }

    /// A native address from raw bytes; `None` when longer than 61 bytes.
    pub fn from_bytes(b: &[u8]) -> Option<NativeAddr> {
        ArrayVec::try_from(b).ok().map(NativeAddr)
    }

    /// An Ethernet MAC address.
    pub fn mac(mac: [u8; 6]) -> NativeAddr {
        NativeAddr(ArrayVec::try_from(&mac[..]).expect("6 <= 61"))
    }

    /// A UDP endpoint: IPv4 address + port (6 bytes) or IPv6 address + port (18 bytes).
    pub fn udp(sa: SocketAddr) -> NativeAddr {
        let mut v = ArrayVec::new();
        match sa {
            SocketAddr::V4(a) => v.try_extend_from_slice(&a.ip().octets()).expect("fits"),
            SocketAddr::V6(a) => v.try_extend_from_slice(&a.ip().octets()).expect("fits"),
        }
        v.try_extend_from_slice(&sa.port().to_be_bytes())
            .expect("fits");
        NativeAddr(v)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Whether there is no native part.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// As a MAC address, when 6 bytes long.
    pub fn as_mac(&self) -> Option<[u8; 6]> {
        <[u8; 6]>::try_from(&self.0[..]).ok()
    }

    /// As a UDP endpoint, when 6 (IPv4) or 18 (IPv6) bytes long.
    pub fn as_udp(&self) -> Option<SocketAddr> {
        let b = &self.0[..];
        match b.len() {
            6 => Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::new(b[0], b[1], b[2], b[3]),
                u16::from_be_bytes([b[4], b[5]]),
            ))),
            18 => {
                let ip: [u8; 16] = b[..16].try_into().expect("len 18");
                Some(SocketAddr::V6(SocketAddrV6::new(
                    Ipv6Addr::from(ip),
                    u16::from_be_bytes([b[16], b[17]]),
                    0,
                    0,
                )))
            }
            _ => None,
        }
    }
}

impl fmt::Debug for NativeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, b) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{b:02x}")?;
        }
        f.write_str("]")
    }
}

/// One hop of a route in mwrouter's L2RH layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

    /// Reads a router hop from L2RH content; the content must hold at least
    /// the 2-byte egress address and at most the 63 bytes of an L2RH, and the
    /// egress must be 0x0000 or a node address.
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
        let egress = Address(u16::from_be_bytes([content[0], content[1]]));
        if egress.0 != 0 && !egress.is_node() {
            return Err(Error::new(
                ErrorKind::IllegalAddress(egress.0),
                "l2rh.hop.egress",
                2,
            ));
        }
        let native = NativeAddr::from_bytes(&content[2..]).expect("<= 61 bytes");
        Ok(RouterHop { egress, native })
    }

    /// The hop as an L2RH. Never fails: 2 + 61 bytes fit the 63-byte limit.
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
        let hop = RouterHop::from_content(&c[..63]).unwrap();
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
