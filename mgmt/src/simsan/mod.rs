//! A SAN of management stations in memory, on explicit time: what the
//! station tests and the SAN manager's measurements at 1,000 and more
//! members (`manager-scale` in benches, docs/manager.md "At the size of a
//! large SAN") run the real [`Station`]s on.
//!
//! Every member has one port on one SAN and a native address; a packet
//! reaches the member whose native address it is sent to, or every member
//! but its sender when it is sent to [`Address::BROADCAST`] without one
//! (a trap 1025 announcement), one link delay later. Each member's LRT
//! lists the SAN's addressed members that are up, refreshed every
//! [`LEARN_MS`] as RRP#7's sweeps would (draft 6.2). Time jumps from one
//! event to the next: deliveries, the stations' own timers
//! ([`Station::next_timer`]) and the LRT's refresh; nothing spins.
//!
//! It counts what a measurement needs: packets sent and delivered, per
//! member the packets it received and the wall-clock time its station
//! spent (the manager's CPU per node).

mod node;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rrp::{Address, NativeAddr, PortId};

use crate::agent::{AgentConfig, Incoming};
use crate::client::{Answer, Failure, Request};
use crate::manager::{ManagerConfig, ManagerEvent};
use crate::station::{Outcome, Station};
use crate::wire::MAD_LEN;

pub use node::{Lrt, SimNode};

/// Time in milliseconds.
pub type Time = u64;

/// Between two refreshes of the members' LRT: RRP#7's sweep of a SAN, as
/// the lab's hosts learn their neighbours.
pub const LEARN_MS: Time = 100;

/// A packet on the SAN's link.
struct InFlight {
    arrive: Time,
    from: usize,
    /// The member it is for; `None`: every member but its sender.
    to: Option<usize>,
    src: Address,
    dst: Address,
    mad: Box<[u8; MAD_LEN]>,
}

/// What crossed the SAN so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SanCounts {
    /// Packets the stations sent (a broadcast once).
    pub packets: u64,
    /// Packets handed to a station (a broadcast once per member reached).
    pub deliveries: u64,
    /// Packets for a native address or address no member has, and packets
    /// with an L2 source route (no router here carries them).
    pub lost: u64,
}

/// A request a test started at a member, finished.
pub type Done = (Time, usize, u64, Result<Answer, Failure>);

/// The simulated SAN: its members, their stations, the link.
pub struct SimSan {
    now: Time,
    delay: Time,
    nodes: Vec<SimNode>,
    stations: Vec<Station>,
    up: Vec<bool>,
    by_native: HashMap<NativeAddr, usize>,
    in_flight: VecDeque<InFlight>,
    /// (when, member): each member's next timer, once.
    timers: BTreeSet<(Time, usize)>,
    due: Vec<Time>,
    lrt: Rc<Lrt>,
    next_learn: Time,
    events: Vec<(Time, usize, ManagerEvent)>,
    done: Vec<Done>,
    received: Vec<u64>,
    busy: Vec<Duration>,
    counts: SanCounts,
}

impl SimSan {
    /// An empty SAN whose link takes `delay_ms` (at least 1) per packet.
    pub fn new(delay_ms: Time) -> SimSan {
        SimSan {
            now: 0,
            delay: delay_ms.max(1),
            nodes: Vec::new(),
            stations: Vec::new(),
            up: Vec::new(),
            by_native: HashMap::new(),
            in_flight: VecDeque::new(),
            timers: BTreeSet::new(),
            due: Vec::new(),
            lrt: Rc::new(Lrt::default()),
            next_learn: 0,
            events: Vec::new(),
            done: Vec::new(),
            received: Vec::new(),
            busy: Vec::new(),
            counts: SanCounts::default(),
        }
    }

    /// The native address of the `i`th member: a MAC address.
    pub fn native_of(i: usize) -> NativeAddr {
        let b = (i as u32).to_be_bytes();
        NativeAddr::mac([0x02, 0x00, b[0], b[1], b[2], b[3]])
    }

    /// A member joins now: its agent configured by `agent`, at `address`
    /// (or [`Address::UNSPECIFIED`]: it announces itself until a master
    /// gives it one), running a SAN manager when `manager` is given.
    /// Returns its index.
    pub fn add(
        &mut self,
        agent: AgentConfig,
        address: Address,
        manager: Option<ManagerConfig>,
    ) -> usize {
        let i = self.nodes.len();
        let native = Self::native_of(i);
        let mut st = Station::new(agent, self.now, i as u32);
        if let Some(m) = manager {
            st.add_manager(PortId::new(0), m, self.now);
        }
        self.nodes
            .push(SimNode::new(native, address, Rc::clone(&self.lrt)));
        self.stations.push(st);
        self.up.push(true);
        self.due.push(Time::MAX);
        self.received.push(0);
        self.busy.push(Duration::ZERO);
        self.by_native.insert(native, i);
        self.reschedule(i, self.now);
        if address.is_node() {
            // Known to the others from the next refresh on.
            self.next_learn = self.next_learn.min(self.now);
        }
        i
    }

