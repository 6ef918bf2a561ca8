//! Captures: `--write-pcap` writes a profile's packets as frames for any
//! replay tool (DPDK's net_pcap, tcpreplay); `--pcap` reads frames back as
//! templates to send.

use mwdump::capture::{self, PcapWriter};
use mwdump::link::{self, Link};
use rrp::LinkKind;
use rrp::encap;
use rrp::limits::MAX_L2RHS;
use rrp::wire::Header;
use rrp::wire::packet::locate;

use crate::probe::{self, PROBE_PT};
use crate::profile::{Template, link_overhead};

/// The link type of a written capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PcapLink {
    /// Ethernet II frames, EtherType 0x88B5 (LINKTYPE_ETHERNET).
    Ethernet {
        /// Destination MAC (the router's HR).
        dst: [u8; 6],
        /// Source MAC.
        src: [u8; 6],
    },
    /// Bare MessageWay packets (LINKTYPE_USER0).
    Raw,
}

/// Writes `count` packets of the cycle `templates` (sequence numbers 0, 1,
/// ..., untimed: a file has no transmit time to give; one microsecond apart
/// in the file's timestamps).
/// Ethernet frames keep the profile's frame sizes.
pub fn write(templates: &[Template], count: u64, link: PcapLink) -> Vec<u8> {
    let mut w = PcapWriter::in_memory(match link {
        PcapLink::Ethernet { .. } => encap::LINKTYPE_ETHERNET,
        PcapLink::Raw => encap::LINKTYPE_MESSAGEWAY,
    });
    let mut frame = Vec::new();
    let mut seq = 0u64;
    for i in 0..count {
        let t = &templates[(i % templates.len() as u64) as usize];
        frame.clear();
        if let PcapLink::Ethernet { dst, src } = link {
            frame.extend_from_slice(&dst);
            frame.extend_from_slice(&src);
            frame.extend_from_slice(&encap::ETHERTYPE.to_be_bytes());
        }
        let at = frame.len();
        frame.extend_from_slice(&t.bytes);
        if let Some(h) = t.hdr {
            probe::patch_untimed(&mut frame[at..], h, seq);
            seq += 1;
        }
        w.push((i / 1_000_000) as u32, (i % 1_000_000) as u32, &frame);
    }
    w.finish()
}

/// Why a capture cannot be replayed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PcapError {
    /// Not a pcap or pcapng file mwdump reads.
    #[error("{0}")]
    Capture(capture::CaptureError),
    /// A frame of a link type mwgen does not take apart.
    #[error("frame {frame}: link type {linktype} is not one mwgen reads")]
    LinkType {
        /// The frame, from 1.
        frame: usize,
        /// Its link type.
        linktype: u32,
    },
    /// A frame whose link headers do not lead to a MessageWay packet.
    #[error("frame {frame}: {message}")]
    Link {
        /// The frame, from 1.
        frame: usize,
        /// What is wrong (mwdump's words).
        message: String,
    },
    /// A frame that does not hold a MessageWay packet.
    #[error("frame {frame}: not a MessageWay packet: {error}")]
    Packet {
        /// The frame, from 1.
        frame: usize,
        /// The packet's error.
        error: rrp::Error,
    },
    /// No frames.
    #[error("the capture holds no frames")]
    Empty,
    /// Frames, then damage.
    #[error("the capture is damaged: {0}")]
    Damaged(capture::CaptureError),
}

/// Reads a capture's frames as templates for a transmit port of kind
/// `link`: the MessageWay packet of each frame (link header removed, frame
/// padding kept). Probes get fresh sequence numbers and times when sent;
/// other packets go as they are.
pub fn read(bytes: &[u8], tx_link: LinkKind) -> Result<Vec<Template>, PcapError> {
    let cap = capture::read(bytes).map_err(PcapError::Capture)?;
    let (hdr_len, min) = link_overhead(tx_link);
    let mut out = Vec::with_capacity(cap.frames.len());
    for (i, f) in cap.frames.iter().enumerate() {
        let frame = i + 1;
        let l = Link::from_linktype(f.linktype).ok_or(PcapError::LinkType {
            frame,
            linktype: f.linktype,
        })?;
        let at = link::locate(l, &f.data).map_err(|e| PcapError::Link {
            frame,
            message: e.1.message,
        })?;
        let pkt = f.data[at.start..at.end].to_vec();
        let lay = locate(&pkt, MAX_L2RHS).map_err(|error| PcapError::Packet { frame, error })?;
        let h = lay.header_offset;
        let pt = Header::new_unchecked(&pkt[h..]).packet_type().0;
        let is_probe = pt == PROBE_PT && lay.data_len >= probe::PROBE_LEN;
        out.push(Template {
            frame_len: (pkt.len() + hdr_len).max(min),
            bytes: pkt,
            hdr: is_probe.then_some(h),
        });
    }
    if out.is_empty() {
        return Err(PcapError::Empty);
    }
    if let Some(e) = cap.error {
        return Err(PcapError::Damaged(e));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Profile, Sizes, parse_hop};

    #[test]
    fn written_frames_read_back_with_their_sizes() {
        let p = Profile {
            sizes: Sizes::Imix,
            l2: vec![parse_hop("0x0102@02:00:00:00:02:30").unwrap()],
            ..Profile::default()
        };
        let t = p.build(LinkKind::Ethernet, 3).unwrap();
        let link = PcapLink::Ethernet {
            dst: [2, 0, 0, 0, 1, 1],
            src: [2, 0, 0, 0, 1, 0x30],
        };
        let file = write(&t, 24, link);
        let cap = capture::read(&file).unwrap();
        assert_eq!(cap.frames.len(), 24);
        for (i, f) in cap.frames.iter().enumerate() {
            assert_eq!(f.data.len(), t[i % 12].frame_len);
            assert_eq!(&f.data[12..14], &[0x88, 0xB5]);
            match probe::read(&f.data[14..]) {
                probe::Received::Probe(pr) => assert_eq!(pr.seq32, i as u32),
                r => panic!("{r:?}"),
            }
        }
        let back = read(&file, LinkKind::Ethernet).unwrap();
        assert_eq!(back.len(), 24);
        assert_eq!(back[0].frame_len, 64);
        assert_eq!(back[6].frame_len, 1500);
        assert!(back.iter().all(|t| t.hdr == Some(16)));
        let raw = write(&t, 2, PcapLink::Raw);
        assert_eq!(read(&raw, LinkKind::Udp).unwrap()[0].bytes, t[0].bytes);
    }

    #[test]
    fn bad_captures_are_errors() {
        assert!(read(b"not a capture", LinkKind::Ethernet).is_err());
        let mut w = PcapWriter::in_memory(encap::LINKTYPE_MESSAGEWAY);
        w.push(0, 0, &[0xFF, 0xFF, 0]);
        let e = read(&w.finish(), LinkKind::Ethernet).unwrap_err();
        assert!(matches!(e, PcapError::Packet { frame: 1, .. }), "{e}");
        assert!(e.to_string().contains("frame 1"), "{e}");
    }
}
