//! The fabric's performance manager (docs/management.md "Fabric
//! performance manager"), sans-IO like the SAN manager: InfiniBand's
//! Performance Manager (spec-notes 72) for the SANs a node masters, or
//! for every SAN it is on when told to. Every `interval_ms` it sweeps: for
//! each node, PortCounters and PortCountersExtended of each port (a
//! NodeInfo first where it does not know the number of ports, and a
//! NodeDescription where it does not know the name), by address,
//! with at most `outstanding` requests out at once. It keeps each port's
//! totals across resets, marks a node that does not answer instead of
//! dropping it, and gives the whole fabric as one [`FabricSnapshot`], which
//! mwrouterd serves as a Prometheus scrape.
//!
//! Its node hands it the nodes to poll ([`PerfManager::set_targets`]), the
//! time, and the answers to the requests it outputs.
//!
//! Files: `config`, `schedule` (the sweeps and their polls in flight),
//! `accumulator` (a port's totals across resets), `snapshot`, `stats`.

mod accumulator;
mod config;
mod schedule;
mod snapshot;
mod stats;

use std::collections::{BTreeMap, VecDeque};

use rrp::Address;

use crate::attr::{NodeDescription, NodeInfo, PortCounters, PortCountersExtended};
use crate::client::{Answer, Failure, Request, Target};
use crate::wire::{Method, MgmtClass, Status};

pub use accumulator::PortTotals;
pub use config::PerfConfig;
pub use schedule::{Poll, Schedule, SweepSummary};
pub use snapshot::{FabricSnapshot, NodeSnapshot, PortSnapshot};
pub use stats::PerfStats;

/// Time in milliseconds.
pub type Time = u64;

/// A node to poll, as its node knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfTarget {
    /// Its address.
    pub address: Address,
    /// Its NodeDescription (empty: not known).
    pub name: String,
    /// Its NodeIdentity (0: not known).
    pub identity: u64,
    /// Its number of ports (0: not known; a NodeInfo Get asks).
    pub num_ports: u8,
}

/// What the performance manager asks its node to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PerfOutput {
    /// Send `request`; hand its answer to [`PerfManager::on_answer`] with `id`.
    Request {
        /// The manager's handle.
        id: u64,
        /// The request.
        request: Request,
    },
}

/// A port's totals.
#[derive(Debug, Clone, Default)]
struct PortState {
    counters: PortTotals,
    extended: PortTotals,
}

/// A node being polled.
#[derive(Debug, Clone)]
struct Node {
    name: String,
    identity: u64,
    num_ports: u8,
    /// Its agent answers PortCountersExtended (until it says 0x000C).
    extended: bool,
    ok: bool,
    answered_at: Option<Time>,
    /// Sweeps in a row it was not among the targets.
    absent: u32,
    ports: BTreeMap<u8, PortState>,
}

/// The performance manager of a node.
#[derive(Debug, Clone)]
pub struct PerfManager {
    cfg: PerfConfig,
    mkey: u64,
    schedule: Schedule,
    nodes: BTreeMap<Address, Node>,
    /// The addresses of the last targets.
    targets: Vec<Address>,
    /// Whether it polls: its node masters a SAN, or was told to poll.
    active: bool,
    /// Addresses whose NodeInfo named a node polled at another address
    /// (a router's other HRs): not polled twice.
    aliases: BTreeMap<Address, u64>,
    pending: BTreeMap<u64, (Address, Poll)>,
    next_id: u64,
    outputs: VecDeque<PerfOutput>,
    last_sweep: Option<SweepSummary>,
    stats: PerfStats,
}

impl PerfManager {
    /// A performance manager configured by `cfg`, its first sweep due at `now`.
    pub fn new(cfg: PerfConfig, now: Time) -> PerfManager {
        PerfManager {
            cfg,
            mkey: 0,
            schedule: Schedule::new(now, cfg.interval_ms, cfg.outstanding as usize),
            nodes: BTreeMap::new(),
            targets: Vec::new(),
            active: true,
            aliases: BTreeMap::new(),
            pending: BTreeMap::new(),
            next_id: 1,
            outputs: VecDeque::new(),
            last_sweep: None,
            stats: PerfStats::default(),
        }
    }

