//! The agent and the client together on a small network of fake nodes
//! (docs/management.md "The agent", "Client"): a host R, routers A and B, and
//! a manager M, linked R.0 - A.0, A.1 - B.0, B.1 - M.0.
//!
//! Packets are delivered by a tiny harness: a `Send` goes to the node at
//! the other end of the egress port's link, a `Route` (L3) straight to the
//! node owning the destination address.

use std::collections::VecDeque;

use mgmt::agent::{
    ANSWERS_GLOBAL, ANSWERS_PER_SOURCE, Agent, AgentConfig, Incoming, LrtItem, Managed, NodeType,
    Output, PortFacts, STATUS_MKEY,
};
use mgmt::attr::{
    LrtBlock, NodeDescription, NodeInfo, Notice, PartitionTable, PortCounters,
    PortCountersExtended, PortInfo, lrt_block,
};
use mgmt::client::{Client, ClientOutput, Failure, Request, Target};
use mgmt::partition::{Membership, PartitionKey};
use mgmt::wire::{DrRoute, MAD_LEN, Mad, MadRepr, Method, MgmtClass, PathHop, Status};
use rrp::router::{AuthRefusal, FibEntry};
use rrp::{Address, NativeAddr, PortId};

const KEY: u64 = 0x0123_4567_89AB_CDEF;

#[derive(Debug, Default)]
struct Fake {
    ports: Vec<PortFacts>,
    counters: Vec<Vec<u64>>,
    /// The link's counters per port (none: a node that does not count them).
    link: Vec<Vec<u64>>,
    name: String,
    /// Calls of the change methods, in order.
    changes: Vec<String>,
}

impl Managed for Fake {
    fn ports(&self) -> usize {
        self.ports.len()
    }
    fn port(&self, port: PortId) -> Option<PortFacts> {
        self.ports.get(port.index()).cloned()
    }
    fn counters(&self, port: PortId) -> Option<Vec<u64>> {
        self.counters.get(port.index()).cloned()
    }
    fn link_counters(&self, port: PortId) -> Option<Vec<u64>> {
        self.link.get(port.index()).cloned()
    }
    fn route(&self, _port: PortId, _dst: Address) -> Option<FibEntry> {
        None
    }
    fn lrt(&self, port: PortId) -> Vec<LrtItem> {
        // Port p knows 20 + p addresses, every third a router.
        (0..20 + port.index() as u16)
            .map(|i| LrtItem {
                address: Address(0x0200 + i),
                router: i % 3 == 0,
                is_static: i == 1,
                missed: (i % 4) as u8,
            })
            .collect()
    }
    fn set_port_up(&mut self, port: PortId, up: bool) -> Result<(), Status> {
        self.ports[port.index()].up = up;
        self.changes.push(format!("port {} up {up}", port.index()));
        Ok(())
    }
    fn set_mtu(&mut self, port: PortId, mtu: u32) -> Result<(), Status> {
        self.ports[port.index()].mtu = mtu;
        self.changes
            .push(format!("port {} mtu {mtu}", port.index()));
        Ok(())
    }
    fn set_cost(&mut self, port: PortId, cost: u16) -> Result<(), Status> {
        self.ports[port.index()].cost = cost;
        self.changes
            .push(format!("port {} cost {cost}", port.index()));
        Ok(())
    }
    fn clear_counters(&mut self, port: PortId) -> Result<(), Status> {
        self.counters[port.index()].iter_mut().for_each(|c| *c = 0);
        if let Some(l) = self.link.get_mut(port.index()) {
            l.iter_mut().for_each(|c| *c = 0);
        }
        self.changes.push(format!("port {} clear", port.index()));
        Ok(())
    }
    fn set_name(&mut self, name: &str) {
        self.name = name.to_string();
        self.changes.push(format!("name {name}"));
    }
}

fn native(node: u8, port: u8) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, node, port])
}

fn port(node: u8, port: u8, address: u16) -> PortFacts {
    PortFacts {
        address: Address(address),
        san_id: Address(address & 0xFF00),
        mtu: 1500,
        cost: 1,
        up: true,
        link_kind: 2,
        native: native(node, port),
        lrt_entries: 20 + u16::from(port),
        buddies: 7,
    }
}

struct Node {
    fake: Fake,
    agent: Agent,
    client: Client,
}

/// Where a packet was seen going, for assertions on paths.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hop {
    from: usize,
    to: usize,
    dst: Address,
}

