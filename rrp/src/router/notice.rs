//! Notices: what the forwarding path tells the router engine about a packet
//! it could not forward as asked (docs/architecture.md "Threads and data
//! flow"). The engine answers them under the error manners of
//! docs/rrp.md: ERR UNK for no route, RRP#3 for a packet sent back onto its
//! own SAN, ERR GENERAL for a packet too large for the egress SAN or one
//! the partitions refused.
//!
//! A notice is a small `Copy` value that carries the packet's first
//! [`NOTICE_BYTES`] bytes, not the packet: it travels from a worker to the
//! control thread over a bounded ring without allocation.

use crate::native::NativeAddr;
use crate::port::PortId;
use crate::wire::header::{HEADER_LEN, Header};

/// Bytes of a packet a notice carries.
pub const NOTICE_BYTES: usize = 128;

/// What a notice reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoticeKind {
    /// No route for the destination: the engine may answer with ERR UNK.
    NoRoute,
    /// Larger than the egress SAN's MTU: the engine may answer with ERR GENERAL.
    Mtu,
    /// Forwarded back onto the SAN it came from: the engine may answer with RRP#3.
    Redirect,
    /// A group packet from a router that the box does not take as the
    /// designated forwarder of that SAN (or on a SAN the box forwards onto
    /// itself): the two disagree about the RTs, and the engine asks that
    /// router for its RTs again (docs/multicast.md "Repair").
    McastConflict,
    /// Refused by the partitions at a boundary between SANs
    /// (docs/partitions.md "At the routers"): the engine may answer the
    /// source with ERR GENERAL (docs/spec-notes.md 77).
    Partition,
}

/// A notice: the first bytes of a packet and what happened to it.
#[derive(Clone, Copy)]
pub struct Notice {
    /// What happened.
    pub kind: NoticeKind,
    /// The ingress port.
    pub in_port: PortId,
    /// The egress port (Mtu, Redirect, Partition), or the ingress port.
    pub out_port: PortId,
    /// The packet's native source on the ingress SAN.
    pub native_src: NativeAddr,
    /// The next hop's native address (Redirect, Mtu on L3; empty otherwise).
    pub next_hop: NativeAddr,
    /// The packet's length as received (from its first L2RH or header to its trailer).
    pub packet_len: u32,
    /// The MTU that was exceeded (Mtu).
    pub mtu: u32,
    /// Where the EEP header starts in the packet (after its L2RHs).
    pub header_offset: u16,
    len: u16,
    bytes: [u8; NOTICE_BYTES],
}

impl Notice {
    /// A notice about `packet`, whose EEP header starts at `header_offset`,
    /// carrying its first [`NOTICE_BYTES`] bytes.
    pub fn new(
        kind: NoticeKind,
        in_port: PortId,
        out_port: PortId,
        native_src: NativeAddr,
        packet: &[u8],
        header_offset: usize,
    ) -> Notice {
        let n = packet.len().min(NOTICE_BYTES);
        let mut bytes = [0u8; NOTICE_BYTES];
        bytes[..n].copy_from_slice(&packet[..n]);
        Notice {
            kind,
            in_port,
            out_port,
            native_src,
            next_hop: NativeAddr::NONE,
            packet_len: u32::try_from(packet.len()).unwrap_or(u32::MAX),
            mtu: 0,
            header_offset: u16::try_from(header_offset).unwrap_or(u16::MAX),
            len: n as u16,
            bytes,
        }
    }

    /// The packet's first bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The packet's EEP header, when the bytes the notice carries reach past it.
    pub fn header(&self) -> Option<Header<&[u8]>> {
        let at = self.header_offset as usize;
        self.bytes()
            .get(at..at + HEADER_LEN)
            .map(Header::new_unchecked)
    }
}

impl core::fmt::Debug for Notice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Notice")
            .field("kind", &self.kind)
            .field("in_port", &self.in_port)
            .field("out_port", &self.out_port)
            .field("native_src", &self.native_src)
            .field("next_hop", &self.next_hop)
            .field("packet_len", &self.packet_len)
            .field("mtu", &self.mtu)
            .field("header_offset", &self.header_offset)
            .field("bytes", &self.bytes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carries_the_first_bytes_and_finds_the_header() {
        let mut p = vec![0u8; 200];
        p[8 + 3] = 5;
        let n = Notice::new(
            NoticeKind::NoRoute,
            PortId(1),
            PortId(1),
            NativeAddr::NONE,
            &p,
            8,
        );
        assert_eq!(n.bytes().len(), NOTICE_BYTES);
        assert_eq!(n.packet_len, 200);
        assert_eq!(n.header().unwrap().version(), 5);
        // A header past the carried bytes is not there.
        let n = Notice::new(
            NoticeKind::Mtu,
            PortId(0),
            PortId(1),
            NativeAddr::NONE,
            &p,
            120,
        );
        assert!(n.header().is_none());
    }
}
