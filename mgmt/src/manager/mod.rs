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

mod assign;
pub mod groups;
pub mod state;
mod timers;

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use rrp::{Address, NativeAddr, PortId};

use crate::attr::{NodeDescription, NodeInfo, NodeRecord, PortInfo, SmInfo, node_record};
use crate::client::{Answer, Failure, Request, Target};
use crate::wire::{Method, MgmtClass, Status};

pub use groups::{McGroup, McMember};
pub use state::{Control, SmState, outranks};
pub use timers::ManagerTimers;

/// Time in milliseconds.
pub type Time = u64;

/// A manager's settings (docs/manager.md "Timers and counts").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerConfig {
    /// 0-15: the higher wins the election.
    pub priority: u8,
    /// The node identity (NodeInfo's): the tie-break, the lower wins.
    pub identity: u64,
    /// The SAN's SM key (0: none): control Sets must carry it.
    pub sm_key: u64,
    /// Its timers and counts.
    pub timers: ManagerTimers,
    /// The M_Key a master gives every member's agent, with its protect
    /// bits and lease (0: the master leaves the agents' keys alone).
    pub mkey: u64,
    /// Protect bits of that key, 0-3.
    pub mkey_protect: u8,
    /// Lease of that key in seconds (0: never runs out).
    pub mkey_lease_s: u16,
    /// The addresses a master gives nodes that start without one, first
    /// and last (none: it gives none).
    pub pool: Option<(Address, Address)>,
    /// The logical addresses a master chooses a group's from, first and
    /// last (docs/multicast.md "Groups").
    pub mcast_range: (Address, Address),
    /// Groups a master keeps at most.
    pub max_groups: usize,
    /// Member records a master keeps at most (all groups).
    pub max_group_members: usize,
}

impl ManagerConfig {
    /// The defaults of docs/manager.md for a manager of `priority` on a
    /// node of `identity`.
    pub fn new(priority: u8, identity: u64) -> ManagerConfig {
        ManagerConfig {
            priority: priority.min(15),
            identity,
            sm_key: 0,
            timers: ManagerTimers::default(),
            mkey: 0,
            mkey_protect: 0,
            mkey_lease_s: 0,
            pool: None,
            mcast_range: (Address(0x8000), Address(0xBFFF)),
            max_groups: 256,
            max_group_members: 4096,
        }
    }
}

/// What the manager asks its node to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManagerOutput {
    /// Send this request; its answer goes to [`Manager::on_answer`] with
    /// `id`.
    Request {
        /// The manager's handle.
        id: u64,
        /// The request.
        request: Request,
    },
    /// Something to log (every transition once, with the reason).
    Event(ManagerEvent),
}

/// What a manager reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManagerEvent {
    /// A transition, and why.
    State {
        /// From.
        from: SmState,
        /// To.
        to: SmState,
        /// Why.
        why: String,
    },
    /// A node without an address was given one (`again`: the one it had
    /// before).
    AddressAssigned {
        /// Its identity.
        identity: u64,
        /// The address.
        address: Address,
        /// Where it is on the SAN.
        native: NativeAddr,
        /// The address it had before.
        again: bool,
    },
    /// Two identities answered at one address within two sweeps.
    DuplicateAddress {
        /// The address.
        address: Address,
        /// The identity seen before, the one seen now.
        identities: [u64; 2],
    },
    /// A node without an address got none: the pool is used up.
    PoolExhausted {
        /// Its identity.
        identity: u64,
    },
    /// A multicast group was created.
    GroupCreated {
        /// The group.
        group: Address,
        /// Its MTU (bytes; 0: unlimited).
        mtu: u32,
    },
    /// A multicast group was deleted.
    GroupDeleted {
        /// The group.
        group: Address,
        /// The member records it had.
        members: usize,
    },
    /// A join was refused.
    JoinRefused {
        /// The group.
        group: Address,
        /// Who asked.
        member: Address,
        /// Why (the status answered).
        status: Status,
    },
    /// A member the sweeps no longer find lost its record.
    MemberPruned {
        /// The group.
        group: Address,
        /// The member.
        member: Address,
    },
    /// A control Set refused (no SM key, or not valid in this state).
    ControlRefused {
        /// From whom.
        from: Address,
        /// What.
        control: Control,
        /// Why.
        why: &'static str,
    },
}

