//! A sample box: a [`Backend`] with a small, real RRP engine and made-up
//! counters, answered by the same [`Dispatcher`] as the daemon. It gives
//! docs/admin-protocol.md its examples and the tests of the server and of
//! `mwctl` a box to talk to without a daemon.
//!
//! The box `sample` has two HRs: port 0, HR 0x0115 on SAN 0x0201 (MTU
//! 1500) with static nodes 0x0101 (`h1`) and 0x0117 (router `ac`); port 1,
//! HR 0x0116 on SAN 0x0202 (MTU 9000) with static node 0x0102 (`h2`).

use std::sync::{Arc, Mutex, MutexGuard};

use rrp::kind::{CapabilityCode, PacketType};
use rrp::router::{HrConfig, Router, RouterConfig, StaticNode, Time};
use rrp::wire::header::HeaderRepr;
use rrp::wire::packet::PacketRepr;
use rrp::wire::record::Capability;
use rrp::{Address, DropReason, LinkKind, NativeAddr, PortId, PortStats};

use std::cell::RefCell;
use std::time::Duration;

use mgmt::agent::router::{CounterSource, RouterNode};
use mgmt::agent::{AgentConfig, NodeType};
use mgmt::client::{Failure, Request, Target};
use mgmt::station::Station;

use crate::dispatch::{Backend, CaptureNext, CaptureSource, Dispatcher, TraceNext, TraceSource};
use crate::mad::MadResult;
use crate::proto::{
    AdminError, CaptureRequest, LogLevel, ReloadAnswer, ReloadRequest, Requester, TraceKind,
    TraceRequest, TracedEntry, TracedHop, TracedLookup, TracedPacket, TracedVerdict,
};
use crate::stats::{PlaneStats, Snapshot, prometheus};
use crate::view::ManagementInfo;

/// The sample box.
pub struct SampleBox {
    state: Mutex<State>,
}

struct State {
    router: Router,
    /// Its management agent and client: a MAD to one of the box's own
    /// addresses is answered (there is no network behind the sample).
    station: Station,
    counters: Vec<PortStats>,
    log_level: LogLevel,
    reloads: u64,
    now: Time,
}

fn mac(last: u16) -> NativeAddr {
    let [a, b] = last.to_be_bytes();
    NativeAddr::mac([2, 0, 0, 0, a, b])
}

fn node(addr: u16, name: &str, router: bool) -> StaticNode {
    StaticNode {
        address: Address(addr),
        native: mac(addr),
        name: Some(name.as_bytes().to_vec()),
        capabilities: if router {
            vec![Capability {
                code: CapabilityCode::Router as u8,
                params: Vec::new(),
            }]
        } else {
            Vec::new()
        },
        groups: Vec::new(),
    }
}

/// A port's counters: the drops by reason over the rest.
fn with_drops(c: PortStats, drops: &[(DropReason, u64)]) -> PortStats {
    let mut c = c;
    for (r, v) in drops {
        c.dropped[*r] = *v;
    }
    c
}

/// How far the sample's clock moves at each engine call, so that the
/// engine's timers run and its FIBs follow every change.
const STEP_MS: Time = 10_000;

impl Default for SampleBox {
    fn default() -> Self {
        SampleBox::new()
    }
}

impl SampleBox {
    /// The sample box.
    pub fn new() -> SampleBox {
        let hr = |addr: u16, san: u16, mtu: u32, nodes: Vec<StaticNode>| HrConfig {
            address: Address(addr),
            san_id: Address(san),
            mtu,
            cost: 1,
            native: mac(addr),
            static_nodes: nodes,
            auth: None,
        };
        let cfg = RouterConfig::new(
            "sample",
            vec![
                hr(
                    0x0115,
                    0x0201,
                    1500,
                    vec![node(0x0101, "h1", false), node(0x0117, "ac", true)],
                ),
                hr(0x0116, 0x0202, 9000, vec![node(0x0102, "h2", false)]),
            ],
        );
        let mut router = Router::new(cfg, 0).expect("the sample configuration is valid");
        // Let the engine compute its FIBs.
        router.on_timer(1);
        router.on_timer(router.next_timer().max(1));
        while router.poll_output().is_some() {}
        let c0 = with_drops(
            PortStats {
                received: 1000,
                rx_errors: 1,
                forwarded: 950,
                punted: 20,
                transmitted: 900,
                injected: 12,
                notices: 30,
                ..PortStats::default()
            },
            &[(DropReason::NoRoute, 25), (DropReason::Mtu, 5)],
        );
        let c1 = PortStats {
            received: 900,
            forwarded: 890,
            punted: 10,
            transmitted: 950,
            injected: 8,
            ..PortStats::default()
        };
        SampleBox {
            state: Mutex::new(State {
                router,
                station: Station::new(
                    AgentConfig::new(NodeType::Router, 0x5A3B_1E00_0000_0115, "sample"),
                    1_000_000,
                    0x5A3B,
                ),
                counters: vec![c0, c1],
                log_level: LogLevel::Info,
                reloads: 0,
                now: 1_000_000,
            }),
        }
    }

