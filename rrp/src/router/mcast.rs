//! Multicast over logical addresses (docs/multicast.md, docs/spec-notes.md
//! 57): where a box forwards a packet whose destination is a group.
//!
//! The draft gives the address space (0x8000-0xFFFD) and R4, the logical
//! addresses a node listens to, in RRP#5 answers and in RT node entries;
//! nothing more. The reading:
//!
//! - **Membership**: a SAN has members of group G when a node of it lists G
//!   in its R4. A box knows its own SANs' members from its LRTs (RRP#5
//!   answers to its keepalives) and every other SAN's from the RTs that
//!   describe it (the newest one it holds), so every router knows every
//!   group's member SANs.
//! - **Reverse path**: a packet from source S on SAN s is accepted only on
//!   the box's *upstream* HR for s, the HR whose own side has the best route
//!   to s (the one attached to s, else the lowest Q of its learned RTs, ties
//!   to the lower port), and only from the one member of that SAN that may
//!   put it there: S itself when the SAN is s, else the SAN's *designated
//!   forwarder* for s.
//! - **Designated forwarder**: on a SAN Y other than s, the router HR whose
//!   route to s through its twins has the lowest Q (ties to the lower HR
//!   address) is the one that forwards packets from s onto Y. Every HR of Y
//!   computes the same answer from the same RTs: its own twin-derived Q as
//!   it advertises it, and each buddy's as that buddy advertised it.
//! - **Pruning**: a box forwards onto Y (where it is the designated
//!   forwarder) only when Y is on a best route from the box to a member SAN
//!   of G (Y is that SAN, or a best route to it leaves through Y; every
//!   equal-best route counts, so that a tie never prunes a branch a member
//!   needs).
//!
//! Each SAN other than s thus gets exactly one copy, from its designated
//! forwarder, and a box accepts exactly one (from its upstream): the
//! distribution tree is the reverse shortest-path tree toward s, loop-free
//! whenever the RTs are consistent. [`McastTables`] is that state in the
//! form the forwarding path reads.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::address::Address;
use crate::limits::MAX_PORTS;
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::serial;

use super::engine::*;

/// The least time between two RRP#8 a box sends one router because of
/// conflicting group packets.
pub const CONFLICT_ASK_MS: Time = 2_000;

/// A set of ports (bit `i`: port `i`), wide enough for every port a box has.
pub type PortMask = u32;

const _: () = assert!(
    MAX_PORTS <= PortMask::BITS as usize,
    "a PortMask holds a bit for every port of a box"
);

/// How a box treats packets from the nodes of one SAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSan {
    /// The SAN (its SAN-ID).
    pub san: Address,
    /// The upstream port: packets from this SAN are accepted only here.
    pub up: PortId,
    /// The native address they must come from on `up`'s SAN: the
    /// designated forwarder's; `None` when `up` is on the source's own SAN
    /// (the source sends it there itself).
    pub from: Option<NativeAddr>,
    /// The ports whose SAN this box is the designated forwarder of, for
    /// this source SAN (never `up`).
    pub df: PortMask,
}

/// A group that has members somewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McastGroup {
    /// The logical address.
    pub group: Address,
    /// The SANs (SAN-IDs) with members, sorted.
    pub member_sans: Vec<Address>,
    /// The ports on a best route to a member SAN (or attached to one).
    pub branches: PortMask,
    /// The ports whose own SAN has members (a subset of `branches`).
    pub local: PortMask,
}

/// A box's multicast forwarding state, built from its RTs and LRTs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct McastTables {
    /// Bumped on every change.
    pub version: u64,
    /// Per source SAN, by index.
    pub sans: Vec<SourceSan>,
    /// Source node address -> index in `sans`, sorted by address.
    pub sources: Vec<(Address, u16)>,
    /// Groups with members, sorted by address.
    pub groups: Vec<McastGroup>,
}

impl McastTables {
    /// The group `g`, if it has members.
    pub fn group(&self, g: Address) -> Option<&McastGroup> {
        self.groups
            .binary_search_by_key(&g, |x| x.group)
            .ok()
            .map(|i| &self.groups[i])
    }

