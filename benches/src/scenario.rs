//! The engine benchmark: one worker's view of a 4-port box with a full FIB,
//! packets circulating through in-memory ports, and the loop that drives
//! them (rx burst -> process -> tx burst -> back to rx), the same for every
//! variant.
//!
//! - The box: HRs 0x0110, 0x0120, 0x0130, 0x0140 on ports 0-3, every SAN an
//!   MTU of 1500 bytes.
//! - The FIB set ([`full_fib`]): for every ingress port, every one of the
//!   65,536 destinations except this box's (its 4 HRs, Hey-You, broadcast)
//!   has a route, to one of 8 next hops on each of the 3 other ports (a hash
//!   of the destination picks it): 32 next hops in all, never back onto the
//!   ingress SAN (no redirect, no loop).
//! - Packets ([`build_packet`]): L3 packets to destinations drawn (seeded)
//!   from [`DESTINATIONS`] distinct node addresses; L2 packets carrying a
//!   chain of router hops (Ethernet layout, 16 bytes each) whose first names
//!   an HR of this box and a next hop MAC, then the EEP header. The size is
//!   the buffer's length as the router receives it: a MessageWay packet is a
//!   multiple of 8 bytes, so a 1500-byte buffer holds a 1496-byte packet and
//!   4 bytes of frame padding (which the engine trims). At 64 bytes an L2
//!   packet holds 2 hops and 8 data bytes (3 hops would not fit); at 1500,
//!   3 hops.
//! - Ports ([`crate::port::BenchPort`]): what a port transmits comes back on
//!   its own receive, restored to the original packet. An L2 packet therefore
//!   always comes back on the port its first hop names (the engine forwards
//!   it out of that same port: a hairpin, which the L2 path allows); an L3
//!   packet moves on to another port at every pass.
//! - Steps: [`EngineStep`] runs [`Engine::process_burst`] (what
//!   [`dataplane::Worker::poll_once`] does, with the FIB adopted through a
//!   [`dataplane::FibReader`] once per pass); [`BaselineStep`] only reads each
//!   packet's first cache line, finds the trailer from DL, shifts the EI,
//!   trims, encapsulates and transmits the whole burst on the next port.

use rrp::PortId;
use std::collections::HashSet;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use dataplane::fib::NH_LOCAL;
use dataplane::{
    ChannelConfig, ControlChannels, Engine, EngineConfig, FibReader, FibSet, NextHop, channels,
    fib_channel,
};
use ports::{Burst, HeapBuf, PacketBuf, Port};
use rrp::Address;
use rrp::DropReason;
use rrp::NativeAddr;
use rrp::PortStats;
use rrp::counters::CounterSet;
use rrp::kind::PacketType;
use rrp::wire::{HEADER_LEN, HeaderRepr, PacketRepr, RouterHop, TRAILER_LEN, shift_ei};

use crate::Rng;
use crate::port::BenchPort;

/// Ports (= HRs) of the box.
pub const PORTS: usize = 4;
/// The HR address of each port.
pub const HRS: [Address; PORTS] = [
    Address(0x0110),
    Address(0x0120),
    Address(0x0130),
    Address(0x0140),
];
/// MTU of every SAN, in bytes.
pub const MTU: u32 = 1500;
/// Next hops on each port.
pub const NEXT_HOPS_PER_PORT: usize = 8;
/// Headroom of every buffer (as DPDK's mbufs).
pub const HEADROOM: usize = 128;
/// Size of every buffer, headroom included (as DPDK's default mbufs).
pub const BUF_SIZE: usize = 2048 + HEADROOM;
/// Distinct routed destinations the L3 packets are sent to.
pub const DESTINATIONS: usize = 4096;
/// Packets in flight per port by default (4 ports: 4,096 packets).
pub const DEFAULT_PER_PORT: usize = 1024;
/// The seed of every random choice.
pub const SEED: u64 = 0x6d77_726f_7574_6572;
/// The packet sizes measured, as the router receives them.
pub const SIZES: [usize; 2] = [64, 1500];
/// The packet type of the benchmark's data packets (user defined).
pub const DATA_PT: PacketType = PacketType(0x0100);

/// L3 (routed by destination) or L2 (source routed) packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// An EEP header first: looked up in the FIB.
    L3,
    /// A chain of router hops first: the first one is consumed.
    L2,
}

