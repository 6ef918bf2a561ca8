//! A master's partition tables (docs/partitions.md, docs/manager.md
//! "Partitions"): it gives every member the table the partitions in force
//! give it (`Partitions::table_of`), as InfiniBand's SM sets each port's
//! P_KeyTable, by Sets of PartitionTable; it remembers what each member
//! took, and Sets again only a table that changed. A Set that fails is
//! tried again at the next sweep.

use rrp::Address;

use crate::attr::partition_table::ENTRIES;
use crate::attr::{NodeInfo, PartitionTable};
use crate::client::{Answer, Failure};
use crate::partition::{Membership, NodeFacts, PartitionKey, Partitions};
use crate::wire::{Method, MgmtClass, Status};

use super::{Manager, ManagerEvent, Member, Purpose, SmState};

/// A node's table: its partitions and memberships, by key.
pub(super) type Table = Vec<(PartitionKey, Membership)>;

/// The Sets of one member's table under way.
#[derive(Debug, Clone)]
pub(super) struct TableSet {
    /// The table being set.
    pub table: Table,
    /// Blocks not answered yet.
    pub out: u8,
    /// A block failed (no answer, or refused).
    pub failed: bool,
}

impl Manager {
    /// Puts `partitions` in force: the ones it gives the SAN's members
    /// (docs/partitions.md; at start every node a full member of the
    /// default partition; which ones: `partition_copy`). As master, it Sets
    /// at once the members whose table changes.
    pub(super) fn put_in_force(&mut self, partitions: Partitions) {
        if partitions == self.partitions {
            return;
        }
        self.partitions = partitions;
        self.partitions_changes += 1;
        let due: Vec<Address> = if self.state == SmState::Master {
            self.database
                .values()
                .filter(|m| self.table_due(m).is_some())
                .map(|m| m.address)
                .collect()
        } else {
            Vec::new()
        };
        self.event(ManagerEvent::PartitionsChanged {
            partitions: self.partitions.list.len(),
            members: due.len(),
        });
        for a in due {
            self.give_table(a);
        }
        self.give_router_tables_all();
    }

    /// The partitions it gives.
    pub fn partitions(&self) -> &Partitions {
        &self.partitions
    }

    /// The table member `address` last took from this manager.
    pub fn table_given(&self, address: Address) -> Option<&[(PartitionKey, Membership)]> {
        self.tables
            .get(&address)
            .filter(|(id, _)| {
                self.database
                    .get(&address)
                    .is_some_and(|m| m.identity == *id)
            })
            .map(|(_, t)| t.as_slice())
    }

    /// The table the partitions give the node of `identity` and NodeInfo
    /// `node_type`.
    pub(super) fn table_of(&self, identity: u64, node_type: u8) -> Table {
        let own = self.own.as_ref().map(|o| o.identity);
        self.partitions.table_of(&NodeFacts {
            identity,
            router: node_type == NodeInfo::ROUTER,
            manager: identity == self.cfg.identity || own == Some(identity),
        })
    }

    /// The table member `m` should have, when it has not taken it yet.
    fn table_due(&self, m: &Member) -> Option<Table> {
        let table = self.table_of(m.identity, m.node_type);
        match self.tables.get(&m.address) {
            Some((id, t)) if *id == m.identity && *t == table => None,
            _ => Some(table),
        }
    }

    /// As master, Sets member `address` its table when it has not taken it,
    /// its agent takes this master's Sets (`Member::takes_sets`), and no
    /// Set of it is under way: block 0, and block 1 when the table
    /// or the one it had from this manager is longer than a block, or it
    /// has had none from it.
    pub(super) fn give_table(&mut self, address: Address) {
        if self.state != SmState::Master || self.table_sets.contains_key(&address) {
            return;
        }
        // Only an agent that has this master's M_Key, or no key, takes its
        // Sets: another would refuse them, and count each as a violation.
        let Some(table) = self
            .database
            .get(&address)
            .filter(|m| m.takes_sets)
            .and_then(|m| self.table_due(m))
        else {
            return;
        };
        let before = self.tables.get(&address).map(|(_, t)| t.len());
        let sent = self.set_table_blocks(
            address,
            &table,
            before,
            |block| block,
            Purpose::TableSet { member: address },
        );
        if sent > 0 {
            self.table_sets.insert(
                address,
                TableSet {
                    table,
                    out: sent,
                    failed: false,
                },
            );
        }
    }

