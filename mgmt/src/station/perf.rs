//! Whom the node's performance manager polls (docs/management.md "Fabric
//! performance manager"): the members in the databases of the SANs this
//! node is master of, and the node itself; with `enabled`, also every
//! member of every SAN the node is on, as its LRTs (a host: its
//! neighbours) list them. Each node once, by identity where known.

use std::collections::BTreeSet;

use rrp::{Address, PortId};

use crate::agent::AgentConfig;
use crate::manager::{Manager, SmState};
use crate::perfmgr::PerfTarget;
use crate::station::Carrier;

/// The nodes to poll; `None` (not polling) when this node masters no SAN
/// and `enabled` is off.
pub(super) fn targets<N: Carrier + ?Sized>(
    node: &N,
    managers: &[(PortId, Manager)],
    agent: &AgentConfig,
    enabled: bool,
) -> Option<Vec<PerfTarget>> {
    let masters: Vec<&Manager> = managers
        .iter()
        .filter(|(_, m)| m.state() == SmState::Master)
        .map(|(_, m)| m)
        .collect();
    if masters.is_empty() && !enabled {
        return None;
    }
    let own = node.addresses();
    let mut out = Vec::new();
    let mut identities = BTreeSet::new();
    let mut addresses: BTreeSet<Address> = own.iter().copied().collect();
    // The node itself, at its first address.
    if let Some(a) = own.iter().copied().find(|a| *a != Address::UNSPECIFIED) {
        identities.insert(agent.identity);
        out.push(PerfTarget {
            address: a,
            name: agent.description.clone(),
            identity: agent.identity,
            num_ports: node.ports().min(255) as u8,
        });
    }
    for m in &masters {
        for member in m.database().values() {
            if (member.identity != 0 && !identities.insert(member.identity))
                || !addresses.insert(member.address)
            {
                continue;
            }
            out.push(PerfTarget {
                address: member.address,
                name: member.name.clone(),
                identity: member.identity,
                num_ports: member.num_ports,
            });
        }
    }
    if enabled {
        for p in 0..node.ports() {
            for a in node.members(PortId::new(p)) {
                if addresses.insert(a) {
                    out.push(PerfTarget {
                        address: a,
                        name: String::new(),
                        identity: 0,
                        num_ports: 0,
                    });
                }
            }
        }
    }
    Some(out)
}
