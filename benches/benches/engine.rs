//! Criterion benchmarks of the forwarding engine (`cargo bench -p benches`):
//!
//! - `loop/*`: the engine-bench scenarios at a smaller scale (256 packets in
//!   flight per port): rx burst -> process -> tx burst through in-memory
//!   ports, L3/L2/baseline at 64 and 1500 bytes; one element = one packet;
//! - `mcast/*`: the multicast variant in memory (group packets into port 0
//!   of a 5-port box, 4 copies each, 256 in flight); one element = one
//!   received packet;
//! - `decide/*`: `Engine::decide` on one L3 and one L2 packet (the buffer is
//!   restored before each call: a few stores);
//! - `fib/lookup`: `FibSet::lookup` of 4,096 random routed destinations;
//! - `rrp9/*`: `Message::emit` and `Message::parse` of an RRP#9 with 32 node
//!   entries.
//!
//! Short measurement times keep the whole run to about a minute.

use rrp::PortId;
use std::hint::black_box;
use std::time::Duration;

use benches::Rng;
use benches::mcast::{self, McastRig};
use benches::port::restore;
use benches::scenario::{
    BUF_SIZE, BaselineStep, EngineStep, HEADROOM, Kind, PORTS, Rig, SEED, SIZES, Step,
    build_packet, destinations, full_fib,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ports::{BURST, HeapBuf};
use rrp::Address;
use rrp::NativeAddr;
use rrp::kind::{PacketType, RrpType};
use rrp::wire::{Message, Mtu, NodeInfo, RouteTable, RouterHop, RtNode, SourceRoute};

const PER_PORT: usize = 256;

fn run_for<S: Step>(rig: &mut Rig, step: &mut S, iters: u64) -> Duration {
    let want = iters * (PORTS * BURST) as u64;
    let s = rig.run(step, want);
    // Normalised to exactly `iters` passes of full bursts.
    s.elapsed.mul_f64(want as f64 / s.packets as f64)
}

fn loops(c: &mut Criterion) {
    let (fib, _) = full_fib();
    let mut rng = Rng::new(SEED);
    let dests = destinations(&mut rng);
    let mut engines = EngineStep::many(fib, 4).into_iter();
    let mut g = c.benchmark_group("loop");
    g.throughput(Throughput::Elements((PORTS * BURST) as u64));
    for size in SIZES {
        let mut l3 = Rig::new(Kind::L3, size, PER_PORT, &dests, &mut rng);
        let mut l2 = Rig::new(Kind::L2, size, PER_PORT, &dests, &mut rng);
        let mut e3 = engines.next().expect("4 engines");
        let mut e2 = engines.next().expect("4 engines");
        let mut base = BaselineStep::default();
        g.bench_function(format!("l3_{size}"), |b| {
            b.iter_custom(|n| run_for(&mut l3, &mut e3, n))
        });
        g.bench_function(format!("l2_{size}"), |b| {
            b.iter_custom(|n| run_for(&mut l2, &mut e2, n))
        });
        g.bench_function(format!("baseline_{size}"), |b| {
            b.iter_custom(|n| run_for(&mut l3, &mut base, n))
        });
        for (what, s) in [("l3", &e3 as &dyn Step), ("l2", &e2), ("baseline", &base)] {
            let c = s.counters();
            let drops: u64 = c.iter().map(|p| p.dropped_total() + p.punted).sum();
            assert_eq!(drops, 0, "{what} {size}: packets dropped or punted");
        }
    }
    g.finish();
}

fn mcast_loops(c: &mut Criterion) {
    let mut rng = Rng::new(SEED);
    let mut g = c.benchmark_group("mcast");
    g.throughput(Throughput::Elements(BURST as u64));
    for size in SIZES {
        let mut rig = McastRig::new(size, PER_PORT, &mut rng);
        let mut e = mcast::engines(1).remove(0);
        g.bench_function(format!("{size}"), |b| {
            b.iter_custom(|n| {
                let want = n * BURST as u64;
                let s = rig.run(&mut e, want);
                s.elapsed.mul_f64(want as f64 / s.packets as f64)
            })
        });
        let m = e.engine().mcast_counters()[0];
        assert_eq!(
            m.copies,
            m.packets * mcast::FANOUT as u64,
            "{size}: a copy lost"
        );
    }
    g.finish();
}

fn decide(c: &mut Criterion) {
    let (fib, _) = full_fib();
    let mut rng = Rng::new(SEED);
    let dests = destinations(&mut rng);
    let step = EngineStep::many(fib, 1).remove(0);
    let mut g = c.benchmark_group("decide");
    g.throughput(Throughput::Elements(1));
    for (kind, size) in [(Kind::L3, 64), (Kind::L2, 64), (Kind::L2, 1500)] {
        let pkt = build_packet(kind, size, dests[0], &mut rng);
        let mut buf = HeapBuf::new(BUF_SIZE, HEADROOM);
        assert!(buf.set_data(&pkt, HEADROOM));
        g.bench_function(format!("{}_{size}", kind.name()), |b| {
            b.iter(|| {
                restore(&mut buf, HEADROOM, size);
                let d = step.engine().decide(step.fib(), PortId(0), &mut buf);
                assert!(matches!(d, dataplane::Decision::Forward { .. }));
                black_box(d)
            })
        });
    }
    g.finish();
}

fn fib_lookup(c: &mut Criterion) {
    let (fib, _) = full_fib();
    let mut rng = Rng::new(SEED);
    let dests: Vec<u16> = destinations(&mut rng).iter().map(|a| a.0).collect();
    let mut g = c.benchmark_group("fib");
    g.throughput(Throughput::Elements(dests.len() as u64));
    g.bench_function("lookup", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for (i, &d) in dests.iter().enumerate() {
                acc = acc.wrapping_add(fib.lookup(PortId::new(i % PORTS), black_box(d)) as u32);
            }
            black_box(acc)
        })
    });
    g.finish();
}

