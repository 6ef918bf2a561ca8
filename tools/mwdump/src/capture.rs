//! Capture files: pcap (both byte orders, micro- and nanosecond timestamps)
//! and pcapng (SHB, IDB, EPB, SPB and the obsolete PB, with per-interface
//! link types and timestamp resolutions), plus a small pcap writer.
//!
//! The reader works on a whole file in memory. It returns every frame it
//! could read and, when the file is damaged, the error that stopped it, so
//! that a truncated capture still shows its first frames.

use core::fmt;
use std::io::{self, Write};

/// pcap magic, microsecond timestamps, as written by a big-endian host.
pub const PCAP_MAGIC_MICRO: u32 = 0xA1B2_C3D4;
/// pcap magic, nanosecond timestamps.
pub const PCAP_MAGIC_NANO: u32 = 0xA1B2_3C4D;
/// pcapng Section Header Block type (also the file's first four bytes).
pub const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
/// pcapng byte-order magic inside the SHB.
pub const PCAPNG_BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;

const PCAPNG_IDB: u32 = 1;
const PCAPNG_PB: u32 = 2;
const PCAPNG_SPB: u32 = 3;
const PCAPNG_EPB: u32 = 6;

/// A capture timestamp: seconds since the Unix epoch and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub sec: i64,
    /// Nanoseconds, 0..1_000_000_000.
    pub nsec: u32,
}

impl Timestamp {
    /// The timestamp as UTC, e.g. `2024-01-01T00:00:00.000100000Z`.
    pub fn utc(&self) -> String {
        let days = self.sec.div_euclid(86_400);
        let secs = self.sec.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:09}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            self.nsec
        )
    }

    fn from_units(units: u128, per_sec: u128, offset_sec: i64) -> Timestamp {
        let per_sec = per_sec.max(1);
        let sec = (units / per_sec).min(i64::MAX as u128) as i64;
        let nsec = ((units % per_sec) * 1_000_000_000 / per_sec) as u32;
        Timestamp {
            sec: sec.saturating_add(offset_sec),
            nsec,
        }
    }
}

/// The proleptic Gregorian date (year, month, day) of day `z` since
/// 1970-01-01: Howard Hinnant's days-to-civil algorithm.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// One captured frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// When it was captured, if the format says.
    pub timestamp: Option<Timestamp>,
    /// The link type of the interface it was captured on.
    pub linktype: u32,
    /// The frame's length on the wire (may exceed `data.len()`).
    pub orig_len: usize,
    /// The captured bytes.
    pub data: Vec<u8>,
}

/// Which kind of capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap.
    Pcap,
    /// pcapng.
    Pcapng,
}

/// A damaged capture file: what, where (byte offset in the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    /// The part of the file, e.g. `"pcap.record"` or `"pcapng.block"`.
    pub field: &'static str,
    /// Byte offset in the file.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at file byte {}: {}",
            self.field, self.offset, self.message
        )
    }
}

impl std::error::Error for CaptureError {}

/// What a capture file held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// pcap or pcapng.
    pub format: Format,
    /// The frames read, in file order.
    pub frames: Vec<Frame>,
    /// The damage that stopped the reader, if any.
    pub error: Option<CaptureError>,
}

/// Whether `bytes` starts like a capture file, and which kind.
pub fn detect(bytes: &[u8]) -> Option<Format> {
    let m = bytes.get(..4)?;
    let be = u32::from_be_bytes([m[0], m[1], m[2], m[3]]);
    let le = u32::from_le_bytes([m[0], m[1], m[2], m[3]]);
    if [be, le].contains(&PCAP_MAGIC_MICRO) || [be, le].contains(&PCAP_MAGIC_NANO) {
        Some(Format::Pcap)
    } else if be == PCAPNG_SHB {
        Some(Format::Pcapng)
    } else {
        None
    }
}

#[derive(Clone, Copy)]
struct Rd<'a> {
    b: &'a [u8],
    big: bool,
}

