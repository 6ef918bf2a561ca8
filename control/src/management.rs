//! In-band management on mwrouterd's control thread (docs/management.md
//! "In mwrouterd"): the agent answers the management packets for this box
//! and relays directed-route MADs passing through it; the client sends the
//! requests of `mwctl mad` and `mwctl query` and matches their answers. Both
//! read and change the box through [`RouterNode`], which goes through the
//! same engine calls and counters as the admin socket.

use std::collections::HashMap;
use std::sync::mpsc::SyncSender;

use mgmt::agent::router::{CounterSource, RouterNode};
use mgmt::agent::{Agent, AgentConfig, Incoming, NodeType, Output};
use mgmt::client::{Answer, Client, ClientOutput, Failure, Request};
use mgmt::wire::MAD_LEN;
use rrp::router::{Next, Router, RouterStats, Time};
use rrp::{Address, LinkKind, NativeAddr, PortId};

use admin::view::{ManagementInfo, NoticeRow};

use crate::PlaneStats;
use crate::config::Config;
use crate::stats::Counters;

/// The answer an admin request waits for.
pub type Reply = Result<Answer, Failure>;

/// The agent and client of a box, and the requests waiting for answers.
pub struct Management {
    agent: Agent,
    client: Client,
    waiters: HashMap<u64, SyncSender<Reply>>,
    next_id: u64,
    counters: Counters,
    kinds: Vec<LinkKind>,
}

/// A packet the management host wants sent: out of `port` to `native`.
pub struct Send {
    /// Egress port.
    pub port: PortId,
    /// Native destination.
    pub native: NativeAddr,
    /// The whole MessageWay packet.
    pub packet: Vec<u8>,
}

/// The box's counters for the agent: the admin socket's, cleared the same
/// way (a PortCounters Set is `mwctl clear counters --port N`).
pub struct BoxCounters<'a> {
    /// The counters shared with the admin socket.
    pub counters: &'a Counters,
    /// The engine's counters (for a snapshot's header).
    pub router: &'a RouterStats,
    /// The control thread's counters (likewise).
    pub plane: &'a PlaneStats,
}

impl CounterSource for BoxCounters<'_> {
    fn counters(&self, port: PortId) -> Option<Vec<u64>> {
        self.counters.port_shown(port).map(|s| s.to_vec())
    }

    fn clear(&self, port: PortId) {
        let now = self.counters.snapshot(self.router, self.plane);
        self.counters.clear(&now, Some(&[port]));
    }
}

/// Runs `f` on the box as the agent sees it: the engine and the counters.
fn with_node<R>(
    counters: &Counters,
    kinds: &[LinkKind],
    router: &mut Router,
    plane: &PlaneStats,
    now: Time,
    f: impl FnOnce(&mut RouterNode<'_, BoxCounters<'_>>) -> R,
) -> R {
    let stats = router.stats().clone();
    let c = BoxCounters {
        counters,
        router: &stats,
        plane,
    };
    f(&mut RouterNode {
        router,
        now,
        kinds,
        counters: &c,
    })
}

/// The agent's settings from a configuration: `[management]`, the node
/// identity and description, this build's version.
pub fn agent_config(cfg: &Config) -> AgentConfig {
    let m = &cfg.management;
    let mut a = AgentConfig::new(
        NodeType::Router,
        cfg.node_identity(),
        &cfg.node_description(),
    );
    a.version = version_code(env!("CARGO_PKG_VERSION"));
    a.mkey = m.mkey;
    a.protect = m.protect;
    a.lease_s = m.lease_s;
    a.manager = m.manager.unwrap_or(Address::UNSPECIFIED);
    a.traps_per_s = m.traps_per_s;
    a.drop_threshold = m.drop_threshold;
    a
}

/// `major.minor.patch` as NodeInfo's revision: major << 16 | minor << 8 | patch.
pub fn version_code(v: &str) -> u32 {
    let mut parts = v.split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0).min(255);
    let (major, minor, patch) = (next(), next(), next());
    major << 16 | minor << 8 | patch
}

impl Management {
    /// The management of a box configured by `cfg`, at `now`; `counters`
    /// are shared with the admin socket.
    pub fn new(
        cfg: AgentConfig,
        now: Time,
        counters: Counters,
        kinds: Vec<LinkKind>,
    ) -> Management {
        let prefix = (cfg.identity as u32) ^ ((cfg.identity >> 32) as u32) ^ (now as u32);
        Management {
            agent: Agent::new(cfg, now),
            client: Client::new(prefix),
            waiters: HashMap::new(),
            next_id: 1,
            counters,
            kinds,
        }
    }

