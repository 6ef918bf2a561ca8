//! Requests from nodes and routers: RRP#1 answered by RRP#2 (routes and
//! their MTUs), RRP#6 answered by RRP#3 (the first HR), RRP#4 answered by
//! RRP#5 (node information) (docs/rrp.md "Requests").

use std::collections::BTreeMap;

use crate::address::Address;
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::route::Route;
use crate::wire::hop::RouterHop;
use crate::wire::message::{InfoQuery, Message, NodeInfo};
use crate::wire::record::{Capability, Mtu, SourceRoute};

use super::engine::*;
use super::rt::*;
use super::select::*;
use super::table::*;

/// A route from an HR to a destination, as RRP#2 and `show route` give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteInfo {
    /// Destination.
    pub dst: Address,
    /// Total Q.
    pub q: u16,
    /// The hops from the HR onward.
    pub route: Route,
    /// Where the HR sends a packet for `dst`.
    pub next: Next,
    /// The largest EEP packet this route carries (bytes; 0 = unlimited),
    /// counting the L2RH bytes present on each SAN.
    pub mtu: u32,
    /// The RCVF of the RT it comes from (empty for the HR's own SAN).
    pub rcvf: Vec<Address>,
}

/// The ordering key of a route (docs/architecture.md "Route tables and RRP").
fn route_rank(r: &RouteInfo) -> Rank<'_> {
    Rank {
        q: r.q,
        native: first_native(&r.route),
        pre: [None, None],
        rcvf: &r.rcvf,
    }
}

impl Router {
    pub(super) fn send_reply(
        &mut self,
        port: PortId,
        native: &NativeAddr,
        dst: Address,
        hr: PortId,
        m: &Message,
    ) {
        let src = self.cfg.hrs[hr].address;
        let Ok(p) = m.to_packet(dst, src) else {
            return;
        };
        if let Ok(bytes) = p.to_bytes() {
            self.emit(Output::Send {
                port,
                native: *native,
                packet: bytes,
            });
        }
    }

    /// Every route HR `port` has to `dst`, best first (distinct routes).
    pub fn routes_to(&self, port: PortId, dst: Address) -> Vec<RouteInfo> {
        let mut v: Vec<RouteInfo> = Vec::new();
        let hc = &self.cfg.hrs[port];
        if dst == hc.address {
            v.push(RouteInfo {
                dst,
                q: 0,
                route: Route::empty(),
                next: Next::Local,
                mtu: hc.mtu,
                rcvf: Vec::new(),
            });
            return v;
        }
        if let Some(t) = self.port_of(dst) {
            v.push(RouteInfo {
                dst,
                q: self.router_cost(),
                route: Route(vec![RouterHop::egress(dst)]),
                next: Next::Local,
                mtu: min_mtu(hc.mtu.saturating_sub(8), self.cfg.hrs[t].mtu),
                rcvf: vec![dst],
            });
            return v;
        }
        if let Some(e) = self.hrs[port].lrt.get(&dst) {
            v.push(RouteInfo {
                dst,
                q: hc.cost,
                route: Route(vec![RouterHop::native(e.native)]),
                next: Next::Forward {
                    port,
                    native: e.native,
                },
                mtu: hc.mtu,
                rcvf: Vec::new(),
            });
        }
        for t in self.hrs.ids() {
            if t == port || !self.hrs[t].up {
                continue;
            }
            if let Some(e) = self.hrs[t].lrt.get(&dst) {
                let route = Route(vec![RouterHop::new(self.cfg.hrs[t].address, e.native)]);
                let on_first = route.l2rh_bytes() as u32;
                v.push(RouteInfo {
                    dst,
                    q: self.router_cost().saturating_add(self.cfg.hrs[t].cost),
                    route,
                    next: Next::Forward {
                        port: t,
                        native: e.native,
                    },
                    mtu: min_mtu(hc.mtu.saturating_sub(on_first), self.cfg.hrs[t].mtu),
                    rcvf: vec![self.cfg.hrs[t].address],
                });
            }
        }
        for san in self.known_sans() {
            let srcs: Vec<Src> = self
                .ranked(port, san)
                .into_iter()
                .take(self.cfg.k)
                .map(|(_, s)| s)
                .filter(|s| {
                    self.src_nodes(port, san, *s)
                        .iter()
                        .any(|n| n.info.address == dst)
                })
                .collect();
            for src in srcs {
                let (rt, _) = self.materialize(port, san, src);
                for n in rt.nodes.iter().filter(|n| n.info.address == dst) {
                    let route = rt.csr.catenate(&n.route);
                    let Some(first) = route.first() else { continue };
                    let next = if first.is_native_only() {
                        Next::Forward {
                            port,
                            native: first.native,
                        }
                    } else {
                        match self.port_of(first.egress) {
                            Some(t) if !first.is_egress_only() => Next::Forward {
                                port: t,
                                native: first.native,
                            },
                            _ => Next::Local,
                        }
                    };
                    let mtu = self.route_mtu(port, &route, rt.mtu);
                    v.push(RouteInfo {
                        dst,
                        q: rt.q.saturating_add(n.q),
                        route,
                        next,
                        mtu,
                        rcvf: rt.rcvf.clone(),
                    });
                }
            }
        }
        v.sort_by(|a, b| route_rank(a).cmp(&route_rank(b)));
        v.dedup_by(|a, b| a.route == b.route);
        v
    }

