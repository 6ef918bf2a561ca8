//! The templates of a cycle as the generator copies them into buffers
//! (docs/mwgen.md "How it sends"): each frame built once, with the port's
//! link header already in front where the port's encapsulation is a
//! header and nothing else ([`ports::Port::link_header`]: DPDK), so that a
//! packet costs one copy and the probe's two fields, and the counts of a
//! run of packets (bytes, probes) come from running sums instead of a walk.
//!
//! A long probe is copied in two parts: its head (link header, L2RHs, EEP
//! header, the probe's data word) and its tail (trailer and frame padding).
//! The data words between them are opaque to every router (the draft's
//! "data block"): they keep whatever the buffer held, as a NIC
//! generator's payload does (testpmd's txonly writes only its headers), so
//! that a 1500-byte frame costs two small copies instead of 24 cache
//! lines.

use ports::LinkHeader;
use rrp::limits::MAX_L2RHS;
use rrp::wire::header::HEADER_LEN;
use rrp::wire::packet::locate_fast;

use crate::probe::PROBE_LEN;
use crate::profile::Template;

/// One template as it is copied into a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The bytes of a buffer: link header, packet and padding (or the packet
    /// and its padding where each buffer is encapsulated).
    pub bytes: Vec<u8>,
    /// Where the probe's EEP header is in `bytes` (`None`: not a probe).
    pub probe_at: Option<usize>,
    /// The bytes copied from the front and from the back of `bytes` for
    /// each packet (a long probe's head and tail: [`SPARSE_FROM`]); the
    /// whole frame for anything else.
    pub head: usize,
    /// See `head`.
    pub tail: usize,
    /// Whether only `head` and `tail` are copied (read once per packet:
    /// kept, not computed).
    pub sparse: bool,
}

/// Frames at least this long are copied as head and tail (shorter ones
/// whole: a copy of a few cache lines costs less than two).
pub const SPARSE_FROM: usize = 256;

impl Frame {
    /// A frame whose packet starts at `at` in `bytes`.
    fn new(bytes: Vec<u8>, at: usize, probe_at: Option<usize>) -> Frame {
        let whole = bytes.len();
        let parts = probe_at.filter(|_| whole >= SPARSE_FROM).and_then(|p| {
            let lay = locate_fast(&bytes[at..], MAX_L2RHS).ok()?;
            let head = p + HEADER_LEN + PROBE_LEN;
            let trailer = at + lay.trailer_offset();
            (head <= trailer).then(|| (head, whole - trailer))
        });
        let (head, tail) = parts.unwrap_or((whole, 0));
        Frame {
            sparse: head + tail < whole,
            bytes,
            probe_at,
            head,
            tail,
        }
    }
}

/// The frames of a cycle and their running sums.
#[derive(Debug, Clone)]
pub struct Cycle {
    frames: Vec<Frame>,
    /// Whether each buffer still goes through `Port::encap`.
    encap_each: bool,
    /// Whether any frame is copied as head and tail.
    any_sparse: bool,
    /// Frame bytes on the wire of the first `i` templates (`len + 1` sums).
    bytes: Vec<u64>,
    /// Probes among the first `i` templates.
    probes: Vec<u64>,
}

impl Cycle {
    /// The cycle of `templates` (not empty) on a port whose link header is
    /// `link` (`None`: every buffer is encapsulated by the port).
    pub fn new(templates: &[Template], link: Option<&LinkHeader>) -> Cycle {
        assert!(!templates.is_empty(), "a cycle has a template");
        let frames: Vec<Frame> = templates
            .iter()
            .map(|t| match link {
                Some(h) => {
                    let mut bytes = Vec::with_capacity(h.bytes.len() + t.bytes.len());
                    bytes.extend_from_slice(&h.bytes);
                    bytes.extend_from_slice(&t.bytes);
                    if bytes.len() < h.min_frame {
                        bytes.resize(h.min_frame, 0);
                    }
                    let at = h.bytes.len();
                    Frame::new(bytes, at, t.hdr.map(|o| o + at))
                }
                None => Frame::new(t.bytes.clone(), 0, t.hdr),
            })
            .collect();
        let mut bytes = vec![0u64];
        let mut probes = vec![0u64];
        for t in templates {
            bytes.push(bytes[bytes.len() - 1] + t.frame_len as u64);
            probes.push(probes[probes.len() - 1] + u64::from(t.hdr.is_some()));
        }
        Cycle {
            any_sparse: frames.iter().any(|f| f.sparse),
            frames,
            encap_each: link.is_none(),
            bytes,
            probes,
        }
    }

