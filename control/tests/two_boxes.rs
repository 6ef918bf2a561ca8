//! Two boxes, each with a worker thread and a control-plane thread, joined
//! by in-memory wires, with a host at each end: RRP discovers the hosts and
//! the other box, the FIBs are published to the workers, and a host's
//! packet crosses both boxes.

use rrp::PortId;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use control::ControlPlane;
use dataplane::{ChannelConfig, EngineConfig, FibSet, IdlePolicy, Worker, channels, fib_channel};
use ports::memory::{MemPort, mem_link};
use rrp::Address;
use rrp::NativeAddr;
use rrp::kind::PacketType;
use rrp::node::{Level, Node, NodeConfig};
use rrp::router::{HrConfig, Router, RouterConfig, Timers};
use rrp::wire::{HeaderRepr, PacketRepr};

fn mac(n: u8) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 0, n])
}

struct BoxUnderTest {
    worker: std::thread::JoinHandle<Worker<MemPort>>,
    stop: Arc<AtomicBool>,
    plane: control::PlaneHandle,
}

fn start_box(name: &str, hrs: [(u16, u16, u8); 2], ports: Vec<MemPort>) -> BoxUnderTest {
    let hrcfg: Vec<HrConfig> = hrs
        .iter()
        .map(|(addr, san, n)| HrConfig {
            address: Address(*addr),
            san_id: Address(*san),
            mtu: 1500,
            cost: 1,
            native: NativeAddr::mac(mac(*n).as_mac().unwrap()),
            static_nodes: vec![],
            auth: None,
        })
        .collect();
    let mut cfg = RouterConfig::new(name, hrcfg);
    cfg.timers = Timers {
        probe_ms: 200,
        sweep_ms: 300,
        keepalive_ms: 200,
        keepalive_misses: 5,
        refresh_ms: 5_000,
        hold_ms: 15_000,
        advertise_ms: 20,
        fib_ms: 10,
        tombstone_ms: 2_000,
    };
    let engine = Router::new(cfg, 0).unwrap();
    let addrs: Vec<Address> = hrs.iter().map(|h| Address(h.0)).collect();
    let ecfg = EngineConfig {
        hrs: addrs.clone(),
        mtus: vec![1500, 1500],
    };
    let (publisher, mut readers) = fib_channel(FibSet::new(2, &addrs), 1);
    let (wch, cch) = channels(ChannelConfig::default());
    let worker = Worker::new(0, &ecfg, ports, readers.remove(0), wch);
    let stop = Arc::new(AtomicBool::new(false));
    let worker = worker
        .spawn(None, IdlePolicy::LAB, stop.clone(), || {})
        .unwrap();
    let plane = ControlPlane::new(engine, vec![cch], publisher)
        .spawn(Duration::from_millis(2))
        .unwrap();
    BoxUnderTest {
        worker,
        stop,
        plane,
    }
}

/// A host on the end of a wire: answers RRP#7 and keeps what it receives.
struct Host {
    node: Node,
    port: MemPort,
    received: Vec<PacketRepr>,
    learned: Vec<rrp::node::Learned>,
}

impl Host {
    fn poll(&mut self) {
        while let Some(bytes) = self.port.recv_bytes() {
            let dst = rrp::wire::Header::new_unchecked(&bytes[..]).dst();
            if dst != self.node.config().address && dst != rrp::Address::BROADCAST {
                continue;
            }
            if let Ok((reply, learned)) = self.node.handle_packet(&bytes) {
                if let Some(r) = reply {
                    assert!(self.port.send_bytes(&r));
                }
                match learned {
                    Some(rrp::node::Learned::Data(p)) => self.received.push(p),
                    Some(l) => self.learned.push(l),
                    None => {}
                }
            }
        }
    }
}

fn host(addr: u16, port: MemPort) -> Host {
    Host {
        node: Node::new(NodeConfig {
            address: Address(addr),
            name: Some(format!("h{addr:x}").into_bytes()),
            capabilities: vec![],
            logical: None,
            level: Level::C,
        }),
        port,
        received: vec![],
        learned: vec![],
    }
}

