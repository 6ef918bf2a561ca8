//! The router engine of one box (Part-2 "Inter-SAN mapping", Part-3,
//! Appendix B and C, with the readings of docs/architecture.md "Route tables
//! and RRP"), sans-IO: inputs are punted packets, dataplane notices, port
//! events and the current time; outputs are packets to send, FIB changes and
//! log events, and the time of the next timer.
//!
//! This file holds the [`Router`] itself (its state, its construction, what
//! it shows, how it emits outputs); each part of its work is a module of
//! its own, an `impl Router` block named for what it does:
//!
//! | module | what |
//! | --- | --- |
//! | `rt` | an RT as an HR holds it (node entries, CSR, RCVF, SN) |
//! | `lrt` | the HR's own SAN: static entries, discovery (RRP#7/RRP#5), keepalives, the LRT as an RT |
//! | `receive` | punted packets: parsing, RRP#9 pre-checks, multi-part RTs, the RT procedure |
//! | `select` | ranking of RTs and twin derivation: the k best RTs per SAN |
//! | `fib` | the per-HR FIBs from each HR's best routes |
//! | `advertise` | RRP#9 to buddies: batches, refresh, encoding |
//! | `answer` | requests: RRP#1/#2 routes, RRP#6 first HR, RRP#4/#5 info |
//! | `notice_answers` | dataplane notices answered: ERR UNK, RRP#3, ERR GENERAL under the error manners |
//! | `down` | port up/down, HR-DOWN and LINK-DOWN, tombstones |
//! | `guard` | whom the box believes without keys: source check, strangers, HR-DOWN/LINK-DOWN from buddies only and at a bounded rate, a probe before a third party's HR-DOWN |
//! | `auth` | keyed authentication per HR: what arrives is checked, what leaves is signed |
//! | `timers` | the next timer and what runs when it fires |
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

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use crate::address::Address;
use crate::counters::PortStats;
use crate::fxhash::FxHashMap;
use crate::kind::CapabilityCode;
use crate::native::NativeAddr;
use crate::port::{PerPort, PortId};
use crate::rate::RateLimiter;
use crate::router::config::{ConfigError, RouterConfig};
use crate::router::event::Event;
use crate::router::stats::RouterStats;
use crate::wire::header::{HEADER_LEN, Header};
use crate::wire::message::{Message, NodeInfo};
use crate::wire::record::Mtu;

use super::advertise::{AdvKey, Advertised};
use super::fib::FibState;
use super::intern::Interner;
use super::lrt::LrtEntry;
use super::receive::PartBuf;
use super::rt::{Learned, NodeList, Origin, Rt, mtu_words};
use super::table::RouteTables;
use super::timers::EXPIRY_CHECK_MS;

/// Time in milliseconds since an arbitrary epoch.
pub type Time = u64;

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
    /// Send the same `packet` out of `port` to each of `to` (a member's
    /// address and native address), its destination address set to each
    /// one's: RRP#9 to every buddy of a SAN, encoded once.
    SendEach {
        /// Egress port.
        port: PortId,
        /// The recipients: address (the packet's destination) and native address.
        to: Vec<(Address, NativeAddr)>,
        /// The MessageWay packet (its destination address is patched per recipient).
        packet: Arc<[u8]>,
    },
    /// New FIBs are ready ([`Router::fib`]).
    FibChanged(u64),
    /// New multicast forwarding state is ready ([`Router::mcast`]).
    McastChanged(u64),
    /// Something worth a log line.
    Event(Event),
}

impl Output {
    /// The output as unicast sends: a [`Output::SendEach`] becomes one
    /// [`Output::Send`] per recipient with its destination address set;
    /// anything else is itself.
    pub fn into_sends(self) -> Vec<Output> {
        match self {
            Output::SendEach { port, to, packet } => to
                .into_iter()
                .map(|(dst, native)| Output::Send {
                    port,
                    native,
                    packet: with_destination(&packet, dst),
                })
                .collect(),
            o => vec![o],
        }
    }
}

/// A copy of `packet` (an EEP header first) with destination address `dst`.
pub fn with_destination(packet: &[u8], dst: Address) -> Vec<u8> {
    let mut p = packet.to_vec();
    if p.len() >= HEADER_LEN {
        Header::new_unchecked(&mut p[..HEADER_LEN]).set_dst(dst);
    }
    p
}