impl Rd<'_> {
    fn u16(&self, at: usize) -> Option<u16> {
        let s = self.b.get(at..at + 2)?;
        let a = [s[0], s[1]];
        Some(if self.big {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        })
    }
    fn u32(&self, at: usize) -> Option<u32> {
        let s = self.b.get(at..at + 4)?;
        let a = [s[0], s[1], s[2], s[3]];
        Some(if self.big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }
    fn u64(&self, at: usize) -> Option<u64> {
        let s = self.b.get(at..at + 8)?;
        let a: [u8; 8] = s.try_into().ok()?;
        Some(if self.big {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        })
    }
}

fn cerr(field: &'static str, offset: usize, message: impl Into<String>) -> CaptureError {
    CaptureError {
        field,
        offset,
        message: message.into(),
    }
}

/// Reads a pcap or pcapng file. `Err` only when the file is not a capture
/// at all or its file header is unreadable; damage further on is reported
/// in [`Capture::error`] after the frames before it.
pub fn read(bytes: &[u8]) -> Result<Capture, CaptureError> {
    match detect(bytes) {
        Some(Format::Pcap) => read_pcap(bytes),
        Some(Format::Pcapng) => read_pcapng(bytes),
        None => Err(cerr("capture.magic", 0, "not a pcap or pcapng file")),
    }
}

fn read_pcap(bytes: &[u8]) -> Result<Capture, CaptureError> {
    if bytes.len() < 24 {
        return Err(cerr(
            "pcap.header",
            0,
            format!("truncated: needs 24 bytes, {} left", bytes.len()),
        ));
    }
    let be = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let big = be == PCAP_MAGIC_MICRO || be == PCAP_MAGIC_NANO;
    let r = Rd { b: bytes, big };
    let magic = r.u32(0).expect("24 bytes");
    let nano = magic == PCAP_MAGIC_NANO;
    let linktype = r.u32(20).expect("24 bytes") & 0xFFFF;
    let mut frames = Vec::new();
    let mut off = 24;
    let mut error = None;
    while off < bytes.len() {
        if bytes.len() - off < 16 {
            error = Some(cerr(
                "pcap.record",
                off,
                format!(
                    "truncated record header: needs 16 bytes, {} left",
                    bytes.len() - off
                ),
            ));
            break;
        }
        let sec = r.u32(off).expect("checked");
        let frac = r.u32(off + 4).expect("checked");
        let incl = r.u32(off + 8).expect("checked") as usize;
        let orig = r.u32(off + 12).expect("checked") as usize;
        let start = off + 16;
        if bytes.len() - start < incl {
            error = Some(cerr(
                "pcap.record.incl_len",
                off + 8,
                format!(
                    "truncated record: needs {incl} bytes, {} left",
                    bytes.len() - start
                ),
            ));
            break;
        }
        let per_sec: u128 = if nano { 1_000_000_000 } else { 1_000_000 };
        let frac = u128::from(frac).min(per_sec - 1);
        frames.push(Frame {
            timestamp: Some(Timestamp::from_units(
                u128::from(sec) * per_sec + frac,
                per_sec,
                0,
            )),
            linktype,
            orig_len: orig,
            data: bytes[start..start + incl].to_vec(),
        });
        off = start + incl;
    }
    Ok(Capture {
        format: Format::Pcap,
        frames,
        error,
    })
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: u32,
    /// Timestamp units per second.
    per_sec: u128,
    offset_sec: i64,
}

/// Calls `f(code, value offset, value)` for each option between `at` and `end`.
fn pcapng_options(r: Rd<'_>, mut at: usize, end: usize, mut f: impl FnMut(u16, usize, &[u8])) {
    while at + 4 <= end {
        let (Some(code), Some(len)) = (r.u16(at), r.u16(at + 2)) else {
            return;
        };
        if code == 0 {
            return;
        }
        let len = len as usize;
        let Some(val) = r.b.get(at + 4..at + 4 + len) else {
            return;
        };
        if at + 4 + len > end {
            return;
        }
        f(code, at + 4, val);
        at += 4 + len.div_ceil(4) * 4;
    }
}

