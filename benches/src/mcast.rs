//! The multicast variant of the engine benchmark: group packets received on
//! port 0 of a 5-port box, each replicated to the 4 other ports
//! ([`Engine::process_burst`]: a replica from each egress port but the
//! last, the received buffer itself on the last).
//!
//! - The box: HRs 0x0110 .. 0x0150 on ports 0-4, MTU 1500; one source node
//!   ([`SOURCE`]) on port 0's SAN, one group ([`GROUP`]) with members on the
//!   SANs of ports 1-4; this box is the designated forwarder onto all four
//!   (the multicast table of [`mcast_fib`]; no unicast route is used).
//! - In memory ([`McastRig`], the copy path): port 0 holds the packets in
//!   flight and receives them (restored, as the unicast rig does); the
//!   replicas are copies in buffers of the egress ports' pools
//!   (`Port::replicate`'s default), which the rig takes back into those
//!   pools after each burst (a driver freeing them), and the original,
//!   which leaves by port 4, goes back onto port 0's ring.
//! - On DPDK ([`dpdk`], feature `dpdk`, the zero-copy path): port 0 is one
//!   end of an in-process ring pair, ports 1-3 are `net_null` devices
//!   (transmitted chains are freed), port 4 another ring pair whose far end
//!   hands the originals back to port 0's far end (putting their Ethernet
//!   header, which the port wrote into a header mbuf in front of the shared
//!   packet, back into the packet's headroom: one split and a 14-byte copy
//!   per packet, counted in the timing); the replicas are chains (a header
//!   mbuf in front of the shared packet) at every size that allows them
//!   (`chain_min_len` 0), or, with chains off, copies.
//!
//! Figures: received group packets per second, and copies transmitted per
//! second (4 per packet).

use std::sync::Arc;
use std::time::Instant;

use dataplane::{ChannelConfig, EngineConfig, FibSet, McastFib};
use ports::{Burst, HeapBuf, PacketBuf, Port};
use rrp::PortStats;
use rrp::counters::GroupStats;
use rrp::router::{McastGroup, McastTables, SourceSan};
use rrp::wire::{HeaderRepr, PacketRepr};
use rrp::{Address, NativeAddr, PortId};

use crate::Rng;
use crate::port::BenchPort;
use crate::scenario::{
    BUF_SIZE, DATA_PT, EngineStep, HEADROOM, MTU, RunStats, Step, thread_cpu_time,
};

/// Ports (= HRs) of the multicast box.
pub const PORTS: usize = 5;
/// Copies of each group packet (every port but the ingress one).
pub const FANOUT: usize = PORTS - 1;
/// The HR address of each port.
pub const HRS: [Address; PORTS] = [
    Address(0x0110),
    Address(0x0120),
    Address(0x0130),
    Address(0x0140),
    Address(0x0150),
];
/// The group.
pub const GROUP: Address = Address(0x8101);
/// The source node, on port 0's SAN.
pub const SOURCE: Address = Address(0x0101);
/// The SAN-ID of port `p`'s SAN.
pub const fn san(p: usize) -> Address {
    Address(0x0201 + p as u16)
}
/// Group packets in flight by default.
pub const DEFAULT_IN_FLIGHT: usize = 1024;

/// The native address of port `port` on its SAN.
pub const fn port_mac(port: usize) -> NativeAddr {
    NativeAddr::mac([0x02, 0x4D, 0x43, 0x00, 0x00, port as u8])
}

/// The source's native address (what port 0 receives from).
pub const SOURCE_MAC: [u8; 6] = [0x02, 0x4D, 0x43, 0xFE, 0x00, 0x01];

/// The engine's view of the box.
pub fn engine_config() -> EngineConfig {
    EngineConfig {
        hrs: HRS.to_vec(),
        mtus: vec![MTU; PORTS],
    }
}

/// The box's multicast table: packets from [`SOURCE`] accepted on port 0
/// (its own SAN), [`GROUP`] replicated onto ports 1-4.
pub fn mcast_tables() -> McastTables {
    let out: u32 = ((1 << PORTS) - 1) & !1;
    McastTables {
        version: 1,
        sans: vec![SourceSan {
            san: san(0),
            up: PortId(0),
            from: None,
            df: out,
        }],
        sources: vec![(SOURCE, 0)],
        groups: vec![McastGroup {
            group: GROUP,
            member_sans: (1..PORTS).map(san).collect(),
            branches: out,
            local: out,
        }],
    }
}

