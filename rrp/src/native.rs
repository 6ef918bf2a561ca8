//! Native addresses: where a packet comes from or goes to inside one SAN
//! (docs/architecture.md "Source routes"; docs/encapsulation.md).
//!
//! MessageWay leaves the SAN's own addressing to the SAN (Part-1, "L2-Routing
//! option": the L2RH content "is SAN dependent"). The SANs mwrouter attaches
//! to give three forms: a 6-byte Ethernet MAC, an IPv4 address and UDP port
//! (6 bytes), an IPv6 address and UDP port (18 bytes). [`NativeAddr`] is the
//! one type for all of them, from the router hop on the wire through the
//! route tables and the FIB's next hops to the ports: a small `Copy` value,
//! so that next-hop tables, notices and packet buffers carry it without
//! allocating.

use core::fmt;
use core::str::FromStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::encap::LinkKind;

/// The longest native address: an IPv6 address and a UDP port. A router
/// hop whose native part is longer is refused (docs/spec-notes.md).
pub const MAX_NATIVE_LEN: usize = 18;

/// A native address on a SAN (empty: none, e.g. "egress only" in a router
/// hop, or "every member of the SAN" as a transmit destination).
#[derive(Clone, Copy)]
pub struct NativeAddr {
    len: u8,
    bytes: [u8; MAX_NATIVE_LEN],
}

impl NativeAddr {
    /// The empty address.
    pub const NONE: NativeAddr = NativeAddr {
        len: 0,
        bytes: [0; MAX_NATIVE_LEN],
    };

    /// The empty address.
    pub const fn none() -> NativeAddr {
        NativeAddr::NONE
    }

    /// From raw bytes; `None` when longer than [`MAX_NATIVE_LEN`].
    #[inline]
    pub fn from_bytes(b: &[u8]) -> Option<NativeAddr> {
        // The common sizes with fixed-size copies: no memset/memcpy calls
        // on the forwarding path.
        if let Ok(m) = <[u8; 6]>::try_from(b) {
            return Some(NativeAddr::mac(m));
        }
        if let Ok(a) = <[u8; MAX_NATIVE_LEN]>::try_from(b) {
            return Some(NativeAddr {
                len: MAX_NATIVE_LEN as u8,
                bytes: a,
            });
        }
        if b.len() > MAX_NATIVE_LEN {
            return None;
        }
        let mut bytes = [0; MAX_NATIVE_LEN];
        bytes[..b.len()].copy_from_slice(b);
        Some(NativeAddr {
            len: b.len() as u8,
            bytes,
        })
    }

    /// An Ethernet MAC address.
    #[inline]
    pub const fn mac(m: [u8; 6]) -> NativeAddr {
        let mut bytes = [0; MAX_NATIVE_LEN];
        let mut i = 0;
        while i < 6 {
            bytes[i] = m[i];
            i += 1;
        }
        NativeAddr { len: 6, bytes }
    }

    /// A UDP endpoint: IPv4 address + port (6 bytes) or IPv6 address + port
    /// (18 bytes). An IPv6 scope id is not kept.
    pub fn udp(sa: SocketAddr) -> NativeAddr {
        let mut bytes = [0; MAX_NATIVE_LEN];
        let len = match sa.ip() {
            IpAddr::V4(ip) => {
                bytes[..4].copy_from_slice(&ip.octets());
                bytes[4..6].copy_from_slice(&sa.port().to_be_bytes());
                6
            }
            IpAddr::V6(ip) => {
                bytes[..16].copy_from_slice(&ip.octets());
                bytes[16..18].copy_from_slice(&sa.port().to_be_bytes());
                18
            }
        };
        NativeAddr { len, bytes }
    }

    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Number of bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there is no address.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// As a MAC address, when 6 bytes long.
    #[inline(always)]
    pub fn as_mac(&self) -> Option<[u8; 6]> {
        self.mac_ref().copied()
    }

    /// As a MAC address (6 bytes), borrowed: what an encapsulation on the
    /// forwarding path copies with one fixed-size move.
    #[inline(always)]
    pub fn mac_ref(&self) -> Option<&[u8; 6]> {
        if self.len == 6 {
            self.bytes.first_chunk::<6>()
        } else {
            None
        }
    }

