//! Whole labs of processes on loopback UDP (router processes running
//! mwrouterd's code, host processes that are real MessageWay nodes):
//! Appendix B converges to the simulator's routes; the demo passes end to
//! end (kill a router: HR-DOWN, reroute, no loop, no loss); a router port
//! taken down and up with mwctl; L2 traffic along an RRP#2 answer; ERR UNK
//! and a redirect arriving at a host; a host moving to its best first HR
//! after a redirect and staying there; Appendix C's requests and answers
//! captured on a router port and decoded by mwdump. At the end of every
//! test, every router's packet accounting balances.

use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;

use mwlab::checks;
use mwlab::lab::{Binaries, Lab, host_client, mwctl};
use mwlab::plan::{Plan, Wiring, lab_timers};
use mwsim::topology::Topology;
use serde_json::{Value, json};

fn bins() -> Binaries {
    Binaries {
        mwlab: PathBuf::from(env!("CARGO_BIN_EXE_mwlab")),
    }
}

fn topology(file: &str) -> Topology {
    common::example(file)
}

/// A lab of `file` on loopback UDP in a fresh directory, converged.
fn converged(file: &str) -> (Lab, tempfile::TempDir) {
    converged_as(file, Wiring::Udp)
}

fn converged_as(file: &str, wiring: Wiring) -> (Lab, tempfile::TempDir) {
    common::up_converged(topology(file), wiring, lab_timers(), None)
}

/// Runs `mwlab demo --json ARGS`; checks that it exits 0 with every step
/// passed and returns its report.
fn demo_json(args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mwlab"))
        .arg("demo")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "{v:#}");
    assert!(
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["ok"] == true)
    );
    v
}

/// Whether network namespaces can be made here; otherwise reports `test`
/// as skipped.
fn netns_or_skip(test: &str) -> bool {
    let ok = mwlab::netns::available();
    if !ok {
        testkit::skip(test, "needs root and ip netns");
    }
    ok
}

