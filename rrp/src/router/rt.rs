//! An RT as one HR holds it (Part-2 "Routing tables"): the node entries,
//! the common source route to the mapper, its Q and MinMTU, the RCVF and SN;
//! and the RTs an HR learned from its buddies.

use std::collections::HashMap;
use std::sync::Arc;

use crate::address::Address;
use crate::port::PortId;
use crate::route::Route;
use crate::wire::message::NodeInfo;
use crate::wire::record::Mtu;

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
    pub nodes: Arc<Vec<NodeEntry>>,
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

#[derive(Debug, Clone)]
pub(super) struct Learned {
    pub(super) rt: Rt,
    pub(super) from: Address,
    pub(super) expires: Time,
}

/// Keeps `counts` (learned RTs per buddy) right after a list of learned
/// RTs went from senders `before` to `after`.
pub(super) fn recount(counts: &mut HashMap<Address, usize>, before: &[Address], after: &[Learned]) {
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
