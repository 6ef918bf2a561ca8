//! The probe: how mwgen marks the packets it sends so that the receiver can
//! tell them from other traffic, number them and time them.
//!
//! A probe is an ordinary EEP packet (Part-1, "Message structure") of a
//! user-defined Packet Type (DESIGN.md "Wire": 0x0100-0x05FF are user
//! defined), so that routers forward it like any other packet:
//!
//! | where | what |
//! | --- | --- |
//! | PT | [`PROBE_PT`] |
//! | TE | the stream tag: one per generator run, so that packets of another run (or a replay of an old capture) are counted apart |
//! | Free | bits 47..32 of the sequence number |
//! | data bytes 0..4 | bits 31..0 of the sequence number, big endian |
//! | data bytes 4..8 | bits 31..0 of the transmit time in nanoseconds, big endian |
//!
//! The probe needs one data word, so that a 64-byte Ethernet frame still
//! holds an L2-routed probe (14 + 16 L2RH + 16 header + 8 + 8 trailer = 62).
//! The sequence number has 48 bits (2.8 x 10^14 packets, 162 days at
//! 20 Mpps); the transmit time keeps its low 32 bits, so one-way latency is
//! computed modulo 2^32 ns and is exact below 4.29 s.

use rrp::limits::MAX_L2RHS;
use rrp::wire::header::{HEADER_LEN, VERSION, field};
use rrp::wire::l2rh::starts_l2rh;
use rrp::wire::packet::{TRAILER_LEN, locate};

/// The Packet Type of mwgen's probes (user-defined range).
pub const PROBE_PT: u16 = 0x05F0;

/// Bytes of the data block a probe uses.
pub const PROBE_LEN: usize = 8;

/// The largest sequence number plus one (48 bits).
pub const SEQ_SPACE: u64 = 1 << 48;

/// Offset of the sequence number's low half in the data block.
const SEQ_LO: usize = 0;
/// Offset of the transmit time in the data block.
const TX_NS: usize = 4;

/// Writes the sequence number and transmit time into the probe whose EEP
/// header starts at `hdr` in `pkt`. The caller built the packet (its length
/// was checked when the template was made).
#[inline(always)]
pub fn patch(pkt: &mut [u8], hdr: usize, seq: u64, tx_ns: u64) {
    let d = hdr + HEADER_LEN;
    let b = &mut pkt[hdr..d + PROBE_LEN];
    b[field::FREE].copy_from_slice(&((seq >> 32) as u16).to_be_bytes());
    b[HEADER_LEN + SEQ_LO..HEADER_LEN + SEQ_LO + 4].copy_from_slice(&(seq as u32).to_be_bytes());
    b[HEADER_LEN + TX_NS..HEADER_LEN + TX_NS + 4].copy_from_slice(&(tx_ns as u32).to_be_bytes());
}

/// Writes the stream tag into the probe whose header starts at `hdr`.
#[inline]
pub fn set_tag(pkt: &mut [u8], hdr: usize, tag: u16) {
    pkt[hdr + field::TE.start..hdr + field::TE.end].copy_from_slice(&tag.to_be_bytes());
}

/// What a received probe says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The stream tag (TE).
    pub tag: u16,
    /// The 48-bit sequence number.
    pub seq: u64,
    /// The low 32 bits of the transmit time in nanoseconds.
    pub tx_ns32: u32,
    /// The Error Indication from the trailer.
    pub ei: u64,
}

/// What a received packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// A probe.
    Probe(Probe),
    /// A well-formed packet that is not a probe (e.g. a router's RRP sweep).
    Other,
    /// Not a MessageWay packet mwgen can read, or a probe too short to hold
    /// its fields.
    Malformed,
}

/// Reads a received packet (leading L2RHs allowed; bytes after the trailer
/// are frame padding).
#[inline]
pub fn read(pkt: &[u8]) -> Received {
    // The common case first: no L2RH left, version 5, a probe with room for
    // its data word and trailer. Anything else takes the full walk.
    if pkt.len() >= HEADER_LEN + PROBE_LEN + TRAILER_LEN {
        let h: &[u8; HEADER_LEN + PROBE_LEN] = pkt[..HEADER_LEN + PROBE_LEN]
            .try_into()
            .expect("length checked");
        let first = u16::from_be_bytes([h[0], h[1]]);
        let pt = u16::from_be_bytes([h[field::PT.start], h[field::PT.start + 1]]);
        let words = u32::from_be_bytes([
            0,
            h[field::DL.start],
            h[field::DL.start + 1],
            h[field::DL.start + 2],
        ]) as usize;
        let t = HEADER_LEN + words * 8;
        let pl = (h[field::E_PL] & 0x0F) as usize;
        if !starts_l2rh(first)
            && h[field::VERSION] == VERSION
            && pt == PROBE_PT
            && pl < 8
            && words * 8 >= PROBE_LEN + pl
            && pkt.len() >= t + TRAILER_LEN
        {
            let be32 = |o: usize| u32::from_be_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
            let mut ei = [0u8; TRAILER_LEN];
            ei.copy_from_slice(&pkt[t..t + TRAILER_LEN]);
            return Received::Probe(Probe {
                tag: u16::from_be_bytes([h[field::TE.start], h[field::TE.start + 1]]),
                seq: (u64::from(u16::from_be_bytes([
                    h[field::FREE.start],
                    h[field::FREE.start + 1],
                ])) << 32)
                    | u64::from(be32(HEADER_LEN + SEQ_LO)),
                tx_ns32: be32(HEADER_LEN + TX_NS),
                ei: u64::from_be_bytes(ei),
            });
        }
    }
    read_slow(pkt)
}

