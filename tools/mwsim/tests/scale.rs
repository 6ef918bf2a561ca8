//! Scenario 4: a random connected topology of 200 SANs and 400 routers
//! (2 to 4 ports each), 5 hosts per SAN, SAN costs 1 to 10 from the seed,
//! converges: every host reaches every other and no forwarding loops once
//! quiet. The figures (time, messages, memory) go to docs/performance.md
//! from `mwsim --random 200,400 --json`; this test asserts correctness only.

use mwsim::{Sim, SimConfig, Topology};

#[test]
fn two_hundred_sans_and_four_hundred_routers_converge() {
    let seed = 1;
    let topo = Topology::random(200, 400, 5, seed);
    assert!(topo.routers.iter().all(|r| (2..=4).contains(&r.hrs.len())));
    assert!(topo.sans.iter().all(|s| (1..=10).contains(&s.cost)));
    let mut s = Sim::new(
        topo,
        SimConfig {
            seed,
            // Both cores (the run is the sequential one: tests/parallel.rs).
            threads: 2,
            ..SimConfig::default()
        },
    )
    .unwrap();
    let t = s.run_until_converged(600_000);
    assert!(t.is_some(), "seed {seed}: no convergence");
    let (pairs, ok, unreachable, loops) = s.all_pairs();
    assert_eq!(pairs, 1000 * 999);
    assert_eq!((ok, unreachable, loops), (pairs, 0, 0), "seed {seed}");
    let rts = s.rts_per_hr();
    assert!(
        rts.iter().all(|n| *n <= 4 * 199),
        "k = 4 RTs per other SAN at most"
    );
    eprintln!(
        "seed {seed}: converged at {} ms virtual, {} messages, max {} RTs per HR",
        t.unwrap(),
        s.stats.messages,
        rts.iter().max().unwrap()
    );
}
