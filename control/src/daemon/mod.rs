//! `mwrouterd`: puts the dataplane and the control plane together
//! (docs/architecture.md "Threads and data flow").
//!
//! ```text
//! workers (one per configured core) <-> ports
//!    ^ FIB sets, injections     | punts, notices, captures, traces, counters
//! control thread (RRP engine) --'
//! admin thread (UNIX socket, mwctl)     stats thread (counters area, engine events -> log)
//! main thread: signals (SIGTERM/SIGINT stop, SIGHUP reloads)
//! ```
//!
//! Sockets backends (UDP, AF_PACKET) run one worker that polls adaptively;
//! the DPDK backend (feature `dpdk`) runs one pinned worker per configured
//! core, each with its own queue of every port.

mod against;
mod backend;
mod change;
pub mod drain;
pub mod history;
mod logging;
pub mod notify;
pub mod placement;
pub mod service;
mod trace;
pub mod watchdog;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use admin::stats::StatsWriter;
use admin::{Backend as _, Dispatcher, ServerConfig, ServerHandle};
use clap::Parser;
use dataplane::{
    CaptureControl, FibSet, StatsBlock, TRACE_RING, TraceControl, Worker, capture_rings, channels,
    fib_channel, trace_rings,
};
use ports::Port;
use rrp::PortStats;
use rrp::router::Router;
use rrp::{LinkKind, NativeAddr, PortId};

use crate::config::{Backend, Config};
use crate::plane::{ControlPlane, LogItem, PlaneHandle};
use crate::punt_log::{self, PuntLog};
use crate::stats::{Counters, EngineStats, Source, publish_blocks, serve_paths};

pub use backend::DaemonBackend;

/// The `mwrouterd` command line.
#[derive(Debug, Parser)]
#[command(
    name = "mwrouterd",
    version,
    about = "The mwrouter MessageWay router daemon"
)]
pub struct Args {
    /// The configuration file (TOML; docs/configuration.md).
    #[arg(long, short)]
    pub config: PathBuf,
    /// Validate the configuration and exit (0 valid, 2 invalid).
    #[arg(long)]
    pub check: bool,
    /// With --check: also print the plan of a reload from the running
    /// configuration (the daemon's admin socket, or a file) to this one;
    /// exit 1 when the reload would be refused.
    #[arg(long, value_name = "RUNNING", requires = "check")]
    pub against: Option<PathBuf>,
}

/// Why the daemon could not start or stopped badly.
#[derive(Debug)]
pub enum DaemonError {
    /// The configuration is invalid (exit code 2).
    Config(String),
    /// Something failed while starting or running (exit code 1).
    Run(String),
}

impl std::fmt::Display for DaemonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DaemonError::Config(m) | DaemonError::Run(m) => f.write_str(m),
        }
    }
}

fn run_err(what: &str) -> impl FnOnce(std::io::Error) -> DaemonError + '_ {
    move |e| DaemonError::Run(format!("{what}: {e}"))
}

/// The path of the counters area: the admin socket's path with `.stats`.
pub fn stats_path(cfg: &Config) -> PathBuf {
    cfg.admin.socket.with_extension("stats")
}

/// Everything the daemon runs, whatever the port backend.
pub(crate) struct Running {
    pub stop_workers: Arc<AtomicBool>,
    pub workers: Vec<thread::JoinHandle<Vec<PortStats>>>,
    pub plane: Arc<PlaneHandle>,
    pub blocks: Vec<Arc<StatsBlock>>,
    pub capture: CaptureControl,
    pub trace: TraceControl,
    /// The workers' thread ids (left where they are pinned).
    pub worker_tids: Vec<i32>,
    /// The ports each worker receives from.
    pub worker_rx: Vec<Vec<PortId>>,
    /// The core of each worker (`None`: not pinned).
    pub worker_cores: Vec<Option<usize>>,
    /// Per HR: who receives from its port ("worker 1", "workers 0-1 (flow
    /// rules)"), for `show ports` and the log.
    pub receive: Vec<String>,
}

