//! End to end: `mwctl links` and `mwctl errors` from one of three mwrouterd
//! chained on loopback UDP (a -- SAN 0x0601 -- b -- SAN 0x0603 -- c, each
//! with an HR alone on a SAN of its own). links shows every HR and the
//! router across it; errors lists the port of b that received runt
//! datagrams (dropped as truncated) once over its threshold, every other
//! node as clean, and `--clear` sets the counters back; with c stopped,
//! both list it as not answering.

use std::net::UdpSocket;
use std::path::Path;

use serde_json::Value;

mod common;

use common::{chained_box, loopback, mwctl, start_named, wait_for};

/// The waits of every request: short, one retry.
const WAITS: [&str; 4] = ["-t", "300", "-r", "1"];

/// `mwctl --json CMD ARGS... -t 300 -r 1`: its exit status and object.
fn json(sock: &Path, cmd: &[&str]) -> (i32, Value) {
    let mut args = vec!["--json"];
    args.extend_from_slice(cmd);
    args.extend_from_slice(&WAITS);
    let (code, out, err) = mwctl(sock, &args);
    let v = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, v)
}

/// `mwctl CMD ARGS... -t 300 -r 1`: its exit status, output and errors.
fn text(sock: &Path, cmd: &[&str]) -> (i32, String, String) {
    let mut args = cmd.to_vec();
    args.extend_from_slice(&WAITS);
    mwctl(sock, &args)
}