impl Kind {
    /// "l3" or "l2".
    pub fn name(self) -> &'static str {
        match self {
            Kind::L3 => "l3",
            Kind::L2 => "l2",
        }
    }
}

/// The native address of port `port` on its SAN.
pub const fn port_mac(port: usize) -> NativeAddr {
    NativeAddr::mac([0x02, 0x4D, 0x57, 0x00, 0x00, port as u8])
}

/// The neighbour whose packets port `port` receives.
pub const fn peer_mac(port: usize) -> NativeAddr {
    NativeAddr::mac([0x02, 0x4D, 0x57, 0xFE, 0x00, port as u8])
}

/// Next hop `k` on port `port`.
pub const fn next_hop_mac(port: usize, k: usize) -> [u8; 6] {
    [0x02, 0x4D, 0x57, 0x01, port as u8, k as u8]
}

/// The engine's view of the box.
pub fn engine_config() -> EngineConfig {
    EngineConfig {
        hrs: HRS.to_vec(),
        mtus: vec![MTU; PORTS],
    }
}

/// The full FIB set and the number of routes in each ingress port's FIB.
pub fn full_fib() -> (FibSet, usize) {
    let mut fib = FibSet::new(PORTS, &HRS);
    let mut idx = [[0u16; NEXT_HOPS_PER_PORT]; PORTS];
    for (q, row) in idx.iter_mut().enumerate() {
        for (k, i) in row.iter_mut().enumerate() {
            *i = fib.add_nexthop(NextHop {
                port: PortId(q as u16),
                native: NativeAddr::mac(next_hop_mac(q, k)),
                mtu: MTU,
                redirect: false,
            });
        }
    }
    let mut routes = 0;
    for p in 0..PORTS {
        routes = 0;
        for d in 0..=u16::MAX {
            if fib.lookup(PortId::new(p), d) == NH_LOCAL {
                continue;
            }
            let h = crate::mix64(d as u64 ^ SEED);
            let q = (p + 1 + (h % (PORTS as u64 - 1)) as usize) % PORTS;
            let k = ((h >> 32) % NEXT_HOPS_PER_PORT as u64) as usize;
            fib.set(PortId::new(p), Address(d), idx[q][k]);
            routes += 1;
        }
    }
    (fib, routes)
}

/// The source address of the packets of the partitions scenario
/// ([`partitions_fib`]): a node of no SAN's tables.
pub const PARTITION_SRC: Address = Address(0x0020);

/// The full FIB set with partitions on every port (the "partitions on"
/// scenario, `l3p_64`): each port's SAN has tables in which every one of
/// `dests` is a full member of the default partition and of 0x0010, and
/// the peer on each port is a router of that SAN (a buddy of its HR), so
/// that packets from [`PARTITION_SRC`], unmarked, cross in transit: every
/// packet takes the whole check (the source from a router, the
/// destination a member) and is forwarded.
pub fn partitions_fib(dests: &[Address]) -> (FibSet, usize) {
    use dataplane::partitions::{PartitionGuard, SanPartitions};
    use rrp::partition_mark::DEFAULT_KEY;
    let (mut fib, routes) = full_fib();
    let san = || {
        SanPartitions::new(
            dests
                .iter()
                .map(|&d| (d, [(DEFAULT_KEY, true), (0x0010, true)])),
        )
        .expect("tables of node addresses")
    };
    fib.set_partitions(std::sync::Arc::new(PartitionGuard::new(
        (0..PORTS).map(|_| Some(san())),
    )));
    fib.set_buddies(std::sync::Arc::new(dataplane::Buddies::new(
        (0..PORTS).map(|p| vec![(Address(0x0030 + p as u16), peer_mac(p))]),
    )));
    (fib, routes)
}

/// `DESTINATIONS` distinct node addresses (none of this box), in random order.
pub fn destinations(rng: &mut Rng) -> Vec<Address> {
    let mut seen = HashSet::new();
    let mut v = Vec::with_capacity(DESTINATIONS);
    while v.len() < DESTINATIONS {
        let a = Address(0x0040 + rng.below(0x8000 - 0x0040) as u16);
        if HRS.contains(&a) || !seen.insert(a) {
            continue;
        }
        v.push(a);
    }
    v
}

