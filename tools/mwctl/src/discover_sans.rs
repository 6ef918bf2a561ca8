//! The SANs of `mwctl discover` and their members (docs/management.md
//! "mwctl discover"). After the routers are walked, each SAN their HRs are
//! on is gathered: its SAN-ID, cost and MTU (from the HRs' PortInfo), the
//! HRs on it, and its nodes. Where an HR names a manager (PortInfo's
//! ManagerAddress), the nodes come from that manager's records (SubnAdm
//! NodeRecord, one Get per record, docs/manager.md "SubnAdm"), as
//! InfiniBand's tools ask the SA rather than every port; where none answers,
//! they come from the routers' LRTs and each is read itself (NodeInfo,
//! NodeDescription). A node that does not answer is listed among the
//! discovery's unanswered, with the HR whose LRT named it.

use std::collections::{BTreeMap, BTreeSet};

use admin::ClientError;
use mgmt::attr::{NodeInfo, NodeRecord, SmInfo, node_record};
use mgmt::manager::SmState;
use rrp::Address;
use serde_json::Value;

use crate::discover::{
    Ask, Class, Discovery, Got, Reached, Unanswered, addr, description, in_parallel,
};

/// Where a member's fields came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberSource {
    /// A record of the SAN's master manager, at this address.
    Manager(Address),
    /// The node itself, named by the LRT of HR `hr` of router `by`.
    Lrt {
        /// The identity of the router whose LRT listed it.
        by: u64,
        /// That router's HR.
        hr: Address,
    },
}

/// A node of a SAN that is not one of the walked routers' HRs.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// Its address.
    pub address: Address,
    /// NodeIdentity.
    pub identity: u64,
    /// NodeType (1 host, 3 router).
    pub node_type: u64,
    /// ImplementationLevel (1-4: levels A-D).
    pub level: u64,
    /// NodeDescription (empty if it was not answered).
    pub description: String,
    /// Whether NodeDescription was answered (a record always has it).
    pub described: bool,
    /// Where the fields came from.
    pub source: MemberSource,
    /// Its own partitions (PartitionTable), when they were asked for and
    /// answered.
    pub partitions: Option<crate::discover_partitions::Table>,
}

/// A SAN the routers' HRs are on.
#[derive(Debug, Clone, PartialEq)]
pub struct San {
    /// SAN-ID.
    pub id: Address,
    /// Its cost, as the first HR read on it gives it.
    pub cost: u64,
    /// Its MTU in bytes, as the first HR read on it gives it.
    pub mtu: u64,
    /// The HRs on it: (address, router identity), in the order found.
    pub hrs: Vec<(Address, u64)>,
    /// The manager whose records gave the members, when one answered.
    pub manager: Option<Address>,
    /// Its other nodes, by address.
    pub members: Vec<Member>,
}

/// What is known of a SAN from the walk, before its members are read.
struct Gathered {
    san: San,
    /// Managers the HRs name that are on the SAN (an HR of it, or a node
    /// its LRTs list), tried in order.
    managers: Vec<Address>,
    /// Every manager the HRs name (PortInfo's ManagerAddress is where an
    /// HR's traps go, which may be a node of another SAN).
    named_managers: BTreeSet<Address>,
    /// Nodes the LRTs list, each with the first HR that listed it.
    lrt: BTreeMap<Address, (u64, Address)>,
}

