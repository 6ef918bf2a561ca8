//! Big-endian fields at byte offsets: the one reader and writer that every
//! wire view (the EEP's, the management datagram's and its attributes', and
//! every decoder of an encapsulation, such as mwdump's Ethernet and IP
//! headers) uses. MessageWay is big endian on the wire (Part-1, "Message
//! structure"; docs/spec-notes.md 35).

/// The big-endian 16-bit field at `at`. Panics if `b` is shorter than
/// `at + 2`: callers check lengths once, before they read fields.
#[inline(always)]
pub fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The big-endian 24-bit field at `at` (EEP's Data Length). Panics if `b`
/// is shorter than `at + 3`.
#[inline(always)]
pub fn be24(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([0, b[at], b[at + 1], b[at + 2]])
}

/// The big-endian 32-bit field at `at`. Panics if `b` is shorter than
/// `at + 4`.
#[inline(always)]
pub fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The big-endian 16-bit field at `at`, or `None` past the end of `b`.
#[inline(always)]
pub fn be16_checked(b: &[u8], at: usize) -> Option<u16> {
    let f = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([f[0], f[1]]))
}

/// The big-endian 64-bit field at `at`. Panics if `b` is shorter than
/// `at + 8`.
#[inline(always)]
pub fn be64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// Writes a big-endian 16-bit field at `at`. Panics if `b` is shorter than
/// `at + 2`.
#[inline(always)]
pub fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes the low 24 bits of `v`, big endian, at `at`. Panics if `b` is
/// shorter than `at + 3`.
#[inline(always)]
pub fn put24(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 3].copy_from_slice(&v.to_be_bytes()[1..]);
}

/// Writes a big-endian 32-bit field at `at`. Panics if `b` is shorter than
/// `at + 4`.
#[inline(always)]
pub fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// Writes a big-endian 64-bit field at `at`. Panics if `b` is shorter than
/// `at + 8`.
#[inline(always)]
pub fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_round_trip() {
        let mut b = [0u8; 12];
        put64(&mut b, 1, 0x0102_0304_0506_0708);
        assert_eq!(be64(&b, 1), 0x0102_0304_0506_0708);
        put24(&mut b, 9, 0xAA_BBCC);
        assert_eq!(be24(&b, 9), 0xAA_BBCC);
        put32(&mut b, 0, 0xDEAD_BEEF);
        assert_eq!(be32(&b, 0), 0xDEAD_BEEF);
        put16(&mut b, 4, 0x1234);
        assert_eq!(be16(&b, 4), 0x1234);
    }

    #[test]
    fn reads_big_endian() {
        let b = [0x12, 0x34, 0x56, 0x78, 0x9a];
        assert_eq!(be16(&b, 0), 0x1234);
        assert_eq!(be16(&b, 3), 0x789a);
        assert_eq!(be24(&b, 1), 0x34_5678);
        assert_eq!(be32(&b, 1), 0x3456_789a);
        assert_eq!(be16_checked(&b, 3), Some(0x789a));
        assert_eq!(be16_checked(&b, 4), None);
        assert_eq!(be16_checked(&b, usize::MAX), None);
    }
}
