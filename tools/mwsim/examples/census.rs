//! Prints a memory census of a converged random topology.
fn main() {
    let a: Vec<usize> = std::env::args()
        .skip(1)
        .map(|x| x.parse().unwrap())
        .collect();
    let topo = mwsim::Topology::random(a[0], a[1], 5, 1);
    let mut s = mwsim::Sim::new(topo, mwsim::SimConfig::default()).unwrap();
    let t = s.run_until_converged(600_000);
    let (mut rts, mut lists, mut entries) = (0, 0, 0);
    for r in &s.routers {
        let (a, b, c) = r.engine.census();
        rts += a;
        lists += b;
        entries += c;
    }
    println!(
        "converged {t:?} rts {rts} lists {lists} entries {entries} messages {}",
        s.stats.messages
    );
    let mut recv = 0;
    for r in &s.routers {
        recv += r.engine.stats().rts_received;
    }
    println!("rts received {recv} {:?}", s.router_stats());
}
