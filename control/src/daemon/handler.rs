//! The daemon's answers to admin requests (docs/admin-protocol.md): reads
//! and changes run on the control thread between two passes, counters come
//! from the workers' published blocks, captures from the workers' capture
//! rings.

use rrp::PortId;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dataplane::{CaptureControl, CaptureWhat, StatsBlock};
use rrp::Address;
use rrp::router::StaticNode;
use serde_json::{Value, json};

use crate::admin::proto::{
    CaptureEvent, CaptureRequest, CaptureSummary, CapturedPacket, Clear, PROTOCOL_VERSION,
    PortState, RouteOp, Show, StatsFormat,
};
use crate::admin::view::{
    CounterRow, PortRow, PrometheusText, Stats, VersionInfo, View, parse_native,
};
use crate::admin::{AdminError, Command, Handler, Privilege, StreamOut};
use crate::config::{Config, LogLevel};
use crate::daemon::logging::LogHandle;
use crate::plane::PlaneHandle;
use crate::stats::{Baseline, PlaneStatsSnapshot, Snapshot, prometheus};

/// How long an admin request may wait for the control thread.
const CALL: Duration = Duration::from_secs(2);

/// The daemon's admin handler.
pub struct DaemonHandler {
    cfg: Mutex<Config>,
    path: PathBuf,
    plane: Arc<PlaneHandle>,
    blocks: Vec<Arc<StatsBlock>>,
    capture: CaptureControl,
    capturing: Mutex<()>,
    udp: Vec<bool>,
    start: Instant,
    log: LogHandle,
    baseline: Mutex<Option<Baseline>>,
    stats_file: PathBuf,
}

fn to_json<T: serde::Serialize>(v: T) -> Result<Value, AdminError> {
    serde_json::to_value(v).map_err(|e| AdminError::failed(e.to_string()))
}

fn plane_err(e: crate::plane::PlaneError) -> AdminError {
    AdminError::failed(e.to_string())
}