fn read_pcapng(bytes: &[u8]) -> Result<Capture, CaptureError> {
    let mut frames = Vec::new();
    let mut ifaces: Vec<Interface> = Vec::new();
    let mut big = false;
    let mut off = 0;
    let mut error = None;
    while off < bytes.len() {
        if bytes.len() - off < 12 {
            error = Some(cerr(
                "pcapng.block",
                off,
                format!(
                    "truncated block: needs 12 bytes, {} left",
                    bytes.len() - off
                ),
            ));
            break;
        }
        let raw_type = u32::from_be_bytes(bytes[off..off + 4].try_into().expect("4"));
        if raw_type == PCAPNG_SHB {
            let bom = &bytes[off + 8..off + 12];
            big = match u32::from_be_bytes(bom.try_into().expect("4")) {
                PCAPNG_BYTE_ORDER_MAGIC => true,
                x if x.swap_bytes() == PCAPNG_BYTE_ORDER_MAGIC => false,
                _ => {
                    let e = cerr("pcapng.shb.byte_order", off + 8, "bad byte-order magic");
                    if off == 0 {
                        return Err(e);
                    }
                    error = Some(e);
                    break;
                }
            };
            ifaces.clear();
        } else if off == 0 {
            return Err(cerr("pcapng.shb", 0, "file does not start with an SHB"));
        }
        let r = Rd { b: bytes, big };
        let btype = r.u32(off).expect("checked");
        let blen = r.u32(off + 4).expect("checked") as usize;
        if blen < 12 || !blen.is_multiple_of(4) {
            error = Some(cerr(
                "pcapng.block.len",
                off + 4,
                format!("bad block length {blen}"),
            ));
            break;
        }
        if bytes.len() - off < blen {
            error = Some(cerr(
                "pcapng.block.len",
                off + 4,
                format!(
                    "truncated block: needs {blen} bytes, {} left",
                    bytes.len() - off
                ),
            ));
            break;
        }
        if r.u32(off + blen - 4) != Some(blen as u32) {
            error = Some(cerr(
                "pcapng.block.len",
                off + blen - 4,
                "trailing block length does not match",
            ));
            break;
        }
        let body = off + 8;
        let end = off + blen - 4;
        match btype {
            PCAPNG_IDB => {
                if end - body < 8 {
                    error = Some(cerr("pcapng.idb", off, "interface block too short"));
                    break;
                }
                let linktype = u32::from(r.u16(body).expect("checked"));
                let mut per_sec: u128 = 1_000_000;
                let mut offset_sec = 0i64;
                pcapng_options(r, body + 8, end, |code, at, val| match (code, val) {
                    (9, [res]) => {
                        let v = u32::from(res & 0x7F);
                        per_sec = if res & 0x80 != 0 {
                            1u128 << v.min(100)
                        } else {
                            10u128.pow(v.min(30))
                        };
                    }
                    (14, v) if v.len() == 8 => {
                        offset_sec = r.u64(at).unwrap_or(0) as i64;
                    }
                    _ => {}
                });
                ifaces.push(Interface {
                    linktype,
                    per_sec,
                    offset_sec,
                });
            }
            PCAPNG_EPB | PCAPNG_PB => {
                if end - body < 20 {
                    error = Some(cerr("pcapng.epb", off, "packet block too short"));
                    break;
                }
                let iface_id = if btype == PCAPNG_EPB {
                    r.u32(body).expect("checked") as usize
                } else {
                    r.u16(body).expect("checked") as usize
                };
                let Some(iface) = ifaces.get(iface_id).copied() else {
                    error = Some(cerr(
                        "pcapng.epb.interface_id",
                        body,
                        format!("no interface {iface_id}"),
                    ));
                    break;
                };
                let ts = (u64::from(r.u32(body + 4).expect("checked")) << 32)
                    | u64::from(r.u32(body + 8).expect("checked"));
                let cap = r.u32(body + 12).expect("checked") as usize;
                let orig = r.u32(body + 16).expect("checked") as usize;
                let data = body + 20;
                if cap > end - data {
                    error = Some(cerr(
                        "pcapng.epb.caplen",
                        body + 12,
                        format!(
                            "captured length {cap} exceeds the block ({} bytes)",
                            end - data
                        ),
                    ));
                    break;
                }
                frames.push(Frame {
                    timestamp: Some(Timestamp::from_units(
                        u128::from(ts),
                        iface.per_sec,
                        iface.offset_sec,
                    )),
                    linktype: iface.linktype,
                    orig_len: orig,
                    data: bytes[data..data + cap].to_vec(),
                });
            }
            PCAPNG_SPB => {
                let Some(iface) = ifaces.first().copied() else {
                    error = Some(cerr(
                        "pcapng.spb",
                        off,
                        "simple packet block without interface",
                    ));
                    break;
                };
                if end - body < 4 {
                    error = Some(cerr("pcapng.spb", off, "simple packet block too short"));
                    break;
                }
                let orig = r.u32(body).expect("checked") as usize;
                let data = body + 4;
                let cap = orig.min(end - data);
                frames.push(Frame {
                    timestamp: None,
                    linktype: iface.linktype,
                    orig_len: orig,
                    data: bytes[data..data + cap].to_vec(),
                });
            }
            _ => {} // SHB handled above; NRB, ISB, DSB, custom: nothing to show.
        }
        off += blen;
    }
    Ok(Capture {
        format: Format::Pcapng,
        frames,
        error,
    })
}

