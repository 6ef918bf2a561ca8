//! The one place where admin commands are answered (docs/admin-protocol.md
//! "Commands"): [`Dispatcher`] matches every [`Command`] once and asks a
//! [`Backend`] for what only the box knows (its RRP engine, its ports, its
//! counters, its configuration, its captures). The daemon is one backend,
//! [`crate::sample::SampleBox`] another; neither answers commands itself, so
//! the answers cannot drift apart.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rrp::router::{Router, StaticNode, Time};
use rrp::wire::Capability;
use rrp::{CapabilityCode, DropReason, LinkKind, NativeAddr, PortId};
use serde_json::{Value, json};

use mgmt::client::Request as MgmtRequest;

use crate::mad::{self, MadQuery, MadResult};
use crate::policy::Peer;
use crate::proto::{
    AdminError, CaptureEvent, CaptureRequest, CaptureSummary, CapturedPacket, Clear, Command,
    HistoryEntry, LogLevel, PROTOCOL_VERSION, PortState, Privilege, ReloadAnswer, ReloadRequest,
    Requester, RouteOp, Show, StatsFormat, TraceEvent, TraceRequest, TraceSummary, TracedPacket,
    WriteAnswer,
};
use crate::server::{Handler, StreamOut};
use crate::stats::Snapshot;
use crate::view::{
    CounterRow, ManagementInfo, McastInfo, PartitionDropRow, PortRow, PrometheusText, PuntInfo,
    Stats, VersionInfo, View, WorkerRow,
};
use rrp::counters::{CounterSet, GroupStats};

/// pcap link type of captured packets: raw MessageWay packets
/// (LINKTYPE_USER0), as the forwarding path sees them.
const CAPTURE_LINKTYPE: u32 = rrp::encap::LINKTYPE_MESSAGEWAY;

