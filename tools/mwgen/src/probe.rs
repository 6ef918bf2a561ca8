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
//! | Free | not the probe's: the sender's partition mark (rrp::PartitionMark, docs/spec-notes.md 75), set in the template and never patched |
//! | data bytes 0..4 | bits 31..0 of the sequence number, big endian |
//! | data bytes 4..8 | bits 31..0 of the transmit time in nanoseconds, big endian, on a timed probe; 0 on the others (a timed probe whose time ends in 32 zero bits says 1) |
//!
//! The probe needs one data word, so that a 64-byte Ethernet frame still
//! holds an L2-routed probe (14 + 16 L2RH + 16 header + 8 + 8 trailer = 62).
//! The sender numbers probes with 64 bits and sends the low 32; the
//! receiver extends each to 64 bits against the highest number it has seen
//! on the stream ([`extend_seq`], as RTP receivers do, RFC 3550 appendix
//! A.1), which is exact as long as a probe arrives less than 2^31 numbers
//! away from the highest seen. The transmit time keeps its low 32 bits, so
//! one-way latency is computed modulo 2^32 ns and is exact below 4.29 s; a
//! time of 0 marks an untimed probe, so a timed probe sent when the clock's
//! low 32 bits are 0 says 1 (1 ns early). Only timed probes carry a
//! transmit time (the generator times every Nth, `--latency-every`):
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

/// Offset of the sequence number's low 32 bits in the data block.
const SEQ_LO: usize = 0;
/// Offset of the transmit time in the data block.
const TX_NS: usize = 4;

/// Writes the sequence number's low 32 bits and the transmit time's into
/// the probe whose EEP header starts at `hdr` in `pkt`, which makes it a
/// timed probe (a time whose low 32 bits are 0 is written as 1). Only the
/// probe's data word is written: the header (Free, the partition mark,
/// included) stays the template's. The caller built the packet (its length
/// was checked when the template was made).
#[inline(always)]
pub fn patch(pkt: &mut [u8], hdr: usize, seq: u64, tx_ns: u64) {
    write_word(pkt, hdr, seq, (tx_ns as u32).max(1));
}

/// [`patch`] without a transmit time: the probe is counted, not timed (its
/// time field is written 0).
#[inline(always)]
pub fn patch_untimed(pkt: &mut [u8], hdr: usize, seq: u64) {
    write_word(pkt, hdr, seq, 0);
}

/// The probe's data word: `seq`'s low 32 bits, then `tx_ns32`.
#[inline(always)]
fn write_word(pkt: &mut [u8], hdr: usize, seq: u64, tx_ns32: u32) {
    let word = (u64::from(seq as u32) << 32) | u64::from(tx_ns32);
    let at = hdr + HEADER_LEN + SEQ_LO;
    pkt[at..at + PROBE_LEN].copy_from_slice(&word.to_be_bytes());
}

/// Writes the stream tag into the probe whose header starts at `hdr`.
#[inline]
pub fn set_tag(pkt: &mut [u8], hdr: usize, tag: u16) {
    Header::new_unchecked(&mut pkt[hdr..hdr + HEADER_LEN]).set_type_ext(tag);
}

/// The 64-bit sequence number whose low 32 bits are `seq32`, nearest to
/// `highest`, the highest number seen on the stream (RFC 3550 appendix
/// A.1's extension: of the candidates in the cycle of `highest`, the one
/// before and the one after, the nearest; a tie, 2^31 away, counts as
/// behind). A number that would lie below 0 is taken in the first cycle.
/// Exact when the probe was sent less than 2^31 numbers from `highest`.
#[inline(always)]
pub fn extend_seq(highest: u64, seq32: u32) -> u64 {
    let delta = seq32.wrapping_sub(highest as u32) as i32;
    highest
        .checked_add_signed(i64::from(delta))
        .unwrap_or(u64::from(seq32))
}