/// An RRP#9 with 32 node entries, each with a name and a one-hop route.
fn route_table(rng: &mut Rng) -> Message {
    let hop = |egress: u16, rng: &mut Rng| {
        let b = rng.bytes(5);
        RouterHop::new(
            Address(egress),
            NativeAddr::mac([0x02, b[0], b[1], b[2], b[3], b[4]]),
        )
        .to_l2rh()
    };
    let nodes = (0..32)
        .map(|i| RtNode {
            info: NodeInfo {
                address: Address(0x0300 + i),
                name: Some(format!("node-{i}").into_bytes()),
                ..NodeInfo::default()
            },
            route: SourceRoute {
                q: 1,
                route: vec![hop(0, rng)],
                mtu: None,
            },
        })
        .collect();
    Message::RouteTable(RouteTable {
        san_id: Address(0x0201),
        sn: 7,
        csr: SourceRoute {
            q: 3,
            route: vec![hop(0x0115, rng), hop(0x0210, rng)],
            mtu: Some(Mtu::from_bytes(1500)),
        },
        rcvf: vec![Address(0x0111), Address(0x0112)],
        nodes,
    })
}

fn rrp9(c: &mut Criterion) {
    let mut rng = Rng::new(SEED);
    let m = route_table(&mut rng);
    let mut data = Vec::new();
    m.emit(&mut data).expect("emit");
    assert_eq!(m.kind(), (PacketType::RRP, RrpType::RouteTable as u16));
    let mut g = c.benchmark_group("rrp9");
    g.throughput(Throughput::Bytes(data.len() as u64));
    let mut out = Vec::with_capacity(data.len());
    g.bench_function("emit", |b| {
        b.iter(|| {
            out.clear();
            black_box(&m).emit(&mut out).expect("emit");
            black_box(out.len())
        })
    });
    g.bench_function("parse", |b| {
        b.iter(|| {
            Message::parse(
                PacketType::RRP,
                RrpType::RouteTable as u16,
                black_box(&data),
                16,
            )
            .expect("parse")
        })
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

criterion_group! {
    name = engine;
    config = config();
    targets = loops, mcast_loops, decide, fib_lookup, rrp9
}
criterion_main!(engine);