#[test]
fn packets_cross_two_boxes_once_rrp_has_converged() {
    let (h1_end, a0) = mem_link(256, mac(0x01), mac(0x11));
    let (a1, b0) = mem_link(256, mac(0x12), mac(0x21));
    let (b1, h2_end) = mem_link(256, mac(0x22), mac(0x02));
    let box_a = start_box(
        "A",
        [(0x0511, 0x0601, 0x11), (0x0512, 0x0602, 0x12)],
        vec![a0, a1],
    );
    let box_b = start_box(
        "B",
        [(0x0521, 0x0602, 0x21), (0x0522, 0x0603, 0x22)],
        vec![b0, b1],
    );
    let mut h1 = host(0x0501, h1_end);
    let mut h2 = host(0x0502, h2_end);

    // Until box A routes to h2 and box B to h1 (published FIBs).
    let deadline = Instant::now() + Duration::from_secs(20);
    let data = PacketRepr {
        l2rhs: vec![],
        header: HeaderRepr {
            dst: Address(0x0502),
            src: Address(0x0501),
            packet_type: PacketType(0x0100),
            ..Default::default()
        },
        data: b"across two boxes".to_vec(),
        ei: 0,
    }
    .to_bytes()
    .unwrap();
    loop {
        h1.poll();
        h2.poll();
        assert!(Instant::now() < deadline, "no convergence: h2 got nothing");
        if h2.received.is_empty() {
            // Keep sending: early copies are dropped (no route) until the FIBs arrive.
            let _ = h1.port.send_bytes(&data);
            std::thread::sleep(Duration::from_millis(20));
        } else {
            break;
        }
    }
    let got = &h2.received[0];
    assert_eq!(got.header.src, Address(0x0501));
    assert_eq!(got.data, b"across two boxes");
    assert_eq!(got.ei, 0, "EI shifted twice, no error");

    // h1 asks box A which HR to use for h2: A itself.
    let q = h1.node.which_hr(Address(0x0511), Address(0x0502));
    assert!(h1.port.send_bytes(&q));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !h1
        .learned
        .iter()
        .any(|l| matches!(l, rrp::node::Learned::Redirect { .. }))
    {
        h1.poll();
        h2.poll();
        assert!(Instant::now() < deadline, "no answer to RRP#6");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        h1.node.first_hr(Address(0x0502), Address(0)),
        Address(0x0511)
    );
    // An unknown destination gets ERR UNK from box A.
    let mut unk = PacketRepr::parse(&data).unwrap();
    unk.header.dst = Address(0x0777);
    assert!(h1.port.send_bytes(&unk.to_bytes().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !h1.node.unknown.contains(&Address(0x0777)) {
        h1.poll();
        h2.poll();
        assert!(Instant::now() < deadline, "no ERR UNK");
        std::thread::sleep(Duration::from_millis(5));
    }

    // Admin-style requests run on the control thread: a query, then a
    // static entry added at run time and routed.
    let lrt0 = box_a
        .plane
        .call(Duration::from_secs(2), |cp| {
            cp.engine().lrt(PortId(0)).len()
        })
        .unwrap();
    assert!(lrt0 >= 1, "box A knows h1");
    let added = box_a
        .plane
        .call(Duration::from_secs(2), |cp| {
            cp.engine_mut().add_static(
                PortId(0),
                rrp::router::StaticNode {
                    groups: Vec::new(),
                    address: Address(0x0599),
                    native: NativeAddr::mac([2, 0, 0, 0, 0, 0x99]),
                    name: None,
                    capabilities: vec![],
                },
            )
        })
        .unwrap();
    assert_eq!(added, Ok(()));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let routed = box_a
            .plane
            .call(Duration::from_secs(2), |cp| {
                cp.routes().lookup(PortId(1), Address(0x0599)).is_some()
            })
            .unwrap();
        if routed {
            break;
        }
        assert!(Instant::now() < deadline, "static entry not routed");
        std::thread::sleep(Duration::from_millis(10));
    }

    for b in [box_a, box_b] {
        let plane = b.plane.stop();
        b.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let w = b.worker.join().unwrap();
        for c in w.counters() {
            assert!(c.balanced(), "{c:?}");
        }
        assert!(plane.stats().injected > 0);
        assert!(plane.engine().stats().received > 0);
    }
}
