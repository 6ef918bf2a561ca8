//! Address assignment (docs/manager.md "Address assignment"): a node that
//! starts without an address announces itself to its SAN (trap 1025 from
//! 0x0000); the master reads its NodeInfo and PortInfo by directed route
//! (to its native address: it has no other) and sets PortInfo's address,
//! from its pool, the same one for the same identity every time. The
//! identity -> address map survives the node's restarts (the master keeps
//! it) and a change of master (standbys copy the whole map at every poll,
//! a SubnAdm GetTable of AddressRecord); an address another identity
//! answers at is never given, and two identities answering at one address
//! are reported.

use rrp::{Address, NativeAddr};

use crate::attr::{AddressRecord, AddressTable, NodeInfo, Notice, PortInfo, address_record};
use crate::client::{Answer, Failure, Request, Target};
use crate::wire::{Method, MgmtClass, PathHop, Status};

use super::{Manager, ManagerEvent, Purpose, SmState, Time};

impl Manager {
    /// The identity -> address map: addresses given, found by sweeps, and
    /// copied from the master (a standby's).
    pub fn assignments(&self) -> &std::collections::BTreeMap<u64, Address> {
        self.assigned.as_map()
    }

    /// A node without an address announced itself at `native` (trap
    /// 1025): the master gives it one when it has a pool.
    pub fn on_unaddressed(&mut self, _now: Time, native: NativeAddr, identity: u64) {
        if self.state != SmState::Master || self.cfg.pool.is_none() || native.is_empty() {
            return;
        }
        self.stats.announcements += 1;
        if self.assigning.contains(&native) {
            return;
        }
        self.assigning
            .insert(native, identity, Address::UNSPECIFIED);
        self.directed(
            native,
            Method::GET,
            NodeInfo::ID,
            Vec::new(),
            self.cfg.mkey,
            Purpose::AssignInfo { native },
        );
    }

    /// Whether `a` is held by a node other than `identity`: a member
    /// answering at it, another identity's assignment, one being given,
    /// this manager's own.
    fn held_by_other(&self, a: Address, identity: u64) -> bool {
        if a == self.address {
            return true;
        }
        if let Some(m) = self.database.get(&a) {
            return m.identity != identity;
        }
        if self.assigned.held_by_other(a, identity) || self.assigning.held_by_other(a, identity) {
            return true;
        }
        // A member not swept yet: held, unless the address is this
        // identity's (a node that restarted before its old entry aged out).
        self.members.binary_search(&a).is_ok() && self.assigned.get(identity) != Some(a)
    }

    /// The address for `identity`: the one it had, unless another node
    /// holds it now; else the pool's next free one from where the last
    /// new one was given (the lowest at first), wrapping at the pool's
    /// end, as DHCP servers do: a thousand nodes announcing at once cost
    /// one step each, not a walk over the addresses given, and an address
    /// a node left is not given again at once.
    fn choose(&self, identity: u64) -> Option<Address> {
        if let Some(a) = self.assigned.get(identity)
            && !self.held_by_other(a, identity)
        {
            return Some(a);
        }
        let (first, last) = self.cfg.pool?;
        let start = self.pool_next.0.clamp(first.0, last.0.max(first.0));
        (start..=last.0)
            .chain(first.0..start)
            .map(Address)
            .filter(|a| a.is_node())
            .find(|a| !self.held_by_other(*a, identity) && !self.assigned.is_given(*a))
    }

    /// A request by directed route to `native` on this manager's SAN.
    pub(super) fn directed(
        &mut self,
        native: NativeAddr,
        method: Method,
        attribute: u16,
        data: Vec<u8>,
        mkey: u64,
        purpose: Purpose,
    ) {
        let request = Request {
            target: Target::Directed {
                port: self.port,
                path: vec![PathHop::new(self.address, native)],
            },
            class: MgmtClass::SUBN_DR,
            method,
            attribute,
            modifier: 0,
            mkey,
            data,
            timeout_ms: self.cfg.timers.timeout_ms,
            retries: self.cfg.timers.retries,
        };
        self.start(request, purpose);
    }

    /// NodeInfo of a node without an address: its identity, then its
    /// PortInfo.
    pub(super) fn on_assign_info(&mut self, native: NativeAddr, result: &Result<Answer, Failure>) {
        let ni = match result {
            Ok(a) if a.mad.status == Status::OK => NodeInfo::parse(&a.mad.data).ok(),
            _ => None,
        };
        let Some(n) = ni.filter(|_| self.state == SmState::Master) else {
            self.assigning.remove(&native);
            return;
        };
        let Some(address) = self.choose(n.node_identity) else {
            self.assigning.remove(&native);
            self.stats.pool_exhausted += 1;
            self.event(ManagerEvent::PoolExhausted {
                identity: n.node_identity,
            });
            return;
        };
        if self.assigned.get(n.node_identity) != Some(address) {
            self.pool_next = Address(address.0.wrapping_add(1));
        }
        self.assigning.insert(native, n.node_identity, address);
        self.directed(
            native,
            Method::GET,
            PortInfo::ID,
            Vec::new(),
            self.cfg.mkey,
            Purpose::AssignRead {
                native,
                identity: n.node_identity,
                address,
            },
        );
    }

