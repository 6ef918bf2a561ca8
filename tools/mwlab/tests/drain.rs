//! Restarting a router under traffic (docs/daemon.md "Draining before
//! maintenance", docs/reliability.md "Restarting a router"): on the
//! Appendix B lab, H0 sends 4,000 probes at 1,000 pps to H8; one second in,
//! ad is stopped, either by `mwctl drain` (its routes advertised at the
//! largest cost, it stops once nothing goes through it) or by SIGINT (at
//! once), and started again from the same binary, held at the largest cost
//! until its FIBs are complete (`drain.start_max_ms`, on by default). Both
//! counts are printed, with every drop the live routers counted; through
//! the drain every probe arrives.
//!
//! For docs/reliability.md: `DRAIN_NO_RESTART=1` leaves ad stopped, and
//! `DRAIN_HOLD=MS` sets ad's `drain.start_max_ms` for the restart (0: no
//! hold).

mod common;

use std::path::PathBuf;
use std::time::Duration;

use mwlab::lab::{Binaries, Lab, host_client, mwctl};
use mwlab::plan::{LabManagement, lab_timers};
use rustix::process::Signal;
use serde_json::json;

const PROBES: u64 = 4000;

/// Sends the probes, stops ad one second in (drained, or SIGINT), starts
/// it again when `restart`, and counts the probes H8 received from H0.
fn stop_ad_under_probes(lab: &mut Lab, drain: bool, restart: bool) -> (u64, Duration) {
    let bins = Binaries {
        mwlab: PathBuf::from(env!("CARGO_BIN_EXE_mwlab")),
    };
    let mut h0 = host_client(&lab.plan, "H0").unwrap();
    let v = h0
        .request(&json!({"cmd": "send", "dst": 0x0108, "count": PROBES, "rate_pps": 1000, "wait": false}))
        .unwrap();
    assert_eq!(v["ok"], true, "{v}");
    std::thread::sleep(Duration::from_secs(1));
    let ad = lab.plan.routers.iter().find(|r| r.name == "ad").unwrap();
    let config = ad.config.clone();
    let sig = if drain {
        let v = mwctl(&ad.socket, &["drain"]).unwrap();
        assert_eq!(v["draining"], true, "{v}");
        None
    } else {
        Some(Signal::INT)
    };
    let took = lab.stop_router("ad", sig, Duration::from_secs(20)).unwrap();
    if restart {
        if let Ok(ms) = std::env::var("DRAIN_HOLD") {
            let mut c = control::config::Config::load(&config).unwrap();
            c.drain.start_max_ms = ms.parse().expect("DRAIN_HOLD: milliseconds");
            std::fs::write(&config, c.to_toml()).unwrap();
        }
        lab.start_router("ad", &bins).unwrap();
    }
    let got = common::probes_received(lab, "H8", "0x0100", PROBES, 20);
    common::print_drops(lab);
    (got, took)
}

fn measure(drain: bool, restart: bool) -> u64 {
    let (mut lab, _tmp) = common::appendix_b(LabManagement::default(), lab_timers());
    let (got, took) = stop_ad_under_probes(&mut lab, drain, restart);
    let how = if drain { "drain" } else { "SIGINT" };
    eprintln!(
        "{how} (restarted: {restart}): {got} of {PROBES} probes arrived; ad stopped after {took:?}"
    );
    lab.down().unwrap();
    got
}

#[test]
fn a_drained_router_restarts_without_losing_a_probe() {
    let restart = std::env::var_os("DRAIN_NO_RESTART").is_none();
    let drained = measure(true, restart);
    let stopped = measure(false, restart);
    assert_eq!(drained, PROBES, "probes lost through a drain");
    assert!(
        stopped < drained,
        "a stop at once loses probes the drain keeps ({stopped} >= {drained})"
    );
}