/// What the dispatcher needs from the box it answers for.
pub trait Backend: Send + Sync + 'static {
    /// The name and version `version` reports (`mwrouterd 0.1.0`).
    fn daemon_version(&self) -> String;

    /// The version `show router` reports.
    fn router_version(&self) -> String;

    /// Seconds since the box started.
    fn uptime_s(&self) -> u64;

    /// Runs `f` on the RRP engine, on the thread that owns it, with the
    /// engine's current time; what `f` changes takes effect as the engine's
    /// outputs are carried out.
    fn with_engine<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Router, Time) -> T + Send + 'static,
    ) -> Result<T, AdminError>;

    /// The kind of each port's SAN, in port order (how native addresses
    /// are written).
    fn link_kinds(&self) -> Vec<LinkKind>;

    /// Port `p`'s configured name and backend (`show ports`).
    fn port_setup(&self, p: PortId) -> (String, String);

    /// Which worker (or workers) receive from port `p`: "worker 0",
    /// "workers 0-1 (flow rules)"; empty where there is one worker.
    fn port_receive(&self, _p: PortId) -> String {
        String::new()
    }

    /// The counters as displays show them: less what `clear counters`
    /// saved.
    fn counters(&self) -> Snapshot;

    /// `clear counters`: of the ports given, or of every port (`None`).
    fn clear_counters(&self, ports: Option<&[PortId]>);

    /// The Prometheus exposition of the counters (never cleared).
    fn prometheus(&self) -> String;

    /// The configuration in use, as TOML; `secrets`: with the management
    /// key (for admin peers; others get it left out).
    fn config_toml(&self, secrets: bool) -> String;

    /// The log level in use.
    fn log_level(&self) -> LogLevel;

    /// Sets the log level.
    fn set_log_level(&self, level: LogLevel);

    /// Re-reads the configuration and applies what can change while
    /// running (or, for a dry run, only plans it), for `by`: the plan and
    /// what was done, or why nothing was.
    fn reload(&self, req: &ReloadRequest, by: Requester) -> Result<ReloadAnswer, AdminError>;

    /// Confirms a reload that waits for it (`reload` with `confirm_s`).
    fn commit(&self, by: Requester) -> Result<ReloadAnswer, AdminError> {
        let _ = by;
        Err(AdminError::unsupported("this box keeps no configurations"))
    }

    /// Returns to the `n`th previous kept configuration.
    fn rollback(&self, n: u32, force: bool, by: Requester) -> Result<ReloadAnswer, AdminError> {
        let _ = (n, force, by);
        Err(AdminError::unsupported("this box keeps no configurations"))
    }

    /// The kept configurations, newest first.
    fn history(&self) -> Result<Vec<HistoryEntry>, AdminError> {
        Err(AdminError::unsupported("this box keeps no configurations"))
    }

    /// Saves the running configuration (run-time changes included) to the
    /// configuration file, or to `file`.
    fn write_config(&self, file: Option<&str>, by: Requester) -> Result<WriteAnswer, AdminError> {
        let _ = (file, by);
        Err(AdminError::unsupported(
            "this box has no configuration file",
        ))
    }

    /// Begins a drain that stops the daemon (docs/daemon.md "Draining
    /// before maintenance"): what the drain will wait for, or why it did
    /// not begin. Boxes without one answer `unsupported`.
    fn drain(&self, timeout_ms: Option<u64>) -> Result<Value, String> {
        let _ = timeout_ms;
        Err("unsupported: this box does not drain".into())
    }

    /// Sends a management request with the box's management client and
    /// waits for its answer (at most `budget`). Boxes without in-band
    /// management answer `unsupported`.
    fn mad(&self, request: MgmtRequest, budget: Duration) -> Result<MadResult, AdminError> {
        let _ = (request, budget);
        Err(AdminError::unsupported(
            "this box has no in-band management",
        ))
    }

    /// `show management`.
    fn management(&self) -> Result<ManagementInfo, AdminError> {
        Err(AdminError::unsupported(
            "this box has no in-band management",
        ))
    }

    /// The punt classes' budgets per worker (`show punt`), where the box
    /// has a dataplane of its own (by default none).
    fn punt_budgets(&self) -> Option<rrp::PuntBudgets> {
        None
    }

    /// `show workers`: the dataplane's workers (none where the box has no
    /// worker threads of its own).
    fn workers(&self) -> Vec<WorkerRow> {
        Vec::new()
    }

    /// `show mcast`: the engine's groups, with the dataplane's per-group
    /// counters where the box has them (by default none: zero).
    fn mcast(&self) -> Result<McastInfo, AdminError> {
        self.with_engine(|r, _| McastInfo::build(&r.mcast(), |_| None, GroupStats::default()))
    }

    /// Starts the capture `req` on port `p`: packets until the source is
    /// dropped.
    fn capture(
        &self,
        p: PortId,
        req: &CaptureRequest,
    ) -> Result<Box<dyn CaptureSource + '_>, AdminError>;

    /// Starts the packet trace `req` (its port, if it names one, is `port`):
    /// records until the source is dropped. Boxes without a dataplane of
    /// their own answer `unsupported`.
    fn trace_packets(
        &self,
        port: Option<PortId>,
        req: &TraceRequest,
    ) -> Result<Box<dyn TraceSource + '_>, AdminError> {
        let _ = (port, req);
        Err(AdminError::unsupported(
            "this box has no dataplane of its own to trace",
        ))
    }
}

/// What a packet trace yields next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceNext {
    /// A traced packet.
    Packet(Box<TracedPacket>),
    /// Nothing yet.
    Idle,
    /// Nothing more: the dataplane traced every packet asked for (some
    /// records may have been lost), or it stops.
    End,
}

/// A running packet trace; dropping it stops the trace.
pub trait TraceSource {
    /// The next record, if any.
    fn next(&mut self) -> TraceNext;
    /// Records the dataplane could not keep since the trace started.
    fn lost(&self) -> u64;
}

/// What a capture yields next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureNext {
    /// A packet.
    Packet {
        /// When (UNIX time, ns).
        ts_ns: u64,
        /// Its length.
        len: u32,
        /// Its first bytes.
        data: Vec<u8>,
        /// Why it was dropped, for a capture of drops.
        reason: Option<DropReason>,
    },
    /// Nothing yet.
    Idle,
    /// Nothing more.
    End,
}

/// A running capture; dropping it stops the capture.
pub trait CaptureSource {
    /// The next packet, if any.
    fn next(&mut self) -> CaptureNext;
    /// Packets the capture could not keep up with since it started.
    fn lost(&self) -> u64;
}

/// How long an idle capture or trace waits before it looks again.
const CAPTURE_IDLE: Duration = Duration::from_millis(1);

/// The admin [`Handler`] of a box: every command answered once, from `B`.
pub struct Dispatcher<B: Backend> {
    backend: Arc<B>,
}