    /// Member `i` stops (killed: nothing reaches it, its timers stop) or
    /// starts again with its state as it was; the others' LRTs follow at
    /// once.
    pub fn set_up(&mut self, i: usize, up: bool) {
        self.up[i] = up;
        self.timers.remove(&(self.due[i], i));
        self.due[i] = Time::MAX;
        if up {
            self.reschedule(i, self.now);
        }
        self.learn();
    }

    /// Starts `request` at member `i`; its answer shows in
    /// [`SimSan::take_done`] under the returned id.
    pub fn start(&mut self, i: usize, request: Request) -> u64 {
        let now = self.now;
        self.nodes[i].now = now;
        let (id, out) = self.stations[i].start(now, &mut self.nodes[i], request);
        self.take(i, out);
        self.reschedule(i, now);
        id
    }

    /// Runs every event up to and including `end`; the clock is `end` then.
    pub fn run_until(&mut self, end: Time) {
        self.run_until_true(end, |_| false);
    }

    /// Runs until `done` holds of the SAN (checked after each instant with
    /// events) or `end`; the time it held at, if it did.
    pub fn run_until_true(
        &mut self,
        end: Time,
        mut done: impl FnMut(&SimSan) -> bool,
    ) -> Option<Time> {
        if done(self) {
            return Some(self.now);
        }
        loop {
            let next = self.next_event();
            if next > end {
                self.now = self.now.max(end);
                return None;
            }
            self.now = next;
            self.step();
            if done(self) {
                return Some(self.now);
            }
        }
    }