/// Router hops in an L2 packet of `size` bytes.
pub const fn l2_hops(size: usize) -> usize {
    if size < 128 { 2 } else { 3 }
}

/// A packet of `kind` to `dst`, `size` bytes long as received (the
/// MessageWay packet, a multiple of 8 bytes, then frame padding).
pub fn build_packet(kind: Kind, size: usize, dst: Address, rng: &mut Rng) -> Vec<u8> {
    let eep = size & !7;
    let l2rhs: Vec<_> = match kind {
        Kind::L3 => Vec::new(),
        Kind::L2 => (0..l2_hops(size))
            .map(|i| {
                if i == 0 {
                    let q = rng.below(PORTS as u64) as usize;
                    let k = rng.below(NEXT_HOPS_PER_PORT as u64) as usize;
                    RouterHop::new(HRS[q], NativeAddr::mac(next_hop_mac(q, k))).to_l2rh()
                } else {
                    // Routers further on: HR 0x0200 + ..., a next hop MAC.
                    let hr = Address(0x0200 + 0x10 * i as u16 + rng.below(8) as u16);
                    let b = rng.bytes(5);
                    let mac = [0x02, b[0], b[1], b[2], b[3], b[4]];
                    RouterHop::new(hr, NativeAddr::mac(mac)).to_l2rh()
                }
            })
            .collect(),
    };
    let l2_bytes: usize = l2rhs.iter().map(|l| l.buffer_len()).sum();
    let data_len = eep
        .checked_sub(l2_bytes + HEADER_LEN + TRAILER_LEN)
        .expect("packet too small for its L2RHs");
    let src = Address(0x0040 + rng.below(0x8000 - 0x0040) as u16);
    let p = PacketRepr {
        l2rhs,
        header: HeaderRepr {
            dst,
            src,
            packet_type: DATA_PT,
            ..HeaderRepr::default()
        },
        data: rng.bytes(data_len),
        ei: 0,
    };
    let mut v = p.to_bytes().expect("a valid packet");
    assert_eq!(v.len(), eep);
    v.resize(size, 0);
    v
}

/// What one timed run did.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunStats {
    /// Packets received (and, in a clean run, forwarded).
    pub packets: u64,
    /// Non-empty receive bursts.
    pub bursts: u64,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
    /// CPU time of the thread during the run: the wall-clock time less the
    /// time the thread was not running (preempted by other work on a shared
    /// machine).
    pub cpu: Duration,
}

/// The CPU time of the calling thread; `None` under valgrind, where
/// rustix's vDSO lookup faults (the runs then count wall-clock time).
pub fn thread_cpu_time() -> Option<Duration> {
    static UNDER_VALGRIND: OnceLock<bool> = OnceLock::new();
    let valgrind = *UNDER_VALGRIND
        .get_or_init(|| std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("valgrind")));
    if valgrind {
        return None;
    }
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Some(Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
}

impl RunStats {
    /// Million packets per second of the thread's CPU time.
    pub fn mpps(&self) -> f64 {
        self.packets as f64 / self.cpu.as_secs_f64() / 1e6
    }

    /// Million packets per second of wall-clock time.
    pub fn wall_mpps(&self) -> f64 {
        self.packets as f64 / self.elapsed.as_secs_f64() / 1e6
    }

    /// Nanoseconds of CPU time per packet.
    pub fn ns_per_packet(&self) -> f64 {
        self.cpu.as_nanos() as f64 / self.packets.max(1) as f64
    }

    /// The share of the run's wall-clock time the thread was running.
    pub fn on_cpu(&self) -> f64 {
        self.cpu.as_secs_f64() / self.elapsed.as_secs_f64()
    }

    /// Packets per receive burst, on average.
    pub fn avg_burst(&self) -> f64 {
        self.packets as f64 / self.bursts.max(1) as f64
    }
}

/// The process step of the loop: what happens to a received burst.
pub trait Step {
    /// Called once per pass over the ports, before the first burst.
    fn begin_pass(&mut self) {}

    /// Processes burst `rx` received on `in_port`: every packet is
    /// transmitted (staged per egress port in `stage`) or recycled; `rx` is
    /// emptied.
    fn burst(
        &mut self,
        now_ns: u64,
        in_port: usize,
        rx: &mut Burst<HeapBuf>,
        ports: &mut [BenchPort],
        stage: &mut [Burst<HeapBuf>],
    );

