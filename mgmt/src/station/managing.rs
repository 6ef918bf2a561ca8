//! A node together with the SAN managers it runs: what the agent and the
//! station see, so that SMInfo Gets and Sets reach the manager of the HR
//! they arrive on (docs/manager.md), and everything else the node.

use rrp::router::FibEntry;
use rrp::{Address, NativeAddr, PortId};

use crate::agent::{LrtItem, Managed, PortFacts};
use crate::attr::{
    AddressTable, Attribute, InformInfo, McGroupRecord, McMemberRecord, NodeRecord, PartitionsText,
    PathRecord, SmInfo,
};
use crate::manager::Manager;
use crate::partition::{Membership, PartitionKey};
use crate::station::{Carrier, Time};
use crate::wire::Method;
use crate::wire::Status;

/// The node `node` with its managers, at `now`.
pub(super) struct Managing<'a, N: ?Sized> {
    pub node: &'a mut N,
    pub managers: &'a mut [(PortId, Manager)],
    pub now: Time,
}

impl<N: ?Sized> Managing<'_, N> {
    /// The manager on `port` when it is its SAN's master.
    fn master(&self, port: PortId) -> Option<&Manager> {
        self.managers
            .iter()
            .find(|(p, m)| *p == port && m.state() == crate::manager::SmState::Master)
            .map(|(_, m)| m)
    }
}

