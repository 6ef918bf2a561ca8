//! What the agent manages: the facts it reports and the changes it makes,
//! provided by its host (mwrouterd's control thread, an mwlab host). Every
//! change goes through the same path as the host's own administration
//! (docs/management.md "The agent"): a port taken down by a Set is down as if
//! `mwctl port N down` had been run.

use rrp::router::FibEntry;
use rrp::{Address, NativeAddr, PortId};

use crate::attr::{AddressTable, NodeRecord, PartitionsText, PathRecord, SmInfo};
use crate::partition::{Membership, PartitionKey};
use crate::wire::Status;

/// The kind of node the agent runs in (NodeInfo's NodeType).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeType {
    /// A host (InfiniBand: channel adapter).
    Host = 1,
    /// A router.
    Router = 3,
}

/// One port (HR) as the agent reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortFacts {
    /// The port's MessageWay address (0 for a host without one).
    pub address: Address,
    /// The SAN it is on.
    pub san_id: Address,
    /// MTU in bytes (0: unlimited).
    pub mtu: u32,
    /// The SAN's cost.
    pub cost: u16,
    /// Whether it is up.
    pub up: bool,
    /// 0 memory, 1 UDP, 2 Ethernet.
    pub link_kind: u8,
    /// Its native address.
    pub native: NativeAddr,
    /// Entries in its LRT.
    pub lrt_entries: u16,
    /// Buddies (routers) among them.
    pub buddies: u16,
}

/// One LRT entry as `LrtBlock` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LrtItem {
    /// Its address.
    pub address: Address,
    /// A router HR (a buddy).
    pub router: bool,
    /// A static entry.
    pub is_static: bool,
    /// Keepalives missed.
    pub missed: u8,
}

/// The node an agent manages.
pub trait Managed {
    /// Number of ports (HRs; 1 for a host).
    fn ports(&self) -> usize;

    /// A port's facts, `None` for a port the node does not have.
    fn port(&self, port: PortId) -> Option<PortFacts>;

    /// A port's counters in `PortCounters` order (docs/management.md).
    fn counters(&self, port: PortId) -> Option<Vec<u64>>;

    /// A port's link counters in `PortCountersExtended` order
    /// (docs/management.md); `None` where the node does not count them
    /// (then it has no PortCountersExtended: the agent answers 0x000C).
    fn link_counters(&self, port: PortId) -> Option<Vec<u64>> {
        let _ = port;
        None
    }

    /// The FIB entry of `dst` on ingress `port` (routers; `None` otherwise).
    fn route(&self, port: PortId, dst: Address) -> Option<FibEntry>;

    /// A port's LRT in address order (routers; empty otherwise).
    fn lrt(&self, port: PortId) -> Vec<LrtItem>;

    /// The address of the node at native address `native` on `port`'s SAN,
    /// as this node knows it (a router's LRT, a host's neighbours): what
    /// RouteEntry reports as the next hop's address. `None` when unknown.
    fn address_of(&self, port: PortId, native: &NativeAddr) -> Option<Address> {
        let _ = (port, native);
        None
    }

    /// Takes a port down or up.
    fn set_port_up(&mut self, port: PortId, up: bool) -> Result<(), Status>;

    /// Changes a port's MTU.
    fn set_mtu(&mut self, port: PortId, mtu: u32) -> Result<(), Status>;

    /// Changes a port's SAN cost.
    fn set_cost(&mut self, port: PortId, cost: u16) -> Result<(), Status>;

    /// Clears a port's counters (what reads them afterwards starts from 0).
    fn clear_counters(&mut self, port: PortId) -> Result<(), Status>;

    /// The node's name changed (NodeDescription).
    fn set_name(&mut self, name: &str);

    /// SMInfo of the SAN manager on `port`'s SAN that this node runs, as a
    /// Get from a requester giving SM key `asked_key` reads it; `None`:
    /// no manager there (docs/manager.md).
    fn sm_info(&self, port: PortId, asked_key: u64) -> Option<SmInfo> {
        let _ = (port, asked_key);
        None
    }

    /// The table of member `member` of `port`'s SAN as the master manager
    /// of that SAN that this node runs gives it, which this node checks
    /// packets against (empty: not a member, or the partitions are open;
    /// docs/partitions.md "At the routers"); `None`: no master here, the
    /// agent answers the copies the SAN's master set.
    fn master_member_table(
        &self,
        port: PortId,
        member: Address,
    ) -> Option<Vec<(PartitionKey, Membership)>> {
        let _ = (port, member);
        None
    }