    /// Counters per port.
    fn counters(&self) -> &[PortStats];
}

/// The forwarding engine as a worker runs it.
#[derive(Debug)]
pub struct EngineStep {
    engine: Engine,
    fib: FibReader,
    _control: ControlChannels,
}

/// Punt rings kept small: clean runs punt nothing.
fn small_channels() -> ChannelConfig {
    ChannelConfig {
        punt_slots: 8,
        punt_slot_bytes: 2048,
        notices: 8,
        injections: 8,
        ..ChannelConfig::default()
    }
}

impl EngineStep {
    /// `n` engines (one per variant) reading the one FIB set `fib`.
    pub fn many(fib: FibSet, n: usize) -> Vec<EngineStep> {
        Self::many_for(&engine_config(), fib, n)
    }

    /// `n` engines of the box `cfg` reading the one FIB set `fib`.
    pub fn many_for(cfg: &EngineConfig, fib: FibSet, n: usize) -> Vec<EngineStep> {
        let cfg = cfg.clone();
        let (_publisher, readers) = fib_channel(fib, n);
        readers
            .into_iter()
            .map(|fib| {
                let (w, c) = channels(small_channels());
                EngineStep {
                    engine: Engine::new(&cfg, w),
                    fib,
                    _control: c,
                }
            })
            .collect()
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The FIB set in use.
    pub fn fib(&self) -> &FibSet {
        self.fib.fib()
    }
}

impl Step for EngineStep {
    #[inline]
    fn begin_pass(&mut self) {
        self.fib.refresh();
    }

    #[inline]
    fn burst(
        &mut self,
        now_ns: u64,
        in_port: usize,
        rx: &mut Burst<HeapBuf>,
        ports: &mut [BenchPort],
        stage: &mut [Burst<HeapBuf>],
    ) {
        self.engine.process_burst(
            self.fib.fib(),
            now_ns,
            PortId::new(in_port),
            rx,
            ports,
            stage,
        );
    }

    fn counters(&self) -> &[PortStats] {
        self.engine.counters()
    }
}

/// The baseline: the least a forwarder does with a packet.
#[derive(Debug)]
pub struct BaselineStep {
    counters: Vec<PortStats>,
}

impl Default for BaselineStep {
    fn default() -> Self {
        BaselineStep {
            counters: vec![PortStats::default(); PORTS],
        }
    }
}

/// XOR of the 8-byte words of the first 64 bytes of `d`.
#[inline(always)]
fn first_line(d: &[u8]) -> u64 {
    let line = &d[..d.len().min(64)];
    let mut acc = 0u64;
    for w in line.chunks_exact(8) {
        acc ^= u64::from_ne_bytes(w.try_into().expect("8 bytes"));
    }
    acc
}

impl Step for BaselineStep {
    #[inline]
    fn burst(
        &mut self,
        _now_ns: u64,
        in_port: usize,
        rx: &mut Burst<HeapBuf>,
        ports: &mut [BenchPort],
        stage: &mut [Burst<HeapBuf>],
    ) {
        let out = if in_port + 1 == ports.len() {
            0
        } else {
            in_port + 1
        };
        let native = next_hop_mac(out, 0);
        let native = NativeAddr::mac(native);
        let mut c = self.counters[in_port];
        c.received += rx.len() as u64;
        let mut acc = 0u64;
        for mut buf in rx.drain(..) {
            let d = buf.data();
            acc ^= first_line(d);
            // The trailer from DL (an EEP header first: the baseline runs on
            // L3 packets).
            let end = if d.len() >= HEADER_LEN {
                HEADER_LEN + u32::from_be_bytes([0, d[9], d[10], d[11]]) as usize * 8 + TRAILER_LEN
            } else {
                usize::MAX
            };
            if end > d.len() {
                c.dropped[DropReason::Truncated] += 1;
                ports[in_port].recycle(buf);
                continue;
            }
            let t: &mut [u8; 8] = (&mut buf.data_mut()[end - 8..end])
                .try_into()
                .expect("8 bytes");
            *t = shift_ei(u64::from_be_bytes(*t), false).to_be_bytes();
            buf.trim(end);
            if ports[out].encap(&mut buf, &native) {
                stage[out].push(buf);
            } else {
                c.dropped[DropReason::Encap] += 1;
                ports[in_port].recycle(buf);
            }
        }
        black_box(acc);
        let sent = ports[out].tx_burst(&mut stage[out]) as u64;
        c.forwarded += sent;
        let unsent = stage[out].len() as u64;
        if unsent > 0 {
            c.dropped[DropReason::TxFull] += unsent;
            for b in stage[out].drain(..) {
                ports[out].recycle(b);
            }
        }
        self.counters[in_port] = c;
        self.counters[out].transmitted += sent;
    }

