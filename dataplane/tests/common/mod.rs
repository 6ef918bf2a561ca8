//! A test box: a worker over in-memory ports, one host end per port, the
//! control side of its rings, and packet builders on the rrp codec.
#![allow(dead_code)]

use dataplane::{
    ChannelConfig, ControlChannels, EngineConfig, FibPublisher, FibSet, NextHop, Punt, Worker,
    channels, fib_channel,
};
use ports::HeapBuf;
use ports::clock::TestClock;
use ports::impair::ImpairConfig;
use ports::memory::{MemPort, mem_link};
use rrp::Address;
use rrp::DropReason;
use rrp::NativeAddr;
use rrp::PortId;
use rrp::PortStats;
use rrp::kind::PacketType;
use rrp::router::Notice;
use rrp::wire::{HeaderRepr, L2rhRepr, PacketRepr, shift_ei};
use rrp::{PuntBudget, PuntBudgets};

/// The HR address of each port.
pub const HRS: [Address; 3] = [Address(0x0110), Address(0x0120), Address(0x0130)];

/// The host on SAN `i` (the other end of the router's port `i`).
pub const fn host(i: usize) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 0, 0xA0 + i as u8])
}

/// The router's own native address on SAN `i`.
pub const fn router(i: usize) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 1, i as u8])
}

/// Another station on SAN `i` (a next hop that is not the host).
pub const fn station(i: usize, n: u8) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 0x10 + i as u8, n])
}

/// Rings with neither rate limits nor tight sizes.
pub fn roomy_channels() -> ChannelConfig {
    ChannelConfig {
        punt_budgets: PuntBudgets::uniform(PuntBudget::new(0, 1)),
        notice_rate: (0, 1),
        ..ChannelConfig::default()
    }
}

/// How to build a box.
#[derive(Clone)]
pub struct Opts {
    /// MTU of each port (its length is the number of ports).
    pub mtus: Vec<u32>,
    /// Packets in flight per direction of each port's wire.
    pub capacity: Vec<usize>,
    /// The worker's rings.
    pub chan: ChannelConfig,
    /// Impairment of what each port receives (from its host), on `clock`.
    pub impair: Vec<Option<ImpairConfig>>,
    /// The clock of the impairments.
    pub clock: TestClock,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            mtus: vec![1500; 3],
            capacity: vec![256; 3],
            chan: roomy_channels(),
            impair: vec![None; 3],
            clock: TestClock::new(),
        }
    }
}

/// A box with one host on each port.
pub struct Rig {
    /// Host ends, by port.
    pub hosts: Vec<MemPort>,
    /// The worker.
    pub worker: Worker<MemPort>,
    /// Publishes new FIB sets.
    pub publisher: FibPublisher,
    /// The control side of the worker's rings.
    pub ctl: ControlChannels,
    /// The box.
    pub cfg: EngineConfig,
}

/// What happened to one packet.
#[derive(Debug)]
pub enum Outcome {
    /// Left on `port` (received by that host).
    Forward {
        /// Egress port.
        port: usize,
        /// The buffer the host received.
        buf: HeapBuf,
    },
    /// Handed to the control plane.
    Punt(Punt),
    /// Dropped.
    Drop(DropReason),
}

impl Outcome {
    /// The forwarded buffer; panics otherwise.
    pub fn forwarded(self) -> (usize, HeapBuf) {
        match self {
            Outcome::Forward { port, buf } => (port, buf),
            o => panic!("expected a forward, got {o:?}"),
        }
    }

    /// The punt; panics otherwise.
    pub fn punted(self) -> Punt {
        match self {
            Outcome::Punt(p) => p,
            o => panic!("expected a punt, got {o:?}"),
        }
    }

    /// The drop reason; panics otherwise.
    pub fn dropped(self) -> DropReason {
        match self {
            Outcome::Drop(r) => r,
            o => panic!("expected a drop, got {o:?}"),
        }
    }
}

