//! The FIBs, computed incrementally: for every HR and destination the best
//! route from that HR (its LRT, its learned RTs, each twin's best plus the
//! router cost), its next hop (the head of the CSR), and the destination's
//! best first HR as a node on the HR's SAN sees it (docs/rrp.md "Routes and
//! FIBs", docs/spec-notes.md 52).
//!
//! A destination's rows depend only on the RTs (and LRT entries) of the
//! SANs that list it. So when an RT of SAN S arrives, expires or is
//! replaced, or an LRT of S changes, S is marked; at the next computation
//! only the rows of the destinations S lists (before and after the change)
//! are recomputed, on every port, and the tables are patched in place. The
//! rows that changed are logged for the host, which patches the
//! dataplane's copy instead of rebuilding it ([`Router::take_fib_changes`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use arrayvec::ArrayVec;

use crate::address::Address;
use crate::fxhash::FxHashMap;
use crate::limits::MAX_PORTS;
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::router::event::Event;

use super::engine::*;
use super::select::*;
use super::table::*;

/// More changed rows than this since the host last took them: it rebuilds.
const MAX_LOGGED_CHANGES: usize = 1 << 16;

/// What the next FIB computation must redo, and what it keeps in between.
#[derive(Debug, Clone, Default)]
pub(super) struct FibState {
    /// SANs whose destinations' rows must be recomputed.
    pub(super) sans: BTreeSet<Address>,
    /// Every row must be recomputed (a port went down or up).
    pub(super) all: bool,
    /// The destinations each SAN listed at the last computation, sorted.
    san_dests: FxHashMap<Address, Vec<Address>>,
    /// For each destination, the SANs that list it (almost always one).
    claims: FxHashMap<Address, Vec<Address>>,
    /// Rows changed since the host last took them (None: too many to log).
    changes: Option<Vec<(PortId, Address)>>,
}

impl FibState {
    /// The state of a new engine: everything to compute, the host to build
    /// its copy whole.
    pub(super) fn new() -> FibState {
        FibState {
            all: true,
            ..FibState::default()
        }
    }

    /// Whether a computation is due.
    pub(super) fn dirty(&self) -> bool {
        self.all || !self.sans.is_empty()
    }
}

/// A candidate route while a row is computed, borrowing from the engine's tables.
#[derive(Debug, Clone, Copy)]
pub(super) struct Best<'a> {
    pub(super) q: u16,
    pub(super) native: &'a [u8],
    /// The buddy the RT came from (the RCVF's first element as held).
    pub(super) from: Option<Address>,
    /// The RCVF after `from`.
    pub(super) rcvf: &'a [Address],
    /// The member of the HR's SAN the route leaves through (a buddy, or
    /// the destination itself).
    pub(super) first_hr: Address,
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
            pre: [via, self.from],
            rcvf: self.rcvf,
        }
    }

    /// Its rank as a node on the SAN of the HR that holds it sees it
    /// (docs/spec-notes.md 52): a route that leaves through another member
    /// of that SAN costs the node what it costs the HR (both cross the SAN
    /// once); a route through a twin costs the node one more crossing of
    /// the SAN, `san_cost`.
    pub(super) fn node_rank(
        &self,
        via: Option<Address>,
        router_cost: u16,
        san_cost: u16,
    ) -> Rank<'a> {
        let mut r = self.rank(via, router_cost);
        if via.is_some() {
            r.q = r.q.saturating_add(san_cost);
        }
        r
    }
}

/// A destination's best candidates on one port while a SAN's rows are
/// computed: the best route (and its Q), and the best as a node on the
/// port's SAN sees it (and its Q there).
#[derive(Debug, Clone, Copy)]
pub(super) struct Cand<'a> {
    best: Best<'a>,
    hr: PortId,
    via: Option<Address>,
    q: u16,
    node: Best<'a>,
    node_hr: PortId,
    node_via: Option<Address>,
    node_q: u16,
}

type Slot<'a> = Option<Cand<'a>>;

