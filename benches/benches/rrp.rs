//! Criterion benchmarks of the RRP engine (`cargo bench -p benches --bench
//! rrp`): what one RT change costs a router, the figure a deployed box
//! cares about (docs/performance.md "RRP simulator scale").
//!
//! The box has 4 HRs, each on its own SAN with 2 buddies, and holds the RTs
//! of 1,000 other SANs (6 nodes each) from every buddy: 8,000 learned RTs,
//! 24,000 destinations routed per HR. Then, per iteration:
//!
//! - `rt_change/refresh`: a buddy repeats an RT it sent (same SN): settled
//!   from its R8, R5 and R7;
//! - `rt_change/new_sn`: a buddy sends a new version of an RT (higher SN,
//!   same path, same node list), which replaces the one held;
//! - `rt_change/new_sn_fib_adv`: the same, then the engine's timers run:
//!   the FIB rows of that SAN are recomputed and patched, and the twins
//!   advertise the change to their buddies (RRP#9 encoded once per SAN).
//!
//! Each iteration moves the clock past the FIB and advertisement intervals
//! (1 ms here) so that every change is computed and sent.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rrp::route::Route;
use rrp::router::{HrConfig, Output, Router, RouterConfig, Timers};
use rrp::wire::{
    Capability, HEADER_LEN, Message, Mtu, NodeInfo, RouteTable, RouterHop, RtNode, SourceRoute,
    record,
};
use rrp::{Address, NativeAddr, PortId};

const PORTS: u16 = 4;
const BUDDIES: u16 = 2;
const SANS: u16 = 1000;
const NODES: u16 = 6;

fn nat(a: u16) -> NativeAddr {
    let [x, y] = a.to_be_bytes();
    NativeAddr::mac([2, 0, 0, 0, x, y])
}

fn hr(p: u16) -> Address {
    Address(0x0100 + p)
}

fn buddy(p: u16, b: u16) -> Address {
    Address(0x0200 + p * 16 + b)
}

fn san(i: u16) -> Address {
    Address(0x1000 + i)
}

fn packet(m: &Message, dst: Address, src: Address) -> Vec<u8> {
    m.to_packet(dst, src)
        .expect("packet")
        .to_bytes()
        .expect("bytes")
}

/// The RT of SAN `i` that buddy `b` of port `p` advertises, version `sn`.
fn rt(p: u16, b: u16, i: u16, sn: u16) -> Vec<u8> {
    let mapper = Address(0x4000 + i * 8);
    let nodes = (0..NODES)
        .map(|n| RtNode {
            info: NodeInfo {
                address: Address(mapper.0 + n),
                name: Some(format!("n{i}.{n}").into_bytes()),
                ..NodeInfo::default()
            },
            route: SourceRoute {
                q: if n == 0 { 0 } else { 1 },
                route: if n == 0 {
                    vec![]
                } else {
                    Route(vec![RouterHop::native(nat(mapper.0 + n))]).to_l2rhs()
                },
                mtu: None,
            },
        })
        .collect();
    let m = Message::RouteTable(RouteTable {
        san_id: san(i),
        sn,
        csr: SourceRoute {
            q: 2 + (i % 7) + b,
            route: Route(vec![RouterHop::new(Address(0x3000 + b), nat(0x3100 + i))]).to_l2rhs(),
            mtu: Some(Mtu::from_bytes(1500)),
        },
        rcvf: vec![Address(0x3000 + b), mapper],
        nodes,
    });
    packet(&m, hr(p), buddy(p, b))
}

/// A box with 4 HRs, 2 buddies each, holding the RTs of 1,000 SANs from
/// every buddy; its FIBs computed and its advertisements sent.
fn loaded() -> Router {
    let hrs = (0..PORTS)
        .map(|p| HrConfig {
            address: hr(p),
            san_id: Address(0x0800 + p),
            mtu: 9000,
            cost: 1,
            native: nat(hr(p).0),
            static_nodes: vec![],
            auth: None,
        })
        .collect();
    let mut cfg = RouterConfig::new("bench", hrs);
    cfg.timers = Timers {
        advertise_ms: 1,
        fib_ms: 1,
        sweep_ms: 1_000_000,
        keepalive_ms: 1_000_000,
        refresh_ms: 10_000_000,
        hold_ms: 20_000_000,
        ..Timers::default()
    };
    let mut r = Router::new(cfg, 0).expect("config");
    for p in 0..PORTS {
        for b in 0..BUDDIES {
            let info = NodeInfo {
                address: buddy(p, b),
                name: None,
                capabilities: vec![Capability {
                    code: 2,
                    params: vec![],
                }],
                logical: None,
            };
            let m = packet(&Message::Info(vec![info]), hr(p), buddy(p, b));
            r.handle_bytes(1, PortId(p), &nat(buddy(p, b).0), &m);
        }
    }
    for i in 0..SANS {
        for p in 0..PORTS {
            for b in 0..BUDDIES {
                r.handle_bytes(2, PortId(p), &nat(buddy(p, b).0), &rt(p, b, i, 1));
            }
        }
    }
    r.on_timer(10);
    drain(&mut r);
    assert_eq!(r.stats().rts_accepted, u64::from(SANS * PORTS * BUDDIES));
    r
}

fn drain(r: &mut Router) -> usize {
    std::iter::from_fn(|| r.poll_output())
        .filter(|o| matches!(o, Output::SendEach { .. } | Output::Send { .. }))
        .count()
}

fn rt_change(c: &mut Criterion) {
    let mut g = c.benchmark_group("rt_change");
    let mut r = loaded();
    let repeat = rt(0, 0, 7, 1);
    g.bench_function("refresh", |b| {
        b.iter(|| r.handle_bytes(20, PortId(0), &nat(buddy(0, 0).0), black_box(&repeat)))
    });
    // New versions: each SAN's RT in turn, its SN (R8, the first record)
    // patched in an RRP#9 encoded beforehand (encoding is the sender's work).
    let mut templates: Vec<Vec<u8>> = (0..SANS).map(|i| rt(0, 0, i, 1)).collect();
    let mut next = move |k: usize| -> Vec<u8> {
        let t = &mut templates[k % SANS as usize];
        let sn = (2 + k / SANS as usize) as u16;
        let at = HEADER_LEN + record::field::R8_SN;
        t[at..at + 2].copy_from_slice(&sn.to_be_bytes());
        t.clone()
    };
    let mut r = loaded();
    let mut k = 0usize;
    g.bench_function("new_sn", |b| {
        b.iter_batched(
            || {
                k += 1;
                next(k)
            },
            |p| r.handle_bytes(30, PortId(0), &nat(buddy(0, 0).0), &p),
            BatchSize::SmallInput,
        )
    });
    let mut r = loaded();
    let mut now = 100u64;
    g.bench_function("new_sn_fib_adv", |b| {
        b.iter_batched(
            || {
                k += 1;
                next(k)
            },
            |p| {
                r.handle_bytes(now, PortId(0), &nat(buddy(0, 0).0), &p);
                now += 2;
                r.on_timer(now);
                black_box(drain(&mut r));
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
}

criterion_group! {
    name = rrp;
    config = config();
    targets = rt_change
}
criterion_main!(rrp);