struct Net {
    nodes: Vec<Node>,
    /// (node, port) <-> (node, port).
    links: Vec<((usize, usize), (usize, usize))>,
    now: u64,
    queue: VecDeque<(usize, Incoming<'static>)>,
    hops: Vec<Hop>,
    done: Vec<(u64, Result<mgmt::client::Answer, Failure>)>,
    /// Drop every packet to this node (to test time-outs).
    black_hole: Option<usize>,
    /// A node whose packets are all lost (it hears, nobody hears it).
    mute: Option<usize>,
}

const R: usize = 0;
const A: usize = 1;
const B: usize = 2;
const M: usize = 3;

fn net(protect: u8) -> Net {
    let ids = [0x10u64, 0xA0, 0xB0, 0x40];
    let specs: [(NodeType, &[u16]); 4] = [
        (NodeType::Host, &[0x0101]),
        (NodeType::Router, &[0x0140, 0x0240]),
        (NodeType::Router, &[0x0241, 0x0341]),
        (NodeType::Host, &[0x0301]),
    ];
    let nodes = specs
        .iter()
        .enumerate()
        .map(|(i, (ty, addrs))| {
            let ports: Vec<PortFacts> = addrs
                .iter()
                .enumerate()
                .map(|(p, a)| port(i as u8, p as u8, *a))
                .collect();
            let counters = ports
                .iter()
                .enumerate()
                .map(|(p, _)| {
                    (0..PortCounters::COUNT as u64)
                        .map(|c| c + 100 * p as u64)
                        .collect()
                })
                .collect();
            // Routers count their links; hosts here do not.
            let link = match ty {
                NodeType::Router => (0..ports.len() as u64)
                    .map(|p| {
                        (0..PortCountersExtended::COUNT as u64)
                            .map(|c| 1000 * (c + 1) + p)
                            .collect()
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let mut cfg = AgentConfig::new(*ty, ids[i], &format!("node {i}"));
            if i != M {
                cfg.manager = Address(0x0301);
                cfg.mkey = KEY;
                cfg.protect = protect;
            }
            Node {
                fake: Fake {
                    ports,
                    counters,
                    link,
                    name: format!("node {i}"),
                    changes: Vec::new(),
                },
                agent: Agent::new(cfg, 0),
                client: Client::new(0x5000 + i as u32),
            }
        })
        .collect();
    Net {
        nodes,
        links: vec![((R, 0), (A, 0)), ((A, 1), (B, 0)), ((B, 1), (M, 0))],
        now: 0,
        queue: VecDeque::new(),
        hops: Vec::new(),
        done: Vec::new(),
        black_hole: None,
        mute: None,
    }
}

fn leak(mad: Box<[u8; MAD_LEN]>) -> &'static [u8] {
    Box::leak(mad)
}

impl Net {
    fn peer(&self, node: usize, port: usize) -> (usize, usize) {
        for (a, b) in &self.links {
            if *a == (node, port) {
                return *b;
            }
            if *b == (node, port) {
                return *a;
            }
        }
        panic!("node {node} port {port} has no link");
    }

    fn owner(&self, dst: Address) -> (usize, usize) {
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(p) = n.fake.ports.iter().position(|f| f.address == dst) {
                return (i, p);
            }
        }
        panic!("nobody has {dst}");
    }

    /// A packet from `from` (port `fport`) to the node at the other end.
    fn deliver(
        &mut self,
        from: usize,
        fport: usize,
        to: (usize, usize),
        dst: Address,
        mad: &'static [u8],
    ) {
        let src = self.nodes[from].fake.ports[fport].address;
        let native = self.nodes[from].fake.ports[fport].native;
        self.hops.push(Hop {
            from,
            to: to.0,
            dst,
        });
        if self.black_hole == Some(to.0) || self.mute == Some(from) {
            return;
        }
        self.queue.push_back((
            to.0,
            Incoming {
                port: PortId::new(to.1),
                native,
                src,
                dst,
                mad,
            },
        ));
    }

    fn drain(&mut self, i: usize) {
        while let Some(o) = self.nodes[i].agent.poll_output() {
            match o {
                Output::Send {
                    port,
                    native,
                    dst,
                    mad,
                } if dst == Address::HEY_YOU => {
                    let to = self.peer(i, port.index());
                    assert_eq!(
                        self.nodes[to.0].fake.ports[to.1].native, native,
                        "native of the peer"
                    );
                    self.deliver(i, port.index(), to, dst, leak(mad));
                }
                // An L3 answer goes to the previous hop, which routes it:
                // the harness takes it straight to its destination.
                Output::Send { port, dst, mad, .. } => {
                    let to = self.owner(dst);
                    self.deliver(i, port.index(), to, dst, leak(mad));
                }
                Output::Route { dst, mad } => {
                    let to = self.owner(dst);
                    self.deliver(i, 0, to, dst, leak(mad));
                }
                Output::ToClient { from, mad } => {
                    let now = self.now;
                    self.nodes[i].client.on_response(now, from, &mad[..]);
                }
                Output::Event(_) => {}
            }
        }
        for o in self.nodes[i].client.take_outputs() {
            match o {
                ClientOutput::Route { dst, mad } => {
                    let to = self.owner(dst);
                    self.deliver(i, 0, to, dst, leak(mad));
                }
                ClientOutput::Send { port, native, mad } => {
                    let to = self.peer(i, port.index());
                    assert_eq!(self.nodes[to.0].fake.ports[to.1].native, native);
                    self.deliver(i, port.index(), to, Address::HEY_YOU, leak(mad));
                }
                ClientOutput::Done { id, result } => self.done.push((id, result)),
                // Carried by the lab's dataplane (tools/mwlab/tests/trace.rs).
                ClientOutput::SourceRoute { .. } => {
                    panic!("the fake network carries no L2 source routes")
                }
            }
        }
    }

    /// Delivers until nothing moves.
    fn run(&mut self) {
        for i in 0..self.nodes.len() {
            self.drain(i);
        }
        while let Some((i, input)) = self.queue.pop_front() {
            let now = self.now;
            let n = &mut self.nodes[i];
            n.agent.handle(now, &mut n.fake, input);
            self.drain(i);
        }
    }

    /// Advances the clock to `t`, running timers on the way.
    fn advance(&mut self, t: u64) {
        loop {
            let next = self
                .nodes
                .iter()
                .map(|n| n.agent.next_timer().min(n.client.next_timer()))
                .min()
                .unwrap_or(u64::MAX);
            if next > t {
                break;
            }
            self.now = self.now.max(next);
            for i in 0..self.nodes.len() {
                let now = self.now;
                let n = &mut self.nodes[i];
                n.agent.on_timer(now, &n.fake);
                n.client.on_timer(now);
                self.drain(i);
            }
            self.run();
        }
        self.now = t;
    }

    fn ask(&mut self, from: usize, req: Request) -> Result<mgmt::client::Answer, Failure> {
        let id = self.done.len() as u64 + 1000;
        let now = self.now;
        self.nodes[from].client.start(now, id, req);
        self.run();
        if !self.done.iter().any(|(i, _)| *i == id) {
            self.advance(self.now + 60_000);
        }
        let at = self
            .done
            .iter()
            .position(|(i, _)| *i == id)
            .expect("finished");
        self.done.remove(at).1
    }
}

fn get(target: Target, class: MgmtClass, attribute: u16, modifier: u32) -> Request {
    Request {
        target,
        class,
        method: Method::GET,
        attribute,
        modifier,
        mkey: 0,
        data: Vec::new(),
        timeout_ms: 200,
        retries: 2,
    }
}

fn to(a: u16) -> Target {
    Target::Address(Address(a))
}

/// R's directed route to B: out of R.0 to A.0, out of A.1 to B.0.
fn dr_to_b() -> Target {
    Target::Directed {
        port: PortId::new(0),
        path: vec![
            PathHop {
                hr: Address(0x0101),
                native: native(A as u8, 0),
            },
            PathHop {
                hr: Address(0x0240),
                native: native(B as u8, 0),
            },
        ],
    }
}

fn port_info(a: &mgmt::client::Answer) -> PortInfo {
    PortInfo::parse(&a.mad.data).expect("PortInfo")
}

#[test]
fn nodeinfo_by_address_and_by_directed_route() {
    let mut n = net(0);
    let a = n
        .ask(R, get(to(0x0241), MgmtClass::SUBN, NodeInfo::ID, 0))
        .expect("answered");
    assert_eq!(a.mad.status, Status::OK);
    assert_eq!(a.mad.method, Method::GET_RESP);
    assert_eq!(a.from, Address(0x0241));
    let info = NodeInfo::parse(&a.mad.data).unwrap();
    assert_eq!(info.node_identity, 0xB0);
    assert_eq!(info.node_type, NodeInfo::ROUTER);
    assert_eq!(info.num_ports, 2);
    assert_eq!(info.local_port_num, 0);
    assert_eq!(info.local_port_address, Address(0x0241));

    n.hops.clear();
    let a = n
        .ask(R, get(dr_to_b(), MgmtClass::SUBN_DR, NodeInfo::ID, 0))
        .expect("answered");
    assert_eq!(NodeInfo::parse(&a.mad.data).unwrap().node_identity, 0xB0);
    // Hop by hop, Hey-You each time: R -> A -> B -> A -> R.
    let path: Vec<(usize, usize)> = n.hops.iter().map(|h| (h.from, h.to)).collect();
    assert_eq!(path, [(R, A), (A, B), (B, A), (A, R)]);
    assert!(n.hops.iter().all(|h| h.dst == Address::HEY_YOU));
    let dr = a.mad.dr.as_ref().unwrap();
    assert!(dr.returning);
    assert_eq!(dr.hop_pointer, 0);
    assert_eq!(dr.hop_count, 2);
    // The ReturnPath: A's HR it arrived on and R's native; B's and A's.
    assert_eq!(
        dr.ret,
        [
            PathHop {
                hr: Address(0x0140),
                native: native(R as u8, 0)
            },
            PathHop {
                hr: Address(0x0241),
                native: native(A as u8, 1)
            },
        ]
    );
    assert_eq!(n.nodes[A].agent.stats().relayed, 2);
    assert_eq!(n.nodes[B].agent.stats().answered, 2);
}

#[test]
fn a_directed_route_that_does_not_fit_is_dropped_and_counted() {
    let mut n = net(0);
    let Target::Directed { port, mut path } = dr_to_b() else {
        unreachable!()
    };
    // A has no HR 0x0999 to leave by.
    path[1].hr = Address(0x0999);
    let r = n.ask(
        R,
        get(
            Target::Directed { port, path },
            MgmtClass::SUBN_DR,
            NodeInfo::ID,
            0,
        ),
    );
    assert_eq!(r, Err(Failure::Timeout { tries: 3 }));
    assert_eq!(n.nodes[A].agent.stats().bad_path, 3);
    assert_eq!(n.nodes[B].agent.stats().received, 0);
}

#[test]
fn every_attribute_of_a_router() {
    let mut n = net(0);
    let d = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, NodeDescription::ID, 0))
        .unwrap();
    assert_eq!(NodeDescription::parse(&d.mad.data).unwrap().0, "node 1");