    /// Its settings.
    pub fn config(&self) -> &PerfConfig {
        &self.cfg
    }

    /// New settings (a reload): from the next sweep on; the totals stay.
    pub fn configure(&mut self, cfg: PerfConfig) {
        self.cfg = cfg;
        self.schedule
            .configure(cfg.interval_ms, cfg.outstanding as usize);
    }

    /// The M_Key its NodeInfo Gets carry (the node's own: Perf needs none).
    pub fn set_mkey(&mut self, mkey: u64) {
        self.mkey = mkey;
    }

    /// Its counters.
    pub fn stats(&self) -> &PerfStats {
        &self.stats
    }

    /// The nodes to poll from the next sweep on. A node no longer among
    /// them is still polled, and kept in the snapshot, for
    /// `forget_sweeps` sweeps (a restarted node leaves the SAN manager's
    /// database until it answers a sweep again).
    pub fn set_targets(&mut self, targets: Vec<PerfTarget>) {
        self.targets.clear();
        for t in targets {
            if self
                .aliases
                .get(&t.address)
                .is_some_and(|i| t.identity == 0 || *i == t.identity)
            {
                continue;
            }
            self.targets.push(t.address);
            let n = self.nodes.entry(t.address).or_insert_with(|| Node {
                name: String::new(),
                identity: 0,
                num_ports: 0,
                extended: true,
                ok: false,
                answered_at: None,
                absent: 0,
                ports: BTreeMap::new(),
            });
            if !t.name.is_empty() {
                n.name = t.name;
            }
            if t.identity != 0 {
                n.identity = t.identity;
            }
            if t.num_ports != 0 {
                n.num_ports = t.num_ports;
            }
        }
        self.targets.sort_unstable();
        self.targets.dedup();
    }

    /// Whether it polls. Inactive (its node no longer masters a SAN, and
    /// was not told to poll), it sends nothing: at each interval its nodes
    /// are marked as not read and count towards `forget_sweeps`, their
    /// totals kept, so that mastership back within them goes on from the
    /// same totals.
    pub fn set_active(&mut self, active: bool) {
        self.active = active;
    }

    /// The next output.
    pub fn poll_output(&mut self) -> Option<PerfOutput> {
        self.outputs.pop_front()
    }

    /// When [`PerfManager::on_timer`] wants to run next.
    pub fn next_timer(&self) -> Time {
        self.schedule.next_timer()
    }

    /// Starts a sweep when one is due.
    pub fn on_timer(&mut self, now: Time) {
        if !self.schedule.due(now) {
            return;
        }
        let mut forgotten = Vec::new();
        for (a, n) in self.nodes.iter_mut() {
            if self.targets.binary_search(a).is_ok() {
                n.absent = 0;
            } else {
                n.absent += 1;
                if n.absent > self.cfg.forget_sweeps {
                    forgotten.push(*a);
                }
            }
        }
        for a in forgotten {
            self.nodes.remove(&a);
            self.stats.forgotten += 1;
        }
        if !self.active {
            for n in self.nodes.values_mut() {
                n.ok = false;
            }
            self.schedule.start(now, Vec::new());
            return;
        }
        let polls: Vec<(Address, Poll)> = self
            .nodes
            .iter()
            .flat_map(|(a, n)| Self::polls_of(*a, n))
            .collect();
        if !polls.is_empty() {
            self.stats.sweeps += 1;
        }
        self.schedule.start(now, polls);
        self.pump();
    }