    /// The MTU of a route from HR `port` whose RT carries MinMTU `rt_mtu`:
    /// on this HR's SAN the packet carries every L2RH of the route (but a
    /// leading native-only hop, which is the native header); past the
    /// first router the RT's MinMTU applies, less the L2RHs still present.
    pub(super) fn route_mtu(&self, port: PortId, route: &Route, rt_mtu: Mtu) -> u32 {
        let hops = &route.0;
        let skip = usize::from(hops.first().is_some_and(RouterHop::is_native_only));
        let bytes = |from: usize| -> u32 {
            hops[from.min(hops.len())..]
                .iter()
                .map(|h| crate::wire::l2rh::l2rh_bytes(2 + h.native.len()) as u32)
                .sum()
        };
        let here = self.cfg.hrs[port].mtu;
        let first = if here == 0 {
            0
        } else {
            here.saturating_sub(bytes(skip)).max(1)
        };
        let beyond = match rt_mtu.bytes() {
            None => 0,
            Some(b) => (b as u32).saturating_sub(bytes(skip + 1)).max(1),
        };
        min_mtu(first, beyond)
    }

    pub(super) fn answer_routes(
        &mut self,
        port: PortId,
        hr: PortId,
        native: &NativeAddr,
        sa: Address,
        dst: Address,
    ) {
        if !sa.is_node() {
            return;
        }
        self.stats.requests_answered += 1;
        let routes: Vec<SourceRoute> = self
            .routes_for_node(hr, dst)
            .into_iter()
            .filter(|r| r.route.within_limit())
            .take(self.cfg.k)
            .map(|r| SourceRoute {
                q: r.q,
                route: r.route.to_l2rhs(),
                mtu: Some(mtu_words(r.mtu)),
            })
            .collect();
        let m = if routes.is_empty() {
            Message::Unknown { addr: dst }
        } else {
            Message::Routes { dst, routes }
        };
        self.send_reply(port, native, sa, hr, &m);
    }

    /// The RRP#6 answer of HR `port` for `dst`: the best first HR as a node
    /// on its SAN sees it (docs/spec-notes.md 52): another HR of the SAN,
    /// the destination itself when it is on the SAN, or this HR; `None`
    /// when `dst` is unknown. Read from the FIB, so that a node that follows
    /// it takes the path the routers take.
    pub fn which_hr(&self, port: PortId, dst: Address) -> Option<Address> {
        let e = self.fib.lookup(port, dst)?;
        Some(e.redirect.unwrap_or(self.cfg.hrs[port].address))
    }

