//! Typed parse errors: every failure names the field and the byte offset at
//! which it was found, counted from the start of the buffer handed to the
//! outermost parser.

use core::fmt;

/// What went wrong while parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The buffer ends before the field does.
    Truncated {
        /// Bytes the field needs from its offset.
        needed: usize,
        /// Bytes that are left from its offset.
        available: usize,
    },
    /// EEP Version is not 5 (Part-1, "Version").
    BadVersion(u8),
    /// An L2RH length field L is 0 or not below 64 (Part-1, "L2-Routing option").
    BadL2rhLength(u16),
    /// More leading L2RHs than the limit the caller set.
    TooManyL2rhs(usize),
    /// EEP Pad Length is not in 0..=7, or exceeds the data block.
    BadPadLength(u8),
    /// An address in a range that the field does not allow (Part-1, "Address Ranges").
    IllegalAddress(u16),
    /// RTyp not in 1..=8 (Appendix A3).
    BadRecordType(u8),
    /// RL is zero, does not fit the buffer, or does not fit the record's fixed layout.
    BadRecordLength(u16),
    /// PL of a record is not what its layout allows.
    BadRecordPad(u8),
    /// A record of this type is not allowed at this place of the message.
    UnexpectedRecord(u8),
    /// A record that the message requires is absent.
    MissingRecord(u8),
    /// Bytes left over inside a record or message after its last element.
    TrailingBytes(usize),
    /// A packet type that is not ERR or RRP where a control message is expected.
    NotControl(u16),
    /// An RRP message number or ERR code not in Appendix A2/A4.
    BadMessageType(u16),
    /// A list of 16-bit values (R4, R7) with an odd number of bytes.
    OddLength(usize),
    /// The swap-width code of the E bits is reserved (5..=7).
    BadSwapWidth(u8),
    /// The data to swap is not a multiple of the swap width.
    SwapMisaligned {
        /// Data length in bytes.
        len: usize,
        /// Swap width in bytes.
        width: usize,
    },
    /// A value too large for its field (e.g. more than 2^24-1 data words).
    TooLarge(usize),
    /// An L2RH that is not a router hop (content shorter than the 2-byte egress address).
    NotRouterHop(u16),
    /// A router hop whose native part (this many bytes) is longer than any
    /// SAN's native address (`crate::native::MAX_NATIVE_LEN`).
    NativeTooLong(u16),
    /// A control packet that the SAN's authentication refused
    /// (docs/spec-notes.md 59).
    Unauthenticated(crate::wire::auth::AuthRefusal),
}

crate::located_error!(ErrorKind);

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorKind::Truncated { needed, available } => {
                write!(f, "truncated: needs {needed} bytes, {available} left")
            }
            ErrorKind::BadVersion(v) => write!(f, "version {v}, expected 5"),
            ErrorKind::BadL2rhLength(l) => write!(f, "L2RH length {l}, must be 1..=63"),
            ErrorKind::TooManyL2rhs(n) => write!(f, "more than {n} L2RHs"),
            ErrorKind::BadPadLength(p) => write!(f, "pad length {p} invalid"),
            ErrorKind::IllegalAddress(a) => write!(f, "illegal address 0x{a:04x}"),
            ErrorKind::BadRecordType(t) => write!(f, "unknown record type {t}"),
            ErrorKind::BadRecordLength(l) => write!(f, "bad record length {l}"),
            ErrorKind::BadRecordPad(p) => write!(f, "bad record pad length {p}"),
            ErrorKind::UnexpectedRecord(t) => write!(f, "unexpected record R{t}"),
            ErrorKind::MissingRecord(t) => write!(f, "missing record R{t}"),
            ErrorKind::TrailingBytes(n) => write!(f, "{n} trailing bytes"),
            ErrorKind::NotControl(pt) => write!(f, "packet type 0x{pt:04x} is not ERR or RRP"),
            ErrorKind::BadMessageType(t) => write!(f, "unknown message type {t}"),
            ErrorKind::OddLength(n) => write!(f, "odd length {n} for a list of addresses"),
            ErrorKind::BadSwapWidth(c) => write!(f, "reserved swap-width code {c}"),
            ErrorKind::SwapMisaligned { len, width } => {
                write!(f, "{len} bytes is not a multiple of the swap width {width}")
            }
            ErrorKind::TooLarge(n) => write!(f, "value {n} too large for the field"),
            ErrorKind::NotRouterHop(l) => write!(f, "L2RH of {l} bytes is not a router hop"),
            ErrorKind::NativeTooLong(l) => write!(
                f,
                "native address of {l} bytes in a router hop (at most {})",
                crate::native::MAX_NATIVE_LEN
            ),
            ErrorKind::Unauthenticated(why) => write!(f, "authentication {}", why.name()),
        }
    }
}