/// The source address of the packets [`pkt`] builds.
pub const SRC: Address = Address(0x0101);

/// Makes [`SRC`], from the host of port `i`, the one buddy of HR `i`:
/// its RRP and ERR are punted as `routing`, everyone else's as `request`.
pub fn buddy_on(fib: &mut FibSet, i: usize) {
    let ports = fib.ports();
    fib.set_buddies(std::sync::Arc::new(dataplane::Buddies::new(
        (0..ports).map(|p| if p == i { vec![(SRC, host(i))] } else { vec![] }),
    )));
}

/// A FIB set for the default box with routes added by `build`.
pub fn fib_for(ports: usize, build: impl FnOnce(&mut FibSet)) -> FibSet {
    let mut fib = FibSet::new(ports, &HRS[..ports]);
    build(&mut fib);
    fib
}

impl Rig {
    /// A box per `opts` with the FIB `build` makes.
    pub fn new(opts: Opts, build: impl FnOnce(&mut FibSet)) -> Rig {
        let n = opts.mtus.len();
        assert!(n <= HRS.len());
        let cfg = EngineConfig {
            hrs: HRS[..n].to_vec(),
            mtus: opts.mtus.clone(),
        };
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        for i in 0..n {
            let (h, mut r) = mem_link(opts.capacity[i], host(i), router(i));
            if let Some(imp) = opts.impair[i] {
                r = r.with_impairment(imp, opts.clock.clone());
            }
            hosts.push(h);
            ports.push(r);
        }
        let (publisher, mut readers) = fib_channel(fib_for(n, build), 1);
        let (wch, ctl) = channels(opts.chan);
        let worker = Worker::new(0, &cfg, ports, readers.remove(0), wch);
        Rig {
            hosts,
            worker,
            publisher,
            ctl,
            cfg,
        }
    }

    /// The default three-port box with the FIB `build` makes.
    pub fn simple(build: impl FnOnce(&mut FibSet)) -> Rig {
        Rig::new(Opts::default(), build)
    }

    /// Host `i` sends `bytes` to the router.
    pub fn send(&mut self, i: usize, bytes: &[u8]) {
        assert!(self.hosts[i].send_bytes(bytes), "host {i}: ring full");
    }

    /// Host `i` sends `bytes`, flagged with a receive error.
    pub fn send_flagged(&mut self, i: usize, bytes: &[u8]) {
        let mut b = HeapBuf::from_bytes(bytes);
        b.set_rx_error(true);
        assert!(self.hosts[i].send(b).is_ok(), "host {i}: ring full");
    }

    /// Polls until the worker receives nothing more.
    pub fn run(&mut self) {
        while self.worker.poll_once() > 0 {}
    }

    /// Everything host `i` has received.
    pub fn recv(&mut self, i: usize) -> Vec<HeapBuf> {
        std::iter::from_fn(|| self.hosts[i].recv()).collect()
    }

    /// The punted packets (their slots are given back).
    pub fn punts(&mut self) -> Vec<Punt> {
        std::iter::from_fn(|| self.ctl.recv_punt())
            .map(|p| {
                let c = p.clone();
                self.ctl.recycle(p);
                c
            })
            .collect()
    }

    /// The notices.
    pub fn notices(&mut self) -> Vec<Notice> {
        std::iter::from_fn(|| self.ctl.recv_notice()).collect()
    }

    /// The worker's counters.
    pub fn counters(&self) -> Vec<PortStats> {
        self.worker.counters().to_vec()
    }

    /// Asserts `received = forwarded + dropped + punted` on every port.
    pub fn assert_balanced(&self) {
        assert_balanced(self.worker.counters());
    }

    /// Sends one packet on port `i`, runs the worker and says what happened
    /// to it (the notices it caused come with [`Rig::notices`]). Nothing
    /// else may be in flight.
    pub fn one(&mut self, i: usize, bytes: &[u8]) -> Outcome {
        self.send(i, bytes);
        self.outcome(i)
    }

