//! L2-Routing Headers (Part-1, "L2-Routing option").
//!
//! ```text
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! |    0   |  L=11  |  SR01  |  SR02  |  SR03  |  SR04  |  SR05  |  SR06  |
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! |  SR07  |  SR08  |  SR09  |  SR10  |  SR11  |  xxx   |  xxx   |  xxx   |
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! ```
//!
//! L (16 bits) counts the content bytes after the length field, 1..=63; the
//! L2RH occupies `(L+9)/8` eight-byte words. The content is SAN dependent;
//! mwrouter's own router hop is in [`crate::wire::hop`].

use arrayvec::ArrayVec;

use crate::error::{Error, ErrorKind, Result};
use crate::wire::bytes::be16;

/// The largest L value (the draft: "should be smaller than 64").
pub const MAX_L2RH_CONTENT: usize = 63;
/// Bytes of the length field.
pub const L2RH_LEN_FIELD: usize = 2;

/// Eight-byte words occupied by an L2RH whose length field is `l`.
#[inline]
pub const fn l2rh_words(l: usize) -> usize {
    (l + 9) / 8
}

/// Bytes occupied by an L2RH whose length field is `l`.
#[inline]
pub const fn l2rh_bytes(l: usize) -> usize {
    l2rh_words(l) * 8
}

/// Whether a leading 16-bit value starts an L2RH (below 0x0040) rather than
/// an EEP header.
#[inline]
pub const fn starts_l2rh(first16: u16) -> bool {
    first16 < 0x0040
}

/// A zero-copy view of one L2RH at the start of a buffer.
#[derive(Debug, Clone, Copy)]
pub struct L2rh<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> L2rh<T> {
    /// Wraps a buffer that starts with an L2RH already checked (by
    /// [`crate::wire::packet::locate_fast`]); accessors panic otherwise.
    #[inline(always)]
    pub const fn new_unchecked(buffer: T) -> Self {
        L2rh { buffer }
    }

    /// Wraps a buffer that starts with a complete, well-formed L2RH.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let b = buffer.as_ref();
        if b.len() < L2RH_LEN_FIELD {
            return Err(Error::truncated("l2rh.len", 0, L2RH_LEN_FIELD, b.len()));
        }
        let l = be16(b, 0);
        if l == 0 || l as usize > MAX_L2RH_CONTENT {
            return Err(Error::new(ErrorKind::BadL2rhLength(l), "l2rh.len", 0));
        }
        let total = l2rh_bytes(l as usize);
        if b.len() < total {
            return Err(Error::truncated("l2rh", 0, total, b.len()));
        }
        Ok(L2rh { buffer })
    }

    /// The length field L.
    #[inline]
    pub fn len_field(&self) -> usize {
        be16(self.buffer.as_ref(), 0) as usize
    }

    /// Bytes the L2RH occupies, padding included.
    #[inline]
    pub fn total_len(&self) -> usize {
        l2rh_bytes(self.len_field())
    }

    /// The L content bytes after the length field.
    #[inline]
    pub fn content(&self) -> &[u8] {
        &self.buffer.as_ref()[L2RH_LEN_FIELD..L2RH_LEN_FIELD + self.len_field()]
    }

    /// Read as mwrouter's router hop (`crate::wire::hop`): the egress HR,
    /// when the content holds its two bytes.
    #[inline(always)]
    pub fn hop_egress(&self) -> Option<crate::Address> {
        let b = self.buffer.as_ref();
        let at = crate::wire::hop::field::EGRESS.start;
        (self.len_field() >= 2).then(|| crate::Address(be16(b, at)))
    }

    /// Read as a router hop: the length of the native part (after the
    /// egress HR; 0 when the content is shorter).
    #[inline(always)]
    pub fn hop_native_len(&self) -> usize {
        self.len_field().saturating_sub(2)
    }

    /// Read as a router hop: the native part (after the egress HR; empty
    /// when the content is shorter).
    #[inline(always)]
    pub fn hop_native(&self) -> &[u8] {
        let at = crate::wire::hop::field::NATIVE;
        self.buffer
            .as_ref()
            .get(at..at + self.hop_native_len())
            .unwrap_or(&[])
    }
}

/// An owned L2RH: its content bytes (1..=63).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct L2rhRepr {
    content: ArrayVec<u8, MAX_L2RH_CONTENT>,
}

impl L2rhRepr {
    /// An L2RH with this content; `None` when it is empty or longer than 63 bytes.
    pub fn new(content: &[u8]) -> Option<L2rhRepr> {
        if content.is_empty() {
            return None;
        }
        let mut c = ArrayVec::new();
        c.try_extend_from_slice(content).ok()?;
        Some(L2rhRepr { content: c })
    }

    /// The content bytes.
    pub fn content(&self) -> &[u8] {
        &self.content
    }

    /// Reads the L2RH that starts `buf`; returns it and the bytes it occupies.
    pub fn parse(buf: &[u8]) -> Result<(L2rhRepr, usize)> {
        let v = L2rh::new_checked(buf)?;
        let content = ArrayVec::try_from(v.content()).expect("checked: L <= 63");
        Ok((L2rhRepr { content }, v.total_len()))
    }

    /// Bytes the L2RH occupies on the wire.
    pub fn buffer_len(&self) -> usize {
        l2rh_bytes(self.content.len())
    }

    /// Appends the L2RH, zero padded, to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&(self.content.len() as u16).to_be_bytes());
        out.extend_from_slice(&self.content);
        out.resize(start + self.buffer_len(), 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_counts_follow_the_draft() {
        assert_eq!(l2rh_words(11), 2);
        assert_eq!(l2rh_words(6), 1);
        assert_eq!(l2rh_words(7), 2);
        assert_eq!(l2rh_words(14), 2);
        assert_eq!(l2rh_words(15), 3);
        assert_eq!(l2rh_words(63), 9);
    }

    #[test]
    fn part1_example() {
        let bytes = [0, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 0];
        let v = L2rh::new_checked(&bytes[..]).unwrap();
        assert_eq!(v.len_field(), 11);
        assert_eq!(v.content(), &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        let (r, n) = L2rhRepr::parse(&bytes).unwrap();
        assert_eq!(n, 16);
        let mut out = Vec::new();
        r.emit(&mut out);
        assert_eq!(out, bytes);
    }

    #[test]
    fn bad_lengths() {
        assert_eq!(
            L2rh::new_checked(&[0u8, 0, 0, 0, 0, 0, 0, 0][..])
                .unwrap_err()
                .kind,
            ErrorKind::BadL2rhLength(0)
        );
        assert_eq!(
            L2rh::new_checked(&[0u8, 64, 0, 0, 0, 0, 0, 0][..])
                .unwrap_err()
                .kind,
            ErrorKind::BadL2rhLength(64)
        );
        assert!(matches!(
            L2rh::new_checked(&[0u8, 7, 0, 0, 0, 0, 0, 0][..])
                .unwrap_err()
                .kind,
            ErrorKind::Truncated { needed: 16, .. }
        ));
        assert!(L2rhRepr::new(&[]).is_none());
        assert!(L2rhRepr::new(&[0; 64]).is_none());
    }
}