impl<'a> Cand<'a> {
    fn new(b: Best<'a>, h: PortId, via: Option<Address>, q: u16, nq: u16) -> Cand<'a> {
        Cand {
            best: b,
            hr: h,
            via,
            q,
            node: b,
            node_hr: h,
            node_via: via,
            node_q: nq,
        }
    }

    /// Offers `b` (HR `h`, seen through twin `via`, Q `q` here and `nq`
    /// from a node on the port's SAN): Q decides; only on equal Q are the
    /// rest of the ranks compared.
    fn offer(&mut self, b: Best<'a>, h: PortId, via: Option<Address>, q: u16, nq: u16) {
        let at = |b: &Best<'a>, via: Option<Address>, q: u16| Rank {
            q,
            native: b.native,
            pre: [via, b.from],
            rcvf: b.rcvf,
        };
        if q < self.q || (q == self.q && at(&b, via, q).cmp(&at(&self.best, self.via, q)).is_lt()) {
            (self.best, self.hr, self.via, self.q) = (b, h, via, q);
        }
        if nq < self.node_q
            || (nq == self.node_q
                && at(&b, via, nq)
                    .cmp(&at(&self.node, self.node_via, nq))
                    .is_lt())
        {
            (self.node, self.node_hr, self.node_via, self.node_q) = (b, h, via, nq);
        }
    }
}