    /// [`Router::routes_to`] as a node on HR `port`'s SAN sees them, for an
    /// RRP#2 answer (docs/spec-notes.md 52): a route that starts with a
    /// native hop on the SAN costs the node what it costs the HR; any other
    /// starts at the HR, one more crossing of the SAN. Q is the whole path's
    /// from the node (as R6's MTU is), best first.
    pub fn routes_for_node(&self, port: PortId, dst: Address) -> Vec<RouteInfo> {
        let cost = self.cfg.hrs[port].cost;
        let mut v = self.routes_to(port, dst);
        for r in &mut v {
            if !r.route.first().is_some_and(RouterHop::is_native_only) {
                r.q = r.q.saturating_add(cost);
            }
        }
        // Stable: equal ranks keep the HR's own order.
        v.sort_by(|a, b| route_rank(a).cmp(&route_rank(b)));
        v
    }

    pub(super) fn answer_which_hr(
        &mut self,
        port: PortId,
        hr: PortId,
        native: &NativeAddr,
        sa: Address,
        dst: Address,
    ) {
        if !sa.is_node() {
            return;
        }
        self.stats.requests_answered += 1;
        let m = match self.which_hr(hr, dst) {
            None => Message::Unknown { addr: dst },
            Some(via) => Message::Redirect { dst, via },
        };
        self.send_reply(port, native, sa, hr, &m);
    }

    pub(super) fn all_nodes(&self, hr: PortId) -> Vec<NodeInfo> {
        let mut seen: BTreeMap<Address, NodeInfo> = BTreeMap::new();
        for p in self.hrs.ids() {
            seen.insert(self.cfg.hrs[p].address, self.my_info(p));
            for e in self.hrs[p].lrt.values() {
                seen.entry(e.info.address).or_insert_with(|| e.info.clone());
            }
        }
        for san in self.known_sans() {
            for (rt, _) in self.kept(hr, san) {
                for n in rt.nodes.iter() {
                    seen.entry(n.info.address).or_insert_with(|| n.info.clone());
                }
            }
        }
        seen.into_values().collect()
    }

    pub(super) fn answer_info(
        &mut self,
        port: PortId,
        hr: PortId,
        native: &NativeAddr,
        sa: Address,
        q: &InfoQuery,
    ) {
        if !sa.is_node() {
            return;
        }
        self.stats.requests_answered += 1;
        let matches = |have: &Capability, want: &Capability| {
            have.code == want.code && want.params.iter().all(|p| have.params.contains(p))
        };
        let nodes: Vec<NodeInfo> = self
            .all_nodes(hr)
            .into_iter()
            .filter_map(|n| match q {
                InfoQuery::Address(a) => (n.address == *a).then_some(n),
                InfoQuery::Name(name) => (n.name.as_deref() == Some(&name[..])).then_some(n),
                // Appendix C step 2: a capability query is answered with each
                // matching node's address and the capabilities that matched.
                InfoQuery::Capabilities(caps) => {
                    let hit: Vec<Capability> = n
                        .capabilities
                        .iter()
                        .filter(|h| caps.iter().any(|c| matches(h, c)))
                        .cloned()
                        .collect();
                    (!hit.is_empty()).then_some(NodeInfo {
                        address: n.address,
                        name: None,
                        capabilities: hit,
                        logical: None,
                    })
                }
            })
            .collect();
        let m = if nodes.is_empty() {
            Message::Unknown {
                addr: match q {
                    InfoQuery::Address(a) => *a,
                    _ => Address::UNSPECIFIED,
                },
            }
        } else {
            Message::Info(nodes)
        };
        if let Message::Unknown { addr } = m
            && !addr.is_valid_destination()
        {
            // ERR UNK needs an address; a query by name or capability that
            // matched nothing gets an empty answer instead: none is sent.
            return;
        }
        self.send_reply(port, native, sa, hr, &m);
    }
}
