//! Scenario 3: faults, also on a topology with a three-port box. After each
//! fault the network reconverges; once quiet, forwarding along the FIBs has
//! no loop for any pair; transient loops are measured; HR-DOWN removes
//! exactly the RTs that crossed the downed HR. Failing seeds are printed.

use rrp::PortId;
use std::collections::BTreeSet;

use mwsim::{Sim, SimConfig, Topology};
use rrp::Address;

fn topo(name: &str) -> Topology {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    Topology::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn quiet_and_loop_free(s: &mut Sim, seed: u64, what: &str) {
    let t = s.run_until_converged(s.now + 120_000);
    assert!(t.is_some(), "seed {seed}: no reconvergence after {what}");
    let (pairs, ok, unreach, loops) = s.all_pairs();
    assert_eq!(loops, 0, "seed {seed}: loops once quiet after {what}");
    assert_eq!(ok + unreach, pairs);
}

#[test]
fn faults_reconverge_without_loops() {
    for seed in 1..=4u64 {
        let cfg = SimConfig {
            seed,
            loss: 0.02,
            dup: 0.01,
            reorder: 0.02,
            jitter_ms: 2,
            track_loops: true,
            ..SimConfig::default()
        };
        let mut s = Sim::new(topo("faults.toml"), cfg).unwrap();
        quiet_and_loop_free(&mut s, seed, "start");
        assert_eq!(
            s.all_pairs().2,
            0,
            "seed {seed}: unreachable pairs at start"
        );
        let tri = s.router_index("tri").unwrap();
        let cd = s.router_index("cd").unwrap();

        // Link flap on the three-port box's B port: B stays reachable via bd.
        let now = s.now;
        s.link_down_at(tri, PortId(1), now + 100);
        s.run_until(now + 8_000);
        quiet_and_loop_free(&mut s, seed, "tri/B down");
        assert_eq!(
            s.all_pairs().2,
            0,
            "seed {seed}: unreachable with tri/B down"
        );
        let now = s.now;
        s.link_up_at(tri, PortId(1), now + 100);
        s.run_until(now + 8_000);
        quiet_and_loop_free(&mut s, seed, "tri/B up");
        assert_eq!(
            s.all_pairs().2,
            0,
            "seed {seed}: unreachable after tri/B up"
        );

        // Router crash: cd's SANs stay connected through tri, bd and ad.
        let now = s.now;
        s.crash_at(cd, now + 100);
        s.run_until(now + 10_000);
        quiet_and_loop_free(&mut s, seed, "cd crash");
        assert_eq!(s.all_pairs().2, 0, "seed {seed}: unreachable with cd down");
        // No live router keeps an RT crossing cd once it is detected.
        let dead: BTreeSet<Address> = s.routers[cd].hrs.iter().copied().collect();
        for r in s.routers.iter().filter(|r| r.alive) {
            for p in 0..r.hrs.len() {
                for san in r.engine.known_sans() {
                    for (rt, _) in r.engine.kept(PortId::new(p), san) {
                        assert!(
                            !rt.rcvf.iter().any(|a| dead.contains(a)),
                            "seed {seed}: {} keeps {:?} through crashed cd",
                            r.name,
                            rt.rcvf
                        );
                    }
                }
            }
        }
        // Restart: accepted again (new SN seed), everything reachable.
        let now = s.now;
        s.restart_at(cd, now + 100);
        s.run_until(now + 10_000);
        quiet_and_loop_free(&mut s, seed, "cd restart");
        assert_eq!(
            s.all_pairs().2,
            0,
            "seed {seed}: unreachable after cd restart"
        );
        let crosses_cd = s.routers.iter().filter(|r| r.name != "cd").any(|r| {
            (0..r.hrs.len()).any(|p| {
                r.engine.known_sans().into_iter().any(|san| {
                    r.engine
                        .kept(PortId::new(p), san)
                        .iter()
                        .any(|(rt, _)| rt.rcvf.iter().any(|a| dead.contains(a)))
                })
            })
        });
        assert!(
            crosses_cd,
            "seed {seed}: the restarted cd's RTs were not accepted again"
        );
        eprintln!(
            "seed {seed}: transient loops {} ({} ms, longest {} ms); messages {}, lost {}, dup {}, reordered {}, HR-DOWN events {}",
            s.loops.episodes,
            s.loops.total_ms,
            s.loops.longest_ms,
            s.stats.messages,
            s.stats.lost,
            s.stats.duplicated,
            s.stats.reordered,
            s.stats.hr_down_events
        );
    }
}

/// HR-DOWN removes exactly the RTs that crossed the downed HR: every kept RT
/// that did not cross it is still kept, and none that did remains.
#[test]
fn hr_down_removes_exactly_the_rts_crossing_it() {
    for (file, victim) in [
        ("appendix-b.toml", "ad"),
        ("faults.toml", "cd"),
        ("appendix-b.toml", "bd1"),
    ] {
        let mut s = Sim::new(topo(file), SimConfig::default()).unwrap();
        assert!(s.run_until_converged(60_000).is_some());
        let v = s.router_index(victim).unwrap();
        let dead: BTreeSet<Address> = s.routers[v].hrs.iter().copied().collect();
        let snapshot = |s: &Sim| {
            let mut set = BTreeSet::new();
            for (ri, r) in s.routers.iter().enumerate().filter(|(_, r)| r.alive) {
                for p in 0..r.hrs.len() {
                    for san in r.engine.known_sans() {
                        for (rt, _) in r.engine.kept(PortId::new(p), san) {
                            set.insert((ri, p, san, rt.rcvf.clone()));
                        }
                    }
                }
            }
            set
        };
        let before = snapshot(&s);
        let now = s.now;
        s.crash_at(v, now + 10);
        // Long enough for every buddy to miss its keepalives and for the
        // HR-DOWN relay to cross the network; shorter than a refresh.
        s.run_until(now + 8_000);
        let after = snapshot(&s);
        let crosses =
            |k: &(usize, usize, Address, Vec<Address>)| k.3.iter().any(|a| dead.contains(a));
        for k in &before {
            if k.0 == v {
                continue;
            }
            if crosses(k) {
                assert!(
                    !after.contains(k),
                    "{file}/{victim}: {k:?} crosses the downed HR but is kept"
                );
            } else {
                assert!(
                    after.contains(k),
                    "{file}/{victim}: {k:?} was removed but did not cross the downed HR"
                );
            }
        }
        assert!(
            !after.iter().any(crosses),
            "{file}/{victim}: an RT crossing the downed HR appeared"
        );
    }
}