/// Starts the workers: worker `i` gets `per_worker[i]` (one port handle per
/// HR) and receives from `receive[i]` only.
fn spawn_workers<P: Port + 'static>(
    cfg: &Config,
    per_worker: Vec<Vec<P>>,
    receive: Vec<Vec<PortId>>,
    natives: Vec<NativeAddr>,
    on_start: fn(),
    clock: fn() -> Option<Box<dyn ports::clock::Clock>>,
) -> Result<Running, DaemonError> {
    let n = per_worker.len();
    let ecfg = cfg.engine_config();
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_millis());
    let seed = (ms & 0xFFFF) as u16;
    let mut rcfg = cfg.router_config_with_natives(&natives, seed);
    // Signed packets are numbered from the clock (ms << 20): a restarted
    // box starts above what it sent before (docs/spec-notes.md 59).
    rcfg.auth_seq_seed = (ms as u64) << 20;
    let mut engine =
        Router::new(rcfg, 0).map_err(|e| DaemonError::Config(format!("{}: {}", e.field, e.why)))?;
    // HRs the configuration keeps down (`hr.admin_state`, saved by `mwctl
    // write` after `mwctl port N down`).
    for (i, h) in cfg.hrs.iter().enumerate() {
        if h.admin_state == admin::PortState::Down {
            engine.port_down(0, rrp::PortId::new(i));
        }
    }
    let (publisher, readers) = fib_channel(FibSet::new(ecfg.hrs.len(), &ecfg.hrs), n);
    let (capture, taps) = capture_rings(n, 1024);
    let (trace, trace_taps) = trace_rings(n, TRACE_RING);
    let stop = Arc::new(AtomicBool::new(false));
    let mut control = Vec::new();
    let mut blocks = Vec::new();
    let mut workers = Vec::new();
    let cores = cfg.worker_cores();
    let idle = cfg.idle_policy();
    // Each worker is built on its own thread, so that its buffers, counters
    // and staging areas come from that thread's allocator arena and never
    // share a cache line with another worker's (docs/dataplane.md); it
    // reports ready, then waits until the first FIBs are published.
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let mut go = Vec::with_capacity(n);
    for (((((i, ports), rx), reader), tap), trace_tap) in per_worker
        .into_iter()
        .enumerate()
        .zip(&receive)
        .zip(readers)
        .zip(taps)
        .zip(trace_taps)
    {
        let (wch, cch) = channels(cfg.channel_config());
        control.push(cch);
        if rx.is_empty() {
            tracing::warn!(
                worker = i,
                "worker {i} receives from no port (more workers than ports to own): it only transmits"
            );
        }
        let rx = rx.clone();
        let ecfg = ecfg.clone();
        let s = stop.clone();
        let core = cores.get(i).copied().flatten();
        let ready = ready_tx.clone();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        go.push(go_tx);
        let h = thread::Builder::new()
            .name(format!("mw-worker-{i}"))
            .spawn(move || {
                if let Some(c) = core {
                    core_affinity::set_for_current(core_affinity::CoreId { id: c });
                }
                let mut w = Worker::new(i, &ecfg, ports, reader, wch);
                w.receive_from(&rx);
                w.set_capture(tap);
                w.set_trace(trace_tap);
                let _ = ready.send((i, placement::thread_id(), w.stats()));
                drop(ready);
                // No go: the daemon did not start (the ports are dropped here).
                if go_rx.recv().is_err() {
                    return w.counters().to_vec();
                }
                on_start();
                if let Some(c) = clock() {
                    w.set_clock(c);
                }
                w.run(&s, idle);
                w.counters().to_vec()
            })
            .map_err(run_err("starting a worker"))?;
        workers.push(h);
    }
    drop(ready_tx);
    // Each worker says it is built and pinned, with its thread id and
    // counters block.
    let mut ready: Vec<(usize, i32, Arc<StatsBlock>)> = ready_rx.iter().take(n).collect();
    if ready.len() < n {
        return Err(DaemonError::Run(format!(
            "{} of {n} workers failed while starting",
            n - ready.len()
        )));
    }
    ready.sort_by_key(|r| r.0);
    let worker_tids: Vec<i32> = ready.iter().map(|r| r.1).collect();
    blocks.extend(ready.into_iter().map(|r| r.2));
    // The first FIBs (static entries) are published before any worker
    // polls: configured routes forward from the first packet.
    let mut plane = ControlPlane::new(engine, control, publisher);
    plane.start_now();
    for g in go {
        let _ = g.send(());
    }
    let plane = plane
        .spawn(CONTROL_PARK_MAX)
        .map_err(run_err("starting the control thread"))?;
    Ok(Running {
        stop_workers: stop,
        workers,
        plane: Arc::new(plane),
        blocks,
        capture,
        trace,
        worker_tids,
        worker_rx: receive,
        worker_cores: cores,
        receive: Vec::new(),
    })
}