impl<B: Backend> Dispatcher<B> {
    /// A dispatcher answering from `backend`.
    pub fn new(backend: Arc<B>) -> Dispatcher<B> {
        Dispatcher { backend }
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<B> {
        &self.backend
    }

    /// Runs `f` on a [`View`] of the engine.
    fn view<T: Send + 'static>(
        &self,
        f: impl FnOnce(&View<'_>) -> Result<T, AdminError> + Send + 'static,
    ) -> Result<T, AdminError> {
        let kinds = self.backend.link_kinds();
        self.backend
            .with_engine(move |r, _| f(&View::new(r, &kinds)))?
    }

    fn show(&self, s: Show, admin: bool) -> Result<Value, AdminError> {
        match s {
            Show::Router {} => {
                let (version, up) = (self.backend.router_version(), self.backend.uptime_s());
                self.view(move |v| to_json(v.router_info(&version, up)))
            }
            Show::Config {} => Ok(json!({"toml": self.backend.config_toml(admin)})),
            Show::Hrs {} => self.view(|v| to_json(v.hrs())),
            Show::Ports {} => {
                let snap = self.backend.counters();
                let rows: Vec<PortRow> = self
                    .view(|v| Ok(v.hrs()))?
                    .into_iter()
                    .map(|h| {
                        let (name, backend) = self.backend.port_setup(h.port);
                        let c = snap.ports.get(h.port.index());
                        PortRow {
                            port: h.port,
                            name,
                            backend,
                            receive: self.backend.port_receive(h.port),
                            hr: h.hr,
                            up: h.up,
                            native: h.native,
                            mtu: h.mtu,
                            received: c.map_or(0, |c| c.received),
                            transmitted: c.map_or(0, |c| c.transmitted),
                            dropped: c.map_or(0, |c| c.dropped_total()),
                            strangers: c.map_or(0, |c| c.strangers),
                            rx_bytes: c.map_or(0, |c| c.rx_bytes),
                            tx_bytes: c.map_or(0, |c| c.tx_bytes),
                            rx_lost: c
                                .map_or(0, |c| c.rx_missed + c.rx_no_buffer + c.rx_link_errors),
                            tx_lost: c.map_or(0, |c| c.tx_link_errors),
                        }
                    })
                    .collect();
                to_json(rows)
            }
            Show::Lrt { port } => self.view(move |v| to_json(v.lrt(port)?)),
            Show::Rts { port, san } => self.view(move |v| to_json(v.rts(port, san)?)),
            Show::Routes { port } => self.view(move |v| to_json(v.routes(port)?)),
            Show::Fib { port } => self.view(move |v| to_json(v.fib(port)?)),
            Show::Neighbors { port } => self.view(move |v| to_json(v.neighbors(port)?)),
            Show::Counters { port } => {
                let snap = self.backend.counters();
                let ports = self.view(move |v| v.ports(port))?;
                let rows: Vec<CounterRow> = ports
                    .into_iter()
                    .filter_map(|p| snap.ports.get(p.index()))
                    .map(CounterRow::new)
                    .collect();
                to_json(rows)
            }
            Show::Route { dst, port } => self.view(move |v| to_json(v.route(dst, port)?)),
            Show::Management {} => to_json(self.backend.management()?),
            Show::Mcast {} => to_json(self.backend.mcast()?),
            Show::Workers {} => to_json(self.backend.workers()),
            Show::Punt {} => {
                let snap = self.backend.counters();
                to_json(PuntInfo::new(
                    &snap.ports,
                    snap.punt_sources.clone(),
                    self.backend.punt_budgets(),
                ))
            }
        }
    }

    /// `mad`: one MAD ([`mad::execute`]) with the box's client.
    fn mad(&self, q: &MadQuery) -> Result<Value, AdminError> {
        let hrs = self.view(|v| Ok(v.hr_addrs()))?;
        to_json(mad::execute(q, &hrs, |r, budget| {
            self.backend.mad(r, budget)
        })?)
    }

    fn route(&self, op: RouteOp) -> Result<Value, AdminError> {
        let kinds = self.backend.link_kinds();
        self.backend.with_engine(move |r, _| {
            let ports = |sel| View::new(r, &kinds).ports(Some(sel)).map(|v| v[0]);
            match op {
                RouteOp::Add {
                    port,
                    dst,
                    native,
                    name,
                    router,
                    groups,
                } => {
                    let p = ports(port)?;
                    let native = NativeAddr::parse(&native)
                        .ok()
                        .filter(|n| !n.is_empty())
                        .ok_or_else(|| {
                            AdminError::bad_request(format!("not a native address: {native:?}"))
                        })?;
                    let replaced = r.lrt(p).get(&dst).is_some_and(|e| e.is_static);
                    let node = StaticNode {
                        address: dst,
                        native,
                        name: name.map(String::into_bytes),
                        capabilities: if router {
                            vec![Capability {
                                code: CapabilityCode::Router as u8,
                                params: vec![],
                            }]
                        } else {
                            vec![]
                        },
                        groups,
                    };
                    // The engine bounds the entry and the LRT (a name,
                    // groups, limits.max_lrt): a client cannot make the box
                    // hold more than a SAN could.
                    if let Err(why) = r.add_static(p, node) {
                        return Err(AdminError::bad_request(format!(
                            "{dst} cannot be a static entry on port {p}: {why}"
                        )));
                    }
                    Ok(json!({"port": p, "dst": dst, "op": "add", "replaced": replaced}))
                }
                RouteOp::Del { port, dst } => {
                    let p = ports(port)?;
                    if !r.remove_static(p, dst) {
                        return Err(AdminError::not_found(format!(
                            "no static entry for {dst} on port {p}"
                        )));
                    }
                    Ok(json!({"port": p, "dst": dst, "op": "del", "replaced": true}))
                }
            }
        })?
    }
}

impl<B: Backend> Dispatcher<B> {
    /// `trace_packets`: arms the trace, sends a start item, then each
    /// record as the dataplane makes it, until `count` are sent, the
    /// timeout passes or the client leaves; answers with the summary.
    fn trace_packets(
        &self,
        req: TraceRequest,
        out: &mut dyn StreamOut,
    ) -> Result<Value, AdminError> {
        let spec = req.port;
        let (port, hr) = match spec {
            Some(s) => {
                let (p, hr) = self.view(move |v| {
                    let p = v.ports(Some(s))?[0];
                    Ok((p, v.hr_addrs()[p]))
                })?;
                (Some(p), Some(hr))
            }
            None => (None, None),
        };
        let mut source = self.backend.trace_packets(port, &req)?;
        out.send(to_json(TraceEvent::Start {
            count: req.count,
            port,
            hr,
            dst: req.dst,
            only: req.only,
            timeout_ms: req.timeout_ms,
        })?)?;
        // A timeout past what the clock can hold is none.
        let deadline = req
            .timeout_ms
            .and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms)));
        let mut summary = TraceSummary {
            requested: req.count,
            ended: "count".into(),
            ..Default::default()
        };
        while summary.recorded < u64::from(req.count) {
            if out.closed() {
                summary.ended = "client".into();
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                summary.ended = "timeout".into();
                break;
            }
            match source.next() {
                TraceNext::Packet(p) => {
                    if out.send(to_json(TraceEvent::Packet(*p))?).is_err() {
                        summary.ended = "client".into();
                        break;
                    }
                    summary.recorded += 1;
                }
                TraceNext::Idle => std::thread::sleep(CAPTURE_IDLE),
                TraceNext::End => {
                    if summary.recorded + source.lost() < u64::from(req.count) {
                        summary.ended = "stopped".into();
                    }
                    break;
                }
            }
        }
        summary.lost = source.lost();
        to_json(summary)
    }
}

