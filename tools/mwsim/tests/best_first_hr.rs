//! The best first HR: in a converged simulation every ordered pair of
//! distinct hosts is joined by a path that costs exactly what a
//! shortest-path computation written here says. The reference is Dijkstra
//! over the topology alone, not the RRP engine nor mwsim's routing:
//! vertices are the hosts and the HRs; any two members of a SAN are joined
//! at the SAN's cost, any two HRs of a router at the router's cost.
//!
//! The path is the simulator's: the host asks its HR with RRP#6
//! (`Sim::first_hop`) and follows the answer, then each router's FIB hop by
//! hop. It costs the host's SAN to reach the first HR (or the destination
//! when it is on the same SAN), then, for every router crossed, the
//! router's cost and the cost of the SAN it sends the packet onto. Every
//! walk must also reach its destination without a loop.
//!
//! Scenarios: examples/best-first-hr.toml (h reaches g through r1 alone at
//! 5, not through r2 and r3 at 7) and random topologies with SAN costs 1 to
//! 10. Failing pairs are printed (source, destination, walked and best
//! cost, the routers walked, and whether the first HR or a FIB hop was the
//! costlier choice) before the test fails.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use mwsim::{Member, Sim, SimConfig, Topology, native_of};
use rrp::Address;
use rrp::router::Next;

/// The reference graph: each host or HR (by address) with its neighbours
/// and the cost of the edge to each.
type Graph = BTreeMap<Address, Vec<(Address, u32)>>;