/// The longest the control thread parks when idle: it wakes earlier for a
/// punt or notice, a job or its next timer (docs/architecture.md "The
/// control thread's loop"), so this only bounds what a missed wake-up
/// could cost.
const CONTROL_PARK_MAX: Duration = Duration::from_millis(50);

fn no_op() {}

/// The workers' clock on socket and memory ports: the monotonic clock.
fn std_clock() -> Option<Box<dyn ports::clock::Clock>> {
    None
}

/// Opens the ports the configuration names and starts workers and the
/// control plane on them.
fn start_dataplane(cfg: &Config) -> Result<(Running, Vec<LinkKind>), DaemonError> {
    let kinds: Vec<LinkKind> = cfg
        .hrs
        .iter()
        .map(|h| h.port.backend().link_kind())
        .collect();
    match cfg.backend() {
        Some(Backend::Udp) => {
            let (open, natives) = open_socket_ports(cfg, "UDP", |i, pool| {
                let mut u = cfg.udp_config(i).expect("a UDP HR");
                u.pool = Some(pool);
                ports::udp::UdpPort::open(u).map_err(|e| e.to_string())
            })?;
            let all = PortId::all(open.len()).collect();
            let mut r = spawn_workers(cfg, vec![open], vec![all], natives, no_op, std_clock)?;
            r.receive = vec!["worker 0".into(); cfg.hrs.len()];
            Ok((r, kinds))
        }
        Some(Backend::AfPacket) => {
            let (open, natives) = open_socket_ports(cfg, "AF_PACKET", |i, pool| {
                let mut a = cfg.af_packet_config(i).expect("an AF_PACKET HR");
                a.pool = Some(pool);
                ports::af_packet::AfPacketPort::open(a).map_err(|e| e.to_string())
            })?;
            let all = PortId::all(open.len()).collect();
            let mut r = spawn_workers(cfg, vec![open], vec![all], natives, no_op, std_clock)?;
            r.receive = vec!["worker 0".into(); cfg.hrs.len()];
            Ok((r, kinds))
        }
        Some(Backend::Dpdk) => start_dpdk(cfg).map(|r| (r, kinds)),
        None => Err(DaemonError::Config(
            "hr: a router needs at least one HR".into(),
        )),
    }
}

/// Opens the ports of a socket backend (one worker; every port draws from
/// one buffer pool) and returns them with their native addresses.
fn open_socket_ports<P: Port>(
    cfg: &Config,
    backend: &str,
    open: impl Fn(usize, ports::BufPool) -> Result<P, String>,
) -> Result<(Vec<P>, Vec<NativeAddr>), DaemonError> {
    if cfg.workers.count != 1 {
        return Err(DaemonError::Config(format!(
            "workers.count: the {backend} backend runs one worker"
        )));
    }
    let pool = ports::BufPool::new(
        ports::heap::DEFAULT_BUF_SIZE,
        ports::heap::DEFAULT_HEADROOM,
        4096,
        1024,
    );
    let mut opened = Vec::new();
    let mut natives = Vec::new();
    for i in 0..cfg.hrs.len() {
        let p =
            open(i, pool.clone()).map_err(|e| DaemonError::Run(format!("hr[{i}].port: {e}")))?;
        natives.push(p.native_addr());
        opened.push(p);
    }
    Ok((opened, natives))
}

