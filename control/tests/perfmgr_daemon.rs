//! End to end: the fabric's performance manager in mwrouterd
//! (docs/management.md "Fabric performance manager"). Box a runs the SAN
//! manager of SAN 0x0601, which it shares with box b over loopback UDP, and
//! serves the fabric scrape at `/fabric/metrics`: b's ports and a's own
//! appear with `scrape_ok` 1, the text passes `promtool check metrics`;
//! b stopped is marked (`scrape_ok` 0), not dropped; b restarted (its
//! counters from 0 again) is read again, a reset is counted, and no
//! series of b ever went back.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use control::config::Config;
use mgmt::perfmgr::PerfConfig;

mod common;

use common::{start_named, udp_hr, wait_for};

/// A box with HR `a` (address, SAN, UDP port, the other members) and a
/// second HR alone on a SAN of its own.
fn config(dir: &Path, name: &str, a: (u16, u16, u16, &[u16]), b: (u16, u16, u16)) -> Config {
    let mut c = Config::new(
        name,
        vec![udp_hr(a.0, a.1, a.2, a.3), udp_hr(b.0, b.1, b.2, &[])],
    );
    c.timers.sweep_ms = 200;
    c.timers.keepalive_ms = 200;
    c.timers.advertise_ms = 20;
    c.timers.fib_ms = 10;
    c.admin.socket = dir.join(format!("{name}.sock"));
    c
}