    /// A node's polls: each port's counters, or its NodeInfo first.
    fn polls_of(a: Address, n: &Node) -> Vec<(Address, Poll)> {
        if n.num_ports == 0 {
            return vec![(a, Poll::NodeInfo)];
        }
        (0..n.num_ports)
            .flat_map(|p| {
                let ext = n.extended.then_some((a, Poll::Extended(p)));
                std::iter::once((a, Poll::Counters(p))).chain(ext)
            })
            .collect()
    }

    /// Outputs the polls the schedule lets out.
    fn pump(&mut self) {
        while let Some((to, poll)) = self.schedule.next_poll() {
            let (class, attribute, modifier) = match poll {
                Poll::NodeInfo => (MgmtClass::SUBN, NodeInfo::ID, 0),
                Poll::Description => (MgmtClass::SUBN, NodeDescription::ID, 0),
                Poll::Counters(p) => (MgmtClass::PERF, PortCounters::ID, u32::from(p)),
                Poll::Extended(p) => (MgmtClass::PERF, PortCountersExtended::ID, u32::from(p)),
            };
            let id = self.next_id;
            self.next_id += 1;
            self.stats.requests += 1;
            self.pending.insert(id, (to, poll));
            self.outputs.push_back(PerfOutput::Request {
                id,
                request: Request {
                    target: Target::Address(to),
                    class,
                    method: Method::GET,
                    attribute,
                    modifier,
                    mkey: self.mkey,
                    data: Vec::new(),
                    timeout_ms: self.cfg.timeout_ms,
                    retries: self.cfg.retries,
                },
            });
        }
    }

    /// The answer to request `id`, at `now`.
    pub fn on_answer(&mut self, now: Time, id: u64, result: Result<Answer, Failure>) {
        let Some((node, poll)) = self.pending.remove(&id) else {
            return;
        };
        match result {
            Err(_) => {
                self.stats.timeouts += 1;
                self.schedule.failed(node);
            }
            Ok(a) => {
                self.on_read(node, poll, &a);
                self.schedule.answered();
            }
        }
        if let Some((summary, polled, failed)) = self.schedule.finish(now) {
            for a in &polled {
                let Some(n) = self.nodes.get_mut(a) else {
                    continue;
                };
                n.ok = !failed.contains(a);
                if n.ok {
                    n.answered_at = Some(now);
                } else {
                    self.stats.nodes_unanswered += 1;
                }
            }
            self.last_sweep = Some(summary);
        }
        self.pump();
    }

    /// An answer to a poll of `node`.
    fn on_read(&mut self, node: Address, poll: Poll, a: &Answer) {
        let Some(n) = self.nodes.get_mut(&node) else {
            return;
        };
        let status = a.mad.status;
        if matches!(poll, Poll::Extended(_)) && status == Status::METHOD_ATTR_UNSUPPORTED {
            // A node that does not count its links (mwlab's hosts).
            n.extended = false;
            return;
        }
        if status != Status::OK {
            self.stats.refused += 1;
            return;
        }
        let data = &a.mad.data;
        match poll {
            Poll::NodeInfo => match NodeInfo::parse(data) {
                Ok(info) => {
                    let id = info.node_identity;
                    let twin = self
                        .nodes
                        .iter()
                        .any(|(b, o)| *b != node && id != 0 && o.identity == id);
                    if twin {
                        // Another address of a node already polled.
                        self.nodes.remove(&node);
                        self.aliases.insert(node, id);
                        return;
                    }
                    let Some(n) = self.nodes.get_mut(&node) else {
                        return;
                    };
                    n.num_ports = info.num_ports;
                    if n.identity == 0 {
                        n.identity = info.node_identity;
                    }
                    let mut polls = Self::polls_of(node, n);
                    if n.name.is_empty() {
                        polls.push((node, Poll::Description));
                    }
                    if n.num_ports > 0 {
                        self.schedule.add(polls);
                    }
                }
                Err(_) => self.stats.refused += 1,
            },
            Poll::Description => match NodeDescription::parse(data) {
                Ok(d) => n.name = d.0,
                Err(_) => self.stats.refused += 1,
            },
            Poll::Counters(p) => match PortCounters::parse(data) {
                Ok(c) => {
                    let port = n.ports.entry(p).or_default();
                    // (The link's counters, cleared with them, find their
                    // reset in their own reads: bytes fall further.)
                    if port.counters.update(&c.counters) {
                        self.stats.resets += 1;
                    }
                }
                Err(_) => self.stats.refused += 1,
            },
            Poll::Extended(p) => match PortCountersExtended::parse(data) {
                Ok(c) => {
                    n.ports.entry(p).or_default().extended.update(&c.counters);
                }
                Err(_) => self.stats.refused += 1,
            },
        }
    }

