//! Address assignment through real stations on one simulated SAN
//! (docs/manager.md "Address assignment"): nodes that start without an
//! address announce themselves (trap 1025 to every member), the master
//! gives them one from its pool by directed route to their native address,
//! the same one over their restarts and over a change of master (standbys
//! copy the master's identity -> address map at every poll, a SubnAdm
//! GetTable of AddressRecord), never one another node answers at; two
//! identities at one address are reported.

use std::collections::BTreeMap;

use mgmt::agent::{AgentConfig, Incoming, LrtItem, Managed, NodeType, PortFacts};
use mgmt::manager::{ManagerConfig, ManagerEvent, SmState};
use mgmt::station::{Carrier, Outcome, Packet, Station};
use mgmt::wire::Status;
use rrp::router::FibEntry;
use rrp::wire::Packet as EepPacket;
use rrp::{Address, NativeAddr, PortId};

const POOL: (Address, Address) = (Address(0x0180), Address(0x0183));

/// A node of the SAN: its native and (possibly no) address; what it knows
/// of the others (an LRT: address -> native) is the net's.
struct Node {
    native: NativeAddr,
    me: Address,
    lrt: BTreeMap<Address, NativeAddr>,
}

impl Managed for Node {
    fn ports(&self) -> usize {
        1
    }
    fn port(&self, port: PortId) -> Option<PortFacts> {
        (port.index() == 0).then_some(PortFacts {
            address: self.me,
            san_id: Address(0x0201),
            mtu: 1500,
            cost: 1,
            up: true,
            link_kind: 1,
            native: self.native,
            lrt_entries: 0,
            buddies: 0,
        })
    }
    fn counters(&self, _port: PortId) -> Option<Vec<u64>> {
        None
    }
    fn route(&self, _port: PortId, _dst: Address) -> Option<FibEntry> {
        None
    }
    fn lrt(&self, _port: PortId) -> Vec<LrtItem> {
        Vec::new()
    }
    fn set_port_up(&mut self, _port: PortId, _up: bool) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }
    fn set_mtu(&mut self, _port: PortId, _mtu: u32) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }
    fn set_cost(&mut self, _port: PortId, _cost: u16) -> Result<(), Status> {
        Err(Status::METHOD_ATTR_UNSUPPORTED)
    }
    fn clear_counters(&mut self, _port: PortId) -> Result<(), Status> {
        Ok(())
    }
    fn set_name(&mut self, _name: &str) {}
    fn set_address(&mut self, _port: PortId, address: Address) -> Result<(), Status> {
        self.me = address;
        Ok(())
    }
}

impl Carrier for Node {
    fn addresses(&self) -> Vec<Address> {
        vec![self.me]
    }
    fn next_hop(&self, dst: Address) -> Option<(PortId, NativeAddr)> {
        self.lrt.get(&dst).map(|n| (PortId::new(0), *n))
    }
    fn members(&self, _port: PortId) -> Vec<Address> {
        self.lrt.keys().copied().filter(|a| *a != self.me).collect()
    }
}

fn native(i: usize) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 0, i as u8])
}

/// (to native or every member, from native, EEP src, EEP dst, the MAD).
type InFlight = (NativeAddr, NativeAddr, Address, Address, Vec<u8>);

struct Net {
    now: u64,
    nodes: Vec<Node>,
    stations: Vec<Station>,
    up: Vec<bool>,
    queue: Vec<InFlight>,
    events: Vec<(usize, ManagerEvent)>,
    /// LRT entries the test sets (a router's view of a duplicate).
    pinned: BTreeMap<Address, NativeAddr>,
}

impl Net {
    /// Nodes `(address or 0, manager priority)`; identities are 0x10 + i.
    fn new(spec: &[(u16, Option<u8>)]) -> Net {
        let mut n = Net {
            now: 0,
            nodes: Vec::new(),
            stations: Vec::new(),
            up: Vec::new(),
            queue: Vec::new(),
            events: Vec::new(),
            pinned: BTreeMap::new(),
        };
        for (i, (a, prio)) in spec.iter().enumerate() {
            n.nodes.push(Node {
                native: native(i),
                me: Address(*a),
                lrt: BTreeMap::new(),
            });
            n.stations.push(Self::station(i, *prio, 0));
            n.up.push(true);
        }
        n.learn();
        n
    }