    /// What the box does with packets from source node `s`.
    pub fn source(&self, s: Address) -> Option<&SourceSan> {
        let i = self.sources.binary_search_by_key(&s, |x| x.0).ok()?;
        self.sans.get(usize::from(self.sources[i].1))
    }

    /// The ports a packet for `g` from `s` arriving on `port` from `native`
    /// leaves by, or why it does not: the decision the forwarding path
    /// makes from the published form of these tables.
    pub fn decide(
        &self,
        g: Address,
        s: Address,
        port: PortId,
        native: &NativeAddr,
    ) -> Result<PortMask, McastRefusal> {
        let Some(src) = self.source(s) else {
            return Err(McastRefusal::UnknownSource);
        };
        if src.up != port || src.from.is_some_and(|f| f != *native) {
            return Err(McastRefusal::NotUpstream);
        }
        let branches = self.group(g).map_or(0, |x| x.branches);
        match src.df & branches & !bit(port) {
            0 => Err(McastRefusal::NoBranch),
            m => Ok(m),
        }
    }
}

/// Why a box does not forward a group packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McastRefusal {
    /// Its source is not a node the box knows (or not given).
    UnknownSource,
    /// It did not arrive on the upstream HR from the member that may send it
    /// there (the reverse-path check).
    NotUpstream,
    /// No branch of the box leads to a member SAN.
    NoBranch,
}

/// The bit of `port` in a [`PortMask`] (0 for a port no mask holds, which no
/// box has: see [`MAX_PORTS`]).
pub const fn bit(port: PortId) -> PortMask {
    if (port.0 as u32) < PortMask::BITS {
        1 << port.0
    } else {
        0
    }
}

impl Router {
    /// The box's multicast forwarding state (docs/multicast.md).
    pub fn mcast(&self) -> Arc<McastTables> {
        self.mcast.clone()
    }

    /// The Q of the best route to SAN `san` that leaves through HR `h`'s own
    /// SAN (0 when `h` is on `san`); `None` when `h` has none or is down.
    pub(super) fn own_side_q(&self, h: PortId, san: Address) -> Option<u16> {
        if !self.hrs[h].up {
            return None;
        }
        if self.cfg.hrs[h].san_id == san {
            return Some(0);
        }
        self.hrs[h].learned.get(&san)?.iter().map(|l| l.q).min()
    }

    /// The upstream HR for SAN `san`: the lowest own-side Q, ties to the
    /// lower port.
    pub(super) fn upstream(&self, san: Address) -> Option<(PortId, u16)> {
        self.hrs
            .ids()
            .filter_map(|h| self.own_side_q(h, san).map(|q| (q, h)))
            .min_by_key(|(q, h)| (*q, h.index()))
            .map(|(q, h)| (h, q))
    }

    /// Q of the best route to `san` from HR `p` through its twins, as `p`
    /// advertises it to its buddies.
    fn twin_q(&self, p: PortId, san: Address) -> Option<u16> {
        self.hrs
            .ids()
            .filter(|t| *t != p)
            .filter_map(|t| self.own_side_q(t, san))
            .min()
            .map(|q| q.saturating_add(self.router_cost()))
    }

    /// The best buddy of HR `p` toward `san` as the buddies advertise it:
    /// (its Q as it sent it, its address, its native address).
    fn best_buddy(&self, p: PortId, san: Address) -> Option<(u16, Address, NativeAddr)> {
        self.hrs[p]
            .learned
            .get(&san)?
            .iter()
            .map(|l| (l.body.q, l.from, l.native))
            .min_by_key(|(q, a, _)| (*q, *a))
    }

    /// Whether HR `p` is the designated forwarder of its SAN for packets
    /// from SAN `san`.
    pub(super) fn is_df(&self, p: PortId, san: Address) -> bool {
        let me = &self.cfg.hrs[p];
        if me.san_id == san || !self.hrs[p].up {
            return false;
        }
        let Some(mine) = self.twin_q(p, san) else {
            return false;
        };
        match self.best_buddy(p, san) {
            Some((q, a, _)) => (mine, me.address) < (q, a),
            None => true,
        }
    }