#[cfg(feature = "dpdk")]
fn start_dpdk(cfg: &Config) -> Result<Running, DaemonError> {
    use crate::config::SpreadMode;
    use ports::dpdk::{DeviceSpec, Eal, RxSpread, Spread, StartOptions, register_thread};
    let eal =
        Eal::init(cfg.eal_args()).map_err(|e| DaemonError::Run(format!("dpdk.eal_args: {e}")))?;
    let specs: Vec<DeviceSpec> = (0..cfg.hrs.len())
        .map(|i| {
            let d = cfg.dpdk_port(i).expect("a DPDK HR");
            let s = DeviceSpec::new(d.name()).rings(d.rx_ring, d.tx_ring);
            match d.mac {
                Some(m) => s.mac(m),
                None => s,
            }
        })
        .collect();
    let workers = cfg.workers.count;
    let opts = StartOptions {
        queues: workers as u16,
        spread: match cfg.workers.spread {
            SpreadMode::Auto => Spread::Auto,
            SpreadMode::Ports => Spread::Ports,
            SpreadMode::Flows => Spread::Flows,
        },
        ..StartOptions::default()
    };
    let devs = eal
        .start_ports(&specs, &opts)
        .map_err(|e| DaemonError::Run(format!("hr.port: {e}")))?;
    for (i, d) in devs.iter().enumerate() {
        tracing::info!(
            hr = i,
            device = d.name(),
            driver = d.driver(),
            replication = %d.replication(),
            "DPDK port started; group packets are replicated by {}",
            d.replication()
        );
    }
    let natives = devs.iter().map(|d| NativeAddr::mac(d.mac())).collect();
    // Every worker transmits on its own queue of every port; it receives
    // from its queue of a port that flow rules spread, and from every
    // queue of the ports it owns otherwise.
    let mut per_worker = Vec::new();
    let mut receive = vec![Vec::new(); workers];
    let mut described = Vec::new();
    for (i, d) in devs.iter().enumerate() {
        let owner = cfg.port_owner(i);
        described.push(match d.spread() {
            RxSpread::Flows { .. } if workers > 1 => {
                format!("workers 0-{} (flow rules)", workers - 1)
            }
            _ => format!("worker {owner}"),
        });
        if workers > 1 {
            tracing::info!(
                hr = i,
                device = d.name(),
                receive = %described[i],
                "HR {i}: {} receives from {}: {}",
                d.name(),
                described[i],
                d.spread()
            );
        }
    }
    for (w, rx_of) in receive.iter_mut().enumerate() {
        let mut v = Vec::new();
        for (i, d) in devs.iter().enumerate() {
            let rx = if d.spread().is_flows() {
                w as u16..w as u16 + 1
            } else if cfg.port_owner(i) == w {
                0..d.rx_queues()
            } else {
                0..0
            };
            if !rx.is_empty() {
                rx_of.push(PortId::new(i));
            }
            v.push(
                d.port_with(rx, w as u16)
                    .map_err(|e| DaemonError::Run(format!("hr[{i}].port: {e}")))?,
            );
        }
        per_worker.push(v);
    }
    fn reg() {
        register_thread();
    }
    /// The TSC, read once per pass (EAL measured its frequency).
    fn tsc() -> Option<Box<dyn ports::clock::Clock>> {
        ports::dpdk::TscClock::new().map(|c| Box::new(c) as Box<dyn ports::clock::Clock>)
    }
    let mut r = spawn_workers(cfg, per_worker, receive, natives, reg, tsc)?;
    r.receive = described;
    Ok(r)
}