#[derive(Debug, Clone)]
pub(super) struct HrState {
    pub(super) up: bool,
    pub(super) lrt: BTreeMap<Address, LrtEntry>,
    pub(super) lrt_sn: u16,
    pub(super) lrt_nodes: Option<Arc<NodeList>>,
    pub(super) learned: BTreeMap<Address, Vec<Learned>>,
    /// How many of the learned RTs each buddy sent.
    pub(super) per_buddy: FxHashMap<Address, usize>,
    /// What this HR last advertised to its buddies, by SAN and path.
    pub(super) advertised: FxHashMap<AdvKey, Advertised>,
    pub(super) dirty: BTreeSet<Address>,
    pub(super) full_to: BTreeSet<Address>,
    pub(super) next_sweep: Time,
    pub(super) next_keepalive: Time,
    pub(super) parts: BTreeMap<(Address, Address, u16), PartBuf>,
}

/// The router engine of one box.
#[derive(Debug, Clone)]
pub struct Router {
    pub(super) cfg: RouterConfig,
    pub(super) hrs: PerPort<HrState>,
    pub(super) outputs: VecDeque<Output>,
    pub(super) tombstones: BTreeMap<Address, Time>,
    /// Buddies whose RTs a tombstone refused: asked for them again (RRP#8)
    /// when the tombstones expire.
    pub(super) refused_tombstoned: BTreeSet<(PortId, Address)>,
    pub(super) next_refresh: Time,
    pub(super) next_expiry: Time,
    pub(super) next_adv: Time,
    pub(super) fib_at: Time,
    pub(super) fib: Arc<RouteTables>,
    pub(super) fibs: FibState,
    pub(super) stats: RouterStats,
    /// This engine's share of each port's counters: the packets for this
    /// box from strangers, and those refused as spoofed-source.
    pub(super) port_stats: Vec<PortStats>,
    pub(super) limiter: RateLimiter,
    /// The answer rate (`Limits::answers_per_source`, `answers_global`).
    pub(super) answers: RateLimiter,
    /// Node lists and RT bodies held once (shared with other engines when
    /// made by [`Router::with_interner`]).
    pub(super) interner: Arc<Interner>,
    /// Multicast forwarding state, recomputed with the FIBs.
    pub(super) mcast: Arc<super::mcast::McastTables>,
    /// An RT, LRT or port changed since the multicast state was computed.
    pub(super) mcast_dirty: bool,
    /// The SANs some HR has learned an RT for whose nodes have logical
    /// addresses (group members), kept as each SAN's RTs change, so that
    /// a change needs no walk over every RT to know whether any group is
    /// there (docs/performance.md "RRP simulator scale"); rebuilt whole
    /// when every row is redone.
    pub(super) sans_with_groups: std::collections::BTreeSet<Address>,
    /// `sans_with_groups` is to be rebuilt.
    pub(super) sans_with_groups_stale: bool,
    /// SANs whose RTs changed since `sans_with_groups` was brought up to
    /// date (looked at once, with the multicast state).
    pub(super) sans_with_groups_due: std::collections::BTreeSet<Address>,
    /// When the box last asked a router for its RTs because of a group
    /// packet that conflicted with its view: (port, router) -> time.
    pub(super) mcast_asked: BTreeMap<(PortId, Address), Time>,
    /// Each HR's senders of signed packets (replay protection).
    pub(super) replay: PerPort<crate::auth::Replay>,
    /// The sequence number of the last packet signed.
    pub(super) auth_seq: u64,
    /// RT limits reached and not left since: (port, neighbour or
    /// UNSPECIFIED for the HR's own limit, which).
    pub(super) at_limit: BTreeSet<(PortId, Address, super::event::RtRefusal)>,
    /// HR-DOWN and LINK-DOWN taken per sender (`limits.downs_per_source`).
    pub(super) downs: RateLimiter,
    /// HRs probed after a third party's HR-DOWN about them.
    pub(super) probes: super::guard::Probes,
    /// LRT changes since start, on any HR ([`Router::lrt_changes`]).
    pub(super) lrt_changes: u64,
    /// Starting, serving or draining ([`super::leave`]).
    pub(super) standing: super::leave::Standing,
    /// Changes of standing since start.
    pub(super) standing_changes: u64,
    /// Added to the SN of every RT the box passes on: a change of standing
    /// makes each one newer than what its buddies hold.
    pub(super) adv_epoch: u16,
    /// Added to the SN of every RT the box passes on from a buddy: the SN
    /// seed when the box starts held, so that a restarted box's worst-Q
    /// copies are newer than the cheap ones its buddies still hold.
    pub(super) pass_seed: u16,
    /// When the engine started, and when a FIB row last changed.
    pub(super) started: Time,
    pub(super) last_fib_change: Time,
}

