//! The Level-D router engine (Part-2 "Inter-SAN mapping", Part-3, Appendix
//! B and C, with the readings of docs/architecture.md "Route tables and RRP"), sans-IO:
//! inputs are punted packets, dataplane notices, port events and the current
//! time; outputs are packets to send, FIB changes and log events, and the
//! time of the next timer.
//!
//! One engine runs a whole box: N HRs, one per port, twins of each other.
//! - Each HR keeps its LRT (static entries and discovery: RRP#7 sweeps of
//!   the SAN answered by RRP#5; keepalives by unicast RRP#7).
//! - Each HR keeps the RTs its buddies sent it ("learned"), at most k per
//!   SAN. The RTs it has from its twins are derived from the twins' LRTs and
//!   learned RTs (CSR = twin hop + CSR, RCVF = (twin, RCVF), Q + router
//!   cost): within one box they need no messages and vanish with their source.
//! - An HR's kept RTs for a SAN are the k best of its learned and
//!   twin-derived RTs. Those that came from twins go to its buddies (RRP#9,
//!   batched per advertisement interval, all of them on refresh); those from
//!   buddies go to the twins (by derivation); never twin to twin.
//! - The FIB of each HR routes every known destination along its best route.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use crate::address::Address;
use crate::kind::{CapabilityCode, PacketType};
use crate::native::NativeAddr;
use crate::port::{PerPort, PortId};
use crate::route::Route;
use crate::router::config::{ConfigError, RouterConfig, StaticNode};
use crate::router::event::{Event, RouterStats, RtRefusal};
use crate::router::notice::{Notice, NoticeKind};
use crate::serial;
use crate::wire::bytes::be16;
use crate::wire::hop::RouterHop;
use crate::wire::message::{InfoQuery, Message, NodeInfo, RouteTable, RtNode, RtPart};
use crate::wire::packet::Packet;
use crate::wire::record::{Capability, Mtu, RecordRepr, SourceRoute};

/// Time in milliseconds since an arbitrary epoch.
pub type Time = u64;

/// A node entry of an RT: who, and the route from the mapper to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeEntry {
    /// Address, name, capabilities, logical addresses.
    pub info: NodeInfo,
    /// The route from the HR that made the LRT to this node.
    pub route: Route,
    /// Its Q.
    pub q: u16,
}

/// An RT as one HR holds it (Part-2 "Routing tables").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rt {
    /// The SAN it describes.
    pub san_id: Address,
    /// Serial number, assigned by the HR that made the LRT.
    pub sn: u16,
    /// Common source route from this HR to that HR.
    pub csr: Route,
    /// Q of the CSR.
    pub q: u16,
    /// MinMTU along the CSR and the mapped SAN.
    pub mtu: Mtu,
    /// Received-from list, most recent sender first.
    pub rcvf: Vec<Address>,
    /// The node entries.
    pub nodes: Arc<Vec<NodeEntry>>,
}

/// Where an RT an HR keeps came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// From buddy `from` on the HR's SAN.
    Buddy {
        /// The buddy.
        from: Address,
    },
    /// Derived from twin `port`'s LRT or learned RTs.
    Twin {
        /// The twin's port.
        port: PortId,
    },
}

/// A node in an LRT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LrtEntry {
    /// What it reported about itself (or what the configuration says).
    pub info: NodeInfo,
    /// Its native address on the SAN.
    pub native: NativeAddr,
    /// Entered by configuration: exempt from keepalives.
    pub is_static: bool,
    /// A router HR (capability 2): a buddy.
    pub router: bool,
    /// Keepalives sent since it last answered.
    pub missed: u32,
}

/// Where a FIB entry sends a packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Next {
    /// This box.
    Local,
    /// Out of `port` to `native`.
    Forward {
        /// Egress port.
        port: PortId,
        /// Native next hop on the egress SAN.
        native: NativeAddr,
    },
}

/// One FIB entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FibEntry {
    /// Destination.
    pub dst: Address,
    /// Where to send it.
    pub next: Next,
    /// Total Q of the route.
    pub q: u16,
    /// MTU of the egress SAN in bytes (0 = unlimited).
    pub mtu: u32,
}

/// The FIBs of every HR of the box, in port order, each sorted by destination.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteTables {
    /// FIB entries per ingress port.
    pub per_port: PerPort<Vec<FibEntry>>,
    /// Version, incremented on every change.
    pub version: u64,
}

impl RouteTables {
    /// The entry for `dst` on ingress `port`.
    pub fn lookup(&self, port: PortId, dst: Address) -> Option<&FibEntry> {
        let t = self.per_port.get(port)?;
        t.binary_search_by_key(&dst, |e| e.dst).ok().map(|i| &t[i])
    }
}

/// A route from an HR to a destination, as RRP#2 and `show route` give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteInfo {
    /// Destination.
    pub dst: Address,
    /// Total Q.
    pub q: u16,
    /// The hops from the HR onward.
    pub route: Route,
    /// Where the HR sends a packet for `dst`.
    pub next: Next,
    /// The largest EEP packet this route carries (bytes; 0 = unlimited),
    /// counting the L2RH bytes present on each SAN.
    pub mtu: u32,
    /// The RCVF of the RT it comes from (empty for the HR's own SAN).
    pub rcvf: Vec<Address>,
}

/// What the engine asks its host to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Send `packet` out of `port` to `native` (empty: every member of the SAN).
    Send {
        /// Egress port.
        port: PortId,
        /// Native destination.
        native: NativeAddr,
        /// The MessageWay packet.
        packet: Vec<u8>,
    },
    /// New FIBs are ready ([`Router::fib`]).
    FibChanged(u64),
    /// Something worth a log line.
    Event(Event),
}

#[derive(Debug, Clone)]
struct Learned {
    rt: Rt,
    from: Address,
    expires: Time,
}

#[derive(Debug, Clone)]
struct PartBuf {
    count: u8,
    parts: BTreeMap<u8, RouteTable>,
    expires: Time,
}

#[derive(Debug, Clone)]
struct HrState {
    up: bool,
    lrt: BTreeMap<Address, LrtEntry>,
    lrt_sn: u16,
    lrt_nodes: Option<Arc<Vec<NodeEntry>>>,
    learned: BTreeMap<Address, Vec<Learned>>,
    advertised: BTreeMap<(Address, Vec<Address>), u16>,
    dirty: BTreeSet<Address>,
    full_to: BTreeSet<Address>,
    next_sweep: Time,
    next_keepalive: Time,
    parts: BTreeMap<(Address, Address, u16), PartBuf>,
}

/// The ordering key of RTs and routes: total Q, then the first native
/// address outside the box, then the RCVF's length, then the RCVF element by
/// element (docs/architecture.md "Route tables and RRP").
#[derive(Debug, Clone, Copy)]
struct Rank<'a> {
    q: u16,
    native: &'a [u8],
    pre: Option<Address>,
    rcvf: &'a [Address],
}

impl Rank<'_> {
    fn cmp(&self, o: &Rank<'_>) -> Ordering {
        self.q
            .cmp(&o.q)
            .then_with(|| self.native.cmp(o.native))
            .then_with(|| {
                let a = self.rcvf.len() + self.pre.is_some() as usize;
                let b = o.rcvf.len() + o.pre.is_some() as usize;
                a.cmp(&b)
            })
            .then_with(|| {
                self.pre
                    .into_iter()
                    .chain(self.rcvf.iter().copied())
                    .cmp(o.pre.into_iter().chain(o.rcvf.iter().copied()))
            })
    }
}

fn first_native(r: &Route) -> &[u8] {
    r.first().map_or(&[][..], |h| h.native.as_bytes())
}

fn rt_rank(rt: &Rt) -> Rank<'_> {
    Rank {
        q: rt.q,
        native: first_native(&rt.csr),
        pre: None,
        rcvf: &rt.rcvf,
    }
}

/// A node list and its encoding (the list is held so that its address,
/// the cache key, stays its own).
type EncodedNodes = (Arc<Vec<NodeEntry>>, Arc<Vec<u8>>);

/// Identifies a node list by the bytes it arrived in: SAN-ID, SN, keyed
/// hash and length of the node records.
type NodeKey = (Address, u16, u64, usize);

/// Where a ranked RT comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    /// The HR's own learned RT, by index in its list for the SAN.
    Learned(usize),
    /// The LRT of twin `t`.
    TwinLrt(PortId),
    /// Learned RT `i` of twin `t`.
    TwinLearned(PortId, usize),
}

/// Per-source and global token buckets for error messages (1 s window).
#[derive(Debug, Clone)]
struct ErrorLimiter {
    per_source: u32,
    global: u32,
    sources: HashMap<Address, (Time, u32)>,
    window: (Time, u32),
}

impl ErrorLimiter {
    fn allow(&mut self, now: Time, src: Address) -> bool {
        let sec = now / 1000;
        if self.window.0 != sec {
            self.window = (sec, 0);
        }
        if self.window.1 >= self.global {
            return false;
        }
        if self.sources.len() > 4096 {
            self.sources.retain(|_, (s, _)| *s == sec);
        }
        let e = self.sources.entry(src).or_insert((sec, 0));
        if e.0 != sec {
            *e = (sec, 0);
        }
        if e.1 >= self.per_source {
            return false;
        }
        e.1 += 1;
        self.window.1 += 1;
        true
    }
}

