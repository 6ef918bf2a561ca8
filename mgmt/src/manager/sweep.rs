//! A master's sweeps (docs/manager.md "The SAN database"): what it learns
//! of each member (NodeInfo, NodeDescription, PortInfo) and the M_Key and
//! manager address it gives their agents.

use rrp::Address;

use crate::attr::{NodeDescription, NodeInfo, PortInfo};
use crate::client::{Answer, Failure};
use crate::wire::{Method, MgmtClass, Status};

use super::{Manager, ManagerConfig, Member, Purpose, SmState, Time};

impl Manager {
    /// Makes the next sweep heavy (a trap said the SAN changed).
    pub fn heavy_sweep(&mut self) {
        self.heavy = true;
    }

    /// A member's NodeInfo (a master's sweep): its database entry, then its
    /// PortInfo read.
    pub(super) fn on_node_info(
        &mut self,
        now: Time,
        member: Address,
        result: &Result<Answer, Failure>,
    ) {
        let ni = match &result {
            Ok(a) if a.mad.status == Status::OK => NodeInfo::parse(&a.mad.data).ok(),
            _ => None,
        };
        if let Some(n) = ni {
            let (before, seen) = self
                .database
                .get(&member)
                .map_or((0, 0), |m| (m.identity, m.seen));
            self.note_identity(now, member, n.node_identity, before, seen);
            let manager = self.peers.get(&member).map(|p| p.state);
            let e = self.database.entry(member).or_insert_with(|| Member {
                address: member,
                identity: 0,
                node_type: 0,
                level: 0,
                num_ports: 0,
                name: String::new(),
                manager,
                seen: now,
                keyed: false,
                key_refused: false,
                mtu: 0,
                takes_sets: false,
            });
            e.identity = n.node_identity;
            e.node_type = n.node_type;
            e.level = n.implementation_level;
            e.num_ports = n.num_ports;
            e.seen = now;
            // Its PortInfo: its MTU (a router's counts in the joins'
            // check), and the key and manager address to give it.
            if self.state == SmState::Master {
                self.get(member, PortInfo::ID, Purpose::KeyRead { member });
            }
            // Its partition table (another node at the address; a new
            // member's once its agent has the key).
            self.give_table(member);
        }
    }

    /// A member's PortInfo: its MTU, and the M_Key and manager address given
    /// to it when they are not this master's.
    pub(super) fn on_key_read(&mut self, member: Address, result: &Result<Answer, Failure>) {
        let pi = match &result {
            Ok(a) if a.mad.status == Status::OK => PortInfo::parse(&a.mad.data).ok(),
            _ => None,
        };
        if let Some(p) = &pi
            && let Some(e) = self.database.get_mut(&member)
        {
            e.mtu = p.mtu;
            // The key shows when it is this master's or protect is 0; a
            // hidden one reads 0 with protect bits above 0.
            e.takes_sets = if self.cfg.mkey == 0 {
                p.mkey == 0 && p.mkey_protect_bits == 0
            } else {
                p.mkey == self.cfg.mkey
            };
        }
        let wanted = |p: &PortInfo, cfg: &ManagerConfig, me: Address| {
            if cfg.mkey == 0 {
                p.manager_address != me
            } else {
                p.mkey != cfg.mkey
                    || p.mkey_protect_bits != cfg.mkey_protect
                    || p.mkey_lease_period != cfg.mkey_lease_s
                    || p.manager_address != me
            }
        };
        if let Some(p) = &pi
            && !wanted(p, &self.cfg, self.address)
            && let Some(e) = self.database.get_mut(&member)
        {
            // Already as this master would set it.
            e.keyed = true;
        }
        self.give_table(member);
        if self
            .database
            .get(&member)
            .is_some_and(|m| m.node_type == NodeInfo::ROUTER && m.takes_sets)
        {
            self.give_router_tables_all();
        }
        if let Some(mut p) = pi
            && self.state == SmState::Master
            && wanted(&p, &self.cfg, self.address)
        {
            // The key to give with the Set: the agent's own when it
            // showed it (protect 0, or this master's key already),
            // else this master's (refused if the agent has another).
            let given = if p.mkey != 0 { p.mkey } else { self.cfg.mkey };
            if self.cfg.mkey != 0 {
                p.mkey = self.cfg.mkey;
                p.mkey_protect_bits = self.cfg.mkey_protect;
                p.mkey_lease_period = self.cfg.mkey_lease_s;
            }
            p.manager_address = self.address;
            let mut data = vec![0u8; MgmtClass::SUBN.attribute_len()];
            if p.emit(&mut data).is_ok() {
                self.send_keyed(
                    member,
                    Method::SET,
                    PortInfo::ID,
                    0,
                    data,
                    given,
                    Purpose::KeySet { member },
                );
            }
        }
    }

    /// The PortInfo Set giving a member the key: whether it took it.
    pub(super) fn on_key_set(&mut self, member: Address, result: &Result<Answer, Failure>) {
        let ok = matches!(&result, Ok(a) if a.mad.status == Status::OK);
        if let Some(e) = self.database.get_mut(&member) {
            e.keyed = ok;
            e.key_refused = !ok && result.is_ok();
            // It has this master's key now.
            e.takes_sets |= ok && self.cfg.mkey != 0;
        }
        if ok {
            self.stats.keys_given += 1;
            self.give_table(member);
            self.give_router_tables_all();
        } else if result.is_ok() {
            self.stats.keys_refused += 1;
        }
    }

    /// A member's NodeDescription: its name in the database.
    pub(super) fn on_description(&mut self, member: Address, result: &Result<Answer, Failure>) {
        if let Ok(a) = &result
            && a.mad.status == Status::OK
            && let Ok(d) = NodeDescription::parse(&a.mad.data)
            && let Some(e) = self.database.get_mut(&member)
        {
            e.name = d.0;
        }
    }
}