    /// The agent (its state and counters).
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The agent, to apply a configuration reload.
    pub fn agent_mut(&mut self) -> &mut Agent {
        &mut self.agent
    }

    /// The client's counters.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// What `show management` shows, at `now`.
    pub fn info(&self, now: Time) -> ManagementInfo {
        let a = &self.agent;
        let cfg = a.config();
        let k = a.mkey();
        ManagementInfo {
            identity: format!("{:#018x}", cfg.identity),
            description: cfg.description.clone(),
            manager: (cfg.manager != Address::UNSPECIFIED).then_some(cfg.manager),
            mkey_set: k.key != 0,
            protect: k.protect,
            lease_s: k.lease_s,
            lease_left_ms: k.lease_until.map(|t| t.saturating_sub(now)),
            violations: k.violations,
            agent: a
                .stats()
                .fields()
                .iter()
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
            client: self
                .client
                .stats()
                .fields()
                .iter()
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
            notices: a
                .notices()
                .map(|(t, issuer, n)| NoticeRow {
                    age_ms: now.saturating_sub(*t),
                    issuer: *issuer,
                    trap: n.trap_number,
                    summary: n.summary(),
                })
                .collect(),
        }
    }

    /// When the agent or the client wants its timer.
    pub fn next_timer(&self) -> Time {
        self.agent.next_timer().min(self.client.next_timer())
    }

    /// A management packet arrived on `port` from `native` (EEP `src` ->
    /// `dst`, its data block `mad`). Returns the packets to send.
    #[allow(clippy::too_many_arguments)]
    pub fn handle(
        &mut self,
        now: Time,
        router: &mut Router,
        plane: &PlaneStats,
        port: PortId,
        native: NativeAddr,
        src: Address,
        dst: Address,
        mad: &[u8],
    ) -> Vec<Send> {
        with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            self.agent.handle(
                now,
                v,
                Incoming {
                    port,
                    native,
                    src,
                    dst,
                    mad,
                },
            );
        });
        self.drain(now, router, plane)
    }

    /// Timers: trap repeats, the lease, thresholds, client retries.
    pub fn on_timer(&mut self, now: Time, router: &mut Router, plane: &PlaneStats) -> Vec<Send> {
        with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            self.agent.on_timer(now, v);
        });
        self.client.on_timer(now);
        self.drain(now, router, plane)
    }

    /// An HR went down or up: trap 128.
    pub fn port_changed(
        &mut self,
        now: Time,
        router: &mut Router,
        plane: &PlaneStats,
        port: PortId,
        up: bool,
    ) -> Vec<Send> {
        with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            self.agent.port_changed(now, v, port, up);
        });
        self.drain(now, router, plane)
    }

    /// A neighbour HR on `port`'s SAN stopped answering: trap 1024.
    pub fn hr_down(
        &mut self,
        now: Time,
        router: &mut Router,
        plane: &PlaneStats,
        hr: Address,
        port: PortId,
    ) -> Vec<Send> {
        with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            self.agent.hr_down(now, v, hr, port);
        });
        self.drain(now, router, plane)
    }

    /// Starts an admin request; its answer goes to `reply`.
    pub fn start(
        &mut self,
        now: Time,
        router: &mut Router,
        plane: &PlaneStats,
        request: Request,
        reply: SyncSender<Reply>,
    ) -> Vec<Send> {
        let id = self.next_id;
        self.next_id += 1;
        self.waiters.insert(id, reply);
        self.client.start(now, id, request);
        self.drain(now, router, plane)
    }

    /// Carries out the agent's and the client's outputs: packets to send,
    /// answers to waiters, log lines. Local deliveries (a request for this
    /// box itself, the answer to it) loop back here.
    fn drain(&mut self, now: Time, router: &mut Router, plane: &PlaneStats) -> Vec<Send> {
        let mut out = Vec::new();
        let hrs: Vec<Address> = router.config().hrs.iter().map(|h| h.address).collect();
        // Bounded: local deliveries produce a finite chain of answers.
        for _ in 0..64 {
            let mut progressed = false;
            while let Some(o) = self.agent.poll_output() {
                progressed = true;
                match o {
                    Output::Send {
                        port,
                        native,
                        dst,
                        mad,
                    } => {
                        if hrs.contains(&dst) && native.is_empty() {
                            // An answer to this box's own request.
                            self.client.on_response(now, dst, &mad[..]);
                            continue;
                        }
                        let src = hrs.get(port.index()).copied().unwrap_or_default();
                        push(&mut out, port, native, dst, src, &mad);
                    }
                    Output::Route { dst, mad } => {
                        self.route(now, router, plane, &hrs, dst, &mad, &mut out)
                    }
                    Output::ToClient { from, mad } => self.client.on_response(now, from, &mad[..]),
                    Output::Event(e) => tracing::info!(target: "mwrouter::mgmt", "{e}"),
                }
            }
            for o in self.client.take_outputs() {
                progressed = true;
                match o {
                    ClientOutput::Route { dst, mad } => {
                        self.route(now, router, plane, &hrs, dst, &mad, &mut out)
                    }
                    ClientOutput::Send { port, native, mad } => {
                        let src = hrs.get(port.index()).copied().unwrap_or_default();
                        push(&mut out, port, native, Address::HEY_YOU, src, &mad);
                    }
                    ClientOutput::Done { id, result } => {
                        if let Some(w) = self.waiters.remove(&id) {
                            let _ = w.try_send(result);
                        }
                    }
                }
            }
            if !progressed {
                break;
            }
        }
        out
    }

    /// Sends `mad` to `dst` by this box's routes: out of the port of the
    /// cheapest route any HR has, from that port's address. A MAD for this
    /// box itself is handed to its agent.
    #[allow(clippy::too_many_arguments)]
    fn route(
        &mut self,
        now: Time,
        router: &mut Router,
        plane: &PlaneStats,
        hrs: &[Address],
        dst: Address,
        mad: &[u8; MAD_LEN],
        out: &mut Vec<Send>,
    ) {
        if let Some(p) = hrs.iter().position(|a| *a == dst) {
            // This box: its agent answers (the answer, addressed to this
            // box too, comes back to the client in `drain`).
            with_node(&self.counters, &self.kinds, router, plane, now, |v| {
                self.agent.handle(
                    now,
                    v,
                    Incoming {
                        port: PortId::new(p),
                        native: NativeAddr::NONE,
                        src: dst,
                        dst,
                        mad: &mad[..],
                    },
                )
            });
            return;
        }
        let fib = router.fib();
        let best = (0..hrs.len())
            .filter_map(|t| fib.lookup(PortId::new(t), dst))
            .filter_map(|e| match e.next {
                Next::Forward { port, native } => Some((e.q, port, native)),
                Next::Local => None,
            })
            .min_by_key(|(q, port, _)| (*q, port.index()));
        if let Some((_, port, native)) = best {
            let src = hrs.get(port.index()).copied().unwrap_or_default();
            push(out, port, native, dst, src, mad);
        }
    }
}

