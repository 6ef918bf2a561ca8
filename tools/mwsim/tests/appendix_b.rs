//! Scenario 1: Appendix B of the draft (addresses remapped as
//! docs/spec-notes.md 9 says; seven routers, hosts H0-H9, unit costs, k = 4).

use mwsim::{Sim, SimConfig, Topology};
use rrp::Address;
use rrp::PortId;

fn sim(seed: u64) -> Sim {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/appendix-b.toml"
    ))
    .unwrap();
    let topo = Topology::from_toml(&text).unwrap();
    Sim::new(
        topo,
        SimConfig {
            seed,
            ..SimConfig::default()
        },
    )
    .unwrap()
}

#[test]
fn converges_with_the_drafts_routes() {
    let mut s = sim(1);
    let t = s.run_until_converged(60_000);
    assert!(t.is_some(), "no convergence (seed 1)");
    let (pairs, ok, _, loops) = s.all_pairs();
    assert_eq!(ok, pairs);
    assert_eq!(loops, 0);
    // Rab keeps exactly ADE, AB1DE, AB2DE, ACDE for SAN E.
    let (ab, p) = s.hr(Address(0x0115)).unwrap();
    let kept = s.routers[ab].engine.kept(p, Address(0x0205));
    let name = |a: &Address| {
        let (r, _) = s.hr(*a).unwrap();
        s.routers[r].name.clone()
    };
    let got: Vec<(u16, Vec<String>)> = kept
        .iter()
        .map(|(rt, _)| (rt.q, rt.rcvf.iter().map(name).collect()))
        .collect();
    let rcvfs: Vec<(u16, Vec<u16>)> = kept
        .iter()
        .map(|(rt, _)| (rt.q, rt.rcvf.iter().map(|a| a.0).collect()))
        .collect();
    // ab/ad\da/de\ed, ab\ba/bd1\db1/de\ed, ab\ba/bd2\db2/de\ed, ab/ac\ca/cd\dc/de\ed
    assert_eq!(
        rcvfs,
        vec![
            (4, vec![0x0119, 0x011A, 0x0121, 0x0122]),
            (5, vec![0x0116, 0x011B, 0x011C, 0x0121, 0x0122]),
            (5, vec![0x0116, 0x011D, 0x011E, 0x0121, 0x0122]),
            (6, vec![0x0117, 0x0118, 0x011F, 0x0120, 0x0121, 0x0122]),
        ],
        "{got:?}"
    );
    // No HR keeps an RT for its own SAN.
    for r in &s.routers {
        for (port, h) in r.hrs.iter().enumerate() {
            let (_, _) = (port, h);
            let san = r.engine.config().hrs[PortId::new(port)].san_id;
            assert!(r.engine.kept(PortId::new(port), san).is_empty());
        }
    }
    let h = |n: &str| s.host_index(n).unwrap();
    assert_eq!(s.path_names(h("H0"), h("H8")).unwrap(), vec!["ad", "de"]);
    assert_eq!(s.path_names(h("H2"), h("H8")).unwrap(), vec!["bd1", "de"]);
}
