//! A member of a simulated SAN ([`super::SimSan`]): one port, a native
//! address, an address or none yet, and the SAN's link routing table as
//! RRP#7 sweeps would have it (every addressed member that is up).

use std::collections::HashMap;
use std::rc::Rc;

use rrp::router::FibEntry;
use rrp::{Address, NativeAddr, PortId};

use crate::agent::{LrtItem, Managed, PortFacts};
use crate::station::Carrier;
use crate::wire::Status;

use super::Time;

/// The SAN's members as every node's LRT lists them: address -> native
/// address, and the addresses in order. Shared by all nodes (one copy per
/// SAN, replaced when it changes).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Lrt {
    by_address: HashMap<Address, NativeAddr>,
    addresses: Vec<Address>,
}

impl Lrt {
    /// The table of these (address, native) pairs.
    pub fn new(mut pairs: Vec<(Address, NativeAddr)>) -> Lrt {
        pairs.sort_unstable_by_key(|(a, _)| *a);
        pairs.dedup_by_key(|(a, _)| *a);
        Lrt {
            addresses: pairs.iter().map(|(a, _)| *a).collect(),
            by_address: pairs.into_iter().collect(),
        }
    }

    /// The native address of `address`, when listed.
    pub fn native(&self, address: Address) -> Option<NativeAddr> {
        self.by_address.get(&address).copied()
    }

    /// How many members it lists.
    pub fn len(&self) -> usize {
        self.addresses.len()
    }

    /// Whether it lists none.
    pub fn is_empty(&self) -> bool {
        self.addresses.is_empty()
    }
}

/// One member of the simulated SAN, as its station sees it.
#[derive(Debug)]
pub struct SimNode {
    /// Its native address on the SAN's link.
    pub native: NativeAddr,
    /// Its address; [`Address::UNSPECIFIED`] until a master gives one.
    pub address: Address,
    /// When a master's PortInfo Set gave it its address.
    pub addressed_at: Option<Time>,
    /// The time of the call its station is in (for `addressed_at`).
    pub(super) now: Time,
    pub(super) lrt: Rc<Lrt>,
}

impl SimNode {
    pub(super) fn new(native: NativeAddr, address: Address, lrt: Rc<Lrt>) -> SimNode {
        SimNode {
            native,
            address,
            addressed_at: None,
            now: 0,
            lrt,
        }
    }
}

impl Managed for SimNode {
    fn ports(&self) -> usize {
        1
    }

    fn port(&self, port: PortId) -> Option<PortFacts> {
        (port.index() == 0).then_some(PortFacts {
            address: self.address,
            san_id: Address(0x0201),
            mtu: 1500,
            cost: 1,
            up: true,
            link_kind: 1,
            native: self.native,
            lrt_entries: self.lrt.len().min(usize::from(u16::MAX)) as u16,
            buddies: 0,
        })
    }

    fn counters(&self, _port: PortId) -> Option<Vec<u64>> {
        None
    }

    fn route(&self, _port: PortId, _dst: Address) -> Option<FibEntry> {
        None
    }

    fn lrt(&self, _port: PortId) -> Vec<LrtItem> {
        Vec::new()
    }

    fn set_port_up(&mut self, _port: PortId, _up: bool) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }

    fn set_mtu(&mut self, _port: PortId, _mtu: u32) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }

    fn set_cost(&mut self, _port: PortId, _cost: u16) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }

    fn clear_counters(&mut self, _port: PortId) -> Result<(), Status> {
        Ok(())
    }

    fn set_name(&mut self, _name: &str) {}

    fn set_address(&mut self, _port: PortId, address: Address) -> Result<(), Status> {
        if self.address != address {
            self.address = address;
            self.addressed_at = Some(self.now);
        }
        Ok(())
    }
}

impl Carrier for SimNode {
    fn addresses(&self) -> Vec<Address> {
        vec![self.address]
    }

    fn next_hop(&self, dst: Address) -> Option<(PortId, NativeAddr)> {
        self.lrt.native(dst).map(|n| (PortId::new(0), n))
    }

    fn members(&self, _port: PortId) -> Vec<Address> {
        self.lrt
            .addresses
            .iter()
            .copied()
            .filter(|a| *a != self.address)
            .collect()
    }
}