/// The engine moves to the control thread.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Router>();
};

impl Router {
    /// A router for `cfg`, starting at `now`: every HR sweeps its SAN at once.
    pub fn new(cfg: RouterConfig, now: Time) -> Result<Router, ConfigError> {
        Router::with_interner(cfg, now, Interner::new())
    }

    /// [`Router::new`] holding its node lists and RT bodies in `interner`,
    /// which other engines of the same process may share (the simulator's
    /// routers): immutable copies, one of each.
    pub fn with_interner(
        cfg: RouterConfig,
        now: Time,
        interner: Arc<Interner>,
    ) -> Result<Router, ConfigError> {
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
                                logical: (!s.groups.is_empty()).then(|| s.groups.clone()),
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
                    per_buddy: FxHashMap::default(),
                    advertised: FxHashMap::default(),
                    dirty: BTreeSet::new(),
                    full_to: BTreeSet::new(),
                    next_sweep: now,
                    next_keepalive: now + cfg.timers.keepalive_ms,
                    parts: BTreeMap::new(),
                }
            })
            .collect();
        let limiter = RateLimiter::new(cfg.error_rates.per_source, cfg.error_rates.global);
        let answers = RateLimiter::new(cfg.limits.answers_per_source, cfg.limits.answers_global);
        let cfg_ports = cfg.hrs.len();
        let replay = cfg.hrs.iter().map(|_| Default::default()).collect();
        let mut r = Router {
            replay,
            auth_seq: cfg.auth_seq_seed,
            at_limit: BTreeSet::new(),
            downs: RateLimiter::new(cfg.limits.downs_per_source, u32::MAX),
            probes: Default::default(),
            lrt_changes: 0,
            standing: Router::initial_standing(&cfg, now),
            adv_epoch: 0,
            pass_seed: if cfg.leave.start_max_ms > 0 {
                cfg.sn_seed
            } else {
                0
            },
            standing_changes: 0,
            started: now,
            last_fib_change: now,
            next_refresh: now + cfg.timers.refresh_ms,
            next_expiry: now + EXPIRY_CHECK_MS,
            next_adv: now,
            cfg,
            hrs,
            outputs: VecDeque::new(),
            tombstones: BTreeMap::new(),
            refused_tombstoned: BTreeSet::new(),
            fib_at: now,
            fib: Arc::new(RouteTables::new(cfg_ports)),
            fibs: FibState::new(),
            stats: RouterStats::default(),
            port_stats: vec![PortStats::default(); cfg_ports],
            limiter,
            answers,
            interner,
            mcast: Arc::default(),
            mcast_dirty: true,
            sans_with_groups: std::collections::BTreeSet::new(),
            sans_with_groups_stale: true,
            sans_with_groups_due: std::collections::BTreeSet::new(),
            mcast_asked: BTreeMap::new(),
        };
        for p in r.hrs.ids() {
            r.lrt_changed(p);
        }
        Ok(r)
    }

    /// The configuration.
    pub fn config(&self) -> &RouterConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &RouterStats {
        &self.stats
    }

    /// The engine's share of each port's counters (port 0 first): its
    /// `strangers`, and in `dropped.spoofed-source` the control packets it
    /// refused as spoofed (which the forwarding path counted as punted;
    /// docs/spec-notes.md 60). The rest is zero.
    pub fn port_stats(&self) -> &[PortStats] {
        &self.port_stats
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
        self.buddies_with_native(port)
            .into_iter()
            .map(|(a, _)| a)
            .collect()
    }

    /// How many times an LRT changed (an entry came, went, or changed its
    /// native address or role) since the engine started: a reader that
    /// mirrors the buddies ([`Router::buddies_with_native`]) rereads them
    /// when this moves.
    pub fn lrt_changes(&self) -> u64 {
        self.lrt_changes
    }

    /// The buddies of HR `port` with the native address the HR knows each
    /// at: the only address their RRP and ERR are believed from
    /// (docs/spec-notes.md 60).
    pub fn buddies_with_native(&self, port: PortId) -> Vec<(Address, NativeAddr)> {
        self.hrs[port]
            .lrt
            .values()
            .filter(|e| e.router)
            .map(|e| (e.info.address, e.native))
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
        let mut lists: std::collections::HashSet<*const NodeList> = Default::default();
        let mut entries = 0;
        for h in &self.hrs {
            for l in h.learned.values() {
                for x in l {
                    rts += 1;
                    if lists.insert(Arc::as_ptr(&x.body.nodes.0)) {
                        entries += x.body.nodes.0.len();
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

    pub(super) fn box_has(&self, a: Address) -> bool {
        self.cfg.hrs.iter().any(|h| h.address == a)
    }

    pub(super) fn port_of(&self, a: Address) -> Option<PortId> {
        self.cfg
            .hrs
            .iter()
            .position(|h| h.address == a)
            .map(PortId::new)
    }

    pub(super) fn emit(&mut self, o: Output) {
        // On a SAN with keys each packet is signed for its recipient (the
        // digest covers the destination address).
        let o = match o {
            Output::Send {
                port,
                native,
                mut packet,
            } if self.signs(port) => {
                self.sign(port, &mut packet);
                Output::Send {
                    port,
                    native,
                    packet,
                }
            }
            Output::SendEach { port, to, packet } if self.signs(port) => {
                for (dst, native) in to {
                    let mut p = with_destination(&packet, dst);
                    self.sign(port, &mut p);
                    self.stats.sent += 1;
                    self.outputs.push_back(Output::Send {
                        port,
                        native,
                        packet: p,
                    });
                }
                return;
            }
            o => o,
        };
        match &o {
            Output::Send { .. } => self.stats.sent += 1,
            Output::SendEach { to, .. } => self.stats.sent += to.len() as u64,
            _ => {}
        }
        self.outputs.push_back(o);
    }

    pub(super) fn event(&mut self, e: Event) {
        self.outputs.push_back(Output::Event(e));
    }

    pub(super) fn send_msg(
        &mut self,
        port: PortId,
        native: NativeAddr,
        dst: Address,
        m: &Message,
        free: u16,
    ) {
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
        self.limiter.set(error_rates.per_source, error_rates.global);
        self.answers
            .set(limits.answers_per_source, limits.answers_global);
        self.downs.set(limits.downs_per_source, u32::MAX);
        Ok(())
    }

    /// Changes HR `port`'s SAN cost at run time (in-band management): its
    /// LRT gets a new SN, every RT it holds is ranked again, every FIB row
    /// is redone and every SAN re-advertised.
    pub fn set_cost(&mut self, port: PortId, cost: u16) -> Result<(), ConfigError> {
        let mut cfg = self.cfg.clone();
        let Some(h) = cfg.hrs.get_mut(port) else {
            return Err(ConfigError {
                field: "hrs".into(),
                why: format!("no port {port}"),
            });
        };
        h.cost = cost;
        cfg.validate()?;
        self.cfg = cfg;
        // What this HR learned counts its SAN's cost (the same for all:
        // the order of each list stands).
        for list in self.hrs[port].learned.values_mut() {
            for l in list {
                l.q = l.body.q.saturating_add(cost);
            }
        }
        self.everything_changed(port);
        Ok(())
    }

    /// Changes HR `port`'s MTU at run time (in-band management): the MinMTU
    /// of what it holds and advertises follows.
    pub fn set_mtu(&mut self, port: PortId, mtu: u32) -> Result<(), ConfigError> {
        let mut cfg = self.cfg.clone();
        let Some(h) = cfg.hrs.get_mut(port) else {
            return Err(ConfigError {
                field: "hrs".into(),
                why: format!("no port {port}"),
            });
        };
        h.mtu = mtu;
        cfg.validate()?;
        self.cfg = cfg;
        let words = mtu_words(mtu);
        for list in self.hrs[port].learned.values_mut() {
            for l in list {
                l.mtu = words.min(l.body.mtu.unwrap_or(Mtu::UNLIMITED));
            }
        }
        self.everything_changed(port);
        Ok(())
    }

    /// Changes the router's name (its HRs' RRP#5 names, NodeDescription).
    pub fn set_name(&mut self, name: &str) {
        self.cfg.name = name.to_string();
        for p in self.hrs.ids() {
            self.lrt_changed(p);
        }
    }

    /// After a change to HR `port`'s parameters: its LRT is new, every SAN
    /// is re-advertised, every FIB row redone.
    fn everything_changed(&mut self, port: PortId) {
        self.lrt_changed(port);
        let sans = self.known_sans();
        for h in self.hrs.iter_mut() {
            h.dirty.extend(sans.iter().copied());
        }
        self.fib_all_changed();
    }
}
