//! A message's bytes while it is in flight, an RRP#9's node records kept
//! once.
//!
//! Every router advertises in the same millisecond, so a whole round of
//! RRP#9s is in flight at once, and most of each one's bytes are its node
//! records (85 % at 60/120 with 5 hosts a SAN): the same records in every
//! RT of a SAN, which the routers' interner holds once already
//! ([`Interner::rrp9_node_list`]). A message in flight keeps the rest of
//! its bytes and a reference to that list; its recipient gets the bytes
//! whole, as they were sent.

use std::sync::Arc;

use rrp::Address;
use rrp::router::{Interner, NodeList};
use rrp::wire::{HEADER_LEN, Header};

/// The bytes of a message in flight.
#[derive(Debug, Clone)]
pub(super) struct Payload {
    /// The bytes, but for the node records when `nodes` holds them.
    bytes: Arc<[u8]>,
    /// Where the node records were cut out of the bytes, and their list.
    nodes: Option<(usize, Arc<NodeList>)>,
}

impl Payload {
    /// `bytes` as they are.
    pub(super) fn whole(bytes: impl Into<Arc<[u8]>>) -> Payload {
        Payload {
            bytes: bytes.into(),
            nodes: None,
        }
    }

    /// `packet`, its node records left to the list the routers hold when
    /// it is a whole RRP#9 whose list they hold.
    pub(super) fn sharing_nodes(packet: Arc<[u8]>, interner: &Interner) -> Payload {
        let Some((at, list)) = interner.rrp9_node_list(&packet) else {
            return Payload::whole(packet);
        };
        let end = at + list.encoded().len();
        let mut rest = Vec::with_capacity(packet.len() - list.encoded().len());
        rest.extend_from_slice(&packet[..at]);
        rest.extend_from_slice(&packet[end..]);
        Payload {
            bytes: rest.into(),
            nodes: Some((at, list)),
        }
    }

    /// Its length on the wire.
    pub(super) fn len(&self) -> usize {
        self.bytes.len() + self.nodes.as_ref().map_or(0, |(_, l)| l.encoded().len())
    }

    /// Whether `other` is this very payload (not only equal bytes).
    pub(super) fn same(&self, other: &Payload) -> bool {
        Arc::ptr_eq(&self.bytes, &other.bytes)
    }

    /// The bytes as sent, into `out` (cleared first), the destination
    /// address set to `dst` when given.
    pub(super) fn write(&self, dst: Option<Address>, out: &mut Vec<u8>) {
        out.clear();
        match &self.nodes {
            None => out.extend_from_slice(&self.bytes),
            Some((at, list)) => {
                out.reserve(self.len());
                out.extend_from_slice(&self.bytes[..*at]);
                out.extend_from_slice(list.encoded());
                out.extend_from_slice(&self.bytes[*at..]);
            }
        }
        if let Some(d) = dst
            && out.len() >= HEADER_LEN
        {
            Header::new_unchecked(&mut out[..HEADER_LEN]).set_dst(d);
        }
    }

    /// The bytes as sent, with the destination address `dst` when given.
    pub(super) fn to_vec(&self, dst: Option<Address>) -> Vec<u8> {
        let mut v = Vec::new();
        self.write(dst, &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_come_back_whole_with_the_destination_set() {
        let mut p = vec![0u8; HEADER_LEN];
        p.extend_from_slice(b"records!");
        p.extend_from_slice(&[9; 8]);
        let w = Payload::whole(p.clone());
        assert_eq!(w.len(), p.len());
        assert_eq!(w.to_vec(None), p);
        let mut want = p.clone();
        Header::new_unchecked(&mut want[..HEADER_LEN]).set_dst(Address(0x0123));
        assert_eq!(w.to_vec(Some(Address(0x0123))), want);
        assert!(w.same(&w.clone()));
        assert!(!w.same(&Payload::whole(p.clone())));
        // Not an RRP#9: kept whole.
        let i = Interner::new();
        let s = Payload::sharing_nodes(p.clone().into(), &i);
        assert!(s.nodes.is_none());
        assert_eq!(s.to_vec(None), p);
    }
}