/// A MAD in its EEP packet, to send out of `port` to `native`. A
/// destination no packet can carry (below 0x0040: it would read as a source
/// route) is not sent; the agent and the client never make one.
fn push(
    out: &mut Vec<Send>,
    port: PortId,
    native: NativeAddr,
    dst: Address,
    src: Address,
    mad: &[u8; MAD_LEN],
) {
    match mgmt::wire::mad_packet(dst, src, mad) {
        Ok(packet) => out.push(Send {
            port,
            native,
            packet,
        }),
        Err(e) => {
            tracing::warn!(target: "mwrouter::mgmt", "management packet to {dst} not sent: {e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use admin::stats::{PORT_COUNTERS, PORT_FIELDS};
    use mgmt::attr::PortCounters;
    use rrp::DropReason;

    /// PortCounters carries a port's admin stats slots in their order: the
    /// names on the wire and in `mwctl stats` are the same.
    #[test]
    fn version_codes() {
        assert_eq!(super::version_code("1.2.3"), 0x010203);
        assert_eq!(super::version_code("0.4.0-dev"), 0x000400);
        assert_eq!(super::version_code("x"), 0);
    }

    #[test]
    fn port_counters_are_the_admin_slots() {
        assert_eq!(PortCounters::COUNT, PORT_FIELDS);
        let slots: Vec<String> = PORT_COUNTERS
            .iter()
            .map(|(n, _, _)| n.to_string())
            .chain(
                DropReason::ALL
                    .iter()
                    .map(|r| format!("dropped.{}", r.name())),
            )
            .collect();
        assert_eq!(PortCounters::NAMES.to_vec(), slots);
        assert_eq!(PortCounters::FIRST_DROP, PORT_COUNTERS.len());
    }
}
