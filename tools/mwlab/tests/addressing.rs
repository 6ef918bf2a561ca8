//! SAN managers on every SAN and hosts without an address, in a lab of real
//! processes (examples/appendix-b-managed.toml, docs/manager.md "Address
//! assignment"): every SAN elects one master; H1, H3, H5, H7 and H9 start
//! without an address, get one from their SAN's pool and are reachable
//! from H0; H7 restarted gets the same address again, and again after SAN
//! D's master is killed and a standby took over.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mwlab::lab::{Binaries, Lab, host_client, mwctl};
use mwlab::plan::{Wiring, lab_timers};
use serde_json::{Value, json};

mod common;
use common::{example, host_stats as stats, up_converged, wait_master};

const AUTO: [&str; 5] = ["H1", "H3", "H5", "H7", "H9"];

fn address_of(lab: &Lab, host: &str) -> u16 {
    let s = stats(lab, host);
    let a = s["address"].as_str().unwrap();
    u16::from_str_radix(a.trim_start_matches("0x"), 16).unwrap()
}

/// Waits until `host` has an address; returns it.
fn wait_address(lab: &Lab, host: &str, within: Duration) -> (u16, Duration) {
    let t0 = Instant::now();
    loop {
        let a = address_of(lab, host);
        if a != 0 {
            return (a, t0.elapsed());
        }
        assert!(
            t0.elapsed() < within,
            "{host}: no address within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Probes from H0 to `host` until 5 arrive (the routes to a new address
/// take an advertisement to spread).
fn wait_reachable(lab: &Lab, host: &str, address: u16, within: Duration) -> Duration {
    let t0 = Instant::now();
    let mut h0 = host_client(&lab.plan, "H0").unwrap();
    loop {
        h0.request(
            &json!({"cmd": "send", "dst": address, "count": 5, "rate_pps": 0, "wait": true}),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let s = stats(lab, host);
        if s["received"]["0x0100"]["unique"].as_u64().unwrap_or(0) >= 5 {
            return t0.elapsed();
        }
        assert!(
            t0.elapsed() < within,
            "{host} at {address:#06x}: unreachable from H0 within {within:?}: {s}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn every_san_has_a_master_and_hosts_without_an_address_come_up_reachable() {
    let topo = example("appendix-b-managed.toml");
    let (mut lab, _tmp) = up_converged(topo.clone(), Wiring::Udp, lab_timers(), None);
    let bins = Binaries {
        mwlab: PathBuf::from(env!("CARGO_BIN_EXE_mwlab")),
    };
    for san in ["A", "B", "C", "D", "E"] {
        let m = wait_master(&lab, san, Duration::from_secs(20));
        eprintln!("SAN {san}: master {m}");
    }
    let pool_of = |host: &str| {
        let h = topo.hosts.iter().find(|h| h.name == host).unwrap();
        topo.sans
            .iter()
            .find(|s| s.name == h.san)
            .unwrap()
            .pool
            .unwrap()
    };
    let mut given = Vec::new();
    for host in AUTO {
        let (a, t) = wait_address(&lab, host, Duration::from_secs(20));
        let [first, last] = pool_of(host);
        assert!(
            (first..=last).contains(&a),
            "{host}: {a:#06x} not from its pool"
        );
        let r = wait_reachable(&lab, host, a, Duration::from_secs(30));
        eprintln!(
            "{host}: {a:#06x} (address after {} ms), reachable from H0 {} ms later",
            t.as_millis(),
            r.as_millis()
        );
        given.push(a);
    }

    // SubnAdm from H0: SAN A's master finds H1 by name, and gives the
    // path to H8 (SAN E) as a node of SAN A pays it: a first HR of SAN A
    // and the Q of the route through it.
    let master_a = wait_master(&lab, "A", Duration::from_secs(5));
    let r = lab
        .plan
        .routers
        .iter()
        .find(|r| r.name == master_a)
        .unwrap();
    let hr_a = format!(
        "{:#06x}",
        r.hrs[r.sans.iter().position(|s| s == "A").unwrap()].0
    );
    let h0 = lab.plan.admin_socket("H0").unwrap().to_path_buf();
    let v = mwctl(&h0, &["query", &hr_a, "members", "--name", "H1"]).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    assert_eq!(rows[0]["address"], format!("{:#06x}", given[0]), "{v}");
    let v = mwctl(&h0, &["query", &hr_a, "members", "--type", "router"]).unwrap();
    assert_eq!(
        v.as_array().unwrap().len(),
        3,
        "SAN A's three router HRs: {v}"
    );
    let v = mwctl(&h0, &["query", &hr_a, "path", "--dst", "0x0108"]).unwrap();
    assert_eq!(v["kind"], 2, "{v}");
    assert_eq!(v["first_hr"], "0x0119", "ad's A-side HR: {v}");
    // ADE from a node of A, unit costs: A, ad, D, de, E.
    assert_eq!(v["q"], 5, "{v}");
    eprintln!("SubnAdm PathRecord H0 -> H8 from {master_a}: {v}");

    // H7 restarts without its address: the same one again.
    let h7 = given[3];
    lab.restart_host("H7", &bins).unwrap();
    let (a, t) = wait_address(&lab, "H7", Duration::from_secs(20));
    assert_eq!(a, h7, "H7 after its restart");
    eprintln!("H7 restarted: {a:#06x} again after {} ms", t.as_millis());

    // SAN D's master dies; a standby takes over and gives H7, restarted
    // again, the same address: the standbys have the master's map, copied
    // at their polls (one NodeRecord a poll): wait until it is there.
    let old = wait_master(&lab, "D", Duration::from_secs(5));
    let t0 = Instant::now();
    loop {
        let standbys: Vec<Value> = lab
            .plan
            .routers
            .iter()
            .filter(|r| r.name != old && r.sans.iter().any(|s| s == "D"))
            .filter(|r| lab.router_alive(&r.name))
            .flat_map(|r| {
                let hr = r.sans.iter().position(|s| s == "D").unwrap();
                let hr = format!("{:#06x}", r.hrs[hr].0);
                let m = mwctl(&r.socket, &["show", "management"]).unwrap();
                m["managers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|row| row["hr"] == hr.as_str() && row["state"] == "standby")
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect();
        let want = format!("{h7:#06x}");
        if !standbys.is_empty()
            && standbys.iter().all(|m| {
                m["assigned"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x == want.as_str()))
            })
        {
            eprintln!(
                "SAN D: the standbys hold H7's address {} ms after its restart",
                t0.elapsed().as_millis()
            );
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "SAN D's standbys never copied H7's address: {standbys:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    lab.kill_router(&old).unwrap();
    let t0 = Instant::now();
    let new = wait_master(&lab, "D", Duration::from_secs(20));
    assert_ne!(new, old);
    eprintln!(
        "SAN D: {old} killed, {new} master after {} ms",
        t0.elapsed().as_millis()
    );
    lab.restart_host("H7", &bins).unwrap();
    let (a, t) = wait_address(&lab, "H7", Duration::from_secs(20));
    assert_eq!(a, h7, "H7 from the new master");
    eprintln!(
        "H7 restarted under {new}: {a:#06x} again after {} ms",
        t.as_millis()
    );
    lab.down().unwrap();
}