/// Timestamp resolution of a pcap file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Microseconds (magic 0xa1b2c3d4).
    Micro,
    /// Nanoseconds (magic 0xa1b23c4d).
    Nano,
}

/// Writes a classic pcap file, little endian, frame by frame: the sample
/// captures, `mwgen --write-pcap`, `mwctl capture -w`.
#[derive(Debug, Clone)]
pub struct PcapWriter<W: Write> {
    w: W,
    snaplen: u32,
    resolution: Resolution,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header: link type `linktype`, at most `snaplen`
    /// bytes kept of each frame, timestamps of `resolution`.
    pub fn new(
        mut w: W,
        linktype: u32,
        snaplen: u32,
        resolution: Resolution,
    ) -> io::Result<PcapWriter<W>> {
        let magic = match resolution {
            Resolution::Micro => PCAP_MAGIC_MICRO,
            Resolution::Nano => PCAP_MAGIC_NANO,
        };
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&magic.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&linktype.to_le_bytes());
        w.write_all(&h)?;
        w.flush()?;
        Ok(PcapWriter {
            w,
            snaplen,
            resolution,
        })
    }

    /// Writes one frame captured at `ts_ns` (UNIX time, ns): `data` is
    /// what was kept of `orig_len` bytes, cut to the snap length. Every
    /// frame is flushed, so that an interrupted capture stays whole.
    pub fn write(&mut self, ts_ns: u64, orig_len: u32, data: &[u8]) -> io::Result<()> {
        let keep = data.len().min(self.snaplen.max(1) as usize);
        let secs = u32::try_from(ts_ns / 1_000_000_000).unwrap_or(u32::MAX);
        let frac = match self.resolution {
            Resolution::Micro => (ts_ns % 1_000_000_000 / 1000) as u32,
            Resolution::Nano => (ts_ns % 1_000_000_000) as u32,
        };
        let mut r = Vec::with_capacity(16 + keep);
        r.extend_from_slice(&secs.to_le_bytes());
        r.extend_from_slice(&frac.to_le_bytes());
        r.extend_from_slice(&(keep as u32).to_le_bytes());
        r.extend_from_slice(&orig_len.max(keep as u32).to_le_bytes());
        r.extend_from_slice(&data[..keep]);
        self.w.write_all(&r)?;
        self.w.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.w
    }
}

