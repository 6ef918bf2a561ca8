//! A master's member tables at the routers (docs/manager.md "Partition
//! tables at the routers", docs/spec-notes.md 75): every router of the SAN
//! checks packets at the boundary between SANs against the tables of the
//! SAN's nodes, so the master gives each router the table of every member
//! (the routers, and its own node, among them) by Sets of PartitionTable
//! whose modifier carries the member's address in bits 16-31 and the block
//! in bits 0-15. It remembers per router what each member's entry there
//! is, and Sets again only what changed; a member gone is Set an empty
//! table (its entry removed). While the partitions are open (no file) the
//! routers keep no entry: those they had are removed, and a router that had
//! none is sent nothing.

use std::collections::BTreeMap;

use rrp::Address;

use crate::attr::{NodeInfo, PartitionTable};
use crate::client::{Answer, Failure};
use crate::partition::{Membership, PartitionKey};
use crate::wire::Status;

use super::partitions::{Table, TableSet};
use super::{Manager, Purpose, SmState};

/// What one router took from this master.
#[derive(Debug, Clone, Default)]
pub(super) struct RouterTables {
    /// The router's identity when it took them (another node at its
    /// address starts afresh).
    pub identity: u64,
    /// Per member address, the table the router keeps for it.
    pub given: BTreeMap<Address, Table>,
    /// The Sets under way, per member address.
    pub sets: BTreeMap<Address, TableSet>,
}

impl Manager {
    /// Every member's table as the partitions in force give it: each
    /// member of the database and the manager's own node (master; empty
    /// otherwise), by address. What a router on this SAN checks packets
    /// against (docs/partitions.md "At the routers").
    pub fn member_tables(&self) -> Vec<(Address, Vec<(PartitionKey, Membership)>)> {
        if self.state != SmState::Master {
            return Vec::new();
        }
        let own = self
            .own
            .as_ref()
            .filter(|_| self.address.is_node())
            .map(|o| (self.address, self.table_of(o.identity, o.node_type)));
        let mut v: Vec<_> = self
            .database
            .values()
            .map(|m| (m.address, self.table_of(m.identity, m.node_type)))
            .chain(own)
            .collect();
        v.sort_by_key(|(a, _)| *a);
        v.dedup_by_key(|(a, _)| *a);
        v
    }

    /// Member `member`'s table among [`Manager::member_tables`], as this
    /// box's routers check packets against it: empty when it is none of
    /// them, or while the partitions are open (no tables are enforced).
    /// Only that member's table is made (one PartitionTable Get must not
    /// cost a table for every member of a large SAN).
    pub fn member_table(&self, member: Address) -> Vec<(PartitionKey, Membership)> {
        if self.partitions().is_open() || self.state != SmState::Master {
            return Vec::new();
        }
        if let Some(m) = self.database.get(&member) {
            return self.table_of(m.identity, m.node_type);
        }
        self.own
            .as_ref()
            .filter(|_| self.address.is_node() && member == self.address)
            .map(|o| self.table_of(o.identity, o.node_type))
            .unwrap_or_default()
    }

