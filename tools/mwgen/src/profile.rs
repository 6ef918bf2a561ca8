//! Traffic profiles: what mwgen sends, and the packets built from it once.
//!
//! A [`Profile`] names the source, the destinations, the frame sizes, the
//! priority and, for L2 traffic, the source route (a chain of L2RHs, docs/architecture.md
//! "Source routes": each L2RH is the egress HR of one router and the native
//! address the packet goes to on the far SAN). [`Profile::build`] turns it
//! into a cycle of [`Template`]s: whole packets, built once, of which the
//! sender copies one per transmission and patches only the probe's sequence
//! number and time (crate::probe). The partition mark in Free
//! ([`Profile::partition`]) is written here, once, and never patched.
//!
//! # Sizes
//! A size is the frame as the port carries it at the router's ingress,
//! without FCS (what dpdk-testpmd calls a 64-byte packet): on Ethernet the
//! 14-byte header, the MessageWay packet and frame padding (at least 60
//! bytes in all); on UDP the datagram's payload; in memory the buffer. A
//! MessageWay packet is 8-byte aligned (L2RHs, 16-byte header, data words,
//! 8-byte trailer), so the packet is the largest that fits and the rest of
//! the size is padding after the trailer, which receivers ignore (its end
//! comes from DL) and routers do not forward.

use std::fmt;
use std::str::FromStr;

use rrp::LinkKind;
use rrp::NativeAddr;
use rrp::PartitionMark;
use rrp::kind::PacketType;
use rrp::limits::MAX_L2RHS;
use rrp::rng::Rng;
use rrp::wire::header::HeaderRepr;
use rrp::wire::packet::PacketRepr;
use rrp::wire::{HEADER_LEN, RouterHop, TRAILER_LEN};
use rrp::{Address, encap};

use crate::probe::{PROBE_LEN, PROBE_PT};

/// The largest frame mwgen builds (a jumbo Ethernet frame).
pub const MAX_FRAME: usize = 9216 + encap::ETH_HEADER_LEN;

/// Templates in one cycle when destinations and sizes would give more
/// combinations than this (see [`Profile::build`]).
pub const MAX_CYCLE: usize = 8192;

/// Why a profile cannot be built or an argument not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// An argument that does not read.
    #[error("{arg}: {why}")]
    Bad {
        /// The argument (`--size`, `--dst`, ...).
        arg: &'static str,
        /// What is wrong.
        why: String,
    },
    /// A frame size too small for the packet it must hold.
    #[error("--size: a {size}-byte frame cannot hold a probe{what}: the smallest is {min} bytes")]
    TooSmall {
        /// The size asked for.
        size: usize,
        /// The smallest that works.
        min: usize,
        /// What makes it larger (L2RHs).
        what: String,
    },
}

fn bad(arg: &'static str, why: impl Into<String>) -> ProfileError {
    ProfileError::Bad {
        arg,
        why: why.into(),
    }
}

/// Frame sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sizes {
    /// One size: `64`.
    Fixed(usize),
    /// Uniformly drawn from a range: `64-1500`.
    Range(usize, usize),
    /// Round robin over a list: `64,512,1500`.
    List(Vec<usize>),
    /// Simple IMIX: 7 x 64, 4 x 576, 1 x 1500 bytes, interleaved.
    Imix,
}

/// The simple IMIX cycle (7:4:1), interleaved so that no size comes in a run
/// longer than two.
pub const IMIX: [usize; 12] = [64, 576, 64, 64, 576, 64, 1500, 64, 576, 64, 64, 576];

/// How many sizes a range draws for one cycle.
const RANGE_DRAWS: usize = 256;

impl Sizes {
    /// The cycle of sizes (ranges drawn with `seed`).
    pub fn cycle(&self, seed: u64) -> Vec<usize> {
        match self {
            Sizes::Fixed(s) => vec![*s],
            Sizes::List(l) => l.clone(),
            Sizes::Imix => IMIX.to_vec(),
            Sizes::Range(lo, hi) => {
                let mut r = Rng::new(seed);
                let span = (hi - lo + 1) as u64;
                (0..RANGE_DRAWS)
                    .map(|_| lo + (r.next_u64() % span) as usize)
                    .collect()
            }
        }
    }
}

