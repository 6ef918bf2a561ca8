//! In-band management on mwrouterd's control thread (docs/management.md
//! "In mwrouterd"): the agent answers the management packets for this box
//! and relays directed-route MADs passing through it; the client sends the
//! requests of `mwctl mad` and `mwctl query` and matches their answers. Both
//! read and change the box through [`RouterNode`], which goes through the
//! same engine calls and counters as the admin socket.

use std::collections::HashMap;
use std::sync::mpsc::SyncSender;

use mgmt::agent::router::{CounterSource, RouterNode};
use mgmt::agent::{Agent, AgentConfig, Incoming, NodeType};
use mgmt::client::{Answer, Client, Failure, Request};
use mgmt::manager::ManagerConfig;
use mgmt::perfmgr::{FabricSnapshot, PerfConfig};
use mgmt::station::{Outcome, Station};
use rrp::router::{Router, Time};
use rrp::{Address, LinkKind, NativeAddr, PortId, PortStats};

use admin::view::ManagementInfo;

use crate::PlaneStats;
use crate::config::Config;
use crate::log_limit::{LogLimiter, LogLimits};
use crate::partition_guard::PartitionKeeper;
use crate::partitions::{PartitionsSource, Reading};
use crate::stats::{Counters, EngineStats};

/// The answer an admin request waits for.
pub type Reply = Result<Answer, Failure>;

/// The agent and client of a box, and the requests waiting for answers.
pub struct Management {
    station: Station,
    waiters: HashMap<u64, SyncSender<Reply>>,
    counters: Counters,
    kinds: Vec<LinkKind>,
    /// The rate limit on the agent's and managers' log lines about what
    /// they received (docs/daemon.md "Logs").
    log: LogLimiter,
    /// The partitions the box's SAN managers hold (docs/partitions.md).
    partitions: PartitionsSource,
    /// The partitions the box enforces at each HR (docs/partitions.md "At
    /// the routers").
    guard: PartitionKeeper,
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
    /// The engine's counters (its share of the ports', and a snapshot's
    /// header).
    pub engine: &'a EngineStats,
    /// The control thread's counters (likewise).
    pub plane: &'a PlaneStats,
}

