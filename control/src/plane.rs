//! The control-plane thread (docs/architecture.md "Threads and data flow"):
//!
//! ```text
//! control thread <-- punt rings (per class, bounded); notices; timers
//!   RRP engine (sans-IO) -> route tables -> FibSet -> published (RCU swap)
//!   outgoing RRP/ERR packets -> injected through a worker's tx ring
//! ```
//!
//! The thread never blocks a worker: it only pops from and pushes to the
//! workers' bounded lock-free rings and swaps FIB snapshots. When the
//! injection ring is full the packet is dropped and counted (the engine's
//! protocol recovers by refresh and keepalive).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::log_limit::{LogLimiter, LogLimits, Suppressed};
use admin::stats::PlaneStats;
use dataplane::{
    Buddies, ControlChannels, FibPublisher, FibSet, Injection, McastFib, from_route_tables, patched,
};
use mgmt::agent::AgentConfig;
use mgmt::client::Request;
use rrp::LinkKind;
use rrp::counters::SharedCounters;
use rrp::kind::PacketType;
use rrp::router::{Admission, Event, Output, RouteTables, Router, Time, with_destination};
use std::sync::mpsc::SyncSender;

use crate::management::{Management, Reply, Send as MgmtSend};
use crate::stats::Counters;
use rrp::wire::packet::Packet;
use rrp::{Address, NativeAddr, PortId};

/// A request for the control thread: runs against the engine between two
/// passes (admin queries and run-time changes).
type Job = Box<dyn FnOnce(&mut ControlPlane) + Send>;

/// Why a request to the control thread failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaneError {
    /// The thread has stopped.
    Stopped,
    /// No answer within the time allowed.
    Timeout,
}

impl std::fmt::Display for PlaneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PlaneError::Stopped => "the control plane has stopped",
            PlaneError::Timeout => "the control plane did not answer in time",
        })
    }
}

impl std::error::Error for PlaneError {}

/// What the rest of the daemon keeps of a running control plane.
#[derive(Debug)]
pub struct PlaneHandle {
    stop: Arc<AtomicBool>,
    /// The control thread's counters, as it last stored them (one set).
    pub stats: Arc<SharedCounters<PlaneStats>>,
    jobs: std::sync::mpsc::Sender<Job>,
    thread: Option<thread::JoinHandle<ControlPlane>>,
}

impl PlaneHandle {
    /// Runs `f` on the control thread, between two passes, and returns its
    /// result; waits at most `timeout`. Used for admin queries (`f` reads
    /// the engine) and run-time changes (`f` changes it).
    pub fn call<T: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut ControlPlane) -> T + Send + 'static,
    ) -> Result<T, PlaneError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::new(move |cp: &mut ControlPlane| {
            let _ = tx.send(f(cp));
        });
        self.jobs.send(job).map_err(|_| PlaneError::Stopped)?;
        self.wake();
        rx.recv_timeout(timeout).map_err(|e| match e {
            std::sync::mpsc::RecvTimeoutError::Timeout => PlaneError::Timeout,
            std::sync::mpsc::RecvTimeoutError::Disconnected => PlaneError::Stopped,
        })
    }

    /// Wakes the control thread if it sleeps (a job was queued); an
    /// unpark before its park makes the park return at once.
    fn wake(&self) {
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    /// Stops the thread and returns the control plane (engine included).
    pub fn stop(mut self) -> ControlPlane {
        self.stop.store(true, Ordering::Relaxed);
        self.wake();
        self.thread
            .take()
            .expect("joined once")
            .join()
            .expect("control thread panicked")
    }
}

