//! Partitions in a lab of real processes (examples/appendix-b-partitions.toml,
//! docs/partitions.md): two tenants across SANs A, C and E, declared once
//! in the SAN managers' partitions file. Traffic within each tenant
//! arrives; across tenants, to a node of no tenant, and between two
//! limited members it is dropped by the routers and counted under
//! `partition`; a limited member reaches full members. The master of SAN
//! C killed, the standby's tables are the same and the routers go on
//! enforcing them; a broken partitions file reloaded everywhere changes
//! nothing.

use std::time::{Duration, Instant};

use mwlab::checks;
use mwlab::lab::{Lab, host_client, mwctl};
use mwlab::plan::{LabManagement, Wiring, lab_timers};
use serde_json::{Value, json};

mod common;
use common::{example, host_stats, print_drops, up_converged, wait_master};

/// Probes each case sends.
const PROBES: u64 = 50;

fn up() -> (Lab, tempfile::TempDir) {
    up_converged(
        example("appendix-b-partitions.toml"),
        Wiring::Udp,
        lab_timers(),
        Some(LabManagement::default()),
    )
}

fn address(lab: &Lab, host: &str) -> u16 {
    lab.plan
        .hosts
        .iter()
        .find(|h| h.spec.name == host)
        .unwrap()
        .spec
        .address
}

