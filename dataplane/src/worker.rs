//! The worker loop (docs/architecture.md "Threads and data flow"): one thread per
//! configured core polls its receive queues in bursts (of every port, or
//! with several workers of the ports it owns), runs the
//! engine, transmits, adopts a new FIB once per pass (before the pass's
//! first burst) and publishes its counters, with its ports' link counters
//! read at most every [`LINK_EVERY_NS`] (docs/stats.md "The link's
//! counters"). Nothing on this path locks, allocates or shares a written
//! cache line with another worker.
//!
//! Idle behaviour is configurable: DPDK workers busy-poll their pinned
//! lcores; in a lab of many processes workers spin for a while and then
//! sleep briefly, or block on the ports' file descriptors where every port
//! has one (kernel-socket backends).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use ports::clock::Clock;
use ports::{Burst, Port};
use rrp::PortId;

use crate::counters::{SOURCES_EVERY_NS, StatsBlock};
use rrp::PortStats;
use rrp::counters::WorkerStats;

/// Passes over the ports a stopping worker makes at most to drain what is
/// queued: enough for full rings (4096 bursts of 32), never unbounded.
pub const DRAIN_PASSES: usize = 4096;

/// The longest a stopping worker drains.
pub const DRAIN_TIME: Duration = Duration::from_millis(100);
use crate::engine::{Engine, EngineConfig};
use crate::fib::FibReader;
use crate::punt::WorkerChannels;

/// What a worker does when no packet arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdlePolicy {
    /// Poll without pause (a pinned DPDK lcore).
    BusyPoll,
    /// After `spins` empty passes, sleep `sleep` (or, when every port has a
    /// file descriptor, wait on them for up to `sleep`) before polling again.
    Adaptive {
        /// Empty passes before pausing.
        spins: u32,
        /// Longest pause.
        sleep: Duration,
    },
}

impl IdlePolicy {
    /// The lab default: spin a little, then pause up to a millisecond.
    pub const LAB: IdlePolicy = IdlePolicy::Adaptive {
        spins: 64,
        sleep: Duration::from_millis(1),
    };
}

/// Injected packets transmitted per pass at most.
const INJECT_PER_PASS: usize = 32;
/// Passes between two publications of the counters while traffic flows.
const PUBLISH_EVERY: u32 = 1024;

/// How often a worker reads its ports' link counters ([`Port::link_stats`])
/// when it publishes: a system call per port on the socket backends, the
/// device's counters on DPDK, so not at every publication while traffic
/// flows (every 1024 passes). An explicit [`Worker::publish`] reads them.
pub const LINK_EVERY_NS: u64 = 100_000_000;

/// One worker: its queues of every port, its engine and FIB reader.
pub struct Worker<P: Port> {
    id: usize,
    ports: Vec<P>,
    /// The ports it receives from (all by default; with several workers,
    /// the ports it owns: docs/dataplane.md "More than one worker").
    rx_ports: Vec<PortId>,
    engine: Engine,
    fib: FibReader,
    stats: Arc<StatsBlock>,
    rx: Burst<P::Buf>,
    stage: Vec<Burst<P::Buf>>,
    start: Instant,
    /// The time source read once per pass, if not `start` (the TSC on
    /// DPDK lcores: a read of the counter instead of a clock_gettime).
    clock: Option<Box<dyn Clock>>,
    passes: u32,
    /// When the heaviest punt sources were last reported.
    sources_at: u64,
    /// When the ports' link counters were last read.
    links_at: u64,
    /// Its own counters: passes, bursts, cycles (docs/stats.md "Workers").
    perf: WorkerStats,
    /// The time-stamp counter at the start of the last pass.
    pass_cycles: u64,
    /// Whether the last pass received any packet (its cycles are busy).
    pass_busy: bool,
    /// Its place in the grace periods of memory the ports' drivers free
    /// ([`ports::grace`]): marked at the start of every pass.
    grace: ports::grace::Mark,
}

impl<P: Port> Worker<P> {
    /// A worker with id `id` over `ports` (one queue of each port, in port order).
    pub fn new(
        id: usize,
        cfg: &EngineConfig,
        ports: Vec<P>,
        fib: FibReader,
        chan: WorkerChannels,
    ) -> Worker<P> {
        assert_eq!(ports.len(), cfg.hrs.len(), "one queue per configured port");
        let n = ports.len();
        Worker {
            id,
            engine: Engine::new(cfg, chan),
            stage: (0..n).map(|_| Burst::new()).collect(),
            stats: Arc::new(StatsBlock::new(n)),
            rx_ports: PortId::all(n).collect(),
            ports,
            fib,
            rx: Burst::new(),
            start: Instant::now(),
            clock: None,
            passes: 0,
            sources_at: 0,
            links_at: 0,
            perf: WorkerStats {
                tsc_hz: ports::tsc::hz(),
                ..WorkerStats::default()
            },
            pass_cycles: ports::tsc::cycles(),
            pass_busy: false,
            grace: ports::grace::Mark::new(),
        }
    }