    let p = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, 1))
        .unwrap();
    let p = port_info(&p);
    assert_eq!(p.address, Address(0x0240));
    assert_eq!(p.local_port_num, 1);
    assert_eq!(p.port_state, PortInfo::ACTIVE);
    assert_eq!(p.mtu, 1500);
    assert_eq!(p.lrt_entries, 21);
    assert_eq!(p.manager_address, Address(0x0301));
    assert_eq!(p.native, native(A as u8, 1));

    let c = n
        .ask(R, get(to(0x0140), MgmtClass::PERF, PortCounters::ID, 1))
        .unwrap();
    let c = PortCounters::parse(&c.mad.data).unwrap();
    assert_eq!(c.port_select, 1);
    assert_eq!(
        c.counters,
        (0..PortCounters::COUNT as u64)
            .map(|i| i + 100)
            .collect::<Vec<_>>()
    );

    // LrtBlock: port 1 has 21 entries, block 1 holds the last 6.
    let l = n
        .ask(
            R,
            get(
                to(0x0140),
                MgmtClass::SUBN,
                LrtBlock::ID,
                LrtBlock::modifier(1, 1),
            ),
        )
        .unwrap();
    let l = LrtBlock::parse(&l.mad.data).unwrap();
    assert_eq!(l.total, 21);
    assert_eq!(l.entries.len(), 21 - lrt_block::ENTRIES);
    assert_eq!(l.entries[0].address, Address(0x0200 + 15));
    assert!(l.entries[0].is_router());

    // A port the box does not have; an attribute it does not serve.
    let bad = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, 9))
        .unwrap();
    assert_eq!(bad.mad.status, Status::INVALID_VALUE);
    // Modifiers past any port number (found by fuzzing: they once panicked
    // making the port), in both classes that take a port.
    for m in [0x1_0000, u32::MAX] {
        let bad = n
            .ask(R, get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, m))
            .unwrap();
        assert_eq!(bad.mad.status, Status::INVALID_VALUE, "modifier {m:#x}");
        let bad = n
            .ask(R, get(to(0x0140), MgmtClass::PERF, PortCounters::ID, m))
            .unwrap();
        assert_eq!(bad.mad.status, Status::INVALID_VALUE, "modifier {m:#x}");
    }
    let bad = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, 0x7777, 0))
        .unwrap();
    assert_eq!(bad.mad.status, Status::METHOD_ATTR_UNSUPPORTED);
    // A class nobody serves here: bad version.
    let bad = n
        .ask(R, get(to(0x0140), MgmtClass(0x09), PortInfo::ID, 0))
        .unwrap();
    assert_eq!(bad.mad.status, Status::BAD_VERSION);
    assert_eq!(n.nodes[A].agent.stats().bad_class, 1);
}

fn set_port(
    n: &mut Net,
    key: u64,
    f: impl Fn(&mut PortInfo),
) -> Result<mgmt::client::Answer, Failure> {
    let cur = n
        .ask(
            R,
            Request {
                mkey: key,
                ..get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, 1)
            },
        )
        .unwrap();
    let mut p = port_info(&cur);
    f(&mut p);
    let mut data = vec![0; MgmtClass::SUBN.attribute_len()];
    p.emit(&mut data).unwrap();
    n.ask(
        R,
        Request {
            method: Method::SET,
            mkey: key,
            data,
            ..get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, 1)
        },
    )
}

#[test]
fn a_set_with_the_key_changes_the_port_and_answers_what_it_is_now() {
    let mut n = net(1);
    let a = set_port(&mut n, KEY, |p| {
        p.port_state = PortInfo::DOWN;
        p.cost = 5;
    })
    .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    let p = port_info(&a);
    assert_eq!(p.port_state, PortInfo::DOWN);
    assert_eq!(p.cost, 5);
    // With the right key the key is shown.
    assert_eq!(p.mkey, KEY);
    assert_eq!(
        n.nodes[A].fake.changes,
        ["port 1 cost 5", "port 1 up false"]
    );
    assert_eq!(n.nodes[A].agent.stats().sets, 1);

    // A bad value changes nothing.
    let a = set_port(&mut n, KEY, |p| {
        p.cost = 9;
        p.port_state = 7;
    })
    .unwrap();
    assert_eq!(a.mad.status, Status::INVALID_VALUE);
    assert_eq!(n.nodes[A].fake.changes.len(), 2);
}

#[test]
fn mkey_protect_1_hides_the_key_and_refuses_sets_with_a_trap() {
    let mut n = net(1);
    let a = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, 1))
        .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    assert_eq!(
        port_info(&a).mkey,
        0,
        "protect 1 hides the key from a Get without it"
    );
    assert_eq!(port_info(&a).mkey_protect_bits, 1);

    let a = set_port(&mut n, 0xBAD, |p| p.port_state = PortInfo::DOWN).unwrap();
    assert_eq!(a.mad.status, STATUS_MKEY);
    assert_eq!(port_info(&a).port_state, PortInfo::ACTIVE, "not applied");
    assert!(n.nodes[A].fake.changes.is_empty());
    assert_eq!(n.nodes[A].agent.mkey().violations, 1);
    assert_eq!(n.nodes[A].agent.stats().mkey_refused, 1);
    // Trap 256 reached the manager, which repressed it.
    let notices: Vec<_> = n.nodes[M].agent.notices().cloned().collect();
    assert_eq!(notices.len(), 1);
    let (issuer, notice) = (notices[0].from, &notices[0].notice);
    assert!(!notices[0].report);
    assert_eq!(notices[0].seq, 0);
    assert_eq!(issuer, Address(0x0140));
    let bad = notice.bad_mkey_details().expect("trap 256");
    assert_eq!(bad.requester, Address(0x0101));
    assert_eq!(bad.key, 0xBAD);
    assert_eq!(bad.attribute, PortInfo::ID);
    assert_eq!(n.nodes[A].agent.stats().traps_repressed, 1);
    // Nothing is sent again once repressed.
    n.hops.clear();
    n.advance(n.now + 20_000);
    assert!(n.hops.is_empty(), "{:?}", n.hops);
}

#[test]
fn mkey_protect_2_answers_nothing_without_the_key() {
    let mut n = net(2);
    let r = n.ask(R, get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, 1));
    assert_eq!(r, Err(Failure::Timeout { tries: 3 }));
    assert_eq!(n.nodes[A].agent.mkey().violations, 3);
    // With the key: answered.
    let a = n
        .ask(
            R,
            Request {
                mkey: KEY,
                ..get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, 1)
            },
        )
        .unwrap();
    assert_eq!(port_info(&a).mkey, KEY);
    // A Perf Get is not guarded by the M_Key; a Perf Set is.
    assert!(
        n.ask(R, get(to(0x0140), MgmtClass::PERF, PortCounters::ID, 0))
            .is_ok()
    );
    let clear = Request {
        method: Method::SET,
        ..get(to(0x0140), MgmtClass::PERF, PortCounters::ID, 0)
    };
    assert_eq!(n.ask(R, clear), Err(Failure::Timeout { tries: 3 }));
    assert!(n.nodes[A].fake.changes.is_empty());
}

