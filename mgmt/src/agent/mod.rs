//! The management agent of a router or host (docs/management.md "The agent"),
//! sans-IO like the RRP engine: its host hands it every management packet
//! for this node (and every directed-route MAD passing through) with the
//! port and native address it came from, calls its timers, and sends what
//! it outputs.
//!
//! - [`mkey`]: the management key, its protect bits and lease;
//! - [`cache`]: responses kept to answer a retransmitted request again;
//! - [`traps`]: traps to the manager: the senders, and the queue that
//!   repeats each until it is repressed;
//! - [`subscribers`]: subscriptions to this node's own traps at its agent
//!   (InformInfo), and the Reports of them;
//! - [`managed`]: what the agent manages, provided by its host;
//! - [`router`]: a router's RRP engine as a managed node;
//! - `attrs`: the attributes: Get and Set.

mod attrs;
pub mod cache;
pub mod managed;
pub mod member_tables;
pub mod mkey;
pub mod router;
mod stats;
pub mod subscribers;
pub mod traps;

use std::collections::VecDeque;

use rrp::rate::RateLimiter;
use rrp::{Address, NativeAddr, PortId};

use crate::attr::{
    AddressRecord, AddressTable, Attribute, InformInfo, McGroupRecord, McMemberRecord, NodeRecord,
    Notice, PartitionTable, PartitionsText, PathRecord, SmInfo, SourceRoute,
};
use crate::partition::{Membership, PartitionKey};
use crate::subscriptions::{Keeper, SubscriptionEvent};
use crate::wire::{MAD_LEN, Mad, MadRepr, Method, MgmtClass, PathHop, Status};

pub use managed::{LrtItem, Managed, NodeType, PortFacts};
pub use mkey::{Check, MKey};
pub use stats::AgentStats;

/// Time in milliseconds since an arbitrary epoch (the host's clock).
pub type Time = u64;

/// A node's table of partitions until its SAN's master sets one: a full
/// member of the default partition (docs/partitions.md).
pub const DEFAULT_PARTITION_TABLE: [(PartitionKey, Membership); 1] =
    [(PartitionKey::DEFAULT, Membership::Full)];

/// Status of a Set refused for a missing or wrong M_Key at protect 0 or 1
/// (class-specific upper byte of the Subn classes; docs/management.md).
pub const STATUS_MKEY: Status = Status(0x0100);

/// Answers per second to one requester at most, by default
/// ([`AgentConfig::answers_per_source`]; docs/management.md "Answers at a
/// bounded rate"): a SAN manager's heavy sweep of a 16-port router asks each
/// HR a handful of attributes, and a discovery tool reads a node one Get at
/// a time; both stay far below it.
pub const ANSWERS_PER_SOURCE: u32 = 1_000;

/// Answers per second in all at most, by default
/// ([`AgentConfig::answers_global`]): four requesters at their bound.
pub const ANSWERS_GLOBAL: u32 = 4_000;

/// An agent's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// Router or host.
    pub node_type: NodeType,
    /// Implementation level 1-4 (A-D).
    pub level: u8,
    /// The node identity (64 bits that survive restarts).
    pub identity: u64,
    /// Software version: major << 16 | minor << 8 | patch.
    pub version: u32,
    /// The node's name (NodeDescription).
    pub description: String,
    /// The management key, its protect bits, its lease in seconds.
    pub mkey: u64,
    /// Protect bits 0-3.
    pub protect: u8,
    /// Lease period in seconds (0: never runs out).
    pub lease_s: u16,
    /// Where traps go (0: nowhere).
    pub manager: Address,
    /// Traps per second at most.
    pub traps_per_s: u32,
    /// Interval between repeats of an unrepressed trap.
    pub trap_resend_ms: Time,
    /// Sends of one trap at most.
    pub trap_max_sends: u32,
    /// How long responses are kept for duplicates.
    pub cache_ms: Time,
    /// How many responses are kept.
    pub cache_entries: usize,
    /// Drops per port within `threshold_ms` that raise trap 129 (0: never).
    pub drop_threshold: u64,
    /// Whether the path tracer's class (0x30) is served.
    pub tracer: bool,
    /// The interval of that check.
    pub threshold_ms: Time,
    /// Between two announcements (trap 1025) of a port without an
    /// address, until a SAN manager gives it one.
    pub announce_ms: Time,
    /// Trap 1027 (a packet refused by the SAN's authentication) is sent
    /// once per source (SA and native address) within this time.
    pub auth_trap_ms: Time,
    /// Packets sent per second at most because of one requester's (its
    /// SA's) packets: answers, and directed-route MADs relayed (>= 1;
    /// default [`ANSWERS_PER_SOURCE`]).
    pub answers_per_source: u32,
    /// The same in all requesters (>= 1; default [`ANSWERS_GLOBAL`]).
    pub answers_global: u32,
    /// The SAN manager's timers and counts (mwrouterd's
    /// `management.manager_timers`): the agent's own table of subscribers
    /// takes its bounds from them, as a master's does (`max_subscriptions`,
    /// `lease_default_s`, `lease_max_s`, `report_retry_ms`,
    /// `report_retries`; [`subscribers`]).
    pub manager_timers: crate::manager::ManagerTimers,
}

