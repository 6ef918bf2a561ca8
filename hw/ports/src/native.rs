//! Native addresses: where a packet comes from or goes to on a SAN.

use core::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The largest native address mwrouter's SANs use (IPv6 address + UDP port).
pub const MAX_NATIVE: usize = 18;

/// A native address on a SAN: a MAC (6 bytes), an IPv4 address and UDP port
/// (6 bytes), an IPv6 address and UDP port (18 bytes), or empty. A small
/// `Copy` value so that next-hop tables and buffers carry it without allocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Native {
    len: u8,
    bytes: [u8; MAX_NATIVE],
}

impl Native {
    /// The empty address.
    pub const EMPTY: Native = Native {
        len: 0,
        bytes: [0; MAX_NATIVE],
    };

    /// From raw bytes; `None` when longer than [`MAX_NATIVE`].
    #[inline]
    pub fn from_slice(b: &[u8]) -> Option<Native> {
        // The common sizes with fixed-size copies: no memset/memcpy calls
        // on the forwarding path.
        if let Ok(m) = <[u8; 6]>::try_from(b) {
            return Some(Native::mac(m));
        }
        if let Ok(a) = <[u8; MAX_NATIVE]>::try_from(b) {
            return Some(Native {
                len: MAX_NATIVE as u8,
                bytes: a,
            });
        }
        if b.len() > MAX_NATIVE {
            return None;
        }
        let mut bytes = [0; MAX_NATIVE];
        bytes[..b.len()].copy_from_slice(b);
        Some(Native {
            len: b.len() as u8,
            bytes,
        })
    }

    /// A MAC address.
    pub const fn mac(m: [u8; 6]) -> Native {
        let mut bytes = [0; MAX_NATIVE];
        let mut i = 0;
        while i < 6 {
            bytes[i] = m[i];
            i += 1;
        }
        Native { len: 6, bytes }
    }

    /// As a MAC address (6 bytes).
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

    /// A UDP endpoint.
    pub fn udp(sa: SocketAddr) -> Native {
        let mut bytes = [0; MAX_NATIVE];
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
        Native { len, bytes }
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Whether empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// As a UDP endpoint (6 or 18 bytes).
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
}

impl fmt::Debug for Native {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Native {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len == 18 {
            return write!(f, "{}", self.as_udp().expect("18 bytes"));
        }
        if self.is_empty() {
            return f.write_str("-");
        }
        for (i, b) in self.as_slice().iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
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

impl core::str::FromStr for Native {
    type Err = String;

    /// A MAC (`02:00:00:00:00:07`), a UDP endpoint (`127.0.0.1:34997`,
    /// `[::1]:34997`), or `-` for the empty address (as [`Native`]'s
    /// `Display` writes them).
    fn from_str(s: &str) -> Result<Native, String> {
        if s == "-" {
            return Ok(Native::EMPTY);
        }
        if let Some(m) = parse_mac(s) {
            return Ok(Native::mac(m));
        }
        s.parse::<SocketAddr>().map(Native::udp).map_err(|_| {
            format!("{s:?} is neither a MAC (02:00:00:00:00:07) nor an endpoint (127.0.0.1:34997)")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let m = Native::mac([2, 0, 0, 0, 0, 1]);
        assert_eq!(m.as_slice().len(), 6);
        assert_eq!(m.as_mac(), Some([2, 0, 0, 0, 0, 1]));
        assert_eq!(m.to_string(), "02:00:00:00:00:01");
        let v6: SocketAddr = "[::1]:34997".parse().unwrap();
        assert_eq!(Native::udp(v6).as_udp(), Some(v6));
        assert!(Native::from_slice(&[0; 19]).is_none());
        assert!(Native::EMPTY.is_empty());
        for t in ["02:00:00:00:00:01", "[::1]:34997", "-"] {
            assert_eq!(t.parse::<Native>().unwrap().to_string(), t);
        }
        // Six bytes print as a MAC, whatever they hold.
        let v4: SocketAddr = "127.0.0.1:34997".parse().unwrap();
        assert_eq!(
            "127.0.0.1:34997".parse::<Native>().unwrap().as_udp(),
            Some(v4)
        );
        assert!("02:00:00:00:00".parse::<Native>().is_err());
        assert!("2:00:00:00:00:01".parse::<Native>().is_err());
    }
}