    /// The sample box behind its dispatcher: a [`crate::server::Handler`]
    /// to serve.
    pub fn handler() -> Arc<Dispatcher<SampleBox>> {
        Arc::new(Dispatcher::new(Arc::new(SampleBox::new())))
    }

    /// `reload` requests seen.
    pub fn reloads(&self) -> u64 {
        self.lock().reloads
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn plane(st: &State) -> PlaneStats {
        PlaneStats {
            punts: 30,
            notices: 30,
            injected: 20,
            fib_version: st.router.fib().version,
            ..PlaneStats::default()
        }
    }

    fn snapshot(st: &State) -> Snapshot {
        Snapshot::new(&st.counters, st.router.stats(), &SampleBox::plane(st))
    }
}

impl Backend for SampleBox {
    fn daemon_version(&self) -> String {
        format!("sample {}", env!("CARGO_PKG_VERSION"))
    }

    fn router_version(&self) -> String {
        "sample".into()
    }

    fn uptime_s(&self) -> u64 {
        42
    }

    fn with_engine<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Router, Time) -> T + Send + 'static,
    ) -> Result<T, AdminError> {
        let mut st = self.lock();
        st.now += STEP_MS;
        let now = st.now;
        let out = f(&mut st.router, now);
        // Let the engine recompute its FIBs, as the daemon's control
        // thread would.
        st.now += STEP_MS;
        let now = st.now;
        st.router.on_timer(now);
        while st.router.poll_output().is_some() {}
        Ok(out)
    }

    fn link_kinds(&self) -> Vec<LinkKind> {
        vec![LinkKind::Ethernet; 2]
    }

    fn port_setup(&self, p: PortId) -> (String, String) {
        (format!("eth{p}"), "ring".into())
    }

    fn counters(&self) -> Snapshot {
        SampleBox::snapshot(&self.lock())
    }

    fn clear_counters(&self, ports: Option<&[PortId]>) {
        let mut st = self.lock();
        let all: Vec<PortId> = PortId::all(st.counters.len()).collect();
        for p in ports.unwrap_or(&all) {
            if let Some(c) = st.counters.get_mut(p.index()) {
                *c = PortStats::default();
            }
        }
    }

    fn prometheus(&self) -> String {
        prometheus(&SampleBox::snapshot(&self.lock()))
    }

    fn config_toml(&self, _secrets: bool) -> String {
        format!("# sample box {}\n", self.lock().router.config().name)
    }

    fn log_level(&self) -> LogLevel {
        self.lock().log_level
    }

    fn set_log_level(&self, level: LogLevel) {
        self.lock().log_level = level;
    }

    fn reload(&self, req: &ReloadRequest, _by: Requester) -> Result<ReloadAnswer, AdminError> {
        if !req.dry_run {
            self.lock().reloads += 1;
        }
        Ok(ReloadAnswer {
            applied: !req.dry_run,
            ..ReloadAnswer::default()
        })
    }

    /// The sample's engine drains (its standing shows in `show router`);
    /// there is no daemon to stop.
    fn drain(&self, timeout_ms: Option<u64>) -> Result<serde_json::Value, String> {
        let mut s = self.lock();
        let now = s.now;
        s.router.drain(now);
        Ok(serde_json::json!({"draining": true, "timeout_ms": timeout_ms.unwrap_or(10_000)}))
    }

    fn mad(&self, request: Request, _budget: Duration) -> Result<MadResult, AdminError> {
        let mut guard = self.lock();
        let st = &mut *guard;
        st.now += 1;
        let now = st.now;
        let tries = request.retries + 1;
        let own = match request.target {
            Target::Address(a) => st.router.config().hrs.iter().any(|h| h.address == a),
            Target::Directed { .. } | Target::SourceRouted { .. } => false,
        };
        if !own {
            // Nothing is behind the sample box.
            return Ok(Err(Failure::Timeout { tries }));
        };
        let counters = SampleCounters(RefCell::new(&mut st.counters));
        let kinds = vec![LinkKind::Ethernet; 2];
        let mut node = RouterNode {
            router: &mut st.router,
            now,
            kinds: &kinds,
            counters: &counters,
        };
        // The station answers a request to the box itself on its own.
        let (id, o) = st.station.start(now, &mut node, request);
        if let Some((_, result)) = o.done.into_iter().find(|(i, _)| *i == id) {
            return Ok(result);
        }
        Ok(Err(Failure::Timeout { tries }))
    }

    fn management(&self) -> Result<ManagementInfo, AdminError> {
        let st = self.lock();
        let own = st.router.config().hrs.iter().map(|h| h.address).collect();
        Ok(ManagementInfo::of(&st.station, st.now, own))
    }

    fn capture(
        &self,
        _p: PortId,
        req: &CaptureRequest,
    ) -> Result<Box<dyn CaptureSource + '_>, AdminError> {
        Ok(Box::new(SampleCapture {
            left: req.count.unwrap_or(3).min(1000),
            sent: 0,
            drops: req.drops,
        }))
    }

    fn trace_packets(
        &self,
        port: Option<PortId>,
        req: &TraceRequest,
    ) -> Result<Box<dyn TraceSource + '_>, AdminError> {
        Ok(Box::new(SampleTrace {
            left: req.count.min(1000),
            sent: 0,
            port,
            dst: req.dst,
            only: req.only,
        }))
    }
}

