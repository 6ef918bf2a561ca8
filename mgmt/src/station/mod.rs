//! A node's management station: its agent and its client together, and
//! the plumbing between them that every node needs the same way
//! (docs/management.md "The station"): a request for the node itself is
//! answered by its own agent without leaving it, answers addressed to the
//! node reach its client, packets for other nodes go out of the port the
//! node's routes give. Sans-IO like the agent and the client: mwrouterd's
//! control thread and mwlab's hosts feed it packets, requests and time, and
//! send the [`Packet`]s it returns.

mod managing;
mod perf;

use std::collections::HashMap;

use rrp::wire::RouterHop;
use rrp::{Address, NativeAddr, PortId};

use crate::manager::{Manager, ManagerConfig, ManagerEvent, ManagerOutput};
use crate::perfmgr::{PerfConfig, PerfManager, PerfOutput};
use managing::Managing;

use crate::agent::{Agent, AgentConfig, AgentEvent, Incoming, Managed, Output};
use crate::client::{Answer, Client, ClientOutput, Failure, Request};
use crate::wire::MAD_LEN;

/// Time in milliseconds, as the agent and the client count it.
pub type Time = u64;

/// How many rounds of local deliveries one call carries out at most: a
/// request to the node itself is one request and one answer, so a handful
/// suffice; the bound keeps a fault from looping.
const LOCAL_ROUNDS: usize = 64;

/// A seed for [`Station::new`] from the wall clock: what differs between
/// two runs of a node.
pub fn wall_clock_seed() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (t.as_secs() as u32) ^ t.subsec_nanos().rotate_left(16)
}

/// A node as the station sends for it: the managed node, its addresses,
/// its routes.
pub trait Carrier: Managed {
    /// The node's own addresses, one per port in port order (a host's one
    /// address; a router's HRs).
    fn addresses(&self) -> Vec<Address>;

    /// The port and next hop's native address of a packet for `dst`, by
    /// the node's routes; `None` when it has none.
    fn next_hop(&self, dst: Address) -> Option<(PortId, NativeAddr)>;

    /// The port and native address of `address` when it is a neighbour
    /// (on a SAN the node is on): where an L2 source route from this node
    /// starts. By default, the next hop to it.
    fn neighbour(&self, address: Address) -> Option<(PortId, NativeAddr)> {
        self.next_hop(address)
    }

    /// The members of `port`'s SAN this node knows (its LRT, a host's
    /// neighbours), without itself: whom a SAN manager on that port asks.
    fn members(&self, port: PortId) -> Vec<Address> {
        let _ = port;
        Vec::new()
    }
}

/// A management packet to send: the MAD, from `src` to `dst`, out of
/// `port` to `native`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Egress port.
    pub port: PortId,
    /// The next hop's native address.
    pub native: NativeAddr,
    /// EEP destination.
    pub dst: Address,
    /// EEP source: the egress port's address.
    pub src: Address,
    /// The MAD.
    pub mad: Box<[u8; MAD_LEN]>,
    /// The L2 source route it follows from the next hop on (one L2RH
    /// each; empty for every packet but the path tracer's L2 requests).
    pub l2: Vec<RouterHop>,
}

impl Packet {
    /// The whole MessageWay packet (its L2RHs, EEP header, the MAD,
    /// trailer); an error for a destination no packet can carry.
    pub fn bytes(&self) -> crate::Result<Vec<u8>> {
        crate::wire::routed_mad_packet(&self.l2, self.dst, self.src, &self.mad)
    }
}

/// What one call produced: packets to send, requests finished, the agent's
/// events (for the log).
#[derive(Debug, Default)]
pub struct Outcome {
    /// Packets to send.
    pub packets: Vec<Packet>,
    /// Requests finished: the id given to [`Station::start`] and the
    /// result.
    pub done: Vec<(u64, Result<Answer, Failure>)>,
    /// What the agent reports.
    pub events: Vec<AgentEvent>,
    /// What the SAN managers report, by port.
    pub manager_events: Vec<(PortId, ManagerEvent)>,
    /// Packets that had no route (counted, not sent).
    pub unroutable: u64,
}

impl Outcome {
    /// Adds what another call produced.
    fn merge(&mut self, o: Outcome) {
        self.packets.extend(o.packets);
        self.done.extend(o.done);
        self.events.extend(o.events);
        self.manager_events.extend(o.manager_events);
        self.unroutable += o.unroutable;
    }
}

/// The agent, the client and the SAN managers of one node.
pub struct Station {
    agent: Agent,
    client: Client,
    next_id: u64,
    /// The SAN managers the node runs, by port (at most one per port).
    managers: Vec<(PortId, Manager)>,
    /// The client's requests that are managers': station id -> (manager
    /// index, the manager's id).
    manager_ids: HashMap<u64, (usize, u64)>,
    /// Packets not sent for want of a route, since the start.
    unroutable: u64,
    /// The fabric's performance manager, when the node runs one.
    perf: Option<PerfManager>,
    /// The client's requests that are the performance manager's: station
    /// id -> its id.
    perf_ids: HashMap<u64, u64>,
}

