//! The simulator: many router engines and hosts in one process on virtual
//! time, joined by a virtual network that carries only bytes.
//!
//! - SANs are broadcast domains; every member (a router HR or a host) has a
//!   6-byte native address derived from its MessageWay address.
//! - Routers run the real RRP engine ([`rrp::router::Router`]) for their
//!   control plane and the real forwarding decision
//!   ([`dataplane::Engine::decide`]) over FIBs built from that engine's
//!   route tables, so that L3 and L2 traffic crosses them as it would the
//!   appliance.
//! - Hosts run the node-side RRP ([`rrp::node::Node`]).
//! - The simulator plays each SAN's master for partitions (docs/partitions.md):
//!   from the topology's `[[partition]]`s it gives every router port the
//!   tables of its SAN's nodes, the guard the forwarding decision checks.
//! - Every message is emitted and parsed again at each hop; faults (loss,
//!   duplication, reordering, delay, link down/up, router crash/restart)
//!   come from one seeded generator, so a seed replays a run exactly.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use dataplane::{
    Buddies, ChannelConfig, Engine, EngineConfig, FibSet, PartitionGuard, SanPartitions, channels,
};
use mgmt::partition::{Membership, NodeFacts, Partitions};
use rrp::NativeAddr;
use rrp::counters::CounterSet;
use rrp::node::{Learned, Level, Node, NodeConfig};
use rrp::router::{
    Event, HrConfig, Interner, Next, Router, RouterConfig, RouterStats, Time, Timers,
};
use rrp::wire::Capability;
use rrp::{Address, DropCounts, DropReason, PerPort, PortId};

mod effect;
mod member;
mod payload;
mod step;

use effect::Effect;
use member::View;
use payload::Payload;

use crate::rng::seeded;
use crate::topology::{HostSpec, Topology};
use rrp::rng::Rng;

/// Simulation parameters.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Seed of every random choice.
    pub seed: u64,
    /// Router timers.
    pub timers: Timers,
    /// RTs kept per SAN.
    pub k: usize,
    /// Transit time of a message on a SAN (ms).
    pub delay_ms: u64,
    /// Extra random transit time, 0..=jitter (ms).
    pub jitter_ms: u64,
    /// Probability that a message is lost.
    pub loss: f64,
    /// Probability that a message is duplicated.
    pub dup: f64,
    /// Probability that a message is held back (reordered).
    pub reorder: f64,
    /// Measure transient loops (all pairs at every FIB change: small topologies).
    pub track_loops: bool,
    /// Keep a trace of every message carried.
    pub trace: bool,
    /// Threads that handle the events of one instant (1: one event at a
    /// time). Any number gives the same run (the sequential one, bit for
    /// bit); more than one is used only with a link delay of at least 1 ms
    /// and without `track_loops` (docs/rrp.md "The simulator").
    pub threads: usize,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            timers: Timers {
                sweep_ms: 5_000,
                keepalive_ms: 1_000,
                keepalive_misses: 3,
                refresh_ms: 30_000,
                hold_ms: 90_000,
                advertise_ms: 100,
                fib_ms: 50,
                tombstone_ms: 5_000,
                probe_ms: 50,
            },
            k: 4,
            delay_ms: 1,
            jitter_ms: 0,
            loss: 0.0,
            dup: 0.0,
            reorder: 0.0,
            track_loops: false,
            trace: false,
            threads: 1,
        }
    }
}

/// A member of a SAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Member {
    /// HR `port` of router `r`.
    Router {
        /// Router index.
        r: usize,
        /// Port.
        port: PortId,
    },
    /// Host index.
    Host(usize),
}

/// A message seen on a SAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceItem {
    /// When it was delivered.
    pub time: Time,
    /// The SAN (index).
    pub san: usize,
    /// The sender's address.
    pub from: Address,
    /// The receiver's address (None: broadcast).
    pub to: Option<Address>,
    /// The packet.
    pub bytes: Vec<u8>,
}

/// A router in the simulation.
pub struct SimRouter {
    /// Its name.
    pub name: String,
    /// Its RRP engine.
    pub engine: Router,
    /// Its forwarding engine.
    pub dp: Engine,
    /// Its FIBs as its dataplane holds them, built when the first packet
    /// passes through the router and patched as the engine's change
    /// (packets for the router itself need none, see `deliver_to_router`).
    pub fib: Option<FibSet>,
    /// Its HR addresses, in port order.
    pub hrs: PerPort<Address>,
    /// The SAN (index) of each port.
    pub sans: PerPort<usize>,
    /// Whether it runs.
    pub alive: bool,
    /// Whether each port's link is up.
    pub ports_up: PerPort<bool>,
    /// Packets its forwarding decision dropped, by reason (the per-port
    /// counters' `dropped`, summed over its ports).
    pub dropped: DropCounts,
    /// Each port's SAN's partitions, as that SAN's master gives them
    /// (none: the topology has no partitions, every port is open); set on
    /// every FIB set the router decides with.
    pub partitions: Option<Arc<PartitionGuard>>,
    /// The engine's LRT changes when the FIB set's buddies were last set.
    buddies_at: Option<u64>,
    /// Its member index on each port's SAN.
    member: PerPort<usize>,
    cfg: RouterConfig,
}

/// A host in the simulation.
pub struct SimHost {
    /// Its name.
    pub name: String,
    /// Its RRP state.
    pub node: Node,
    /// Its SAN (index).
    pub san: usize,
    /// Its native address.
    pub native: NativeAddr,
    /// The HR it asks first.
    pub hr: Address,
    /// What it learned or received, in order.
    pub inbox: Vec<(Time, Learned)>,
}

#[derive(Debug, Clone)]
struct San {
    members: Vec<(Member, NativeAddr)>,
    by_native: HashMap<NativeAddr, usize>,
    mtu: u32,
}

/// A message in flight: its bytes, shared by every recipient of an
/// [`Output::SendEach`](rrp::router::Output::SendEach), and the destination
/// address patched in when it is delivered.
#[derive(Debug, Clone)]
struct Wire {
    payload: Payload,
    dst: Option<Address>,
}

impl Wire {
    fn new(bytes: Vec<u8>) -> Wire {
        Wire {
            payload: Payload::whole(bytes),
            dst: None,
        }
    }

