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
//! - **Leave** (McMemberRecord Delete), **delete** (McGroupRecord Delete).
//! - **Prune**: a member the sweeps no longer find loses its records.
//! - Standbys copy the groups and their members at every poll, as they
//!   copy NodeRecords, so that a new master has them.

use std::collections::{BTreeMap, BTreeSet};

use rrp::Address;

use crate::attr::mc_group_record::{self, McGroupRecord};
use crate::attr::mc_member_record::{FULL_MEMBER, McMemberRecord, SEND_ONLY};
use crate::client::{Answer, Failure, Request, Target};
use crate::wire::{Method, MgmtClass, Status};

use super::{Manager, Purpose, SmState, Time};

/// A group at the master.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McGroup {
    /// Its MTU in bytes (0: unlimited).
    pub mtu: u32,
    /// McGroupRecord flags.
    pub flags: u8,
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
        }
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
        let all: Vec<(Address, Address, &McMember, u32)> = self
            .groups
            .iter()
            .filter(|(a, _)| rec.group == Address::UNSPECIFIED || **a == rec.group)
            .flat_map(|(a, g)| g.members.iter().map(move |(m, x)| (*a, *m, x, g.mtu)))
            .collect();
        let total = all.len();
        let (group, member, m, group_mtu) = usize::try_from(modifier)
            .ok()
            .and_then(|i| all.into_iter().nth(i))
            .ok_or(Status::SA_NO_RECORDS)?;
        Ok(McMemberRecord {
            group,
            member,
            join_state: m.join_state,
            mtu: m.mtu,
            group_mtu,
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
            let g = self.groups.entry(r.group).or_insert(McGroup {
                mtu: r.mtu,
                flags: r.flags,
                members: BTreeMap::new(),
            });
            g.mtu = r.mtu;
            g.flags = r.flags;
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
