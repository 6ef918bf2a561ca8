//! Big-endian fields at byte offsets, beside `rrp::wire::bytes`: the 64-bit
//! reader and the writers the MAD and its attributes need. Callers check
//! lengths once, before they read or write fields; these panic past the end.

pub(crate) use rrp::wire::bytes::{be16, be24, be32};

/// The big-endian 64-bit field at `at`.
#[inline]
pub(crate) fn be64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// Writes a big-endian 16-bit field at `at`.
#[inline]
pub(crate) fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes the low 24 bits of `v`, big endian, at `at`.
#[inline]
pub(crate) fn put24(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 3].copy_from_slice(&v.to_be_bytes()[1..]);
}

/// Writes a big-endian 32-bit field at `at`.
#[inline]
pub(crate) fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// Writes a big-endian 64-bit field at `at`.
#[inline]
pub(crate) fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
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
}
