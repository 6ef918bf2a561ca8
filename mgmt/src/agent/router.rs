//! A router's RRP engine as the agent manages it ([`RouterNode`]): ports,
//! LRTs and FIB entries read from the [`Router`], changes made through the
//! same engine calls as the admin socket's (`mwctl port N down` is
//! `Router::port_down`), counters from the host's dataplane.

use rrp::counters::CounterSet;
use rrp::router::{FibEntry, Next, Router};
use rrp::{Address, LinkKind, NativeAddr, PortId, PortStats};

use crate::attr::{PathRecord, PortCounters, PortCountersExtended, PortInfo};
use crate::wire::Status;

use super::{LrtItem, Managed, PortFacts, Time};
use crate::station::Carrier;

/// Where a router's port counters come from (the dataplane's, less what
/// the admin cleared).
pub trait CounterSource {
    /// Port `port`'s counters, `None` for a port the box does not have.
    fn counters(&self, port: PortId) -> Option<PortStats>;
    /// Clears port `port`'s counters (what reads them afterwards starts
    /// from 0, as after `mwctl clear counters`).
    fn clear(&self, port: PortId);
}

/// A router for the agent: its engine at `now`, its ports' link kinds, its
/// counters.
pub struct RouterNode<'a, C: CounterSource + ?Sized> {
    /// The engine.
    pub router: &'a mut Router,
    /// The engine's clock.
    pub now: Time,
    /// Each port's link kind.
    pub kinds: &'a [LinkKind],
    /// The counters.
    pub counters: &'a C,
}

impl<C: CounterSource + ?Sized> RouterNode<'_, C> {
    /// Port `port`'s counters named `names`: PortCounters and
    /// PortCountersExtended carry their counters by their slot names (the
    /// port's counter set has more: docs/management.md "PortCounters").
    fn named(&self, port: PortId, names: &[&str]) -> Option<Vec<u64>> {
        if port.index() >= self.ports() {
            return None;
        }
        let c = self.counters.counters(port)?;
        Some(names.iter().map(|n| c.get(n).unwrap_or(0)).collect())
    }
}

