//! The directed-route path areas, InitialPath (bytes 128-191) and
//! ReturnPath (bytes 192-255) of a class-0x81 MAD (docs/management.md
//! "Directed routes").
//!
//! Each area holds entries packed from its first byte, the rest zero:
//!
//! ```text
//! +--------+--------+--------+------------------------+
//! | HR address (16) | len n  | native address (n)     |  n <= 18
//! +--------+--------+--------+------------------------+
//! ```

use rrp::native::MAX_NATIVE_LEN;
use rrp::{Address, NativeAddr};

use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::be16;

/// Bytes of one path area.
pub const PATH_AREA_LEN: usize = 64;
/// Bytes of an entry before its native address: HR address and length.
pub const ENTRY_PREFIX_LEN: usize = 3;
/// The most hops a directed route has: the longest source route
/// (`rrp::limits::MAX_L2RHS`).
pub const MAX_HOPS: usize = rrp::limits::MAX_L2RHS;

/// One entry of a path: an HR and a native address on its SAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PathHop {
    /// InitialPath: the HR the MAD leaves by (0x0000: the sender's only
    /// port); ReturnPath: the HR it arrived on.
    pub hr: Address,
    /// InitialPath: the next position's native address on that HR's SAN;
    /// ReturnPath: the native address it came from.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_util::native"))]
    pub native: NativeAddr,
}

impl PathHop {
    /// An entry.
    pub const fn new(hr: Address, native: NativeAddr) -> PathHop {
        PathHop { hr, native }
    }

    /// HR 0x0000 and no native address: three zero bytes, which cannot be
    /// told from padding at the end of a ReturnPath.
    pub fn is_zero(&self) -> bool {
        self.hr.0 == 0 && self.native.is_empty()
    }

    /// Bytes of the encoded entry.
    pub fn encoded_len(&self) -> usize {
        ENTRY_PREFIX_LEN + self.native.len()
    }
}

/// How many hops whose native addresses are `native_len` bytes long fit a
/// path area, and at most [`MAX_HOPS`]: 7 for 6-byte addresses (Ethernet,
/// UDP over IPv4), 3 for 18-byte ones (UDP over IPv6).
pub const fn path_capacity(native_len: usize) -> usize {
    let n = PATH_AREA_LEN / (ENTRY_PREFIX_LEN + native_len);
    if n < MAX_HOPS { n } else { MAX_HOPS }
}

/// Bytes `hops` take in a path area.
pub fn path_len(hops: &[PathHop]) -> usize {
    hops.iter().map(PathHop::encoded_len).sum()
}

/// Reads the entry at `pos` of `area`; errors are reported in `field` at
/// `offset + pos`.
fn entry(area: &[u8], pos: usize, field: &'static str, offset: usize) -> Result<PathHop> {
    let at = offset + pos;
    if pos + ENTRY_PREFIX_LEN > area.len() {
        return Err(Error::new(ErrorKind::BadPath, field, at));
    }
    let n = area[pos + 2] as usize;
    if n > MAX_NATIVE_LEN {
        return Err(Error::new(ErrorKind::BadPath, field, at + 2));
    }
    let start = pos + ENTRY_PREFIX_LEN;
    let bytes = area
        .get(start..start + n)
        .ok_or(Error::new(ErrorKind::BadPath, field, at))?;
    let native = NativeAddr::from_bytes(bytes).ok_or(Error::new(
        ErrorKind::BadNative,
        field,
        at + ENTRY_PREFIX_LEN,
    ))?;
    Ok(PathHop {
        hr: Address(be16(area, pos)),
        native,
    })
}

/// Reads exactly `count` entries from a path area (an InitialPath holds
/// HopCount of them). Errors name `field` and count from `offset`, the
/// area's offset in the outer buffer: [`ErrorKind::BadPath`] for a length
/// above 18 (at the length byte), or an entry that overruns the area (at
/// the entry). Bytes after the last entry are not looked at.
pub fn parse_path(
    area: &[u8],
    count: usize,
    field: &'static str,
    offset: usize,
) -> Result<Vec<PathHop>> {
    let mut hops = Vec::with_capacity(count.min(MAX_HOPS));
    let mut pos = 0;
    for _ in 0..count {
        let h = entry(area, pos, field, offset)?;
        pos += h.encoded_len();
        hops.push(h);
    }
    Ok(hops)
}

/// Reads the entries written so far in a path area (a ReturnPath): at most
/// `max`, stopping where the rest of the area is all zero. An entry of HR
/// 0x0000 and no native address (three zero bytes) is therefore kept only
/// when a non-zero entry follows it: trailing ones read as padding.
/// Errors as for [`parse_path`].
pub fn parse_written_path(
    area: &[u8],
    max: usize,
    field: &'static str,
    offset: usize,
) -> Result<Vec<PathHop>> {
    let mut hops = Vec::new();
    let mut pos = 0;
    while hops.len() < max {
        if area
            .get(pos..)
            .is_none_or(|rest| rest.iter().all(|&b| b == 0))
        {
            break;
        }
        let h = entry(area, pos, field, offset)?;
        pos += h.encoded_len();
        hops.push(h);
    }
    // Entries that are all zero at the end are padding, whatever follows
    // them past the last entry read.
    while hops.last().is_some_and(PathHop::is_zero) {
        hops.pop();
    }
    Ok(hops)
}