    fn station(i: usize, prio: Option<u8>, now: u64) -> Station {
        let mut st = Station::new(
            AgentConfig::new(NodeType::Host, 0x10 + i as u64, "n"),
            now,
            7,
        );
        if let Some(p) = prio {
            let mut c = ManagerConfig::new(p, 0x10 + i as u64);
            c.pool = Some(POOL);
            st.add_manager(PortId::new(0), c, now);
        }
        st
    }

    /// Every node's LRT: the addressed nodes that are up (what RRP#7
    /// sweeps would find).
    fn learn(&mut self) {
        let mut lrt: BTreeMap<Address, NativeAddr> = self
            .nodes
            .iter()
            .zip(&self.up)
            .filter(|(n, up)| **up && n.me.is_node())
            .map(|(n, _)| (n.me, n.native))
            .collect();
        lrt.extend(self.pinned.iter().map(|(a, n)| (*a, *n)));
        for n in &mut self.nodes {
            n.lrt = lrt.clone();
        }
    }

    fn take(&mut self, i: usize, out: Outcome) {
        for p in &out.packets {
            self.queue
                .push((p.native, self.nodes[i].native, p.src, p.dst, mad_of(p)));
        }
        for (_, e) in out.manager_events {
            self.events.push((i, e));
        }
    }

    fn deliver(&mut self, i: usize, from: NativeAddr, src: Address, dst: Address, mad: &[u8]) {
        let out = self.stations[i].handle(
            self.now,
            &mut self.nodes[i],
            Incoming {
                port: PortId::new(0),
                native: from,
                src,
                dst,
                mad,
            },
        );
        self.take(i, out);
    }

    fn run_until(&mut self, t: u64) {
        while self.now < t {
            self.now += 1;
            for (to, from, src, dst, mad) in std::mem::take(&mut self.queue) {
                let sender = self.nodes.iter().position(|n| n.native == from);
                for i in 0..self.nodes.len() {
                    let hit = if to.is_empty() {
                        Some(i) != sender
                    } else {
                        self.nodes[i].native == to
                    };
                    if hit && self.up[i] {
                        self.deliver(i, from, src, dst, &mad);
                    }
                }
            }
            for i in 0..self.stations.len() {
                if self.up[i] {
                    let out = self.stations[i].on_timer(self.now, &mut self.nodes[i]);
                    self.take(i, out);
                }
            }
            if self.now.is_multiple_of(100) {
                self.learn();
            }
        }
    }

    /// Node `i` starts again without an address.
    fn restart(&mut self, i: usize, prio: Option<u8>) {
        self.nodes[i].me = Address::UNSPECIFIED;
        self.stations[i] = Self::station(i, prio, self.now);
        self.up[i] = true;
    }

    fn state(&self, i: usize) -> Option<SmState> {
        self.stations[i].managers().first().map(|(_, m)| m.state())
    }

    /// Node `i` subscribes to every trap at `master` (InformInfo Set).
    fn subscribe(&mut self, i: usize, master: u16) {
        use mgmt::attr::InformInfo;
        use mgmt::client::{Request, Target};
        use mgmt::wire::{Method, MgmtClass};
        let mut data = vec![0u8; 192];
        InformInfo::default().emit(&mut data).unwrap();
        let (_, out) = self.stations[i].start(
            self.now,
            &mut self.nodes[i],
            Request {
                target: Target::Address(Address(master)),
                class: MgmtClass::SUBN_ADM,
                method: Method::SET,
                attribute: InformInfo::ID,
                modifier: 0,
                mkey: 0,
                data,
                timeout_ms: 50,
                retries: 2,
            },
        );
        self.take(i, out);
    }

    /// The notices node `i` received in Reports.
    fn reported(&self, i: usize) -> Vec<mgmt::attr::Notice> {
        self.stations[i]
            .agent()
            .notices()
            .filter(|r| r.report)
            .map(|r| r.notice.clone())
            .collect()
    }
}

