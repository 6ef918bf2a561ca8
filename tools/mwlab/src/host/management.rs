//! In-band management on a lab host (docs/mwlab.md "Management"): the
//! host's management station ([`mgmt::station`]: the agent every node runs,
//! and the client an operator uses) on a thread of its own, fed by a
//! channel with the management packets the receive loop gets, the requests
//! of the host's admin socket, and its timers. The admin socket speaks the
//! admin protocol of mwrouterd (docs/admin-protocol.md) for the commands a
//! host has: `mad` and `show management`; `mwlab mwctl HOST ...` runs mwctl
//! against it, so that a whole lab can be inspected and changed from one
//! host, as an operator does from a node of an InfiniBand fabric.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, sync_channel};
use std::time::{Duration, Instant};

use admin::mad::MadResult;
use admin::proto::{AdminError, Command, Privilege, Show};
use admin::server::Handler;
use admin::view::ManagementInfo;
use mgmt::agent::{AgentConfig, Incoming, LrtItem, Managed, NodeType, PortFacts};
use mgmt::client::Request;
use mgmt::manager::ManagerConfig;
use mgmt::partition::{Membership, PartitionKey};
use mgmt::station::{Carrier, Outcome, Station};
use mgmt::wire::Status;
use rrp::router::{FibEntry, Next};
use rrp::{Address, NativeAddr, PortId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest the management thread sleeps between looks at its stop
/// flag (it wakes earlier for its timers and for every input).
const IDLE: Duration = Duration::from_millis(100);

/// A host's management settings (in its spec).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostManagement {
    /// The admin socket (UNIX stream, the admin protocol).
    pub admin: PathBuf,
    /// The node identity (NodeInfo); none: derived from the name and
    /// address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<u64>,
    /// The M_Key (0: none).
    #[serde(default)]
    pub mkey: u64,
    /// The M_Key protect bits, 0-3.
    #[serde(default)]
    pub protect: u8,
    /// The M_Key lease in seconds (0: never runs out).
    #[serde(default)]
    pub lease_s: u16,
    /// Where traps go; none: nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<u16>,
    /// The SAN the host is on (PortInfo's SAN-ID).
    #[serde(default)]
    pub san_id: u16,
    /// The SAN's MTU (PortInfo's MTU; 0: unlimited).
    #[serde(default)]
    pub mtu: u32,
    /// Whether the path tracer's agent runs (docs/mwtrace.md).
    #[serde(default = "yes")]
    pub tracer: bool,
    /// The priority of the SAN manager the host runs (docs/manager.md);
    /// none: no manager.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager_priority: Option<u8>,
    /// The SAN's SM key (0: none).
    #[serde(default)]
    pub sm_key: u64,
    /// The addresses its manager gives nodes without one, first and last
    /// (docs/manager.md "Address assignment").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<[u16; 2]>,
}

fn yes() -> bool {
    true
}

impl HostManagement {
    /// The agent's settings for host `name` at `address`, of
    /// implementation `level` (1-3: A-C).
    pub fn agent_config(&self, name: &str, address: Address, level: u8) -> AgentConfig {
        let identity = self.identity.unwrap_or_else(|| identity_of(name, address));
        let mut a = AgentConfig::new(NodeType::Host, identity, name);
        a.level = level;
        a.version = control::management::version_code(env!("CARGO_PKG_VERSION"));
        a.mkey = self.mkey;
        a.protect = self.protect;
        a.lease_s = self.lease_s;
        a.manager = self.manager.map_or(Address::UNSPECIFIED, Address);
        a.tracer = self.tracer;
        a
    }
}

/// A node identity that survives restarts: FNV-1a of the name and address,
/// never 0.
pub fn identity_of(name: &str, address: Address) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain(address.0.to_be_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.max(1)
}

/// What the management thread is given.
pub enum Input {
    /// A management packet (PT 0x0006) the host received.
    Packet {
        /// The native address it came from.
        native: NativeAddr,
        /// EEP source.
        src: Address,
        /// EEP destination.
        dst: Address,
        /// The data block (the MAD).
        mad: Vec<u8>,
    },
    /// An operator's request: its result goes to `reply`.
    Mad {
        /// The request.
        request: Request,
        /// Where the result goes.
        reply: SyncSender<MadResult>,
    },
    /// `show management`.
    Info {
        /// Where the answer goes.
        reply: SyncSender<ManagementInfo>,
    },
}

