//! The SAN database (docs/manager.md "The SAN database"): the members a
//! master's sweeps found, and the NodeRecords SubnAdm answers from them.

use std::collections::BTreeMap;

use rrp::Address;

use crate::attr::{NodeRecord, node_record};
use crate::wire::Status;

use super::{Manager, SmState, Time};

/// A member of the SAN as the master's sweeps know it (docs/manager.md
/// "The SAN database").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its address on the SAN.
    pub address: Address,
    /// NodeInfo's NodeIdentity.
    pub identity: u64,
    /// NodeInfo's NodeType (1 host, 3 router).
    pub node_type: u8,
    /// NodeInfo's implementation level (1-4: A-D).
    pub level: u16,
    /// NodeInfo's NumPorts.
    pub num_ports: u8,
    /// NodeDescription.
    pub name: String,
    /// The state of the manager it runs, if it runs one.
    pub manager: Option<SmState>,
    /// When it last answered.
    pub seen: Time,
    /// Its agent has the SAN's M_Key (always, when the master gives none).
    pub keyed: bool,
    /// Its agent refused the key (another key it would not show): tried
    /// again on the next heavy sweep.
    pub key_refused: bool,
    /// Its port's MTU (PortInfo, read with NodeInfo; 0: unlimited or not
    /// read yet).
    pub mtu: u32,
    /// Its agent takes this master's Sets: it has the master's M_Key, or
    /// no key (PortInfo, read with NodeInfo); it is given its partition
    /// table only then.
    pub takes_sets: bool,
}

impl Manager {
    /// The SAN's members as its sweeps found them (master; empty
    /// otherwise).
    pub fn database(&self) -> &BTreeMap<Address, Member> {
        &self.database
    }

    /// A NodeRecord of the database and the manager's own node (SubnAdm):
    /// the `index`th, in address order, of the members that match `template` in the components of the
    /// modifier's mask (`node_record::query`), or `BY_ADDRESS | address`;
    /// `total` is the number of matches. Status 7 for a mask bit that is no
    /// component, SA's 0x0200 (no records) past the last match.
    pub fn node_record(&self, modifier: u32, template: &NodeRecord) -> Result<NodeRecord, Status> {
        let (mask, index, template) = if modifier & node_record::BY_ADDRESS != 0 {
            let a = u16::try_from(modifier & !node_record::BY_ADDRESS)
                .map_err(|_| Status::INVALID_VALUE)?;
            let t = NodeRecord {
                address: Address(a),
                ..NodeRecord::default()
            };
            (
                node_record::component::ADDRESS,
                0,
                std::borrow::Cow::Owned(t),
            )
        } else {
            let (mask, index) = node_record::split_query(modifier).ok_or(Status::INVALID_VALUE)?;
            (mask, index, std::borrow::Cow::Borrowed(template))
        };
        let total = |n: usize| n.min(usize::from(u16::MAX)) as u16;
        let own = self.own.clone().map(|mut r| {
            r.address = self.address;
            r.manager = self.state as u8;
            r
        });
        let mut matching: Vec<NodeRecord> = self
            .database
            .values()
            .map(Self::record_of)
            .chain(own)
            .filter(|r| r.matches(&template, mask))
            .collect();
        matching.sort_by_key(|r| r.address);
        let n = total(matching.len());
        let mut r = matching
            .into_iter()
            .nth(usize::from(index))
            .ok_or(Status::SA_NO_RECORDS)?;
        r.total = n;
        Ok(r)
    }

    /// A member as a NodeRecord (`total` left 0).
    pub(super) fn record_of(m: &Member) -> NodeRecord {
        NodeRecord {
            total: 0,
            address: m.address,
            identity: m.identity,
            node_type: m.node_type,
            level: m.level.min(255) as u8,
            num_ports: m.num_ports,
            manager: m.manager.map_or(node_record::NO_MANAGER, |s| s as u8),
            description: m.name.clone(),
        }
    }

    /// The node it runs on, as its NodeInfo and NodeDescription say (the
    /// address and manager state are the manager's own): SubnAdm lists it
    /// among the SAN's members, as InfiniBand's SA lists the SM's node.
    pub fn set_own(&mut self, own: NodeRecord) {
        self.own = Some(own);
    }

    /// The MTU of its node's port when that node is a router (`None`: a
    /// host): the joins' check counts it among the SAN's routers.
    pub fn set_own_router_mtu(&mut self, mtu: Option<u32>) {
        self.own_router_mtu = mtu;
    }
}