fn mad_of(p: &Packet) -> Vec<u8> {
    let bytes = p.bytes().unwrap();
    let pkt = EepPacket::new_checked(&bytes[..], usize::MAX).unwrap();
    mgmt::wire::mad_in(&pkt).unwrap().as_bytes().to_vec()
}

#[test]
fn nodes_without_an_address_get_one_and_keep_it_over_restarts_and_a_new_master() {
    // Managers on 0x0110 (7, identity 0x10: master) and 0x0111 (7,
    // identity 0x11: standby); 0x0180 (the pool's first) is taken by a
    // node configured with it; two nodes start without an address.
    let mut n = Net::new(&[
        (0x0110, Some(7)),
        (0x0111, Some(7)),
        (0x0180, None),
        (0, None),
        (0, None),
    ]);
    // 0x0180 subscribes to the SAN's events once there is a master.
    n.run_until(1_000);
    n.subscribe(2, 0x0110);
    n.run_until(3_000);
    assert_eq!(n.state(0), Some(SmState::Master));
    assert_eq!(n.state(1), Some(SmState::Standby));
    let (a3, a4) = (n.nodes[3].me, n.nodes[4].me);
    assert!(a3.is_node() && a4.is_node(), "{a3} {a4}");
    assert_ne!(a3, a4);
    for a in [a3, a4] {
        assert!(
            (0x0181..=0x0183).contains(&a.0),
            "{a}: from the pool, not 0x0180"
        );
    }
    let master = &n.stations[0].managers()[0].1;
    assert_eq!(master.stats().addresses_assigned, 2, "{:?}", master.stats());
    // Each address given reached the subscriber as trap 1028.
    let mut given: Vec<(u64, Address)> = n
        .reported(2)
        .iter()
        .filter_map(|x| x.address_assigned_details())
        .map(|d| (d.identity, d.address))
        .collect();
    given.sort_unstable();
    assert_eq!(given, [(0x13, a3), (0x14, a4)]);
    assert!(n.reported(2).iter().all(
        |x| x.issuer == Address(0x0110) && x.producer_type == mgmt::attr::Notice::PRODUCER_HOST
    ));
    // Announcements stop once a node has its address.
    let sent = n.stations[3].agent().stats().announcements;
    n.run_until(5_000);
    assert_eq!(n.stations[3].agent().stats().announcements, sent);
    // The standby has the master's map.
    let standby = &n.stations[1].managers()[0].1;
    assert_eq!(standby.assignments().get(&0x13), Some(&a3));
    assert_eq!(standby.assignments().get(&0x14), Some(&a4));

    // Node 3 restarts without its address: the same one again.
    n.restart(3, None);
    n.run_until(7_000);
    assert_eq!(n.nodes[3].me, a3);
    assert!(n.events.iter().any(|(i, e)| *i == 0
        && matches!(e, ManagerEvent::AddressAssigned { address, again: true, .. } if *address == a3)));

    // The master dies; the standby takes over; node 4 restarts: the same
    // address from the new master.
    n.up[0] = false;
    n.learn();
    n.run_until(12_000);
    assert_eq!(n.state(1), Some(SmState::Master));
    n.restart(4, None);
    n.run_until(15_000);
    assert_eq!(n.nodes[4].me, a4);
    let m1 = &n.stations[1].managers()[0].1;
    assert!(m1.stats().addresses_assigned >= 1, "{:?}", m1.stats());
}

#[test]
fn an_exhausted_pool_is_reported_and_nothing_is_given_twice() {
    // A pool of four with one taken: three of four address-less nodes get
    // one, the fourth is reported.
    let mut n = Net::new(&[
        (0x0110, Some(7)),
        (0x0180, None),
        (0, None),
        (0, None),
        (0, None),
        (0, None),
    ]);
    n.run_until(5_000);
    let mut given: Vec<u16> = n.nodes[2..]
        .iter()
        .map(|x| x.me.0)
        .filter(|a| *a != 0)
        .collect();
    given.sort_unstable();
    assert_eq!(given, vec![0x0181, 0x0182, 0x0183]);
    let m = &n.stations[0].managers()[0].1;
    assert!(m.stats().pool_exhausted >= 1, "{:?}", m.stats());
    assert!(
        n.events
            .iter()
            .any(|(_, e)| matches!(e, ManagerEvent::PoolExhausted { .. }))
    );
}