fn to_json<T: serde::Serialize>(v: T) -> Result<Value, AdminError> {
    serde_json::to_value(v).map_err(|e| AdminError::failed(e.to_string()))
}

impl<B: Backend> Handler for Dispatcher<B> {
    fn handle(&self, cmd: &Command, privilege: Privilege) -> Result<Value, AdminError> {
        self.handle_from(cmd, privilege, None)
    }

    fn handle_from(
        &self,
        cmd: &Command,
        privilege: Privilege,
        peer: Option<&Peer>,
    ) -> Result<Value, AdminError> {
        let by = Requester {
            uid: peer.map(|p| p.uid),
            pid: peer.and_then(|p| p.pid),
        };
        match cmd {
            Command::Show(s) => self.show(s.clone(), privilege == Privilege::Admin),
            Command::Mad(q) => self.mad(q),
            Command::Port { port, state } => {
                let (port, state) = (*port, *state);
                let kinds = self.backend.link_kinds();
                self.backend.with_engine(move |r, now| {
                    let p = View::new(r, &kinds).ports(Some(port))?[0];
                    match state {
                        PortState::Up => r.port_up(now, p),
                        PortState::Down => r.port_down(now, p),
                    }
                    let hr = r.config().hrs[p].address;
                    Ok(json!({"port": p, "hr": hr, "state": state}))
                })?
            }
            Command::Route(op) => self.route(op.clone()),
            Command::Clear(Clear::Counters { port }) => {
                let port = *port;
                let ports = self.view(move |v| v.ports(port))?;
                self.backend
                    .clear_counters(port.is_some().then_some(&ports[..]));
                Ok(json!({"cleared": ports}))
            }
            Command::LogLevel { level } => {
                let previous = self.backend.log_level();
                self.backend.set_log_level(*level);
                Ok(json!({"level": level, "previous": previous}))
            }
            Command::Reload(req) => to_json(self.backend.reload(req, by)?),
            Command::Commit {} => to_json(self.backend.commit(by)?),
            Command::Rollback { n, force } => {
                to_json(self.backend.rollback(n.unwrap_or(1), *force, by)?)
            }
            Command::History {} => to_json(self.backend.history()?),
            Command::Write { file } => to_json(self.backend.write_config(file.as_deref(), by)?),
            Command::Drain { timeout_ms } => {
                self.backend.drain(*timeout_ms).map_err(AdminError::failed)
            }
            Command::Stats { format } => match format {
                StatsFormat::Json => {
                    let s = self.backend.counters();
                    to_json(Stats {
                        uptime_s: self.backend.uptime_s(),
                        ports: s.ports.iter().map(CounterRow::new).collect(),
                        plane: s.plane.named_slots().into_iter().collect(),
                        rrp: s.rrp.named_slots().into_iter().collect(),
                        partitions: PartitionDropRow::rows(&s.partitions),
                    })
                }
                StatsFormat::Prometheus => to_json(PrometheusText {
                    text: self.backend.prometheus(),
                }),
            },
            Command::Version {} => to_json(VersionInfo {
                daemon: self.backend.daemon_version(),
                protocol: PROTOCOL_VERSION,
            }),
            Command::Capture { .. } => Err(AdminError::bad_request("capture streams its answer")),
            Command::TracePackets { .. } => {
                Err(AdminError::bad_request("trace_packets streams its answer"))
            }
        }
    }

