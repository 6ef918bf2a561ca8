//! mwctl end to end: the binary against the admin server with the sample
//! handler.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command as Proc, Output};
use std::sync::Arc;

use admin::Policy;
use admin::policy::Peer;
use admin::sample::SampleBox;
use admin::server::{ServerConfig, ServerHandle, serve};
use serde_json::Value;

struct Daemon {
    dir: tempfile::TempDir,
    path: PathBuf,
    _server: ServerHandle,
}

fn daemon_with(f: impl FnOnce(&mut ServerConfig)) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mwrouterd.sock");
    let mut cfg = ServerConfig::new(&path);
    f(&mut cfg);
    let server = serve(cfg, SampleBox::handler()).unwrap();
    Daemon {
        dir,
        path,
        _server: server,
    }
}

fn daemon() -> Daemon {
    daemon_with(|_| {})
}

fn mwctl(socket: &Path, args: &[&str]) -> Output {
    Proc::new(env!("CARGO_BIN_EXE_mwctl"))
        .arg("--socket")
        .arg(socket)
        .args(args)
        .env_remove("MWCTL_SOCKET")
        .output()
        .unwrap()
}

fn ok(socket: &Path, args: &[&str]) -> String {
    let o = mwctl(socket, args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn json(socket: &Path, args: &[&str]) -> Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    serde_json::from_str(&ok(socket, &a)).unwrap()
}

#[test]
fn every_show_prints_a_table_and_json() {
    let d = daemon();
    let cases: &[(&[&str], &str)] = &[
        (&["show", "router"], "fib_version"),
        (&["show", "hrs"], "0x0115"),
        (&["show", "ports"], "backend"),
        (&["show", "lrt"], "0x0101"),
        (&["show", "lrt", "--port", "0x0116"], "0x0102"),
        (&["show", "rts"], ""),
        (&["show", "routes"], "port 1 -> 02:00:00:00:01:02"),
        (&["show", "fib", "-p", "1"], "forward"),
        (&["show", "neighbors"], "ac"),
        (&["show", "counters"], "drops by reason"),
        (&["show", "route", "0x0102"], "route to 0x0102"),
        (&["stats"], "uptime 42 s"),
        (
            &["stats", "--prometheus"],
            "mwrouter_port_received_packets_total{port=\"0\"} 1000",
        ),
        (&["version"], "admin protocol 1"),
    ];
    for (args, needle) in cases {
        let text = ok(&d.path, args);
        assert!(text.contains(needle), "{args:?}:\n{text}");
        // What an operator reads often fits an 80-column terminal.
        if matches!(args, ["show", "routes" | "neighbors" | "counters"]) {
            for l in text.lines() {
                assert!(l.chars().count() <= 80, "{args:?}: wider than 80:\n{text}");
            }
        }
        assert!(
            !text.trim_start().starts_with('{') && !text.trim_start().starts_with('['),
            "{args:?}: {text}"
        );
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let j = ok(&d.path, &a);
        let v: Value = serde_json::from_str(&j).unwrap_or_else(|e| panic!("{args:?}: {e}: {j}"));
        assert!(v.is_object() || v.is_array(), "{args:?}");
    }
}

#[test]
fn table_layouts() {
    let d = daemon();
    let hrs = ok(&d.path, &["show", "hrs"]);
    let mut lines = hrs.lines();
    let head = lines.next().unwrap();
    assert!(
        head.starts_with("port  hr      san      mtu  cost  native"),
        "{hrs}"
    );
    assert_eq!(lines.count(), 2, "{hrs}");
    let c = ok(&d.path, &["show", "counters"]);
    assert!(c.starts_with("port  received  forwarded"), "{c}");
    assert!(c.contains("no-route"), "{c}");
    assert!(c.contains("mtu"), "{c}");
    assert!(
        !c.contains("bad-version"),
        "only reasons that occurred: {c}"
    );
    let r = ok(&d.path, &["show", "route", "0x0102", "--port", "0"]);
    assert!(
        r.contains(
            "from port 0 (HR 0x0115): forward out of port 1 (HR 0x0116) to 02:00:00:00:01:02"
        ),
        "{r}"
    );
    assert!(r.contains("Q 2  MTU 1484  RCVF 0x0116"), "{r}");
    assert!(r.contains("path 0x0116@02:00:00:00:01:02"), "{r}");
    let r = ok(&d.path, &["show", "route", "0x0999"]);
    assert!(r.contains("no route"), "{r}");
}

#[test]
fn changes_round_trip() {
    let d = daemon();
    assert_eq!(
        ok(&d.path, &["port", "1", "down"]),
        "port 1 (HR 0x0116) is down\n"
    );
    let hrs = json(&d.path, &["show", "hrs"]);
    assert_eq!(hrs[1]["up"], false);
    assert_eq!(
        ok(&d.path, &["port", "0x0116", "up"]),
        "port 1 (HR 0x0116) is up\n"
    );
    let out = ok(
        &d.path,
        &[
            "route",
            "add",
            "0x0103",
            "--port",
            "1",
            "--native",
            "02:00:00:00:01:03",
            "--name",
            "h3",
        ],
    );
    assert_eq!(out, "static entry 0x0103 on port 1 added\n");
    let lrt = json(&d.path, &["show", "lrt", "-p", "1"]);
    assert!(
        lrt.as_array()
            .unwrap()
            .iter()
            .any(|r| r["address"] == "0x0103" && r["name"] == "h3")
    );
    assert_eq!(
        ok(&d.path, &["route", "del", "0x0103", "--port", "1"]),
        "static entry 0x0103 on port 1 removed\n"
    );
    assert_eq!(
        ok(&d.path, &["clear", "counters", "--port", "0"]),
        "counters cleared (port 0)\n"
    );
    let c = json(&d.path, &["show", "counters"]);
    assert_eq!(c[0]["received"], 0);
    assert_eq!(
        ok(&d.path, &["log", "level", "debug"]),
        "log level debug (was info)\n"
    );
    assert_eq!(
        ok(&d.path, &["reload", "--dry-run"]),
        "plan (nothing applied):\nchanges live: none\n"
    );
    assert_eq!(
        ok(&d.path, &["reload"]),
        "configuration reloaded: generation 0\nchanges live: none\n"
    );
}

#[test]
fn exit_codes() {
    let d = daemon();
    // 1: the daemon refuses or fails.
    let o = mwctl(&d.path, &["port", "7", "down"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.starts_with("mwctl: not_found: no port 7"), "{e}");
    let o = mwctl(&d.path, &["--json", "route", "del", "0x0999", "-p", "0"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["code"], "not_found");
    let o = mwctl(
        &d.path,
        &["route", "add", "0x0104", "-p", "0", "-n", "nonsense"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad_request"));
    // 2: usage.
    for args in [
        &["show"][..],
        &["show", "everything"],
        &["port", "0", "sideways"],
        &["port", "eth0", "up"],
        &["show", "route", "0x10000"],
        &["log", "level", "loud"],
        &["capture", "0"],
        &["trace-packets", "0"],
        &["trace-packets", "-c", "1", "--l2", "--l3"],
        &["trace-packets", "-c", "1", "--dst", "0xZZ"],
        &["trace-packets", "eth0", "-c", "1"],
        &["frobnicate"],
        &["--timeout", "-1", "version"],
    ] {
        let o = mwctl(&d.path, args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!o.stderr.is_empty());
    }
    // Help and version are not errors.
    assert_eq!(mwctl(&d.path, &["--help"]).status.code(), Some(0));
    assert_eq!(mwctl(&d.path, &["--version"]).status.code(), Some(0));
    // 3: unreachable.
    let missing = d.dir.path().join("nope.sock");
    let o = mwctl(&missing, &["show", "hrs"]);
    assert_eq!(o.status.code(), Some(3));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.starts_with(&format!(
            "mwctl: cannot reach mwrouterd at {}: ",
            missing.display()
        )),
        "{e}"
    );
    // A socket nobody listens on.
    let stale = d.dir.path().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let o = mwctl(&stale, &["version"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot reach mwrouterd"));
}

#[test]
fn unanswered_request_is_unreachable() {
    // A "daemon" that accepts and never answers.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mute.sock");
    let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let t = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        std::thread::sleep(std::time::Duration::from_secs(2));
        drop(s);
    });
    let o = mwctl(&path, &["--timeout", "0.3", "version"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no answer in time"));
    t.join().unwrap();
}

fn read_only(uid: u32, groups: Vec<u32>) -> impl FnOnce(&mut ServerConfig) {
    move |c: &mut ServerConfig| {
        c.policy = Policy {
            admin_group: Some(900),
            readonly_group: Some(901),
            readonly_everyone: false,
        };
        c.peer_lookup = Some(Arc::new(move |_s: &UnixStream| {
            Ok(Peer {
                pid: None,
                uid,
                gid: 100,
                groups: groups.clone(),
            })
        }));
    }
}

#[test]
fn forbidden_is_exit_1() {
    let d = daemon_with(read_only(4242, vec![901]));
    ok(&d.path, &["show", "hrs"]);
    let o = mwctl(&d.path, &["reload"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("forbidden") && e.contains("reload"), "{e}");
    let d = daemon_with(read_only(4242, vec![]));
    let o = mwctl(&d.path, &["show", "hrs"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("may not use this socket"));
}

#[test]
fn trace_packets_prints_a_block_per_packet_and_json_lines() {
    let d = daemon();
    let text = ok(&d.path, &["trace-packets", "0", "-c", "4"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "tracing 4 packets received on port 0 (HR 0x0115), for at most 10 s",
        "{text}"
    );
    assert_eq!(
        text.matches("\npacket ").count(),
        4,
        "a block per packet: {text}"
    );
    for want in [
        "packet 1: worker 0 at 22:13:20.000000000 UTC",
        "  received on port 0 (HR 0x0115): 40 bytes, 0x0101 -> 0x0102",
        "  lookup: L3 in FIB version 2: entry 2 (a next hop)",
        "  next hop: port 1 (HR 0x0116) 02:00:00:00:01:02",
        "  EI: 0x0 -> 0x0",
        "  verdict: forwarded out of port 1",
        "  lookup: L2: the L2RH names HR 0x0116",
        "  verdict: punted to the box (local), HR of port 0",
        "  lookup: L3 in FIB version 2: entry 0 (no route)",
        "  verdict: dropped: no-route",
    ] {
        assert!(lines.contains(&want), "{want:?} in:\n{text}");
    }
    assert_eq!(lines.last(), Some(&"4 of 4 packets traced"), "{text}");

    // --json: the start, each packet, the summary, a line each; filters
    // go to the daemon.
    let o = ok(
        &d.path,
        &[
            "--json",
            "--timeout",
            "0",
            "trace-packets",
            "-c",
            "2",
            "--l2",
            "--dst",
            "0x0102",
        ],
    );
    let items: Vec<Value> = o
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(items.len(), 4, "{o}");
    assert_eq!(items[0]["kind"], "start");
    assert_eq!(items[0]["only"], "l2");
    assert_eq!(items[0]["dst"], "0x0102");
    assert!(items[0].get("timeout_ms").is_none(), "--timeout 0: none");
    for p in &items[1..3] {
        assert_eq!(p["kind"], "packet");
        assert_eq!(p["lookup"]["kind"], "l2");
        assert_eq!(p["lookup"]["egress_hr"], "0x0116");
        assert_eq!(p["verdict"]["kind"], "forwarded");
        assert_eq!(p["next_hop"]["native"], "02:00:00:00:01:02");
    }
    assert_eq!(items[3]["recorded"], 2);
    assert_eq!(items[3]["ended"], "count");

    // Refused: a count of 0 or too many, a port the box lacks.
    let too_many = (admin::proto::TRACE_MAX_COUNT + 1).to_string();
    for (args, says) in [
        (&["trace-packets", "-c", "0"][..], "bad_request"),
        (&["trace-packets", "-c", too_many.as_str()], "bad_request"),
        (
            &["trace-packets", "--dst", "0x0010", "-c", "1"],
            "bad_request",
        ),
        (&["trace-packets", "9", "-c", "1"], "not_found"),
    ] {
        let o = mwctl(&d.path, args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(says), "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn capture_writes_a_pcap() {
    let d = daemon();
    let file = d.dir.path().join("cap.pcap");
    let o = mwctl(
        &d.path,
        &[
            "capture",
            "0",
            "-w",
            file.to_str().unwrap(),
            "-c",
            "4",
            "--drops",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("4 packets written to"), "{e}");
    assert!(e.contains("dropped (no-route): 2"), "{e}");
    let b = std::fs::read(&file).unwrap();
    assert_eq!(&b[..4], &0xa1b2_3c4du32.to_le_bytes());
    assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 147);
    // 4 records: 16-byte record headers, 32-byte packets.
    assert_eq!(b.len(), 24 + 4 * (16 + 32));
    // To standard output, with the summary on stderr.
    let o = mwctl(&d.path, &["capture", "0x0115", "-w", "-", "-c", "1"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout.len(), 24 + 16 + 32);
    // Refused capture: no file left behind.
    let nofile = d.dir.path().join("none.pcap");
    let o = mwctl(&d.path, &["capture", "9", "-w", nofile.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!nofile.exists());
}

#[test]
fn stats_watch_repeats() {
    let d = daemon();
    let out = ok(
        &d.path,
        &["stats", "--watch", "--interval", "0.05", "--count", "3"],
    );
    assert_eq!(out.matches("uptime 42 s").count(), 3, "{out}");
    assert!(
        out.contains("rx/s"),
        "rates from the second sample on: {out}"
    );
    let out = ok(
        &d.path,
        &[
            "--json",
            "stats",
            "--watch",
            "--interval",
            "0.05",
            "--count",
            "2",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    for l in lines {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["uptime_s"], 42);
    }
}

#[test]
fn socket_from_the_environment() {
    let d = daemon();
    let o = Proc::new(env!("CARGO_BIN_EXE_mwctl"))
        .args(["version"])
        .env("MWCTL_SOCKET", &d.path)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn completions_and_man_page() {
    let nowhere = Path::new("/nonexistent/mw.sock");
    for shell in ["bash", "zsh", "fish"] {
        let out = ok(nowhere, &["completions", shell]);
        assert!(out.contains("mwctl"), "{shell}");
        assert!(out.contains("neighbors"), "{shell}");
    }
    let man = ok(nowhere, &["man"]);
    assert!(man.contains(".TH mwctl"), "{man}");
    assert!(man.contains("capture"));
}

#[test]
fn library_entry_point() {
    let d = daemon();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let sock = d.path.to_str().unwrap();
    let code = mwctl::main_with(
        ["mwctl", "--socket", sock, "show", "neighbors"],
        &mut out,
        &mut err,
    );
    assert_eq!(code, 0);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("port  hr      address  name  native"),
        "{text}"
    );
    let mut out = Vec::new();
    let code = mwctl::main_with(["mwctl", "bogus"], &mut out, &mut err);
    assert_eq!(code, 2);
}

#[test]
fn busy_daemon_is_exit_1() {
    use std::io::{BufRead, BufReader, Write};
    let d = daemon_with(|c| c.max_clients = 1);
    // One client holds the only slot.
    let mut held = UnixStream::connect(&d.path).unwrap();
    held.write_all(b"{\"v\":1,\"id\":1,\"cmd\":\"version\"}\n")
        .unwrap();
    let mut line = String::new();
    BufReader::new(held.try_clone().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("\"ok\":true"), "{line}");
    let o = mwctl(&d.path, &["version"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.starts_with("mwctl: busy: "), "{e}");
    drop(held);
}

#[test]
fn ping_counts_replies_and_losses() {
    let d = daemon();
    // The box's own HR: its station answers every echo.
    let text = ok(&d.path, &["ping", "0x0115", "-c", "3", "-i", "0.05"]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("PING 0x0115"), "{text}");
    for (i, l) in lines[1..4].iter().enumerate() {
        assert!(
            l.starts_with(&format!("reply from 0x0115: seq={} time=", i + 1)),
            "{text}"
        );
    }
    assert!(
        text.contains("3 sent, 3 received, 0% loss, rtt min/avg/max = "),
        "{text}"
    );
    let v = json(&d.path, &["ping", "0x0116", "-c", "2", "-i", "0.05"]);
    assert_eq!(v["received"], 2, "{v}");
    for (i, r) in v["replies"].as_array().unwrap().iter().enumerate() {
        assert_eq!(r["seq"], i + 1, "{v}");
        assert!(r["rtt_us"].as_u64().is_some_and(|us| us > 0), "{v}");
        assert_eq!(r["status"], 0, "{v}");
    }
    // Nothing is behind the sample box: every echo lost, exit 1.
    let o = mwctl(
        &d.path,
        &["--json", "ping", "0x0301", "-c", "2", "-i", "0.05"],
    );
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["sent"].as_u64(), v["received"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(v["loss_percent"], 100.0);
    assert!(v["replies"][1]["rtt_us"].is_null(), "{v}");
    assert!(v["rtt_avg_us"].is_null(), "{v}");
    let o = mwctl(&d.path, &["ping", "0x0301", "-c", "1"]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("timeout from 0x0301: seq=1"), "{text}");
    assert!(text.contains("1 sent, 0 received, 100% loss"), "{text}");
    // Usage errors name the option.
    for (args, names) in [
        (&["ping", "nowhere"][..], "<ADDR>"),
        (&["ping", "0xfffe"], "<ADDR>"),
        (&["ping", "0x0115", "-c", "0"], "--count"),
        (&["ping", "0x0115", "-i", "-1"], "--interval"),
        (&["ping", "0x0115", "--interval=-0.5"], "--interval"),
        (&["ping", "0x0115", "--timeout", "0"], "--timeout"),
        (&["ping", "0x0115", "--timeout", "-1"], "--timeout"),
    ] {
        let o = mwctl(&d.path, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
    // No daemon: 3.
    let missing = d.dir.path().join("nope.sock");
    assert_eq!(mwctl(&missing, &["ping", "0x0115"]).status.code(), Some(3));
}

#[test]
fn discover_reads_the_sample_box() {
    let d = daemon();
    let o = mwctl(&d.path, &["discover", "-t", "200", "-r", "0"]);
    let text = String::from_utf8_lossy(&o.stdout);
    // The sample box's LRT lists router 0x0117 and nodes 0x0101 and
    // 0x0102, which nothing answers for: listed as such, exit 1.
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("read at 0x0115, reached by start"), "{text}");
    assert!(
        text.contains("  [0] 0x0115 active san 0x0201 mtu 1500 cost 1 ; across 0x0117"),
        "{text}"
    );
    assert!(
        text.contains("no answer from 0x0117 (reached by LRT of 0x0115"),
        "{text}"
    );
    assert!(
        text.contains("1 routers, 2 SANs, 2 HRs, 0 nodes, 3 did not answer ("),
        "{text}"
    );
    let o2 = mwctl(&d.path, &["--json", "discover", "-t", "200", "-r", "0"]);
    let v: Value = serde_json::from_slice(&o2.stdout).unwrap();
    assert_eq!(v["routers"][0]["answered"], true, "{v}");
    assert_eq!(v["routers"][0]["hrs"][1]["address"], "0x0116", "{v}");
    assert_eq!(v["unanswered"][0]["answered"], false, "{v}");
    assert_eq!(v["unanswered"][0]["address"], "0x0117", "{v}");
    assert_eq!(o2.status.code(), Some(1), "{v}");
    // --html FILE: the page besides the text; --html -: the page instead.
    let page = d.dir.path().join("map.html");
    let o3 = mwctl(
        &d.path,
        &[
            "discover",
            "-t",
            "200",
            "-r",
            "0",
            "--html",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(o3.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o3.stdout).contains("1 routers, 2 SANs"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("id=\"san-0x0201\""), "{html}");
    assert!(
        html.contains("class=\"el node silent\" id=\"u-0x0117\""),
        "{html}"
    );
    let o4 = mwctl(
        &d.path,
        &["discover", "-t", "200", "-r", "0", "--html", "-"],
    );
    let out4 = String::from_utf8_lossy(&o4.stdout);
    assert!(out4.starts_with("<!DOCTYPE html>"), "{out4}");
    assert!(out4.contains("id=\"u-0x0117\""), "{out4}");
    assert!(!out4.contains("reached by start"), "{out4}");
    for (args, names) in [
        (&["discover", "0xfffe"][..], "ADDR"),
        (&["discover", "-t", "0"], "--mad-timeout"),
        (&["discover", "-r", "11"], "--retries"),
    ] {
        let o = mwctl(&d.path, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
    let missing = d.dir.path().join("nope.sock");
    assert_eq!(mwctl(&missing, &["discover"]).status.code(), Some(3));
}

#[test]
fn links_and_errors_read_the_sample_box() {
    let d = daemon();
    let w = ["-t", "200", "-r", "0"];
    let run = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend_from_slice(&w);
        let o = mwctl(&d.path, &a);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        (
            o.status.code(),
            text,
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // The sample box's LRT lists router 0x0117, which nothing answers for:
    // listed, exit 1.
    let (code, text, _) = run(&["links"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("router 0x5a3b1e0000000115 \"sample\" level D (2 HRs, read at 0x0115)"),
        "{text}"
    );
    assert!(
        text.contains(
            "  [0] 0x0115 active san 0x0201 mtu 1500 cost 1 buddies 1 ==> 0x0117 (not read)"
        ),
        "{text}"
    );
    assert!(text.contains("no answer from 0x0117"), "{text}");
    let (_, out, _) = run(&["--json", "links"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["routers"][0]["hrs"][1]["mtu"], 9000, "{v}");
    assert_eq!(v["routers"][0]["level_name"], "D", "{v}");

    // Its port 0 has an rx error and drops: over the default thresholds.
    // The router and the two hosts its LRTs list do not answer.
    let (code, text, err) = run(&["errors"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("  [0] 0x0115 active: [rx_errors == 1 > 0] [dropped.no-route == 25 > 0] [dropped.mtu == 5 > 0]\n"),
        "{text}"
    );
    assert!(
        text.contains("4 nodes checked, 1 bad nodes found, 3 did not answer"),
        "{text}"
    );
    assert!(err.contains("1 ports over a threshold, 3 nodes"), "{err}");
    let file = d.dir.path().join("t.toml");
    std::fs::write(&file, "rx_errors = 1\n[dropped]\nno-route = 25\nmtu = 5\n").unwrap();
    let file = file.to_str().unwrap();
    let (_, out, _) = run(&["--json", "errors", "--thresholds", file]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["counts"]["bad_ports"], 0, "{v}");
    assert_eq!(v["counts"]["unanswered"], 3, "{v}");
    assert_eq!(
        v["nodes"][0]["ports"][0]["counters"]["dropped.no-route"], 25,
        "{v}"
    );
    assert_eq!(v["thresholds"]["dropped.mtu"], 5, "{v}");
    let (code, text, _) = run(&["errors", "--clear"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("\n2 ports cleared\n"), "{text}");

    for (args, names) in [
        (&["links", "0xfffe"][..], "ADDR"),
        (&["links", "-t", "0"], "--mad-timeout"),
        (&["errors", "-r", "11"], "--retries"),
        (
            &["errors", "--thresholds", "/nonexistent/t.toml"],
            "/nonexistent/t.toml",
        ),
    ] {
        let o = mwctl(&d.path, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
    let missing = d.dir.path().join("nope.sock");
    assert_eq!(mwctl(&missing, &["links"]).status.code(), Some(3));
    assert_eq!(mwctl(&missing, &["errors"]).status.code(), Some(3));
}