    /// Sends the Sets of PartitionTable that give `table` to node `to`
    /// (the modifier of each block from `modifier`): block 0, and block 1
    /// when the table, or the one `to` had (`before` entries; none: it had
    /// none from this manager), is longer than a block. Returns how many
    /// were sent.
    pub(super) fn set_table_blocks(
        &mut self,
        to: Address,
        table: &[(PartitionKey, Membership)],
        before: Option<usize>,
        modifier: impl Fn(u32) -> u32,
        purpose: Purpose,
    ) -> u8 {
        let blocks: u32 = if table.len() > ENTRIES || before.is_none_or(|n| n > ENTRIES) {
            2
        } else {
            1
        };
        let mut sent = 0u8;
        for block in 0..blocks {
            let Some(b) = PartitionTable::block_of(table, block) else {
                continue;
            };
            let mut data = vec![0u8; MgmtClass::SUBN.attribute_len()];
            if b.emit(&mut data).is_err() {
                continue;
            }
            self.send(
                to,
                Method::SET,
                PartitionTable::ID,
                modifier(block),
                data,
                purpose,
            );
            sent += 1;
        }
        sent
    }

    /// The answer to a PartitionTable Set: when every block is answered,
    /// the table taken, or the Sets failed (tried again at the next sweep).
    pub(super) fn on_table_set(&mut self, member: Address, result: &Result<Answer, Failure>) {
        let ok = matches!(&result, Ok(a) if a.mad.status == Status::OK);
        let Some(s) = self.table_sets.get_mut(&member) else {
            return;
        };
        s.out = s.out.saturating_sub(1);
        s.failed |= !ok;
        if s.out > 0 {
            return;
        }
        let Some(s) = self.table_sets.remove(&member) else {
            return;
        };
        if s.failed {
            self.stats.table_sets_failed += 1;
            return;
        }
        self.stats.tables_set += 1;
        if let Some(m) = self.database.get(&member) {
            self.tables.insert(member, (m.identity, s.table));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::ManagerConfig;

    fn member(a: u16, identity: u64, node_type: u8) -> Member {
        Member {
            address: Address(a),
            identity,
            node_type,
            level: 1,
            num_ports: 1,
            name: String::new(),
            manager: None,
            seen: 0,
            keyed: true,
            key_refused: false,
            mtu: 0,
            takes_sets: true,
        }
    }

    #[test]
    fn routers_and_the_managers_own_node_are_full_members_of_the_default_partition() {
        let mut m = Manager::new(ManagerConfig::new(1, 0x0101), 0);
        m.set_partitions(crate::partition::parse("Default=0x7fff : ALL=limited ;").unwrap());
        let d = PartitionKey::DEFAULT;
        let own = member(0x0101, 0x0101, NodeInfo::HOST);
        let host = member(0x0102, 0x0102, NodeInfo::HOST);
        let router = member(0x0103, 0x0103, NodeInfo::ROUTER);
        assert_eq!(m.table_due(&own), Some(vec![(d, Membership::Full)]));
        assert_eq!(m.table_due(&host), Some(vec![(d, Membership::Limited)]));
        assert_eq!(m.table_due(&router), Some(vec![(d, Membership::Full)]));
        // Taken: not due again, until the node at the address changes.
        m.tables
            .insert(Address(0x0102), (0x0102, vec![(d, Membership::Limited)]));
        assert_eq!(m.table_due(&host), None);
        let other = member(0x0102, 0x0999, NodeInfo::HOST);
        assert_eq!(m.table_due(&other), Some(vec![(d, Membership::Limited)]));
    }
}
