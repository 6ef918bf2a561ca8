//! SAN managers in virtual time (docs/manager.md): several managers on one
//! SAN, each with a real management client (TIDs, retries, time-outs),
//! over a network that loses, duplicates, reorders and delays; the
//! election, a failover when the master dies, a handover when a better
//! manager comes back, DISABLE and DISCOVER, the SM key, the standbys'
//! copy of the master's partitions. The invariant checked at every
//! millisecond: never two masters.

use std::collections::BTreeMap;

use mgmt::attr::{PartitionsText, SmInfo};
use mgmt::client::{Client, ClientOutput, Target};
use mgmt::manager::{Control, Manager, ManagerConfig, ManagerOutput, SmState};
use mgmt::partition::Partitions;
use mgmt::wire::{MAD_LEN, Mad, MadRepr, Method, MgmtClass, Status};
use rrp::Address;

/// A seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// How the SAN treats packets.
#[derive(Clone, Copy)]
struct Links {
    loss: f64,
    duplicate: f64,
    /// Delay: 1 ms plus up to this much (reordering when it varies).
    jitter_ms: u64,
}

const CLEAN: Links = Links {
    loss: 0.0,
    duplicate: 0.0,
    jitter_ms: 0,
};

/// A MAD in flight, by (due time, sequence): to (node index), from.
type Flight = BTreeMap<(u64, u64), (usize, Address, Box<[u8; MAD_LEN]>)>;

struct Node {
    address: Address,
    manager: Manager,
    client: Client,
    up: bool,
}

struct San {
    now: u64,
    nodes: Vec<Node>,
    /// In flight: (due, to, from, mad).
    flight: Flight,
    seq: u64,
    links: Links,
    rng: Rng,
    /// Times at which two nodes said they were master.
    two_masters: Vec<u64>,
    /// What a master answers a GetTable of PartitionsText from instead of
    /// its partitions: (version, text).
    served_text: Option<(u64, Vec<u8>)>,
    /// Chunks of PartitionsText answered.
    text_chunks: u64,
}

impl San {
    fn new(managers: &[(u16, u8, u64)], links: Links, seed: u64) -> San {
        San::keyed(
            &managers
                .iter()
                .map(|&(a, p, i)| (a, p, i, 0))
                .collect::<Vec<_>>(),
            links,
            seed,
        )
    }

    /// Managers (address, priority, identity, SM key).
    fn keyed(managers: &[(u16, u8, u64, u64)], links: Links, seed: u64) -> San {
        let nodes: Vec<Node> = managers
            .iter()
            .map(|&(a, prio, id, key)| Node {
                address: Address(a),
                manager: Manager::new(
                    ManagerConfig {
                        sm_key: key,
                        ..cfg(prio, id)
                    },
                    0,
                ),
                client: Client::new(u32::from(a)),
                up: true,
            })
            .collect();
        let mut s = San {
            now: 0,
            nodes,
            flight: BTreeMap::new(),
            seq: 0,
            links,
            rng: Rng(seed | 1),
            two_masters: Vec::new(),
            served_text: None,
            text_chunks: 0,
        };
        s.set_members();
        s
    }

    fn set_members(&mut self) {
        let all: Vec<Address> = self.nodes.iter().map(|n| n.address).collect();
        for n in &mut self.nodes {
            let others = all.iter().copied().filter(|a| *a != n.address).collect();
            n.manager.set_members(others);
        }
    }

    fn index(&self, a: Address) -> Option<usize> {
        self.nodes.iter().position(|n| n.address == a)
    }

    fn send(&mut self, to: Address, from: usize, mad: Box<[u8; MAD_LEN]>) {
        let Some(to) = self.index(to) else { return };
        let copies = if self.rng.chance(self.links.duplicate) {
            2
        } else {
            1
        };
        for _ in 0..copies {
            if self.rng.chance(self.links.loss) {
                continue;
            }
            let jitter = if self.links.jitter_ms > 0 {
                self.rng.next() % (self.links.jitter_ms + 1)
            } else {
                0
            };
            self.seq += 1;
            let from_addr = self.nodes[from].address;
            self.flight.insert(
                (self.now + 1 + jitter, self.seq),
                (to, from_addr, mad.clone()),
            );
        }
    }