impl FromStr for Sizes {
    type Err = ProfileError;

    fn from_str(s: &str) -> Result<Sizes, ProfileError> {
        let num = |t: &str| {
            t.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_FRAME).contains(n))
                .ok_or_else(|| bad("--size", format!("{t:?} is not a size in 1-{MAX_FRAME}")))
        };
        if s.eq_ignore_ascii_case("imix") {
            return Ok(Sizes::Imix);
        }
        if let Some((a, b)) = s.split_once('-') {
            let (a, b) = (num(a)?, num(b)?);
            if a > b {
                return Err(bad("--size", format!("range {s:?} runs backwards")));
            }
            return Ok(if a == b {
                Sizes::Fixed(a)
            } else {
                Sizes::Range(a, b)
            });
        }
        if s.contains(',') {
            return Ok(Sizes::List(
                s.split(',').map(num).collect::<Result<_, _>>()?,
            ));
        }
        Ok(Sizes::Fixed(num(s)?))
    }
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sizes::Fixed(s) => write!(f, "{s}"),
            Sizes::Range(a, b) => write!(f, "{a}-{b}"),
            Sizes::List(l) => {
                let v: Vec<String> = l.iter().map(|s| s.to_string()).collect();
                f.write_str(&v.join(","))
            }
            Sizes::Imix => f.write_str("imix"),
        }
    }
}

/// Parses a MessageWay address: hex with `0x`, or decimal.
pub fn parse_address(arg: &'static str, s: &str) -> Result<Address, ProfileError> {
    let s = s.trim();
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u16::from_str_radix(h, 16),
        None => s.parse::<u16>(),
    }
    .map_err(|_| bad(arg, format!("{s:?} is not a 16-bit address (e.g. 0x0230)")))?;
    Ok(Address(v))
}

/// Destinations: `0x0230`, `0x0230-0x023f`, or a comma-separated list of
/// either. Each must be a valid destination (0x0040 and up, docs/architecture.md "Wire").
pub fn parse_destinations(s: &str) -> Result<Vec<Address>, ProfileError> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (parse_address("--dst", a)?, parse_address("--dst", b)?),
            None => {
                let a = parse_address("--dst", part)?;
                (a, a)
            }
        };
        if a.0 > b.0 {
            return Err(bad("--dst", format!("range {part:?} runs backwards")));
        }
        for v in a.0..=b.0 {
            let d = Address(v);
            if !d.is_valid_destination() {
                return Err(bad(
                    "--dst",
                    format!("{d} is not a destination (0x0040-0xFFFF; below is an L2RH length)"),
                ));
            }
            out.push(d);
        }
    }
    if out.is_empty() {
        return Err(bad("--dst", "no destination"));
    }
    Ok(out)
}

/// One element of an L2 source route: `EGRESS@NATIVE` (the router's egress
/// HR and the native address on the far SAN), `EGRESS` (egress only: to
/// that HR itself) or `@NATIVE` (native only).
pub fn parse_hop(s: &str) -> Result<RouterHop, ProfileError> {
    let (e, n) = match s.split_once('@') {
        Some((e, n)) => (e, Some(n)),
        None => (s, None),
    };
    let egress = if e.is_empty() {
        Address(0)
    } else {
        parse_address("--l2", e)?
    };
    let native = match n {
        None => NativeAddr::none(),
        Some(n) => n
            .parse::<NativeAddr>()
            .map_err(|e| bad("--l2", e.to_string()))?,
    };
    if egress.0 == 0 && native.is_empty() {
        return Err(bad(
            "--l2",
            format!("{s:?}: a hop needs an egress HR or a native address"),
        ));
    }
    Ok(RouterHop::new(egress, native))
}