/// The SANs of the walked routers, and what their HRs say of them.
fn gather(d: &Discovery) -> Vec<Gathered> {
    let router_hrs: BTreeSet<Address> = d
        .routers
        .iter()
        .flat_map(|r| r.hrs.iter().filter_map(|h| h.info.as_ref()))
        .map(|i| i.address)
        .collect();
    let mut sans: BTreeMap<Address, Gathered> = BTreeMap::new();
    for r in &d.routers {
        for h in &r.hrs {
            let Some(i) = &h.info else {
                continue;
            };
            let g = sans.entry(i.san).or_insert_with(|| Gathered {
                san: San {
                    id: i.san,
                    cost: i.cost,
                    mtu: i.mtu,
                    hrs: Vec::new(),
                    manager: None,
                    members: Vec::new(),
                },
                managers: Vec::new(),
                named_managers: BTreeSet::new(),
                lrt: BTreeMap::new(),
            });
            g.san.hrs.push((i.address, r.identity));
            if i.manager.0 != 0 {
                g.named_managers.insert(i.manager);
            }
            for &n in &h.nodes {
                if !router_hrs.contains(&n) {
                    g.lrt.entry(n).or_insert((r.identity, i.address));
                }
            }
        }
    }
    let mut sans: Vec<Gathered> = sans.into_values().collect();
    for g in &mut sans {
        let on_san = |m: &Address| g.lrt.contains_key(m) || g.san.hrs.iter().any(|h| h.0 == *m);
        g.managers = g.named_managers.iter().copied().filter(on_san).collect();
    }
    sans
}

/// The SANs the walked routers' HRs are on, without their members.
pub fn sans_of_routers(d: &Discovery) -> Vec<San> {
    gather(d).into_iter().map(|g| g.san).collect()
}

/// The `index`th NodeRecord of the manager at `manager` (an empty template:
/// every record matches).
fn record(ask: &dyn Ask, manager: Address, index: u16) -> Result<Got, ClientError> {
    ask.get(
        Class::SubnAdm,
        manager,
        NodeRecord::ID,
        node_record::query(0, index),
    )
}

/// Every record of the manager at `manager`, or None when it does not
/// answer with them all. SMInfo is read first: every node answers it, with
/// its manager's state or a status when it runs none, while SubnAdm is
/// answered only by a master (elsewhere dropped, docs/manager.md
/// "SubnAdm"), so that a node named as manager that is not master costs
/// one answered Get, not a wait for a time-out.
fn records(ask: &dyn Ask, manager: Address) -> Result<Option<Vec<Value>>, ClientError> {
    let master = match ask.get(Class::Subn, manager, SmInfo::ID, 0)? {
        Got::Fields(f) => f["sm_state"].as_u64() == Some(SmState::Master as u64),
        _ => false,
    };
    if !master {
        return Ok(None);
    }
    let first = match record(ask, manager, 0)? {
        Got::Fields(f) => f,
        _ => return Ok(None),
    };
    let total = first["total"]
        .as_u64()
        .unwrap_or(0)
        .min(u64::from(u16::MAX)) as u16;
    let rest = in_parallel((1..total).collect(), |i| record(ask, manager, i))?;
    let mut all = vec![first];
    for got in rest {
        let Got::Fields(f) = got else {
            // A record lost between two Gets: the manager's answer is not
            // whole.
            return Ok(None);
        };
        all.push(f);
    }
    Ok(Some(all))
}

/// NodeType of a router.
const ROUTER: u64 = 3;

/// The routers of the SAN of `host` (where a walk started), by the records
/// of the manager its PortInfo names, when that manager records the host
/// (so is on its SAN). An error when none does: a host has no LRT, and
/// nothing else names its routers.
pub fn routers_of_host_san(
    ask: &dyn Ask,
    host: &crate::discover::Router,
) -> Result<Vec<(Address, Reached)>, ClientError> {
    let managers: BTreeSet<Address> = host
        .hrs
        .iter()
        .filter_map(|h| h.info.as_ref())
        .map(|i| i.manager)
        .filter(|m| m.0 != 0)
        .collect();
    for manager in managers {
        let Some(all) = records(ask, manager)? else {
            continue;
        };
        if !all.iter().any(|f| addr(&f["address"]) == host.address) {
            continue;
        }
        return Ok(all
            .iter()
            .filter(|f| f["node_type"].as_u64() == Some(ROUTER))
            .map(|f| (addr(&f["address"]), Reached::Manager { manager }))
            .collect());
    }
    Err(ClientError::Other(format!(
        "{} is a host: its SAN's routers come from its SAN's manager, and none answered; \
         give a router's address (mwctl discover ADDR)",
        host.address
    )))
}