impl Router {
    /// The destinations SAN `san` lists now: the LRT of an HR on it, and
    /// the node entries of every HR's learned RTs of it. Sorted.
    fn san_dests(&self, san: Address) -> Vec<Address> {
        let mut v = Vec::new();
        for h in self.hrs.ids() {
            if !self.hrs[h].up {
                continue;
            }
            if self.cfg.hrs[h].san_id == san {
                v.extend(self.hrs[h].lrt.keys().copied());
            }
            if let Some(list) = self.hrs[h].learned.get(&san) {
                for l in list {
                    v.extend(l.body.nodes.0.addresses());
                }
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Every SAN the engine holds anything of.
    fn all_sans(&self) -> BTreeSet<Address> {
        let mut s: BTreeSet<Address> = self.fibs.san_dests.keys().copied().collect();
        for h in self.hrs.ids() {
            s.insert(self.cfg.hrs[h].san_id);
            s.extend(self.hrs[h].learned.keys().copied());
        }
        s
    }

    /// The row of `dst` on ingress port `t`: the best route from t (the
    /// next hop a packet already at t takes), and the best first HR as a
    /// node on t's SAN sees it.
    fn fib_row<'a>(&'a self, t: PortId, dst: Address) -> Option<FibEntry> {
        if !self.hrs[t].up {
            return None;
        }
        if self.box_has(dst) {
            return Some(FibEntry {
                dst,
                next: Next::Local,
                q: 0,
                mtu: 0,
                redirect: None,
            });
        }
        let rc = self.router_cost();
        let fc = self.forwarding_cost();
        let own_san = self.cfg.hrs[t].san_id;
        let san_cost = self.cfg.hrs[t].cost;
        let mut best: Option<(Best<'a>, PortId)> = None;
        let mut node_best: Option<(Best<'a>, PortId)> = None;
        let via = |h: PortId| (h != t).then_some(self.cfg.hrs[h].address);
        let sans = self.fibs.claims.get(&dst).map_or(&[][..], |v| &v[..]);
        for h in self.hrs.ids() {
            if h != t && !self.hrs[h].up {
                continue;
            }
            let mut offer = |b: Best<'a>| {
                let r = b.rank(via(h), fc);
                if best
                    .as_ref()
                    .is_none_or(|(o, oh)| r.cmp(&o.rank(via(*oh), fc)).is_lt())
                {
                    best = Some((b, h));
                }
                let r = b.node_rank(via(h), rc, san_cost);
                if node_best
                    .as_ref()
                    .is_none_or(|(o, oh)| r.cmp(&o.node_rank(via(*oh), rc, san_cost)).is_lt())
                {
                    node_best = Some((b, h));
                }
            };
            let hs = &self.hrs[h];
            if let Some(e) = hs.lrt.get(&dst) {
                offer(Best {
                    q: self.cfg.hrs[h].cost,
                    native: e.native.as_bytes(),
                    from: None,
                    rcvf: &[],
                    first_hr: dst,
                });
            }
            for san in sans {
                // Through a twin, RTs of this HR's own SAN do not count.
                if h != t && *san == own_san {
                    continue;
                }
                let Some(list) = hs.learned.get(san) else {
                    continue;
                };
                for l in list {
                    let Some(n) = l.body.nodes.0.find(dst) else {
                        continue;
                    };
                    offer(Best {
                        q: l.q.saturating_add(n.q),
                        native: l.native.as_bytes(),
                        from: Some(l.from),
                        rcvf: &l.body.rcvf,
                        first_hr: l.from,
                    });
                }
            }
        }
        Some(self.entry(t, dst, best?, node_best))
    }

    /// [`Router::entry`] as a row of `tables` (its next hop referenced).
    fn row(
        &self,
        tables: &mut RouteTables,
        t: PortId,
        dst: Address,
        (b, h): (Best<'_>, PortId),
        node_best: Option<(Best<'_>, PortId)>,
    ) -> Row {
        let (q, redirect) = self.q_and_redirect(t, (b, h), node_best);
        let native = NativeAddr::from_bytes(b.native).unwrap_or_default();
        let _ = dst;
        tables.forward_row(h, &native, self.cfg.hrs[h].mtu, q, redirect)
    }

    /// The Q of a row whose best route is `best`, and the first HR (see
    /// [`Router::entry`]).
    fn q_and_redirect(
        &self,
        t: PortId,
        (b, h): (Best<'_>, PortId),
        node_best: Option<(Best<'_>, PortId)>,
    ) -> (u16, Option<Address>) {
        let rc = self.router_cost();
        let san_cost = self.cfg.hrs[t].cost;
        let via = |h: PortId| (h != t).then_some(self.cfg.hrs[h].address);
        // Seen from a node on t's SAN: the route a packet takes from here,
        // unless another member of the SAN is strictly better as the first
        // HR (a tie stays here).
        let stay = b.node_rank(via(h), rc, san_cost).q;
        let redirect = match node_best {
            Some((n, nh)) if n.node_rank(via(nh), rc, san_cost).q < stay => {
                (nh == t).then_some(n.first_hr)
            }
            _ => (h == t).then_some(b.first_hr),
        };
        (b.rank(via(h), self.forwarding_cost()).q, redirect)
    }

    /// The FIB entry of `dst` on port `t` whose best route is `best` and
    /// whose best route as a node on t's SAN sees it is `node_best`.
    fn entry(
        &self,
        t: PortId,
        dst: Address,
        (b, h): (Best<'_>, PortId),
        node_best: Option<(Best<'_>, PortId)>,
    ) -> FibEntry {
        let (q, redirect) = self.q_and_redirect(t, (b, h), node_best);
        FibEntry {
            dst,
            next: Next::Forward {
                port: h,
                native: NativeAddr::from_bytes(b.native).unwrap_or_default(),
            },
            q,
            mtu: self.cfg.hrs[h].mtu,
            redirect,
        }
    }

    /// The rows of the destinations `dests` (sorted) that SAN `san` alone
    /// lists, on every port, in one pass over the SAN's candidate routes
    /// (what [`Router::fib_row`] gives for each, without searching every
    /// node list for every destination): `acc[i * ports + t]` for `dests[i]`
    /// on port `t`. Destinations another SAN lists too, and this box's own
    /// addresses, are left `None` for `fib_row`.
    fn san_rows<'a>(&'a self, san: Address, dests: &[Address], acc: &mut Vec<Slot<'a>>) {
        let n = self.hrs.len();
        acc.clear();
        acc.resize(dests.len() * n, None);
        let rc = self.router_cost();
        let fc = self.forwarding_cost();
        for h in self.hrs.ids() {
            if !self.hrs[h].up {
                continue;
            }
            let ha = self.cfg.hrs[h].address;
            // For each port t: whether a candidate of h counts there, and
            // what crossing to h adds (through a twin: the forwarding cost
            // for the box's own choice; from a node on t's SAN, the cost
            // the box advertises while starting or draining, and that
            // SAN's cost).
            let mut adds: ArrayVec<(PortId, Option<Address>, u16, u16, bool), MAX_PORTS> =
                ArrayVec::new();
            for t in self.hrs.ids() {
                if t != h && !self.hrs[t].up {
                    continue;
                }
                let twin = t != h;
                // Through a twin, RTs of t's own SAN do not count.
                let learned_ok = !(twin && san == self.cfg.hrs[t].san_id);
                let (add, node_add) = if twin {
                    (fc, rc.saturating_add(self.cfg.hrs[t].cost))
                } else {
                    (0, 0)
                };
                adds.push((t, twin.then_some(ha), add, node_add, learned_ok));
            }
            let mut offer = |i: usize, b: Best<'a>, learned: bool| {
                for &(t, via, add, node_add, learned_ok) in &adds {
                    if learned && !learned_ok {
                        continue;
                    }
                    let q = b.q.saturating_add(add);
                    let nq = b.q.saturating_add(node_add);
                    match &mut acc[i * n + t.index()] {
                        slot @ None => *slot = Some(Cand::new(b, h, via, q, nq)),
                        Some(c) => c.offer(b, h, via, q, nq),
                    }
                }
            };
            let hs = &self.hrs[h];
            if self.cfg.hrs[h].san_id == san {
                let mut i = 0;
                for (d, e) in &hs.lrt {
                    while i < dests.len() && dests[i] < *d {
                        i += 1;
                    }
                    if i < dests.len() && dests[i] == *d {
                        let b = Best {
                            q: self.cfg.hrs[h].cost,
                            native: e.native.as_bytes(),
                            from: None,
                            rcvf: &[],
                            first_hr: *d,
                        };
                        offer(i, b, false);
                    }
                }
            }
            let list = hs.learned.get(&san).map_or(&[][..], |l| &l[..]);
            // Sorted best first: when every RT carries the same node list,
            // the first is the best for every node.
            let list = match fib_summary(list) {
                Some(_) => &list[..list.len().min(1)],
                None => list,
            };
            for l in list {
                let nodes = &l.body.nodes.0;
                let mut i = 0;
                for (d, at) in nodes.index() {
                    while i < dests.len() && dests[i] < *d {
                        i += 1;
                    }
                    if i < dests.len() && dests[i] == *d {
                        let b = Best {
                            q: l.q.saturating_add(nodes[*at as usize].q),
                            native: l.native.as_bytes(),
                            from: Some(l.from),
                            rcvf: &l.body.rcvf,
                            first_hr: l.from,
                        };
                        offer(i, b, true);
                    }
                }
            }
        }
        for (i, d) in dests.iter().enumerate() {
            let shared = self.fibs.claims.get(d).is_some_and(|c| c.len() > 1);
            if shared || self.box_has(*d) {
                acc[i * n..(i + 1) * n].fill(None);
            }
        }
    }

    /// Recomputes the rows the changes since the last computation touch,
    /// patches the tables, and announces a new version when a row changed.
    pub(super) fn compute_fib(&mut self) {
        let all = std::mem::take(&mut self.fibs.all);
        let sans: Vec<Address> = if all {
            self.fibs.sans.clear();
            self.all_sans().into_iter().collect()
        } else {
            std::mem::take(&mut self.fibs.sans).into_iter().collect()
        };
        // Which destinations to redo: those each SAN lists, before and
        // after. Rows are computed per SAN (one pass over its RTs); the
        // box's own addresses and destinations several SANs list, one by one.
        let mut batches: Vec<(Address, Vec<Address>)> = Vec::new();
        let mut single: BTreeSet<Address> = self.cfg.hrs.iter().map(|h| h.address).collect();
        for san in sans {
            let now = self.san_dests(san);
            let before = self.fibs.san_dests.remove(&san).unwrap_or_default();
            for d in before.iter().filter(|d| now.binary_search(d).is_err()) {
                if let Some(c) = self.fibs.claims.get_mut(d) {
                    c.retain(|s| *s != san);
                    if c.is_empty() {
                        self.fibs.claims.remove(d);
                    }
                }
            }
            for d in now.iter().filter(|d| before.binary_search(d).is_err()) {
                self.fibs.claims.entry(*d).or_default().push(san);
            }
            // Destinations no longer listed by this SAN: one by one (another
            // SAN may still list them, or none).
            single.extend(before.iter().filter(|d| now.binary_search(d).is_err()));
            if !now.is_empty() {
                self.fibs.san_dests.insert(san, now.clone());
                batches.push((san, now));
            }
        }
        // Patch: every port, every touched destination.
        let mut fib = std::mem::take(&mut self.fib);
        let tables = Arc::make_mut(&mut fib);
        if tables.ports() != self.hrs.len() {
            *tables = RouteTables::new(self.hrs.len());
        }
        let mut changed: Vec<(PortId, Address)> = Vec::new();
        let mut put = |tables: &mut RouteTables, t: PortId, d: Address, row: Row| {
            if tables.row(t, d) == row {
                tables.unref_row(row);
            } else {
                tables.set_row(t, d, row);
                changed.push((t, d));
            }
        };
        let mut slots = Vec::new();
        let n = self.hrs.len();
        for (san, dests) in &batches {
            self.san_rows(*san, dests, &mut slots);
            for (i, d) in dests.iter().enumerate() {
                for t in self.hrs.ids() {
                    let row = match &slots[i * n + t.index()] {
                        Some(c) => {
                            self.row(tables, t, *d, (c.best, c.hr), Some((c.node, c.node_hr)))
                        }
                        None => match self.fib_row(t, *d) {
                            Some(e) => tables.make_row(&e),
                            None => Row::default(),
                        },
                    };
                    put(tables, t, *d, row);
                }
            }
        }
        for t in self.hrs.ids() {
            for d in &single {
                let row = match self.fib_row(t, *d) {
                    Some(e) => tables.make_row(&e),
                    None => Row::default(),
                };
                put(tables, t, *d, row);
            }
        }
        if let Some(log) = &mut self.fibs.changes {
            log.extend_from_slice(&changed);
            if log.len() > MAX_LOGGED_CHANGES {
                self.fibs.changes = None;
            }
        }
        let changed = changed.len();
        if changed > 0 {
            tables.version += 1;
            let version = tables.version;
            // The most any HR routes (HR 0 may be down).
            let routes = (0..tables.ports())
                .map(|p| tables.len(PortId::new(p)))
                .max()
                .unwrap_or(0);
            self.fib = fib;
            self.stats.fib_versions += 1;
            self.outputs.push_back(Output::FibChanged(version));
            self.event(Event::FibComputed { version, routes });
        } else {
            self.fib = fib;
        }
    }

    /// The FIB rows (ingress port, destination) that changed since the
    /// last call, for a host that keeps a copy of the tables (the
    /// dataplane's) and patches it; `None` when it must rebuild from
    /// [`Router::fib`] (the first call, or too many changes to log).
    pub fn take_fib_changes(&mut self) -> Option<Vec<(PortId, Address)>> {
        self.fibs.changes.replace(Vec::new())
    }

    /// Marks SAN `san`'s destinations for recomputation.
    pub(super) fn fib_san_changed(&mut self, san: Address) {
        self.fibs.sans.insert(san);
        self.mcast_dirty = true;
    }

    /// Marks every row for recomputation.
    pub(super) fn fib_all_changed(&mut self) {
        self.fibs.all = true;
        self.mcast_dirty = true;
        self.sans_with_groups_stale = true;
    }
}
