//! A [`Handler`] that answers every command from a small, real RRP engine
//! and made-up counters: the examples of docs/admin-protocol.md, the tests
//! of the server and of `mwctl`, and a way to try `mwctl` without a daemon.
//!
//! The box `sample` has two HRs: port 0, HR 0x0115 on SAN 0x0201 (MTU
//! 1500) with static nodes 0x0101 (`h1`) and 0x0117 (router `ac`); port 1,
//! HR 0x0116 on SAN 0x0202 (MTU 9000) with static node 0x0102 (`h2`).

use rrp::PortId;
use std::sync::Mutex;

use dataplane::PortCounters;
use rrp::Address;
use rrp::DropReason;
use rrp::NativeAddr;
use rrp::kind::{CapabilityCode, PacketType};
use rrp::router::{HrConfig, Router, RouterConfig, StaticNode};
use rrp::wire::header::HeaderRepr;
use rrp::wire::packet::PacketRepr;
use rrp::wire::record::Capability;
use serde_json::{Value, json};

use super::proto::{
    AdminError, CaptureEvent, CaptureRequest, CaptureSummary, CapturedPacket, Clear, Command,
    LogLevel, PROTOCOL_VERSION, PortState, Privilege, RouteOp, Show, StatsFormat,
};
use super::server::{Handler, StreamOut};
use super::view::{CounterRow, PortRow, PrometheusText, Stats, VersionInfo, View, parse_native};
use crate::stats::{PlaneStatsSnapshot, Snapshot, prometheus};

/// The sample handler.
pub struct SampleHandler {
    state: Mutex<State>,
}

struct State {
    cfg: RouterConfig,
    router: Router,
    counters: Vec<PortCounters>,
    log_level: LogLevel,
    reloads: u64,
    now: rrp::router::Time,
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
    }
}

fn build(cfg: &RouterConfig) -> Result<Router, AdminError> {
    let mut r = Router::new(cfg.clone(), 0).map_err(|e| AdminError::failed(e.to_string()))?;
    // Let the engine compute its FIBs.
    r.on_timer(1);
    r.on_timer(r.next_timer().max(1));
    while r.poll_output().is_some() {}
    Ok(r)
}

impl Default for SampleHandler {
    fn default() -> Self {
        SampleHandler::new()
    }
}