/// What a received probe says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The stream tag (TE).
    pub tag: u16,
    /// The low 32 bits of the sequence number, as carried; the receiver
    /// of the stream extends them ([`extend_seq`]).
    pub seq32: u32,
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
        seq32: be32(d, SEQ_LO),
        tx_ns32: match be32(d, TX_NS) {
            0 => None,
            t => Some(t),
        },
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
                assert_eq!(pr.seq32, 0x5678_9ABC);
                assert_eq!(pr.tx_ns32, Some(0x10));
                assert_eq!(pr.ei, 0b101);
            }
            r => panic!("{r:?}"),
        }
        assert_eq!(
            &p[HEADER_LEN..HEADER_LEN + 8],
            &[0x56, 0x78, 0x9A, 0xBC, 0, 0, 0, 0x10]
        );
        // Untimed, on the same buffer: the time is cleared.
        patch_untimed(&mut p, 0, u64::MAX);
        match read(&p) {
            Received::Probe(pr) => {
                assert_eq!(pr.seq32, u32::MAX);
                assert_eq!(pr.tx_ns32, None);
            }
            r => panic!("{r:?}"),
        }
        set_tag(&mut p, 0, 7);
        assert!(matches!(read(&p), Received::Probe(Probe { tag: 7, .. })));
    }

    #[test]
    fn a_timed_probe_at_a_time_ending_in_32_zero_bits_says_1() {
        let mut p = probe_packet(8);
        patch(&mut p, 0, 3, 0x5_0000_0000);
        assert!(matches!(
            read(&p),
            Received::Probe(Probe {
                seq32: 3,
                tx_ns32: Some(1),
                ..
            })
        ));
        assert_eq!(latency_ns(1, 0x5_0000_0064), 99, "1 ns short");
    }

    #[test]
    fn patch_leaves_the_header_and_free_alone() {
        // Free is the partition mark's (rrp::PartitionMark), set in the
        // template: no patch, timed or not, at any number, writes it.
        let mut p = probe_packet(16);
        Header::new_unchecked(&mut p[..]).set_free(0x8010);
        let before = p.clone();
        for seq in [0, 1 << 32, (1 << 47) - 1, u64::MAX] {
            patch(&mut p, 0, seq, seq.wrapping_mul(7));
            assert_eq!(Header::new_unchecked(&p[..]).free(), 0x8010);
            patch_untimed(&mut p, 0, seq);
            assert_eq!(&p[..HEADER_LEN], &before[..HEADER_LEN]);
            // Nothing after the data word either (the trailer's EI).
            assert_eq!(
                &p[HEADER_LEN + PROBE_LEN..],
                &before[HEADER_LEN + PROBE_LEN..]
            );
        }
        // Behind an L2RH too: only the data word after the EEP header.
        let mut q = PacketRepr::parse(&probe_packet(8)).unwrap();
        q.l2rhs = vec![
            rrp::wire::RouterHop::new(Address(0x0102), rrp::NativeAddr::mac([2, 0, 0, 0, 2, 0x30]))
                .to_l2rh(),
        ];
        q.header.free = 0x0123;
        let mut b = q.to_bytes().unwrap();
        let hdr = b.len() - HEADER_LEN - 8 - 8;
        patch(&mut b, hdr, 0x1_0000_0002, 9);
        let back = PacketRepr::parse(&b).unwrap();
        assert_eq!(back.header, q.header);
        assert_eq!(back.l2rhs, q.l2rhs);
        assert!(matches!(
            read(&b),
            Received::Probe(Probe {
                seq32: 2,
                tx_ns32: Some(9),
                ..
            })
        ));
    }

    #[test]
    fn extension_takes_the_candidate_nearest_the_highest() {
        // In the first cycle, before any wrap.
        assert_eq!(extend_seq(0, 0), 0);
        assert_eq!(extend_seq(10, 5), 5);
        assert_eq!(extend_seq(10, 15), 15);
        // Behind 0 there is nothing: a number far ahead instead.
        assert_eq!(extend_seq(5, u32::MAX), u64::from(u32::MAX));
        // Across the wrap, forwards and back.
        let w = 1u64 << 32;
        assert_eq!(extend_seq(w - 1, 0), w);
        assert_eq!(extend_seq(w - 3, 2), w + 2);
        assert_eq!(extend_seq(w + 2, u32::MAX - 2), w - 3);
        assert_eq!(extend_seq(5 * w + 7, 7), 5 * w + 7);
        // Up to 2^31 - 1 ahead, and 2^31 behind.
        let h = 3 * w + 100;
        assert_eq!(extend_seq(h, (h + (1 << 31) - 1) as u32), h + (1 << 31) - 1);
        assert_eq!(extend_seq(h, (h - (1 << 31)) as u32), h - (1 << 31));
        assert_eq!(extend_seq(h, (h + (1 << 31)) as u32), h - (1 << 31));
    }

    proptest::proptest! {
        /// A number sent within 2^31 of the highest seen is extended back to
        /// itself, whatever the cycle.
        #[test]
        fn extension_is_exact_within_half_the_space(
            highest in proptest::num::u64::ANY,
            delta in -(1i64 << 31)..(1i64 << 31),
        ) {
            let h = highest >> 1; // room to move either way
            let sent = h.saturating_add_signed(delta);
            proptest::prop_assume!(sent as i128 - h as i128 == delta as i128);
            let mut p = probe_packet(8);
            patch_untimed(&mut p, 0, sent);
            let Received::Probe(pr) = read(&p) else {
                return Err(proptest::test_runner::TestCaseError::fail("not a probe"));
            };
            proptest::prop_assert_eq!(extend_seq(h, pr.seq32), sent);
        }
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