/// What the station needs of the host it runs in.
pub trait HostSide {
    /// The host's address.
    fn address(&self) -> Address;
    /// Its one port as PortInfo reports it.
    fn port(&self) -> PortFacts;
    /// Its counters in PortCounters order.
    fn counters(&self) -> Vec<u64>;
    /// Clears them (PortCounters Set, as the control socket's `reset`).
    fn clear_counters(&self);
    /// The native address an L3 packet to `dst` goes to first.
    fn first_hop(&self, dst: Address) -> Option<NativeAddr>;
    /// The address of the neighbour at `native` (an HR of the SAN, or a
    /// node that said who it is).
    fn neighbour(&self, native: &NativeAddr) -> Option<Address>;
    /// The native address of neighbour `address`.
    fn native_of(&self, address: Address) -> Option<NativeAddr>;
    /// The neighbours' addresses (the SAN's HRs, and nodes that said who
    /// they are).
    fn neighbours(&self) -> Vec<Address>;
    /// Takes the address its SAN's manager gave.
    fn set_address(&self, address: Address);
    /// Sends one packet to `to` (empty: every member of the SAN); false
    /// when the link refused it.
    fn send(&self, packet: &[u8], to: &NativeAddr) -> bool;
    /// Takes the table of partitions its SAN's master set in its agent.
    fn set_partitions(&self, table: &[(PartitionKey, Membership)]);
}

/// A host as its agent sees it: one port, no FIB, no LRT; the port's
/// address, MTU and cost are the SAN's and not the host's to change.
struct HostNode<'a, H: HostSide + ?Sized>(&'a H);

impl<H: HostSide + ?Sized> Managed for HostNode<'_, H> {
    fn ports(&self) -> usize {
        1
    }

    fn port(&self, port: PortId) -> Option<PortFacts> {
        (port.index() == 0).then(|| self.0.port())
    }

    fn counters(&self, port: PortId) -> Option<Vec<u64>> {
        (port.index() == 0).then(|| self.0.counters())
    }

    /// A host's route is its first hop: the HR a redirect named, else its
    /// default HR (or the node itself, for its own address).
    fn route(&self, port: PortId, dst: Address) -> Option<FibEntry> {
        if port.index() != 0 {
            return None;
        }
        let next = if dst == self.0.address() {
            Next::Local
        } else {
            Next::Forward {
                port,
                native: self.0.first_hop(dst)?,
            }
        };
        Some(FibEntry {
            dst,
            next,
            q: 0,
            mtu: self.0.port().mtu,
            redirect: None,
        })
    }

    fn address_of(&self, port: PortId, native: &NativeAddr) -> Option<Address> {
        (port.index() == 0)
            .then(|| self.0.neighbour(native))
            .flatten()
    }

    fn lrt(&self, _port: PortId) -> Vec<LrtItem> {
        Vec::new()
    }

    fn set_port_up(&mut self, _port: PortId, _up: bool) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }

    fn set_mtu(&mut self, _port: PortId, _mtu: u32) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }

    fn set_cost(&mut self, _port: PortId, _cost: u16) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }

    fn clear_counters(&mut self, port: PortId) -> Result<(), Status> {
        if port.index() != 0 {
            return Err(Status::INVALID_VALUE);
        }
        self.0.clear_counters();
        Ok(())
    }

    fn set_name(&mut self, _name: &str) {
        // The agent keeps the description; the host's RRP name is its spec's.
    }

    /// A SAN manager's assignment (docs/manager.md "Address
    /// assignment"): the host's only port takes it.
    fn set_address(&mut self, port: PortId, address: Address) -> Result<(), Status> {
        if port.index() != 0 {
            return Err(Status::INVALID_VALUE);
        }
        self.0.set_address(address);
        Ok(())
    }
}

impl<H: HostSide + ?Sized> Carrier for HostNode<'_, H> {
    fn addresses(&self) -> Vec<Address> {
        vec![self.0.address()]
    }

    fn next_hop(&self, dst: Address) -> Option<(PortId, NativeAddr)> {
        self.0.first_hop(dst).map(|n| (PortId::new(0), n))
    }

    fn neighbour(&self, address: Address) -> Option<(PortId, NativeAddr)> {
        self.0.native_of(address).map(|n| (PortId::new(0), n))
    }

    fn members(&self, port: PortId) -> Vec<Address> {
        if port.index() == 0 {
            self.0.neighbours()
        } else {
            Vec::new()
        }
    }
}

