//! The HR's own SAN (Part-2: "each HR has an RT for its own SAN (aka Local
//! Routing Table, LRT)"): static entries, discovery by RRP#7 sweeps answered
//! with RRP#5, keepalives (docs/spec-notes.md 49), and the LRT as the RT the
//! HR's twins derive from.

use std::fmt;
use std::sync::Arc;

use crate::address::Address;
use crate::kind::CapabilityCode;
use crate::native::NativeAddr;
use crate::node::{MAX_GROUPS, MAX_NAME};
use crate::port::PortId;
use crate::route::Route;
use crate::router::config::StaticNode;
use crate::router::event::Event;
use crate::wire::hop::RouterHop;
use crate::wire::message::{Message, NodeInfo};
use crate::wire::record::Capability;

use super::engine::*;
use super::rt::*;

/// Why [`Router::add_static`] refused a static LRT entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaticRefusal {
    /// The box has no such port.
    NoSuchPort,
    /// The address is not a node address.
    NotANode,
    /// The address is one of the box's HRs.
    OwnAddress,
    /// A group that is not a logical address.
    NotLogical(Address),
    /// More groups than a node's R4 carries (how many).
    TooManyGroups(usize),
    /// A name longer than [`MAX_NAME`] (its length).
    NameTooLong(usize),
    /// A new entry, and the LRT holds `limits.max_lrt` entries already
    /// (the limit).
    LrtFull(usize),
}

impl fmt::Display for StaticRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StaticRefusal::NoSuchPort => write!(f, "no such port"),
            StaticRefusal::NotANode => write!(f, "not a node address (0x0040-0x7FFF)"),
            StaticRefusal::OwnAddress => write!(f, "an HR of this box"),
            StaticRefusal::NotLogical(g) => {
                write!(f, "group {g}: not a logical address (0x8000-0xFFFD)")
            }
            StaticRefusal::TooManyGroups(n) => {
                write!(
                    f,
                    "{n} groups, more than the {MAX_GROUPS} a node listens to"
                )
            }
            StaticRefusal::NameTooLong(n) => {
                write!(f, "a name of {n} bytes, longer than {MAX_NAME}")
            }
            StaticRefusal::LrtFull(max) => {
                write!(f, "the LRT holds limits.max_lrt = {max} entries already")
            }
        }
    }
}

impl std::error::Error for StaticRefusal {}

/// A node in an LRT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LrtEntry {
    /// What it reported about itself (or what the configuration says).
    pub info: NodeInfo,
    /// Its native address on the SAN.
    pub native: NativeAddr,
    /// Entered by configuration: exempt from keepalives.
    pub is_static: bool,
    /// A router HR (capability 2): a buddy.
    pub router: bool,
    /// Keepalives sent since it last answered.
    pub missed: u32,
}

impl Router {
    pub(super) fn my_info(&self, port: PortId) -> NodeInfo {
        let h = &self.cfg.hrs[port];
        let mut sans = vec![h.san_id];
        sans.extend(
            self.cfg
                .hrs
                .iter()
                .map(|o| o.san_id)
                .filter(|s| *s != h.san_id),
        );
        NodeInfo {
            address: h.address,
            name: Some(format!("{}/{}", self.cfg.name, port).into_bytes()),
            capabilities: vec![Capability {
                code: CapabilityCode::Router as u8,
                params: sans.iter().flat_map(|s| s.0.to_be_bytes()).collect(),
            }],
            logical: None,
        }
    }

    pub(super) fn lrt_nodes(&mut self, port: PortId) -> Arc<NodeList> {
        if let Some(n) = &self.hrs[port].lrt_nodes {
            return n.clone();
        }
        let cost = self.cfg.hrs[port].cost;
        let mut v = vec![NodeEntry {
            info: self.my_info(port),
            route: Route::empty(),
            q: 0,
        }];
        for e in self.hrs[port].lrt.values() {
            v.push(NodeEntry {
                info: e.info.clone(),
                route: Route(vec![RouterHop::native(e.native)]),
                q: cost,
            });
        }
        let a = self.interner.add_node_list(NodeList::new(v));
        self.hrs[port].lrt_nodes = Some(a.clone());
        a
    }

    pub(super) fn lrt_rt(&self, port: PortId) -> Option<Rt> {
        let h = &self.hrs[port];
        Some(Rt {
            san_id: self.cfg.hrs[port].san_id,
            sn: h.lrt_sn,
            csr: Route::empty(),
            q: 0,
            mtu: mtu_words(self.cfg.hrs[port].mtu),
            rcvf: Vec::new(),
            nodes: h.lrt_nodes.clone()?,
        })
    }

    pub(super) fn lrt_changed(&mut self, port: PortId) {
        self.lrt_changes += 1;
        let h = &mut self.hrs[port];
        h.lrt_sn = h.lrt_sn.wrapping_add(1);
        h.lrt_nodes = None;
        self.lrt_nodes(port);
        let san = self.cfg.hrs[port].san_id;
        for t in self.hrs.ids() {
            if t != port {
                self.hrs[t].dirty.insert(san);
            }
        }
        self.fib_san_changed(san);
    }

