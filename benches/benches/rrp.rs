//! Criterion benchmarks of the RRP engine (`cargo bench -p benches --bench
//! rrp`): what one RT change costs a router, the figure a deployed box
//! cares about (docs/performance.md "RRP simulator scale").
//!
//! The box has 4 HRs, each on its own SAN with 2 buddies, and holds the RTs
//! of 1,000 (then 5,000) other SANs (5 nodes each) from every buddy: 8,000
//! (40,000) learned RTs, 20,000 (100,000) destinations routed per HR. What
//! the router's state takes at each size (the growth of the process's
//! resident memory while loading it, both sizes loaded side by side before
//! any measurement) is printed first. Then, per iteration:
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
/// The sizes measured: SANs whose RTs the box holds.
const SIZES: [u16; 2] = [1_000, 5_000];
/// Nodes per SAN: 5,000 SANs of 5 nodes and their SAN-IDs fill most of the
/// 0x0040-0x7FFD range that both share (draft, RRP-Msgs: "The SAN-ID is a
/// 16 bit entity, between 0x0040 and 0x7FFD, just as node addresses").
const NODES: u16 = 5;

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
    Address(0x0400 + i)
}

/// The router (one of two) a buddy's RTs came through (CSR and RCVF).
fn upstream(b: u16) -> Address {
    Address(0x0300 + b)
}

fn packet(m: &Message, dst: Address, src: Address) -> Vec<u8> {
    m.to_packet(dst, src)
        .expect("packet")
        .to_bytes()
        .expect("bytes")
}

/// The RT of SAN `i` that buddy `b` of port `p` advertises, version `sn`.
fn rt(p: u16, b: u16, i: u16, sn: u16) -> Vec<u8> {
    let mapper = Address(0x1800 + i * NODES);
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
            route: Route(vec![RouterHop::new(upstream(b), nat(0x3100 + i))]).to_l2rhs(),
            mtu: Some(Mtu::from_bytes(1500)),
        },
        rcvf: vec![upstream(b), mapper],
        nodes,
    });
    packet(&m, hr(p), buddy(p, b))
}

/// A box with 4 HRs, 2 buddies each, holding the RTs of `sans` SANs from
/// every buddy; its FIBs computed and its advertisements sent.
fn loaded(sans: u16) -> Router {
    let hrs = (0..PORTS)
        .map(|p| HrConfig {
            address: hr(p),
            san_id: Address(0x0380 + p),
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
    for i in 0..sans {
        for p in 0..PORTS {
            for b in 0..BUDDIES {
                r.handle_bytes(2, PortId(p), &nat(buddy(p, b).0), &rt(p, b, i, 1));
            }
        }
    }
    r.on_timer(10);
    drain(&mut r);
    assert_eq!(
        r.stats().rts_accepted,
        u64::from(sans) * u64::from(PORTS * BUDDIES)
    );
    r
}

fn drain(r: &mut Router) -> usize {
    std::iter::from_fn(|| r.poll_output())
        .filter(|o| matches!(o, Output::SendEach { .. } | Output::Send { .. }))
        .count()
}

/// The process's resident memory (VmRSS), bytes.
fn resident() -> u64 {
    benches::sysinfo::proc_number("/proc/self/status", "VmRSS").map_or(0, |kb| kb * 1024)
}

fn rt_change(c: &mut Criterion) {
    // Both sizes loaded and kept before either is measured, so that the
    // second's growth is not memory the first gave back.
    let mut held = Vec::new();
    for sans in SIZES {
        let before = resident();
        held.push(loaded(sans));
        eprintln!(
            "rt_change_{sans}: a router holding {sans} SANs' RTs from {} buddies: {:.1} MiB resident",
            PORTS * BUDDIES,
            resident().saturating_sub(before) as f64 / (1024.0 * 1024.0)
        );
    }
    drop(held);
    for sans in SIZES {
        rt_change_at(c, sans);
    }
}

fn rt_change_at(c: &mut Criterion, sans: u16) {
    let mut g = c.benchmark_group(format!("rt_change_{sans}"));
    let mut r = loaded(sans);
    let repeat = rt(0, 0, 7, 1);
    g.bench_function("refresh", |b| {
        b.iter(|| r.handle_bytes(20, PortId(0), &nat(buddy(0, 0).0), black_box(&repeat)))
    });
    // New versions: each SAN's RT in turn, its SN (R8, the first record)
    // patched in an RRP#9 encoded beforehand (encoding is the sender's work).
    let mut templates: Vec<Vec<u8>> = (0..sans).map(|i| rt(0, 0, i, 1)).collect();
    let mut next = move |k: usize| -> Vec<u8> {
        let t = &mut templates[k % usize::from(sans)];
        let sn = (2 + k / usize::from(sans)) as u16;
        let at = HEADER_LEN + record::field::R8_SN;
        t[at..at + 2].copy_from_slice(&sn.to_be_bytes());
        t.clone()
    };
    let mut r = loaded(sans);
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
    let mut r = loaded(sans);
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