fn topo(name: &str) -> Topology {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    Topology::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn converged(topo: Topology, seed: u64) -> Sim {
    let mut s = Sim::new(
        topo,
        SimConfig {
            seed,
            ..SimConfig::default()
        },
    )
    .unwrap();
    assert!(
        s.run_until_converged(120_000).is_some(),
        "seed {seed}: no convergence"
    );
    s
}

fn address(s: &Sim, h: usize) -> Address {
    s.hosts[h].node.config().address
}

fn san_cost(s: &Sim, san: usize) -> u32 {
    s.topo.sans[san].cost.into()
}

fn router_cost(s: &Sim, r: usize) -> u32 {
    s.topo.routers[r].cost.into()
}

/// Joins every two of `group` at cost `w`.
fn join(g: &mut Graph, group: &[Address], w: u32) {
    for a in group {
        for b in group.iter().filter(|b| *b != a) {
            g.entry(*a).or_default().push((*b, w));
        }
    }
}

/// The reference graph of a topology.
fn graph(t: &Topology) -> Graph {
    let mut on_san: BTreeMap<&str, Vec<Address>> = BTreeMap::new();
    for h in &t.hosts {
        on_san.entry(&h.san).or_default().push(Address(h.address));
    }
    for hr in t.routers.iter().flat_map(|r| &r.hrs) {
        on_san.entry(&hr.san).or_default().push(Address(hr.address));
    }
    let mut g = Graph::new();
    for san in &t.sans {
        let members = on_san.get(san.name.as_str()).cloned().unwrap_or_default();
        join(&mut g, &members, san.cost.into());
    }
    for r in &t.routers {
        let hrs: Vec<Address> = r.hrs.iter().map(|h| Address(h.address)).collect();
        join(&mut g, &hrs, r.cost.into());
    }
    g
}

/// The cost of the cheapest path between `from` and every vertex (the
/// edges are undirected, so this is also the cost from every vertex to
/// `from`).
fn dijkstra(g: &Graph, from: Address) -> BTreeMap<Address, u32> {
    let mut dist = BTreeMap::new();
    let mut heap = BinaryHeap::from([Reverse((0u32, from))]);
    while let Some(Reverse((d, v))) = heap.pop() {
        if dist.contains_key(&v) {
            continue;
        }
        dist.insert(v, d);
        for (w, c) in g.get(&v).into_iter().flatten() {
            if !dist.contains_key(w) {
                heap.push(Reverse((d + c, *w)));
            }
        }
    }
    dist
}

/// Failing pairs printed per simulation (the summary counts them all).
const SHOWN: usize = 20;

/// A packet followed from a host to a destination.
struct Walked {
    /// What the host's RRP#6 answered (an HR, or the destination itself).
    first: Option<Address>,
    /// Its cost so far (the whole path's when it arrived).
    cost: u32,
    /// Each HR it entered: router, HR address, cost walked to get there.
    hops: Vec<(usize, Address, u32)>,
    /// Ok when it reached the destination; else why not.
    arrived: Result<(), String>,
}

/// Follows a packet from host `h` to `dst`: RRP#6 to the host's HR, the
/// answer followed, then the FIB of every HR it enters.
fn walk(s: &Sim, h: usize, dst: Address) -> Walked {
    let host = &s.hosts[h];
    let mut w = Walked {
        first: s.first_hop(h, dst),
        cost: san_cost(s, host.san),
        hops: Vec::new(),
        arrived: Ok(()),
    };
    let Some(first) = w.first else {
        w.arrived = Err("RRP#6 unanswered".into());
        return w;
    };
    let mut next = s.member_at(host.san, &native_of(first));
    let mut seen = BTreeSet::new();
    loop {
        match next {
            Some(Member::Host(x)) if address(s, x) == dst => return w,
            Some(Member::Router { r, port }) => {
                let rt = &s.routers[r];
                w.hops.push((r, rt.hrs[port], w.cost));
                if !seen.insert((r, port)) {
                    w.arrived = Err(format!("loop at {}/{}", rt.name, rt.hrs[port]));
                    return w;
                }
                let fib = rt.engine.fib();
                let Some(Next::Forward { port: out, native }) =
                    fib.lookup(port, dst).map(|e| e.next)
                else {
                    w.arrived = Err(format!("no route out at {}/{}", rt.name, rt.hrs[port]));
                    return w;
                };
                if out != port {
                    w.cost += router_cost(s, r);
                }
                let san = rt.sans[out];
                w.cost += san_cost(s, san);
                next = s.member_at(san, &native);
            }
            other => {
                w.arrived = Err(format!("delivered to {other:?}"));
                return w;
            }
        }
    }
}

fn router_names(s: &Sim, w: &Walked) -> Vec<String> {
    w.hops
        .iter()
        .map(|(r, _, _)| s.routers[*r].name.clone())
        .collect()
}

/// The pairs of one converged simulation, and those that failed.
#[derive(Default)]
struct Report {
    pairs: usize,
    /// Pairs on one SAN.
    same_san: usize,
    /// Pairs on two SANs whose asked HR is already a best first HR.
    asked_best: usize,
    /// Failing pairs by kind (a pair can be of both the first two).
    costlier_first_hr: usize,
    costlier_fib_hop: usize,
    not_arrived: usize,
    /// Failures among the pairs on one SAN and those whose asked HR is best.
    same_san_failed: usize,
    asked_best_failed: usize,
    /// One line per failing pair.
    failures: Vec<String>,
}

/// Why the walk of `h` to `dst` costs more than `best`: the first HR, a
/// FIB hop, or both (`to_dst`: the reference cost of every vertex to `dst`).
fn diagnose(
    s: &Sim,
    h: usize,
    w: &Walked,
    best: u32,
    to_dst: &BTreeMap<Address, u32>,
) -> (bool, Option<String>) {
    let x = san_cost(s, s.hosts[h].san);
    let Some(via_first) = w.first.and_then(|f| to_dst.get(&f)).map(|d| x + d) else {
        return (false, None);
    };
    let first_costlier = via_first > best;
    // The last HR entered whose remaining walk costs more than the reference
    // holds the costlier FIB hop.
    let fib_hop = w
        .hops
        .iter()
        .rev()
        .find(|(_, hr, at)| w.cost - at > to_dst[hr])
        .filter(|_| w.arrived.is_ok() && w.cost > via_first)
        .map(|(r, hr, at)| {
            format!(
                "FIB hop at {}/{} costs {} to the destination, best {}",
                s.routers[*r].name,
                hr,
                w.cost - at,
                to_dst[hr]
            )
        });
    (first_costlier, fib_hop)
}

/// Walks every ordered pair of distinct hosts and compares each cost with
/// the reference; prints a summary and the first `SHOWN` failing pairs.
fn check(s: &Sim, label: &str) -> Report {
    let g = graph(&s.topo);
    let hrs_on = s.topo.hrs_on();
    let mut rep = Report::default();
    for d in 0..s.hosts.len() {
        let dst = address(s, d);
        let to_dst = dijkstra(&g, dst);
        for h in (0..s.hosts.len()).filter(|h| *h != d) {
            rep.pairs += 1;
            let host = &s.hosts[h];
            let x = san_cost(s, host.san);
            let best = to_dst[&address(s, h)];
            let same_san = host.san == s.hosts[d].san;
            let asked_best = !same_san && to_dst.get(&host.hr).is_some_and(|c| x + c == best);
            rep.same_san += usize::from(same_san);
            rep.asked_best += usize::from(asked_best);
            let w = walk(s, h, dst);
            if w.arrived.is_ok() && w.cost == best {
                continue;
            }
            rep.same_san_failed += usize::from(same_san);
            rep.asked_best_failed += usize::from(asked_best);
            let mut why = Vec::new();
            if let Err(e) = &w.arrived {
                rep.not_arrived += 1;
                why.push(format!("not delivered: {e}"));
            } else if w.cost < best {
                why.push("cheaper than the reference: the walk or the reference is wrong".into());
            }
            let (first_costlier, fib_hop) = diagnose(s, h, &w, best, &to_dst);
            if first_costlier {
                rep.costlier_first_hr += 1;
                let first = w.first.expect("diagnosed");
                let best_first = hrs_on[host.san]
                    .iter()
                    .map(|a| Address(*a))
                    .min_by_key(|a| (to_dst[a], *a))
                    .expect("an HR on the host's SAN");
                why.push(format!(
                    "first HR {first} (asked {}): at best {} through it, {} through {best_first}",
                    host.hr,
                    x + to_dst[&first],
                    x + to_dst[&best_first]
                ));
            }
            if let Some(f) = fib_hop {
                rep.costlier_fib_hop += 1;
                why.push(f);
            }
            rep.failures.push(format!(
                "{label}: {} ({}) -> {} ({dst}): walked {}, best {best}, routers {:?}; {}",
                host.name,
                address(s, h),
                s.hosts[d].name,
                w.cost,
                router_names(s, &w),
                why.join("; ")
            ));
        }
    }
    eprintln!(
        "{label}: {} pairs ({} on one SAN, {} whose asked HR is best), {} fail: \
         {} costlier first HR, {} costlier FIB hop, {} not delivered; \
         failing among one-SAN pairs {}, among asked-HR-best pairs {}",
        rep.pairs,
        rep.same_san,
        rep.asked_best,
        rep.failures.len(),
        rep.costlier_first_hr,
        rep.costlier_fib_hop,
        rep.not_arrived,
        rep.same_san_failed,
        rep.asked_best_failed
    );
    for f in rep.failures.iter().take(SHOWN) {
        eprintln!("  {f}");
    }
    if rep.failures.len() > SHOWN {
        eprintln!("  ... and {} more", rep.failures.len() - SHOWN);
    }
    rep
}

#[test]
fn the_example_crosses_r1_alone() {
    let s = converged(topo("best-first-hr.toml"), 1);
    let h = s.host_index("h").unwrap();
    let g = s.host_index("g").unwrap();
    let to_g = dijkstra(&graph(&s.topo), address(&s, g));
    assert_eq!(to_g[&address(&s, h)], 5, "the reference: X 3 + r1 1 + Y 1");
    let rep = check(&s, "best-first-hr.toml");
    let w = walk(&s, h, address(&s, g));
    assert_eq!(
        (router_names(&s, &w), w.cost, w.arrived),
        (vec!["r1".to_string()], 5, Ok(())),
        "h -> g must cross r1 alone at 5 (X 3 + r1 1 + Y 1), not r2 and r3 at 7"
    );
    assert!(
        rep.failures.is_empty(),
        "{} pairs off the cheapest path (listed above)",
        rep.failures.len()
    );
}

#[test]
fn random_topologies_take_the_cheapest_paths() {
    let mut failures = 0;
    for (seed, sans, routers) in [(1, 10, 15), (2, 12, 18), (3, 14, 21), (4, 16, 24)] {
        let s = converged(Topology::random(sans, routers, 2, seed), seed);
        let label = format!("seed {seed} ({sans} SANs, {routers} routers)");
        failures += check(&s, &label).failures.len();
    }
    assert_eq!(failures, 0, "pairs off the cheapest path (listed above)");
}
