//! Restarting a router under traffic (docs/daemon.md "Draining before
//! maintenance", docs/reliability.md "Restarting a router"): on the
//! Appendix B lab, H0 sends 4,000 probes at 1,000 pps to H8; one second in,
//! ad is stopped, either by `mwctl drain` (its routes advertised at the
//! largest cost, it stops once nothing goes through it) or by SIGINT (at
//! once), and, with DRAIN_RESTART set, started again from the same binary.
//! Both counts are printed; through the drain all but at most a few arrive.

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
    let sig = if drain {
        let v = mwctl(&ad.socket, &["drain"]).unwrap();
        assert_eq!(v["draining"], true, "{v}");
        None
    } else {
        Some(Signal::INT)
    };
    let took = lab.stop_router("ad", sig, Duration::from_secs(20)).unwrap();
    if restart {
        lab.start_router("ad", &bins).unwrap();
    }
    if std::env::var_os("DRAIN_DEBUG").is_some() {
        std::thread::sleep(Duration::from_millis(500));
        for r in lab
            .plan
            .routers
            .iter()
            .filter(|r| r.name == "ab" || r.name == "ac")
        {
            let v = mwctl(&r.socket, &["show", "route", "0x0108"]).unwrap();
            eprintln!("{}: {v}", r.name);
        }
    }
    let got = common::probes_received(lab, "H8", "0x0100", PROBES, 20);
    (got, took)
}

fn measure(restart: bool) -> (u64, u64) {
    let (mut lab, _tmp) = common::appendix_b(LabManagement::default(), lab_timers());
    let (drained, took) = stop_ad_under_probes(&mut lab, true, restart);
    eprintln!(
        "drain (restart {restart}): {drained} of {PROBES} probes arrived; ad stopped after {took:?}"
    );
    lab.down().unwrap();
    let (mut lab, _tmp) = common::appendix_b(LabManagement::default(), lab_timers());
    let (stopped, took) = stop_ad_under_probes(&mut lab, false, restart);
    eprintln!(
        "SIGINT (restart {restart}): {stopped} of {PROBES} probes arrived; ad stopped after {took:?}"
    );
    lab.down().unwrap();
    (drained, stopped)
}

#[test]
fn a_drained_router_stops_without_losing_a_probe() {
    let restart = std::env::var_os("DRAIN_RESTART").is_some();
    let (drained, stopped) = measure(restart);
    // At most a probe or two are lost (the drain stops at <= quiet_pps
    // still forwarded: docs/reliability.md), against ~900 when stopped at once.
    assert!(
        drained + 5 >= PROBES,
        "{drained} of {PROBES} arrived through a drain"
    );
    assert!(
        drained > stopped,
        "a drain loses less than a stop ({drained} <= {stopped})"
    );
}