    fn handle_stream(
        &self,
        cmd: &Command,
        privilege: Privilege,
        out: &mut dyn StreamOut,
    ) -> Result<Value, AdminError> {
        if let Some(req) = TraceRequest::of(cmd) {
            return self.trace_packets(req?, out);
        }
        let req = match CaptureRequest::of(cmd) {
            None => return self.handle(cmd, privilege),
            Some(r) => r?,
        };
        let port = req.port;
        let (p, hr) = self.view(move |v| {
            let p = v.ports(Some(port))?[0];
            Ok((p, v.hr_addrs()[p]))
        })?;
        let mut source = self.backend.capture(p, &req)?;
        let (snaplen, dir) = (req.snaplen, req.direction());
        out.send(to_json(CaptureEvent::Start {
            port: p,
            hr,
            linktype: CAPTURE_LINKTYPE,
            snaplen,
        })?)?;
        let mut summary = CaptureSummary {
            ended: "count".into(),
            ..Default::default()
        };
        let limit = req.count.unwrap_or(u64::MAX);
        while summary.captured < limit {
            if out.closed() {
                summary.ended = "client".into();
                break;
            }
            let (ts_ns, len, data, reason) = match source.next() {
                CaptureNext::Packet {
                    ts_ns,
                    len,
                    data,
                    reason,
                } => (ts_ns, len, data, reason),
                CaptureNext::Idle => {
                    std::thread::sleep(CAPTURE_IDLE);
                    continue;
                }
                CaptureNext::End => break,
            };
            let mut pkt = CapturedPacket::new(ts_ns, dir, &data, snaplen);
            pkt.len = len;
            if let Some(r) = reason {
                pkt.drop = Some(r.name().into());
                *summary.drops.entry(r.name().into()).or_default() += 1;
            }
            if out.send(to_json(CaptureEvent::Packet(pkt))?).is_err() {
                summary.ended = "client".into();
                break;
            }
            summary.captured += 1;
        }
        summary.lost = source.lost();
        to_json(summary)
    }
}