#[test]
fn two_identities_at_one_address_are_reported() {
    // Nodes 1 and 2 both configured at 0x0150; the SAN's LRT flips between
    // them (as a router's does when both answer its sweeps).
    let mut n = Net::new(&[(0x0110, Some(7)), (0x0150, None), (0x0150, None)]);
    // Identities are read by heavy sweeps: every sweep here.
    let mut c = ManagerConfig::new(7, 0x10);
    c.timers.heavy_every = 1;
    n.stations[0].add_manager(PortId::new(0), c, 0);
    let mut which = 1;
    // The master's node subscribes at the master itself.
    n.run_until(1_500);
    n.subscribe(0, 0x0110);
    for t in (2_100..8_000).step_by(700) {
        n.run_until(t);
        which = 3 - which;
        let nat = n.nodes[which].native;
        n.pinned.insert(Address(0x0150), nat);
    }
    let m = &n.stations[0].managers()[0].1;
    assert!(m.stats().duplicates >= 1, "{:?}", m.stats());
    assert!(n.events.iter().any(|(_, e)| matches!(
        e,
        ManagerEvent::DuplicateAddress { address, .. } if *address == Address(0x0150)
    )));
    // And as trap 1029 to the subscriber.
    let dup = n
        .reported(0)
        .iter()
        .find_map(|x| x.duplicate_address_details())
        .expect("a Report of the duplicate");
    assert_eq!(dup.address, Address(0x0150));
    assert!(dup.identities.contains(&0x11) && dup.identities.contains(&0x12));
}

#[test]
fn an_address_given_just_before_the_master_dies_is_kept_by_the_standby() {
    // Master 0x0110 (identity 0x10), standby 0x0111; 0x0180 configured;
    // nodes 3 and 4 start without an address once the managers are settled.
    let mut n = Net::new(&[
        (0x0110, Some(7)),
        (0x0111, Some(7)),
        (0x0180, None),
        (0, None),
        (0, None),
    ]);
    n.up[3] = false;
    n.up[4] = false;
    n.run_until(3_000);
    assert_eq!(n.state(0), Some(SmState::Master));
    assert_eq!(n.state(1), Some(SmState::Standby));
    n.restart(3, None);
    while !n.nodes[3].me.is_node() {
        assert!(n.now < 6_000, "node 3 got no address");
        n.run_until(n.now + 1);
    }
    let given = n.nodes[3].me;
    // Node 3 goes away at once, before any sweep finds it: the address is in
    // the master's map only, not among the members it has swept.
    n.up[3] = false;
    n.learn();
    // The standby's next poll, answered; the master dies right after it,
    // before a second poll.
    let standby = |n: &Net| n.stations[1].managers()[0].1.stats().polls;
    let polls = standby(&n);
    while standby(&n) == polls {
        n.run_until(n.now + 1);
    }
    n.run_until(n.now + 20);
    n.up[0] = false;
    n.learn();
    let copied = n.stations[1].managers()[0]
        .1
        .assignments()
        .get(&0x13)
        .copied();
    assert_eq!(copied, Some(given), "the one poll copied the whole map");
    n.run_until(n.now + 7_000);
    assert_eq!(n.state(1), Some(SmState::Master));
    // A new node does not get it.
    n.restart(4, None);
    n.run_until(n.now + 3_000);
    let other = n.nodes[4].me;
    assert!(other.is_node() && other != given, "{other} {given}");
    // The node comes back: its address again, from the new master.
    n.restart(3, None);
    n.run_until(n.now + 3_000);
    assert_eq!(n.nodes[3].me, given);
    assert!(n.events.iter().any(|(i, e)| *i == 1
        && matches!(e, ManagerEvent::AddressAssigned { address, again: true, .. } if *address == given)));
}