/// Checks that none of `namespaces` and `bridges` is left.
fn nothing_left<S: AsRef<str>>(namespaces: &[S], bridges: &[S]) {
    let ns = String::from_utf8(
        std::process::Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    for n in namespaces {
        let n = n.as_ref();
        assert!(
            !ns.lines().any(|l| l.split_whitespace().next() == Some(n)),
            "{n} is left"
        );
    }
    for b in bridges {
        let b = b.as_ref();
        assert!(!Path::new("/sys/class/net").join(b).exists(), "{b} is left");
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn ok(v: Value) -> Value {
    assert_eq!(v["ok"], true, "{v}");
    v
}

#[test]
fn appendix_b_converges_to_the_simulators_routes_without_loops() {
    let (lab, _tmp) = converged("appendix-b.toml");
    let f = mwlab::lab::fibs(&lab.plan, &[]);
    let diffs = checks::compare_with_sim(&lab.plan, &f).unwrap();
    assert!(diffs.is_empty(), "{diffs:#?}");
    // Every pair of hosts: a complete, loop-free path through the FIBs.
    for a in &lab.plan.hosts {
        for b in &lab.plan.hosts {
            if a.san != b.san {
                let p = checks::walk(&lab.plan, &f, &a.spec.name, &b.spec.name);
                assert!(p.complete, "{} -> {}: {p:?}", a.spec.name, b.spec.name);
            }
        }
    }
    // The draft's examples (Appendix B, docs/spec-notes.md): H0 -> H8 leaves
    // SAN A through router ad and SAN D through de.
    let p = checks::walk(&lab.plan, &f, "H0", "H8");
    assert!(
        p.routers.ends_with(&["ad".to_string(), "de".to_string()]),
        "{p:?}"
    );
    common::accounting_balances(&lab);
    lab.down().unwrap();
}

#[test]
fn the_demo_passes_and_leaves_nothing_behind() {
    let v = demo_json(&[]);
    assert_eq!(v["ok"], true);
    let steps = v["steps"].as_array().unwrap();
    assert!(steps.len() >= 8, "{steps:#?}");
    assert!(
        v["traffic_after"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["lost"] == 0)
    );
    let dir = PathBuf::from(v["dir"].as_str().unwrap());
    assert!(!dir.exists(), "the demo removes its directory");
}

#[test]
fn a_router_port_down_and_up_with_mwctl() {
    let (lab, _tmp) = converged("appendix-b.toml");
    let ad = lab.plan.routers.iter().find(|r| r.name == "ad").unwrap();
    // ad's port on SAN A down: H0's traffic to H8 goes around it.
    mwctl(&ad.socket, &["port", "0", "down"]).unwrap();
    let mut detour = None;
    for _ in 0..100 {
        let f = mwlab::lab::fibs(&lab.plan, &[]);
        let p = checks::walk(&lab.plan, &f, "H0", "H8");
        if p.complete && !p.routers.contains(&"ad".to_string()) {
            detour = Some(p);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let detour = detour.expect("H0 -> H8 avoids ad once its SAN A port is down");
    assert!(detour.routers.contains(&"de".to_string()));
    let flows = checks::traffic(&lab.plan, &[("H0".into(), "H8".into())], 200, 2000).unwrap();
    assert_eq!(flows[0].lost, 0, "{flows:?}");
    // Up again: the simulator's routes come back.
    mwctl(&ad.socket, &["port", "0", "up"]).unwrap();
    checks::converge(
        &lab.plan,
        &[],
        Duration::from_millis(500),
        Duration::from_secs(30),
        &mut |_, _| {},
    )
    .unwrap();
    let mut same = false;
    for _ in 0..100 {
        let f = mwlab::lab::fibs(&lab.plan, &[]);
        if checks::compare_with_sim(&lab.plan, &f).unwrap().is_empty() {
            same = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        same,
        "routes after the port came back up differ from the simulator's"
    );
    common::accounting_balances(&lab);
    lab.down().unwrap();
}

#[test]
fn l2_traffic_along_an_rrp2_answer_and_redirects_and_err_unk_at_a_host() {
    let (lab, _tmp) = converged("appendix-b.toml");
    let h9 = lab.plan.hosts.iter().find(|h| h.spec.name == "H9").unwrap();
    let mut h0 = host_client(&lab.plan, "H0").unwrap();
    // RRP#1 -> RRP#2 from H0's HR, then L2 probes along the first route.
    let r = ok(h0
        .request(&json!({"cmd": "route", "dst": h9.spec.address, "timeout_ms": 2000}))
        .unwrap());
    assert!(!r["routes"].as_array().unwrap().is_empty(), "{r}");
    ok(h0
        .request(
            &json!({"cmd": "send_l2", "dst": h9.spec.address, "route_index": 0,
                         "count": 100, "rate_pps": 2000, "wait": true}),
        )
        .unwrap());
    std::thread::sleep(Duration::from_millis(300));
    let s9 = ok(host_client(&lab.plan, "H9")
        .unwrap()
        .request(&json!({"cmd": "stats"}))
        .unwrap());
    assert_eq!(s9["received"]["0x0100"]["unique"], 100, "{s9}");
    // L3 to H9 through H0's default HR (ab): ab forwards back onto SAN A to
    // ad and redirects H0 there (RRP#3).
    ok(h0
        .request(&json!({"cmd": "send", "dst": h9.spec.address, "count": 20,
                         "rate_pps": 1000, "wait": true}))
        .unwrap());
    std::thread::sleep(Duration::from_millis(300));
    let s0 = ok(h0.request(&json!({"cmd": "stats"})).unwrap());
    assert_eq!(s0["redirects"]["0x0109"], "0x0119", "{s0}");
    // A destination nobody has: ERR UNK comes back.
    ok(h0
        .request(&json!({"cmd": "send", "dst": 0x0999, "count": 3, "rate_pps": 1000, "wait": true}))
        .unwrap());
    let mut unk = false;
    for _ in 0..50 {
        let s0 = ok(h0.request(&json!({"cmd": "stats"})).unwrap());
        if s0["errors_received"]["UNK"].as_u64().unwrap_or(0) > 0 {
            assert!(
                s0["unknown"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|u| u == "0x0999"),
                "{s0}"
            );
            unk = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(unk, "no ERR UNK reached H0");
    common::accounting_balances(&lab);
    lab.down().unwrap();
}

/// Packets router `name` forwarded, over all its ports.
fn forwarded(lab: &Lab, name: &str) -> u64 {
    let r = lab.plan.routers.iter().find(|r| r.name == name).unwrap();
    let s = mwctl(&r.socket, &["stats"]).unwrap();
    s["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["forwarded"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_host_moves_to_its_best_first_hr_and_stays_there() {
    // examples/best-first-hr.toml: h's default HR is r2's, but g is cheaper
    // for h through r1 (X + r1 + Y = 5) than through r2 and r3 (7).
    let (lab, _tmp) = converged("best-first-hr.toml");
    let g = lab.plan.hosts.iter().find(|h| h.spec.name == "g").unwrap();
    let mut h = host_client(&lab.plan, "h").unwrap();
    let (r1, r2) = (forwarded(&lab, "r1"), forwarded(&lab, "r2"));
    // 3 s of probes, three times the life of a redirect: the host must
    // renew it (RRP#6 to r2) rather than fall back to r2.
    ok(
        h.request(&json!({"cmd": "send", "dst": g.spec.address, "count": 600,
                         "rate_pps": 200, "wait": true}))
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let sg = ok(host_client(&lab.plan, "g")
        .unwrap()
        .request(&json!({"cmd": "stats"}))
        .unwrap());
    assert_eq!(sg["received"]["0x0100"]["unique"], 600, "{sg}");
    let sh = ok(h.request(&json!({"cmd": "stats"})).unwrap());
    assert_eq!(sh["redirects"]["0x0101"], "0x0112", "{sh}");
    assert!(sh["redirect_renewals"].as_u64().unwrap() >= 2, "{sh}");
    // r2 forwarded only what h sent before r2's RRP#3 reached it.
    let (by_r1, by_r2) = (forwarded(&lab, "r1") - r1, forwarded(&lab, "r2") - r2);
    assert!(by_r2 <= 5, "r2 forwarded {by_r2} of h's probes, r1 {by_r1}");
    assert!(
        by_r1 >= 595,
        "r1 forwarded {by_r1} of h's probes, r2 {by_r2}"
    );
    common::accounting_balances(&lab);
    lab.down().unwrap();
}

#[test]
fn appendix_c_requests_and_answers_on_the_wire() {
    let (lab, tmp) = converged("appendix-c.toml");
    let a = lab
        .plan
        .routers
        .iter()
        .find(|r| r.name == "RouterA")
        .unwrap();
    let mut n1 = host_client(&lab.plan, "Node1").unwrap();
    // Capture RouterA's SAN1 port (what it receives, then what it sends)
    // while Node1 asks it for routes (RRP#1) and for the HR to use (RRP#6).
    let mut captured = |what: &str| -> Vec<(u16, u16, String)> {
        let pcap = tmp.path().join(format!("routerA-san1-{what}.pcap"));
        let (sock, file) = (a.socket.clone(), pcap.clone());
        let extra: Vec<String> = if what == "tx" {
            vec!["--transmitted".into()]
        } else {
            vec![]
        };
        let cap = std::thread::spawn(move || {
            let mut args: Vec<String> = [
                "mwctl",
                "--socket",
                sock.to_str().unwrap(),
                "capture",
                "0",
                "-w",
                file.to_str().unwrap(),
                "-c",
                "60",
                "--timeout",
                "20",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            args.extend(extra);
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let code = mwctl::main_with(args, &mut out, &mut err);
            (code, String::from_utf8_lossy(&err).into_owned())
        });
        std::thread::sleep(Duration::from_millis(300));
        for _ in 0..3 {
            ok(n1
                .request(&json!({"cmd": "route", "dst": 0x0102, "timeout_ms": 2000}))
                .unwrap());
            ok(n1
                .request(&json!({"cmd": "which_hr", "dst": 0x0102, "timeout_ms": 2000}))
                .unwrap());
        }
        let (code, err) = cap.join().unwrap();
        assert_eq!(code, 0, "{err}");
        let bytes = std::fs::read(&pcap).unwrap();
        mwdump::capture::read(&bytes)
            .unwrap()
            .frames
            .iter()
            .filter_map(|f| {
                let (p, m) = rrp::wire::Message::parse_packet(&f.data).ok()?;
                Some((p.header.src.0, p.header.dst.0, m.name().to_string()))
            })
            .collect()
    };
    let has = |kinds: &[(u16, u16, String)], src: u16, dst: u16, what: &str| {
        kinds
            .iter()
            .any(|(s, d, k)| *s == src && *d == dst && k.contains(what))
    };
    // Received: Node1 (0x0101) answers RouterA's keepalives (RRP#5) and asks
    // RouterA's HR (0x0111), as in Appendix C.
    let rx = captured("rx");
    assert!(has(&rx, 0x0101, 0x0111, "RRP#5"), "{rx:?}");
    assert!(has(&rx, 0x0101, 0x0111, "RRP#1"), "{rx:?}");
    assert!(has(&rx, 0x0101, 0x0111, "RRP#6"), "{rx:?}");
    // Transmitted: RouterA's keepalives (RRP#7), the routes (RRP#2) and the
    // HR to use (RRP#3), from 0x0111 to Node1.
    let tx = captured("tx");
    assert!(has(&tx, 0x0111, 0x0101, "RRP#7"), "{tx:?}");
    assert!(has(&tx, 0x0111, 0x0101, "RRP#2"), "{tx:?}");
    assert!(has(&tx, 0x0111, 0x0101, "RRP#3"), "{tx:?}");
    // And Node1 counted those answers.
    let s1 = ok(n1.request(&json!({"cmd": "stats"})).unwrap());
    for (what, at_least) in [("RRP#7", 1), ("RRP#2", 6), ("RRP#3", 6)] {
        let n = s1["control"][what].as_u64().unwrap_or(0);
        assert!(n >= at_least, "{what}: {n} in {s1}");
    }
    common::accounting_balances(&lab);
    lab.down().unwrap();
}

#[test]
fn appendix_b_over_ethernet_in_network_namespaces() {
    if !netns_or_skip("mwlab::lab::appendix_b_over_ethernet_in_network_namespaces") {
        return;
    }
    let wiring = Wiring::Netns {
        run: mwlab::netns::run_tag(),
    };
    let (lab, _tmp) = converged_as("appendix-b.toml", wiring);
    let made = mwlab::netns::planned(&lab.plan);
    assert!(made.namespaces.len() == 17 && made.bridges.len() == 5);
    let f = mwlab::lab::fibs(&lab.plan, &[]);
    let diffs = checks::compare_with_sim(&lab.plan, &f).unwrap();
    assert!(diffs.is_empty(), "{diffs:#?}");
    // Next hops are MACs now, and traffic crosses the bridges.
    assert!(f.values().any(|(_, _, n)| n.starts_with("02:4d:")), "{f:?}");
    let flows = checks::traffic(
        &lab.plan,
        &[("H0".into(), "H9".into()), ("H9".into(), "H2".into())],
        200,
        1000,
    )
    .unwrap();
    assert!(flows.iter().all(|f| f.lost == 0), "{flows:?}");
    common::accounting_balances(&lab);
    lab.down().unwrap();
    // Nothing is left: no namespace, no bridge.
    nothing_left(&made.namespaces, &made.bridges);
}

#[test]
fn the_demo_passes_in_network_namespaces() {
    if !netns_or_skip("mwlab::lab::the_demo_passes_in_network_namespaces") {
        return;
    }
    let v = demo_json(&["--netns"]);
    // Everything the run made is gone.
    let made = &v["netns"];
    let namespaces = strings(&made["namespaces"]);
    assert_eq!(namespaces.len(), 17, "{made}");
    nothing_left(&namespaces, &strings(&made["bridges"]));
}

#[test]
fn up_status_down_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lab");
    let topo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/appendix-c.toml");
    let mwlab = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mwlab"))
            .args(args)
            .output()
            .unwrap()
    };
    let d = dir.to_str().unwrap();
    let up = mwlab(&["up", topo.to_str().unwrap(), "--dir", d, "--wait"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    // A second lab in the same directory is refused.
    let again = mwlab(&["up", topo.to_str().unwrap(), "--dir", d]);
    assert_eq!(again.status.code(), Some(2));
    let st = mwlab(&["status", "--dir", d, "--json"]);
    assert!(st.status.success());
    let v: Value = serde_json::from_slice(&st.stdout).unwrap();
    let procs = v["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 5, "{v:#}");
    assert!(procs.iter().all(|p| p["alive"] == true), "{v:#}");
    assert_eq!(v["fib_complete"][0], v["fib_complete"][1], "{v:#}");
    let pids: Vec<u32> = procs
        .iter()
        .map(|p| p["pid"].as_u64().unwrap() as u32)
        .collect();
    let down = mwlab(&["down", "--dir", d]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(!dir.exists(), "down removes the directory");
    assert!(
        pids.iter().all(|p| !mwlab::lab::alive(*p)),
        "every process stopped"
    );
    // Nothing to stop any more.
    assert_eq!(mwlab(&["down", "--dir", d]).status.code(), Some(2));
}

#[test]
fn level_a_hosts_are_static_entries_and_still_reachable() {
    // H1 (SAN A) as a Level-A node: it never answers RRP#7, so the routers
    // of SAN A know it only from their static entries.
    let mut topo = topology("appendix-b.toml");
    topo.hosts
        .iter_mut()
        .find(|h| h.name == "H1")
        .unwrap()
        .level = "A".into();
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan::new(topo, &tmp.path().join("lab"), lab_timers(), Wiring::Udp).unwrap();
    assert!(plan.daemon_config_toml(0).contains("[[hr.static]]"));
    let lab = Lab::up(plan, &bins()).unwrap();
    checks::converge(
        &lab.plan,
        &[],
        Duration::from_millis(500),
        Duration::from_secs(60),
        &mut |_, _| {},
    )
    .unwrap();
    let s1 = ok(host_client(&lab.plan, "H1")
        .unwrap()
        .request(&json!({"cmd": "stats"}))
        .unwrap());
    assert_eq!(
        s1["rrp7_answered"], 0,
        "a Level-A node does not answer: {s1}"
    );
    let flows = checks::traffic(&lab.plan, &[("H9".into(), "H1".into())], 200, 2000).unwrap();
    assert_eq!(flows[0].lost, 0, "{flows:?}");
    common::accounting_balances(&lab);
    lab.down().unwrap();
}

#[test]
fn the_demo_passes_with_dpdk_af_packet_routers_in_network_namespaces() {
    let test = "mwlab::lab::the_demo_passes_with_dpdk_af_packet_routers";
    if !netns_or_skip(test) {
        return;
    }
    if !cfg!(feature = "dpdk") {
        testkit::skip(test, "mwlab built without --features dpdk");
        return;
    }
    let v = demo_json(&["--netns", "--dpdk"]);
    nothing_left(&[], &strings(&v["netns"]["bridges"]));
}