impl ManagerEvent {
    /// Its kind's name (the key of the daemon's log rate limit).
    pub const fn kind(&self) -> &'static str {
        match self {
            ManagerEvent::State { .. } => "manager state",
            ManagerEvent::AddressAssigned { .. } => "address assigned",
            ManagerEvent::DuplicateAddress { .. } => "duplicate address",
            ManagerEvent::PoolExhausted { .. } => "address pool exhausted",
            ManagerEvent::GroupCreated { .. } => "group created",
            ManagerEvent::GroupDeleted { .. } => "group deleted",
            ManagerEvent::JoinRefused { .. } => "join refused",
            ManagerEvent::MemberPruned { .. } => "member pruned",
            ManagerEvent::ControlRefused { .. } => "control refused",
        }
    }

    /// The node whose request caused it, when a received packet did.
    pub const fn source(&self) -> Option<Address> {
        match self {
            ManagerEvent::JoinRefused { member, .. } => Some(*member),
            ManagerEvent::ControlRefused { from, .. } => Some(*from),
            _ => None,
        }
    }
}

impl fmt::Display for ManagerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManagerEvent::State { from, to, why } => write!(f, "manager {from} -> {to}: {why}"),
            ManagerEvent::AddressAssigned {
                identity,
                address,
                native,
                again,
            } => write!(
                f,
                "manager: {address} given to node {identity:#018x} at {native}{}",
                if *again { " (its address before)" } else { "" }
            ),
            ManagerEvent::DuplicateAddress {
                address,
                identities,
            } => write!(
                f,
                "manager: duplicate address {address}: nodes {:#018x} and {:#018x} answer at it",
                identities[0], identities[1]
            ),
            ManagerEvent::PoolExhausted { identity } => write!(
                f,
                "manager: no address left in the pool for node {identity:#018x}"
            ),
            ManagerEvent::GroupCreated { group, mtu } => {
                write!(f, "manager: group {group} created, MTU {mtu}")
            }
            ManagerEvent::GroupDeleted { group, members } => {
                write!(
                    f,
                    "manager: group {group} deleted ({members} member records)"
                )
            }
            ManagerEvent::JoinRefused {
                group,
                member,
                status,
            } => write!(f, "manager: join of {member} to {group} refused: {status}"),
            ManagerEvent::MemberPruned { group, member } => {
                write!(
                    f,
                    "manager: {member} pruned from {group} (no longer on the SAN)"
                )
            }
            ManagerEvent::ControlRefused { from, control, why } => {
                write!(f, "manager: {} from {from} refused: {why}", control.name())
            }
        }
    }
}

/// Counters of a manager.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagerStats {
    /// Transitions.
    pub transitions: u64,
    /// Discovery rounds.
    pub rounds: u64,
    /// Sweeps as master.
    pub sweeps: u64,
    /// Polls of the master sent.
    pub polls: u64,
    /// Polls without an answer.
    pub polls_missed: u64,
    /// Requests sent (SMInfo Gets and Sets).
    pub requests: u64,
    /// Handovers given.
    pub handovers_given: u64,
    /// Handovers taken.
    pub handovers_taken: u64,
    /// Heavy sweeps.
    pub heavy_sweeps: u64,
    /// Agents given the SAN's M_Key.
    pub keys_given: u64,
    /// Agents that refused it.
    pub keys_refused: u64,
    /// Control Sets refused.
    pub controls_refused: u64,
    /// Announcements of nodes without an address heard as master.
    pub announcements: u64,
    /// Addresses given.
    pub addresses_assigned: u64,
    /// Address Sets that failed (no answer, or refused).
    pub assign_failed: u64,
    /// Nodes left without an address: the pool used up.
    pub pool_exhausted: u64,
    /// Duplicate addresses found.
    pub duplicates: u64,
    /// Records copied from the master (a standby's).
    pub synced: u64,
    /// Multicast groups created.
    pub mc_creates: u64,
    /// Multicast groups deleted.
    pub mc_deletes: u64,
    /// Joins accepted.
    pub mc_joins: u64,
    /// Leaves.
    pub mc_leaves: u64,
    /// Creates and joins refused (every status).
    pub mc_refused: u64,
    /// Member records pruned.
    pub mc_pruned: u64,
}

