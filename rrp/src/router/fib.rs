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

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::address::Address;
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
    san_dests: HashMap<Address, Vec<Address>>,
    /// For each destination, the SANs that list it (almost always one).
    claims: HashMap<Address, Vec<Address>>,
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
        let rc = self.cfg.router_cost;
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
                let r = b.rank(via(h), rc);
                if best
                    .as_ref()
                    .is_none_or(|(o, oh)| r.cmp(&o.rank(via(*oh), rc)).is_lt())
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

    /// The FIB entry of `dst` on port `t` whose best route is `best` and
    /// whose best route as a node on t's SAN sees it is `node_best`.
    fn entry(
        &self,
        t: PortId,
        dst: Address,
        (b, h): (Best<'_>, PortId),
        node_best: Option<(Best<'_>, PortId)>,
    ) -> FibEntry {
        let rc = self.cfg.router_cost;
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
        FibEntry {
            dst,
            next: Next::Forward {
                port: h,
                native: NativeAddr::from_bytes(b.native).unwrap_or_default(),
            },
            q: b.rank(via(h), rc).q,
            mtu: self.cfg.hrs[h].mtu,
            redirect,
        }
    }

    /// The rows on port `t` of the destinations `dests` (sorted) that SAN
    /// `san` alone lists, in one pass over the candidate RTs of `san`
    /// (what [`Router::fib_row`] gives for each, without searching every
    /// node list for every destination). Destinations another SAN lists
    /// too are left `None` for `fib_row`.
    fn san_rows<'a>(
        &'a self,
        t: PortId,
        san: Address,
        dests: &[Address],
    ) -> Vec<Option<(Best<'a>, PortId, Best<'a>, PortId)>> {
        let mut acc: Vec<Option<(Best<'a>, PortId, Best<'a>, PortId)>> = vec![None; dests.len()];
        if !self.hrs[t].up {
            return acc;
        }
        let rc = self.cfg.router_cost;
        let own_san = self.cfg.hrs[t].san_id;
        let san_cost = self.cfg.hrs[t].cost;
        let via = |h: PortId| (h != t).then_some(self.cfg.hrs[h].address);
        for h in self.hrs.ids() {
            if h != t && !self.hrs[h].up {
                continue;
            }
            let mut offer = |dst: Address, b: Best<'a>| {
                let Ok(i) = dests.binary_search(&dst) else {
                    return;
                };
                match &mut acc[i] {
                    slot @ None => *slot = Some((b, h, b, h)),
                    Some((o, oh, n, nh)) => {
                        if b.rank(via(h), rc).cmp(&o.rank(via(*oh), rc)).is_lt() {
                            (*o, *oh) = (b, h);
                        }
                        let r = b.node_rank(via(h), rc, san_cost);
                        if r.cmp(&n.node_rank(via(*nh), rc, san_cost)).is_lt() {
                            (*n, *nh) = (b, h);
                        }
                    }
                }
            };
            let hs = &self.hrs[h];
            if self.cfg.hrs[h].san_id == san {
                for (d, e) in &hs.lrt {
                    offer(
                        *d,
                        Best {
                            q: self.cfg.hrs[h].cost,
                            native: e.native.as_bytes(),
                            from: None,
                            rcvf: &[],
                            first_hr: *d,
                        },
                    );
                }
            }
            // Through a twin, RTs of this HR's own SAN do not count.
            if h != t && san == own_san {
                continue;
            }
            for l in hs.learned.get(&san).into_iter().flatten() {
                for n in l.body.nodes.0.iter() {
                    offer(
                        n.info.address,
                        Best {
                            q: l.q.saturating_add(n.q),
                            native: l.native.as_bytes(),
                            from: Some(l.from),
                            rcvf: &l.body.rcvf,
                            first_hr: l.from,
                        },
                    );
                }
            }
        }
        for (d, slot) in dests.iter().zip(acc.iter_mut()) {
            let shared = self.fibs.claims.get(d).is_some_and(|c| c.len() > 1);
            if shared || self.box_has(*d) {
                *slot = None;
            }
        }
        acc
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
        let mut changed = 0usize;
        let mut put =
            |s: &mut Self, tables: &mut RouteTables, t: PortId, d: Address, e: Option<FibEntry>| {
                let row = match e {
                    Some(e) => tables.make_row(&e),
                    None => Row::default(),
                };
                if tables.row(t, d) == row {
                    tables.unref_row(row);
                    return;
                }
                tables.set_row(t, d, row);
                changed += 1;
                if let Some(log) = &mut s.fibs.changes {
                    log.push((t, d));
                    if log.len() > MAX_LOGGED_CHANGES {
                        s.fibs.changes = None;
                    }
                }
            };
        for t in self.hrs.ids() {
            for (san, dests) in &batches {
                let rows = self.san_rows(t, *san, dests);
                let entries: Vec<(Address, Option<FibEntry>)> = dests
                    .iter()
                    .zip(rows)
                    .map(|(d, r)| match r {
                        Some((b, h, n, nh)) => (*d, Some(self.entry(t, *d, (b, h), Some((n, nh))))),
                        None => (*d, self.fib_row(t, *d)),
                    })
                    .collect();
                for (d, e) in entries {
                    put(self, tables, t, d, e);
                }
            }
            for d in &single {
                let e = self.fib_row(t, *d);
                put(self, tables, t, *d, e);
            }
        }
        if changed > 0 {
            tables.version += 1;
            let version = tables.version;
            let routes = tables.len(PortId::new(0));
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
        std::mem::replace(&mut self.fibs.changes, Some(Vec::new()))
    }

    /// Marks SAN `san`'s destinations for recomputation.
    pub(super) fn fib_san_changed(&mut self, san: Address) {
        self.fibs.sans.insert(san);
    }

    /// Marks every row for recomputation.
    pub(super) fn fib_all_changed(&mut self) {
        self.fibs.all = true;
    }
}