impl AgentConfig {
    /// A configuration with the defaults of docs/management.md.
    pub fn new(node_type: NodeType, identity: u64, description: &str) -> AgentConfig {
        AgentConfig {
            node_type,
            level: 4,
            identity,
            version: 0,
            description: description.to_string(),
            mkey: 0,
            protect: 0,
            lease_s: 0,
            manager: Address::UNSPECIFIED,
            traps_per_s: 10,
            trap_resend_ms: 1_000,
            trap_max_sends: 8,
            cache_ms: 10_000,
            cache_entries: 256,
            drop_threshold: 0,
            tracer: true,
            threshold_ms: 10_000,
            announce_ms: 1_000,
            auth_trap_ms: 60_000,
            answers_per_source: ANSWERS_PER_SOURCE,
            answers_global: ANSWERS_GLOBAL,
            manager_timers: crate::manager::ManagerTimers::default(),
        }
    }
}

/// A management packet for the agent.
#[derive(Debug, Clone, Copy)]
pub struct Incoming<'a> {
    /// The port it arrived on.
    pub port: PortId,
    /// The native address it came from.
    pub native: NativeAddr,
    /// Its EEP source address.
    pub src: Address,
    /// Its EEP destination address.
    pub dst: Address,
    /// The MAD (the packet's data block).
    pub mad: &'a [u8],
}

/// What the agent asks its host to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Send `mad` in an EEP packet with destination `dst` (source: the
    /// port's own address) out of `port` to `native`.
    Send {
        /// Egress port.
        port: PortId,
        /// Native destination.
        native: NativeAddr,
        /// EEP destination address.
        dst: Address,
        /// The MAD.
        mad: Box<[u8; MAD_LEN]>,
    },
    /// Send `mad` to `dst` by the host's routes (traps to the manager).
    Route {
        /// EEP destination address.
        dst: Address,
        /// The MAD.
        mad: Box<[u8; MAD_LEN]>,
    },
    /// A response for this node's client.
    ToClient {
        /// The EEP source of the packet that brought it.
        from: Address,
        /// The MAD.
        mad: Box<[u8; MAD_LEN]>,
    },
    /// Something worth a log line.
    Event(AgentEvent),
}

/// Events of an agent, for its host's log (the key itself never appears).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentEvent {
    /// A request failed the M_Key check.
    MKeyViolation {
        /// The requester's address.
        from: Address,
        /// Its class.
        class: MgmtClass,
        /// Its method.
        method: Method,
        /// Its attribute.
        attribute: u16,
    },
    /// The lease ran out: protect bits dropped to 0.
    LeaseExpired,
    /// A Set was applied.
    Set {
        /// The attribute.
        attribute: u16,
        /// Its modifier.
        modifier: u32,
        /// The requester.
        from: Address,
    },
    /// A trap went to the manager.
    TrapSent {
        /// Its number.
        number: u16,
        /// The manager.
        to: Address,
    },
    /// A trap was given up without TrapRepress.
    TrapUnanswered {
        /// Its number.
        number: u16,
    },
    /// A Trap or Report arrived (this node plays the manager).
    NoticeReceived {
        /// The issuer.
        from: Address,
        /// The notice.
        notice: Notice,
    },
    /// A change to the subscriptions to this node's traps here
    /// (InformInfo).
    Subscription(SubscriptionEvent),
    /// A Report to a subscriber was given up without ReportResp.
    ReportGivenUp {
        /// The subscriber.
        subscriber: Address,
        /// The trap reported.
        trap: u16,
    },
    /// A MAD that does not parse.
    Malformed {
        /// The port.
        port: PortId,
        /// Why.
        error: crate::Error,
    },
}

