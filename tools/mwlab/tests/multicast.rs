//! Multicast in a lab of real processes (docs/multicast.md): Appendix B on
//! loopback UDP, a group with members on SANs A, C and E; H0 (SAN A) sends
//! mwgen probes to it; every member counts exactly one copy of each and no
//! other host counts any; when E's member leaves, de stops putting the
//! group's packets on SAN E within the prune bound.

mod common;

use std::time::{Duration, Instant};

use mwlab::lab::{Lab, host_client, mwctl};
use mwlab::plan::{LabManagement, lab_timers};
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
    let (lab, _tmp) = common::appendix_b(LabManagement::default(), lab_timers());
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
    eprintln!(
        "member SANs known by every router {} ms after the joins",
        t.as_millis()
    );

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
    assert_eq!(
        stats(&lab, "H8")["by_group"][G]["unique"].as_u64(),
        Some(200)
    );
    lab.down().unwrap();
}

/// The router that is SAN `san`'s master, and its HR there, in a lab with
/// managers on every router (examples/appendix-b-managed.toml).
fn master_of(lab: &Lab, san: &str) -> Option<(String, String)> {
    for r in &lab.plan.routers {
        let Some(i) = r.sans.iter().position(|s| s == san) else {
            continue;
        };
        let hr = format!("{:#06x}", r.hrs[i].0);
        let m = mwctl(&r.socket, &["show", "management"]).ok()?;
        if m["managers"]
            .as_array()?
            .iter()
            .any(|row| row["hr"] == hr.as_str() && row["state"] == "master")
        {
            return Some((r.name.clone(), hr));
        }
    }
    None
}

fn socket_of(lab: &Lab, router: &str) -> std::path::PathBuf {
    lab.plan
        .routers
        .iter()
        .find(|r| r.name == router)
        .unwrap()
        .socket
        .clone()
}

#[test]
fn groups_at_the_san_managers_check_joins_and_creates_against_the_mtu() {
    let (lab, _tmp) = common::up_converged(
        common::example("appendix-b-managed.toml"),
        mwlab::plan::Wiring::Udp,
        lab_timers(),
        None,
    );
    let mut masters = std::collections::BTreeMap::new();
    for san in ["A", "C", "E"] {
        let mut found = None;
        wait_for(
            &format!("SAN {san}'s master"),
            Duration::from_secs(20),
            || {
                found = master_of(&lab, san);
                found.is_some()
            },
        );
        masters.insert(san, found.unwrap());
    }
    // H1 (on A) waits until its SAN's master has told its agent where it
    // is (PortInfo's manager address).
    let (a_router, a_hr) = masters["A"].clone();
    let h1_admin = lab.plan.admin_socket("H1").unwrap().to_path_buf();
    wait_for("H1 knows its SAN manager", Duration::from_secs(10), || {
        mwctl(&h1_admin, &["show", "management"])
            .ok()
            .is_some_and(|m| m["manager"] == a_hr.as_str())
    });

    // The group on A, MTU 1000: a join asking 1400 is refused, and says why.
    let a_sock = socket_of(&lab, &a_router);
    let v = mwctl(
        &a_sock,
        &["mcast", "create", G, "--mtu", "1000", "--manager", &a_hr],
    )
    .unwrap();
    assert_eq!(v["mtu"], 1000, "{v}");
    let mut c = host_client(&lab.plan, "H1").unwrap();
    let v = c
        .request(&json!({"cmd": "join", "group": G, "mtu": 1400}))
        .unwrap();
    assert_eq!(v["ok"], false, "{v}");
    let why = v["error"].as_str().unwrap();
    assert!(why.contains("MTU is above the group's"), "{why}");
    let v = host(&lab, "H1", json!({"cmd": "join", "group": G, "mtu": 1000}));
    assert_eq!(v["changed"], true);
    assert!(v["manager"].as_str().unwrap().starts_with("ok"), "{v}");
    let v = mwctl(&a_sock, &["mcast", "members", G, "--manager", &a_hr]).unwrap();
    // H1 started without an address: the one its manager gave it.
    assert_eq!(v[0]["member"], stats(&lab, "H1")["address"], "{v}");
    // H1's join named no partition: the group is the default partition's,
    // and a join naming another is refused.
    assert_eq!(v[0]["partition"], 0x7fff, "{v}");
    let v = c
        .request(&json!({"cmd": "join", "group": G, "partition": "0x0010"}))
        .unwrap();
    assert_eq!(v["ok"], false, "{v}");
    let why = v["error"].as_str().unwrap();
    assert!(why.contains("another partition"), "{why}");

    // On C: the group has a member on A, which the routers reach with
    // 1496 bytes (RTs carry MTUs in 8-byte words: 1500 reads 1496): a
    // create asking for 1500 does not fit; one asking for nothing learns
    // the MTU.
    let (c_router, c_hr) = masters["C"].clone();
    let c_sock = socket_of(&lab, &c_router);
    let san_a = "0x0201";
    wait_for(
        "C's routers know A's member",
        Duration::from_secs(10),
        || member_sans(&lab, &c_router) == [san_a],
    );
    let e = mwctl(
        &c_sock,
        &["mcast", "create", G, "--mtu", "1500", "--manager", &c_hr],
    )
    .unwrap_err();
    assert!(e.contains("exists elsewhere with a smaller MTU"), "{e}");
    let v = mwctl(&c_sock, &["mcast", "create", G, "--manager", &c_hr]).unwrap();
    let learned = v["mtu"].as_u64().unwrap();
    assert_eq!(learned, 1496, "{v}");
    eprintln!("SAN C's group learned MTU {learned} from its routers");

    // H4 on C joins; H0 sends; H1 and H4 get every probe once.
    let h4_admin = lab.plan.admin_socket("H4").unwrap().to_path_buf();
    wait_for("H4 knows its SAN manager", Duration::from_secs(10), || {
        mwctl(&h4_admin, &["show", "management"])
            .ok()
            .is_some_and(|m| m["manager"] == c_hr.as_str())
    });
    host(&lab, "H4", json!({"cmd": "join", "group": G}));
    wait_for("members known", Duration::from_secs(10), || {
        member_sans(&lab, "ab") == ["0x0201", "0x0203"]
    });
    host(
        &lab,
        "H0",
        json!({"cmd": "send", "dst": G, "count": 100, "rate_pps": 400, "size": 64, "wait": true}),
    );
    std::thread::sleep(Duration::from_millis(300));
    for m in ["H1", "H4"] {
        let g = &stats(&lab, m)["by_group"][G];
        assert_eq!(
            (g["unique"].as_u64(), g["duplicated"].as_u64()),
            (Some(100), Some(0)),
            "{m}: {g}"
        );
    }
    let v = mwctl(&c_sock, &["mcast", "groups", "--manager", &c_hr]).unwrap();
    assert_eq!(
        (v[0]["group"].as_str(), v[0]["members"].as_u64()),
        (Some(G), Some(1)),
        "{v}"
    );
    lab.down().unwrap();
}
