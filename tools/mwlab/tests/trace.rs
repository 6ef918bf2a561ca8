//! mwtrace in whole labs (docs/mwtrace.md): from host H0 of Appendix B to
//! H8, the path [ad, de, H8] validated with the incoming HRs 0x0119, 0x0121
//! and 0x0108, and the new path after ad is killed; a router without the
//! tracer's agent skipped and named; a lossy link overcome by retries; a
//! miswired route (a static LRT entry sending H8's packets to H9) reported
//! at exactly that hop with status 7; a stopped router timing out with
//! exit status 2.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use mwlab::lab::{Lab, host_client};
use mwlab::plan::{LabManagement, lab_timers};
use rrp::router::Timers;
use serde_json::{Value, json};

fn lab(m: LabManagement, timers: Timers) -> (Lab, tempfile::TempDir) {
    common::appendix_b(m, timers)
}

/// `mwctl --json trace ARGS` on H0's admin socket: the exit status and the
/// trace.
fn trace(lab: &Lab, args: &[&str]) -> (i32, Value) {
    let sock = lab.plan.admin_socket("H0").unwrap();
    let mut all: Vec<String> = ["mwctl", "--socket", &sock.display().to_string(), "--json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.push("trace".into());
    all.extend(args.iter().map(|s| s.to_string()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mwctl::main_with(all, &mut out, &mut err);
    let v = serde_json::from_slice(&out).unwrap_or_else(|_| {
        json!({"stdout": String::from_utf8_lossy(&out), "stderr": String::from_utf8_lossy(&err)})
    });
    (code, v)
}

/// (node, expected, actual, status) of each hop.
fn hops(t: &Value) -> Vec<(String, String, String, String)> {
    t["hops"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|h| {
            (
                h["node"].as_str().unwrap_or("").to_string(),
                h["expected"].as_str().unwrap_or("").to_string(),
                h["actual"].as_str().unwrap_or("-").to_string(),
                h["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn hop(node: &str, expected: &str, actual: &str, status: &str) -> (String, String, String, String) {
    (node.into(), expected.into(), actual.into(), status.into())
}

fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn h0_to_h8_is_validated_and_again_after_ad_dies() {
    let (mut lab, _tmp) = lab(LabManagement::default(), lab_timers());
    let (code, t) = trace(&lab, &["0x0108", "--both"]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(t["outcome"], "validated", "{t}");
    assert_eq!(
        hops(&t),
        vec![
            hop("ad", "0x0119", "0x0119", "ok"),
            hop("de", "0x0121", "0x0121", "ok"),
            hop("H8", "0x0108", "0x0108", "ok"),
        ],
        "{t}"
    );
    // The reverse path, read from the FIBs: H8 -> de -> ad -> H0.
    let back: Vec<&str> = t["reverse"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["node"].as_str().unwrap())
        .collect();
    assert_eq!(back, ["de", "ad"], "{t}");
    assert!(t.get("reverse_note").is_none(), "{t}");

    // Without -v: one line; with -v: the table.
    let sock = lab.plan.admin_socket("H0").unwrap().to_path_buf();
    let text = |args: &[&str]| {
        let mut all = vec![
            "mwctl".to_string(),
            "--socket".into(),
            sock.display().to_string(),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = mwctl::main_with(all, &mut out, &mut err);
        (code, String::from_utf8_lossy(&out).into_owned())
    };
    let (code, one) = text(&["trace", "0x0108"]);
    assert_eq!((code, one.lines().count()), (0, 1), "{one}");
    assert!(
        one.starts_with("validated: 0x0100 -> 0x0108 in 3 hops (ad, de, H8)"),
        "{one}"
    );
    let (_, all) = text(&["trace", "-v", "0x0108"]);
    assert!(all.contains("0x0121 (port 0)"), "{all}");

    // mwtrace is the same code.
    let mwtrace = testkit::workspace_bin("mwctl", "mwtrace", &[]);
    let o = Command::new(&mwtrace)
        .args(["--socket", &sock.display().to_string(), "0x0108"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), one);
    let o = Command::new(&mwtrace)
        .args(["--socket", "/nonexistent", "0x0108"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "no admin socket: {o:?}");
    let o = Command::new(&mwtrace)
        .args(["not-an-address"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "bad arguments: {o:?}");

    // The same path as an L2 source route: via ad, then ad's hop to de and
    // de's to H8, the requests carried by L2RHs.
    let ep = |a: u16| lab.plan.endpoints[&a].0.clone();
    let route = format!("0x0119,0x011a@{},0x0122@{}", ep(0x0121), ep(0x0108));
    let (code, t) = trace(&lab, &["--route", &route]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(
        hops(&t),
        vec![
            hop("ad", "0x0119", "0x0119", "ok"),
            hop("de", "0x0121", "0x0121", "ok"),
            hop("H8", "0x0108", "0x0108", "ok"),
        ],
        "{t}"
    );
    // ad believes de's HR 0x0121 is at the native address of de's other HR
    // (a static entry: a swapped cable): a route through that address
    // arrives on 0x0122, status 7 at hop 2 exactly.
    let ad = lab.plan.routers.iter().find(|r| r.name == "ad").unwrap();
    mwlab::lab::mwctl(
        &ad.socket,
        &[
            "route",
            "add",
            "--port",
            "1",
            "--native",
            &ep(0x0122),
            "--router",
            "0x0121",
        ],
    )
    .unwrap();
    let swapped = format!("0x0119,0x011a@{},0x0122@{}", ep(0x0122), ep(0x0108));
    let (code, t) = trace(&lab, &["--route", &swapped]);
    assert_eq!(code, 1, "{t}");
    let h = hops(&t);
    assert_eq!(h[1], hop("de", "0x0121", "0x0122", "mismatch"), "{t}");
    assert_eq!(h[2].3, "ok", "{t}");
    mwlab::lab::mwctl(&ad.socket, &["route", "del", "--port", "1", "0x0121"]).unwrap();

    // ad dies: H0's traffic to H8 goes another way, validated too.
    lab.kill_router("ad").unwrap();
    let mut last = Value::Null;
    wait_for("a validated path without ad", 30, || {
        let (code, t) = trace(&lab, &["0x0108", "-t", "200", "-r", "1"]);
        last = t.clone();
        code == 0 && !hops(&t).iter().any(|h| h.0 == "ad")
    });
    let h = hops(&last);
    assert_eq!(h.last().unwrap().0, "H8", "{last}");
    assert!(h.iter().all(|h| h.3 == "ok" && h.1 == h.2), "{last}");
    lab.down().unwrap();
}

#[test]
fn skipped_hops_loss_a_miswired_route_and_a_dead_hop() {
    // de runs no tracer agent; keepalives slow enough that a stopped router
    // is still believed up while the trace runs.
    let timers = Timers {
        keepalive_ms: 1000,
        keepalive_misses: 5,
        ..lab_timers()
    };
    let (lab, _tmp) = lab(
        LabManagement {
            no_tracer: vec!["de".into()],
            ..LabManagement::default()
        },
        timers,
    );
    // de is skipped, and named as such; the rest validates.
    let (code, t) = trace(&lab, &["0x0108"]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(
        hops(&t),
        vec![
            hop("ad", "0x0119", "0x0119", "ok"),
            hop("de", "0x0121", "-", "no_agent"),
            hop("H8", "0x0108", "0x0108", "ok"),
        ],
        "{t}"
    );
    assert!(
        t["summary"]
            .as_str()
            .unwrap()
            .contains("1 without the tracer's agent"),
        "{t}"
    );

    // 40 % of what reaches H0 is lost: retries carry the trace through.
    // Whether any of a trace's 14 answers is lost is chance (all arrive in
    // about one trace of 1,300): up to three traces, until one retries.
    let mut h0 = host_client(&lab.plan, "H0").unwrap();
    let mut retried = Vec::new();
    for _ in 0..3 {
        let before = mgmt_client(&lab);
        h0.request(&json!({"cmd": "impair", "rx_loss": 0.4}))
            .unwrap();
        let (code, t) = trace(&lab, &["0x0108", "-t", "100", "-r", "10"]);
        h0.request(&json!({"cmd": "impair", "rx_loss": 0.0}))
            .unwrap();
        assert_eq!(code, 0, "{t}");
        let after = mgmt_client(&lab);
        let (sent, requests) = (
            after["sent"].as_u64().unwrap() - before["sent"].as_u64().unwrap(),
            after["requests"].as_u64().unwrap() - before["requests"].as_u64().unwrap(),
        );
        retried.push((sent, requests));
        if sent > requests {
            break;
        }
    }
    assert!(
        retried.iter().any(|(sent, requests)| sent > requests),
        "retries (sent, requests) per trace: {retried:?}"
    );
    assert!(
        h0.request(&json!({"cmd": "stats"})).unwrap()["rx_lost"]
            .as_u64()
            .unwrap()
            > 0
    );

    // A static LRT entry at de sends H8's packets to H9: the request for
    // H8 arrives at H9, status 7 at hop 3 exactly.
    let de = lab.plan.routers.iter().find(|r| r.name == "de").unwrap();
    let h9 = lab.plan.endpoints[&0x0109].0.clone();
    mwlab::lab::mwctl(
        &de.socket,
        &["route", "add", "--port", "1", "--native", &h9, "0x0108"],
    )
    .unwrap();
    let (code, t) = trace(&lab, &["0x0108"]);
    assert_eq!(code, 1, "{t}");
    assert_eq!(t["outcome"], "mismatch", "{t}");
    assert_eq!(
        hops(&t)[2],
        hop("H9", "0x0108", "0x0109", "mismatch"),
        "{t}"
    );
    assert!(
        t["summary"]
            .as_str()
            .unwrap()
            .contains("mismatch at hop 3 (H9): arrived on 0x0109, expected 0x0108"),
        "{t}"
    );
    mwlab::lab::mwctl(&de.socket, &["route", "del", "--port", "1", "0x0108"]).unwrap();
    wait_for("H8 reached again", 10, || trace(&lab, &["0x0108"]).0 == 0);

    // ad stopped (not dead to its neighbours yet): no answer at hop 1.
    let pid = lab
        .procs
        .iter()
        .find(|p| p.role == "router" && p.name == "ad")
        .unwrap()
        .pid;
    let sig = |s: rustix::process::Signal| {
        rustix::process::kill_process(rustix::process::Pid::from_raw(pid as i32).unwrap(), s)
            .unwrap()
    };
    sig(rustix::process::Signal::STOP);
    let t0 = Instant::now();
    let (code, t) = trace(&lab, &["0x0108", "-t", "200", "-r", "1"]);
    sig(rustix::process::Signal::CONT);
    assert_eq!(code, 2, "{t}");
    assert_eq!(t["outcome"], "unreachable", "{t}");
    let h = hops(&t);
    assert_eq!(h.last().unwrap().3, "no_answer", "{t}");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    lab.down().unwrap();
}

/// H0's management client counters.
fn mgmt_client(lab: &Lab) -> Value {
    let v = mwlab::lab::mwctl(
        lab.plan.admin_socket("H0").unwrap(),
        &["show", "management"],
    )
    .unwrap();
    v["client"].clone()
}