    /// Runs node `i`'s manager and client outputs.
    fn drain(&mut self, i: usize) {
        loop {
            let mut moved = false;
            while let Some(o) = self.nodes[i].manager.poll_output() {
                moved = true;
                if let ManagerOutput::Request { id, request } = o {
                    let now = self.now;
                    self.nodes[i].client.start(now, id, request);
                }
            }
            for o in self.nodes[i].client.take_outputs() {
                moved = true;
                match o {
                    ClientOutput::Route { dst, mad } => self.send(dst, i, mad),
                    ClientOutput::Done { id, result } => {
                        let now = self.now;
                        self.nodes[i].manager.on_answer(now, id, result);
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            if !moved {
                break;
            }
        }
    }

    /// A MAD arrives at node `to` from `from`.
    fn arrive(&mut self, to: usize, from: Address, mad: &[u8; MAD_LEN]) {
        if !self.nodes[to].up {
            return;
        }
        let Ok(r) = Mad::new_checked(&mad[..]).and_then(|m| MadRepr::parse(&m)) else {
            return;
        };
        let now = self.now;
        if r.response {
            self.nodes[to].client.on_response(now, from, &mad[..]);
            self.drain(to);
            return;
        }
        if r.class == MgmtClass::SUBN_ADM
            && r.method == Method::GET_TABLE
            && r.attribute == PartitionsText::ID
            && self.nodes[to].manager.state() == SmState::Master
        {
            // A master's partitions, as its node's agent answers.
            let offset = PartitionsText::parse(&r.data).unwrap().offset;
            let chunk = match &self.served_text {
                Some((v, t)) => PartitionsText::chunk_of(t, *v, offset),
                None => self.nodes[to].manager.partitions_text(offset),
            };
            self.text_chunks += 1;
            let mut data = vec![0u8; 192];
            chunk.emit(&mut data).unwrap();
            let resp = MadRepr {
                data,
                ..r.response(Status::OK)
            };
            self.send(from, to, Box::new(resp.to_bytes().unwrap()));
            return;
        }
        if r.attribute != SmInfo::ID {
            // This SAN's nodes answer SMInfo (and a master its partitions)
            // only.
            let resp = r.response(Status::METHOD_ATTR_UNSUPPORTED);
            let bytes = Box::new(resp.to_bytes().unwrap());
            self.send(from, to, bytes);
            return;
        }
        let info = SmInfo::parse(&r.data).unwrap_or_default();
        let answer = match r.method {
            Method::GET => Ok(self.nodes[to].manager.sm_info(info.sm_key)),
            Method::SET => self.nodes[to]
                .manager
                .on_control(now, from, r.modifier, &info),
            _ => return,
        };
        let mut resp = match answer {
            Ok(i) => {
                let mut data = vec![0u8; 64];
                i.emit(&mut data).unwrap();
                MadRepr {
                    data,
                    ..r.response(Status::OK)
                }
            }
            Err(st) => r.response(st),
        };
        resp.response = true;
        let bytes = Box::new(resp.to_bytes().unwrap());
        self.send(from, to, bytes);
        self.drain(to);
    }

    /// Runs until `t`, one millisecond at a time, checking the invariant.
    fn run_until(&mut self, t: u64) {
        while self.now < t {
            self.now += 1;
            let now = self.now;
            while let Some((&k, _)) = self.flight.iter().next() {
                if k.0 > now {
                    break;
                }
                let (to, from, mad) = self.flight.remove(&k).unwrap();
                self.arrive(to, from, &mad);
            }
            for i in 0..self.nodes.len() {
                if !self.nodes[i].up {
                    continue;
                }
                self.nodes[i].client.on_timer(now);
                self.nodes[i].manager.on_timer(now);
                self.drain(i);
            }
            if self.masters().len() > 1 {
                self.two_masters.push(now);
            }
        }
    }

    fn masters(&self) -> Vec<Address> {
        self.nodes
            .iter()
            .filter(|n| n.up && n.manager.state() == SmState::Master)
            .map(|n| n.address)
            .collect()
    }

    fn state_of(&self, a: u16) -> SmState {
        self.nodes[self.index(Address(a)).unwrap()].manager.state()
    }

    /// Runs until the SAN has exactly one master and every other running
    /// manager is standby; the time it took.
    fn until_settled(&mut self, limit: u64) -> u64 {
        let t0 = self.now;
        while self.now < t0 + limit {
            self.run_until(self.now + 10);
            let ups: Vec<&Node> = self.nodes.iter().filter(|n| n.up).collect();
            let masters = self.masters().len();
            let standbys = ups
                .iter()
                .filter(|n| n.manager.state() == SmState::Standby)
                .count();
            if masters == 1 && standbys == ups.len() - 1 {
                return self.now - t0;
            }
        }
        panic!(
            "not settled in {limit} ms: {:?}",
            self.nodes
                .iter()
                .map(|n| (n.address, n.up, n.manager.state()))
                .collect::<Vec<_>>()
        );
    }

    fn kill(&mut self, a: u16) {
        let i = self.index(Address(a)).unwrap();
        self.nodes[i].up = false;
    }

    /// A node comes back as a new process: a fresh manager and client.
    fn restart(&mut self, a: u16, prio: u8, id: u64) {
        let i = self.index(Address(a)).unwrap();
        let now = self.now;
        self.nodes[i] = Node {
            address: Address(a),
            manager: Manager::new(cfg(prio, id), now),
            client: Client::new(u32::from(a) ^ 0x8000_0000),
            up: true,
        };
        self.set_members();
    }
}

fn cfg(prio: u8, id: u64) -> ManagerConfig {
    ManagerConfig::new(prio, id)
}

/// The SM key of the tests' protected SANs.
const KEY: u64 = 0x5EC2E7;

/// The bound of an election from cold: two discovery rounds, each waiting
/// at most every try of its probes, and the rounds' spacing.
fn election_bound(c: &ManagerConfig) -> u64 {
    let probe = c.timers.timeout_ms * u64::from(c.timers.retries + 1);
    2 * (probe + c.timers.discover_ms) + probe
}

#[test]
fn the_highest_priority_with_the_lowest_identity_is_master() {
    // Priorities 3, 7, 7: the 7 with identity 0x20 (lower than 0x30).
    let mut san = San::new(
        &[(0x0101, 3, 0x10), (0x0102, 7, 0x30), (0x0103, 7, 0x20)],
        CLEAN,
        1,
    );
    let bound = election_bound(&cfg(0, 0));
    let t = san.until_settled(bound + 100);
    assert!(t <= bound, "settled in {t} ms, bound {bound}");
    assert_eq!(san.masters(), vec![Address(0x0103)]);
    assert_eq!(san.state_of(0x0101), SmState::Standby);
    assert_eq!(san.state_of(0x0102), SmState::Standby);
    // It stays so, sweeping.
    san.run_until(san.now + 5_000);
    assert_eq!(san.masters(), vec![Address(0x0103)]);
    let m = &san.nodes[2].manager;
    assert!(m.stats().sweeps >= 4, "{:?}", m.stats());
    assert!(san.two_masters.is_empty());
}

#[test]
fn a_standby_takes_over_when_the_master_dies_and_the_old_master_takes_back() {
    for seed in 1..=8 {
        let lossy = Links {
            loss: 0.1,
            duplicate: 0.05,
            jitter_ms: 3,
        };
        let mut san = San::new(
            &[(0x0101, 3, 0x10), (0x0102, 7, 0x30), (0x0103, 7, 0x20)],
            lossy,
            seed,
        );
        san.until_settled(10_000);
        assert_eq!(san.masters(), vec![Address(0x0103)], "seed {seed}");
        // The master dies: the 7 with identity 0x30 takes over within the
        // polls and one discovery.
        san.kill(0x0103);
        let c = cfg(0, 0);
        let bound = c.timers.poll_ms * u64::from(c.timers.poll_misses + 1) + election_bound(&c);
        let t = san.until_settled(bound + 2_000);
        assert!(t <= bound, "seed {seed}: failover in {t} ms, bound {bound}");
        assert_eq!(san.masters(), vec![Address(0x0102)], "seed {seed}");
        // It comes back: it outranks the new master, which hands over.
        san.restart(0x0103, 7, 0x20);
        san.run_until(san.now + 10_000);
        assert_eq!(san.masters(), vec![Address(0x0103)], "seed {seed}");
        assert_eq!(san.state_of(0x0102), SmState::Standby);
        assert!(
            san.nodes[1].manager.stats().handovers_given >= 1,
            "seed {seed}: {:?}",
            san.nodes[1].manager.stats()
        );
        // A lower priority coming back stays standby.
        san.kill(0x0101);
        san.run_until(san.now + 3_000);
        san.restart(0x0101, 3, 0x10);
        san.run_until(san.now + 5_000);
        assert_eq!(san.masters(), vec![Address(0x0103)], "seed {seed}");
        assert_eq!(san.state_of(0x0101), SmState::Standby, "seed {seed}");
        assert!(
            san.two_masters.is_empty(),
            "seed {seed}: two masters at {:?}",
            &san.two_masters[..san.two_masters.len().min(5)]
        );
    }
}

#[test]
fn disable_and_discover() {
    let mut san = San::new(&[(0x0101, 3, 0x10), (0x0102, 7, 0x30)], CLEAN, 2);
    san.until_settled(5_000);
    assert_eq!(san.masters(), vec![Address(0x0102)]);
    // DISABLE the standby: not active, and it stays so.
    let now = san.now;
    let info = SmInfo::default();
    san.nodes[0]
        .manager
        .on_control(now, Address(0x0102), Control::Disable as u32, &info)
        .unwrap();
    san.run_until(san.now + 5_000);
    assert_eq!(san.state_of(0x0101), SmState::NotActive);
    // The master dies: a not-active manager does not take over.
    san.kill(0x0102);
    san.run_until(san.now + 10_000);
    assert!(san.masters().is_empty());
    // DISCOVER: it discovers, finds no one, and is master.
    let now = san.now;
    san.nodes[0]
        .manager
        .on_control(now, Address(0x0102), Control::Discover as u32, &info)
        .unwrap();
    san.run_until(san.now + 2_000);
    assert_eq!(san.masters(), vec![Address(0x0101)]);
}

#[test]
fn control_needs_the_sm_key_and_sm_info_hides_it() {
    let mut c = cfg(5, 0x40);
    c.sm_key = 0xABCD;
    let mut m = Manager::new(c, 0);
    let rogue = SmInfo {
        sm_key: 0x1111,
        ..SmInfo::default()
    };
    assert_eq!(
        m.on_control(1, Address(0x0199), Control::Disable as u32, &rogue),
        Err(Status::INVALID_VALUE)
    );
    assert_eq!(m.state(), SmState::Discovering);
    assert_eq!(m.stats().controls_refused, 1);
    assert_eq!(m.sm_info(0).sm_key, 0, "hidden without the key");
    assert_eq!(m.sm_info(0xABCD).sm_key, 0xABCD);
    let keyed = SmInfo {
        sm_key: 0xABCD,
        ..SmInfo::default()
    };
    assert!(
        m.on_control(1, Address(0x0199), Control::Disable as u32, &keyed)
            .is_ok()
    );
    assert_eq!(m.state(), SmState::NotActive);
    assert_eq!(
        m.on_control(1, Address(0x0199), 9, &keyed),
        Err(Status::INVALID_VALUE),
        "no such control"
    );
    // Requests carry the key (Target by address, SMInfo).
    let mut m = Manager::new(
        ManagerConfig {
            sm_key: 0xABCD,
            ..cfg(5, 0x40)
        },
        0,
    );
    m.set_members(vec![Address(0x0102)]);
    m.on_timer(0);
    let req = std::iter::from_fn(|| m.poll_output())
        .find_map(|o| match o {
            ManagerOutput::Request { request, .. } => Some(request),
            _ => None,
        })
        .unwrap();
    assert_eq!(req.target, Target::Address(Address(0x0102)));
    assert_eq!(SmInfo::parse(&req.data).unwrap().sm_key, 0xABCD);
}

#[test]
fn a_manager_without_the_sm_key_takes_nothing_over() {
    // Two managers with the SAN's key (priorities 5 and 3), and a rogue
    // with priority 15 and no key.
    let mut san = San::keyed(
        &[
            (0x0101, 5, 0x10, KEY),
            (0x0102, 3, 0x20, KEY),
            (0x0103, 15, 0x01, 0),
        ],
        CLEAN,
        3,
    );
    san.run_until(5_000);
    // The keyed manager that ranks best is master: the rogue outranks it
    // but gets no handover, and its control Sets are refused.
    assert!(
        san.masters().contains(&Address(0x0101)),
        "{:?}",
        san.masters()
    );
    assert_eq!(san.state_of(0x0102), SmState::Standby);
    assert_eq!(san.nodes[0].manager.stats().handovers_given, 0);
    let rogue = SmInfo {
        sm_key: 0,
        ..SmInfo::default()
    };
    let now = san.now;
    assert!(
        san.nodes[0]
            .manager
            .on_control(now, Address(0x0103), Control::Disable as u32, &rogue)
            .is_err()
    );
    // The keyed master dies: the keyed standby takes over, not the rogue's
    // say.
    san.kill(0x0101);
    san.run_until(san.now + 10_000);
    assert_eq!(san.state_of(0x0102), SmState::Master);
    // A keyed manager that outranks the master is handed over to.
    san.restart(0x0101, 5, 0x10);
    let i = san.index(Address(0x0101)).unwrap();
    san.nodes[i].manager = Manager::new(
        ManagerConfig {
            sm_key: KEY,
            ..cfg(5, 0x10)
        },
        san.now,
    );
    san.set_members();
    san.run_until(san.now + 10_000);
    assert_eq!(san.state_of(0x0101), SmState::Master);
    assert_eq!(san.state_of(0x0102), SmState::Standby);
}

/// A partitions file larger than one PartitionsText record.
const FILE: &str = "Default=0x7fff : ALL=limited, SELF=full ;\n\
    tenant_a=0x0010 : 0x0000000000001001=full, 0x0000000000001002, 0x0000000000001003 ;\n\
    tenant_b=0x0020 : 0x0000000000002001=full, 0x0000000000002002, ALL_ROUTERS=full ;\n\
    tenant_c=0x0030, defmember=full : 0x0000000000003001, 0x0000000000003002 ;\n\
    tenant_e=0x0031 : 0x0000000000003101=full, 0x0000000000003102, 0x0000000000003103 ;\n";

fn parsed(text: &str) -> Partitions {
    mgmt::partition::parse(text).unwrap()
}

/// A SAN of three managers, 0x0103 master with `FILE`, the others without
/// a file, settled.
fn san_with_a_file(links: Links, seed: u64) -> San {
    let mut san = San::new(
        &[(0x0101, 3, 0x10), (0x0102, 7, 0x30), (0x0103, 7, 0x20)],
        links,
        seed,
    );
    san.nodes[2].manager.set_partitions(parsed(FILE));
    san.until_settled(10_000);
    assert_eq!(san.masters(), vec![Address(0x0103)]);
    san
}

/// Enough time for a standby's poll and a copy after it.
fn a_poll(san: &San) -> u64 {
    let t = san.nodes[0].manager.config().timers;
    t.poll_ms + 4 * t.timeout_ms * u64::from(t.retries + 1)
}

#[test]
fn standbys_copy_the_masters_partitions_over_several_mads() {
    assert!(parsed(FILE).to_text().len() > 2 * mgmt::attr::partitions_text::CHUNK);
    for (links, seed) in [
        (CLEAN, 1),
        (
            Links {
                loss: 0.1,
                duplicate: 0.05,
                jitter_ms: 3,
            },
            5,
        ),
    ] {
        let mut san = san_with_a_file(links, seed);
        let wait = a_poll(&san);
        san.run_until(san.now + 3 * wait);
        let want = parsed(FILE);
        for i in 0..2 {
            let m = &san.nodes[i].manager;
            assert_eq!(m.state(), SmState::Standby);
            assert_eq!(m.partitions(), &want, "seed {seed}: node {i}");
            let c = m.partitions_copy().expect("a copy");
            assert_eq!(c.master, Address(0x0103));
            assert_eq!(c.version, want.version());
            assert_eq!(m.own_partitions(), &Partitions::open());
            assert_eq!(
                m.stats().partitions_copied,
                1,
                "seed {seed}: {:?}",
                m.stats()
            );
        }
        // Current: later polls read one chunk each, and copy nothing again.
        let chunks = san.text_chunks;
        let polls = |san: &San| -> u64 { (0..2).map(|i| san.nodes[i].manager.stats().polls).sum() };
        let polls_before = polls(&san);
        san.run_until(san.now + 5 * wait);
        for i in 0..2 {
            assert_eq!(san.nodes[i].manager.stats().partitions_copied, 1);
        }
        let (c, p) = (san.text_chunks - chunks, polls(&san) - polls_before);
        // One chunk a poll (twice when a lost answer is asked again); a
        // whole copy would be 3 a poll.
        assert!(
            p >= 4 && c <= 2 * p && c < 3 * p,
            "{c} chunks for {p} polls"
        );
        assert!(san.two_masters.is_empty());
    }
}

#[test]
fn a_change_at_the_master_reaches_the_standbys() {
    let mut san = san_with_a_file(CLEAN, 2);
    let wait = a_poll(&san);
    san.run_until(san.now + 2 * wait);
    let changed = parsed(&format!(
        "{FILE}tenant_d=0x0040 : 0x0000000000004001=full ;\n"
    ));
    san.nodes[2].manager.set_partitions(changed.clone());
    san.run_until(san.now + 2 * wait);
    for i in 0..2 {
        let m = &san.nodes[i].manager;
        assert_eq!(m.partitions(), &changed);
        assert_eq!(m.partitions_copy().unwrap().version, changed.version());
        assert_eq!(m.stats().partitions_copied, 2);
    }
    // Back to no file at the master: the default partition reaches them too.
    san.nodes[2].manager.set_partitions(Partitions::open());
    san.run_until(san.now + 2 * wait);
    assert_eq!(san.nodes[0].manager.partitions(), &Partitions::open());
}

#[test]
fn a_standby_promoted_gives_the_copy_until_its_own_file_is_read_again() {
    let mut san = san_with_a_file(CLEAN, 3);
    // 0x0102's box has a file of its own, different.
    let own = parsed("Default=0x7fff : ALL=full ;\nmine=0x0050 : 0x0000000000005001 ;\n");
    san.nodes[1].manager.set_partitions(own.clone());
    let wait = a_poll(&san);
    san.run_until(san.now + 2 * wait);
    // A standby's file read again: the copy stays in force.
    san.nodes[1].manager.set_partitions(own.clone());
    let m = &san.nodes[1].manager;
    assert_eq!(m.partitions(), &parsed(FILE));
    assert_eq!(m.own_partitions(), &own);
    // The master dies: 0x0102 takes over and gives the master's partitions.
    san.kill(0x0103);
    san.until_settled(20_000);
    assert_eq!(san.masters(), vec![Address(0x0102)]);
    let m = &san.nodes[1].manager;
    assert_eq!(m.partitions(), &parsed(FILE));
    assert_eq!(m.partitions_copy().unwrap().master, Address(0x0103));
    // 0x0101, standby of the new master, holds the same, copied nothing new.
    san.run_until(san.now + 2 * wait);
    let s = &san.nodes[0].manager;
    assert_eq!(s.partitions(), &parsed(FILE));
    assert_eq!(s.stats().partitions_copied, 1);
    // The new master's box reads its file again: its own partitions, and
    // the standby follows.
    san.nodes[1].manager.set_partitions(own.clone());
    assert_eq!(san.nodes[1].manager.partitions(), &own);
    assert!(san.nodes[1].manager.partitions_copy().is_none());
    san.run_until(san.now + 2 * wait);
    assert_eq!(san.nodes[0].manager.partitions(), &own);
    assert!(san.two_masters.is_empty());
}

#[test]
fn a_copy_that_does_not_parse_is_refused_whole_and_counted_once() {
    let mut san = san_with_a_file(CLEAN, 4);
    let wait = a_poll(&san);
    san.run_until(san.now + 2 * wait);
    // The master serves a text longer than a record whose last line is
    // wrong (a key above 0x7fff).
    let mut broken = FILE.as_bytes().to_vec();
    broken.extend_from_slice(b"x=0x8000 : ALL ;\n");
    let v = mgmt::partition::file::text_version(&broken);
    san.served_text = Some((v, broken));
    san.run_until(san.now + 4 * wait);
    for i in 0..2 {
        let m = &san.nodes[i].manager;
        assert_eq!(m.partitions(), &parsed(FILE), "the copy held stays");
        assert_eq!(m.stats().partitions_copy_refused, 1, "{:?}", m.stats());
        assert_eq!(m.stats().partitions_copied, 1);
    }
    // A text that is not of the version announced, nor is bad UTF-8 taken.
    san.served_text = Some((v ^ 1, FILE.as_bytes().to_vec()));
    san.run_until(san.now + 2 * wait);
    san.served_text = Some((7, vec![0xff; 10]));
    san.run_until(san.now + 2 * wait);
    let m = &san.nodes[0].manager;
    assert_eq!(m.stats().partitions_copy_refused, 3, "{:?}", m.stats());
    assert_eq!(m.partitions(), &parsed(FILE));
    // Too large: refused at the first chunk.
    let huge = mgmt::partition::file::MAX_FILE_BYTES as u32 + 1;
    let before = san.text_chunks;
    san.served_text = Some((8, vec![b'#'; huge as usize]));
    san.run_until(san.now + 2 * wait);
    assert_eq!(san.nodes[0].manager.stats().partitions_copy_refused, 4);
    assert!(san.text_chunks - before < 10);
}
