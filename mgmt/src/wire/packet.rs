//! The EEP packet around a MAD (docs/management.md "The packet"): PT 0x0006,
//! TE 0, a data block of exactly one 256-byte MAD (DL 32 words, PL 0), EI 0
//! when sent; no L2RH, except for a request the path tracer sends along an
//! L2 source route. The packet itself is `rrp::wire`'s.

use rrp::wire::{HeaderRepr, Packet, PacketRepr, RouterHop};
use rrp::{Address, PacketType};

use crate::error::{Error, ErrorKind, Result};
use crate::wire::mad::{MAD_LEN, Mad};

/// The packet carrying `mad` from `src` to `dst`: EEP header with PT
/// 0x0006, TE 0, DL 32, PL 0, E 0, Free 0, priority 0; no L2RH; trailer EI 0.
/// Fails (field `"eep.dst"`, offset 0) for a destination below 0x0040,
/// which would read back as an L2RH length.
pub fn mad_packet(dst: Address, src: Address, mad: &[u8; MAD_LEN]) -> Result<Vec<u8>> {
    routed_mad_packet(&[], dst, src, mad)
}

/// The same, led by one L2RH per router hop (an L2 source route; none: the
/// packet of [`mad_packet`]).
pub fn routed_mad_packet(
    hops: &[RouterHop],
    dst: Address,
    src: Address,
    mad: &[u8; MAD_LEN],
) -> Result<Vec<u8>> {
    let p = PacketRepr {
        l2rhs: hops.iter().map(RouterHop::to_l2rh).collect(),
        header: HeaderRepr {
            dst,
            src,
            packet_type: PacketType::MANAGEMENT,
            ..HeaderRepr::default()
        },
        data: mad.to_vec(),
        ei: 0,
    };
    p.to_bytes().map_err(|e| {
        Error::new(
            ErrorKind::BadValue("destination below 0x0040 reads as an L2RH length"),
            e.field,
            e.offset,
        )
    })
}

/// The MAD in a located packet. Errors count from the packet's first byte
/// (its first L2RH, or its EEP header): [`ErrorKind::NotManagement`] at the
/// PT (field `"eep.pt"`), [`ErrorKind::BadLength`] at the data block
/// (field `"eep.data"`) when it is not 256 bytes, then the MAD's own
/// checks ([`Mad::new_checked`]) shifted to the data block's offset.
pub fn mad_in<'a>(p: &Packet<&'a [u8]>) -> Result<Mad<&'a [u8]>> {
    let lay = *p.layout();
    let h = p.header();
    let pt = h.packet_type();
    if pt != PacketType::MANAGEMENT {
        return Err(Error::new(
            ErrorKind::NotManagement(pt.0),
            "eep.pt",
            lay.header_offset + rrp::wire::header::field::PT.start,
        ));
    }
    let at = lay.data_offset();
    if lay.data_len != MAD_LEN {
        return Err(Error::new(
            ErrorKind::BadLength(lay.data_len),
            "eep.data",
            at,
        ));
    }
    let buf: &'a [u8] = p.into_inner();
    Mad::new_checked(&buf[at..at + MAD_LEN]).map_err(|e| e.shifted(at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{MadRepr, Method, MgmtClass};

    #[test]
    fn round_trip_through_a_packet() {
        let m = MadRepr::new(MgmtClass::PERF, Method::GET, 9, 0x12, 3);
        let b = mad_packet(Address(0x0111), Address(0x0101), &m.to_bytes().unwrap()).unwrap();
        assert_eq!(b.len(), 16 + 256 + 8);
        assert_eq!(
            &b[..16],
            &[1, 0x11, 0, 5, 0, 6, 0, 0, 0, 0, 0, 32, 1, 1, 0, 0]
        );
        let p = Packet::new_checked(&b[..], 0).unwrap();
        let v = mad_in(&p).unwrap();
        assert_eq!(MadRepr::parse(&v).unwrap(), m);
    }

    #[test]
    fn errors_count_from_the_packet() {
        let m = MadRepr::new(MgmtClass::PERF, Method::GET, 9, 0x12, 3);
        let mut b = mad_packet(Address(0x0111), Address(0x0101), &m.to_bytes().unwrap()).unwrap();
        b[16] = 2; // BaseVersion
        let e = mad_in(&Packet::new_checked(&b[..], 0).unwrap()).unwrap_err();
        assert_eq!(
            e,
            Error::new(ErrorKind::BadBaseVersion(2), "mad.base_version", 16)
        );
        b[5] = 2; // PT RRP
        let e = mad_in(&Packet::new_checked(&b[..], 0).unwrap()).unwrap_err();
        assert_eq!(e, Error::new(ErrorKind::NotManagement(2), "eep.pt", 4));
        let short = PacketRepr {
            l2rhs: Vec::new(),
            header: HeaderRepr {
                dst: Address(0x40),
                packet_type: PacketType::MANAGEMENT,
                ..HeaderRepr::default()
            },
            data: vec![1; 255],
            ei: 0,
        }
        .to_bytes()
        .unwrap();
        let e = mad_in(&Packet::new_checked(&short[..], 0).unwrap()).unwrap_err();
        assert_eq!(e, Error::new(ErrorKind::BadLength(255), "eep.data", 16));
        let e = mad_packet(Address(0x3F), Address(0), &[0; 256]).unwrap_err();
        assert_eq!(e.field, "eep.dst");
    }
}
