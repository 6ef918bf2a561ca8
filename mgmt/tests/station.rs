//! Stations (agent, client, SAN managers) of three hosts on one SAN, their
//! packets carried by address: the managers elect through the agents'
//! SMInfo (Gets answered by the manager of the HR they arrive on, Sets
//! exempt from the M_Key), and an operator's request still reaches its
//! waiter among the managers' answers.

use mgmt::agent::{AgentConfig, LrtItem, Managed, NodeType, PortFacts};
use mgmt::client::{Request, Target};
use mgmt::manager::{ManagerConfig, ManagerEvent, SmState};
use mgmt::partition::{Membership, NodeFacts, PartitionKey, Partitions};
use mgmt::station::{Carrier, Packet, Station};
use mgmt::wire::{Method, MgmtClass, Status};
use rrp::router::FibEntry;
use rrp::wire::Packet as EepPacket;
use rrp::{Address, NativeAddr, PortId};

/// A host with one port on the SAN of every other.
struct Host {
    me: Address,
    others: Vec<Address>,
    /// Its port's MTU.
    mtu: u32,
}

impl Managed for Host {
    fn ports(&self) -> usize {
        1
    }
    fn port(&self, port: PortId) -> Option<PortFacts> {
        (port.index() == 0).then_some(PortFacts {
            address: self.me,
            san_id: Address(0x0201),
            mtu: self.mtu,
            cost: 1,
            up: true,
            link_kind: 1,
            native: NativeAddr::NONE,
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
}

impl Carrier for Host {
    fn addresses(&self) -> Vec<Address> {
        vec![self.me]
    }
    fn next_hop(&self, dst: Address) -> Option<(PortId, NativeAddr)> {
        self.others
            .contains(&dst)
            .then(|| (PortId::new(0), NativeAddr::NONE))
    }
    fn members(&self, _port: PortId) -> Vec<Address> {
        self.others.clone()
    }
}

struct Net {
    now: u64,
    hosts: Vec<Host>,
    stations: Vec<Station>,
    /// (to, from, the MAD).
    queue: Vec<(Address, Address, Vec<u8>)>,
    done: Vec<(usize, u64, bool)>,
    answers: std::collections::HashMap<u64, mgmt::client::Answer>,
    /// Stations stopped (killed): nothing reaches them, their timers stop.
    dead: Vec<bool>,
    /// The managers' PartitionsChanged events: (station, partitions,
    /// members to set).
    partition_changes: Vec<(usize, usize, usize)>,
}

impl Net {
    fn new(managers: &[(u16, Option<(u8, u64)>)]) -> Net {
        let all: Vec<Address> = managers.iter().map(|(a, _)| Address(*a)).collect();
        let mut n = Net {
            now: 0,
            hosts: Vec::new(),
            stations: Vec::new(),
            queue: Vec::new(),
            done: Vec::new(),
            answers: std::collections::HashMap::new(),
            dead: vec![false; managers.len()],
            partition_changes: Vec::new(),
        };
        for (a, m) in managers {
            let me = Address(*a);
            let mut cfg = AgentConfig::new(NodeType::Host, u64::from(*a), "h");
            // A key at protect 1: SMInfo Sets must pass without it.
            cfg.mkey = 0x99;
            cfg.protect = 1;
            let mut st = Station::new(cfg, 0, u32::from(*a));
            if let Some((prio, id)) = m {
                st.add_manager(PortId::new(0), ManagerConfig::new(*prio, *id), 0);
            }
            n.hosts.push(Host {
                me,
                others: all.iter().copied().filter(|x| *x != me).collect(),
                mtu: 1500,
            });
            n.stations.push(st);
        }
        n
    }

    fn take(&mut self, i: usize, out: mgmt::station::Outcome) {
        for p in out.packets {
            self.queue.push((p.dst, p.src, mad_of(&p)));
        }
        for (_, e) in out.manager_events {
            if let ManagerEvent::PartitionsChanged {
                partitions,
                members,
            } = e
            {
                self.partition_changes.push((i, partitions, members));
            }
        }
        for (id, r) in out.done {
            self.done.push((i, id, r.is_ok()));
            if let Ok(a) = r {
                self.answers.insert(id, a);
            }
        }
    }

    fn run_until(&mut self, t: u64) {
        while self.now < t {
            self.now += 1;
            let now = self.now;
            for (to, from, mad) in std::mem::take(&mut self.queue) {
                let Some(i) = self.hosts.iter().position(|h| h.me == to) else {
                    continue;
                };
                if self.dead[i] {
                    continue;
                }
                let out = self.stations[i].handle(
                    now,
                    &mut self.hosts[i],
                    mgmt::agent::Incoming {
                        port: PortId::new(0),
                        native: NativeAddr::NONE,
                        src: from,
                        dst: to,
                        mad: &mad,
                    },
                );
                self.take(i, out);
            }
            for i in 0..self.stations.len() {
                if self.dead[i] {
                    continue;
                }
                let out = self.stations[i].on_timer(now, &mut self.hosts[i]);
                self.take(i, out);
            }
        }
    }

    fn state(&self, i: usize) -> Option<SmState> {
        self.stations[i].managers().first().map(|(_, m)| m.state())
    }
}

/// The MAD a packet carries.
fn mad_of(p: &Packet) -> Vec<u8> {
    let bytes = p.bytes().unwrap();
    let pkt = EepPacket::new_checked(&bytes[..], usize::MAX).unwrap();
    mgmt::wire::mad_in(&pkt).unwrap().as_bytes().to_vec()
}

#[test]
fn managers_elect_through_their_stations_and_operators_still_get_answers() {
    // 0x0101 runs no manager; 0x0102 and 0x0103 do, priority 7 both: the
    // lower identity (0x20, on 0x0103) wins.
    let mut n = Net::new(&[
        (0x0101, None),
        (0x0102, Some((7, 0x30))),
        (0x0103, Some((7, 0x20))),
    ]);
    n.run_until(3_000);
    assert_eq!(n.state(0), None);
    assert_eq!(n.state(1), Some(SmState::Standby));
    assert_eq!(n.state(2), Some(SmState::Master));
    assert_eq!(
        n.stations[1].managers()[0].1.master(),
        Some(Address(0x0103))
    );
    // The master's sweeps know the SAN's members: their NodeInfo and
    // NodeDescription, and which run a manager.
    let db = n.stations[2].managers()[0].1.database();
    assert_eq!(db.len(), 2, "{db:?}");
    let m1 = &db[&Address(0x0101)];
    assert_eq!(
        (m1.identity, m1.node_type, m1.name.as_str()),
        (0x0101, 1, "h")
    );
    assert_eq!(m1.manager, None);
    assert_eq!(db[&Address(0x0102)].manager, Some(SmState::Standby));
    assert!(
        n.stations[1].managers()[0].1.database().is_empty(),
        "standbys keep none"
    );
    // An operator's Get of SMInfo on the master's node, from the node
    // without a manager: answered, and handed to that operator.
    let (id, out) = n.stations[0].start(
        n.now,
        &mut n.hosts[0],
        Request {
            target: Target::Address(Address(0x0103)),
            class: MgmtClass::SUBN,
            method: Method::GET,
            attribute: mgmt::attr::SmInfo::ID,
            modifier: 0,
            mkey: 0,
            data: Vec::new(),
            timeout_ms: 100,
            retries: 1,
        },
    );
    n.take(0, out);
    n.run_until(n.now + 50);
    assert!(n.done.contains(&(0, id, true)), "{:?}", n.done);
    // The node without a manager answers SMInfo 0x000C: the managers know
    // it runs none.
    assert!(
        !n.stations[2].managers()[0]
            .1
            .peers()
            .contains_key(&Address(0x0101))
    );
}

#[test]
fn the_master_gives_every_agent_the_sans_m_key_once_a_lease_lets_it() {
    let mut n = Net::new(&[(0x0101, None), (0x0102, None), (0x0103, Some((7, 0x20)))]);
    // 0x0101 has no key; 0x0102 has another one at protect 1 with a lease
    // of 2 s (its old manager is gone).
    n.stations[0].agent_mut().set_mkey(0, 0, 0);
    n.stations[1].agent_mut().set_mkey(0x77, 1, 2);
    let mut c = ManagerConfig::new(7, 0x20);
    c.mkey = 0x42;
    c.mkey_protect = 1;
    c.mkey_lease_s = 60;
    c.timers.heavy_every = 2;
    n.stations[2].add_manager(PortId::new(0), c, 0);
    n.run_until(1_500);
    let master = &n.stations[2].managers()[0].1;
    assert_eq!(master.state(), SmState::Master);
    // The keyless agent has the SAN's key, and traps go to the master.
    assert_eq!(n.stations[0].agent().mkey().key, 0x42);
    assert_eq!(n.stations[0].agent().mkey().protect, 1);
    assert_eq!(n.stations[0].agent().config().manager, Address(0x0103));
    // The other refused (its key hidden at protect 1); the refusal started
    // its lease.
    assert_eq!(n.stations[1].agent().mkey().key, 0x77);
    assert!(master.stats().keys_refused >= 1, "{:?}", master.stats());
    assert!(!master.database()[&Address(0x0102)].keyed);
    // The lease runs out: protect 0 shows the key, the next heavy sweep
    // uses it to give the SAN's.
    n.run_until(6_000);
    assert_eq!(n.stations[1].agent().mkey().key, 0x42);
    let master = &n.stations[2].managers()[0].1;
    assert!(
        master.database().values().all(|m| m.keyed),
        "{:?}",
        master.database()
    );
    assert!(master.stats().keys_given >= 2);
}

#[test]
fn a_trap_that_the_san_changed_makes_the_master_sweep_heavily() {
    let mut n = Net::new(&[(0x0101, None), (0x0102, None), (0x0103, Some((7, 0x20)))]);
    n.run_until(3_000);
    let heavy = |n: &Net| n.stations[2].managers()[0].1.stats().heavy_sweeps;
    assert_eq!(n.state(2), Some(SmState::Master));
    assert_eq!(heavy(&n), 1, "the first sweep");
    n.run_until(5_000);
    assert_eq!(heavy(&n), 1, "light sweeps in between");
    // 0x0101's HR goes down: trap 128 to the master's node.
    n.stations[0].agent_mut().set_manager(Address(0x0103));
    let out = n.stations[0].port_changed(n.now, &mut n.hosts[0], PortId::new(0), false);
    n.take(0, out);
    n.run_until(6_500);
    assert_eq!(heavy(&n), 2, "the sweep after the trap");
}

impl Net {
    /// A SubnAdm Get from station `from` to `to`, run to its answer.
    fn subn_adm(
        &mut self,
        from: usize,
        to: u16,
        attribute: u16,
        modifier: u32,
        data: Vec<u8>,
    ) -> Option<mgmt::client::Answer> {
        let (id, out) = self.stations[from].start(
            self.now,
            &mut self.hosts[from],
            Request {
                target: Target::Address(Address(to)),
                class: MgmtClass::SUBN_ADM,
                method: Method::GET,
                attribute,
                modifier,
                mkey: 0,
                data,
                timeout_ms: 50,
                retries: 0,
            },
        );
        self.take(from, out);
        self.run_until(self.now + 120);
        self.answers.remove(&id)
    }
}

#[test]
fn the_master_answers_node_records_by_component_and_paths_on_its_san() {
    use mgmt::attr::node_record::{self, component};
    use mgmt::attr::{NodeRecord, PathRecord};
    let mut n = Net::new(&[
        (0x0101, None),
        (0x0102, Some((3, 0x30))),
        (0x0103, Some((7, 0x20))),
    ]);
    n.run_until(3_000);
    assert_eq!(n.state(2), Some(SmState::Master));
    let area = |f: &dyn Fn(&mut [u8])| {
        let mut a = vec![0u8; 192];
        f(&mut a);
        a
    };
    // Every member, the master's own node among them: mask 0; past the
    // end: no records.
    let all = area(&|_| {});
    let first = n
        .subn_adm(
            0,
            0x0103,
            NodeRecord::ID,
            node_record::query(0, 0),
            all.clone(),
        )
        .expect("answered");
    assert_eq!(first.mad.status, Status::OK);
    let r = NodeRecord::parse(&first.mad.data).unwrap();
    assert_eq!((r.total, r.address), (3, Address(0x0101)));
    let own = n
        .subn_adm(
            0,
            0x0103,
            NodeRecord::ID,
            node_record::query(0, 2),
            all.clone(),
        )
        .expect("answered");
    let r = NodeRecord::parse(&own.mad.data).unwrap();
    assert_eq!(
        (r.address, r.identity, r.manager),
        (Address(0x0103), 0x0103, SmState::Master as u8)
    );
    let end = n
        .subn_adm(0, 0x0103, NodeRecord::ID, node_record::query(0, 3), all)
        .expect("answered");
    assert_eq!(end.mad.status, Status::SA_NO_RECORDS);
    // By identity: the one member that has it.
    let t = area(&|a| {
        NodeRecord {
            identity: 0x0102,
            ..NodeRecord::default()
        }
        .emit(a)
        .unwrap()
    });
    let a = n
        .subn_adm(
            0,
            0x0103,
            NodeRecord::ID,
            node_record::query(component::IDENTITY, 0),
            t,
        )
        .expect("answered");
    let r = NodeRecord::parse(&a.mad.data).unwrap();
    assert_eq!((r.total, r.address), (1, Address(0x0102)));
    // By name and type: all three are hosts named "h"; by a name nobody
    // has: no records.
    let t = area(&|a| {
        NodeRecord {
            node_type: 1,
            description: "h".into(),
            ..NodeRecord::default()
        }
        .emit(a)
        .unwrap()
    });
    let mask = component::NODE_TYPE | component::DESCRIPTION;
    let a = n
        .subn_adm(0, 0x0103, NodeRecord::ID, node_record::query(mask, 1), t)
        .expect("answered");
    let r = NodeRecord::parse(&a.mad.data).unwrap();
    assert_eq!((r.total, r.address), (3, Address(0x0102)));
    let t = area(&|a| {
        NodeRecord {
            description: "nobody".into(),
            ..NodeRecord::default()
        }
        .emit(a)
        .unwrap()
    });
    let a = n
        .subn_adm(
            0,
            0x0103,
            NodeRecord::ID,
            node_record::query(component::DESCRIPTION, 0),
            t,
        )
        .expect("answered");
    assert_eq!(a.mad.status, Status::SA_NO_RECORDS);
    // A mask bit that is no component: status 7.
    let a = n
        .subn_adm(0, 0x0103, NodeRecord::ID, 0x4000_0000, vec![0; 192])
        .expect("answered");
    assert_eq!(a.mad.status, Status::INVALID_VALUE);
    // The path to a member: on the SAN, straight to it, the SAN's cost and
    // MTU; to an address the master does not know: no records.
    let q = area(&|a| {
        PathRecord::request(Address(0x0102), Address(0))
            .emit(a)
            .unwrap()
    });
    let a = n
        .subn_adm(0, 0x0103, PathRecord::ID, 0, q)
        .expect("answered");
    let p = PathRecord::parse(&a.mad.data).unwrap();
    assert_eq!(
        (p.kind, p.first_hr, p.q, p.mtu, p.source),
        (
            PathRecord::ON_SAN,
            Address(0x0102),
            1,
            1500,
            Address(0x0101)
        )
    );
    let q = area(&|a| {
        PathRecord::request(Address(0x0777), Address(0))
            .emit(a)
            .unwrap()
    });
    let a = n
        .subn_adm(0, 0x0103, PathRecord::ID, 0, q)
        .expect("answered");
    assert_eq!(a.mad.status, Status::SA_NO_RECORDS);
    // The standby answers no SubnAdm: the request goes unanswered.
    let q = area(&|a| {
        PathRecord::request(Address(0x0101), Address(0))
            .emit(a)
            .unwrap()
    });
    assert!(n.subn_adm(0, 0x0102, PathRecord::ID, 0, q).is_none());
    assert!(n.stations[1].agent().stats().not_manager >= 1);
}

/// A master keyed with `0x42` dies; the standby takes over the agents' key:
/// at once when it has the same M_Key (it gives the key it knows), only
/// after the agents' lease when it does not (a rogue, or a new manager that
/// was never told the key).
fn take_over_after_the_master_dies(standby_mkey: u64) -> (u64, u64) {
    let mut n = Net::new(&[(0x0101, None), (0x0102, None), (0x0103, None)]);
    for i in 0..3 {
        n.stations[i].agent_mut().set_mkey(0, 0, 0);
    }
    let keyed = |prio: u8, id: u64, key: u64| {
        let mut c = ManagerConfig::new(prio, id);
        c.mkey = key;
        c.mkey_protect = 1;
        c.mkey_lease_s = 3;
        c.timers.heavy_every = 1;
        c
    };
    n.stations[2].add_manager(PortId::new(0), keyed(7, 0x20, 0x42), 0);
    n.stations[1].add_manager(PortId::new(0), keyed(3, 0x30, standby_mkey), 0);
    n.run_until(3_000);
    assert_eq!(n.state(2), Some(SmState::Master));
    assert_eq!(n.stations[0].agent().mkey().key, 0x42);
    assert_eq!(n.stations[0].agent().config().manager, Address(0x0103));
    n.dead[2] = true;
    let died = n.now;
    // Failover, then the first sweep that gives 0x0101 the new master's key
    // (and itself as the manager).
    let mut master_at = None;
    while n.now < died + 20_000 {
        let t = n.now + 10;
        n.run_until(t);
        if master_at.is_none() && n.state(1) == Some(SmState::Master) {
            master_at = Some(n.now - died);
        }
        if n.stations[0].agent().config().manager == Address(0x0102) {
            break;
        }
    }
    let master_at = master_at.expect("the standby became master");
    eprintln!("standby M_Key {standby_mkey:#x}: master after {master_at} ms");
    assert_eq!(
        n.stations[0].agent().config().manager,
        Address(0x0102),
        "the new master never took over the agent"
    );
    assert_eq!(n.stations[0].agent().mkey().key, standby_mkey);
    eprintln!("the agent taken over after {} ms", n.now - died);
    (master_at, n.now - died)
}

#[test]
fn a_standby_that_knows_the_key_takes_the_agents_over_at_once() {
    let (master, agents) = take_over_after_the_master_dies(0x42);
    // Within a sweep of becoming master: no lease to wait out.
    assert!(agents < master + 1_500, "{master} ms, agents {agents} ms");
}

#[test]
fn a_manager_without_the_key_takes_the_agents_over_only_after_the_lease() {
    let (master, agents) = take_over_after_the_master_dies(0x55);
    // Refused (protect 1, the key hidden) until 3 s after the first
    // refusal started the lease.
    assert!(agents >= master + 3_000, "{master} ms, agents {agents} ms");
    assert!(
        agents < master + 3_000 + 2_500,
        "{master} ms, agents {agents} ms"
    );
}

impl Net {
    /// Station `i` becomes a router (NodeInfo says so) whose port has MTU
    /// `mtu`.
    fn router(&mut self, i: usize, mtu: u32) {
        let me = self.hosts[i].me;
        let cfg = AgentConfig::new(NodeType::Router, u64::from(me.0), "r");
        self.stations[i] = Station::new(cfg, self.now, u32::from(me.0));
        self.hosts[i].mtu = mtu;
    }

    /// A SubnAdm request of `method` from station `from` to `to`, run to
    /// its answer: (status, the record's bytes).
    /// A Subn Get from station `from` to `to`: its status and data.
    fn subn_get(
        &mut self,
        from: usize,
        to: u16,
        attribute: u16,
        modifier: u32,
    ) -> Option<(Status, Vec<u8>)> {
        let (id, out) = self.stations[from].start(
            self.now,
            &mut self.hosts[from],
            Request {
                target: Target::Address(Address(to)),
                class: MgmtClass::SUBN,
                method: Method::GET,
                attribute,
                modifier,
                mkey: 0,
                data: vec![0u8; 64],
                timeout_ms: 50,
                retries: 0,
            },
        );
        self.take(from, out);
        self.run_until(self.now + 120);
        self.answers.remove(&id).map(|a| (a.mad.status, a.mad.data))
    }

    fn sa(
        &mut self,
        from: usize,
        to: u16,
        method: Method,
        attribute: u16,
        modifier: u32,
        emit: impl FnOnce(&mut [u8]),
    ) -> Option<(Status, Vec<u8>)> {
        let mut data = vec![0u8; 192];
        emit(&mut data);
        let (id, out) = self.stations[from].start(
            self.now,
            &mut self.hosts[from],
            Request {
                target: Target::Address(Address(to)),
                class: MgmtClass::SUBN_ADM,
                method,
                attribute,
                modifier,
                mkey: 0,
                data,
                timeout_ms: 50,
                retries: 0,
            },
        );
        self.take(from, out);
        self.run_until(self.now + 120);
        self.answers.remove(&id).map(|a| (a.mad.status, a.mad.data))
    }
}

#[test]
fn the_master_keeps_multicast_groups_and_checks_every_join() {
    use mgmt::attr::mc_member_record::FULL_MEMBER;
    use mgmt::attr::{McGroupRecord, McMemberRecord};
    let mut n = Net::new(&[
        (0x0101, None),
        (0x0102, Some((3, 0x30))),
        (0x0103, None),
        (0x0104, None),
    ]);
    // 0x0103 runs the master with small tables; 0x0104 is a router whose
    // port carries 1000 bytes.
    let mut c = ManagerConfig::new(7, 0x20);
    c.max_group_members = 2;
    c.max_groups = 4;
    n.stations[2].add_manager(PortId::new(0), c, 0);
    n.router(3, 1000);
    n.run_until(3_000);
    assert_eq!(n.state(2), Some(SmState::Master));
    let group = |g: u16, mtu: u32| {
        move |a: &mut [u8]| {
            McGroupRecord {
                group: Address(g),
                mtu,
                ..Default::default()
            }
            .emit(a)
            .unwrap()
        }
    };
    let member = |g: u16, mtu: u32| {
        move |a: &mut [u8]| {
            McMemberRecord {
                group: Address(g),
                join_state: FULL_MEMBER,
                mtu,
                ..Default::default()
            }
            .emit(a)
            .unwrap()
        }
    };
    let (gr, mr) = (McGroupRecord::ID, McMemberRecord::ID);
    // Creates: given, twice, chosen by the manager, not logical.
    let (st, d) = n
        .sa(0, 0x0103, Method::SET, gr, 0, group(0x8101, 1500))
        .unwrap();
    assert_eq!(st, Status::OK);
    assert_eq!(McGroupRecord::parse(&d).unwrap().mtu, 1500);
    let (st, _) = n
        .sa(0, 0x0103, Method::SET, gr, 0, group(0x8101, 1500))
        .unwrap();
    assert_eq!(st, Status::MC_EXISTS);
    let (st, d) = n.sa(0, 0x0103, Method::SET, gr, 0, group(0, 0)).unwrap();
    assert_eq!(st, Status::OK);
    let r = McGroupRecord::parse(&d).unwrap();
    assert_eq!((r.group, r.mtu), (Address(0x8000), 1500), "the SAN's MTU");
    let (st, _) = n
        .sa(0, 0x0103, Method::SET, gr, 0, group(0x0105, 0))
        .unwrap();
    assert_eq!(st, Status::INVALID_VALUE);
    let (st, _) = n
        .sa(0, 0x0103, Method::SET, gr, 0, group(0x8103, 900))
        .unwrap();
    assert_eq!(st, Status::OK);
    // Joins: every check, each with its status.
    let (st, _) = n
        .sa(0, 0x0103, Method::SET, mr, 0, member(0x8999, 0))
        .unwrap();
    assert_eq!(st, Status::SA_NO_RECORDS, "no such group");
    let (st, _) = n
        .sa(0, 0x0103, Method::SET, mr, 0, member(0x0104, 0))
        .unwrap();
    assert_eq!(st, Status::INVALID_VALUE, "not a group");
    let (st, _) = n
        .sa(0, 0x0103, Method::SET, mr, 0, member(0x8101, 0))
        .unwrap();
    assert_eq!(st, Status::MC_ROUTER_MTU, "the router carries 1000 bytes");
    let (st, _) = n
        .sa(0, 0x0103, Method::SET, mr, 0, member(0x8103, 1200))
        .unwrap();
    assert_eq!(st, Status::MC_MTU_ABOVE_GROUP);
    let (st, d) = n
        .sa(0, 0x0103, Method::SET, mr, 0, member(0x8103, 0))
        .unwrap();
    assert_eq!(st, Status::OK);
    let r = McMemberRecord::parse(&d).unwrap();
    assert_eq!((r.member, r.group_mtu), (Address(0x0101), 900));
    let (st, _) = n
        .sa(1, 0x0103, Method::SET, mr, 0, member(0x8103, 800))
        .unwrap();
    assert_eq!(st, Status::OK);
    // Bounded: a third member record is refused.
    let (st, _) = n
        .sa(3, 0x0103, Method::SET, mr, 0, member(0x8103, 0))
        .unwrap();
    assert_eq!(st, Status::SA_NO_RESOURCES);
    let m = &n.stations[2].managers()[0].1;
    assert_eq!(m.groups()[&Address(0x8103)].members.len(), 2);
    assert_eq!(m.stats().mc_refused, 7);
    // Member records, by index.
    let (st, d) = n
        .sa(3, 0x0103, Method::GET, mr, 1, member(0x8103, 0))
        .unwrap();
    assert_eq!(st, Status::OK);
    let r = McMemberRecord::parse(&d).unwrap();
    assert_eq!((r.member, r.total, r.mtu), (Address(0x0102), 2, 800));
    // The standby has copied the groups and members; the master dies; the
    // new master has them.
    n.run_until(n.now + 2_500);
    let standby = &n.stations[1].managers()[0].1;
    assert_eq!(standby.groups().len(), 3, "{:?}", standby.groups());
    assert_eq!(standby.groups()[&Address(0x8103)].members.len(), 2);
    n.dead[2] = true;
    n.run_until(n.now + 8_000);
    assert_eq!(n.state(1), Some(SmState::Master));
    let (st, d) = n
        .sa(
            0,
            0x0102,
            Method::GET,
            gr,
            mgmt::attr::mc_group_record::BY_GROUP | 0x8103,
            |_| {},
        )
        .unwrap();
    assert_eq!(st, Status::OK);
    assert_eq!(McGroupRecord::parse(&d).unwrap().members, 2);
    // A leave, twice; a delete.
    let (st, _) = n
        .sa(0, 0x0102, Method::DELETE, mr, 0, member(0x8103, 0))
        .unwrap();
    assert_eq!(st, Status::OK);
    let (st, _) = n
        .sa(0, 0x0102, Method::DELETE, mr, 0, member(0x8103, 0))
        .unwrap();
    assert_eq!(st, Status::SA_NO_RECORDS);
    let (st, _) = n
        .sa(0, 0x0102, Method::DELETE, gr, 0, group(0x8101, 0))
        .unwrap();
    assert_eq!(st, Status::OK);
    // 0x0101 joins again, then dies: the master's sweeps prune it.
    let (st, _) = n
        .sa(0, 0x0102, Method::SET, mr, 0, member(0x8103, 0))
        .unwrap();
    assert_eq!(st, Status::OK);
    n.dead[0] = true;
    n.run_until(n.now + 6_000);
    let m = &n.stations[1].managers()[0].1;
    assert!(
        !m.groups()[&Address(0x8103)]
            .members
            .contains_key(&Address(0x0101)),
        "{:?}",
        m.groups()
    );
    assert!(m.stats().mc_pruned >= 1);
}

impl Net {
    /// Station `from` subscribes to every trap at `master` asking a lease
    /// of `lease_s` (Set), or unsubscribes (Delete): the status and record.
    fn inform(
        &mut self,
        from: usize,
        master: u16,
        method: Method,
        lease_s: u32,
    ) -> (Status, mgmt::attr::InformInfo) {
        use mgmt::attr::InformInfo;
        let (st, d) = self
            .sa(from, master, method, InformInfo::ID, 0, |a| {
                InformInfo {
                    lease_s,
                    ..InformInfo::default()
                }
                .emit(a)
                .unwrap()
            })
            .expect("an answer");
        (st, InformInfo::parse(&d).unwrap())
    }

    /// Station `i` takes its HR down: trap 128 to its manager address.
    fn trap_from(&mut self, i: usize) {
        let out =
            self.stations[i].port_changed(self.now, &mut self.hosts[i], PortId::new(0), false);
        self.take(i, out);
    }

    /// The Reports station `i` has received: (the master that sent each,
    /// its trap, its issuer).
    fn reports(&self, i: usize) -> Vec<(Address, u16, Address)> {
        self.stations[i]
            .agent()
            .notices()
            .filter(|r| r.report)
            .map(|r| (r.from, r.notice.trap_number, r.notice.issuer))
            .collect()
    }
}

/// 0x0101 and 0x0105 subscribe at the master 0x0103 (a bound of 2
/// subscriptions, leases of at most 30 s); 0x0104 sends traps there;
/// 0x0102 is a standby.
fn events_net() -> Net {
    let mut n = Net::new(&[
        (0x0101, None),
        (0x0102, Some((3, 0x30))),
        (0x0103, None),
        (0x0104, None),
        (0x0105, None),
    ]);
    let mut c = ManagerConfig::new(7, 0x20);
    c.timers.max_subscriptions = 2;
    c.timers.lease_max_s = 30;
    n.stations[2].add_manager(PortId::new(0), c, 0);
    n.run_until(3_000);
    assert_eq!(n.state(2), Some(SmState::Master));
    n.stations[3].agent_mut().set_manager(Address(0x0103));
    n
}

#[test]
fn subscribers_get_reports_until_their_lease_runs_out_or_they_unsubscribe() {
    let mut n = events_net();
    let stats = |n: &Net| *n.stations[2].managers()[0].1.stats();
    // Subscribe: the lease asked, cut to the most; the requester is the
    // subscriber.
    let (st, r) = n.inform(0, 0x0103, Method::SET, 5);
    assert_eq!(st, Status::OK);
    assert_eq!((r.subscriber, r.lease_s, r.total), (Address(0x0101), 5, 1));
    let (st, r) = n.inform(4, 0x0103, Method::SET, 600);
    assert_eq!(st, Status::OK);
    assert_eq!((r.subscriber, r.lease_s, r.total), (Address(0x0105), 30, 2));
    // The bound reached: a third is refused with SubnAdm's "no resources";
    // a renewal is not a new one.
    let (st, _) = n.inform(3, 0x0103, Method::SET, 0);
    assert_eq!(st, Status::SA_NO_RESOURCES);
    assert_eq!(stats(&n).subscriptions_refused, 1);
    let (st, r) = n.inform(0, 0x0103, Method::SET, 5);
    assert_eq!((st, r.total), (Status::OK, 2));
    assert_eq!(stats(&n).subscriptions, 2);
    // The standby's node is not the SAN's master: its agent takes the
    // subscription in its own table, for that node's own traps ("Events"),
    // and the SAN's table does not change. A Get there is dropped (only a
    // master's table is copied).
    let (st, r) = n.inform(0, 0x0102, Method::SET, 0);
    assert_eq!((st, r.total), (Status::OK, 1));
    assert_eq!(n.stations[1].agent().subscriptions().count(), 1);
    assert_eq!(n.stations[1].agent().stats().subscriptions, 1);
    assert_eq!(stats(&n).subscriptions, 2);
    let (st, _) = n.inform(0, 0x0102, Method::DELETE, 0);
    assert_eq!(st, Status::OK);
    assert!(
        n.sa(
            0,
            0x0102,
            Method::GET,
            mgmt::attr::InformInfo::ID,
            0,
            |_| {}
        )
        .is_none()
    );

    // A trap to the master: both subscribers get it as a Report.
    n.trap_from(3);
    n.run_until(n.now + 200);
    let hr_0104 = (Address(0x0103), 128, Address(0x0104));
    assert_eq!(n.reports(0), [hr_0104]);
    assert_eq!(n.reports(4), [hr_0104]);
    assert_eq!(stats(&n).reports_sent, 2);
    assert_eq!(stats(&n).reports_given_up, 0);
    // The master's own notices are its traps, not Reports.
    assert!(n.stations[2].agent().notices().all(|r| !r.report));

    // 0x0101's lease runs out: the next trap reaches 0x0105 alone.
    n.run_until(n.now + 5_000);
    n.trap_from(3);
    n.run_until(n.now + 200);
    assert_eq!(n.reports(0).len(), 1, "expired: nothing more");
    assert_eq!(n.reports(4).len(), 2);
    assert_eq!(stats(&n).subscriptions_expired, 1);
    assert_eq!(n.stations[2].managers()[0].1.subscriptions().count(), 1);

    // 0x0105 unsubscribes; twice is "no records"; then nobody gets one.
    let (st, r) = n.inform(4, 0x0103, Method::DELETE, 0);
    assert_eq!((st, r.subscribe, r.total), (Status::OK, false, 0));
    let (st, _) = n.inform(4, 0x0103, Method::DELETE, 0);
    assert_eq!(st, Status::SA_NO_RECORDS);
    n.trap_from(3);
    n.run_until(n.now + 200);
    assert_eq!(n.reports(4).len(), 2);
    assert_eq!(stats(&n).reports_sent, 3);
}

#[test]
fn a_report_is_repeated_until_report_resp_and_given_up_after_its_tries() {
    let mut n = events_net();
    let stats = |n: &Net| *n.stations[2].managers()[0].1.stats();
    assert_eq!(n.inform(0, 0x0103, Method::SET, 0).0, Status::OK);
    // The subscriber away for 700 ms: the first send and the repeat at
    // 500 ms are lost, the one at 1000 ms is answered.
    n.dead[0] = true;
    n.trap_from(3);
    n.run_until(n.now + 700);
    n.dead[0] = false;
    n.run_until(n.now + 600);
    assert_eq!(n.reports(0).len(), 1);
    assert_eq!(stats(&n).reports_retried, 2);
    assert_eq!(stats(&n).reports_given_up, 0);
    // Away for good: 1 + 3 tries, 500 ms apart, then given up.
    n.dead[0] = true;
    n.trap_from(3);
    n.run_until(n.now + 1_900);
    assert_eq!(stats(&n).reports_given_up, 0, "still trying");
    n.run_until(n.now + 200);
    assert_eq!(stats(&n).reports_given_up, 1);
    assert_eq!(stats(&n).reports_retried, 2 + 3);
}

#[test]
fn standbys_copy_the_subscriptions_and_a_new_master_keeps_forwarding() {
    let mut n = events_net();
    assert_eq!(n.inform(0, 0x0103, Method::SET, 0).0, Status::OK);
    assert_eq!(n.inform(4, 0x0103, Method::SET, 0).0, Status::OK);
    // The standby's next polls copy them, leases and all.
    n.run_until(n.now + 2_500);
    let copied: Vec<(Address, u32)> = n.stations[1].managers()[0]
        .1
        .subscriptions()
        .map(|s| (s.info.subscriber, s.info.lease_s))
        .collect();
    assert_eq!(copied.len(), 2, "{copied:?}");
    assert!(
        copied.iter().all(|(_, l)| *l > 50 && *l <= 60),
        "{copied:?}"
    );
    // The master dies; the standby takes over and forwards the next trap.
    n.dead[2] = true;
    n.run_until(n.now + 8_000);
    assert_eq!(n.state(1), Some(SmState::Master));
    n.stations[3].agent_mut().set_manager(Address(0x0102));
    n.trap_from(3);
    n.run_until(n.now + 200);
    let from_new = (Address(0x0102), 128, Address(0x0104));
    assert_eq!(n.reports(0), [from_new]);
    assert_eq!(n.reports(4), [from_new]);
}

#[test]
fn the_masters_own_traps_reach_its_subscribers_once() {
    let mut n = events_net();
    assert_eq!(n.inform(4, 0x0103, Method::SET, 0).0, Status::OK);
    // The master made itself its node's manager.
    assert_eq!(n.stations[2].agent().config().manager, Address(0x0103));
    n.trap_from(2);
    n.run_until(n.now + 12_000);
    assert_eq!(
        n.reports(4),
        [(Address(0x0103), 128, Address(0x0103))],
        "one Report: the trap to itself was repressed"
    );
    let a = n.stations[2].agent().stats();
    assert_eq!((a.traps_sent, a.traps_repressed, a.traps_resent), (1, 1, 0));
}

/// A node subscribed at its own agent (`mwctl events --at` its own HR):
/// the Report of its trap and the ReportResp stay inside the station, and
/// the agent stops repeating it; another node's subscription there gets
/// the same trap over the SAN.
#[test]
fn a_node_subscribed_at_its_own_agent_reports_to_itself_once() {
    let mut n = events_net();
    assert_eq!(n.inform(3, 0x0104, Method::SET, 0).0, Status::OK);
    assert_eq!(n.inform(4, 0x0104, Method::SET, 0).0, Status::OK);
    n.trap_from(3);
    n.run_until(n.now + 5_000);
    let port_0104 = (Address(0x0104), 128, Address(0x0104));
    assert_eq!(n.reports(3), [port_0104]);
    assert_eq!(n.reports(4), [port_0104]);
    let s = *n.stations[3].agent().stats();
    assert_eq!(
        (s.reports_sent, s.reports_retried, s.reports_given_up),
        (2, 0, 0)
    );
    // The master's table took none of them.
    assert_eq!(n.stations[2].managers()[0].1.stats().subscriptions, 0);
}

fn key(k: u16) -> PartitionKey {
    PartitionKey::new(k).unwrap()
}

fn partitions(text: &str) -> Partitions {
    mgmt::partition::parse(text).unwrap()
}

#[test]
fn the_master_gives_every_member_its_partition_table_and_sets_again_only_what_changed() {
    let mut n = Net::new(&[(0x0101, None), (0x0102, None), (0x0103, None)]);
    // 0x0101 a router; 0x0102 has another M_Key at protect 1 with a lease
    // of 2 s: it refuses every Set until the lease runs out.
    n.router(0, 1500);
    n.stations[1].agent_mut().set_mkey(0x77, 1, 2);
    let mut c = ManagerConfig::new(7, 0x0103);
    c.mkey = 0x42;
    c.mkey_protect = 1;
    c.mkey_lease_s = 60;
    c.timers.heavy_every = 2;
    n.stations[2].add_manager(PortId::new(0), c, 0);
    let file = "Default=0x7fff : ALL_ROUTERS=full, SELF=full ;\n\
                a=0x0010 : 0x0000000000000101=full, 0x0000000000000102 ;\n\
                b=0x0020 : 0x0000000000000102=full ;\n";
    let p = partitions(file);
    n.stations[2].set_partitions(&p);
    n.run_until(1_500);
    let master = &n.stations[2].managers()[0].1;
    assert_eq!(master.state(), SmState::Master);
    // The router: a full member of the default partition whatever the
    // file says, and of a.
    let router = vec![
        (key(0x10), Membership::Full),
        (key(0x7fff), Membership::Full),
    ];
    assert_eq!(n.stations[0].agent().partition_table(), router.as_slice());
    assert_eq!(
        p.table_of(&NodeFacts {
            identity: 0x101,
            router: true,
            manager: false
        }),
        router
    );
    assert_eq!(master.table_given(Address(0x0101)), Some(router.as_slice()));
    // The other refused the key: the master sets it no table (it would
    // refuse it too, and count a violation), and it keeps its own.
    assert!(master.stats().keys_refused >= 1, "{:?}", master.stats());
    assert_eq!(
        n.stations[1].agent().partition_table(),
        &[(key(0x7fff), Membership::Full)]
    );
    assert_eq!(master.stats().table_sets_failed, 0, "{:?}", master.stats());
    assert_eq!(master.table_given(Address(0x0102)), None);
    // The lease runs out, the master gives its key, then the table: the file's Default statement names routers and the
    // manager only, so a host is no member of it.
    n.run_until(8_000);
    let host = p.table_of(&NodeFacts {
        identity: 0x102,
        router: false,
        manager: false,
    });
    assert_eq!(
        host,
        vec![
            (key(0x10), Membership::Limited),
            (key(0x20), Membership::Full),
        ]
    );
    assert_eq!(n.stations[1].agent().partition_table(), host.as_slice());
    let master = &n.stations[2].managers()[0].1;
    assert_eq!(master.stats().tables_set, 2, "{:?}", master.stats());
    // Sweeps set nothing again.
    n.run_until(12_000);
    let master = &n.stations[2].managers()[0].1;
    assert_eq!(master.stats().tables_set, 2, "{:?}", master.stats());
    // New partitions: b gone. Only 0x0102's table changes; the router's
    // is set again at no point.
    let q = partitions(
        "Default=0x7fff : ALL_ROUTERS=full, SELF=full ;\n\
         a=0x0010 : 0x0000000000000101=full, 0x0000000000000102 ;\n",
    );
    // 0x0102 does not answer meanwhile: the Set fails, and is tried again
    // at a sweep once it answers.
    n.dead[1] = true;
    n.stations[2].set_partitions(&q);
    n.run_until(13_000);
    let master = &n.stations[2].managers()[0].1;
    assert!(
        master.stats().table_sets_failed >= 1,
        "{:?}",
        master.stats()
    );
    assert_eq!(master.stats().tables_set, 2, "{:?}", master.stats());
    n.dead[1] = false;
    n.run_until(16_000);
    // One line per change: before it was master, no member to set; then
    // one.
    assert_eq!(n.partition_changes, vec![(2, 3, 0), (2, 2, 1)]);
    let master = &n.stations[2].managers()[0].1;
    assert_eq!(master.stats().tables_set, 3, "{:?}", master.stats());
    assert_eq!(
        n.stations[1].agent().partition_table(),
        &[(key(0x10), Membership::Limited)]
    );
    assert_eq!(n.stations[0].agent().partition_table(), router.as_slice());
    // The same partitions again: no event, nothing set.
    n.stations[2].set_partitions(&q);
    n.run_until(18_000);
    assert_eq!(n.partition_changes.len(), 2);
    let master = &n.stations[2].managers()[0].1;
    assert_eq!(master.stats().tables_set, 3, "{:?}", master.stats());
}

#[test]
fn a_router_whose_manager_is_master_answers_the_member_tables_it_checks() {
    use mgmt::attr::PartitionTable;
    let mut n = Net::new(&[(0x0101, None), (0x0102, None)]);
    n.router(0, 1500);
    n.stations[0].add_manager(PortId::new(0), ManagerConfig::new(7, 0x0101), 0);
    n.stations[0].set_partitions(&partitions(
        "Default=0x7fff : ALL_ROUTERS=full, SELF=full ;\n\
         a=0x0010 : 0x0000000000000102=full ;\n",
    ));
    n.run_until(3_000);
    assert_eq!(n.state(0), Some(SmState::Master));
    // What mwtrace asks of the first router: its copy of the source's
    // table, which is its own manager's.
    let copy = |n: &mut Net| {
        let (st, d) = n
            .subn_get(
                1,
                0x0101,
                PartitionTable::ID,
                PartitionTable::modifier(Address(0x0102), 0),
            )
            .unwrap();
        assert_eq!(st, Status::OK);
        PartitionTable::parse(&d).unwrap().entries
    };
    assert_eq!(copy(&mut n), [(key(0x10), Membership::Full)]);
    // Open partitions: the router checks nothing, and keeps none.
    n.stations[0].set_partitions(&Partitions::open());
    assert_eq!(copy(&mut n), []);
}

#[test]
fn a_group_belongs_to_a_partition_and_only_its_members_join() {
    use mgmt::attr::mc_member_record::FULL_MEMBER;
    use mgmt::attr::{McGroupRecord, McMemberRecord};
    let mut n = Net::new(&[
        (0x0101, None),
        (0x0102, None),
        (0x0103, None),
        (0x0104, None),
    ]);
    n.stations[2].add_manager(PortId::new(0), ManagerConfig::new(7, 0x0103), 0);
    n.stations[2].set_partitions(&partitions(
        "Default=0x7fff : ALL=full ;\n\
         t=0x0010 : 0x0000000000000101=full, 0x0000000000000102=limited ;\n",
    ));
    n.run_until(3_000);
    assert_eq!(n.state(2), Some(SmState::Master));
    let (gr, mr) = (McGroupRecord::ID, McMemberRecord::ID);
    let create = |a: &mut [u8]| {
        McGroupRecord {
            group: Address(0x8101),
            partition: 0x0010,
            ..Default::default()
        }
        .emit(a)
        .unwrap()
    };
    let (st, d) = n.sa(0, 0x0103, Method::SET, gr, 0, create).unwrap();
    assert_eq!(st, Status::OK);
    assert_eq!(McGroupRecord::parse(&d).unwrap().partition, 0x0010);
    let join = |partition: u16| {
        move |a: &mut [u8]| {
            McMemberRecord {
                group: Address(0x8101),
                join_state: FULL_MEMBER,
                partition,
                ..Default::default()
            }
            .emit(a)
            .unwrap()
        }
    };
    // A full member and a limited one join; a node outside the partition
    // is refused, and so is a join naming the default partition.
    let (st, d) = n.sa(0, 0x0103, Method::SET, mr, 0, join(0x0010)).unwrap();
    assert_eq!(st, Status::OK);
    assert_eq!(McMemberRecord::parse(&d).unwrap().partition, 0x0010);
    let (st, _) = n.sa(1, 0x0103, Method::SET, mr, 0, join(0x0010)).unwrap();
    assert_eq!(st, Status::OK, "a limited member joins");
    let (st, _) = n.sa(3, 0x0103, Method::SET, mr, 0, join(0x0010)).unwrap();
    assert_eq!(st, Status::MC_NOT_IN_PARTITION);
    let (st, _) = n.sa(3, 0x0103, Method::SET, mr, 0, join(0)).unwrap();
    assert_eq!(st, Status::MC_OTHER_PARTITION);
    let master = &n.stations[2].managers()[0].1;
    assert_eq!(master.stats().mc_not_in_partition, 1);
    assert_eq!(master.stats().mc_refused, 2);
    assert_eq!(master.groups()[&Address(0x8101)].members.len(), 2);
    // The partitions change: 0x0102 is no longer a member of t.
    n.stations[2].set_partitions(&partitions(
        "Default=0x7fff : ALL=full ;\n\
         t=0x0010 : 0x0000000000000101=full ;\n",
    ));
    let master = &n.stations[2].managers()[0].1;
    let members: Vec<Address> = master.groups()[&Address(0x8101)]
        .members
        .keys()
        .copied()
        .collect();
    assert_eq!(members, [Address(0x0101)]);
    assert_eq!(master.stats().mc_partition_removed, 1);
    let (st, _) = n.sa(1, 0x0103, Method::SET, mr, 0, join(0x0010)).unwrap();
    assert_eq!(st, Status::MC_NOT_IN_PARTITION, "and may not join again");
}

#[test]
fn a_standby_station_copies_the_masters_partitions_through_the_agent() {
    let mut n = Net::new(&[(0x0101, None), (0x0102, None), (0x0103, None)]);
    n.stations[1].add_manager(PortId::new(0), ManagerConfig::new(3, 0x0102), 0);
    n.stations[2].add_manager(PortId::new(0), ManagerConfig::new(7, 0x0103), 0);
    let file: String = (1..=12)
        .map(|i| format!("t{i}=0x{:04x} : 0x{:016x}=full ;\n", 0x10 + i, 0x1000 + i))
        .collect();
    let p = partitions(&file);
    assert!(p.to_text().len() > mgmt::attr::partitions_text::CHUNK);
    n.stations[2].set_partitions(&p);
    n.run_until(6_000);
    assert_eq!(n.stations[2].managers()[0].1.state(), SmState::Master);
    let standby = &n.stations[1].managers()[0].1;
    assert_eq!(standby.state(), SmState::Standby);
    assert_eq!(standby.partitions(), &p);
    assert_eq!(standby.partitions_copy().unwrap().master, Address(0x0103));
    assert_eq!(standby.stats().partitions_copied, 1);
}