#[cfg(not(feature = "dpdk"))]
fn start_dpdk(_cfg: &Config) -> Result<Running, DaemonError> {
    Err(DaemonError::Config(
        "hr.port.backend: \"dpdk\" needs mwrouterd built with --features dpdk".into(),
    ))
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(args: &Args) -> Result<(), DaemonError> {
    let cfg = load(&args.config)?;
    if args.check {
        // The partitions file too: a daemon would start with the default
        // partition instead, and a reload would keep the last good one.
        if let Some(f) = &cfg.management.partitions_file
            && let Err(errs) = crate::partitions::read(Some(f)).result
        {
            return Err(DaemonError::Config(
                errs.iter()
                    .map(|e| format!("management.partitions_file: {}: {e}", f.display()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ));
        }
        if let Some(running) = &args.against {
            print!("{}", against::check_against(&cfg, running)?);
        }
        return Ok(());
    }
    let log = logging::init(&cfg.log);
    let notifier = Arc::new(notify::Notifier::from_env());
    // Before EAL pins this thread to its main lcore.
    let allowed = placement::allowed_cores();
    let (running, kinds) = start_dataplane(&cfg)?;
    // Every thread so far but the workers (this one, the control thread,
    // EAL's) onto the control cores; the threads started from here on
    // inherit them.
    place_threads(&cfg, &allowed, &running.worker_tids);
    let start = Instant::now();
    let stats_file = stats_path(&cfg);
    if let Some(dir) = stats_file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let writer = StatsWriter::create(&stats_file, cfg.hrs.len(), running.blocks.len())
        .map_err(|e| DaemonError::Run(format!("{}: {e}", stats_file.display())))?;
    // One set of counters (and one clear baseline) for the admin socket and
    // the management agent's PortStats.
    let counters = Counters::new(running.blocks.clone());
    {
        let agent = crate::management::agent_config(&cfg);
        let managers = crate::management::manager_configs(&cfg);
        let perf = cfg.management.perf_manager;
        // Read here, off the control thread (docs/partitions.md).
        let parts = crate::partitions::read(cfg.management.partitions_file.as_deref());
        let static_partitions = cfg.management.static_partitions.clone();
        let (c, k) = (counters.clone(), kinds.clone());
        running
            .plane
            .call(Duration::from_secs(5), move |cp| {
                cp.enable_management(agent, c, k);
                cp.set_managers(managers);
                cp.set_perf_manager(perf);
                if let Some(m) = cp.management_mut() {
                    m.set_static_partitions(static_partitions);
                    m.take_partitions(parts);
                }
            })
            .map_err(|e| DaemonError::Run(format!("management: {e}")))?;
    }
    let layout = backend::Layout {
        receive: running.receive.clone(),
        workers: running
            .worker_cores
            .iter()
            .copied()
            .zip(running.worker_rx.iter().cloned())
            .collect(),
    };
    let backend = Arc::new(DaemonBackend::new(
        layout,
        cfg.clone(),
        args.config.clone(),
        running.plane.clone(),
        counters,
        running.capture.clone(),
        running.trace.clone(),
        kinds,
        start,
        log.clone(),
        stats_file.clone(),
    ));
    backend.set_drainer(Arc::new(drain::Drainer::new(
        backend.applied_config(),
        running.plane.clone(),
        backend.counters().clone(),
    )));
    let admin = start_admin(&cfg, Arc::new(Dispatcher::new(backend.clone())))?;
    let prometheus = match cfg.admin.prometheus_listen {
        Some(addr) => {
            let (h, f) = (backend.clone(), backend.clone());
            let routes: Vec<(&'static str, Source)> = vec![
                ("/metrics", Box::new(move || h.prometheus())),
                ("/fabric/metrics", Box::new(move || f.fabric_prometheus())),
            ];
            Some(
                serve_paths(addr, routes)
                    .map_err(|e| DaemonError::Run(format!("admin.prometheus_listen: {e}")))?,
            )
        }
        None => None,
    };
    // The stats thread: counters area every 100 ms, engine events to the log.
    let stop_stats = Arc::new(AtomicBool::new(false));
    let stats_thread = {
        let stop = stop_stats.clone();
        let plane = running.plane.clone();
        let blocks = running.blocks.clone();
        let writer = Arc::new(Mutex::new(writer));
        thread::Builder::new()
            .name("mw-stats".into())
            .spawn(move || {
                // Engine events come through the control plane's rate
                // limit (docs/daemon.md "Logs"); the counters keep every one.
                let log = |items: Vec<LogItem>, dropped: u64| {
                    for item in items {
                        match item {
                            LogItem::Event(t, e) => {
                                tracing::info!(target: "mwrouter::rrp", t_ms = t, "{e}");
                            }
                            LogItem::Suppressed(s) => {
                                tracing::warn!(target: "mwrouter::rrp", suppressed = s.count, "{s}");
                            }
                        }
                    }
                    if dropped > 0 {
                        tracing::warn!(
                            target: "mwrouter::rrp",
                            dropped,
                            "{dropped} log lines of the control plane dropped: the log thread fell behind"
                        );
                    }
                };
                // Floods of packets for the box, within the log's limit.
                let mut punt_log = PuntLog::default();
                #[cfg(feature = "dpdk")]
                let mut unmap_forced = 0u64;
                let started = Instant::now();
                let log_floods = |lines: Vec<punt_log::Line>| {
                    for l in lines {
                        tracing::warn!(target: "mwrouter::punt", "{l}");
                    }
                };
                while !stop.load(Ordering::Relaxed) {
                    let got = plane.call(Duration::from_secs(1), |cp| {
                        (EngineStats::of(cp.engine()), cp.take_events())
                    });
                    if let Ok((rstats, (items, dropped))) = got {
                        log(items, dropped);
                        let w = writer.lock().unwrap_or_else(|e| e.into_inner());
                        if let Err(e) = publish_blocks(&w, &blocks, &rstats, &plane.stats.load(0)) {
                            tracing::warn!("counters area: {e}");
                        }
                    }
                    let now_ms = started.elapsed().as_millis() as u64;
                    if now_ms >= punt_log.next_ms() {
                        let sources = dataplane::counters::heaviest_sources(&blocks);
                        log_floods(punt_log.lines(now_ms, &sources));
                    }
                    // What the DPDK drivers unmapped while workers polled,
                    // once no worker can be reading it; a warning when some
                    // could not wait (workers that stopped passing).
                    #[cfg(feature = "dpdk")]
                    {
                        ports::dpdk::unmap::reclaim();
                        let (_, _, forced) = ports::dpdk::unmap::counts();
                        if forced > unmap_forced {
                            unmap_forced = forced;
                            tracing::warn!(
                                forced,
                                "{forced} driver unmappings could not wait for the workers \
                                 (more than {} waiting): a worker has stopped passing",
                                ports::dpdk::unmap::MAX_PENDING
                            );
                        }
                    }
                    thread::sleep(Duration::from_millis(100));
                }
                log_floods(punt_log.flush(started.elapsed().as_millis() as u64));
                // The last lines, with every open window summarised.
                if let Ok((items, dropped)) =
                    plane.call(Duration::from_secs(1), |cp| cp.take_events_final())
                {
                    log(items, dropped);
                }
            })
            .map_err(run_err("starting the stats thread"))?
    };
    tracing::info!(
        router = %cfg.router.name,
        hrs = cfg.hrs.len(),
        socket = %cfg.admin.socket.display(),
        "mwrouterd started"
    );
    // Ports up, first FIBs published, admin socket listening: ready. The
    // control thread feeds the watchdog from here on.
    let backend_name = match cfg.backend() {
        Some(Backend::Udp) => "udp",
        Some(Backend::AfPacket) => "af_packet",
        Some(Backend::Dpdk) => "dpdk",
        None => "none",
    };
    let status_now = {
        let plane = running.plane.clone();
        move || {
            plane
                .call(Duration::from_secs(5), move |cp| {
                    service::status(cp, backend_name)
                })
                .unwrap_or_else(|e| format!("control thread: {e}"))
        }
    };
    notifier.ready(&status_now());
    let watchdog = notify::watchdog_from_env();
    if let Some(w) = watchdog {
        tracing::info!(
            interval_ms = w.as_millis() as u64,
            "systemd watchdog: fed every {} ms while every worker polls",
            (w / 2).as_millis()
        );
        let sleep = Duration::from_micros(cfg.workers.idle_sleep_us);
        if w / 2 <= sleep * 2 {
            tracing::warn!(
                "WatchdogSec={} ms is too short for workers.idle_sleep_us = {}: an idle \
                 worker may look stalled; give the watchdog several seconds",
                w.as_millis(),
                cfg.workers.idle_sleep_us
            );
        }
    }
    let hook = service::hook(
        notifier.clone(),
        watchdog,
        running.blocks.clone(),
        backend_name,
    );
    running
        .plane
        .call(Duration::from_secs(5), move |cp| cp.on_turn(hook))
        .map_err(|e| DaemonError::Run(format!("watchdog: {e}")))?;
    wait_for_signals(&backend, &notifier, &status_now);
    notifier.stopping();
    tracing::info!("mwrouterd stopping");
    drop(prometheus);
    drop(admin);
    stop_stats.store(true, Ordering::Relaxed);
    let _ = stats_thread.join();
    running.stop_workers.store(true, Ordering::Relaxed);
    for w in running.workers {
        let _ = w.join();
    }
    if let Ok(plane) = Arc::try_unwrap(running.plane) {
        let _ = plane.stop();
    }
    tracing::info!("mwrouterd stopped");
    Ok(())
}

/// Moves every thread but the workers onto the control cores
/// ([`placement`]), and says where they went.
fn place_threads(cfg: &Config, allowed: &[usize], workers: &[i32]) {
    match placement::control_cores(cfg, allowed) {
        Ok(None) => {}
        Ok(Some(cores)) => match placement::place_others(&cores, workers) {
            Ok(n) if !placement::shared_worker_cores(cfg, &cores).is_empty() => {
                let shared = placement::shared_worker_cores(cfg, &cores);
                tracing::warn!(
                    ?cores,
                    threads = n,
                    "threads other than the workers run on cores {cores:?}, sharing the \
                     workers' cores {shared:?}: a worker preempted mid-burst forwards unevenly, \
                     and on memif ports a peer's restart can then crash the process \
                     (docs/reliability.md)"
                )
            }
            Ok(n) => tracing::info!(
                ?cores,
                threads = n,
                "threads other than the workers run on cores {cores:?}"
            ),
            Err(e) => tracing::warn!("placing the threads other than the workers: {e}"),
        },
        Err(e) => tracing::warn!("{e}"),
    }
}

fn load(path: &Path) -> Result<Config, DaemonError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| DaemonError::Config(format!("{}: {e}", path.display())))?;
    Config::check_toml(&text).map_err(|errs| {
        DaemonError::Config(
            errs.iter()
                .map(|e| format!("{}: {e}", path.display()))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    })
}

fn start_admin(
    cfg: &Config,
    handler: Arc<Dispatcher<DaemonBackend>>,
) -> Result<ServerHandle, DaemonError> {
    let mut sc = ServerConfig::new(&cfg.admin.socket);
    sc.mode = Some(cfg.admin.mode);
    sc.policy = admin::Policy {
        admin_group: admin::policy::group_gid(&cfg.admin.admin_group),
        readonly_group: cfg
            .admin
            .readonly_group
            .as_deref()
            .and_then(admin::policy::group_gid),
        readonly_everyone: cfg.admin.readonly_everyone,
    };
    admin::serve(sc, handler)
        .map_err(|e| DaemonError::Run(format!("admin.socket {}: {e}", cfg.admin.socket.display())))
}

/// Waits for SIGTERM or SIGINT; reloads on SIGHUP, telling systemd
/// (RELOADING=1, then READY=1 with the status).
fn wait_for_signals(
    backend: &DaemonBackend,
    notifier: &notify::Notifier,
    status: &dyn Fn() -> String,
) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else {
        tracing::error!("cannot install signal handlers");
        return;
    };
    for sig in signals.forever() {
        if sig == SIGHUP {
            notifier.reloading();
            match backend.reload() {
                Ok(_) => {} // logged by the reload itself
                Err(e) => tracing::warn!("reload refused: {e}"),
            }
            notifier.send(&format!("READY=1\nSTATUS={}", status()));
        } else if sig == SIGTERM && backend.drain_on_sigterm() {
            // The first SIGTERM drains; the drain's end (or a second
            // SIGTERM) stops. systemd hears that the box is stopping now.
            if let Err(e) = backend.begin_drain(None) {
                tracing::warn!("{e}");
                return;
            }
            notifier.send(
                "STOPPING=1\nSTATUS=draining: routes at the largest cost until forwarding is quiet",
            );
        } else {
            return;
        }
    }
}

/// The binary's entry point: exit code 0, 1 (failed while running) or 2
/// (invalid configuration or usage).
pub fn main() -> i32 {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    main_with(&args)
}

/// Runs the daemon with `args` as [`main`] does after parsing them (for
/// programs that embed the router role, such as mwlab); the exit code.
pub fn main_with(args: &Args) -> i32 {
    match run(args) {
        Ok(()) => {
            if args.check {
                println!("{}: valid", args.config.display());
            }
            0
        }
        Err(DaemonError::Config(m)) => {
            eprintln!("mwrouterd: {m}");
            2
        }
        Err(DaemonError::Run(m)) => {
            eprintln!("mwrouterd: {m}");
            1
        }
    }
}