impl AgentEvent {
    /// Its kind's name (the key of the daemon's log rate limit).
    pub const fn kind(&self) -> &'static str {
        match self {
            AgentEvent::MKeyViolation { .. } => "M_Key violation",
            AgentEvent::LeaseExpired => "M_Key lease expired",
            AgentEvent::Set { .. } => "management Set",
            AgentEvent::TrapSent { .. } => "trap sent",
            AgentEvent::TrapUnanswered { .. } => "trap unanswered",
            AgentEvent::NoticeReceived { .. } => "notice received",
            AgentEvent::Subscription(e) => e.kind(),
            AgentEvent::ReportGivenUp { .. } => "report given up",
            AgentEvent::Malformed { .. } => "malformed MAD",
        }
    }

    /// The node whose packet caused it, if a received packet did.
    pub const fn source(&self) -> Option<Address> {
        match self {
            AgentEvent::MKeyViolation { from, .. }
            | AgentEvent::Set { from, .. }
            | AgentEvent::NoticeReceived { from, .. } => Some(*from),
            AgentEvent::Subscription(e) => e.source(),
            AgentEvent::ReportGivenUp { .. } => None,
            AgentEvent::LeaseExpired
            | AgentEvent::TrapSent { .. }
            | AgentEvent::TrapUnanswered { .. }
            | AgentEvent::Malformed { .. } => None,
        }
    }
}

impl std::fmt::Display for AgentEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentEvent::MKeyViolation {
                from,
                class,
                method,
                attribute,
            } => write!(
                f,
                "M_Key violation: {} {} attribute {attribute:#06x} from {from}",
                class.name().unwrap_or("class"),
                method.name().unwrap_or("method")
            ),
            AgentEvent::LeaseExpired => write!(f, "M_Key lease ran out: protect bits now 0"),
            AgentEvent::Set {
                attribute,
                modifier,
                from,
            } => write!(
                f,
                "Set of attribute {attribute:#06x} modifier {modifier:#x} by {from} applied"
            ),
            AgentEvent::TrapSent { number, to } => write!(f, "trap {number} sent to {to}"),
            AgentEvent::TrapUnanswered { number } => {
                write!(f, "trap {number} given up: no TrapRepress")
            }
            AgentEvent::NoticeReceived { from, notice } => {
                write!(f, "notice from {from}: trap {}", notice.trap_number)
            }
            AgentEvent::Subscription(e) => write!(f, "{}", e.text(Keeper::Agent)),
            AgentEvent::ReportGivenUp { subscriber, trap } => write!(
                f,
                "report of trap {trap} to {subscriber} given up: no ReportResp"
            ),
            AgentEvent::Malformed { port, error } => {
                write!(f, "malformed management packet on port {port}: {error}")
            }
        }
    }
}

/// The agent.
#[derive(Debug, Clone)]
pub struct Agent {
    cfg: AgentConfig,
    mkey: MKey,
    cache: cache::Cache,
    traps: traps::Traps,
    /// Subscriptions to this node's traps here ([`subscribers`]).
    subscriptions: crate::subscriptions::Subscriptions,
    /// Reports to them waiting for ReportResp.
    reports: traps::Traps,
    /// The answers' bounds (`answers_per_source`, `answers_global`).
    answers: RateLimiter,
    stats: AgentStats,
    outputs: VecDeque<Output>,
    /// Notices received (this node plays the manager, or subscribed),
    /// newest last.
    notices: VecDeque<Received>,
    /// Notices kept since the start: the next one's sequence number.
    notices_kept: u64,
    next_tid: u64,
    /// Drops per port at the last threshold check.
    drops_seen: Vec<u64>,
    next_threshold: Time,
    /// The node's port addresses, refreshed from [`Managed`] at each packet.
    ports: Vec<Address>,
    /// When a port without an address next announces itself.
    next_announce: Time,
    /// Sources of packets refused by the SAN's authentication, and when
    /// trap 1027 last went out for each (at most [`traps::AUTH_SOURCES_KEPT`]).
    auth_trapped: std::collections::HashMap<(Address, NativeAddr), Time>,
    /// The node's table of partitions as its SAN's master set it, by
    /// PartitionTable block (docs/partitions.md): block 0, then block 1.
    partition_blocks: [Vec<(PartitionKey, Membership)>; 2],
    /// The same, the blocks one after the other.
    partition_table: Vec<(PartitionKey, Membership)>,
    /// A router's: per HR, the tables of its SAN's members, for its checks
    /// ([`member_tables`]).
    member_tables: member_tables::MemberTables,
}

/// Notices kept.
pub const NOTICES_KEPT: usize = 64;

/// A notice the agent received and keeps: a Trap (this node plays the
/// manager) or a Report (a master forwarding a trap to this node, a
/// subscriber; docs/management.md "Events").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// Its number among the notices kept since the start, from 0: a reader
    /// that polls asks for those after the last it saw.
    pub seq: u64,
    /// When it arrived.
    pub at: Time,
    /// The packet's EEP source (the issuer of a Trap, the master of a
    /// Report).
    pub from: Address,
    /// It came in a Report.
    pub report: bool,
    /// The Trap's or Report's transaction ID: a repeat of it (the answer
    /// was lost) carries the same one and is not kept again.
    pub tid: u64,
    /// The notice.
    pub notice: Notice,
}