impl CounterSource for BoxCounters<'_> {
    fn counters(&self, port: PortId) -> Option<PortStats> {
        self.counters.port_shown(port, self.engine)
    }

    fn clear(&self, port: PortId) {
        let now = self.counters.snapshot(self.engine, self.plane);
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
    let engine = EngineStats::of(router);
    let c = BoxCounters {
        counters,
        engine: &engine,
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
    a.tracer = m.tracer;
    a.drop_threshold = m.drop_threshold;
    a.answers_per_source = m.answers_per_source;
    a.answers_global = m.answers_global;
    // The agent's own subscribers are bounded as a master's are.
    a.manager_timers = m.manager_timers;
    a
}

/// The SAN managers a configuration asks for: on each HR of
/// `management.manager_hrs` (every HR when empty), with
/// `management.manager_priority`; none without a priority.
pub fn manager_configs(cfg: &Config) -> Vec<(PortId, ManagerConfig)> {
    let m = &cfg.management;
    let Some(priority) = m.manager_priority else {
        return Vec::new();
    };
    cfg.hrs
        .iter()
        .enumerate()
        .filter(|(_, h)| m.manager_hrs.is_empty() || m.manager_hrs.contains(&h.address))
        .map(|(i, _)| {
            let mut c = ManagerConfig::new(priority, cfg.node_identity());
            c.sm_key = m.sm_key;
            c.timers = m.manager_timers;
            // As master, it gives the box's own M_Key to the SAN's agents.
            c.mkey = m.mkey;
            c.mkey_protect = m.protect;
            c.mkey_lease_s = m.lease_s;
            c.pool = m
                .address_pools
                .iter()
                .find(|p| p.hr == cfg.hrs[i].address)
                .map(|p| (p.first, p.last));
            (PortId::new(i), c)
        })
        .collect()
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
        Management {
            station: Station::new(cfg, now, mgmt::station::wall_clock_seed()),
            waiters: HashMap::new(),
            counters,
            kinds,
            log: LogLimiter::new(LogLimits::default()),
            partitions: PartitionsSource::default(),
            guard: PartitionKeeper::default(),
        }
    }

    /// The agent (its state and counters).
    pub fn agent(&self) -> &Agent {
        self.station.agent()
    }

    /// The agent, to apply a configuration reload.
    pub fn agent_mut(&mut self) -> &mut Agent {
        self.station.agent_mut()
    }

    /// Runs exactly these SAN managers from `now` (a manager whose port and
    /// settings stay keeps its state).
    pub fn set_managers(&mut self, now: Time, managers: Vec<(PortId, ManagerConfig)>) {
        let running: Vec<(PortId, ManagerConfig)> = self
            .station
            .managers()
            .iter()
            .map(|(p, m)| (*p, m.config().clone()))
            .collect();
        for (p, _) in &running {
            if !managers.iter().any(|(q, _)| q == p) {
                self.station.remove_manager(*p);
            }
        }
        for (p, c) in managers {
            if !running.contains(&(p, c.clone())) {
                self.station.add_manager(p, c, now);
            }
        }
        // A new manager gives the partitions in force too (the others hold
        // them already: the same partitions change nothing).
        self.station.set_partitions(self.partitions.in_force());
    }

    /// Runs the fabric's performance manager with `cfg` from `now` (it
    /// polls only where a SAN manager here is master, unless `enabled`);
    /// new settings keep its totals.
    pub fn set_perf_manager(&mut self, now: Time, cfg: PerfConfig) {
        self.station.set_perf_manager(Some(cfg), now);
    }

    /// The fabric as the performance manager has read it (docs/management.md
    /// "Fabric performance manager").
    pub fn fabric(&self) -> Option<FabricSnapshot> {
        self.station.perf_manager().map(|p| p.snapshot())
    }

    /// The client's counters.
    pub fn client(&self) -> &Client {
        self.station.client()
    }

    /// What `show management` shows, at `now`; `addresses` are the box's
    /// HRs in port order.
    pub fn info(&self, now: Time, addresses: Vec<Address>) -> ManagementInfo {
        let mut partitions = self.partitions.info();
        let unix_now = crate::partitions::unix_now_s();
        partitions.copies = self
            .station
            .managers()
            .iter()
            .filter_map(|(p, m)| m.partitions_copy().map(|c| (p, c)))
            .map(|(p, c)| {
                crate::partitions::copy_info(
                    p.index(),
                    c,
                    self.partitions.in_force(),
                    now.saturating_sub(c.at),
                    unix_now,
                )
            })
            .collect();
        ManagementInfo {
            partitions: Some(partitions),
            port_partitions: self.guard.rows(&addresses),
            ..ManagementInfo::of(&self.station, now, addresses)
        }
    }

    /// The partitions to enforce at each of `ports` HRs, when they changed
    /// since the last call: the new guard, and the tables it could not take
    /// (each port's last good ones kept), each logged once (rate-limited).
    pub fn partition_guard(
        &mut self,
        now: Time,
        hrs: &[Address],
    ) -> Option<(dataplane::PartitionGuard, usize)> {
        let (g, refused) = self.guard.update(&self.station, hrs)?;
        for (port, e) in &refused {
            if self.log.admit(now, "partition-tables-refused", None) {
                tracing::warn!(target: "mwrouter::mgmt", "port {port}: partition tables not taken, the last good ones stay in force: {e}");
            }
        }
        Some((g, refused.len()))
    }

    /// The partitions in force and where they come from.
    pub fn partitions(&self) -> &PartitionsSource {
        &self.partitions
    }

    /// The tables of `management.static_partitions` (at start and at every
    /// reload): in force on the HRs whose SAN's master gives none
    /// (docs/partitions.md "Without a SAN manager").
    pub fn set_static_partitions(&mut self, s: Vec<crate::config::StaticPartitions>) {
        self.guard.set_static(s);
    }

    /// Takes a reading of the partitions file (at start and at every
    /// reload), and gives the partitions then in force to every SAN manager
    /// of the box: a master sets its members' tables from them
    /// (docs/manager.md "Partition tables").
    pub fn take_partitions(&mut self, r: Reading) {
        self.partitions.take(r);
        self.station.set_partitions(self.partitions.in_force());
    }

    /// When the agent or the client wants its timer.
    pub fn next_timer(&self) -> Time {
        self.station.next_timer()
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
        let input = Incoming {
            port,
            native,
            src,
            dst,
            mad,
        };
        let st = &mut self.station;
        let o = with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            st.handle(now, v, input)
        });
        self.carry_out(now, o)
    }

    /// Timers: trap repeats, the lease, thresholds, client retries.
    pub fn on_timer(&mut self, now: Time, router: &mut Router, plane: &PlaneStats) -> Vec<Send> {
        let st = &mut self.station;
        let o = with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            st.on_timer(now, v)
        });
        self.carry_out(now, o)
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
        let st = &mut self.station;
        let o = with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            st.port_changed(now, v, port, up)
        });
        self.carry_out(now, o)
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
        let st = &mut self.station;
        let o = with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            st.hr_down(now, v, hr, port)
        });
        self.carry_out(now, o)
    }

    /// An RT limit was reached on `port`: trap 1026.
    #[allow(clippy::too_many_arguments)]
    pub fn rt_limit(
        &mut self,
        now: Time,
        router: &mut Router,
        plane: &PlaneStats,
        port: PortId,
        from: Address,
        which: u8,
        max: u32,
    ) -> Vec<Send> {
        let st = &mut self.station;
        let o = with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            st.rt_limit(now, v, port, from, which, max)
        });
        self.carry_out(now, o)
    }

    /// A control packet failed the SAN's authentication on `port`: trap
    /// 1027 (once per source within the agent's window).
    #[allow(clippy::too_many_arguments)]
    pub fn auth_refused(
        &mut self,
        now: Time,
        router: &mut Router,
        plane: &PlaneStats,
        port: PortId,
        from: Address,
        native: NativeAddr,
        why: rrp::router::AuthRefusal,
    ) -> Vec<Send> {
        let st = &mut self.station;
        let o = with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            st.auth_refused(now, v, port, from, native, why)
        });
        self.carry_out(now, o)
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
        let st = &mut self.station;
        let (id, o) = with_node(&self.counters, &self.kinds, router, plane, now, |v| {
            st.start(now, v, request)
        });
        self.waiters.insert(id, reply);
        self.carry_out(now, o)
    }

    /// The packets of an outcome in their EEP packets; answers to their
    /// waiters; events to the log.
    fn carry_out(&mut self, now: Time, o: Outcome) -> Vec<Send> {
        for e in &o.events {
            if self.log.admit(now, e.kind(), e.source()) {
                tracing::info!(target: "mwrouter::mgmt", "{e}");
            }
        }
        for (port, e) in &o.manager_events {
            if self.log.admit(now, e.kind(), e.source()) {
                tracing::info!(target: "mwrouter::manager", "port {port}: {e}");
            }
        }
        for s in self.log.expired(now) {
            tracing::warn!(target: "mwrouter::mgmt", suppressed = s.count, "{s}");
        }
        for (id, result) in o.done {
            if let Some(w) = self.waiters.remove(&id) {
                let _ = w.try_send(result);
            }
        }
        o.packets
            .into_iter()
            .filter_map(|p| match p.bytes() {
                Ok(packet) => Some(Send {
                    port: p.port,
                    native: p.native,
                    packet,
                }),
                Err(e) => {
                    // A destination no packet can carry (below 0x0040: it
                    // would read as a source route); the agent and the
                    // client never make one.
                    tracing::warn!(target: "mwrouter::mgmt", "management packet to {} not sent: {e}", p.dst);
                    None
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partitions_taken_reach_every_manager_running_and_started() {
        let agent = AgentConfig::new(NodeType::Router, 0x0101, "r");
        let mut m = Management::new(agent, 0, Counters::new(Vec::new()), Vec::new());
        m.set_managers(0, vec![(PortId::new(0), ManagerConfig::new(1, 0x0101))]);
        let parts = mgmt::partition::parse("a=0x0010 : ALL=full ;").unwrap();
        m.take_partitions(Reading {
            path: Some("/etc/mwrouter/partitions.conf".into()),
            result: Ok(parts.clone()),
            at_unix_s: 0,
        });
        m.set_managers(
            0,
            vec![
                (PortId::new(0), ManagerConfig::new(1, 0x0101)),
                (PortId::new(1), ManagerConfig::new(1, 0x0101)),
            ],
        );
        let held: Vec<_> = m
            .station
            .managers()
            .iter()
            .map(|(_, x)| x.partitions().clone())
            .collect();
        assert_eq!(held, vec![parts.clone(), parts]);
    }

    #[test]
    fn version_codes() {
        assert_eq!(super::version_code("1.2.3"), 0x010203);
        assert_eq!(super::version_code("0.4.0-dev"), 0x000400);
        assert_eq!(super::version_code("x"), 0);
    }
}