/// The router engine of one box.
#[derive(Debug, Clone)]
pub struct Router {
    cfg: RouterConfig,
    hrs: PerPort<HrState>,
    outputs: VecDeque<Output>,
    tombstones: BTreeMap<Address, Time>,
    next_refresh: Time,
    next_expiry: Time,
    next_adv: Time,
    fib_dirty: bool,
    fib_at: Time,
    fib: Arc<RouteTables>,
    stats: RouterStats,
    limiter: ErrorLimiter,
    interned: HashMap<NodeKey, Arc<Vec<NodeEntry>>>,
    hasher: std::collections::hash_map::RandomState,
    encoded: HashMap<usize, EncodedNodes>,
}

const EXPIRY_CHECK_MS: Time = 1000;

impl Router {
    /// A router for `cfg`, starting at `now`: every HR sweeps its SAN at once.
    pub fn new(cfg: RouterConfig, now: Time) -> Result<Router, ConfigError> {
        cfg.validate()?;
        let hrs = cfg
            .hrs
            .iter()
            .map(|h| {
                let mut lrt = BTreeMap::new();
                for s in &h.static_nodes {
                    lrt.insert(
                        s.address,
                        LrtEntry {
                            info: NodeInfo {
                                address: s.address,
                                name: s.name.clone(),
                                capabilities: s.capabilities.clone(),
                                logical: None,
                            },
                            native: s.native,
                            is_static: true,
                            router: s
                                .capabilities
                                .iter()
                                .any(|c| c.code == CapabilityCode::Router as u8),
                            missed: 0,
                        },
                    );
                }
                HrState {
                    up: true,
                    lrt,
                    lrt_sn: cfg.sn_seed,
                    lrt_nodes: None,
                    learned: BTreeMap::new(),
                    advertised: BTreeMap::new(),
                    dirty: BTreeSet::new(),
                    full_to: BTreeSet::new(),
                    next_sweep: now,
                    next_keepalive: now + cfg.timers.keepalive_ms,
                    parts: BTreeMap::new(),
                }
            })
            .collect();
        let limiter = ErrorLimiter {
            per_source: cfg.error_rates.per_source,
            global: cfg.error_rates.global,
            sources: HashMap::new(),
            window: (0, 0),
        };
        let mut r = Router {
            next_refresh: now + cfg.timers.refresh_ms,
            next_expiry: now + EXPIRY_CHECK_MS,
            next_adv: now,
            cfg,
            hrs,
            outputs: VecDeque::new(),
            tombstones: BTreeMap::new(),
            fib_dirty: true,
            fib_at: now,
            fib: Arc::new(RouteTables::default()),
            stats: RouterStats::default(),
            limiter,
            interned: HashMap::new(),
            hasher: std::collections::hash_map::RandomState::new(),
            encoded: HashMap::new(),
        };
        for p in r.hrs.ids() {
            r.lrt_changed(p);
        }
        Ok(r)
    }

    // ----- accessors -------------------------------------------------------

    /// The configuration.
    pub fn config(&self) -> &RouterConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &RouterStats {
        &self.stats
    }

    /// The current FIBs.
    pub fn fib(&self) -> Arc<RouteTables> {
        self.fib.clone()
    }

    /// The next output, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// The LRT of HR `port`.
    pub fn lrt(&self, port: PortId) -> &BTreeMap<Address, LrtEntry> {
        &self.hrs[port].lrt
    }

    /// The buddies of HR `port` (router HRs on its SAN).
    pub fn buddies(&self, port: PortId) -> Vec<Address> {
        self.hrs[port]
            .lrt
            .values()
            .filter(|e| e.router)
            .map(|e| e.info.address)
            .collect()
    }

    /// Whether HR `port` is up.
    pub fn port_is_up(&self, port: PortId) -> bool {
        self.hrs[port].up
    }

    /// The k best RTs HR `port` keeps for `san`, best first, with their origin.
    pub fn kept(&self, port: PortId, san: Address) -> Vec<(Rt, Origin)> {
        self.ranked(port, san)
            .into_iter()
            .take(self.cfg.k)
            .map(|(_, s)| self.materialize(port, san, s))
            .collect()
    }

    /// Every SAN some HR of the box knows an RT for.
    pub fn known_sans(&self) -> BTreeSet<Address> {
        let mut s: BTreeSet<Address> = self.cfg.hrs.iter().map(|h| h.san_id).collect();
        for h in &self.hrs {
            s.extend(h.learned.keys().copied());
        }
        s
    }

    /// Memory census: (learned RTs, distinct node lists among them, node
    /// entries in those lists).
    pub fn census(&self) -> (usize, usize, usize) {
        let mut rts = 0;
        let mut lists: std::collections::HashSet<*const Vec<NodeEntry>> = Default::default();
        let mut entries = 0;
        for h in &self.hrs {
            for l in h.learned.values() {
                for x in l {
                    rts += 1;
                    if lists.insert(Arc::as_ptr(&x.rt.nodes)) {
                        entries += x.rt.nodes.len();
                    }
                }
            }
        }
        (rts, lists.len(), entries)
    }

    /// Number of RTs each HR keeps (over all SANs).
    pub fn rts_kept(&self, port: PortId) -> usize {
        self.known_sans()
            .into_iter()
            .filter(|s| *s != self.cfg.hrs[port].san_id)
            .map(|s| self.ranked(port, s).len().min(self.cfg.k))
            .sum()
    }

    fn box_has(&self, a: Address) -> bool {
        self.cfg.hrs.iter().any(|h| h.address == a)
    }

    fn port_of(&self, a: Address) -> Option<PortId> {
        self.cfg
            .hrs
            .iter()
            .position(|h| h.address == a)
            .map(PortId::new)
    }

    fn emit(&mut self, o: Output) {
        if matches!(o, Output::Send { .. }) {
            self.stats.sent += 1;
        }
        self.outputs.push_back(o);
    }

    fn event(&mut self, e: Event) {
        self.outputs.push_back(Output::Event(e));
    }

    fn send_msg(&mut self, port: PortId, native: NativeAddr, dst: Address, m: &Message, free: u16) {
        let src = self.cfg.hrs[port].address;
        let Ok(mut p) = m.to_packet(dst, src) else {
            return;
        };
        p.header.free = free;
        if let Ok(bytes) = p.to_bytes() {
            self.emit(Output::Send {
                port,
                native,
                packet: bytes,
            });
        }
    }

    // ----- RT construction ---------------------------------------------------

    fn my_info(&self, port: PortId) -> NodeInfo {
        let h = &self.cfg.hrs[port];
        let mut sans = vec![h.san_id];
        sans.extend(
            self.cfg
                .hrs
                .iter()
                .map(|o| o.san_id)
                .filter(|s| *s != h.san_id),
        );
        NodeInfo {
            address: h.address,
            name: Some(format!("{}/{}", self.cfg.name, port).into_bytes()),
            capabilities: vec![Capability {
                code: CapabilityCode::Router as u8,
                params: sans.iter().flat_map(|s| s.0.to_be_bytes()).collect(),
            }],
            logical: None,
        }
    }

    fn lrt_nodes(&mut self, port: PortId) -> Arc<Vec<NodeEntry>> {
        if let Some(n) = &self.hrs[port].lrt_nodes {
            return n.clone();
        }
        let cost = self.cfg.hrs[port].cost;
        let mut v = vec![NodeEntry {
            info: self.my_info(port),
            route: Route::empty(),
            q: 0,
        }];
        for e in self.hrs[port].lrt.values() {
            v.push(NodeEntry {
                info: e.info.clone(),
                route: Route(vec![RouterHop::native(e.native)]),
                q: cost,
            });
        }
        let a = Arc::new(v);
        self.hrs[port].lrt_nodes = Some(a.clone());
        a
    }

    fn lrt_rt(&self, port: PortId) -> Option<Rt> {
        let h = &self.hrs[port];
        Some(Rt {
            san_id: self.cfg.hrs[port].san_id,
            sn: h.lrt_sn,
            csr: Route::empty(),
            q: 0,
            mtu: mtu_words(self.cfg.hrs[port].mtu),
            rcvf: Vec::new(),
            nodes: h.lrt_nodes.clone()?,
        })
    }

    fn derive(&self, twin: PortId, rt: &Rt) -> Rt {
        let t = &self.cfg.hrs[twin];
        let mut rcvf = Vec::with_capacity(rt.rcvf.len() + 1);
        rcvf.push(t.address);
        rcvf.extend_from_slice(&rt.rcvf);
        Rt {
            san_id: rt.san_id,
            sn: rt.sn,
            csr: Route(vec![RouterHop::egress(t.address)]).catenate(&rt.csr),
            q: rt.q.saturating_add(self.cfg.router_cost),
            mtu: rt.mtu,
            rcvf,
            nodes: rt.nodes.clone(),
        }
    }