#[test]
fn a_lease_runs_out_and_protection_drops() {
    let mut n = net(2);
    let a = set_port(&mut n, KEY, |p| p.mkey_lease_period = 5);
    assert_eq!(a.unwrap().mad.status, Status::OK);
    assert_eq!(n.nodes[A].agent.mkey().lease_s, 5);
    // A Get without the key: not answered, and the lease starts.
    let get_info = MadRepr::new(MgmtClass::SUBN, Method::GET, 9, NodeInfo::ID, 0);
    n.deliver(
        R,
        0,
        (A, 0),
        Address(0x0140),
        leak(Box::new(get_info.to_bytes().unwrap())),
    );
    let answered = n.nodes[A].agent.stats().answered;
    n.run();
    assert_eq!(n.nodes[A].agent.stats().answered, answered);
    assert!(n.nodes[A].agent.mkey().lease_until.is_some());
    n.advance(n.now + 4_000);
    assert_eq!(n.nodes[A].agent.mkey().protect, 2);
    n.advance(n.now + 6_000);
    assert_eq!(n.nodes[A].agent.mkey().protect, 0);
    assert!(
        n.ask(R, get(to(0x0140), MgmtClass::SUBN, NodeInfo::ID, 0))
            .is_ok()
    );
}

#[test]
fn a_retried_set_is_applied_once_and_answered_again() {
    let mut n = net(0);
    let cur = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, PortInfo::ID, 1))
        .unwrap();
    let mut p = port_info(&cur);
    p.cost = 3;
    let mut data = vec![0; MgmtClass::SUBN.attribute_len()];
    p.emit(&mut data).unwrap();
    let mut set = MadRepr::new(MgmtClass::SUBN, Method::SET, 77, PortInfo::ID, 1);
    set.data = data;
    set.mkey = KEY;
    let bytes: &'static [u8] = leak(Box::new(set.to_bytes().unwrap()));
    for _ in 0..2 {
        n.deliver(R, 0, (A, 0), Address(0x0140), bytes);
        n.run();
    }
    assert_eq!(n.nodes[A].fake.changes, ["port 1 cost 3"]);
    assert_eq!(n.nodes[A].agent.stats().cache_hits, 1);
    assert_eq!(n.nodes[A].agent.stats().answered, 3);
    // Both answers reached R; the client had no such TID: unmatched.
    assert_eq!(n.nodes[R].client.stats().unmatched, 2);
}

#[test]
fn port_events_trap_the_manager_until_repressed() {
    let mut n = net(0);
    let a = &mut n.nodes[A];
    a.agent.port_changed(0, &a.fake, PortId::new(1), false);
    n.black_hole = Some(M);
    n.run();
    n.advance(2_500);
    // Sent, then sent again twice (every second) while the manager is away.
    assert_eq!(n.nodes[A].agent.stats().traps_sent, 1);
    assert_eq!(n.nodes[A].agent.stats().traps_resent, 2);
    n.black_hole = None;
    n.advance(3_500);
    assert_eq!(n.nodes[A].agent.stats().traps_repressed, 1);
    let notice = n.nodes[M].agent.notices().next().cloned().unwrap().notice;
    let d = notice.port_state_details().unwrap();
    assert_eq!(
        (d.port, d.state, d.hr),
        (1, PortInfo::DOWN, Address(0x0240))
    );
    assert_eq!(notice.trap_number, Notice::TRAP_PORT_STATE);
}

#[test]
fn authentication_refusals_trap_the_manager_once_per_source_within_a_minute() {
    let mut n = net(0);
    let stranger = native(9, 9);
    let refuse = |n: &mut Net, from: u16, native: NativeAddr, why: AuthRefusal| {
        let now = n.now;
        let a = &mut n.nodes[A];
        a.agent
            .auth_refused(now, &a.fake, PortId::new(1), Address(from), native, why);
        n.run();
    };
    // A stream of refused packets from one source: one trap.
    for why in [
        AuthRefusal::Missing,
        AuthRefusal::BadDigest,
        AuthRefusal::Replay,
    ] {
        refuse(&mut n, 0x0250, stranger, why);
    }
    let notices = |n: &Net| -> Vec<Notice> {
        n.nodes[M]
            .agent
            .notices()
            .map(|x| x.notice.clone())
            .filter(|x| x.trap_number == Notice::TRAP_AUTH_REFUSED)
            .collect()
    };
    let got = notices(&n);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].notice_type, Notice::SECURITY);
    assert_eq!(got[0].issuer, Address(0x0240), "the HR of the port");
    let d = got[0].auth_refused_details().unwrap();
    assert_eq!(
        (d.from, d.port, d.why, d.native),
        (Address(0x0250), 1, Some(AuthRefusal::Missing), stranger)
    );
    // Another SA, or the same SA from another native address: a source of
    // its own.
    refuse(&mut n, 0x0251, stranger, AuthRefusal::UnknownKey);
    refuse(&mut n, 0x0250, native(9, 8), AuthRefusal::Missing);
    assert_eq!(notices(&n).len(), 3);
    // A minute later the first source is trapped again.
    n.advance(59_999);
    refuse(&mut n, 0x0250, stranger, AuthRefusal::Missing);
    assert_eq!(notices(&n).len(), 3);
    n.advance(60_000);
    refuse(&mut n, 0x0250, stranger, AuthRefusal::Replay);
    let got = notices(&n);
    assert_eq!(got.len(), 4);
    assert_eq!(
        got[3].auth_refused_details().unwrap().why,
        Some(AuthRefusal::Replay)
    );
    // Repressed like every trap, within traps_per_s.
    assert_eq!(n.nodes[A].agent.stats().traps_sent, 4);
    assert_eq!(n.nodes[A].agent.stats().traps_repressed, 4);
}

#[test]
fn authentication_traps_of_many_sources_stay_within_traps_per_s() {
    let mut n = net(0);
    n.black_hole = Some(M);
    // Forged sources, each new: ten traps in the second, the rest
    // suppressed.
    for i in 0..1_000u16 {
        let a = &mut n.nodes[A];
        a.agent.auth_refused(
            0,
            &a.fake,
            PortId::new(0),
            Address(0x0400 + i),
            native(7, 7),
            AuthRefusal::BadDigest,
        );
    }
    let s = *n.nodes[A].agent.stats();
    assert_eq!(s.traps_sent, 10);
    assert_eq!(s.traps_suppressed, 990);
}

#[test]
fn traps_are_given_up_and_rate_limited() {
    let mut n = net(0);
    n.black_hole = Some(M);
    for _ in 0..15 {
        let a = &mut n.nodes[A];
        a.agent.hr_down(0, &a.fake, Address(0x0241), PortId::new(1));
    }
    n.run();
    let s = *n.nodes[A].agent.stats();
    assert_eq!(s.traps_sent, 10, "10 per second");
    assert_eq!(s.traps_suppressed, 5);
    n.advance(60_000);
    let s = *n.nodes[A].agent.stats();
    assert_eq!(s.traps_unanswered, 10);
    assert_eq!(s.traps_resent, 70, "8 sends each");
}

#[test]
fn drops_past_the_threshold_trap_129() {
    let mut n = net(0);
    let mut cfg = n.nodes[A].agent.config().clone();
    cfg.drop_threshold = 50;
    n.nodes[A].agent = Agent::new(cfg, 0);
    n.advance(10_000);
    // First check: a baseline, no trap.
    assert_eq!(n.nodes[A].agent.stats().traps_sent, 0);
    let first_drop = PortCounters::FIRST_DROP;
    n.nodes[A].fake.counters[1][first_drop] += 60;
    n.nodes[A].fake.counters[0][first_drop] += 10;
    n.advance(20_000);
    assert_eq!(n.nodes[A].agent.stats().traps_sent, 1);
    let notice = n.nodes[M].agent.notices().next().cloned().unwrap().notice;
    let d = notice.drops_details().unwrap();
    assert_eq!((d.port, d.drops), (1, 60));
}

