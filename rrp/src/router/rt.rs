//! RTs as the engine holds them (Part-2 "Routing tables"), compactly.
//!
//! A box keeps up to k RTs per SAN and HR: thousands per HR in a large
//! MessageWay. What differs between the copies of one RT is small, so an RT
//! is held in three parts:
//! - [`NodeList`]: the node entries (address, name, capabilities, route
//!   from the mapper), with a sorted index and their encoded records, shared
//!   by every RT that carries the same list (the RTs of one SAN and SN
//!   arrive by several paths);
//! - [`RtBody`]: the RT exactly as a buddy advertised it (SAN-ID, SN, CSR
//!   and Q as sent, R6, RCVF as sent, the node list), shared by every HR
//!   that learned that advertisement;
//! - [`Learned`]: what one HR adds (about 48 bytes): the buddy it came from
//!   (the RCVF's first element), the buddy's native address (the CSR's
//!   first hop, inline, since ranking and FIBs read it for every RT), the
//!   Q and MTU as this HR counts them, and when it expires.
//!
//! [`Rt`] is the whole RT as one HR sees it, built when asked for (`mwctl`,
//! tests, answers to requests).

use std::ops::Deref;
use std::sync::Arc;

use crate::address::Address;
use crate::fxhash::FxHashMap;
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::route::Route;
use crate::wire::hop::RouterHop;
use crate::wire::message::{NodeInfo, RtNode, emit_rt_node};
use crate::wire::record::{Mtu, SourceRoute};

use super::engine::*;

/// A node entry of an RT: who, and the route from the mapper to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeEntry {
    /// Address, name, capabilities, logical addresses.
    pub info: NodeInfo,
    /// The route from the HR that made the LRT to this node.
    pub route: Route,
    /// Its Q.
    pub q: u16,
}

impl NodeEntry {
    /// Its route as an RRP#9's node record carries it (an R5, no MTU).
    pub(super) fn source_route(&self) -> SourceRoute {
        SourceRoute {
            q: self.q,
            route: self.route.to_l2rhs(),
            mtu: None,
        }
    }

    /// The entry as an RRP#9 carries it.
    pub(super) fn rt_node(&self) -> RtNode {
        RtNode {
            info: self.info.clone(),
            route: self.source_route(),
        }
    }
}

/// The node entries of an RT, with an index by address and their records
/// as RRP#9 carries them.
#[derive(Debug, Clone)]
pub struct NodeList {
    entries: Vec<NodeEntry>,
    /// (address, index in `entries`), sorted by address.
    index: Box<[(Address, u32)]>,
    /// The node records (R1, R2, R3s, R4, R5 of each node), in order.
    encoded: Box<[u8]>,
    /// Whether a node lists a logical address (R4): multicast state is
    /// computed only when some list does.
    has_logical: bool,
}

impl NodeList {
    /// A node list from its entries (their records are encoded here).
    pub fn new(entries: Vec<NodeEntry>) -> NodeList {
        let mut encoded = Vec::new();
        for n in &entries {
            let route = n.source_route();
            // A node entry that cannot be encoded (a name too long for an
            // R2) is left out of the encoding, as it would be of an RRP#9.
            let mut one = Vec::new();
            if emit_rt_node(&n.info, &route, &mut one).is_ok() {
                encoded.extend_from_slice(&one);
            }
        }
        NodeList::with_encoding(entries, encoded)
    }

    /// A node list from its entries and the records they were parsed from.
    pub(super) fn with_encoding(entries: Vec<NodeEntry>, encoded: Vec<u8>) -> NodeList {
        let mut index: Vec<(Address, u32)> = entries
            .iter()
            .enumerate()
            .map(|(i, n)| (n.info.address, i as u32))
            .collect();
        index.sort_unstable();
        let has_logical = entries
            .iter()
            .any(|n| n.info.logical.as_ref().is_some_and(|l| !l.is_empty()));
        NodeList {
            entries,
            index: index.into(),
            encoded: encoded.into(),
            has_logical,
        }
    }