    /// As a UDP endpoint, when 6 (IPv4) or 18 (IPv6) bytes long.
    pub fn as_udp(&self) -> Option<SocketAddr> {
        let b = &self.bytes;
        match self.len {
            6 => Some(SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3])),
                u16::from_be_bytes([b[4], b[5]]),
            )),
            18 => {
                let ip: [u8; 16] = b[..16].try_into().expect("16 bytes");
                Some(SocketAddr::new(
                    IpAddr::V6(Ipv6Addr::from(ip)),
                    u16::from_be_bytes([b[16], b[17]]),
                ))
            }
            _ => None,
        }
    }

    /// The address as it is written for a SAN of `kind` (configuration
    /// files, admin answers): `ip:port` on a UDP SAN, colon-separated hex
    /// (a MAC: `02:00:00:00:00:07`) otherwise, empty when there is none.
    /// [`NativeAddr::parse`] reads it back.
    pub fn on(&self, kind: LinkKind) -> OnLink<'_> {
        OnLink { addr: self, kind }
    }

    /// Reads the address of a node on a SAN of `kind` (a static entry's
    /// `native`): a MAC on an Ethernet or in-memory SAN, `IP:port`
    /// (`[IPv6]:port`) on a UDP SAN.
    pub fn parse_on(kind: LinkKind, s: &str) -> Result<NativeAddr, NativeParseError> {
        let parsed = match kind {
            LinkKind::Udp => s.parse::<SocketAddr>().ok().map(NativeAddr::udp),
            LinkKind::Ethernet | LinkKind::Memory => parse_mac(s).map(NativeAddr::mac),
        };
        parsed.ok_or_else(|| NativeParseError {
            text: s.to_string(),
            kind: Some(kind),
        })
    }

    /// Reads an address in any of the forms mwrouter writes: `-` (none), a
    /// UDP endpoint (`127.0.0.1:34997`, `[::1]:34997`), or 1 to 18 bytes in
    /// colon-separated hex, two digits each (`02:00:00:00:00:07`).
    pub fn parse(s: &str) -> Result<NativeAddr, NativeParseError> {
        if s == "-" {
            return Ok(NativeAddr::NONE);
        }
        if let Ok(sa) = s.parse::<SocketAddr>() {
            return Ok(NativeAddr::udp(sa));
        }
        let err = || NativeParseError {
            text: s.to_string(),
            kind: None,
        };
        let mut v = [0u8; MAX_NATIVE_LEN];
        let mut n = 0;
        for part in s.split(':') {
            if part.len() != 2 || n == MAX_NATIVE_LEN {
                return Err(err());
            }
            v[n] = u8::from_str_radix(part, 16).map_err(|_| err())?;
            n += 1;
        }
        NativeAddr::from_bytes(&v[..n]).ok_or_else(err)
    }
}

/// Parses a MAC address written `02:00:00:00:00:07`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut mac = [0u8; 6];
    let mut parts = s.split(':');
    for b in &mut mac {
        let p = parts.next()?;
        if p.len() != 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

impl Default for NativeAddr {
    fn default() -> Self {
        NativeAddr::NONE
    }
}

impl PartialEq for NativeAddr {
    /// The length and the whole array: the bytes past the length are zero
    /// in every value (each constructor starts from zeros and the fields
    /// are private), so this is the byte-wise equality of the addresses,
    /// compared as a few words with no call to `memcmp` (the forwarding
    /// path compares native addresses for loops, buddies and sources).
    #[inline]
    fn eq(&self, o: &NativeAddr) -> bool {
        self.len == o.len && self.bytes == o.bytes
    }
}

impl Eq for NativeAddr {}

impl core::hash::Hash for NativeAddr {
    fn hash<H: core::hash::Hasher>(&self, h: &mut H) {
        self.as_bytes().hash(h)
    }
}

impl PartialOrd for NativeAddr {
    fn partial_cmp(&self, o: &NativeAddr) -> Option<core::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for NativeAddr {
    /// Byte-wise, as the route ranking compares next hops.
    fn cmp(&self, o: &NativeAddr) -> core::cmp::Ordering {
        self.as_bytes().cmp(o.as_bytes())
    }
}

fn write_hex(f: &mut fmt::Formatter<'_>, b: &[u8]) -> fmt::Result {
    for (i, b) in b.iter().enumerate() {
        if i > 0 {
            f.write_str(":")?;
        }
        write!(f, "{b:02x}")?;
    }
    Ok(())
}

impl fmt::Display for NativeAddr {
    /// Without knowing the SAN: `-` when empty, an IPv6 endpoint for 18
    /// bytes, colon-separated hex otherwise (six bytes print as a MAC).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len == 18 {
            return write!(f, "{}", self.as_udp().expect("18 bytes"));
        }
        if self.is_empty() {
            return f.write_str("-");
        }
        write_hex(f, self.as_bytes())
    }
}

impl fmt::Debug for NativeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for NativeAddr {
    type Err = NativeParseError;

    /// As [`NativeAddr::parse`].
    fn from_str(s: &str) -> Result<NativeAddr, NativeParseError> {
        NativeAddr::parse(s)
    }
}

/// A native address written for a SAN of a known kind ([`NativeAddr::on`]).
#[derive(Debug, Clone, Copy)]
pub struct OnLink<'a> {
    addr: &'a NativeAddr,
    kind: LinkKind,
}

impl fmt::Display for OnLink<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == LinkKind::Udp
            && let Some(sa) = self.addr.as_udp()
        {
            return write!(f, "{sa}");
        }
        write_hex(f, self.addr.as_bytes())
    }
}

/// Text that is not a native address (of the SAN kind asked for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeParseError {
    /// The text.
    pub text: String,
    /// The SAN kind it was read for, if one was.
    pub kind: Option<LinkKind>,
}