#[test]
fn malformed_and_unserved_requests_are_counted() {
    let mut n = net(0);
    n.deliver(
        R,
        0,
        (A, 0),
        Address(0x0140),
        leak(Box::new([0xEE; MAD_LEN])),
    );
    n.deliver(R, 0, (A, 0), Address(0x0140), &[1, 2, 3]);
    let adm = MadRepr::new(MgmtClass::SUBN_ADM, Method::GET, 5, 0x0011, 0);
    n.deliver(
        R,
        0,
        (A, 0),
        Address(0x0140),
        leak(Box::new(adm.to_bytes().unwrap())),
    );
    n.run();
    let s = n.nodes[A].agent.stats();
    assert_eq!(s.malformed, 2);
    assert_eq!(s.not_manager, 1);
    assert_eq!(s.answered, 0);
    // And the agent still answers.
    assert!(
        n.ask(R, get(to(0x0140), MgmtClass::SUBN, NodeInfo::ID, 0))
            .is_ok()
    );
}

#[test]
fn set_node_description_and_clear_counters() {
    let mut n = net(0);
    let mut data = vec![0; MgmtClass::SUBN.attribute_len()];
    NodeDescription("edge-7".into()).emit(&mut data).unwrap();
    let a = n
        .ask(
            R,
            Request {
                method: Method::SET,
                mkey: KEY,
                data,
                ..get(to(0x0241), MgmtClass::SUBN, NodeDescription::ID, 0)
            },
        )
        .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    assert_eq!(n.nodes[B].fake.name, "edge-7");
    let a = n
        .ask(
            R,
            Request {
                method: Method::SET,
                mkey: KEY,
                ..get(to(0x0241), MgmtClass::PERF, PortCounters::ID, 1)
            },
        )
        .unwrap();
    assert!(
        PortCounters::parse(&a.mad.data)
            .unwrap()
            .counters
            .iter()
            .all(|c| *c == 0)
    );
    assert_eq!(n.nodes[B].fake.changes, ["name edge-7", "port 1 clear"]);
}

/// PortCountersExtended: a router's link counters by Get, cleared with the
/// port's other counters by a Set; a node that does not count them has no
/// such attribute.
#[test]
fn port_counters_extended_carries_the_links_counters() {
    let mut n = net(0);
    let a = n
        .ask(
            R,
            get(to(0x0241), MgmtClass::PERF, PortCountersExtended::ID, 1),
        )
        .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    let c = PortCountersExtended::parse(&a.mad.data).unwrap();
    assert_eq!(c.port_select, 1);
    assert_eq!(c.counters, [1001, 2001, 3001, 4001, 5001, 6001]);
    assert_eq!(c.rx_bytes(), Some(1001));
    assert_eq!(c.rx_lost(), Some(3001 + 4001 + 5001));
    // No such port.
    let bad = n
        .ask(
            R,
            get(to(0x0241), MgmtClass::PERF, PortCountersExtended::ID, 2),
        )
        .unwrap();
    assert_eq!(bad.mad.status, Status::INVALID_VALUE);
    // Not a Subn attribute.
    let bad = n
        .ask(
            R,
            get(to(0x0241), MgmtClass::SUBN, PortCountersExtended::ID, 1),
        )
        .unwrap();
    assert_eq!(bad.mad.status, Status::METHOD_ATTR_UNSUPPORTED);
    // A host that does not count its link: neither Get nor Set.
    let host = n
        .ask(
            R,
            get(to(0x0301), MgmtClass::PERF, PortCountersExtended::ID, 0),
        )
        .unwrap();
    assert_eq!(host.mad.status, Status::METHOD_ATTR_UNSUPPORTED);
    let set = |to_: u16, port: u32| Request {
        method: Method::SET,
        mkey: KEY,
        ..get(to(to_), MgmtClass::PERF, PortCountersExtended::ID, port)
    };
    let host = n.ask(R, set(0x0301, 0)).unwrap();
    assert_eq!(host.mad.status, Status::METHOD_ATTR_UNSUPPORTED);
    assert!(n.nodes[M].fake.changes.is_empty());
    // A Set clears the port's counters, both attributes'.
    let a = n.ask(R, set(0x0241, 1)).unwrap();
    assert_eq!(a.mad.status, Status::OK);
    let c = PortCountersExtended::parse(&a.mad.data).unwrap();
    assert_eq!(c.counters, [0; PortCountersExtended::COUNT]);
    assert_eq!(n.nodes[B].fake.changes, ["port 1 clear"]);
    let pc = n
        .ask(R, get(to(0x0241), MgmtClass::PERF, PortCounters::ID, 1))
        .unwrap();
    let pc = PortCounters::parse(&pc.mad.data).unwrap();
    assert!(pc.counters.iter().all(|c| *c == 0));
}

#[test]
fn the_client_times_out_and_ignores_strays() {
    let mut n = net(0);
    n.black_hole = Some(A);
    let r = n.ask(R, get(to(0x0140), MgmtClass::SUBN, NodeInfo::ID, 0));
    assert_eq!(r, Err(Failure::Timeout { tries: 3 }));
    let s = n.nodes[R].client.stats();
    assert_eq!((s.requests, s.sent, s.timeouts), (1, 3, 1));
    // A request that cannot be built fails at once.
    let mut c = Client::new(1);
    let path = vec![PathHop::default(); 9];
    c.start(
        0,
        1,
        get(
            Target::Directed {
                port: PortId::new(0),
                path,
            },
            MgmtClass::SUBN_DR,
            NodeInfo::ID,
            0,
        ),
    );
    assert!(matches!(
        c.take_outputs().as_slice(),
        [ClientOutput::Done {
            result: Err(Failure::Bad(_)),
            ..
        }]
    ));
    // Garbage for the client is counted.
    c.on_response(0, Address(1), &[0; 3]);
    assert_eq!(c.stats().unmatched, 1);
    let _ = Mad::new_checked(&[0u8; 3][..]).unwrap_err();
}

#[test]
fn source_route_says_which_hr_the_request_arrived_on() {
    use mgmt::attr::SourceRoute;
    let mut n = net(0);
    let ask = |n: &mut Net, expected: &[u16], hop: u8| {
        let mut r = SourceRoute::request(&expected.iter().map(|a| Address(*a)).collect::<Vec<_>>());
        r.hop_count = hop;
        let mut area = vec![0u8; MgmtClass::VENDOR_TRACE.attribute_len()];
        r.emit(&mut area).unwrap();
        let a = n
            .ask(
                R,
                Request {
                    data: area,
                    ..get(to(0x0140), MgmtClass::VENDOR_TRACE, SourceRoute::ID, 0)
                },
            )
            .unwrap();
        (a.mad.status, SourceRoute::parse(&a.mad.data).ok())
    };
    // R's requests reach A on its HR 0x0140 (port 0).
    let (st, r) = ask(&mut n, &[0x0140], 1);
    assert_eq!(st, Status::OK);
    let r = r.unwrap();
    assert_eq!((r.actual_address, r.actual_port), (Address(0x0140), 0));
    // Expecting the other HR: status 7, and where it did arrive.
    let (st, r) = ask(&mut n, &[0x0240], 1);
    assert_eq!(st, Status::INVALID_VALUE);
    assert_eq!(r.unwrap().actual_address, Address(0x0140));
    // A hop count outside the vector: status 7.
    for hop in [0, 2, 65] {
        assert_eq!(
            ask(&mut n, &[0x0140], hop).0,
            Status::INVALID_VALUE,
            "hop {hop}"
        );
    }
    // The tracer's agent off: the class is not served (status 0x0004), so
    // the tracer skips the hop.
    let mut c = n.nodes[A].agent.config().clone();
    c.tracer = false;
    n.nodes[A].agent.reconfigure(c);
    assert_eq!(ask(&mut n, &[0x0140], 1).0, Status::BAD_VERSION);
    let cpi = n
        .ask(R, get(to(0x0140), MgmtClass::VENDOR_TRACE, 0x0001, 0))
        .unwrap();
    assert_eq!(cpi.mad.status, Status::BAD_VERSION);
}