/// The control plane of one box: its RRP engine and its side of every
/// worker's rings.
pub struct ControlPlane {
    engine: Router,
    hrs: Vec<Address>,
    workers: Vec<ControlChannels>,
    publisher: FibPublisher,
    start: Instant,
    /// The thread's counters, and the copy other threads read.
    stats: PlaneStats,
    shared_stats: Arc<SharedCounters<PlaneStats>>,
    /// Log lines not yet taken by [`ControlPlane::take_events`]: engine
    /// events the rate limit let through, and its summaries.
    events: std::collections::VecDeque<LogItem>,
    /// Lines dropped because nobody took them in time (the oldest go).
    events_dropped: u64,
    /// The rate limit on engine events (docs/daemon.md "Logs").
    log: LogLimiter,
    next_worker: usize,
    /// In-band management (docs/management.md), once enabled.
    mgmt: Option<Management>,
    /// The engine's [`Router::lrt_changes`] when the workers' buddies
    /// were last brought up to date.
    buddies_at: Option<u64>,
    /// Management ran since the partitions' tables were last looked at
    /// (only management changes them).
    partitions_due: bool,
    /// What runs at every turn of the control thread's loop (the daemon's
    /// watchdog and status, docs/daemon.md "systemd").
    on_turn: Option<TurnHook>,
}

/// A function the control thread runs at every turn of its loop, with the
/// plane as it is between two passes; it must be cheap when it has nothing
/// to do.
pub type TurnHook = Box<dyn FnMut(&ControlPlane) + Send>;

/// Log lines kept for readers before the oldest are dropped.
const EVENTS_KEPT: usize = 4096;

/// Punts the control thread takes from one worker in one pass, at most:
/// then notices, due timers (keepalives among them) and outputs get their
/// turn, so that a flood of punts cannot hold them off (docs/dataplane.md
/// "Punt classes").
const PUNTS_PER_PASS: usize = 256;

/// A line for the daemon's log from the control plane.
#[derive(Debug, Clone)]
pub enum LogItem {
    /// An engine event at a time of the engine's clock.
    Event(Time, Event),
    /// Lines the rate limit held back in a window.
    Suppressed(Suppressed),
}

impl ControlPlane {
    /// A control plane running `engine`, talking to the workers through
    /// `workers` (one per worker) and publishing FIBs with `publisher`.
    pub fn new(
        engine: Router,
        workers: Vec<ControlChannels>,
        publisher: FibPublisher,
    ) -> ControlPlane {
        let hrs = engine.config().hrs.iter().map(|h| h.address).collect();
        ControlPlane {
            engine,
            hrs,
            workers,
            publisher,
            start: Instant::now(),
            stats: PlaneStats::default(),
            shared_stats: Arc::new(SharedCounters::new(1)),
            events: std::collections::VecDeque::new(),
            events_dropped: 0,
            log: LogLimiter::new(LogLimits::default()),
            next_worker: 0,
            mgmt: None,
            buddies_at: None,
            partitions_due: true,
            on_turn: None,
        }
    }

    /// Runs `f` at every turn of the control thread's loop from now on
    /// (replacing what ran before): at least every `tick` of
    /// [`ControlPlane::spawn`], and only while the loop turns, so a stuck
    /// control thread stops running it.
    pub fn on_turn(&mut self, f: TurnHook) {
        self.on_turn = Some(f);
    }

    /// Runs the engine's first timers now, before the workers start: the
    /// FIBs of the configured static entries are published (and the first
    /// sweeps queued for the workers), so that configured routes forward
    /// from the first packet.
    pub fn start_now(&mut self) {
        let now = self.now();
        self.engine.on_timer(now);
        self.drain(now);
    }

    /// Starts in-band management: the agent answers management packets for
    /// this box, the client serves `mwctl mad`; `counters` are shared with
    /// the admin socket.
    pub fn enable_management(
        &mut self,
        cfg: AgentConfig,
        counters: Counters,
        kinds: Vec<LinkKind>,
    ) {
        let now = self.now();
        self.mgmt = Some(Management::new(cfg, now, counters, kinds));
    }

    /// Runs these SAN managers (docs/manager.md).
    pub fn set_managers(&mut self, managers: Vec<(PortId, mgmt::manager::ManagerConfig)>) {
        let now = self.now();
        if let Some(m) = self.mgmt.as_mut() {
            m.set_managers(now, managers);
        }
    }