    /// A SubnAdm NodeRecord Get (modifier: `mask << 16 | index` with the
    /// request's `template`, or `BY_ADDRESS | address`) for the master
    /// manager of `port`'s SAN; `None`: no master here.
    fn sa_record(
        &self,
        port: PortId,
        modifier: u32,
        template: &NodeRecord,
    ) -> Option<Result<NodeRecord, Status>> {
        let _ = (port, modifier, template);
        None
    }

    /// A SubnAdm GetTable of AddressRecord for the master manager of
    /// `port`'s SAN: its identity -> address map from identity `from` on,
    /// as much of it as one answer holds; `None`: no master here.
    fn sa_addresses(&self, port: PortId, from: u64) -> Option<AddressTable> {
        let _ = (port, from);
        None
    }

    /// A SubnAdm GetTable of PartitionsText for the master manager of
    /// `port`'s SAN: its partitions in force as text from `offset` on, one
    /// record (docs/partitions.md "Standbys"); `None`: no master here.
    fn sa_partitions_text(&self, port: PortId, offset: u32) -> Option<PartitionsText> {
        let _ = (port, offset);
        None
    }

    /// A SubnAdm PathRecord Get from `requester` for the master manager of
    /// `port`'s SAN; `None`: no master here.
    fn sa_path(
        &self,
        port: PortId,
        requester: Address,
        query: &PathRecord,
    ) -> Option<Result<PathRecord, Status>> {
        let _ = (port, requester, query);
        None
    }

    /// A SubnAdm multicast request (McGroupRecord or McMemberRecord Get,
    /// Set or Delete, docs/multicast.md "Groups") from `requester` for the
    /// master manager of `port`'s SAN; `None`: no master here.
    fn sa_mcast(
        &mut self,
        port: PortId,
        requester: Address,
        method: crate::wire::Method,
        attribute: u16,
        modifier: u32,
        data: &[u8],
    ) -> Option<Result<crate::attr::Attribute, Status>> {
        let _ = (port, requester, method, attribute, modifier, data);
        None
    }

    /// A SubnAdm InformInfo request (Set: subscribe, Delete: unsubscribe,
    /// Get: the `modifier`th subscription; docs/management.md "Events")
    /// from `requester` for the master manager of `port`'s SAN; `None`: no
    /// master here.
    fn sa_inform(
        &mut self,
        port: PortId,
        requester: Address,
        method: crate::wire::Method,
        modifier: u32,
        info: &crate::attr::InformInfo,
    ) -> Option<Result<crate::attr::InformInfo, Status>> {
        let _ = (port, requester, method, modifier, info);
        None
    }

    /// The MTU group `g`'s members are reached with from this node, when it
    /// knows of members (a router: from its RTs; `Some(0)`: unlimited):
    /// what a SAN manager creating `g` learns (docs/multicast.md "Groups").
    fn group_mtu(&self, g: Address) -> Option<u32> {
        let _ = g;
        None
    }

    /// How a node on `port`'s SAN reaches `dst`, as this node's routes say
    /// (a router: the best first HR from the node's position, the Q the
    /// node pays and the path's MTU; docs/manager.md "SubnAdm"): the
    /// answer of a PathRecord. `None`: unknown.
    fn path(&self, port: PortId, dst: Address) -> Option<PathRecord> {
        let _ = (port, dst);
        None
    }

    /// A PortInfo Set gave `port` the address `address` (a SAN manager's
    /// address assignment, docs/manager.md); by default refused: a
    /// router's HR addresses are its configuration's.
    fn set_address(&mut self, port: PortId, address: Address) -> Result<(), Status> {
        let _ = (port, address);
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }

    /// A node without an address announced itself on `port`'s SAN (trap
    /// 1025 from `native`): for the SAN manager this node runs there.
    fn unaddressed(&mut self, port: PortId, native: NativeAddr, identity: u64) {
        let _ = (port, native, identity);
    }

    /// A trap reached this node (it plays the manager): a SAN manager it
    /// runs sweeps heavily next (docs/manager.md "The SAN database"), and a
    /// master forwards it to its subscribers (docs/management.md "Events").
    fn notice(&mut self, port: PortId, notice: &crate::attr::Notice) {
        let _ = (port, notice);
    }

    /// An SMInfo Set (a manager's control) for the manager on `port`'s SAN,
    /// from `from`; `None`: no manager there.
    fn sm_control(
        &mut self,
        port: PortId,
        from: Address,
        modifier: u32,
        info: &SmInfo,
    ) -> Option<Result<SmInfo, Status>> {
        let _ = (port, from, modifier, info);
        None
    }
}