    /// The frames, in cycle order.
    #[inline(always)]
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// Templates in the cycle.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Never: a cycle has at least one template.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Whether any frame is copied as head and tail ([`Frame::sparse`]).
    #[inline(always)]
    pub fn any_sparse(&self) -> bool {
        self.any_sparse
    }

    /// Whether each buffer goes through `Port::encap` after the copy.
    #[inline(always)]
    pub fn encap_each(&self) -> bool {
        self.encap_each
    }

    /// The template after `k` packets from template `first`.
    #[inline]
    pub fn after(&self, first: usize, k: usize) -> usize {
        (first + k % self.len()) % self.len()
    }

    /// (frame bytes, probes) of `k` packets from template `first`.
    #[inline]
    pub fn count(&self, first: usize, k: usize) -> (u64, u64) {
        (
            Self::sum(&self.bytes, first, k),
            Self::sum(&self.probes, first, k),
        )
    }

    /// The sum over `k` templates from `first` (wrapping) of the values
    /// whose running sums are `cum`.
    #[inline]
    fn sum(cum: &[u64], first: usize, k: usize) -> u64 {
        let n = cum.len() - 1;
        let whole = (k / n) as u64 * cum[n];
        let rest = k % n;
        let part = if first + rest <= n {
            cum[first + rest] - cum[first]
        } else {
            cum[n] - cum[first] + cum[first + rest - n]
        };
        whole + part
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrayvec::ArrayVec;
    use proptest::prelude::*;

    fn template(len: usize, probe: bool) -> Template {
        Template {
            bytes: vec![7; len],
            hdr: probe.then_some(0),
            frame_len: len + 14,
        }
    }

    #[test]
    fn frames_carry_the_link_header_and_padding() {
        let h = LinkHeader {
            bytes: ArrayVec::try_from(&[1u8; 14][..]).unwrap(),
            min_frame: 60,
        };
        let c = Cycle::new(&[template(40, true), template(100, false)], Some(&h));
        assert!(!c.encap_each());
        assert_eq!(c.frames()[0].bytes.len(), 60);
        assert_eq!(&c.frames()[0].bytes[..14], &[1u8; 14]);
        assert_eq!(&c.frames()[0].bytes[14..54], &[7u8; 40]);
        assert_eq!(&c.frames()[0].bytes[54..], &[0u8; 6]);
        assert_eq!(c.frames()[0].probe_at, Some(14));
        assert_eq!(
            (c.frames()[1].bytes.len(), c.frames()[1].probe_at),
            (114, None)
        );
        let plain = Cycle::new(&[template(40, true)], None);
        assert!(plain.encap_each());
        assert_eq!(plain.frames()[0].bytes, vec![7; 40]);
    }

    #[test]
    fn long_probes_are_copied_as_head_and_tail() {
        use crate::profile::{Profile, Sizes};
        let h = LinkHeader {
            bytes: ArrayVec::try_from(&[1u8; 14][..]).unwrap(),
            min_frame: 60,
        };
        let ts = Profile {
            sizes: Sizes::List(vec![64, 1500]),
            ..Profile::default()
        }
        .build(rrp::LinkKind::Ethernet, 1)
        .unwrap();
        let c = Cycle::new(&ts, Some(&h));
        let (short, long) = (&c.frames()[0], &c.frames()[1]);
        assert!(!short.sparse);
        assert_eq!((short.head, short.tail), (64, 0));
        assert!(long.sparse);
        // Link header, EEP header, the probe's word; trailer and the 6
        // bytes of frame padding (1,486 bytes hold a packet of 1,480).
        assert_eq!((long.head, long.tail), (14 + 16 + 8, 8 + 6));
        // What is not copied is data: zeros in the template.
        assert!(
            long.bytes[long.head..1500 - long.tail]
                .iter()
                .all(|&b| b == 0)
        );
    }

    proptest! {
        /// The running sums agree with a walk over the cycle.
        #[test]
        fn counts_agree_with_a_walk(
            cycle in prop::collection::vec((1usize..200, any::<bool>()), 1..12),
            first in 0usize..12,
            k in 0usize..100,
        ) {
            let ts: Vec<_> = cycle.iter().map(|&(l, p)| template(l, p)).collect();
            let c = Cycle::new(&ts, None);
            let first = first % ts.len();
            let (mut bytes, mut probes, mut i) = (0u64, 0u64, first);
            for _ in 0..k {
                bytes += ts[i].frame_len as u64;
                probes += u64::from(ts[i].hdr.is_some());
                i = (i + 1) % ts.len();
            }
            prop_assert_eq!(c.count(first, k), (bytes, probes));
            prop_assert_eq!(c.after(first, k), i);
        }
    }
}