/// The FIB set: no unicast routes, the multicast table.
pub fn mcast_fib() -> FibSet {
    let mut fib = FibSet::new(PORTS, &HRS);
    fib.set_mcast(Arc::new(McastFib::from_tables(&mcast_tables())));
    fib
}

/// `n` engines of the multicast box (one per variant).
pub fn engines(n: usize) -> Vec<EngineStep> {
    EngineStep::many_for(&engine_config(), mcast_fib(), n)
}

/// A group packet from [`SOURCE`] to [`GROUP`], `size` bytes as received
/// (a multiple of 8 bytes of packet, then frame padding), EI 0.
pub fn group_packet(size: usize, rng: &mut Rng) -> Vec<u8> {
    let eep = size & !7;
    let data_len = eep - rrp::wire::HEADER_LEN - rrp::wire::TRAILER_LEN;
    let p = PacketRepr {
        l2rhs: Vec::new(),
        header: HeaderRepr {
            dst: GROUP,
            src: SOURCE,
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

/// Checks a clean multicast run: every packet received on port 0 forwarded
/// (the original) and transmitted once on each of the 4 other ports,
/// nothing dropped, punted or notified; the group counters agree.
pub fn check_clean(
    what: &str,
    c: &[PortStats],
    m: &GroupStats,
    received: u64,
) -> Result<(), String> {
    for (p, pc) in c.iter().enumerate() {
        if pc.dropped_total() != 0 || pc.punted != 0 || pc.notices + pc.notices_dropped != 0 {
            return Err(format!(
                "{what}: port {p} dropped {}, punted {}, notices {}",
                pc.dropped_total(),
                pc.punted,
                pc.notices + pc.notices_dropped
            ));
        }
    }
    if c[0].received != received || c[0].forwarded != received {
        return Err(format!(
            "{what}: the loop counted {received} packets, port 0 received {} and forwarded {}",
            c[0].received, c[0].forwarded
        ));
    }
    for (p, pc) in c.iter().enumerate().skip(1) {
        if pc.transmitted != received || pc.received != 0 {
            return Err(format!(
                "{what}: port {p} transmitted {} of {received} (received {})",
                pc.transmitted, pc.received
            ));
        }
    }
    if m.packets != received || m.copies != FANOUT as u64 * received || m.copy_failed != 0 {
        return Err(format!(
            "{what}: group counters {} packets, {} copies, {} failed for {received} received",
            m.packets, m.copies, m.copy_failed
        ));
    }
    Ok(())
}

/// The in-memory multicast box with its packets in flight.
#[derive(Debug)]
pub struct McastRig {
    /// The packets' size as received.
    pub size: usize,
    ports: Vec<BenchPort>,
    rx: Burst<HeapBuf>,
    stage: Vec<Burst<HeapBuf>>,
    start: Instant,
}

impl McastRig {
    /// `in_flight` group packets of `size` bytes on port 0.
    pub fn new(size: usize, in_flight: usize, rng: &mut Rng) -> McastRig {
        let mut ports: Vec<BenchPort> = (0..PORTS)
            .map(|p| {
                BenchPort::new(
                    in_flight,
                    port_mac(p),
                    NativeAddr::mac(SOURCE_MAC),
                    BUF_SIZE,
                    HEADROOM,
                    size,
                )
            })
            .collect();
        for _ in 0..in_flight {
            assert!(ports[0].load(&group_packet(size, rng)));
        }
        McastRig {
            size,
            ports,
            rx: Burst::new(),
            stage: (0..PORTS).map(|_| Burst::new()).collect(),
            start: Instant::now(),
        }
    }

    /// Packets in flight (on port 0, or in transit).
    pub fn in_flight(&self) -> usize {
        self.ports[0].len() + self.ports[PORTS - 1].len() + self.rx.len()
    }

    /// One pass: a receive burst from port 0, processed by `step` (the
    /// engine replicates and transmits); then the sinks: the replicas back
    /// into their ports' pools, the originals (out of the last port) back
    /// onto port 0. Returns the packets received.
    #[inline]
    pub fn pass<S: Step>(&mut self, step: &mut S, now_ns: u64) -> u64 {
        step.begin_pass();
        self.ports[0].rx_burst(&mut self.rx);
        let n = self.rx.len() as u64;
        if n == 0 {
            return 0;
        }
        step.burst(now_ns, 0, &mut self.rx, &mut self.ports, &mut self.stage);
        let (first, rest) = self.ports.split_at_mut(1);
        let last = rest.len() - 1;
        for (i, p) in rest.iter_mut().enumerate() {
            while let Some(b) = p.take_sent() {
                if i == last {
                    let _ = first[0].give(b);
                } else {
                    p.release(b);
                }
            }
        }
        n
    }

    /// Passes until at least `packets` packets were received; timed as
    /// [`crate::scenario::Rig::run`] is.
    pub fn run<S: Step>(&mut self, step: &mut S, packets: u64) -> RunStats {
        let c0 = thread_cpu_time();
        let t0 = Instant::now();
        let mut s = RunStats::default();
        while s.packets < packets {
            let now_ns = self.start.elapsed().as_nanos() as u64;
            let n = self.pass(step, now_ns);
            if n == 0 {
                break;
            }
            s.packets += n;
            s.bursts += 1;
        }
        s.elapsed = t0.elapsed();
        s.cpu = match (c0, thread_cpu_time()) {
            (Some(c0), Some(c1)) => c1.saturating_sub(c0),
            _ => s.elapsed,
        };
        s
    }

    /// Checks that every packet in flight is, restored, the group packet of
    /// this rig's size with a zero EI.
    pub fn verify(&mut self) -> Result<(), String> {
        let size = self.size;
        let mut err = None;
        let mut n = 0;
        self.ports[0].for_each_restored(|b| {
            n += 1;
            match PacketRepr::parse(b.data()) {
                Ok(p) if b.len() == size && p.header.dst == GROUP && p.ei == 0 => {}
                Ok(p) => {
                    err.get_or_insert(format!(
                        "mcast {size}: a packet restored as {} bytes to {} with EI {:#x}",
                        b.len(),
                        p.header.dst,
                        p.ei
                    ));
                }
                Err(e) => {
                    err.get_or_insert(format!("mcast {size}: a packet restored badly: {e}"));
                }
            }
        });
        if n == 0 {
            return Err("mcast: no packet in flight".into());
        }
        err.map_or(Ok(()), Err)
    }
}

/// Rings with little room: clean runs punt and notify nothing.
pub fn small_channels() -> ChannelConfig {
    ChannelConfig {
        punt_slots: 8,
        punt_slot_bytes: 2048,
        notices: 8,
        injections: 8,
        ..ChannelConfig::default()
    }
}

/// The DPDK variant (feature `dpdk`): the same box and traffic over DPDK
/// vdevs, replicas as chains (zero copy) or copies.
#[cfg(feature = "dpdk")]
pub mod dpdk {
    use super::*;
    use dataplane::{ControlChannels, Engine, FibReader, channels, fib_channel};
    use ports::dpdk::{DeviceSpec, DpdkPort, Eal, Mbuf, RawQueue, StartOptions, ring_pair};

    /// EAL arguments for the benchmark: no hugepages (`huge`: `--in-memory`,
    /// for a machine with hugepages reserved), the bench thread's core.
    pub fn eal_args(core: usize, huge: bool) -> Vec<String> {
        let mut v: Vec<String> = if huge {
            vec!["--in-memory".into()]
        } else {
            ["--no-huge", "-m", "1024", "--no-shconf"]
                .map(String::from)
                .to_vec()
        };
        v.extend(
            ["--no-pci", "--no-telemetry", "--log-level=warning", "-l"]
                .map(String::from)
                .to_vec(),
        );
        v.push(core.to_string());
        v
    }

    /// The multicast box over DPDK vdevs, with its engine.
    pub struct DpdkMcastRig {
        /// The packets' size as received (MessageWay packet and padding;
        /// the frames add 14 bytes of Ethernet header).
        pub size: usize,
        /// Whether the egress ports chain (zero copy) or copy.
        pub chains: bool,
        engine: Engine,
        fib: FibReader,
        _control: ControlChannels,
        ports: Vec<DpdkPort>,
        host_in: RawQueue,
        host_back: RawQueue,
        rx: Burst<Mbuf>,
        back: Burst<Mbuf>,
        stage: Vec<Burst<Mbuf>>,
        start: Instant,
        in_flight: usize,
    }

    impl DpdkMcastRig {
        /// Creates the vdevs (names tagged `tag`, unique per process),
        /// starts them and sends `in_flight` group packets of `size` bytes
        /// into port 0.
        pub fn new(
            eal: &Eal,
            tag: &str,
            size: usize,
            in_flight: usize,
            chains: bool,
            rng: &mut Rng,
        ) -> Result<DpdkMcastRig, String> {
            let ring = (in_flight * 2).next_power_of_two() as u32;
            let inp = ring_pair(eal, &format!("mcin{tag}"), 1, ring).map_err(|e| e.to_string())?;
            let back = ring_pair(eal, &format!("mcbk{tag}"), 1, ring).map_err(|e| e.to_string())?;
            let mut specs = vec![DeviceSpec::new(&inp.a).mac(mac(0))];
            for p in 1..PORTS - 1 {
                let name = eal
                    .create_vdev(&format!("net_null_mc{tag}{p}"), "no-rx=1")
                    .map_err(|e| e.to_string())?;
                specs.push(DeviceSpec::new(name).mac(mac(p)));
            }
            specs.push(DeviceSpec::new(&back.a).mac(mac(PORTS - 1)));
            specs.push(DeviceSpec::new(&inp.b).mac(SOURCE_MAC));
            specs.push(DeviceSpec::new(&back.b));
            // Chains at every size that allows them (the zero-copy path
            // itself; mwrouterd copies packets under CHAIN_FROM_LEN).
            let opts = StartOptions {
                extra_mbufs: (2 * in_flight) as u32,
                chains,
                chain_min_len: 0,
                ..StartOptions::default()
            };
            let devs = eal.start_ports(&specs, &opts).map_err(|e| e.to_string())?;
            let ports = devs[..PORTS]
                .iter()
                .map(|d| d.port(0))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let mut host_in = devs[PORTS].raw_queue(0).map_err(|e| e.to_string())?;
            let host_back = devs[PORTS + 1].raw_queue(0).map_err(|e| e.to_string())?;
            for _ in 0..in_flight {
                let mut f = vec![0xFF; 6];
                f.extend_from_slice(&SOURCE_MAC);
                f.extend_from_slice(&ports::dpdk::ETHERTYPE_MW.to_be_bytes());
                f.extend_from_slice(&group_packet(size, rng));
                if !host_in.send_frame(&f) {
                    return Err("the ring or the pool has no room for the packets".into());
                }
            }
            let (_publisher, mut readers) = fib_channel(mcast_fib(), 1);
            let (w, c) = channels(small_channels());
            Ok(DpdkMcastRig {
                size,
                chains,
                engine: Engine::new(&engine_config(), w),
                fib: readers.remove(0),
                _control: c,
                ports,
                host_in,
                host_back,
                rx: Burst::new(),
                back: Burst::new(),
                stage: (0..PORTS).map(|_| Burst::new()).collect(),
                start: Instant::now(),
                in_flight,
            })
        }

        /// One pass: the originals that came back out of port 4 go into
        /// port 0 again; a receive burst from port 0 is processed (the
        /// replicas leave by the null ports, which free them). Returns the
        /// packets received.
        #[inline]
        pub fn pass(&mut self, now_ns: u64) -> u64 {
            self.host_back.rx_burst(&mut self.back);
            if !self.back.is_empty() {
                self.unwrap_back();
                self.host_in.tx_burst(&mut self.back);
                // The rings hold every packet in flight: nothing is left.
                ports::dpdk::free_burst(&mut self.back);
            }
            self.fib.refresh();
            self.ports[0].rx_burst(&mut self.rx);
            let n = self.rx.len() as u64;
            if n == 0 {
                return 0;
            }
            self.engine.process_burst(
                self.fib.fib(),
                now_ns,
                PortId(0),
                &mut self.rx,
                &mut self.ports,
                &mut self.stage,
            );
            n
        }

        /// The originals come back out of port 4 with their Ethernet
        /// header in a header mbuf in front of them when replicas shared
        /// them (`DpdkPort::encap`): put the header back into the packet's
        /// own headroom, so that port 0 receives one segment again (as from
        /// a NIC).
        #[inline]
        fn unwrap_back(&mut self) {
            if self.back.iter().all(|m| m.nb_segs() == 1) {
                return;
            }
            let back: Burst<Mbuf> = self
                .back
                .drain(..)
                .map(|m| {
                    let (h, rest) = m.split_first();
                    let Some(mut o) = rest else {
                        return h;
                    };
                    if let Some(hd) = o.prepend(h.len()) {
                        hd.copy_from_slice(h.data());
                    }
                    o
                })
                .collect();
            self.back = back;
        }

        /// Passes until at least `packets` packets were received (timed).
        pub fn run(&mut self, packets: u64) -> RunStats {
            let c0 = thread_cpu_time();
            let t0 = Instant::now();
            let mut s = RunStats::default();
            let mut idle = 0u32;
            while s.packets < packets {
                let now_ns = self.start.elapsed().as_nanos() as u64;
                let n = self.pass(now_ns);
                if n == 0 {
                    idle += 1;
                    if idle > 1_000_000 {
                        break;
                    }
                    continue;
                }
                idle = 0;
                s.packets += n;
                s.bursts += 1;
            }
            s.elapsed = t0.elapsed();
            s.cpu = match (c0, thread_cpu_time()) {
                (Some(c0), Some(c1)) => c1.saturating_sub(c0),
                _ => s.elapsed,
            };
            s
        }

        /// The engine's counters per port.
        pub fn counters(&self) -> &[PortStats] {
            self.engine.counters()
        }

        /// The group's counters (slot 0).
        pub fn group_counters(&self) -> GroupStats {
            self.engine.mcast_counters()[0]
        }

        /// Replicas made as chains and as copies, over the egress ports.
        pub fn replicas(&self) -> (u64, u64) {
            let mut v = (0, 0);
            for p in &self.ports[1..] {
                if let Ok(s) = p.stats() {
                    v.0 += s.replicas_chained;
                    v.1 += s.replicas_copied;
                }
            }
            v
        }

        /// Packets in flight at the start.
        pub fn in_flight(&self) -> usize {
            self.in_flight
        }

        /// The driver and replication mode of each port, for the report.
        pub fn modes(&self) -> Vec<String> {
            self.ports
                .iter()
                .map(|p| format!("{} {}", p.ethdev().driver(), p.replication()))
                .collect()
        }

        /// The native address of port `p`, for tests.
        pub fn native(&self, p: usize) -> NativeAddr {
            self.ports[p].native_addr()
        }
    }

    fn mac(p: usize) -> [u8; 6] {
        port_mac(p).as_mac().expect("a MAC")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_packets_parse_and_the_table_fans_out_to_four() {
        let mut rng = Rng::new(1);
        for size in crate::scenario::SIZES {
            let p = group_packet(size, &mut rng);
            assert_eq!(p.len(), size);
            let r = PacketRepr::parse(&p).unwrap();
            assert_eq!((r.header.dst, r.header.src), (GROUP, SOURCE));
        }
        let fib = mcast_fib();
        assert_eq!(fib.mcast().branches(GROUP).count_ones(), FANOUT as u32);
    }

    #[test]
    fn the_in_memory_rig_runs_clean() {
        let mut rng = Rng::new(2);
        for size in crate::scenario::SIZES {
            let mut rig = McastRig::new(size, 128, &mut rng);
            let mut e = engines(1).remove(0);
            let s = rig.run(&mut e, 2000);
            assert!(s.packets >= 2000);
            let m = e.engine().mcast_counters()[0];
            check_clean("mcast", e.engine().counters(), &m, s.packets).unwrap();
            rig.verify().unwrap();
            assert_eq!(rig.in_flight(), 128);
        }
    }
}
