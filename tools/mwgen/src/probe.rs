//! The probe: how mwgen marks the packets it sends so that the receiver can
//! tell them from other traffic, number them and time them.
//!
//! A probe is an ordinary EEP packet (Part-1, "Message structure") of a
//! user-defined Packet Type (docs/architecture.md "Wire": 0x0100-0x05FF are user
//! defined), so that routers forward it like any other packet:
//!
//! | where | what |
//! | --- | --- |
//! | PT | [`PROBE_PT`] |
//! | TE | the stream tag: one per generator run, so that packets of another run (or a replay of an old capture) are counted apart |
//! | Free | bit 15: [`TIMED`]; bits 14..0: bits 46..32 of the sequence number |
//! | data bytes 0..4 | bits 31..0 of the sequence number, big endian |
//! | data bytes 4..8 | bits 31..0 of the transmit time in nanoseconds, big endian, on a timed probe (0 on the others) |
//!
//! The probe needs one data word, so that a 64-byte Ethernet frame still
//! holds an L2-routed probe (14 + 16 L2RH + 16 header + 8 + 8 trailer = 62).
//! The sequence number has 47 bits (1.4 x 10^14 packets, 81 days at
//! 20 Mpps); the transmit time keeps its low 32 bits, so one-way latency is
//! computed modulo 2^32 ns and is exact below 4.29 s. Only timed probes
//! carry a transmit time (the generator times every Nth, `--latency-every`):
//! latency is a uniform sample of the stream, which costs the receiver a
//! histogram record per sample instead of per packet (docs/mwgen.md "The
//! probe").

use rrp::kind::PacketType;
use rrp::limits::MAX_L2RHS;
use rrp::wire::bytes::be32;
use rrp::wire::header::{HEADER_LEN, Header};
use rrp::wire::packet::{Packet, locate_fast};

/// The Packet Type of mwgen's probes (user-defined range).
pub const PROBE_PT: u16 = 0x05F0;

/// Bytes of the data block a probe uses.
pub const PROBE_LEN: usize = 8;

/// The largest sequence number plus one (47 bits).
pub const SEQ_SPACE: u64 = 1 << 47;

/// The flag in Free of a probe that carries its transmit time.
pub const TIMED: u16 = 0x8000;

/// Offset of the sequence number's low half in the data block.
const SEQ_LO: usize = 0;
/// Offset of the transmit time in the data block.
const TX_NS: usize = 4;

/// Writes the sequence number (below [`SEQ_SPACE`]) and transmit time into
/// the probe whose EEP header starts at `hdr` in `pkt`, and marks it timed.
/// The caller built the packet (its length was checked when the template
/// was made).
#[inline(always)]
pub fn patch(pkt: &mut [u8], hdr: usize, seq: u64, tx_ns: u64) {
    let b = &mut pkt[hdr..hdr + HEADER_LEN + PROBE_LEN];
    let (h, d) = b.split_at_mut(HEADER_LEN);
    Header::new_unchecked(h).set_free(free_of(seq) | TIMED);
    d[SEQ_LO..SEQ_LO + 4].copy_from_slice(&(seq as u32).to_be_bytes());
    d[TX_NS..TX_NS + 4].copy_from_slice(&(tx_ns as u32).to_be_bytes());
}

/// [`patch`] without a transmit time: the probe is counted, not timed (its
/// time field keeps the template's 0).
#[inline(always)]
pub fn patch_untimed(pkt: &mut [u8], hdr: usize, seq: u64) {
    let b = &mut pkt[hdr..hdr + HEADER_LEN + PROBE_LEN];
    let (h, d) = b.split_at_mut(HEADER_LEN);
    Header::new_unchecked(h).set_free(free_of(seq));
    d[SEQ_LO..SEQ_LO + 4].copy_from_slice(&(seq as u32).to_be_bytes());
}

/// Free's sequence bits (46..32) of `seq`.
#[inline(always)]
fn free_of(seq: u64) -> u16 {
    (seq >> 32) as u16 & !TIMED
}

/// Writes the stream tag into the probe whose header starts at `hdr`.
#[inline]
pub fn set_tag(pkt: &mut [u8], hdr: usize, tag: u16) {
    Header::new_unchecked(&mut pkt[hdr..hdr + HEADER_LEN]).set_type_ext(tag);
}

/// What a received probe says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The stream tag (TE).
    pub tag: u16,
    /// The 48-bit sequence number.
    pub seq: u64,
    /// The low 32 bits of the transmit time in nanoseconds, on a timed
    /// probe.
    pub tx_ns32: Option<u32>,
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

/// Reads a received packet (its first L2RH or EEP header at `pkt[0]`;
/// bytes after the trailer are frame padding). The packet is located by
/// the wire layer's forwarding-path walk ([`locate_fast`]) and its fields
/// read through the header view: this runs once per received packet.
#[inline]
pub fn read(pkt: &[u8]) -> Received {
    match locate_fast(pkt, MAX_L2RHS) {
        Ok(l) => probe_in(Packet::with_layout_unchecked(pkt, l)),
        Err(_) => Received::Malformed,
    }
}

/// [`read`] through the checked packet view ([`Packet::new_checked`], the
/// detailed walk): the reference that tests and the fuzz target hold
/// [`read`] to.
#[cold]
pub fn read_slow(pkt: &[u8]) -> Received {
    match Packet::new_checked(pkt, MAX_L2RHS) {
        Ok(p) => probe_in(p),
        Err(_) => Received::Malformed,
    }
}

/// The probe in a located packet.
#[inline(always)]
fn probe_in(p: Packet<&[u8]>) -> Received {
    let h = p.header();
    if h.packet_type() != PacketType(PROBE_PT) {
        return Received::Other;
    }
    let d = p.data();
    if d.len() < PROBE_LEN {
        return Received::Malformed;
    }
    Received::Probe(Probe {
        tag: h.type_ext(),
        seq: (u64::from(h.free() & !TIMED) << 32) | u64::from(be32(d, SEQ_LO)),
        tx_ns32: (h.free() & TIMED != 0).then(|| be32(d, TX_NS)),
        ei: p.ei(),
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
    use rrp::wire::header::{HeaderRepr, field};
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
        patch(&mut p, 0, 0x7234_5678_9ABC, 0xFFFF_FFFF_0000_0010);
        match read(&p) {
            Received::Probe(pr) => {
                assert_eq!(pr.tag, 0xBEEF);
                assert_eq!(pr.seq, 0x7234_5678_9ABC);
                assert_eq!(pr.tx_ns32, Some(0x10));
                assert_eq!(pr.ei, 0b101);
            }
            r => panic!("{r:?}"),
        }
        // Untimed: the same number, no time (the highest number too).
        let mut q = probe_packet(8);
        patch_untimed(&mut q, 0, SEQ_SPACE - 1);
        match read(&q) {
            Received::Probe(pr) => {
                assert_eq!(pr.seq, SEQ_SPACE - 1);
                assert_eq!(pr.tx_ns32, None);
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