impl fmt::Display for NativeParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.text;
        match self.kind {
            Some(LinkKind::Udp) => write!(
                f,
                "{s:?} is not a UDP endpoint like \"127.0.0.1:34997\" or \"[::1]:34997\""
            ),
            Some(LinkKind::Ethernet | LinkKind::Memory) => {
                write!(f, "{s:?} is not a MAC address like \"02:00:00:00:00:07\"")
            }
            None => write!(
                f,
                "{s:?} is neither a MAC (02:00:00:00:00:07) nor an endpoint (127.0.0.1:34997)"
            ),
        }
    }
}

impl std::error::Error for NativeParseError {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Equality compares whole words; it is the byte-wise equality
        /// of the addresses, whatever their lengths.
        #[test]
        fn equality_is_bytewise(
            a in proptest::collection::vec(any::<u8>(), 0..=MAX_NATIVE_LEN),
            b in proptest::collection::vec(any::<u8>(), 0..=MAX_NATIVE_LEN),
            cut in 0usize..=MAX_NATIVE_LEN,
        ) {
            let (x, y) = (NativeAddr::from_bytes(&a).unwrap(), NativeAddr::from_bytes(&b).unwrap());
            prop_assert_eq!(x == y, a == b);
            // A prefix of the same bytes is another address (zeros past
            // the length do not make a shorter one equal).
            let p = NativeAddr::from_bytes(&a[..cut.min(a.len())]).unwrap();
            prop_assert_eq!(p == x, cut >= a.len());
        }
    }

    #[test]
    fn forms() {
        let m = NativeAddr::mac([2, 0, 0, 0, 0, 1]);
        assert_eq!(m.as_bytes().len(), 6);
        assert_eq!(m.as_mac(), Some([2, 0, 0, 0, 0, 1]));
        assert_eq!(m.to_string(), "02:00:00:00:00:01");
        let v6: SocketAddr = "[::1]:34997".parse().unwrap();
        assert_eq!(NativeAddr::udp(v6).as_udp(), Some(v6));
        assert_eq!(NativeAddr::udp(v6).len(), 18);
        assert!(NativeAddr::from_bytes(&[0; 19]).is_none());
        assert!(NativeAddr::NONE.is_empty());
        for t in ["02:00:00:00:00:01", "[::1]:34997", "-"] {
            assert_eq!(t.parse::<NativeAddr>().unwrap().to_string(), t);
        }
        // Six bytes print as a MAC, whatever they hold.
        let v4: SocketAddr = "127.0.0.1:34997".parse().unwrap();
        assert_eq!(
            "127.0.0.1:34997".parse::<NativeAddr>().unwrap().as_udp(),
            Some(v4)
        );
        assert!("2:00:00:00:00:01".parse::<NativeAddr>().is_err());
        assert!("zz:00".parse::<NativeAddr>().is_err());
        assert!("".parse::<NativeAddr>().is_err());
        // Any length up to 18 bytes in hex.
        assert_eq!("02:00".parse::<NativeAddr>().unwrap().as_bytes(), &[2, 0]);
        let long = vec!["01"; 19].join(":");
        assert!(long.parse::<NativeAddr>().is_err());
    }

    #[test]
    fn written_for_a_san_kind_and_read_back() {
        let v4: SocketAddr = "127.0.0.1:7000".parse().unwrap();
        let u = NativeAddr::udp(v4);
        assert_eq!(u.on(LinkKind::Udp).to_string(), "127.0.0.1:7000");
        assert_eq!(u.on(LinkKind::Ethernet).to_string(), "7f:00:00:01:1b:58");
        assert_eq!(NativeAddr::NONE.on(LinkKind::Udp).to_string(), "");
        assert_eq!(NativeAddr::parse_on(LinkKind::Udp, "127.0.0.1:7000"), Ok(u));
        let m = NativeAddr::mac([2, 0, 0, 0, 0, 7]);
        assert_eq!(
            NativeAddr::parse_on(LinkKind::Ethernet, "02:00:00:00:00:07"),
            Ok(m)
        );
        let e = NativeAddr::parse_on(LinkKind::Ethernet, "127.0.0.1:7000").unwrap_err();
        assert!(e.to_string().contains("not a MAC address"), "{e}");
        let e = NativeAddr::parse_on(LinkKind::Udp, "02:00:00:00:00:07").unwrap_err();
        assert!(e.to_string().contains("not a UDP endpoint"), "{e}");
    }

    #[test]
    fn equality_and_order_ignore_the_unused_bytes() {
        let a = NativeAddr::from_bytes(&[1, 2]).unwrap();
        let b = NativeAddr::from_bytes(&[1, 2, 3]).unwrap();
        assert!(a < b);
        assert_ne!(a, b);
        assert_eq!(a, NativeAddr::from_bytes(&[1, 2]).unwrap());
        assert!(NativeAddr::NONE < a);
    }
}
