//! RT serial numbers: 16-bit serial number arithmetic (RFC 1982), as
//! docs/spec-notes.md 11 reads the draft's SN rule ("An RT with a higher SN should always
//! replace an RT with a lower SN and the same RCVF").

use core::cmp::Ordering;

/// Compares two serial numbers: `Less` when `a` precedes `b`. Values exactly
/// half the space apart are undefined by RFC 1982; they compare as `Less`
/// when `a < b` numerically, so that the order is still total for callers.
pub fn compare(a: u16, b: u16) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let d = b.wrapping_sub(a);
    match d.cmp(&0x8000) {
        Ordering::Less => Ordering::Less,
        Ordering::Greater => Ordering::Greater,
        Ordering::Equal => a.cmp(&b),
    }
}

/// Whether `a` is newer than `b`.
pub fn newer(a: u16, b: u16) -> bool {
    compare(a, b) == Ordering::Greater
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps() {
        assert!(newer(1, 0));
        assert!(newer(0, 0xFFFF));
        assert!(newer(0x7FFF, 0));
        assert!(!newer(0x8001, 0));
        assert!(newer(0, 0x8001));
        assert_eq!(compare(5, 5), Ordering::Equal);
        assert_eq!(compare(0, 0x8000), Ordering::Less);
        assert_eq!(compare(0x8000, 0), Ordering::Greater);
    }
}