    /// The RTs HR `port` has for `san` (learned and twin-derived), ranked
    /// best first without building the derived ones.
    fn ranked(&self, port: PortId, san: Address) -> Vec<(Rank<'_>, Src)> {
        let mut v: Vec<(Rank<'_>, Src)> = Vec::new();
        if san == self.cfg.hrs[port].san_id {
            return v;
        }
        if let Some(l) = self.hrs[port].learned.get(&san) {
            for (i, l) in l.iter().enumerate() {
                v.push((rt_rank(&l.rt), Src::Learned(i)));
            }
        }
        let rc = self.cfg.router_cost;
        for t in self.hrs.ids() {
            if t == port || !self.hrs[t].up {
                continue;
            }
            let ta = self.cfg.hrs[t].address;
            if self.cfg.hrs[t].san_id == san && self.hrs[t].lrt_nodes.is_some() {
                v.push((
                    Rank {
                        q: rc,
                        native: &[],
                        pre: Some(ta),
                        rcvf: &[],
                    },
                    Src::TwinLrt(t),
                ));
            }
            if let Some(l) = self.hrs[t].learned.get(&san) {
                for (i, x) in l.iter().enumerate() {
                    v.push((
                        Rank {
                            q: x.rt.q.saturating_add(rc),
                            native: first_native(&x.rt.csr),
                            pre: Some(ta),
                            rcvf: &x.rt.rcvf,
                        },
                        Src::TwinLearned(t, i),
                    ));
                }
            }
        }
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The nodes of the RT a ranked source stands for.
    fn src_nodes(&self, port: PortId, san: Address, src: Src) -> &[NodeEntry] {
        match src {
            Src::Learned(i) => &self.hrs[port].learned[&san][i].rt.nodes,
            Src::TwinLrt(t) => self.hrs[t].lrt_nodes.as_deref().map_or(&[][..], |v| &v[..]),
            Src::TwinLearned(t, i) => &self.hrs[t].learned[&san][i].rt.nodes,
        }
    }

    /// Builds the RT a ranked source stands for, as HR `port` holds it.
    fn materialize(&self, port: PortId, san: Address, src: Src) -> (Rt, Origin) {
        match src {
            Src::Learned(i) => {
                let l = &self.hrs[port].learned[&san][i];
                (l.rt.clone(), Origin::Buddy { from: l.from })
            }
            Src::TwinLrt(t) => (
                self.derive(t, &self.lrt_rt(t).expect("ranked only when present")),
                Origin::Twin { port: t },
            ),
            Src::TwinLearned(t, i) => (
                self.derive(t, &self.hrs[t].learned[&san][i].rt),
                Origin::Twin { port: t },
            ),
        }
    }

    fn lrt_changed(&mut self, port: PortId) {
        let h = &mut self.hrs[port];
        h.lrt_sn = h.lrt_sn.wrapping_add(1);
        h.lrt_nodes = None;
        self.lrt_nodes(port);
        let san = self.cfg.hrs[port].san_id;
        for t in self.hrs.ids() {
            if t != port {
                self.hrs[t].dirty.insert(san);
            }
        }
        self.fib_dirty = true;
    }

    fn learned_changed(&mut self, port: PortId, san: Address) {
        for t in self.hrs.ids() {
            if t != port {
                self.hrs[t].dirty.insert(san);
            }
        }
        self.fib_dirty = true;
    }

    // ----- inputs ------------------------------------------------------------

    /// A packet for this box (DA = one of its HRs, Hey-You or broadcast)
    /// arrived on `port` from `native_src`, as the forwarding path located
    /// it (its layout travels with the punt: the packet is not walked again).
    pub fn handle_packet(
        &mut self,
        now: Time,
        port: PortId,
        native_src: &NativeAddr,
        p: &Packet<&[u8]>,
    ) {
        self.stats.received += 1;
        if !self.hrs.get(port).is_some_and(|h| h.up) {
            return;
        }
        let h = p.header();
        if !h.packet_type().is_control() {
            self.stats.not_control += 1;
            return;
        }
        if self.rt_precheck(now, port, native_src, p) {
            return;
        }
        if self.rt_known_nodes(now, port, native_src, p) {
            return;
        }
        let m = match Message::parse(
            h.packet_type(),
            h.type_ext(),
            p.data(),
            p.layout().data_offset(),
        ) {
            Ok(m) => m,
            Err(error) => {
                self.stats.parse_errors += 1;
                self.event(Event::BadPacket { port, error });
                return;
            }
        };
        self.handle_message(now, port, native_src, p, m);
    }

    /// A packet for this box as bytes (hosts without a forwarding path in
    /// front, such as the simulator's or a test's): located, then handled
    /// as [`Router::handle_packet`]; a malformed one is counted and logged.
    pub fn handle_bytes(&mut self, now: Time, port: PortId, native_src: &NativeAddr, bytes: &[u8]) {
        match Packet::new_checked(bytes, usize::MAX) {
            Ok(p) => self.handle_packet(now, port, native_src, &p),
            Err(error) => {
                self.stats.received += 1;
                if !self.hrs.get(port).is_some_and(|h| h.up) {
                    return;
                }
                let pt =
                    crate::wire::packet::header_of(bytes, usize::MAX).map(|(h, _)| h.packet_type());
                if pt.is_some_and(|pt| !pt.is_control()) {
                    self.stats.not_control += 1;
                } else {
                    self.stats.parse_errors += 1;
                    self.event(Event::BadPacket { port, error });
                }
            }
        }
    }

    fn handle_message(
        &mut self,
        now: Time,
        port: PortId,
        native_src: &NativeAddr,
        p: &Packet<&[u8]>,
        m: Message,
    ) {
        let h = p.header();
        let sa = h.src();
        // Requests are answered by the HR they are addressed to.
        let hr = self.port_of(h.dst()).unwrap_or(port);
        match m {
            Message::RouteRequest { dst } => self.answer_routes(port, hr, native_src, sa, dst),
            Message::WhichHr { dst } => self.answer_which_hr(port, hr, native_src, sa, dst),
            Message::InfoRequest(q) => self.answer_info(port, hr, native_src, sa, &q),
            Message::WhoAreYou => {
                if sa.is_node() {
                    let info = self.my_info(hr);
                    self.stats.requests_answered += 1;
                    self.send_reply(port, native_src, sa, hr, &Message::Info(vec![info]));
                    if hr == port
                        && !self.hrs[port].lrt.contains_key(&sa)
                        && !self.box_has(sa)
                        && self.hrs[port].lrt.len() < self.cfg.limits.max_lrt
                    {
                        // An unknown node on this SAN: ask who it is.
                        self.send_msg(port, *native_src, sa, &Message::WhoAreYou, 0);
                    }
                }
            }
            Message::Info(nodes) => self.handle_info(now, port, native_src, sa, &nodes),
            Message::RtRequest => {
                if sa.is_node() {
                    self.stats.requests_answered += 1;
                    let buddy = self.hrs[port]
                        .lrt
                        .get(&sa)
                        .is_some_and(|e| e.router && e.native == *native_src);
                    if buddy {
                        // Batched with the full set a new buddy gets anyway.
                        self.hrs[port].full_to.insert(sa);
                    } else {
                        self.send_full_set(port, sa, *native_src);
                    }
                }
            }
            Message::RouteTable(rt) => {
                let part = RtPart::from_free(h.free());
                let known = self.node_key(p).map(|(k, _)| (k, None));
                self.handle_rt(now, port, native_src, sa, part, rt, known)
            }
            Message::HrDown { hr: x } => self.hr_down(now, x, Some(sa)),
            Message::LinkDown { a, b } => self.link_down(now, a, b, Some(sa)),
            Message::Routes { .. }
            | Message::Redirect { .. }
            | Message::Unknown { .. }
            | Message::General { .. } => {}
        }
    }

    fn send_reply(
        &mut self,
        port: PortId,
        native: &NativeAddr,
        dst: Address,
        hr: PortId,
        m: &Message,
    ) {
        let src = self.cfg.hrs[hr].address;
        let Ok(p) = m.to_packet(dst, src) else {
            return;
        };
        if let Ok(bytes) = p.to_bytes() {
            self.emit(Output::Send {
                port,
                native: *native,
                packet: bytes,
            });
        }
    }

    fn handle_info(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        sa: Address,
        nodes: &[NodeInfo],
    ) {
        let _ = now;
        // Only an RRP#5 about its own sender describes a node on this SAN.
        let Some(me) = nodes.first() else { return };
        if me.address != sa || !sa.is_node() || self.box_has(sa) || native.is_empty() {
            return;
        }
        let router = me
            .capabilities
            .iter()
            .any(|c| c.code == CapabilityCode::Router as u8);
        let h = &mut self.hrs[port];
        match h.lrt.get_mut(&sa) {
            Some(e) => {
                e.missed = 0;
                let changed = e.info != *me || e.native != *native || e.router != router;
                if changed && !e.is_static {
                    e.info = me.clone();
                    e.native = *native;
                    e.router = router;
                    self.lrt_changed(port);
                }
            }
            None => {
                if h.lrt.len() >= self.cfg.limits.max_lrt {
                    return;
                }
                h.lrt.insert(
                    sa,
                    LrtEntry {
                        info: me.clone(),
                        native: *native,
                        is_static: false,
                        router,
                        missed: 0,
                    },
                );
                // A buddy that answers again is no longer down.
                self.tombstones.remove(&sa);
                self.lrt_changed(port);
                self.event(Event::NodeUp {
                    port,
                    node: sa,
                    router,
                });
                if router {
                    // Neighbour up: ask for its RTs and give it ours.
                    self.send_msg(port, *native, sa, &Message::RtRequest, 0);
                    self.hrs[port].full_to.insert(sa);
                }
            }
        }
    }

    /// The key of an unsplit RRP#9's node list (SAN-ID, SN, keyed hash of
    /// the node records' bytes) and where those bytes start in the data block.
    fn node_key(&self, p: &Packet<&[u8]>) -> Option<(NodeKey, usize)> {
        use crate::wire::record::RecordIter;
        use std::hash::BuildHasher;
        if !whole_rrp9(p) {
            return None;
        }
        let mut it = RecordIter::new(p.data(), 0);
        let (r8, _) = it.next()?.ok()?;
        it.next()?.ok()?;
        let (r7, at) = it.next()?.ok()?;
        let start = at + r7.bytes().len();
        let (san, sn) = r8.rt_header()?;
        let tail = &p.data()[start..];
        let hash = self.hasher.hash_one(tail);
        Some(((san, sn, hash, tail.len()), start))
    }

    /// An RRP#9 whose node list this box already holds: only its R8, R5 and
    /// R7 are parsed. Returns whether it was handled.
    fn rt_known_nodes(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        p: &Packet<&[u8]>,
    ) -> bool {
        use crate::wire::record::{Record, RecordIter};
        let Some((key, start)) = self.node_key(p) else {
            return false;
        };
        let Some(nodes) = self.interned.get(&key).cloned() else {
            return false;
        };
        let head = &p.data()[..start];
        let recs: Vec<RecordRepr> = RecordIter::new(head, 0)
            .filter_map(|r| r.ok())
            .filter_map(|(r, _): (Record<'_>, usize)| RecordRepr::parse(&r).ok())
            .collect();
        let [
            RecordRepr::RtHeader { san_id, sn },
            RecordRepr::SourceRoute(csr),
            RecordRepr::Rcvf(rcvf),
        ] = &recs[..]
        else {
            return false;
        };
        let rt = RouteTable {
            san_id: *san_id,
            sn: *sn,
            csr: csr.clone(),
            rcvf: rcvf.clone(),
            nodes: Vec::new(),
        };
        let sa = p.header().src();
        self.handle_rt(
            now,
            port,
            native,
            sa,
            Some(RtPart::WHOLE),
            rt,
            Some((key, Some(nodes))),
        );
        true
    }

    /// Settles an RRP#9 from its R8, R5 and R7 alone, without building its
    /// node list, when the outcome does not depend on the nodes: a refresh
    /// (same RCVF, same SN), a stale SN, a refusal, or an RT that would not
    /// be among the k best. Returns whether it was settled.
    fn rt_precheck(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        p: &Packet<&[u8]>,
    ) -> bool {
        use crate::wire::record::RecordIter;
        if !whole_rrp9(p) {
            return false;
        }
        let h = p.header();
        let sa = h.src();
        let known = self.hrs[port]
            .lrt
            .get(&sa)
            .is_some_and(|e| e.router && e.native == *native);
        if !known {
            return false;
        }
        let mut it = RecordIter::new(p.data(), 0);
        let (Some(Ok((r8, _))), Some(Ok((r5, _)))) = (it.next(), it.next()) else {
            return false;
        };
        let Some(Ok((r7, _))) = it.next() else {
            return false;
        };
        let (Some((san, sn)), Some(q)) = (r8.rt_header(), r5.route_quality()) else {
            return false;
        };
        if r7.record_type() != crate::wire::record::RecordType::Rcvf {
            return false;
        }
        let d7 = r7.data_pad();
        if d7.len() % 2 != 0 {
            return false;
        }
        let mut rcvf = Vec::with_capacity(d7.len() / 2 + 1);
        rcvf.push(sa);
        rcvf.extend(d7.chunks_exact(2).map(|c| Address(be16(c, 0))));
        if san == self.cfg.hrs[port].san_id
            || rcvf[1..].iter().any(|a| self.box_has(*a))
            || rcvf.len() > self.cfg.limits.max_rcvf
        {
            return false;
        }
        let k = self.cfg.k;
        let q = q.saturating_add(self.cfg.hrs[port].cost);
        let Some(list) = self.hrs[port].learned.get_mut(&san) else {
            return false;
        };
        if let Some(i) = list.iter().position(|l| l.rt.rcvf == rcvf) {
            match serial::compare(sn, list[i].rt.sn) {
                Ordering::Equal => {
                    list[i].expires = now + self.cfg.timers.hold_ms;
                    self.stats.rts_received += 1;
                    self.stats.rts_refreshed += 1;
                    return true;
                }
                _ => return false,
            }
        }
        if list.len() >= k {
            let cand = Rank {
                q,
                native: native.as_bytes(),
                pre: None,
                rcvf: &rcvf,
            };
            if cand.cmp(&rt_rank(&list[k - 1].rt)) != Ordering::Less {
                self.stats.rts_received += 1;
                return true;
            }
        }
        false
    }

    #[allow(clippy::too_many_arguments)]
    fn handle_rt(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        sa: Address,
        part: Option<RtPart>,
        rt: RouteTable,
        pre: Option<(NodeKey, Option<Arc<Vec<NodeEntry>>>)>,
    ) {
        self.stats.rts_received += 1;
        let refuse = |s: &mut Self, why: RtRefusal, san: Address| {
            *s.stats.rts_refused.entry(why).or_default() += 1;
            s.event(Event::RtRefused {
                port,
                from: sa,
                san,
                why,
            });
        };
        let known = self.hrs[port]
            .lrt
            .get(&sa)
            .is_some_and(|e| e.router && e.native == *native);
        if !known {
            return refuse(self, RtRefusal::UnknownSender, rt.san_id);
        }
        let Some(part) = part else {
            return refuse(self, RtRefusal::BadPart, rt.san_id);
        };
        let rt = if part.count > 1 {
            let key = (sa, rt.san_id, rt.sn);
            let hold = self.cfg.timers.hold_ms;
            let buf = self.hrs[port].parts.entry(key).or_insert_with(|| PartBuf {
                count: part.count,
                parts: BTreeMap::new(),
                expires: now + hold,
            });
            if buf.count != part.count
                || buf
                    .parts
                    .values()
                    .next()
                    .is_some_and(|f| f.csr != rt.csr || f.rcvf != rt.rcvf)
            {
                self.hrs[port].parts.remove(&key);
                return refuse(self, RtRefusal::BadPart, key.1);
            }
            buf.parts.insert(part.index, rt);
            if buf.parts.len() < part.count as usize {
                return;
            }
            let buf = self.hrs[port].parts.remove(&key).expect("present");
            let mut it = buf.parts.into_values();
            let mut whole = it.next().expect("count >= 2");
            for p in it {
                whole.nodes.extend(p.nodes);
            }
            whole
        } else {
            rt
        };
        let san = rt.san_id;
        if rt.rcvf.len() + 1 > self.cfg.limits.max_rcvf {
            return refuse(self, RtRefusal::RcvfTooLong, san);
        }
        let count = match &pre {
            Some((_, Some(a))) => a.len(),
            _ => rt.nodes.len(),
        };
        if count > self.cfg.limits.max_nodes_per_rt {
            return refuse(self, RtRefusal::TooManyNodes, san);
        }
        if san == self.cfg.hrs[port].san_id {
            return refuse(self, RtRefusal::OwnSan, san);
        }
        if rt.rcvf.iter().any(|a| self.box_has(*a)) {
            return refuse(self, RtRefusal::Loop, san);
        }
        if rt
            .rcvf
            .iter()
            .chain([&sa])
            .any(|a| self.tombstoned(now, *a))
        {
            return refuse(self, RtRefusal::Tombstone, san);
        }
        let Ok(csr) = Route::from_l2rhs(&rt.csr.route) else {
            return refuse(self, RtRefusal::BadRoute, san);
        };
        let (csr_q, csr_mtu, sn) = (rt.csr.q, rt.csr.mtu, rt.sn);
        let rcvf_in = rt.rcvf;
        let nodes = match pre {
            Some((_, Some(a))) => a,
            pre => {
                let mut nodes = Vec::with_capacity(rt.nodes.len());
                for n in rt.nodes {
                    let Ok(r) = Route::from_l2rhs(&n.route.route) else {
                        return refuse(self, RtRefusal::BadRoute, san);
                    };
                    nodes.push(NodeEntry {
                        info: n.info,
                        route: r,
                        q: n.route.q,
                    });
                }
                // RTs of one SAN with one SN arrive by several paths: keep
                // one copy of their node list per box, found again by the
                // bytes it came in.
                let a = Arc::new(nodes);
                if let Some((key, None)) = pre {
                    self.interned.insert(key, a.clone());
                }
                a
            }
        };
        let hop = Route(vec![RouterHop::native(*native)]);
        let csr = hop.catenate(&csr);
        if !csr.within_limit() {
            return refuse(self, RtRefusal::BadRoute, san);
        }
        let mut rcvf = Vec::with_capacity(rcvf_in.len() + 1);
        rcvf.push(sa);
        rcvf.extend_from_slice(&rcvf_in);
        let hc = &self.cfg.hrs[port];
        let stored = Rt {
            san_id: san,
            sn,
            csr,
            q: csr_q.saturating_add(hc.cost),
            mtu: mtu_words(hc.mtu).min(csr_mtu.unwrap_or(Mtu::UNLIMITED)),
            rcvf,
            nodes,
        };
        let expires = now + self.cfg.timers.hold_ms;
        let k = self.cfg.k;
        let limit = self.cfg.limits.max_rts_per_neighbour;
        let from_count: usize = self.hrs[port]
            .learned
            .values()
            .map(|l| l.iter().filter(|x| x.from == sa).count())
            .sum();
        let list = self.hrs[port].learned.entry(san).or_default();
        if let Some(i) = list.iter().position(|l| l.rt.rcvf == stored.rcvf) {
            match serial::compare(stored.sn, list[i].rt.sn) {
                Ordering::Less => return refuse(self, RtRefusal::Stale, san),
                Ordering::Equal => {
                    list[i].expires = expires;
                    self.stats.rts_refreshed += 1;
                    return;
                }
                Ordering::Greater => {
                    list.remove(i);
                }
            }
        } else if from_count >= limit {
            return refuse(self, RtRefusal::TooManyRts, san);
        }
        let pos = list
            .iter()
            .position(|l| rt_rank(&stored).cmp(&rt_rank(&l.rt)) == Ordering::Less)
            .unwrap_or(list.len());
        if pos >= k {
            // Not among the k best: nothing changes.
            return;
        }
        list.insert(
            pos,
            Learned {
                rt: stored,
                from: sa,
                expires,
            },
        );
        list.truncate(k);
        self.stats.rts_accepted += 1;
        self.learned_changed(port, san);
    }

    fn tombstoned(&self, now: Time, a: Address) -> bool {
        self.tombstones.get(&a).is_some_and(|t| *t > now)
    }

    /// A dataplane notice: may produce ERR UNK, RRP#3 or ERR GENERAL under
    /// the error manners of docs/architecture.md "Route tables and RRP".
    pub fn handle_notice(&mut self, now: Time, n: &Notice) {
        if !self.hrs.has(n.in_port) {
            return;
        }
        let Some(h) = n.header() else {
            return;
        };
        let (dst, src, pt) = (h.dst(), h.src(), h.packet_type());
        if pt == PacketType::ERR {
            self.stats.errors_suppressed_err += 1;
            return;
        }
        if !src.is_node() {
            self.stats.errors_suppressed_source += 1;
            return;
        }
        let port = n.in_port;
        let msg = match n.kind {
            NoticeKind::NoRoute => Message::Unknown { addr: dst },
            NoticeKind::Redirect => {
                let lrt = &self.hrs[port].lrt;
                if !lrt.contains_key(&src) {
                    self.stats.errors_suppressed_source += 1;
                    return;
                }
                let Some(via) = lrt
                    .values()
                    .find(|e| e.native == n.next_hop)
                    .map(|e| e.info.address)
                else {
                    return;
                };
                Message::Redirect { dst, via }
            }
            NoticeKind::Mtu => {
                let mtu = self.cfg.hrs[port].mtu as usize;
                let room = if mtu == 0 {
                    usize::MAX
                } else {
                    mtu.saturating_sub(24)
                };
                let take = n.bytes().len().min(room);
                Message::General {
                    enclosed: n.bytes()[..take].to_vec(),
                }
            }
        };
        if !self.limiter.allow(now, src) {
            self.stats.errors_suppressed_rate += 1;
            return;
        }
        match n.kind {
            NoticeKind::NoRoute => self.stats.err_unk_sent += 1,
            NoticeKind::Redirect => self.stats.redirects_sent += 1,
            NoticeKind::Mtu => self.stats.err_general_sent += 1,
        }
        self.send_reply(port, &n.native_src, src, port, &msg);
    }

    /// The port's link went down: its HR is down.
    pub fn port_down(&mut self, now: Time, port: PortId) {
        if !self.hrs[port].up {
            return;
        }
        let me = self.cfg.hrs[port].address;
        let h = &mut self.hrs[port];
        h.up = false;
        h.lrt.retain(|_, e| e.is_static);
        h.learned.clear();
        h.advertised.clear();
        h.parts.clear();
        self.lrt_changed(port);
        self.event(Event::Port { port, up: false });
        // Tell the twins' buddies that routes through this HR are gone.
        self.hr_down(now, me, None);
        self.tombstones.remove(&me);
    }

    /// Adds (or replaces) a static LRT entry on HR `port` (Level-A/B
    /// nodes; exempt from keepalives). Returns false for a bad port or an
    /// address that is not a node address.
    pub fn add_static(&mut self, port: PortId, node: StaticNode) -> bool {
        if !self.hrs.has(port) || !node.address.is_node() || self.box_has(node.address) {
            return false;
        }
        let router = node
            .capabilities
            .iter()
            .any(|c| c.code == CapabilityCode::Router as u8);
        self.hrs[port].lrt.insert(
            node.address,
            LrtEntry {
                info: NodeInfo {
                    address: node.address,
                    name: node.name.clone(),
                    capabilities: node.capabilities.clone(),
                    logical: None,
                },
                native: node.native,
                is_static: true,
                router,
                missed: 0,
            },
        );
        if let Some(h) = self.cfg.hrs.get_mut(port) {
            h.static_nodes.retain(|s| s.address != node.address);
            h.static_nodes.push(node);
        }
        self.lrt_changed(port);
        true
    }

    /// Removes a static LRT entry from HR `port`; false when there was none.
    pub fn remove_static(&mut self, port: PortId, address: Address) -> bool {
        let Some(h) = self.hrs.get_mut(port) else {
            return false;
        };
        if !h.lrt.get(&address).is_some_and(|e| e.is_static) {
            return false;
        }
        h.lrt.remove(&address);
        self.cfg.hrs[port]
            .static_nodes
            .retain(|s| s.address != address);
        self.lrt_changed(port);
        true
    }

    /// Applies new timers, limits and error rates (a live reload). Refused
    /// when they do not validate.
    pub fn set_tunables(
        &mut self,
        timers: crate::router::config::Timers,
        limits: crate::router::config::Limits,
        error_rates: crate::router::config::ErrorRates,
    ) -> Result<(), ConfigError> {
        let mut cfg = self.cfg.clone();
        cfg.timers = timers;
        cfg.limits = limits;
        cfg.error_rates = error_rates;
        cfg.validate()?;
        self.cfg = cfg;
        self.limiter.per_source = error_rates.per_source;
        self.limiter.global = error_rates.global;
        Ok(())
    }

    /// The port's link came up again.
    pub fn port_up(&mut self, now: Time, port: PortId) {
        if self.hrs[port].up {
            return;
        }
        let h = &mut self.hrs[port];
        h.up = true;
        h.next_sweep = now;
        h.next_keepalive = now + self.cfg.timers.keepalive_ms;
        self.lrt_changed(port);
        self.event(Event::Port { port, up: true });
    }

    /// HR `x` is down: delete every RT crossing it, relay ERR HRDOWN "up and
    /// down" (to the neighbours those RTs came from and went to), refuse RTs
    /// crossing it for a while.
    pub fn hr_down(&mut self, now: Time, x: Address, from: Option<Address>) {
        if from.is_some() && self.tombstoned(now, x) {
            return;
        }
        self.stats.hr_down += 1;
        // A buddy's own HRs see the downed HR answer keepalives again and
        // lift the tombstone then (or after a hold time); elsewhere it only
        // has to outlast the relay and the messages in flight.
        let buddy = self.hrs.iter().any(|h| h.lrt.contains_key(&x));
        let until = if buddy {
            self.cfg.timers.hold_ms
        } else {
            self.cfg.timers.tombstone_ms
        };
        self.tombstones.insert(x, now + until);
        let deleted = self.delete_where(
            x,
            from,
            |rcvf| rcvf.contains(&x),
            &Message::HrDown { hr: x },
        );
        self.event(Event::HrDown {
            hr: x,
            deleted,
            from,
        });
    }

    /// The link between `a` and `b` is down.
    pub fn link_down(&mut self, now: Time, a: Address, b: Address, from: Option<Address>) {
        let _ = now;
        let adjacent = |r: &[Address]| {
            r.windows(2)
                .any(|w| (w[0] == a && w[1] == b) || (w[0] == b && w[1] == a))
        };
        let deleted = self.delete_where(a, from, adjacent, &Message::LinkDown { a, b });
        self.event(Event::LinkDown { a, b, deleted });
    }

    fn delete_where(
        &mut self,
        x: Address,
        from: Option<Address>,
        hit: impl Fn(&[Address]) -> bool,
        relay: &Message,
    ) -> usize {
        let mut up: BTreeSet<(PortId, Address)> = BTreeSet::new();
        let mut down_ports: BTreeSet<PortId> = BTreeSet::new();
        let mut deleted = 0;
        let mut changed_sans: Vec<(PortId, Address)> = Vec::new();
        for p in self.hrs.ids() {
            // A buddy that is itself the downed HR leaves this SAN's LRT.
            if self.hrs[p]
                .lrt
                .get(&x)
                .is_some_and(|e| !e.is_static && matches!(relay, Message::HrDown { .. }))
            {
                self.hrs[p].lrt.remove(&x);
                self.lrt_changed(p);
            }
            for (san, list) in self.hrs[p].learned.iter_mut() {
                let before = list.len();
                list.retain(|l| {
                    let h = hit(&l.rt.rcvf);
                    if h {
                        up.insert((p, l.from));
                    }
                    !h
                });
                if list.len() != before {
                    deleted += before - list.len();
                    changed_sans.push((p, *san));
                }
            }
            self.hrs[p].learned.retain(|_, l| !l.is_empty());
            // What this HR advertised to its buddies across x went "down".
            let before = self.hrs[p].advertised.len();
            self.hrs[p].advertised.retain(|(_, rcvf), _| !hit(rcvf));
            if self.hrs[p].advertised.len() != before {
                down_ports.insert(p);
            }
        }
        for (p, san) in changed_sans {
            self.learned_changed(p, san);
        }
        self.stats.rts_deleted_down += deleted as u64;
        self.fib_dirty = true;
        let mut targets: BTreeSet<(PortId, Address)> = up;
        for p in down_ports {
            for b in self.buddies(p) {
                targets.insert((p, b));
            }
        }
        for (p, b) in targets {
            if Some(b) == from || b == x || !self.hrs[p].up {
                continue;
            }
            if let Some(native) = self.hrs[p].lrt.get(&b).map(|e| e.native) {
                self.send_msg(p, native, b, relay, 0);
            }
        }
        deleted
    }

    // ----- requests ------------------------------------------------------------

    /// Every route HR `port` has to `dst`, best first (distinct routes).
    pub fn routes_to(&self, port: PortId, dst: Address) -> Vec<RouteInfo> {
        let mut v: Vec<RouteInfo> = Vec::new();
        let hc = &self.cfg.hrs[port];
        if dst == hc.address {
            v.push(RouteInfo {
                dst,
                q: 0,
                route: Route::empty(),
                next: Next::Local,
                mtu: hc.mtu,
                rcvf: Vec::new(),
            });
            return v;
        }
        if let Some(t) = self.port_of(dst) {
            v.push(RouteInfo {
                dst,
                q: self.cfg.router_cost,
                route: Route(vec![RouterHop::egress(dst)]),
                next: Next::Local,
                mtu: min_mtu(hc.mtu.saturating_sub(8), self.cfg.hrs[t].mtu),
                rcvf: vec![dst],
            });
            return v;
        }
        if let Some(e) = self.hrs[port].lrt.get(&dst) {
            v.push(RouteInfo {
                dst,
                q: hc.cost,
                route: Route(vec![RouterHop::native(e.native)]),
                next: Next::Forward {
                    port,
                    native: e.native,
                },
                mtu: hc.mtu,
                rcvf: Vec::new(),
            });
        }
        for t in self.hrs.ids() {
            if t == port || !self.hrs[t].up {
                continue;
            }
            if let Some(e) = self.hrs[t].lrt.get(&dst) {
                let route = Route(vec![RouterHop::new(self.cfg.hrs[t].address, e.native)]);
                let on_first = route.l2rh_bytes() as u32;
                v.push(RouteInfo {
                    dst,
                    q: self.cfg.router_cost.saturating_add(self.cfg.hrs[t].cost),
                    route,
                    next: Next::Forward {
                        port: t,
                        native: e.native,
                    },
                    mtu: min_mtu(hc.mtu.saturating_sub(on_first), self.cfg.hrs[t].mtu),
                    rcvf: vec![self.cfg.hrs[t].address],
                });
            }
        }
        for san in self.known_sans() {
            let srcs: Vec<Src> = self
                .ranked(port, san)
                .into_iter()
                .take(self.cfg.k)
                .map(|(_, s)| s)
                .filter(|s| {
                    self.src_nodes(port, san, *s)
                        .iter()
                        .any(|n| n.info.address == dst)
                })
                .collect();
            for src in srcs {
                let (rt, _) = self.materialize(port, san, src);
                for n in rt.nodes.iter().filter(|n| n.info.address == dst) {
                    let route = rt.csr.catenate(&n.route);
                    let Some(first) = route.first() else { continue };
                    let next = if first.is_native_only() {
                        Next::Forward {
                            port,
                            native: first.native,
                        }
                    } else {
                        match self.port_of(first.egress) {
                            Some(t) if !first.is_egress_only() => Next::Forward {
                                port: t,
                                native: first.native,
                            },
                            _ => Next::Local,
                        }
                    };
                    let mtu = self.route_mtu(port, &route, rt.mtu);
                    v.push(RouteInfo {
                        dst,
                        q: rt.q.saturating_add(n.q),
                        route,
                        next,
                        mtu,
                        rcvf: rt.rcvf.clone(),
                    });
                }
            }
        }
        v.sort_by(|a, b| {
            let ra = Rank {
                q: a.q,
                native: first_native(&a.route),
                pre: None,
                rcvf: &a.rcvf,
            };
            let rb = Rank {
                q: b.q,
                native: first_native(&b.route),
                pre: None,
                rcvf: &b.rcvf,
            };
            ra.cmp(&rb)
        });
        v.dedup_by(|a, b| a.route == b.route);
        v
    }

    /// The MTU of a route from HR `port` whose RT carries MinMTU `rt_mtu`:
    /// on this HR's SAN the packet carries every L2RH of the route (but a
    /// leading native-only hop, which is the native header); past the
    /// first router the RT's MinMTU applies, less the L2RHs still present.
    fn route_mtu(&self, port: PortId, route: &Route, rt_mtu: Mtu) -> u32 {
        let hops = &route.0;
        let skip = usize::from(hops.first().is_some_and(RouterHop::is_native_only));
        let bytes = |from: usize| -> u32 {
            hops[from.min(hops.len())..]
                .iter()
                .map(|h| crate::wire::l2rh::l2rh_bytes(2 + h.native.len()) as u32)
                .sum()
        };
        let here = self.cfg.hrs[port].mtu;
        let first = if here == 0 {
            0
        } else {
            here.saturating_sub(bytes(skip)).max(1)
        };
        let beyond = match rt_mtu.bytes() {
            None => 0,
            Some(b) => (b as u32).saturating_sub(bytes(skip + 1)).max(1),
        };
        min_mtu(first, beyond)
    }

    fn answer_routes(
        &mut self,
        port: PortId,
        hr: PortId,
        native: &NativeAddr,
        sa: Address,
        dst: Address,
    ) {
        if !sa.is_node() {
            return;
        }
        self.stats.requests_answered += 1;
        let routes: Vec<SourceRoute> = self
            .routes_to(hr, dst)
            .into_iter()
            .filter(|r| r.route.within_limit())
            .take(self.cfg.k)
            .map(|r| SourceRoute {
                q: r.q,
                route: r.route.to_l2rhs(),
                mtu: Some(mtu_words(r.mtu)),
            })
            .collect();
        let m = if routes.is_empty() {
            Message::Unknown { addr: dst }
        } else {
            Message::Routes { dst, routes }
        };
        self.send_reply(port, native, sa, hr, &m);
    }

    /// The RRP#6 answer of HR `port` for `dst`: the node on its SAN to send
    /// to (another HR, the destination itself, or this HR), or `None` when
    /// `dst` is unknown.
    pub fn which_hr(&self, port: PortId, dst: Address) -> Option<Address> {
        let me = self.cfg.hrs[port].address;
        let e = self.fib.lookup(port, dst)?;
        Some(match &e.next {
            Next::Forward { port: p, native: n } if *p == port => self.hrs[port]
                .lrt
                .values()
                .find(|e| e.native == *n)
                .map_or(me, |e| e.info.address),
            _ => me,
        })
    }

    fn answer_which_hr(
        &mut self,
        port: PortId,
        hr: PortId,
        native: &NativeAddr,
        sa: Address,
        dst: Address,
    ) {
        if !sa.is_node() {
            return;
        }
        self.stats.requests_answered += 1;
        let m = match self.which_hr(hr, dst) {
            None => Message::Unknown { addr: dst },
            Some(via) => Message::Redirect { dst, via },
        };
        self.send_reply(port, native, sa, hr, &m);
    }

    fn all_nodes(&self, hr: PortId) -> Vec<NodeInfo> {
        let mut seen: BTreeMap<Address, NodeInfo> = BTreeMap::new();
        for p in self.hrs.ids() {
            seen.insert(self.cfg.hrs[p].address, self.my_info(p));
            for e in self.hrs[p].lrt.values() {
                seen.entry(e.info.address).or_insert_with(|| e.info.clone());
            }
        }
        for san in self.known_sans() {
            for (rt, _) in self.kept(hr, san) {
                for n in rt.nodes.iter() {
                    seen.entry(n.info.address).or_insert_with(|| n.info.clone());
                }
            }
        }
        seen.into_values().collect()
    }

    fn answer_info(
        &mut self,
        port: PortId,
        hr: PortId,
        native: &NativeAddr,
        sa: Address,
        q: &InfoQuery,
    ) {
        if !sa.is_node() {
            return;
        }
        self.stats.requests_answered += 1;
        let matches = |have: &Capability, want: &Capability| {
            have.code == want.code && want.params.iter().all(|p| have.params.contains(p))
        };
        let nodes: Vec<NodeInfo> = self
            .all_nodes(hr)
            .into_iter()
            .filter_map(|n| match q {
                InfoQuery::Address(a) => (n.address == *a).then_some(n),
                InfoQuery::Name(name) => (n.name.as_deref() == Some(&name[..])).then_some(n),
                // Appendix C step 2: a capability query is answered with each
                // matching node's address and the capabilities that matched.
                InfoQuery::Capabilities(caps) => {
                    let hit: Vec<Capability> = n
                        .capabilities
                        .iter()
                        .filter(|h| caps.iter().any(|c| matches(h, c)))
                        .cloned()
                        .collect();
                    (!hit.is_empty()).then_some(NodeInfo {
                        address: n.address,
                        name: None,
                        capabilities: hit,
                        logical: None,
                    })
                }
            })
            .collect();
        let m = if nodes.is_empty() {
            Message::Unknown {
                addr: match q {
                    InfoQuery::Address(a) => *a,
                    _ => Address::UNSPECIFIED,
                },
            }
        } else {
            Message::Info(nodes)
        };
        if let Message::Unknown { addr } = m
            && !addr.is_valid_destination()
        {
            // ERR UNK needs an address; a query by name or capability that
            // matched nothing gets an empty answer instead: none is sent.
            return;
        }
        self.send_reply(port, native, sa, hr, &m);
    }

    // ----- advertisement -------------------------------------------------------

    fn rt_message(rt: &Rt) -> RouteTable {
        RouteTable {
            san_id: rt.san_id,
            sn: rt.sn,
            csr: SourceRoute {
                q: rt.q,
                route: rt.csr.to_l2rhs(),
                mtu: Some(rt.mtu),
            },
            rcvf: rt.rcvf.clone(),
            nodes: rt
                .nodes
                .iter()
                .map(|n| RtNode {
                    info: n.info.clone(),
                    route: SourceRoute {
                        q: n.q,
                        route: n.route.to_l2rhs(),
                        mtu: None,
                    },
                })
                .collect(),
        }
    }

    /// `rt` as one RRP#9 packet from `src` (destination 0x0040, patched by
    /// the sender), its node entries taken from the encoding cache.
    fn encode_rt_whole(&mut self, src: Address, rt: &Rt) -> Option<Vec<u8>> {
        use crate::wire::header::{HEADER_LEN, Header, HeaderRepr};
        use crate::wire::record::RecordRef;
        let key = Arc::as_ptr(&rt.nodes) as usize;
        let nodes = match self.encoded.get(&key) {
            Some((_, b)) => b.clone(),
            None => {
                let mut out = Vec::new();
                for n in rt.nodes.iter() {
                    let route = SourceRoute {
                        q: n.q,
                        route: n.route.to_l2rhs(),
                        mtu: None,
                    };
                    crate::wire::message::emit_rt_node(&n.info, &route, &mut out).ok()?;
                }
                let b = Arc::new(out);
                self.encoded.insert(key, (rt.nodes.clone(), b.clone()));
                b
            }
        };
        let csr = SourceRoute {
            q: rt.q,
            route: rt.csr.to_l2rhs(),
            mtu: Some(rt.mtu),
        };
        let mut data = Vec::with_capacity(64 + nodes.len());
        RecordRef::RtHeader {
            san_id: rt.san_id,
            sn: rt.sn,
        }
        .emit(&mut data)
        .ok()?;
        RecordRef::SourceRoute(&csr).emit(&mut data).ok()?;
        RecordRef::Rcvf(&rt.rcvf).emit(&mut data).ok()?;
        data.extend_from_slice(&nodes);
        if data.len() / 8 > crate::wire::header::MAX_DATA_WORDS as usize {
            return None;
        }
        let mut bytes = vec![0u8; HEADER_LEN];
        HeaderRepr {
            dst: Address(0x0040),
            packet_type: PacketType::RRP,
            type_ext: crate::kind::RrpType::RouteTable as u16,
            src,
            ..HeaderRepr::default()
        }
        .emit(&mut Header::new_unchecked(&mut bytes[..]), data.len());
        bytes.extend_from_slice(&data);
        bytes.extend_from_slice(&[0u8; 8]);
        Some(bytes)
    }

    /// Encodes `rt` as RRP#9 packets from HR `port` (destination left 0),
    /// split into parts when it exceeds the SAN's MTU.
    fn encode_rt(&mut self, port: PortId, rt: &Rt) -> Vec<Vec<u8>> {
        let src = self.cfg.hrs[port].address;
        let mtu = self.cfg.hrs[port].mtu as usize;
        // Fast path: the node entries of a shared node list are encoded once.
        if let Some(bytes) = self.encode_rt_whole(src, rt)
            && (mtu == 0 || bytes.len() <= mtu)
        {
            return vec![bytes];
        }
        let whole = Self::rt_message(rt);
        let packet = |m: RouteTable, free: u16| -> Option<Vec<u8>> {
            let mut p = Message::RouteTable(m)
                .to_packet(Address(0x0040), src)
                .ok()?;
            p.header.free = free;
            p.to_bytes().ok()
        };
        let Some(bytes) = packet(whole.clone(), 0) else {
            return Vec::new();
        };
        if mtu == 0 || bytes.len() <= mtu {
            return vec![bytes];
        }
        let empty = RouteTable {
            nodes: Vec::new(),
            ..whole.clone()
        };
        let base = packet(empty.clone(), 0).map_or(usize::MAX, |b| b.len());
        let mut parts: Vec<RouteTable> = Vec::new();
        let mut cur = empty.clone();
        let mut cur_size = base;
        for n in whole.nodes {
            let mut v = Vec::new();
            if Message::RouteTable(RouteTable {
                nodes: vec![n.clone()],
                ..empty.clone()
            })
            .emit(&mut v)
            .is_err()
            {
                continue;
            }
            let one = 16 + v.len() + 8 - base;
            if base + one > mtu {
                // A node entry that cannot fit the SAN at all: left out.
                continue;
            }
            if cur_size + one > mtu && !cur.nodes.is_empty() {
                parts.push(std::mem::replace(&mut cur, empty.clone()));
                cur_size = base;
            }
            cur.nodes.push(n);
            cur_size += one;
        }
        parts.push(cur);
        let count = parts.len().min(255) as u8;
        parts
            .into_iter()
            .take(255)
            .enumerate()
            .filter_map(|(i, p)| {
                let free = RtPart {
                    index: i as u8 + 1,
                    count,
                }
                .to_free();
                packet(p, free)
            })
            .collect()
    }

    /// Sends encoded RRP#9 packets to buddy `dst`.
    fn send_encoded(
        &mut self,
        port: PortId,
        dst: Address,
        native: &NativeAddr,
        packets: &[Vec<u8>],
    ) {
        for p in packets {
            let mut bytes = p.clone();
            bytes[0..2].copy_from_slice(&dst.0.to_be_bytes());
            self.stats.rts_sent += 1;
            self.emit(Output::Send {
                port,
                native: *native,
                packet: bytes,
            });
        }
    }

    /// Sends `rt` from HR `port` to buddy `dst`.
    fn send_rt(&mut self, port: PortId, dst: Address, native: NativeAddr, rt: &Rt) {
        let packets = self.encode_rt(port, rt);
        self.send_encoded(port, dst, &native, &packets);
    }

    /// The RTs HR `port` offers its buddies: its kept RTs that came from twins.
    fn offer(&self, port: PortId, san: Address) -> Vec<Rt> {
        self.ranked(port, san)
            .into_iter()
            .take(self.cfg.k)
            .filter(|(_, s)| !matches!(s, Src::Learned(_)))
            .map(|(_, s)| self.materialize(port, san, s).0)
            .collect()
    }

    fn send_full_set(&mut self, port: PortId, dst: Address, native: NativeAddr) {
        for san in self.known_sans() {
            for rt in self.offer(port, san) {
                self.send_rt(port, dst, native, &rt);
            }
        }
    }

    fn advertise(&mut self, full: bool) {
        for p in self.hrs.ids() {
            if !self.hrs[p].up {
                continue;
            }
            let buddies: Vec<(Address, NativeAddr)> = self.hrs[p]
                .lrt
                .values()
                .filter(|e| e.router)
                .map(|e| (e.info.address, e.native))
                .collect();
            // Buddies due for the full set get it once, not also the changes.
            let new: BTreeSet<Address> = std::mem::take(&mut self.hrs[p].full_to);
            let sans: Vec<Address> = if full {
                self.hrs[p].dirty.clear();
                self.known_sans().into_iter().collect()
            } else {
                std::mem::take(&mut self.hrs[p].dirty).into_iter().collect()
            };
            for san in sans {
                for rt in self.offer(p, san) {
                    let key = (rt.san_id, rt.rcvf.clone());
                    if !full && self.hrs[p].advertised.get(&key) == Some(&rt.sn) {
                        continue;
                    }
                    self.hrs[p].advertised.insert(key, rt.sn);
                    let packets = self.encode_rt(p, &rt);
                    for (b, n) in &buddies {
                        if full || !new.contains(b) {
                            self.send_encoded(p, *b, n, &packets);
                        }
                    }
                }
            }
            if !full {
                for b in new {
                    if let Some(n) = self.hrs[p].lrt.get(&b).map(|e| e.native) {
                        self.send_full_set(p, b, n);
                    }
                }
            }
        }
    }

    // ----- timers ----------------------------------------------------------------

    /// When [`Router::on_timer`] wants to run next.
    pub fn next_timer(&self) -> Time {
        let mut t = self.next_refresh.min(self.next_expiry);
        for h in self.hrs.iter().filter(|h| h.up) {
            t = t.min(h.next_sweep).min(h.next_keepalive);
            if !h.dirty.is_empty() || !h.full_to.is_empty() {
                t = t.min(self.next_adv);
            }
        }
        if self.fib_dirty {
            t = t.min(self.fib_at);
        }
        t
    }

    /// Runs every timer that is due at `now`.
    pub fn on_timer(&mut self, now: Time) {
        let tm = self.cfg.timers;
        for p in self.hrs.ids() {
            if !self.hrs[p].up {
                continue;
            }
            if now >= self.hrs[p].next_sweep {
                self.hrs[p].next_sweep = now + tm.sweep_ms;
                self.send_msg(
                    p,
                    NativeAddr::none(),
                    Address::BROADCAST,
                    &Message::WhoAreYou,
                    0,
                );
            }
            if now >= self.hrs[p].next_keepalive {
                self.hrs[p].next_keepalive = now + tm.keepalive_ms;
                self.keepalives(now, p);
            }
        }
        if now >= self.next_expiry {
            self.next_expiry = now + EXPIRY_CHECK_MS;
            self.expire(now);
        }
        if now >= self.next_refresh {
            self.next_refresh = now + tm.refresh_ms;
            self.advertise(true);
            self.next_adv = now + tm.advertise_ms;
        } else if now >= self.next_adv {
            let pending = self
                .hrs
                .iter()
                .any(|h| !h.dirty.is_empty() || !h.full_to.is_empty());
            if pending {
                self.advertise(false);
                self.next_adv = now + tm.advertise_ms;
            }
        }
        if self.fib_dirty && now >= self.fib_at {
            self.compute_fib();
            self.fib_dirty = false;
            self.fib_at = now + tm.fib_ms;
        }
    }

    fn keepalives(&mut self, now: Time, p: PortId) {
        let max = self.cfg.timers.keepalive_misses;
        let mut gone: Vec<(Address, bool)> = Vec::new();
        let mut ask: Vec<(Address, NativeAddr)> = Vec::new();
        for e in self.hrs[p].lrt.values_mut() {
            if e.is_static {
                continue;
            }
            if e.missed >= max {
                gone.push((e.info.address, e.router));
            } else {
                e.missed += 1;
                ask.push((e.info.address, e.native));
            }
        }
        for (a, n) in ask {
            self.send_msg(p, n, a, &Message::WhoAreYou, 0);
        }
        for (a, router) in gone {
            self.hrs[p].lrt.remove(&a);
            self.lrt_changed(p);
            self.event(Event::NodeDown { port: p, node: a });
            if router {
                self.hr_down(now, a, None);
            }
        }
    }

    fn expire(&mut self, now: Time) {
        let mut changed: Vec<(PortId, Address)> = Vec::new();
        for p in self.hrs.ids() {
            let h = &mut self.hrs[p];
            for (san, list) in h.learned.iter_mut() {
                let before = list.len();
                list.retain(|l| l.expires > now);
                if list.len() != before {
                    self.stats.rts_expired += (before - list.len()) as u64;
                    changed.push((p, *san));
                }
            }
            h.learned.retain(|_, l| !l.is_empty());
            h.parts.retain(|_, b| b.expires > now);
        }
        for (p, san) in changed {
            self.learned_changed(p, san);
        }
        self.tombstones.retain(|_, t| *t > now);
        self.interned.retain(|_, a| Arc::strong_count(a) > 1);
        self.encoded.retain(|_, (a, _)| Arc::strong_count(a) > 1);
    }

    // ----- FIB --------------------------------------------------------------------

    fn compute_fib(&mut self) {
        let per_port = self.fib_tables();
        if per_port != self.fib.per_port {
            let version = self.fib.version + 1;
            let routes = per_port.first().map_or(0, Vec::len);
            self.fib = Arc::new(RouteTables { per_port, version });
            self.stats.fib_versions += 1;
            self.outputs.push_back(Output::FibChanged(version));
            self.event(Event::FibComputed { version, routes });
        }
    }

    /// Each HR's best route to every destination from its own LRT and
    /// learned RTs; a twin's best seen through the twin is that best plus the
    /// router cost (the order among one HR's routes is unchanged), so each
    /// port's FIB combines N such tables.
    fn fib_tables(&self) -> PerPort<Vec<FibEntry>> {
        let own: PerPort<HashMap<Address, Best<'_>>> =
            self.hrs.ids().map(|h| self.own_best(h)).collect();
        let rc = self.cfg.router_cost;
        let mut per_port = Vec::with_capacity(self.hrs.len());
        for t in self.hrs.ids() {
            if !self.hrs[t].up {
                per_port.push(Vec::new());
                continue;
            }
            let own_san = self.cfg.hrs[t].san_id;
            let mut best: HashMap<Address, (Best<'_>, PortId)> =
                HashMap::with_capacity(own[t].len());
            for (h, table) in own.enumerate() {
                if h != t && !self.hrs[h].up {
                    continue;
                }
                let twin = h != t;
                let ha = self.cfg.hrs[h].address;
                for (dst, b) in table {
                    // Through a twin, RTs of this HR's own SAN do not count.
                    if twin && b.san == Some(own_san) {
                        continue;
                    }
                    let cand = b.rank(twin.then_some(ha), rc);
                    let better = match best.get(dst) {
                        None => true,
                        Some((o, oh)) => {
                            let via = (*oh != t).then_some(self.cfg.hrs[*oh].address);
                            cand.cmp(&o.rank(via, rc)).is_lt()
                        }
                    };
                    if better {
                        best.insert(*dst, (*b, h));
                    }
                }
            }
            let mut entries: Vec<FibEntry> = best
                .into_iter()
                .map(|(dst, (b, h))| {
                    let port = if b.local { t } else { h };
                    FibEntry {
                        dst,
                        next: if b.local {
                            Next::Local
                        } else {
                            Next::Forward {
                                port,
                                native: NativeAddr::from_bytes(b.native).unwrap_or_default(),
                            }
                        },
                        q: if h != t { b.q.saturating_add(rc) } else { b.q },
                        mtu: if b.local { 0 } else { self.cfg.hrs[port].mtu },
                    }
                })
                .collect();
            entries.sort_unstable_by_key(|e| e.dst);
            for hc in &self.cfg.hrs {
                match entries.binary_search_by_key(&hc.address, |e| e.dst) {
                    Ok(i) => {
                        entries[i].next = Next::Local;
                        entries[i].q = 0;
                        entries[i].mtu = 0;
                    }
                    Err(i) => entries.insert(
                        i,
                        FibEntry {
                            dst: hc.address,
                            next: Next::Local,
                            q: 0,
                            mtu: 0,
                        },
                    ),
                }
            }
            per_port.push(entries);
        }
        per_port.into()
    }

    /// HR `h`'s best route to every destination from its LRT and its learned
    /// RTs (not through twins).
    fn own_best<'a>(&'a self, h: PortId) -> HashMap<Address, Best<'a>> {
        let mut best: HashMap<Address, Best<'a>> = HashMap::new();
        if !self.hrs[h].up {
            return best;
        }
        let mut offer = |dst: Address, b: Best<'a>| match best.get_mut(&dst) {
            None => {
                best.insert(dst, b);
            }
            Some(o) => {
                if b.rank(None, 0).cmp(&o.rank(None, 0)).is_lt() {
                    *o = b;
                }
            }
        };
        let cost = self.cfg.hrs[h].cost;
        for e in self.hrs[h].lrt.values() {
            offer(
                e.info.address,
                Best {
                    q: cost,
                    native: e.native.as_bytes(),
                    rcvf: &[],
                    san: None,
                    local: false,
                },
            );
        }
        for (san, list) in &self.hrs[h].learned {
            for l in list {
                let first = first_native(&l.rt.csr);
                for nd in l.rt.nodes.iter() {
                    offer(
                        nd.info.address,
                        Best {
                            q: l.rt.q.saturating_add(nd.q),
                            native: first,
                            rcvf: &l.rt.rcvf,
                            san: Some(*san),
                            local: false,
                        },
                    );
                }
            }
        }
        best.insert(
            self.cfg.hrs[h].address,
            Best {
                q: 0,
                native: &[],
                rcvf: &[],
                san: None,
                local: true,
            },
        );
        best
    }
}

/// A best route while FIBs are computed, borrowing from the engine's tables.
#[derive(Debug, Clone, Copy)]
struct Best<'a> {
    q: u16,
    native: &'a [u8],
    rcvf: &'a [Address],
    /// The SAN of the RT it came from (None: the HR's own SAN).
    san: Option<Address>,
    /// The destination is the HR itself.
    local: bool,
}

impl<'a> Best<'a> {
    /// Its rank, seen through twin `via` (None: from its own HR).
    fn rank(&self, via: Option<Address>, router_cost: u16) -> Rank<'a> {
        Rank {
            q: if via.is_some() {
                self.q.saturating_add(router_cost)
            } else {
                self.q
            },
            native: self.native,
            pre: via,
            rcvf: self.rcvf,
        }
    }
}

fn mtu_words(bytes: u32) -> Mtu {
    if bytes == 0 {
        Mtu::UNLIMITED
    } else {
        Mtu::from_bytes(bytes as usize)
    }
}

/// The smaller of two MTUs in bytes, 0 counting as unlimited.
fn min_mtu(a: u32, b: u32) -> u32 {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

/// Whether `p` is a whole (not split) RRP#9 with no L2RH in front.
fn whole_rrp9(p: &Packet<&[u8]>) -> bool {
    let h = p.header();
    p.layout().l2rh_count == 0
        && h.packet_type() == PacketType::RRP
        && h.type_ext() == 9
        && h.free() == 0
}

/// The engine moves to the control thread.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Router>();
};