    /// The logical addresses listed by the nodes of `list`.
    fn groups_of<'a>(
        nodes: impl Iterator<Item = &'a crate::wire::message::NodeInfo>,
        out: &mut BTreeSet<Address>,
    ) {
        for n in nodes {
            if let Some(l) = &n.logical {
                out.extend(l.iter().copied().filter(|a| a.is_logical()));
            }
        }
    }

    /// Every SAN's nodes as the box knows them: its LRTs, then for each
    /// other SAN the node lists of the RTs it holds, the newest of each
    /// mapper (several HRs map one SAN, each with its own serial numbers:
    /// the last element of the RCVF says whose LRT an RT is), all of them.
    /// (SAN-ID, nodes; a node listed by several mappers once per mapper).
    fn san_nodes(&self) -> BTreeMap<Address, Vec<&crate::wire::message::NodeInfo>> {
        let mut out: BTreeMap<Address, Vec<&crate::wire::message::NodeInfo>> = BTreeMap::new();
        for p in self.hrs.ids() {
            let san = self.cfg.hrs[p].san_id;
            let v = out.entry(san).or_default();
            v.extend(self.hrs[p].lrt.values().map(|e| &e.info));
        }
        let mut newest: BTreeMap<(Address, Address), &super::rt::Learned> = BTreeMap::new();
        for h in &self.hrs {
            for (san, list) in &h.learned {
                if self.cfg.hrs.iter().any(|c| c.san_id == *san) {
                    continue;
                }
                for l in list {
                    let mapper = l.body.rcvf.last().copied().unwrap_or(l.from);
                    match newest.get(&(*san, mapper)) {
                        Some(n) if !serial::newer(l.body.sn, n.body.sn) => {}
                        _ => {
                            newest.insert((*san, mapper), l);
                        }
                    }
                }
            }
        }
        for ((san, _), l) in newest {
            out.entry(san)
                .or_default()
                .extend(l.body.nodes.0.iter().map(|n| &n.info));
        }
        out
    }

    /// Whether some HR holds an RT of `san` with group members, noted in
    /// `sans_with_groups`.
    fn note_groups_of(&mut self, san: Address) {
        let has = self.hrs.iter().any(|h| {
            h.learned
                .get(&san)
                .is_some_and(|l| l.iter().any(|l| l.body.nodes.0.has_logical()))
        });
        if has {
            self.sans_with_groups.insert(san);
        } else {
            self.sans_with_groups.remove(&san);
        }
    }

    /// Recomputes [`McastTables`]; true when they changed (the version is
    /// bumped then).
    pub(super) fn compute_mcast(&mut self) -> bool {
        // No group anywhere (the common case): nothing to forward, and no
        // walk over every SAN's nodes.
        let due = if self.sans_with_groups_stale {
            self.sans_with_groups_stale = false;
            self.sans_with_groups.clear();
            self.sans_with_groups_due.clear();
            self.hrs
                .iter()
                .flat_map(|h| h.learned.keys().copied())
                .collect()
        } else {
            std::mem::take(&mut self.sans_with_groups_due)
        };
        for san in due {
            self.note_groups_of(san);
        }
        let any = !self.sans_with_groups.is_empty()
            || self.hrs.iter().any(|h| {
                h.lrt
                    .values()
                    .any(|e| e.info.logical.as_ref().is_some_and(|l| !l.is_empty()))
            });
        if !any {
            if self.mcast.groups.is_empty() && self.mcast.sans.is_empty() {
                return false;
            }
            let version = self.mcast.version + 1;
            self.mcast = Arc::new(McastTables {
                version,
                ..McastTables::default()
            });
            return true;
        }
        let nodes = self.san_nodes();
        let mut sans = Vec::new();
        let mut sources: Vec<(Address, u16)> = Vec::new();
        let mut members: BTreeMap<Address, BTreeSet<Address>> = BTreeMap::new();
        for (san, list) in &nodes {
            let mut gs = BTreeSet::new();
            Self::groups_of(list.iter().copied(), &mut gs);
            for g in gs {
                members.entry(g).or_default().insert(*san);
            }
            let Some((up, _)) = self.upstream(*san) else {
                continue;
            };
            let from = if self.cfg.hrs[up].san_id == *san {
                None
            } else {
                match self.best_buddy(up, *san) {
                    Some((_, _, n)) => Some(n),
                    None => continue,
                }
            };
            let df = self
                .hrs
                .ids()
                .filter(|p| *p != up && self.is_df(*p, *san))
                .fold(0, |m, p| m | bit(p));
            let i = u16::try_from(sans.len()).unwrap_or(u16::MAX);
            sans.push(SourceSan {
                san: *san,
                up,
                from,
                df,
            });
            for n in list {
                if n.address.is_node() && !self.box_has(n.address) {
                    sources.push((n.address, i));
                }
            }
        }
        sources.sort_by_key(|x| x.0);
        sources.dedup_by_key(|x| x.0);
        let mut groups = Vec::new();
        for (g, msans) in members {
            let mut branches = 0;
            let mut local = 0;
            for m in &msans {
                let mut best: Option<u16> = None;
                let mut at = 0;
                for h in self.hrs.ids() {
                    let Some(q) = self.own_side_q(h, *m) else {
                        continue;
                    };
                    if q == 0 {
                        local |= bit(h);
                    }
                    match best {
                        Some(b) if q > b => {}
                        Some(b) if q == b => at |= bit(h),
                        _ => {
                            best = Some(q);
                            at = bit(h);
                        }
                    }
                }
                branches |= at;
            }
            groups.push(McastGroup {
                group: g,
                member_sans: msans.into_iter().collect(),
                branches: branches | local,
                local,
            });
        }
        let new = McastTables {
            version: self.mcast.version,
            sans,
            sources,
            groups,
        };
        if new == *self.mcast {
            return false;
        }
        let version = new.version + 1;
        self.mcast = Arc::new(McastTables { version, ..new });
        true
    }

    /// A group packet from the router at `native` on `port`'s SAN conflicts
    /// with this box's view of who forwards onto that SAN: ask that router
    /// for its RTs (RRP#8), at most once per [`CONFLICT_ASK_MS`] each, so
    /// that an RT lost on the way (they are re-sent only every refresh)
    /// does not keep the two views apart (docs/multicast.md "Repair").
    pub(super) fn mcast_conflict(&mut self, now: Time, port: PortId, native: &NativeAddr) {
        let Some((b, _)) = self.hrs[port]
            .lrt
            .iter()
            .find(|(_, e)| e.router && e.native == *native)
            .map(|(a, e)| (*a, e.native))
        else {
            return;
        };
        if self
            .mcast_asked
            .get(&(port, b))
            .is_some_and(|t| now < t + CONFLICT_ASK_MS)
        {
            return;
        }
        self.mcast_asked.retain(|_, t| now < *t + CONFLICT_ASK_MS);
        self.mcast_asked.insert((port, b), now);
        self.send_msg(
            port,
            *native,
            b,
            &crate::wire::message::Message::RtRequest,
            0,
        );
        self.event(super::event::Event::McastConflict { port, router: b });
    }

    /// The largest packet a group packet from this box reaches every member
    /// SAN of `g` with (bytes, 0: unlimited): the smallest MTU of the best
    /// routes to each member SAN (a box on the SAN: that SAN's MTU).
    /// `None` when `g` has no members the box knows of. What a SAN manager
    /// learns when it creates a group that exists elsewhere
    /// (docs/multicast.md "Groups").
    pub fn group_mtu(&self, g: Address) -> Option<u32> {
        let t = self.mcast.group(g)?;
        let mut mtu: Option<u32> = None;
        let min = |a: Option<u32>, b: u32| -> u32 {
            match a {
                None => b,
                Some(a) => super::rt::min_mtu(a, b),
            }
        };
        for m in &t.member_sans {
            let Some((up, _)) = self.upstream(*m) else {
                continue;
            };
            let here = self.cfg.hrs[up].mtu;
            let route = if self.cfg.hrs[up].san_id == *m {
                here
            } else {
                self.hrs[up]
                    .learned
                    .get(m)
                    .and_then(|l| l.iter().min_by_key(|l| l.q))
                    .and_then(|l| l.mtu.bytes())
                    .map_or(0, |b| b as u32)
            };
            mtu = Some(min(mtu, super::rt::min_mtu(here, route)));
        }
        mtu
    }
}