    /// Runs the fabric's performance manager (docs/management.md "Fabric
    /// performance manager") with `cfg`.
    pub fn set_perf_manager(&mut self, cfg: mgmt::perfmgr::PerfConfig) {
        let now = self.now();
        if let Some(m) = self.mgmt.as_mut() {
            m.set_perf_manager(now, cfg);
        }
    }

    /// The management agent and client, if enabled.
    pub fn management(&self) -> Option<&Management> {
        self.mgmt.as_ref()
    }

    /// The management agent and client, to reconfigure them.
    pub fn management_mut(&mut self) -> Option<&mut Management> {
        self.mgmt.as_mut()
    }

    /// Sends a management request; its answer (or time-out) goes to `reply`.
    /// Refused (`false`) when management is not enabled.
    pub fn mad_start(&mut self, request: Request, reply: SyncSender<Reply>) -> bool {
        let now = self.now();
        let Some(m) = self.mgmt.as_mut() else {
            return false;
        };
        let sends = m.start(now, &mut self.engine, &self.stats, request, reply);
        self.send_all(sends);
        self.drain(now);
        true
    }

    fn send_all(&mut self, sends: Vec<MgmtSend>) {
        for s in sends {
            // Signed on a SAN with keys, as the engine's packets are.
            let mut packet = s.packet;
            self.engine.sign(s.port, &mut packet);
            self.inject(s.port, s.native, packet);
        }
    }

    /// A punted management packet: to the agent.
    fn management_packet(
        &mut self,
        now: Time,
        port: PortId,
        native: NativeAddr,
        view: &Packet<&[u8]>,
    ) {
        if self.mgmt.is_none() {
            return;
        }
        // The SAN's authentication, as for RRP and ERR (refusals are the
        // engine's counters and log lines).
        let stripped = match self.engine.admit(now, port, &native, view) {
            Admission::AsIs => None,
            Admission::Refused(_) => return,
            Admission::Stripped(bytes) => Some(bytes),
        };
        let checked = match &stripped {
            Some(b) => match Packet::new_checked(&b[..], usize::MAX) {
                Ok(p) => Some(p),
                Err(_) => return,
            },
            None => None,
        };
        let view = checked.as_ref().unwrap_or(view);
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        self.partitions_due = true;
        let h = view.header();
        let sends = m.handle(
            now,
            &mut self.engine,
            &self.stats,
            port,
            native,
            h.src(),
            h.dst(),
            view.data(),
        );
        self.send_all(sends);
    }

    /// Milliseconds since the plane started: the engine's clock.
    pub fn now(&self) -> Time {
        self.start.elapsed().as_millis() as Time
    }

    /// The groups of the published multicast table and their counter
    /// slots (the workers count by slot).
    pub fn mcast_slots(&self) -> Vec<(Address, u16)> {
        self.publisher.current().mcast().groups().to_vec()
    }

    /// The engine.
    pub fn engine(&self) -> &Router {
        &self.engine
    }

    /// The engine, to change it at run time (its outputs are carried out at
    /// the end of the current pass).
    pub fn engine_mut(&mut self) -> &mut Router {
        &mut self.engine
    }

    /// Sets every worker's punt budgets and notice rate (per second, burst).
    pub fn set_rates(&self, punt: rrp::PuntBudgets, notice: (u64, u64)) {
        for w in &self.workers {
            w.set_rates(punt, notice);
        }
    }

    /// Carries out the engine's pending outputs now.
    pub fn flush(&mut self) {
        let now = self.now();
        // A job may have changed the partitions (a reload).
        self.partitions_due = true;
        self.drain(now);
    }

    /// The route tables last computed.
    pub fn routes(&self) -> Arc<RouteTables> {
        self.engine.fib()
    }

    /// The control thread's counters.
    pub fn stats(&self) -> PlaneStats {
        self.stats
    }