impl Agent {
    /// An agent for `cfg`, starting at `now`.
    pub fn new(cfg: AgentConfig, now: Time) -> Agent {
        Agent {
            mkey: MKey::new(cfg.mkey, cfg.protect, cfg.lease_s),
            cache: cache::Cache::new(cfg.cache_entries, cfg.cache_ms),
            traps: traps::Traps::new(cfg.traps_per_s, cfg.trap_resend_ms, cfg.trap_max_sends),
            answers: RateLimiter::new(cfg.answers_per_source, cfg.answers_global),
            subscriptions: Default::default(),
            reports: subscribers::queue(&cfg.manager_timers),
            stats: AgentStats::default(),
            outputs: VecDeque::new(),
            notices: VecDeque::new(),
            notices_kept: 0,
            // Traps' TIDs: the identity in the high half keeps them apart
            // from other issuers'; the low half counts.
            next_tid: (cfg.identity << 32) | 1,
            drops_seen: Vec::new(),
            next_threshold: now + cfg.threshold_ms,
            ports: Vec::new(),
            next_announce: now,
            auth_trapped: Default::default(),
            partition_blocks: [DEFAULT_PARTITION_TABLE.to_vec(), Vec::new()],
            partition_table: DEFAULT_PARTITION_TABLE.to_vec(),
            member_tables: Default::default(),
            cfg,
        }
    }

    /// The node's table of partitions (at most
    /// [`crate::partition::MAX_PARTITIONS`] entries, no key twice): what
    /// its SAN's master last set by PartitionTable, or
    /// [`DEFAULT_PARTITION_TABLE`] until it does.
    pub fn partition_table(&self) -> &[(PartitionKey, Membership)] {
        &self.partition_table
    }

    /// A router's tables of its SANs' members, per HR, as each SAN's
    /// master set them (docs/partitions.md "At the routers").
    pub fn member_tables(&self) -> &member_tables::MemberTables {
        &self.member_tables
    }

    /// The configuration (as changed by Sets).
    pub fn config(&self) -> &AgentConfig {
        &self.cfg
    }

    /// The management key's state.
    pub fn mkey(&self) -> &MKey {
        &self.mkey
    }

    /// Counters.
    pub fn stats(&self) -> &AgentStats {
        &self.stats
    }

    /// The notices received, oldest first (at most [`NOTICES_KEPT`]).
    pub fn notices(&self) -> impl Iterator<Item = &Received> {
        self.notices.iter()
    }

    /// The next output, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// Sets the key, protect bits and lease (configuration reload).
    pub fn set_mkey(&mut self, key: u64, protect: u8, lease_s: u16) {
        self.cfg.mkey = key;
        self.cfg.protect = protect.min(3);
        self.cfg.lease_s = lease_s;
        self.mkey.key = key;
        self.mkey.protect = protect.min(3);
        self.mkey.lease_s = lease_s;
    }

    /// Sets where traps go.
    pub fn set_manager(&mut self, manager: Address) {
        self.cfg.manager = manager;
    }

    /// Applies a new configuration (a reload): identity, description,
    /// manager, trap, threshold, answer and subscription settings; the key, protect bits and lease
    /// when they changed (a running lease stops then). Counters, the
    /// response cache and traps in flight are kept.
    pub fn reconfigure(&mut self, new: AgentConfig) {
        if (new.mkey, new.protect, new.lease_s)
            != (self.cfg.mkey, self.cfg.protect, self.cfg.lease_s)
        {
            self.mkey.lease_until = None;
            self.set_mkey(new.mkey, new.protect, new.lease_s);
        }
        self.traps.per_s = new.traps_per_s;
        self.traps.resend_ms = new.trap_resend_ms;
        self.traps.max_sends = new.trap_max_sends.max(1);
        self.answers.set(new.answers_per_source, new.answers_global);
        let q = subscribers::queue(&new.manager_timers);
        self.reports.resend_ms = q.resend_ms;
        self.reports.max_sends = q.max_sends;
        self.cfg = AgentConfig {
            protect: self.cfg.protect,
            ..new
        };
    }

    fn event(&mut self, e: AgentEvent) {
        self.outputs.push_back(Output::Event(e));
    }