/// [`read`] for every other case: leading L2RHs, malformed packets, packets
/// of other types. Public so that tests and the fuzz target can check that
/// [`read`]'s fast path agrees with it on every input.
#[cold]
pub fn read_slow(pkt: &[u8]) -> Received {
    let Ok(l) = locate(pkt, MAX_L2RHS) else {
        return Received::Malformed;
    };
    let h = l.header_offset;
    let pt = u16::from_be_bytes([pkt[h + field::PT.start], pkt[h + 1 + field::PT.start]]);
    if pt != PROBE_PT {
        return Received::Other;
    }
    if l.data_len < PROBE_LEN {
        return Received::Malformed;
    }
    // `locate` checked that header, data block and trailer are in `pkt`.
    let hb = &pkt[h..h + HEADER_LEN + PROBE_LEN];
    let be16 = |r: std::ops::Range<usize>| u16::from_be_bytes([hb[r.start], hb[r.start + 1]]);
    let be32 = |o: usize| u32::from_be_bytes([hb[o], hb[o + 1], hb[o + 2], hb[o + 3]]);
    let t = l.trailer_offset();
    let mut ei = [0u8; TRAILER_LEN];
    ei.copy_from_slice(&pkt[t..t + TRAILER_LEN]);
    Received::Probe(Probe {
        tag: be16(field::TE),
        seq: (u64::from(be16(field::FREE)) << 32) | u64::from(be32(HEADER_LEN + SEQ_LO)),
        tx_ns32: be32(HEADER_LEN + TX_NS),
        ei: u64::from_be_bytes(ei),
    })
}

/// One-way latency in nanoseconds from a probe's transmit time and the
/// receive time (both from the generator's clock), modulo 2^32.
#[inline(always)]
pub fn latency_ns(tx_ns32: u32, rx_ns: u64) -> u64 {
    u64::from((rx_ns as u32).wrapping_sub(tx_ns32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::Address;
    use rrp::kind::PacketType;
    use rrp::wire::header::HeaderRepr;
    use rrp::wire::packet::PacketRepr;

    fn probe_packet(data_len: usize) -> Vec<u8> {
        PacketRepr {
            l2rhs: vec![],
            header: HeaderRepr {
                dst: Address(0x0230),
                packet_type: PacketType(PROBE_PT),
                type_ext: 0xBEEF,
                src: Address(0x0130),
                ..HeaderRepr::default()
            },
            data: vec![0; data_len],
            ei: 0b101,
        }
        .to_bytes()
        .unwrap()
    }

    #[test]
    fn patch_then_read() {
        let mut p = probe_packet(8);
        p.extend_from_slice(&[0; 2]); // frame padding
        patch(&mut p, 0, 0x1234_5678_9ABC, 0xFFFF_FFFF_0000_0010);
        match read(&p) {
            Received::Probe(pr) => {
                assert_eq!(pr.tag, 0xBEEF);
                assert_eq!(pr.seq, 0x1234_5678_9ABC);
                assert_eq!(pr.tx_ns32, 0x10);
                assert_eq!(pr.ei, 0b101);
            }
            r => panic!("{r:?}"),
        }
        set_tag(&mut p, 0, 7);
        assert!(matches!(read(&p), Received::Probe(Probe { tag: 7, .. })));
    }

    #[test]
    fn too_short_and_other() {
        assert_eq!(read(&probe_packet(0)), Received::Malformed);
        assert_eq!(read(&[0xFF; 5]), Received::Malformed);
        let mut p = probe_packet(8);
        p[field::PT.start + 1] = 0x02;
        assert_eq!(read(&p), Received::Other);
    }

    proptest::proptest! {
        /// The fast path reads exactly what the full walk reads.
        #[test]
        fn fast_read_agrees_with_the_full_walk(
            data_len in 0usize..40,
            flips in proptest::collection::vec((0usize..64, proptest::num::u8::ANY), 0..4),
            cut in 0usize..64,
        ) {
            let mut p = probe_packet(data_len);
            p.extend_from_slice(&[0; 3]);
            for (at, v) in flips {
                if at < p.len() {
                    p[at] = v;
                }
            }
            p.truncate(p.len().saturating_sub(cut % 8));
            proptest::prop_assert_eq!(read(&p), read_slow(&p));
        }
    }

    #[test]
    fn latency_wraps() {
        assert_eq!(latency_ns(0xFFFF_FFF0, 0x1_0000_0010), 0x20);
        assert_eq!(latency_ns(5, 105), 100);
    }
}
