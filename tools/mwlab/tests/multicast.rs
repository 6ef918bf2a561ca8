//! Multicast in a lab of real processes (docs/multicast.md): Appendix B on
//! loopback UDP, a group with members on SANs A, C and E; H0 (SAN A) sends
//! mwgen probes to it; every member counts exactly one copy of each and no
//! other host counts any; when E's member leaves, de stops putting the
//! group's packets on SAN E within the prune bound.

mod common;

use std::time::{Duration, Instant};

use mwlab::lab::{Lab, host_client, mwctl};
use mwlab::plan::{LabManagement, LabTimers};
use serde_json::{Value, json};

const G: &str = "0x8101";

fn host(lab: &Lab, name: &str, req: Value) -> Value {
    let mut c = host_client(&lab.plan, name).unwrap();
    let v = c.request(&req).unwrap();
    assert_eq!(v["ok"], true, "{name}: {req} -> {v}");
    v
}

fn stats(lab: &Lab, name: &str) -> Value {
    host(lab, name, json!({"cmd": "stats"}))
}

fn router_mcast(lab: &Lab, name: &str) -> Value {
    let r = lab.plan.routers.iter().find(|r| r.name == name).unwrap();
    mwctl(&r.socket, &["show", "mcast"]).unwrap()
}

/// The SANs (SAN-IDs) router `name` knows members of G on.
fn member_sans(lab: &Lab, name: &str) -> Vec<String> {
    router_mcast(lab, name)["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == G)
        .map(|g| {
            g["member_sans"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn wait_for(what: &str, within: Duration, mut f: impl FnMut() -> bool) -> Duration {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < within, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    t0.elapsed()
}

#[test]
fn a_group_on_a_c_and_e_gets_every_probe_once_and_a_leave_prunes_e() {
    let (lab, _tmp) = common::appendix_b(LabManagement::default(), LabTimers::default());
    // SAN-IDs of A, C, E in examples/appendix-b.toml.
    let (san_a, san_c, san_e) = ("0x0201", "0x0203", "0x0205");
    for m in ["H1", "H4", "H8"] {
        let v = host(&lab, m, json!({"cmd": "join", "group": G}));
        assert_eq!(v["changed"], true);
    }
    // Every router learns the member SANs (LRTs, then RTs).
    let t = wait_for("members known everywhere", Duration::from_secs(10), || {
        lab.plan
            .routers
            .iter()
            .all(|r| member_sans(&lab, &r.name) == [san_a, san_c, san_e])
    });
    eprintln!("member SANs known by every router {} ms after the joins", t.as_millis());

    host(
        &lab,
        "H0",
        json!({"cmd": "send", "dst": G, "count": 200, "rate_pps": 400, "size": 64, "wait": true}),
    );
    std::thread::sleep(Duration::from_millis(300));
    for m in ["H1", "H4", "H8"] {
        let g = &stats(&lab, m)["by_group"][G];
        assert_eq!(
            (g["unique"].as_u64(), g["duplicated"].as_u64()),
            (Some(200), Some(0)),
            "{m}: {g}"
        );
    }
    for other in ["H2", "H3", "H5", "H6", "H7", "H9"] {
        let s = stats(&lab, other);
        assert!(
            s["by_group"].as_object().unwrap().is_empty(),
            "{other} is no member: {s}"
        );
    }
    // Non-members on a member SAN see the packets go by and drop them.
    assert!(stats(&lab, "H5")["not_member"].as_u64().unwrap() >= 200);
    let de = router_mcast(&lab, "de");
    let row = de["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == G)
        .unwrap()
        .clone();
    assert!(row["counters"]["packets"].as_u64().unwrap() >= 200, "{de}");

    // H8 leaves: SAN E has no member left. Within the prune bound every
    // router knows it, and de puts nothing more on E (H9 there, no
    // member, sees nothing more go by).
    host(&lab, "H8", json!({"cmd": "leave", "group": G}));
    let t = wait_for("E pruned everywhere", Duration::from_secs(10), || {
        lab.plan
            .routers
            .iter()
            .all(|r| member_sans(&lab, &r.name) == [san_a, san_c])
    });
    eprintln!("E pruned {} ms after the leave", t.as_millis());
    assert!(t < Duration::from_secs(3), "prune bound: {t:?}");
    let before = stats(&lab, "H9")["not_member"].as_u64().unwrap();
    host(
        &lab,
        "H0",
        json!({"cmd": "send", "dst": G, "count": 100, "rate_pps": 400, "size": 64, "wait": true}),
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(stats(&lab, "H9")["not_member"].as_u64().unwrap(), before);
    let g = &stats(&lab, "H4")["by_group"][G];
    assert_eq!(g["unique"].as_u64(), Some(300), "C still gets them: {g}");
    assert_eq!(stats(&lab, "H8")["by_group"][G]["unique"].as_u64(), Some(200));
    lab.down().unwrap();
}