    /// The packet as its recipient gets it.
    fn to_vec(&self) -> Vec<u8> {
        self.payload.to_vec(self.dst)
    }
}

#[derive(Debug, Clone)]
enum Item {
    Deliver {
        san: usize,
        from: usize,
        to: Option<usize>,
        msg: Wire,
    },
    /// One message to several members of a SAN at the same time, in this
    /// order, each with its address patched in: an [`Output::SendEach`]'s
    /// recipients queued once with their shared bytes, not once each (the
    /// same deliveries, in the same order, as one [`Item::Deliver`] each).
    DeliverEach {
        san: usize,
        from: usize,
        payload: Payload,
        to: Vec<(u32, Address)>,
    },
    Crash(usize),
    Restart(usize),
    LinkDown(usize, PortId),
    LinkUp(usize, PortId),
    /// A packet from outside the SAN's members (an adversary).
    Forge {
        san: usize,
        native: NativeAddr,
        to: Address,
        bytes: Vec<u8>,
    },
}

impl Item {
    /// A delivery's SAN and sender (None: not a delivery).
    fn delivery(&self) -> Option<(usize, usize)> {
        match self {
            Item::Deliver { san, from, .. } | Item::DeliverEach { san, from, .. } => {
                Some((*san, *from))
            }
            _ => None,
        }
    }

    /// How many times the sequential run hands a delivery over: once for
    /// an [`Item::Deliver`] (to one member or to all), once per recipient
    /// for an [`Item::DeliverEach`]; each one is lost when its sender is
    /// not up.
    fn handovers(&self) -> u64 {
        match self {
            Item::DeliverEach { to, .. } => to.len() as u64,
            Item::Deliver { .. } => 1,
            _ => 0,
        }
    }

    /// A delivery's recipients on a SAN of `members` members, in order:
    /// into `out` (cleared first).
    fn recipients(&self, members: usize, out: &mut Vec<usize>) {
        out.clear();
        match self {
            Item::Deliver { to: Some(i), .. } => out.push(*i),
            Item::Deliver { from, to: None, .. } => out.extend((0..members).filter(|i| i != from)),
            Item::DeliverEach { to, .. } => out.extend(to.iter().map(|(i, _)| *i as usize)),
            _ => {}
        }
    }

    /// The bytes recipient number `n` of a delivery receives: into `out`.
    fn bytes_for(&self, n: usize, out: &mut Vec<u8>) {
        match self {
            Item::Deliver { msg, .. } => msg.payload.write(msg.dst, out),
            Item::DeliverEach { payload, to, .. } => payload.write(Some(to[n].1), out),
            _ => {}
        }
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Messages sent by routers and hosts.
    pub messages: u64,
    /// Bytes of those messages.
    pub bytes: u64,
    /// Messages lost to injected loss, dead routers or down links.
    pub lost: u64,
    /// Messages duplicated.
    pub duplicated: u64,
    /// Messages held back.
    pub reordered: u64,
    /// Messages dropped for exceeding the SAN's MTU.
    pub oversize: u64,
    /// FIB changes, all routers.
    pub fib_changes: u64,
    /// HR-DOWN events handled, all routers.
    pub hr_down_events: u64,
    /// Forged packets delivered to live router ports ([`Sim::forge_at`]).
    pub forged: u64,
    /// Multicast copies routers sent (one per branch).
    pub mcast_copies: u64,
}

/// The outcome of following a packet from a host to a destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Walk {
    /// Delivered; the routers crossed, in order.
    Reached(Vec<usize>),
    /// No route (or the host's HRs did not answer) after these routers.
    Unreachable(Vec<usize>),
    /// A forwarding loop through these routers.
    Loop(Vec<usize>),
}

/// Transient loops seen during a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// Loop episodes (a pair looping from one check to a later one counts once).
    pub episodes: u64,
    /// Their total duration (ms of virtual time).
    pub total_ms: u64,
    /// The longest one (ms).
    pub longest_ms: u64,
}

/// A whole simulated MessageWay.
pub struct Sim {
    /// Parameters.
    pub cfg: SimConfig,
    /// The topology it runs.
    pub topo: Topology,
    /// Virtual time (ms).
    pub now: Time,
    /// Routers.
    pub routers: Vec<SimRouter>,
    /// Hosts.
    pub hosts: Vec<SimHost>,
    sans: Vec<San>,
    hrs_on: Vec<Vec<u16>>,
    hr_index: HashMap<Address, (usize, PortId)>,
    /// The routers' shared node lists and RT bodies.
    interner: Arc<Interner>,
    /// What happens when, in the order it was queued at each time.
    queue: BTreeMap<Time, VecDeque<Item>>,
    timers: BinaryHeap<Reverse<(Time, usize)>>,
    scheduled: Vec<Time>,
    rng: Rng,
    /// Counters.
    pub stats: SimStats,
    /// The time of the last FIB change anywhere.
    pub last_fib_change: Time,
    /// Trace of delivered messages (when enabled).
    pub trace: Vec<TraceItem>,
    /// Router events (HR-DOWN and the like), with the router index.
    pub events: Vec<(Time, usize, Event)>,
    /// Transient loops.
    pub loops: LoopStats,
    /// Group packets routers put on each SAN: (SAN index, group, source,
    /// everything after the header) -> copies. Each SAN must get at most one.
    pub mcast_on_san: HashMap<(usize, Address, Address, Vec<u8>), u32>,
    looping: HashMap<(Address, Address), Time>,
    loop_check_at: Time,
    /// Wall-clock time spent handling events on the shards (the part of
    /// the run that [`SimConfig::threads`] divides; the rest, applying
    /// what they wrote, queueing and checking, runs on one thread).
    pub on_shards_wall: std::time::Duration,
    /// Instants whose events were handled on more than one thread.
    pub steps_on_threads: u64,
    /// The routers and hosts each thread handles ([`SimConfig::threads`]).
    shards: Vec<step::ShardRange>,
}

/// The native address of a member with MessageWay address `a`: ordered as
/// the addresses are, so that native tie-breaks agree with address order.
pub fn native_of(a: Address) -> NativeAddr {
    NativeAddr::mac([0x02, 0, 0, 0, (a.0 >> 8) as u8, a.0 as u8])
}

