//! Multicast over logical addresses in the simulator (docs/multicast.md):
//! the real RRP engines learn each SAN's members from R4 (hosts announce
//! their joins with an RRP#5) and the real forwarding engines replicate
//! along the reverse-path tree. Every member receives exactly one copy of
//! every packet sent after it joined and the routes converged, non-members
//! none, and no packet circulates: the copies on the wire are counted and
//! must be what the tree needs, not merely "some".

use std::collections::BTreeMap;

use mwsim::{Sim, SimConfig, Topology};
use rrp::Address;

const G: Address = Address(0x8101);

fn appendix_b() -> Topology {
    let path = format!(
        "{}/../../examples/appendix-b.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    Topology::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Data block of probe `n`.
fn probe(n: u32) -> Vec<u8> {
    let mut d = vec![0u8; 16];
    d[..4].copy_from_slice(&n.to_be_bytes());
    d
}

fn number(d: &[u8]) -> u32 {
    u32::from_be_bytes(d[..4].try_into().unwrap())
}

/// For each host, how many copies of each probe in `probes` it received
/// for group `g`.
fn copies(s: &Sim, g: Address, probes: std::ops::Range<u32>) -> Vec<BTreeMap<u32, usize>> {
    s.hosts
        .iter()
        .enumerate()
        .map(|(h, _)| {
            let mut m = BTreeMap::new();
            for d in s.group_received(h, g) {
                let n = number(&d);
                if probes.contains(&n) {
                    *m.entry(n).or_default() += 1;
                }
            }
            m
        })
        .collect()
}

/// Checks that exactly the hosts of `members` got one copy of each probe.
fn exactly_once(s: &Sim, g: Address, probes: std::ops::Range<u32>, members: &[usize], what: &str) {
    let got = copies(s, g, probes.clone());
    for (h, m) in got.iter().enumerate() {
        let name = &s.hosts[h].name;
        if members.contains(&h) {
            for n in probes.clone() {
                assert_eq!(
                    m.get(&n).copied().unwrap_or(0),
                    1,
                    "{what}: member {name}, probe {n}: {m:?}"
                );
            }
        } else {
            assert!(m.is_empty(), "{what}: non-member {name} got {m:?}");
        }
    }
}

/// No SAN ever got a group packet twice from routers (one designated
/// forwarder per SAN and source).
fn once_per_san(s: &Sim) {
    for ((san, g, src, _), n) in &s.mcast_on_san {
        assert!(
            *n <= 1,
            "SAN {} got {n} copies of a packet to {g} from {src}",
            s.topo.sans[*san].name
        );
    }
}

/// How many probes of `probes` to `g` routers put on SAN `name`.
fn on_san(s: &Sim, name: &str, g: Address, probes: std::ops::Range<u32>) -> usize {
    let san = s.topo.san_index(name).unwrap();
    s.mcast_on_san
        .keys()
        .filter(|(x, gg, _, d)| *x == san && *gg == g && probes.contains(&number(&d[..])))
        .count()
}

#[test]
fn appendix_b_group_on_a_c_and_e_gets_one_copy_each() {
    let mut s = Sim::new(appendix_b(), SimConfig::default()).unwrap();
    assert!(s.run_until_converged(60_000).is_some());
    let h = |s: &Sim, n: &str| s.host_index(n).unwrap();
    let (h0, h1, h4, h8) = (h(&s, "H0"), h(&s, "H1"), h(&s, "H4"), h(&s, "H8"));
    for m in [h1, h4, h8] {
        assert!(s.host_join(m, G));
    }
    let t = s.now;
    s.run_until(t + 2_000);
    let before = s.stats.mcast_copies;
    for n in 0..20 {
        s.host_send_group(h0, G, &probe(n));
        let t = s.now;
        s.run_until(t + 5);
    }
    let t = s.now;
    s.run_until(t + 100);
    exactly_once(&s, G, 0..20, &[h1, h4, h8], "A, C, E");
    once_per_san(&s);
    // Every SAN with members got each probe from the routers (A from the
    // source itself); B gets one too: ab's best route to E through B ties
    // with its route through A, and a tie is never pruned (bd1 and bd2 drop
    // it, reverse path).
    for san in ["C", "D", "E"] {
        assert_eq!(on_san(&s, san, G, 0..20), 20, "SAN {san}");
    }
    assert!(s.stats.mcast_copies - before <= 4 * 20);

    // H4 and H8 leave: only A has members, the source's own SAN. Nothing
    // crosses a router any more.
    assert!(s.host_leave(h4, G));
    assert!(s.host_leave(h8, G));
    let t = s.now;
    s.run_until(t + 2_000);
    let before = s.stats.mcast_copies;
    for n in 100..110 {
        s.host_send_group(h0, G, &probe(n));
        let t = s.now;
        s.run_until(t + 5);
    }
    let t = s.now;
    s.run_until(t + 100);
    exactly_once(&s, G, 100..110, &[h1], "after H4 and H8 left");
    assert_eq!(s.stats.mcast_copies - before, 0, "every branch pruned");

    // H8 joins again: E gets it again, C no more.
    assert!(s.host_join(h8, G));
    let t = s.now;
    s.run_until(t + 2_000);
    for n in 150..160 {
        s.host_send_group(h0, G, &probe(n));
        let t = s.now;
        s.run_until(t + 5);
    }
    let t = s.now;
    s.run_until(t + 100);
    exactly_once(&s, G, 150..160, &[h1, h8], "H8 back");
    once_per_san(&s);

    // A source on E: the tree toward E.
    for n in 200..210 {
        s.host_send_group(h8, G, &probe(n));
        let t = s.now;
        s.run_until(t + 5);
    }
    let t = s.now;
    s.run_until(t + 100);
    let got = copies(&s, G, 200..210);
    for n in 200..210 {
        assert_eq!(got[h1].get(&n), Some(&1), "H1 from E, probe {n}");
    }
    assert!(got[h8].is_empty(), "the sender does not hear itself");
}

/// A small seeded generator for the test's own choices.
struct Pick(u64);

impl Pick {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Sends `count` probes from `src` to `g` starting at number `first`, 5 ms
/// apart, and lets them arrive.
fn send(s: &mut Sim, src: usize, g: Address, first: u32, count: u32) -> std::ops::Range<u32> {
    for n in first..first + count {
        s.host_send_group(src, g, &probe(n));
        let t = s.now;
        s.run_until(t + 5);
    }
    let t = s.now;
    s.run_until(t + 200);
    first..first + count
}

/// The members of `g` that the source can reach (by unicast routes), the
/// ones that must get every probe.
fn reachable_members(s: &Sim, src: usize, g: Address) -> Vec<usize> {
    (0..s.hosts.len())
        .filter(|h| *h != src && s.hosts[*h].node.listens(g))
        .filter(|h| {
            let a = s.hosts[*h].node.config().address;
            matches!(s.walk(src, a), mwsim::Walk::Reached(_))
        })
        .collect()
}

#[test]
fn random_topologies_with_churn_and_failures_deliver_exactly_once() {
    // More seeds by hand: MWSIM_MCAST_SEEDS=200 cargo test ... multicast.
    let seeds: u64 = std::env::var("MWSIM_MCAST_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let first: u64 = std::env::var("MWSIM_MCAST_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for seed in first..=seeds {
        let topo = Topology::random(12 + seed as usize % 5, 16 + seed as usize % 7, 2, seed);
        let mut cfg = SimConfig {
            seed,
            loss: 0.02,
            dup: 0.01,
            reorder: 0.02,
            jitter_ms: 2,
            ..SimConfig::default()
        };
        // RTs are sent again every refresh: an RT lost to the faults is
        // back within one (shorter here than the default 30 s, for time).
        cfg.timers.refresh_ms = 10_000;
        cfg.timers.hold_ms = 30_000;
        let refresh = cfg.timers.refresh_ms;
        let mut s = Sim::new(topo, cfg).unwrap();
        assert!(s.run_until_converged(120_000).is_some(), "seed {seed}");
        let mut pick = Pick(seed * 0x9E37_79B9 + 1);
        let groups = [Address(0x8200), Address(0x8201)];
        let hosts = s.hosts.len();
        // Faults for the control plane, none for the probes: a lost probe
        // would make "exactly once" a matter of luck.
        let calm = |s: &mut Sim| {
            s.cfg.loss = 0.0;
            s.cfg.dup = 0.0;
            s.cfg.reorder = 0.0;
        };
        let stormy = |s: &mut Sim| {
            s.cfg.loss = 0.02;
            s.cfg.dup = 0.01;
            s.cfg.reorder = 0.02;
        };
        for g in groups {
            for _ in 0..hosts / 3 {
                s.host_join(pick.below(hosts), g);
            }
        }
        let mut next = 0u32;
        for round in 0..4 {
            // Joins and leaves while a source sends (what it sends now is
            // not checked: members come and go under it).
            let src = pick.below(hosts);
            for _ in 0..4 {
                let h = pick.below(hosts);
                let g = groups[pick.below(2)];
                if s.hosts[h].node.listens(g) {
                    s.host_leave(h, g);
                } else {
                    s.host_join(h, g);
                }
                s.host_send_group(src, g, &probe(1_000_000 + next));
                next += 1;
                let t = s.now;
                s.run_until(t + 50);
            }
            if round == 2 {
                // A router dies.
                let r = pick.below(s.routers.len());
                let t = s.now;
                s.crash_at(r, t + 1);
            }
            // Converged again under faults; then a refresh without them, so
            // that every RT the faults took has been sent again (RRP's only
            // repair of a lost RT, besides the conflict repair that group
            // packets trigger); then checked.
            let t = s.now;
            s.run_until(t + 10_000);
            assert!(
                s.run_until_settled(s.now + 120_000).is_some(),
                "seed {seed} round {round}"
            );
            calm(&mut s);
            let t = s.now;
            s.run_until(t + refresh + 1_000);
            assert!(
                s.run_until_settled(s.now + 120_000).is_some(),
                "seed {seed} round {round}, calm"
            );
            // The network duplicated packets before: count afresh.
            s.mcast_on_san.clear();
            for g in groups {
                let src = pick.below(hosts);
                let members = reachable_members(&s, src, g);
                let probes = send(&mut s, src, g, next, 10);
                next += 10;
                let what = format!(
                    "seed {seed} round {round} group {g} from {}",
                    s.hosts[src].name
                );
                let got = copies(&s, g, probes.clone());
                for (h, m) in got.iter().enumerate() {
                    let name = &s.hosts[h].name;
                    if members.contains(&h) {
                        if m.len() != probes.len() || m.values().any(|n| *n != 1) {
                            explain(&s, src, h, g);
                        }
                        for n in probes.clone() {
                            assert_eq!(
                                m.get(&n).copied().unwrap_or(0),
                                1,
                                "{what}: member {name}: {m:?}"
                            );
                        }
                    } else if h != src && !s.hosts[h].node.listens(g) {
                        assert!(m.is_empty(), "{what}: non-member {name} got {m:?}");
                    } else {
                        // A member the source cannot reach (a partition), or
                        // the source: never more than one copy.
                        assert!(m.values().all(|n| *n <= 1), "{what}: {name} got {m:?}");
                    }
                }
                assert!(!members.is_empty() || got.iter().all(|m| m.len() <= probes.len()));
            }
            once_per_san(&s);
            stormy(&mut s);
        }
        eprintln!(
            "seed {seed}: {} copies by routers, {} messages",
            s.stats.mcast_copies, s.stats.messages
        );
    }
}

/// Prints what each router on the unicast path from `src` to `dst` would do
/// with a packet to `g` (for a failing seed).
fn explain(s: &Sim, src: usize, dst: usize, g: Address) {
    let a = s.hosts[dst].node.config().address;
    let sa = s.hosts[src].node.config().address;
    eprintln!(
        "walk {} -> {}: {:?}",
        s.hosts[src].name,
        s.hosts[dst].name,
        s.walk(src, a)
    );
    eprintln!("walk back: {:?}", s.walk(dst, sa));
    for (i, r) in s.routers.iter().enumerate() {
        if r.alive && r.name == "R13" {
            for p in 0..r.hrs.len() {
                for (rt, o) in r.engine.kept(rrp::PortId::new(p), Address(0x0045)) {
                    eprintln!(
                        "{i} port {p}: {o:?} q {} rcvf {:?} sn {}",
                        rt.q, rt.rcvf, rt.sn
                    );
                }
            }
        }
    }
    for (i, r) in s.routers.iter().enumerate() {
        if !r.alive {
            eprintln!("{i} {} dead", r.name);
            continue;
        }
        let m = r.engine.mcast();
        let sans: Vec<String> = r
            .sans
            .iter()
            .map(|x| s.topo.sans[*x].name.clone())
            .collect();
        eprintln!(
            "{i} {} sans {:?} src {:?} group {:?}",
            r.name,
            sans,
            m.source(sa),
            m.group(g).map(|x| (x.branches, x.member_sans.clone()))
        );
    }
    for (t, r, e) in &s.events {
        if s.routers[*r].name == "R13" || s.routers[*r].name == "R4" {
            eprintln!("ev {t} {} {e:?}", s.routers[*r].name);
        }
    }
    let mut per: BTreeMap<String, u32> = BTreeMap::new();
    for (k, n) in &s.mcast_on_san {
        if k.1 == g && k.2 == sa {
            *per.entry(s.topo.sans[k.0].name.clone()).or_default() += n;
        }
    }
    eprintln!("copies per SAN: {per:?}");
}