    /// When the next thing happens: a delivery, a timer, the LRT's refresh.
    fn next_event(&self) -> Time {
        [
            self.in_flight.front().map(|f| f.arrive),
            self.timers.first().map(|(t, _)| *t),
            Some(self.next_learn),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(Time::MAX)
        .max(self.now)
    }

    /// The deliveries due now, then the LRT's refresh, then the timers due.
    fn step(&mut self) {
        let now = self.now;
        while self.in_flight.front().is_some_and(|f| f.arrive <= now) {
            let Some(f) = self.in_flight.pop_front() else {
                break;
            };
            match f.to {
                Some(i) => self.deliver(i, &f),
                None => {
                    for i in (0..self.nodes.len()).filter(|i| *i != f.from) {
                        self.deliver(i, &f);
                    }
                }
            }
        }
        if now >= self.next_learn {
            self.learn();
        }
        while let Some(&(t, i)) = self.timers.first() {
            if t > now {
                break;
            }
            self.timers.pop_first();
            self.due[i] = Time::MAX;
            if !self.up[i] {
                continue;
            }
            self.nodes[i].now = now;
            let t0 = Instant::now();
            let out = self.stations[i].on_timer(now, &mut self.nodes[i]);
            self.busy[i] += t0.elapsed();
            self.take(i, out);
            // A timer still due runs at the next instant, not again now.
            self.reschedule(i, now + 1);
        }
    }

    fn deliver(&mut self, i: usize, f: &InFlight) {
        if !self.up[i] {
            return;
        }
        let now = self.now;
        self.nodes[i].now = now;
        let input = Incoming {
            port: PortId::new(0),
            native: self.nodes[f.from].native,
            src: f.src,
            dst: f.dst,
            mad: &f.mad[..],
        };
        let t0 = Instant::now();
        let out = self.stations[i].handle(now, &mut self.nodes[i], input);
        self.busy[i] += t0.elapsed();
        self.received[i] += 1;
        self.counts.deliveries += 1;
        self.take(i, out);
        self.reschedule(i, now);
    }

    /// What member `i`'s station produced: its packets on the link, its
    /// managers' events and its finished requests kept.
    fn take(&mut self, i: usize, out: Outcome) {
        let arrive = self.now + self.delay;
        for p in out.packets {
            self.counts.packets += 1;
            let to = if !p.l2.is_empty() {
                None
            } else if !p.native.is_empty() {
                self.by_native.get(&p.native).map(|t| Some(*t))
            } else if p.dst == Address::BROADCAST {
                Some(None)
            } else {
                self.lrt
                    .native(p.dst)
                    .and_then(|n| self.by_native.get(&n))
                    .map(|t| Some(*t))
            };
            let Some(to) = to.filter(|_| p.l2.is_empty()) else {
                self.counts.lost += 1;
                continue;
            };
            self.in_flight.push_back(InFlight {
                arrive,
                from: i,
                to,
                src: p.src,
                dst: p.dst,
                mad: p.mad,
            });
        }
        let now = self.now;
        self.events
            .extend(out.manager_events.into_iter().map(|(_, e)| (now, i, e)));
        self.done
            .extend(out.done.into_iter().map(|(id, r)| (now, i, id, r)));
    }

    /// Member `i`'s next timer, not before `earliest`.
    fn reschedule(&mut self, i: usize, earliest: Time) {
        let t = if self.up[i] {
            let t = self.stations[i].next_timer();
            if t == Time::MAX { t } else { t.max(earliest) }
        } else {
            Time::MAX
        };
        if t != self.due[i] {
            self.timers.remove(&(self.due[i], i));
            self.due[i] = t;
            if t != Time::MAX {
                self.timers.insert((t, i));
            }
        }
    }

    /// Every member's LRT: the addressed members that are up.
    fn learn(&mut self) {
        self.next_learn = self.now + LEARN_MS;
        let lrt = Lrt::new(
            self.nodes
                .iter()
                .zip(&self.up)
                .filter(|(n, up)| **up && n.address.is_node())
                .map(|(n, _)| (n.address, n.native))
                .collect(),
        );
        if lrt != *self.lrt {
            self.lrt = Rc::new(lrt);
            for n in &mut self.nodes {
                n.lrt = Rc::clone(&self.lrt);
            }
        }
    }

    /// The clock.
    pub fn now(&self) -> Time {
        self.now
    }

    /// How many members joined.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no member joined.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Member `i`.
    pub fn node(&self, i: usize) -> &SimNode {
        &self.nodes[i]
    }

    /// Member `i`'s station.
    pub fn station(&self, i: usize) -> &Station {
        &self.stations[i]
    }

    /// Whether member `i` is up.
    pub fn is_up(&self, i: usize) -> bool {
        self.up[i]
    }

    /// The managers' events so far: (when, member, event).
    pub fn events(&self) -> &[(Time, usize, ManagerEvent)] {
        &self.events
    }

    /// Requests started with [`SimSan::start`] that finished since the last
    /// call.
    pub fn take_done(&mut self) -> Vec<Done> {
        std::mem::take(&mut self.done)
    }

    /// What crossed the link so far.
    pub fn counts(&self) -> SanCounts {
        self.counts
    }

    /// Packets member `i` received so far.
    pub fn received(&self, i: usize) -> u64 {
        self.received[i]
    }

    /// Wall-clock time member `i`'s station spent so far.
    pub fn busy(&self, i: usize) -> Duration {
        self.busy[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::NodeType;
    use crate::manager::SmState;

    fn host(i: u64) -> AgentConfig {
        AgentConfig::new(NodeType::Host, 0x100 + i, "n")
    }

    #[test]
    fn a_manager_among_members_becomes_master_and_sweeps_them_all() {
        let mut san = SimSan::new(1);
        san.add(host(0), Address(0x0100), Some(ManagerConfig::new(7, 0x100)));
        for i in 1..20 {
            san.add(host(i), Address(0x0100 + i as u16), None);
        }
        let t = san.run_until_true(10_000, |s| {
            s.station(0).managers()[0].1.state() == SmState::Master
                && s.station(0).managers()[0].1.database().len() == 19
        });
        assert!(t.is_some(), "no master with the whole SAN by 10 s");
        // The stations' timers drive the run: a second is far fewer
        // instants than there are members times milliseconds.
        assert!(san.counts().deliveries > 0);
        assert_eq!(san.counts().lost, 0);
    }

    #[test]
    fn a_broadcast_reaches_every_member_but_its_sender_and_a_dead_one_nothing() {
        let mut san = SimSan::new(1);
        for i in 0..4 {
            san.add(host(i), Address(0x0100 + i as u16), None);
        }
        let quiet = san.add(host(9), Address::UNSPECIFIED, None);
        san.set_up(3, false);
        san.run_until(1);
        // The member without an address announced itself once at 0.
        assert_eq!(san.counts().packets, 1);
        assert_eq!(san.counts().deliveries, 3);
        assert_eq!(san.received(quiet), 0);
        assert_eq!(san.received(3), 0);
        assert_eq!(san.station(0).agent().stats().announcements_heard, 1);
    }
}