    /// A management packet for this node (or a directed-route MAD passing
    /// through it).
    pub fn handle<M: Managed + ?Sized>(&mut self, now: Time, managed: &mut M, input: Incoming<'_>) {
        self.stats.received += 1;
        self.refresh_ports(managed);
        let parsed = Mad::new_checked(input.mad).and_then(|m| MadRepr::parse(&m));
        let req = match parsed {
            Ok(r) => r,
            Err(error) => {
                self.stats.malformed += 1;
                self.event(AgentEvent::Malformed {
                    port: input.port,
                    error,
                });
                return;
            }
        };
        if req.response {
            return self.response(now, input, req);
        }
        if let Some(dr) = &req.dr {
            if dr.returning {
                // A request method with D set: not a valid directed route.
                self.stats.bad_path += 1;
                return;
            }
            if let Some(r) = self.dr_arrived(now, &input, req) {
                self.request(now, managed, &input, r);
            }
            return;
        }
        self.request(now, managed, &input, req);
    }

    /// A response: for the client here, or passing back along a directed route.
    fn response(&mut self, now: Time, input: Incoming<'_>, mut r: MadRepr) {
        if r.method == Method::REPORT_RESP && r.dr.is_none() && self.report_answered(r.tid) {
            // The answer to a Report of this agent's: it stops repeating.
            return;
        }
        if let Some(dr) = &mut r.dr
            && dr.hop_pointer > 0
            && dr.returning
        {
            let q = dr.hop_pointer as usize;
            let Some(back) = dr.ret.get(q - 1).cloned() else {
                self.stats.bad_path += 1;
                return;
            };
            dr.hop_pointer -= 1;
            return self.relay(now, &input, back, &r);
        }
        self.stats.to_client += 1;
        if let Ok(mad) = r.to_bytes() {
            self.outputs.push_back(Output::ToClient {
                from: input.src,
                mad: Box::new(mad),
            });
        }
    }

    /// Sends a directed-route MAD one hop on, by `hop` (an HR of this
    /// node), within the answer bounds: a relay is a packet the node sends
    /// because of one it received.
    fn relay(&mut self, now: Time, input: &Incoming<'_>, hop: PathHop, r: &MadRepr) {
        // The hop names this node's HR by address; 0 means its only port.
        let port = match self.port_of(hop.hr) {
            Some(p) => p,
            None => {
                self.stats.bad_path += 1;
                return;
            }
        };
        let Ok(mad) = r.to_bytes() else {
            self.stats.bad_path += 1;
            return;
        };
        if !self.answer_allowed(now, input) {
            return;
        }
        self.stats.relayed += 1;
        self.outputs.push_back(Output::Send {
            port,
            native: hop.native,
            dst: Address::HEY_YOU,
            mad: Box::new(mad),
        });
    }

    /// Whether the node may send a packet because of `input` (an answer, a
    /// relay): always for a request of the node itself (delivered by its
    /// station, from no native address), else within `answers_per_source`
    /// for its SA and `answers_global` in all (docs/management.md "Answers
    /// at a bounded rate"). What is past a bound is counted.
    fn answer_allowed(&mut self, now: Time, input: &Incoming<'_>) -> bool {
        if input.native.is_empty() || self.answers.allow(now, input.src) {
            return true;
        }
        self.stats.answers_limited += 1;
        false
    }

    fn refresh_ports<M: Managed + ?Sized>(&mut self, managed: &M) {
        self.ports.clear();
        for p in (0..managed.ports()).map(PortId::new) {
            let a = managed.port(p).map_or(Address::UNSPECIFIED, |f| f.address);
            self.ports.push(a);
        }
    }

    /// The port of this node's HR `hr` (0: its only port).
    fn port_of(&self, hr: Address) -> Option<PortId> {
        self.ports
            .iter()
            .position(|a| *a == hr || (hr == Address::UNSPECIFIED && self.ports.len() == 1))
            .map(PortId::new)
    }
}

impl Agent {
    /// A directed-route request arrived at position HopPointer: notes where
    /// it came from, then relays it on (`None`) or, at the target, hands it
    /// back to be answered.
    fn dr_arrived(&mut self, now: Time, input: &Incoming<'_>, mut r: MadRepr) -> Option<MadRepr> {
        let me = self
            .ports
            .get(input.port.index())
            .copied()
            .unwrap_or(Address::UNSPECIFIED);
        let dr = r.dr.as_mut().expect("a directed route");
        let p = dr.hop_pointer as usize;
        if p == 0 || p > dr.hop_count as usize || dr.ret.len() < p - 1 {
            self.stats.bad_path += 1;
            return None;
        }
        dr.ret.truncate(p - 1);
        dr.ret.push(PathHop {
            hr: me,
            native: input.native,
        });
        if p < dr.hop_count as usize {
            let Some(next) = dr.initial.get(p).cloned() else {
                self.stats.bad_path += 1;
                return None;
            };
            dr.hop_pointer += 1;
            self.relay(now, input, next, &r);
            return None;
        }
        Some(r)
    }

