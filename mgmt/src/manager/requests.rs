//! The requests a manager outputs, what each is for, and the answers to
//! them handed to the part of the manager that asked.

use rrp::{Address, NativeAddr};

use crate::attr::SmInfo;
use crate::client::{Answer, Failure, Request, Target};
use crate::wire::{Method, MgmtClass, Status};

use super::{Manager, ManagerOutput, Time};

/// What an outstanding request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// SMInfo of a member, in discovery round `round` or a sweep.
    Probe { member: Address, round: u64 },
    /// A standby's poll of its master.
    Poll { master: Address },
    /// HANDOVER to a standby.
    Handover { to: Address },
    /// A member's NodeInfo (a master's sweep).
    NodeInfo { member: Address },
    /// A member's NodeDescription (a master's sweep).
    Description { member: Address },
    /// A member's PortInfo, read to give it the SAN's M_Key.
    KeyRead { member: Address },
    /// The PortInfo Set giving it.
    KeySet { member: Address },
    /// A node without an address, by directed route: its NodeInfo.
    AssignInfo { native: NativeAddr },
    /// Its PortInfo, read to give it `address`.
    AssignRead {
        native: NativeAddr,
        identity: u64,
        address: Address,
    },
    /// The PortInfo Set giving it.
    AssignSet {
        native: NativeAddr,
        identity: u64,
        address: Address,
    },
    /// A standby's copy of its master's identity -> address map: a
    /// GetTable of AddressRecord from identity `from` on.
    Sync { master: Address, from: u64 },
    /// A standby's copy of its master's groups: McGroupRecord `index`.
    SyncGroup { master: Address, index: u16 },
    /// And of their members: McMemberRecord `index`.
    SyncMember { master: Address, index: u16 },
    /// And of its subscriptions: InformInfo `index`.
    SyncInform { master: Address, index: u32 },
    /// And of its partitions: the PartitionsText chunk at `offset`.
    SyncPartitions { master: Address, offset: u32 },
    /// A Report of trap `trap` to subscriber `to`.
    Report { to: Address, trap: u16 },
    /// A PartitionTable Set giving a member its table (one a block).
    TableSet { member: Address },
    /// A PartitionTable Set giving router `router` member `member`'s
    /// table (one a block).
    MemberTableSet { router: Address, member: Address },
}

impl Manager {
    /// Its requests still waiting for an answer (a sweep's end, when none).
    pub fn requests_out(&self) -> usize {
        self.pending.len()
    }

    /// The answer to request `id`.
    pub fn on_answer(&mut self, now: Time, id: u64, result: Result<Answer, Failure>) {
        let Some(purpose) = self.pending.remove(&id) else {
            return;
        };
        let info = match &result {
            Ok(a) if a.mad.status == Status::OK => SmInfo::parse(&a.mad.data).ok(),
            _ => None,
        };
        match purpose {
            Purpose::Probe { member, round } => self.on_probe(now, member, round, info, &result),
            Purpose::Poll { master } => self.on_poll(now, master, info),
            Purpose::NodeInfo { member } => self.on_node_info(now, member, &result),
            Purpose::KeyRead { member } => self.on_key_read(member, &result),
            Purpose::KeySet { member } => self.on_key_set(member, &result),
            Purpose::Description { member } => self.on_description(member, &result),
            Purpose::AssignInfo { native } => self.on_assign_info(native, &result),
            Purpose::AssignRead {
                native,
                identity,
                address,
            } => self.on_assign_read(native, identity, address, &result),
            Purpose::AssignSet {
                native,
                identity,
                address,
            } => self.on_assign_set(now, native, identity, address, &result),
            Purpose::Sync { master, .. } => self.on_sync(master, &result),
            Purpose::SyncGroup { master, index } => self.on_sync_group(master, index, &result),
            Purpose::SyncMember { master, index } => {
                self.on_sync_member(now, master, index, &result)
            }
            Purpose::SyncInform { master, index } => {
                self.on_sync_inform(now, master, index, &result)
            }
            Purpose::SyncPartitions { master, offset } => {
                self.on_sync_partitions(now, master, offset, &result)
            }
            Purpose::Report { to, trap } => self.on_report(to, trap, &result),
            Purpose::TableSet { member } => self.on_table_set(member, &result),
            Purpose::MemberTableSet { router, member } => {
                self.on_member_table_set(router, member, &result)
            }
            Purpose::Handover { to } => self.on_handover(now, to, info),
        }
    }

    /// An SMInfo Get or Set carrying this manager's SMInfo (with the SM
    /// key it knows).
    pub(super) fn request(&mut self, to: Address, method: Method, modifier: u32, purpose: Purpose) {
        let mut data = vec![0u8; MgmtClass::SUBN.attribute_len()];
        let mine = SmInfo {
            sm_key: self.cfg.sm_key,
            ..self.sm_info(self.cfg.sm_key)
        };
        let _ = mine.emit(&mut data);
        self.send(to, method, SmInfo::ID, modifier, data, purpose);
    }

    /// A Get of another attribute.
    pub(super) fn get(&mut self, to: Address, attribute: u16, purpose: Purpose) {
        self.send(to, Method::GET, attribute, 0, Vec::new(), purpose);
    }

    pub(super) fn send(
        &mut self,
        to: Address,
        method: Method,
        attribute: u16,
        modifier: u32,
        data: Vec<u8>,
        purpose: Purpose,
    ) {
        // The SAN's M_Key on every request: it also stops a lease that a
        // violation started.
        let key = self.cfg.mkey;
        self.send_keyed(to, method, attribute, modifier, data, key, purpose);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_keyed(
        &mut self,
        to: Address,
        method: Method,
        attribute: u16,
        modifier: u32,
        data: Vec<u8>,
        mkey: u64,
        purpose: Purpose,
    ) {
        let request = Request {
            target: Target::Address(to),
            class: MgmtClass::SUBN,
            method,
            attribute,
            modifier,
            mkey,
            data,
            timeout_ms: self.cfg.timers.timeout_ms,
            retries: self.cfg.timers.retries,
        };
        self.start(request, purpose);
    }

    /// Outputs `request` for `purpose`.
    pub(super) fn start(&mut self, request: Request, purpose: Purpose) {
        let id = self.next_id;
        self.next_id += 1;
        self.stats.requests += 1;
        self.pending.insert(id, purpose);
        self.outputs
            .push_back(ManagerOutput::Request { id, request });
    }
}
