//! The E bits of the EEP header (Part-1, "Endianess"): one bit for the byte
//! order of the data block and three bits for the width of hardware byte
//! swapping. The draft's Appendix C calls E=3 "Little Endian 64-bit"; by the
//! field's definition E=3 is big endian with 64-bit swapping (docs/spec-notes.md).

use crate::error::{Error, ErrorKind, Result};

/// Byte-swap width code, the low three bits of E.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SwapWidth {
    /// 000: 8-bit data, no swapping.
    None,
    /// 001: 16-bit fields.
    W16,
    /// 010: 32-bit fields.
    W32,
    /// 011: 64-bit fields.
    W64,
    /// 100: 128-bit fields.
    W128,
    /// 101-111: not assigned by the draft; carried through untouched.
    Reserved(u8),
}

impl SwapWidth {
    /// The width of code `code & 7`.
    pub const fn from_code(code: u8) -> SwapWidth {
        match code & 7 {
            0 => SwapWidth::None,
            1 => SwapWidth::W16,
            2 => SwapWidth::W32,
            3 => SwapWidth::W64,
            4 => SwapWidth::W128,
            c => SwapWidth::Reserved(c),
        }
    }

    /// The 3-bit code.
    pub const fn code(self) -> u8 {
        match self {
            SwapWidth::None => 0,
            SwapWidth::W16 => 1,
            SwapWidth::W32 => 2,
            SwapWidth::W64 => 3,
            SwapWidth::W128 => 4,
            SwapWidth::Reserved(c) => c & 7,
        }
    }

    /// Width in bytes (1 for no swapping), or an error for reserved codes.
    pub const fn bytes(self) -> Result<usize> {
        match self {
            SwapWidth::None => Ok(1),
            SwapWidth::W16 => Ok(2),
            SwapWidth::W32 => Ok(4),
            SwapWidth::W64 => Ok(8),
            SwapWidth::W128 => Ok(16),
            SwapWidth::Reserved(c) => Err(Error::new(ErrorKind::BadSwapWidth(c), "eep.e", 8)),
        }
    }
}

/// The 4-bit E field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Endian {
    /// The data block is little endian (MSbit of E set).
    pub little: bool,
    /// The width of the fields that swapping hardware would reverse.
    pub swap: SwapWidth,
}

impl Default for Endian {
    fn default() -> Self {
        Endian::BIG_BYTES
    }
}

impl Endian {
    /// Big endian, 8-bit data (E=0): the default.
    pub const BIG_BYTES: Endian = Endian {
        little: false,
        swap: SwapWidth::None,
    };

    /// The E field of nibble `e` (the high four bits of header byte 8).
    pub const fn from_nibble(e: u8) -> Endian {
        Endian {
            little: e & 0x8 != 0,
            swap: SwapWidth::from_code(e),
        }
    }

    /// The 4-bit value.
    pub const fn nibble(self) -> u8 {
        ((self.little as u8) << 3) | self.swap.code()
    }

    /// Whether the data block's byte order differs from this host's.
    pub const fn differs_from_host(self) -> bool {
        self.little != cfg!(target_endian = "little")
    }

    /// Converts `data` to this host's byte order in place, as a receiving
    /// node's swapping hardware would: when the byte order differs from the
    /// host's, every field of the swap width is reversed. Returns whether
    /// anything was swapped.
    pub fn swap_to_host(self, data: &mut [u8]) -> Result<bool> {
        if !self.differs_from_host() {
            return Ok(false);
        }
        swap_in_place(data, self.swap)
    }
}

/// Reverses every `width`-byte field of `data`. Returns whether anything was
/// swapped (false for 8-bit data). The length must be a multiple of the width.
pub fn swap_in_place(data: &mut [u8], width: SwapWidth) -> Result<bool> {
    let w = width.bytes()?;
    if w == 1 {
        return Ok(false);
    }
    if !data.len().is_multiple_of(w) {
        return Err(Error::new(
            ErrorKind::SwapMisaligned {
                len: data.len(),
                width: w,
            },
            "eep.data",
            16,
        ));
    }
    for chunk in data.chunks_exact_mut(w) {
        chunk.reverse();
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibble_round_trip() {
        for e in 0..16u8 {
            assert_eq!(Endian::from_nibble(e).nibble(), e);
        }
        let e3 = Endian::from_nibble(3);
        assert!(!e3.little);
        assert_eq!(e3.swap, SwapWidth::W64);
        let eb = Endian::from_nibble(0xB);
        assert!(eb.little);
        assert_eq!(eb.swap, SwapWidth::W64);
    }

    #[test]
    fn swap_reverses_fields() {
        let mut d = [1, 2, 3, 4, 5, 6, 7, 8];
        assert!(swap_in_place(&mut d, SwapWidth::W32).unwrap());
        assert_eq!(d, [4, 3, 2, 1, 8, 7, 6, 5]);
        let mut d = [1, 2, 3];
        assert!(swap_in_place(&mut d, SwapWidth::W16).is_err());
        assert!(swap_in_place(&mut d, SwapWidth::Reserved(5)).is_err());
        assert!(!swap_in_place(&mut d, SwapWidth::None).unwrap());
    }

    #[test]
    fn swap_to_host_only_when_order_differs() {
        let mut d = [1, 2, 3, 4];
        let native = Endian {
            little: cfg!(target_endian = "little"),
            swap: SwapWidth::W32,
        };
        assert!(!native.swap_to_host(&mut d).unwrap());
        assert_eq!(d, [1, 2, 3, 4]);
        let foreign = Endian {
            little: !native.little,
            swap: SwapWidth::W16,
        };
        assert!(foreign.swap_to_host(&mut d).unwrap());
        assert_eq!(d, [2, 1, 4, 3]);
    }
}
