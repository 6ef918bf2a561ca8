//! The SAN manager (docs/manager.md), sans-IO: InfiniBand's subnet manager
//! state machine for one SAN, driven by explicit time. Its node hands it the
//! SAN's members (addresses to ask), the answers to the requests it
//! outputs, and the SMInfo Gets and Sets other managers send it; it outputs
//! management requests (SMInfo Get and Set, by address) and events.
//!
//! - **Discovering**: asks every member for its SMInfo, in rounds. A master
//!   found: Standby, polling it. A manager that outranks this one (higher
//!   priority, then lower identity) found: Standby, polling it until it is
//!   master. Nothing better in two rounds in a row: Master. Two rounds, so
//!   that a lost answer does not make a second master.
//! - **Standby**: polls its master's SMInfo every `poll_ms`; after
//!   `poll_misses` polls in a row without an answer, or when the polled
//!   manager is neither master nor about to be, Discovering again. HANDOVER
//!   from the master: Master.
//! - **Master**: sweeps every `sweep_ms` (ActCount counts them): an SMInfo
//!   Get to every member. A standby that outranks it: the master stops
//!   being master first (it reports Standby from then on), then sends
//!   HANDOVER; the answer to that Set is the acknowledgement, and it stays
//!   standby polling the new master; no answer: Discovering. Another master
//!   that outranks it: Discovering. So there is never a moment when two
//!   managers say they are master because of a handover.
//! - **Not-active**: after DISABLE, until DISCOVER.
//!
//! Control Sets must carry the SAN's SM key when the manager has one; the
//! SM key is shown in SMInfo only to a requester that gives it.
//!
//! Files: `config`, `election` (discovery, polls, handover, controls),
//! `sweep` (a master's sweeps), `database` (what they found, as
//! NodeRecords), `requests` (what the manager asks and the answers),
//! `events` and `stats`; `assign` (address assignment) and `address_map`
//! (its map and the assignments under way, indexed by address), `groups`
//! (multicast groups), `partitions` (the members' partition tables),
//! `partition_copy` (which partitions are in force: its own, or its
//! master's copied),
//! `router_tables` (every member's table at the SAN's routers),
//! `subscriptions` (InformInfo and Reports), `state`.

mod address_map;
mod assign;
mod config;
mod database;
mod election;
mod events;
pub mod groups;
mod partition_copy;
mod partitions;
mod requests;
mod router_tables;
pub mod state;
mod stats;
mod subscriptions;
mod sweep;
mod timers;

use std::collections::{BTreeMap, VecDeque};

use rrp::{Address, PortId};

use crate::attr::NodeRecord;

pub use crate::subscriptions::Subscription;
pub use config::ManagerConfig;
pub use database::Member;
pub use election::Peer;
pub use events::{ManagerEvent, ManagerOutput};
pub use groups::{McGroup, McMember};
pub use partition_copy::PartitionsCopy;
pub use state::{Control, SmState, outranks};
pub use stats::ManagerStats;
pub use timers::ManagerTimers;

use requests::Purpose;

/// Time in milliseconds.
pub type Time = u64;

