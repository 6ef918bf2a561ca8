//! The traffic profiles and their pcaps.
//!
//! Every profile sends from node 0x0130 (MAC 02:00:00:00:01:30) to the
//! router's port A (02:00:00:00:01:01), destination node 0x0230. L3 packets
//! are routed by destination (the router's static LRT entry 0x0230 on HR
//! 0x0102); L2 packets carry one L2RH naming HR 0x0102 and native
//! 02:00:00:00:02:30, which the router consumes. Sizes are Ethernet frame
//! sizes without FCS, as testpmd counts them.

use std::path::{Path, PathBuf};
use std::process::Command;

use mwdump::capture::{self, PcapWriter};
use rrp::limits::MAX_L2RHS;
use rrp::wire::bytes::be16;
use rrp::wire::{Header, L2rh, locate};
use rrp::{Address, encap};
use serde_json::{Value, json};

use super::addr::*;
use super::process::{command_line, shell_words};
use super::{Env, Result};

/// L3 (routed by destination) or L2 (source routed, one L2RH).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Routed by destination.
    L3,
    /// Source routed.
    L2,
}

/// One traffic profile.
#[derive(Debug, Clone, Copy)]
pub struct Traffic {
    /// Short name: `l3-64`, `imix`, ... (file names, JSON keys).
    pub name: &'static str,
    /// For tables: `L3 64 B`.
    pub label: &'static str,
    /// L3 or L2.
    pub kind: Kind,
    /// mwgen's `--size`: `64`, `1500` or `imix`.
    pub size: &'static str,
}

/// Part 1's traffics.
pub const PART1: [Traffic; 4] = [
    Traffic {
        name: "l3-64",
        label: "L3 64 B",
        kind: Kind::L3,
        size: "64",
    },
    Traffic {
        name: "l2-64",
        label: "L2 64 B",
        kind: Kind::L2,
        size: "64",
    },
    Traffic {
        name: "imix",
        label: "L3 IMIX",
        kind: Kind::L3,
        size: "imix",
    },
    Traffic {
        name: "l3-1500",
        label: "L3 1500 B",
        kind: Kind::L3,
        size: "1500",
    },
];

/// Part 2's traffics.
pub const PART2: [Traffic; 4] = [
    Traffic {
        name: "l3-64",
        label: "L3 64 B",
        kind: Kind::L3,
        size: "64",
    },
    Traffic {
        name: "l3-1500",
        label: "L3 1500 B",
        kind: Kind::L3,
        size: "1500",
    },
    Traffic {
        name: "l2-64",
        label: "L2 64 B",
        kind: Kind::L2,
        size: "64",
    },
    Traffic {
        name: "l2-1500",
        label: "L2 1500 B",
        kind: Kind::L2,
        size: "1500",
    },
];

impl Traffic {
    /// mwgen's profile options (addresses, size, L2 route), shared by
    /// `--write-pcap` and the search.
    pub fn mwgen_profile_args(&self) -> Vec<String> {
        profile_args(self.kind, self.size)
    }
}

/// mwgen's profile options for `kind` at mwgen's `--size` `size`: from node
/// 0x0130 to the router's port A, destination 0x0230 (an L2 profile with
/// the L2RH of HR 0x0102 and native 02:00:00:00:02:30).
pub fn profile_args(kind: Kind, size: &str) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "--mac".into(),
        GEN_A_MAC.into(),
        "--to".into(),
        ROUTER_A_MAC.into(),
        "--src".into(),
        format!("{NODE_A:#06x}"),
        "--dst".into(),
        format!("{NODE_B:#06x}"),
        "--size".into(),
        size.into(),
    ];
    if kind == Kind::L2 {
        v.push("--l2".into());
        v.push(format!("{HR_B:#06x}@{GEN_B_MAC}"));
    }
    v
}

/// A pcap of one traffic, checked.
#[derive(Debug, Clone)]
pub struct Pcap {
    /// The file.
    pub path: PathBuf,
    /// Frames in it.
    pub frames: usize,
    /// Mean frame size (bytes, no FCS).
    pub mean_frame: f64,
    /// Smallest and largest frame.
    pub min_frame: usize,
    /// Largest frame.
    pub max_frame: usize,
    /// How it was made (command line, or "given").
    pub made_by: Vec<String>,
}

