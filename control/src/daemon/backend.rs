//! The daemon as an admin [`Backend`] (docs/admin-protocol.md): the
//! dispatcher's engine calls run on the control thread between two passes,
//! counters come from the workers' published blocks, captures from the
//! workers' capture rings, packet traces from their trace rings
//! ([`super::trace`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use admin::dispatch::{Backend, CaptureNext, CaptureSource, TraceSource};
use admin::mad::MadResult;
use admin::proto::{
    AdminError, CaptureRequest, HistoryEntry, LogLevel, ReloadAnswer, ReloadRequest, Requester,
    TraceRequest, WriteAnswer,
};
use admin::stats::{Snapshot, prometheus};
use admin::view::{ManagementInfo, McastInfo, WorkerRow};
use dataplane::{CaptureControl, CaptureWhat, TraceControl};
use mgmt::client::Request as MgmtRequest;
use rrp::router::{Router, Time};
use rrp::{Address, LinkKind, PortId};

use crate::config::Config;
use crate::daemon::change::Changer;
use crate::daemon::logging::LogHandle;
use crate::plane::PlaneHandle;
use crate::stats::{Counters, EngineStats};

/// How long an admin request may wait for the control thread.
const CALL: Duration = Duration::from_secs(2);

/// The daemon's admin backend.
pub struct DaemonBackend {
    change: Changer,
    plane: Arc<PlaneHandle>,
    counters: Counters,
    capture: CaptureControl,
    capturing: Mutex<()>,
    trace: TraceControl,
    tracing: Mutex<()>,
    kinds: Vec<LinkKind>,
    start: Instant,
    log: LogHandle,
    stats_file: PathBuf,
    layout: Layout,
    drainer: std::sync::OnceLock<Arc<super::drain::Drainer>>,
}

/// Which worker does what (from the start-up): for `show ports` and `show
/// workers`.
pub(crate) struct Layout {
    /// Per HR: who receives from its port ("worker 1", "workers 0-1 (flow
    /// rules)").
    pub receive: Vec<String>,
    /// Per worker: its core and the ports it receives from.
    pub workers: Vec<(Option<usize>, Vec<PortId>)>,
}

fn plane_err(e: crate::plane::PlaneError) -> AdminError {
    AdminError::failed(e.to_string())
}

impl DaemonBackend {
    /// A backend for the running daemon.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        layout: Layout,
        cfg: Config,
        path: PathBuf,
        plane: Arc<PlaneHandle>,
        counters: Counters,
        capture: CaptureControl,
        trace: TraceControl,
        kinds: Vec<LinkKind>,
        start: Instant,
        log: LogHandle,
        stats_file: PathBuf,
    ) -> DaemonBackend {
        DaemonBackend {
            change: Changer::new(cfg, path, plane.clone(), log.clone()),
            plane,
            counters,
            capture,
            capturing: Mutex::new(()),
            trace,
            tracing: Mutex::new(()),
            kinds,
            start,
            log,
            stats_file,
            layout,
            drainer: std::sync::OnceLock::new(),
        }
    }

    /// The counters area's path.
    pub fn stats_file(&self) -> &PathBuf {
        &self.stats_file
    }

    /// Every counter as of now (not subtracting a baseline).
    pub fn snapshot(&self) -> Snapshot {
        let engine = self
            .plane
            .call(CALL, |cp| EngineStats::of(cp.engine()))
            .unwrap_or_default();
        self.counters.snapshot(&engine, &self.plane.stats.load(0))
    }

    /// The box's counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The configuration last applied (reloads replace it).
    pub fn applied_config(&self) -> std::sync::Arc<std::sync::Mutex<crate::config::Config>> {
        self.change.cfg.clone()
    }

    /// Sets the drain `mwctl drain` and SIGTERM begin (once, at start-up).
    pub fn set_drainer(&self, d: Arc<super::drain::Drainer>) {
        let _ = self.drainer.set(d);
    }

    /// Whether SIGTERM begins a drain: `drain.on_sigterm`, and none begun yet.
    pub fn drain_on_sigterm(&self) -> bool {
        self.drainer
            .get()
            .is_some_and(|d| d.on_sigterm() && !d.begun())
    }

    /// Begins a drain that stops the daemon (docs/daemon.md "Draining
    /// before maintenance"): the timeout it uses.
    pub fn begin_drain(&self, timeout_ms: Option<u64>) -> Result<u64, String> {
        match self.drainer.get() {
            Some(d) => d.begin(timeout_ms),
            None => Err("the box cannot drain yet".into()),
        }
    }

    /// SIGHUP: re-reads the configuration file and applies what can change
    /// while running; refuses the rest (the old configuration keeps
    /// running), and a reload that would drop run-time changes.
    pub fn reload(&self) -> Result<Vec<String>, String> {
        self.change
            .reload(&ReloadRequest::default(), Requester::default())
            .map(|a| a.changes)
            .map_err(|e| e.message)
    }
}