    /// The fabric as the sweeps have read it.
    pub fn snapshot(&self) -> FabricSnapshot {
        FabricSnapshot {
            nodes: self
                .nodes
                .iter()
                .map(|(a, n)| NodeSnapshot {
                    address: *a,
                    name: if n.name.is_empty() {
                        a.to_string()
                    } else {
                        n.name.clone()
                    },
                    identity: n.identity,
                    ok: n.ok,
                    answered_at: n.answered_at,
                    ports: n
                        .ports
                        .iter()
                        .map(|(p, s)| PortSnapshot {
                            port: *p,
                            counters: s.counters.totals().to_vec(),
                            extended: s.extended.totals().to_vec(),
                            resets: s.counters.resets(),
                        })
                        .collect(),
                })
                .collect(),
            last_sweep: self.last_sweep.clone(),
            stats: self.stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::MadRepr;

    fn answer(status: Status, data: Vec<u8>) -> Result<Answer, Failure> {
        Ok(Answer {
            mad: MadRepr {
                class: MgmtClass::PERF,
                class_version: 1,
                response: true,
                method: Method::GET_RESP,
                status,
                tid: 1,
                attribute: 0,
                modifier: 0,
                mkey: 0,
                data,
                dr: None,
            },
            from: Address(0),
            tries: 1,
            rtt_ms: 1,
        })
    }

    fn counters(port: u8, base: u64) -> Vec<u8> {
        let mut area = vec![0u8; 192];
        PortCounters {
            port_select: port,
            counters: (0..PortCounters::COUNT as u64).map(|i| base + i).collect(),
        }
        .emit(&mut area)
        .unwrap();
        area
    }

    fn target(a: u16, ports: u8) -> PerfTarget {
        PerfTarget {
            address: Address(a),
            name: format!("n{a:x}"),
            identity: u64::from(a),
            num_ports: ports,
        }
    }

    /// Every output request, as (id, to, attribute, modifier).
    fn requests(m: &mut PerfManager) -> Vec<(u64, Address, u16, u32)> {
        std::iter::from_fn(|| m.poll_output())
            .map(|PerfOutput::Request { id, request }| {
                let Target::Address(to) = request.target else {
                    panic!("by address")
                };
                (id, to, request.attribute, request.modifier)
            })
            .collect()
    }

    /// Answers every request: PortCounters from `base(node)` (None: the
    /// node does not answer), PortCountersExtended unsupported.
    fn sweep(m: &mut PerfManager, now: Time, base: impl Fn(Address) -> Option<u64>) {
        m.on_timer(now);
        loop {
            let reqs = requests(m);
            if reqs.is_empty() {
                break;
            }
            for (id, to, attr, modifier) in reqs {
                let r = match base(to) {
                    None => Err(Failure::Timeout { tries: 2 }),
                    Some(_) if attr == PortCountersExtended::ID => {
                        answer(Status::METHOD_ATTR_UNSUPPORTED, vec![0; 192])
                    }
                    Some(b) => answer(Status::OK, counters(modifier as u8, b)),
                };
                m.on_answer(now + 5, id, r);
            }
        }
    }

    fn cfg() -> PerfConfig {
        PerfConfig {
            interval_ms: 1_000,
            outstanding: 2,
            forget_sweeps: 2,
            ..PerfConfig::default()
        }
    }

    #[test]
    fn a_sweep_reads_every_port_of_every_node_with_bounded_requests() {
        let mut m = PerfManager::new(cfg(), 0);
        m.set_targets(vec![target(0x100, 2), target(0x101, 1)]);
        m.on_timer(0);
        let first = requests(&mut m);
        assert_eq!(first.len(), 2, "outstanding 2");
        assert_eq!(m.next_timer(), Time::MAX);
        m.on_answer(3, first[0].0, answer(Status::OK, counters(0, 10)));
        let more = requests(&mut m);
        assert_eq!(more.len(), 1, "one answered, one more out");
        let mut out = vec![first[1], more[0]];
        while let Some((id, _, attr, modifier)) = out.pop() {
            let r = if attr == PortCountersExtended::ID {
                answer(Status::METHOD_ATTR_UNSUPPORTED, vec![0; 192])
            } else {
                answer(Status::OK, counters(modifier as u8, 10))
            };
            m.on_answer(4, id, r);
            out.extend(requests(&mut m));
        }
        let s = m.snapshot();
        assert_eq!(s.nodes.len(), 2);
        assert!(s.nodes.iter().all(|n| n.ok));
        assert_eq!(s.nodes[0].ports.len(), 2);
        assert_eq!(s.nodes[0].name, "n100");
        assert_eq!(s.nodes[1].ports[0].counters[0], 10);
        assert_eq!(s.stats.sweeps, 1);
    }

    /// A node that stops answering stays in the snapshot, its totals as
    /// they were, marked; it answers again and is no longer marked.
    #[test]
    fn an_unanswered_node_is_kept_and_marked() {
        let mut m = PerfManager::new(cfg(), 0);
        m.set_targets(vec![target(0x100, 1), target(0x101, 1)]);
        sweep(&mut m, 0, |_| Some(100));
        sweep(&mut m, 1_000, |a| (a != Address(0x101)).then_some(200));
        let s = m.snapshot();
        let dead = &s.nodes[1];
        assert_eq!(dead.address, Address(0x101));
        assert!(!dead.ok);
        assert_eq!(dead.ports[0].counters[0], 100);
        assert!(s.nodes[0].ok);
        assert_eq!(s.nodes[0].ports[0].counters[0], 200);
        assert_eq!(s.stats.nodes_unanswered, 1);
        assert_eq!(s.last_sweep.as_ref().unwrap().unanswered, 1);
        sweep(&mut m, 2_000, |_| Some(300));
        assert!(m.snapshot().nodes[1].ok);
    }

    /// A restarted node (its counters from 0 again, and out of the SAN
    /// manager's database for a while): the totals go on from where they
    /// were.
    #[test]
    fn a_restarted_node_s_totals_do_not_go_back() {
        let mut m = PerfManager::new(cfg(), 0);
        m.set_targets(vec![target(0x100, 1)]);
        sweep(&mut m, 0, |_| Some(500));
        m.set_targets(Vec::new());
        sweep(&mut m, 1_000, |_| None);
        sweep(&mut m, 2_000, |_| Some(7));
        let s = m.snapshot();
        assert_eq!(s.nodes[0].ports[0].counters[0], 507);
        assert_eq!(s.nodes[0].ports[0].resets, 1);
        assert_eq!(s.stats.resets, 1);
        // Missing from the targets for more than forget_sweeps: forgotten.
        sweep(&mut m, 3_000, |_| Some(8));
        assert_eq!(m.snapshot().nodes.len(), 0);
        assert_eq!(m.stats().forgotten, 1);
    }

    #[test]
    fn a_node_without_its_number_of_ports_is_asked_for_node_info() {
        let mut m = PerfManager::new(cfg(), 0);
        m.set_targets(vec![target(0x100, 0)]);
        m.on_timer(0);
        let r = requests(&mut m);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].2, NodeInfo::ID);
        let mut area = vec![0u8; 64];
        NodeInfo {
            num_ports: 2,
            node_identity: 0x42,
            ..NodeInfo::default()
        }
        .emit(&mut area)
        .unwrap();
        m.on_answer(1, r[0].0, answer(Status::OK, area));
        let r = requests(&mut m);
        let attrs: Vec<(u16, u32)> = r.iter().map(|x| (x.2, x.3)).collect();
        assert_eq!(
            attrs,
            [(PortCounters::ID, 0), (PortCountersExtended::ID, 0)],
            "outstanding 2"
        );
    }