    /// The entry of `address` (the first, if listed twice).
    pub fn find(&self, address: Address) -> Option<&NodeEntry> {
        let i = self.index.partition_point(|(a, _)| *a < address);
        match self.index.get(i) {
            Some((a, at)) if *a == address => Some(&self.entries[*at as usize]),
            _ => None,
        }
    }

    /// (address, index of its entry), sorted by address.
    pub(super) fn index(&self) -> &[(Address, u32)] {
        &self.index
    }

    /// The listed addresses, sorted.
    pub fn addresses(&self) -> impl Iterator<Item = Address> + '_ {
        self.index.iter().map(|(a, _)| *a)
    }

    /// Whether a node of the list listens to a logical address (R4).
    pub fn has_logical(&self) -> bool {
        self.has_logical
    }

    /// The node records, as RRP#9 carries them.
    pub fn encoded(&self) -> &[u8] {
        &self.encoded
    }
}

impl Deref for NodeList {
    type Target = [NodeEntry];
    fn deref(&self) -> &[NodeEntry] {
        &self.entries
    }
}

impl PartialEq for NodeList {
    fn eq(&self, o: &NodeList) -> bool {
        self.entries == o.entries
    }
}

impl Eq for NodeList {}

/// An RT as one HR holds it (Part-2 "Routing tables").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rt {
    /// The SAN it describes.
    pub san_id: Address,
    /// Serial number, assigned by the HR that made the LRT.
    pub sn: u16,
    /// Common source route from this HR to that HR.
    pub csr: Route,
    /// Q of the CSR.
    pub q: u16,
    /// MinMTU along the CSR and the mapped SAN.
    pub mtu: Mtu,
    /// Received-from list, most recent sender first.
    pub rcvf: Vec<Address>,
    /// The node entries.
    pub nodes: Arc<NodeList>,
}

/// Where an RT an HR keeps came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// From buddy `from` on the HR's SAN.
    Buddy {
        /// The buddy.
        from: Address,
    },
    /// Derived from twin `port`'s LRT or learned RTs.
    Twin {
        /// The twin's port.
        port: PortId,
    },
}

/// An RT as a buddy advertised it in one RRP#9: the same for every HR that
/// learned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RtBody {
    pub(super) san_id: Address,
    pub(super) sn: u16,
    /// The CSR's Q as sent.
    pub(super) q: u16,
    /// The CSR's R6 as sent.
    pub(super) mtu: Option<Mtu>,
    /// The CSR as sent (from the sender onward).
    pub(super) csr: Box<[RouterHop]>,
    /// The RCVF as sent (without the sender).
    pub(super) rcvf: Box<[Address]>,
    pub(super) nodes: NodesRef,
}

impl std::hash::Hash for RtBody {
    /// The fields that tell bodies apart in practice (the CSR follows from
    /// the path the RCVF names); equality compares the rest.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.san_id.hash(h);
        self.sn.hash(h);
        self.q.hash(h);
        self.rcvf.hash(h);
        self.nodes.hash(h);
    }
}

/// A shared node list, compared and hashed by identity (lists are
/// interned: equal lists are the same list).
#[derive(Debug, Clone)]
pub(super) struct NodesRef(pub(super) Arc<NodeList>);

impl PartialEq for NodesRef {
    fn eq(&self, o: &NodesRef) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}

impl Eq for NodesRef {}

impl std::hash::Hash for NodesRef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(h);
    }
}

/// An RT one HR learned from a buddy.
#[derive(Debug, Clone)]
pub(super) struct Learned {
    pub(super) body: Arc<RtBody>,
    /// The buddy that sent it: the first element of the RCVF as held.
    pub(super) from: Address,
    /// The buddy's native address: the first hop of the CSR as held.
    pub(super) native: NativeAddr,
    /// Q of the CSR as held (the SAN crossed to the buddy included).
    pub(super) q: u16,
    /// MinMTU as held (this HR's SAN included).
    pub(super) mtu: Mtu,
    pub(super) expires: Time,
}