impl DaemonHandler {
    /// A handler for the running daemon.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        cfg: Config,
        path: PathBuf,
        plane: Arc<PlaneHandle>,
        blocks: Vec<Arc<StatsBlock>>,
        capture: CaptureControl,
        udp: Vec<bool>,
        start: Instant,
        log: LogHandle,
        stats_file: PathBuf,
    ) -> DaemonHandler {
        DaemonHandler {
            cfg: Mutex::new(cfg),
            path,
            plane,
            blocks,
            capture,
            capturing: Mutex::new(()),
            udp,
            start,
            log,
            baseline: Mutex::new(None),
            stats_file,
        }
    }

    /// The counters area's path.
    pub fn stats_file(&self) -> &PathBuf {
        &self.stats_file
    }

    /// Every counter as of now (not subtracting a baseline).
    pub fn snapshot(&self) -> Snapshot {
        let ports = dataplane::counters::sum(&self.blocks);
        let rstats = self
            .plane
            .call(CALL, |cp| cp.engine().stats().clone())
            .unwrap_or_default();
        Snapshot::new(
            &ports,
            &rstats,
            &PlaneStatsSnapshot::load(&self.plane.stats),
        )
    }

    /// The Prometheus exposition (monotonic: never minus the baseline).
    pub fn prometheus(&self) -> String {
        prometheus(&self.snapshot())
    }

    fn displayed(&self) -> Snapshot {
        let s = self.snapshot();
        match &*self.baseline.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(b) => s.minus(b),
            None => s,
        }
    }

    fn view<T: Send + 'static>(
        &self,
        f: impl FnOnce(&View<'_>) -> Result<T, AdminError> + Send + 'static,
    ) -> Result<T, AdminError> {
        let udp = self.udp.clone();
        self.plane
            .call(CALL, move |cp| f(&View::new(cp.engine(), &udp)))
            .map_err(plane_err)?
    }

    /// Re-reads the configuration file and applies what can change while
    /// running; refuses the rest (the old configuration keeps running).
    pub fn reload(&self) -> Result<Vec<String>, String> {
        let text = std::fs::read_to_string(&self.path)
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        let new = Config::check_toml(&text).map_err(|errs| {
            errs.iter()
                .map(|e| format!("{}: {e}", self.path.display()))
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        let mut cfg = self.cfg.lock().unwrap_or_else(|e| e.into_inner());
        let plan = cfg.diff_for_reload(&new).map_err(|m| m.join("; "))?;
        let timers = plan.timers.unwrap_or(new.timers);
        let limits = plan.limits.unwrap_or(new.limits);
        let rates = new.rates.error_rates();
        let chan = new.rates.channel_config();
        let statics = plan.statics.clone();
        self.plane
            .call(CALL, move |cp| -> Result<(), String> {
                cp.engine_mut()
                    .set_tunables(timers, limits, rates)
                    .map_err(|e| e.to_string())?;
                cp.set_rates(chan.punt_rate, chan.notice_rate);
                for (port, nodes) in statics {
                    let old: Vec<Address> = cp
                        .engine()
                        .config()
                        .hrs
                        .get(PortId::new(port))
                        .map(|h| h.static_nodes.iter().map(|n| n.address).collect())
                        .unwrap_or_default();
                    for a in old {
                        if !nodes.iter().any(|n| n.address == a) {
                            cp.engine_mut().remove_static(PortId::new(port), a);
                        }
                    }
                    for n in nodes {
                        cp.engine_mut().add_static(PortId::new(port), n);
                    }
                }
                Ok(())
            })
            .map_err(|e| e.to_string())??;
        if let Some(l) = plan.log {
            self.log.set_level(l.level);
        }
        *cfg = new;
        Ok(plan.changes)
    }
}

fn level(l: crate::admin::proto::LogLevel) -> LogLevel {
    use crate::admin::proto::LogLevel as P;
    match l {
        P::Error => LogLevel::Error,
        P::Warn => LogLevel::Warn,
        P::Info => LogLevel::Info,
        P::Debug => LogLevel::Debug,
        P::Trace => LogLevel::Trace,
    }
}

impl Handler for DaemonHandler {
    fn handle(&self, cmd: &Command, _privilege: Privilege) -> Result<Value, AdminError> {
        match cmd {
            Command::Show(s) => {
                let s = s.clone();
                match s {
                    Show::Router {} => {
                        let up = self.start.elapsed().as_secs();
                        self.view(move |v| to_json(v.router_info(env!("CARGO_PKG_VERSION"), up)))
                    }
                    Show::Config {} => {
                        let cfg = self.cfg.lock().unwrap_or_else(|e| e.into_inner());
                        Ok(json!({"toml": cfg.to_toml()}))
                    }
                    Show::Hrs {} => self.view(|v| to_json(v.hrs())),
                    Show::Ports {} => {
                        let snap = self.displayed();
                        let cfg = self.cfg.lock().unwrap_or_else(|e| e.into_inner()).clone();
                        self.view(move |v| {
                            let rows: Vec<PortRow> = v
                                .hrs()
                                .into_iter()
                                .map(|h| {
                                    let p = usize::from(h.port);
                                    let c =
                                        snap.ports.get(p).map(|s| s.counters()).unwrap_or_default();
                                    let hc = &cfg.hrs[p];
                                    PortRow {
                                        port: h.port,
                                        name: hc.label(p),
                                        backend: hc.port.backend().as_str().into(),
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
                        })
                    }
                    Show::Lrt { port } => self.view(move |v| to_json(v.lrt(port)?)),
                    Show::Rts { port, san } => self.view(move |v| to_json(v.rts(port, san)?)),
                    Show::Routes { port } => self.view(move |v| to_json(v.routes(port)?)),
                    Show::Fib { port } => self.view(move |v| to_json(v.fib(port)?)),
                    Show::Neighbors { port } => self.view(move |v| to_json(v.neighbors(port)?)),
                    Show::Counters { port } => {
                        let snap = self.displayed();
                        let ports = self.view(move |v| v.ports(port))?;
                        let rows: Vec<CounterRow> = ports
                            .into_iter()
                            .map(|p| {
                                CounterRow::new(
                                    p,
                                    &snap
                                        .ports
                                        .get(p.index())
                                        .map(|s| s.counters())
                                        .unwrap_or_default(),
                                )
                            })
                            .collect();
                        to_json(rows)
                    }
                    Show::Route { dst, port } => self.view(move |v| to_json(v.route(dst, port)?)),
                }
            }
            Command::Port { port, state } => {
                let (port, state) = (*port, *state);
                self.plane
                    .call(CALL, move |cp| -> Result<Value, AdminError> {
                        let udp = vec![false; cp.engine().config().hrs.len()];
                        let p = View::new(cp.engine(), &udp).ports(Some(port))?[0];
                        let now = cp.now();
                        match state {
                            PortState::Up => cp.engine_mut().port_up(now, p),
                            PortState::Down => cp.engine_mut().port_down(now, p),
                        }
                        let hr = cp.engine().config().hrs[p].address;
                        Ok(json!({"port": p, "hr": crate::admin::proto::Addr(hr.0), "state": state}))
                    })
                    .map_err(plane_err)?
            }
            Command::Route(op) => {
                let op = op.clone();
                self.plane
                    .call(CALL, move |cp| -> Result<Value, AdminError> {
                        let udp = vec![false; cp.engine().config().hrs.len()];
                        match op {
                            RouteOp::Add {
                                port,
                                dst,
                                native,
                                name,
                                router,
                            } => {
                                let p = View::new(cp.engine(), &udp).ports(Some(port))?[0];
                                let native = parse_native(&native).ok_or_else(|| {
                                    AdminError::bad_request(format!(
                                        "not a native address: {native:?}"
                                    ))
                                })?;
                                let node = StaticNode {
                                    address: Address(dst.0),
                                    native,
                                    name: name.map(String::into_bytes),
                                    capabilities: if router {
                                        vec![rrp::wire::Capability {
                                            code: rrp::CapabilityCode::Router as u8,
                                            params: vec![],
                                        }]
                                    } else {
                                        vec![]
                                    },
                                };
                                if !cp.engine_mut().add_static(p, node) {
                                    return Err(AdminError::bad_request(format!(
                                        "{dst} cannot be a static entry on port {p}"
                                    )));
                                }
                                Ok(json!({"port": p, "dst": dst, "op": "add"}))
                            }
                            RouteOp::Del { port, dst } => {
                                let p = View::new(cp.engine(), &udp).ports(Some(port))?[0];
                                if !cp.engine_mut().remove_static(p, Address(dst.0)) {
                                    return Err(AdminError::not_found(format!(
                                        "no static entry for {dst} on port {p}"
                                    )));
                                }
                                Ok(json!({"port": p, "dst": dst, "op": "del"}))
                            }
                        }
                    })
                    .map_err(plane_err)?
            }
            Command::Clear(Clear::Counters { port }) => {
                let port = *port;
                let ports = self.view(move |v| v.ports(port))?;
                let now = self.snapshot();
                let mut b = self.baseline.lock().unwrap_or_else(|e| e.into_inner());
                match (port, b.as_mut()) {
                    (Some(_), Some(base)) => {
                        for p in &ports {
                            base.clear_port(&now, p.index());
                        }
                    }
                    (Some(_), None) => {
                        let mut base = Baseline::new(&Snapshot::new(
                            &vec![dataplane::PortCounters::default(); now.ports.len()],
                            &Default::default(),
                            &PlaneStatsSnapshot::default(),
                        ));
                        for p in &ports {
                            base.clear_port(&now, p.index());
                        }
                        *b = Some(base);
                    }
                    (None, _) => *b = Some(Baseline::new(&now)),
                }
                Ok(json!({"cleared": ports}))
            }
            Command::LogLevel { level: l } => {
                let old = self.log.level();
                self.log.set_level(level(*l));
                Ok(json!({"level": l, "previous": old.as_str()}))
            }
            Command::Reload {} => match self.reload() {
                Ok(changes) => Ok(json!({"reloaded": true, "changes": changes})),
                Err(e) => Err(AdminError::failed(e)),
            },
            Command::Stats { format } => match format {
                StatsFormat::Json => {
                    let s = self.displayed();
                    to_json(Stats {
                        uptime_s: self.start.elapsed().as_secs(),
                        ports: s
                            .ports
                            .iter()
                            .enumerate()
                            .map(|(p, c)| CounterRow::new(PortId::new(p), &c.counters()))
                            .collect(),
                        plane: serde_json::from_value(to_json(s.plane)?).unwrap_or_default(),
                    })
                }
                StatsFormat::Prometheus => to_json(PrometheusText {
                    text: self.prometheus(),
                }),
            },
            Command::Version {} => to_json(VersionInfo {
                daemon: format!("mwrouterd {}", env!("CARGO_PKG_VERSION")),
                protocol: PROTOCOL_VERSION,
            }),
            Command::Capture { .. } => Err(AdminError::bad_request("capture streams its answer")),
        }
    }

    fn handle_stream(
        &self,
        cmd: &Command,
        privilege: Privilege,
        out: &mut dyn StreamOut,
    ) -> Result<Value, AdminError> {
        let req = match CaptureRequest::of(cmd) {
            None => return self.handle(cmd, privilege),
            Some(r) => r?,
        };
        let Ok(_one) = self.capturing.try_lock() else {
            return Err(AdminError::failed("a capture is already running"));
        };
        let port = req.port;
        let (p, hr) = self.view(move |v| {
            let p = v.ports(Some(port))?[0];
            Ok((p, v.hr_addrs()[p]))
        })?;
        let (snaplen, dir) = (req.snaplen, req.direction());
        let linktype = 147;
        out.send(to_json(CaptureEvent::Start {
            port: p.0,
            hr,
            linktype,
            snaplen,
        })?)?;
        self.capture.arm(
            p,
            if req.drops {
                CaptureWhat::Dropped
            } else if req.transmitted {
                CaptureWhat::Transmitted
            } else {
                CaptureWhat::Received
            },
        );
        let mut summary = CaptureSummary {
            ended: "count".into(),
            ..Default::default()
        };
        let lost0 = self.capture.lost();
        let limit = req.count.unwrap_or(u64::MAX);
        let mut idle_since = Instant::now();
        while summary.captured < limit {
            if out.closed() {
                summary.ended = "client".into();
                break;
            }
            let Some((w, c)) = self.capture.next() else {
                if idle_since.elapsed() > Duration::from_millis(200) {
                    // Check now and then whether the client is still there.
                    idle_since = Instant::now();
                }
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            idle_since = Instant::now();
            let ts = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let mut pkt = CapturedPacket::new(ts, dir, &c.data, snaplen);
            pkt.len = c.len;
            if let Some(r) = c.reason {
                pkt.drop = Some(r.name().into());
                *summary.drops.entry(r.name().into()).or_default() += 1;
            }
            self.capture.recycle(w, c);
            if out.send(to_json(CaptureEvent::Packet(pkt))?).is_err() {
                summary.ended = "client".into();
                break;
            }
            summary.captured += 1;
        }
        self.capture.disarm();
        while let Some((w, c)) = self.capture.next() {
            self.capture.recycle(w, c);
        }
        summary.lost = self.capture.lost() - lost0;
        to_json(summary)
    }
}