    /// A router reached at two HR addresses (two SANs' LRTs) is polled
    /// once: its second address's NodeInfo names the identity of a node
    /// already polled.
    #[test]
    fn a_second_address_of_a_polled_node_is_not_polled() {
        let mut m = PerfManager::new(
            PerfConfig {
                outstanding: 8,
                ..cfg()
            },
            0,
        );
        let mut other = target(0x200, 0);
        other.identity = 0;
        m.set_targets(vec![target(0x100, 1), other.clone()]);
        m.on_timer(0);
        let r = requests(&mut m);
        let info = r.iter().find(|x| x.2 == NodeInfo::ID).unwrap();
        let mut area = vec![0u8; 64];
        NodeInfo {
            num_ports: 2,
            node_identity: 0x100,
            ..NodeInfo::default()
        }
        .emit(&mut area)
        .unwrap();
        m.on_answer(1, info.0, answer(Status::OK, area));
        assert!(
            m.snapshot()
                .nodes
                .iter()
                .all(|n| n.address != Address(0x200))
        );
        m.set_targets(vec![target(0x100, 1), other]);
        assert_eq!(m.snapshot().nodes.len(), 1);
    }

    /// A node that stops being master stops polling: its nodes are marked,
    /// their totals kept; master again, it goes on from them.
    #[test]
    fn an_inactive_manager_sends_nothing_and_marks_its_nodes() {
        let mut m = PerfManager::new(cfg(), 0);
        m.set_targets(vec![target(0x100, 1)]);
        sweep(&mut m, 0, |_| Some(40));
        m.set_active(false);
        m.set_targets(Vec::new());
        m.on_timer(1_000);
        assert!(requests(&mut m).is_empty());
        assert_eq!(m.next_timer(), 2_000);
        let s = m.snapshot();
        assert!(!s.nodes[0].ok);
        assert_eq!(s.nodes[0].ports[0].counters[0], 40);
        m.set_active(true);
        m.set_targets(vec![target(0x100, 1)]);
        sweep(&mut m, 2_000, |_| Some(45));
        let s = m.snapshot();
        assert!(s.nodes[0].ok);
        assert_eq!(s.nodes[0].ports[0].counters[0], 45);
    }

    /// A node known by address only is asked its NodeDescription with its
    /// NodeInfo: the scrape names it.
    #[test]
    fn a_node_without_a_name_is_asked_for_its_description() {
        let mut m = PerfManager::new(
            PerfConfig {
                outstanding: 8,
                ..cfg()
            },
            0,
        );
        let mut t = target(0x100, 0);
        t.name = String::new();
        m.set_targets(vec![t]);
        m.on_timer(0);
        let r = requests(&mut m);
        let mut area = vec![0u8; 64];
        NodeInfo {
            num_ports: 1,
            ..NodeInfo::default()
        }
        .emit(&mut area)
        .unwrap();
        m.on_answer(1, r[0].0, answer(Status::OK, area));
        let r = requests(&mut m);
        let d = r.iter().find(|x| x.2 == NodeDescription::ID).unwrap();
        assert_eq!(m.snapshot().nodes[0].name, "0x0100");
        let mut area = vec![0u8; 64];
        NodeDescription("h1".into()).emit(&mut area).unwrap();
        m.on_answer(2, d.0, answer(Status::OK, area));
        assert_eq!(m.snapshot().nodes[0].name, "h1");
    }
}