impl ManagerStats {
    /// Every counter with its name.
    pub fn fields(&self) -> [(&'static str, u64); 24] {
        [
            ("transitions", self.transitions),
            ("rounds", self.rounds),
            ("sweeps", self.sweeps),
            ("polls", self.polls),
            ("polls_missed", self.polls_missed),
            ("requests", self.requests),
            ("handovers_given", self.handovers_given),
            ("handovers_taken", self.handovers_taken),
            ("heavy_sweeps", self.heavy_sweeps),
            ("keys_given", self.keys_given),
            ("keys_refused", self.keys_refused),
            ("controls_refused", self.controls_refused),
            ("announcements", self.announcements),
            ("addresses_assigned", self.addresses_assigned),
            ("assign_failed", self.assign_failed),
            ("pool_exhausted", self.pool_exhausted),
            ("duplicates", self.duplicates),
            ("synced", self.synced),
            ("mc_creates", self.mc_creates),
            ("mc_deletes", self.mc_deletes),
            ("mc_joins", self.mc_joins),
            ("mc_leaves", self.mc_leaves),
            ("mc_refused", self.mc_refused),
            ("mc_pruned", self.mc_pruned),
        ]
    }
}

/// A manager another one answered as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Its state.
    pub state: SmState,
    /// Its priority.
    pub priority: u8,
    /// Its identity.
    pub identity: u64,
    /// When it last answered.
    pub seen: Time,
    /// Whether it knows the SAN's SM key (its SMInfo showed this manager's
    /// key when asked with it; always, when the SAN has none).
    pub trusted: bool,
}

impl Peer {
    fn rank(&self) -> (u8, u64) {
        (self.priority, self.identity)
    }
}

/// What an outstanding request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
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
    /// A standby's copy of its master's database: NodeRecord `index`.
    Sync { master: Address, index: u16 },
    /// A standby's copy of its master's groups: McGroupRecord `index`.
    SyncGroup { master: Address, index: u16 },
    /// And of their members: McMemberRecord `index`.
    SyncMember { master: Address, index: u16 },
}