/// A router A alone (two ports), its agent with `cfg`, for requests handed
/// to it directly.
fn lone_router(cfg: AgentConfig) -> (Agent, Fake) {
    let fake = Fake {
        ports: vec![port(A as u8, 0, 0x0140), port(A as u8, 1, 0x0240)],
        counters: vec![vec![0; PortCounters::COUNT]; 2],
        link: vec![vec![0; PortCountersExtended::COUNT]; 2],
        name: "a".into(),
        changes: Vec::new(),
    };
    (Agent::new(cfg, 0), fake)
}

/// Hands `count` copies of `mad` from `src` (at native `from`, on port 0) to
/// the agent at `now`; returns how many packets it sent.
fn flood(
    agent: &mut Agent,
    fake: &mut Fake,
    now: u64,
    src: u16,
    from: NativeAddr,
    mad: &MadRepr,
    count: usize,
) -> usize {
    let bytes = mad.to_bytes().unwrap();
    let mut sent = 0;
    for i in 0..count {
        // Each its own TID, as a flood of new requests (not retries).
        let mut b = bytes;
        b[8..16].copy_from_slice(&(i as u64 + 1).to_be_bytes());
        agent.handle(
            now,
            fake,
            Incoming {
                port: PortId::new(0),
                native: from,
                src: Address(src),
                dst: Address(0x0140),
                mad: &b,
            },
        );
        while let Some(o) = agent.poll_output() {
            sent += usize::from(matches!(o, Output::Send { .. }));
        }
    }
    sent
}

#[test]
fn answers_are_bounded_per_requester_and_in_all() {
    let cfg = AgentConfig::new(NodeType::Router, 0xA0, "a");
    assert_eq!((cfg.answers_per_source, cfg.answers_global), (1_000, 4_000));
    let (mut a, mut f) = lone_router(cfg);
    let get = MadRepr::new(MgmtClass::SUBN, Method::GET, 0, NodeInfo::ID, 0);
    let per = ANSWERS_PER_SOURCE as usize;
    // A stranger's flood of NodeInfo Gets: `per` answers in its second.
    assert_eq!(
        flood(&mut a, &mut f, 0, 0x0150, native(9, 0), &get, per + 800),
        per
    );
    assert_eq!(a.stats().answered, per as u64);
    assert_eq!(a.stats().answers_limited, 800);
    // Another requester is still answered.
    assert_eq!(flood(&mut a, &mut f, 10, 0x0151, native(9, 1), &get, 5), 5);
    // The node's own requests (its station's, from no native address) are
    // not bounded.
    let own = flood(&mut a, &mut f, 20, 0x0140, NativeAddr::NONE, &get, 300);
    assert_eq!(own, 300);
    // The global bound: ANSWERS_GLOBAL answers in the second, whoever asks.
    let mut total = per + 5;
    for src in 0x0160..0x0180 {
        total += flood(&mut a, &mut f, 500, src, native(9, 2), &get, per);
    }
    assert_eq!(total, ANSWERS_GLOBAL as usize);
    assert_eq!(flood(&mut a, &mut f, 999, 0x0152, native(9, 3), &get, 1), 0);
    // The next second answers again, `per` per requester.
    assert_eq!(
        flood(&mut a, &mut f, 1_000, 0x0150, native(9, 0), &get, per + 800),
        per
    );
    assert_eq!(
        flood(&mut a, &mut f, 1_999, 0x0150, native(9, 0), &get, 10),
        0
    );
}

#[test]
fn a_set_past_the_bound_is_not_applied_and_relays_count_as_answers() {
    let mut cfg = AgentConfig::new(NodeType::Router, 0xA0, "a");
    cfg.answers_per_source = 2;
    let (mut a, mut f) = lone_router(cfg);
    let mut set = MadRepr::new(MgmtClass::SUBN, Method::SET, 0, NodeDescription::ID, 0);
    NodeDescription("x".into()).emit(&mut set.data).unwrap();
    assert_eq!(flood(&mut a, &mut f, 0, 0x0150, native(9, 0), &set, 5), 2);
    assert_eq!(f.changes.len(), 2, "only the answered Sets were applied");
    assert_eq!(a.stats().sets, 2);
    assert_eq!(a.stats().answers_limited, 3);

    // Directed-route MADs passing through: relayed within the same bound.
    let mut dr = MadRepr::new(MgmtClass::SUBN_DR, Method::GET, 0, NodeInfo::ID, 0);
    dr.dr = Some(DrRoute::outbound(vec![
        PathHop {
            hr: Address(0x0101),
            native: native(A as u8, 0),
        },
        PathHop {
            hr: Address(0x0240),
            native: native(B as u8, 0),
        },
    ]));
    assert_eq!(
        flood(&mut a, &mut f, 10, 0x0101, native(R as u8, 0), &dr, 5),
        2
    );
    assert_eq!(a.stats().relayed, 2);
    assert_eq!(a.stats().answers_limited, 6);

    // A reload changes the bounds at once.
    let mut cfg = a.config().clone();
    cfg.answers_per_source = 4;
    a.reconfigure(cfg);
    assert_eq!(
        flood(&mut a, &mut f, 20, 0x0101, native(R as u8, 0), &dr, 5),
        2
    );
    assert_eq!(a.stats().relayed, 4);
}

// ----- subscriptions at an agent (docs/management.md "Events") -----------------------------

/// A SubnAdm InformInfo request of `method` for `info` to `target`.
fn inform(target: Target, method: Method, info: &mgmt::attr::InformInfo) -> Request {
    let mut data = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
    info.emit(&mut data).unwrap();
    Request {
        method,
        data,
        ..get(target, MgmtClass::SUBN_ADM, mgmt::attr::InformInfo::ID, 0)
    }
}

/// A subscription to trap 1024 with a lease of `lease_s`.
fn hr_down_only(lease_s: u32) -> mgmt::attr::InformInfo {
    mgmt::attr::InformInfo {
        trap_number: Notice::TRAP_HR_DOWN,
        lease_s,
        ..Default::default()
    }
}

/// The Reports R keeps: (the node that sent it, trap).
fn reports_at(n: &Net, at: usize) -> Vec<(Address, u16)> {
    n.nodes[at]
        .agent
        .notices()
        .filter(|r| r.report)
        .map(|r| (r.from, r.notice.trap_number))
        .collect()
}

fn a_hr_down(n: &mut Net) {
    let now = n.now;
    let a = &mut n.nodes[A];
    a.agent
        .hr_down(now, &a.fake, Address(0x0241), PortId::new(1));
    n.run();
}