impl SampleHandler {
    /// The sample box.
    pub fn new() -> SampleHandler {
        let hr = |addr: u16, san: u16, mtu: u32, nodes: Vec<StaticNode>| HrConfig {
            address: Address(addr),
            san_id: Address(san),
            mtu,
            cost: 1,
            native: mac(addr),
            static_nodes: nodes,
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
        let router = build(&cfg).expect("the sample configuration is valid");
        let mut c0 = PortCounters {
            received: 1000,
            rx_errors: 1,
            forwarded: 950,
            punted: 20,
            transmitted: 900,
            injected: 12,
            notices: 30,
            ..Default::default()
        };
        c0.dropped[DropReason::NoRoute as usize] = 25;
        c0.dropped[DropReason::Mtu as usize] = 5;
        let c1 = PortCounters {
            received: 900,
            forwarded: 890,
            punted: 10,
            transmitted: 950,
            injected: 8,
            ..Default::default()
        };
        SampleHandler {
            state: Mutex::new(State {
                cfg,
                router,
                counters: vec![c0, c1],
                log_level: LogLevel::Info,
                reloads: 0,
                now: 1_000_000,
            }),
        }
    }

    /// The current log level (set by `log_level`).
    pub fn log_level(&self) -> LogLevel {
        self.lock().log_level
    }

    /// `reload` requests seen.
    pub fn reloads(&self) -> u64 {
        self.lock().reloads
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn to_json<T: serde::Serialize>(v: T) -> Result<Value, AdminError> {
    serde_json::to_value(v).map_err(|e| AdminError::failed(e.to_string()))
}

const UDP: [bool; 2] = [false, false];

impl State {
    fn stats(&self) -> Stats {
        Stats {
            uptime_s: 42,
            ports: self
                .counters
                .iter()
                .enumerate()
                .map(|(p, c)| CounterRow::new(PortId::new(p), c))
                .collect(),
            plane: [
                ("punts", 30),
                ("notices", 30),
                ("injected", 20),
                ("fib_version", self.router.fib().version),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        }
    }
}

impl Handler for SampleHandler {
    fn handle(&self, cmd: &Command, _privilege: Privilege) -> Result<Value, AdminError> {
        let mut st = self.lock();
        let view = View::new(&st.router, &UDP);
        match cmd {
            Command::Show(s) => match s {
                Show::Router {} => to_json(view.router_info("sample", 42)),
                Show::Config {} => Ok(json!({"toml": format!("# sample box {}\n", st.cfg.name)})),
                Show::Hrs {} => to_json(view.hrs()),
                Show::Ports {} => {
                    let rows: Vec<PortRow> = view
                        .hrs()
                        .into_iter()
                        .map(|h| {
                            let c = &st.counters[usize::from(h.port)];
                            PortRow {
                                port: h.port,
                                name: format!("eth{}", h.port),
                                backend: "ring".into(),
                                hr: h.hr,
                                up: h.up,
                                native: h.native,
                                mtu: h.mtu,
                                received: c.received,
                                transmitted: c.transmitted,
                                dropped: c.dropped_total(),
                            }
                        })
                        .collect();
                    to_json(rows)
                }
                Show::Lrt { port } => to_json(view.lrt(*port)?),
                Show::Rts { port, san } => to_json(view.rts(*port, *san)?),
                Show::Routes { port } => to_json(view.routes(*port)?),
                Show::Fib { port } => to_json(view.fib(*port)?),
                Show::Neighbors { port } => to_json(view.neighbors(*port)?),
                Show::Counters { port } => {
                    let rows: Vec<CounterRow> = view
                        .ports(*port)?
                        .into_iter()
                        .map(|p| CounterRow::new(p, &st.counters[p.index()]))
                        .collect();
                    to_json(rows)
                }
                Show::Route { dst, port } => to_json(view.route(*dst, *port)?),
            },
            Command::Port { port, state } => {
                let p = view.ports(Some(*port))?[0];
                let hr = view.hr_addrs()[p];
                st.now += 10_000;
                let now = st.now;
                match state {
                    PortState::Up => st.router.port_up(now, p),
                    PortState::Down => st.router.port_down(now, p),
                }
                // Let the engine recompute its FIBs.
                st.now += 10_000;
                let now = st.now;
                st.router.on_timer(now);
                while st.router.poll_output().is_some() {}
                Ok(json!({"port": p, "hr": hr, "state": state}))
            }
            Command::Route(op) => {
                let (p, dst) = match op {
                    RouteOp::Add { port, dst, .. } | RouteOp::Del { port, dst } => {
                        (view.ports(Some(*port))?[0], *dst)
                    }
                };
                let mut cfg = st.cfg.clone();
                let nodes = &mut cfg.hrs[p].static_nodes;
                let had = nodes.iter().position(|n| n.address.0 == dst.0);
                match op {
                    RouteOp::Add {
                        native,
                        name,
                        router,
                        ..
                    } => {
                        let native = parse_native(native).ok_or_else(|| {
                            AdminError::bad_request(format!("not a native address: {native:?}"))
                        })?;
                        let mut n = node(dst.0, name.as_deref().unwrap_or(""), *router);
                        n.native = native;
                        if name.is_none() {
                            n.name = None;
                        }
                        match had {
                            Some(i) => nodes[i] = n,
                            None => nodes.push(n),
                        }
                    }
                    RouteOp::Del { .. } => match had {
                        Some(i) => {
                            nodes.remove(i);
                        }
                        None => {
                            return Err(AdminError::not_found(format!(
                                "no static entry for {dst} on port {p}"
                            )));
                        }
                    },
                }
                let router = build(&cfg)?;
                st.cfg = cfg;
                st.router = router;
                let op_name = match op {
                    RouteOp::Add { .. } => "add",
                    RouteOp::Del { .. } => "del",
                };
                Ok(json!({"port": p, "dst": dst, "op": op_name, "replaced": had.is_some()}))
            }
            Command::Clear(Clear::Counters { port }) => {
                let ports = view.ports(*port)?;
                for p in &ports {
                    st.counters[p.index()] = PortCounters::default();
                }
                Ok(json!({"cleared": ports}))
            }
            Command::LogLevel { level } => {
                let old = st.log_level;
                st.log_level = *level;
                Ok(json!({"level": level, "previous": old}))
            }
            Command::Reload {} => {
                st.reloads += 1;
                Ok(json!({"reloaded": true, "changes": []}))
            }
            Command::Stats { format } => {
                let s = st.stats();
                match format {
                    StatsFormat::Json => to_json(s),
                    StatsFormat::Prometheus => to_json(PrometheusText {
                        // The daemon's exposition, of the sample's counters.
                        text: prometheus(&Snapshot::new(
                            &st.counters,
                            st.router.stats(),
                            &PlaneStatsSnapshot::default(),
                        )),
                    }),
                }
            }
            Command::Version {} => to_json(VersionInfo {
                daemon: format!("sample {}", env!("CARGO_PKG_VERSION")),
                protocol: PROTOCOL_VERSION,
            }),
            Command::Capture { .. } => Err(AdminError::bad_request("capture streams")),
        }
    }

    fn handle_stream(
        &self,
        cmd: &Command,
        _privilege: Privilege,
        out: &mut dyn StreamOut,
    ) -> Result<Value, AdminError> {
        let req = match CaptureRequest::of(cmd) {
            None => return self.handle(cmd, _privilege),
            Some(r) => r?,
        };
        let (p, hr) = {
            let st = self.lock();
            let view = View::new(&st.router, &UDP);
            let p = view.ports(Some(req.port))?[0];
            (p, view.hr_addrs()[p])
        };
        let (snaplen, drops) = (req.snaplen, &req.drops);
        out.send(to_json(CaptureEvent::Start {
            port: p.0,
            hr,
            linktype: 147,
            snaplen,
        })?)?;
        let n = req.count.unwrap_or(3).min(1000);
        let mut summary = CaptureSummary {
            ended: "count".into(),
            ..Default::default()
        };
        for i in 0..n {
            if out.closed() {
                summary.ended = "client".into();
                break;
            }
            // A user packet from h1 to h2 with 8 data bytes.
            let bytes = PacketRepr {
                l2rhs: Vec::new(),
                header: HeaderRepr {
                    dst: Address(0x0102),
                    priority: 0,
                    packet_type: PacketType(0x0100),
                    type_ext: 0,
                    endian: Default::default(),
                    src: Address(0x0101),
                    free: 0,
                },
                data: vec![i as u8; 8],
                ei: 0,
            }
            .to_bytes()
            .map_err(|e| AdminError::failed(e.to_string()))?;
            let mut pkt = CapturedPacket::new(
                1_700_000_000_000_000_000 + i * 1_000_000,
                req.direction(),
                &bytes,
                snaplen,
            );
            if *drops && i % 2 == 1 {
                pkt.drop = Some(DropReason::NoRoute.name().into());
                *summary
                    .drops
                    .entry(DropReason::NoRoute.name().into())
                    .or_default() += 1;
            }
            if out.send(to_json(CaptureEvent::Packet(pkt))?).is_err() {
                summary.ended = "client".into();
                break;
            }
            summary.captured += 1;
        }
        to_json(summary)
    }
}