    pub(super) fn handle_info(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        sa: Address,
        nodes: &[NodeInfo],
    ) {
        let _ = now;
        // Only an RRP#5 about its own sender describes a node on this SAN.
        let Some(me) = nodes.first() else { return };
        if me.address != sa || !sa.is_node() || self.box_has(sa) || native.is_empty() {
            return;
        }
        // A probed HR answered: a third party's HR-DOWN about it is void.
        if !self.probes.is_empty() {
            self.probe_answered(sa);
        }
        let router = me
            .capabilities
            .iter()
            .any(|c| c.code == CapabilityCode::Router as u8);
        // At most MAX_GROUPS logical addresses per node, and only logical
        // ones: what one node can make every router of the MessageWay hold
        // (docs/multicast.md "Bounds").
        let mut me = me.clone();
        if let Some(l) = me.logical.as_mut() {
            let before = l.len();
            l.retain(|a| a.is_logical());
            l.sort_unstable();
            l.dedup();
            l.truncate(crate::node::MAX_GROUPS);
            if l.len() != before {
                self.event(Event::GroupsTrimmed {
                    port,
                    node: sa,
                    listed: before,
                    kept: l.len(),
                });
            }
            if l.is_empty() {
                me.logical = None;
            }
        }
        let me = &me;
        let h = &mut self.hrs[port];
        match h.lrt.get_mut(&sa) {
            Some(e) => {
                e.missed = 0;
                let changed = e.info != *me || e.native != *native || e.router != router;
                if changed && !e.is_static {
                    e.info = me.clone();
                    e.native = *native;
                    e.router = router;
                    self.lrt_changed(port);
                }
            }
            None => {
                if h.lrt.len() >= self.cfg.limits.max_lrt {
                    return;
                }
                h.lrt.insert(
                    sa,
                    LrtEntry {
                        info: me.clone(),
                        native: *native,
                        is_static: false,
                        router,
                        missed: 0,
                    },
                );
                // A buddy that answers again is no longer down.
                self.tombstones.remove(&sa);
                self.lrt_changed(port);
                self.event(Event::NodeUp {
                    port,
                    node: sa,
                    router,
                });
                if router {
                    // Neighbour up: ask for its RTs and give it ours.
                    self.send_msg(port, *native, sa, &Message::RtRequest, 0);
                    self.hrs[port].full_to.insert(sa);
                }
            }
        }
    }

    /// Adds (or replaces) a static LRT entry on HR `port` (Level-A/B
    /// nodes; exempt from keepalives). Refused for a bad port or address, a
    /// group that is not logical, more than [`MAX_GROUPS`] groups, a name
    /// longer than [`MAX_NAME`], and a new entry when the LRT holds
    /// `limits.max_lrt` entries already (as a learned one is): what the
    /// daemon's admin socket can make the LRT hold is bounded as what a
    /// SAN can.
    pub fn add_static(&mut self, port: PortId, node: StaticNode) -> Result<(), StaticRefusal> {
        if !self.hrs.has(port) {
            return Err(StaticRefusal::NoSuchPort);
        }
        if !node.address.is_node() {
            return Err(StaticRefusal::NotANode);
        }
        if self.box_has(node.address) {
            return Err(StaticRefusal::OwnAddress);
        }
        if let Some(g) = node.groups.iter().find(|g| !g.is_logical()) {
            return Err(StaticRefusal::NotLogical(*g));
        }
        if node.groups.len() > MAX_GROUPS {
            return Err(StaticRefusal::TooManyGroups(node.groups.len()));
        }
        if let Some(n) = node.name.as_ref().filter(|n| n.len() > MAX_NAME) {
            return Err(StaticRefusal::NameTooLong(n.len()));
        }
        let lrt = &self.hrs[port].lrt;
        let max = self.cfg.limits.max_lrt;
        if !lrt.contains_key(&node.address) && lrt.len() >= max {
            return Err(StaticRefusal::LrtFull(max));
        }
        let router = node
            .capabilities
            .iter()
            .any(|c| c.code == CapabilityCode::Router as u8);
        self.hrs[port].lrt.insert(
            node.address,
            LrtEntry {
                info: NodeInfo {
                    address: node.address,
                    name: node.name.clone(),
                    capabilities: node.capabilities.clone(),
                    logical: (!node.groups.is_empty()).then(|| node.groups.clone()),
                },
                native: node.native,
                is_static: true,
                router,
                missed: 0,
            },
        );
        if let Some(h) = self.cfg.hrs.get_mut(port) {
            h.static_nodes.retain(|s| s.address != node.address);
            h.static_nodes.push(node);
        }
        self.lrt_changed(port);
        Ok(())
    }

    /// Removes a static LRT entry from HR `port`; false when there was none.
    pub fn remove_static(&mut self, port: PortId, address: Address) -> bool {
        let Some(h) = self.hrs.get_mut(port) else {
            return false;
        };
        if !h.lrt.get(&address).is_some_and(|e| e.is_static) {
            return false;
        }
        h.lrt.remove(&address);
        self.cfg.hrs[port]
            .static_nodes
            .retain(|s| s.address != address);
        self.lrt_changed(port);
        true
    }

    pub(super) fn keepalives(&mut self, now: Time, p: PortId) {
        let max = self.cfg.timers.keepalive_misses;
        let mut gone: Vec<(Address, bool)> = Vec::new();
        let mut ask: Vec<(Address, NativeAddr)> = Vec::new();
        for e in self.hrs[p].lrt.values_mut() {
            if e.is_static {
                continue;
            }
            if e.missed >= max {
                gone.push((e.info.address, e.router));
            } else {
                e.missed += 1;
                ask.push((e.info.address, e.native));
            }
        }
        for (a, n) in ask {
            self.send_msg(p, n, a, &Message::WhoAreYou, 0);
        }
        for (a, router) in gone {
            self.hrs[p].lrt.remove(&a);
            self.lrt_changed(p);
            self.event(Event::NodeDown { port: p, node: a });
            if router {
                self.hr_down(now, a, None);
            }
        }
    }
}