/// A free TCP port on loopback.
fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path`: the body of a 200 answer, or `None`.
fn get(addr: SocketAddr, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
        .ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

/// Every sample of the text: series (name and labels as written) -> value.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (series, v) = l.rsplit_once(' ')?;
            Some((series.to_string(), v.parse().ok()?))
        })
        .collect()
}

/// `promtool check metrics` on the text (as control/tests/stats.rs runs
/// it): it must pass without a lint warning. A visible skip when promtool
/// is not installed (Debian: `apt-get install prometheus`).
fn promtool(text: &str) -> bool {
    let child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        testkit::skip(
            "perfmgr_daemon promtool",
            "promtool not on PATH: the fabric scrape is checked by the test's own reading only",
        );
        return false;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {}\n{}{}\n{text}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

const B_OK: &str = "mwrouter_fabric_scrape_ok{node=\"b\",address=\"0x0521\"}";
const B_RECEIVED: &str =
    "mwrouter_fabric_port_received_packets_total{node=\"b\",address=\"0x0521\",port=\"0\"}";
const B_RESETS: &str =
    "mwrouter_fabric_port_resets_total{node=\"b\",address=\"0x0521\",port=\"0\"}";

#[test]
fn the_fabric_scrape_marks_a_stopped_node_and_keeps_a_restarted_node_s_totals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let [pa, pa2, pb, pb2] = common::free_ports();
    let mut ca = config(d, "a", (0x0511, 0x0601, pa, &[pb]), (0x0512, 0x0602, pa2));
    ca.management.manager_priority = Some(7);
    ca.management.perf_manager = PerfConfig {
        interval_ms: 300,
        timeout_ms: 100,
        retries: 1,
        ..PerfConfig::default()
    };
    let http: SocketAddr = format!("127.0.0.1:{}", free_tcp_port()).parse().unwrap();
    ca.admin.prometheus_listen = Some(http);
    let cb = config(d, "b", (0x0521, 0x0601, pb, &[pa]), (0x0522, 0x0603, pb2));
    let (_a, _sa) = start_named(d, "a", &ca);
    let (b, _sb) = start_named(d, "b", &cb);

    // Every value of b's series seen so far: none may ever go down.
    let mut seen: BTreeMap<String, f64> = BTreeMap::new();
    let mut check = |text: &str| {
        let s = samples(text);
        for (k, v) in &s {
            if k.contains("node=\"b\"") && k.contains("_total") {
                if let Some(before) = seen.get(k) {
                    assert!(v >= before, "{k} went back: {before} -> {v}\n{text}");
                }
                seen.insert(k.clone(), *v);
            }
        }
        s
    };
    let mut text = String::new();
    wait_for("a's scrape to read b", 20, || {
        text = get(http, "/fabric/metrics").unwrap_or_default();
        let s = check(&text);
        s.get(B_OK) == Some(&1.0) && s.get(B_RECEIVED).is_some_and(|v| *v > 60.0)
    });
    let ran = promtool(&text);
    eprintln!("promtool ran: {ran}");
    assert!(
        text.contains("mwrouter_fabric_scrape_ok{node=\"a\",address=\"0x0511\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("mwrouter_fabric_sweep_duration_seconds "),
        "{text}"
    );
    assert!(text.contains("mwrouter_perfmgr_sweeps_total "), "{text}");
    assert!(
        text.contains(
            "mwrouter_fabric_port_received_bytes_total{node=\"b\",address=\"0x0521\",port=\"0\"} "
        ),
        "{text}"
    );
    // /metrics is the box's own, as before.
    let own = get(http, "/metrics").unwrap();
    assert!(own.contains("mwrouter_port_received_packets_total{port=\"0\"} "));
    assert!(!own.contains("mwrouter_fabric_"));

    // b stopped: marked, its series kept.
    drop(b);
    wait_for("b to be marked", 20, || {
        text = get(http, "/fabric/metrics").unwrap_or_default();
        check(&text).get(B_OK) == Some(&0.0)
    });
    let s = samples(&text);
    let before = s[B_RECEIVED];
    assert!(s.contains_key(B_RECEIVED), "{text}");
    assert!(
        s["mwrouter_perfmgr_nodes_unanswered_total"] >= 1.0,
        "{text}"
    );
    promtool(&text);

    // b again, its counters from 0: read again, a reset counted, the
    // totals on from where they were.
    let (_b, _sb) = start_named(d, "b", &cb);
    wait_for("b to be read again after its restart", 30, || {
        text = get(http, "/fabric/metrics").unwrap_or_default();
        let s = check(&text);
        s.get(B_OK) == Some(&1.0) && s.get(B_RESETS).is_some_and(|r| *r >= 1.0)
    });
    let s = samples(&text);
    assert!(
        s[B_RECEIVED] >= before,
        "{before} -> {}\n{text}",
        s[B_RECEIVED]
    );
    assert!(s["mwrouter_perfmgr_resets_total"] >= 1.0, "{text}");
    promtool(&text);
    // Still moving on.
    let now = s[B_RECEIVED];
    wait_for("b's totals to grow after the restart", 20, || {
        text = get(http, "/fabric/metrics").unwrap_or_default();
        check(&text).get(B_RECEIVED).is_some_and(|v| *v > now)
    });
    eprintln!("{text}");
}

/// `enabled`: a box that masters nothing polls the members its LRTs list
/// (NodeInfo and NodeDescription first, for their ports and name) and
/// itself.
#[test]
fn an_enabled_box_polls_its_lrts_without_being_master() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let [pa, pa2, pb, pb2] = common::free_ports();
    let ca = config(d, "a", (0x0511, 0x0601, pa, &[pb]), (0x0512, 0x0602, pa2));
    let mut cb = config(d, "b", (0x0521, 0x0601, pb, &[pa]), (0x0522, 0x0603, pb2));
    cb.management.perf_manager = PerfConfig {
        enabled: true,
        interval_ms: 300,
        timeout_ms: 100,
        ..PerfConfig::default()
    };
    let http: SocketAddr = format!("127.0.0.1:{}", free_tcp_port()).parse().unwrap();
    cb.admin.prometheus_listen = Some(http);
    let (_a, _sa) = start_named(d, "a", &ca);
    let (_b, _sb) = start_named(d, "b", &cb);
    let a_port1 =
        "mwrouter_fabric_port_received_packets_total{node=\"a\",address=\"0x0511\",port=\"1\"}";
    let mut text = String::new();
    wait_for("b's scrape to read a's two ports", 20, || {
        text = get(http, "/fabric/metrics").unwrap_or_default();
        let s = samples(&text);
        s.get("mwrouter_fabric_scrape_ok{node=\"a\",address=\"0x0511\"}") == Some(&1.0)
            && s.contains_key(a_port1)
    });
    assert!(
        text.contains("mwrouter_fabric_scrape_ok{node=\"b\",address=\"0x0521\"} 1\n"),
        "{text}"
    );
    promtool(&text);
}