/// The members of a SAN as the manager at `manager` records them (routers
/// left out: they are walked), or None when it does not answer with them
/// all (the LRTs are read instead).
fn from_manager(ask: &dyn Ask, manager: Address) -> Result<Option<Vec<Member>>, ClientError> {
    let Some(all) = records(ask, manager)? else {
        return Ok(None);
    };
    let mut members = Vec::new();
    for f in all {
        let node_type = f["node_type"].as_u64().unwrap_or(0);
        if node_type == ROUTER {
            continue;
        }
        members.push(Member {
            address: addr(&f["address"]),
            identity: f["identity"].as_u64().unwrap_or(0),
            node_type,
            level: f["level"].as_u64().unwrap_or(0),
            description: f["description"].as_str().unwrap_or("").to_string(),
            described: true,
            source: MemberSource::Manager(manager),
            partitions: None,
        });
    }
    Ok(Some(members))
}

/// A node an LRT listed, read itself.
fn from_node(
    ask: &dyn Ask,
    address: Address,
    (by, hr): (u64, Address),
) -> Result<Result<Member, Unanswered>, ClientError> {
    let reached = Reached::Lrt { by, hr };
    let info = match ask.get(Class::Subn, address, NodeInfo::ID, 0)? {
        Got::Fields(f) => f,
        Got::Status(s) => {
            return Ok(Err(Unanswered {
                address,
                reached,
                status: Some(s),
            }));
        }
        Got::NoAnswer => {
            return Ok(Err(Unanswered {
                address,
                reached,
                status: None,
            }));
        }
    };
    let described = description(ask, address)?;
    Ok(Ok(Member {
        address,
        identity: info["node_identity"].as_u64().unwrap_or(0),
        node_type: info["node_type"].as_u64().unwrap_or(0),
        level: info["implementation_level"].as_u64().unwrap_or(0),
        description: described.clone().unwrap_or_default(),
        described: described.is_some(),
        source: MemberSource::Lrt { by, hr },
        partitions: None,
    }))
}

/// Fills `d.sans`: each SAN's members from its manager's records where one
/// answers, and the LRTs' nodes that the records leave out read one by
/// one; those that do not answer go to `d.unanswered`. With `partitions`,
/// each member's own partitions are read too (one Get a member in the
/// common case).
pub fn read_sans(ask: &dyn Ask, d: &mut Discovery, partitions: bool) -> Result<(), ClientError> {
    let gathered = gather(d);
    // The managers first, one SAN per thread.
    let from_managers = in_parallel(gathered.iter().collect(), |g| {
        for &m in &g.managers {
            if let Some(members) = from_manager(ask, m)? {
                return Ok(Some((m, members)));
            }
        }
        Ok(None)
    })?;
    // Then every node an LRT lists that no record covered.
    let mut sans = Vec::with_capacity(gathered.len());
    let mut to_read = Vec::new();
    for (i, (mut g, found)) in gathered.into_iter().zip(from_managers).enumerate() {
        if let Some((m, members)) = found {
            g.san.manager = Some(m);
            for member in &members {
                g.lrt.remove(&member.address);
            }
            g.san.members = members;
        }
        to_read.extend(g.lrt.iter().map(|(&a, &by)| (i, a, by)));
        sans.push(g.san);
    }
    let read = in_parallel(to_read, |(i, a, by)| Ok((i, from_node(ask, a, by)?)))?;
    for (i, r) in read {
        match r {
            Ok(m) => sans[i].members.push(m),
            Err(u) => d.unanswered.push(u),
        }
    }
    for s in &mut sans {
        s.members.sort_by_key(|m| m.address);
    }
    if partitions {
        let members: Vec<&mut Member> = sans.iter_mut().flat_map(|s| &mut s.members).collect();
        let tables = in_parallel(members.iter().map(|m| m.address).collect(), |a| {
            crate::discover_partitions::read(ask, a)
        })?;
        for (m, t) in members.into_iter().zip(tables) {
            m.partitions = t;
        }
    }
    d.sans = sans;
    Ok(())
}
