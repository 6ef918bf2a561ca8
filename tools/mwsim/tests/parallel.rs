//! The simulator on several threads runs exactly the sequential run
//! (docs/rrp.md "The simulator"): the same messages in the same order, the
//! same FIBs, the same events, the same packets delivered, for every kind
//! of event the simulator has (RTs and their timers, faults from the
//! seeded generator, link flaps, crashes and restarts, unicast data
//! forwarded, multicast replicated, forged packets).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use mwsim::rng::seeded;
use mwsim::{Sim, SimConfig, Topology};
use rrp::{Address, NativeAddr, PortId};

/// Everything a run leaves behind that can be compared, as text.
fn fingerprint(s: &Sim) -> String {
    let mut out = String::new();
    let mut line = |x: String| {
        out.push_str(&x);
        out.push('\n');
    };
    line(format!(
        "now {} last fib change {}",
        s.now, s.last_fib_change
    ));
    line(format!("{:?}", s.stats));
    line(format!("{:?}", s.router_stats()));
    line(format!("{:?}", s.rts_per_hr()));
    line(format!("{:?}", s.all_pairs()));
    for e in &s.events {
        line(format!("{e:?}"));
    }
    // The trace, every message with its bytes, hashed (it is long).
    let mut h = std::hash::DefaultHasher::new();
    for t in &s.trace {
        (t.time, t.san, t.from, t.to, &t.bytes).hash(&mut h);
    }
    line(format!(
        "trace {} messages, hash {:x}",
        s.trace.len(),
        h.finish()
    ));
    let mcast: BTreeMap<_, _> = s.mcast_on_san.iter().collect();
    line(format!("{mcast:?}"));
    let dsts: Vec<Address> = s.hosts.iter().map(|h| h.node.config().address).collect();
    for (r, rt) in s.routers.iter().enumerate() {
        line(format!(
            "router {r} alive {} dropped {:?}",
            rt.alive, rt.dropped
        ));
        for p in PortId::all(rt.hrs.len()) {
            for d in &dsts {
                line(format!("{r} {p:?} {d:?} {:?}", s.fib_entry(r, p, *d)));
            }
        }
    }
    for h in &s.hosts {
        line(format!("{} {:?}", h.name, h.inbox));
    }
    out
}

/// A random network with every fault the generator draws, flaps, crashes
/// and restarts, then unicast and multicast traffic and forged packets.
fn stormy(seed: u64, threads: usize) -> Sim {
    let topo = Topology::random(16, 26, 2, seed);
    let cfg = SimConfig {
        seed,
        trace: true,
        threads,
        ..SimConfig::default()
    };
    let mut s = Sim::new(topo, cfg).unwrap();
    s.run_until_converged(60_000);
    // A router takes a port down, advertises the change at once (its last
    // advertisement is long past) and crashes 1 ms later: the RRP#9s it
    // sent to several buddies at once are on the wire when it dies, and
    // each is lost.
    let at = s.now + 100;
    s.link_down_at(1, PortId(0), at);
    s.crash_at(1, at + 1);
    s.restart_at(1, at + 2_000);
    s.link_up_at(1, PortId(0), at + 2_000);
    s.run_until(at + 3_000);
    // Then every fault the generator draws.
    s.cfg.loss = 0.02;
    s.cfg.dup = 0.02;
    s.cfg.reorder = 0.03;
    s.cfg.jitter_ms = 2;
    let mut rng = seeded(seed ^ 0xFA17);
    let mut t = s.now + 500;
    for _ in 0..3 {
        let r = rng.below(s.routers.len() as u64) as usize;
        let p = PortId::new(rng.below(s.routers[r].hrs.len() as u64) as usize);
        s.link_down_at(r, p, t);
        s.link_up_at(r, p, t + 4_000);
        t += 700;
    }
    for _ in 0..2 {
        let r = rng.below(s.routers.len() as u64) as usize;
        s.crash_at(r, t);
        s.restart_at(r, t + 5_000);
        t += 900;
    }
    // A forged RRP#9 at an HR, from a native address that is no member.
    let (r0, p0) = (0, PortId(0));
    let san = s.routers[r0].sans[p0];
    let forged = rrp::wire::Message::RouteTable(rrp::wire::RouteTable {
        san_id: Address(0x7F00),
        sn: 1,
        csr: rrp::wire::SourceRoute::default(),
        rcvf: vec![s.routers[r0].hrs[p0]],
        nodes: Vec::new(),
    })
    .to_packet(s.routers[r0].hrs[p0], Address(0x0777))
    .unwrap()
    .to_bytes()
    .unwrap();
    s.forge_at(
        san,
        NativeAddr::mac([0x0e, 0, 0, 0, 0, 0x77]),
        s.routers[r0].hrs[p0],
        forged,
        t,
    );
    s.run_until(t + 2_000);
    // Traffic while the network heals: groups joined, group packets and
    // unicast data sent from every host.
    let hosts = s.hosts.len();
    let group = Address(0x8200);
    for h in (0..hosts).step_by(3) {
        s.host_join(h, group);
    }
    for round in 0..5u32 {
        for h in 0..hosts {
            let dst = s.hosts[(h * 7 + round as usize) % hosts]
                .node
                .config()
                .address;
            s.host_send_data(h, dst, 0, &round.to_be_bytes());
            if h % 5 == 0 {
                s.host_send_group(h, group, &(round * 1000 + h as u32).to_be_bytes());
            }
        }
        let next = s.now + 300;
        s.run_until(next);
    }
    s.run_until(s.now + 3_000);
    s
}

#[test]
fn two_and_three_threads_run_exactly_the_sequential_run() {
    for seed in [3, 8] {
        let one = stormy(seed, 1);
        let want = fingerprint(&one);
        assert_eq!(one.steps_on_threads, 0);
        for threads in [2, 3] {
            let s = stormy(seed, threads);
            assert!(
                s.steps_on_threads > 0,
                "seed {seed}, {threads} threads: no instant ran on threads"
            );
            let got = fingerprint(&s);
            if got != want {
                let first = want
                    .lines()
                    .zip(got.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                panic!(
                    "seed {seed}, {threads} threads: differs from the sequential run at line {first}:\n{}\n{}",
                    want.lines().nth(first).unwrap_or(""),
                    got.lines().nth(first).unwrap_or("")
                );
            }
        }
        // The run did something worth comparing.
        assert!(one.stats.lost > 0 && one.stats.duplicated > 0 && one.stats.reordered > 0);
        assert!(one.stats.mcast_copies > 0 && one.stats.forged > 0);
        assert!(one.hosts.iter().any(|h| !h.inbox.is_empty()));
    }
}

#[test]
fn appendix_b_on_threads_keeps_the_drafts_routes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/appendix-b.toml"
    );
    let topo = Topology::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap();
    let run = |threads| {
        let mut s = Sim::new(
            topo.clone(),
            SimConfig {
                threads,
                trace: true,
                ..SimConfig::default()
            },
        )
        .unwrap();
        assert!(s.run_until_converged(60_000).is_some());
        s
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(fingerprint(&one), fingerprint(&two));
}