impl Station {
    /// The station of a node configured by `cfg`, at `now`. The client's
    /// transaction IDs start from a prefix of the node's identity and
    /// `seed`, which the caller draws so that two runs of a node do not
    /// reuse them (the wall clock at start: `now` is the node's own clock,
    /// which may start from 0 on every run).
    pub fn new(cfg: AgentConfig, now: Time, seed: u32) -> Station {
        let prefix = (cfg.identity as u32) ^ ((cfg.identity >> 32) as u32) ^ seed;
        Station {
            agent: Agent::new(cfg, now),
            client: Client::new(prefix),
            next_id: 1,
            managers: Vec::new(),
            manager_ids: HashMap::new(),
            unroutable: 0,
            perf: None,
            perf_ids: HashMap::new(),
        }
    }

    /// Runs the fabric's performance manager with `cfg` from `now` (a
    /// running one takes the new settings and keeps its totals), or stops
    /// it (`None`).
    pub fn set_perf_manager(&mut self, cfg: Option<PerfConfig>, now: Time) {
        match (cfg, self.perf.as_mut()) {
            (None, _) => {
                self.perf = None;
                self.perf_ids.clear();
            }
            (Some(c), Some(p)) => p.configure(c),
            (Some(c), None) => self.perf = Some(PerfManager::new(c, now)),
        }
    }

    /// The fabric's performance manager, when the node runs one.
    pub fn perf_manager(&self) -> Option<&PerfManager> {
        self.perf.as_ref()
    }

    /// Runs a SAN manager on `port`'s SAN from `now` (replacing one there).
    pub fn add_manager(&mut self, port: PortId, cfg: ManagerConfig, now: Time) {
        self.managers.retain(|(p, _)| *p != port);
        let mut m = Manager::new(cfg, now);
        m.set_port(port);
        self.managers.push((port, m));
        // Answers to requests of the managers as they were go nowhere.
        self.manager_ids.clear();
    }

    /// Stops the manager on `port`'s SAN.
    pub fn remove_manager(&mut self, port: PortId) {
        self.managers.retain(|(p, _)| *p != port);
        self.manager_ids.clear();
    }

    /// The SAN managers, by port.
    pub fn managers(&self) -> &[(PortId, Manager)] {
        &self.managers
    }

