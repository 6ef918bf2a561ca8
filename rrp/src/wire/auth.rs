//! The authentication record RA: a keyed digest (HMAC-SHA-256) over a
//! control packet, carried as the last 48 bytes of its data block
//! (docs/spec-notes.md 59; the model is OSPF's and IS-IS's HMAC-SHA-256
//! authentication, RFC 5709 and RFC 5310).
//!
//! ```text
//!  0      1      2      4        6      7      8                16                48
//! +------+------+------+--------+------+------+----------------+----------------+
//! | RTyp | PL=0 | RL=6 | Key ID | Alg  | OPL  | Sequence (64)  | Digest (256)   |
//! +------+------+------+--------+------+------+----------------+----------------+
//! ```
//!
//! The record is laid out as the draft's records are (RTyp, PL, RL in
//! 8-byte words) with an RTyp outside R1-R8, [`RA_TYPE`]. The digest is
//! HMAC-SHA-256 under the key named by Key ID over the EEP header and the
//! whole data block with the digest field zeroed: the L2RHs in front (a
//! router consumes them) and the trailer (routers shift the EI) are not
//! covered. Signing turns the data block's padding into data (PL becomes 0)
//! and keeps the original PL in OPL, so that [`strip`] gives back the
//! packet as it was before [`sign`].

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::wire::header::{HEADER_LEN, Header};
use crate::wire::packet::{Packet, TRAILER_LEN};

/// RTyp of the authentication record (not one of the draft's R1-R8).
pub const RA_TYPE: u8 = 0xA0;
/// Bytes of the record.
pub const RA_LEN: usize = 48;
/// RL of the record (8-byte words).
pub const RA_WORDS: u16 = (RA_LEN / 8) as u16;
/// Algorithm: HMAC-SHA-256, the only one.
pub const ALG_HMAC_SHA256: u8 = 1;
/// Bytes of the digest.
pub const DIGEST_LEN: usize = 32;

/// Byte offsets inside the record.
pub mod field {
    use core::ops::Range;
    /// RTyp.
    pub const RTYP: usize = 0;
    /// PL (always 0).
    pub const PL: usize = 1;
    /// RL.
    pub const RL: Range<usize> = 2..4;
    /// Key ID.
    pub const KEY_ID: Range<usize> = 4..6;
    /// Algorithm.
    pub const ALG: usize = 6;
    /// The packet's PL before signing.
    pub const OPL: usize = 7;
    /// Sequence number.
    pub const SEQ: Range<usize> = 8..16;
    /// The digest.
    pub const DIGEST: Range<usize> = 16..48;
}

crate::named_enum! {
    /// What is wrong with a packet's authentication record, or why it does
    /// not verify; its name is the counters' and the logs'. Its position
    /// (from 0) is its number in trap 1027's DataDetails (docs/management.md
    /// "Notice"): a new reason goes last.
    pub enum AuthRefusal {
        /// The packet carries no authentication record, and the HR asks for one.
        Missing = "missing",
        /// The record names an algorithm other than HMAC-SHA-256, or an OPL
        /// larger than 7.
        Malformed = "malformed",
        /// The record names a key the HR does not hold.
        UnknownKey = "unknown-key",
        /// The digest is not the one the key gives.
        BadDigest = "bad-digest",
        /// The sequence number was seen already, or is too old.
        Replay = "replay",
    }
}

/// The fields of a packet's authentication record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthRecord {
    /// Key ID.
    pub key_id: u16,
    /// Algorithm.
    pub alg: u8,
    /// The packet's PL before signing.
    pub opl: u8,
    /// Sequence number.
    pub seq: u64,
}

/// The record at the end of `p`'s data block, if it ends in one (a
/// record header with [`RA_TYPE`], PL 0 and RL 6).
pub fn record<T: AsRef<[u8]>>(p: &Packet<T>) -> Option<AuthRecord> {
    let data = p.data();
    if p.layout().pad_len != 0 || data.len() < RA_LEN {
        return None;
    }
    let r = &data[data.len() - RA_LEN..];
    if r[field::RTYP] != RA_TYPE
        || r[field::PL] != 0
        || u16::from_be_bytes([r[2], r[3]]) != RA_WORDS
    {
        return None;
    }
    Some(AuthRecord {
        key_id: u16::from_be_bytes([r[4], r[5]]),
        alg: r[field::ALG],
        opl: r[field::OPL],
        seq: u64::from_be_bytes(r[field::SEQ].try_into().expect("8 bytes")),
    })
}

/// HMAC-SHA-256 under `key` over `eep` (the EEP header and the data block)
/// with the record's digest field, the last [`DIGEST_LEN`] bytes of the
/// data block, read as zeros.
fn digest(key: &[u8], eep: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    let d = eep.len() - DIGEST_LEN;
    mac.update(&eep[..d]);
    mac.update(&[0u8; DIGEST_LEN]);
    mac
}