    fn counters(&self) -> &[PortStats] {
        &self.counters
    }
}

/// A set of ports with packets in flight, and the loop over them.
#[derive(Debug)]
pub struct Rig {
    /// The packets' kind.
    pub kind: Kind,
    /// The packets' size as received.
    pub size: usize,
    ports: Vec<BenchPort>,
    rx: Burst<HeapBuf>,
    stage: Vec<Burst<HeapBuf>>,
    start: Instant,
}

impl Rig {
    /// `per_port` packets of `kind` and `size` on each port, to the
    /// destinations `dests` (each used in turn).
    pub fn new(kind: Kind, size: usize, per_port: usize, dests: &[Address], rng: &mut Rng) -> Rig {
        Self::from(kind, size, per_port, dests, rng, None)
    }

    /// As [`Rig::new`], every packet's SA `src` when given.
    pub fn from(
        kind: Kind,
        size: usize,
        per_port: usize,
        dests: &[Address],
        rng: &mut Rng,
        src: Option<Address>,
    ) -> Rig {
        let total = per_port * PORTS;
        let mut ports: Vec<BenchPort> = (0..PORTS)
            .map(|p| BenchPort::new(total, port_mac(p), peer_mac(p), BUF_SIZE, HEADROOM, size))
            .collect();
        for i in 0..total {
            let mut pkt = build_packet(kind, size, dests[i % dests.len()], rng);
            if let Some(src) = src {
                let at = rrp::wire::packet::header_of(&pkt, rrp::limits::MAX_L2RHS)
                    .expect("a valid packet")
                    .1;
                rrp::wire::header::Header::new_unchecked(&mut pkt[at..]).set_src(src);
            }
            assert!(ports[i % PORTS].load(&pkt));
        }
        Rig {
            kind,
            size,
            ports,
            rx: Burst::new(),
            stage: (0..PORTS).map(|_| Burst::new()).collect(),
            start: Instant::now(),
        }
    }

    /// Packets in flight.
    pub fn in_flight(&self) -> usize {
        self.ports.iter().map(BenchPort::len).sum::<usize>() + self.rx.len()
    }

    /// One pass: a receive burst from every port, processed by `step` and
    /// transmitted. Returns the packets and the non-empty bursts received.
    #[inline]
    pub fn pass<S: Step>(&mut self, step: &mut S, now_ns: u64) -> (u64, u64) {
        step.begin_pass();
        let (mut packets, mut bursts) = (0, 0);
        for p in 0..PORTS {
            self.ports[p].rx_burst(&mut self.rx);
            if self.rx.is_empty() {
                continue;
            }
            packets += self.rx.len() as u64;
            bursts += 1;
            step.burst(now_ns, p, &mut self.rx, &mut self.ports, &mut self.stage);
        }
        (packets, bursts)
    }

    /// Passes until at least `packets` packets were received; timed (wall
    /// clock and thread CPU time). The clock is read once per pass, as a
    /// worker does.
    pub fn run<S: Step>(&mut self, step: &mut S, packets: u64) -> RunStats {
        let c0 = thread_cpu_time();
        let t0 = Instant::now();
        let mut s = RunStats::default();
        while s.packets < packets {
            let now_ns = self.start.elapsed().as_nanos() as u64;
            let (n, b) = self.pass(step, now_ns);
            if n == 0 {
                break;
            }
            s.packets += n;
            s.bursts += b;
        }
        s.elapsed = t0.elapsed();
        s.cpu = match (c0, thread_cpu_time()) {
            (Some(c0), Some(c1)) => c1.saturating_sub(c0),
            _ => s.elapsed,
        };
        s
    }

