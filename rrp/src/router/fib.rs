//! The FIBs: for every HR and destination the best route from that HR (its
//! LRT, its learned RTs, each twin's best plus the router cost) and its
//! next hop, the head of the CSR (docs/rrp.md "Routes and FIBs").

use std::collections::HashMap;
use std::sync::Arc;

use crate::address::Address;
use crate::native::NativeAddr;
use crate::port::{PerPort, PortId};
use crate::router::event::Event;

use super::engine::*;
use super::select::*;

/// Where a FIB entry sends a packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Next {
    /// This box.
    Local,
    /// Out of `port` to `native`.
    Forward {
        /// Egress port.
        port: PortId,
        /// Native next hop on the egress SAN.
        native: NativeAddr,
    },
}

/// One FIB entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FibEntry {
    /// Destination.
    pub dst: Address,
    /// Where to send it.
    pub next: Next,
    /// Total Q of the route.
    pub q: u16,
    /// MTU of the egress SAN in bytes (0 = unlimited).
    pub mtu: u32,
    /// The best first HR for this destination as a node on this HR's SAN
    /// sees it, when that is another member of the SAN (a buddy, or the
    /// destination itself): RRP#6 answers with it and a packet a node sends
    /// here draws an RRP#3 naming it (docs/spec-notes.md 52). `None`: this HR.
    pub redirect: Option<Address>,
}

/// The FIBs of every HR of the box, in port order, each sorted by destination.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteTables {
    /// FIB entries per ingress port.
    pub per_port: PerPort<Vec<FibEntry>>,
    /// Version, incremented on every change.
    pub version: u64,
}

impl RouteTables {
    /// The entry for `dst` on ingress `port`.
    pub fn lookup(&self, port: PortId, dst: Address) -> Option<&FibEntry> {
        let t = self.per_port.get(port)?;
        t.binary_search_by_key(&dst, |e| e.dst).ok().map(|i| &t[i])
    }
}

/// A best route while FIBs are computed, borrowing from the engine's tables.
#[derive(Debug, Clone, Copy)]
pub(super) struct Best<'a> {
    pub(super) q: u16,
    pub(super) native: &'a [u8],
    pub(super) rcvf: &'a [Address],
    /// The SAN of the RT it came from (None: the HR's own SAN).
    pub(super) san: Option<Address>,
    /// The destination is the HR itself.
    pub(super) local: bool,
    /// The member of the HR's SAN the route leaves through (a buddy, or
    /// the destination itself); None for the HR itself.
    pub(super) first_hr: Option<Address>,
}

impl<'a> Best<'a> {
    /// Its rank, seen through twin `via` (None: from its own HR).
    pub(super) fn rank(&self, via: Option<Address>, router_cost: u16) -> Rank<'a> {
        Rank {
            q: if via.is_some() {
                self.q.saturating_add(router_cost)
            } else {
                self.q
            },
            native: self.native,
            pre: via,
            rcvf: self.rcvf,
        }
    }

    /// Its rank as a node on the SAN of the HR that holds it sees it
    /// (docs/spec-notes.md 52): a route that leaves through another member
    /// of that SAN costs the node what it costs the HR (both cross the SAN
    /// once); a route through the box (a twin's, or to the HR itself) costs
    /// the node one more crossing of the SAN, `san_cost`.
    pub(super) fn node_rank(
        &self,
        via: Option<Address>,
        router_cost: u16,
        san_cost: u16,
    ) -> Rank<'a> {
        let mut r = self.rank(via, router_cost);
        if via.is_some() || self.local {
            r.q = r.q.saturating_add(san_cost);
        }
        r
    }

    /// Whether a node sends a packet on this route to another member of
    /// its SAN rather than to the HR.
    pub(super) fn leaves_on_the_san(&self, via: Option<Address>) -> bool {
        via.is_none() && !self.local
    }
}

impl Router {
    pub(super) fn compute_fib(&mut self) {
        let per_port = self.fib_tables();
        if per_port != self.fib.per_port {
            let version = self.fib.version + 1;
            let routes = per_port.first().map_or(0, Vec::len);
            self.fib = Arc::new(RouteTables { per_port, version });
            self.stats.fib_versions += 1;
            self.outputs.push_back(Output::FibChanged(version));
            self.event(Event::FibComputed { version, routes });
        }
    }

