//! A pcap writer (nanosecond timestamps, little-endian), as mwdump reads.

use std::io::{self, Write};

/// The nanosecond-resolution pcap magic.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;

/// Writes a pcap file record by record.
pub struct PcapWriter<W: Write> {
    w: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header.
    pub fn new(mut w: W, linktype: u32, snaplen: u32) -> io::Result<PcapWriter<W>> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&linktype.to_le_bytes());
        w.write_all(&h)?;
        w.flush()?;
        Ok(PcapWriter { w, snaplen })
    }

    /// Writes one packet: `data` is what was kept of `orig_len` bytes.
    pub fn write(&mut self, ts_ns: u64, orig_len: u32, data: &[u8]) -> io::Result<()> {
        let keep = data.len().min(self.snaplen.max(1) as usize);
        let mut r = Vec::with_capacity(16 + keep);
        let secs = u32::try_from(ts_ns / 1_000_000_000).unwrap_or(u32::MAX);
        let nanos = (ts_ns % 1_000_000_000) as u32;
        r.extend_from_slice(&secs.to_le_bytes());
        r.extend_from_slice(&nanos.to_le_bytes());
        r.extend_from_slice(&(keep as u32).to_le_bytes());
        r.extend_from_slice(&orig_len.max(keep as u32).to_le_bytes());
        r.extend_from_slice(&data[..keep]);
        self.w.write_all(&r)?;
        // Every packet reaches the file: an interrupted capture stays whole.
        self.w.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let mut p = PcapWriter::new(Vec::new(), 147, 64).unwrap();
        p.write(1_500_000_000_123, 100, &[1, 2, 3]).unwrap();
        let b = p.into_inner();
        assert_eq!(b.len(), 24 + 16 + 3);
        assert_eq!(&b[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 147);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1500);
        assert_eq!(u32::from_le_bytes(b[28..32].try_into().unwrap()), 123);
        assert_eq!(u32::from_le_bytes(b[32..36].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(b[36..40].try_into().unwrap()), 100);
        assert_eq!(&b[40..], &[1, 2, 3]);
    }
}
