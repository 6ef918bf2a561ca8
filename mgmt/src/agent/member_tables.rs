//! The members' tables a router keeps for its checks at the boundaries
//! between SANs (docs/partitions.md "At the routers", docs/spec-notes.md
//! 75): per HR, the table of each node of that HR's SAN as the SAN's master
//! set it, by Sets of PartitionTable whose modifier carries the member's
//! address in bits 16-31 and the block in bits 0-15. An empty table is no
//! entry. At most [`MAX_SAN_TABLES`] members per HR.

use std::collections::BTreeMap;

use rrp::{Address, PortId};

use crate::attr::PartitionTable;
use crate::partition::{MAX_SAN_TABLES, Membership, PartitionKey};
use crate::wire::Status;

use super::Time;

/// One member's table, by block.
type Blocks = [Vec<(PartitionKey, Membership)>; 2];

/// Where an HR's tables last changed: the Set's source and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TablesFrom {
    /// The source of the last Set that changed them (the SAN's master).
    pub from: Address,
    /// When.
    pub at: Time,
}

/// Per HR, the tables of its SAN's members.
#[derive(Debug, Clone, Default)]
pub struct MemberTables {
    tables: BTreeMap<(PortId, Address), Blocks>,
    from: BTreeMap<PortId, TablesFrom>,
    /// Changes so far: a reader compares it with the last it saw.
    changes: u64,
}

impl MemberTables {
    /// Block `block` of member `member`'s table on `port` (empty when it
    /// keeps none); `None` for a block past 1.
    pub fn block(&self, port: PortId, member: Address, block: u32) -> Option<PartitionTable> {
        let b = usize::try_from(block).ok().filter(|b| *b < 2)?;
        Some(PartitionTable {
            entries: self
                .tables
                .get(&(port, member))
                .map(|t| t[b].clone())
                .unwrap_or_default(),
        })
    }

    /// Replaces block `block` of member `member`'s table on `port`, set by
    /// `from` at `now`: a block past 1, a member that is not a node
    /// address, a key of it in the other block, or a new member past the
    /// bound refused (INVALID_VALUE).
    pub fn set(
        &mut self,
        now: Time,
        port: PortId,
        member: Address,
        block: u32,
        new: &PartitionTable,
        from: Address,
    ) -> Result<(), Status> {
        let b = usize::try_from(block)
            .ok()
            .filter(|b| *b < 2)
            .ok_or(Status::INVALID_VALUE)?;
        if !member.is_node() {
            return Err(Status::INVALID_VALUE);
        }
        let cur = self.tables.get(&(port, member));
        if let Some(t) = cur
            && t[1 - b]
                .iter()
                .any(|(o, _)| new.entries.iter().any(|(k, _)| k == o))
        {
            return Err(Status::INVALID_VALUE);
        }
        if cur.is_none() && !new.entries.is_empty() && self.on_port(port) >= MAX_SAN_TABLES {
            return Err(Status::INVALID_VALUE);
        }
        let mut t = cur.cloned().unwrap_or_default();
        if t[b] == new.entries {
            return Ok(());
        }
        t[b] = new.entries.clone();
        if t.iter().all(Vec::is_empty) {
            self.tables.remove(&(port, member));
        } else {
            self.tables.insert((port, member), t);
        }
        self.from.insert(port, TablesFrom { from, at: now });
        self.changes += 1;
        Ok(())
    }

    /// Members with a table on `port`.
    fn on_port(&self, port: PortId) -> usize {
        self.tables
            .range((port, Address(0))..=(port, Address(u16::MAX)))
            .count()
    }

    /// The tables kept on `port`, by member address.
    pub fn of_port(
        &self,
        port: PortId,
    ) -> impl Iterator<Item = (Address, Vec<(PartitionKey, Membership)>)> + '_ {
        self.tables
            .range((port, Address(0))..=(port, Address(u16::MAX)))
            .map(|((_, a), t)| (*a, t.concat()))
    }

    /// Where `port`'s tables last changed.
    pub fn from(&self, port: PortId) -> Option<TablesFrom> {
        self.from.get(&port).copied()
    }

    /// Changes so far (any HR).
    pub fn changes(&self) -> u64 {
        self.changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: u16) -> PartitionKey {
        PartitionKey::new(k).unwrap()
    }

    fn block(keys: &[u16]) -> PartitionTable {
        PartitionTable {
            entries: keys.iter().map(|k| (key(*k), Membership::Full)).collect(),
        }
    }

    #[test]
    fn tables_per_port_and_member_and_removal() {
        let mut t = MemberTables::default();
        let (p0, p1) = (PortId::new(0), PortId::new(1));
        let m = Address(0x0102);
        t.set(5, p0, m, 0, &block(&[0x10]), Address(0x0101))
            .unwrap();
        assert_eq!(t.changes(), 1);
        assert_eq!(t.block(p0, m, 0).unwrap(), block(&[0x10]));
        assert!(t.block(p1, m, 0).unwrap().entries.is_empty());
        assert!(t.block(p0, m, 2).is_none());
        assert_eq!(
            t.from(p0),
            Some(TablesFrom {
                from: Address(0x0101),
                at: 5
            })
        );
        // The same again is no change.
        t.set(6, p0, m, 0, &block(&[0x10]), Address(0x0101))
            .unwrap();
        assert_eq!(t.changes(), 1);
        // A key of block 0 in block 1: refused.
        assert!(
            t.set(6, p0, m, 1, &block(&[0x10]), Address(0x0101))
                .is_err()
        );
        assert!(
            t.set(6, p0, Address(0), 0, &block(&[1]), Address(1))
                .is_err()
        );
        assert!(t.set(6, p0, m, 2, &block(&[1]), Address(1)).is_err());
        assert_eq!(t.of_port(p0).count(), 1);
        // Empty: gone.
        t.set(7, p0, m, 0, &block(&[]), Address(0x0101)).unwrap();
        assert_eq!(t.of_port(p0).count(), 0);
        assert_eq!(t.changes(), 2);
    }

    #[test]
    fn at_most_the_bound_per_port() {
        let mut t = MemberTables::default();
        let p = PortId::new(0);
        let first = 0x0100u16;
        for a in first..first + MAX_SAN_TABLES as u16 {
            t.set(0, p, Address(a), 0, &block(&[1]), Address(1))
                .unwrap();
        }
        let over = Address(first + MAX_SAN_TABLES as u16);
        assert!(t.set(0, p, over, 0, &block(&[1]), Address(1)).is_err());
        // Another port has its own bound; a removal is always taken.
        t.set(0, PortId::new(1), over, 0, &block(&[1]), Address(1))
            .unwrap();
        t.set(0, p, Address(first), 0, &block(&[]), Address(1))
            .unwrap();
        t.set(0, p, over, 0, &block(&[1]), Address(1)).unwrap();
    }
}