    /// A request or message for this node.
    fn request<M: Managed + ?Sized>(
        &mut self,
        now: Time,
        managed: &mut M,
        input: &Incoming<'_>,
        req: MadRepr,
    ) {
        match req.method {
            Method::TRAP_REPRESS => {
                if let Some(n) = self.traps.repress(req.tid) {
                    self.stats.traps_repressed += 1;
                    let _ = n;
                }
                return;
            }
            Method::TRAP | Method::REPORT => {
                if let Ok(notice) = Notice::parse(&req.data)
                    && let Some(d) = notice.no_address_details()
                    && input.src == Address::UNSPECIFIED
                {
                    // A node without an address: for the SAN manager here.
                    // No TrapRepress (it has no address to send one to): it
                    // repeats until a manager gives it one.
                    self.stats.announcements_heard += 1;
                    managed.unaddressed(input.port, input.native, d.identity);
                    return;
                }
                // Past the answer bounds a notice is neither kept nor
                // repressed: its issuer repeats it.
                if !self.answer_allowed(now, input) {
                    return;
                }
                self.stats.notices_received += 1;
                let report = req.method == Method::REPORT;
                // A repeat: its sender did not get the TrapRepress or
                // ReportResp and sent the same notice again, with the same
                // TID. It is answered again, but neither kept nor handed on
                // (to a manager, and so to its subscribers) a second time.
                let repeat = self
                    .notices
                    .iter()
                    .any(|r| r.from == input.src && r.tid == req.tid && r.report == report);
                if repeat {
                    self.stats.notices_repeated += 1;
                } else if let Ok(notice) = Notice::parse(&req.data) {
                    if self.notices.len() >= NOTICES_KEPT {
                        self.notices.pop_front();
                    }
                    self.notices.push_back(Received {
                        seq: self.notices_kept,
                        at: now,
                        from: input.src,
                        report,
                        tid: req.tid,
                        notice: notice.clone(),
                    });
                    self.notices_kept += 1;
                    if req.method == Method::TRAP {
                        managed.notice(input.port, &notice);
                    }
                    self.event(AgentEvent::NoticeReceived {
                        from: input.src,
                        notice,
                    });
                }
                // TrapRepress (a message, same TID) for a Trap; ReportResp
                // for a Report.
                let mut ans = req.response(Status::OK);
                if req.method == Method::TRAP {
                    ans.response = false;
                    ans.method = Method::TRAP_REPRESS;
                }
                return self.reply(input, &req, ans);
            }
            Method::SEND => return,
            _ => {}
        }
        // Every other request draws an answer (or a refusal): past the
        // bounds it is dropped before anything is read or changed, so a Set
        // is applied only when it is answered.
        if !self.answer_allowed(now, input) {
            return;
        }
        if req.class == MgmtClass::SUBN_ADM {
            // Answered by the master manager of the SAN it arrived on, from
            // its database (docs/manager.md "SubnAdm"); elsewhere dropped.
            let answer = match (req.method, req.attribute) {
                (Method::GET, NodeRecord::ID) => match NodeRecord::parse(&req.data) {
                    Ok(t) => managed
                        .sa_record(input.port, req.modifier, &t)
                        .map(|r| r.map(Attribute::NodeRecord)),
                    Err(_) => Some(Err(Status::INVALID_VALUE)),
                },
                (Method::GET_TABLE, AddressRecord::ID) => match AddressTable::parse(&req.data) {
                    Ok(t) => managed
                        .sa_addresses(input.port, t.start())
                        .map(|r| Ok(Attribute::AddressTable(r))),
                    Err(_) => Some(Err(Status::INVALID_VALUE)),
                },
                (Method::GET_TABLE, PartitionsText::ID) => match PartitionsText::parse(&req.data) {
                    Ok(t) => managed
                        .sa_partitions_text(input.port, t.offset)
                        .map(|r| Ok(Attribute::PartitionsText(r))),
                    Err(_) => Some(Err(Status::INVALID_VALUE)),
                },
                (Method::GET, PathRecord::ID) => match PathRecord::parse(&req.data) {
                    Ok(q) => managed
                        .sa_path(input.port, input.src, &q)
                        .map(|r| r.map(Attribute::PathRecord)),
                    Err(_) => Some(Err(Status::INVALID_VALUE)),
                },
                (
                    Method::GET | Method::SET | Method::DELETE,
                    McGroupRecord::ID | McMemberRecord::ID,
                ) => managed.sa_mcast(
                    input.port,
                    input.src,
                    req.method,
                    req.attribute,
                    req.modifier,
                    &req.data,
                ),
                (Method::GET | Method::SET | Method::DELETE, InformInfo::ID) => {
                    // The master's table where this node runs the SAN's
                    // master on that HR; else this agent's own, for its
                    // own traps ("Events").
                    match InformInfo::parse(&req.data) {
                        Ok(i) => managed
                            .sa_inform(input.port, input.src, req.method, req.modifier, &i)
                            .or_else(|| self.inform(now, input.src, req.method, &i))
                            .map(|r| r.map(Attribute::InformInfo)),
                        Err(_) => Some(Err(Status::INVALID_VALUE)),
                    }
                }
                _ => None,
            };
            let Some(result) = answer else {
                self.stats.not_manager += 1;
                return;
            };
            let ans = match result {
                Ok(r) => {
                    let mut data = vec![0u8; req.class.attribute_len()];
                    match r.emit(&mut data) {
                        Ok(()) => MadRepr {
                            data,
                            ..req.response(Status::OK)
                        },
                        Err(_) => req.response(Status::INVALID_VALUE),
                    }
                }
                Err(st) => req.response(st),
            };
            self.stats.answered += 1;
            return self.reply(input, &req, ans);
        }
        // The path tracer's class only where it is enabled: elsewhere the
        // tracer sees a node without it and skips the hop.
        let served = match req.class {
            MgmtClass::SUBN | MgmtClass::SUBN_DR | MgmtClass::PERF => true,
            MgmtClass::VENDOR_TRACE => self.cfg.tracer,
            _ => false,
        };
        if !served || req.class_version != 1 {
            self.stats.bad_class += 1;
            return self.reply(input, &req, req.response(Status::BAD_VERSION));
        }
        if !matches!(req.method, Method::GET | Method::SET) {
            return self.reply(input, &req, req.response(Status::METHOD_UNSUPPORTED));
        }
        let key = cache::Key {
            port: input.port,
            native: input.native,
            src: input.src,
            class: req.class,
            tid: req.tid,
        };
        if let Some(cached) = self.cache.get(now, &key).copied() {
            self.stats.cache_hits += 1;
            self.stats.answered += 1;
            if let Ok(ans) = Mad::new_checked(&cached[..]).and_then(|m| MadRepr::parse(&m)) {
                self.send_reply(input, &ans);
            }
            return;
        }
        let set = req.method == Method::SET;
        // The M_Key guards every Subn request, and Sets of the other
        // classes (a Perf Set clears counters); a Perf or vendor Get is
        // answered to anyone, as InfiniBand's PMA does.
        // SMInfo is the managers' own: the SM key guards its controls
        // (docs/manager.md), as InfiniBand's SM_Key does, not the M_Key.
        let guarded = (set || req.class.is_smp()) && req.attribute != SmInfo::ID;
        let check = if guarded {
            self.mkey.check(now, req.mkey, set)
        } else {
            Check::Allow { show_key: false }
        };
        let show_key = match check {
            Check::Allow { show_key } => show_key,
            verdict => {
                self.stats.mkey_refused += 1;
                self.violation(now, input, &req);
                if verdict == Check::Silent {
                    return;
                }
                // A Set without the key at protect 0 or 1: the attribute
                // as it stands, and the M_Key status.
                let ans = match self.get(managed, &req, input.port, false) {
                    Ok(data) => MadRepr {
                        data,
                        ..req.response(STATUS_MKEY)
                    },
                    Err(st) => req.response(st),
                };
                return self.answer(now, input, key, &req, ans);
            }
        };
        if req.class == MgmtClass::VENDOR_TRACE && req.attribute == SourceRoute::ID {
            let ans = self.source_route(managed, &req, input.port);
            return self.answer(now, input, key, &req, ans);
        }
        let result = if set {
            self.set(now, managed, &req, input)
                .and_then(|()| self.get(managed, &req, input.port, show_key))
        } else {
            let r = self.get(managed, &req, input.port, show_key);
            if r.is_err() && req.attribute == PartitionTable::ID && req.modifier >> 16 != 0 {
                self.stats.member_tables_refused += 1;
            }
            r
        };
        let ans = match result {
            Ok(data) => MadRepr {
                data,
                ..req.response(Status::OK)
            },
            Err(st) => req.response(st),
        };
        self.answer(now, input, key, &req, ans);
    }