/// A source route: hops separated by `/`, first router first.
pub fn parse_route(s: &str) -> Result<Vec<RouterHop>, ProfileError> {
    let hops: Vec<RouterHop> = s.split('/').map(parse_hop).collect::<Result<_, _>>()?;
    if hops.len() > MAX_L2RHS {
        return Err(bad(
            "--l2",
            format!(
                "{} hops: routers forward at most {MAX_L2RHS} L2RHs",
                hops.len()
            ),
        ));
    }
    Ok(hops)
}

/// A partition to mark packets with (`--partition`): `KEY` (a full
/// member's mark), `KEY:limited` (a limited member's), the key hex with
/// `0x` or decimal, 1-0x7FFF; `none`: unmarked (Free 0, which routers read
/// as the default partition, full: rrp::PartitionMark).
pub fn parse_partition(s: &str) -> Result<Option<PartitionMark>, ProfileError> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let (key, full) = match s.split_once(':') {
        None => (s, true),
        Some((k, m)) if m.eq_ignore_ascii_case("limited") => (k, false),
        Some((k, m)) if m.eq_ignore_ascii_case("full") => (k, true),
        Some((_, m)) => {
            return Err(bad(
                "--partition",
                format!("{m:?} is not a membership (full or limited)"),
            ));
        }
    };
    let k = key.trim();
    let v = match k.strip_prefix("0x").or_else(|| k.strip_prefix("0X")) {
        Some(h) => u16::from_str_radix(h, 16),
        None => k.parse::<u16>(),
    }
    .ok()
    .filter(|v| (1..=rrp::partition_mark::KEY).contains(v))
    .ok_or_else(|| {
        bad(
            "--partition",
            format!("{k:?} is not a partition key (1-0x7fff, e.g. 0x0010), nor none"),
        )
    })?;
    Ok(Some(PartitionMark::new(v, full)))
}

/// What to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Source Address of every packet.
    pub src: Address,
    /// Destinations, round robin.
    pub dsts: Vec<Address>,
    /// Frame sizes.
    pub sizes: Sizes,
    /// Priority field.
    pub priority: u8,
    /// L2RHs in front of every packet (empty: L3 traffic).
    pub l2: Vec<RouterHop>,
    /// The partition every packet is marked with, in Free
    /// (rrp::PartitionMark, docs/partitions.md "In packets"); `None`:
    /// unmarked, Free 0.
    pub partition: Option<PartitionMark>,
    /// Seed for drawn sizes.
    pub seed: u64,
}

impl Default for Profile {
    fn default() -> Profile {
        Profile {
            src: Address(0x0130),
            dsts: vec![Address(0x0230)],
            sizes: Sizes::Fixed(64),
            priority: 0,
            l2: Vec::new(),
            partition: None,
            seed: 1,
        }
    }
}

/// One packet to send, built once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The MessageWay packet followed by frame padding (everything but the
    /// link header, which the port adds).
    pub bytes: Vec<u8>,
    /// Offset of the EEP header (after the L2RHs); `None` for a replayed
    /// packet that is not a probe (sent as it is).
    pub hdr: Option<usize>,
    /// The frame's size on the wire (link header included).
    pub frame_len: usize,
}

/// Bytes of link header and the smallest frame for a link kind.
pub fn link_overhead(link: LinkKind) -> (usize, usize) {
    match link {
        LinkKind::Ethernet => (encap::ETH_HEADER_LEN, encap::ETH_MIN_FRAME),
        LinkKind::Udp | LinkKind::Memory => (0, 0),
    }
}

impl Profile {
    /// Bytes of the L2RHs in front of each packet.
    pub fn l2rh_len(&self) -> usize {
        self.l2.iter().map(|h| h.to_l2rh().buffer_len()).sum()
    }

    /// The smallest frame that holds a probe with this profile's L2RHs.
    pub fn min_frame(&self, link: LinkKind) -> usize {
        let (hdr, min) = link_overhead(link);
        (hdr + self.l2rh_len() + HEADER_LEN + PROBE_LEN + TRAILER_LEN).max(min)
    }