    /// A digest of what [`Manager::member_tables`] is made of (its state,
    /// address and own node, the partitions' changes, each member's
    /// address, identity and type): when it is the same, so are the
    /// tables. Cheaper than the tables: no partition is looked at.
    pub fn member_tables_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self.state as u8, self.address, self.partitions_changes).hash(&mut h);
        self.own
            .as_ref()
            .map(|o| (o.identity, o.node_type))
            .hash(&mut h);
        for m in self.database.values() {
            (m.address, m.identity, m.node_type).hash(&mut h);
        }
        h.finish()
    }

    /// The tables router `router` keeps from this master, by member
    /// address.
    pub fn router_tables(&self, router: Address) -> Option<&BTreeMap<Address, Table>> {
        self.router_tables.get(&router).map(|r| &r.given)
    }

    /// Gives every router of the database what changed of the member
    /// tables.
    pub(super) fn give_router_tables_all(&mut self) {
        if self.state != SmState::Master {
            return;
        }
        let db = &self.database;
        self.router_tables.retain(|a, _| db.contains_key(a));
        let routers: Vec<Address> = self
            .database
            .values()
            .filter(|m| m.node_type == NodeInfo::ROUTER)
            .map(|m| m.address)
            .collect();
        if routers.is_empty() {
            return;
        }
        let want: BTreeMap<Address, Table> = if self.partitions.is_open() {
            BTreeMap::new()
        } else {
            self.member_tables().into_iter().collect()
        };
        for r in routers {
            self.give_router_tables(r, &want);
        }
    }

    /// As master, Sets router `router` the member tables of `want` it does
    /// not keep yet, and an empty table for each member it keeps that
    /// `want` does not have, when its agent takes this master's Sets; one
    /// Set at a time per member.
    fn give_router_tables(&mut self, router: Address, want: &BTreeMap<Address, Table>) {
        let Some(identity) = self
            .database
            .get(&router)
            .filter(|m| m.node_type == NodeInfo::ROUTER && m.takes_sets)
            .map(|m| m.identity)
        else {
            return;
        };
        let r = self.router_tables.entry(router).or_default();
        if r.identity != identity {
            *r = RouterTables {
                identity,
                ..RouterTables::default()
            };
        }
        let mut due: Vec<(Address, Table, usize)> = Vec::new();
        for (a, t) in want {
            let before = r.given.get(a);
            if before != Some(t) && !r.sets.contains_key(a) {
                due.push((*a, t.clone(), before.map_or(0, Vec::len)));
            }
        }
        for (a, t) in &r.given {
            if !want.contains_key(a) && !r.sets.contains_key(a) {
                due.push((*a, Vec::new(), t.len()));
            }
        }
        for (member, table, before) in due {
            let sent = self.set_table_blocks(
                router,
                &table,
                Some(before),
                |block| PartitionTable::modifier(member, block),
                Purpose::MemberTableSet { router, member },
            );
            if sent > 0
                && let Some(r) = self.router_tables.get_mut(&router)
            {
                r.sets.insert(
                    member,
                    TableSet {
                        table,
                        out: sent,
                        failed: false,
                    },
                );
            }
        }
    }

    /// The answer to a Set of member `member`'s table at router `router`:
    /// when every block is answered, the entry taken (an empty table: the
    /// entry gone), or the Sets failed (tried again at the next sweep).
    pub(super) fn on_member_table_set(
        &mut self,
        router: Address,
        member: Address,
        result: &Result<Answer, Failure>,
    ) {
        let ok = matches!(&result, Ok(a) if a.mad.status == Status::OK);
        let Some(r) = self.router_tables.get_mut(&router) else {
            return;
        };
        let Some(s) = r.sets.get_mut(&member) else {
            return;
        };
        s.out = s.out.saturating_sub(1);
        s.failed |= !ok;
        if s.out > 0 {
            return;
        }
        let Some(s) = r.sets.remove(&member) else {
            return;
        };
        if s.failed {
            self.stats.member_table_sets_failed += 1;
            return;
        }
        self.stats.member_tables_set += 1;
        if s.table.is_empty() {
            r.given.remove(&member);
        } else {
            r.given.insert(member, s.table);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Request;
    use crate::manager::{ManagerConfig, ManagerOutput, Member};
    use crate::partition::{PartitionKey, parse};
    use crate::wire::MadRepr;
    use crate::wire::{Method, MgmtClass};

    fn member(a: u16, node_type: u8) -> Member {
        Member {
            address: Address(a),
            identity: u64::from(a),
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

    /// A master of a SAN with host 0x0102, router 0x0103 and router
    /// 0x0104 (which does not take its Sets), itself at 0x0101.
    fn master() -> Manager {
        let mut m = Manager::new(ManagerConfig::new(1, 0x0101), 0);
        m.state = SmState::Master;
        m.set_address(Address(0x0101));
        m.set_own(crate::attr::NodeRecord {
            identity: 0x0101,
            node_type: NodeInfo::HOST,
            ..Default::default()
        });
        for (a, t) in [
            (0x0102, NodeInfo::HOST),
            (0x0103, NodeInfo::ROUTER),
            (0x0104, NodeInfo::ROUTER),
        ] {
            m.database.insert(Address(a), member(a, t));
        }
        m.database.get_mut(&Address(0x0104)).unwrap().takes_sets = false;
        m
    }

    /// The member-table Sets output: (id, router, modifier, request).
    fn sets(m: &mut Manager) -> Vec<(u64, Address, u32, Request)> {
        let mut v = Vec::new();
        while let Some(o) = m.poll_output() {
            if let ManagerOutput::Request { id, request } = o
                && request.attribute == PartitionTable::ID
                && request.modifier >> 16 != 0
            {
                let crate::client::Target::Address(to) = request.target else {
                    continue;
                };
                v.push((id, to, request.modifier, request));
            }
        }
        v
    }

    fn answer(m: &mut Manager, id: u64, status: Status) {
        let mad = MadRepr {
            class: MgmtClass::SUBN,
            class_version: 1,
            response: true,
            method: Method::GET_RESP,
            status,
            tid: 1,
            attribute: PartitionTable::ID,
            modifier: 0,
            mkey: 0,
            data: Vec::new(),
            dr: None,
        };
        m.on_answer(
            0,
            id,
            Ok(Answer {
                mad,
                from: Address(0x0103),
                tries: 1,
                rtt_ms: 1,
            }),
        );
    }

    fn key(k: u16) -> PartitionKey {
        PartitionKey::new(k).unwrap()
    }

    #[test]
    fn nothing_is_sent_while_the_partitions_are_open() {
        let mut m = master();
        m.give_router_tables_all();
        assert!(sets(&mut m).is_empty());
        assert_eq!(m.member_tables().len(), 4, "three members and its own node");
    }

    #[test]
    fn one_members_table_is_the_one_among_every_members() {
        let mut m = master();
        m.set_partitions(parse("Default=0x7fff : ALL=full ;\nt=0x0010 : 0x102=full ;").unwrap());
        let all = m.member_tables();
        assert_eq!(all.len(), 4);
        for (a, t) in &all {
            assert_eq!(&m.member_table(*a), t, "{a}");
        }
        assert!(m.member_table(Address(0x0999)).is_empty());
    }

    #[test]
    fn a_router_is_given_every_members_table_then_only_changes() {
        let mut m = master();
        m.set_partitions(parse("Default=0x7fff : ALL=full ;\nt=0x0010 : 0x102=full ;").unwrap());
        m.give_router_tables_all();
        let s = sets(&mut m);
        // Only 0x0103: 0x0104 does not take this master's Sets.
        assert!(s.iter().all(|(_, r, _, _)| *r == Address(0x0103)));
        let mods: Vec<u32> = s.iter().map(|x| x.2).collect();
        assert_eq!(mods, [0x0101_0000, 0x0102_0000, 0x0103_0000, 0x0104_0000]);
        let host = PartitionTable::parse(&s[1].3.data).unwrap();
        assert_eq!(
            host.entries,
            [
                (key(0x10), Membership::Full),
                (PartitionKey::DEFAULT, Membership::Full)
            ]
        );
        for (id, ..) in &s[..3] {
            answer(&mut m, *id, Status::OK);
        }
        answer(&mut m, s[3].0, Status::INVALID_VALUE);
        assert_eq!(m.stats().member_tables_set, 3);
        assert_eq!(m.stats().member_table_sets_failed, 1);
        assert_eq!(m.router_tables(Address(0x0103)).unwrap().len(), 3);
        // The next sweep: only the failed one again.
        m.give_router_tables_all();
        let s = sets(&mut m);
        assert_eq!(s.iter().map(|x| x.2).collect::<Vec<_>>(), [0x0104_0000]);
        answer(&mut m, s[0].0, Status::OK);
        m.give_router_tables_all();
        assert!(sets(&mut m).is_empty(), "nothing changed");
        // The host's table changes: only its entry is Set again.
        m.set_partitions(parse("Default=0x7fff : ALL=full ;\nt=0x0010 : 0x102=limited ;").unwrap());
        let s = sets(&mut m);
        assert_eq!(s.iter().map(|x| x.2).collect::<Vec<_>>(), [0x0102_0000]);
        answer(&mut m, s[0].0, Status::OK);
        // The host leaves: its entry removed by an empty table.
        m.database.remove(&Address(0x0102));
        m.give_router_tables_all();
        let s = sets(&mut m);
        assert_eq!(s.iter().map(|x| x.2).collect::<Vec<_>>(), [0x0102_0000]);
        assert!(
            PartitionTable::parse(&s[0].3.data)
                .unwrap()
                .entries
                .is_empty()
        );
        answer(&mut m, s[0].0, Status::OK);
        assert!(
            !m.router_tables(Address(0x0103))
                .unwrap()
                .contains_key(&Address(0x0102))
        );
        // Open again: every entry removed, then nothing more.
        m.set_partitions(Partitions::open());
        let s = sets(&mut m);
        assert_eq!(s.len(), 3);
        for (id, _, _, r) in &s {
            assert!(PartitionTable::parse(&r.data).unwrap().entries.is_empty());
            answer(&mut m, *id, Status::OK);
        }
        assert!(m.router_tables(Address(0x0103)).unwrap().is_empty());
        m.give_router_tables_all();
        assert!(sets(&mut m).is_empty());
    }

    use crate::partition::Partitions;
}