    /// Takes the log lines gathered so far (engine events within the rate
    /// limit, and the limit's summaries of windows that ended), and how
    /// many were dropped since the last call because more than
    /// [`EVENTS_KEPT`] waited.
    pub fn take_events(&mut self) -> (Vec<LogItem>, u64) {
        let now = self.now();
        for s in self.log.expired(now) {
            self.keep(LogItem::Suppressed(s));
        }
        let dropped = std::mem::take(&mut self.events_dropped);
        (std::mem::take(&mut self.events).into(), dropped)
    }

    /// [`ControlPlane::take_events`] with every open window of the rate
    /// limit summarised (at shutdown).
    pub fn take_events_final(&mut self) -> (Vec<LogItem>, u64) {
        let now = self.now();
        for s in self.log.flush(now) {
            self.keep(LogItem::Suppressed(s));
        }
        let dropped = std::mem::take(&mut self.events_dropped);
        (std::mem::take(&mut self.events).into(), dropped)
    }

    /// Queues a log line for the reader, dropping the oldest when full.
    fn keep(&mut self, item: LogItem) {
        if self.events.len() >= EVENTS_KEPT {
            self.events.pop_front();
            self.events_dropped += 1;
        }
        self.events.push_back(item);
    }

    /// One pass: punts (by class, routing first; at most
    /// [`PUNTS_PER_PASS`] from each worker), notices, due timers, then the
    /// engine's outputs. Returns how many punts and notices it handled.
    pub fn poll_once(&mut self) -> usize {
        let now = self.now();
        let mut work = 0;
        for w in 0..self.workers.len() {
            let mut taken = 0;
            while taken < PUNTS_PER_PASS
                && let Some(p) = self.workers[w].recv_punt()
            {
                taken += 1;
                work += 1;
                self.stats.punts += 1;
                // The worker located the packet: its layout comes along, so
                // the engine reads it without walking it again.
                match Packet::with_layout(&p.data[..], p.layout) {
                    Ok(view) if view.header().packet_type() == PacketType::MANAGEMENT => {
                        self.management_packet(now, p.in_port, p.native_src, &view)
                    }
                    Ok(view) => self
                        .engine
                        .handle_packet(now, p.in_port, &p.native_src, &view),
                    Err(_) => self
                        .engine
                        .handle_bytes(now, p.in_port, &p.native_src, &p.data),
                }
                self.workers[w].recycle(p);
                self.drain(now);
            }
            while let Some(n) = self.workers[w].recv_notice() {
                work += 1;
                self.stats.notices += 1;
                self.engine.handle_notice(now, &n);
                self.drain(now);
            }
        }
        if now >= self.engine.next_timer() {
            self.engine.on_timer(now);
            self.drain(now);
        }
        if let Some(m) = self.mgmt.as_mut()
            && now >= m.next_timer()
        {
            let sends = m.on_timer(now, &mut self.engine, &self.stats);
            self.partitions_due = true;
            self.send_all(sends);
            self.drain(now);
        }
        self.publisher.reclaim();
        self.shared_stats.store_at(0, &self.stats);
        work
    }

    /// Parks the thread for at most `pause`, unless a worker queued a punt
    /// or a notice since the last pass: every worker's flag set, a fence,
    /// one more look at the rings (dataplane::wake). A worker that queues
    /// after that look sees the flag and unparks; a job's sender unparks
    /// always.
    fn park(&self, pause: Duration) {
        for w in &self.workers {
            w.sleep();
        }
        dataplane::Wake::fence();
        if !self.workers.iter().any(ControlChannels::pending) {
            thread::park_timeout(pause);
        }
        for w in &self.workers {
            w.awake();
        }
    }

    /// Hands one packet to a worker for transmission (round robin).
    fn inject(&mut self, port: PortId, native: NativeAddr, packet: Vec<u8>) {
        if self.workers.is_empty() {
            return;
        }
        let w = self.next_worker % self.workers.len();
        self.next_worker = self.next_worker.wrapping_add(1);
        let inj = Injection {
            port,
            native_dst: native,
            data: packet,
        };
        match self.workers[w].inject(inj) {
            Ok(()) => self.stats.injected += 1,
            Err(_) => self.stats.inject_full += 1,
        }
    }