/// Runs the station of `host` until `stopping` says so or every sender of
/// `inbox` is gone.
pub fn run<H: HostSide + ?Sized>(
    host: &H,
    cfg: AgentConfig,
    manager: Option<(u8, u64, Option<[u16; 2]>)>,
    inbox: &Receiver<Input>,
    stopping: &dyn Fn() -> bool,
) {
    let t0 = Instant::now();
    let now = || t0.elapsed().as_millis() as u64;
    let identity = cfg.identity;
    let mut station = Station::new(cfg, now(), mgmt::station::wall_clock_seed());
    let (mkey, protect, lease) = {
        let k = station.agent().mkey();
        (k.key, k.protect, k.lease_s)
    };
    if let Some(p) = manager {
        let mut c = ManagerConfig::new(p.0, identity);
        c.sm_key = p.1;
        c.pool = p.2.map(|[a, b]| (Address(a), Address(b)));
        // As master, it gives the host's own M_Key to the SAN's agents.
        c.mkey = mkey;
        c.mkey_protect = protect;
        c.mkey_lease_s = lease;
        station.add_manager(PortId::new(0), c, now());
    }
    let mut waiters: HashMap<u64, SyncSender<MadResult>> = HashMap::new();
    let mut table = station.agent().partition_table().to_vec();
    while !stopping() {
        let due = station.next_timer().saturating_sub(now());
        let wait = Duration::from_millis(due.max(1)).min(IDLE);
        let mut node = HostNode(host);
        let o = match inbox.recv_timeout(wait) {
            Ok(Input::Packet {
                native,
                src,
                dst,
                mad,
            }) => station.handle(
                now(),
                &mut node,
                Incoming {
                    port: PortId::new(0),
                    native,
                    src,
                    dst,
                    mad: &mad,
                },
            ),
            Ok(Input::Mad { request, reply }) => {
                let (id, o) = station.start(now(), &mut node, request);
                waiters.insert(id, reply);
                o
            }
            Ok(Input::Info { reply }) => {
                let _ = reply.try_send(ManagementInfo::of(&station, now(), vec![host.address()]));
                Outcome::default()
            }
            Err(RecvTimeoutError::Timeout) => Outcome::default(),
            Err(RecvTimeoutError::Disconnected) => break,
        };
        carry_out(host, o, &mut waiters);
        if station.next_timer() <= now() {
            let o = station.on_timer(now(), &mut node);
            carry_out(host, o, &mut waiters);
        }
        if station.agent().partition_table() != table.as_slice() {
            table = station.agent().partition_table().to_vec();
            host.set_partitions(&table);
        }
    }
}

/// Sends an outcome's packets, hands finished requests their results, and
/// logs the agent's events (the host's log is its standard error).
fn carry_out<H: HostSide + ?Sized>(
    host: &H,
    o: Outcome,
    waiters: &mut HashMap<u64, SyncSender<MadResult>>,
) {
    for e in &o.events {
        eprintln!("mgmt: {e}");
    }
    for (_, e) in &o.manager_events {
        eprintln!("{e}");
    }
    for (id, result) in o.done {
        if let Some(w) = waiters.remove(&id) {
            let _ = w.try_send(result);
        }
    }
    for p in o.packets {
        match p.bytes() {
            Ok(bytes) => {
                if !host.send(&bytes, &p.native) {
                    eprintln!("mgmt: the link refused a management packet to {}", p.dst);
                }
            }
            Err(e) => eprintln!("mgmt: management packet to {} not sent: {e}", p.dst),
        }
    }
}

/// The admin protocol on a host's admin socket: `mad` (and `mwctl query`,
/// which is made of them) and `show management`; everything else is
/// mwrouterd's and refused as unsupported.
pub struct AdminHandler {
    inbox: Mutex<Sender<Input>>,
    me: Address,
}

impl AdminHandler {
    /// A handler that hands requests to the management thread of the host
    /// at `me` through `inbox`.
    pub fn new(inbox: Sender<Input>, me: Address) -> AdminHandler {
        AdminHandler {
            inbox: Mutex::new(inbox),
            me,
        }
    }

    fn post(&self, input: Input) -> Result<(), AdminError> {
        self.inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(input)
            .map_err(|_| AdminError::failed("the host is stopping"))
    }
}

impl Handler for AdminHandler {
    /// The server checks the privilege (`mad` is an admin's).
    fn handle(&self, cmd: &Command, _privilege: Privilege) -> Result<Value, AdminError> {
        match cmd {
            Command::Mad(q) => {
                let answer = admin::mad::execute(q, &[self.me], |request, budget| {
                    let (reply, result) = sync_channel(1);
                    self.post(Input::Mad { request, reply })?;
                    result
                        .recv_timeout(budget)
                        .map_err(|_| AdminError::failed("the host's management did not answer"))
                })?;
                serde_json::to_value(answer).map_err(|e| AdminError::failed(e.to_string()))
            }
            Command::Show(Show::Management {}) => {
                let (reply, info) = sync_channel(1);
                self.post(Input::Info { reply })?;
                let info = info
                    .recv_timeout(Duration::from_secs(5))
                    .map_err(|_| AdminError::failed("the host's management did not answer"))?;
                serde_json::to_value(info).map_err(|e| AdminError::failed(e.to_string()))
            }
            other => Err(AdminError::unsupported(format!(
                "a lab host answers mad, query and show management; {} is mwrouterd's",
                other.name()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_stable_and_distinct() {
        let a = identity_of("H0", Address(0x0100));
        assert_eq!(a, identity_of("H0", Address(0x0100)));
        assert_ne!(a, identity_of("H1", Address(0x0100)));
        assert_ne!(a, identity_of("H0", Address(0x0101)));
        assert_ne!(a, 0);
    }
}