    /// VendorGet(SourceRoute): whether the request arrived on the HR the
    /// tracer expects at its current hop (status 7 when not, or when the
    /// hop is not in the vector); either way the answer says the HR it
    /// arrived on (docs/management.md "SourceRoute").
    fn source_route<M: Managed + ?Sized>(
        &self,
        managed: &M,
        req: &MadRepr,
        in_port: PortId,
    ) -> MadRepr {
        if req.method != Method::GET {
            return req.response(Status::METHOD_ATTR_UNSUPPORTED);
        }
        let Ok(mut r) = SourceRoute::parse(&req.data) else {
            return req.response(Status::INVALID_VALUE);
        };
        let actual = managed
            .port(in_port)
            .map_or(Address::UNSPECIFIED, |p| p.address);
        r.actual_port = in_port.index().min(usize::from(u8::MAX)) as u8;
        r.actual_address = actual;
        let status = match r.expected_here() {
            Some(e) if e == actual => Status::OK,
            _ => Status::INVALID_VALUE,
        };
        let mut data = vec![0u8; req.class.attribute_len()];
        if r.emit(&mut data).is_err() {
            return req.response(Status::INVALID_VALUE);
        }
        MadRepr {
            data,
            ..req.response(status)
        }
    }

    /// Answers a Get or Set, and keeps the answer for duplicates.
    fn answer(
        &mut self,
        now: Time,
        input: &Incoming<'_>,
        key: cache::Key,
        req: &MadRepr,
        ans: MadRepr,
    ) {
        self.stats.answered += 1;
        let ans = Self::routed_back(req, ans);
        if let Ok(bytes) = ans.to_bytes() {
            self.cache.put(now, key, &bytes);
        }
        self.send_reply(input, &ans);
    }