/// Signs the packet in `buf` (L2RHs, header, data block, trailer, as
/// located by `p`'s layout): the authentication record with `key_id` and
/// `seq` is inserted at the end of the data block, DL grows by 6 words and
/// PL becomes 0. Returns false (and leaves `buf` as it was) when the
/// packet's DL cannot grow.
pub fn sign(
    buf: &mut Vec<u8>,
    layout: crate::wire::Layout,
    key_id: u16,
    key: &[u8],
    seq: u64,
) -> bool {
    let h = layout.header_offset;
    let words = Header::new_unchecked(&buf[h..h + HEADER_LEN]).data_words();
    let Some(new_words) = words.checked_add(u32::from(RA_WORDS)) else {
        return false;
    };
    if new_words > crate::wire::header::MAX_DATA_WORDS {
        return false;
    }
    let end = layout.trailer_offset();
    buf.truncate(layout.total_len());
    let mut ra = [0u8; RA_LEN];
    ra[field::RTYP] = RA_TYPE;
    ra[field::RL].copy_from_slice(&RA_WORDS.to_be_bytes());
    ra[field::KEY_ID].copy_from_slice(&key_id.to_be_bytes());
    ra[field::ALG] = ALG_HMAC_SHA256;
    ra[field::OPL] = layout.pad_len as u8;
    ra[field::SEQ].copy_from_slice(&seq.to_be_bytes());
    buf.splice(end..end, ra);
    {
        let mut hdr = Header::new_unchecked(&mut buf[h..h + HEADER_LEN]);
        let e = hdr.endian();
        hdr.set_endian_pad(e, 0);
        hdr.set_data_words(new_words);
    }
    let eep_end = end + RA_LEN;
    let mac = digest(key, &buf[h..eep_end]).finalize().into_bytes();
    buf[eep_end - DIGEST_LEN..eep_end].copy_from_slice(&mac);
    true
}

/// Whether the record at the end of `p`'s data block carries the digest
/// that `key` gives.
pub fn verify<T: AsRef<[u8]>>(p: &Packet<T>, key: &[u8]) -> bool {
    let l = p.layout();
    let eep = &p.bytes()[l.header_offset..l.trailer_offset()];
    if eep.len() < HEADER_LEN + RA_LEN {
        return false;
    }
    // Constant time: the comparison does not say how much matched.
    digest(key, eep)
        .verify_slice(&eep[eep.len() - DIGEST_LEN..])
        .is_ok()
}

/// The packet without its authentication record (as it was before
/// [`sign`]): DL shrinks by 6 words and PL is the record's OPL. `p` must
/// end in a record ([`record`] is `Some`) with OPL at most 7.
pub fn strip<T: AsRef<[u8]>>(p: &Packet<T>, opl: u8) -> Vec<u8> {
    let l = p.layout();
    let bytes = p.bytes();
    let ra_at = l.trailer_offset() - RA_LEN;
    let mut out = Vec::with_capacity(bytes.len() - RA_LEN);
    out.extend_from_slice(&bytes[..ra_at]);
    out.extend_from_slice(&bytes[l.trailer_offset()..l.trailer_offset() + TRAILER_LEN]);
    let h = l.header_offset;
    let mut hdr = Header::new_unchecked(&mut out[h..h + HEADER_LEN]);
    let words = hdr.data_words() - u32::from(RA_WORDS);
    let e = hdr.endian();
    hdr.set_endian_pad(e, opl);
    hdr.set_data_words(words);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Address;
    use crate::kind::PacketType;
    use crate::wire::header::HeaderRepr;
    use crate::wire::packet::PacketRepr;

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn packet(data: &[u8]) -> Vec<u8> {
        PacketRepr {
            l2rhs: vec![],
            header: HeaderRepr {
                dst: Address(0x0101),
                src: Address(0x0102),
                packet_type: PacketType::RRP,
                type_ext: 8,
                ..HeaderRepr::default()
            },
            data: data.to_vec(),
            ei: 0x55,
        }
        .to_bytes()
        .unwrap()
    }

    fn signed(data: &[u8], seq: u64) -> Vec<u8> {
        let mut b = packet(data);
        let l = crate::wire::locate(&b, usize::MAX).unwrap();
        assert!(sign(&mut b, l, 7, KEY, seq));
        b
    }

    #[test]
    fn sign_verify_strip_round_trip() {
        for data in [&b""[..], b"abc", b"12345678", b"0123456789abcdefX"] {
            let orig = packet(data);
            let b = signed(data, 42);
            assert_eq!(b.len(), orig.len().div_ceil(8) * 8 + RA_LEN);
            let p = Packet::new_checked(&b[..], usize::MAX).unwrap();
            let r = record(&p).unwrap();
            assert_eq!((r.key_id, r.alg, r.seq), (7, ALG_HMAC_SHA256, 42));
            assert!(verify(&p, KEY));
            assert!(!verify(&p, b"another key, as long as the other"));
            assert_eq!(strip(&p, r.opl), orig);
            assert_eq!(p.ei(), 0x55);
        }
    }

    #[test]
    fn every_covered_byte_counts_and_the_trailer_does_not() {
        let b = signed(b"some records here", 1);
        let p = Packet::new_checked(&b[..], usize::MAX).unwrap();
        let trailer = p.layout().trailer_offset();
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 0x01;
            let Ok(q) = Packet::new_checked(&c[..], usize::MAX) else {
                continue; // the header no longer frames a packet
            };
            assert_eq!(verify(&q, KEY), i >= trailer, "byte {i}");
        }
    }

    #[test]
    fn unsigned_packets_have_no_record() {
        let b = packet(&[0u8; 64]);
        let p = Packet::new_checked(&b[..], usize::MAX).unwrap();
        assert_eq!(record(&p), None);
    }
}