#[test]
fn a_node_subscribed_at_an_agent_gets_its_traps_as_reports_until_it_answers() {
    let mut n = net(0);
    // R subscribes at router A, which runs no SAN master: A's own table.
    let granted = n
        .ask(R, inform(to(0x0140), Method::SET, &hr_down_only(0)))
        .unwrap();
    assert_eq!(granted.mad.status, Status::OK);
    let g = mgmt::attr::InformInfo::parse(&granted.mad.data).unwrap();
    assert_eq!(
        (g.subscriber, g.lease_s, g.total, g.trap_number),
        (Address(0x0101), 60, 1, Notice::TRAP_HR_DOWN)
    );
    assert_eq!(n.nodes[A].agent.stats().subscriptions, 1);
    assert_eq!(n.nodes[A].agent.subscriptions().count(), 1);
    // A Set of the same filter renews it: still one.
    n.ask(R, inform(to(0x0140), Method::SET, &hr_down_only(30)))
        .unwrap();
    assert_eq!(n.nodes[A].agent.stats().subscriptions, 1);

    // A's trap 1024: the Trap to its manager M, and a Report to R,
    // answered at once.
    a_hr_down(&mut n);
    assert_eq!(reports_at(&n, R), [(Address(0x0140), Notice::TRAP_HR_DOWN)]);
    assert!(
        n.nodes[M].agent.notices().any(|r| !r.report),
        "the trap still reached the manager"
    );
    let s = *n.nodes[A].agent.stats();
    assert_eq!(
        (s.reports_sent, s.reports_retried, s.reports_given_up),
        (1, 0, 0)
    );
    // A trap the subscription does not match: no Report.
    let now = n.now;
    let a = &mut n.nodes[A];
    a.agent.port_changed(now, &a.fake, PortId::new(1), false);
    n.run();
    assert_eq!(reports_at(&n, R).len(), 1);

    // R away: the Report is repeated every report_retry_ms, report_retries
    // times after the first, then given up.
    n.black_hole = Some(R);
    n.advance(1_000);
    a_hr_down(&mut n);
    n.advance(1_000 + 1_499);
    assert_eq!(n.nodes[A].agent.stats().reports_retried, 2);
    n.black_hole = None;
    n.advance(1_000 + 1_500);
    let s = *n.nodes[A].agent.stats();
    assert_eq!(
        (s.reports_sent, s.reports_retried, s.reports_given_up),
        (2, 3, 0)
    );
    assert_eq!(reports_at(&n, R).len(), 2, "the third repeat got through");
    n.advance(20_000);
    assert_eq!(
        n.nodes[A].agent.stats().reports_retried,
        3,
        "answered: no more"
    );

    n.black_hole = Some(R);
    a_hr_down(&mut n);
    n.advance(25_000);
    let s = *n.nodes[A].agent.stats();
    assert_eq!(
        (s.reports_sent, s.reports_retried, s.reports_given_up),
        (3, 6, 1)
    );
}

#[test]
fn a_report_repeated_because_its_answer_was_lost_is_kept_once() {
    let mut n = net(0);
    n.ask(R, inform(to(0x0140), Method::SET, &hr_down_only(0)))
        .unwrap();
    // R hears A's Reports, but its ReportResps are lost: A repeats the
    // Report with the same TID; R answers each, keeps the first.
    n.mute = Some(R);
    a_hr_down(&mut n);
    n.advance(5_000);
    let a = *n.nodes[A].agent.stats();
    assert_eq!((a.reports_retried, a.reports_given_up), (3, 1));
    assert_eq!(reports_at(&n, R), [(Address(0x0140), Notice::TRAP_HR_DOWN)]);
    let r = *n.nodes[R].agent.stats();
    assert_eq!((r.notices_received, r.notices_repeated), (4, 3));
    // A new trap is a new notice.
    n.mute = None;
    a_hr_down(&mut n);
    assert_eq!(reports_at(&n, R).len(), 2);
}

#[test]
fn an_agents_subscription_runs_out_or_is_deleted() {
    let mut n = net(0);
    n.ask(R, inform(to(0x0140), Method::SET, &hr_down_only(5)))
        .unwrap();
    n.advance(4_999);
    assert_eq!(n.nodes[A].agent.subscriptions().count(), 1);
    n.advance(5_000);
    assert_eq!(n.nodes[A].agent.subscriptions().count(), 0);
    assert_eq!(n.nodes[A].agent.stats().subscriptions_expired, 1);
    a_hr_down(&mut n);
    assert!(reports_at(&n, R).is_empty(), "ran out: no Report");

    // Subscribed again, then deleted.
    n.ask(R, inform(to(0x0140), Method::SET, &hr_down_only(0)))
        .unwrap();
    let gone = n
        .ask(R, inform(to(0x0140), Method::DELETE, &hr_down_only(0)))
        .unwrap();
    assert_eq!(gone.mad.status, Status::OK);
    assert_eq!(gone.mad.method, Method::DELETE_RESP);
    let g = mgmt::attr::InformInfo::parse(&gone.mad.data).unwrap();
    assert!(!g.subscribe);
    assert_eq!(g.total, 0);
    a_hr_down(&mut n);
    assert!(reports_at(&n, R).is_empty(), "deleted: no Report");
    let again = n
        .ask(R, inform(to(0x0140), Method::DELETE, &hr_down_only(0)))
        .unwrap();
    assert_eq!(again.mad.status, Status::SA_NO_RECORDS);
    // A Get is a master's only: an agent drops it.
    let before = n.nodes[A].agent.stats().not_manager;
    let got = n.ask(R, inform(to(0x0140), Method::GET, &hr_down_only(0)));
    assert!(matches!(got, Err(Failure::Timeout { .. })), "{got:?}");
    assert!(n.nodes[A].agent.stats().not_manager > before);
}

#[test]
fn an_agents_full_table_refuses_with_no_resources() {
    let mut n = net(0);
    let mut cfg = n.nodes[A].agent.config().clone();
    cfg.manager_timers.max_subscriptions = 1;
    n.nodes[A].agent.reconfigure(cfg);
    let ok = n
        .ask(R, inform(to(0x0140), Method::SET, &hr_down_only(0)))
        .unwrap();
    assert_eq!(ok.mad.status, Status::OK);
    // Another filter of R's, and M's: past the bound.
    let every = mgmt::attr::InformInfo::default();
    let full = n.ask(R, inform(to(0x0140), Method::SET, &every)).unwrap();
    assert_eq!(full.mad.status, Status::SA_NO_RESOURCES);
    let full = n
        .ask(M, inform(to(0x0240), Method::SET, &hr_down_only(0)))
        .unwrap();
    assert_eq!(full.mad.status, Status::SA_NO_RESOURCES);
    assert_eq!(n.nodes[A].agent.stats().subscriptions_refused, 2);
    // The one taken still gets its Report; no trap number range here
    // either: the filter is the master's.
    a_hr_down(&mut n);
    assert_eq!(reports_at(&n, R).len(), 1);
    assert!(reports_at(&n, M).is_empty());
}

#[test]
fn an_agent_without_a_manager_still_reports_to_its_subscribers() {
    let mut n = net(0);
    let mut cfg = n.nodes[A].agent.config().clone();
    cfg.manager = Address::UNSPECIFIED;
    n.nodes[A].agent.reconfigure(cfg);
    a_hr_down(&mut n);
    assert_eq!(n.nodes[A].agent.stats().traps_no_manager, 1);
    n.ask(R, inform(to(0x0140), Method::SET, &hr_down_only(0)))
        .unwrap();
    a_hr_down(&mut n);
    assert_eq!(reports_at(&n, R).len(), 1);
    let s = *n.nodes[A].agent.stats();
    assert_eq!(
        (s.traps_sent, s.traps_no_manager, s.reports_sent),
        (0, 2, 1)
    );
}

fn partition_set(block: u32, key: u64, data: Vec<u8>) -> Request {
    Request {
        method: Method::SET,
        mkey: key,
        data,
        ..get(to(0x0140), MgmtClass::SUBN, PartitionTable::ID, block)
    }
}

