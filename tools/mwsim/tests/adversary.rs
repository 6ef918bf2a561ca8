//! An adversary on one SAN (docs/spec-notes.md 60): a node that is no
//! member of the SAN sends every router HR on it, every 500 ms through a
//! schedule of port flaps and router crashes, a forged HR-DOWN, a forged
//! RT and a forged LINK-DOWN, each with the SA of a real router HR of that
//! SAN. The network converges to the same routes as the same run without
//! the adversary, with no loop, and the routers count every forged packet
//! that reached them as a spoofed source.

use mwsim::rng::seeded;
use mwsim::{Sim, SimConfig, Topology};
use rrp::wire::{Message, RouteTable, SourceRoute};
use rrp::{Address, NativeAddr, PortId};

/// Runs the fault schedule of seed `seed`, with the adversary or not;
/// returns the FIB entries of every live router (what it forwards where),
/// the loops and unreachable pairs, the forged packets delivered and the
/// spoofed packets counted.
fn run(seed: u64, adversary: bool, faults: bool) -> (Vec<String>, usize, usize, u64, u64) {
    let topo = Topology::random(6, 9, 2, seed);
    let mut s = Sim::new(
        topo,
        SimConfig {
            seed,
            ..SimConfig::default()
        },
    )
    .unwrap();
    assert!(s.run_until_converged(120_000).is_some(), "seed {seed}");
    let mut rng = seeded(seed ^ 0xFA17);
    let start = s.now + 1_000;
    let mut t = start;
    for _ in 0..if faults { 3 } else { 0 } {
        let r = rng.below(s.routers.len() as u64) as usize;
        let p = PortId::new(rng.below(s.routers[r].hrs.len() as u64) as usize);
        s.link_down_at(r, p, t);
        s.link_up_at(r, p, t + 10_000);
        t += 2_000;
    }
    for _ in 0..if faults { 2 } else { 0 } {
        let r = rng.below(s.routers.len() as u64) as usize;
        s.crash_at(r, t);
        s.restart_at(r, t + 15_000);
        t += 2_000;
    }
    let end = t + 20_000;
    if adversary {
        // The SAN of router 0's first port, and its router HRs.
        let san = s.routers[0].sans[PortId(0)];
        let hrs: Vec<Address> = s
            .routers
            .iter()
            .flat_map(|r| {
                r.sans
                    .iter()
                    .zip(r.hrs.iter())
                    .filter(|(x, _)| **x == san)
                    .map(|(_, a)| *a)
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(hrs.len() >= 2, "seed {seed}: a SAN with two routers");
        let me = NativeAddr::mac([0x02, 0xad, 0xad, 0, 0, 1]);
        let mut at = start;
        while at < end {
            for (i, &to) in hrs.iter().enumerate() {
                // The SA of another router HR of the SAN, naming a third.
                let sa = hrs[(i + 1) % hrs.len()];
                let other = hrs[(i + 2) % hrs.len()];
                let forged = |m: Message| m.to_packet(to, sa).unwrap().to_bytes().unwrap();
                let rt = RouteTable {
                    san_id: Address(0x7f00),
                    sn: (at / 500) as u16,
                    csr: SourceRoute {
                        q: 0,
                        route: rrp::route::Route(vec![]).to_l2rhs(),
                        mtu: None,
                    },
                    rcvf: vec![sa],
                    nodes: vec![],
                };
                for m in [
                    Message::HrDown { hr: other },
                    Message::RouteTable(rt),
                    Message::LinkDown { a: sa, b: other },
                ] {
                    s.forge_at(san, me, to, forged(m), at);
                }
            }
            at += 500;
        }
    }
    s.run_until(end);
    assert!(
        s.run_until_converged(s.now + 120_000).is_some(),
        "seed {seed}: reconverges"
    );
    let (_, _, unreachable, loops) = s.all_pairs();
    let mut fibs = Vec::new();
    for (ri, r) in s.routers.iter().enumerate() {
        if !r.alive {
            continue;
        }
        for p in 0..r.hrs.len() {
            for h in 0..s.hosts.len() {
                let dst = s.hosts[h].node.config().address;
                let e = s.fib_entry(ri, PortId::new(p), dst);
                fibs.push(format!("{ri}/{p}/{dst}: {e:?}"));
            }
        }
    }
    let spoofed = s.router_stats().get("spoofed").copied().unwrap_or(0);
    (fibs, loops, unreachable, s.stats.forged, spoofed)
}

#[test]
fn an_adversary_changes_no_route_and_is_counted() {
    for seed in 1..=3u64 {
        // Under the fault schedule: the same routes, no loop. (A router
        // that restarts starts its counters again, and a forged SA whose
        // router is down is a stranger's, refused as no buddy's: the
        // counts are checked on the quiet run below.)
        let (clean, loops0, unreach0, forged0, spoofed0) = run(seed, false, true);
        assert_eq!((forged0, spoofed0), (0, 0));
        let (attacked, loops, unreach, forged, _) = run(seed, true, true);
        assert!(forged > 0, "seed {seed}: the adversary reached routers");
        assert_eq!((loops, unreach), (loops0, unreach0), "seed {seed}");
        assert_eq!(loops, 0, "seed {seed}: no loop");
        assert_eq!(
            attacked, clean,
            "seed {seed}: the same routes as without the adversary"
        );
        // Quiet: every forged packet reached a live buddy's HR and was
        // counted as a spoofed source there.
        let (clean, ..) = run(seed, false, false);
        let (attacked, loops, _, forged, spoofed) = run(seed, true, false);
        assert!(forged > 0);
        assert_eq!(
            spoofed, forged,
            "seed {seed}: every forged packet counted as spoofed"
        );
        assert_eq!(loops, 0);
        assert_eq!(attacked, clean, "seed {seed}");
    }
}