impl<C: CounterSource + ?Sized> Managed for RouterNode<'_, C> {
    fn ports(&self) -> usize {
        self.router.config().hrs.len()
    }

    fn port(&self, port: PortId) -> Option<PortFacts> {
        let h = self.router.config().hrs.get(port)?;
        let lrt = self.router.lrt(port);
        let clamp = |n: usize| n.min(usize::from(u16::MAX)) as u16;
        Some(PortFacts {
            address: h.address,
            san_id: h.san_id,
            mtu: h.mtu,
            cost: h.cost,
            up: self.router.port_is_up(port),
            link_kind: self
                .kinds
                .get(port.index())
                .map_or(PortInfo::LINK_MEMORY, |k| PortInfo::link_kind_of(*k)),
            native: h.native,
            lrt_entries: clamp(lrt.len()),
            buddies: clamp(lrt.values().filter(|e| e.router).count()),
        })
    }

    fn counters(&self, port: PortId) -> Option<Vec<u64>> {
        self.named(port, &PortCounters::NAMES)
    }

    /// The link's counters, which the box counts for every port
    /// (docs/stats.md "The link's counters").
    fn link_counters(&self, port: PortId) -> Option<Vec<u64>> {
        self.named(port, &PortCountersExtended::NAMES)
    }

    fn route(&self, port: PortId, dst: Address) -> Option<FibEntry> {
        self.router.fib().lookup(port, dst)
    }

    fn group_mtu(&self, g: Address) -> Option<u32> {
        self.router.group_mtu(g)
    }

    /// RRP#6's first HR and the best of RRP#2's routes, as a node on
    /// `port`'s SAN is answered (docs/spec-notes.md 52).
    fn path(&self, port: PortId, dst: Address) -> Option<PathRecord> {
        let hrs = &self.router.config().hrs;
        let here = hrs.get(port)?;
        let first_hr = self.router.which_hr(port, dst)?;
        let best = self.router.routes_for_node(port, dst).into_iter().next();
        let native = if first_hr == here.address {
            here.native
        } else {
            self.router
                .lrt(port)
                .get(&first_hr)
                .map(|e| e.native)
                .unwrap_or_default()
        };
        let on_san = first_hr == dst || self.router.lrt(port).contains_key(&dst);
        Some(PathRecord {
            destination: dst,
            source: Address::UNSPECIFIED,
            kind: if on_san {
                PathRecord::ON_SAN
            } else {
                PathRecord::ROUTED
            },
            first_hr,
            q: best.as_ref().map_or(0, |r| r.q),
            mtu: best.map_or(here.mtu, |r| r.mtu),
            native,
        })
    }

    fn lrt(&self, port: PortId) -> Vec<LrtItem> {
        self.router
            .lrt(port)
            .values()
            .map(|e| LrtItem {
                address: e.info.address,
                router: e.router,
                is_static: e.is_static,
                missed: e.missed.min(255) as u8,
            })
            .collect()
    }

    fn set_port_up(&mut self, port: PortId, up: bool) -> Result<(), Status> {
        if up {
            self.router.port_up(self.now, port);
        } else {
            self.router.port_down(self.now, port);
        }
        Ok(())
    }

    fn set_mtu(&mut self, port: PortId, mtu: u32) -> Result<(), Status> {
        self.router
            .set_mtu(port, mtu)
            .map_err(|_| Status::INVALID_VALUE)
    }

    fn set_cost(&mut self, port: PortId, cost: u16) -> Result<(), Status> {
        self.router
            .set_cost(port, cost)
            .map_err(|_| Status::INVALID_VALUE)
    }

    fn clear_counters(&mut self, port: PortId) -> Result<(), Status> {
        self.counters.clear(port);
        Ok(())
    }

    fn set_name(&mut self, name: &str) {
        self.router.set_name(name);
    }

    /// From the LRT: a router HR before a node when both have that native
    /// address (a router's HR is the next hop of a route through it), then
    /// the lower address.
    fn address_of(&self, port: PortId, native: &NativeAddr) -> Option<Address> {
        if !self.router.config().hrs.has(port) {
            return None;
        }
        self.router
            .lrt(port)
            .iter()
            .filter(|(_, e)| e.native == *native)
            .min_by_key(|(a, e)| (!e.router, **a))
            .map(|(a, _)| *a)
    }
}

impl<C: CounterSource + ?Sized> Carrier for RouterNode<'_, C> {
    fn addresses(&self) -> Vec<Address> {
        self.router.config().hrs.iter().map(|h| h.address).collect()
    }

    /// The cheapest route any HR has to `dst`, ties to the lower port: a
    /// MAD the box sends itself may leave by any HR.
    fn next_hop(&self, dst: Address) -> Option<(PortId, NativeAddr)> {
        let fib = self.router.fib();
        self.router
            .config()
            .hrs
            .ids()
            .filter_map(|t| fib.lookup(t, dst))
            .filter_map(|e| match e.next {
                Next::Forward { port, native } => Some((e.q, port, native)),
                Next::Local => None,
            })
            .min_by_key(|(q, port, _)| (*q, port.index()))
            .map(|(_, port, native)| (port, native))
    }

    /// The LRT of `port`: every node and router HR heard on its SAN.
    fn members(&self, port: PortId) -> Vec<Address> {
        if !self.router.config().hrs.has(port) {
            return Vec::new();
        }
        self.router.lrt(port).keys().copied().collect()
    }

    /// From the LRTs: the first port whose SAN has `address` as a member.
    fn neighbour(&self, address: Address) -> Option<(PortId, NativeAddr)> {
        self.router
            .config()
            .hrs
            .ids()
            .find_map(|p| self.router.lrt(p).get(&address).map(|e| (p, e.native)))
            .or_else(|| self.next_hop(address))
    }
}