    /// The templates of one cycle, with stream tag `tag`: destination `i %
    /// dsts` and size `i % sizes` for `i` up to the least common multiple of
    /// the two counts, or up to the larger count where that multiple exceeds
    /// [`MAX_CYCLE`].
    pub fn build(&self, link: LinkKind, tag: u16) -> Result<Vec<Template>, ProfileError> {
        if self.dsts.is_empty() {
            return Err(bad("--dst", "no destination"));
        }
        let sizes = self.sizes.cycle(self.seed);
        let min = self.min_frame(link);
        if let Some(&s) = sizes.iter().find(|&&s| s < min) {
            return Err(ProfileError::TooSmall {
                size: s,
                min,
                what: if self.l2.is_empty() {
                    String::new()
                } else {
                    format!(" behind {} L2RH(s)", self.l2.len())
                },
            });
        }
        let lcm = lcm(self.dsts.len(), sizes.len());
        let n = if lcm <= MAX_CYCLE {
            lcm
        } else {
            self.dsts.len().max(sizes.len())
        };
        let l2rhs: Vec<_> = self.l2.iter().map(RouterHop::to_l2rh).collect();
        let l2len = self.l2rh_len();
        let (link_hdr, _) = link_overhead(link);
        (0..n)
            .map(|i| {
                let frame = sizes[i % sizes.len()];
                let avail = frame - link_hdr;
                let words = (avail - l2len - HEADER_LEN - TRAILER_LEN) / 8;
                let repr = PacketRepr {
                    l2rhs: l2rhs.clone(),
                    header: HeaderRepr {
                        dst: self.dsts[i % self.dsts.len()],
                        priority: self.priority,
                        packet_type: PacketType(PROBE_PT),
                        type_ext: tag,
                        src: self.src,
                        free: self.partition.map_or(0, PartitionMark::to_free),
                        ..HeaderRepr::default()
                    },
                    data: vec![0; words * 8],
                    ei: 0,
                };
                let mut bytes = repr.to_bytes().map_err(|e| bad("--dst", e.to_string()))?;
                bytes.resize(avail, 0);
                Ok(Template {
                    bytes,
                    hdr: Some(l2len),
                    frame_len: frame,
                })
            })
            .collect()
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn lcm(a: usize, b: usize) -> usize {
    a / gcd(a, b) * b
}

/// The mean frame size of a cycle, for rates in bit/s.
pub fn mean_frame(templates: &[Template]) -> f64 {
    if templates.is_empty() {
        return 0.0;
    }
    templates.iter().map(|t| t.frame_len as f64).sum::<f64>() / templates.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Received, read};
    use rrp::wire::Header;

    #[test]
    fn sizes_parse() {
        assert_eq!("64".parse::<Sizes>().unwrap(), Sizes::Fixed(64));
        assert_eq!("64-1500".parse::<Sizes>().unwrap(), Sizes::Range(64, 1500));
        assert_eq!("IMIX".parse::<Sizes>().unwrap(), Sizes::Imix);
        assert_eq!(
            "64,128".parse::<Sizes>().unwrap(),
            Sizes::List(vec![64, 128])
        );
        for bad in ["", "0", "x", "1500-64", "64,", "99999"] {
            assert!(bad.parse::<Sizes>().is_err(), "{bad}");
        }
        let c = Sizes::Range(100, 110).cycle(3);
        assert_eq!(c.len(), RANGE_DRAWS);
        assert!(c.iter().all(|s| (100..=110).contains(s)));
        let imix = Sizes::Imix.cycle(0);
        assert_eq!(imix.iter().filter(|&&s| s == 64).count(), 7);
        assert_eq!(imix.iter().filter(|&&s| s == 576).count(), 4);
    }

    #[test]
    fn destinations_parse() {
        let d = parse_destinations("0x0230-0x0232,0x0300").unwrap();
        assert_eq!(d, [0x230, 0x231, 0x232, 0x300].map(Address));
        assert!(parse_destinations("0x0010").is_err());
        assert!(parse_destinations("0x0232-0x0230").is_err());
        assert!(parse_destinations("zz").is_err());
        assert_eq!(parse_destinations("560").unwrap(), [Address(560)]);
    }

    #[test]
    fn hops_parse() {
        let r = parse_route("0x0102@02:00:00:00:02:30/0x0203").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].to_l2rh().buffer_len(), 16);
        assert!(parse_hop("@").is_err());
        assert!(parse_hop("0x0102@nothing").is_err());
        assert!(parse_route(&["0x0102"; 9].join("/")).is_err());
    }

    #[test]
    fn frame_sizes_are_exact() {
        for (link, l2) in [
            (LinkKind::Ethernet, vec![]),
            (
                LinkKind::Ethernet,
                vec![parse_hop("0x0102@02:00:00:00:02:30").unwrap()],
            ),
            (LinkKind::Udp, vec![]),
            (LinkKind::Memory, vec![]),
        ] {
            let p = Profile {
                sizes: Sizes::List(vec![64, 65, 70, 1500]),
                l2: l2.clone(),
                ..Profile::default()
            };
            let t = p.build(link, 9).unwrap();
            let (hdr, _) = link_overhead(link);
            for t in &t {
                assert_eq!(t.bytes.len() + hdr, t.frame_len);
                assert_eq!(t.hdr, Some(p.l2rh_len()));
                match read(&t.bytes) {
                    Received::Probe(pr) => assert_eq!(pr.tag, 9),
                    r => panic!("{r:?}"),
                }
            }
        }
    }

    #[test]
    fn too_small_is_refused_with_the_minimum() {
        let p = Profile {
            l2: vec![parse_hop("0x0102@02:00:00:00:02:30").unwrap()],
            sizes: Sizes::Fixed(60),
            ..Profile::default()
        };
        assert_eq!(p.min_frame(LinkKind::Ethernet), 62);
        let e = p.build(LinkKind::Ethernet, 0).unwrap_err();
        assert!(matches!(e, ProfileError::TooSmall { min: 62, .. }), "{e}");
        assert_eq!(Profile::default().min_frame(LinkKind::Ethernet), 60);
        assert_eq!(Profile::default().min_frame(LinkKind::Udp), 32);
    }

    #[test]
    fn cycle_covers_combinations() {
        let p = Profile {
            dsts: parse_destinations("0x0230-0x0232").unwrap(),
            sizes: Sizes::List(vec![64, 128]),
            ..Profile::default()
        };
        let t = p.build(LinkKind::Memory, 0).unwrap();
        assert_eq!(t.len(), 6);
        let mut seen: Vec<(u16, usize)> = t
            .iter()
            .map(|t| (Header::new_unchecked(&t.bytes[..]).dst().0, t.frame_len))
            .collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 6);
        assert!((mean_frame(&t) - 96.0).abs() < 1e-9);
    }

    #[test]
    fn partitions_parse() {
        assert_eq!(parse_partition("none").unwrap(), None);
        assert_eq!(
            parse_partition("0x0010").unwrap(),
            Some(PartitionMark::new(0x10, true))
        );
        assert_eq!(
            parse_partition("16:limited").unwrap(),
            Some(PartitionMark::new(0x10, false))
        );
        assert_eq!(
            parse_partition("0x7fff:full").unwrap().unwrap().to_free(),
            0xFFFF
        );
        for bad in ["", "0", "0x8000", "x", "0x10:", "0x10:half", "none:limited"] {
            assert!(parse_partition(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_template_carries_the_partition_in_free() {
        let free = |p: &Profile| -> Vec<u16> {
            p.build(LinkKind::Ethernet, 1)
                .unwrap()
                .iter()
                .map(|t| Header::new_unchecked(&t.bytes[t.hdr.unwrap()..]).free())
                .collect()
        };
        let mut p = Profile {
            dsts: parse_destinations("0x0230-0x0231").unwrap(),
            sizes: Sizes::List(vec![64, 1500]),
            l2: vec![parse_hop("0x0102@02:00:00:00:02:30").unwrap()],
            ..Profile::default()
        };
        assert_eq!(free(&p), [0; 2], "unmarked by default");
        p.partition = Some(PartitionMark::new(0x10, false));
        assert_eq!(free(&p), [0x0010; 2]);
        p.partition = Some(PartitionMark::new(0x10, true));
        assert_eq!(free(&p), [0x8010; 2]);
    }
}