/// Waits until `host`'s table has `key` with `membership`.
fn wait_table(lab: &Lab, host: &str, key: &str, membership: &str, within: Duration) {
    let t0 = Instant::now();
    loop {
        let s = host_stats(lab, host);
        if s["partitions"][key] == membership {
            return;
        }
        assert!(
            t0.elapsed() < within,
            "{host}: no {key}={membership} in its table within {within:?}: {}",
            s["partitions"]
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The unique probes `to` has received from `from`.
fn received(lab: &Lab, to: &str, from: &str) -> u64 {
    let s = host_stats(lab, to);
    let from = format!("{:#06x}", address(lab, from));
    s["received"][&from]["unique"].as_u64().unwrap_or(0)
}

/// Sends [`PROBES`] probes from `from` to `to` (in the host's own choice of
/// partition) and returns how many arrived, waiting up to `secs` for all.
fn probe(lab: &Lab, from: &str, to: &str, secs: u64) -> u64 {
    let before = received(lab, to, from);
    let mut c = host_client(&lab.plan, from).unwrap();
    c.request(&json!({
        "cmd": "send", "dst": address(lab, to), "count": PROBES, "rate_pps": 500, "wait": true
    }))
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let n = received(lab, to, from) - before;
        if n >= PROBES || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every live router's `partition` drops, summed; each router's drops by
/// partition key and port (`stats`' `partitions`) sum to the same.
fn partition_drops(lab: &Lab) -> u64 {
    let mut n = 0;
    for r in &lab.plan.routers {
        if !lab.router_alive(&r.name) {
            continue;
        }
        let s = mwctl(&r.socket, &["stats"]).unwrap();
        let by_reason: u64 = s["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["drops"]["partition"].as_u64().unwrap_or(0))
            .sum();
        let by_key: u64 = s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["dropped"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(by_key, by_reason, "{}: {s}", r.name);
        n += by_reason;
    }
    n
}

/// `mwctl discover` from router ab: each host's partitions, by its
/// description.
fn discovered_tables(lab: &Lab) -> std::collections::BTreeMap<String, Value> {
    let ab = lab.plan.admin_socket("ab").unwrap();
    let d = mwctl(ab, &["discover", "-r", "3"]).unwrap();
    d["sans"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["nodes"].as_array().unwrap())
        .map(|n| {
            (
                n["description"].as_str().unwrap().to_string(),
                n["partitions"].clone(),
            )
        })
        .collect()
}

/// Within each tenant every probe arrives, across none; each refused one
/// is counted by a router under `partition`.
fn tenants_hold(lab: &Lab, what: &str) {
    let allowed = [
        ("H0", "H4"),
        ("H4", "H8"),
        ("H8", "H0"),
        ("H1", "H5"),
        ("H5", "H1"),
        ("H9", "H1"),
    ];
    for (from, to) in allowed {
        // The first probes after a change may meet routes or tables on
        // their way: a second round must be whole.
        let mut n = probe(lab, from, to, 5);
        if n < PROBES {
            n = probe(lab, from, to, 5);
        }
        if n < PROBES {
            print_drops(lab);
        }
        assert_eq!(n, PROBES, "{what}: {from} -> {to}, same tenant");
    }
    let refused = [
        ("H0", "H5", "tenant_a to a tenant_b member"),
        ("H5", "H8", "tenant_b to a tenant_a member"),
        ("H5", "H9", "two limited members"),
        ("H0", "H6", "a node of no tenant"),
    ];
    for (from, to, why) in refused {
        let before = partition_drops(lab);
        let n = probe(lab, from, to, 2);
        assert_eq!(n, 0, "{what}: {from} -> {to} ({why}) arrived");
        let counted = partition_drops(lab) - before;
        assert!(
            counted >= PROBES,
            "{what}: {from} -> {to} ({why}): {counted} counted under partition"
        );
    }
}

#[test]
fn routers_enforce_the_tenants_the_managers_declare() {
    let (mut lab, _tmp) = up();
    for san in ["A", "C", "E"] {
        eprintln!(
            "SAN {san}: master {}",
            wait_master(&lab, san, Duration::from_secs(20))
        );
    }
    let within = Duration::from_secs(30);
    for h in ["H0", "H4", "H8", "H1"] {
        let key = if h == "H1" { "0x0020" } else { "0x0010" };
        wait_table(&lab, h, key, "full", within);
    }
    for h in ["H5", "H9"] {
        wait_table(&lab, h, "0x0020", "limited", within);
    }
    // mwctl discover reads every host's table from its agent.
    let tables = discovered_tables(&lab);
    let limited_default = json!(["0x7fff", "limited"]);
    for (h, want) in [
        ("H0", json!([["0x0010", "full"], limited_default])),
        ("H1", json!([["0x0020", "full"], limited_default])),
        ("H5", json!([["0x0020", "limited"], limited_default])),
        ("H6", json!([limited_default])),
    ] {
        assert_eq!(tables.get(h), Some(&want), "{h}: {tables:?}");
    }
    tenants_hold(&lab, "at start");

    // A broken file, reloaded by every router: nothing changes.
    let file = lab.plan.partitions_path();
    let good = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, "tenant_a=0x0010 : 0x01=sometimes ;\nbroken\n").unwrap();
    for r in &lab.plan.routers {
        mwctl(&r.socket, &["reload"]).unwrap();
    }
    let shown = mwctl(&lab.plan.routers[1].socket, &["san", "partitions"]).unwrap();
    assert!(
        shown["refused"]["count"].as_u64().is_some_and(|n| n >= 2),
        "the refusal is shown: {shown}"
    );
    assert_eq!(
        shown["partitions"].as_array().map(Vec::len),
        Some(3),
        "{shown}"
    );
    tenants_hold(&lab, "after a broken file");
    std::fs::write(&file, good).unwrap();

    // SAN C's master killed (cd: C's hosts' first HR is ac's, which stays):
    // a standby takes over with the same tables.
    let master = wait_master(&lab, "C", Duration::from_secs(5));
    lab.kill_router(&master).unwrap();
    let dead = vec![master.clone()];
    checks::converge(
        &lab.plan,
        &dead,
        Duration::from_millis(500),
        Duration::from_secs(60),
        &mut |_, _| {},
    )
    .unwrap();
    let standby = wait_master(&lab, "C", Duration::from_secs(30));
    assert_ne!(standby, master);
    eprintln!("SAN C: {master} killed, {standby} master");
    tenants_hold(&lab, "after the master of SAN C died");
}