/// One SAN's manager.
pub struct Manager {
    cfg: ManagerConfig,
    /// The address of the HR (or node) it runs on: where traps go once it
    /// has set the agents' manager address.
    address: Address,
    state: SmState,
    act_count: u32,
    members: Vec<Address>,
    peers: BTreeMap<Address, Peer>,
    /// The master a standby polls (or the manager it waits for).
    master: Option<Address>,
    missed: u32,
    /// Discovery or sweep round, and the probes of it still out.
    round: u64,
    out_in_round: usize,
    /// Rounds in a row that found nothing better (Discovering).
    clean_rounds: u32,
    next_at: Time,
    pending: BTreeMap<u64, Purpose>,
    next_id: u64,
    outputs: VecDeque<ManagerOutput>,
    stats: ManagerStats,
    /// The SAN's members (master).
    database: BTreeMap<Address, Member>,
    /// The next sweep is heavy.
    heavy: bool,
    /// The port of the SAN it manages (directed routes leave by it).
    port: PortId,
    /// Identity -> address: given, swept, copied from the master; kept
    /// across state changes (docs/manager.md "Address assignment").
    assigned: address_map::AddressMap,
    /// Nodes without an address being given one.
    assigning: address_map::Assigning,
    /// Where the search for a new node's address starts in the pool.
    pool_next: Address,
    /// The node it runs on, as SubnAdm lists it among the members.
    own: Option<NodeRecord>,
    /// Its own node's port MTU when that node is a router (a router of the
    /// SAN, for the joins' check).
    own_router_mtu: Option<u32>,
    /// The multicast groups (docs/multicast.md "Groups").
    groups: BTreeMap<Address, McGroup>,
    /// A standby's copy in progress: the groups and members seen so far.
    synced_groups: std::collections::BTreeSet<Address>,
    synced_members: std::collections::BTreeSet<(Address, Address)>,
    /// Event subscriptions (InformInfo): a master's, a standby's copy;
    /// kept across state changes, so that a failover keeps them.
    subscriptions: crate::subscriptions::Subscriptions,
    /// A standby's copy in progress.
    synced_informs: crate::subscriptions::Subscriptions,
    /// The partitions it gives the members (docs/partitions.md).
    partitions: crate::partition::Partitions,
    /// The box's own partitions (its file, or the default), as last given
    /// by [`Manager::set_partitions`].
    own_partitions: crate::partition::Partitions,
    /// A standby's copy of its master's partitions, in force when held.
    copy: Option<PartitionsCopy>,
    /// A copy under way.
    copying: Option<partition_copy::Copying>,
    /// The version of the last copy refused (not counted again).
    copy_refused: Option<u64>,
    /// The partitions in force as text, and its version: what a master
    /// answers a GetTable of PartitionsText from.
    partitions_text: (u64, Vec<u8>),
    /// Per member, the identity it had and the table it took from this
    /// manager.
    tables: BTreeMap<Address, (u64, partitions::Table)>,
    /// The Sets of tables under way.
    table_sets: BTreeMap<Address, partitions::TableSet>,
    /// Per router of the SAN, the members' tables it took from this
    /// manager.
    router_tables: BTreeMap<Address, router_tables::RouterTables>,
    /// Changes of the partitions it gives so far.
    partitions_changes: u64,
}

impl Manager {
    /// A manager configured by `cfg`, starting at `now` in Discovering.
    pub fn new(cfg: ManagerConfig, now: Time) -> Manager {
        let mut m = Manager {
            cfg,
            address: Address::UNSPECIFIED,
            state: SmState::Discovering,
            act_count: 0,
            members: Vec::new(),
            peers: BTreeMap::new(),
            master: None,
            missed: 0,
            round: 0,
            out_in_round: 0,
            clean_rounds: 0,
            next_at: now,
            pending: BTreeMap::new(),
            next_id: 1,
            outputs: VecDeque::new(),
            stats: ManagerStats::default(),
            database: BTreeMap::new(),
            heavy: true,
            port: PortId::new(0),
            assigned: Default::default(),
            assigning: Default::default(),
            pool_next: Address::UNSPECIFIED,
            own: None,
            own_router_mtu: None,
            groups: BTreeMap::new(),
            synced_groups: Default::default(),
            synced_members: Default::default(),
            subscriptions: Default::default(),
            synced_informs: Default::default(),
            partitions: Default::default(),
            own_partitions: Default::default(),
            copy: None,
            copying: None,
            copy_refused: None,
            partitions_text: partition_copy::text_of(&Default::default()),
            tables: BTreeMap::new(),
            table_sets: BTreeMap::new(),
            router_tables: BTreeMap::new(),
            partitions_changes: 0,
        };
        m.event(ManagerEvent::State {
            from: SmState::NotActive,
            to: SmState::Discovering,
            why: "started".into(),
        });
        m
    }

    /// Its state.
    pub fn state(&self) -> SmState {
        self.state
    }

    /// Its settings.
    pub fn config(&self) -> &ManagerConfig {
        &self.cfg
    }

    /// Its counters.
    pub fn stats(&self) -> &ManagerStats {
        &self.stats
    }

    /// The master it polls (Standby), or itself (Master).
    pub fn master(&self) -> Option<Address> {
        self.master
    }

    /// The managers it has heard of, by address.
    pub fn peers(&self) -> &BTreeMap<Address, Peer> {
        &self.peers
    }

    /// The next output.
    pub fn poll_output(&mut self) -> Option<ManagerOutput> {
        self.outputs.pop_front()
    }

    /// The address it runs at (its HR's, a host's).
    pub fn set_address(&mut self, address: Address) {
        self.address = address;
    }

    /// The port of its SAN on its node.
    pub fn set_port(&mut self, port: PortId) {
        self.port = port;
    }

    /// The SAN's members to ask (its node's LRT or neighbours, without the
    /// node itself).
    pub fn set_members(&mut self, members: Vec<Address>) {
        self.members = members;
        self.members.sort_unstable();
        self.members.dedup();
    }

    pub(super) fn event(&mut self, e: ManagerEvent) {
        self.outputs.push_back(ManagerOutput::Event(e));
    }
}
