//! Multicast groups at the SAN's master manager (docs/multicast.md
//! "Groups"), InfiniBand's SA multicast records mapped onto MessageWay
//! (docs/spec-notes.md 57):
//!
//! - **Create** (McGroupRecord Set, `mwctl mcast create`): a logical address
//!   given, or the lowest of the manager's range that no group here has and
//!   the routers know no members of; a group the routers know members of
//!   elsewhere has the MTU they reach them with, and a create asking for
//!   more is refused ([`Status::MC_MTU_ELSEWHERE`]); one asking for nothing
//!   takes that MTU, or the SAN's.
//! - **Join** (McMemberRecord Set): refused unless the group exists
//!   ([`Status::SA_NO_RECORDS`]), the member's MTU is not above the group's
//!   ([`Status::MC_MTU_ABOVE_GROUP`]) and every router of the SAN carries
//!   the group's MTU ([`Status::MC_ROUTER_MTU`]); tables are bounded
//!   ([`Status::SA_NO_RESOURCES`]).
//! - **Partitions** (docs/multicast.md "Groups in partitions",
//!   docs/spec-notes.md 76): a group belongs to one partition, named by its
//!   create or else fixed by its first join (a join naming none: the
//!   default partition). A join naming another is refused
//!   ([`Status::MC_OTHER_PARTITION`]), and so is one from a node that is not
//!   a member of the group's partition ([`Status::MC_NOT_IN_PARTITION`]); a
//!   limited member may join. When the partitions in force change, members
//!   no longer in their group's partition lose their records.
//! - **Leave** (McMemberRecord Delete), **delete** (McGroupRecord Delete).
//! - **Prune**: a member the sweeps no longer find loses its records.
//! - Standbys copy the groups and their members at every poll, as they
//!   copy NodeRecords, so that a new master has them.

use std::collections::{BTreeMap, BTreeSet};

use rrp::Address;

use crate::attr::mc_group_record::{self, McGroupRecord};
use crate::attr::mc_member_record::{FULL_MEMBER, McMemberRecord, SEND_ONLY};
use crate::client::{Answer, Failure, Request, Target};
use crate::partition::{Member as PartitionMember, Membership, NodeFacts, PartitionKey};
use crate::wire::{Method, MgmtClass, Status};

use super::{Manager, Purpose, SmState, Time};

/// A group at the master.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McGroup {
    /// Its MTU in bytes (0: unlimited).
    pub mtu: u32,
    /// McGroupRecord flags.
    pub flags: u8,
    /// Its partition: named by the create, or fixed by the first join
    /// (`None` until then).
    pub partition: Option<PartitionKey>,
    /// Its members.
    pub members: BTreeMap<Address, McMember>,
}

/// A member record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McMember {
    /// JoinState.
    pub join_state: u8,
    /// The MTU it asked for (0: any).
    pub mtu: u32,
    /// When it joined.
    pub since: Time,
    /// Since when the master's sweeps have not found it (none: found).
    pub missing_since: Option<Time>,
}

/// What the node a manager runs on knows about groups elsewhere: the MTU a
/// group's known members are reached with from this SAN (routers: from
/// their RTs, docs/multicast.md; `Some(0)`: unlimited), `None` when the
/// node knows of no members.
pub type Elsewhere<'a> = &'a dyn Fn(Address) -> Option<u32>;

impl McGroup {
    fn record(&self, group: Address, total: usize) -> McGroupRecord {
        McGroupRecord {
            group,
            total: total.min(usize::from(u16::MAX)) as u16,
            mtu: self.mtu,
            members: self.members.len().min(usize::from(u16::MAX)) as u16,
            full_members: self
                .members
                .values()
                .filter(|m| m.join_state & FULL_MEMBER != 0)
                .count()
                .min(usize::from(u16::MAX)) as u16,
            flags: self.flags,
            partition: self.partition_field(),
        }
    }

    /// Its partition as records carry it (0: not fixed yet).
    fn partition_field(&self) -> u16 {
        self.partition.map_or(0, PartitionKey::get)
    }
}