/// Writes `hops` packed from the start of `area` and zeroes the rest.
/// Errors (field `"path"`, offsets from the area's start):
/// [`ErrorKind::TooManyHops`] for more than [`MAX_HOPS`] entries,
/// [`ErrorKind::BadPath`] at the first entry that does not fit.
pub fn emit_path(hops: &[PathHop], area: &mut [u8]) -> Result<()> {
    if hops.len() > MAX_HOPS {
        return Err(Error::new(
            ErrorKind::TooManyHops(hops.len().min(u8::MAX as usize) as u8),
            "path",
            0,
        ));
    }
    let mut pos = 0;
    for h in hops {
        let end = pos + h.encoded_len();
        if end > area.len() {
            return Err(Error::new(ErrorKind::BadPath, "path", pos));
        }
        area[pos..pos + 2].copy_from_slice(&h.hr.0.to_be_bytes());
        area[pos + 2] = h.native.len() as u8;
        area[pos + ENTRY_PREFIX_LEN..end].copy_from_slice(h.native.as_bytes());
        pos = end;
    }
    area[pos..].fill(0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac(last: u8) -> NativeAddr {
        NativeAddr::mac([2, 0, 0, 0, 0, last])
    }

    #[test]
    fn capacity() {
        assert_eq!(path_capacity(6), 7);
        assert_eq!(path_capacity(18), 3);
        assert_eq!(path_capacity(0), MAX_HOPS);
    }

    #[test]
    fn round_trip_and_zero_rest() {
        let hops = vec![
            PathHop::new(Address(0x0111), mac(1)),
            PathHop::new(Address(0x0000), mac(2)),
        ];
        let mut area = [0xFFu8; PATH_AREA_LEN];
        emit_path(&hops, &mut area).unwrap();
        assert_eq!(&area[..9], &[0x01, 0x11, 6, 2, 0, 0, 0, 0, 1]);
        assert!(area[18..].iter().all(|&b| b == 0));
        assert_eq!(parse_path(&area, 2, "p", 128).unwrap(), hops);
        assert_eq!(parse_written_path(&area, 8, "p", 0).unwrap(), hops);
        assert_eq!(parse_written_path(&area, 1, "p", 0).unwrap(), hops[..1]);
        // Zero entries of an all-zero area: nothing written yet.
        assert!(parse_written_path(&[0; 64], 8, "p", 0).unwrap().is_empty());
        // Zero-filled entries read by count.
        assert_eq!(parse_path(&[0; 64], 2, "p", 0).unwrap().len(), 2);
    }

    #[test]
    fn trailing_zero_entries_are_padding() {
        // Regression (proptest): an all-zero entry followed by bytes past
        // the last entry read was kept, and did not survive emit + parse.
        let mut area = [0u8; PATH_AREA_LEN];
        area[..2].copy_from_slice(&[0x01, 0x11]);
        area[63] = 0xAA;
        let hops = parse_written_path(&area, 3, "p", 0).unwrap();
        assert_eq!(hops, vec![PathHop::new(Address(0x0111), NativeAddr::NONE)]);
        let mut out = [0u8; PATH_AREA_LEN];
        emit_path(&hops, &mut out).unwrap();
        assert_eq!(parse_written_path(&out, 3, "p", 0).unwrap(), hops);
        // A zero entry before a non-zero one is an entry.
        let mut area = [0u8; PATH_AREA_LEN];
        area[3..5].copy_from_slice(&[0x01, 0x11]);
        assert_eq!(parse_written_path(&area, 8, "p", 0).unwrap().len(), 2);
    }

    #[test]
    fn errors_name_field_and_offset() {
        let mut area = [0u8; PATH_AREA_LEN];
        area[2] = 19;
        let e = parse_path(&area, 1, "mad.initial_path", 128).unwrap_err();
        assert_eq!(e, Error::new(ErrorKind::BadPath, "mad.initial_path", 130));
        // 3 entries of 18-byte natives fit, 4 do not.
        let v6 = NativeAddr::from_bytes(&[1; 18]).unwrap();
        let hops = vec![PathHop::new(Address(0x0101), v6); 4];
        let e = emit_path(&hops, &mut area).unwrap_err();
        assert_eq!(e, Error::new(ErrorKind::BadPath, "path", 63));
        emit_path(&hops[..3], &mut area).unwrap();
        let e = parse_path(&area, 4, "x", 192).unwrap_err();
        assert_eq!(e, Error::new(ErrorKind::BadPath, "x", 192 + 63));
        // An entry whose native address runs past the area.
        let mut area = [0u8; PATH_AREA_LEN];
        area[2] = 18; // entry 0: 21 bytes, entry 1 at 21, entry 2 at 42
        area[23] = 18;
        area[44] = 18; // entry 2 ends at 63
        let mut long = area.to_vec();
        long.truncate(62);
        let e = parse_path(&long, 3, "x", 0).unwrap_err();
        assert_eq!(e, Error::new(ErrorKind::BadPath, "x", 42));
        let e = emit_path(&[PathHop::default(); 9], &mut [0u8; 64]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooManyHops(9));
    }
}