/// The node identity of a simulated host (NodeInfo's NodeIdentity, by
/// which the partitions name it): its native address as a number.
pub fn host_identity(h: &HostSpec) -> u64 {
    u64::from(h.address) | 0x0200_0000_0000
}

/// Each router's partitions guard, as the SANs' masters give the tables
/// of `parts` (docs/partitions.md): per router port, every node of its
/// SAN with its table, the routers' HRs as routers (full members of the
/// default partition), the hosts by [`host_identity`].
fn guards(topo: &Topology, parts: &Partitions) -> Result<Vec<PartitionGuard>, String> {
    // A node's table as the guard takes it: (key, full).
    type Table = Vec<(u16, bool)>;
    let table = |facts: NodeFacts| -> Table {
        parts
            .table_of(&facts)
            .into_iter()
            .map(|(k, m)| (k.get(), m == Membership::Full))
            .collect()
    };
    let router = table(NodeFacts {
        identity: 0,
        router: true,
        manager: false,
    });
    let mut per_san: Vec<Vec<(Address, Table)>> = vec![Vec::new(); topo.sans.len()];
    for r in &topo.routers {
        for h in &r.hrs {
            let si = topo.san_index(&h.san).expect("validated");
            per_san[si].push((Address(h.address), router.clone()));
        }
    }
    for h in &topo.hosts {
        let si = topo.san_index(&h.san).expect("validated");
        let facts = NodeFacts {
            identity: host_identity(h),
            router: false,
            manager: false,
        };
        per_san[si].push((Address(h.address), table(facts)));
    }
    let sans = per_san
        .into_iter()
        .enumerate()
        .map(|(si, members)| {
            SanPartitions::new(members)
                .map_err(|e| format!("san {}: partitions: {e}", topo.sans[si].name))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(topo
        .routers
        .iter()
        .map(|r| {
            PartitionGuard::new(r.hrs.iter().map(|h| {
                let si = topo.san_index(&h.san).expect("validated");
                Some(sans[si].clone())
            }))
        })
        .collect())
}

impl Sim {
    /// A simulation of `topo`, every router and host starting at time 0.
    pub fn new(topo: Topology, cfg: SimConfig) -> Result<Sim, String> {
        topo.validate()?;
        if let Some(s) = topo.sans.iter().find(|s| s.key.is_some()) {
            // The simulator's nodes do not sign: a keyed SAN would refuse them.
            return Err(format!(
                "san {}: mwsim does not simulate keyed authentication (run it in mwlab)",
                s.name
            ));
        }
        let mut rng = seeded(cfg.seed);
        let mut guards = match topo.partitions_model(host_identity) {
            Some(parts) => guards(&topo, &parts)?.into_iter().map(Some).collect(),
            None => vec![None; topo.routers.len()],
        };
        let mut sans: Vec<San> = topo
            .sans
            .iter()
            .map(|s| San {
                members: Vec::new(),
                by_native: HashMap::new(),
                mtu: s.mtu,
            })
            .collect();
        let add = |sans: &mut Vec<San>, san: usize, m: Member, a: Address| {
            let n = native_of(a);
            let s = &mut sans[san];
            s.by_native.insert(n, s.members.len());
            s.members.push((m, n));
        };
        let mut routers = Vec::new();
        let mut hr_index = HashMap::new();
        // One copy of each node list and RT body for every router of the
        // simulation (the copies are immutable: sharing changes memory only).
        let interner = Interner::new();
        for (ri, r) in topo.routers.iter().enumerate() {
            let mut hrs = Vec::new();
            let mut san_idx = Vec::new();
            for (p, h) in r.hrs.iter().enumerate() {
                let p = PortId::new(p);
                let si = topo.san_index(&h.san).expect("validated");
                let s = &topo.sans[si];
                hrs.push(HrConfig {
                    address: Address(h.address),
                    san_id: Address(s.id),
                    mtu: s.mtu,
                    cost: s.cost,
                    native: native_of(Address(h.address)),
                    static_nodes: Vec::new(),
                    auth: None,
                });
                san_idx.push(si);
                add(
                    &mut sans,
                    si,
                    Member::Router { r: ri, port: p },
                    Address(h.address),
                );
                hr_index.insert(Address(h.address), (ri, p));
            }
            let mut rc = RouterConfig::new(&r.name, hrs);
            rc.router_cost = r.cost;
            rc.k = cfg.k;
            rc.timers = cfg.timers;
            rc.sn_seed = rng.next_u64() as u16;
            let mut router = make_router(&r.name, rc, san_idx.into(), 0, &interner)?;
            router.partitions = guards[ri].take().map(Arc::new);
            routers.push(router);
        }
        let hrs_on = topo.hrs_on();
        let mut hosts = Vec::new();
        for (hi, h) in topo.hosts.iter().enumerate() {
            let si = topo.san_index(&h.san).expect("validated");
            add(&mut sans, si, Member::Host(hi), Address(h.address));
            let level = match h.level.as_str() {
                "A" => Level::A,
                "B" => Level::B,
                _ => Level::C,
            };
            let hr =
                h.hr.or_else(|| hrs_on[si].first().copied())
                    .map(Address)
                    .unwrap_or_default();
            hosts.push(SimHost {
                name: h.name.clone(),
                node: Node::new(NodeConfig {
                    address: Address(h.address),
                    name: Some(
                        h.node_name
                            .clone()
                            .unwrap_or_else(|| h.name.clone())
                            .into_bytes(),
                    ),
                    capabilities: h
                        .capabilities
                        .iter()
                        .map(|c| Capability {
                            code: c.code,
                            params: c.params.clone(),
                        })
                        .collect(),
                    logical: None,
                    level,
                }),
                san: si,
                native: native_of(Address(h.address)),
                hr,
                inbox: Vec::new(),
            });
        }
        for (ri, router) in routers.iter_mut().enumerate() {
            router.member = PortId::all(router.sans.len())
                .map(|port| {
                    member::member_index(&sans[router.sans[port]], Member::Router { r: ri, port })
                })
                .collect();
        }
        let n = routers.len();
        let ports: Vec<usize> = routers.iter().map(|r: &SimRouter| r.hrs.len()).collect();
        let shards = step::shard_ranges(&ports, hosts.len(), cfg.threads);
        let mut sim = Sim {
            cfg,
            topo,
            now: 0,
            routers,
            hosts,
            sans,
            hrs_on,
            hr_index,
            queue: BTreeMap::new(),
            interner,
            timers: BinaryHeap::new(),
            scheduled: vec![Time::MAX; n],
            rng,
            stats: SimStats::default(),
            last_fib_change: 0,
            trace: Vec::new(),
            events: Vec::new(),
            loops: LoopStats::default(),
            mcast_on_san: HashMap::new(),
            looping: HashMap::new(),
            loop_check_at: 0,
            shards,
            on_shards_wall: std::time::Duration::ZERO,
            steps_on_threads: 0,
        };
        for r in 0..n {
            sim.reschedule(r);
        }
        Ok(sim)
    }

    /// The router and port of HR `a`.
    pub fn hr(&self, a: Address) -> Option<(usize, PortId)> {
        self.hr_index.get(&a).copied()
    }

    /// The member of SAN `san` (index) at native address `native`: the one a
    /// message sent there is delivered to.
    pub fn member_at(&self, san: usize, native: &NativeAddr) -> Option<Member> {
        let s = self.sans.get(san)?;
        s.by_native.get(native).map(|i| s.members[*i].0)
    }

    /// The index of the router named `name`.
    pub fn router_index(&self, name: &str) -> Option<usize> {
        self.routers.iter().position(|r| r.name == name)
    }

    /// The index of the host named `name`.
    pub fn host_index(&self, name: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h.name == name)
    }

    /// Queues `item` at `at`, after everything queued there before. A
    /// delivery of the same bytes from the same member as the last item
    /// queued there joins it ([`Item::DeliverEach`]).
    fn push(&mut self, at: Time, item: Item) {
        let bucket = self.queue.entry(at).or_default();
        if let Item::Deliver {
            san,
            from,
            to: Some(i),
            msg: Wire {
                payload,
                dst: Some(dst),
            },
        } = item
        {
            let recipient = (i as u32, dst);
            match bucket.back_mut() {
                Some(Item::DeliverEach {
                    san: s,
                    from: f,
                    payload: p,
                    to,
                }) if *s == san && *f == from && p.same(&payload) => to.push(recipient),
                _ => bucket.push_back(Item::DeliverEach {
                    san,
                    from,
                    payload,
                    to: vec![recipient],
                }),
            }
            return;
        }
        bucket.push_back(item);
    }

    fn reschedule(&mut self, r: usize) {
        if !self.routers[r].alive {
            self.scheduled[r] = Time::MAX;
            return;
        }
        let t = self.routers[r].engine.next_timer().max(self.now);
        if t != self.scheduled[r] {
            self.scheduled[r] = t;
            self.timers.push(Reverse((t, r)));
        }
    }

    /// Crashes router `r` at time `at` (it stops answering; its neighbours
    /// find out by keepalives).
    pub fn crash_at(&mut self, r: usize, at: Time) {
        self.push(at, Item::Crash(r));
    }

    /// Restarts router `r` at `at` with fresh state and a new SN seed.
    pub fn restart_at(&mut self, r: usize, at: Time) {
        self.push(at, Item::Restart(r));
    }

    /// Takes port `port` of router `r` down at `at`.
    pub fn link_down_at(&mut self, r: usize, port: PortId, at: Time) {
        self.push(at, Item::LinkDown(r, port));
    }

    /// At `at`, `bytes` arrive at the member of SAN `san` (by index in the
    /// topology) whose address is `to`, from `native`, which is no member
    /// of the SAN: an adversary's forged packet (docs/spec-notes.md 60).
    /// Counted in [`SimStats::forged`] when it reaches a live router port.
    pub fn forge_at(
        &mut self,
        san: usize,
        native: NativeAddr,
        to: Address,
        bytes: Vec<u8>,
        at: Time,
    ) {
        self.push(
            at,
            Item::Forge {
                san,
                native,
                to,
                bytes,
            },
        );
    }

    /// Brings port `port` of router `r` up at `at`.
    pub fn link_up_at(&mut self, r: usize, port: PortId, at: Time) {
        self.push(at, Item::LinkUp(r, port));
    }

    /// Sends `bytes` from host `h` to the member of its SAN whose address is
    /// `to` (None: broadcast) at the current time.
    pub fn host_send(&mut self, h: usize, to: Option<Address>, bytes: Vec<u8>) {
        let san = self.hosts[h].san;
        let from = self.member_index(san, Member::Host(h));
        let to = to.and_then(|a| self.sans[san].by_native.get(&native_of(a)).copied());
        self.send(san, from, to, Wire::new(bytes));
    }

    /// Host `h` joins group `g` and says so to its SAN (an RRP#5 about
    /// itself to every member) at the current time.
    pub fn host_join(&mut self, h: usize, g: Address) -> bool {
        if !self.hosts[h].node.join(g) {
            return false;
        }
        let a = self.hosts[h].node.announce();
        self.host_send(h, None, a);
        true
    }

    /// Host `h` leaves group `g` and says so to its SAN.
    pub fn host_leave(&mut self, h: usize, g: Address) -> bool {
        if !self.hosts[h].node.leave(g) {
            return false;
        }
        let a = self.hosts[h].node.announce();
        self.host_send(h, None, a);
        true
    }

    /// Host `h` sends a packet to group `g` (to every member of its SAN)
    /// with data block `data`.
    pub fn host_send_group(&mut self, h: usize, g: Address, data: &[u8]) {
        let src = self.hosts[h].node.config().address;
        let p = rrp::wire::PacketRepr {
            l2rhs: Vec::new(),
            header: rrp::wire::HeaderRepr {
                dst: g,
                packet_type: rrp::kind::PacketType(0x0100),
                src,
                ..Default::default()
            },
            data: data.to_vec(),
            ei: 0,
        };
        if let Ok(b) = p.to_bytes() {
            self.host_send(h, None, b);
        }
    }

    /// Host `h` sends a data packet (PT 0x0100) to address `dst` with data
    /// block `data`, its Free field `free` (its partition mark, bit 15 full
    /// and bits 0-14 the key, 0 unmarked: docs/partitions.md "In packets"),
    /// to the HR [`Sim::first_hop`] names (none: its configured HR) at the
    /// current time. The host does not check its own table: whatever it
    /// marks is sent.
    pub fn host_send_data(&mut self, h: usize, dst: Address, free: u16, data: &[u8]) {
        let src = self.hosts[h].node.config().address;
        let p = rrp::wire::PacketRepr {
            l2rhs: Vec::new(),
            header: rrp::wire::HeaderRepr {
                dst,
                packet_type: rrp::kind::PacketType(0x0100),
                src,
                free,
                ..Default::default()
            },
            data: data.to_vec(),
            ei: 0,
        };
        let hr = self.first_hop(h, dst).unwrap_or(self.hosts[h].hr);
        if let Ok(b) = p.to_bytes() {
            self.host_send(h, Some(hr), b);
        }
    }

    /// The data packets host `h` received (its inbox's `Learned::Data`),
    /// in order.
    pub fn data_received(&self, h: usize) -> impl Iterator<Item = &rrp::wire::PacketRepr> {
        self.hosts[h].inbox.iter().filter_map(|(_, l)| match l {
            Learned::Data(p) => Some(p),
            _ => None,
        })
    }

    /// The group packets host `h` received for `g`: their data blocks, in
    /// order.
    pub fn group_received(&self, h: usize, g: Address) -> Vec<Vec<u8>> {
        self.hosts[h]
            .inbox
            .iter()
            .filter_map(|(_, l)| match l {
                Learned::Data(p) if p.header.dst == g => Some(p.data.clone()),
                _ => None,
            })
            .collect()
    }

    fn member_index(&self, san: usize, m: Member) -> usize {
        member::member_index(&self.sans[san], m)
    }

    fn send(&mut self, san: usize, from: usize, to: Option<usize>, msg: Wire) {
        self.stats.messages += 1;
        self.stats.bytes += msg.payload.len() as u64;
        let mtu = self.sans[san].mtu as usize;
        if mtu != 0 && msg.payload.len() > mtu {
            self.stats.oversize += 1;
            return;
        }
        if self.rng.chance(self.cfg.loss) {
            self.stats.lost += 1;
            return;
        }
        let copies = if self.rng.chance(self.cfg.dup) {
            self.stats.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let mut d = self.cfg.delay_ms;
            if self.cfg.jitter_ms > 0 {
                d += self.rng.below(self.cfg.jitter_ms + 1);
            }
            if self.rng.chance(self.cfg.reorder) {
                self.stats.reordered += 1;
                d += 5 * self.cfg.delay_ms.max(1);
            }
            let at = self.now + d;
            self.push(
                at,
                Item::Deliver {
                    san,
                    from,
                    to,
                    msg: msg.clone(),
                },
            );
        }
    }

    /// The time of the next thing to happen.
    fn next_time(&mut self) -> Option<Time> {
        while let Some(Reverse((t, r))) = self.timers.peek().copied() {
            if self.scheduled[r] != t || !self.routers[r].alive {
                self.timers.pop();
                continue;
            }
            break;
        }
        let a = self.queue.first_key_value().map(|(t, _)| *t);
        let b = self.timers.peek().map(|Reverse((t, _))| *t);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (x, None) | (None, x) => x,
        }
    }

    /// Runs until virtual time `until` (ms).
    pub fn run_until(&mut self, until: Time) {
        let parallel = self.steps_in_parallel();
        while let Some(t) = self.next_time() {
            if t > until {
                break;
            }
            self.now = t;
            let from_queue = self.queue.first_key_value().is_some_and(|(qt, _)| *qt == t);
            if parallel {
                if from_queue {
                    let (_, bucket) = self.queue.pop_first().expect("peeked");
                    self.step_queue(bucket.into());
                } else {
                    self.step_timers(t);
                }
                continue;
            }
            if from_queue {
                let mut first = self.queue.first_entry().expect("peeked");
                let item = first.get_mut().pop_front().expect("never empty");
                if first.get().is_empty() {
                    first.remove();
                }
                self.handle(item);
            } else {
                let Reverse((_, r)) = self.timers.pop().expect("peeked");
                self.scheduled[r] = Time::MAX;
                let mut out = Vec::new();
                let view = View {
                    now: t,
                    sans: &self.sans,
                    interner: &self.interner,
                };
                self.routers[r].timer(view, &mut out);
                self.apply_all(Some(r), out);
                self.reschedule(r);
            }
            self.check_loops_when_due();
        }
        self.now = self.now.max(until);
    }

    /// Applies `effects`, caused at router `r` (None: at a host), in order.
    fn apply_all(&mut self, r: Option<usize>, effects: Vec<Effect>) {
        for e in effects {
            self.apply(r, e);
        }
    }

    /// Router `r` hands its engine's outputs over.
    fn drain(&mut self, r: usize) {
        let mut out = Vec::new();
        self.routers[r].drain(&self.interner, &mut out);
        self.apply_all(Some(r), out);
    }

    /// Looks for transient loops when tracking them and their time has come.
    fn check_loops_when_due(&mut self) {
        if self.cfg.track_loops && self.now >= self.loop_check_at {
            self.check_transient_loops();
        }
    }

    fn handle(&mut self, item: Item) {
        match item {
            Item::Deliver { san, from, to, msg } => self.deliver(san, from, to, msg.to_vec()),
            Item::DeliverEach {
                san,
                from,
                payload,
                to,
            } => {
                let last = to.len().saturating_sub(1);
                for (n, (i, dst)) in to.into_iter().enumerate() {
                    self.deliver(san, from, Some(i as usize), payload.to_vec(Some(dst)));
                    // Between two deliveries as between two items
                    // (`run_until` checks after the last one).
                    if n < last {
                        self.check_loops_when_due();
                    }
                }
            }
            Item::Crash(r) => {
                self.routers[r].alive = false;
                self.scheduled[r] = Time::MAX;
            }
            Item::Restart(r) => {
                let mut cfg = self.routers[r].cfg.clone();
                cfg.sn_seed = self.rng.next_u64() as u16;
                let sans = self.routers[r].sans.clone();
                let name = self.routers[r].name.clone();
                let partitions = self.routers[r].partitions.clone();
                let member = self.routers[r].member.clone();
                self.routers[r] =
                    make_router(&name, cfg, sans, self.now, &self.interner).expect("valid before");
                self.routers[r].partitions = partitions;
                self.routers[r].member = member;
                self.reschedule(r);
            }
            Item::LinkDown(r, p) => {
                self.routers[r].ports_up[p] = false;
                self.routers[r].engine.port_down(self.now, p);
                self.drain(r);
                self.reschedule(r);
            }
            Item::LinkUp(r, p) => {
                self.routers[r].ports_up[p] = true;
                self.routers[r].engine.port_up(self.now, p);
                self.drain(r);
                self.reschedule(r);
            }
            Item::Forge {
                san,
                native,
                to,
                bytes,
            } => {
                let Some(&i) = self.sans[san].by_native.get(&native_of(to)) else {
                    return;
                };
                if let Member::Router { r, port } = self.sans[san].members[i].0
                    && self.routers[r].alive
                    && self.routers[r].ports_up[port]
                {
                    self.stats.forged += 1;
                    self.deliver_to_router(r, port, &native, &bytes);
                }
            }
        }
    }

    fn deliver(&mut self, san: usize, from: usize, to: Option<usize>, bytes: Vec<u8>) {
        let from_native = self.sans[san].members[from].1;
        if !self.sender_up(san, from) {
            self.stats.lost += 1;
            return;
        }
        if self.cfg.trace {
            self.trace_delivery(san, from, to, bytes.clone());
        }
        let targets: Vec<usize> = match to {
            Some(i) => vec![i],
            None => (0..self.sans[san].members.len())
                .filter(|i| *i != from)
                .collect(),
        };
        for i in targets {
            let m = self.sans[san].members[i].0;
            match m {
                Member::Host(h) => self.deliver_to_host(h, san, from, &bytes),
                Member::Router { r, port } => self.deliver_to_router(r, port, &from_native, &bytes),
            }
        }
    }

    /// Whether member `from` of SAN `san` is up to send (a router alive
    /// with its port up, or a host).
    fn sender_up(&self, san: usize, from: usize) -> bool {
        match self.sans[san].members[from].0 {
            Member::Router { r, port } => self.routers[r].alive && self.routers[r].ports_up[port],
            Member::Host(_) => true,
        }
    }

    /// Records a delivery (to one member, or to all with `to` None) in
    /// the trace.
    fn trace_delivery(&mut self, san: usize, from: usize, to: Option<usize>, bytes: Vec<u8>) {
        let addr = |m: Member| match m {
            Member::Router { r, port } => self.routers[r].hrs[port],
            Member::Host(h) => self.hosts[h].node.config().address,
        };
        let item = TraceItem {
            time: self.now,
            san,
            from: addr(self.sans[san].members[from].0),
            to: to.map(|i| addr(self.sans[san].members[i].0)),
            bytes,
        };
        self.trace.push(item);
    }

    fn deliver_to_host(&mut self, h: usize, san: usize, from: usize, bytes: &[u8]) {
        let mut out = Vec::new();
        let view = View {
            now: self.now,
            sans: &self.sans,
            interner: &self.interner,
        };
        self.hosts[h].receive(h, san, from, bytes, view, &mut out);
        self.apply_all(None, out);
    }

    fn deliver_to_router(&mut self, r: usize, port: PortId, native_src: &NativeAddr, bytes: &[u8]) {
        let mut out = Vec::new();
        let view = View {
            now: self.now,
            sans: &self.sans,
            interner: &self.interner,
        };
        let ran = self.routers[r].receive(port, native_src, bytes, view, &mut out);
        self.apply_all(Some(r), out);
        if ran {
            self.reschedule(r);
        }
    }

    // ----- reachability -------------------------------------------------------

    /// The first HR a host uses for `dst`: it asks its configured HR (or,
    /// when that router is down, the lowest live HR on its SAN) with RRP#6
    /// semantics, and follows the redirect.
    pub fn first_hop(&self, h: usize, dst: Address) -> Option<Address> {
        let host = &self.hosts[h];
        let mut asks: Vec<Address> = vec![host.hr];
        asks.extend(self.hrs_on[host.san].iter().map(|a| Address(*a)));
        for hr in asks {
            let Some((r, p)) = self.hr(hr) else { continue };
            let rt = &self.routers[r];
            if !rt.alive || !rt.ports_up[p] {
                continue;
            }
            return rt.engine.which_hr(p, dst);
        }
        None
    }

    /// Follows a packet from host `h` to address `dst` along the FIBs.
    pub fn walk(&self, h: usize, dst: Address) -> Walk {
        let host = &self.hosts[h];
        if self.sans[host.san]
            .members
            .iter()
            .any(|(m, n)| *n == native_of(dst) && matches!(m, Member::Host(_)))
        {
            return Walk::Reached(Vec::new());
        }
        let Some(first) = self.first_hop(h, dst) else {
            return Walk::Unreachable(Vec::new());
        };
        self.walk_from(first, dst)
    }

    fn walk_from(&self, first: Address, dst: Address) -> Walk {
        let Some((mut r, mut p)) = self.hr(first) else {
            return if first == dst {
                Walk::Reached(Vec::new())
            } else {
                Walk::Unreachable(Vec::new())
            };
        };
        let mut path = vec![r];
        let mut seen: BTreeSet<(usize, PortId)> = BTreeSet::new();
        loop {
            if !seen.insert((r, p)) {
                return Walk::Loop(path);
            }
            let rt = &self.routers[r];
            if !rt.alive {
                return Walk::Unreachable(path);
            }
            let fib = rt.engine.fib();
            let Some(e) = fib.lookup(p, dst) else {
                return Walk::Unreachable(path);
            };
            match &e.next {
                Next::Local => {
                    return if rt.hrs.contains(&dst) {
                        Walk::Reached(path)
                    } else {
                        Walk::Unreachable(path)
                    };
                }
                Next::Forward { port, native } => {
                    let san = rt.sans[*port];
                    let Some(i) = self.sans[san].by_native.get(native) else {
                        return Walk::Unreachable(path);
                    };
                    match self.sans[san].members[*i].0 {
                        Member::Host(x) => {
                            return if self.hosts[x].node.config().address == dst {
                                Walk::Reached(path)
                            } else {
                                Walk::Unreachable(path)
                            };
                        }
                        Member::Router { r: r2, port: p2 } => {
                            if path.last() != Some(&r2) {
                                path.push(r2);
                            }
                            r = r2;
                            p = p2;
                        }
                    }
                }
            }
        }
    }

    /// Every (source host, destination host) pair's walk, summarised:
    /// (pairs, reached, unreachable, loops). Walks from hosts that share a
    /// first hop are computed once. The sources are divided among
    /// [`SimConfig::threads`] threads (the walks only read).
    pub fn all_pairs(&self) -> (usize, usize, usize, usize) {
        let hosts = self.hosts.len();
        let threads = self.cfg.threads.clamp(1, hosts.max(1));
        if threads == 1 {
            return self.pairs_from(0..hosts);
        }
        let part = |i: usize| hosts * i / threads..hosts * (i + 1) / threads;
        std::thread::scope(|s| {
            let others: Vec<_> = (1..threads)
                .map(|i| s.spawn(move || self.pairs_from(part(i))))
                .collect();
            let mut sum = self.pairs_from(part(0));
            for o in others {
                let (p, k, u, l) = o.join().expect("a walking thread does not panic");
                sum = (sum.0 + p, sum.1 + k, sum.2 + u, sum.3 + l);
            }
            sum
        })
    }

    /// [`Sim::all_pairs`] from the hosts `sources` only.
    fn pairs_from(&self, sources: std::ops::Range<usize>) -> (usize, usize, usize, usize) {
        let mut cache: HashMap<(Address, Address), u8> = HashMap::new();
        let mut firsts: HashMap<(Address, usize, Address), Option<Address>> = HashMap::new();
        let (mut pairs, mut ok, mut unreach, mut loops) = (0, 0, 0, 0);
        for h in sources {
            for d in 0..self.hosts.len() {
                if h == d {
                    continue;
                }
                pairs += 1;
                let dst = self.hosts[d].node.config().address;
                let outcome = if self.hosts[h].san == self.hosts[d].san {
                    0
                } else {
                    let key = (self.hosts[h].hr, self.hosts[h].san, dst);
                    let first = *firsts.entry(key).or_insert_with(|| self.first_hop(h, dst));
                    match first {
                        None => 1,
                        Some(first) => *cache.entry((first, dst)).or_insert_with(|| {
                            match self.walk_from(first, dst) {
                                Walk::Reached(_) => 0,
                                Walk::Unreachable(_) => 1,
                                Walk::Loop(_) => 2,
                            }
                        }),
                    }
                };
                match outcome {
                    0 => ok += 1,
                    1 => unreach += 1,
                    _ => loops += 1,
                }
            }
        }
        (pairs, ok, unreach, loops)
    }

    fn check_transient_loops(&mut self) {
        self.loop_check_at = self.now + self.cfg.timers.advertise_ms.max(1);
        let mut now_looping: BTreeSet<(Address, Address)> = BTreeSet::new();
        let mut firsts: BTreeSet<Address> = BTreeSet::new();
        for r in &self.routers {
            if r.alive {
                firsts.extend(r.hrs.iter().copied());
            }
        }
        let dsts: Vec<Address> = self.hosts.iter().map(|h| h.node.config().address).collect();
        for f in &firsts {
            for d in &dsts {
                if matches!(self.walk_from(*f, *d), Walk::Loop(_)) {
                    now_looping.insert((*f, *d));
                }
            }
        }
        let now = self.now;
        let ended: Vec<(Address, Address)> = self
            .looping
            .keys()
            .filter(|k| !now_looping.contains(k))
            .copied()
            .collect();
        for k in ended {
            let start = self.looping.remove(&k).expect("present");
            let d = now - start;
            self.loops.total_ms += d;
            self.loops.longest_ms = self.loops.longest_ms.max(d);
        }
        for k in now_looping {
            if let std::collections::hash_map::Entry::Vacant(e) = self.looping.entry(k) {
                e.insert(now);
                self.loops.episodes += 1;
            }
        }
    }

    /// Runs until every FIB has been unchanged for three advertisement
    /// intervals and every host reaches every other, or until `max` ms.
    /// Returns the convergence time (the last FIB change) if it converged.
    pub fn run_until_converged(&mut self, max: Time) -> Option<Time> {
        let quiet = 3 * self.cfg.timers.advertise_ms;
        let step = self.cfg.timers.advertise_ms.max(10);
        let mut checked_at = Time::MAX;
        loop {
            let next = (self.now + step).min(max);
            self.run_until(next);
            if self.now - self.last_fib_change >= quiet && checked_at != self.last_fib_change {
                checked_at = self.last_fib_change;
                let (_, _, unreach, loops) = self.all_pairs();
                if unreach == 0 && loops == 0 {
                    return Some(self.last_fib_change);
                }
            }
            if self.now >= max {
                return None;
            }
        }
    }

    /// Runs until quiet: no FIB changed for three advertisement intervals
    /// and no live router refuses RTs through a downed HR any more (its
    /// tombstones lapsed and the RTs they refused were asked for again),
    /// by `max`. Unlike [`Sim::run_until_converged`] it does not ask that
    /// every host reach every other (a crash may partition the network).
    pub fn run_until_settled(&mut self, max: Time) -> Option<Time> {
        let quiet = 3 * self.cfg.timers.advertise_ms;
        let step = self.cfg.timers.advertise_ms.max(10);
        loop {
            let next = (self.now + step).min(max);
            self.run_until(next);
            let now = self.now;
            let pending = self
                .routers
                .iter()
                .filter(|r| r.alive)
                .map(|r| r.engine.tombstones(now))
                .sum::<usize>();
            if now - self.last_fib_change >= quiet && pending == 0 {
                return Some(self.last_fib_change);
            }
            if self.now >= max {
                return None;
            }
        }
    }

    /// RTs kept per HR (every HR of every live router).
    pub fn rts_per_hr(&self) -> Vec<usize> {
        let mut v = Vec::new();
        for r in self.routers.iter().filter(|r| r.alive) {
            for p in PortId::all(r.hrs.len()) {
                v.push(r.engine.rts_kept(p));
            }
        }
        v
    }

    /// The names of the routers a packet from host `a` to host `b` crosses.
    pub fn path_names(&self, a: usize, b: usize) -> Result<Vec<String>, String> {
        let dst = self.hosts[b].node.config().address;
        match self.walk(a, dst) {
            Walk::Reached(p) => Ok(p.iter().map(|r| self.routers[*r].name.clone()).collect()),
            Walk::Unreachable(p) => Err(format!(
                "unreachable after [{}]",
                p.iter()
                    .map(|r| self.routers[*r].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Walk::Loop(p) => Err(format!(
                "loop through [{}]",
                p.iter()
                    .map(|r| self.routers[*r].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// The first hop router-port's FIB entry for debugging.
    pub fn fib_entry(&self, r: usize, port: PortId, dst: Address) -> Option<rrp::router::FibEntry> {
        self.routers[r].engine.fib().lookup(port, dst)
    }

    /// Counts of the routers' RRP engine stats summed: the counters the
    /// simulator reports (by their names in the engine's counter set), every
    /// refusal as one `rts_refused`, the packets refused as spoofed, and
    /// the packets the forwarding decisions dropped as `partition`.
    pub fn router_stats(&self) -> BTreeMap<&'static str, u64> {
        const REPORTED: [&str; 9] = [
            "rts_accepted",
            "rts_refreshed",
            "rts_sent",
            "parse_errors",
            "rts_deleted_down",
            "hr_down_probes",
            "hr_down_disproved",
            "downs_not_buddy",
            "downs_limited",
        ];
        let mut total = RouterStats::default();
        let mut spoofed = 0;
        for r in &self.routers {
            total.add(r.engine.stats());
            spoofed += r
                .engine
                .port_stats()
                .iter()
                .map(|p| p.dropped[DropReason::SpoofedSource])
                .sum::<u64>();
        }
        let mut m: BTreeMap<&'static str, u64> = REPORTED
            .iter()
            .map(|n| (*n, total.get(n).unwrap_or(0)))
            .collect();
        m.insert("rts_refused", total.rts_refused.total());
        m.insert("spoofed", spoofed);
        m.insert(
            "partition",
            self.routers
                .iter()
                .map(|r| r.dropped[DropReason::Partition])
                .sum(),
        );
        m
    }
}

impl SimRouter {
    /// Sets the FIB set's buddies from the engine's LRTs when they changed,
    /// as the control plane publishes them: the partitions' checks ask
    /// them whether a packet comes from, or goes to, another router of a
    /// SAN. Only a router with partitions keeps them (nothing else the
    /// simulator does reads them).
    fn follow_buddies(&mut self) {
        if self.partitions.is_none() {
            return;
        }
        let Some(f) = &mut self.fib else { return };
        let changes = self.engine.lrt_changes();
        if self.buddies_at == Some(changes) {
            return;
        }
        self.buddies_at = Some(changes);
        let b = Buddies::new(
            (0..self.hrs.len()).map(|p| self.engine.buddies_with_native(PortId::new(p))),
        );
        f.set_buddies(Arc::new(b));
    }
}

fn make_router(
    name: &str,
    cfg: RouterConfig,
    sans: PerPort<usize>,
    now: Time,
    interner: &Arc<Interner>,
) -> Result<SimRouter, String> {
    let hrs: Vec<Address> = cfg.hrs.iter().map(|h| h.address).collect();
    let ecfg = EngineConfig {
        hrs: hrs.clone(),
        mtus: cfg.hrs.iter().map(|h| h.mtu).collect(),
    };
    let (wch, _cch) = channels(ChannelConfig {
        punt_slots: 1,
        notices: 1,
        injections: 1,
        ..ChannelConfig::default()
    });
    let engine = Router::with_interner(cfg.clone(), now, interner.clone())
        .map_err(|e| format!("router {name}: {e}"))?;
    Ok(SimRouter {
        name: name.to_string(),
        fib: None,
        dp: Engine::new(&ecfg, wch),
        hrs: hrs.into(),
        ports_up: vec![true; sans.len()].into(),
        sans,
        alive: true,
        engine,
        dropped: DropCounts::default(),
        partitions: None,
        buddies_at: None,
        member: PerPort::default(),
        cfg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim() -> Sim {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/appendix-b.toml"
        );
        let topo =
            Topology::from_toml(&std::fs::read_to_string(path).expect("example")).expect("valid");
        Sim::new(topo, SimConfig::default()).expect("builds")
    }

    fn to(san: usize, from: usize, i: usize, bytes: &Arc<[u8]>, dst: u16) -> Item {
        Item::Deliver {
            san,
            from,
            to: Some(i),
            msg: Wire {
                payload: Payload::whole(bytes.clone()),
                dst: Some(Address(dst)),
            },
        }
    }

    /// What the queue holds at `at`: per item, its recipients' addresses
    /// (`DeliverEach`) or nothing (any other item).
    fn bucket(sim: &Sim, at: Time) -> Vec<Vec<u16>> {
        sim.queue[&at]
            .iter()
            .map(|item| match item {
                Item::DeliverEach { to, .. } => to.iter().map(|(_, a)| a.0).collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn deliveries_of_one_message_at_one_time_are_queued_once_in_their_order() {
        let mut sim = sim();
        let (one, other): (Arc<[u8]>, Arc<[u8]>) = (vec![0; 20].into(), vec![0; 20].into());
        sim.push(7, to(0, 0, 1, &one, 0x11));
        sim.push(7, to(0, 0, 2, &one, 0x12));
        sim.push(7, to(0, 0, 3, &one, 0x13));
        // The same bytes from another member, other bytes, or after
        // another item start a new one: the order of deliveries stays.
        sim.push(7, to(0, 1, 3, &one, 0x14));
        sim.push(7, to(0, 1, 3, &other, 0x15));
        sim.push(7, Item::Crash(0));
        sim.push(7, to(0, 1, 3, &other, 0x16));
        sim.push(8, to(0, 1, 3, &other, 0x17));
        assert_eq!(
            bucket(&sim, 7),
            vec![
                vec![0x11, 0x12, 0x13],
                vec![0x14],
                vec![0x15],
                vec![],
                vec![0x16]
            ]
        );
        assert_eq!(bucket(&sim, 8), vec![vec![0x17]]);
    }
}