fn partition_block(entries: &[(u16, Membership)]) -> Vec<u8> {
    let t = PartitionTable::from_entries(
        &entries
            .iter()
            .map(|(k, m)| (PartitionKey::new(*k).unwrap(), *m))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mut data = vec![0; MgmtClass::SUBN.attribute_len()];
    t.emit(&mut data).unwrap();
    data
}

#[test]
fn a_node_starts_a_full_member_of_the_default_partition() {
    let mut n = net(1);
    let a = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, PartitionTable::ID, 0))
        .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    assert_eq!(&a.mad.data[..4], &[0xFF, 0xFF, 0, 0]);
    let t = PartitionTable::parse(&a.mad.data).unwrap();
    assert_eq!(t.entries, [(PartitionKey::DEFAULT, Membership::Full)]);
    assert_eq!(
        n.nodes[A].agent.partition_table(),
        [(PartitionKey::DEFAULT, Membership::Full)]
    );
    let a = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, PartitionTable::ID, 1))
        .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    assert!(
        PartitionTable::parse(&a.mad.data)
            .unwrap()
            .entries
            .is_empty()
    );
    let a = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, PartitionTable::ID, 2))
        .unwrap();
    assert_eq!(a.mad.status, Status::INVALID_VALUE);
    // NodeInfo says how many entries the node keeps.
    let a = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, NodeInfo::ID, 0))
        .unwrap();
    assert_eq!(NodeInfo::parse(&a.mad.data).unwrap().partition_cap, 64);
}

#[test]
fn a_set_with_the_key_replaces_a_block_of_the_partition_table() {
    let mut n = net(1);
    let block0 = [(0x7FFF, Membership::Limited), (0x0010, Membership::Full)];
    let a = n
        .ask(R, partition_set(0, KEY, partition_block(&block0)))
        .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    let a = n
        .ask(
            R,
            partition_set(1, KEY, partition_block(&[(0x0020, Membership::Limited)])),
        )
        .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    let a = n
        .ask(R, get(to(0x0140), MgmtClass::SUBN, PartitionTable::ID, 0))
        .unwrap();
    let key = |k| PartitionKey::new(k).unwrap();
    assert_eq!(
        PartitionTable::parse(&a.mad.data).unwrap().entries,
        [
            (key(0x7FFF), Membership::Limited),
            (key(0x10), Membership::Full)
        ]
    );
    assert_eq!(
        n.nodes[A].agent.partition_table(),
        [
            (key(0x7FFF), Membership::Limited),
            (key(0x10), Membership::Full),
            (key(0x20), Membership::Limited)
        ]
    );
    assert_eq!(n.nodes[A].agent.stats().sets, 2);
    assert_eq!(n.nodes[A].agent.stats().partition_sets_refused, 0);
}

#[test]
fn a_partition_table_set_without_the_key_is_refused_and_counted() {
    let mut n = net(1);
    let a = n
        .ask(
            R,
            partition_set(0, 0xBAD, partition_block(&[(0x0010, Membership::Full)])),
        )
        .unwrap();
    assert_eq!(a.mad.status, STATUS_MKEY);
    // The answer is the block as it stands.
    assert_eq!(&a.mad.data[..2], &[0xFF, 0xFF]);
    assert_eq!(n.nodes[A].agent.stats().mkey_refused, 1);
    assert_eq!(n.nodes[A].agent.mkey().violations, 1);
    assert_eq!(
        n.nodes[A].agent.partition_table(),
        [(PartitionKey::DEFAULT, Membership::Full)]
    );
    // At protect 2: not answered at all.
    let mut n = net(2);
    let r = n.ask(
        R,
        partition_set(0, 0xBAD, partition_block(&[(0x0010, Membership::Full)])),
    );
    assert_eq!(r, Err(Failure::Timeout { tries: 3 }));
    assert_eq!(n.nodes[A].agent.stats().mkey_refused, 3);
    assert_eq!(n.nodes[A].agent.partition_table().len(), 1);
}

#[test]
fn a_malformed_partition_block_is_refused_and_counted() {
    let mut n = net(1);
    let default = [(PartitionKey::DEFAULT, Membership::Full)];
    // Key 0 with the full bit.
    let mut full_zero = partition_block(&[(0x0010, Membership::Full)]);
    full_zero[2..4].copy_from_slice(&[0x80, 0x00]);
    // A key twice in the block.
    let mut twice = partition_block(&[(0x0010, Membership::Full)]);
    twice[6..8].copy_from_slice(&[0x00, 0x10]);
    // A key block 0 holds already.
    let in_block_0 = partition_block(&[(0x7FFF, Membership::Limited)]);
    for (block, data) in [
        (0, full_zero),
        (0, twice),
        (1, in_block_0.clone()),
        (2, in_block_0),
    ] {
        let a = n.ask(R, partition_set(block, KEY, data)).unwrap();
        assert_eq!(a.mad.status, Status::INVALID_VALUE, "block {block}");
        assert_eq!(n.nodes[A].agent.partition_table(), default);
    }
    assert_eq!(n.nodes[A].agent.stats().partition_sets_refused, 4);
    assert_eq!(n.nodes[A].agent.stats().sets, 0);
}

#[test]
fn a_router_keeps_its_sans_member_tables_per_hr_and_a_host_refuses_them() {
    let mut n = net(1);
    let table = PartitionTable {
        entries: vec![
            (PartitionKey::new(0x10).unwrap(), Membership::Limited),
            (PartitionKey::DEFAULT, Membership::Full),
        ],
    };
    let mut data = vec![0; MgmtClass::SUBN.attribute_len()];
    table.emit(&mut data).unwrap();
    let modifier = PartitionTable::modifier(Address(0x0101), 0);
    let set = |target, data: Vec<u8>| Request {
        method: Method::SET,
        mkey: KEY,
        data,
        ..get(target, MgmtClass::SUBN, PartitionTable::ID, modifier)
    };
    // Router A, reached on its HR 0x0140 (port 0): kept for that HR.
    let a = n.ask(R, set(to(0x0140), data.clone())).unwrap();
    assert_eq!(a.mad.status, Status::OK);
    assert_eq!(PartitionTable::parse(&a.mad.data).unwrap(), table);
    let kept: Vec<_> = n.nodes[A]
        .agent
        .member_tables()
        .of_port(PortId::new(0))
        .collect();
    assert_eq!(kept, [(Address(0x0101), table.entries.clone())]);
    assert_eq!(
        n.nodes[A]
            .agent
            .member_tables()
            .of_port(PortId::new(1))
            .count(),
        0
    );
    // Its own table did not change.
    assert_eq!(n.nodes[A].agent.partition_table().len(), 1);
    let back = n
        .ask(
            R,
            get(to(0x0140), MgmtClass::SUBN, PartitionTable::ID, modifier),
        )
        .unwrap();
    assert_eq!(PartitionTable::parse(&back.mad.data).unwrap(), table);
    // An empty table removes the entry.
    let a = n
        .ask(R, set(to(0x0140), vec![0; MgmtClass::SUBN.attribute_len()]))
        .unwrap();
    assert_eq!(a.mad.status, Status::OK);
    assert_eq!(
        n.nodes[A]
            .agent
            .member_tables()
            .of_port(PortId::new(0))
            .count(),
        0
    );
    // Host M keeps no member's table: 0x001C, counted.
    let h = n.ask(R, set(to(0x0301), data)).unwrap();
    assert_eq!(h.mad.status, Status::INVALID_VALUE);
    let h = n
        .ask(
            R,
            get(to(0x0301), MgmtClass::SUBN, PartitionTable::ID, modifier),
        )
        .unwrap();
    assert_eq!(h.mad.status, Status::INVALID_VALUE);
    assert_eq!(n.nodes[M].agent.stats().member_tables_refused, 2);
}