/// The sample box's counters for its agent.
struct SampleCounters<'a>(RefCell<&'a mut Vec<PortStats>>);

impl CounterSource for SampleCounters<'_> {
    fn counters(&self, port: PortId) -> Option<PortStats> {
        self.0.borrow().get(port.index()).copied()
    }

    fn clear(&self, port: PortId) {
        if let Some(c) = self.0.borrow_mut().get_mut(port.index()) {
            *c = PortStats::default();
        }
    }
}

/// A capture of the sample box: user packets from h1 to h2 with 8 data
/// bytes, every other one dropped for no-route in a capture of drops.
struct SampleCapture {
    left: u64,
    sent: u64,
    drops: bool,
}

impl CaptureSource for SampleCapture {
    fn next(&mut self) -> CaptureNext {
        if self.left == 0 {
            return CaptureNext::End;
        }
        let i = self.sent;
        self.left -= 1;
        self.sent += 1;
        let data = PacketRepr {
            l2rhs: Vec::new(),
            header: HeaderRepr {
                dst: Address(0x0102),
                packet_type: PacketType(0x0100),
                src: Address(0x0101),
                ..HeaderRepr::default()
            },
            data: vec![i as u8; 8],
            ei: 0,
        }
        .to_bytes()
        .expect("a valid packet");
        CaptureNext::Packet {
            ts_ns: 1_700_000_000_000_000_000 + i * 1_000_000,
            len: data.len() as u32,
            data,
            reason: (self.drops && i % 2 == 1).then_some(DropReason::NoRoute),
        }
    }

    fn lost(&self) -> u64 {
        0
    }
}

/// A trace of the sample box: packets from h1 (port 0) in turn forwarded
/// to h2 by L3, forwarded by an L2RH, punted to the box, and dropped for
/// no route, as far as the request's filters take them.
struct SampleTrace {
    left: u32,
    sent: u64,
    port: Option<PortId>,
    dst: Option<Address>,
    only: Option<TraceKind>,
}

impl SampleTrace {
    /// The `i`th packet of the cycle.
    fn packet(&self, i: u64) -> TracedPacket {
        let in_port = self.port.unwrap_or(PortId(0));
        let hop = TracedHop {
            port: PortId(1),
            hr: Address(0x0116),
            native: mac(0x0102).to_string(),
        };
        let l2 = self.only == Some(TraceKind::L2) || (self.only.is_none() && i % 4 == 1);
        let (dst, lookup, next_hop, verdict) = if l2 {
            (
                0x0102,
                TracedLookup::L2 {
                    egress_hr: Some(Address(0x0116)),
                },
                Some(hop),
                TracedVerdict::Forwarded { redirect: false },
            )
        } else {
            match i % 4 {
                2 => (
                    0x0115,
                    TracedLookup::L3 {
                        fib_version: 2,
                        entry: TracedEntry::Local,
                    },
                    None,
                    TracedVerdict::Punted {
                        class: rrp::PuntClass::Local.name().into(),
                    },
                ),
                3 => (
                    0x0777,
                    TracedLookup::L3 {
                        fib_version: 2,
                        entry: TracedEntry::NoRoute,
                    },
                    None,
                    TracedVerdict::Dropped {
                        reason: DropReason::NoRoute.name().into(),
                    },
                ),
                _ => (
                    0x0102,
                    TracedLookup::L3 {
                        fib_version: 2,
                        entry: TracedEntry::NextHop(2),
                    },
                    Some(hop),
                    TracedVerdict::Forwarded { redirect: false },
                ),
            }
        };
        let forwarded = matches!(verdict, TracedVerdict::Forwarded { .. });
        let egress = match &verdict {
            TracedVerdict::Forwarded { .. } => Some(PortId(1)),
            TracedVerdict::Punted { .. } => Some(in_port),
            _ => None,
        };
        TracedPacket {
            ts_ns: 1_700_000_000_000_000_000 + i * 1_000_000,
            worker: 0,
            port: in_port,
            hr: Address(0x0115 + in_port.0),
            len: if l2 { 48 } else { 40 },
            src: Some(Address(0x0101)),
            dst: Some(self.dst.unwrap_or(Address(dst))),
            lookup,
            next_hop,
            ei_before: Some(i),
            ei_after: forwarded.then_some(i << 1),
            egress,
            verdict,
        }
    }
}

impl TraceSource for SampleTrace {
    fn next(&mut self) -> TraceNext {
        if self.left == 0 {
            return TraceNext::End;
        }
        self.left -= 1;
        let p = self.packet(self.sent);
        self.sent += 1;
        TraceNext::Packet(Box::new(p))
    }

    fn lost(&self) -> u64 {
        0
    }
}