    fn drain(&mut self, now: Time) {
        let mut node_down: Option<(Address, PortId)> = None;
        while let Some(o) = self.engine.poll_output() {
            match o {
                Output::Send {
                    port,
                    native,
                    packet,
                } => self.inject(port, native, packet),
                Output::SendEach { port, to, packet } => {
                    for (dst, native) in to {
                        self.inject(port, native, with_destination(&packet, dst));
                    }
                }
                Output::FibChanged(v) => {
                    // The rows that changed, patched into a copy of the set
                    // the workers use; built whole when the engine cannot
                    // say (the first time, or after very many changes).
                    let tables = self.engine.fib();
                    let current = self.publisher.current();
                    let mut fib = match self.engine.take_fib_changes() {
                        Some(c) => patched(&current, &tables, &c),
                        None => {
                            let mut f = from_route_tables(&tables, &self.hrs);
                            f.set_mcast(current.mcast_arc());
                            f.set_buddies(current.buddies_arc());
                            f.set_partitions(current.partitions_arc());
                            f
                        }
                    };
                    fib.set_port_mtus(self.engine.config().hrs.iter().map(|h| h.mtu));
                    self.publisher.publish(fib);
                    self.stats.fibs_published += 1;
                    self.stats.fib_version = v;
                }
                Output::McastChanged(_) => {
                    // The group state changed: the same FIBs with the new
                    // multicast table (docs/multicast.md).
                    let current = self.publisher.current();
                    let m = McastFib::following(&self.engine.mcast(), current.mcast());
                    let mut fib = (*current).clone();
                    fib.set_mcast(Arc::new(m));
                    self.publisher.publish(fib);
                    self.stats.fibs_published += 1;
                }
                Output::Event(e) => {
                    // Management traps for what the operator's manager
                    // must hear of (docs/management.md "Traps and notices").
                    if let Some(m) = self.mgmt.as_mut() {
                        let sends = match &e {
                            Event::Port { port, up } => {
                                m.port_changed(now, &mut self.engine, &self.stats, *port, *up)
                            }
                            // A buddy detected down here (the engine says
                            // which port lost it just before); an HR of
                            // this box going down is trap 128's.
                            Event::HrDown { hr, from: None, .. } => match node_down {
                                Some((node, port)) if node == *hr => {
                                    m.hr_down(now, &mut self.engine, &self.stats, *hr, port)
                                }
                                _ => Vec::new(),
                            },
                            Event::RtLimit {
                                port,
                                from,
                                limit,
                                max,
                            } => {
                                let which = if *limit == rrp::router::RtRefusal::HrFull {
                                    mgmt::attr::Notice::RT_LIMIT_HR
                                } else {
                                    mgmt::attr::Notice::RT_LIMIT_NEIGHBOUR
                                };
                                let max = u32::try_from(*max).unwrap_or(u32::MAX);
                                m.rt_limit(
                                    now,
                                    &mut self.engine,
                                    &self.stats,
                                    *port,
                                    *from,
                                    which,
                                    max,
                                )
                            }
                            // A packet refused by the SAN's authentication
                            // (trap 1027, once per source within the
                            // agent's window).
                            Event::AuthRefused {
                                port,
                                from,
                                native,
                                why,
                            } => m.auth_refused(
                                now,
                                &mut self.engine,
                                &self.stats,
                                *port,
                                *from,
                                *native,
                                *why,
                            ),
                            _ => Vec::new(),
                        };
                        self.send_all(sends);
                    }
                    node_down = match &e {
                        Event::NodeDown { port, node } => Some((*node, *port)),
                        _ => None,
                    };
                    // Whoever reaches a port can cause an event per
                    // packet: the log takes a bounded share, the counters
                    // have every one.
                    if self.log.admit(now, e.kind().name(), e.source()) {
                        self.keep(LogItem::Event(now, e));
                    }
                }
            }
        }
        self.publish_mtus();
        self.publish_buddies();
        self.publish_partitions(now);
    }