    /// Each HR's best route to every destination from its own LRT and
    /// learned RTs; a twin's best seen through the twin is that best plus the
    /// router cost (the order among one HR's routes is unchanged), so each
    /// port's FIB combines N such tables.
    pub(super) fn fib_tables(&self) -> PerPort<Vec<FibEntry>> {
        let own: PerPort<HashMap<Address, Best<'_>>> =
            self.hrs.ids().map(|h| self.own_best(h)).collect();
        let rc = self.cfg.router_cost;
        let mut per_port = Vec::with_capacity(self.hrs.len());
        for t in self.hrs.ids() {
            if !self.hrs[t].up {
                per_port.push(Vec::new());
                continue;
            }
            let own_san = self.cfg.hrs[t].san_id;
            let san_cost = self.cfg.hrs[t].cost;
            let mut best: HashMap<Address, (Best<'_>, PortId)> =
                HashMap::with_capacity(own[t].len());
            // The best route as a node on t's SAN sees it.
            let mut node_best: HashMap<Address, (Best<'_>, PortId)> =
                HashMap::with_capacity(own[t].len());
            for (h, table) in own.enumerate() {
                if h != t && !self.hrs[h].up {
                    continue;
                }
                let twin = h != t;
                let ha = self.cfg.hrs[h].address;
                for (dst, b) in table {
                    // Through a twin, RTs of this HR's own SAN do not count.
                    if twin && b.san == Some(own_san) {
                        continue;
                    }
                    let cand = b.rank(twin.then_some(ha), rc);
                    let better = match best.get(dst) {
                        None => true,
                        Some((o, oh)) => {
                            let via = (*oh != t).then_some(self.cfg.hrs[*oh].address);
                            cand.cmp(&o.rank(via, rc)).is_lt()
                        }
                    };
                    if better {
                        best.insert(*dst, (*b, h));
                    }
                    let cand = b.node_rank(twin.then_some(ha), rc, san_cost);
                    let better = match node_best.get(dst) {
                        None => true,
                        Some((o, oh)) => {
                            let via = (*oh != t).then_some(self.cfg.hrs[*oh].address);
                            cand.cmp(&o.node_rank(via, rc, san_cost)).is_lt()
                        }
                    };
                    if better {
                        node_best.insert(*dst, (*b, h));
                    }
                }
            }
            let addr = |h: PortId| (h != t).then_some(self.cfg.hrs[h].address);
            let mut entries: Vec<FibEntry> = best
                .into_iter()
                .map(|(dst, (b, h))| {
                    let port = if b.local { t } else { h };
                    // Seen from a node on t's SAN: the route a packet takes
                    // from here, unless another member of the SAN is
                    // strictly better as the first HR (a tie stays here).
                    let stay = b.node_rank(addr(h), rc, san_cost);
                    let redirect = match node_best.get(&dst) {
                        Some((n, nh)) if n.node_rank(addr(*nh), rc, san_cost).q < stay.q => {
                            n.first_hr.filter(|_| n.leaves_on_the_san(addr(*nh)))
                        }
                        _ => b.first_hr.filter(|_| b.leaves_on_the_san(addr(h))),
                    };
                    FibEntry {
                        dst,
                        next: if b.local {
                            Next::Local
                        } else {
                            Next::Forward {
                                port,
                                native: NativeAddr::from_bytes(b.native).unwrap_or_default(),
                            }
                        },
                        q: if h != t { b.q.saturating_add(rc) } else { b.q },
                        mtu: if b.local { 0 } else { self.cfg.hrs[port].mtu },
                        redirect,
                    }
                })
                .collect();
            entries.sort_unstable_by_key(|e| e.dst);
            for hc in &self.cfg.hrs {
                match entries.binary_search_by_key(&hc.address, |e| e.dst) {
                    Ok(i) => {
                        entries[i].next = Next::Local;
                        entries[i].q = 0;
                        entries[i].mtu = 0;
                        entries[i].redirect = None;
                    }
                    Err(i) => entries.insert(
                        i,
                        FibEntry {
                            dst: hc.address,
                            next: Next::Local,
                            q: 0,
                            mtu: 0,
                            redirect: None,
                        },
                    ),
                }
            }
            per_port.push(entries);
        }
        per_port.into()
    }

    /// HR `h`'s best route to every destination from its LRT and its learned
    /// RTs (not through twins).
    pub(super) fn own_best<'a>(&'a self, h: PortId) -> HashMap<Address, Best<'a>> {
        let mut best: HashMap<Address, Best<'a>> = HashMap::new();
        if !self.hrs[h].up {
            return best;
        }
        let mut offer = |dst: Address, b: Best<'a>| match best.get_mut(&dst) {
            None => {
                best.insert(dst, b);
            }
            Some(o) => {
                if b.rank(None, 0).cmp(&o.rank(None, 0)).is_lt() {
                    *o = b;
                }
            }
        };
        let cost = self.cfg.hrs[h].cost;
        for e in self.hrs[h].lrt.values() {
            offer(
                e.info.address,
                Best {
                    q: cost,
                    native: e.native.as_bytes(),
                    rcvf: &[],
                    san: None,
                    local: false,
                    first_hr: Some(e.info.address),
                },
            );
        }
        for (san, list) in &self.hrs[h].learned {
            for l in list {
                let first = first_native(&l.rt.csr);
                for nd in l.rt.nodes.iter() {
                    offer(
                        nd.info.address,
                        Best {
                            q: l.rt.q.saturating_add(nd.q),
                            native: first,
                            rcvf: &l.rt.rcvf,
                            san: Some(*san),
                            local: false,
                            first_hr: Some(l.from),
                        },
                    );
                }
            }
        }
        best.insert(
            self.cfg.hrs[h].address,
            Best {
                q: 0,
                native: &[],
                rcvf: &[],
                san: None,
                local: true,
                first_hr: None,
            },
        );
        best
    }
}