impl Backend for DaemonBackend {
    fn daemon_version(&self) -> String {
        format!("mwrouterd {}", env!("CARGO_PKG_VERSION"))
    }

    fn router_version(&self) -> String {
        env!("CARGO_PKG_VERSION").into()
    }

    fn uptime_s(&self) -> u64 {
        self.start.elapsed().as_secs()
    }

    fn with_engine<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Router, Time) -> T + Send + 'static,
    ) -> Result<T, AdminError> {
        self.plane
            .call(CALL, move |cp| {
                let now = cp.now();
                f(cp.engine_mut(), now)
            })
            .map_err(plane_err)
    }

    fn link_kinds(&self) -> Vec<LinkKind> {
        self.kinds.clone()
    }

    fn port_setup(&self, p: PortId) -> (String, String) {
        let cfg = self.change.cfg.lock().unwrap_or_else(|e| e.into_inner());
        match cfg.hrs.get(p.index()) {
            Some(h) => (h.label(p.index()), h.port.backend().as_str().into()),
            None => (String::new(), String::new()),
        }
    }

    fn port_receive(&self, p: PortId) -> String {
        if self.layout.workers.len() < 2 {
            return String::new();
        }
        self.layout
            .receive
            .get(p.index())
            .cloned()
            .unwrap_or_default()
    }

    fn punt_budgets(&self) -> Option<rrp::PuntBudgets> {
        Some(
            self.change
                .cfg
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .rates
                .punt,
        )
    }

    fn workers(&self) -> Vec<WorkerRow> {
        let shown = self.counters.shown(self.snapshot());
        self.layout
            .workers
            .iter()
            .enumerate()
            .map(|(i, (core, rx))| {
                let stats = shown.workers.get(i).map(|w| w.stats).unwrap_or_default();
                WorkerRow::new(i, *core, rx.clone(), stats)
            })
            .collect()
    }

    fn counters(&self) -> Snapshot {
        self.counters.shown(self.snapshot())
    }

    fn clear_counters(&self, ports: Option<&[PortId]>) {
        self.counters.clear(&self.snapshot(), ports);
    }

    fn prometheus(&self) -> String {
        let snapshot = self.snapshot();
        let mut text = prometheus(&snapshot);
        if let Ok(m) = self.management() {
            text.push_str(&admin::stats::management_exposition(&m));
        }
        if let Ok(m) = self.mcast() {
            text.push_str(&admin::stats::mcast_exposition(&m));
        }
        text.push_str(&admin::stats::partition_exposition(&snapshot.partitions));
        text
    }

    /// The engine's groups with the workers' per-group counters, found by
    /// the counter slot the published table gives each group.
    fn mcast(&self) -> Result<McastInfo, AdminError> {
        let (tables, slots) = self
            .plane
            .call(CALL, |cp| (cp.engine().mcast(), cp.mcast_slots()))
            .map_err(plane_err)?;
        let counts = dataplane::counters::sum_mcast(self.counters.blocks());
        let unslotted = counts.last().copied().unwrap_or_default();
        Ok(McastInfo::build(
            &tables,
            |g| {
                let (_, s) = slots.iter().find(|(a, _)| *a == g)?;
                counts.get(usize::from(*s)).copied()
            },
            unslotted,
        ))
    }

    fn config_toml(&self, secrets: bool) -> String {
        self.change.running_toml(secrets)
    }

    fn log_level(&self) -> LogLevel {
        self.log.level()
    }

    fn set_log_level(&self, level: LogLevel) {
        self.log.set_level(level);
    }

    fn reload(&self, req: &ReloadRequest, by: Requester) -> Result<ReloadAnswer, AdminError> {
        self.change.reload(req, by)
    }

    fn commit(&self, by: Requester) -> Result<ReloadAnswer, AdminError> {
        self.change.commit(by)
    }

    fn rollback(&self, n: u32, force: bool, by: Requester) -> Result<ReloadAnswer, AdminError> {
        self.change.rollback(n, force, by)
    }

    fn history(&self) -> Result<Vec<HistoryEntry>, AdminError> {
        Ok(self.change.history())
    }

    fn write_config(&self, file: Option<&str>, by: Requester) -> Result<WriteAnswer, AdminError> {
        self.change.write(file, by)
    }

    fn drain(&self, timeout_ms: Option<u64>) -> Result<serde_json::Value, String> {
        let t = self.begin_drain(timeout_ms)?;
        Ok(serde_json::json!({"draining": true, "timeout_ms": t}))
    }

    fn mad(&self, request: MgmtRequest, budget: Duration) -> Result<MadResult, AdminError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let started = self
            .plane
            .call(CALL, move |cp| cp.mad_start(request, tx))
            .map_err(plane_err)?;
        if !started {
            return Err(AdminError::unsupported("in-band management is not running"));
        }
        rx.recv_timeout(budget)
            .map_err(|_| AdminError::failed("the management client did not finish in time"))
    }

    fn management(&self) -> Result<ManagementInfo, AdminError> {
        self.plane
            .call(CALL, |cp| {
                let now = cp.now();
                let own = cp.engine().config().hrs.iter().map(|h| h.address).collect();
                cp.management().map(|m| m.info(now, own))
            })
            .map_err(plane_err)?
            .ok_or_else(|| AdminError::unsupported("in-band management is not running"))
    }

    fn capture(
        &self,
        p: PortId,
        req: &CaptureRequest,
    ) -> Result<Box<dyn CaptureSource + '_>, AdminError> {
        let Ok(one) = self.capturing.try_lock() else {
            return Err(AdminError::failed("a capture is already running"));
        };
        let what = if req.drops {
            CaptureWhat::Dropped
        } else if req.transmitted {
            CaptureWhat::Transmitted
        } else {
            CaptureWhat::Received
        };
        let lost0 = self.capture.lost();
        self.capture.arm(p, what);
        Ok(Box::new(RingCapture {
            control: &self.capture,
            lost0,
            _one: one,
        }))
    }

    fn trace_packets(
        &self,
        port: Option<PortId>,
        req: &TraceRequest,
    ) -> Result<Box<dyn TraceSource + '_>, AdminError> {
        let Ok(one) = self.tracing.try_lock() else {
            return Err(AdminError::failed("a packet trace is already running"));
        };
        Ok(Box::new(super::trace::RingTrace::start(
            &self.trace,
            super::trace::filter(port, req.dst, req.only),
            req.count,
            self.hr_addrs(),
            &self.kinds,
            one,
        )))
    }
}