    /// Publishes each HR's buddies to the workers when an LRT changed and
    /// the buddies with it: the punt classes' view of who is a buddy
    /// (docs/dataplane.md "Punt classes").
    fn publish_buddies(&mut self) {
        let changes = self.engine.lrt_changes();
        if self.buddies_at == Some(changes) {
            return;
        }
        self.buddies_at = Some(changes);
        let buddies = Buddies::new(
            (0..self.hrs.len()).map(|p| self.engine.buddies_with_native(PortId::new(p))),
        );
        let current = self.publisher.current();
        if *current.buddies() == buddies {
            return;
        }
        let mut fib = FibSet::clone(&current);
        fib.set_buddies(Arc::new(buddies));
        self.publisher.publish(fib);
        self.stats.fibs_published += 1;
    }

    /// Publishes each HR's partitions to the workers when the tables of its
    /// SAN changed (this box's master's, or those the SAN's master set to
    /// the agent; docs/partitions.md "At the routers"). Cheap when nothing
    /// changed: looked at only after management ran, and then a digest of
    /// the tables' sources is compared.
    fn publish_partitions(&mut self, now: Time) {
        if !std::mem::take(&mut self.partitions_due) {
            return;
        }
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        let Some((guard, refused)) = m.partition_guard(now, &self.hrs) else {
            return;
        };
        self.stats.partition_tables_refused += refused as u64;
        let current = self.publisher.current();
        if *current.partitions() == guard {
            return;
        }
        let mut fib = FibSet::clone(&current);
        fib.set_partitions(Arc::new(guard));
        self.publisher.publish(fib);
        self.stats.fibs_published += 1;
    }

    /// Publishes the ports' MTUs to the workers when they changed (by a
    /// management Set or a reload) without any route changing with them.
    fn publish_mtus(&mut self) {
        let current = self.publisher.current();
        let want = self.engine.config().hrs.iter().map(|h| h.mtu);
        if current.port_mtus().iter().copied().eq(want.clone()) {
            return;
        }
        let mut fib = FibSet::clone(&current);
        fib.set_port_mtus(want);
        self.publisher.publish(fib);
        self.stats.fibs_published += 1;
    }

    /// Runs the plane on a new thread named `mw-control` until stopped. The
    /// thread polls its rings and, when there is nothing to do, parks until
    /// a worker queues a punt or notice, a job arrives, or the next timer of
    /// the engine or management is due, and never longer than `tick`
    /// (docs/architecture.md "The control thread's loop").
    pub fn spawn(mut self, tick: Duration) -> std::io::Result<PlaneHandle> {
        let stop = Arc::new(AtomicBool::new(false));
        let stats = self.shared_stats.clone();
        let s = stop.clone();
        let (jobs, job_rx) = std::sync::mpsc::channel::<Job>();
        let thread = thread::Builder::new()
            .name("mw-control".into())
            .spawn(move || {
                for w in &self.workers {
                    w.register(thread::current());
                }
                while !s.load(Ordering::Relaxed) {
                    if let Some(mut f) = self.on_turn.take() {
                        f(&self);
                        self.on_turn.get_or_insert(f);
                    }
                    let mut ran = false;
                    while let Ok(job) = job_rx.try_recv() {
                        job(&mut self);
                        self.flush();
                        self.shared_stats.store_at(0, &self.stats);
                        ran = true;
                    }
                    if self.poll_once() > 0 || ran {
                        continue;
                    }
                    let now = self.now();
                    let next = self
                        .mgmt
                        .as_ref()
                        .map_or(Time::MAX, Management::next_timer)
                        .min(self.engine.next_timer());
                    let until_timer = next.saturating_sub(now);
                    let pause = tick.min(Duration::from_millis(until_timer.max(1)));
                    self.park(pause);
                }
                self
            })?;
        Ok(PlaneHandle {
            stop,
            stats,
            jobs,
            thread: Some(thread),
        })
    }
}