impl<N: Carrier + ?Sized> Managed for Managing<'_, N> {
    fn ports(&self) -> usize {
        self.node.ports()
    }

    fn port(&self, port: PortId) -> Option<PortFacts> {
        self.node.port(port)
    }

    fn counters(&self, port: PortId) -> Option<Vec<u64>> {
        self.node.counters(port)
    }

    fn link_counters(&self, port: PortId) -> Option<Vec<u64>> {
        self.node.link_counters(port)
    }

    fn route(&self, port: PortId, dst: Address) -> Option<FibEntry> {
        self.node.route(port, dst)
    }

    fn lrt(&self, port: PortId) -> Vec<LrtItem> {
        self.node.lrt(port)
    }

    fn set_port_up(&mut self, port: PortId, up: bool) -> Result<(), Status> {
        self.node.set_port_up(port, up)
    }

    fn set_mtu(&mut self, port: PortId, mtu: u32) -> Result<(), Status> {
        self.node.set_mtu(port, mtu)
    }

    fn set_cost(&mut self, port: PortId, cost: u16) -> Result<(), Status> {
        self.node.set_cost(port, cost)
    }

    fn clear_counters(&mut self, port: PortId) -> Result<(), Status> {
        self.node.clear_counters(port)
    }

    fn set_name(&mut self, name: &str) {
        self.node.set_name(name);
    }

    fn address_of(&self, port: PortId, native: &NativeAddr) -> Option<Address> {
        self.node.address_of(port, native)
    }

    fn set_address(&mut self, port: PortId, address: Address) -> Result<(), Status> {
        self.node.set_address(port, address)
    }

    fn unaddressed(&mut self, port: PortId, native: NativeAddr, identity: u64) {
        let now = self.now;
        if let Some((_, m)) = self.managers.iter_mut().find(|(p, _)| *p == port) {
            m.on_unaddressed(now, native, identity);
        }
    }

    /// Traps that say the SAN changed (an HR down or up, a neighbour HR
    /// down) make every master here sweep heavily next.
    /// Every master here forwards it to its subscribers.
    fn notice(&mut self, _port: PortId, notice: &crate::attr::Notice) {
        use crate::attr::Notice;
        let now = self.now;
        for (_, m) in self.managers.iter_mut() {
            m.forward(now, notice);
        }
        if matches!(
            notice.trap_number,
            Notice::TRAP_PORT_STATE | Notice::TRAP_HR_DOWN
        ) {
            for (_, m) in self.managers.iter_mut() {
                if m.state() == crate::manager::SmState::Master {
                    m.heavy_sweep();
                }
            }
        }
    }

    fn sm_info(&self, port: PortId, asked_key: u64) -> Option<SmInfo> {
        self.managers
            .iter()
            .find(|(p, _)| *p == port)
            .map(|(_, m)| m.sm_info(asked_key))
    }

    fn sa_record(
        &self,
        port: PortId,
        modifier: u32,
        template: &NodeRecord,
    ) -> Option<Result<NodeRecord, Status>> {
        self.master(port).map(|m| m.node_record(modifier, template))
    }

    fn master_member_table(
        &self,
        port: PortId,
        member: Address,
    ) -> Option<Vec<(PartitionKey, Membership)>> {
        self.master(port).map(|m| m.member_table(member))
    }

    fn sa_addresses(&self, port: PortId, from: u64) -> Option<AddressTable> {
        self.master(port).map(|m| m.address_table(from))
    }

    fn sa_partitions_text(&self, port: PortId, offset: u32) -> Option<PartitionsText> {
        self.master(port).map(|m| m.partitions_text(offset))
    }

    /// A member of the master's database is reached on the SAN itself (Q
    /// the SAN's cost, MTU the SAN's); anything else as the node's routes
    /// say; SA's "no records" when neither knows the destination.
    fn sa_path(
        &self,
        port: PortId,
        requester: Address,
        query: &PathRecord,
    ) -> Option<Result<PathRecord, Status>> {
        let m = self.master(port)?;
        let dst = query.destination;
        let source = if query.source == Address::UNSPECIFIED {
            requester
        } else {
            query.source
        };
        if !dst.is_node() {
            return Some(Err(Status::INVALID_VALUE));
        }
        let answer = if m.database().contains_key(&dst) {
            self.node.port(port).map(|f| PathRecord {
                destination: dst,
                source,
                kind: PathRecord::ON_SAN,
                first_hr: dst,
                q: f.cost,
                mtu: f.mtu,
                native: self
                    .node
                    .neighbour(dst)
                    .filter(|(p, _)| *p == port)
                    .map(|(_, n)| n)
                    .unwrap_or_default(),
            })
        } else {
            self.node
                .path(port, dst)
                .map(|p| PathRecord { source, ..p })
        };
        Some(answer.ok_or(Status::SA_NO_RECORDS))
    }

    fn path(&self, port: PortId, dst: Address) -> Option<PathRecord> {
        self.node.path(port, dst)
    }

    fn group_mtu(&self, g: Address) -> Option<u32> {
        self.node.group_mtu(g)
    }

    /// Multicast group and member records at the master of `port`'s SAN.
    fn sa_mcast(
        &mut self,
        port: PortId,
        requester: Address,
        method: Method,
        attribute: u16,
        modifier: u32,
        data: &[u8],
    ) -> Option<Result<Attribute, Status>> {
        let now = self.now;
        let san_mtu = self.node.port(port).map_or(0, |f| f.mtu);
        let node: &N = self.node;
        let elsewhere = |g: Address| node.group_mtu(g);
        let (_, m) = self
            .managers
            .iter_mut()
            .find(|(p, m)| *p == port && m.state() == crate::manager::SmState::Master)?;
        let bad = || Err(Status::INVALID_VALUE);
        Some(match attribute {
            McGroupRecord::ID => match McGroupRecord::parse(data) {
                Err(_) => bad(),
                Ok(r) => match method {
                    Method::SET => m.mc_create(&r, &elsewhere, san_mtu),
                    Method::DELETE => m.mc_delete(&r),
                    Method::GET => m.mc_group_get(modifier),
                    _ => Err(Status::METHOD_ATTR_UNSUPPORTED),
                }
                .map(Attribute::McGroupRecord),
            },
            McMemberRecord::ID => match McMemberRecord::parse(data) {
                Err(_) => bad(),
                Ok(r) => match method {
                    Method::SET => m.mc_join(now, requester, &r),
                    Method::DELETE => m.mc_leave(requester, &r),
                    Method::GET => m.mc_member_get(modifier, &r),
                    _ => Err(Status::METHOD_ATTR_UNSUPPORTED),
                }
                .map(Attribute::McMemberRecord),
            },
            _ => Err(Status::METHOD_ATTR_UNSUPPORTED),
        })
    }

    /// InformInfo at the master of `port`'s SAN.
    fn sa_inform(
        &mut self,
        port: PortId,
        requester: Address,
        method: Method,
        modifier: u32,
        info: &InformInfo,
    ) -> Option<Result<InformInfo, Status>> {
        let now = self.now;
        let (_, m) = self
            .managers
            .iter_mut()
            .find(|(p, m)| *p == port && m.state() == crate::manager::SmState::Master)?;
        Some(match method {
            Method::SET => m.inform_set(now, requester, info),
            Method::DELETE => m.inform_delete(requester, info),
            Method::GET => m.inform_get(now, modifier),
            _ => Err(Status::METHOD_ATTR_UNSUPPORTED),
        })
    }

    fn sm_control(
        &mut self,
        port: PortId,
        from: Address,
        modifier: u32,
        info: &SmInfo,
    ) -> Option<Result<SmInfo, Status>> {
        let now = self.now;
        self.managers
            .iter_mut()
            .find(|(p, _)| *p == port)
            .map(|(_, m)| m.on_control(now, from, modifier, info))
    }
}

impl<N: Carrier + ?Sized> Carrier for Managing<'_, N> {
    fn addresses(&self) -> Vec<Address> {
        self.node.addresses()
    }

    fn next_hop(&self, dst: Address) -> Option<(PortId, NativeAddr)> {
        self.node.next_hop(dst)
    }

    fn neighbour(&self, address: Address) -> Option<(PortId, NativeAddr)> {
        self.node.neighbour(address)
    }

    fn members(&self, port: PortId) -> Vec<Address> {
        self.node.members(port)
    }
}
