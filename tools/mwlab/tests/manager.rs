//! SAN managers in a lab of real processes (docs/manager.md): on Appendix
//! B's SAN D, routers bd1, bd2 and cd run managers with priorities 3, 7
//! and 7; the 7 with the lower node identity is master, the others
//! standby; the master killed, the other 7 takes over within the bound of
//! the defaults (polls x misses + an election).

mod common;

use std::time::{Duration, Instant};

use mwlab::lab::{Lab, mwctl};
use mwlab::plan::{LabManagement, lab_timers};
use serde_json::Value;

/// SAN D's HR of each router.
const ON_D: [(&str, &str); 3] = [("bd1", "0x011c"), ("bd2", "0x011e"), ("cd", "0x0120")];

fn managers(lab: &Lab, name: &str) -> Value {
    let r = lab.plan.routers.iter().find(|r| r.name == name).unwrap();
    mwctl(&r.socket, &["show", "management"]).unwrap()
}

/// The state of `name`'s manager on SAN D, and its identity.
fn on_d(lab: &Lab, name: &str) -> (String, u64) {
    let hr = ON_D.iter().find(|(n, _)| *n == name).unwrap().1;
    let m = managers(lab, name);
    let row = m["managers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["hr"] == hr)
        .unwrap_or_else(|| panic!("{name}: no manager on {hr}: {m}"))
        .clone();
    let id =
        u64::from_str_radix(m["identity"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    (row["state"].as_str().unwrap().to_string(), id)
}

fn settled(lab: &Lab, alive: &[&str]) -> Option<String> {
    let states: Vec<(String, String)> = alive
        .iter()
        .map(|n| (n.to_string(), on_d(lab, n).0))
        .collect();
    let masters: Vec<&String> = states
        .iter()
        .filter(|(_, s)| s == "master")
        .map(|(n, _)| n)
        .collect();
    let standbys = states.iter().filter(|(_, s)| s == "standby").count();
    (masters.len() == 1 && standbys == alive.len() - 1).then(|| masters[0].clone())
}

fn wait_settled(lab: &Lab, alive: &[&str], secs: u64) -> (String, Duration) {
    let t0 = Instant::now();
    loop {
        if let Some(m) = settled(lab, alive) {
            return (m, t0.elapsed());
        }
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "not settled: {:?}",
            alive.iter().map(|n| (n, on_d(lab, n))).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn three_managers_on_san_d_elect_and_fail_over() {
    let (mut lab, _tmp) = common::appendix_b(
        LabManagement {
            managers: vec![("bd1".into(), 3), ("bd2".into(), 7), ("cd".into(), 7)],
            ..LabManagement::default()
        },
        lab_timers(),
    );
    let all = ["bd1", "bd2", "cd"];
    let (master, t) = wait_settled(&lab, &all, 20);
    let (_, id_bd2) = on_d(&lab, "bd2");
    let (_, id_cd) = on_d(&lab, "cd");
    let want = if id_bd2 < id_cd { "bd2" } else { "cd" };
    assert_eq!(master, want, "the 7 with the lower identity");
    eprintln!(
        "elected {master} {} ms after the routes converged",
        t.as_millis()
    );
    // The master dies: the other 7 takes over within poll_ms x
    // (poll_misses + 1) + an election (docs/manager.md: 5.3 s), with room
    // for the processes' scheduling.
    lab.kill_router(&master).unwrap();
    let alive: Vec<&str> = all.iter().copied().filter(|n| *n != master).collect();
    let t0 = Instant::now();
    let (next, _) = wait_settled(&lab, &alive, 15);
    let failover = t0.elapsed();
    let other = if master == "bd2" { "cd" } else { "bd2" };
    assert_eq!(next, other);
    assert!(failover < Duration::from_secs(8), "{failover:?}");
    eprintln!("failover to {next} in {} ms", failover.as_millis());
    lab.down().unwrap();
}