    /// Reads the time once per pass from `clock` (nanoseconds from any
    /// origin that never goes back) instead of the monotonic clock: the
    /// TSC on a DPDK lcore costs a few instructions where `Instant::now`
    /// costs ~150 per pass (docs/performance.md).
    pub fn set_clock(&mut self, clock: Box<dyn Clock>) {
        self.clock = Some(clock);
    }

    /// The worker's id.
    pub fn id(&self) -> usize {
        self.id
    }

    /// The block where this worker publishes its counters.
    pub fn stats(&self) -> Arc<StatsBlock> {
        self.stats.clone()
    }

    /// The worker's counters as of now (also valid between passes); the
    /// link's counters in them as of the last publication.
    pub fn counters(&self) -> &[PortStats] {
        self.engine.counters()
    }

    /// The worker's per-group counters, by counter slot, and those of the
    /// groups without a slot (docs/multicast.md "Counters").
    pub fn mcast_counters(&self) -> (&[rrp::counters::GroupStats], &rrp::counters::GroupStats) {
        (self.engine.mcast_counters(), self.engine.mcast_unslotted())
    }

    /// The worker's counts of the packets the partitions refused.
    pub fn partition_drops(&self) -> &crate::partition_drops::PartitionDrops {
        self.engine.partition_drops()
    }

    /// Injections dropped because they named a port this box does not have.
    pub fn inject_bad_port(&self) -> u64 {
        self.engine.inject_bad_port()
    }

    /// Attaches this worker's side of the capture rings.
    pub fn set_capture(&mut self, tap: crate::capture::CaptureTap) {
        self.engine.set_capture(tap);
    }

    /// Attaches this worker's side of the trace rings.
    pub fn set_trace(&mut self, tap: crate::trace::TraceTap) {
        self.engine.set_trace(tap);
    }

    /// Receives from `ports` only (the others it only transmits on: their
    /// receive side is another worker's). Ports this worker does not have
    /// are ignored.
    pub fn receive_from(&mut self, ports: &[PortId]) {
        self.rx_ports = ports
            .iter()
            .copied()
            .filter(|p| p.index() < self.ports.len())
            .collect();
    }

    /// The ports it receives from.
    pub fn rx_ports(&self) -> &[PortId] {
        &self.rx_ports
    }

    /// The ports (for tests that drive both ends).
    pub fn ports_mut(&mut self) -> &mut [P] {
        &mut self.ports
    }

    /// The FIB version in use.
    pub fn fib_version(&self) -> u64 {
        self.fib.version()
    }

    /// One pass: adopt a new FIB if one was published, receive and process
    /// one burst from every port, transmit injected packets. Returns the
    /// number of packets received. The cycles since the last pass began
    /// count as busy if it received packets, else as idle (with any pause
    /// after it): one read of the time-stamp counter per pass.
    #[inline]
    pub fn poll_once(&mut self) -> usize {
        self.grace.quiescent();
        let t = ports::tsc::cycles();
        let spent = t.wrapping_sub(self.pass_cycles);
        self.pass_cycles = t;
        if self.pass_busy {
            self.perf.busy_cycles += spent;
        } else {
            self.perf.idle_cycles += spent;
        }
        self.fib.refresh();
        let now_ns = self.now_ns();
        let mut received = 0;
        let mut bursts = 0;
        for i in 0..self.rx_ports.len() {
            let p = self.rx_ports[i];
            self.ports[p.index()].rx_burst(&mut self.rx);
            if self.rx.is_empty() {
                continue;
            }
            received += self.rx.len();
            bursts += 1;
            self.engine.process_burst(
                self.fib.fib(),
                now_ns,
                p,
                &mut self.rx,
                &mut self.ports,
                &mut self.stage,
            );
        }
        let mut inj = Burst::new();
        self.engine
            .inject(now_ns, &mut self.ports, &mut inj, INJECT_PER_PASS);
        // A flag test per pass; a fence and a load when the pass punted; an
        // unpark only when, besides, the control thread sleeps: the
        // exception path (crate::wake).
        self.engine.wake_control();
        self.pass_busy = received > 0;
        self.perf.polls += 1;
        self.perf.idle_polls += u64::from(received == 0);
        self.perf.bursts += bursts;
        self.passes = self.passes.wrapping_add(1);
        if self.passes.is_multiple_of(PUBLISH_EVERY) {
            self.publish_at(now_ns);
            self.report_sources(now_ns);
        }
        received
    }

    /// The worker's clock, in nanoseconds.
    #[inline]
    fn now_ns(&self) -> u64 {
        match &self.clock {
            Some(c) => c.now_ns(),
            None => self.start.elapsed().as_nanos() as u64,
        }
    }

    /// Reports the heaviest punt sources, at most every
    /// [`SOURCES_EVERY_NS`]: a scan of the source buckets, off the
    /// per-packet path.
    #[cold]
    fn report_sources(&mut self, now_ns: u64) {
        if now_ns.saturating_sub(self.sources_at) < SOURCES_EVERY_NS {
            return;
        }
        self.sources_at = now_ns;
        let mut sources = self.engine.heaviest_sources(now_ns);
        for s in sources.iter_mut() {
            if let Some(p) = self.ports.get(s.port.index()) {
                s.link = p.link_kind();
            }
        }
        self.stats.publish_sources(&sources);
    }