impl PcapWriter<Vec<u8>> {
    /// A file in memory with this link type, microsecond timestamps and
    /// snap length 65535, and no frames yet.
    pub fn in_memory(linktype: u32) -> PcapWriter<Vec<u8>> {
        PcapWriter::new(Vec::new(), linktype, 65_535, Resolution::Micro)
            .expect("writing to memory does not fail")
    }

    /// Appends a whole frame captured at `sec` seconds and `usec`
    /// microseconds.
    pub fn push(&mut self, sec: u32, usec: u32, frame: &[u8]) {
        let ts = u64::from(sec) * 1_000_000_000 + u64::from(usec) * 1000;
        let len = u32::try_from(frame.len()).expect("frame below 4 GiB");
        self.write(ts, len, frame)
            .expect("writing to memory does not fail");
    }

    /// The file's bytes.
    pub fn finish(self) -> Vec<u8> {
        self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_413), (2025, 11, 21));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }

    fn pcap(big: bool, nano: bool, linktype: u32, recs: &[(u32, u32, &[u8])]) -> Vec<u8> {
        let w32 = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let w16 = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut b = Vec::new();
        b.extend_from_slice(&w32(if nano {
            PCAP_MAGIC_NANO
        } else {
            PCAP_MAGIC_MICRO
        }));
        b.extend_from_slice(&w16(2));
        b.extend_from_slice(&w16(4));
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&w32(65535));
        b.extend_from_slice(&w32(linktype));
        for (s, f, d) in recs {
            b.extend_from_slice(&w32(*s));
            b.extend_from_slice(&w32(*f));
            b.extend_from_slice(&w32(d.len() as u32));
            b.extend_from_slice(&w32(d.len() as u32 + 2));
            b.extend_from_slice(d);
        }
        b
    }

    #[test]
    fn pcap_both_orders_and_resolutions() {
        for big in [false, true] {
            for nano in [false, true] {
                let f = pcap(big, nano, 147, &[(10, 5, &[1, 2, 3]), (11, 0, &[])]);
                assert_eq!(detect(&f), Some(Format::Pcap));
                let c = read(&f).unwrap();
                assert_eq!(c.error, None);
                assert_eq!(c.frames.len(), 2);
                assert_eq!(c.frames[0].data, [1, 2, 3]);
                assert_eq!(c.frames[0].orig_len, 5);
                assert_eq!(c.frames[0].linktype, 147);
                let ts = c.frames[0].timestamp.unwrap();
                assert_eq!(ts.sec, 10);
                assert_eq!(ts.nsec, if nano { 5 } else { 5000 });
            }
        }
    }

    #[test]
    fn pcap_truncated_record_keeps_earlier_frames() {
        let mut f = pcap(false, false, 1, &[(1, 0, &[1, 2, 3, 4]), (2, 0, &[5, 6])]);
        f.truncate(f.len() - 1);
        let c = read(&f).unwrap();
        assert_eq!(c.frames.len(), 1);
        let e = c.error.unwrap();
        assert_eq!(e.field, "pcap.record.incl_len");
        assert_eq!(e.offset, 24 + 16 + 4 + 8);
        assert!(read(&f[..10]).is_err());
    }

    fn block(big: bool, t: u32, body: &[u8]) -> Vec<u8> {
        let w32 = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let len = body.len() as u32 + 12;
        let mut b = Vec::new();
        b.extend_from_slice(&w32(t));
        b.extend_from_slice(&w32(len));
        b.extend_from_slice(&body);
        b.extend_from_slice(&w32(len));
        b
    }

    fn pcapng(big: bool) -> Vec<u8> {
        let w32 = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let w16 = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut shb = Vec::new();
        shb.extend_from_slice(&w32(PCAPNG_BYTE_ORDER_MAGIC));
        shb.extend_from_slice(&w16(1));
        shb.extend_from_slice(&w16(0));
        shb.extend_from_slice(&[0xFF; 8]);
        let mut f = block(big, PCAPNG_SHB, &shb);
        // Interface 0: Ethernet, default microseconds.
        let mut idb0 = Vec::new();
        idb0.extend_from_slice(&w16(1));
        idb0.extend_from_slice(&w16(0));
        idb0.extend_from_slice(&w32(0));
        f.extend(block(big, PCAPNG_IDB, &idb0));
        // Interface 1: USER0, nanoseconds (if_tsresol = 9).
        let mut idb1 = Vec::new();
        idb1.extend_from_slice(&w16(147));
        idb1.extend_from_slice(&w16(0));
        idb1.extend_from_slice(&w32(0));
        idb1.extend_from_slice(&w16(9));
        idb1.extend_from_slice(&w16(1));
        idb1.extend_from_slice(&[9, 0, 0, 0]);
        idb1.extend_from_slice(&[0, 0, 0, 0]);
        f.extend(block(big, PCAPNG_IDB, &idb1));
        // A name resolution block is skipped.
        f.extend(block(big, 4, &[0, 0, 0, 0]));
        let epb = |iface: u32, ts: u64, data: &[u8]| {
            let mut e = Vec::new();
            e.extend_from_slice(&w32(iface));
            e.extend_from_slice(&w32((ts >> 32) as u32));
            e.extend_from_slice(&w32(ts as u32));
            e.extend_from_slice(&w32(data.len() as u32));
            e.extend_from_slice(&w32(data.len() as u32));
            e.extend_from_slice(data);
            block(big, PCAPNG_EPB, &e)
        };
        f.extend(epb(0, 1_500_000, &[1, 2, 3, 4, 5]));
        f.extend(epb(1, 2_000_000_007, &[9; 8]));
        let mut spb = Vec::new();
        spb.extend_from_slice(&w32(3));
        spb.extend_from_slice(&[7, 7, 7]);
        f.extend(block(big, PCAPNG_SPB, &spb));
        f
    }

    #[test]
    fn pcapng_blocks_and_interfaces() {
        for big in [false, true] {
            let f = pcapng(big);
            assert_eq!(detect(&f), Some(Format::Pcapng));
            let c = read(&f).unwrap();
            assert_eq!(c.error, None, "big={big}");
            assert_eq!(c.frames.len(), 3);
            assert_eq!(c.frames[0].linktype, 1);
            assert_eq!(c.frames[0].data, [1, 2, 3, 4, 5]);
            assert_eq!(
                c.frames[0].timestamp,
                Some(Timestamp {
                    sec: 1,
                    nsec: 500_000_000
                })
            );
            assert_eq!(c.frames[1].linktype, 147);
            assert_eq!(c.frames[1].timestamp, Some(Timestamp { sec: 2, nsec: 7 }));
            assert_eq!(c.frames[2].data, [7, 7, 7]);
            assert_eq!(c.frames[2].timestamp, None);
            // Truncation in the last block keeps the others.
            let c = read(&f[..f.len() - 2]).unwrap();
            assert_eq!(c.frames.len(), 2);
            assert_eq!(c.error.unwrap().field, "pcapng.block.len");
        }
    }

    #[test]
    fn writer_round_trips() {
        let mut w = PcapWriter::in_memory(1);
        w.push(1_704_067_200, 250, &[0xAA; 60]);
        let c = read(&w.finish()).unwrap();
        assert_eq!(c.frames.len(), 1);
        assert_eq!(
            c.frames[0].timestamp.unwrap().utc(),
            "2024-01-01T00:00:00.000250000Z"
        );
    }

    #[test]
    fn utc_dates() {
        let t = |sec| Timestamp { sec, nsec: 0 }.utc();
        assert_eq!(t(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(t(951_782_400), "2000-02-29T00:00:00.000000000Z");
        assert_eq!(t(-1), "1969-12-31T23:59:59.000000000Z");
    }

    #[test]
    fn garbage_is_not_a_capture() {
        assert_eq!(detect(&[0, 1, 2]), None);
        assert!(
            read(&[0x0A, 0x0D, 0x0D, 0x0A, 0, 0])
                .unwrap()
                .error
                .is_some()
        );
    }
}