    /// The partitions every SAN manager of the node gives its SAN's
    /// members (docs/partitions.md); a master's group members no longer in
    /// their group's partition lose their records (docs/multicast.md
    /// "Groups in partitions").
    pub fn set_partitions(&mut self, partitions: &crate::partition::Partitions) {
        for (_, m) in &mut self.managers {
            m.set_partitions(partitions.clone());
            m.mc_check_partitions();
        }
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The agent, to change its settings.
    pub fn agent_mut(&mut self) -> &mut Agent {
        &mut self.agent
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Management packets not sent because the node had no route to their
    /// destination (requests then time out; traps are repeated).
    pub fn unroutable(&self) -> u64 {
        self.unroutable
    }

    /// When the agent or the client wants its timer.
    pub fn next_timer(&self) -> Time {
        let perf = self.perf.as_ref().map_or(Time::MAX, |p| p.next_timer());
        self.managers.iter().map(|(_, m)| m.next_timer()).fold(
            self.agent
                .next_timer()
                .min(self.client.next_timer())
                .min(perf),
            Time::min,
        )
    }

    /// Runs `f` on the agent and the client with the node and its
    /// managers, then carries out what they output.
    fn with<N: Carrier + ?Sized>(
        &mut self,
        now: Time,
        node: &mut N,
        f: impl FnOnce(&mut Agent, &mut Client, &mut Managing<'_, N>),
    ) -> Outcome {
        let mut managers = std::mem::take(&mut self.managers);
        let out = {
            let mut m = Managing {
                node,
                managers: &mut managers,
                now,
            };
            f(&mut self.agent, &mut self.client, &mut m);
            self.drain(now, &mut m)
        };
        self.managers = managers;
        out
    }

    /// A management packet arrived for this node (or passing through it
    /// by directed route).
    pub fn handle<N: Carrier + ?Sized>(
        &mut self,
        now: Time,
        node: &mut N,
        input: Incoming<'_>,
    ) -> Outcome {
        self.with(now, node, |a, _, m| a.handle(now, m, input))
    }

    /// Timers: trap repeats, the lease, thresholds, the client's retries.
    pub fn on_timer<N: Carrier + ?Sized>(&mut self, now: Time, node: &mut N) -> Outcome {
        let mut out = self.with(now, node, |a, c, m| {
            a.on_timer(now, m);
            c.on_timer(now);
            let cfg = a.config();
            let me = crate::attr::NodeRecord {
                identity: cfg.identity,
                node_type: cfg.node_type as u8,
                level: cfg.level,
                num_ports: m.node.ports().min(255) as u8,
                description: cfg.description.clone(),
                ..crate::attr::NodeRecord::default()
            };
            for i in 0..m.managers.len() {
                let port = m.managers[i].0;
                let members = m.node.members(port);
                let own = m.node.addresses().get(port.index()).copied();
                let mgr = &mut m.managers[i].1;
                mgr.set_members(members);
                if let Some(a) = own {
                    mgr.set_address(a);
                }
                mgr.set_own(me.clone());
                mgr.set_own_router_mtu(
                    (cfg.node_type == crate::agent::NodeType::Router)
                        .then(|| m.node.port(port).map_or(0, |f| f.mtu)),
                );
                mgr.on_timer(now);
            }
            // A master is its own node's manager too, as InfiniBand's SM
            // makes itself its own port's MasterSMLID: the node's own traps
            // reach it, and its subscribers (docs/management.md "Events").
            // Only while the agent has no manager address.
            if a.config().manager == Address::UNSPECIFIED {
                let addresses = m.node.addresses();
                let hr = m
                    .managers
                    .iter()
                    .filter(|(_, g)| g.state() == crate::manager::SmState::Master)
                    .find_map(|(p, _)| addresses.get(p.index()).copied())
                    .filter(|a| *a != Address::UNSPECIFIED);
                if let Some(hr) = hr {
                    a.set_manager(hr);
                }
            }
        });
        if let Some(p) = self.perf.as_mut() {
            let targets = perf::targets(
                &*node,
                &self.managers,
                self.agent.config(),
                p.config().enabled,
            );
            p.set_mkey(self.agent.config().mkey);
            p.set_active(targets.is_some());
            p.set_targets(targets.unwrap_or_default());
            p.on_timer(now);
            let more = self.with(now, node, |_, _, _| {});
            out.merge(more);
        }
        out
    }

    /// A port went down or up (trap 128).
    pub fn port_changed<N: Carrier + ?Sized>(
        &mut self,
        now: Time,
        node: &mut N,
        port: PortId,
        up: bool,
    ) -> Outcome {
        self.with(now, node, |a, _, m| a.port_changed(now, m, port, up))
    }

    /// A neighbour HR on `port`'s SAN stopped answering (trap 1024).
    pub fn hr_down<N: Carrier + ?Sized>(
        &mut self,
        now: Time,
        node: &mut N,
        hr: Address,
        port: PortId,
    ) -> Outcome {
        self.with(now, node, |a, _, m| a.hr_down(now, m, hr, port))
    }

    /// An RT limit was reached on `port`: trap 1026.
    pub fn rt_limit<N: Carrier + ?Sized>(
        &mut self,
        now: Time,
        node: &mut N,
        port: PortId,
        from: Address,
        which: u8,
        max: u32,
    ) -> Outcome {
        self.with(now, node, |a, _, m| {
            a.rt_limit(now, m, port, from, which, max)
        })
    }

    /// A control packet failed the SAN's authentication on `port`: trap
    /// 1027, once per source within the agent's window.
    #[allow(clippy::too_many_arguments)]
    pub fn auth_refused<N: Carrier + ?Sized>(
        &mut self,
        now: Time,
        node: &mut N,
        port: PortId,
        from: Address,
        native: NativeAddr,
        why: rrp::wire::auth::AuthRefusal,
    ) -> Outcome {
        self.with(now, node, |a, _, m| {
            a.auth_refused(now, m, port, from, native, why)
        })
    }

    /// Starts a request of the node's own (an operator's); its result comes
    /// back in an [`Outcome`]'s `done` under the id returned.
    pub fn start<N: Carrier + ?Sized>(
        &mut self,
        now: Time,
        node: &mut N,
        request: Request,
    ) -> (u64, Outcome) {
        let id = self.next_id;
        self.next_id += 1;
        let out = self.with(now, node, |_, c, _| c.start(now, id, request));
        (id, out)
    }

    /// Carries out the agent's and the client's outputs until neither has
    /// more: local deliveries loop back here, the rest become packets.
    fn drain<N: Carrier + ?Sized>(&mut self, now: Time, node: &mut Managing<'_, N>) -> Outcome {
        let mut out = Outcome::default();
        let own = node.addresses();
        for _ in 0..LOCAL_ROUNDS {
            let mut progressed = false;
            for i in 0..node.managers.len() {
                let port = node.managers[i].0;
                while let Some(o) = node.managers[i].1.poll_output() {
                    progressed = true;
                    match o {
                        ManagerOutput::Request { id, request } => {
                            let sid = self.next_id;
                            self.next_id += 1;
                            self.manager_ids.insert(sid, (i, id));
                            self.client.start(now, sid, request);
                        }
                        ManagerOutput::Event(e) => out.manager_events.push((port, e)),
                    }
                }
            }
            while let Some(PerfOutput::Request { id, request }) =
                self.perf.as_mut().and_then(PerfManager::poll_output)
            {
                progressed = true;
                let sid = self.next_id;
                self.next_id += 1;
                self.perf_ids.insert(sid, id);
                self.client.start(now, sid, request);
            }
            while let Some(o) = self.agent.poll_output() {
                progressed = true;
                match o {
                    Output::Send {
                        port,
                        native,
                        dst,
                        mad,
                    } => {
                        if own.contains(&dst) && native.is_empty() {
                            if mad[3] == crate::wire::Method::TRAP_REPRESS.0
                                || mad[3] == crate::wire::Method::REPORT_RESP.0
                            {
                                // The TrapRepress of a trap this node sent
                                // itself (its manager runs here), or the
                                // ReportResp of a Report of its agent's to
                                // itself: for its agent, which stops
                                // repeating it (a ReportResp it did not
                                // ask for reaches the client from there).
                                self.agent.handle(
                                    now,
                                    node,
                                    Incoming {
                                        port,
                                        native,
                                        src: dst,
                                        dst,
                                        mad: &mad[..],
                                    },
                                );
                                continue;
                            }
                            // The answer to this node's own request.
                            self.client.on_response(now, dst, &mad[..]);
                            continue;
                        }
                        let src = own.get(port.index()).copied().unwrap_or_default();
                        out.packets.push(Packet {
                            port,
                            native,
                            dst,
                            src,
                            mad,
                            l2: Vec::new(),
                        });
                    }
                    Output::Route { dst, mad } => self.route(now, node, &own, dst, mad, &mut out),
                    Output::ToClient { from, mad } => self.client.on_response(now, from, &mad[..]),
                    Output::Event(e) => out.events.push(e),
                }
            }
            for o in self.client.take_outputs() {
                progressed = true;
                match o {
                    ClientOutput::Route { dst, mad } => {
                        self.route(now, node, &own, dst, mad, &mut out)
                    }
                    ClientOutput::Send { port, native, mad } => {
                        // The first hop of a directed route: to whoever is
                        // at `native` (Hey-You), from the egress port.
                        let src = own.get(port.index()).copied().unwrap_or_default();
                        out.packets.push(Packet {
                            port,
                            native,
                            dst: Address::HEY_YOU,
                            src,
                            mad,
                            l2: Vec::new(),
                        });
                    }
                    ClientOutput::SourceRoute {
                        via,
                        hops,
                        dst,
                        mad,
                    } => match node.neighbour(via) {
                        // Straight to the first router, on its SAN.
                        Some((port, native)) => out.packets.push(Packet {
                            port,
                            native,
                            dst,
                            src: own.get(port.index()).copied().unwrap_or_default(),
                            mad,
                            l2: hops,
                        }),
                        None => out.unroutable += 1,
                    },
                    ClientOutput::Done { id, result } => match self.manager_ids.remove(&id) {
                        Some((i, mid)) => {
                            if let Some((_, m)) = node.managers.get_mut(i) {
                                m.on_answer(now, mid, result);
                            }
                        }
                        None => match (self.perf_ids.remove(&id), self.perf.as_mut()) {
                            (Some(pid), Some(p)) => p.on_answer(now, pid, result),
                            (Some(_), None) => {}
                            (None, _) => out.done.push((id, result)),
                        },
                    },
                }
            }
            if !progressed {
                break;
            }
        }
        self.unroutable += out.unroutable;
        out
    }

    /// Sends `mad` to `dst` by the node's routes; a MAD for the node itself
    /// goes to its own agent (whose answer, addressed to the node too,
    /// reaches the client in [`Station::drain`]).
    fn route<N: Carrier + ?Sized>(
        &mut self,
        now: Time,
        node: &mut Managing<'_, N>,
        own: &[Address],
        dst: Address,
        mad: Box<[u8; MAD_LEN]>,
        out: &mut Outcome,
    ) {
        if let Some(p) = own.iter().position(|a| *a == dst) {
            self.agent.handle(
                now,
                node,
                Incoming {
                    port: PortId::new(p),
                    native: NativeAddr::NONE,
                    src: dst,
                    dst,
                    mad: &mad[..],
                },
            );
            return;
        }
        match node.next_hop(dst) {
            Some((port, native)) => out.packets.push(Packet {
                port,
                native,
                dst,
                src: own.get(port.index()).copied().unwrap_or_default(),
                mad,
                l2: Vec::new(),
            }),
            None => out.unroutable += 1,
        }
    }
}