    /// Reads every port's link counters into the port's counters (all
    /// ports: a worker transmits on every port, even those it does not
    /// receive from).
    #[cold]
    fn read_links(&mut self) {
        for (i, p) in self.ports.iter_mut().enumerate() {
            let l = p.link_stats();
            self.engine.set_link(PortId::new(i), &l);
        }
    }

    /// Publishes the counters, having read the link's counters if they
    /// were last read [`LINK_EVERY_NS`] ago or more.
    #[cold]
    fn publish_at(&mut self, now_ns: u64) {
        if now_ns.saturating_sub(self.links_at) >= LINK_EVERY_NS {
            self.links_at = now_ns;
            self.read_links();
        }
        self.publish_counters(false);
    }

    /// Stores the counters in the worker's block, its own with the sums of
    /// its ports' counters; the per-group counters only when one moved
    /// since they were last stored, or `all` (a copy of every group's
    /// counters is most of a publication's cost: docs/performance.md).
    fn publish_counters(&mut self, all: bool) {
        if self.engine.take_mcast_changed() || all {
            self.stats
                .publish_mcast(self.engine.mcast_counters(), self.engine.mcast_unslotted());
        }
        if self.engine.partition_drops_mut().take_changed() || all {
            self.stats.publish_partitions(self.engine.partition_drops());
        }
        let ports = self.engine.counters();
        self.perf.received = ports.iter().map(|c| c.received).sum();
        self.perf.transmitted = ports.iter().map(|c| c.transmitted).sum();
        self.perf.dropped = ports.iter().map(PortStats::dropped_total).sum();
        self.stats.publish(ports, &self.perf);
    }

    /// The worker's own counters as of now (passes, bursts, cycles; the
    /// packet sums as of the last publication).
    pub fn perf(&self) -> &WorkerStats {
        &self.perf
    }

    /// Publishes the counters now, the ports' link counters read now.
    pub fn publish(&mut self) {
        self.links_at = self.now_ns();
        self.read_links();
        self.publish_counters(true);
    }

    /// Polls until `stop` is set, pausing per `idle` when there is no
    /// traffic; then drains what is queued (at most [`DRAIN_PASSES`] passes
    /// or [`DRAIN_TIME`]) and publishes the counters.
    pub fn run(&mut self, stop: &AtomicBool, idle: IdlePolicy) {
        // Cycles before the first pass (setup, the thread's start) are not
        // the worker's.
        self.pass_cycles = ports::tsc::cycles();
        self.pass_busy = false;
        let mut empty = 0u32;
        while !stop.load(Ordering::Relaxed) {
            if self.poll_once() > 0 {
                empty = 0;
                continue;
            }
            empty = empty.saturating_add(1);
            if let IdlePolicy::Adaptive { spins, sleep } = idle
                && empty >= spins
            {
                let now_ns = self.now_ns();
                self.publish_at(now_ns);
                self.report_sources(now_ns);
                self.pause(sleep);
            }
        }
        // Drain what is already queued, then publish the final counters. The
        // drain is bounded: a port under sustained load (a NIC at line rate,
        // a replaying pcap vdev) never runs dry, and the worker must stop.
        let deadline = Instant::now() + DRAIN_TIME;
        for _ in 0..DRAIN_PASSES {
            if self.poll_once() == 0 || Instant::now() >= deadline {
                break;
            }
        }
        self.publish();
    }

    fn pause(&self, max: Duration) {
        let fds: Option<Vec<_>> = self
            .rx_ports
            .iter()
            .map(|p| self.ports[p.index()].wait_fd())
            .collect();
        match fds {
            Some(fds) if !fds.is_empty() => {
                let mut pfds: Vec<rustix::event::PollFd<'_>> = fds
                    .iter()
                    .map(|fd| rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN))
                    .collect();
                let ts = rustix::time::Timespec {
                    tv_sec: max.as_secs() as i64,
                    tv_nsec: max.subsec_nanos() as i64,
                };
                let _ = rustix::event::poll(&mut pfds, Some(&ts));
            }
            _ => thread::sleep(max),
        }
    }

    /// Runs the worker on a new thread named `mw-worker-N`, pinned to `core`
    /// if given, after calling `on_start` on that thread (e.g. to register
    /// it with DPDK). The thread returns the worker when `stop` is set.
    pub fn spawn(
        mut self,
        core: Option<usize>,
        idle: IdlePolicy,
        stop: Arc<AtomicBool>,
        on_start: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<thread::JoinHandle<Worker<P>>>
    where
        P: 'static,
    {
        thread::Builder::new()
            .name(format!("mw-worker-{}", self.id))
            .spawn(move || {
                if let Some(c) = core {
                    core_affinity::set_for_current(core_affinity::CoreId { id: c });
                }
                on_start();
                self.run(&stop, idle);
                self
            })
    }
}