impl Pcap {
    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({
            "path": self.path.display().to_string(),
            "frames": self.frames,
            "mean_frame_bytes": self.mean_frame,
            "min_frame_bytes": self.min_frame,
            "max_frame_bytes": self.max_frame,
            "made_by": self.made_by,
        })
    }
}

/// Frames in the pcap of a fixed-size profile (the cycle of IMIX is mwgen's).
const PCAP_FRAMES: u32 = 1024;

/// The pcap of `t`: written by `mwgen --write-pcap` into the scratch
/// directory, or taken from `given_dir/<name>.pcap`. Checked either way.
pub fn pcap(env: &Env, t: &Traffic, given_dir: Option<&Path>) -> Result<Pcap> {
    let (path, made_by) = match given_dir {
        Some(dir) => {
            let p = dir.join(format!("{}.pcap", t.name));
            (p, vec!["given (--pcap-dir)".to_string()])
        }
        None => {
            let p = env.file(&format!("{}.pcap", t.name));
            let mut cmd = Command::new(env.bin("mwgen"));
            cmd.arg("--write-pcap")
                .arg(&p)
                .args(["--link", "ethernet"])
                .args(t.mwgen_profile_args())
                .args(["--count", &PCAP_FRAMES.to_string()]);
            let words = command_line(&cmd);
            let out = cmd
                .output()
                .map_err(|e| format!("cannot run mwgen ({}): {e}", shell_words(&words)))?;
            if !out.status.success() {
                return Err(format!(
                    "mwgen --write-pcap failed ({}): {}\n{}",
                    out.status,
                    shell_words(&words),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            (p, words)
        }
    };
    let frames = read_frames(&path)?;
    check_frames(t, &path, &frames)?;
    let total: usize = frames.iter().map(Vec::len).sum();
    Ok(Pcap {
        frames: frames.len(),
        mean_frame: total as f64 / frames.len() as f64,
        min_frame: frames.iter().map(Vec::len).min().unwrap_or(0),
        max_frame: frames.iter().map(Vec::len).max().unwrap_or(0),
        path,
        made_by,
    })
}

/// Writes `frames` as a classic pcap (little-endian, µs, Ethernet, snap
/// length 65535), one record per frame, timestamps 1 µs apart: mwdump's
/// [`PcapWriter`], as `mwgen --write-pcap` writes them.
pub fn write_pcap(path: &Path, frames: &[Vec<u8>]) -> Result<()> {
    let mut w = PcapWriter::in_memory(encap::LINKTYPE_ETHERNET);
    for (i, f) in frames.iter().enumerate() {
        w.push(0, i as u32, f);
    }
    std::fs::write(path, w.finish()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The frames of a capture file (pcap in either byte order, µs or ns, or
/// pcapng; mwdump's reader): Ethernet frames, whole, at least one.
pub fn read_frames(path: &Path) -> Result<Vec<Vec<u8>>> {
    let data = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bad = |why: &str| format!("{}: not a usable pcap: {why}", path.display());
    let c = capture::read(&data).map_err(|e| bad(&e.to_string()))?;
    if let Some(e) = c.error {
        return Err(bad(&e.to_string()));
    }
    let mut frames = Vec::with_capacity(c.frames.len());
    for f in c.frames {
        if f.linktype != encap::LINKTYPE_ETHERNET {
            return Err(bad(&format!(
                "link type {} is not Ethernet ({})",
                f.linktype,
                encap::LINKTYPE_ETHERNET
            )));
        }
        if f.orig_len != f.data.len() {
            return Err(bad("a frame is truncated (snap length)"));
        }
        frames.push(f.data);
    }
    if frames.is_empty() {
        return Err(bad("no frames"));
    }
    Ok(frames)
}

/// A MAC address `aa:bb:..` as bytes (zeros where it does not parse).
pub fn mac_bytes(s: &str) -> [u8; 6] {
    let mut m = [0u8; 6];
    for (i, p) in s.split(':').enumerate().take(6) {
        m[i] = u8::from_str_radix(p, 16).unwrap_or(0);
    }
    m
}

/// The IPv4 peers' flow (Part 1's l3fwd and l3fwd-graph runs): from
/// 198.18.1.1 to 198.18.1.0, UDP port 9 to 9. All three lookups send it to
/// port 1 with their default tables: l3fwd LPM's 198.18.1.0/24 (its
/// lpm_default_v4.cfg), l3fwd EM's exact 5-tuple `R198.18.1.0 198.18.1.1 9
/// 9 0x11 1` (em_default_v4.cfg: destination, source, ports, protocol, out
/// port) and l3fwd-graph's built-in 198.18.1.0/24.
pub mod v4 {
    /// The source address.
    pub const SRC: [u8; 4] = [198, 18, 1, 1];
    /// The destination address.
    pub const DST: [u8; 4] = [198, 18, 1, 0];
    /// UDP source and destination port.
    pub const PORT: u16 = 9;
    /// Time to live (the forwarders decrement it).
    pub const TTL: u8 = 64;
}

/// An Ethernet frame of `size` bytes (no FCS) with an IPv4/UDP packet from
/// `src` to `dst` (ports `port` to `port`, identification `id`, TTL
/// [`v4::TTL`], a correct header checksum, UDP checksum 0), zero-filled.
pub fn ipv4_udp_frame(
    size: usize,
    id: u16,
    macs: ([u8; 6], [u8; 6]),
    src: [u8; 4],
    dst: [u8; 4],
    port: u16,
) -> Vec<u8> {
    let size = size.max(encap::ETH_MIN_FRAME);
    let mut f = Vec::with_capacity(size);
    f.extend_from_slice(&macs.0);
    f.extend_from_slice(&macs.1);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let total = (size - 14) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&id.to_be_bytes());
    ip.extend_from_slice(&[0, 0, v4::TTL, 17, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let sum = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&port.to_be_bytes());
    f.extend_from_slice(&port.to_be_bytes());
    f.extend_from_slice(&(total - 20).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.resize(size, 0);
    f
}

/// The Internet checksum of an IPv4 header (its checksum field zero).
pub fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// The IPv4 twin of a MessageWay pcap: one IPv4/UDP frame of the [`v4`]
/// flow for each of `mw`'s frames, of the same size, in the same order
/// (so IMIX has the same sizes in the same cycle), written to
/// `<work>/<name>-ipv4.pcap`.
pub fn ipv4_twin(env: &Env, name: &str, mw: &Pcap) -> Result<Pcap> {
    let sizes: Vec<usize> = read_frames(&mw.path)?.iter().map(Vec::len).collect();
    let macs = (mac_bytes(ROUTER_A_MAC), mac_bytes(GEN_A_MAC));
    let frames: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| ipv4_udp_frame(n, i as u16, macs, v4::SRC, v4::DST, v4::PORT))
        .collect();
    let path = env.file(&format!("{name}-ipv4.pcap"));
    write_pcap(&path, &frames)?;
    let total: usize = frames.iter().map(Vec::len).sum();
    Ok(Pcap {
        frames: frames.len(),
        mean_frame: total as f64 / frames.len() as f64,
        min_frame: frames.iter().map(Vec::len).min().unwrap_or(0),
        max_frame: frames.iter().map(Vec::len).max().unwrap_or(0),
        made_by: vec![format!(
            "written by e2e: IPv4/UDP {}.{}.{}.{} -> {}.{}.{}.{} port {} -> {}, the frame sizes of {}",
            v4::SRC[0],
            v4::SRC[1],
            v4::SRC[2],
            v4::SRC[3],
            v4::DST[0],
            v4::DST[1],
            v4::DST[2],
            v4::DST[3],
            v4::PORT,
            v4::PORT,
            mw.path.display()
        )],
        path,
    })
}

/// The copy of MessageWay traffic `mw` (`name`) with every packet marked
/// `mark` in its Free field (docs/partitions.md "In packets"), for the
/// router with partitions; written beside the other pcaps.
pub fn marked_twin(env: &Env, name: &str, mw: &Pcap, mark: rrp::PartitionMark) -> Result<Pcap> {
    let mut frames = read_frames(&mw.path)?;
    for (i, f) in frames.iter_mut().enumerate() {
        let eep = encap::ETH_HEADER_LEN;
        let at = locate(&f[eep..], MAX_L2RHS)
            .map_err(|e| format!("{} frame {}: {e}", mw.path.display(), i + 1))?
            .header_offset;
        Header::new_unchecked(&mut f[eep + at..]).set_free(mark.to_free());
    }
    let path = env.file(&format!("{name}-partition-{:04x}.pcap", mark.to_free()));
    write_pcap(&path, &frames)?;
    let mut made_by = mw.made_by.clone();
    made_by.push(format!(
        "every packet's Free set to {:#06x} by e2e (partition {:#06x}, full)",
        mark.to_free(),
        mark.key()
    ));
    Ok(Pcap {
        path,
        made_by,
        ..mw.clone()
    })
}

/// Checks that the frames are what the router expects: to its port A's
/// MAC, from the generator's, EtherType 0x88B5, destination 0x0230 (L3) or
/// one L2RH for HR 0x0102 (L2), and the profile's sizes.
fn check_frames(t: &Traffic, path: &Path, frames: &[Vec<u8>]) -> Result<()> {
    let (dst, src) = (mac_bytes(ROUTER_A_MAC), mac_bytes(GEN_A_MAC));
    for (i, f) in frames.iter().enumerate() {
        let bad = |why: String| format!("{} frame {}: {why}", path.display(), i + 1);
        if f.len() < encap::ETH_MIN_FRAME {
            return Err(bad(format!(
                "{} bytes, shorter than {}",
                f.len(),
                encap::ETH_MIN_FRAME
            )));
        }
        if f[0..6] != dst || f[6..12] != src || be16(f, 12) != encap::ETHERTYPE {
            return Err(bad(format!(
                "Ethernet header is not {ROUTER_A_MAC} <- {GEN_A_MAC} type 0x88b5"
            )));
        }
        let pkt = &f[encap::ETH_HEADER_LEN..];
        match (t.kind, locate(pkt, MAX_L2RHS)) {
            (_, Err(e)) => return Err(bad(format!("not a MessageWay packet: {e}"))),
            (Kind::L3, Ok(l)) => {
                let d = Header::new_unchecked(&pkt[l.header_offset..]).dst().0;
                if l.l2rh_count != 0 || d != NODE_B {
                    return Err(bad(format!("destination {d:#06x}, expected {NODE_B:#06x}")));
                }
            }
            (Kind::L2, Ok(l)) => {
                if l.l2rh_count == 0 || L2rh::new_unchecked(pkt).hop_egress() != Some(Address(HR_B))
                {
                    return Err(bad(format!("no L2RH for HR {HR_B:#06x} at the start")));
                }
            }
        }
        if let Ok(size) = t.size.parse::<usize>()
            && f.len() != size
        {
            return Err(bad(format!("{} bytes, expected {size}", f.len())));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_frames_have_their_size_the_flow_and_a_correct_checksum() {
        let macs = (mac_bytes(ROUTER_A_MAC), mac_bytes(GEN_A_MAC));
        for size in [64, 354, 1500] {
            let f = ipv4_udp_frame(size, 7, macs, v4::SRC, v4::DST, v4::PORT);
            assert_eq!(f.len(), size);
            assert_eq!(be16(&f, 12), 0x0800);
            assert_eq!(usize::from(be16(&f, 16)), size - 14);
            assert_eq!(f[23], 17);
            assert_eq!(&f[26..30], &v4::SRC);
            assert_eq!(&f[30..34], &v4::DST);
            assert_eq!((be16(&f, 34), be16(&f, 36)), (9, 9));
            assert_eq!(usize::from(be16(&f, 38)), size - 34);
            // The header verifies: its sum with the checksum is 0xFFFF.
            assert_eq!(ipv4_checksum(&f[14..34]), 0);
        }
    }

    #[test]
    fn pcaps_round_trip() {
        let dir = std::env::temp_dir().join(format!("e2e-traffic-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.pcap");
        let frames = vec![vec![1u8; 60], vec![2u8; 1500]];
        write_pcap(&p, &frames).unwrap();
        assert_eq!(read_frames(&p).unwrap(), frames);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
