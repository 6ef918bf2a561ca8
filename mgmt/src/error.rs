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
        need: usize,
        /// Bytes that are left from its offset.
        have: usize,
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

/// A failure: what, in which field, at which byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The field, e.g. `"mad.base_version"` or `"port_info.native_len"`.
    pub field: &'static str,
    /// Byte offset of the field, from the start of the outermost buffer.
    pub offset: usize,
}

/// Result of a parse or an emit.
pub type Result<T> = core::result::Result<T, Error>;

impl Error {
    /// An error of `kind` in `field` at `offset`.
    pub const fn new(kind: ErrorKind, field: &'static str, offset: usize) -> Self {
        Error {
            kind,
            field,
            offset,
        }
    }

    /// A truncation error: `need` bytes wanted at `offset`, `have` there.
    pub const fn truncated(field: &'static str, offset: usize, need: usize, have: usize) -> Self {
        Error::new(ErrorKind::Truncated { need, have }, field, offset)
    }

    /// The same error with its offset moved by `base` bytes: used when a
    /// parser of an inner part reports relative to that part.
    #[must_use]
    pub const fn shifted(self, base: usize) -> Self {
        Error {
            offset: self.offset + base,
            ..self
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorKind::Truncated { need, have } => {
                write!(f, "truncated: needs {need} bytes, {have} left")
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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}: {}", self.field, self.offset, self.kind)
    }
}

impl std::error::Error for Error {}

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