impl DaemonBackend {
    /// The fabric scrape (docs/stats.md "The fabric scrape"): the
    /// performance manager's snapshot; only its own counters, at 0, when
    /// management is not running.
    pub fn fabric_prometheus(&self) -> String {
        let snap = self
            .plane
            .call(CALL, |cp| cp.management().and_then(|m| m.fabric()))
            .ok()
            .flatten()
            .unwrap_or_default();
        crate::stats::fabric_exposition(&snap)
    }

    /// The HR address of each port.
    fn hr_addrs(&self) -> Vec<Address> {
        let cfg = self.change.cfg.lock().unwrap_or_else(|e| e.into_inner());
        cfg.hrs.iter().map(|h| h.address).collect()
    }
}

/// A capture from the workers' rings; disarmed and drained when dropped.
struct RingCapture<'a> {
    control: &'a CaptureControl,
    lost0: u64,
    _one: MutexGuard<'a, ()>,
}

impl CaptureSource for RingCapture<'_> {
    fn next(&mut self) -> CaptureNext {
        let Some((w, c)) = self.control.next() else {
            return CaptureNext::Idle;
        };
        let ts_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let out = CaptureNext::Packet {
            ts_ns,
            len: c.len,
            data: c.data[..].to_vec(),
            reason: c.reason,
        };
        self.control.recycle(w, c);
        out
    }

    fn lost(&self) -> u64 {
        self.control.lost() - self.lost0
    }
}

impl Drop for RingCapture<'_> {
    fn drop(&mut self) {
        self.control.disarm();
        while let Some((w, c)) = self.control.next() {
            self.control.recycle(w, c);
        }
    }
}