#[test]
fn a_map_longer_than_one_answer_is_copied_whole_at_each_poll() {
    // 16 members, each swept into the master's map: two GetTable answers
    // (12 records, then 4) at every poll.
    let spec: Vec<(u16, Option<u8>)> = [(0x0110, Some(7)), (0x0111, Some(7))]
        .into_iter()
        .chain((0..14).map(|i| (0x0120 + i, None)))
        .collect();
    let mut n = Net::new(&spec);
    n.run_until(5_000);
    assert_eq!(n.state(0), Some(SmState::Master));
    assert_eq!(n.state(1), Some(SmState::Standby));
    let master = n.stations[0].managers()[0].1.assignments().clone();
    assert_eq!(master.len(), 15, "the members the master swept");
    let standby = &n.stations[1].managers()[0].1;
    for (identity, address) in &master {
        assert_eq!(standby.assignments().get(identity), Some(address));
    }
    // Each poll copies the map in two requests.
    let (polls, requests) = (standby.stats().polls, standby.stats().requests);
    n.run_until(6_000);
    let standby = &n.stations[1].managers()[0].1;
    let more_polls = standby.stats().polls - polls;
    assert!(more_polls >= 1);
    // Per poll: the poll, the map's two pages, the multicast walk (a
    // McGroupRecord Get and a McMemberRecord Get: no groups) and the
    // subscriptions' (an InformInfo Get: none), the partitions' first
    // chunk (a PartitionsText GetTable).
    assert_eq!(standby.stats().requests - requests, 7 * more_polls);
}

/// Three hundred nodes powered on at once without an address, on a SAN of
/// real stations ([`mgmt::simsan::SimSan`]) with two managers at their
/// default timers: every one has a distinct address from the pool within a
/// second of virtual time, each announced itself once (no storm at the
/// master), and the standby holds the whole map after its next poll.
#[test]
fn three_hundred_nodes_announcing_at_once_are_all_addressed_within_a_second() {
    use mgmt::simsan::SimSan;
    const NODES: usize = 300;
    let pool = (Address(0x0400), Address(0x0400 + NODES as u16 + 9));
    let mut san = SimSan::new(1);
    for (a, id) in [(0x0101, 0x10), (0x0102, 0x11)] {
        let mut m = ManagerConfig::new(7, id);
        m.pool = Some(pool);
        san.add(
            AgentConfig::new(NodeType::Host, id, "manager"),
            Address(a),
            Some(m),
        );
    }
    let state = |s: &SimSan, i: usize| s.station(i).managers()[0].1.state();
    let settled = san.run_until_true(5_000, |s| {
        state(s, 0) == SmState::Master && state(s, 1) == SmState::Standby
    });
    assert!(settled.is_some(), "no master and standby in 5 s");
    let t0 = san.now();
    let first = san.len();
    for i in 0..NODES {
        san.add(
            AgentConfig::new(NodeType::Host, 0x1000 + i as u64, "n"),
            Address::UNSPECIFIED,
            None,
        );
    }
    let all = san.run_until_true(t0 + 10_000, |s| {
        (first..s.len()).all(|i| s.node(i).address.is_node())
    });
    let took = all.map(|t| t - t0);
    assert!(
        took.is_some_and(|t| t <= 1_000),
        "all addressed after {took:?} ms"
    );
    let mut given: Vec<Address> = (first..san.len()).map(|i| san.node(i).address).collect();
    given.sort_unstable();
    given.dedup();
    assert_eq!(given.len(), NODES, "two nodes with one address");
    assert!(given.iter().all(|a| (pool.0..=pool.1).contains(a)));
    // The Sets' answers reach the master a link delay later.
    san.run_until(san.now() + 10);
    let master = san.station(0).managers()[0].1.stats();
    assert_eq!(master.addresses_assigned, NODES as u64);
    assert_eq!(master.announcements, NODES as u64, "{master:?}");
    assert!((first..san.len()).all(|i| san.station(i).agent().stats().announcements == 1));
    // The standby copies the whole map at its next polls.
    let map = |s: &SimSan, i: usize| s.station(i).managers()[0].1.assignments().clone();
    let copied = san.run_until_true(san.now() + 5_000, |s| map(s, 1) == map(s, 0));
    assert!(copied.is_some(), "the standby's map differs after 5 s");
    assert!(map(&san, 0).len() >= NODES);
}