    /// Its PortInfo: the Set giving it `address` (with the SAN's M_Key,
    /// when the master gives one, and this manager as where traps go).
    pub(super) fn on_assign_read(
        &mut self,
        native: NativeAddr,
        identity: u64,
        address: Address,
        result: &Result<Answer, Failure>,
    ) {
        let pi = match result {
            Ok(a) if a.mad.status == Status::OK => PortInfo::parse(&a.mad.data).ok(),
            _ => None,
        };
        let Some(mut p) = pi.filter(|_| self.state == SmState::Master) else {
            self.assigning.remove(&native);
            return;
        };
        let given = if p.mkey != 0 { p.mkey } else { self.cfg.mkey };
        if self.cfg.mkey != 0 {
            p.mkey = self.cfg.mkey;
            p.mkey_protect_bits = self.cfg.mkey_protect;
            p.mkey_lease_period = self.cfg.mkey_lease_s;
        }
        p.address = address;
        p.manager_address = self.address;
        let mut data = vec![0u8; MgmtClass::SUBN.attribute_len()];
        if p.emit(&mut data).is_err() {
            self.assigning.remove(&native);
            return;
        }
        self.directed(
            native,
            Method::SET,
            PortInfo::ID,
            data,
            given,
            Purpose::AssignSet {
                native,
                identity,
                address,
            },
        );
    }

    /// The Set's answer: the address is the node's.
    pub(super) fn on_assign_set(
        &mut self,
        now: Time,
        native: NativeAddr,
        identity: u64,
        address: Address,
        result: &Result<Answer, Failure>,
    ) {
        self.assigning.remove(&native);
        let ok = matches!(result, Ok(a) if a.mad.status == Status::OK);
        if !ok {
            self.stats.assign_failed += 1;
            return;
        }
        let again = self.assigned.get(identity) == Some(address);
        self.assigned.insert(identity, address);
        self.stats.addresses_assigned += 1;
        self.event(ManagerEvent::AddressAssigned {
            identity,
            address,
            native,
            again,
        });
        let n = Notice::address_assigned(self.address, identity, address, again);
        self.raise(now, n);
    }

    /// A member's NodeInfo in a sweep: its identity is the one at that
    /// address from now on; a different identity there while the first
    /// still answered within two sweeps is a duplicate.
    pub(super) fn note_identity(
        &mut self,
        now: Time,
        member: Address,
        identity: u64,
        before: u64,
        seen: Time,
    ) {
        if identity == 0 {
            return;
        }
        if before != 0
            && before != identity
            && now.saturating_sub(seen) <= 2 * self.cfg.timers.sweep_ms + self.cfg.timers.timeout_ms
        {
            self.stats.duplicates += 1;
            self.event(ManagerEvent::DuplicateAddress {
                address: member,
                identities: [before, identity],
            });
            let n = Notice::duplicate_address(self.address, member, [before, identity]);
            self.raise(now, n);
        }
        // The address is this identity's; an address another identity had
        // before stays that one's (it may come back).
        self.assigned.insert(identity, member);
    }

    /// The identity -> address map from identity `from` on, as much of it
    /// as one GetTableResp holds (SubnAdm AddressRecord, docs/spec-notes.md
    /// 63).
    pub fn address_table(&self, from: u64) -> AddressTable {
        AddressTable {
            records: self
                .assigned
                .as_map()
                .range(from.max(1)..)
                .filter(|(_, a)| a.is_node())
                .take(address_record::PER_MAD)
                .map(|(identity, address)| AddressRecord {
                    identity: *identity,
                    address: *address,
                })
                .collect(),
        }
    }

    /// A standby copies its master's identity -> address map: a GetTable
    /// of AddressRecord from identity `from` on.
    pub(super) fn sync_from(&mut self, master: Address, from: u64) {
        let mut data = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
        if AddressTable::from_identity(from).emit(&mut data).is_err() {
            return;
        }
        let request = Request {
            target: Target::Address(master),
            class: MgmtClass::SUBN_ADM,
            method: Method::GET_TABLE,
            attribute: AddressRecord::ID,
            modifier: 0,
            mkey: 0,
            data,
            timeout_ms: self.cfg.timers.timeout_ms,
            retries: self.cfg.timers.retries,
        };
        self.start(request, Purpose::Sync { master, from });
    }

    /// A table of the master's map: every record kept; when the answer is
    /// full, the rest asked for from the identity after its last.
    pub(super) fn on_sync(&mut self, master: Address, result: &Result<Answer, Failure>) {
        let table = match result {
            Ok(a) if a.mad.status == Status::OK => AddressTable::parse(&a.mad.data).ok(),
            _ => None,
        };
        let Some(t) = table else { return };
        if self.state != SmState::Standby || self.master != Some(master) {
            return;
        }
        for r in t.records.iter().filter(|r| r.address.is_node()) {
            self.stats.synced += 1;
            self.assigned.insert(r.identity, r.address);
        }
        if t.full()
            && let Some(next) = t.records.last().and_then(|r| r.identity.checked_add(1))
        {
            self.sync_from(master, next);
        }
    }
}
