//! Typed errors: every failure names the field and the byte offset at which
//! it was found, counted from the start of the buffer handed to the
//! outermost parser (the MAD, an attribute area, or the EEP packet for
//! [`crate::wire::mad_in`]).

use core::fmt;

/// What went wrong while parsing or emitting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The buffer ends before the field does.
    Truncated {
        /// Bytes the field needs from its offset.
        needed: usize,
        /// Bytes that are left from its offset.
        available: usize,
    },
    /// A MAD data block that is not 256 bytes (this many).
    BadLength(usize),
    /// BaseVersion is not 1.
    BadBaseVersion(u8),
    /// The packet type (this one) is not 0x0006, management.
    NotManagement(u16),
    /// A directed-route path area that does not parse: a native address
    /// length above 18, entries overrunning the 64-byte area, fewer entries
    /// than HopCount needs, more entries than the MAD says.
    BadPath,
    /// HopCount (this many) above 8.
    TooManyHops(u8),
    /// A native address that `rrp::NativeAddr` refuses (longer than 18 bytes).
    BadNative,
    /// A NodeDescription that is not UTF-8.
    BadText,
    /// A value that its field cannot hold, or that contradicts another
    /// field; the text says which.
    BadValue(&'static str),
}

rrp::located_error!(ErrorKind);

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorKind::Truncated { needed, available } => {
                write!(f, "truncated: needs {needed} bytes, {available} left")
            }
            ErrorKind::BadLength(n) => write!(f, "a MAD of {n} bytes, expected 256"),
            ErrorKind::BadBaseVersion(v) => write!(f, "MAD base version {v}, expected 1"),
            ErrorKind::NotManagement(pt) => {
                write!(f, "packet type 0x{pt:04x} is not management (0x0006)")
            }
            ErrorKind::BadPath => f.write_str("directed-route path does not parse"),
            ErrorKind::TooManyHops(n) => write!(f, "hop count {n}, at most 8"),
            ErrorKind::BadNative => f.write_str("native address longer than 18 bytes"),
            ErrorKind::BadText => f.write_str("text is not UTF-8"),
            ErrorKind::BadValue(what) => write!(f, "bad value: {what}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_field_and_offset() {
        let e = Error::truncated("mad", 0, 256, 10);
        assert_eq!(
            e.to_string(),
            "mad at byte 0: truncated: needs 256 bytes, 10 left"
        );
        assert_eq!(e.shifted(16).offset, 16);
        let e = Error::new(ErrorKind::BadValue("x"), "f", 3);
        assert_eq!(e.to_string(), "f at byte 3: bad value: x");
    }
}