    /// Like [`Rig::one`], the packet flagged with a receive error.
    pub fn one_flagged(&mut self, i: usize, bytes: &[u8]) -> Outcome {
        self.send_flagged(i, bytes);
        self.outcome(i)
    }

    fn outcome(&mut self, i: usize) -> Outcome {
        let before = self.counters()[i];
        self.run();
        let after = self.counters()[i];
        self.assert_balanced();
        assert_eq!(after.received, before.received + 1);
        let mut out = Vec::new();
        for p in 0..self.hosts.len() {
            for b in self.recv(p) {
                out.push((p, b));
            }
        }
        let punts = self.punts();
        if after.forwarded > before.forwarded {
            assert_eq!(out.len(), 1, "one packet out");
            assert!(punts.is_empty());
            let (port, buf) = out.pop().unwrap();
            return Outcome::Forward { port, buf };
        }
        assert!(out.is_empty(), "nothing transmitted: {out:?}");
        if after.punted > before.punted {
            assert_eq!(punts.len(), 1);
            return Outcome::Punt(punts.into_iter().next().unwrap());
        }
        assert!(punts.is_empty());
        let r = rrp::DropReason::ALL
            .into_iter()
            .find(|&r| after.dropped(r) > before.dropped(r))
            .expect("forwarded, punted or dropped");
        assert_eq!(after.dropped_total(), before.dropped_total() + 1);
        Outcome::Drop(r)
    }
}

/// Asserts `received = forwarded + dropped + punted` on every port.
pub fn assert_balanced(c: &[PortStats]) {
    for (i, c) in c.iter().enumerate() {
        assert!(c.balanced(), "port {i} unbalanced: {c:?}");
    }
}

/// A next hop.
pub fn nh(port: u16, native: NativeAddr, mtu: u32) -> NextHop {
    NextHop {
        port: PortId(port),
        native,
        mtu,
        redirect: false,
    }
}

/// A user-data packet (PT 0x0100) to `dst` with `len` bytes of data and
/// every header field set to something recognisable.
pub fn pkt(dst: u16, len: usize) -> PacketRepr {
    PacketRepr {
        l2rhs: Vec::new(),
        header: HeaderRepr {
            dst: Address(dst),
            priority: 0xA5,
            packet_type: PacketType(0x0100),
            type_ext: 0x1234,
            endian: rrp::endian::Endian::from_nibble(0x3),
            src: SRC,
            free: 0xBEEF,
        },
        data: (0..len).map(|i| (i * 7 + 3) as u8).collect(),
        ei: 0,
    }
}

/// A packet of type `pt` to `dst`.
pub fn typed(dst: u16, pt: u16) -> PacketRepr {
    let mut p = pkt(dst, 12);
    p.header.packet_type = PacketType(pt);
    p
}

/// The packet's bytes.
pub fn bytes(p: &PacketRepr) -> Vec<u8> {
    p.to_bytes().expect("a valid packet")
}

/// A router-hop L2RH: egress HR `egress`, native `native` (of any length
/// an L2RH holds, also longer than a native address can be).
pub fn hop(egress: Address, native: &[u8]) -> L2rhRepr {
    let mut content = egress.0.to_be_bytes().to_vec();
    content.extend_from_slice(native);
    L2rhRepr::new(&content).expect("at most 63 bytes")
}

/// `p` as a router forwards it on L3: EI shifted, the error ORed in.
pub fn expect_l3(p: &PacketRepr, err: bool) -> Vec<u8> {
    let mut q = p.clone();
    q.ei = shift_ei(p.ei, err);
    bytes(&q)
}

/// `p` as a router forwards it on L2: first L2RH stripped, EI shifted.
pub fn expect_l2(p: &PacketRepr, err: bool) -> Vec<u8> {
    let mut q = p.clone();
    q.l2rhs.remove(0);
    q.ei = shift_ei(p.ei, err);
    bytes(&q)
}
