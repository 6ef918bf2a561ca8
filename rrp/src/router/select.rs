//! Which RTs an HR keeps: ranking (total Q, then the first native address
//! outside the box, then the RCVF; docs/architecture.md "Route tables and
//! RRP") and twin derivation (CSR = twin hop + CSR, RCVF = (twin, RCVF),
//! Q + router cost). Derived RTs are ranked without being built: a rank
//! borrows the RCVF as sent and names the (at most two) addresses the box
//! puts in front of it.

use std::cmp::Ordering;

use crate::address::Address;
use crate::port::PortId;
use crate::route::Route;
use crate::wire::hop::RouterHop;

use super::engine::*;
use super::rt::*;

/// The ordering key of RTs and routes: total Q, then the first native
/// address outside the box, then the RCVF's length, then the RCVF element by
/// element (docs/architecture.md "Route tables and RRP"). The RCVF is
/// `pre` (the twin and the buddy, where the box adds them) then `rcvf`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rank<'a> {
    pub(super) q: u16,
    pub(super) native: &'a [u8],
    pub(super) pre: [Option<Address>; 2],
    pub(super) rcvf: &'a [Address],
}

impl Rank<'_> {
    fn rcvf_len(&self) -> usize {
        self.rcvf.len() + self.pre.iter().flatten().count()
    }

    fn rcvf_iter(&self) -> impl Iterator<Item = Address> + '_ {
        self.pre
            .iter()
            .flatten()
            .copied()
            .chain(self.rcvf.iter().copied())
    }

    pub(super) fn cmp(&self, o: &Rank<'_>) -> Ordering {
        self.q
            .cmp(&o.q)
            .then_with(|| self.native.cmp(o.native))
            .then_with(|| self.rcvf_len().cmp(&o.rcvf_len()))
            .then_with(|| self.rcvf_iter().cmp(o.rcvf_iter()))
    }
}

/// What of a learned list (sorted best first) the FIB rows depend on, when
/// every RT of it carries the same node list: its best RT (body and buddy),
/// since that RT is then the best for every node. `None` when the lists
/// differ (the rows depend on more, and are redone on any change).
pub(super) fn fib_summary(list: &[Learned]) -> Option<Option<(*const RtBody, Address)>> {
    let Some(first) = list.first() else {
        return Some(None);
    };
    let nodes = &first.body.nodes;
    list.iter()
        .all(|l| l.body.nodes == *nodes)
        .then_some(Some((std::sync::Arc::as_ptr(&first.body), first.from)))
}

pub(super) fn first_native(r: &Route) -> &[u8] {
    r.first().map_or(&[][..], |h| h.native.as_bytes())
}

/// The rank of an RT an HR learned, as that HR holds it.
pub(super) fn learned_rank(l: &Learned) -> Rank<'_> {
    Rank {
        q: l.q,
        native: l.native.as_bytes(),
        pre: [Some(l.from), None],
        rcvf: &l.body.rcvf,
    }
}

/// Where a ranked RT comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Src {
    /// The HR's own learned RT, by index in its list for the SAN.
    Learned(usize),
    /// The LRT of twin `t`.
    TwinLrt(PortId),
    /// Learned RT `i` of twin `t`.
    TwinLearned(PortId, usize),
}

impl Router {
    pub(super) fn derive(&self, twin: PortId, rt: &Rt) -> Rt {
        let t = &self.cfg.hrs[twin];
        let mut rcvf = Vec::with_capacity(rt.rcvf.len() + 1);
        rcvf.push(t.address);
        rcvf.extend_from_slice(&rt.rcvf);
        Rt {
            san_id: rt.san_id,
            sn: rt.sn.wrapping_add(self.adv_epoch),
            csr: Route(vec![RouterHop::egress(t.address)]).catenate(&rt.csr),
            q: rt.q.saturating_add(self.router_cost()),
            mtu: rt.mtu,
            rcvf,
            nodes: rt.nodes.clone(),
        }
    }

    /// The RTs HR `port` has for `san` (learned and twin-derived), ranked
    /// best first without building the derived ones.
    pub(super) fn ranked(&self, port: PortId, san: Address) -> Vec<(Rank<'_>, Src)> {
        let mut v: Vec<(Rank<'_>, Src)> = Vec::new();
        if san == self.cfg.hrs[port].san_id {
            return v;
        }
        if let Some(l) = self.hrs[port].learned.get(&san) {
            for (i, l) in l.iter().enumerate() {
                v.push((learned_rank(l), Src::Learned(i)));
            }
        }
        let rc = self.router_cost();
        for t in self.hrs.ids() {
            if t == port || !self.hrs[t].up {
                continue;
            }
            let ta = self.cfg.hrs[t].address;
            if self.cfg.hrs[t].san_id == san && self.hrs[t].lrt_nodes.is_some() {
                v.push((
                    Rank {
                        q: rc,
                        native: &[],
                        pre: [Some(ta), None],
                        rcvf: &[],
                    },
                    Src::TwinLrt(t),
                ));
            }
            if let Some(l) = self.hrs[t].learned.get(&san) {
                for (i, x) in l.iter().enumerate() {
                    v.push((
                        Rank {
                            q: x.q.saturating_add(rc),
                            native: x.native.as_bytes(),
                            pre: [Some(ta), Some(x.from)],
                            rcvf: &x.body.rcvf,
                        },
                        Src::TwinLearned(t, i),
                    ));
                }
            }
        }
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The nodes of the RT a ranked source stands for.
    pub(super) fn src_nodes(&self, port: PortId, san: Address, src: Src) -> &NodeList {
        match src {
            Src::Learned(i) => &self.hrs[port].learned[&san][i].body.nodes.0,
            Src::TwinLrt(t) => self.hrs[t]
                .lrt_nodes
                .as_deref()
                .expect("ranked only when present"),
            Src::TwinLearned(t, i) => &self.hrs[t].learned[&san][i].body.nodes.0,
        }
    }

    /// Builds the RT a ranked source stands for, as HR `port` holds it.
    pub(super) fn materialize(&self, port: PortId, san: Address, src: Src) -> (Rt, Origin) {
        match src {
            Src::Learned(i) => {
                let l = &self.hrs[port].learned[&san][i];
                (l.rt(), Origin::Buddy { from: l.from })
            }
            Src::TwinLrt(t) => (
                self.derive(t, &self.lrt_rt(t).expect("ranked only when present")),
                Origin::Twin { port: t },
            ),
            Src::TwinLearned(t, i) => {
                let mut rt = self.derive(t, &self.hrs[t].learned[&san][i].rt());
                rt.sn = rt.sn.wrapping_add(self.pass_seed);
                (rt, Origin::Twin { port: t })
            }
        }
    }

    /// HR `port`'s learned RTs of `san` changed: its twins re-advertise
    /// their kept RTs of it, and its FIB rows are redone.
    pub(super) fn learned_changed(&mut self, port: PortId, san: Address) {
        self.learned_changed_fib(port, san, true);
    }

    /// As [`Router::learned_changed`]; `fib` says whether the change can
    /// move a FIB row (see [`fib_summary`]).
    pub(super) fn learned_changed_fib(&mut self, port: PortId, san: Address, fib: bool) {
        self.mcast_dirty = true;
        self.sans_with_groups_due.insert(san);
        for t in self.hrs.ids() {
            if t != port {
                self.hrs[t].dirty.insert(san);
            }
        }
        if fib {
            self.fib_san_changed(san);
        }
    }
}