#[test]
fn links_and_errors_sweep_a_chain() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let [pa, pa2, pb, pb2, pc, pc2] = common::free_ports();
    let (_a, sa) = start_named(
        d,
        "a",
        &chained_box(
            d,
            "a",
            (0x0511, 0x0601, pa, &[pb]),
            (0x0512, 0x0602, pa2, &[]),
        ),
    );
    let (_b, _sb) = start_named(
        d,
        "b",
        &chained_box(
            d,
            "b",
            (0x0521, 0x0601, pb, &[pa]),
            (0x0522, 0x0603, pb2, &[pc]),
        ),
    );
    let (c, _sc) = start_named(
        d,
        "c",
        &chained_box(
            d,
            "c",
            (0x0531, 0x0603, pc, &[pb2]),
            (0x0532, 0x0604, pc2, &[]),
        ),
    );

    // links: every HR of the three routers, and the router across.
    let mut last = Value::Null;
    wait_for("links to find the three routers", 20, || {
        let (code, v) = json(&sa, &["links"]);
        let done = code == 0 && v["counts"]["routers"] == 3 && v["counts"]["links"] == 4;
        last = v;
        done
    });
    let v = last;
    assert_eq!(v["counts"]["hrs"], 6, "{v}");
    let b = &v["routers"][1];
    assert_eq!(b["description"], "b", "{v}");
    assert_eq!(b["node_type_name"], "router", "{v}");
    assert_eq!(b["hrs"][1]["state_name"], "active", "{v}");
    assert_eq!(b["hrs"][1]["across"][0]["address"], "0x0531", "{v}");
    assert_eq!(b["hrs"][1]["across"][0]["description"], "c", "{v}");
    let (code, out, _) = text(&sa, &["links"]);
    assert_eq!(code, 0, "{out}");
    for line in [
        "  [0] 0x0511 active san 0x0601 mtu 1500 cost 1 buddies 1 ==> 0x0521 [0] \"b\"\n",
        "  [1] 0x0512 active san 0x0602 mtu 1500 cost 1 buddies 0 ==> (no router across)\n",
        "  [0] 0x0521 active san 0x0601 mtu 1500 cost 1 buddies 1 ==> 0x0511 [0] \"a\"\n",
        "  [1] 0x0522 active san 0x0603 mtu 1500 cost 1 buddies 1 ==> 0x0531 [0] \"c\"\n",
        "  [0] 0x0531 active san 0x0603 mtu 1500 cost 1 buddies 1 ==> 0x0522 [1] \"b\"\n",
        "3 routers, 6 HRs (6 active), 4 links across, 0 did not answer (",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }

    // errors: clear the counters the chain's start may have left, then
    // send b's HR on SAN 0x0601 five runts (dropped as truncated).
    let (_, v) = json(&sa, &["errors", "--clear"]);
    assert_eq!(v["counts"]["cleared"], 6, "{v}");
    let runts = UdpSocket::bind(loopback(0)).unwrap();
    for _ in 0..5 {
        runts.send_to(&[0x10, 0x00], loopback(pb)).unwrap();
    }
    // Every counter but dropped.truncated may read what it will (the
    // chain's own traffic); dropped.truncated up to 2.
    let mut limits: Vec<String> = mwctl::thresholds::watched()
        .iter()
        .map(|(n, _)| format!("{n:?} = 1000000"))
        .collect();
    limits.retain(|l| !l.starts_with("\"dropped.truncated\""));
    limits.push("\"dropped.truncated\" = 2".into());
    let file = d.join("thresholds.toml");
    std::fs::write(&file, limits.join("\n")).unwrap();
    let file = file.to_str().unwrap();
    let mut last = Value::Null;
    wait_for("errors to see b's truncated drops", 10, || {
        let (_, v) = json(&sa, &["errors", "--thresholds", file]);
        let done = v["counts"]["bad_ports"] == 1;
        last = v;
        done
    });
    let v = last;
    assert_eq!(v["counts"]["nodes"], 3, "{v}");
    assert_eq!(v["counts"]["bad_nodes"], 1, "{v}");
    assert_eq!(v["counts"]["ports"], 6, "{v}");
    assert_eq!(v["counts"]["unanswered"], 0, "{v}");
    let b = &v["nodes"][1];
    assert_eq!(b["description"], "b", "{v}");
    assert_eq!(b["bad"], true, "{v}");
    assert_eq!(b["ports"][0]["address"], "0x0521", "{v}");
    assert_eq!(b["ports"][0]["counters"]["dropped.truncated"], 5, "{v}");
    assert_eq!(
        b["ports"][0]["over"],
        serde_json::json!([{"counter": "dropped.truncated", "value": 5, "limit": 2}]),
        "{v}"
    );
    assert_eq!(v["nodes"][0]["bad"], false, "{v}");
    assert_eq!(v["thresholds"]["dropped.truncated"], 2, "{v}");
    let (code, out, err) = text(&sa, &["errors", "--thresholds", file]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(" \"b\" level ")
            && out.contains("(read at 0x0521): 2 ports, 1 over a threshold\n  [0] 0x0521 active: [dropped.truncated == 5 > 2]\n"),
        "{out}"
    );
    assert!(out.contains(" \"a\" level "), "{out}");
    assert!(out.contains("(read at 0x0511): 2 ports, clean\n"), "{out}");
    assert!(
        out.contains("3 nodes checked, 1 bad nodes found, 0 did not answer\n6 ports checked, 1 ports have counters beyond threshold, 0 did not answer\n"),
        "{out}"
    );
    assert!(err.contains("1 ports over a threshold"), "{err}");

    // --clear: read (still over), then cleared; the next sweep is clean.
    let (code, out, _) = text(&sa, &["errors", "--thresholds", file, "--clear"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("[dropped.truncated == 5 > 2]"), "{out}");
    assert!(out.contains("\n6 ports cleared\n"), "{out}");
    let (code, v) = json(&sa, &["errors", "--thresholds", file]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["counts"]["bad_ports"], 0, "{v}");
    assert_eq!(
        v["nodes"][1]["ports"][0]["counters"]["dropped.truncated"], 0,
        "{v}"
    );

    // A thresholds file that names no counter errors checks: usage, 2.
    let bad = d.join("bad.toml");
    std::fs::write(&bad, "received = 1\n").unwrap();
    let (code, _, err) = text(&sa, &["errors", "--thresholds", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("\"received\" is not a counter errors checks"),
        "{err}"
    );

    // c stopped: both list it as not answering, and exit 1.
    drop(c);
    let (code, v) = json(&sa, &["links"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["unanswered"][0]["address"], "0x0531", "{v}");
    let (code, v) = json(&sa, &["errors", "--thresholds", file]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["counts"]["nodes"], 3, "{v}");
    assert_eq!(v["counts"]["unanswered"], 1, "{v}");
    assert_eq!(v["counts"]["bad_ports"], 0, "{v}");
    assert_eq!(v["nodes"][2]["answered"], false, "{v}");
    assert_eq!(v["nodes"][2]["address"], "0x0531", "{v}");
    let (code, out, _) = text(&sa, &["errors"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no answer from 0x0531"), "{out}");

    // No daemon: exit 3.
    let (code, _, _) = mwctl(&d.join("nobody.sock"), &["errors"]);
    assert_eq!(code, 3);
    let (code, _, _) = mwctl(&d.join("nobody.sock"), &["links"]);
    assert_eq!(code, 3);
}