/// A member of the SAN as the master's sweeps know it (docs/manager.md
/// "The SAN database").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its address on the SAN.
    pub address: Address,
    /// NodeInfo's NodeIdentity.
    pub identity: u64,
    /// NodeInfo's NodeType (1 host, 3 router).
    pub node_type: u8,
    /// NodeInfo's implementation level (1-4: A-D).
    pub level: u16,
    /// NodeInfo's NumPorts.
    pub num_ports: u8,
    /// NodeDescription.
    pub name: String,
    /// The state of the manager it runs, if it runs one.
    pub manager: Option<SmState>,
    /// When it last answered.
    pub seen: Time,
    /// Its agent has the SAN's M_Key (always, when the master gives none).
    pub keyed: bool,
    /// Its agent refused the key (another key it would not show): tried
    /// again on the next heavy sweep.
    pub key_refused: bool,
    /// Its port's MTU (PortInfo, read with NodeInfo; 0: unlimited or not
    /// read yet).
    pub mtu: u32,
}

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
    assigned: BTreeMap<u64, Address>,
    /// Nodes without an address being given one: native -> (identity, the
    /// address chosen, 0 before).
    assigning: BTreeMap<NativeAddr, (u64, Address)>,
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
            assigned: BTreeMap::new(),
            assigning: BTreeMap::new(),
            own: None,
            own_router_mtu: None,
            groups: BTreeMap::new(),
            synced_groups: Default::default(),
            synced_members: Default::default(),
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

    /// The SAN's members as its sweeps found them (master; empty
    /// otherwise).
    pub fn database(&self) -> &BTreeMap<Address, Member> {
        &self.database
    }

    /// A NodeRecord of the database and the manager's own node (SubnAdm):
    /// the `index`th, in address order, of the members that match `template` in the components of the
    /// modifier's mask (`node_record::query`), or `BY_ADDRESS | address`;
    /// `total` is the number of matches. Status 7 for a mask bit that is no
    /// component, SA's 0x0200 (no records) past the last match.
    pub fn node_record(&self, modifier: u32, template: &NodeRecord) -> Result<NodeRecord, Status> {
        let (mask, index, template) = if modifier & node_record::BY_ADDRESS != 0 {
            let a = u16::try_from(modifier & !node_record::BY_ADDRESS)
                .map_err(|_| Status::INVALID_VALUE)?;
            let t = NodeRecord {
                address: Address(a),
                ..NodeRecord::default()
            };
            (
                node_record::component::ADDRESS,
                0,
                std::borrow::Cow::Owned(t),
            )
        } else {
            let (mask, index) = node_record::split_query(modifier).ok_or(Status::INVALID_VALUE)?;
            (mask, index, std::borrow::Cow::Borrowed(template))
        };
        let total = |n: usize| n.min(usize::from(u16::MAX)) as u16;
        let own = self.own.clone().map(|mut r| {
            r.address = self.address;
            r.manager = self.state as u8;
            r
        });
        let mut matching: Vec<NodeRecord> = self
            .database
            .values()
            .map(Self::record_of)
            .chain(own)
            .filter(|r| r.matches(&template, mask))
            .collect();
        matching.sort_by_key(|r| r.address);
        let n = total(matching.len());
        let mut r = matching
            .into_iter()
            .nth(usize::from(index))
            .ok_or(Status::SA_NO_RECORDS)?;
        r.total = n;
        Ok(r)
    }

    /// A member as a NodeRecord (`total` left 0).
    fn record_of(m: &Member) -> NodeRecord {
        NodeRecord {
            total: 0,
            address: m.address,
            identity: m.identity,
            node_type: m.node_type,
            level: m.level.min(255) as u8,
            num_ports: m.num_ports,
            manager: m.manager.map_or(node_record::NO_MANAGER, |s| s as u8),
            description: m.name.clone(),
        }
    }

    /// The node it runs on, as its NodeInfo and NodeDescription say (the
    /// address and manager state are the manager's own): SubnAdm lists it
    /// among the SAN's members, as InfiniBand's SA lists the SM's node.
    pub fn set_own(&mut self, own: NodeRecord) {
        self.own = Some(own);
    }

    /// The MTU of its node's port when that node is a router (`None`: a
    /// host): the joins' check counts it among the SAN's routers.
    pub fn set_own_router_mtu(&mut self, mtu: Option<u32>) {
        self.own_router_mtu = mtu;
    }

    /// Makes the next sweep heavy (a trap said the SAN changed).
    pub fn heavy_sweep(&mut self) {
        self.heavy = true;
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

    /// SMInfo as this manager answers a Get: the SM key only to a
    /// requester that gave it.
    pub fn sm_info(&self, asked_key: u64) -> SmInfo {
        SmInfo {
            identity: self.cfg.identity,
            sm_key: if self.cfg.sm_key == 0 || asked_key == self.cfg.sm_key {
                self.cfg.sm_key
            } else {
                0
            },
            act_count: self.act_count,
            priority: self.cfg.priority,
            sm_state: self.state as u8,
        }
    }

    /// An SMInfo Set from manager `from`: a control (the modifier) with the
    /// requester's SMInfo. Answers this manager's SMInfo, or a status.
    pub fn on_control(
        &mut self,
        now: Time,
        from: Address,
        modifier: u32,
        info: &SmInfo,
    ) -> Result<SmInfo, Status> {
        let Some(control) = Control::from_modifier(modifier) else {
            return Err(Status::INVALID_VALUE);
        };
        if self.cfg.sm_key != 0 && info.sm_key != self.cfg.sm_key {
            return Err(self.refuse(from, control, "no SM key"));
        }
        match control {
            Control::Handover => match self.state {
                SmState::Standby | SmState::Discovering => {
                    self.stats.handovers_taken += 1;
                    self.become_master(now, format!("HANDOVER from {from}"));
                }
                SmState::Master => {}
                SmState::NotActive => return Err(self.refuse(from, control, "not active")),
            },
            Control::Acknowledge => {}
            Control::Disable => {
                self.set_state(now, SmState::NotActive, format!("DISABLE from {from}"))
            }
            Control::Standby => {
                if self.state == SmState::Master {
                    self.master = Some(from);
                    self.missed = 0;
                    self.set_state(now, SmState::Standby, format!("STANDBY from {from}"));
                }
            }
            Control::Discover => {
                if self.state == SmState::NotActive {
                    self.start_discovery(now, format!("DISCOVER from {from}"));
                }
            }
        }
        Ok(self.sm_info(info.sm_key))
    }

    fn refuse(&mut self, from: Address, control: Control, why: &'static str) -> Status {
        self.stats.controls_refused += 1;
        self.event(ManagerEvent::ControlRefused { from, control, why });
        Status::INVALID_VALUE
    }

    /// When [`Manager::on_timer`] wants to run.
    pub fn next_timer(&self) -> Time {
        match self.state {
            SmState::NotActive => Time::MAX,
            // A round still out waits for its answers.
            _ if self.out_in_round > 0 => Time::MAX,
            _ => self.next_at,
        }
    }

    /// Timers: discovery rounds, polls, sweeps.
    pub fn on_timer(&mut self, now: Time) {
        if now < self.next_timer() {
            return;
        }
        match self.state {
            SmState::NotActive => {}
            SmState::Discovering | SmState::Master => self.probe_round(now),
            SmState::Standby => self.poll(now),
        }
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
            Purpose::Probe { member, round } => {
                if let Some(i) = &info
                    && let Some(state) = SmState::from_u8(i.sm_state)
                {
                    let trusted = self.cfg.sm_key == 0 || i.sm_key == self.cfg.sm_key;
                    self.peers.insert(
                        member,
                        Peer {
                            state,
                            priority: i.priority,
                            identity: i.identity,
                            seen: now,
                            trusted,
                        },
                    );
                } else if result.is_ok() {
                    // It answered, but runs no manager.
                    self.peers.remove(&member);
                }
                if self.state == SmState::Master {
                    match (&result, self.database.get_mut(&member)) {
                        (Ok(_), Some(m)) => {
                            m.seen = now;
                            m.manager = info.as_ref().and_then(|i| SmState::from_u8(i.sm_state));
                        }
                        // Gone from the SAN: out of the database.
                        (Err(_), Some(_)) => {
                            self.database.remove(&member);
                        }
                        _ => {}
                    }
                }
                if round == self.round {
                    self.out_in_round = self.out_in_round.saturating_sub(1);
                    if self.out_in_round == 0 {
                        self.round_done(now);
                    }
                }
            }
            Purpose::Poll { master } => {
                if self.state != SmState::Standby || self.master != Some(master) {
                    return;
                }
                match info.and_then(|i| SmState::from_u8(i.sm_state).map(|s| (i, s))) {
                    Some((i, s)) => {
                        self.missed = 0;
                        let trusted = self.cfg.sm_key == 0 || i.sm_key == self.cfg.sm_key;
                        self.peers.insert(
                            master,
                            Peer {
                                state: s,
                                priority: i.priority,
                                identity: i.identity,
                                seen: now,
                                trusted,
                            },
                        );
                        let syncing = self.pending.values().any(|p| {
                            matches!(
                                p,
                                Purpose::Sync { .. }
                                    | Purpose::SyncGroup { .. }
                                    | Purpose::SyncMember { .. }
                            )
                        });
                        if s == SmState::Master && !syncing {
                            self.sync_from(master, 0);
                            self.sync_groups(master, 0);
                        }
                        if !matches!(s, SmState::Master | SmState::Discovering) {
                            self.start_discovery(
                                now,
                                format!("{master} polled is {s}, not master"),
                            );
                        }
                    }
                    None => {
                        self.missed += 1;
                        self.stats.polls_missed += 1;
                        if self.missed >= self.cfg.timers.poll_misses {
                            self.peers.remove(&master);
                            self.start_discovery(
                                now,
                                format!("master {master} missed {} polls", self.missed),
                            );
                        }
                    }
                }
            }
            Purpose::NodeInfo { member } => {
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
                }
            }
            Purpose::KeyRead { member } => {
                let pi = match &result {
                    Ok(a) if a.mad.status == Status::OK => PortInfo::parse(&a.mad.data).ok(),
                    _ => None,
                };
                if let Some(p) = &pi
                    && let Some(e) = self.database.get_mut(&member)
                {
                    e.mtu = p.mtu;
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
            Purpose::KeySet { member } => {
                let ok = matches!(&result, Ok(a) if a.mad.status == Status::OK);
                if let Some(e) = self.database.get_mut(&member) {
                    e.keyed = ok;
                    e.key_refused = !ok && result.is_ok();
                }
                if ok {
                    self.stats.keys_given += 1;
                } else if result.is_ok() {
                    self.stats.keys_refused += 1;
                }
            }
            Purpose::Description { member } => {
                if let Ok(a) = &result
                    && a.mad.status == Status::OK
                    && let Ok(d) = NodeDescription::parse(&a.mad.data)
                    && let Some(e) = self.database.get_mut(&member)
                {
                    e.name = d.0;
                }
            }
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
            } => self.on_assign_set(native, identity, address, &result),
            Purpose::Sync { master, index } => self.on_sync(master, index, &result),
            Purpose::SyncGroup { master, index } => self.on_sync_group(master, index, &result),
            Purpose::SyncMember { master, index } => {
                self.on_sync_member(now, master, index, &result)
            }
            Purpose::Handover { to } => {
                if info.is_some() {
                    // The acknowledgement: stay standby under the new master.
                    self.master = Some(to);
                    self.missed = 0;
                    self.next_at = now + self.cfg.timers.poll_ms;
                } else {
                    self.start_discovery(now, format!("HANDOVER to {to} not acknowledged"));
                }
            }
        }
    }

    fn probe_round(&mut self, now: Time) {
        self.round += 1;
        if self.state == SmState::Master {
            self.stats.sweeps += 1;
            self.act_count = self.act_count.wrapping_add(1);
        } else {
            self.stats.rounds += 1;
        }
        let members = self.members.clone();
        self.out_in_round = members.len();
        let heavy = self.state == SmState::Master
            && (self.heavy
                || self
                    .stats
                    .sweeps
                    .saturating_sub(1)
                    .is_multiple_of(self.cfg.timers.heavy_every.max(1)));
        if heavy {
            self.stats.heavy_sweeps += 1;
            self.heavy = false;
        }
        if self.state == SmState::Master {
            self.mc_prune(now);
        }
        // Members gone from the node's list are gone from the database.
        self.database.retain(|a, _| members.contains(a));
        for m in members {
            self.request(
                m,
                Method::GET,
                0,
                Purpose::Probe {
                    member: m,
                    round: self.round,
                },
            );
            if self.state == SmState::Master && (heavy || !self.database.contains_key(&m)) {
                self.get(m, NodeInfo::ID, Purpose::NodeInfo { member: m });
                self.get(m, NodeDescription::ID, Purpose::Description { member: m });
            }
        }
        if self.out_in_round == 0 {
            self.round_done(now);
        }
    }

    /// A round's probes are all answered or given up.
    fn round_done(&mut self, now: Time) {
        let me = (self.cfg.priority, self.cfg.identity);
        // Peers that did not answer this round are gone.
        let seen_by = now.saturating_sub(self.round_span());
        self.peers.retain(|_, p| p.seen >= seen_by);
        // Masters that do not know the SM key are not followed: a rogue
        // manager neither makes this one standby nor takes a handover.
        let best_master = self
            .peers
            .iter()
            .filter(|(_, p)| p.state == SmState::Master && p.trusted)
            .max_by(|a, b| rank_order(a.1, b.1))
            .map(|(a, p)| (*a, *p));
        let best_other = self
            .peers
            .iter()
            .filter(|(_, p)| matches!(p.state, SmState::Discovering | SmState::Standby))
            .filter(|(_, p)| p.trusted)
            .max_by(|a, b| rank_order(a.1, b.1))
            .map(|(a, p)| (*a, *p));
        match self.state {
            SmState::Discovering => {
                if let Some((a, _)) = best_master {
                    self.follow(now, a, format!("found master {a}"));
                } else if let Some((a, p)) = best_other
                    && outranks(p.rank(), me)
                {
                    self.follow(now, a, format!("{a} outranks this manager"));
                } else {
                    self.clean_rounds += 1;
                    if self.clean_rounds >= 2 {
                        self.become_master(now, "no master and none better".into());
                    } else {
                        self.next_at = now + self.cfg.timers.discover_ms;
                    }
                }
            }
            SmState::Master => {
                if let Some((a, p)) = best_master
                    && outranks(p.rank(), me)
                {
                    self.start_discovery(now, format!("master {a} outranks this one"));
                } else if let Some((a, p)) = best_other
                    && p.state == SmState::Standby
                    && outranks(p.rank(), me)
                {
                    // Stop being master first, then hand over: only to a
                    // manager that knows the SM key, so that a rogue one
                    // cannot take a protected SAN over.
                    self.stats.handovers_given += 1;
                    self.master = Some(a);
                    self.set_state(now, SmState::Standby, format!("handing over to {a}"));
                    self.request(
                        a,
                        Method::SET,
                        Control::Handover as u32,
                        Purpose::Handover { to: a },
                    );
                    self.next_at = Time::MAX;
                } else {
                    self.next_at = now + self.cfg.timers.sweep_ms;
                }
            }
            _ => {}
        }
    }

    /// How far back a peer's answer counts for the round just done.
    fn round_span(&self) -> Time {
        self.cfg.timers.timeout_ms * Time::from(self.cfg.timers.retries + 1)
            + self.cfg.timers.sweep_ms.max(self.cfg.timers.discover_ms)
    }

    fn follow(&mut self, now: Time, master: Address, why: String) {
        self.master = Some(master);
        self.missed = 0;
        self.next_at = now;
        self.set_state(now, SmState::Standby, why);
    }

    fn become_master(&mut self, now: Time, why: String) {
        self.master = None;
        self.next_at = now + self.cfg.timers.sweep_ms;
        self.set_state(now, SmState::Master, why);
    }

    fn start_discovery(&mut self, now: Time, why: String) {
        self.master = None;
        self.clean_rounds = 0;
        self.out_in_round = 0;
        self.next_at = now;
        self.set_state(now, SmState::Discovering, why);
    }

    fn poll(&mut self, now: Time) {
        let Some(master) = self.master else {
            self.start_discovery(now, "no master to poll".into());
            return;
        };
        self.stats.polls += 1;
        self.request(master, Method::GET, 0, Purpose::Poll { master });
        self.next_at = now + self.cfg.timers.poll_ms;
    }

    /// An SMInfo Get or Set carrying this manager's SMInfo (with the SM
    /// key it knows).
    fn request(&mut self, to: Address, method: Method, modifier: u32, purpose: Purpose) {
        let mut data = vec![0u8; MgmtClass::SUBN.attribute_len()];
        let mine = SmInfo {
            sm_key: self.cfg.sm_key,
            ..self.sm_info(self.cfg.sm_key)
        };
        let _ = mine.emit(&mut data);
        self.send(to, method, SmInfo::ID, modifier, data, purpose);
    }

    /// A Get of another attribute.
    fn get(&mut self, to: Address, attribute: u16, purpose: Purpose) {
        self.send(to, Method::GET, attribute, 0, Vec::new(), purpose);
    }

    fn send(
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
    fn send_keyed(
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
    fn start(&mut self, request: Request, purpose: Purpose) {
        let id = self.next_id;
        self.next_id += 1;
        self.stats.requests += 1;
        self.pending.insert(id, purpose);
        self.outputs
            .push_back(ManagerOutput::Request { id, request });
    }

    fn set_state(&mut self, _now: Time, to: SmState, why: String) {
        if self.state == to {
            return;
        }
        let from = self.state;
        self.state = to;
        self.stats.transitions += 1;
        if to != SmState::Master {
            self.database.clear();
            self.heavy = true;
        }
        if to != SmState::Discovering {
            self.clean_rounds = 0;
        }
        self.event(ManagerEvent::State { from, to, why });
    }

    fn event(&mut self, e: ManagerEvent) {
        self.outputs.push_back(ManagerOutput::Event(e));
    }
}

/// Orders peers by rank: the one that outranks is greater.
fn rank_order(a: &Peer, b: &Peer) -> std::cmp::Ordering {
    if outranks(a.rank(), b.rank()) {
        std::cmp::Ordering::Greater
    } else if outranks(b.rank(), a.rank()) {
        std::cmp::Ordering::Less
    } else {
        std::cmp::Ordering::Equal
    }
}