impl Learned {
    /// Whether the RCVF as held (the buddy, then the RCVF as sent) is
    /// `from` followed by `rcvf`.
    pub(super) fn same_rcvf(&self, from: Address, rcvf: &[Address]) -> bool {
        self.from == from && *self.body.rcvf == *rcvf
    }

    /// The RCVF as held.
    pub(super) fn rcvf(&self) -> Vec<Address> {
        let mut v = Vec::with_capacity(self.body.rcvf.len() + 1);
        v.push(self.from);
        v.extend_from_slice(&self.body.rcvf);
        v
    }

    /// The CSR as held: the buddy's native address, then the CSR as sent.
    pub(super) fn csr(&self) -> Route {
        Route(vec![RouterHop::native(self.native)]).catenate(&Route(self.body.csr.to_vec()))
    }

    /// The whole RT as this HR holds it.
    pub(super) fn rt(&self) -> Rt {
        Rt {
            san_id: self.body.san_id,
            sn: self.body.sn,
            csr: self.csr(),
            q: self.q,
            mtu: self.mtu,
            rcvf: self.rcvf(),
            nodes: self.body.nodes.0.clone(),
        }
    }
}

/// Keeps `counts` (learned RTs per buddy) right after a list of learned
/// RTs went from senders `before` to `after`.
pub(super) fn recount(
    counts: &mut FxHashMap<Address, usize>,
    before: &[Address],
    after: &[Learned],
) {
    for b in before {
        if let Some(c) = counts.get_mut(b) {
            *c -= 1;
            if *c == 0 {
                counts.remove(b);
            }
        }
    }
    for l in after {
        *counts.entry(l.from).or_default() += 1;
    }
}

/// Counts one learned RT from `from` less in `counts`.
pub(super) fn uncount(counts: &mut FxHashMap<Address, usize>, from: Address) {
    if let Some(c) = counts.get_mut(&from) {
        *c -= 1;
        if *c == 0 {
            counts.remove(&from);
        }
    }
}

/// The senders of a list of learned RTs.
pub(super) fn senders(list: &[Learned]) -> Vec<Address> {
    list.iter().map(|l| l.from).collect()
}

pub(super) fn mtu_words(bytes: u32) -> Mtu {
    if bytes == 0 {
        Mtu::UNLIMITED
    } else {
        Mtu::from_bytes(bytes as usize)
    }
}

/// The smaller of two MTUs in bytes, 0 counting as unlimited.
pub(super) fn min_mtu(a: u32, b: u32) -> u32 {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(a: u16, q: u16) -> NodeEntry {
        NodeEntry {
            info: NodeInfo {
                address: Address(a),
                name: Some(b"n".to_vec()),
                ..Default::default()
            },
            route: Route(vec![RouterHop::native(NativeAddr::mac([
                2, 0, 0, 0, 0, a as u8,
            ]))]),
            q,
        }
    }

    #[test]
    fn a_node_list_finds_by_address_and_keeps_its_order_and_records() {
        let l = NodeList::new(vec![node(0x300, 0), node(0x100, 1), node(0x200, 1)]);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].info.address, Address(0x300), "order kept");
        assert_eq!(l.find(Address(0x200)).unwrap().q, 1);
        assert!(l.find(Address(0x250)).is_none());
        assert_eq!(
            l.addresses().collect::<Vec<_>>(),
            vec![Address(0x100), Address(0x200), Address(0x300)]
        );
        // The records are those RRP#9 carries for these entries.
        let mut want = Vec::new();
        for n in l.iter() {
            let r = SourceRoute {
                q: n.q,
                route: n.route.to_l2rhs(),
                mtu: None,
            };
            emit_rt_node(&n.info, &r, &mut want).unwrap();
        }
        assert_eq!(l.encoded(), &want[..]);
    }
}
