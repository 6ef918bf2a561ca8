//! What the lab tests with management share: an Appendix B lab with given
//! management settings and timers (and a topology edited first), up and
//! converged. Not every test file uses every helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mwlab::checks;
use mwlab::lab::{Binaries, Lab, mwctl};
use mwlab::plan::{LabManagement, Plan, Wiring};
use mwsim::topology::Topology;
use rrp::router::Timers;

/// Appendix B on loopback UDP in a fresh directory, with management `m`
/// and `timers`, converged. Fails (panics) on settings the plan refuses.
pub fn appendix_b(m: LabManagement, timers: Timers) -> (Lab, tempfile::TempDir) {
    appendix_b_with(m, timers, |_| {})
}

/// [`appendix_b`] with its topology changed by `edit` first (keys on the
/// SANs, say).
pub fn appendix_b_with(
    m: LabManagement,
    timers: Timers,
    edit: impl FnOnce(&mut Topology),
) -> (Lab, tempfile::TempDir) {
    let mut topo = example("appendix-b.toml");
    edit(&mut topo);
    up_converged(topo, Wiring::Udp, timers, Some(m))
}

/// The topology of examples/`file`.
pub fn example(file: &str) -> Topology {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(file);
    Topology::from_toml(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A lab of `topo` wired by `wiring` in a fresh directory, with
/// management `m` when given, converged. Fails (panics) on settings the
/// plan refuses.
pub fn up_converged(
    topo: Topology,
    wiring: Wiring,
    timers: Timers,
    m: Option<LabManagement>,
) -> (Lab, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let mut plan = Plan::new(topo, &tmp.path().join("lab"), timers, wiring).unwrap();
    if let Some(m) = m {
        plan.set_management(m).unwrap();
    }
    let bins = Binaries {
        mwlab: PathBuf::from(env!("CARGO_BIN_EXE_mwlab")),
    };
    let lab = Lab::up(plan, &bins).unwrap();
    checks::converge(
        &lab.plan,
        &[],
        Duration::from_millis(500),
        Duration::from_secs(60),
        &mut |_, _| {},
    )
    .unwrap();
    (lab, tmp)
}

/// The probes host `to` received from `from` (unique), polled until
/// `want` came or `secs` passed.
pub fn probes_received(lab: &Lab, to: &str, from: &str, want: u64, secs: u64) -> u64 {
    let mut c = mwlab::lab::host_client(&lab.plan, to).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let s = c.request(&serde_json::json!({"cmd": "stats"})).unwrap();
        assert_eq!(s["ok"], true, "{s}");
        let n = s["received"][from]["unique"].as_u64().unwrap_or(0);
        if n >= want || std::time::Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// received = forwarded + dropped + punted on every port of every live
/// router (one consistent publication of each worker's counters).
pub fn accounting_balances(lab: &Lab) {
    for r in &lab.plan.routers {
        if !lab.router_alive(&r.name) {
            continue;
        }
        let s = mwctl(&r.socket, &["stats"]).unwrap();
        for p in s["ports"].as_array().unwrap() {
            let n = |k: &str| p[k].as_u64().unwrap();
            assert_eq!(
                n("received"),
                n("forwarded") + n("dropped") + n("punted"),
                "router {} port {}: {p}",
                r.name,
                p["port"]
            );
        }
    }
}

/// Prints every drop the live routers counted, by router, port and reason
/// (where probes went when some did not arrive).
pub fn print_drops(lab: &Lab) {
    for r in &lab.plan.routers {
        if !lab.router_alive(&r.name) {
            continue;
        }
        let Ok(s) = mwctl(&r.socket, &["stats"]) else {
            eprintln!("  {}: no stats", r.name);
            continue;
        };
        for p in s["ports"].as_array().into_iter().flatten() {
            let drops: Vec<String> = p["drops"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, v)| v.as_u64().is_some_and(|n| n > 0))
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let missed = p["rx_missed"].as_u64().unwrap_or(0);
            if !drops.is_empty() || missed > 0 {
                eprintln!(
                    "  {} port {}: {} (rx_missed {missed})",
                    r.name,
                    p["port"],
                    drops.join(", ")
                );
            }
        }
    }
}

/// Host `host`'s `stats`.
pub fn host_stats(lab: &Lab, host: &str) -> serde_json::Value {
    let mut c = mwlab::lab::host_client(&lab.plan, host).unwrap();
    c.request(&serde_json::json!({"cmd": "stats"})).unwrap()
}

/// The state of each manager on SAN `san`: (router, state).
pub fn managers_on(lab: &Lab, san: &str) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for r in lab
        .plan
        .routers
        .iter()
        .filter(|r| r.sans.iter().any(|s| s == san))
    {
        if !lab.router_alive(&r.name) {
            continue;
        }
        let hr = r.sans.iter().position(|s| s == san).unwrap();
        let hr = format!("{:#06x}", r.hrs[hr].0);
        let m = mwctl(&r.socket, &["show", "management"]).unwrap();
        for row in m["managers"].as_array().unwrap() {
            if row["hr"] == hr.as_str() {
                v.push((r.name.clone(), row["state"].as_str().unwrap().to_string()));
            }
        }
    }
    v
}

pub fn master_of(lab: &Lab, san: &str) -> Option<String> {
    let v = managers_on(lab, san);
    let masters: Vec<&(String, String)> = v.iter().filter(|(_, s)| s == "master").collect();
    (masters.len() == 1 && v.iter().all(|(_, s)| s == "master" || s == "standby"))
        .then(|| masters[0].0.clone())
}

pub fn wait_master(lab: &Lab, san: &str, within: Duration) -> String {
    let t0 = Instant::now();
    loop {
        if let Some(m) = master_of(lab, san) {
            return m;
        }
        assert!(
            t0.elapsed() < within,
            "SAN {san}: no single master: {:?}",
            managers_on(lab, san)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