/// The smaller of two MTUs, 0 meaning unlimited.
fn min_mtu(a: u32, b: u32) -> u32 {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

/// Whether `a` fits in `limit` (0: unlimited).
fn fits(a: u32, limit: u32) -> bool {
    limit == 0 || (a != 0 && a <= limit)
}

impl Manager {
    /// The groups (a master's; a standby's copy).
    pub fn groups(&self) -> &BTreeMap<Address, McGroup> {
        &self.groups
    }

    fn master_only(&self) -> Result<(), Status> {
        if self.state == SmState::Master {
            Ok(())
        } else {
            Err(Status::METHOD_ATTR_UNSUPPORTED)
        }
    }

    /// A create (McGroupRecord Set) from `requester`; `san_mtu` is this
    /// SAN's MTU (what a group nobody knows gets when it asks for none).
    pub fn mc_create(
        &mut self,
        rec: &McGroupRecord,
        elsewhere: Elsewhere<'_>,
        san_mtu: u32,
    ) -> Result<McGroupRecord, Status> {
        self.master_only()?;
        if self.groups.len() >= self.cfg.max_groups {
            self.stats.mc_refused += 1;
            return Err(Status::SA_NO_RESOURCES);
        }
        let (group, mut flags) = if rec.group == Address::UNSPECIFIED {
            let (first, last) = self.cfg.mcast_range;
            let free = (first.0..=last.0)
                .map(Address)
                .find(|g| !self.groups.contains_key(g) && elsewhere(*g).is_none());
            match free {
                Some(g) => (g, mc_group_record::ALLOCATED),
                None => {
                    self.stats.mc_refused += 1;
                    return Err(Status::SA_NO_RESOURCES);
                }
            }
        } else {
            (rec.group, 0)
        };
        if !group.is_logical() {
            self.stats.mc_refused += 1;
            return Err(Status::INVALID_VALUE);
        }
        if self.groups.contains_key(&group) {
            self.stats.mc_refused += 1;
            return Err(Status::MC_EXISTS);
        }
        let partition = match rec.partition {
            0 => None,
            k => match PartitionKey::new(k) {
                Some(k) => Some(k),
                None => {
                    self.stats.mc_refused += 1;
                    return Err(Status::INVALID_VALUE);
                }
            },
        };
        let mtu = match elsewhere(group) {
            // Members elsewhere: the MTU they are reached with is the
            // group's; asking for more does not fit.
            Some(there) => {
                if rec.mtu != 0 && !fits(rec.mtu, there) {
                    self.stats.mc_refused += 1;
                    return Err(Status::MC_MTU_ELSEWHERE);
                }
                if rec.mtu == 0 && there != 0 {
                    // Asking for everything there is: what reaches them.
                    flags |= mc_group_record::KNOWN_ELSEWHERE;
                    there
                } else {
                    flags |= mc_group_record::KNOWN_ELSEWHERE;
                    min_mtu(rec.mtu, there)
                }
            }
            None if rec.mtu == 0 => san_mtu,
            None => min_mtu(rec.mtu, san_mtu),
        };
        self.groups.insert(
            group,
            McGroup {
                mtu,
                flags,
                partition,
                members: BTreeMap::new(),
            },
        );
        self.stats.mc_creates += 1;
        self.event(super::ManagerEvent::GroupCreated { group, mtu });
        Ok(self.groups[&group].record(group, self.groups.len()))
    }

    /// A delete (McGroupRecord Delete): the group and its member records.
    pub fn mc_delete(&mut self, rec: &McGroupRecord) -> Result<McGroupRecord, Status> {
        self.master_only()?;
        let total = self.groups.len();
        let g = self
            .groups
            .remove(&rec.group)
            .ok_or(Status::SA_NO_RECORDS)?;
        self.stats.mc_deletes += 1;
        self.event(super::ManagerEvent::GroupDeleted {
            group: rec.group,
            members: g.members.len(),
        });
        Ok(g.record(rec.group, total - 1))
    }

    /// A group record (McGroupRecord Get): the `modifier`th, or
    /// `BY_GROUP | address`.
    pub fn mc_group_get(&self, modifier: u32) -> Result<McGroupRecord, Status> {
        self.master_only()?;
        let total = self.groups.len();
        if modifier & mc_group_record::BY_GROUP != 0 {
            let a = u16::try_from(modifier & !mc_group_record::BY_GROUP)
                .map_err(|_| Status::INVALID_VALUE)?;
            let g = self.groups.get(&Address(a)).ok_or(Status::SA_NO_RECORDS)?;
            return Ok(g.record(Address(a), total));
        }
        let (a, g) = usize::try_from(modifier)
            .ok()
            .and_then(|i| self.groups.iter().nth(i))
            .ok_or(Status::SA_NO_RECORDS)?;
        Ok(g.record(*a, total))
    }

    /// A join (McMemberRecord Set) from `requester` (the record's member, or
    /// 0 for the requester itself): the checks of docs/multicast.md
    /// "Groups", in order.
    pub fn mc_join(
        &mut self,
        now: Time,
        requester: Address,
        rec: &McMemberRecord,
    ) -> Result<McMemberRecord, Status> {
        self.master_only()?;
        let member = if rec.member == Address::UNSPECIFIED {
            requester
        } else {
            rec.member
        };
        let refuse = |m: &mut Manager, s: Status| {
            m.stats.mc_refused += 1;
            m.event(super::ManagerEvent::JoinRefused {
                group: rec.group,
                member,
                status: s,
            });
            Err(s)
        };
        if !rec.group.is_logical() || !member.is_node() || member != requester {
            return refuse(self, Status::INVALID_VALUE);
        }
        if rec.join_state & (FULL_MEMBER | SEND_ONLY) == 0 {
            return refuse(self, Status::INVALID_VALUE);
        }
        let Some(g) = self.groups.get(&rec.group) else {
            return refuse(self, Status::SA_NO_RECORDS);
        };
        let group_mtu = g.mtu;
        // The group's partition: the one the join names must be it, and
        // the node must be a member of it (full or limited).
        let key = rec.partition_key();
        if g.partition.is_some_and(|p| p != key) {
            return refuse(self, Status::MC_OTHER_PARTITION);
        }
        if self.membership_of(member, key).is_none() {
            self.stats.mc_not_in_partition += 1;
            return refuse(self, Status::MC_NOT_IN_PARTITION);
        }
        if rec.mtu != 0 && group_mtu != 0 && rec.mtu > group_mtu {
            return refuse(self, Status::MC_MTU_ABOVE_GROUP);
        }
        // Every router of the SAN (as the sweeps read their PortInfo, and
        // this manager's own node when it is one) carries the group's MTU.
        let short = self
            .database
            .values()
            .filter(|m| m.node_type == crate::attr::NodeInfo::ROUTER)
            .map(|m| m.mtu)
            .chain(self.own_router_mtu)
            .any(|mtu| mtu != 0 && !fits(group_mtu, mtu));
        if short {
            return refuse(self, Status::MC_ROUTER_MTU);
        }
        let members = self.groups.values().map(|g| g.members.len()).sum::<usize>();
        let g = self.groups.get_mut(&rec.group).expect("checked");
        if !g.members.contains_key(&member) && members >= self.cfg.max_group_members {
            return refuse(self, Status::SA_NO_RESOURCES);
        }
        g.partition = Some(key);
        g.members.insert(
            member,
            McMember {
                join_state: rec.join_state,
                mtu: rec.mtu,
                since: now,
                missing_since: None,
            },
        );
        self.stats.mc_joins += 1;
        Ok(McMemberRecord {
            group: rec.group,
            member,
            join_state: rec.join_state,
            partition: key.get(),
            mtu: rec.mtu,
            group_mtu,
            total: g.members.len().min(usize::from(u16::MAX)) as u16,
        })
    }

    /// A leave (McMemberRecord Delete) from `requester`.
    pub fn mc_leave(
        &mut self,
        requester: Address,
        rec: &McMemberRecord,
    ) -> Result<McMemberRecord, Status> {
        self.master_only()?;
        let member = if rec.member == Address::UNSPECIFIED {
            requester
        } else {
            rec.member
        };
        if member != requester {
            return Err(Status::INVALID_VALUE);
        }
        let g = self
            .groups
            .get_mut(&rec.group)
            .ok_or(Status::SA_NO_RECORDS)?;
        let m = g.members.remove(&member).ok_or(Status::SA_NO_RECORDS)?;
        self.stats.mc_leaves += 1;
        Ok(McMemberRecord {
            group: rec.group,
            member,
            join_state: m.join_state,
            partition: g.partition_field(),
            mtu: m.mtu,
            group_mtu: g.mtu,
            total: g.members.len().min(usize::from(u16::MAX)) as u16,
        })
    }

    /// A member record (McMemberRecord Get): the `modifier`th of the
    /// template's group (0: of every group, group by group).
    pub fn mc_member_get(
        &self,
        modifier: u32,
        rec: &McMemberRecord,
    ) -> Result<McMemberRecord, Status> {
        self.master_only()?;
        let all: Vec<(Address, Address, &McMember, &McGroup)> = self
            .groups
            .iter()
            .filter(|(a, _)| rec.group == Address::UNSPECIFIED || **a == rec.group)
            .flat_map(|(a, g)| g.members.iter().map(move |(m, x)| (*a, *m, x, g)))
            .collect();
        let total = all.len();
        let (group, member, m, g) = usize::try_from(modifier)
            .ok()
            .and_then(|i| all.into_iter().nth(i))
            .ok_or(Status::SA_NO_RECORDS)?;
        Ok(McMemberRecord {
            group,
            member,
            join_state: m.join_state,
            partition: g.partition_field(),
            mtu: m.mtu,
            group_mtu: g.mtu,
            total: total.min(usize::from(u16::MAX)) as u16,
        })
    }

    /// A master's sweep: a member its sweeps have not found for two sweeps
    /// loses its records (a new master's database fills within its first
    /// sweeps, so that it prunes nothing the old master had rightly).
    pub(super) fn mc_prune(&mut self, now: Time) {
        let grace = 2 * self.cfg.timers.sweep_ms;
        let own = self.address;
        let known: BTreeSet<Address> = self.database.keys().copied().collect();
        let mut pruned = Vec::new();
        for (a, g) in self.groups.iter_mut() {
            g.members.retain(|m, x| {
                if *m == own || known.contains(m) {
                    x.missing_since = None;
                    return true;
                }
                let since = *x.missing_since.get_or_insert(now);
                let keep = now < since + grace;
                if !keep {
                    pruned.push((*a, *m));
                }
                keep
            });
        }
        for (group, member) in pruned {
            self.stats.mc_pruned += 1;
            self.event(super::ManagerEvent::MemberPruned { group, member });
        }
    }

    /// How node `member` belongs to partition `key` under the partitions
    /// in force (`Partitions::table_of`): the manager's own node by its own
    /// facts, a member of the database by what the sweeps read; a node the
    /// sweeps have not found yet is a member only where the file names
    /// `ALL` (what any node would be).
    fn membership_of(&self, member: Address, key: PartitionKey) -> Option<Membership> {
        let facts = if member == self.address {
            let identity = self.own.as_ref().map_or(self.cfg.identity, |o| o.identity);
            Some(NodeFacts {
                identity,
                router: self.own_router_mtu.is_some(),
                manager: true,
            })
        } else {
            let own = self.own.as_ref().map(|o| o.identity);
            self.database.get(&member).map(|m| NodeFacts {
                identity: m.identity,
                router: m.node_type == crate::attr::NodeInfo::ROUTER,
                manager: m.identity == self.cfg.identity || own == Some(m.identity),
            })
        };
        match facts {
            Some(f) => self
                .partitions
                .table_of(&f)
                .into_iter()
                .find(|(k, _)| *k == key)
                .map(|(_, m)| m),
            None => self.partitions.get(key).and_then(|p| {
                p.members
                    .iter()
                    .filter(|(who, _)| *who == PartitionMember::All)
                    .map(|(_, how)| *how)
                    .reduce(Membership::max)
            }),
        }
    }

    /// The partitions in force changed (`set_partitions`): as master, every
    /// member no longer a member of its group's partition loses its record,
    /// as its leave would remove it (docs/multicast.md "Groups in
    /// partitions"). The node's own R4 is its own: it still lists the group
    /// until it leaves.
    pub fn mc_check_partitions(&mut self) {
        if self.state != SmState::Master {
            return;
        }
        let mut out = Vec::new();
        for (a, g) in &self.groups {
            let Some(key) = g.partition else { continue };
            for m in g.members.keys() {
                if self.membership_of(*m, key).is_none() {
                    out.push((*a, *m, key));
                }
            }
        }
        for (group, member, partition) in out {
            if let Some(g) = self.groups.get_mut(&group) {
                g.members.remove(&member);
            }
            self.stats.mc_partition_removed += 1;
            self.event(super::ManagerEvent::MemberOutOfPartition {
                group,
                member,
                partition,
            });
        }
    }

    /// A standby copies its master's groups: McGroupRecord `index`, then
    /// their members.
    pub(super) fn sync_groups(&mut self, master: Address, index: u16) {
        self.sa_get(
            master,
            McGroupRecord::ID,
            u32::from(index),
            Vec::new(),
            Purpose::SyncGroup { master, index },
        );
    }

    fn sa_get(&mut self, to: Address, attribute: u16, modifier: u32, data: Vec<u8>, p: Purpose) {
        let request = Request {
            target: Target::Address(to),
            class: MgmtClass::SUBN_ADM,
            method: Method::GET,
            attribute,
            modifier,
            mkey: 0,
            data,
            timeout_ms: self.cfg.timers.timeout_ms,
            retries: self.cfg.timers.retries,
        };
        self.start(request, p);
    }

    pub(super) fn on_sync_group(
        &mut self,
        master: Address,
        index: u16,
        result: &Result<Answer, Failure>,
    ) {
        if self.state != SmState::Standby || self.master != Some(master) {
            return;
        }
        if index == 0 {
            self.synced_groups.clear();
        }
        let rec = match result {
            Ok(a) if a.mad.status == Status::OK => McGroupRecord::parse(&a.mad.data).ok(),
            Ok(a) if a.mad.status == Status::SA_NO_RECORDS => {
                // The master has no (more) groups: what it has is all.
                self.finish_group_sync(master);
                return;
            }
            _ => None,
        };
        let Some(r) = rec else { return };
        if r.group.is_logical() {
            self.synced_groups.insert(r.group);
            let partition = PartitionKey::new(r.partition);
            let g = self.groups.entry(r.group).or_insert(McGroup {
                mtu: r.mtu,
                flags: r.flags,
                partition,
                members: BTreeMap::new(),
            });
            g.mtu = r.mtu;
            g.flags = r.flags;
            g.partition = partition;
        }
        if index.saturating_add(1) < r.total {
            self.sync_groups(master, index + 1);
        } else {
            self.finish_group_sync(master);
        }
    }

    fn finish_group_sync(&mut self, master: Address) {
        let keep = std::mem::take(&mut self.synced_groups);
        self.groups.retain(|g, _| keep.contains(g));
        self.synced_members.clear();
        self.sync_members(master, 0);
    }

    fn sync_members(&mut self, master: Address, index: u16) {
        let mut data = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
        if McMemberRecord::default().emit(&mut data).is_err() {
            return;
        }
        self.sa_get(
            master,
            McMemberRecord::ID,
            u32::from(index),
            data,
            Purpose::SyncMember { master, index },
        );
    }

    pub(super) fn on_sync_member(
        &mut self,
        now: Time,
        master: Address,
        index: u16,
        result: &Result<Answer, Failure>,
    ) {
        if self.state != SmState::Standby || self.master != Some(master) {
            return;
        }
        let rec = match result {
            Ok(a) if a.mad.status == Status::OK => McMemberRecord::parse(&a.mad.data).ok(),
            Ok(a) if a.mad.status == Status::SA_NO_RECORDS => {
                self.finish_member_sync();
                return;
            }
            _ => None,
        };
        let Some(r) = rec else { return };
        if let Some(g) = self.groups.get_mut(&r.group) {
            self.synced_members.insert((r.group, r.member));
            g.members.entry(r.member).or_insert(McMember {
                join_state: r.join_state,
                mtu: r.mtu,
                since: now,
                missing_since: None,
            });
        }
        if index.saturating_add(1) < r.total {
            self.sync_members(master, index + 1);
        } else {
            self.finish_member_sync();
        }
    }

    fn finish_member_sync(&mut self) {
        let keep = std::mem::take(&mut self.synced_members);
        for (a, g) in self.groups.iter_mut() {
            g.members.retain(|m, _| keep.contains(&(*a, *m)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::NodeInfo;
    use crate::manager::{ManagerConfig, Member};
    use crate::partition::parse;

    const GROUP: Address = Address(0x8101);

    /// A master with hosts 0x0102 (full member of 0x0010), 0x0103
    /// (limited member of 0x0010) and 0x0104 (not a member), and group
    /// 0x8101 created without a partition.
    fn master() -> Manager {
        let mut m = Manager::new(ManagerConfig::new(1, 0x0101), 0);
        m.state = SmState::Master;
        m.address = Address(0x0101);
        for (a, id) in [(0x0102, 0x102), (0x0103, 0x103), (0x0104, 0x104)] {
            m.database.insert(
                Address(a),
                Member {
                    address: Address(a),
                    identity: id,
                    node_type: NodeInfo::HOST,
                    level: 1,
                    num_ports: 1,
                    name: String::new(),
                    manager: None,
                    seen: 0,
                    keyed: true,
                    key_refused: false,
                    mtu: 0,
                    takes_sets: true,
                },
            );
        }
        m.set_partitions(
            parse(
                "Default=0x7fff : ALL=full ;\n\
                 tenant=0x0010 : 0x102=full, 0x103=limited ;\n",
            )
            .unwrap(),
        );
        let create = McGroupRecord {
            group: GROUP,
            ..McGroupRecord::default()
        };
        m.mc_create(&create, &|_| None, 1500).unwrap();
        m
    }

    fn join(m: &mut Manager, who: u16, partition: u16) -> Result<McMemberRecord, Status> {
        let rec = McMemberRecord {
            group: GROUP,
            join_state: FULL_MEMBER,
            partition,
            ..McMemberRecord::default()
        };
        m.mc_join(0, Address(who), &rec)
    }

    #[test]
    fn members_of_the_partition_join_full_or_limited() {
        let mut m = master();
        assert_eq!(m.groups[&GROUP].partition, None, "not fixed before a join");
        let a = join(&mut m, 0x0102, 0x0010).unwrap();
        assert_eq!(a.partition, 0x0010);
        // A limited member may join: it receives from full members.
        assert!(join(&mut m, 0x0103, 0x8010).is_ok(), "bit 15 is ignored");
        assert_eq!(m.groups[&GROUP].members.len(), 2);
        assert_eq!(m.stats.mc_not_in_partition, 0);
        assert_eq!(
            m.mc_group_get(0).unwrap().partition,
            0x0010,
            "the group record carries its partition"
        );
    }

    #[test]
    fn a_node_outside_the_partition_is_refused_and_counted() {
        let mut m = master();
        assert_eq!(
            join(&mut m, 0x0104, 0x0010),
            Err(Status::MC_NOT_IN_PARTITION)
        );
        assert_eq!(m.stats.mc_not_in_partition, 1);
        assert_eq!(m.stats.mc_refused, 1);
        assert!(m.groups[&GROUP].members.is_empty());
        assert_eq!(
            m.groups[&GROUP].partition, None,
            "a refused join fixes nothing"
        );
        // A key that is no partition: nobody is a member of it.
        assert_eq!(
            join(&mut m, 0x0102, 0x0020),
            Err(Status::MC_NOT_IN_PARTITION)
        );
        // A node the sweeps have not found is a member where the file
        // says ALL only.
        assert_eq!(
            join(&mut m, 0x0199, 0x0010),
            Err(Status::MC_NOT_IN_PARTITION)
        );
        assert_eq!(m.stats.mc_not_in_partition, 3);
    }

    #[test]
    fn the_first_join_fixes_the_partition() {
        let mut m = master();
        // No partition named: the default one, which fixes the group's.
        let a = join(&mut m, 0x0104, 0).unwrap();
        assert_eq!(a.partition, 0x7FFF);
        assert_eq!(m.groups[&GROUP].partition, Some(PartitionKey::DEFAULT));
        // 0x0102 is a member of 0x0010, but the group is the default's.
        assert_eq!(
            join(&mut m, 0x0102, 0x0010),
            Err(Status::MC_OTHER_PARTITION)
        );
        assert_eq!(m.stats.mc_not_in_partition, 0);
        assert!(join(&mut m, 0x0102, 0x7FFF).is_ok());
        // The group keeps it when its members leave.
        for who in [0x0102, 0x0104] {
            let rec = McMemberRecord {
                group: GROUP,
                ..McMemberRecord::default()
            };
            m.mc_leave(Address(who), &rec).unwrap();
        }
        assert_eq!(
            join(&mut m, 0x0102, 0x0010),
            Err(Status::MC_OTHER_PARTITION)
        );
    }

    #[test]
    fn a_create_may_name_the_partition() {
        let mut m = master();
        let create = McGroupRecord {
            group: Address(0x8102),
            partition: 0x0010,
            ..McGroupRecord::default()
        };
        assert_eq!(
            m.mc_create(&create, &|_| None, 1500).unwrap().partition,
            0x0010
        );
        let bad = McGroupRecord {
            group: Address(0x8103),
            partition: 0x8010,
            ..McGroupRecord::default()
        };
        assert_eq!(
            m.mc_create(&bad, &|_| None, 1500),
            Err(Status::INVALID_VALUE)
        );
        let rec = McMemberRecord {
            group: Address(0x8102),
            join_state: FULL_MEMBER,
            ..McMemberRecord::default()
        };
        assert_eq!(
            m.mc_join(0, Address(0x0102), &rec),
            Err(Status::MC_OTHER_PARTITION),
            "no partition named: the default, not the group's"
        );
    }

    #[test]
    fn members_leave_when_the_partitions_drop_them() {
        let mut m = master();
        join(&mut m, 0x0102, 0x0010).unwrap();
        join(&mut m, 0x0103, 0x0010).unwrap();
        while m.poll_output().is_some() {}
        // 0x0103 is no longer a member of 0x0010.
        m.set_partitions(
            parse(
                "Default=0x7fff : ALL=full ;\n\
                 tenant=0x0010 : 0x102=full ;\n",
            )
            .unwrap(),
        );
        m.mc_check_partitions();
        let g = &m.groups[&GROUP];
        assert_eq!(
            g.members.keys().copied().collect::<Vec<_>>(),
            [Address(0x0102)]
        );
        assert_eq!(m.stats.mc_partition_removed, 1);
        let removed = std::iter::from_fn(|| m.poll_output()).any(|o| {
            matches!(
                o,
                super::super::ManagerOutput::Event(
                    super::super::ManagerEvent::MemberOutOfPartition {
                        member: Address(0x0103),
                        ..
                    }
                )
            )
        });
        assert!(removed, "the removal is an event");
        // The partition gone: its last member goes too; nothing twice.
        m.set_partitions(parse("Default=0x7fff : ALL=full ;\n").unwrap());
        m.mc_check_partitions();
        m.mc_check_partitions();
        assert!(m.groups[&GROUP].members.is_empty());
        assert_eq!(m.stats.mc_partition_removed, 2);
    }
}