    /// Sends an answer (not cached: Trap, Report).
    fn reply(&mut self, input: &Incoming<'_>, req: &MadRepr, ans: MadRepr) {
        let ans = Self::routed_back(req, ans);
        self.send_reply(input, &ans);
    }

    /// A directed-route answer turns back: D set, HopPointer one less.
    fn routed_back(req: &MadRepr, mut ans: MadRepr) -> MadRepr {
        if let (Some(dr), Some(rd)) = (&mut ans.dr, &req.dr) {
            dr.returning = true;
            dr.hop_pointer = rd.hop_pointer.saturating_sub(1);
            dr.ret = rd.ret.clone();
        }
        ans
    }

    /// Sends an answer back the way the request came: out of the port it
    /// arrived on to the native address it came from (a directed route's
    /// ReturnPath starts there too), to the requester's address (Hey-You on
    /// a directed route).
    fn send_reply(&mut self, input: &Incoming<'_>, ans: &MadRepr) {
        let Ok(mad) = ans.to_bytes() else { return };
        let dst = if ans.dr.is_some() {
            Address::HEY_YOU
        } else {
            input.src
        };
        self.outputs.push_back(Output::Send {
            port: input.port,
            native: input.native,
            dst,
            mad: Box::new(mad),
        });
    }

    /// When [`Agent::on_timer`] wants to run next.
    pub fn next_timer(&self) -> Time {
        let mut t = Time::MAX;
        if let Some(x) = self.traps.next_timer() {
            t = t.min(x);
        }
        if let Some(x) = self.mkey.lease_until {
            t = t.min(x);
        }
        if let Some(x) = self.subscribers_timer() {
            t = t.min(x);
        }
        if self.cfg.drop_threshold > 0 {
            t = t.min(self.next_threshold);
        }
        if self.unaddressed() {
            t = t.min(self.next_announce);
        }
        t
    }

    /// Whether a port has no address (or the ports are not known yet).
    fn unaddressed(&self) -> bool {
        self.ports.is_empty() || self.ports.contains(&Address::UNSPECIFIED)
    }

    /// Runs what is due: trap and Report repeats, the lease, the
    /// subscriptions' leases, the drop threshold.
    pub fn on_timer<M: Managed + ?Sized>(&mut self, now: Time, managed: &M) {
        self.refresh_ports(managed);
        for d in self.traps.due(now) {
            match d {
                traps::Due::Send(_, mad) => {
                    self.stats.traps_resent += 1;
                    self.outputs.push_back(Output::Route {
                        dst: self.cfg.manager,
                        mad,
                    });
                }
                traps::Due::GaveUp { number, .. } => {
                    self.stats.traps_unanswered += 1;
                    self.event(AgentEvent::TrapUnanswered { number });
                }
            }
        }
        self.reports_due(now);
        if self.mkey.on_timer(now) {
            self.cfg.protect = 0;
            self.event(AgentEvent::LeaseExpired);
        }
        if self.unaddressed() && now >= self.next_announce {
            self.next_announce = now + self.cfg.announce_ms.max(1);
            self.announce();
        }
        if self.cfg.drop_threshold > 0 && now >= self.next_threshold {
            self.next_threshold = now + self.cfg.threshold_ms;
            self.check_drops(now, managed);
        }
    }
}