    /// Checks that every packet in flight is, restored, a valid packet of
    /// this rig's kind and size with a zero EI: what the next pass receives.
    pub fn verify(&mut self) -> Result<(), String> {
        let (kind, size) = (self.kind, self.size);
        let hops = match kind {
            Kind::L3 => 0,
            Kind::L2 => l2_hops(size),
        };
        let mut err = None;
        let mut n = 0;
        for port in &mut self.ports {
            port.for_each_restored(|b| {
                n += 1;
                if err.is_some() {
                    return;
                }
                match PacketRepr::parse(b.data()) {
                    Ok(p) if b.len() == size && p.l2rhs.len() == hops && p.ei == 0 => {}
                    Ok(p) => {
                        err = Some(format!(
                            "{} {size}: a packet restored as {} bytes, {} L2RHs, EI {:#x}",
                            kind.name(),
                            b.len(),
                            p.l2rhs.len(),
                            p.ei
                        ))
                    }
                    Err(e) => {
                        err = Some(format!(
                            "{} {size}: a packet restored badly: {e}",
                            kind.name()
                        ))
                    }
                }
            });
        }
        if n + self.rx.len() == 0 {
            return Err("no packet in flight".into());
        }
        err.map_or(Ok(()), Err)
    }
}

/// Checks that a step's counters show a clean run: `received` packets in
/// all, every one forwarded and transmitted, nothing dropped, punted or
/// notified.
pub fn check_clean(what: &str, c: &[PortStats], received: u64) -> Result<(), String> {
    let mut total = PortStats::default();
    for (p, pc) in c.iter().enumerate() {
        if pc.dropped_total() != 0 || pc.punted != 0 || pc.notices + pc.notices_dropped != 0 {
            let reasons: Vec<String> = DropReason::ALL
                .iter()
                .filter(|r| pc.dropped(**r) > 0)
                .map(|r| format!("{r}={}", pc.dropped(*r)))
                .collect();
            return Err(format!(
                "{what}: port {p} dropped {} ({}), punted {}, notices {}",
                pc.dropped_total(),
                reasons.join(" "),
                pc.punted,
                pc.notices + pc.notices_dropped
            ));
        }
        if pc.received != pc.forwarded {
            return Err(format!(
                "{what}: port {p} received {} but forwarded {}",
                pc.received, pc.forwarded
            ));
        }
        total.add(pc);
    }
    if total.received != received {
        return Err(format!(
            "{what}: the loop counted {received} packets, the counters {}",
            total.received
        ));
    }
    if total.transmitted != total.forwarded {
        return Err(format!(
            "{what}: forwarded {} but transmitted {}",
            total.forwarded, total.transmitted
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_have_the_received_length_and_parse() {
        let mut rng = Rng::new(1);
        for size in SIZES {
            for kind in [Kind::L3, Kind::L2] {
                let p = build_packet(kind, size, Address(0x0555), &mut rng);
                assert_eq!(p.len(), size);
                let r = PacketRepr::parse(&p).unwrap();
                let hops = if kind == Kind::L2 { l2_hops(size) } else { 0 };
                assert_eq!(r.l2rhs.len(), hops);
                assert_eq!(r.header.dst, Address(0x0555));
            }
        }
    }

    #[test]
    fn fib_is_full_and_never_routes_back() {
        let (fib, routes) = full_fib();
        assert_eq!(routes, 65536 - HRS.len() - 2);
        for p in 0..PORTS {
            for d in [0x0040u16, 0x0555, 0x7FFF, 0x8000] {
                let nh = fib.route(PortId::new(p), Address(d)).unwrap();
                assert_ne!(nh.port.index(), p);
            }
        }
    }

    #[test]
    fn every_variant_runs_clean() {
        let (fib, _) = full_fib();
        let mut rng = Rng::new(SEED);
        let dests = destinations(&mut rng);
        let mut steps = EngineStep::many(fib, 2);
        let mut base = BaselineStep::default();
        for (i, kind) in [Kind::L3, Kind::L2].into_iter().enumerate() {
            let mut rig = Rig::new(kind, 64, 64, &dests, &mut rng);
            let s = rig.run(&mut steps[i], 2000);
            assert!(s.packets >= 2000);
            check_clean(kind.name(), steps[i].counters(), s.packets).unwrap();
            rig.verify().unwrap();
            assert_eq!(rig.in_flight(), 256);
            if kind == Kind::L3 {
                let s = rig.run(&mut base, 2000);
                check_clean("baseline", base.counters(), s.packets).unwrap();
                rig.verify().unwrap();
            }
        }
    }
}
